/*
 * Timestamps as the state file and the logs write them: UTC ISO-8601 with
 * milliseconds ("2026-11-22T01:02:03.456Z"), and the parser that reads
 * them back.  Declared in state.h.
 *
 * Formatting rounds to the nearest millisecond and borrows a second for a
 * negative fraction, so any double prints (out-of-range input as the
 * epoch).  Parsing is strict: fixed-width fields, an optional fraction of
 * one to nine digits, a final 'Z', and a round trip through timegm() and
 * gmtime_r() so an impossible date such as Feb 30 is refused rather than
 * normalised.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "state.h"

char *
iso8601(double t, char *buf, size_t len)
{
	long long ms, secs;
	time_t tt;
	struct tm tm;
	int frac;

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
	tt = (time_t)secs;
	if (gmtime_r(&tt, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, frac);
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
	struct tm tm, chk;
	int y, mo, d, h, mi, sec, n;
	long ns = 0, scale = 100000000;
	time_t tt;

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
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	/* timegm() normalises Feb 30 into March: compare to catch it. */
	tt = timegm(&tm);
	if (gmtime_r(&tt, &chk) == NULL || chk.tm_year != tm.tm_year ||
	    chk.tm_mon != tm.tm_mon || chk.tm_mday != d || chk.tm_hour != h ||
	    chk.tm_min != mi || chk.tm_sec != sec)
		return -1;
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
