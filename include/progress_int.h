/*
 * Private to the progress sources (phase.c, gitprint.c, filesprint.c,
 * probe.c); callers use progress.h.  The fork/reap helpers the git probe and
 * the progress command share, and the error-message helper.
 */
#ifndef CBEXEC_PROGRESS_INT_H
#define CBEXEC_PROGRESS_INT_H

#include <stddef.h>
#include <sys/types.h>

/* probe.c */
/* vsnprintf into err, when there is an err to write to. */
void seterr(char *err, size_t errlen, const char *fmt, ...);
/*
 * Fork argv (PATH searched, environment envp) with stdin on /dev/null,
 * stdout on a pipe whose read end lands in *fd, stderr on /dev/null when
 * quiet, in a process group of its own when pgrp.  The child's pid, or -1.
 */
pid_t probe_spawn(char *const argv[], char *const envp[], int quiet, int pgrp,
    int *fd);
/* waitpid for pid, retried on EINTR.  0 / -1. */
int reap(pid_t pid, int *status);

#endif
