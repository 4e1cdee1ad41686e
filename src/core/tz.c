/* SPDX-License-Identifier: ISC */
/*
 * Wall-clock times in a named time zone, for the reset times agents print
 * ("resets 4pm (America/Recife)", "try again at 3:04 PM." in local time).
 *
 * The zone rules come from the system's tz database through libc: TZ is
 * pointed at the zone for one mktime() and put back at once, so the
 * command's environment never sees the change.  glibc takes an unknown
 * zone for UTC without a word, so the zone file is looked up first
 * ($TZDIR, else /usr/share/zoneinfo) and a name that is not one is
 * refused; so is any name that could walk out of that directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core.h"

/* A name of the tz database: "Europe/Berlin", "UTC", "Etc/GMT+3". */
static int
zone_ok(const char *zone)
{
	const char *dir = getenv("TZDIR"), *p;
	char path[512];
	struct stat st;

	if (zone[0] == '\0' || zone[0] == '/' || zone[0] == '.' ||
	    strstr(zone, "..") != NULL || strlen(zone) > 128)
		return 0;
	for (p = zone; *p != '\0'; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("/_+-", *p) != NULL))
			return 0;
	snprintf(path, sizeof(path), "%s/%s", dir != NULL && *dir != '\0' ?
	    dir : "/usr/share/zoneinfo", zone);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Point TZ at zone (NULL: leave it) for one conversion; *old keeps what
 * was there for tz_leave().  0 / -1. */
static int
tz_enter(const char *zone, char **old)
{
	const char *cur;

	*old = NULL;
	if (zone != NULL) {
		if (!zone_ok(zone))
			return -1;
		if ((cur = getenv("TZ")) != NULL && (*old = strdup(cur)) == NULL)
			return -1;
		if (setenv("TZ", zone, 1) == -1) {
			free(*old);
			return -1;
		}
	}
	tzset();
	return 0;
}

static void
tz_leave(const char *zone, char *old)
{
	if (zone == NULL)
		return;
	if (old != NULL)
		setenv("TZ", old, 1);
	else
		unsetenv("TZ");
	tzset();
	free(old);
}

int
tz_mktime(const char *zone, struct tm *tm, double *t)
{
	char *old;
	time_t v;

	if (tz_enter(zone, &old) == -1)
		return -1;
	tm->tm_isdst = -1;
	v = mktime(tm);
	tz_leave(zone, old);
	if (v == (time_t)-1)
		return -1;
	*t = (double)v;
	return 0;
}

int
tz_localtime(const char *zone, double t, struct tm *tm)
{
	time_t v = (time_t)t;
	char *old;
	int rc;

	if (tz_enter(zone, &old) == -1)
		return -1;
	rc = localtime_r(&v, tm) != NULL ? 0 : -1;
	tz_leave(zone, old);
	return rc;
}
