/* SPDX-License-Identifier: ISC */
/*
 * Running git for the "git" progress source: gitprint.c runs it safely
 * (no program the repository's configuration names, no file git would
 * block on, every command bounded), gitsnap.c takes the snapshot.
 */
#ifndef CBEXEC_GITRUN_H
#define CBEXEC_GITRUN_H

#include <limits.h>
#include <stddef.h>

/* The probe as a whole is given a deadline, and each git command what
 * is left of it and of the --budget (child_bound): a repository slow
 * beyond it, or a FIFO git was pointed at, fails the fingerprint (a
 * warning); it does not hold cbexec. */
#define GIT_TIMEOUT	120.0

/* The environment git runs with: ours, the probe's safety settings, and
 * every filter driver the configuration defines emptied. */
struct gitenv {
	char **v;		/* environ entries, then ours (owned) */
	size_t n, cap, borrowed;
	int count;		/* GIT_CONFIG_COUNT so far */
};

typedef int (*git_sink)(void *ctx, const char *p, size_t n);

/*
 * Before a snapshot: the files git would block on are looked at, the
 * environment is made (e->v, sealed) and top gets the work tree's top
 * directory (asked of git once, then again only when the .git found from
 * the working directory changes).  0, or -1 with the reason kept for
 * progress_git_error() when it is known.
 */
int git_begin(struct gitenv *e, char top[PATH_MAX], double until);
void git_end(struct gitenv *e);

/* Run git (args[0] is "git") with env, its stdout to sink: its exit
 * code, or -1 when it could not run, was killed, ran out of time or
 * cbexec was interrupted. */
int git_run(const char *const *args, char **env, double until,
    git_sink sink, void *ctx);

/* Why the probe failed, for progress_git_error(); NULL clears it. */
void git_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
