/* SPDX-License-Identifier: ISC */
/*
 * mktree: make DIR/dNN/dNN/fNN.txt with N empty files, 100 per directory
 * (100 000 files: 10 top directories of 100 directories of 100 files).
 *
 *   mktree.bin DIR N
 *
 * Empty, because both cbexec's files fingerprint and git status look at
 * metadata only (lstat), and because on a disk mounted with discard every
 * data block costs again when the tree is deleted; git stores one blob.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	char path[4096];
	long n, i;
	int fd;

	if (argc != 3)
		return 2;
	n = atol(argv[2]);
	mkdir(argv[1], 0755);
	for (i = 0; i < n; i++) {
		if (i % 10000 == 0) {
			snprintf(path, sizeof(path), "%s/d%02ld", argv[1],
			    i / 10000);
			mkdir(path, 0755);
		}
		if (i % 100 == 0) {
			snprintf(path, sizeof(path), "%s/d%02ld/d%02ld",
			    argv[1], i / 10000, i / 100 % 100);
			mkdir(path, 0755);
		}
		snprintf(path, sizeof(path), "%s/d%02ld/d%02ld/f%02ld.txt",
		    argv[1], i / 10000, i / 100 % 100, i % 100);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1) {
			perror(path);
			return 1;
		}
		close(fd);
	}
	return 0;
}
