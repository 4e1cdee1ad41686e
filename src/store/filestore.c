/* SPDX-License-Identifier: ISC */
/*
 * The file store: a backend of the handle (store.c) over the state file
 * and its flock (state.c, statesave.c), the circuits of the state
 * directory, and the accounts' documents beside them (account.c).  It
 * has no lease: the kernel drops the flock when its holder dies.
 *
 * The start record of a run (SPEC §11) goes into the lock file FILE.lock,
 * which the holder has open already: one write(2) of a fixed-size
 * block at its start, not synced.  The record must outlive cbexec, not the machine
 * (after a crash of the machine no run can tell what happened anyway),
 * so the page cache is enough, and the run's durable save stays the only
 * synchronous write.  The block has the same size every time, so after
 * the first run a record changes neither the file's size nor its blocks.
 * It names the generation of the state it began from: the run's save
 * moves the generation on, which makes it stale, and then blanks it the
 * same way it was written (a state file removed by hand would start from
 * generation 0 again, and must not find a record of an earlier run).  A
 * record found under the flock whose run was never saved is a run whose
 * cbexec was killed: whoever held the flock then is gone.  (For a moment
 * after a kill -9 the flock may still be held by what the killed cbexec
 * left, its watchdog: a lock found busy while the record names a cbexec
 * of this host that is gone is waited for, briefly.)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "core.h"
#include "store.h"
#include "backend.h"

/* The start record's block in the lock file: its line, spaces, '\n'. */
#define RECORD_SIZE (STORE_RUN_TEXT_MAX + 1)
_Static_assert(RECORD_SIZE == sizeof(((struct store *)0)->rec_buf),
    "the start record's block and its copy");
/* How long a lock held by what a killed cbexec left is waited for. */
#define STRAGGLER_WAIT 2.0

static int
fs_open(struct store *st, const char *url, char *err, size_t errlen)
{
	return 0;
}

static void
fs_close(struct store *st)
{
}

static void read_record(struct store *st, struct store_run *run);

/*
 * Whether the lock file's start record names a cbexec of this host that
 * is gone: then whoever holds the flock is most likely what is left of
 * it (its watchdog, cloned with a copy of its descriptors, closes them
 * as soon as it is first scheduled) and lets go in a moment.
 */
static int
holder_gone(struct store *st)
{
	struct store_run run;
	char host[sizeof(run.host)];

	memset(&run, 0, sizeof(run));
	read_record(st, &run);
	if (run.run == 0 || run.pid <= 0)
		return 0;
	store_hostname(host, sizeof(host));
	return strcmp(host, run.host) == 0 && kill((pid_t)run.pid, 0) == -1 &&
	    errno == ESRCH;
}

static int
fs_lock(struct store *st, double wait, int (*nap)(double), char *err,
    size_t errlen)
{
	double deadline = mono_now() + STRAGGLER_WAIT, delay = 0.01;
	int fd, rc;

	/* Busy because of what a killed cbexec left for a moment: waited
	 * for, so the next invocation counts that run instead of being
	 * turned away. */
	while ((fd = state_lock(st->path, st->follow, wait, nap, err,
	    errlen)) == -2 && holder_gone(st)) {
		if ((rc = lock_nap(STRAGGLER_WAIT, deadline, &delay, nap)) != 0)
			return rc;
		wait = 0;
	}
	if (fd < 0)
		return fd;
	st->lock_fd = fd;
	st->held = 1;
	return 0;
}

static void
fs_unlock(struct store *st)
{
	if (st->lock_fd != -1)
		close(st->lock_fd);
	st->lock_fd = -1;
}

static void
fs_lock_where(const struct store *st, char *buf, size_t len)
{
	snprintf(buf, len, "%s.lock", st->path);
}

static int
fs_fd(const struct store *st)
{
	return -1;
}

/* The start record in the lock file into *run (none when it holds none,
 * or cannot be read: a record is for counting a run, never a reason to
 * refuse one). */
static void
read_record(struct store *st, struct store_run *run)
{
	char buf[RECORD_SIZE], lock[PATH_MAX], why[CB_WHYLEN];
	ssize_t n;
	int fd = st->lock_fd;

	/* Without the lock (--status): the file at the lock's path, read
	 * as a reader of the state reads it. */
	if (fd == -1 && (state_lock_path(st->path, st->follow, lock,
	    sizeof(lock), why, sizeof(why)) == -1 ||
	    (fd = file_open(lock, O_RDONLY, 0, 0)) < 0))
		return;
	n = pread(fd, buf, sizeof(buf), 0);
	if (fd != st->lock_fd)
		close(fd);
	if (n > 0)
		store_run_parse(buf, (size_t)n, run);
}

static int
fs_load(struct store *st, struct cb_state *s, struct store_run *run,
    char *err, size_t errlen)
{
	int rc;

	if ((rc = state_load(st->path, st->follow, st->name, s, err,
	    errlen)) >= 0 && run != NULL)
		read_record(st, run);
	return rc;
}

/* The block of a record (text NULL: of none) into the lock file. */
static int
write_record(struct store *st, const char *text)
{
	char buf[RECORD_SIZE];
	size_t n = text != NULL ? strlen(text) : 0;
	ssize_t w;

	memset(buf, ' ', sizeof(buf));
	if (n > 0)
		memcpy(buf, text, n);
	buf[sizeof(buf) - 1] = '\n';
	/* Over the block at the start, whatever was written there before;
	 * no fsync: see the header. */
	if (lseek(st->lock_fd, 0, SEEK_SET) == -1)
		return -1;
	if ((w = file_write_all(st->lock_fd, buf, sizeof(buf))) ==
	    (ssize_t)sizeof(buf))
		return 0;
	if (w >= 0)
		errno = ENOSPC;
	return -1;
}

static int
fs_begin(struct store *st, const struct store_run *run, char *err,
    size_t errlen)
{
	char text[RECORD_SIZE];

	if (st->lock_fd == -1 || store_run_text(run, text, sizeof(text)) ==
	    -1) {
		snprintf(err, errlen, "%s.lock: internal error: no run to put "
		    "on record", st->path);
		return -1;
	}
	if (write_record(st, text) == -1) {
		snprintf(err, errlen, "%s.lock: cannot put run %ld on record: "
		    "%s", st->path, run->run, strerror(errno));
		return -1;
	}
	/* Its file and block, for a copy the watchdog keeps. */
	st->rec_len = 0;
	if (state_lock_path(st->path, st->follow, st->rec_path,
	    sizeof(st->rec_path), err, errlen) == 0) {
		memset(st->rec_buf, ' ', sizeof(st->rec_buf));
		memcpy(st->rec_buf, text, strlen(text));
		st->rec_buf[sizeof(st->rec_buf) - 1] = '\n';
		st->rec_len = sizeof(st->rec_buf);
	}
	err[0] = '\0';
	return 0;
}

static void
fs_unbegin(struct store *st)
{
	st->rec_len = 0;
	if (st->lock_fd != -1)
		(void)write_record(st, NULL);
}

static int
fs_save(struct store *st, const struct cb_state *s, char *err,
    size_t errlen)
{
	if (st->lock_fd != -1 && state_lock_check(&st->lock_fd, st->path,
	    st->follow, err, errlen) == -1)
		return -1;
	if (state_save(st->path, st->follow, s, err, errlen) == -1)
		return -1;
	/* The run is saved: its record goes, as it came (no sync).  Were
	 * cbexec killed before this, the generation saved tells it stale;
	 * cleared, it cannot pass for a run of a state made anew (a state
	 * file removed by hand starts at generation 0 again). */
	if (st->begun)
		(void)write_record(st, NULL);
	st->rec_len = 0;
	return 0;
}

static int
fs_exists(struct store *st, char *err, size_t errlen)
{
	char lock[PATH_MAX];
	struct stat sb;

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

static int
fs_move_aside(struct store *st, char *newname, size_t newlen, char *err,
    size_t errlen)
{
	if (state_move_aside(st->path, wall_now(), newname, newlen, err,
	    errlen) == -1)
		return -1;
	/* The fresh state's generations start again from 0: a record of the
	 * old one's must not pass for one of the new. */
	fs_unbegin(st);
	return 0;
}

static void
fs_where(const struct store *st, const char *name, int in, char *buf,
    size_t len)
{
	if (name == NULL)
		snprintf(buf, len, "%s", st->path);
	else
		snprintf(buf, len, "%s/%s.json", st->dir != NULL ? st->dir :
		    ".", name);
}

static const char *
fs_place(const struct store *st)
{
	return st->dir != NULL ? st->dir : "(no state directory)";
}

static int
need_dir(const struct store *st, char *err, size_t errlen)
{
	if (st->dir != NULL)
		return 0;
	snprintf(err, errlen, "no state directory: neither CBEXEC_STATE_DIR, "
	    "XDG_STATE_HOME (an absolute path) nor HOME is set");
	return -1;
}

/*
 * The names NAME of the files NAME+suffix in the state directory, sorted:
 * never a hidden one (a save's temp file), nor a directory.  0 (none when
 * the directory is missing, unless missing_is_error: then -2), -1 with
 * err.
 */
static int
walk(struct store *st, const char *suffix, int missing_is_error,
    char ***names, size_t *n, char *err, size_t errlen)
{
	size_t len, sl = strlen(suffix);
	struct dirent *de;
	char **v = NULL, **nv;
	DIR *d;

	if (need_dir(st, err, errlen) == -1)
		return -1;
	if ((d = opendir(st->dir)) == NULL) {
		if (errno == ENOENT && !missing_is_error)
			return 0;
		snprintf(err, errlen, errno == ENOENT ? "no state directory %s" :
		    "%s: %s", st->dir, strerror(errno));
		return errno == ENOENT ? -2 : -1;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len <= sl ||
		    strcmp(de->d_name + len - sl, suffix) != 0 ||
		    de->d_type == DT_DIR)
			continue;
		if ((nv = realloc(v, (*n + 1) * sizeof(*v))) == NULL)
			goto oom;
		v = nv;
		if ((v[*n] = strndup(de->d_name, len - sl)) == NULL)
			goto oom;
		(*n)++;
	}
	closedir(d);
	if (*n > 0)
		qsort(v, *n, sizeof(*v), shared_by_name);
	*names = v;
	return 0;
oom:
	closedir(d);
	while (*n > 0)
		free(v[--*n]);
	free(v);
	snprintf(err, errlen, "out of memory");
	return -1;
}

/*
 * The circuits: every NAME.json, and a NAME.json.lock without its state
 * file whose lock a process holds -- a circuit whose first run is going
 * on (state_lock_holder() reads /proc/locks and takes nothing).  A lock
 * nobody holds (a run interrupted before it began) is no circuit.
 */
static int
fs_list(struct store *st, char ***names, size_t *n, char *err,
    size_t errlen)
{
	char **locks = NULL, **nv, path[PATH_MAX];
	size_t nl = 0, i, k, m;
	int rc;

	if ((rc = walk(st, ".json", 1, names, n, err, errlen)) < 0 ||
	    walk(st, ".json.lock", 0, &locks, &nl, err, errlen) < 0)
		return rc < 0 ? rc : -1;
	for (i = 0, m = *n; i < nl; i++) {
		fs_where(st, locks[i], 0, path, sizeof(path));
		for (k = 0; k < m && strcmp((*names)[k], locks[i]) != 0; k++)
			;
		if (k < m || access(path, F_OK) == 0 ||
		    state_lock_holder(path) <= 0 ||
		    (nv = realloc(*names, (*n + 1) * sizeof(*nv))) == NULL) {
			free(locks[i]);
			continue;
		}
		*names = nv;
		nv[(*n)++] = locks[i];
	}
	free(locks);
	if (*n > m)
		qsort(*names, *n, sizeof(**names), shared_by_name);
	return 0;
}

static int
fs_get_json(struct store *st, const char *name, struct cb_state *s,
    struct cJSON **j, char *err, size_t errlen)
{
	char path[PATH_MAX];

	if (need_dir(st, err, errlen) == -1)
		return -1;
	fs_where(st, name, 0, path, sizeof(path));
	/* Its first run is going on: no state yet, a fresh CLOSED one. */
	if (access(path, F_OK) == -1 && errno == ENOENT &&
	    state_lock_holder(path) > 0) {
		if (breaker_init(s, name) == -1 ||
		    (*j = cJSON_CreateObject()) == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		return 1;
	}
	return state_load_json(path, st->follow, s, j, err, errlen);
}

/* The flock's holder (a process of this host: /proc/locks), and the
 * start record in its lock file. */
static int
fs_holder(struct store *st, const char *name, struct store_holder *h,
    char *err, size_t errlen)
{
	char path[PATH_MAX], lock[PATH_MAX], why[CB_WHYLEN], buf[RECORD_SIZE];
	ssize_t len;
	int fd;

	if (name != NULL) {
		if (need_dir(st, err, errlen) == -1)
			return -1;
		fs_where(st, name, 0, path, sizeof(path));
	} else
		snprintf(path, sizeof(path), "%s", st->path);
	if ((h->pid = state_lock_holder(path)) <= 0) {
		h->pid = 0;
		return 0;
	}
	store_hostname(h->host, sizeof(h->host));
	if (state_lock_path(path, st->follow, lock, sizeof(lock), why,
	    sizeof(why)) == 0 && (fd = file_open(lock, O_RDONLY, 0, 0)) >= 0) {
		if ((len = pread(fd, buf, sizeof(buf), 0)) > 0)
			store_run_parse(buf, (size_t)len, &h->run);
		close(fd);
	}
	return 0;
}

static int
fs_account_load(struct store *st, const char *name, struct cb_account *a,
    char *err, size_t errlen)
{
	if (need_dir(st, err, errlen) == -1) {
		breaker_account_init(a, name);
		return -1;
	}
	return account_load(st->dir, name, a, err, errlen);
}

static int
fs_account_update(struct store *st, const char *name, double wait,
    int create, int (*fn)(struct cb_account *, void *), void *arg,
    char *aside, size_t asidelen, char *err, size_t errlen)
{
	if (need_dir(st, err, errlen) == -1)
		return ACCOUNT_ERROR;
	return account_update(st->dir, name, wait, create, fn, arg, aside,
	    asidelen, err, errlen);
}

static int
fs_account_list(struct store *st, char ***names, size_t *n, char *err,
    size_t errlen)
{
	return walk(st, ACCOUNT_SUFFIX, 0, names, n, err, errlen);
}

const struct store_backend store_file = {
	.name = "file",
	.check = NULL,
	.password = NULL,
	.open = fs_open,
	.close = fs_close,
	.lock = fs_lock,
	.unlock = fs_unlock,
	.lock_where = fs_lock_where,
	.keepalive = NULL,
	.keepalive_async = NULL,
	.fd = fs_fd,
	.load = fs_load,
	.begin = fs_begin,
	.unbegin = fs_unbegin,
	.save = fs_save,
	.exists = fs_exists,
	.move_aside = fs_move_aside,
	.where = fs_where,
	.place = fs_place,
	.list = fs_list,
	.get_json = fs_get_json,
	.holder = fs_holder,
	.account_load = fs_account_load,
	.account_update = fs_account_update,
	.account_list = fs_account_list,
};
