/* SPDX-License-Identifier: ISC */
/*
 * fork/exec of COMMAND and the process bookkeeping around it: the
 * subreaper bit, the signals the child must get back, and finding what a
 * run left behind.
 */
#ifndef CBEXEC_SPAWN_H
#define CBEXEC_SPAWN_H

#include <sys/types.h>

/*
 * Remember the signal mask and the dispositions of sigs as cbexec found
 * them (before libev installs handlers), and become a child subreaper.
 */
int spawn_init(const int *sigs, int nsigs);

/*
 * Start argv in a new process group (the terminal's foreground group when
 * fg_tty).  out/err are the write ends for the child's stdout and stderr,
 * -1 to inherit.  Returns 0 with *pid set, or with *exec_errno set when
 * the exec failed (the child has then been reaped); -1 when fork failed.
 */
int spawn_child(char **argv, char **envp, int fg_tty, int out, int err,
    pid_t *pid, int *exec_errno);

/* 1 when a process of the run is still alive: a member of pgid, or a
 * child of cbexec (an orphan reparented to the subreaper). */
int spawn_leftovers(pid_t pgid);

/* Send sig to the group pgid and to every child of cbexec (and its
 * group when it leads one). */
void spawn_kill_leftovers(pid_t pgid, int sig);

/*
 * The watchdog (watchdog.c): wanted from sup_init on (watch_want), made
 * when first needed and again once let go (watch_resume, nothing while
 * one runs); told the group of the run (slot WATCH_RUN) and
 * of a helper (WATCH_HELPER), 0 when it is gone, it kills them if cbexec
 * dies.
 */
enum { WATCH_RUN, WATCH_HELPER, WATCH_SLOTS };
int watch_start(void);
void watch_group(int slot, pid_t pgid);
void watch_release(void);	/* no group to guard: it may exit now */
void watch_want(void);		/* runs are guarded from now on */
void watch_resume(void);	/* one wanted and none running: a new one */
void watch_stop(void);		/* at the end: it exits, reaped */
extern pid_t watch_pid;		/* 0: none */
/* 1 when waitid() reports the watchdog (it was forked, not cloned). */
extern int watch_waitable;

#endif
