/* SPDX-License-Identifier: ISC */
/*
 * refloop: the reference for cbexec's per-run overhead in a loop.
 *
 *   refloop.bin [-S] [-t SECS] N SIZE FILE -- COMMAND [ARG...]
 *
 * N times: fork, exec COMMAND, wait for it; then replace FILE durably the
 * way cbexec saves its state (SPEC §6): write SIZE bytes to a temp file in
 * the same directory, fsync it, rename it over FILE, fsync the directory.
 * That is the least any supervisor must do per run to keep a crash-safe
 * record, so the ratio to it is cbexec's own bookkeeping.  bench/run.sh
 * passes SIZE = the size of cbexec's state file after the same loop.
 * -S leaves out both fsyncs, to show what they cost (diagnosis only).
 *
 * With N = 1 it is the floor for one invocation of a supervisor that
 * keeps a durable record: bench/run.sh sets it beside timeout(1).  -t
 * kills COMMAND with SIGTERM after SECS as timeout(1) does (a POSIX timer
 * started after the fork, delivering SIGALRM, whose handler sends the
 * signal), and the exit status is then 124.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t timed_out;
static volatile pid_t child;

static void
on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
	kill(child, SIGTERM);
}

/* Arm (SECS > 0) or disarm (0) timer T as a one-shot. */
static int
arm(timer_t t, double secs)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)secs;
	its.it_value.tv_nsec = (long)((secs - (double)its.it_value.tv_sec) * 1e9);
	return timer_settime(t, 0, &its, NULL);
}

int
main(int argc, char **argv)
{
	char tmp[4096], dirbuf[4096], *dir, *buf;
	long i, n;
	size_t size, off;
	ssize_t w;
	pid_t pid;
	int st, fd, dfd, sync = 1;
	double secs = 0;
	struct sigaction sa;
	struct sigevent ev;
	timer_t timer;

	if (argc > 1 && strcmp(argv[1], "-S") == 0) {
		sync = 0;
		argv++;
		argc--;
	}
	if (argc > 2 && strcmp(argv[1], "-t") == 0) {
		secs = atof(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc < 6 || strcmp(argv[4], "--") != 0) {
		fprintf(stderr, "usage: refloop [-S] [-t SECS] N SIZE FILE -- "
		    "COMMAND...\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGALRM;
	if (secs > 0 && timer_create(CLOCK_REALTIME, &ev, &timer) == -1) {
		perror("timer_create");
		return 1;
	}
	n = atol(argv[1]);
	size = (size_t)atol(argv[2]);
	if ((buf = malloc(size + 1)) == NULL)
		return 1;
	memset(buf, 'x', size);
	snprintf(dirbuf, sizeof(dirbuf), "%s", argv[3]);
	dir = dirname(dirbuf);
	for (i = 0; i < n; i++) {
		if ((pid = fork()) == -1)
			return 1;
		if (pid == 0) {
			execvp(argv[5], argv + 5);
			_exit(127);
		}
		child = pid;
		if (secs > 0 && arm(timer, secs) == -1) {
			perror("timer_settime");
			return 1;
		}
		while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
			;
		if (secs > 0)
			arm(timer, 0);
		snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", argv[3]);
		if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1) {
			perror(tmp);
			return 1;
		}
		for (off = 0; off < size; off += (size_t)w)
			if ((w = write(fd, buf + off, size - off)) <= 0) {
				perror("write");
				return 1;
			}
		if ((sync && fsync(fd) == -1) || close(fd) == -1 ||
		    rename(tmp, argv[3]) == -1) {
			perror(argv[3]);
			return 1;
		}
		if (!sync)
			continue;
		if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
		    fsync(dfd) == -1) {
			perror(dir);
			return 1;
		}
		close(dfd);
	}
	free(buf);
	if (timed_out)
		return 124;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
