/* SPDX-License-Identifier: ISC */
/*
 * The "git" progress fingerprint (SPEC §3.1) and the check for a git work
 * tree.
 *
 * A fingerprint is a SHA-256 taken before and after a run; the caller only
 * compares the two.  "git" hashes what git prints (HEAD, the diff against
 * it, and lstat data for each untracked non-ignored path), streamed from a
 * pipe so a large diff never sits in memory.  Each section's byte count is
 * hashed after it, so bytes cannot move from one section to the next
 * unnoticed.  git runs directly (no shell) through child_spawn in child.c,
 * with GIT_OPTIONAL_LOCKS=0 so it never takes index.lock from under the
 * command being watched.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "judge.h"
#include "run.h"

extern char **environ;

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
	pid = child_spawn((char *const *)args, env, CHILD_ERR_NULL, 0, &fd);
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
	if (child_reap(pid, &st) == -1 || bad || !WIFEXITED(st))
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
