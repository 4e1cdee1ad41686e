/* SPDX-License-Identifier: ISC */
/*
 * The store handle: one set of calls for the layers above whichever
 * backend keeps the circuit.  The backend is chosen once, when the handle
 * is opened, from the table of schemes below (no URL: the file store,
 * filestore.c); every call after that goes through its struct
 * store_backend, so no code here or above asks which backend it is.
 * A backend that keeps no lease (the file store) leaves its keepalive
 * NULL, and the lease's functions answer for it: nothing to renew,
 * always fresh, no deadline.
 *
 * Every backend carries the state's generation, which every save moves
 * on by one: the file store needs it for nothing but telling a stale
 * start record (its flock excludes every other writer), a shared store
 * checks it in its compare-and-set, and a state moved between two keeps
 * counting.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "core.h"
#include "store.h"
#include "backend.h"

/* The backends by the --store URL's scheme (what comes before "://"). */
static const struct {
	const char *scheme;
	const struct store_backend *be;
} schemes[] = {
	{ "redis", &store_redis },
	{ "rediss", &store_redis },
	{ "unix", &store_redis },
	{ "etcd", &store_etcd },
	{ "etcds", &store_etcd },
};

#define NSCHEMES (sizeof(schemes) / sizeof(schemes[0]))

/* The backend url names, or NULL with what is wrong in err. */
static const struct store_backend *
backend_of(const char *url, char *err, size_t errlen)
{
	const char *colon = strstr(url, "://");
	size_t i, n, len;

	if (colon != NULL)
		for (i = 0; i < NSCHEMES; i++)
			if ((size_t)(colon - url) == strlen(schemes[i].scheme) &&
			    strncmp(url, schemes[i].scheme, (size_t)(colon -
			    url)) == 0)
				return schemes[i].be;
	/* The URL is not repeated: it may hold a password. */
	n = (size_t)snprintf(err, errlen, "invalid --store URL: the scheme is "
	    "one of");
	for (i = 0; i < NSCHEMES && n < errlen; i++) {
		len = (size_t)snprintf(err + n, errlen - n, "%s %s://",
		    i == 0 ? "" : i + 1 == NSCHEMES ? " or" : ",",
		    schemes[i].scheme);
		n += len;
	}
	return NULL;
}

int
store_url_check(const char *url, char *label, size_t labellen, char *err,
    size_t errlen)
{
	const struct store_backend *be = backend_of(url, err, errlen);
	char scratch[256];

	if (be == NULL)
		return -1;
	return be->check(url, label != NULL ? label : scratch, label != NULL ?
	    labellen : sizeof(scratch), err, errlen);
}

int
store_url_password(const char *url, size_t *off, size_t *len)
{
	const struct store_backend *be;
	char err[CB_ERRLEN];

	*off = *len = 0;
	if ((be = backend_of(url, err, sizeof(err))) == NULL ||
	    be->password == NULL)
		return 0;
	return be->password(url, off, len);
}

/* ---- waits ---- */

static int (*poll_fn)(struct pollfd *, int, int);

int
store_poll(struct pollfd *fds, int n, int ms)
{
	if (poll_fn != NULL)
		return poll_fn(fds, n, ms);
	return poll(fds, (nfds_t)n, ms);
}

/* ---- the handle ---- */

int
store_open(struct store **stp, const struct store_cfg *cfg, char *err,
    size_t errlen)
{
	struct store *st;
	int rc;

	if ((st = *stp = calloc(1, sizeof(*st))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
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
	if (cfg->poll != NULL)
		poll_fn = cfg->poll;
	if ((cfg->name != NULL && (st->name = strdup(cfg->name)) == NULL) ||
	    (cfg->path != NULL && (st->path = strdup(cfg->path)) == NULL) ||
	    (cfg->dir != NULL && (st->dir = strdup(cfg->dir)) == NULL)) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
		goto fail;
	}
	if (cfg->url == NULL)
		st->be = &store_file;
	else if ((st->be = backend_of(cfg->url, err, errlen)) == NULL) {
		rc = -1;
		goto fail;
	}
	snprintf(st->label, sizeof(st->label), "%s", st->be->name);
	if ((rc = st->be->open(st, cfg->url, err, errlen)) == 0)
		return 0;
	if (st->interrupted)
		rc = -3;
	else if (st->refused)
		rc = -2;
fail:
	store_close(st);
	*stp = NULL;
	return rc < 0 ? rc : -1;
}

void
store_close(struct store *st)
{
	if (st == NULL)
		return;
	store_unlock(st);
	if (st->be != NULL)
		st->be->close(st);
	free(st->name);
	free(st->path);
	free(st->dir);
	free(st);
}

const char *
store_label(const struct store *st)
{
	return st->label;
}

int
store_lock(struct store *st, double wait, int (*nap)(double), char *err,
    size_t errlen)
{
	return st->be->lock(st, wait, nap, err, errlen);
}

void
store_unlock(struct store *st)
{
	if (!st->held)
		return;
	st->be->unlock(st);
	st->held = 0;
}

const char *
store_lock_where(const struct store *st, char *buf, size_t len)
{
	st->be->lock_where(st, buf, len);
	return buf;
}

int
store_keepalive(struct store *st, char *err, size_t errlen)
{
	if (st->be->keepalive == NULL || !st->held)
		return 0;
	return st->be->keepalive(st, err, errlen);
}

int
store_keepalive_async(struct store *st, char *err, size_t errlen)
{
	if (st->be->keepalive_async == NULL || !st->held)
		return 0;
	return st->be->keepalive_async(st, err, errlen);
}

double
store_keepalive_every(const struct store *st)
{
	return st->be->keepalive != NULL ? st->lease / 3 : 0;
}

int
store_fresh(const struct store *st)
{
	return st->be->keepalive == NULL ||
	    (st->held && mono_now() - st->renewed < st->lease / 3);
}

double
store_lease_until(const struct store *st)
{
	if (st->be->keepalive == NULL || !st->held)
		return 0;
	return st->renewed + st->lease - st->lease / 8;
}

int
store_fd(const struct store *st)
{
	return st->be->fd(st);
}

double
store_now(const struct store *st)
{
	if (st->clock_at < 0)
		return wall_now();
	return st->clock_at + (mono_now() - st->clock_mono);
}

int
store_load(struct store *st, struct cb_state *s, struct store_run *run,
    char *err, size_t errlen)
{
	int rc;

	if (run != NULL)
		memset(run, 0, sizeof(*run));
	if ((rc = st->be->load(st, s, run, err, errlen)) >= 0)
		st->generation = s->generation;
	/* Only a record that no save made stale is one. */
	if (run != NULL && (rc < 0 || !store_run_pending(run, s)))
		memset(run, 0, sizeof(*run));
	return rc;
}

int
store_begin(struct store *st, long n, char *err, size_t errlen)
{
	struct store_run run;
	int rc;

	memset(&run, 0, sizeof(run));
	run.run = n;
	run.generation = st->generation;
	run.pid = (long)getpid();
	run.started = store_now(st);
	store_hostname(run.host, sizeof(run.host));
	if ((rc = st->be->begin(st, &run, err, errlen)) == 0)
		st->begun = n;
	return rc;
}

int
store_record_file(const struct store *st, const char **path,
    const char **buf, size_t *n)
{
	if (st == NULL || st->begun == 0 || st->rec_len == 0)
		return 0;
	*path = st->rec_path;
	*buf = st->rec_buf;
	*n = st->rec_len;
	return 1;
}

void
store_unbegin(struct store *st)
{
	if (st->begun == 0)
		return;
	st->be->unbegin(st);
	st->begun = 0;
}

int
store_save(struct store *st, struct cb_state *s, char *err, size_t errlen)
{
	long prev = s->generation;
	int rc;

	/* The next generation, from the one this holder loaded: a state
	 * saved by someone else meanwhile has it already, and a shared store
	 * refuses to write over that. */
	s->generation = st->generation < CB_LONG_MAX ? st->generation + 1 :
	    CB_LONG_MAX;
	if ((rc = st->be->save(st, s, err, errlen)) < 0) {
		s->generation = prev;
		return rc;
	}
	st->generation = s->generation;
	/* The start record of the run saved (if any) is stale now. */
	st->begun = 0;
	return 0;
}

int
store_exists(struct store *st, char *err, size_t errlen)
{
	return st->be->exists(st, err, errlen);
}

int
store_move_aside(struct store *st, char *newname, size_t newlen, char *err,
    size_t errlen)
{
	if (st->be->move_aside(st, newname, newlen, err, errlen) == -1)
		return -1;
	/* What is at the circuit's place now is nothing. */
	st->generation = 0;
	return 0;
}

const char *
store_where(const struct store *st, char *buf, size_t len)
{
	st->be->where(st, NULL, 1, buf, len);
	return buf;
}

const char *
store_key(const struct store *st, char *buf, size_t len)
{
	st->be->where(st, NULL, 0, buf, len);
	return buf;
}

int
store_adopt(struct store *st, const char *path, struct cb_state *s,
    char *err, size_t errlen)
{
	struct cb_state old;
	struct stat sb;
	char moved[CB_WHERELEN];
	int rc;

	if (lstat(path, &sb) == -1 && errno == ENOENT)
		return 0;
	/* A file cbexec once trusted: what cannot be read may have been
	 * OPEN, so it is not passed over. */
	if ((rc = state_load(path, 0, st->name, &old, err, errlen)) == 1) {
		/* gone since: nothing to take over */
		breaker_free(&old);
		return 0;
	}
	if (rc != 0)
		return -1;
	if (st->name != NULL)
		breaker_set_str(&old.name, st->name);
	if (store_save(st, &old, err, errlen) != 0) {
		breaker_free(&old);
		return -2;
	}
	breaker_free(s);
	*s = old;
	/* Once taken over, never again: a later deletion of the new state
	 * must not bring the old one back. */
	snprintf(moved, sizeof(moved), "%s.migrated", path);
	if (rename(path, moved) == -1)
		unlink(path);
	return 1;
}

int
store_list(struct store *st, char ***names, size_t *n, char *err,
    size_t errlen)
{
	*names = NULL;
	*n = 0;
	return st->be->list(st, names, n, err, errlen);
}

const char *
store_place(const struct store *st)
{
	return st->be->place(st);
}

int
store_get_json(struct store *st, const char *name, struct cb_state *s,
    cJSON **j, char *where, size_t wherelen, char *err, size_t errlen)
{
	st->be->where(st, name, 0, where, wherelen);
	*j = NULL;
	return st->be->get_json(st, name, s, j, err, errlen);
}

int
store_holder(struct store *st, const char *name, const struct cb_state *s,
    struct store_holder *h, char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	/* A backend that cannot tell leaves it unknown: nobody. */
	if (st->be->holder == NULL)
		return 0;
	if (st->be->holder(st, name, h, err, errlen) == -1) {
		memset(h, 0, sizeof(*h));
		return -1;
	}
	/* A run is going on only while its cbexec holds the circuit and
	 * nothing was saved since it began: a record left by a cbexec that
	 * was killed (the next holder counts it) is none. */
	if (h->pid <= 0 || !store_run_pending(&h->run, s) ||
	    h->run.pid != h->pid || strcmp(h->run.host, h->host) != 0)
		memset(&h->run, 0, sizeof(h->run));
	return 0;
}

int
store_account_load(struct store *st, const char *name, struct cb_account *a,
    char *err, size_t errlen)
{
	return st->be->account_load(st, name, a, err, errlen);
}

int
store_account_update(struct store *st, const char *name, double wait,
    int create, int (*fn)(struct cb_account *, void *), void *arg,
    char *aside, size_t asidelen, char *err, size_t errlen)
{
	return st->be->account_update(st, name, wait, create, fn, arg, aside,
	    asidelen, err, errlen);
}

int
store_account_list(struct store *st, char ***names, size_t *n, char *err,
    size_t errlen)
{
	*names = NULL;
	*n = 0;
	return st->be->account_list(st, names, n, err, errlen);
}

void
store_hostname(char *buf, size_t len)
{
	char host[256];
	size_t i;

	if (gethostname(host, sizeof(host) - 1) == -1 || host[0] == '\0')
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	for (i = 0; host[i] != '\0' && i < HOSTNAME_KEPT && i + 1 < len; i++) {
		char c = host[i];

		buf[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '-' ||
		    c == '_' ? c : '?';
	}
	buf[i] = '\0';
}

/* ---- the start record as text ---- */

/*
 * One line of JSON, the same in the lock file and under a shared store's
 * key:
 *   {"run":N,"generation":G,"pid":P,"host":"H","started":"ISO-8601"}
 * The host name is kept to the characters a host name has (anything else
 * as '?'), so the line needs no escaping.
 */
int
store_run_text(const struct store_run *run, char *buf, size_t len)
{
	char host[sizeof(run->host)], ts[40];
	size_t i;
	int n;

	for (i = 0; run->host[i] != '\0' && i + 1 < sizeof(host); i++) {
		char c = run->host[i];

		host[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '-' ||
		    c == '_' ? c : '?';
	}
	host[i] = '\0';
	n = snprintf(buf, len, "{\"run\":%ld,\"generation\":%ld,\"pid\":%ld,"
	    "\"host\":\"%.64s\",\"started\":\"%s\"}\n", run->run,
	    run->generation, run->pid, host, iso8601(run->started, ts,
	    sizeof(ts)));
	return n < 0 || (size_t)n >= len || (size_t)n > STORE_RUN_TEXT_MAX ?
	    -1 : 0;
}

int
store_run_parse(const char *buf, size_t len, struct store_run *run)
{
	const cJSON *v;
	cJSON *j;
	size_t n;
	int ok;

	memset(run, 0, sizeof(*run));
	/* The first line; what follows it is left from a longer one. */
	for (n = 0; n < len && buf[n] != '\n' && buf[n] != '\0'; n++)
		;
	if (n == 0 || (j = cJSON_ParseWithLength(buf, n)) == NULL)
		return -1;
	ok = cJSON_IsObject(j);
#define NUM(key, dst) do {						\
	v = cJSON_GetObjectItemCaseSensitive(j, key);			\
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 ||			\
	    v->valuedouble > (double)CB_LONG_MAX)			\
		ok = 0;							\
	else								\
		dst = (long)v->valuedouble;				\
} while (0)
	if (ok) {
		NUM("run", run->run);
		NUM("generation", run->generation);
		NUM("pid", run->pid);
	}
#undef NUM
	if (ok && cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(j,
	    "host")))
		snprintf(run->host, sizeof(run->host), "%s", v->valuestring);
	if (ok && (!cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(j,
	    "started")) || iso8601_parse(v->valuestring, &run->started) != 0))
		run->started = -1;
	cJSON_Delete(j);
	if (!ok || run->run < 1) {
		memset(run, 0, sizeof(*run));
		return -1;
	}
	return 0;
}

int
store_run_pending(const struct store_run *run, const struct cb_state *s)
{
	/* It began from this very state: same generation, and the run it
	 * names is the next one (a state the operator made anew, with an
	 * old generation number again, has another iteration). */
	return run->run > 0 && run->generation == s->generation &&
	    run->run == s->iteration + 1;
}
