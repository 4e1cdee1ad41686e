/* SPDX-License-Identifier: ISC */
/*
 * Shared by the files of store/: the handle behind store.h's opaque
 * struct store, the interface a backend implements (struct
 * store_backend: one function per operation of the handle), the backends
 * there are, and what the file backend (filestore.c) and a shared one
 * (redis.c) take from the state file's code (state.c, statesave.c,
 * account.c).
 *
 * A new backend is a file of its own defining a struct store_backend,
 * declared below, and a row of the table of schemes in store.c.
 */
#ifndef CBEXEC_STORE_BACKEND_H
#define CBEXEC_STORE_BACKEND_H

#include <stddef.h>

#include "store.h"

struct store_backend;
struct store_redis;

struct store {
	const struct store_backend *be;
	char label[256];	/* the store for people and metrics: the URL
				 * without its password; "file" */
	char *name, *path, *dir;	/* store_cfg's */
	int follow;
	double lease, timeout;
	int lock_fd;		/* file store: the flock held, else -1 */
	int held;		/* the lock (the lease) is held */
	long generation;	/* the state's as loaded or last saved */
	long begun;		/* the run put on record and not saved yet,
				 * 0: none */
	double clock_at;	/* a shared store's clock when last read, -1:
				 * never (the wall clock serves) */
	double clock_mono;	/* mono_now() then */
	double renewed;		/* mono_now() when the request that last
				 * set the lease was sent */
	int interrupted;	/* the last command: an operator signal */
	int refused;		/* the store answered and refused us (a
				 * replica, a certificate, a password), or
				 * the settings cannot work: no fallback */
	const char *password;	/* store_cfg's */
	const char *ca, *cert, *key;	/* store_cfg's */
	int replicas;
	/* the file store: the start record written, its file (rec_len 0:
	 * none) */
	size_t rec_len;
	char rec_path[4096];
	char rec_buf[512];	/* STORE_RUN_TEXT_MAX + 1 */
	union {			/* the backend's own */
		struct store_redis *r;
		void *priv;
	};
};

/*
 * A backend: each function as its store_* counterpart in store.h, on a
 * handle store.c has filled from the store_cfg (the common fields above).
 * keepalive and keepalive_async are NULL for a store without a lease
 * (then the lease's functions of store.h answer for it); check is NULL
 * for the file store, which no URL names.  load's run is NULL when
 * nobody asks for the start record (then it need not be read).
 */
struct store_backend {
	const char *name;	/* for messages */
	int (*check)(const char *url, char *label, size_t labellen,
	    char *err, size_t errlen);
	/* where url's password is (store_url_password); NULL: none */
	int (*password)(const char *url, size_t *off, size_t *len);
	int (*open)(struct store *st, const char *url, char *err,
	    size_t errlen);
	void (*close)(struct store *st);
	int (*lock)(struct store *st, double wait, int (*nap)(double),
	    char *err, size_t errlen);
	void (*unlock)(struct store *st);
	void (*lock_where)(const struct store *st, char *buf, size_t len);
	int (*keepalive)(struct store *st, char *err, size_t errlen);
	int (*keepalive_async)(struct store *st, char *err, size_t errlen);
	int (*fd)(const struct store *st);
	int (*load)(struct store *st, struct cb_state *s,
	    struct store_run *run, char *err, size_t errlen);
	int (*begin)(struct store *st, const struct store_run *run,
	    char *err, size_t errlen);
	void (*unbegin)(struct store *st);
	/* s->generation is the one to write (st->generation the one
	 * loaded) */
	int (*save)(struct store *st, const struct cb_state *s, char *err,
	    size_t errlen);
	int (*exists)(struct store *st, char *err, size_t errlen);
	int (*move_aside)(struct store *st, char *newname, size_t newlen,
	    char *err, size_t errlen);
	/* where circuit name (NULL: the handle's) is kept: the state file,
	 * or its key; with in, "KEY in LABEL" */
	void (*where)(const struct store *st, const char *name, int in,
	    char *buf, size_t len);
	const char *(*place)(const struct store *st);
	int (*list)(struct store *st, char ***names, size_t *n, char *err,
	    size_t errlen);
	int (*get_json)(struct store *st, const char *name,
	    struct cb_state *s, struct cJSON **j, char *err, size_t errlen);
	/* h (zeroed) gets the holder and the start record as it is (the
	 * caller judges whether it is pending); NULL: the backend cannot
	 * tell (nobody is shown) */
	int (*holder)(struct store *st, const char *name,
	    struct store_holder *h, char *err, size_t errlen);
	int (*account_load)(struct store *st, const char *name,
	    struct cb_account *a, char *err, size_t errlen);
	int (*account_update)(struct store *st, const char *name,
	    double wait, int create, int (*fn)(struct cb_account *, void *),
	    void *arg, char *aside, size_t asidelen, char *err,
	    size_t errlen);
	int (*account_list)(struct store *st, char ***names, size_t *n,
	    char *err, size_t errlen);
};

/* The backends (store.c's table names them by scheme). */
extern const struct store_backend store_file;	/* filestore.c */
extern const struct store_backend store_redis;	/* redis.c */
extern const struct store_backend store_etcd;	/* etcd.c */

/* A wait for a shared store: the poll of store_cfg (the operator
 * signals end it: -2), else poll(2). */
int store_poll(struct pollfd *fds, int n, int ms);

/* One line of a start record (store_run) as text, at most
 * STORE_RUN_TEXT_MAX bytes with its newline, NUL-terminated; and read
 * back from len bytes: 0, or -1 when it is none (what a start record
 * that cannot be read means: none). */
#define STORE_RUN_TEXT_MAX 511
int store_run_text(const struct store_run *run, char *buf, size_t len);
int store_run_parse(const char *buf, size_t len, struct store_run *run);
/* Whether run is the start record of a run that began from state s and
 * was never saved (a later save moved the generation on). */
int store_run_pending(const struct store_run *run, const struct cb_state *s);

/* ---- what the shared stores have in common (shared.c) ---- */

/* The text of a state read from key (len bytes, NUL after them) into *s
 * (uninitialised), for messages "KEY in LABEL": 0, or -1 with err as
 * state_parse(); without have (no such key) a fresh state: 1. */
int shared_parse_state(struct store *st, const char *name, const char *key,
    const char *text, size_t len, int have, struct cb_state *s, char *err,
    size_t errlen);
/* qsort's order of names (char *): strcmp's. */
int shared_by_name(const void *a, const void *b);
/* "cbexec:account:NAME" (malloc'd), or NULL. */
char *shared_account_key(const char *name);
/* The store's time (store_now()) as YYYYmmddTHHMMSSZ into stamp: 0, or
 * -1 with "LABEL: bad time" in err. */
int shared_aside_stamp(const struct store *st, char *stamp, size_t len,
    char *err, size_t errlen);
/* The name of try i of moving a corrupt document aside: PREFIX NAME:STAMP,
 * ".I" added after the first. */
void shared_aside_name(char *newname, size_t newlen, const char *prefix,
    const char *name, const char *stamp, int i);

/* ---- the state file (state.c, statesave.c) ---- */

/*
 * Load path into *s (which must not be initialised), as store_load()
 * (without the start record).  Loading moves no counter.
 */
int state_load(const char *path, int follow_symlinks, const char *name,
    struct cb_state *s, char *err, size_t errlen);
/*
 * Load an existing state file (a missing one is an error here) into *s,
 * and hand back its parsed JSON in *j (the caller frees both) for members
 * this cbexec does not keep in struct cb_state.  Returns as state_load.
 */
int state_load_json(const char *path, int follow_symlinks, struct cb_state *s,
    struct cJSON **j, char *err, size_t errlen);
/*
 * Write s to path atomically: temp file in the same directory (0600),
 * fsync, rename, fsync of the directory.  Missing parent directories are
 * created 0700.  On failure the old file is untouched.
 */
int state_save(const char *path, int follow_symlinks,
    const struct cb_state *s, char *err, size_t errlen);
/*
 * Take the circuit's lock, an flock on "path.lock" (with follow_symlinks,
 * on "TARGET.lock" of the file the links end at), as store_lock().
 * Returns the lock fd, -2 when another process holds it (busy), -3 when
 * nap gave up, -1 on error.
 */
int state_lock(const char *path, int follow_symlinks, double wait,
    int (*nap)(double), char *err, size_t errlen);
/* Before a save: the lock *fd is still the file at the lock's path; if
 * it was removed or replaced, the file there now is locked instead (*fd
 * replaced) unless another process holds it.  0, or -1 with err. */
int state_lock_check(int *fd, const char *path, int follow_symlinks,
    char *err, size_t errlen);
/* "path.lock" of the state file path (its target's with follow) into
 * lock: 0, or -1 with err. */
int state_lock_path(const char *path, int follow, char *lock, size_t len,
    char *err, size_t errlen);
/* The process that holds the lock of the state file path (its flock on
 * "path.lock", as /proc/locks lists it), without taking or testing the
 * lock: a pid, or 0 when none holds it or it cannot be told. */
long state_lock_holder(const char *path);
/* Rename a corrupt file to "path.corrupt-YYYYmmddTHHMMSSZ"; the new name
 * goes into newpath. */
int state_move_aside(const char *path, double now, char *newpath,
    size_t newlen, char *err, size_t errlen);

/* The text of a state (len bytes, NUL after them) is one the loader may
 * parse: not empty, not too large, no NUL byte, UTF-8.  0, or -1 with
 * "WHERE: corrupt state ..." in err. */
int state_text_check(const char *where, const char *buf, size_t len,
    char *err, size_t errlen);
/* Parse checked text into *s (uninitialised): 0, or as state_load(). */
int state_parse(const char *where, const char *buf, size_t len,
    const char *name, struct cb_state *s, char *err, size_t errlen);

/* The same, keeping the parsed JSON in *j too (caller frees both), as
 * state_load_json(). */
int state_parse_json(const char *where, const char *buf, size_t len,
    struct cb_state *s, struct cJSON **j, char *err, size_t errlen);

/* One nap of a lock wait (wait and nap as state_lock(); deadline on
 * mono_now()'s clock when wait > 0): 0 to try again, -2 when there is no
 * waiting or it ran out, -3 when nap gave up.  *delay grows from 10 ms to
 * 50 ms. */
int lock_nap(double wait, double deadline, double *delay,
    int (*nap)(double));

/* ---- the account documents of the file store (account.c) ---- */

/* The document's path for account name in dir (malloc'd), or NULL. */
char *account_path(const char *dir, const char *name);
/* "NAME.account" in dir, read as store_account_load() says, locked by a
 * short flock on "NAME.account.lock" only while it is read, changed and
 * written (account_update, as store_account_update(); waiting up to wait
 * seconds), written as the state file is (temp file, fsync, rename, fsync
 * of the directory; 0600; no link followed; owner and mode checked as for
 * the state). */
int account_load(const char *dir, const char *name, struct cb_account *a,
    char *err, size_t errlen);
int account_update(const char *dir, const char *name, double wait,
    int create, int (*fn)(struct cb_account *, void *), void *arg,
    char *aside, size_t asidelen, char *err, size_t errlen);

#endif
