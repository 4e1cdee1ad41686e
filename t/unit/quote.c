/* SPDX-License-Identifier: ISC */
/*
 * shell_quote(): safe words stay as they are, anything else is single-
 * quoted, and /bin/sh reads every result back as the original bytes;
 * hex_value() and pct_decode() (a URL's %XX escapes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "tap.h"

static void
quotes(const char *in, const char *want)
{
	char *q = shell_quote(in), desc[128];

	snprintf(desc, sizeof(desc), "shell_quote(\"%s\")", in);
	is_str(q, want, desc);
	free(q);
}

/* The shell's reading of shell_quote(in) is in itself. */
static void
round_trip(const char *in)
{
	char *q = shell_quote(in), cmd[512], got[256] = "", desc[128];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "printf '%%s' %s", q);
	if ((p = popen(cmd, "r")) != NULL) {
		if (fgets(got, sizeof(got), p) == NULL)
			got[0] = '\0';
		pclose(p);
	}
	snprintf(desc, sizeof(desc), "sh reads back \"%s\"", in);
	is_str(got, in, desc);
	free(q);
}

/* pct_decode() of n bytes of in into 8 bytes: rc, and want when 0. */
static void
pct(int rc, const char *in, size_t n, const char *want, const char *desc)
{
	char out[8];
	int got = pct_decode(in, n, out, sizeof(out));

	is_int(got, rc, desc);
	if (rc == 0 && got == 0)
		is_str(out, want, desc);
}

int
main(void)
{
	quotes("GREEN", "GREEN");
	quotes("2.3-login_form/x@y:z,w+v=u%", "2.3-login_form/x@y:z,w+v=u%");
	quotes("task 3", "'task 3'");
	quotes("it's", "'it'\\''s'");
	quotes("", "''");
	quotes("$HOME;rm -rf /", "'$HOME;rm -rf /'");
	round_trip("it's a \"task\" $(date) `x` \\ ; |");
	round_trip("ünïcode '' ");
	is_int(hex_value('0'), 0, "hex digit 0");
	is_int(hex_value('9'), 9, "hex digit 9");
	is_int(hex_value('a'), 10, "hex digit a");
	is_int(hex_value('F'), 15, "hex digit F, upper case");
	is_int(hex_value('g'), -1, "g is no hex digit");
	is_int(hex_value('G'), -1, "G is no hex digit");
	is_int(hex_value('/'), -1, "the byte before 0 is none");
	is_int(hex_value('`'), -1, "the byte before a is none");
	is_int(hex_value((char)0xc1), -1, "a high byte (as a signed char) is none");
	pct(0, "a%3Ab", 5, "a:b", "an escape decoded");
	pct(0, "%7e%7E", 6, "~~", "either case");
	pct(0, "ab%41", 2, "ab", "only the n bytes asked for");
	pct(-1, "a%3", 3, NULL, "an escape cut short");
	pct(-1, "a%zz", 4, NULL, "an escape of no hex digits");
	pct(-1, "a%00b", 5, NULL, "a NUL byte refused");
	pct(-1, "abcdefgh", 8, NULL, "longer than out");
	pct(0, "abcdefg", 7, "abcdefg", "as long as out less its NUL");
	return done_testing();
}
