/*
 * Progress sources (SPEC §3.1): the phase rules, the "git" and "files"
 * fingerprints, and the progress command.
 *
 * A phase rule compares the metrics a run reported with the values stored
 * the last time the phase made progress: "up" and "down" metrics must move
 * that way, "true" metrics only need to be non-zero, and GREEN also counts
 * tests_failing going down while the total stays the same.
 *
 * A fingerprint is a SHA-256 taken before and after a run; the caller only
 * compares the two.  "git" hashes what git prints (HEAD, the diff against
 * it, and lstat data for each untracked non-ignored path), streamed from a
 * pipe so a large diff never sits in memory.  "files" walks each watch dir
 * with openat/fstatat relative to the directory's fd, sorts every
 * directory's names (readdir order is not stable) and hashes path, size,
 * mtime and mode per entry.  The names of all directories on the current
 * path share one arena used as a stack, so the walk allocates nothing per
 * file once the arena has grown.
 *
 * Probes fork and exec directly (no shell for git) and reap their own
 * child by pid: they run outside the event loop, so no libev child watcher
 * competes for the status.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cJSON.h>

#include "progress.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define CMD_MAX_OUTPUT (64 * 1024)

extern char **environ;

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int
progress_parse_list(const char *s, unsigned *mask, char *err, size_t errlen)
{
	static const struct { const char *word; unsigned bit; } words[] = {
		{ "git", PROG_GIT }, { "files", PROG_FILES },
		{ "status", PROG_STATUS }, { "cmd", PROG_CMD },
		{ "exit", PROG_EXIT }, { "auto", PROG_AUTO }
	};
	unsigned m = 0;
	size_t i, n;

	for (;;) {
		n = strcspn(s, ",");
		if (n == 0) {
			seterr(err, errlen, "empty word in progress list");
			return -1;
		}
		for (i = 0; i < NELEM(words); i++)
			if (strlen(words[i].word) == n &&
			    strncmp(words[i].word, s, n) == 0)
				break;
		if (i == NELEM(words)) {
			seterr(err, errlen, "unknown progress source '%.*s'",
			    (int)n, s);
			return -1;
		}
		m |= words[i].bit;
		if (s[n] == '\0')
			break;
		s += n + 1;
	}
	*mask = m;
	return 0;
}

static struct phase_metric red_metrics[] = {
	{ "tests_generated", DIR_UP }, { "criteria_covered", DIR_UP }
};
static struct phase_metric green_metrics[] = {
	{ "tests_passing", DIR_UP }
};
static struct phase_metric refactor_metrics[] = {
	{ "pattern_applied", DIR_TRUE }, { "complexity_score", DIR_DOWN },
	{ "duplication_removed", DIR_TRUE }
};
static struct phase_metric document_metrics[] = {
	{ "docs_generated", DIR_UP }, { "diagrams_valid", DIR_UP }
};

static const struct phase_def builtins[] = {
	{ "RED", 3, 5, red_metrics, NELEM(red_metrics), 0 },
	{ "GREEN", 2, 3, green_metrics, NELEM(green_metrics), 1 },
	{ "REFACTOR", 5, 5, refactor_metrics, NELEM(refactor_metrics), 0 },
	{ "DOCUMENT", 3, 5, document_metrics, NELEM(document_metrics), 0 }
};

const struct phase_def *
phase_builtin(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < NELEM(builtins); i++)
		if (strcasecmp(builtins[i].name, name) == 0)
			return &builtins[i];
	return NULL;
}

static int
baseline(const cJSON *last, const char *key, double *v)
{
	const cJSON *it;

	if (!cJSON_IsObject(last))
		return 0;
	it = cJSON_GetObjectItemCaseSensitive(last, key);
	if (cJSON_IsNumber(it))
		*v = it->valuedouble;
	else if (cJSON_IsBool(it))
		*v = cJSON_IsTrue(it);
	else
		return 0;
	return 1;
}

int
phase_judge(const struct phase_def *p, const struct status_report *r,
    const cJSON *last)
{
	double v, b, pass, fail, bpass, bfail;
	int seen = 0, moved = 0, has;
	size_t i;

	if (p == NULL || r == NULL)
		return -1;
	for (i = 0; i < p->n_metrics; i++) {
		if (!status_metric(r, p->metrics[i].key, &v))
			continue;
		seen = 1;
		has = baseline(last, p->metrics[i].key, &b);
		switch (p->metrics[i].dir) {
		case DIR_UP:
			moved |= has ? v > b : v > 0;
			break;
		case DIR_DOWN:
			/* No baseline: nothing to be lower than yet. */
			moved |= has && v < b;
			break;
		case DIR_TRUE:
			moved |= v != 0;
			break;
		}
	}
	if (p->green_rule && status_metric(r, "tests_failing", &fail)) {
		seen = 1;
		/* A falling failure count only counts when no tests were
		 * deleted to get there: the total must not change. */
		if (status_metric(r, "tests_passing", &pass) &&
		    baseline(last, "tests_passing", &bpass) &&
		    baseline(last, "tests_failing", &bfail) &&
		    fail < bfail && pass + fail == bpass + bfail)
			moved = 1;
	}
	return seen ? moved : -1;
}

static int
remember(cJSON *obj, const char *key, const struct status_report *r)
{
	cJSON *it, *num;
	double v;

	if (!status_metric(r, key, &v))
		return 0;
	it = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (cJSON_IsNumber(it)) {
		cJSON_SetNumberValue(it, v);
		return 0;
	}
	if ((num = cJSON_CreateNumber(v)) == NULL)
		return -1;
	if (it != NULL)
		return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, num) ?
		    0 : (cJSON_Delete(num), -1);
	if (!cJSON_AddItemToObject(obj, key, num)) {
		cJSON_Delete(num);
		return -1;
	}
	return 0;
}

int
phase_remember(cJSON *root, const struct phase_def *p,
    const struct status_report *r)
{
	cJSON *obj;
	size_t i;

	if (!cJSON_IsObject(root) || p == NULL || r == NULL)
		return -1;
	obj = cJSON_GetObjectItemCaseSensitive(root, p->name);
	if (!cJSON_IsObject(obj)) {
		cJSON_DeleteItemFromObjectCaseSensitive(root, p->name);
		if ((obj = cJSON_AddObjectToObject(root, p->name)) == NULL)
			return -1;
	}
	for (i = 0; i < p->n_metrics; i++)
		if (remember(obj, p->metrics[i].key, r) == -1)
			return -1;
	if (p->green_rule && remember(obj, "tests_failing", r) == -1)
		return -1;
	return 0;
}

/*
 * Child side of a probe.  Never returns.  Caught signals are reset before
 * the mask is lifted so a signal pending since fork can't run cbexec's
 * handler (and poke the event loop) in the child.  The mask is cleared
 * rather than inherited because libev may block the signals it watches.
 */
static void __attribute__((noreturn))
probe_child(char *const argv[], char *const envp[], int out, int quiet,
    int pgrp, pid_t parent)
{
	struct sigaction sa;
	sigset_t none;
	int nul, s;

	if (pgrp)
		setpgid(0, 0);
	/* A kill -9 of cbexec must not leave a hanging probe behind. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent)
		_exit(127);
	if (out < 3 && (out = fcntl(out, F_DUPFD_CLOEXEC, 3)) == -1)
		_exit(127);
	/* Not O_CLOEXEC: with fd 0 closed in cbexec, nul is 0 itself. */
	if ((nul = open("/dev/null", O_RDWR)) == -1 ||
	    dup2(nul, 0) == -1 || (quiet && dup2(nul, 2) == -1) ||
	    dup2(out, 1) == -1)
		_exit(127);
	if (nul > 2)
		close(nul);
	for (s = 1; s < NSIG; s++)
		if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL &&
		    sa.sa_handler != SIG_IGN) {
			sa.sa_handler = SIG_DFL;
			sa.sa_flags = 0;
			sigaction(s, &sa, NULL);
		}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execvpe(argv[0], argv, envp);
	_exit(127);
}

/* Fork argv with stdout on a pipe whose read end lands in *fd. */
static pid_t
probe_spawn(char *const argv[], char *const envp[], int quiet, int pgrp,
    int *fd)
{
	sigset_t all, old;
	pid_t pid, parent = getpid();
	int p[2], e;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	/* Signals stay blocked across fork: see probe_child. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
		probe_child(argv, envp, p[1], quiet, pgrp, parent);
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[1]);
	if (pid == -1) {
		close(p[0]);
		errno = e;
		return -1;
	}
	/* Also here, so a kill(-pid) right after fork reaches the child
	 * whichever of the two runs first. */
	if (pgrp)
		setpgid(pid, pid);
	*fd = p[0];
	return pid;
}

static int
reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) == -1)
		if (errno != EINTR)
			return -1;
	return 0;
}

typedef int (*sink_fn)(void *ctx, const char *p, size_t n);

/*
 * Run git with GIT_OPTIONAL_LOCKS=0 (a probe must never take index.lock
 * from under the command it watches), feeding its stdout to sink.  Returns
 * git's exit code, or -1 when it could not run or was killed.
 */
static int
run_git(const char *const *args, sink_fn sink, void *ctx)
{
	static char locks[] = "GIT_OPTIONAL_LOCKS=0";
	char buf[65536], **env;
	size_t i, n = 0;
	ssize_t got;
	int fd, st, bad = 0;
	pid_t pid;

	while (environ[n] != NULL)
		n++;
	if ((env = malloc((n + 2) * sizeof(*env))) == NULL)
		return -1;
	for (i = n = 0; environ[i] != NULL; i++)
		if (strncmp(environ[i], "GIT_OPTIONAL_LOCKS=", 19) != 0)
			env[n++] = environ[i];
	env[n++] = locks;
	env[n] = NULL;
	pid = probe_spawn((char *const *)args, env, 1, 0, &fd);
	free(env);
	if (pid == -1)
		return -1;
	/* Read to EOF even after a sink error so git never blocks on us. */
	while ((got = read(fd, buf, sizeof(buf))) != 0) {
		if (got == -1) {
			if (errno == EINTR)
				continue;
			bad = 1;
			break;
		}
		if (!bad && sink(ctx, buf, (size_t)got) == -1)
			bad = 1;
	}
	close(fd);
	if (reap(pid, &st) == -1 || bad || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

struct capture {
	char b[64];
	size_t n;
};

static int
capture_sink(void *ctx, const char *p, size_t n)
{
	struct capture *c = ctx;

	if (n > sizeof(c->b) - 1 - c->n)
		n = sizeof(c->b) - 1 - c->n;
	memcpy(c->b + c->n, p, n);
	c->n += n;
	c->b[c->n] = '\0';
	return 0;
}

/* A .git entry in the working directory or above it, not past a
 * directory named in GIT_CEILING_DIRECTORIES. */
static int
has_dot_git(void)
{
	char dir[PATH_MAX], probe[PATH_MAX + 8], *slash;
	const char *ceil = getenv("GIT_CEILING_DIRECTORIES");
	struct stat st;
	size_t n;

	if (getcwd(dir, sizeof(dir)) == NULL)
		return 1;	/* cannot tell: let git decide */
	for (;;) {
		snprintf(probe, sizeof(probe), "%s/.git", dir);
		if (lstat(probe, &st) == 0)
			return 1;
		if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
			break;
		*slash = '\0';
		/* A ceiling stops the search above it. */
		n = strlen(dir);
		for (const char *c = ceil; c != NULL && *c != '\0';) {
			const char *e = strchr(c, ':');
			size_t cl = e != NULL ? (size_t)(e - c) : strlen(c);

			if (cl == n && strncmp(c, dir, n) == 0)
				return 0;
			c = e != NULL ? e + 1 : NULL;
		}
	}
	snprintf(probe, sizeof(probe), "/.git");
	return lstat(probe, &st) == 0;
}

int
progress_in_git(void)
{
	static const char *const args[] = {
		"git", "rev-parse", "--is-inside-work-tree", NULL
	};
	struct capture c = { "", 0 };

	/* Asking git costs a fork and an exec on every invocation; look for
	 * a .git first and ask only when one is there. */
	if (getenv("GIT_DIR") == NULL && !has_dot_git())
		return 0;
	if (run_git(args, capture_sink, &c) != 0)
		return 0;
	return strcmp(c.b, "true\n") == 0 || strcmp(c.b, "true") == 0;
}

/* Hashes a section; its byte count is appended so sections can't blur. */
struct dsink {
	struct digest *d;
	uint64_t n;
	char *path;		/* untracked: the path being read */
	size_t plen, pcap;
};

static int
digest_sink(void *ctx, const char *p, size_t n)
{
	struct dsink *s = ctx;

	s->n += n;
	return digest_update(s->d, p, n);
}

static int
section_end(struct dsink *s)
{
	uint64_t n = s->n;

	s->n = 0;
	return digest_update(s->d, &n, sizeof(n));
}

/* One untracked path: the path and its lstat data (or none if gone). */
static int
hash_untracked(struct dsink *s)
{
	struct stat st;
	int64_t rec[4] = { -1, -1, -1, -1 };

	if (lstat(s->path, &st) == 0) {
		rec[0] = st.st_size;
		rec[1] = st.st_mtim.tv_sec;
		rec[2] = st.st_mtim.tv_nsec;
		rec[3] = st.st_mode;
	}
	s->n++;
	if (digest_update(s->d, s->path, s->plen + 1) == -1 ||
	    digest_update(s->d, rec, sizeof(rec)) == -1)
		return -1;
	s->plen = 0;
	return 0;
}

static int
untracked_sink(void *ctx, const char *p, size_t n)
{
	struct dsink *s = ctx;
	const char *end = p + n, *z;
	size_t len;
	char *np;

	while (p < end) {
		z = memchr(p, '\0', (size_t)(end - p));
		len = (size_t)((z != NULL ? z : end) - p);
		if (s->plen + len + 1 > s->pcap) {
			s->pcap = (s->plen + len + 1) * 2;
			if ((np = realloc(s->path, s->pcap)) == NULL)
				return -1;
			s->path = np;
		}
		memcpy(s->path + s->plen, p, len);
		s->plen += len;
		s->path[s->plen] = '\0';
		if (z == NULL)
			break;
		if (hash_untracked(s) == -1)
			return -1;
		p = z + 1;
	}
	return 0;
}

int
progress_git(char hex[DIGEST_HEX_LEN + 1])
{
	static const char *const head[] = {
		"git", "rev-parse", "-q", "--verify", "HEAD", NULL
	};
	static const char *const diff_head[] = {
		"git", "diff", "--no-ext-diff", "--no-textconv", "--no-color",
		"--binary", "HEAD", "--", NULL
	};
	static const char *const diff_cached[] = {
		"git", "diff", "--no-ext-diff", "--no-textconv", "--no-color",
		"--binary", "--cached", NULL
	};
	static const char *const diff_tree[] = {
		"git", "diff", "--no-ext-diff", "--no-textconv", "--no-color",
		"--binary", NULL
	};
	/* ":/" covers the whole work tree even from a subdirectory. */
	static const char *const others[] = {
		"git", "ls-files", "-z", "--others", "--exclude-standard",
		"--", ":/", NULL
	};
	struct dsink s = { NULL, 0, NULL, 0, 0 };
	int rc;

	if ((s.d = digest_new()) == NULL)
		return -1;
	/* Exit 1 with no output: a repository without commits yet. */
	if ((rc = run_git(head, digest_sink, &s)) != 0 && rc != 1)
		goto fail;
	if (section_end(&s) == -1)
		goto fail;
	if (rc == 0) {
		if (run_git(diff_head, digest_sink, &s) != 0)
			goto fail;
	} else if (run_git(diff_cached, digest_sink, &s) != 0 ||
	    section_end(&s) == -1 ||
	    run_git(diff_tree, digest_sink, &s) != 0)
		goto fail;
	if (section_end(&s) == -1 ||
	    run_git(others, untracked_sink, &s) != 0 ||
	    (s.plen > 0 && hash_untracked(&s) == -1) ||
	    section_end(&s) == -1)
		goto fail;
	free(s.path);
	return digest_final(s.d, hex);
fail:
	free(s.path);
	digest_abort(s.d);
	return -1;
}

struct walk {
	const struct progress_cfg *c;
	struct digest *d;
	int has_state;
	dev_t sdev;
	ino_t sino;
	char *path;		/* relative to the watch dir */
	size_t plen, pcap;
	char *names;		/* names of every dir on the path, a stack */
	size_t nlen, ncap;
	size_t *offs;		/* offsets into names, same stack */
	size_t olen, ocap;
	size_t blen;		/* records batched for the digest */
	unsigned char buf[32768];
};

/* p with room for need elements (capacity *cap), or NULL (p intact). */
static void *
grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap > 0 ? *cap : 256;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	if ((p = realloc(p, n * size)) != NULL)
		*cap = n;
	return p;
}

static int
emit(struct walk *w, const void *p, size_t n)
{
	if (w->blen + n > sizeof(w->buf)) {
		if (digest_update(w->d, w->buf, w->blen) == -1)
			return -1;
		w->blen = 0;
		if (n > sizeof(w->buf))
			return digest_update(w->d, p, n);
	}
	memcpy(w->buf + w->blen, p, n);
	w->blen += n;
	return 0;
}

static int
excluded(const struct walk *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->c->n_exclude; i++)
		if (fnmatch(w->c->exclude[i], w->path, 0) == 0 ||
		    fnmatch(w->c->exclude[i], name, 0) == 0)
			return 1;
	return 0;
}

static int
cmp_names(const void *a, const void *b, void *arg)
{
	const char *names = arg;

	return strcmp(names + *(const size_t *)a, names + *(const size_t *)b);
}

static int walk_dir(struct walk *w, int dfd);

/* One entry of the directory open as dfd; w->path already names it. */
static int
walk_entry(struct walk *w, int dfd, const char *name)
{
	struct stat st;
	int64_t rec[4];
	int cfd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : -1;	/* gone meanwhile */
	if (w->c->n_exclude > 0 && excluded(w, name))
		return 0;
	if (S_ISDIR(st.st_mode) && w->has_state && st.st_dev == w->sdev &&
	    st.st_ino == w->sino)
		return 0;
	/* A directory's size and mtime change when an excluded file is
	 * created in it; its entries already say what changed. */
	rec[0] = S_ISDIR(st.st_mode) ? 0 : st.st_size;
	rec[1] = S_ISDIR(st.st_mode) ? 0 : st.st_mtim.tv_sec;
	rec[2] = S_ISDIR(st.st_mode) ? 0 : st.st_mtim.tv_nsec;
	rec[3] = st.st_mode;
	if (emit(w, w->path, w->plen + 1) == -1 ||
	    emit(w, rec, sizeof(rec)) == -1)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return 0;
	cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd == -1)	/* unreadable or replaced meanwhile: entry only */
		return errno == EACCES || errno == ENOENT ||
		    errno == ENOTDIR || errno == ELOOP ? 0 : -1;
	return walk_dir(w, cfd);
}

/* Walk the directory open as dfd (closed here), names in sorted order. */
static int
walk_dir(struct walk *w, int dfd)
{
	size_t nbase = w->nlen, obase = w->olen, plen = w->plen, i, len;
	struct dirent *e;
	const char *name;
	DIR *dir;
	void *p;
	int rc = -1;

	if ((dir = fdopendir(dfd)) == NULL) {
		close(dfd);
		return -1;
	}
	for (errno = 0; (e = readdir(dir)) != NULL; errno = 0) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, ".git") == 0)
			continue;
		len = strlen(e->d_name) + 1;
		if ((p = grow(w->names, &w->ncap, w->nlen + len, 1)) == NULL)
			goto out;
		w->names = p;
		if ((p = grow(w->offs, &w->ocap, w->olen + 1, sizeof(size_t))) == NULL)
			goto out;
		w->offs = p;
		memcpy(w->names + w->nlen, e->d_name, len);
		w->offs[w->olen++] = w->nlen;
		w->nlen += len;
	}
	if (errno != 0)
		goto out;
	/* An empty directory has no offsets array yet (NULL). */
	if (w->olen > obase)
		qsort_r(w->offs + obase, w->olen - obase, sizeof(size_t),
		    cmp_names, w->names);
	for (i = obase; i < w->olen; i++) {
		/* Re-read each time: a subdirectory may move the arena. */
		name = w->names + w->offs[i];
		len = strlen(name);
		if ((p = grow(w->path, &w->pcap, plen + len + 2, 1)) == NULL)
			goto out;
		w->path = p;
		w->plen = plen;
		if (plen > 0)
			w->path[w->plen++] = '/';
		memcpy(w->path + w->plen, name, len + 1);
		w->plen += len;
		if (walk_entry(w, dirfd(dir), name) == -1)
			goto out;
	}
	rc = 0;
out:
	w->nlen = nbase;
	w->olen = obase;
	w->plen = plen;
	if (w->path != NULL)
		w->path[plen] = '\0';
	closedir(dir);
	return rc;
}

int
progress_files(const struct progress_cfg *c, char hex[DIGEST_HEX_LEN + 1])
{
	static char *const here[] = { "." };
	char *const *watch = c->n_watch > 0 ? c->watch : here;
	size_t i, n = c->n_watch > 0 ? c->n_watch : 1;
	struct walk *w;
	struct stat st;
	int fd, rc = -1;
	void *p;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -1;
	w->c = c;
	if (c->state_dir != NULL && stat(c->state_dir, &st) == 0) {
		w->has_state = 1;
		w->sdev = st.st_dev;
		w->sino = st.st_ino;
	}
	if ((w->d = digest_new()) == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if (digest_update(w->d, watch[i], strlen(watch[i]) + 1) == -1 ||
		    (p = grow(w->path, &w->pcap, 1, 1)) == NULL)
			goto out;
		w->path = p;
		w->path[0] = '\0';
		w->plen = 0;
		if ((fd = open(watch[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
		    walk_dir(w, fd) == -1 ||
		    digest_update(w->d, w->buf, w->blen) == -1)
			goto out;
		w->blen = 0;
	}
	rc = digest_final(w->d, hex);
	w->d = NULL;
out:
	if (w->d != NULL)
		digest_abort(w->d);
	free(w->path);
	free(w->names);
	free(w->offs);
	free(w);
	return rc;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Append what is readable now; 1 at EOF, 0 when it would block. */
static int
drain(int fd, char *out, size_t *len)
{
	char junk[4096];
	ssize_t n;

	for (;;) {
		if (*len < CMD_MAX_OUTPUT)
			n = read(fd, out + *len, CMD_MAX_OUTPUT - *len);
		else
			n = read(fd, junk, sizeof(junk));	/* discard */
		if (n == 0)
			return 1;
		if (n == -1)
			return errno == EINTR ? 0 : errno == EAGAIN ? 0 : 1;
		if (*len < CMD_MAX_OUTPUT)
			*len += (size_t)n;
	}
}

/* Strict number syntax: strtod alone would take "inf", "nan", "0x1p3". */
static int
number(const char *s, size_t n, double *v)
{
	char tmp[64], *end;
	size_t i = 0, digits = 0;

	if (n == 0 || n >= sizeof(tmp))
		return 0;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (tmp[i] == '+' || tmp[i] == '-')
		i++;
	for (; isdigit((unsigned char)tmp[i]) || tmp[i] == '.'; i++)
		digits += tmp[i] != '.';
	if (digits == 0)
		return 0;
	if (tmp[i] == 'e' || tmp[i] == 'E') {
		i += tmp[i + 1] == '+' || tmp[i + 1] == '-' ? 2 : 1;
		if (!isdigit((unsigned char)tmp[i]))
			return 0;
		while (isdigit((unsigned char)tmp[i]))
			i++;
	}
	if (tmp[i] != '\0')
		return 0;
	*v = strtod(tmp, &end);
	return *end == '\0' && isfinite(*v);
}

static void
trim(const char **p, size_t *n)
{
	while (*n > 0 && isspace((unsigned char)**p))
		(*p)++, (*n)--;
	while (*n > 0 && isspace((unsigned char)(*p)[*n - 1]))
		(*n)--;
}

static int
add_metric(struct status_report *r, const char *key, size_t klen, double v)
{
	struct metric *m;
	size_t i;
	char *k;

	if ((k = strndup(key, klen)) == NULL)
		return -1;
	for (i = 0; i < klen; i++)
		k[i] = (char)tolower((unsigned char)k[i]);
	for (i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].key, k) == 0) {
			r->metrics[i].value = v;
			free(k);
			return 0;
		}
	if ((m = realloc(r->metrics, (r->n_metrics + 1) * sizeof(*m))) == NULL) {
		free(k);
		return -1;
	}
	r->metrics = m;
	m[r->n_metrics].key = k;
	m[r->n_metrics++].value = v;
	r->present = 1;
	return 0;
}

/* "key=value" or "KEY: value" with a number or true/false: 1, else 0. */
static int
parse_line(struct status_report *r, const char *p, size_t n)
{
	const char *val;
	size_t klen, vlen, i;
	double v;

	klen = strcspn(p, "=:\n");
	if (klen >= n)
		return 0;
	val = p + klen + 1;
	vlen = n - klen - 1;
	trim(&p, &klen);
	trim(&val, &vlen);
	for (i = 0; i < klen; i++)
		if (!isalnum((unsigned char)p[i]) && strchr("_-.", p[i]) == NULL)
			return 0;
	if (klen == 0)
		return 0;
	if (vlen == 4 && strncasecmp(val, "true", 4) == 0)
		v = 1;
	else if (vlen == 5 && strncasecmp(val, "false", 5) == 0)
		v = 0;
	else if (!number(val, vlen, &v))
		return 0;
	return add_metric(r, p, klen, v) == -1 ? -1 : 1;
}

static int
parse_output(struct status_report *r, char *out, size_t len)
{
	const char *p = out, *nl;
	size_t n = len, i;
	int got = 0, rc;
	double v;

	for (i = 0; i < len; i++)
		if (out[i] == '\0')
			out[i] = '\n';
	out[len] = '\0';
	trim(&p, &n);
	if (number(p, n, &v))
		return add_metric(r, "metric", 6, v) == -1 ? -1 : 1;
	for (p = out; *p != '\0'; p = *nl ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		if ((rc = parse_line(r, p, (size_t)(nl - p))) == -1)
			return -1;
		got |= rc;
	}
	return got;
}

int
progress_cmd(const char *cmd, double timeout, struct status_report *r,
    char *err, size_t errlen)
{
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };
	char out[CMD_MAX_OUTPUT + 1];
	double deadline = timeout > 0 ? now() + timeout : 0, left;
	int fd, st, ms, nap = 1, timed_out = 0, rc;
	size_t len = 0;
	siginfo_t si;
	pid_t pid;

	if ((pid = probe_spawn(argv, environ, 0, 1, &fd)) == -1) {
		seterr(err, errlen, "progress command: %s", strerror(errno));
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	for (;;) {
		ms = fd >= 0 ? 50 : nap;
		if (deadline > 0 && (left = deadline - now()) * 1000 < ms)
			ms = left > 0 ? (int)(left * 1000) + 1 : 0;
		if (fd >= 0) {
			struct pollfd pfd = { fd, POLLIN, 0 };

			if (poll(&pfd, 1, ms) > 0 && drain(fd, out, &len)) {
				close(fd);
				fd = -1;
			}
		} else {
			poll(NULL, 0, ms);
			nap = nap < 32 ? nap * 2 : 50;
		}
		/* WNOWAIT keeps the zombie, so its pid (the group id) can't be
		 * reused before the leftovers in its group are killed. */
		si.si_pid = 0;
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == pid) {
			if (fd >= 0)
				drain(fd, out, &len);
			kill(-pid, SIGKILL);
			break;
		}
		if (deadline > 0 && now() >= deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			timed_out = 1;
			break;
		}
	}
	if (fd >= 0)
		close(fd);
	if (reap(pid, &st) == -1) {
		seterr(err, errlen, "progress command: %s", strerror(errno));
		return -1;
	}
	if (timed_out) {
		seterr(err, errlen, "progress command timed out after %gs",
		    timeout);
		return -1;
	}
	if (WIFSIGNALED(st)) {
		seterr(err, errlen, "progress command killed by signal %d",
		    WTERMSIG(st));
		return -1;
	}
	if (WEXITSTATUS(st) != 0) {
		seterr(err, errlen, "progress command exited %d",
		    WEXITSTATUS(st));
		return -1;
	}
	if ((rc = parse_output(r, out, len)) == -1) {
		seterr(err, errlen, "progress command: %s", strerror(ENOMEM));
		return -1;
	}
	if (rc == 0) {
		seterr(err, errlen, "progress command printed nothing usable");
		return -1;
	}
	return 0;
}
