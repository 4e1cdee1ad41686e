/* SPDX-License-Identifier: ISC */
/*
 * The store handle: one set of calls for the driver whichever backend
 * keeps the circuit.  The file store is the state file with its flock
 * (state.c, statesave.c); the shared store is Redis (redis.c).  Both
 * carry the state's generation, which every save moves on by one: the
 * file store needs it for nothing (its flock excludes every other
 * writer), Redis checks it in its compare-and-set, and a state moved
 * between the two keeps counting.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "store.h"
#include "backend.h"

int
store_open(struct store *st, const struct store_cfg *cfg, char *err,
    size_t errlen)
{
	memset(st, 0, sizeof(*st));
	st->lock_fd = -1;
	st->follow = cfg->follow;
	st->lease = cfg->lease;
	st->timeout = cfg->timeout;
	st->password = cfg->password;
	st->ca = cfg->ca;
	st->cert = cfg->cert;
	st->key = cfg->key;
	st->replicas = cfg->replicas;
	st->clock_at = -1;
	if ((cfg->name != NULL && (st->name = strdup(cfg->name)) == NULL) ||
	    (cfg->path != NULL && (st->path = strdup(cfg->path)) == NULL)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (cfg->url == NULL) {
		st->kind = STORE_FILE;
		snprintf(st->label, sizeof(st->label), "file");
		return 0;
	}
	st->kind = STORE_REDIS;
	return redis_open(st, cfg->url, err, errlen);
}

void
store_close(struct store *st)
{
	store_unlock(st);
	if (st->kind == STORE_REDIS)
		redis_close(st);
	free(st->name);
	free(st->path);
	st->name = st->path = NULL;
}

int
store_lock(struct store *st, double wait, int (*nap)(double), char *err,
    size_t errlen)
{
	int fd;

	if (st->kind == STORE_REDIS)
		return redis_lock(st, wait, nap, err, errlen);
	if ((fd = state_lock(st->path, st->follow, wait, nap, err,
	    errlen)) < 0)
		return fd;
	st->lock_fd = fd;
	st->held = 1;
	return 0;
}

void
store_unlock(struct store *st)
{
	if (!st->held)
		return;
	if (st->kind == STORE_REDIS)
		redis_unlock(st);
	else if (st->lock_fd != -1) {
		close(st->lock_fd);
		st->lock_fd = -1;
	}
	st->held = 0;
}

int
store_keepalive(struct store *st, char *err, size_t errlen)
{
	if (st->kind != STORE_REDIS || !st->held)
		return 0;
	return redis_keepalive(st, err, errlen);
}

int
store_keepalive_async(struct store *st, char *err, size_t errlen)
{
	if (st->kind != STORE_REDIS || !st->held)
		return 0;
	return redis_keepalive_async(st, err, errlen);
}

int
store_fresh(const struct store *st)
{
	return st->kind != STORE_REDIS ||
	    (st->held && mono_now() - st->renewed < st->lease / 3);
}

double
store_lease_until(const struct store *st)
{
	if (st->kind != STORE_REDIS || !st->held)
		return 0;
	return st->renewed + st->lease - st->lease / 8;
}

int
store_fd(const struct store *st)
{
	return st->kind == STORE_REDIS ? redis_fd(st) : -1;
}

double
store_now(const struct store *st)
{
	if (st->kind != STORE_REDIS || st->clock_at < 0)
		return wall_now();
	return st->clock_at + (mono_now() - st->clock_mono);
}

int
store_load(struct store *st, struct cb_state *s, char *err, size_t errlen)
{
	int rc;

	if (st->kind == STORE_REDIS)
		rc = redis_load(st, s, err, errlen);
	else
		rc = state_load(st->path, st->follow, st->name, s, err,
		    errlen);
	if (rc >= 0)
		st->generation = s->generation;
	return rc;
}

int
store_save(struct store *st, struct cb_state *s, char *err, size_t errlen)
{
	long prev = s->generation;
	char *text;
	int rc;

	/* The next generation, from the one this holder loaded: a state
	 * saved by someone else meanwhile has it already, and Redis
	 * refuses to write over that. */
	s->generation = st->generation < CB_LONG_MAX ? st->generation + 1 :
	    CB_LONG_MAX;
	if (st->kind == STORE_REDIS) {
		if ((text = state_text(s)) == NULL) {
			snprintf(err, errlen, "%s: out of memory", st->label);
			rc = -1;
		} else {
			rc = redis_save(st, text, err, errlen);
			free(text);
		}
	} else if ((rc = st->lock_fd == -1 ? 0 : state_lock_check(
	    &st->lock_fd, st->path, st->follow, err, errlen)) == 0)
		rc = state_save(st->path, st->follow, s, err, errlen);
	if (rc < 0) {
		s->generation = prev;
		return rc;
	}
	st->generation = s->generation;
	return 0;
}

int
store_exists(struct store *st, char *err, size_t errlen)
{
	char lock[4200];
	struct stat sb;

	if (st->kind == STORE_REDIS)
		return redis_exists(st, err, errlen);
	/* Anything at the path (a corrupt file, a symlink) is for the load
	 * to judge; an error other than "no such file" too.  A lock without
	 * a state file is a circuit whose first run is going on. */
	snprintf(lock, sizeof(lock), "%s.lock", st->path);
	if (lstat(st->path, &sb) == 0 || (errno != ENOENT && errno != ENOTDIR))
		return 1;
	if (lstat(lock, &sb) == 0 || (errno != ENOENT && errno != ENOTDIR))
		return 1;
	return 0;
}

int
store_move_aside(struct store *st, char *newname, size_t newlen, char *err,
    size_t errlen)
{
	if (st->kind == STORE_REDIS)
		return redis_move_aside(st, newname, newlen, err, errlen);
	return state_move_aside(st->path, wall_now(), newname, newlen, err,
	    errlen);
}

const char *
store_where(const struct store *st, char *buf, size_t len)
{
	if (st->kind == STORE_REDIS)
		snprintf(buf, len, "%s in %s", redis_key(st), st->label);
	else
		snprintf(buf, len, "%s", st->path);
	return buf;
}

int
store_list(struct store *st, char ***names, size_t *n, char *err,
    size_t errlen)
{
	if (st->kind != STORE_REDIS) {
		snprintf(err, errlen, "internal error: no store to list");
		return -1;
	}
	return redis_list(st, names, n, err, errlen);
}

int
store_get_json(struct store *st, const char *name, struct cb_state *s,
    struct cJSON **j, char *err, size_t errlen)
{
	if (st->kind != STORE_REDIS) {
		snprintf(err, errlen, "internal error: no store to read");
		return -1;
	}
	return redis_get_json(st, name, s, j, err, errlen);
}

int
store_account_load(struct store *st, const char *dir, const char *name,
    struct cb_account *a, char *err, size_t errlen)
{
	if (st->kind == STORE_REDIS)
		return redis_account_load(st, name, a, err, errlen);
	return account_load(dir, name, a, err, errlen);
}

int
store_account_update(struct store *st, const char *dir, const char *name,
    double wait, int create, int (*fn)(struct cb_account *, void *),
    void *arg, char *aside, size_t asidelen, char *err, size_t errlen)
{
	if (st->kind == STORE_REDIS)
		return redis_account_update(st, name, create, fn, arg, aside,
		    asidelen, err, errlen);
	return account_update(dir, name, wait, create, fn, arg, aside,
	    asidelen, err, errlen);
}

int
store_account_list(struct store *st, char ***names, size_t *n, char *err,
    size_t errlen)
{
	if (st->kind != STORE_REDIS) {
		snprintf(err, errlen, "internal error: no store to list");
		return -1;
	}
	return redis_account_list(st, names, n, err, errlen);
}
