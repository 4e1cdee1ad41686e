/* SPDX-License-Identifier: ISC */
/*
 * abrun: run two commands alternately and print one line per run.
 *
 *   abrun.bin [-n N] [-w W] [-T SECS] [-s STAMP] [-o OUT] -- A... [::: B...]
 *
 * Each repetition runs A then B (B then A on odd repetitions, so neither
 * always runs on a cache warmed by the other), each exec'd directly (no
 * shell unless the command is one), timed with CLOCK_MONOTONIC from just
 * before fork to wait4's return.  W warm-up repetitions come first and
 * are not printed.  With -T, no new repetition starts once SECS have gone
 * by since the first measured one, after at least 3 (so a slow disk or a
 * busy machine cannot make `make bench` take forever).  The commands keep abrun's stdin, stdout and stderr;
 * the results go to OUT (default stdout), one line per measured run:
 *
 *   A|B  wall_ns  maxrss_kib  exit_status  stamp_ns  stamp2_ns  cpu_ns
 *
 * maxrss is wait4's ru_maxrss: the largest RSS of the process or any
 * descendant it waited for.  With -s STAMP the file is emptied before each
 * run; stamp_ns and stamp2_ns are the first two CLOCK_MONOTONIC nanosecond
 * counts the run wrote into it (sleeper.bin writes when SIGTERM came and
 * when it started) minus the launch time, else -1.
 * cpu_ns is user + system CPU time of the process and the children it
 * reaped (wait4's rusage), a measure the other tenants of a shared machine
 * disturb less than wall time.  Medians are computed by bench/run.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void
read_stamp(const char *path, long long *s1, long long *s2)
{
	char buf[128];
	ssize_t n;
	int fd;

	*s1 = *s2 = -1;
	if ((fd = open(path, O_RDONLY)) == -1)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, "%lld %lld", s1, s2) < 1)
		*s1 = -1;
}

static FILE *out;

static void
run(const char *label, char **argv, const char *stamp, int print)
{
	struct rusage ru;
	long long t0, t1, s = -1, s2 = -1;
	pid_t pid;
	int st, fd;

	if (stamp != NULL) {
		if ((fd = open(stamp, O_WRONLY | O_CREAT | O_TRUNC, 0600)) != -1)
			close(fd);
	}
	t0 = now_ns();
	if ((pid = fork()) == -1) {
		perror("abrun: fork");
		exit(1);
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	while (wait4(pid, &st, 0, &ru) == -1)
		if (errno != EINTR) {
			perror("abrun: wait4");
			exit(1);
		}
	t1 = now_ns();
	if (stamp != NULL) {
		read_stamp(stamp, &s, &s2);
		s = s > 0 ? s - t0 : -1;
		s2 = s2 > 0 ? s2 - t0 : -1;
	}
	if (!print)
		return;
	fprintf(out, "%s %lld %ld %d %lld %lld %lld\n", label, t1 - t0,
	    ru.ru_maxrss, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
	    s, s2, (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
	    1000000000LL + (long long)(ru.ru_utime.tv_usec +
	    ru.ru_stime.tv_usec) * 1000LL);
	fflush(out);
}

int
main(int argc, char **argv)
{
	char **a, **b = NULL, *stamp = NULL;
	int n = 10, w = 1, c, i;
	double budget = 0;
	long long start = 0;

	out = stdout;
	while ((c = getopt(argc, argv, "+n:w:T:s:o:")) != -1) {
		switch (c) {
		case 'n': n = atoi(optarg); break;
		case 'w': w = atoi(optarg); break;
		case 'T': budget = atof(optarg); break;
		case 's': stamp = optarg; break;
		case 'o':
			if ((out = fopen(optarg, "w")) == NULL) {
				perror(optarg);
				return 1;
			}
			break;
		default:
			fprintf(stderr, "usage: abrun [-n N] [-w W] [-T SECS] "
			    "[-s STAMP] [-o OUT] -- A... [::: B...]\n");
			return 2;
		}
	}
	if (optind >= argc)
		return 2;
	a = argv + optind;
	for (i = optind; i < argc; i++)
		if (strcmp(argv[i], ":::") == 0) {
			argv[i] = NULL;
			b = argv + i + 1;
			break;
		}
	for (i = 0; i < w + n; i++) {
		if (i == w)
			start = now_ns();
		if (budget > 0 && i >= w + 3 &&
		    (now_ns() - start) / 1e9 > budget)
			break;
		if (b == NULL || i % 2 == 0) {
			run("A", a, stamp, i >= w);
			if (b != NULL)
				run("B", b, stamp, i >= w);
		} else {
			run("B", b, stamp, i >= w);
			run("A", a, stamp, i >= w);
		}
	}
	return 0;
}
