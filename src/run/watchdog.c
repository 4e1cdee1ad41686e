/* SPDX-License-Identifier: ISC */
/*
 * What survives a kill -9 of cbexec.  The command itself dies with it
 * (PR_SET_PDEATHSIG in spawn.c), but what the command started does not:
 * its processes are reparented to init, and cbexec, no longer there, can
 * neither see nor kill them.  So cbexec starts, before anything else, a
 * small watchdog: a process of its own session (no terminal signal
 * reaches it) that holds the read end of a pipe whose only writer is
 * cbexec, and is told the process group of each run (and of each helper)
 * as it starts and ends.  When the pipe reaches EOF -- cbexec is gone,
 * however it went -- the watchdog sends SIGKILL to the groups it was last
 * told of and exits.
 *
 * It is a child of cbexec that the run's "no child left" check passes
 * over (spawn.c), and that cbexec reaps on its way out (watch_stop), so
 * no zombie is left for an init that does not reap (a container's).  What a group kill cannot reach is a process that left the
 * run's group (setsid, setpgid) before cbexec died: while cbexec lives it
 * kills those too (spawn.c); after a kill -9 only a cgroup or a PID
 * namespace could find them, which an unprivileged cbexec does not have.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"

static int watch_fd = -1;
pid_t watch_pid;

static void __attribute__((noreturn))
watchdog(int rfd)
{
	static const int ignore[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT,
	    SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE, SIGUSR1, SIGUSR2 };
	struct sigaction sa;
	sigset_t none;
	pid_t group[WATCH_SLOTS], msg[2];
	ssize_t n;
	int fd, i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < (int)(sizeof(ignore) / sizeof(ignore[0])); i++)
		sigaction(ignore[i], &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	/* Hold nothing of cbexec's: not its stdout (a reader waiting for
	 * EOF), not its lock. */
	if ((fd = open("/dev/null", O_RDWR)) != -1) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	if (rfd != 3 && dup2(rfd, 3) == 3)
		rfd = 3;
	if (rfd == 3 && close_range(4, ~0U, 0) == -1)
		for (fd = 4; fd < 1024; fd++)
			close(fd);
	memset(group, 0, sizeof(group));
	for (;;) {
		n = read(rfd, msg, sizeof(msg));
		if (n == -1 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(msg))
			break;
		if (msg[0] >= 0 && msg[0] < WATCH_SLOTS)
			group[msg[0]] = msg[1];
	}
	for (i = 0; i < WATCH_SLOTS; i++)
		if (group[i] > 0)
			kill(-group[i], SIGKILL);
	_exit(0);
}

int
watch_start(void)
{
	int p[2];
	pid_t w;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((w = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (w == 0) {
		close(p[1]);
		watchdog(p[0]);
	}
	close(p[0]);
	/* Never block on it: a watchdog that is gone just stops hearing. */
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	watch_fd = p[1];
	watch_pid = w;
	return 0;
}

void
watch_stop(void)
{
	int st;

	if (watch_fd == -1)
		return;
	/* EOF with no group to kill: it exits, and is reaped here. */
	watch_group(WATCH_RUN, 0);
	watch_group(WATCH_HELPER, 0);
	close(watch_fd);
	watch_fd = -1;
	while (waitpid(watch_pid, &st, 0) == -1 && errno == EINTR)
		;
	watch_pid = 0;
}

void
watch_group(int slot, pid_t pgid)
{
	pid_t msg[2] = { slot, pgid };

	if (watch_fd != -1)
		(void)!write(watch_fd, msg, sizeof(msg));
}
