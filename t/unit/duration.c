/* SPDX-License-Identifier: ISC */
/*
 * duration_parse and duration_format (SPEC §1): every accepted form, every
 * rejected one, the ten-year bound, and the human format.
 */
#include <stdio.h>

#include "core.h"
#include "tap.h"

static void
accepts(const char *s, double want)
{
	char desc[128];
	double got = -1;
	int rc = duration_parse(s, &got);

	snprintf(desc, sizeof(desc), "\"%s\" parses", s);
	is_int(rc, 0, desc);
	snprintf(desc, sizeof(desc), "\"%s\" = %.17g", s, want);
	if (!ok(rc == 0 && got == want, desc))
		printf("#   got %.17g\n", got);
}

/* s is refused with rc: -1 malformed, -2 well-formed but over ten years
 * (so the message can say so); the output is left alone either way. */
static void
refused(const char *s, int rc)
{
	char desc[128];
	double got = 12345;

	snprintf(desc, sizeof(desc), "\"%s\" is %s", s,
	    rc == -2 ? "over the limit" : "rejected");
	is_int(duration_parse(s, &got), rc, desc);
	snprintf(desc, sizeof(desc), "\"%s\" leaves the output alone", s);
	ok(got == 12345, desc);
}

#define rejects(s) refused((s), -1)
#define too_long(s) refused((s), -2)

static void
formats(double secs, const char *want)
{
	char buf[64], desc[128];

	snprintf(desc, sizeof(desc), "%.17g formats as %s", secs, want);
	is_str(duration_format(secs, buf, sizeof(buf)), want, desc);
}

int
main(void)
{
	char small[4];

	accepts("90", 90);
	accepts("0", 0);
	accepts("0s", 0);
	accepts("0.0", 0);
	accepts("000", 0);
	accepts("1.5s", 1.5);
	accepts("1.5", 1.5);
	accepts(".1", 0.1);
	accepts(".5m", 30);
	accepts("1.", 1);
	accepts("1.s", 1);
	accepts("2.41", 2.41);
	accepts("15m", 900);
	accepts("2h", 7200);
	accepts("0.1h", 360);
	accepts("1d", 86400);
	accepts("250ms", 0.25);
	accepts("1ms", 0.001);
	accepts("1500ms", 1.5);
	accepts("007s", 7);
	accepts("1.123456789012345678901234567890", 1.1234567890123457);
	accepts("315360000", DURATION_MAX);
	accepts("3650d", DURATION_MAX);
	accepts("87600h", DURATION_MAX);
	accepts("315360000000ms", DURATION_MAX);
	accepts("00000000000000000000000001", 1);

	rejects("");
	rejects(".");
	rejects(".s");
	rejects("s");
	rejects("ms");
	rejects("-1");
	rejects("+1");
	rejects("1e3");
	rejects("1E3");
	rejects("0x10");
	rejects("inf");
	rejects("nan");
	rejects("abc");
	rejects("42D");
	rejects("1S");
	rejects("1M");
	rejects("1H");
	rejects("1MS");
	rejects("1us");
	rejects("1w");
	rejects("1ss");
	rejects("1sm");
	rejects("1m30s");
	rejects(" 1");
	rejects("1 ");
	rejects("1 s");
	rejects("\t1");
	rejects("1.2.3");
	rejects("1..2");
	rejects("..1");
	rejects("1,5");
	too_long("3650.0001d");
	too_long("3651d");
	too_long("315360000.001");
	too_long("315360001");
	too_long("87601h");
	too_long("999999999999999999999999");
	too_long("99999999999999999999999999999999999999999999ms");
	is_int(duration_parse(NULL, &(double){ 0 }), -1, "NULL is rejected");

	formats(0, "0s");
	formats(0.25, "250ms");
	formats(0.5, "500ms");
	formats(0.0004, "0ms");
	formats(0.9999, "1s");
	formats(1, "1s");
	formats(1.5, "1.5s");
	formats(2.41, "2.41s");
	formats(10.05, "10.05s");
	formats(59.5, "59.5s");
	formats(59.999, "1m");
	formats(60, "1m");
	formats(90, "1m30s");
	formats(900, "15m");
	formats(3600, "1h");
	formats(5400, "1h30m");
	formats(3605, "1h5s");
	formats(7200, "2h");
	formats(172800, "2d");
	formats(93784, "1d2h3m4s");
	formats(DURATION_MAX, "3650d");
	formats(-1.5, "-1.5s");
	is_str(duration_format(5400, small, sizeof(small)), "1h3",
	    "a short buffer truncates");
	return done_testing();
}
