/*
 * Helper processes cbexec runs for itself, outside the event loop: git for
 * the progress fingerprint, the --progress-cmd command, the
 * --on-state-change hook.  (COMMAND itself is started by spawn.c.)
 */
#ifndef CBEXEC_CHILD_H
#define CBEXEC_CHILD_H

#include <sys/types.h>

/* Where the child's stderr goes. */
enum child_err {
	CHILD_ERR_KEEP,		/* cbexec's own stderr */
	CHILD_ERR_NULL,		/* /dev/null */
	CHILD_ERR_PIPE		/* the same pipe as stdout */
};

/*
 * Fork argv (PATH searched, environment envp) with stdin on /dev/null and
 * stdout on a pipe whose read end lands in *fd; stderr as err says; in a
 * process group of its own when pgrp.  The child's pid, or -1.
 */
pid_t child_spawn(char *const argv[], char *const envp[], enum child_err err,
    int pgrp, int *fd);

/* waitpid for pid, retried on EINTR.  0 / -1. */
int child_reap(pid_t pid, int *status);

#endif
