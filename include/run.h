/* SPDX-License-Identifier: ISC */
/*
 * The run engine (SPEC §3).  One supervised run of COMMAND on libev's
 * default loop: the child in its own process group, stdout/stderr copied
 * through and kept in rings, --timeout/--budget/--kill-after, signal
 * forwarding, and the clean-up of whatever the run left behind.  And the
 * helper processes cbexec runs for itself, outside the event loop.
 */
#ifndef CBEXEC_RUN_H
#define CBEXEC_RUN_H

#include <stddef.h>
#include <sys/types.h>

#include "core.h"

struct sup_cfg {
	char **argv;
	char **envp;
	double timeout;		/* 0: none */
	double kill_after;
	int signal;		/* sent on timeout; 0: none */
	double deadline;	/* budget end on mono_now()'s clock; 0: none */
	size_t capture_bytes;
	int capture_stdout;	/* 0: the child writes straight to our stdout */
	int keep_orphans;
	/* Called with each chunk of stdout as it passes; may be NULL. */
	void (*tap)(void *arg, const char *p, size_t n);
	void *tap_arg;
	double idle_timeout;	/* stop a run silent this long; 0: none */
	/*
	 * Periodic hook (a shared store's lease): called every
	 * keepalive_every seconds while the run lasts, and at once when
	 * keepalive_fd (>= 0; set it to -1 for none) becomes readable.  When
	 * it returns -1 the run is ended at once (SIGKILL to its group) and
	 * res->keepalive_failed is set; 1 says it is waiting for an answer
	 * without blocking: it is called again when the descriptor is
	 * readable, every 50 ms, and at its deadline.  NULL: none.
	 */
	int (*keepalive)(void *arg);
	void *keepalive_arg;
	double keepalive_every;
	int keepalive_fd;
	/* The keepalive's own deadline (mono_now() clock; 0: none), asked
	 * again after each keepalive: when it comes, the keepalive is
	 * called at once, whatever else is pending (a lease's local
	 * deadline).  NULL: none. */
	double (*keepalive_until)(void *arg);
	/* keepalive_fd as it is after a keepalive (it may have connected
	 * again); NULL: keepalive_fd stays. */
	int (*keepalive_fd_of)(void *arg);
};

struct sup_result {
	int exec_errno;		/* cbexec's exec of COMMAND failed */
	int exit_code;		/* -1 unless it exited */
	int signo;		/* signal that ended it, 0 when it exited */
	int signalled_by_us;
	int timed_out;		/* --timeout or the budget stopped it */
	int budget_expired;
	int idle;		/* --idle-timeout stopped it */
	int stopped;		/* sup_stop()'s why stopped it, 0: it did not */
	int lingered;		/* it outlived sup_grace() and was ended */
	int keepalive_failed;	/* cfg->keepalive said no: killed */
	int out_gone;		/* cbexec's stdout was closed downstream
				 * (EPIPE) while the run wrote to it */
	int out_werr, err_werr;	/* the first other error writing the
				 * command's stdout or stderr to ours, 0:
				 * none; the rest was read and dropped */
	double duration;
	struct ring out, err;	/* the tails */
};

/*
 * Set up the default loop, the signal watchers, the subreaper bit and the
 * output descriptors.  Call once before anything forks.  0 / -1 (errno).
 */
int sup_init(void);
/* Nothing of a run is left and no run follows: the watchdog that would
 * kill what a run left if cbexec were killed may exit now, while the state
 * is saved (a later spawn starts it again). */
void sup_unguard(void);
/* At the end of the invocation: the watchdog goes (and is reaped). */
void sup_done(void);
/*
 * A file's content (at most WATCH_WILL_MAX bytes) the watchdog writes
 * should cbexec die before sup_unguard(): the run's start record, the
 * run's registration under allow/, kept where the command cannot erase
 * them.  path NULL: none.
 */
#define WATCH_WILL_MAX 512
enum { WATCH_WILL_RECORD, WATCH_WILL_REG, WATCH_WILLS };
void watch_will(int which, const char *path, const char *buf, size_t n);

/*
 * Run cfg->argv to completion, leftovers included.  Returns 0 with *res
 * filled (rings initialised; free with sup_result_free), -1 when cbexec
 * itself failed (fork, pipe: errno set).
 */
int sup_run(const struct sup_cfg *cfg, struct sup_result *res);
void sup_result_free(struct sup_result *res);

/* cbexec's stdout is a pipe or socket whose reader has gone (poll(2)
 * says POLLERR): nothing written there can arrive any more. */
int sup_stdout_gone(void);

/*
 * From a tap, while sup_run() runs: stop the run as a time limit does
 * (--signal, then SIGKILL after --kill-after), for a reason of the
 * caller's (why > 0, kept in the result's stopped; the first one stays).
 */
void sup_stop(int why);

/*
 * From a tap, while sup_run() runs: the command's work is over (an
 * agent's final result came); if it has not exited seconds from now, end
 * it as a time limit does and set the result's lingered.  Once per run;
 * seconds <= 0: nothing.
 */
void sup_grace(double seconds);

/*
 * Sleep seconds, woken early by the budget (deadline, 0 = none) or an
 * operator signal.  Returns 0 after the full pause, 1 when the budget ran
 * out, 2 when cbexec was asked to stop.
 */
int sup_sleep(double seconds, double deadline);

/*
 * Wait until fd has input: 1, or 0 when an operator signal came first (so
 * a prompt never outlives SIGINT, SIGTERM, SIGHUP or SIGQUIT).
 */
int sup_wait_readable(int fd);

/* The operator signal (INT, TERM, HUP, QUIT) cbexec received, or 0. */
int sup_aborted(void);

/*
 * Waiting outside the event loop (the lock, helpers): between sup_hold()
 * and sup_release() (nestable) the operator signals are held back, and
 * sup_poll() -- poll(2) on n fds (n <= 7, fds may be NULL when n is 0)
 * -- returns -2 at once when one comes, sup_nap() 1; the signal is then
 * sup_aborted().  Both work without sup_init().
 */
struct pollfd;
void sup_hold(void);
void sup_release(void);
int sup_poll(struct pollfd *fds, int n, int ms);
int sup_nap(double seconds);
/* Between runs: hand the loop's pending signals to their watchers, then
 * return sup_aborted(). */
int sup_interrupted(void);

/*
 * Helper processes cbexec runs for itself (child.c), outside the event
 * loop: git for the progress fingerprint, the --progress-cmd command, the
 * --on-state-change hook.
 */
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

/*
 * Wait for the helper pid, feeding what it writes on fd (its pipe; -1:
 * none; closed here) to sink (may be NULL; a sink returning -1 makes the
 * result -1 with ENOMEM, the output still read), until it exits, the
 * deadline (mono_now() clock, 0 none) passes, or an operator signal comes.
 * Output is read as it comes and, once the helper has exited, only what
 * is already there.  On a deadline or an interrupt the helper's group and
 * pid get SIGKILL; kill_group kills its group after a normal exit too
 * (nothing it started outlives it).  The helper is reaped: CHILD_EXITED
 * with *status, CHILD_TIMEOUT, CHILD_INTERRUPTED, or -1.
 */
/* The end of --budget (mono_now() clock, 0: none), set once per
 * invocation: child_wait() never waits past it, whatever deadline it is
 * given.  child_bound(at): at (0: none), or the budget's end when that
 * is sooner. */
void child_budget(double deadline);
double child_bound(double at);
/* While child_wait() waits, fn(arg) is called at least every `every`
 * seconds (a shared store's lease kept alive through git, --progress-cmd
 * and the hook); fn NULL: none. */
void child_keepalive(int (*fn)(void *arg), void *arg, double every);
typedef int (*child_sink)(void *ctx, const char *p, size_t n);
enum { CHILD_EXITED, CHILD_TIMEOUT, CHILD_INTERRUPTED };
int child_wait(pid_t pid, int fd, double deadline, int kill_group,
    child_sink sink, void *ctx, int *status);

#endif
