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
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"

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
		_exit(127);
	if (out < 3 && (out = fcntl(out, F_DUPFD_CLOEXEC, 3)) == -1)
		_exit(127);
	/* Not O_CLOEXEC: with fd 0 closed in cbexec, nul is 0 itself. */
	if ((nul = open("/dev/null", O_RDWR)) == -1 ||
	    dup2(nul, 0) == -1 || dup2(out, 1) == -1 ||
	    (err == CHILD_ERR_NULL && dup2(nul, 2) == -1) ||
	    (err == CHILD_ERR_PIPE && dup2(out, 2) == -1))
		_exit(127);
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
	execvpe(argv[0], argv, envp);
	_exit(127);
}

pid_t
child_spawn(char *const argv[], char *const envp[], enum child_err err,
    int pgrp, int *fd)
{
	sigset_t all, old;
	pid_t pid, parent = getpid();
	int p[2], e;

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
