/* SPDX-License-Identifier: ISC */
/*
 * Durations (SPEC §1): parse "90", "1.5s", ".1", "15m", "2h", "1d", "250ms"
 * into seconds, and format seconds back for humans.
 *
 * duration_parse reads the digits itself rather than calling strtod, which
 * would also take signs, exponents, hex, "inf" and leading blanks.  The
 * number is kept as an integer mantissa m and a count k of fraction digits,
 * so the result is m / 10^k (times the unit), one correctly rounded
 * division: "2.41" gives the same double as the literal 2.41.  Any integer
 * part longer than the largest duration in milliseconds is rejected before
 * it can overflow the mantissa; fraction digits past what 64 bits hold
 * (about 19 significant digits) are dropped, a relative change below 1e-18.
 *
 * duration_format picks one form by size: "500ms" below a second, seconds
 * with at most two decimals below a minute ("2.41s"), and whole d/h/m/s
 * units above ("15m", "1h30m", "2d").
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

/* DURATION_MAX in milliseconds has 12 digits; allow leading zeros. */
#define INT_DIGITS_MAX 12

static const struct {
	const char *suffix;
	double unit;	/* seconds per unit; ms is handled as a divisor */
} units[] = {
	{ "", 1 }, { "s", 1 }, { "m", 60 }, { "h", 3600 }, { "d", 86400 },
	{ "ms", 0.001 },
};

int
duration_parse(const char *s, double *seconds)
{
	uint64_t m = 0;
	double scale = 1, v;
	size_t i, nd = 0, sig = 0;
	int nonzero = 0, huge = 0;
	const char *p = s;

	if (p == NULL)
		return -1;
	for (; *p >= '0' && *p <= '9'; p++, nd++) {
		if (m != 0 || *p != '0')
			sig++;
		/* Too many digits to add up: over the limit, but the rest
		 * must still be a well-formed duration. */
		if (sig > INT_DIGITS_MAX) {
			huge = 1;
			continue;
		}
		m = m * 10 + (uint64_t)(*p - '0');
		nonzero |= *p != '0';
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, nd++) {
			nonzero |= *p != '0';
			/* 19 significant digits still fit in 64 bits */
			if (m > (UINT64_MAX - 9) / 10)
				continue;
			m = m * 10 + (uint64_t)(*p - '0');
			scale *= 10;
		}
	}
	if (nd == 0)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(p, units[i].suffix) == 0)
			break;
	if (i == sizeof(units) / sizeof(units[0]))
		return -1;
	if (units[i].unit < 1)
		v = (double)m / (scale * 1000);
	else
		v = (double)m * units[i].unit / scale;
	if (huge || v > DURATION_MAX)
		return -2;
	/* a positive value too small for a double must not read as "0 = off" */
	if (nonzero && v == 0)
		return -1;
	*seconds = v;
	return 0;
}

char *
duration_format(double seconds, char *buf, unsigned long len)
{
	static const struct {
		char c;
		long long secs;
	} parts[] = { { 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 } };
	long long ms, cs, t;
	size_t i, off = 0;
	int n;

	if (buf == NULL || len == 0)
		return buf;
	buf[0] = '\0';
	if (seconds != seconds) {	/* NaN */
		snprintf(buf, len, "?");
		return buf;
	}
	if (seconds < 0) {
		/* "-" then the magnitude; a negative span is a caller's bug */
		snprintf(buf, len, "-");
		if (len > 1)
			duration_format(-seconds, buf + 1, len - 1);
		return buf;
	}
	if (seconds >= 1e15) {	/* beyond long long rounding: no units */
		snprintf(buf, len, "%.0fs", seconds);
		return buf;
	}
	if (seconds == 0) {
		snprintf(buf, len, "0s");
		return buf;
	}
	/* rounding by hand (x + 0.5 for x >= 0) keeps libm out of the link */
	if ((ms = (long long)(seconds * 1000 + 0.5)) < 1000) {
		snprintf(buf, len, "%lldms", ms);
		return buf;
	}
	if ((cs = (long long)(seconds * 100 + 0.5)) < 6000) {
		if (cs % 100 == 0)
			snprintf(buf, len, "%llds", cs / 100);
		else if (cs % 10 == 0)
			snprintf(buf, len, "%lld.%llds", cs / 100, cs % 100 / 10);
		else
			snprintf(buf, len, "%lld.%02llds", cs / 100, cs % 100);
		return buf;
	}
	t = (long long)(seconds + 0.5);
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if (t < parts[i].secs)
			continue;
		n = snprintf(buf + off, len - off, "%lld%c", t / parts[i].secs,
		    parts[i].c);
		if (n < 0 || (size_t)n >= len - off)
			break;	/* truncated: buf already holds what fits */
		off += (size_t)n;
		t %= parts[i].secs;
	}
	return buf;
}
