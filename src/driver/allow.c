/* SPDX-License-Identifier: ISC */
/*
 * Which config files cbexec takes orders from (SPEC §1, §6).  A config
 * can name programs to run (--on-state-change, --progress-cmd) and can
 * loosen every limit, so only the operator's own are read implicitly:
 * --config FILE when given, else the user's
 * ${XDG_CONFIG_HOME:-$HOME/.config}/cbexec/config.json.  The working
 * directory's .cbexec/config.json is the command's to write, so it is read
 * only after the operator approved that exact content, as direnv's
 * "allow" does: `cbexec --allow-config [FILE]` keeps the SHA-256 of the
 * file in the state directory, under allow/ with the SHA-256 of the
 * file's canonical path as its name.  An unapproved file is ignored with
 * a notice; an approved file that changed is refused until it is reviewed
 * and approved again.  The bytes hashed are the bytes parsed: the file is
 * read once.  An approved file that is gone is said once (its approval
 * is withdrawn with it): its limits no longer apply.
 *
 * Only the operator approves (SPEC §11).  The command runs as the same
 * user and can write any file the user can, so what cbexec does is make
 * the cheap ways fail and say what it cannot stop (cbexec(1), TRUST):
 *
 *   - --allow-config is refused inside a run: when the environment has a
 *     run's variables, when an ancestor process is a cbexec (its /proc
 *     exe the same file as ours, or named cbexec, or a run registered
 *     below), and while any run of this user's state directory is going
 *     on -- env -u, setsid, nohup, script or a copy of the binary change
 *     none of the last two;
 *   - a run registers itself for as long as it goes on, as allow/.run-PID-
 *     START (START: its start time in /proc, so a reused pid is no run);
 *     an approval record whose ctime (which no user can set back) is not
 *     older than a registered run does not count, and when the run ends,
 *     every record written or changed since it began is revoked, said on
 *     stderr and in the log -- a record written by hand included;
 *   - a registration left by a cbexec that was killed is found by the next
 *     that reads approvals: what was written since it began is revoked.
 *     It holds when the run began; the watchdog (run/watchdog.c) writes
 *     it again when cbexec dies, so one the command removed or touched
 *     (a later ctime) before killing cbexec still tells.
 *
 * The user's config is trusted as ssh trusts its files (StrictModes):
 * the file and its directory must be the user's (or root's) and not
 * writable by group or others, and so must allow/ and the state directory
 * that holds it; else 125, naming the file and the fix.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "driver.h"
#include "invocation.h"

#define TREE_CONFIG ".cbexec/config.json"

/* The canonical path of file (its directory resolved, its own name
 * kept: the file itself is never followed). */
static int
canonical(const char *file, char *out, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *base = strrchr(file, '/');

	if (file_dir_of(file, dir, sizeof(dir)) == -1 ||
	    realpath(dir, real) == NULL)
		return -1;
	base = base != NULL ? base + 1 : file;
	if (snprintf(out, len, "%s/%s", strcmp(real, "/") == 0 ? "" : real,
	    base) >= (int)len)
		return errno = ENAMETOOLONG, -1;
	return 0;
}

/* The approval record of the file at canonical path cpath. */
static char *
record_path(const char *cpath, char *err, size_t len)
{
	char hex[DIGEST_HEX_LEN + 1], *dir, *p = NULL;

	if ((dir = circuit_state_dir(err, len)) == NULL)
		return NULL;
	if (digest_hex(cpath, strlen(cpath), hex) == -1 ||
	    asprintf(&p, "%s/allow/%s", dir, hex) == -1) {
		snprintf(err, len, "out of memory");
		p = NULL;
	}
	free(dir);
	return p;
}

/* "PATH: WHY; not trusted (fix: ...)": the fix for a file of another
 * owner, or one others may write, as ssh's StrictModes would want it. */
static int
untrusted(const char *path, const struct stat *st, const char *why,
    char *err, size_t len)
{
	struct passwd *pw = getpwuid(geteuid());
	char *q = shell_quote(path);
	const char *qp = q != NULL ? q : path;

	if (st->st_uid != geteuid() && st->st_uid != 0)
		snprintf(err, len, "%s: %s; not trusted (fix: chown %s %s, "
		    "or remove it)", path, why, pw != NULL ? pw->pw_name :
		    "$USER", qp);
	else if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0)
		snprintf(err, len, "%s: %s; not trusted (fix: chmod go-w %s)",
		    path, why, qp);
	else
		snprintf(err, len, "%s: %s; not trusted", path, why);
	free(q);
	return -1;
}

/* Check that the directory of path is ours alone (or create it 0700). */
static int
trusted_dir(const char *path, int create, char *err, size_t len)
{
	char dir[PATH_MAX], why[CB_WHYLEN], *p;
	struct stat st;

	if (file_dir_of(path, dir, sizeof(dir)) == -1) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (create) {
		/* Every missing level, 0700, as for state files. */
		for (p = dir + 1; (p = strchr(p, '/')) != NULL; p++) {
			*p = '\0';
			if (mkdir(dir, 0700) == -1 && errno != EEXIST)
				goto mkfail;
			*p = '/';
		}
		if (mkdir(dir, 0700) == -1 && errno != EEXIST)
			goto mkfail;
	}
	if (stat(dir, &st) == -1)
		return errno == ENOENT && !create ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return untrusted(dir, &st, "not a directory", err, len);
	if (file_trusted(&st, why, sizeof(why)) == -1)
		return untrusted(dir, &st, why, err, len);
	/* The state directory that holds allow/: whoever may write it may
	 * put an allow/ of their own there. */
	if ((p = strrchr(dir, '/')) != NULL && p != dir) {
		*p = '\0';
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
		    file_trusted(&st, why, sizeof(why)) == -1)
			return untrusted(dir, &st, why, err, len);
	}
	return 0;
mkfail:
	snprintf(err, len, "%s: cannot create directory: %s", dir,
	    strerror(errno));
	return -1;
}

/* ---- Notes said before the --log is open, written there later ---- */

#define NOTES_MAX 8
static char *notes[NOTES_MAX];
static int n_notes;

/* "cbexec: MSG" on stderr now, and into the log once it is open. */
static void
note(const char *fmt, ...)
{
	va_list ap;
	char *m = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&m, fmt, ap);
	va_end(ap);
	if (n == -1)
		return;
	fputs("cbexec: ", stderr);
	text_put(stderr, m);
	fputc('\n', stderr);
	if (n_notes < NOTES_MAX)
		notes[n_notes++] = m;
	else
		free(m);
}

void
allow_log_notes(struct reporter *r)
{
	int i;

	for (i = 0; i < n_notes; i++) {
		report_notice(r, "config", notes[i], 1);
		free(notes[i]);
	}
	n_notes = 0;
}

/* ---- Runs going on: allow/.run-PID-START ---- */

#define RUN_PREFIX ".run-"

static char *
allow_dir(char *err, size_t len)
{
	char *dir, *p = NULL;

	if ((dir = circuit_state_dir(err, len)) == NULL)
		return NULL;
	if (asprintf(&p, "%s/allow", dir) == -1) {
		snprintf(err, len, "out of memory");
		p = NULL;
	}
	free(dir);
	return p;
}

/*
 * From /proc/PID/stat: the start time (clock ticks since boot, 0 when
 * there is no such process), the parent and the name.
 */
static unsigned long long
proc_info(pid_t pid, pid_t *ppid, char *comm, size_t commlen)
{
	char path[64], buf[1024], *open_p, *close_p, *t;
	unsigned long long start = 0;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((open_p = strchr(buf, '(')) == NULL ||
	    (close_p = strrchr(buf, ')')) == NULL || close_p < open_p)
		return 0;
	if (comm != NULL)
		snprintf(comm, commlen, "%.*s", (int)(close_p - open_p - 1),
		    open_p + 1);
	/* After ") ": state, ppid, ... starttime is the 20th field. */
	t = close_p + 2;
	for (i = 0; i < 19 && t != NULL; i++) {
		if (i == 1 && ppid != NULL)
			*ppid = (pid_t)strtol(t, NULL, 10);
		if ((t = strchr(t, ' ')) != NULL)
			t++;
	}
	if (t != NULL)
		start = strtoull(t, NULL, 10);
	return start;
}

/* When the run of the registration at dfd/name with status st began: the
 * time it holds (written again by the watchdog when cbexec died), when
 * that is earlier than its ctime, else its ctime. */
static struct timespec
reg_since(int dfd, const char *name, const struct stat *st)
{
	struct timespec t = st->st_ctim;
	char buf[64];
	long long sec;
	long nsec;
	ssize_t n;
	int fd;

	if ((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return t;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return t;
	buf[n] = '\0';
	if (sscanf(buf, "%lld.%ld", &sec, &nsec) == 2 && sec > 0 &&
	    nsec >= 0 && nsec < 1000000000L && (sec < t.tv_sec ||
	    (sec == t.tv_sec && nsec < t.tv_nsec))) {
		t.tv_sec = (time_t)sec;
		t.tv_nsec = nsec;
	}
	return t;
}

/* A registration's pid, and whether its run still goes on. */
static int
reg_parse(const char *name, pid_t *pid, int *alive)
{
	unsigned long long start;
	char *end;
	long p;

	if (strncmp(name, RUN_PREFIX, strlen(RUN_PREFIX)) != 0)
		return -1;
	p = strtol(name + strlen(RUN_PREFIX), &end, 10);
	if (p <= 0 || *end != '-')
		return -1;
	start = strtoull(end + 1, &end, 10);
	if (*end != '\0')
		return -1;
	*pid = (pid_t)p;
	*alive = start != 0 && proc_info(*pid, NULL, NULL, 0) == start;
	return 0;
}

static int
ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec &&
	    a->tv_nsec < b->tv_nsec);
}

static int
hex64(const char *s)
{
	size_t i;

	for (i = 0; i < DIGEST_HEX_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' &&
		    s[i] <= 'f')))
			return 0;
	return s[i] == '\0';
}

/* The path an approval record names (its second line), into out. */
static void
record_names(int dfd, const char *name, char *out, size_t len)
{
	char buf[DIGEST_HEX_LEN + 8 + PATH_MAX + 2], *nl;
	ssize_t n = -1;
	int fd;

	snprintf(out, len, "(unknown)");
	if ((fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) == -1)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if ((nl = strchr(buf, '\n')) == NULL || nl[1] == '\0')
		return;
	nl++;
	nl[strcspn(nl, "\n")] = '\0';
	snprintf(out, len, "%s", nl);
}

/*
 * Revoke every approval in dir written or changed at or after since
 * (a run of pid was going on then), saying so to r, or as a note when r
 * is NULL.  Returns how many.
 */
/* Records that were there when a registration was made in the same tick
 * of the coarse clock (their ctime is its own): not written during it. */
#define KEEP_MAX 16
struct keep {
	ino_t ino[KEEP_MAX];
	int n;
};

static int
kept(const struct keep *k, const struct stat *st,
    const struct timespec *since)
{
	int i;

	if (k == NULL || ts_before(since, &st->st_ctim))
		return 0;
	for (i = 0; i < k->n; i++)
		if (k->ino[i] == st->st_ino)
			return 1;
	return 0;
}

/* The names in dir (file_names()) and dir open in *fd; NULL when it
 * cannot be read. */
static char **
names_in(const char *dir, int *fd)
{
	char **v;

	if ((*fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return NULL;
	if ((v = file_names(*fd, "")) == NULL)
		close(*fd);
	return v;
}

static int
revoke_since(const char *dir, const struct timespec *since, pid_t pid,
    const struct keep *k, struct reporter *r)
{
	char path[PATH_MAX], *msg = NULL, *q, **names;
	struct stat st;
	int n = 0, fd;
	size_t i;

	if ((names = names_in(dir, &fd)) == NULL)
		return 0;
	for (i = 0; names[i] != NULL; i++) {
		if (!hex64(names[i]) || fstatat(fd, names[i], &st,
		    AT_SYMLINK_NOFOLLOW) == -1 ||
		    ts_before(&st.st_ctim, since) || kept(k, &st, since))
			continue;
		record_names(fd, names[i], path, sizeof(path));
		if (unlinkat(fd, names[i], 0) == -1)
			continue;
		n++;
		q = shell_quote(path);
		if (asprintf(&msg, "the approval of %s was written while a "
		    "run of cbexec (pid %ld) was going on: revoked; only the "
		    "operator approves (review it, then: cbexec "
		    "--allow-config %s)", path, (long)pid, q != NULL ? q :
		    path) != -1) {
			if (r != NULL)
				report_notice(r, "approval_revoked", msg, 0);
			else
				note("%s", msg);
			free(msg);
			msg = NULL;
		}
		free(q);
	}
	file_names_free(names);
	close(fd);
	return n;
}

/*
 * The registrations in dir: those of runs that ended without revoking
 * (cbexec was killed) do it now and go; of the ones going on, the one
 * that began first (other than this process) in *since and *pid
 * (*pid 0: none).
 */
static void
runs_going_on(const char *dir, struct timespec *since, pid_t *pid)
{
	struct stat st;
	char **names;
	size_t i;
	pid_t p;
	int alive, fd;

	*pid = 0;
	if ((names = names_in(dir, &fd)) == NULL)
		return;
	for (i = 0; names[i] != NULL; i++) {
		if (reg_parse(names[i], &p, &alive) == -1 ||
		    fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (!alive) {
			struct timespec t = reg_since(fd, names[i], &st);

			revoke_since(dir, &t, p, NULL, NULL);
			unlinkat(fd, names[i], 0);
		} else if (p != getpid() && (*pid == 0 ||
		    ts_before(&st.st_ctim, since))) {
			*pid = p;
			*since = st.st_ctim;
		}
	}
	file_names_free(names);
	close(fd);
}

/* This invocation's registration, while its runs go on. */
static struct {
	char *dir, *reg;
	struct timespec since;
	struct keep keep;
	int on;
} guard;

/* The records of dir whose ctime is since: there before the
 * registration made at that tick. */
static void
keep_same_tick(const char *dir, const struct timespec *since,
    struct keep *k)
{
	struct stat st;
	char **names;
	size_t i;
	int fd;

	k->n = 0;
	if ((names = names_in(dir, &fd)) == NULL)
		return;
	for (i = 0; names[i] != NULL && k->n < KEEP_MAX; i++)
		if (hex64(names[i]) && fstatat(fd, names[i], &st,
		    AT_SYMLINK_NOFOLLOW) == 0 &&
		    !ts_before(&st.st_ctim, since) &&
		    !ts_before(since, &st.st_ctim))
			k->ino[k->n++] = st.st_ino;
	file_names_free(names);
	close(fd);
}

void
allow_guard_begin(void)
{
	char err[CB_ERRLEN];
	struct stat st, ds;
	int fd, have_ds;

	if (guard.on)
		return;
	/* The time a registration could not mark: now, a little early
	 * (file times come from a coarse clock). */
	clock_gettime(CLOCK_REALTIME_COARSE, &guard.since);
	guard.since.tv_nsec -= 20000000;
	if (guard.since.tv_nsec < 0) {
		guard.since.tv_nsec += 1000000000;
		guard.since.tv_sec--;
	}
	guard.on = 1;
	if ((guard.dir = allow_dir(err, sizeof(err))) == NULL)
		return;
	if (asprintf(&guard.reg, "%s/" RUN_PREFIX "%ld-%llu", guard.dir,
	    (long)getpid(), proc_info(getpid(), NULL, NULL, 0)) == -1) {
		guard.reg = NULL;
		return;
	}
	/* allow/ made as --allow-config makes it, and trusted; else no
	 * registration (and no approval is read there either).  A state
	 * directory that does not exist (a user of --state alone) is not
	 * made for it: it holds no approval yet, and one written there
	 * during the run is revoked after it all the same (guard.since). */
	have_ds = stat(guard.dir, &ds) == 0;
	if (file_dir_of(guard.dir, err, sizeof(err)) == -1 ||
	    stat(err, &st) == -1 ||
	    trusted_dir(guard.reg, !have_ds, err, sizeof(err)) == -1 ||
	    (fd = open(guard.reg, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1) {
		free(guard.reg);
		guard.reg = NULL;
		return;
	}
	/* Its ctime and the records' come from the same clock. */
	if (fstat(fd, &st) == 0)
		guard.since = st.st_ctim;
	/* When it began, in it and with the watchdog: should cbexec be
	 * killed, a registration removed or touched is written again. */
	{
		char t[64];
		int n = snprintf(t, sizeof(t), "%lld.%09ld\n",
		    (long long)guard.since.tv_sec, guard.since.tv_nsec);

		if (n > 0 && (size_t)n < sizeof(t) &&
		    file_write_all(fd, t, (size_t)n) == (ssize_t)n)
			watch_will(WATCH_WILL_REG, guard.reg, t, (size_t)n);
	}
	close(fd);
	/* allow/ changed in this very tick, just before (an approval made
	 * right before this run): those records share the registration's
	 * ctime, and are noted so as not to be taken for the run's. */
	if (have_ds && !ts_before(&ds.st_ctim, &guard.since))
		keep_same_tick(guard.dir, &guard.since, &guard.keep);
}

void
allow_guard_end(struct reporter *r)
{
	if (!guard.on)
		return;
	watch_will(WATCH_WILL_REG, NULL, NULL, 0);
	if (guard.dir != NULL)
		revoke_since(guard.dir, &guard.since, getpid(), &guard.keep,
		    r);
	if (guard.reg != NULL)
		unlink(guard.reg);
	free(guard.reg);
	free(guard.dir);
	memset(&guard, 0, sizeof(guard));
}

/*
 * The content hash approved for the file at cpath: 1 with it in hex,
 * 0 when none was, -1 on error.
 */
static int
approved(const char *cpath, char hex[DIGEST_HEX_LEN + 1], struct stat *rst,
    char *err, size_t len)
{
	char *rec, buf[DIGEST_HEX_LEN + 8 + PATH_MAX + 2], why[CB_WHYLEN];
	struct stat st;
	ssize_t n;
	int fd, rc = -1;

	if ((rec = record_path(cpath, err, len)) == NULL)
		return -1;
	if (trusted_dir(rec, 0, err, len) == -1)
		goto out;
	if ((fd = file_open(rec, O_RDONLY, 0, 0)) < 0) {
		if (fd == -1 && errno == ENOENT)
			rc = 0;
		else
			snprintf(err, len, "%s: %s", rec, file_why(fd));
		goto out;
	}
	if (fstat(fd, &st) == -1 || file_trusted(&st, why, sizeof(why)) == -1) {
		untrusted(rec, &st, why, err, len);
		close(fd);
		goto out;
	}
	if (rst != NULL)
		*rst = st;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 7 + DIGEST_HEX_LEN || strncmp(buf, "sha256:", 7) != 0) {
		snprintf(err, len, "%s: not an approval cbexec wrote", rec);
		goto out;
	}
	memcpy(hex, buf + 7, DIGEST_HEX_LEN);
	hex[DIGEST_HEX_LEN] = '\0';
	rc = 1;
out:
	free(rec);
	return rc;
}

/*
 * The user's config as ssh's StrictModes wants it: the file, its
 * directory (and where a link leads, that file's) the user's or root's,
 * and writable by nobody else.  0, or -1 naming the file and the fix.
 */
static int
user_config_trusted(const char *user, char *err, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX], rdir[PATH_MAX], why[CB_WHYLEN];
	const char *paths[4];
	struct stat st;
	int i, n = 0;

	/* A link: what it leads to is what is read, so that is checked
	 * (and named), with its directory. */
	if (lstat(user, &st) == 0 && !S_ISLNK(st.st_mode))
		paths[n++] = user;
	if (file_dir_of(user, dir, sizeof(dir)) == 0)
		paths[n++] = dir;
	if (realpath(user, real) != NULL && strcmp(real, user) != 0) {
		paths[n++] = real;
		if (file_dir_of(real, rdir, sizeof(rdir)) == 0)
			paths[n++] = rdir;
	}
	for (i = 0; i < n; i++)
		if (stat(paths[i], &st) == 0 &&
		    file_trusted(&st, why, sizeof(why)) == -1)
			return untrusted(paths[i], &st, why, err, len);
	return 0;
}

/*
 * .cbexec/config.json is not there.  If it was approved, its limits just
 * went with it: said once (its approval is withdrawn, so the next
 * invocation is quiet), on stderr and in the log.  Looked for only where
 * a .cbexec directory or an allow/ directory is: an invocation of a user
 * who never approved a config pays one stat.
 */
static int
tree_config_gone(char *err, size_t len)
{
	char cwd[PATH_MAX], cpath[PATH_MAX + 32], *rec, *dir;
	struct stat st;
	int look;

	look = lstat(".cbexec", &st) == 0;
	if (!look) {
		if ((dir = allow_dir(err, len)) == NULL)
			return 0;
		look = stat(dir, &st) == 0;
		free(dir);
	}
	if (!look || getcwd(cwd, sizeof(cwd)) == NULL)
		return 0;
	snprintf(cpath, sizeof(cpath), "%s/" TREE_CONFIG,
	    strcmp(cwd, "/") == 0 ? "" : cwd);
	if ((rec = record_path(cpath, err, len)) == NULL)
		return 0;
	if (lstat(rec, &st) == 0 && S_ISREG(st.st_mode) &&
	    unlink(rec) == 0)
		note("%s was approved and is gone: its limits no longer "
		    "apply (its approval is withdrawn)", cpath);
	free(rec);
	return 0;
}

int
config_implicit(struct options *o, char *err, size_t len)
{
	char cpath[PATH_MAX], want[DIGEST_HEX_LEN + 1], have[DIGEST_HEX_LEN + 1];
	char *dir, *user = NULL, *text, *q;
	struct stat st, rst;
	struct timespec since = { 0, 0 };
	pid_t pid;
	size_t n;
	int missing, rc;

	/* No config directory (no HOME) is no user config. */
	if ((dir = xdg_dir("XDG_CONFIG_HOME", ".config", "cbexec")) != NULL) {
		rc = asprintf(&user, "%s/config.json", dir);
		free(dir);
		if (rc == -1) {
			snprintf(err, len, "out of memory");
			return -1;
		}
	}
	/* One the user cannot even see (HOME another user's, as under
	 * sudo -u) is no config of theirs.  One another user could have
	 * written is refused, as ssh refuses such files. */
	rc = user != NULL && stat(user, &st) == 0 ?
	    user_config_trusted(user, err, len) == -1 ? -1 :
	    config_load(o, user, 1, err, len) : 0;
	free(user);
	if (rc == -1)
		return -1;

	/* The work tree's, only as approved. */
	if (lstat(TREE_CONFIG, &st) == -1)
		return errno == ENOENT ? tree_config_gone(err, len) : 0;
	if (canonical(TREE_CONFIG, cpath, sizeof(cpath)) == -1) {
		snprintf(err, len, "%s: %s", TREE_CONFIG, strerror(errno));
		return -1;
	}
	if ((q = shell_quote(cpath)) == NULL) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	/* Runs going on, and those that ended without a word (killed):
	 * what was approved since they began does not count. */
	if ((dir = allow_dir(err, len)) == NULL) {
		free(q);
		return -1;
	}
	runs_going_on(dir, &since, &pid);
	free(dir);
	if ((rc = approved(cpath, want, &rst, err, len)) == 1 && pid != 0 &&
	    !ts_before(&rst.st_ctim, &since)) {
		note("%s was approved while a run of cbexec (pid %ld) is going "
		    "on: not read; that run revokes the approval when it ends",
		    cpath, (long)pid);
		free(q);
		return 0;
	}
	if (rc <= 0) {
		/* Even with -q: a config not read is worth a line. */
		if (rc == 0)
			fprintf(stderr, "cbexec: %s is not approved and was "
			    "ignored (review it, then: cbexec --allow-config "
			    "%s)\n", cpath, q);
		free(q);
		return rc;
	}
	if ((text = config_read(TREE_CONFIG, 0, &n, &missing, err,
	    len)) == NULL) {
		free(q);
		return -1;
	}
	if (digest_hex(text, n, have) == -1 || strcmp(want, have) != 0) {
		snprintf(err, len, "%s changed since it was approved; review "
		    "it, then approve it again with: cbexec --allow-config %s",
		    cpath, q);
		rc = -1;
	} else
		rc = config_parse(o, cpath, text, n, err, len);
	free(text);
	free(q);
	return rc;
}

/*
 * Whether this process is part of a run of cbexec: a run's variables in
 * its environment, or an ancestor that is a cbexec -- the same binary as
 * ours, one named cbexec, or one whose run is registered in dir.  1 with
 * why, else 0.  (An ancestor cannot be forged: setsid, nohup and script
 * keep it, and orphans are reparented to cbexec, a subreaper.)
 */
static int
inside_run(const char *dir, char *why, size_t len)
{
	static const char *const vars[] = {
		"CBEXEC_ITERATION", "CBEXEC_STATUS_FILE", "CBEXEC_CIRCUIT_STATE",
	};
	char path[PATH_MAX], comm[64];
	unsigned long long start;
	struct stat self, st;
	int have_self, depth;
	pid_t p, pp;
	size_t i;

	for (i = 0; i < NELEM(vars); i++)
		if (getenv(vars[i]) != NULL) {
			snprintf(why, len, "%s is set", vars[i]);
			return 1;
		}
	have_self = stat("/proc/self/exe", &self) == 0;
	for (p = getppid(), depth = 0; p > 1 && depth < 4096; depth++) {
		pp = 0;
		if ((start = proc_info(p, &pp, comm, sizeof(comm))) == 0)
			break;
		snprintf(path, sizeof(path), "/proc/%ld/exe", (long)p);
		if (strcmp(comm, "cbexec") == 0 || (have_self &&
		    stat(path, &st) == 0 && st.st_dev == self.st_dev &&
		    st.st_ino == self.st_ino)) {
			snprintf(why, len, "process %ld, an ancestor, is "
			    "cbexec", (long)p);
			return 1;
		}
		snprintf(path, sizeof(path), "%s/" RUN_PREFIX "%ld-%llu", dir,
		    (long)p, start);
		if (lstat(path, &st) == 0) {
			snprintf(why, len, "process %ld, an ancestor, is a run "
			    "of cbexec", (long)p);
			return 1;
		}
		p = pp;
	}
	return 0;
}

int
config_allow(const struct options *o)
{
	char cpath[PATH_MAX], hex[DIGEST_HEX_LEN + 1], err[CB_ERRLEN], why[CB_WHYLEN];
	char *rec = NULL, *text = NULL, *line = NULL, *adir = NULL;
	struct options scratch;
	struct timespec since;
	size_t n;
	pid_t pid;
	int missing, rc = CB_EXIT_ERROR, w;

	options_init(&scratch);
	/* Only the operator approves: never from inside a run, and not
	 * while one goes on (it would revoke the approval when it ends). */
	if ((adir = allow_dir(err, sizeof(err))) == NULL)
		goto out;
	if (inside_run(adir, why, sizeof(why))) {
		snprintf(err, sizeof(err), "--allow-config is refused inside a "
		    "run of cbexec (%s): only the operator approves a config, "
		    "from outside any run", why);
		goto out;
	}
	runs_going_on(adir, &since, &pid);
	if (pid != 0) {
		snprintf(err, sizeof(err), "--allow-config is refused while a "
		    "run of cbexec is going on (pid %ld): an approval made now "
		    "would not count; approve it once no run is going on",
		    (long)pid);
		goto out;
	}
	if ((text = config_read(o->allow_path, 0, &n, &missing, err,
	    sizeof(err))) == NULL)
		goto out;
	/* A config that would be refused is not approved. */
	if (config_parse(&scratch, o->allow_path, text, n, err,
	    sizeof(err)) == -1)
		goto out;
	if (canonical(o->allow_path, cpath, sizeof(cpath)) == -1) {
		snprintf(err, sizeof(err), "%s: %s", o->allow_path,
		    strerror(errno));
		goto out;
	}
	if (digest_hex(text, n, hex) == -1 ||
	    (rec = record_path(cpath, err, sizeof(err))) == NULL ||
	    trusted_dir(rec, 1, err, sizeof(err)) == -1)
		goto out;
	if ((w = asprintf(&line, "sha256:%s\n%s\n", hex, cpath)) == -1) {
		line = NULL;
		snprintf(err, sizeof(err), "out of memory");
		goto out;
	}
	if (atomic_write(rec, line, (size_t)w, 0600, 0) == -1) {
		snprintf(err, sizeof(err), "%s: %s", rec, strerror(errno));
		goto out;
	}
	printf("cbexec: approved %s (sha256 %.12s...)\n", cpath, hex);
	rc = fflush(stdout) == EOF ? CB_EXIT_ERROR : CB_EXIT_OK;
	err[0] = '\0';
out:
	if (rc != CB_EXIT_OK && err[0] != '\0')
		fprintf(stderr, "cbexec: %s\n", err);
	options_free(&scratch);
	free(adir);
	free(text);
	free(line);
	free(rec);
	return rc;
}
