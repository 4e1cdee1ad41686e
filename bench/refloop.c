/*
 * refloop: the reference for cbexec's per-run overhead in a loop.
 *
 *   refloop.bin [-S] N SIZE FILE -- COMMAND [ARG...]
 *
 * N times: fork, exec COMMAND, wait for it; then replace FILE durably the
 * way cbexec saves its state (SPEC §6): write SIZE bytes to a temp file in
 * the same directory, fsync it, rename it over FILE, fsync the directory.
 * That is the least any supervisor must do per run to keep a crash-safe
 * record, so the ratio to it is cbexec's own bookkeeping.  bench/run.sh
 * passes SIZE = the size of cbexec's state file after the same loop.
 * -S leaves out both fsyncs, to show what they cost (diagnosis only).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	char tmp[4096], dirbuf[4096], *dir, *buf;
	long i, n;
	size_t size, off;
	ssize_t w;
	pid_t pid;
	int st, fd, dfd, sync = 1;

	if (argc > 1 && strcmp(argv[1], "-S") == 0) {
		sync = 0;
		argv++;
		argc--;
	}
	if (argc < 6 || strcmp(argv[4], "--") != 0) {
		fprintf(stderr, "usage: refloop N SIZE FILE -- COMMAND...\n");
		return 2;
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
		while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
			;
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
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
