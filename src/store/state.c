/* SPDX-License-Identifier: ISC */
/*
 * The state file on disk (SPEC §6): reading it, the circuit's lock, and
 * moving a corrupt file aside.  The JSON mapping is statejson.c and
 * stateparse.c, the atomic write statesave.c.
 *
 * A missing file is a fresh CLOSED circuit.  A symbolic link (without
 * --follow-symlinks), a FIFO, device or directory at the path, and a file
 * or directory we may not trust (guard.c) are refused and never moved
 * aside.  Anything else that cannot be read whole, is larger than
 * MAX_STATE_SIZE, holds a NUL byte, is not UTF-8 or does not parse is
 * corrupt; a JSON syntax error is reported with its line and column.  The file may grow
 * while it is read, so the size cap is checked again as the buffer grows.
 *
 * The parse tree of one load is allocated from an arena and dropped whole:
 * a state with a full history is some 3 000 small cJSON blocks, and
 * freeing them one by one cost as much as parsing them.  The text is read
 * by jtree.c, which builds the tree cJSON's reader would with half the
 * instructions; what the state keeps is copied out with the ordinary
 * allocator.  The history's events are read one at a time as the parse
 * meets them, each event's tree built in a small scratch area that the
 * next one reuses: a whole history's tree took a fresh page every 4 KiB,
 * and those page faults were a third of the load.  On any error the text
 * is read again as one tree, so the error named is the one the whole tree
 * shows first.
 *
 * The lock is an flock on "FILE.lock", which an invocation holds from
 * before it loads the state until after its last save.  The kernel drops
 * it when the holder dies, so a kill -9 leaves no stale lock.  A caller
 * willing to wait polls with LOCK_NB and short naps (10 ms growing to
 * 50 ms), so a deadline needs no timer; the caller's nap may end the wait
 * early when cbexec is interrupted.  The lock is the inode: once it is
 * held, the file at the path must still be that inode (a lock file removed
 * or replaced meanwhile would let a second cbexec in beside us), checked
 * again before every save (state_lock_check).
 *
 * A corrupt file is never overwritten: a reset renames it to
 * "FILE.corrupt-YYYYmmddTHHMMSSZ" (".N" appended if that name is taken)
 * and only then starts a fresh circuit.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "core.h"
#include "store.h"
#include "backend.h"
#include "guard.h"
#include "jsonfield.h"
#include "jtree.h"


struct chunk {
	struct chunk *next;
	size_t used, cap;
	max_align_t data[];
};

static struct chunk *arena;

static void *
arena_alloc(size_t n)
{
	const size_t align = sizeof(max_align_t);
	struct chunk *c = arena;
	size_t cap;
	void *p;

	n = (n + align - 1) / align * align;
	if (c == NULL || c->cap - c->used < n) {
		cap = n > 65536 ? n : 65536;
		if ((c = malloc(sizeof(*c) + cap)) == NULL)
			return NULL;
		c->next = arena;
		c->used = 0;
		c->cap = cap;
		arena = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

static void
arena_drop(void)
{
	struct chunk *c;

	while ((c = arena) != NULL) {
		arena = c->next;
		free(c);
	}
}

/*
 * One history event's tree at a time: built here, read into the state and
 * dropped (scratch_reset), so a history of any length parses in the same
 * few warm pages.  What does not fit goes to the arena.
 */
static max_align_t scratch[32768 / sizeof(max_align_t)];
static size_t scratch_used;

static void *
scratch_alloc(size_t n)
{
	const size_t align = sizeof(max_align_t);
	void *p;

	n = (n + align - 1) / align * align;
	if (sizeof(scratch) - scratch_used < n)
		return arena_alloc(n);
	p = (char *)scratch + scratch_used;
	scratch_used += n;
	return p;
}

static void
scratch_reset(void)
{
	scratch_used = 0;
}

static int
take_event(void *arg, const cJSON *j, const char *text)
{
	char why[CB_WHYLEN];

	return history_event(arg, j, text, why, sizeof(why));
}

/*
 * buf (len bytes and a NUL) parsed into a tree that lives in the arena
 * until arena_drop(); *end where a syntax error was found.  With l, the
 * events of the top object's "history" go into l as they are read.
 */
static cJSON *
parse_in_arena(const char *buf, size_t len, struct event_list *l,
    const char **end)
{
	struct jtree_each each;
	cJSON *j;

	if (l == NULL)
		return jtree_parse(buf, len, arena_alloc, NULL, end);
	memset(&each, 0, sizeof(each));
	each.key = "history";
	each.fn = take_event;
	each.arg = l;
	each.scratch = scratch_alloc;
	each.reset = scratch_reset;
	j = jtree_parse(buf, len, arena_alloc, &each, end);
	scratch_reset();
	l->taken = each.called;
	return j;
}

/* ---- load ---- */

static int
read_all(int fd, const char *path, char **out, size_t *outlen, char *err,
    size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0, cap;
	ssize_t n;

	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return -1;
	}
	if (st.st_size > MAX_STATE_SIZE) {
		snprintf(err, errlen, "%s: state file too large (%lld bytes)",
		    path, (long long)st.st_size);
		return -1;
	}
	/* The size may change under us: read to EOF, but never past the cap. */
	cap = (size_t)st.st_size + 1;
	if ((buf = malloc(cap + 1)) == NULL)
		goto nomem;
	for (;;) {
		if (len == cap) {
			char *nb;

			if (cap > (size_t)MAX_STATE_SIZE) {
				snprintf(err, errlen, "%s: state file too "
				    "large (more than %ld bytes)", path,
				    MAX_STATE_SIZE);
				free(buf);
				return -1;
			}
			cap = cap * 2 > (size_t)MAX_STATE_SIZE + 1 ?
			    (size_t)MAX_STATE_SIZE + 1 : cap * 2;
			if ((nb = realloc(buf, cap + 1)) == NULL)
				goto nomem;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			free(buf);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
nomem:
	free(buf);
	snprintf(err, errlen, "%s: out of memory", path);
	return -1;
}

/* "line L column C" of the byte at off, for the corrupt-file message. */
static void
where(const char *buf, size_t off, char *out, size_t outlen)
{
	size_t i, line = 1, col = 1;

	for (i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			line++;
			col = 1;
		} else
			col++;
	}
	snprintf(out, outlen, "line %zu column %zu", line, col);
}

/* guard.h: a state file's (or an account document's) text, checked. */
int
store_read_text(const char *path, int follow_symlinks, char **out,
    size_t *outlen, char *err, size_t errlen)
{
	char *buf = NULL;
	struct stat st;
	size_t len;
	int fd;

	err[0] = '\0';
	if (guard_dir(path, err, errlen) == -1)
		return -2;
	fd = file_open(path, O_RDONLY, 0, follow_symlinks);
	if (fd < 0) {
		if (fd == -1 && errno == ENOENT)
			return 1;
		/* A link, a FIFO, a device or a directory is not a state
		 * file cbexec wrote: refused, never moved aside. */
		if (fd == -1 && errno == ELOOP && !follow_symlinks)
			snprintf(err, errlen, "%s: is a symbolic link "
			    "(use --follow-symlinks)", path);
		else
			snprintf(err, errlen, "%s: %s", path, file_why(fd));
		return fd == -2 || errno == ELOOP ? -2 : -1;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (guard_file(path, &st, err, errlen) == -1) {
		close(fd);
		return -2;
	}
	if (read_all(fd, path, &buf, &len, err, errlen) == -1) {
		close(fd);
		return -1;
	}
	close(fd);
	if (state_text_check(path, buf, len, err, errlen) == -1) {
		free(buf);
		return -1;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

int
state_text_check(const char *path, const char *buf, size_t len, char *err,
    size_t errlen)
{
	const char *bad;

	if (len > (size_t)MAX_STATE_SIZE) {
		snprintf(err, errlen, "%s: state too large (%zu bytes)", path,
		    len);
		return -1;
	}
	if (len == 0) {
		snprintf(err, errlen, "%s: corrupt state file: empty", path);
		return -1;
	}
	if (memchr(buf, '\0', len) != NULL) {
		snprintf(err, errlen, "%s: corrupt state file: NUL byte at "
		    "offset %zu", path, (size_t)((const char *)memchr(buf, '\0',
		    len) - buf));
		return -1;
	}
	/* cbexec writes only UTF-8 (SPEC §6): anything else was not written
	 * by it, and would not be written back the same. */
	if ((bad = utf8_invalid(buf, len)) != NULL) {
		snprintf(err, errlen, "%s: corrupt state file: not valid UTF-8 "
		    "at byte %zu", path, (size_t)(bad - buf));
		return -1;
	}
	return 0;
}

/* The message for a JSON syntax error that stopped the parse at end. */
static void
syntax_error(const char *path, const char *buf, size_t len, const char *end,
    char *err, size_t errlen)
{
	char pos[64];

	if (end != NULL && end >= buf && end <= buf + len)
		where(buf, (size_t)(end - buf), pos, sizeof(pos));
	else
		snprintf(pos, sizeof(pos), "unknown position");
	snprintf(err, errlen, "%s: corrupt state file: JSON syntax error at %s",
	    path, pos);
}

int
state_load(const char *path, int follow_symlinks, const char *name,
    struct cb_state *s, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len;
	int rc;

	if ((rc = store_read_text(path, follow_symlinks, &buf, &len, err,
	    errlen)) != 0) {
		if (rc != 1)
			return rc;
		if (breaker_init(s, name) == -1) {
			snprintf(err, errlen, "%s: out of memory", path);
			return -1;
		}
		return 1;
	}
	rc = state_parse(path, buf, len, name, s, err, errlen);
	free(buf);
	return rc;
}

int
state_parse(const char *path, const char *buf, size_t len, const char *name,
    struct cb_state *s, char *err, size_t errlen)
{
	const char *end = NULL;
	struct event_list l;
	char why[CB_WHYLEN];
	cJSON *j;
	int rc = -1;

	/* The events as they are read, each tree dropped after its event. */
	memset(&l, 0, sizeof(l));
	if ((j = parse_in_arena(buf, len, &l, &end)) != NULL)
		rc = state_from_tree(j, &l, buf, s, why, sizeof(why));
	event_list_free(&l);
	arena_drop();
	/* Anything wrong: read again as a whole, which names the first
	 * problem in the order the whole tree shows them (a key given twice
	 * anywhere comes before a bad field). */
	if (rc < 0) {
		if ((j = parse_in_arena(buf, len, NULL, &end)) == NULL) {
			arena_drop();
			syntax_error(path, buf, len, end, err, errlen);
			return -1;
		}
		rc = state_from_tree(j, NULL, buf, s, why, sizeof(why));
		arena_drop();
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		return rc;
	}
	if (s->name == NULL && name != NULL &&
	    (s->name = strdup(name)) == NULL) {
		breaker_free(s);
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	return 0;
}

int
state_load_json(const char *path, int follow_symlinks, struct cb_state *s,
    cJSON **j, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len;
	int rc;

	*j = NULL;
	if ((rc = store_read_text(path, follow_symlinks, &buf, &len, err,
	    errlen)) != 0) {
		if (rc == 1)
			snprintf(err, errlen, "%s: %s", path, strerror(ENOENT));
		return rc == 1 ? -1 : rc;
	}
	rc = state_parse_json(path, buf, len, s, j, err, errlen);
	free(buf);
	return rc;
}

int
state_parse_json(const char *where, const char *buf, size_t len,
    struct cb_state *s, cJSON **j, char *err, size_t errlen)
{
	const char *end = NULL;
	char why[CB_WHYLEN];
	int rc;

	if ((*j = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1)) == NULL) {
		syntax_error(where, buf, len, end, err, errlen);
		return -1;
	}
	if ((rc = state_from_tree(*j, NULL, buf, s, why, sizeof(why))) < 0) {
		snprintf(err, errlen, "%s: %s", where, why);
		cJSON_Delete(*j);
		*j = NULL;
	}
	return rc;
}

/* ---- lock ---- */

/* "path.lock" of the file path names (its target with follow). */
int
state_lock_path(const char *path, int follow, char *lock, size_t len,
    char *err, size_t errlen)
{
	char target[PATH_MAX];

	if (follow && resolve_link(path, target, sizeof(target)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (snprintf(lock, len, "%s.lock", follow ? target : path) >=
	    (int)len) {
		snprintf(err, errlen, "%s.lock: %s", path,
		    strerror(ENAMETOOLONG));
		return -1;
	}
	return 0;
}

/* Open the lock file and check that we may trust it; fd or -1. */
static int
lock_open(const char *lock, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	/*
	 * O_CLOEXEC (file_open): a daemon the command leaves behind must
	 * never inherit (and so hold) the lock.  No link is followed, and a
	 * FIFO or device at the path is refused, never waited on.
	 */
	if ((fd = file_open(lock, O_RDWR | O_CREAT, 0600, 0)) < 0) {
		snprintf(err, errlen, "%s: %s", lock, file_why(fd));
		return -1;
	}
	if (fstat(fd, &st) == -1 || guard_file(lock, &st, err, errlen) == -1) {
		if (err[0] == '\0')
			snprintf(err, errlen, "%s: %s", lock, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* 1 when fd is the file at path now, 0 when the path names another file
 * or none (the lock file was removed or replaced), -1 on error. */
static int
lock_current(int fd, const char *lock)
{
	struct stat a, b;

	if (fstat(fd, &a) == -1)
		return -1;
	if (lstat(lock, &b) == -1)
		return errno == ENOENT ? 0 : -1;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Once flock on a file that is no longer at the path has been taken
 * and dropped this many times in a row, something is racing us. */
#define LOCK_RETRIES 100

int
lock_nap(double wait, double deadline, double *delay, int (*nap)(double))
{
	struct timespec ts;
	double left = *delay;

	if (wait == 0)
		return -2;
	if (wait > 0) {
		if ((left = deadline - mono_now()) <= 0)
			return -2;
		if (left > *delay)
			left = *delay;
	}
	if (nap != NULL) {
		if (nap(left))
			return -3;
	} else {
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
	if ((*delay *= 1.5) > 0.05)
		*delay = 0.05;
	return 0;
}

int
state_lock(const char *path, int follow, double wait, int (*nap)(double),
    char *err, size_t errlen)
{
	char lock[PATH_MAX];
	double deadline = 0, delay = 0.01;
	int fd, rc, cur, tries = 0;

	err[0] = '\0';
	if (state_lock_path(path, follow, lock, sizeof(lock), err, errlen) == -1 ||
	    file_mkdirs(lock, err, errlen) == -1 ||
	    guard_dir(lock, err, errlen) == -1)
		return -1;
	if (wait > 0)
		deadline = mono_now() + wait;
again:
	if ((fd = lock_open(lock, err, errlen)) == -1)
		return -1;
	/* flock, not fcntl locks: those vanish when any fd of ours closes. */
	while (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK) {
			snprintf(err, errlen, "%s: %s", lock, strerror(errno));
			close(fd);
			return -1;
		}
		if ((rc = lock_nap(wait, deadline, &delay, nap)) == -2)
			goto busy;
		if (rc == -3) {
			close(fd);
			return -3;
		}
	}
	/*
	 * The lock is the inode, not the name: one unlinked (git clean) or
	 * replaced while we waited would let the next cbexec lock a new file
	 * beside us.  Only the file that is at the path once we hold it
	 * counts; otherwise start over on what is there now.
	 */
	if ((cur = lock_current(fd, lock)) != 1) {
		close(fd);
		if (cur == -1 || ++tries == LOCK_RETRIES) {
			snprintf(err, errlen, "%s: %s", lock, cur == -1 ?
			    strerror(errno) : "keeps being replaced");
			return -1;
		}
		goto again;
	}
	return fd;
busy:
	close(fd);
	return -2;
}

long
state_lock_holder(const char *path)
{
	char lock[PATH_MAX], line[256], type[16];
	unsigned int maj, min;
	unsigned long ino;
	struct stat st;
	long pid = 0, p;
	FILE *f;

	if (snprintf(lock, sizeof(lock), "%s.lock", path) >= (int)sizeof(lock) ||
	    lstat(lock, &st) == -1 || !S_ISREG(st.st_mode))
		return 0;
	/*
	 * Read, never tried: even a shared flock taken for a moment would
	 * make a cbexec starting at that instant exit BUSY.  Each line is
	 * "1: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE 0 EOF" (hex device
	 * numbers); a waiter's line has "->" before the type.
	 */
	if ((f = fopen("/proc/locks", "re")) == NULL)
		return 0;
	while (pid == 0 && fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "->") == NULL && sscanf(line,
		    "%*d: %15s %*s %*s %ld %x:%x:%lu", type, &p, &maj, &min,
		    &ino) == 5 && strcmp(type, "FLOCK") == 0 &&
		    ino == (unsigned long)st.st_ino &&
		    maj == major(st.st_dev) && min == minor(st.st_dev))
			pid = p;
	fclose(f);
	return pid;
}

int
state_lock_check(int *fd, const char *path, int follow, char *err,
    size_t errlen)
{
	char lock[PATH_MAX];
	int cur, nfd;

	err[0] = '\0';
	if (state_lock_path(path, follow, lock, sizeof(lock), err, errlen) == -1)
		return -1;
	if ((cur = lock_current(*fd, lock)) == 1)
		return 0;
	if (cur == -1) {
		snprintf(err, errlen, "%s: %s", lock, strerror(errno));
		return -1;
	}
	/* Removed (git clean) or replaced under us: take the file at the
	 * path now, created anew if need be, unless another cbexec holds it
	 * already; only then is anything written.  (An unlinked inode cannot
	 * be linked back.) */
	if ((nfd = state_lock(path, follow, 0, NULL, err, errlen)) < 0) {
		if (nfd == -2)
			snprintf(err, errlen, "%s: the lock file was replaced "
			    "while held and another cbexec holds the new one; "
			    "state not saved", lock);
		return -1;
	}
	close(*fd);
	*fd = nfd;
	return 0;
}

/* ---- corrupt files ---- */

int
state_move_aside(const char *path, double now, char *newpath, size_t newlen,
    char *err, size_t errlen)
{
	char stamp[32];
	struct stat st;
	struct tm tm;
	time_t t = (time_t)now;
	int i, w;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm) == 0) {
		snprintf(err, errlen, "%s: bad time", path);
		return -1;
	}
	/* Only a state file is ever moved: never a directory or a device
	 * that took its place. */
	if (lstat(path, &st) == -1) {
		snprintf(err, errlen, "%s: cannot move aside: %s", path,
		    strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: cannot move aside: not a regular "
		    "file", path);
		return -1;
	}
	for (i = 0; i < 1000; i++) {
		w = i == 0 ? snprintf(newpath, newlen, "%s.corrupt-%s", path,
		    stamp) : snprintf(newpath, newlen, "%s.corrupt-%s.%d",
		    path, stamp, i);
		if (w < 0 || (size_t)w >= newlen) {
			snprintf(err, errlen, "%s: %s", path,
			    strerror(ENAMETOOLONG));
			return -1;
		}
		/* NOREPLACE: two resets in one second must not clobber the
		 * first one's evidence. */
		if (renameat2(AT_FDCWD, path, AT_FDCWD, newpath,
		    RENAME_NOREPLACE) == 0)
			return 0;
		if (errno == EEXIST)
			continue;
		if (errno != EINVAL && errno != ENOSYS)
			break;
		/* The filesystem lacks NOREPLACE: check, then rename. */
		if (lstat(newpath, &st) == 0)
			continue;
		if (rename(path, newpath) == 0)
			return 0;
		break;
	}
	if (i == 1000)
		errno = EEXIST;
	snprintf(err, errlen, "%s: cannot move aside: %s", path,
	    strerror(errno));
	return -1;
}
