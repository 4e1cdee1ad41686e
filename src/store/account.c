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
 * Its members are one table, read and written as the state file's are
 * (schema.c): a member a newer cbexec wrote is kept and written back.
 * It is read and written with the state file's own code (state.c,
 * statesave.c): no link followed, a regular file only, owner and mode
 * trusted, written by temp file, fsync, rename and fsync of the
 * directory, so a crash leaves the old document or the new.  A corrupt
 * one (bad JSON, a key twice, a wrong type) is never overwritten: every
 * circuit on the account stops with 125 until an operator's
 * --reset-account moves it aside.  One of a newer version is not
 * corrupt: it stops them too, and even --reset-account leaves it alone.
 *
 * Many circuits share one document, each holding its own circuit's lock
 * for a whole run, so the account's lock ("NAME.account.lock") is taken
 * only around one read-change-write (account_update), never across a
 * run.  generation counts the writes, so a store that compares and sets
 * (Redis) can refuse a write made from a stale read.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "core.h"
#include "store.h"
#include "backend.h"
#include "guard.h"
#include "schema.h"
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

/* ---- the document's fields: one table, read and written by schema.c ---- */

static int
read_nothing(const struct schema_ctx *c, const cJSON *m, void *dst,
    char *err, size_t errlen)
{
	return 0;
}

static void
write_version(struct jbuf *b, const void *src)
{
	jb_long(b, ACCOUNT_VERSION);
}

/* The account's name is the caller's (its file's, its key's); written
 * for whoever reads the document. */
static void
write_name(struct jbuf *b, const void *src)
{
	jb_str_or_null(b, ((const struct cb_account *)src)->name);
}

#define A(m)	offsetof(struct cb_account, m)

static const struct field account_fields[] = {
	/* name, type, where, size, default, since, flags, was */
	{ FNAME("version"), FT_CUSTOM, 0, 0, 0, 1, 0, NULL, read_nothing,
	  write_version },
	{ FNAME("account"), FT_CUSTOM, 0, 0, 0, 1, 0, NULL, read_nothing,
	  write_name },
	{ FNAME("gate"), FT_CIRCUIT, A(gate), 0, CB_CLOSED, 1, FR_NULL, NULL, 0, 0 },
	{ FNAME("type"), FT_TEXT, A(type), sizeof(((struct cb_account *)0)->type), 0,
	  1, FR_NULL_EMPTY, NULL, 0, 0 },
	{ FNAME("reason"), FT_STR, A(reason), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("message"), FT_STR, A(message), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("circuit"), FT_STR, A(circuit), 0, 0, 1, 0, NULL, 0, 0 },
	/* "since" until the one vocabulary of "v": 1 */
	{ FNAME("opened_at"), FT_TIME, A(since), 0, -1, 1, 0, "since", 0, 0 },
	{ FNAME("retry_at"), FT_TIME, A(retry_at), 0, -1, 1, 0, NULL, 0, 0 },
	{ FNAME("trial_by"), FT_STR, A(trial_by), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("trial_until"), FT_TIME, A(trial_until), 0, -1, 1, 0, NULL, 0, 0 },
	{ FNAME("generation"), FT_LONG, A(generation), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("total_opens"), FT_LONG, A(total_opens), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("updated_at"), FT_TIME, A(updated_at), 0, -1, 1, 0, NULL, 0, 0 },
};

static const struct schema account_schema = {
	account_fields, NELEM(account_fields), A(unknown), NULL,
	"{\n  ", SEP(",\n  "), "\n}"
};

cJSON *
account_to_json(const struct cb_account *a)
{
	char *text = account_text(a);
	cJSON *j = text != NULL ? cJSON_Parse(text) : NULL;

	free(text);
	return j;
}

char *
account_text(const struct cb_account *a)
{
	struct jbuf b = { NULL, 0, 0, 0 };

	schema_write(&b, &account_schema, a, NULL);
	return jb_finish(&b);
}

/* Fill *a (a CLOSED gate already) from the document j, its text text. */
static int
from_json(const cJSON *j, const char *text, struct cb_account *a,
    char *err, size_t errlen)
{
	double version = 0;

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
	/* Where versions would branch: there has been one (the member it
	 * renamed, since, is read by its row). */
	if (version > ACCOUNT_VERSION) {
		snprintf(err, errlen, "account version %.0f is newer than this "
		    "cbexec supports (%d)", version, ACCOUNT_VERSION);
		return -2;
	}
	if (schema_read(&account_schema, j, text, NULL, a, err, errlen) == -1)
		return -1;
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
	rc = from_json(j, text, a, err, errlen);
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
	char *buf = NULL, why[CB_WHYLEN];
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
	/* A newer version is not corrupt: refused, never moved aside. */
	if (rc < 0)
		snprintf(err, errlen, rc == -2 ? "%s: %s" :
		    "%s: corrupt account file: %s", path, why);
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
	char *path, *text = NULL, why[CB_ERRLEN];
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
