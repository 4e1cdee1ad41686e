/* SPDX-License-Identifier: ISC */
/*
 * sleeper: sleep(10), but on SIGTERM write two CLOCK_MONOTONIC times in
 * nanoseconds to $BENCH_STAMP, when the signal came and when main()
 * started, then die of SIGTERM as sleep(1) would.  bench/abrun.bin
 * subtracts its launch time from both.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct timespec start;

static void
on_term(int sig)
{
	struct timespec ts;
	char buf[64];
	const char *p = getenv("BENCH_STAMP");
	int fd, n;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	n = snprintf(buf, sizeof(buf), "%lld %lld\n",
	    (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec,
	    (long long)start.tv_sec * 1000000000LL + start.tv_nsec);
	if (p != NULL && (fd = open(p, O_WRONLY | O_TRUNC)) != -1) {
		(void)!write(fd, buf, (size_t)n);
		close(fd);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

int
main(void)
{
	clock_gettime(CLOCK_MONOTONIC, &start);
	signal(SIGTERM, on_term);
	sleep(10);
	return 0;
}
