/* SPDX-License-Identifier: ISC */
/*
 * Timestamps as the state file and the logs write them: UTC ISO-8601 with
 * milliseconds ("2026-11-22T01:02:03.456Z"), and the parser that reads
 * them back.  Declared in state.h.
 *
 * Formatting rounds to the nearest millisecond and borrows a second for a
 * negative fraction, so any double prints (out-of-range input as the
 * epoch).  Parsing is strict: fixed-width fields, an optional fraction of
 * one to nine digits, a final 'Z', no impossible date such as Feb 30 (it
 * is refused, not normalised), and no year before 1970: a negative time
 * stands for "unset" in the state and would be written back as null.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core.h"

/*
 * Days since 1970-01-01 of a proleptic Gregorian date, and back (Howard
 * Hinnant's algorithms).  gmtime_r() and timegm() would do, but glibc's
 * first call to either reads /etc/localtime, which every run would pay
 * for a UTC stamp.
 */
static long long
days_from_civil(long long y, int m, int d)
{
	long long era, yoe, doy;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

static void
civil_from_days(long long z, long long *y, int *m, int *d)
{
	long long era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* v as n decimal digits, zero-padded, ending at p + n. */
static char *
put_digits(char *p, long long v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--) {
		p[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return p + n;
}

/*
 * Written by hand, not with snprintf: a state file holds a stamp per
 * history event and is rewritten after every run.
 */
char *
iso8601(double t, char *buf, size_t len)
{
	char tmp[32], *p = tmp;
	long long ms, secs, days, y;
	int frac, sod, mo, d;

	/* Keep the arithmetic inside time_t and long long for any input. */
	if (!(t > -1e13 && t < 1e13))
		t = 0;
	ms = (long long)(t * 1000.0 + (t >= 0 ? 0.5 : -0.5));
	secs = ms / 1000;
	frac = (int)(ms % 1000);
	if (frac < 0) {
		frac += 1000;
		secs--;
	}
	days = secs / 86400;
	sod = (int)(secs % 86400);
	if (sod < 0) {
		sod += 86400;
		days--;
	}
	civil_from_days(days, &y, &mo, &d);
	if (y < 0 || y > 9999) {	/* out of the fixed-width form */
		snprintf(buf, len, "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ", y,
		    mo, d, sod / 3600, sod / 60 % 60, sod % 60, frac);
		return buf;
	}
	p = put_digits(p, y, 4);
	*p++ = '-';
	p = put_digits(p, mo, 2);
	*p++ = '-';
	p = put_digits(p, d, 2);
	*p++ = 'T';
	p = put_digits(p, sod / 3600, 2);
	*p++ = ':';
	p = put_digits(p, sod / 60 % 60, 2);
	*p++ = ':';
	p = put_digits(p, sod % 60, 2);
	*p++ = '.';
	p = put_digits(p, frac, 3);
	*p++ = 'Z';
	*p = '\0';
	if (len > 0) {
		if ((size_t)(p - tmp) >= len)
			p = tmp + len - 1;
		memcpy(buf, tmp, (size_t)(p - tmp));
		buf[p - tmp] = '\0';
	}
	return buf;
}

/* n decimal digits at *p into *v; advances *p. */
static int
digits(const char **p, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -1;
		*v = *v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return 0;
}

int
iso8601_parse(const char *s, double *t)
{
	const char *p = s;
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31,
		30, 31 };
	int y, mo, d, h, mi, sec, n;
	long ns = 0, scale = 100000000;
	long long tt;

	if (s == NULL ||
	    digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) ||
	    *p++ != '-' || digits(&p, 2, &d) || *p++ != 'T' ||
	    digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) ||
	    *p++ != ':' || digits(&p, 2, &sec))
		return -1;
	if (*p == '.') {
		p++;
		for (n = 0; *p >= '0' && *p <= '9'; n++, p++) {
			if (n == 9)
				return -1;
			ns += (*p - '0') * scale;
			scale /= 10;
		}
		if (n == 0)
			return -1;
	}
	if (p[0] != 'Z' || p[1] != '\0')
		return -1;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    (mo == 2 && d == 29 && (y % 4 != 0 || (y % 100 == 0 &&
	    y % 400 != 0))) || h > 23 || mi > 59 || sec > 59)
		return -1;
	tt = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	if (ns % 1000000 == 0)	/* the usual case: exact to the nearest double */
		*t = ((double)tt * 1000.0 + (double)(ns / 1000000)) / 1000.0;
	else
		*t = (double)tt + (double)ns / 1e9;
	return 0;
}

double
wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double
mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int
mono_ms_left(double deadline)
{
	double left = (deadline - mono_now()) * 1000;

	if (left <= 0)
		return 0;
	return left < 1 ? 1 : left > INT_MAX ? INT_MAX : (int)left;
}
