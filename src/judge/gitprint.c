/* SPDX-License-Identifier: ISC */
/*
 * git run safely for the "git" progress source (SPEC §3.1, §6, §11), and
 * the check for a git work tree.  gitsnap.c takes the snapshot itself.
 *
 * git runs directly (no shell) through child_spawn in child.c, bounded in
 * time and interruptible, with GIT_OPTIONAL_LOCKS=0 so it never takes
 * index.lock from under the command being watched.
 *
 * The repository is the command's: its .git/config may name programs git
 * would run while it compares files (core.fsmonitor, the clean and
 * process programs of filter drivers, textconv and external diff drivers,
 * hooks, the transport of a lazy fetch).  None of them may run as the
 * operator: the diff drivers are off by option, submodules are compared by
 * commit only (a dirty check would run git status inside each, under
 * their own configuration), and the rest is overridden through
 * GIT_CONFIG_COUNT -- every filter driver the configuration defines
 * emptied, found with "git config", which runs no program itself.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "judge.h"
#include "run.h"
#include "gitrun.h"

extern char **environ;

/* Why the last probe failed, when it is known. */
static char git_why[PATH_MAX * 2 + 64];
/* More filter drivers than this and the fingerprint is not taken. */
#define MAX_FILTERS	256

/*
 * What git must never do for a probe, whatever the repository's own
 * configuration says (.git/config is the command's to write): run the
 * fsmonitor hook or daemon, run a hook, fetch (a partial clone's missing
 * objects would run ssh or a remote helper), or take index.lock from
 * under the command it watches.  The configuration comes through
 * GIT_CONFIG_COUNT (git 2.31 and later), which outranks the repository's
 * and, unlike -c, takes any key: a filter driver's name is free text.
 */
static const char *const safe_config[][2] = {
	{ "core.fsmonitor", "false" },
	{ "core.hooksPath", "/dev/null" },
	{ "protocol.allow", "never" },
	{ "gc.auto", "0" },
	{ "maintenance.auto", "false" },
};
static const char *const safe_env[] = {
	"GIT_OPTIONAL_LOCKS=0", "GIT_NO_LAZY_FETCH=1",
	"GIT_ALLOW_PROTOCOL=none", "GIT_TERMINAL_PROMPT=0",
};

static int
env_add(struct gitenv *e, char *kv)
{
	char **nv;

	if (kv == NULL)
		return -1;
	if (e->n + 2 > e->cap) {
		e->cap = e->cap * 2 + 16;
		if ((nv = realloc(e->v, e->cap * sizeof(*nv))) == NULL) {
			free(kv);
			return -1;
		}
		e->v = nv;
	}
	e->v[e->n++] = kv;
	e->v[e->n] = NULL;
	return 0;
}

static int
env_config(struct gitenv *e, const char *key, const char *val)
{
	char *k = NULL, *v = NULL;

	if (asprintf(&k, "GIT_CONFIG_KEY_%d=%s", e->count, key) == -1 ||
	    asprintf(&v, "GIT_CONFIG_VALUE_%d=%s", e->count, val) == -1) {
		free(k);
		return -1;
	}
	e->count++;
	return env_add(e, k) == -1 || env_add(e, v) == -1 ? -1 : 0;
}

static void
env_free(struct gitenv *e)
{
	size_t i;

	for (i = e->borrowed; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

/* GIT_CONFIG_COUNT, last, once every pair is in. */
static int
env_seal(struct gitenv *e)
{
	char *c = NULL;

	if (asprintf(&c, "GIT_CONFIG_COUNT=%d", e->count) == -1)
		return -1;
	return env_add(e, c);
}

/* Our environment with the probe's safety settings; the caller's own
 * GIT_CONFIG_COUNT pairs are kept, ours come after them. */
static int
env_init(struct gitenv *e)
{
	const char *cnt = getenv("GIT_CONFIG_COUNT");
	size_t i;
	int skip;

	memset(e, 0, sizeof(*e));
	if (cnt != NULL)
		e->count = atoi(cnt) > 0 ? atoi(cnt) : 0;
	for (i = 0; environ[i] != NULL; i++) {
		skip = strncmp(environ[i], "GIT_CONFIG_COUNT=", 17) == 0;
		for (size_t k = 0; k < NELEM(safe_env) && !skip; k++)
			skip = strncmp(environ[i], safe_env[k],
			    strcspn(safe_env[k], "=") + 1) == 0;
		if (skip)
			continue;
		if (env_add(e, environ[i]) == -1)
			goto fail;
		e->borrowed = e->n;
	}
	for (i = 0; i < NELEM(safe_env); i++)
		if (env_add(e, strdup(safe_env[i])) == -1)
			goto fail;
	for (i = 0; i < NELEM(safe_config); i++)
		if (env_config(e, safe_config[i][0], safe_config[i][1]) == -1)
			goto fail;
	return 0;
fail:
	env_free(e);
	return -1;
}

void
git_fail(const char *fmt, ...)
{
	va_list ap;

	git_why[0] = '\0';
	if (fmt == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(git_why, sizeof(git_why), fmt, ap);
	va_end(ap);
}

/*
 * Run git in a process group of its own with env, feeding its stdout to
 * sink; whatever it started is killed when it is done.  Returns git's exit
 * code, or -1 when it could not run, was killed, timed out or cbexec was
 * interrupted.
 */
int
git_run(const char *const *args, char **env, double until, git_sink sink,
    void *ctx)
{
	int fd, st, rc;
	pid_t pid;

	/* Nothing left of the probe's time or of the budget: not started. */
	if ((until = child_bound(until)) <= mono_now()) {
		snprintf(git_why, sizeof(git_why), "no time left for git");
		return -1;
	}
	pid = child_spawn((char *const *)args, env, CHILD_ERR_NULL, 1, &fd);
	if (pid == -1)
		return -1;
	rc = child_wait(pid, fd, until, 1, sink, ctx, &st);
	if (rc == CHILD_TIMEOUT)
		snprintf(git_why, sizeof(git_why), "git %s did not finish in "
		    "time (a FIFO it reads? killed)", args[1][0] == '-' ?
		    args[2] : args[1]);
	if (rc != CHILD_EXITED || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* The filter driver names "git config" lists, NUL-terminated names. */
struct names {
	char *buf;
	size_t len, cap;
};

static int
names_sink(void *ctx, const char *p, size_t n)
{
	struct names *nm = ctx;
	char *nb;

	if (nm->len + n + 1 > nm->cap) {
		/* A config this large is no config to trust with a probe. */
		if (nm->len + n > 1024 * 1024)
			return -1;
		nm->cap = (nm->len + n + 1) * 2;
		if ((nb = realloc(nm->buf, nm->cap)) == NULL)
			return -1;
		nm->buf = nb;
	}
	memcpy(nm->buf + nm->len, p, n);
	nm->len += n;
	nm->buf[nm->len] = '\0';
	return 0;
}

/*
 * filter.<driver>.clean, .smudge and .process name programs git runs on
 * file contents (through .gitattributes) while it diffs: every driver the
 * configuration defines is emptied, and made optional so an emptied
 * required one is not an error.
 */
static int
neutralise_filters(struct gitenv *e, double until)
{
	static const char *const args[] = {
		"git", "config", "-z", "--name-only", "--get-regexp",
		"^filter\\.", NULL
	};
	static const char *const vars[][2] = {
		{ "clean", "" }, { "smudge", "" }, { "process", "" },
		{ "required", "false" },
	};
	struct names nm = { NULL, 0, 0 };
	char key[4096];
	const char *p, *end, *dot;
	int rc, n = 0;
	size_t i;

	/* The environment so far, sealed for this one run. */
	if (env_seal(e) == -1)
		return -1;
	rc = git_run(args, e->v, until, names_sink, &nm);
	free(e->v[--e->n]);
	e->v[e->n] = NULL;
	/* 1: no filter is configured at all. */
	if (rc != 0) {
		free(nm.buf);
		return rc == 1 ? 0 : -1;
	}
	for (p = nm.buf; p != NULL && p < nm.buf + nm.len; p = end + 1) {
		end = p + strlen(p);
		/* "filter.DRIVER.VAR": DRIVER is all between the first and
		 * the last dot, dots included. */
		if ((dot = strrchr(p, '.')) == NULL || dot - p <= 7)
			continue;
		if (++n > MAX_FILTERS) {
			free(nm.buf);
			return -1;
		}
		for (i = 0; i < NELEM(vars); i++) {
			if (snprintf(key, sizeof(key), "%.*s.%s",
			    (int)(dot - p), p, vars[i][0]) >= (int)sizeof(key) ||
			    env_config(e, key, vars[i][1]) == -1) {
				free(nm.buf);
				return -1;
			}
		}
	}
	free(nm.buf);
	return 0;
}

/* What git printed, the first PATH_MAX + 15 bytes of it. */
struct capture {
	char b[PATH_MAX + 16];
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
 * directory named in GIT_CEILING_DIRECTORIES; top (PATH_MAX bytes, may
 * be NULL) gets the directory that holds it ("" when not known). */
static int
has_dot_git(char *top)
{
	char dir[PATH_MAX], probe[PATH_MAX + 8], *slash;
	const char *ceil = getenv("GIT_CEILING_DIRECTORIES");
	struct stat st;
	size_t n;

	if (top != NULL)
		top[0] = '\0';
	if (getcwd(dir, sizeof(dir)) == NULL)
		return 1;	/* cannot tell: let git decide */
	for (;;) {
		snprintf(probe, sizeof(probe), "%s/.git", dir);
		if (lstat(probe, &st) == 0) {
			if (top != NULL)
				memcpy(top, dir, strlen(dir) + 1);
			return 1;
		}
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
	if (lstat(probe, &st) != 0)
		return 0;
	if (top != NULL)
		snprintf(top, PATH_MAX, "/");
	return 1;
}

/*
 * git opens the files below with a blocking open(2), and one of them the
 * command replaced by a FIFO would hold git until its deadline: each is
 * looked at first (lstat), and the probe is not taken when one is there
 * and is not a regular file (a directory where one is expected included).
 * What this cannot see -- a .gitignore deeper in the tree, a file an
 * include.path or core.excludesFile names -- the deadline bounds.
 */
static const char *const git_files[] = {
	"config", "HEAD", "index", "info/exclude", "info/attributes",
};
static const char *const tree_files[] = { ".gitignore", ".gitattributes" };

static int
not_regular(const char *dir, const char *name, char *why, size_t len)
{
	struct stat st;

	snprintf(why, len, "%s%s%s", dir, *dir != '\0' ? "/" : "", name);
	return lstat(why, &st) == 0 && !S_ISREG(st.st_mode) &&
	    !S_ISLNK(st.st_mode);
}

static int
git_files_safe(char top[PATH_MAX])
{
	char gd[PATH_MAX + 8], why[PATH_MAX * 2];
	const char *env = getenv("GIT_DIR");
	struct stat st;
	size_t i;

	has_dot_git(top);
	if (env != NULL)
		snprintf(gd, sizeof(gd), "%s", env);
	else if (top[0] != '\0')
		snprintf(gd, sizeof(gd), "%s/.git", strcmp(top, "/") == 0 ?
		    "" : top);
	else
		gd[0] = '\0';
	/* A .git file (a worktree's, a submodule's) names its directory
	 * elsewhere: only the work tree's files are looked at then. */
	if (gd[0] != '\0' && lstat(gd, &st) == 0 && S_ISDIR(st.st_mode))
		for (i = 0; i < NELEM(git_files); i++)
			if (not_regular(gd, git_files[i], why, sizeof(why)))
				goto bad;
	for (i = 0; i < NELEM(tree_files); i++)
		if (not_regular("", tree_files[i], why, sizeof(why)) ||
		    (top[0] != '\0' && not_regular(top, tree_files[i], why,
		    sizeof(why))))
			goto bad;
	return 1;
bad:
	snprintf(git_why, sizeof(git_why), "%s is not a regular file", why);
	return 0;
}

const char *
progress_git_error(void)
{
	return git_why[0] != '\0' ? git_why : NULL;
}

/*
 * The work tree's top directory, which git status -z names its paths
 * from, as git said it (top_git), and the directory holding the .git that
 * was found from the working directory when it was asked (top_dot): it is
 * asked again only when that changes (a repository made inside the one it
 * was).
 */
static char top_git[PATH_MAX], top_dot[PATH_MAX];
static int top_known;

/* "true\nTOP\n" from rev-parse: remembered, 1; else 0. */
static int
top_keep(const struct capture *c, const char *dot, int inside)
{
	const char *t = c->b;
	size_t n = c->n;

	if (inside) {
		if (strncmp(t, "true\n", 5) != 0)
			return 0;
		t += 5;
		n -= 5;
	}
	if (n < 2 || t[n - 1] != '\n' || t[0] != '/' || n > PATH_MAX ||
	    memchr(t, '\0', n) != NULL)
		return 0;
	memcpy(top_git, t, n - 1);
	top_git[n - 1] = '\0';
	snprintf(top_dot, sizeof(top_dot), "%s", dot);
	top_known = 1;
	return 1;
}

int
progress_in_git(void)
{
	static const char *const args[] = {
		"git", "rev-parse", "--is-inside-work-tree", "--show-toplevel",
		NULL
	};
	struct capture c = { "", 0 };
	char dot[PATH_MAX];
	struct gitenv e;
	int rc;

	/* Asking git costs a fork and an exec on every invocation; look for
	 * a .git first and ask only when one is there. */
	if (getenv("GIT_DIR") == NULL && !has_dot_git(NULL))
		return 0;
	/* A work tree whose files git would hang on: the probe says so
	 * at each run (its fingerprint fails), never a quiet "exit". */
	if (!git_files_safe(dot))
		return 1;
	if (env_init(&e) == -1 || env_seal(&e) == -1) {
		env_free(&e);
		return 0;
	}
	/* Outside a work tree (inside .git, a bare repository) the top
	 * cannot be shown: git says so and exits 128. */
	rc = git_run(args, e.v, mono_now() + GIT_TIMEOUT, capture_sink, &c);
	env_free(&e);
	if (rc != 0)
		return 0;
	/* The snapshots need the top: asked here, it costs no git more. */
	return top_keep(&c, dot, 1);
}

int
git_begin(struct gitenv *e, char top[PATH_MAX], double until)
{
	static const char *const args[] = {
		"git", "rev-parse", "--show-toplevel", NULL
	};
	struct capture c = { "", 0 };
	char dot[PATH_MAX];

	git_fail(NULL);
	if (!git_files_safe(dot) || env_init(e) == -1)
		return -1;
	if (neutralise_filters(e, until) == -1 || env_seal(e) == -1)
		goto fail;
	if (!top_known || strcmp(top_dot, dot) != 0) {
		top_known = 0;
		if (git_run(args, e->v, until, capture_sink, &c) != 0)
			goto fail;
		if (!top_keep(&c, dot, 0)) {
			git_fail("git rev-parse --show-toplevel printed no "
			    "directory");
			goto fail;
		}
	}
	memcpy(top, top_git, sizeof(top_git));
	return 0;
fail:
	env_free(e);
	return -1;
}

void
git_end(struct gitenv *e)
{
	env_free(e);
}
