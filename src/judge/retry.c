/* SPDX-License-Identifier: ISC */
/*
 * When may a run that hit a provider limit try again (SPEC §4 rule 8)?
 * The agents say it in their own words; this finds the first hint in a
 * message and turns it into an epoch time (a reset time) or a delay.
 *
 * Reset times, absolute:
 *   "usage limit reached|1763846400", "resetsAt":1795391580,
 *   "resets_at": 1795391580                        epoch seconds
 *   "resets 9:23pm (UTC)", "resets Dec 3, 2:30pm (UTC)",
 *   "resets Jan 2, 2027, 9am (UTC)",
 *   "resets Apr 23 at 4pm (America/Recife)"        in that IANA zone
 *   "try again at 3:04 PM.", "try again at Apr 28th, 2026 10:03 PM."
 *                                                  in local time
 * Delays, relative:
 *   "retryDelay": "12s", retryDelayMs: 12000, "retry_delay_ms":518,
 *   retry-after: 2, "Please retry in 12.3s", "Suggested retry after 12s",
 *   "Retrying after 14380ms", "try again in 6m0s", "resets_in_seconds": 60,
 *   "Your quota will reset after 2h52m39s.", "resets in 3h 12m"
 *
 * A time of day without a date is the next such time: today's if it is
 * at most 15 minutes past (a reset printed to the minute is reached a few
 * seconds after it is printed), else tomorrow's; a date without a year
 * likewise this year's or next.  Zone names go through the system tz
 * database (tz.c); one it does not know makes the hint unusable rather
 * than wrong.  Pure apart from reading that database.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "judge.h"
#include "text.h"

#define SLACK	(15 * 60)

static const char *
skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* A number (digits, optional fraction); NULL when there is none. */
static const char *
number(const char *p, double *v)
{
	char *end;

	if (!is_digit((unsigned char)*p))
		return NULL;
	*v = strtod(p, &end);
	return end;
}

/* Whether p starts with word w (case-insensitive) not followed by a
 * letter. */
static const char *
word(const char *p, const char *w)
{
	size_t n = strlen(w);

	if (strncasecmp(p, w, n) != 0 || ((p[n] | 0x20) >= 'a' &&
	    (p[n] | 0x20) <= 'z'))
		return NULL;
	return p + n;
}

/*
 * A duration as agents write one: "12.345s", "900ms", "6m0s", "1h2m",
 * "2h52m39s", "3h 12m", "2 seconds", "3 minutes", "1d4h"; a bare number is in unit seconds (1 or
 * 0.001).  Returns the end, or NULL.
 */
static const char *
duration(const char *p, double unit, double *secs)
{
	static const struct {
		const char *w;
		double s;
	} units[] = {
		{ "ms", 0.001 }, { "milliseconds", 0.001 },
		{ "millisecond", 0.001 }, { "seconds", 1 }, { "second", 1 },
		{ "secs", 1 }, { "sec", 1 }, { "s", 1 }, { "minutes", 60 },
		{ "minute", 60 }, { "mins", 60 }, { "min", 60 }, { "m", 60 },
		{ "hours", 3600 }, { "hour", 3600 }, { "hrs", 3600 },
		{ "hr", 3600 }, { "h", 3600 }, { "days", 86400 },
		{ "day", 86400 }, { "d", 86400 },
	};
	const char *q, *u;
	double v, total = 0;
	size_t i;
	int parts = 0;

	while ((q = number(p, &v)) != NULL) {
		u = skip_space(q);
		for (i = 0; i < NELEM(units); i++)
			if ((q = word(u, units[i].w)) != NULL)
				break;
		if (i == NELEM(units)) {
			if (parts > 0)
				break;
			*secs = v * unit;
			return u;
		}
		total += v * units[i].s;
		parts++;
		/* "3h 12m", "2 hours 5 minutes": the parts may be spaced */
		p = is_digit((unsigned char)*skip_space(q)) ? skip_space(q) : q;
	}
	if (parts == 0)
		return NULL;
	*secs = total;
	return p;
}

static int
month(const char *p, const char **end)
{
	static const char *const names[] = { "jan", "feb", "mar", "apr",
	    "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec" };
	int i;

	for (i = 0; i < 12; i++)
		if (strncasecmp(p, names[i], 3) == 0) {
			for (p += 3; (*p | 0x20) >= 'a' && (*p | 0x20) <= 'z';
			    p++)
				;
			*end = p;
			return i;
		}
	return -1;
}

/* "9:23pm", "4pm", "10:02 PM", "21:23": hour and minute of the day. */
static const char *
clock_time(const char *p, int *h, int *m)
{
	const char *q;
	double v;
	int minutes = 0;

	if ((q = number(p, &v)) == NULL || v != (int)v || v > 23)
		return NULL;
	*h = (int)v;
	*m = 0;
	if (*q == ':') {
		if (!is_digit((unsigned char)q[1]) ||
		    !is_digit((unsigned char)q[2]))
			return NULL;
		*m = (q[1] - '0') * 10 + (q[2] - '0');
		if (*m > 59)
			return NULL;
		q += 3;
		minutes = 1;
	}
	p = skip_space(q);
	if (((p[0] | 0x20) == 'a' || (p[0] | 0x20) == 'p') &&
	    (p[1] | 0x20) == 'm') {
		if (*h < 1 || *h > 12)
			return NULL;
		*h = *h % 12 + ((p[0] | 0x20) == 'p' ? 12 : 0);
		return p + 2;
	}
	/* a bare number is no time of day; "21:23" is */
	return minutes ? q : NULL;
}

/*
 * A date and time as agents write them after "resets " or "try again at ":
 * [Mon D[st|nd|rd|th][,] [YYYY][,] [at]] TIME [(Zone)].
 */
static int
when(const char *p, double now, int zone_ok, double *at)
{
	struct tm tm, today;
	const char *q, *z;
	char zone[129];
	int mon = -1, day = 0, year = 0, h, m, dated;
	double v, t;
	size_t n;

	if ((mon = month(p, &q)) >= 0) {
		q = skip_space(q);
		if ((q = number(q, &v)) == NULL || v < 1 || v > 31)
			return -1;
		day = (int)v;
		if (word(q, "st") || word(q, "nd") || word(q, "rd") ||
		    word(q, "th"))
			q += 2;
		q = skip_space(*q == ',' ? q + 1 : q);
		if (number(q, &v) != NULL && v >= 1970 && v < 3000 &&
		    !is_digit((unsigned char)q[4]) && q[4] != ':') {
			year = (int)v;
			q = skip_space(q + 4);
			q = skip_space(*q == ',' ? q + 1 : q);
		}
		if (word(q, "at"))
			q = skip_space(q + 2);
		p = q;
	}
	if ((q = clock_time(p, &h, &m)) == NULL)
		return -1;
	zone[0] = '\0';
	q = skip_space(q);
	if (zone_ok && *q == '(' && (z = strchr(q + 1, ')')) != NULL &&
	    (n = (size_t)(z - q - 1)) > 0 && n < sizeof(zone)) {
		memcpy(zone, q + 1, n);
		zone[n] = '\0';
	}
	if (tz_localtime(zone[0] ? zone : NULL, now, &today) == -1)
		return -1;
	dated = mon >= 0;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = year > 0 ? year - 1900 : today.tm_year;
	tm.tm_mon = dated ? mon : today.tm_mon;
	tm.tm_mday = dated ? day : today.tm_mday;
	tm.tm_hour = h;
	tm.tm_min = m;
	if (tz_mktime(zone[0] ? zone : NULL, &tm, &t) == -1)
		return -1;
	if (t < now - SLACK && year == 0) {
		/* the next such time: tomorrow, or next year */
		memset(&tm, 0, sizeof(tm));
		tm.tm_year = today.tm_year + (dated ? 1 : 0);
		tm.tm_mon = dated ? mon : today.tm_mon;
		tm.tm_mday = dated ? day : today.tm_mday + 1;
		tm.tm_hour = h;
		tm.tm_min = m;
		if (tz_mktime(zone[0] ? zone : NULL, &tm, &t) == -1)
			return -1;
	}
	*at = t;
	return 0;
}

/* Past a JSON or YAML-ish separator: "key": "v", key: 'v', key=v. */
static const char *
value_start(const char *p)
{
	p = skip_space(p);
	if (*p == '"' || *p == '\'')
		p++;
	p = skip_space(p);
	if (*p == ':' || *p == '=')
		p = skip_space(p + 1);
	if (*p == '"' || *p == '\'')
		p++;
	return p;
}

enum hint { H_EPOCH, H_RESETS, H_AT_LOCAL, H_SECS, H_MSECS };

/* What follows one occurrence of a key, as a hint of that kind: an epoch
 * time in *v, or a delay in seconds. */
static int
hint_at(const char *p, enum hint k, double now, double *v)
{
	switch (k) {
	case H_EPOCH:
		return number(value_start(p), v) != NULL && *v > 1e9 ? 0 : -1;
	case H_RESETS:
		return when(skip_space(p), now, 1, v);
	case H_AT_LOCAL:
		return when(skip_space(p), now, 0, v);
	case H_SECS:
	case H_MSECS:
		return duration(value_start(p), k == H_MSECS ? 0.001 : 1,
		    v) != NULL && *v > 0 ? 0 : -1;
	}
	return -1;
}

/* The earliest occurrence of a key of kind k whose value reads. */
static int
first_hint(const char *s, enum hint kind, double now, double *v)
{
	static const struct {
		const char *key;
		enum hint k;
	} keys[] = {
		{ "limit reached|", H_EPOCH }, { "resetsAt", H_EPOCH },
		{ "resets_at", H_EPOCH },
		{ "resets ", H_RESETS },
		{ "try again at ", H_AT_LOCAL },
		{ "retryDelayMs", H_MSECS }, { "retry_delay_ms", H_MSECS },
		{ "retry-after-ms", H_MSECS },
		{ "retryDelay", H_SECS }, { "retry in ", H_SECS },
		{ "retry after ", H_SECS }, { "retrying after ", H_SECS },
		{ "try again in ", H_SECS }, { "retry-after", H_SECS },
		{ "reset after ", H_SECS }, { "resets after ", H_SECS },
		{ "reset in ", H_SECS }, { "resets in ", H_SECS },
		{ "resets_in_seconds", H_SECS },
	};
	const char *p, *best = NULL;
	double got;
	size_t i;

	for (i = 0; i < NELEM(keys); i++) {
		if (kind == H_EPOCH ? keys[i].k > H_AT_LOCAL :
		    keys[i].k <= H_AT_LOCAL)
			continue;
		for (p = s; (p = strcasestr(p, keys[i].key)) != NULL; p++)
			if (best == NULL || p < best) {
				if (hint_at(p + strlen(keys[i].key),
				    keys[i].k, now, &got) == 0) {
					best = p;
					*v = got;
					break;
				}
			} else
				break;
	}
	return best != NULL ? 0 : -1;
}

int
retry_bound(struct retry_hint *h, double now)
{
	int cut = 0;

	/* NaN, infinite, 0 or negative: none */
	if (!(h->at > 0 && h->at <= DBL_MAX))
		h->at = 0;
	if (!(h->after > 0 && h->after <= DBL_MAX))
		h->after = 0;
	if (h->at > now + RETRY_MAX) {
		h->at = now + RETRY_MAX;
		cut = 1;
	}
	if (h->after > RETRY_MAX) {
		h->after = RETRY_MAX;
		cut = 1;
	}
	return cut;
}

int
retry_hint(const char *s, double now, struct retry_hint *h)
{
	h->at = h->after = 0;
	if (s == NULL)
		return 0;
	if (first_hint(s, H_EPOCH, now, &h->at) == -1)
		h->at = 0;
	if (first_hint(s, H_SECS, now, &h->after) == -1)
		h->after = 0;
	return h->at > 0 || h->after > 0;
}
