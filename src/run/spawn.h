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
/*
 * A group to guard in slot: watch_arm() before the fork clears the slot
 * (no group, no deadline), its deadlines are set, and the child names
 * itself there with watch_claim() before it execs, so the group is
 * guarded before it can run anything; watch_group() sets it from the
 * parent too, or lets it go (0).
 */
void watch_arm(int slot);
void watch_claim(int slot);
void watch_group(int slot, pid_t pgid);
/*
 * The deadlines the watchdog keeps for the group in slot, should cbexec
 * be stopped (SIGSTOP) or late past them: sig at sig_at (mono_now()
 * clock, 0: none; with sig 0 no signal, only the SIGKILL), SIGKILL
 * kill_after seconds after it (0: none); why says which limit sig_at is
 * (watch_fired hands it back).  watch_lease: SIGKILL at at, the local
 * deadline of a shared store's lease (0: none).  watch_sent: cbexec sent
 * sig itself (0: none), and its own SIGKILL is due at kill_at (0: none
 * said).
 * watch_quiet: nothing of the group is left to end; its deadlines go.
 */
enum { WATCH_TIMEOUT = 1, WATCH_BUDGET, WATCH_DEADLINE };
void watch_deadline(int slot, int sig, double sig_at, double kill_after,
    int why);
void watch_lease(int slot, double at);
void watch_sent(int slot, int sig, double kill_at);
void watch_quiet(int slot);
/* What was sent to the group in slot, by cbexec and by the watchdog
 * (WATCH_*), and in *why (may be NULL) the limit its deadline was. */
enum {
	WATCH_SENT = 1, WATCH_KILLED = 2,	/* cbexec did */
	WATCH_WD_SENT = 4, WATCH_WD_KILLED = 8,	/* the watchdog did */
	WATCH_WD_LEASE = 16,			/* ... for the lease */
	WATCH_WD_AFTER = 32	/* ... after the leader had exited: only
				 * leftovers, the run was no timeout */
};
int watch_fired(int slot, int *why);
void watch_release(void);	/* no group to guard: it may exit now */
void watch_want(void);		/* runs are guarded from now on */
void watch_resume(void);	/* one wanted and none running: a new one */
void watch_stop(void);		/* at the end: it exits, reaped */
extern pid_t watch_pid;		/* 0: none */
/* 1 when waitid() reports the watchdog (it was forked, not cloned). */
extern int watch_waitable;

#endif
