/* SPDX-License-Identifier: ISC */
/*
 * What the shared stores' backends (redis.c, etcd.c) have in common: the
 * text of a state read from a key into a struct cb_state, an account's
 * key, the name a corrupt document is moved aside to, and the order of
 * the names a listing hands back (the file store's too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "breaker.h"
#include "store.h"
#include "backend.h"

int
shared_parse_state(struct store *st, const char *name, const char *key,
    const char *text, size_t len, int have, struct cb_state *s, char *err,
    size_t errlen)
{
	char where[512];

	if (!have) {
		if (breaker_init(s, name) == -1) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		return 1;
	}
	snprintf(where, sizeof(where), "%s in %s", key, st->label);
	if (state_text_check(where, text, len, err, errlen) == -1)
		return -1;
	return state_parse(where, text, len, name, s, err, errlen);
}

int
shared_by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *
shared_account_key(const char *name)
{
	char *k;

	return asprintf(&k, "cbexec:account:%s", name) == -1 ? NULL : k;
}

int
shared_aside_stamp(const struct store *st, char *stamp, size_t len,
    char *err, size_t errlen)
{
	struct tm tm;
	time_t t = (time_t)store_now(st);

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(stamp, len, "%Y%m%dT%H%M%SZ", &tm) == 0) {
		snprintf(err, errlen, "%s: bad time", st->label);
		return -1;
	}
	return 0;
}

void
shared_aside_name(char *newname, size_t newlen, const char *prefix,
    const char *name, const char *stamp, int i)
{
	if (i == 0)
		snprintf(newname, newlen, "%s%s:%s", prefix, name, stamp);
	else
		snprintf(newname, newlen, "%s%s:%s.%d", prefix, name, stamp,
		    i);
}
