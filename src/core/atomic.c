/* SPDX-License-Identifier: ISC */
/*
 * Replacing a file so that a crash at any instant leaves the old file or
 * the new one, never a mix (SPEC §6): every file cbexec rewrites whole --
 * the state, an account's gate, the --metrics textfile, an approval -- is
 * written here.
 *
 * The bytes go to a temp file ".BASE.tmp.XXXXXX" beside the target (the
 * same filesystem, so the rename is atomic; hidden and not ending in .prom,
 * so node_exporter's textfile collector never reads a partial one), made
 * with the caller's mode, written, fsynced and closed -- NFS reports a
 * failed write-back only at close -- then renamed over the target.  With
 * ATOMIC_SYNC_DIR the directory is fsynced too, so the rename itself
 * survives a crash.  On a failure before the rename the temp file is
 * removed and the target is as it was.
 *
 * A writer killed between mkostemp() and rename() leaves its temp file
 * behind; with ATOMIC_STALE those beside the target (regular files of the
 * effective uid with the target's prefix and six more characters) are
 * removed first.  Only a caller that holds the lock the target is written
 * under may ask: no live writer then owns one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"

/*
 * The directory is read without touching its access time (O_NOATIME, ours
 * to ask for in a directory of ours): under relatime the read would dirty
 * its inode, and the fsync of the new file would write that inode again.
 */
static void
remove_stale(const char *dir, const char *prefix)
{
	size_t plen = strlen(prefix);
	struct dirent *d;
	struct stat st;
	DIR *dp;
	int fd;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOATIME)) ==
	    -1 && errno == EPERM)
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		return;
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((d = readdir(dp)) != NULL)
		if (strncmp(d->d_name, prefix, plen) == 0 &&
		    strlen(d->d_name) == plen + 6 &&
		    fstatat(dirfd(dp), d->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid())
			unlinkat(dirfd(dp), d->d_name, 0);
	closedir(dp);
}

int
atomic_write(const char *path, const void *data, size_t len, mode_t mode,
    int flags)
{
	char dir[PATH_MAX], tmp[PATH_MAX], prefix[NAME_MAX + 8];
	const char *base = strrchr(path, '/');
	int fd, dfd, e;

	base = base != NULL ? base + 1 : path;
	if (base[0] == '\0')
		return errno = EISDIR, -1;
	if (file_dir_of(path, dir, sizeof(dir)) == -1)
		return -1;
	if ((size_t)snprintf(prefix, sizeof(prefix), ".%s.tmp.", base) >=
	    sizeof(prefix) || (size_t)snprintf(tmp, sizeof(tmp), "%s/%sXXXXXX",
	    dir, prefix) >= sizeof(tmp))
		return errno = ENAMETOOLONG, -1;
	if (flags & ATOMIC_STALE)
		remove_stale(dir, prefix);

	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1)
		return -1;
	/* mkostemp() makes it 0600; the caller's mode is what it gets. */
	if (fchmod(fd, mode) == -1 ||
	    file_write_all(fd, data, len) != (ssize_t)len || fsync(fd) == -1) {
		e = errno;
		close(fd);
		goto fail;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		e = errno;
		goto fail;
	}
	if (!(flags & ATOMIC_SYNC_DIR))
		return 0;

	/* The rename is durable only once the directory entry is on disk. */
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -2;
	/* Some filesystems cannot fsync a directory; that is not our error. */
	if (fsync(dfd) == -1 && errno != EINVAL && errno != ENOTSUP) {
		e = errno;
		close(dfd);
		return errno = e, -2;
	}
	close(dfd);
	return 0;
fail:
	unlink(tmp);
	return errno = e, -1;
}
