/* SPDX-License-Identifier: ISC */
/*
 * Which file a state path names, and whether cbexec may trust it (SPEC
 * §6): the state file, its lock and the directory they live in must
 * belong to the effective uid or root and be writable by no one else
 * (file_trusted, after ssh's StrictModes), or another local user could
 * re-arm a tripped circuit or put words into the command's environment.
 * With --follow-symlinks the link chain is resolved here, so the lock,
 * the checks and the write all concern the file the chain ends at.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "guard.h"

#define MAX_HOPS	40

int
resolve_link(const char *path, char *out, size_t outlen)
{
	char link[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	ssize_t n;
	int hops, w;

	if (snprintf(out, outlen, "%s", path) >= (int)outlen)
		return errno = ENAMETOOLONG, -1;
	for (hops = 0;; hops++) {
		if (lstat(out, &st) == -1)
			return errno == ENOENT ? 0 : -1;
		if (!S_ISLNK(st.st_mode))
			return 0;
		if (hops == MAX_HOPS)
			return errno = ELOOP, -1;
		if ((n = readlink(out, link, sizeof(link) - 1)) == -1)
			return -1;
		link[n] = '\0';
		if (link[0] == '/' || strchr(out, '/') == NULL)
			w = snprintf(out, outlen, "%s", link);
		else {
			/* Relative to the link's own directory. */
			if (file_dir_of(out, dir, sizeof(dir)) == -1)
				return -1;
			w = snprintf(out, outlen, "%s/%s", dir, link);
		}
		if (w < 0 || (size_t)w >= outlen)
			return errno = ENAMETOOLONG, -1;
	}
}

int
guard_dir(const char *path, char *err, size_t errlen)
{
	char dir[PATH_MAX], why[CB_WHYLEN];
	struct stat st;

	if (file_dir_of(path, dir, sizeof(dir)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (stat(dir, &st) == -1)
		return 0;	/* created 0700 by whoever writes first */
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", dir);
		return -1;
	}
	if (file_trusted(&st, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "state directory %s: %s; not trusted",
		    dir, why);
		return -1;
	}
	return 0;
}

int
guard_file(const char *path, const struct stat *st, char *err,
    size_t errlen)
{
	char why[CB_WHYLEN];

	if (file_trusted(st, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s: %s; not trusted", path, why);
		return -1;
	}
	return 0;
}
