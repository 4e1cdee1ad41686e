/* SPDX-License-Identifier: ISC */
/*
 * Helper processes: git, the --progress-cmd command and the
 * --on-state-change hook.  They run outside the event loop, so each caller
 * reaps its own child by pid; no libev child watcher competes for the
 * status, and waitpid(-1) is never called.
 *
 * Signals stay blocked across fork.  The child resets every handler cbexec
 * caught, and SIGPIPE (which cbexec ignores so that a closed reader gives
 * it EPIPE), before it lifts the mask, so no handler of cbexec's runs in
 * it; signals cbexec itself inherited as ignored stay ignored.  It dies
 * with cbexec (PR_SET_PDEATHSIG) and execs with stdin on /dev/null and
 * stdout on a pipe.
 *
 * child_wait() is the one wait all of them share: it reads the pipe as
 * output comes, in slices of poll(2) that an operator signal ends at once
 * (sup_poll), checks the pid between slices without reaping it (WNOWAIT
 * keeps the zombie, so its pid, which is also its group's id, cannot be
 * taken by a new process before the group is killed), and once the helper
 * has exited reads only what is there already: a background process it
 * left holding the pipe cannot keep cbexec waiting.  A deadline or an
 * interrupt kills the helper's group and the helper, then reaps it.
 * Whatever deadline the caller gives, the end of the --budget comes
 * first when it is sooner (child_budget).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "spawn.h"

static void __attribute__((noreturn))
child_exec(char *const argv[], char *const envp[], int out,
    enum child_err err, int pgrp, pid_t parent)
{
	struct sigaction sa;
	sigset_t none;
	int nul, s;

	if (pgrp)
		setpgid(0, 0);
	/* A kill -9 of cbexec must not leave a hanging helper behind. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent)
		_exit(CB_EXIT_NOTFOUND);
	/* Guarded before it runs anything: a helper that stops cbexec
	 * still dies by the budget's end. */
	watch_claim(WATCH_HELPER);
	if (out < 3 && (out = fcntl(out, F_DUPFD_CLOEXEC, 3)) == -1)
		_exit(CB_EXIT_NOTFOUND);
	/* Not O_CLOEXEC: with fd 0 closed in cbexec, nul is 0 itself. */
	if ((nul = open("/dev/null", O_RDWR)) == -1 ||
	    dup2(nul, 0) == -1 || dup2(out, 1) == -1 ||
	    (err == CHILD_ERR_NULL && dup2(nul, 2) == -1) ||
	    (err == CHILD_ERR_PIPE && dup2(out, 2) == -1))
		_exit(CB_EXIT_NOTFOUND);
	if (nul > 2)
		close(nul);
	for (s = 1; s < NSIG; s++)
		if (sigaction(s, NULL, &sa) == 0 && (s == SIGPIPE ||
		    (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN))) {
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = SIG_DFL;
			sigemptyset(&sa.sa_mask);
			sigaction(s, &sa, NULL);
		}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	stack_restore();
	execvpe(argv[0], argv, envp);
	_exit(CB_EXIT_NOTFOUND);
}

pid_t
child_spawn(char *const argv[], char *const envp[], enum child_err err,
    int pgrp, int *fd)
{
	sigset_t all, old;
	pid_t pid, parent = getpid();
	int p[2], e;

	/* The helper runs under a watchdog: made now if none runs (none
	 * yet, or let go after the last run), and kept to the budget's end
	 * until child_wait() says its own deadline. */
	watch_resume();
	watch_arm(WATCH_HELPER);
	watch_deadline(WATCH_HELPER, SIGKILL, child_bound(0), 0,
	    WATCH_DEADLINE);
	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
		child_exec(argv, envp, p[1], err, pgrp, parent);
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

int
child_reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) == -1)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* The end of the invocation's --budget (mono_now() clock; 0: none):
 * no helper's wait goes past it (SPEC §11, "Every wait is bounded"). */
static double budget_end;

void
child_budget(double deadline)
{
	budget_end = deadline;
}

double
child_bound(double at)
{
	if (budget_end > 0 && (at <= 0 || budget_end < at))
		return budget_end;
	return at;
}

#define SLICE_MS	50		/* how often a running helper is checked */
#define DRAIN_MAX	(1 << 20)	/* bytes read after the helper exited */

/* Called at least every keep_every seconds while a helper runs (a shared
 * store's lease).  Its failure is not the helper's: what needs the lease
 * next (the fork, the save) finds it gone and says so. */
static int (*keep_fn)(void *);
static void *keep_arg;
static double keep_every;

void
child_keepalive(int (*fn)(void *arg), void *arg, double every)
{
	keep_fn = fn;
	keep_arg = arg;
	keep_every = every;
}

/* Read what fd has now into sink (counted in *after once the helper has
 * exited); 1 at EOF or error, 0 when it would block. */
static int
pump(int fd, child_sink sink, void *ctx, int *bad, size_t *after,
    int exited)
{
	char buf[16384];
	ssize_t n;

	for (;;) {
		if (exited && *after >= DRAIN_MAX)
			return 1;
		n = read(fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return errno == EAGAIN ? 0 : 1;
		if (n == 0)
			return 1;
		if (exited)
			*after += (size_t)n;
		/* Read on after a sink error so the helper never blocks. */
		if (!*bad && sink != NULL && sink(ctx, buf, (size_t)n) == -1)
			*bad = 1;
	}
}

int
child_wait(pid_t pid, int fd, double deadline, int kill_group,
    child_sink sink, void *ctx, int *status)
{
	struct pollfd pfd;
	siginfo_t si;
	size_t after = 0;
	double left;
	int ms, nap = 1, bad = 0, rc = CHILD_EXITED, pr;

	if (fd >= 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	deadline = child_bound(deadline);
	watch_group(WATCH_HELPER, pid);
	/* Kept by the watchdog too: a helper that stops cbexec does not
	 * outlive its deadline. */
	watch_deadline(WATCH_HELPER, SIGKILL, deadline, 0, WATCH_DEADLINE);
	sup_hold();
	for (;;) {
		ms = fd >= 0 ? SLICE_MS : nap;
		if (keep_fn != NULL) {
			keep_fn(keep_arg);
			if (ms > keep_every * 1000)
				ms = (int)(keep_every * 1000) + 1;
		}
		if (deadline > 0) {
			if ((left = deadline - mono_now()) <= 0) {
				rc = CHILD_TIMEOUT;
				break;
			}
			if (left * 1000 < ms)
				ms = (int)(left * 1000) + 1;
		}
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		pr = sup_poll(fd >= 0 ? &pfd : NULL, fd >= 0, ms);
		if (pr == -2) {
			rc = CHILD_INTERRUPTED;
			break;
		}
		if (fd < 0 && nap < 32)
			nap *= 2;
		if (pr > 0 && pump(fd, sink, ctx, &bad, &after, 0)) {
			close(fd);
			fd = -1;
		}
		si.si_pid = 0;
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG |
		    WNOWAIT) == 0 && si.si_pid == pid) {
			if (fd >= 0)
				pump(fd, sink, ctx, &bad, &after, 1);
			break;
		}
	}
	if (rc != CHILD_EXITED || kill_group) {
		/* The group first (what the helper started), then the pid
		 * in case the child had not reached setpgid yet. */
		kill(-pid, SIGKILL);
		if (rc != CHILD_EXITED)
			kill(pid, SIGKILL);
	}
	if (fd >= 0)
		close(fd);
	sup_release();
	/* Let go before the reap: until then the zombie holds its pid, so
	 * the watchdog can never signal a new process of that number. */
	watch_group(WATCH_HELPER, 0);
	if (child_reap(pid, status) == -1)
		return -1;
	if (rc == CHILD_EXITED && bad)
		return errno = ENOMEM, -1;
	return rc;
}
