/* SPDX-License-Identifier: ISC */
/*
 * LD_PRELOAD shim for t/0970-store-time.t: a host whose clock is wrong.
 * The wall clock (CLOCK_REALTIME through clock_gettime, gettimeofday and
 * time) reads CLOCK_SKEW seconds ahead (negative: behind); the monotonic
 * clocks are left alone.  For t/0906-readme.t, CLOCK_AT (epoch seconds)
 * instead makes the process start at that instant exactly, its wall clock
 * going on from there as time passes: output with ages and clock times
 * comes out the same on every run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static long
skew(void)
{
	const char *s = getenv("CLOCK_SKEW");

	return s != NULL ? atol(s) : 0;
}

int
clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	static long long off_ns;
	static int have_off;
	const char *at;
	long long t;
	int rc;

	if (real == NULL)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT,
		    "clock_gettime");
	rc = real(id, ts);
	if (rc != 0 || (id != CLOCK_REALTIME && id != CLOCK_REALTIME_COARSE))
		return rc;
	if ((at = getenv("CLOCK_AT")) == NULL) {
		ts->tv_sec += skew();
		return rc;
	}
	t = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
	if (!have_off) {
		off_ns = (long long)(atof(at) * 1e9) - t;
		have_off = 1;
	}
	t += off_ns;
	ts->tv_sec = (time_t)(t / 1000000000LL);
	ts->tv_nsec = (long)(t % 1000000000LL);
	return rc;
}

int
gettimeofday(struct timeval *tv, void *tz)
{
	struct timespec ts;

	(void)tz;
	if (clock_gettime(CLOCK_REALTIME, &ts) == -1)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t
time(time_t *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (t != NULL)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
