/* SPDX-License-Identifier: ISC */
/*
 * The store (SPEC §6, §9, §11): where a circuit's state is kept, and its
 * lock.  The layers above hold a handle (struct store, opaque) and never
 * ask which backend it is: the state file with its flock on FILE.lock
 * (no --store), or a shared store chosen by the --store URL's scheme
 * (redis://, unix://), where the same JSON lives under one key per
 * circuit, the lock is a lease and every write a compare-and-set.  The
 * backends, one file each behind a table, are store/backend.h's.
 *
 * Functions return 0 on success and -1 on failure with a one-line reason
 * in err (no "cbexec:" prefix; it names the file or the store).
 */
#ifndef CBEXEC_STORE_H
#define CBEXEC_STORE_H

#include <stddef.h>

#include "breaker.h"

#define STATE_VERSION 1

struct cJSON;
struct pollfd;

/* ---- the state as JSON: the format every backend keeps ---- */

/* The state as JSON text with SPEC §6 field names, ending in a newline
 * (caller frees; NULL when out of memory). */
char *state_text(const struct cb_state *s);
/* The same, parsed into a cJSON object (caller frees). */
struct cJSON *state_to_json(const struct cb_state *s);
/* Fill *s from a cJSON object parsed from valid UTF-8 (state_load
 * checks); -1 with a reason on a bad field, -2 for a newer version. */
int state_from_json(const struct cJSON *j, struct cb_state *s,
    char *err, size_t errlen);

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

/* ---- the store handle ---- */

struct store;

/* What a handle opens. */
struct store_cfg {
	const char *url;	/* --store URL; NULL: the file store */
	const char *name;	/* the circuit's name (its key in a shared
				 * store); NULL: no circuit (--status --all,
				 * --reset-account) */
	const char *path;	/* the circuit's state file (the file store) */
	const char *dir;	/* the state directory: the file store's
				 * circuits (--status --all) and accounts;
				 * NULL when none could be named */
	int follow;		/* --follow-symlinks */
	double lease;		/* --store-lease, seconds */
	double timeout;		/* --store-timeout: connect and each command */
	const char *password;	/* CBEXEC_STORE_PASSWORD or
				 * --store-password-file; NULL: the URL's */
	/* How a wait for the store polls: poll(2) on n fds that returns -2
	 * at once when an operator signal comes (the run engine's
	 * sup_poll()); NULL: poll(2) itself. */
	int (*poll)(struct pollfd *fds, int n, int ms);
	const char *ca, *cert, *key;	/* --store-ca, --store-cert,
					 * --store-key (rediss://) */
	int replicas;		/* --store-replicas: WAIT for them */
};

/*
 * A start record (SPEC §11): run N of the circuit has begun and its
 * result is not saved yet.  Written before the command starts
 * (store_begin()); a save after it makes it stale, and a load returns
 * only one that is not (run 0: none).  Found under the lock, its owner is
 * gone: the run it names was never counted.
 */
struct store_run {
	long run;		/* N, the iteration the run was to be; 0: none */
	long generation;	/* the state's generation it began from */
	long pid;		/* cbexec's */
	char host[256];		/* cbexec's host */
	double started;		/* the store's clock, epoch seconds */
};

/*
 * Who has the circuit now (--status, --status --all; no lock taken): the
 * cbexec that holds its lock (the file store: the flock's holder; a
 * shared store: the lease, which names its holder's host and pid) and,
 * when that cbexec is running a run, its start record.
 */
struct store_holder {
	long pid;		/* the holder's pid; 0: nobody holds it (or
				 * the store cannot tell) */
	char host[256];		/* and its host */
	struct store_run run;	/* the run it is running: run.run 0 when
				 * none (between runs, an operator's verb) */
};

/* This host's name as a start record and a lease keep it: at most
 * HOSTNAME_KEPT characters, each of a host name (others as '?'). */
#define HOSTNAME_KEPT 64
void store_hostname(char *buf, size_t len);

/*
 * Check a --store URL: its scheme names a backend (redis://, rediss://,
 * unix://) and the rest is what that backend takes
 * (redis[s]://[user[:password]@]host[:port][/db], unix:///path.sock[?db=N]).  0 with the URL without its
 * password in label (label may be NULL), or -1 with what is wrong in err.
 */
int store_url_check(const char *url, char *label, size_t labellen,
    char *err, size_t errlen);
/*
 * Where a --store URL's password is, as the store reads the URL: 1 with
 * its first byte's offset in url and its length (as written, %XX and
 * all), or 0 when it has none (or is no URL store_url_check accepts).
 */
int store_url_password(const char *url, size_t *off, size_t *len);

/*
 * Open a handle (*st, NULL on failure): the backend of cfg->url's scheme
 * (none: the file store), connected within cfg->timeout for a shared
 * store (authenticated, its clock read).  0; -1 with err naming the store
 * (unreachable); -2 with err when the store answered and refused us (a
 * replica, a certificate, a password) or the settings cannot work (never
 * a reason to fall back to a local state); -3 when an operator signal
 * ended the wait.
 */
int store_open(struct store **st, const struct store_cfg *cfg, char *err,
    size_t errlen);
/* Let the lock go (if held) and free the handle (NULL: nothing). */
void store_close(struct store *st);
/* The store for people and metrics: the URL without its password, or
 * "file". */
const char *store_label(const struct store *st);

/*
 * Take the circuit's lock: the flock on FILE.lock (created 0600, checked
 * to be trusted and, once held, to be the file at that path), or the
 * lease in a shared store.  wait < 0 waits forever, 0 fails at once, > 0
 * waits that many seconds, napping through nap(seconds) (NULL: nanosleep),
 * which returns non-zero to give up.  0, -2 when another holder has it
 * (busy), -3 when nap gave up, -1 on error.
 */
int store_lock(struct store *st, double wait, int (*nap)(double),
    char *err, size_t errlen);
/* Let the lock go (a lease: deleted if it is still ours). */
void store_unlock(struct store *st);
/* The lock for messages: "FILE.lock", "its lease in LABEL". */
const char *store_lock_where(const struct store *st, char *buf, size_t len);

/*
 * While the lock is held: renew the lease (if it is still ours; taken
 * again when it expired and nobody took it) and read the store's clock
 * again.  0, or -1 with err when the lease went to another holder or the
 * store cannot be reached.  Nothing to do for a store without a lease.
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
/* How often the lease wants renewing while the lock is held (a third of
 * it), seconds; 0 when the store has no lease (the file store). */
double store_keepalive_every(const struct store *st);
/* Whether the lease was set (taken, renewed or saved with) less than a
 * third of it ago, so a renewal now would change nothing (always, for a
 * store without a lease). */
int store_fresh(const struct store *st);
/* The local deadline of the lease (mono_now() clock; 0 when there is no
 * lease): the time the request that last set it was sent, plus the
 * lease, less a margin (an eighth of it) -- it cannot have expired in the
 * store before, whatever the network did; the run must be over by then. */
double store_lease_until(const struct store *st);
/* The descriptor that becomes readable when the store answers a renewal
 * or hangs up on us (a shared store's socket), else -1. */
int store_fd(const struct store *st);
/* The time now on the store's clock (epoch seconds): a shared store's
 * time as last read, advanced by our own clock since; the wall clock for
 * a file. */
double store_now(const struct store *st);

/*
 * The circuit's state into *s (uninitialised).  A missing state gives a
 * fresh CLOSED one and returns 1.  Corrupt, unreadable or wrong types:
 * -1 (a reset may move it aside).  A version newer than this cbexec's, a
 * symlink without --follow-symlinks, a FIFO, device or directory at the
 * path, or a file or directory not trusted: -2 (refused, never moved
 * aside).  The generation it carries is remembered for the next save.
 * run, unless NULL, gets the circuit's start record that no save has made
 * stale (run->run 0: none).
 */
int store_load(struct store *st, struct cb_state *s, struct store_run *run,
    char *err, size_t errlen);
/*
 * Put run n on record as begun (the lock held), with this cbexec's pid,
 * host and the store's time, from the generation loaded or last saved:
 * the file store writes it into the lock file, without waiting for the
 * disk (it must outlive cbexec, not the machine); a shared store writes
 * it fenced as a save is.  0; -1 with err (the disk is full, read-only,
 * the store down); -4 when another holder has the circuit now.  Only
 * then may the command start.
 */
int store_begin(struct store *st, long n, char *err, size_t errlen);
/* The run just put on record did not start after all: its record goes
 * (best effort). */
void store_unbegin(struct store *st);
/*
 * Save s (its generation becomes the next one), which makes a start
 * record stale.  The file store writes atomically while it still holds
 * the lock file; a shared store writes only if the lease is still ours
 * and the state in the store still has the generation loaded.  0; -1 with
 * err on an error; -4 with err when the write was refused because another
 * holder has the circuit now (nothing written).
 */
int store_save(struct store *st, struct cb_state *s, char *err,
    size_t errlen);
/* 1 when the circuit has a state (or a lock) in the store, 0 when not, -1
 * with err. */
int store_exists(struct store *st, char *err, size_t errlen);
/* Move a corrupt state aside (file: FILE.corrupt-TIMESTAMP; Redis:
 * cbexec:corrupt:NAME:TIMESTAMP) so a reset starts fresh (generation 0,
 * no start record); its new name in newname. */
int store_move_aside(struct store *st, char *newname, size_t newlen,
    char *err, size_t errlen);
/* Where the circuit is, for messages: the state file, or "KEY in LABEL". */
const char *store_where(const struct store *st, char *buf, size_t len);
/* Where the circuit is kept: the state file, or its key. */
const char *store_key(const struct store *st, char *buf, size_t len);
/*
 * The circuit takes over the state file at path that an older cbexec kept
 * elsewhere (the lock held, the circuit without a state of its own):
 * saved here (*s replaced), path renamed to "path.migrated": 1.  0 when
 * there is no file at path; -1 with err when it cannot be read (it may
 * hold an OPEN circuit: left where it is); -2 with err when the save
 * failed.
 */
int store_adopt(struct store *st, const char *path, struct cb_state *s,
    char *err, size_t errlen);

/*
 * Every circuit of the store (--status --all): their names, sorted
 * (caller frees each and the array).  0; -1 with err; -2 with err when
 * the store has no place for circuits at all (a state directory that
 * does not exist).  store_place: where they are, for people (the state
 * directory, or the store's label).
 */
int store_list(struct store *st, char ***names, size_t *n, char *err,
    size_t errlen);
const char *store_place(const struct store *st);
/* The state of circuit name with its JSON (caller frees both), and where
 * it is kept (the state file, or its key) in where: as store_load().  A
 * circuit whose first run is going on has no state yet: a fresh one, and
 * 1. */
int store_get_json(struct store *st, const char *name, struct cb_state *s,
    struct cJSON **j, char *where, size_t wherelen, char *err,
    size_t errlen);
/* Who holds circuit name (NULL: the handle's) now, and the run it is
 * running of the state s (its start record, if s is the state it began
 * from), into *h: 0, or -1 with err. */
int store_holder(struct store *st, const char *name,
    const struct cb_state *s, struct store_holder *h, char *err,
    size_t errlen);

/*
 * Accounts (SPEC §9, --account NAME): the gate of struct cb_account as one
 * JSON document per account (the file store: "NAME.account" in the state
 * directory, changed under a short flock of its own; a shared store:
 * cbexec:account:NAME, changed by a compare-and-set on its generation).
 *
 * store_account_load: read it into *a (no lock: a reader sees the old
 * document or the new).  0, 1 when there is none (*a a CLOSED gate), -1
 * when it is corrupt, unreadable or the store cannot be reached, -2 when
 * refused (link, not a regular file, not trusted); err names it.
 *
 * store_account_update: read, change and write it as one step (waiting up
 * to wait seconds for a file's lock; a holder keeps it for microseconds):
 * fn(a, arg) changes *a and returns 1 to have it written (generation +
 * 1), 0 to leave it, -1 to fail; asked again when another host wrote in
 * between.  A missing document is a CLOSED gate when create is set;
 * otherwise ACCOUNT_NONE.  A corrupt one is never overwritten: ACCOUNT_BAD
 * with err, unless aside is given, where it is first moved aside (named in
 * aside) and fn gets a CLOSED gate.  Returns fn's 0 or 1, or
 * ACCOUNT_ERROR, ACCOUNT_BUSY, ACCOUNT_NONE, ACCOUNT_BAD (err says why).
 *
 * store_account_list: the accounts' names, sorted, as store_list().
 */
#define ACCOUNT_SUFFIX ".account"
#define ACCOUNT_ERROR	(-1)
#define ACCOUNT_BUSY	(-2)
#define ACCOUNT_NONE	(-3)
#define ACCOUNT_BAD	(-4)
int store_account_load(struct store *st, const char *name,
    struct cb_account *a, char *err, size_t errlen);
int store_account_update(struct store *st, const char *name, double wait,
    int create, int (*fn)(struct cb_account *, void *), void *arg,
    char *aside, size_t asidelen, char *err, size_t errlen);
int store_account_list(struct store *st, char ***names, size_t *n,
    char *err, size_t errlen);

#endif
