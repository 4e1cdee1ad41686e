/* SPDX-License-Identifier: ISC */
/*
 * An account's gate on disk (SPEC §9, --account NAME): the file store's
 * backend of the account calls of store.h.  One JSON document per
 * account, "NAME.account" in the state directory:
 *
 *     {"version":1, "account":"claude-max", "gate":"OPEN",
 *      "type":"usage_limit", "reason":"usage limit until 21:00 UTC",
 *      "message":"You've hit your limit", "circuit":"nightly",
 *      "opened_at":"ISO-8601", "retry_at":"ISO-8601", "trial_by":null,
 *      "trial_until":null, "generation":4, "total_opens":2,
 *      "updated_at":"ISO-8601"}
 *
 * It is read and written with the state file's own code (state.c,
 * statesave.c): no link followed, a regular file only, owner and mode
 * trusted, written by temp file, fsync, rename and fsync of the
 * directory, so a crash leaves the old document or the new.  A corrupt
 * one (bad JSON, a key twice, a wrong type, a newer version) is never
 * overwritten: every circuit on the account stops with 125 until an
 * operator's --reset-account moves it aside.
 *
 * Many circuits share one document, each holding its own circuit's lock
 * for a whole run, so the account's lock ("NAME.account.lock") is taken
 * only around one read-change-write (account_update), never across a
 * run.  generation counts the writes, so a store that compares and sets
 * (Redis) can refuse a write made from a stale read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "core.h"
#include "store.h"
#include "backend.h"
#include "guard.h"
#include "jsonfield.h"

#define ACCOUNT_VERSION 1

char *
account_path(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s%s", dir, name, ACCOUNT_SUFFIX) == -1)
		return NULL;
	return p;
}

static int
put_time(cJSON *o, const char *key, double t)
{
	char buf[64];

	if (t < 0)
		return cJSON_AddNullToObject(o, key) != NULL ? 0 : -1;
	return cJSON_AddStringToObject(o, key, iso8601(t, buf,
	    sizeof(buf))) != NULL ? 0 : -1;
}

static int
put_str(cJSON *o, const char *key, const char *s)
{
	if (s == NULL)
		return cJSON_AddNullToObject(o, key) != NULL ? 0 : -1;
	return cJSON_AddStringToObject(o, key, s) != NULL ? 0 : -1;
}

cJSON *
account_to_json(const struct cb_account *a)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL ||
	    cJSON_AddNumberToObject(o, "version", ACCOUNT_VERSION) == NULL ||
	    put_str(o, "account", a->name) == -1 ||
	    put_str(o, "gate", circuit_name(a->gate)) == -1 ||
	    put_str(o, "type", a->type[0] != '\0' ? a->type : NULL) == -1 ||
	    put_str(o, "reason", a->reason) == -1 ||
	    put_str(o, "message", a->message) == -1 ||
	    put_str(o, "circuit", a->circuit) == -1 ||
	    put_time(o, "opened_at", a->since) == -1 ||
	    put_time(o, "retry_at", a->retry_at) == -1 ||
	    put_str(o, "trial_by", a->trial_by) == -1 ||
	    put_time(o, "trial_until", a->trial_until) == -1 ||
	    cJSON_AddNumberToObject(o, "generation",
	    (double)a->generation) == NULL ||
	    cJSON_AddNumberToObject(o, "total_opens",
	    (double)a->total_opens) == NULL ||
	    put_time(o, "updated_at", a->updated_at) == -1) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

char *
account_text(const struct cb_account *a)
{
	cJSON *o = account_to_json(a);
	char *t, *nl = NULL;
	size_t n;

	if (o == NULL)
		return NULL;
	t = cJSON_Print(o);
	cJSON_Delete(o);
	if (t == NULL)
		return NULL;
	n = strlen(t);
	if ((nl = realloc(t, n + 2)) == NULL) {
		free(t);
		return NULL;
	}
	nl[n] = '\n';
	nl[n + 1] = '\0';
	return nl;
}

/* Fill *a (a CLOSED gate already) from the document j. */
static int
from_json(const cJSON *j, struct cb_account *a, char *err, size_t errlen)
{
	double version = 0;
	int gate = CB_CLOSED;

	if (!cJSON_IsObject(j)) {
		snprintf(err, errlen, "not a JSON object");
		return -1;
	}
	if (no_duplicates(j, err, errlen) == -1)
		return -1;
	if (member(j, "version") == NULL)
		return bad_field(err, errlen, "version", "a version number");
	if (get_num(j, "version", "version", 1, 1e9, 1, &version, err,
	    errlen) == -1)
		return -1;
	if (version > ACCOUNT_VERSION) {
		snprintf(err, errlen, "version %.0f is newer than this cbexec "
		    "reads (%d)", version, ACCOUNT_VERSION);
		return -2;
	}
	if (get_circuit(j, "gate", "gate", &gate, err, errlen) == -1 ||
	    get_buf(j, "type", "type", a->type, sizeof(a->type), err,
	    errlen) == -1 ||
	    get_str(j, "reason", "reason", &a->reason, err, errlen) == -1 ||
	    get_str(j, "message", "message", &a->message, err, errlen) == -1 ||
	    get_str(j, "circuit", "circuit", &a->circuit, err, errlen) == -1 ||
	    /* "since" until the one vocabulary of "v": 1 */
	    get_time(j, "since", "since", 1, &a->since, err, errlen) == -1 ||
	    get_time(j, "opened_at", "opened_at", 1, &a->since, err,
	    errlen) == -1 ||
	    get_time(j, "retry_at", "retry_at", 1, &a->retry_at, err,
	    errlen) == -1 ||
	    get_str(j, "trial_by", "trial_by", &a->trial_by, err,
	    errlen) == -1 ||
	    get_time(j, "trial_until", "trial_until", 1, &a->trial_until, err,
	    errlen) == -1 ||
	    get_long(j, "generation", "generation", &a->generation, err,
	    errlen) == -1 ||
	    get_long(j, "total_opens", "total_opens", &a->total_opens, err,
	    errlen) == -1 ||
	    get_time(j, "updated_at", "updated_at", 1, &a->updated_at, err,
	    errlen) == -1)
		return -1;
	a->gate = (enum cb_circuit)gate;
	/* A gate that refuses must say why, or no message could name it. */
	if (a->gate != CB_CLOSED && a->type[0] == '\0')
		return bad_field(err, errlen, "type", "the fact that opened "
		    "the gate (usage_limit, billing or auth)");
	return 0;
}

int
account_from_text(const char *text, size_t len, const char *name,
    struct cb_account *a, char *err, size_t errlen)
{
	const char *end = NULL;
	cJSON *j;
	int rc;

	if (breaker_account_init(a, name) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (memchr(text, '\0', len) != NULL ||
	    utf8_invalid(text, len) != NULL) {
		snprintf(err, errlen, "not valid UTF-8 text");
		return -1;
	}
	if ((j = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1)) == NULL) {
		snprintf(err, errlen, "JSON syntax error");
		return -1;
	}
	rc = from_json(j, a, err, errlen);
	cJSON_Delete(j);
	if (rc < 0) {
		/* *a stays a gate the caller can free */
		breaker_account_free(a);
		breaker_account_init(a, name);
	}
	return rc;
}

/* account_load on path. */
static int
load_path(const char *path, const char *name, struct cb_account *a,
    char *err, size_t errlen)
{
	char *buf = NULL, why[256];
	size_t len;
	int rc;

	if (breaker_account_init(a, name) == -1) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	if ((rc = store_read_text(path, 0, &buf, &len, err, errlen)) != 0)
		return rc;
	breaker_account_free(a);
	rc = account_from_text(buf, len, name, a, why, sizeof(why));
	free(buf);
	if (rc < 0)
		snprintf(err, errlen, "%s: corrupt account file: %s", path,
		    why);
	return rc;
}

int
account_load(const char *dir, const char *name, struct cb_account *a,
    char *err, size_t errlen)
{
	char *path = account_path(dir, name);
	int rc;

	if (path == NULL) {
		breaker_account_init(a, name);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = load_path(path, name, a, err, errlen);
	free(path);
	return rc;
}

int
account_update(const char *dir, const char *name, double wait, int create,
    int (*fn)(struct cb_account *, void *), void *arg, char *aside,
    size_t asidelen, char *err, size_t errlen)
{
	struct cb_account a;
	char *path, *text = NULL, why[4400];
	int fd, rc, ld;

	if ((path = account_path(dir, name)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return ACCOUNT_ERROR;
	}
	/* Asking first: the lock would create the directory and the lock
	 * file of an account that does not exist. */
	if (!create && access(path, F_OK) == -1 && errno == ENOENT) {
		snprintf(err, errlen, "%s", path);
		free(path);
		return ACCOUNT_NONE;
	}
	if ((fd = state_lock(path, 0, wait, NULL, err, errlen)) < 0) {
		if (fd == -2)
			snprintf(err, errlen, "%s.lock: held by another cbexec "
			    "for longer than %.0fs", path, wait);
		free(path);
		return fd == -2 ? ACCOUNT_BUSY : ACCOUNT_ERROR;
	}
	ld = load_path(path, name, &a, err, errlen);
	if (ld == 1 && !create) {
		snprintf(err, errlen, "%s", path);
		rc = ACCOUNT_NONE;
		goto out;
	}
	if (ld < 0) {
		if (aside == NULL || ld == -2) {
			rc = ld == -2 ? ACCOUNT_ERROR : ACCOUNT_BAD;
			goto out;
		}
		snprintf(why, sizeof(why), "%s", err);
		if (state_move_aside(path, wall_now(), aside, asidelen, err,
		    errlen) == -1) {
			rc = ACCOUNT_ERROR;
			goto out;
		}
		snprintf(err, errlen, "%s", why);
	} else if (aside != NULL)
		aside[0] = '\0';
	if ((rc = fn(&a, arg)) != 1)
		goto out;
	a.generation += a.generation < CB_LONG_MAX;
	if ((text = account_text(&a)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		rc = ACCOUNT_ERROR;
		goto out;
	}
	if (store_write_text(path, text, err, errlen) == -1)
		rc = ACCOUNT_ERROR;
out:
	free(text);
	breaker_account_free(&a);
	close(fd);
	free(path);
	return rc;
}
