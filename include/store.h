/* SPDX-License-Identifier: ISC */
/*
 * The store (SPEC §6): the circuit's state file, JSON via cJSON, written
 * atomically, guarded by an flock on FILE.lock.  Functions return 0 on success and -1 on failure
 * with a one-line reason in err (no "cbexec:" prefix, names the file).
 *
 * The driver reaches a circuit through a store handle (struct store,
 * below): the state file and its flock, or a shared Redis (SPEC §9,
 * --store) where the same JSON lives under one key per circuit, the lock
 * is a lease and every write a compare-and-set.  The same calls serve
 * either backend.
 */
#ifndef CBEXEC_STORE_H
#define CBEXEC_STORE_H

#include <stddef.h>

#include "breaker.h"

#define STATE_VERSION 1

struct cJSON;

/*
 * Load path into *s (which must not be initialised).  A missing file gives
 * a fresh CLOSED state named name and returns 1.  Corrupt, unreadable or
 * wrong types: -1 (a reset may move such a file aside).  A version newer
 * than this cbexec's, a symlink without follow_symlinks, a FIFO, device or
 * directory at the path, or a file or directory not trusted (owned by
 * someone else, writable by others): -2 (refused, never moved aside).
 * Loading moves no counter.
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

/* The state as JSON text with SPEC §6 field names, ending in a newline
 * (caller frees; NULL when out of memory). */
char *state_text(const struct cb_state *s);
/* The same, parsed into a cJSON object (caller frees). */
struct cJSON *state_to_json(const struct cb_state *s);
/* Fill *s from a cJSON object parsed from valid UTF-8 (state_load
 * checks); -1 with a reason on a bad field, -2 for a newer version. */
int state_from_json(const struct cJSON *j, struct cb_state *s,
    char *err, size_t errlen);
/* n history events as a JSON array, one per line, ending in a newline
 * (for --history --json; caller frees; NULL when out of memory); lead,
 * unless NULL, is put first in each ("\"v\": 1, "). */
char *events_text(const struct cb_event *e, size_t n, const char *lead);

/*
 * Take the circuit's lock, an flock on "path.lock" (with follow_symlinks,
 * on "TARGET.lock" of the file the links end at) opened O_CLOEXEC,
 * created 0600, checked to be trusted and, once held, to be the file at
 * that path.  wait < 0 waits forever, 0 fails at once, > 0 waits that
 * many seconds, napping through nap(seconds) (NULL: nanosleep), which
 * returns non-zero to give up.  Returns the lock fd, -2 when another
 * process holds it (busy), -3 when nap gave up, -1 on error.
 */
int state_lock(const char *path, int follow_symlinks, double wait,
    int (*nap)(double), char *err, size_t errlen);

/* Before a save: the lock *fd is still the file at the lock's path; if
 * it was removed or replaced, the file there now is locked instead (*fd
 * replaced) unless another process holds it.  0, or -1 with err. */
int state_lock_check(int *fd, const char *path, int follow_symlinks,
    char *err, size_t errlen);

/* Rename a corrupt file to "path.corrupt-YYYYmmddTHHMMSSZ"; the new name
 * goes into newpath. */
int state_move_aside(const char *path, double now, char *newpath,
    size_t newlen, char *err, size_t errlen);

/* Create the missing parent directories of path with mode 0700. */
int state_mkdirs(const char *path, char *err, size_t errlen);

/*
 * Accounts (SPEC §9, --account NAME): the gate of struct cb_account as one
 * JSON document per account, "NAME.account" in the state directory dir
 * (beside the circuits, which are *.json), locked by a short flock on
 * "NAME.account.lock" only while it is read, changed and written, and
 * written as the state file is (temp file, fsync, rename, fsync of the
 * directory; 0600; no link followed; owner and mode checked as for the
 * state).  Another backend implements the same four calls.
 */
#define ACCOUNT_SUFFIX ".account"

/* The document's path for account name in dir (malloc'd), or NULL. */
char *account_path(const char *dir, const char *name);

/* Read account name into *a (no lock: a reader sees the old document or
 * the new).  0, 1 when there is none (*a a CLOSED gate), -1 when it is
 * corrupt or unreadable, -2 when refused (link, not a regular file, not
 * trusted); err names the file. */
int account_load(const char *dir, const char *name, struct cb_account *a,
    char *err, size_t errlen);

/*
 * Read, change and write account name as one step under its lock (waiting
 * up to wait seconds for it; a holder keeps it for microseconds): fn(a,
 * arg) changes *a and returns 1 to have it written (generation + 1), 0 to
 * leave it, -1 to fail.  A missing document is a CLOSED gate when create
 * is set; otherwise ACCOUNT_NONE.  A corrupt one is never overwritten:
 * ACCOUNT_BAD with err, unless aside is given, where it is first moved to
 * "PATH.corrupt-TIMESTAMP" (named in aside) and fn gets a CLOSED gate.
 * Returns fn's 0 or 1, or ACCOUNT_ERROR, ACCOUNT_BUSY, ACCOUNT_NONE,
 * ACCOUNT_BAD (err says why, naming the file).
 */
#define ACCOUNT_ERROR	(-1)
#define ACCOUNT_BUSY	(-2)
#define ACCOUNT_NONE	(-3)
#define ACCOUNT_BAD	(-4)
int account_update(const char *dir, const char *name, double wait,
    int create, int (*fn)(struct cb_account *, void *), void *arg,
    char *aside, size_t asidelen, char *err, size_t errlen);

/* The document as JSON (caller frees): cJSON and text ending in a
 * newline; NULL when out of memory.  account_from_text reads it back
 * from len bytes of text (text[len] must be a NUL, as hiredis and
 * store_read_text leave it) into *a (not initialised; free it in any
 * case): 0, -1 with err when corrupt (a NUL byte, not UTF-8, bad JSON, a
 * key twice, a wrong type), -2 for a newer version. */
struct cJSON *account_to_json(const struct cb_account *a);
char *account_text(const struct cb_account *a);
int account_from_text(const char *text, size_t len, const char *name,
    struct cb_account *a, char *err, size_t errlen);
/* ---- the store handle: the file store or a shared Redis ---- */

enum store_kind { STORE_FILE, STORE_REDIS };

/* What a handle opens. */
struct store_cfg {
	const char *url;	/* --store URL; NULL: the file store */
	const char *name;	/* the circuit's name (its key in Redis) */
	const char *path;	/* the state file (the file store) */
	int follow;		/* --follow-symlinks */
	double lease;		/* --store-lease, seconds */
	double timeout;		/* --store-timeout: connect and each command */
	const char *password;	/* CBEXEC_STORE_PASSWORD or
				 * --store-password-file; NULL: the URL's */
};

struct store_redis;

struct store {
	enum store_kind kind;
	char label[256];	/* the store for people and metrics: the URL
				 * without its password; "file" */
	char *name, *path;
	int follow;
	double lease, timeout;
	int lock_fd;		/* file store: the flock held, else -1 */
	int held;		/* the lock (the lease) is held */
	long generation;	/* the state's as loaded or last saved */
	double clock_at;	/* the store's clock when last read */
	double clock_mono;	/* mono_now() then */
	double renewed;		/* mono_now() when the request that last
				 * set the lease was sent */
	int interrupted;	/* the last command: an operator signal */
	const char *password;	/* store_cfg's */
	struct store_redis *r;
};

/*
 * Check a --store URL: redis://[user:password@]host[:port][/db] or
 * unix:///path.sock[?db=N].  0 with the URL without its password in
 * label, or -1 with what is wrong in err.
 */
int store_url_check(const char *url, char *label, size_t labellen,
    char *err, size_t errlen);
/*
 * Where the password of a URL is (from the first "://" on), as the
 * --store parser reads it, whatever characters it holds: 1 with its
 * offset and length in url, 0 when it has none.  cbexec overwrites it
 * there in its argv and environment.
 */
int store_url_password(const char *url, size_t *off, size_t *len);

/*
 * Open a handle: nothing to do for a file; for Redis connect (within
 * cfg->timeout), authenticate, select the database and read its clock.
 * 0, or -1 with err naming the store (it is unreachable, or refuses us).
 * store_close() in either case.
 */
int store_open(struct store *st, const struct store_cfg *cfg, char *err,
    size_t errlen);
/* Let the lock go (if held) and free the handle. */
void store_close(struct store *st);

/*
 * Take the circuit's lock: the flock of state_lock(), or in Redis the
 * lease (SET lock token NX PX lease with a random token).  wait and nap as
 * state_lock(); returns 0, -2 busy, -3 when nap gave up, -1 on error.
 */
int store_lock(struct store *st, double wait, int (*nap)(double),
    char *err, size_t errlen);
/* Let the lock go (Redis: delete the lease if it is still ours). */
void store_unlock(struct store *st);

/*
 * While the lock is held: renew the lease (if it is still ours; taken
 * again when it expired and nobody took it) and read the store's clock
 * again.  0, or -1 with err when the lease went to another holder or the
 * store cannot be reached.  Nothing to do for a file.
 */
int store_keepalive(struct store *st, char *err, size_t errlen);
/*
 * The same for an event loop, never waiting for the store: the first
 * call sends the renewal and returns 1 (pending); call it again when
 * store_fd() is readable, or at the latest at the lease's local deadline
 * (store_lease_until()), until it says 0 (renewed) or -1 (with err, as
 * store_keepalive).  A blocking store command meanwhile forgets the
 * pending renewal.
 */
int store_keepalive_async(struct store *st, char *err, size_t errlen);
/* Whether the lease was set (taken, renewed or saved with) less than a
 * third of it ago, so a renewal now would change nothing. */
int store_fresh(const struct store *st);
/* The local deadline of the lease (mono_now() clock; 0 when there is no
 * lease): the time the request that last set it was sent, plus the
 * lease, less a margin (an eighth of it) -- it cannot have expired in
 * Redis before, whatever the network did; the run must be over by then. */
double store_lease_until(const struct store *st);
/* The descriptor that becomes readable when the store hangs up on us
 * (Redis's socket), else -1. */
int store_fd(const struct store *st);
/* The time now on the store's clock (epoch seconds): Redis's TIME as last
 * read, advanced by our own clock since; the wall clock for a file. */
double store_now(const struct store *st);

/*
 * The circuit's state into *s (uninitialised): as state_load() returns.
 * The generation it carries is remembered for the next save.
 */
int store_load(struct store *st, struct cb_state *s, char *err,
    size_t errlen);
/*
 * Save s (its generation becomes the next one).  The file store writes
 * atomically while it still holds the lock file; Redis writes only if the
 * lease is still ours and the state in the store still has the generation
 * loaded.  0; -1 with err on an error; -4 with err when the write was
 * refused because another holder has the circuit now (nothing written).
 */
int store_save(struct store *st, struct cb_state *s, char *err,
    size_t errlen);
/* 1 when the circuit has a state (or a lock) in the store, 0 when not, -1
 * with err. */
int store_exists(struct store *st, char *err, size_t errlen);
/* Move a corrupt state aside (file: FILE.corrupt-TIMESTAMP; Redis:
 * cbexec:corrupt:NAME:TIMESTAMP) so a reset starts fresh; its new name in
 * newname. */
int store_move_aside(struct store *st, char *newname, size_t newlen,
    char *err, size_t errlen);
/* Where the circuit is, for messages: the state file, or "KEY in LABEL". */
const char *store_where(const struct store *st, char *buf, size_t len);

/*
 * The account documents through the handle: in the file store
 * account_load() and account_update() on "NAME.account" in dir; in Redis
 * the same JSON under cbexec:account:NAME (dir unused), read without a
 * lock and changed by a compare-and-set on its generation, read again and
 * fn asked again when another host wrote in between (wait unused; a
 * corrupt one moved aside goes to cbexec:corrupt-account:NAME:TIMESTAMP).
 * Returns as those.  store_account_list: the accounts of a Redis store,
 * sorted, as store_list().
 */
int store_account_load(struct store *st, const char *dir, const char *name,
    struct cb_account *a, char *err, size_t errlen);
int store_account_update(struct store *st, const char *dir,
    const char *name, double wait, int create,
    int (*fn)(struct cb_account *, void *), void *arg, char *aside,
    size_t asidelen, char *err, size_t errlen);
int store_account_list(struct store *st, char ***names, size_t *n,
    char *err, size_t errlen);

/* The names of the circuits in a Redis store, sorted (caller frees each
 * and the array): 0, or -1 with err. */
int store_list(struct store *st, char ***names, size_t *n, char *err,
    size_t errlen);
/* The state of circuit name in a Redis store, with its JSON, for --status
 * --all: as state_load_json(). */
int store_get_json(struct store *st, const char *name, struct cb_state *s,
    struct cJSON **j, char *err, size_t errlen);

#endif
