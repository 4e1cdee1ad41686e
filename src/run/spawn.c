/* SPDX-License-Identifier: ISC */
/*
 * Starting COMMAND, tini-style.  Signals are blocked across fork so that
 * no handler of cbexec's runs in the child; the child puts itself in its
 * own process group (or takes the terminal's foreground), restores the
 * mask and dispositions cbexec found, asks to die with its parent, and
 * execs.  An exec failure travels back as an errno over a close-on-exec
 * pipe: EOF on that pipe means the exec happened, so 126/127 are exact.
 *
 * cbexec is a child subreaper, so every descendant of a run either has a
 * living ancestor that is cbexec's child or is reparented to cbexec: "no
 * children and an empty process group" therefore means nothing of the run
 * is left.  Only when something is left do we walk /proc to name it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "core.h"
#include "spawn.h"

#define MAXSIGS 16

static sigset_t orig_mask;
static int saved_sigs[MAXSIGS], n_saved;
static int saved_ignored[MAXSIGS];

int
spawn_init(const int *sigs, int nsigs)
{
	struct sigaction sa;
	int i;

	sigprocmask(SIG_SETMASK, NULL, &orig_mask);
	for (i = 0; i < nsigs && i < MAXSIGS; i++) {
		sigaction(sigs[i], NULL, &sa);
		saved_sigs[i] = sigs[i];
		saved_ignored[i] = sa.sa_handler == SIG_IGN;
	}
	n_saved = i;
	/* Orphans of a run are reparented to us, not to init, so we can
	 * see and kill them when the run ends. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		return -1;
	return 0;
}

static void
child_restore_signals(void)
{
	struct sigaction sa;
	int i;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < n_saved; i++) {
		/* Signals inherited as ignored stay ignored (nohup, cron). */
		sa.sa_handler = saved_ignored[i] ? SIG_IGN : SIG_DFL;
		sigaction(saved_sigs[i], &sa, NULL);
	}
	sigprocmask(SIG_SETMASK, &orig_mask, NULL);
}

int
spawn_child(char **argv, char **envp, int fg_tty, int out, int err,
    pid_t *pid, int *exec_errno)
{
	sigset_t all, old;
	pid_t parent = getpid(), p;
	int ep[2], e = 0, status;
	ssize_t n;

	*exec_errno = 0;
	if (pipe2(ep, O_CLOEXEC) == -1)
		return -1;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	/* vfork: no page tables copied for a parent that maps libcrypto;
	 * the child only makes system calls with every signal blocked, then
	 * execs or _exits, as posix_spawn does. */
	p = vfork();
	if (p == -1) {
		e = errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(ep[0]);
		close(ep[1]);
		errno = e;
		return -1;
	}
	if (p == 0) {
		close(ep[0]);
		setpgid(0, 0);
		/* SIGTTOU is still blocked here, so a background process
		 * group may take the terminal without being stopped. */
		if (fg_tty)
			tcsetpgrp(STDIN_FILENO, getpid());
		/* A kill -9 of cbexec must not leave the command running;
		 * re-check the parent in case it died before prctl. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)
			_exit(CB_EXIT_NOTFOUND);
		/* Guarded by the watchdog, deadlines and all, before the
		 * command can stop or leave cbexec (watchdog.c). */
		watch_claim(WATCH_RUN);
		if (out != -1 && dup2(out, STDOUT_FILENO) == -1)
			goto fail;
		if (err != -1 && dup2(err, STDERR_FILENO) == -1)
			goto fail;
		if (out > STDERR_FILENO)
			close(out);
		if (err > STDERR_FILENO && err != out)
			close(err);
		child_restore_signals();
		stack_restore();
		execvpe(argv[0], argv, envp);
fail:
		e = errno;
		(void)!write(ep[1], &e, sizeof(e));
		_exit(e == ENOENT ? CB_EXIT_NOTFOUND : CB_EXIT_NOEXEC);
	}
	/* Also from the parent: whichever of the two runs first, the group
	 * exists before we ever signal it. */
	setpgid(p, p);
	close(ep[1]);
	do
		n = read(ep[0], &e, sizeof(e));
	while (n == -1 && errno == EINTR);
	close(ep[0]);
	*pid = p;
	if (n == (ssize_t)sizeof(e)) {
		*exec_errno = e ? e : EINVAL;
		/* The child is done; reap it here, its status says nothing. */
		while (waitpid(p, &status, 0) == -1 && errno == EINTR)
			;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}

/* pid's state letter from /proc/PID/stat and its parent; -1 if gone. */
static int
proc_stat(const char *pid, char *st, pid_t *ppid)
{
	char path[300], buf[512], *rp;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	/* comm may hold spaces and parentheses: parse after the last ')'. */
	if ((rp = strrchr(buf, ')')) == NULL ||
	    sscanf(rp + 1, " %c %d", st, ppid) != 2)
		return -1;
	return 0;
}

/*
 * The pids whose parent is us and that are not zombies (nor the
 * watchdog).  The kernel lists a thread's children in
 * /proc/self/task/TID/children; orphans reparented to us land on the main
 * thread, the only one that forks.  Without that file, every process in
 * /proc is looked at.
 */
static size_t
our_children(pid_t *out, size_t max)
{
	char path[64], buf[8192], *p, *end, num[16];
	struct dirent *d;
	pid_t self = getpid(), pid, ppid;
	size_t n = 0;
	ssize_t len;
	char st;
	DIR *dir;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)self);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		/* A list that fills the buffer may go on: walk /proc. */
		if (len >= 0 && (size_t)len < sizeof(buf) - 1) {
			buf[len] = '\0';
			for (p = buf; n < max; p = end) {
				pid = (pid_t)strtol(p, &end, 10);
				if (end == p)
					break;
				snprintf(num, sizeof(num), "%d", (int)pid);
				if (pid != watch_pid &&
				    proc_stat(num, &st, &ppid) == 0 &&
				    ppid == self && st != 'Z')
					out[n++] = pid;
			}
			return n;
		}
	}
	if ((dir = opendir("/proc")) == NULL)
		return 0;
	while (n < max && (d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		pid = (pid_t)atoi(d->d_name);
		if (pid != watch_pid && proc_stat(d->d_name, &st, &ppid) == 0 &&
		    ppid == self && st != 'Z')
			out[n++] = pid;
	}
	closedir(dir);
	return n;
}

static int
have_children(void)
{
	siginfo_t si;

	/* WNOWAIT: look without reaping, libev's SIGCHLD handler owns
	 * that.  ECHILD means no child at all, so nothing of the run is
	 * left anywhere (see the file comment). */
	memset(&si, 0, sizeof(si));
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1)
		return errno != ECHILD;
	if (si.si_pid == 0 && !watch_waitable)
		return 1;		/* children, none exited yet */
	/* Only zombies waiting for libev, or a forked watchdog: anything
	 * else alive? */
	{
		pid_t tmp[1];

		return our_children(tmp, 1) > 0;
	}
}

int
spawn_leftovers(pid_t pgid)
{
	if (pgid > 0 && kill(-pgid, 0) == 0)
		return 1;
	return have_children();
}

void
spawn_kill_leftovers(pid_t pgid, int sig)
{
	pid_t kids[256];
	size_t i, n;

	if (pgid > 0)
		kill(-pgid, sig);
	n = our_children(kids, sizeof(kids) / sizeof(kids[0]));
	for (i = 0; i < n; i++) {
		/* A daemon that called setsid() leads its own group;
		 * take its group with it. */
		if (getpgid(kids[i]) == kids[i])
			kill(-kids[i], sig);
		kill(kids[i], sig);
	}
}
