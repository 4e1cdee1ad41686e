/* SPDX-License-Identifier: ISC */
/*
 * Writing the state file (SPEC §6) so that a crash at any instant leaves
 * the old file or the new one, never a mix.
 *
 * The JSON goes to a temp file ".NAME.tmp.XXXXXX" beside the target (same
 * filesystem, so the rename is atomic), created 0600, fsynced and closed,
 * then renamed over the target; finally the directory is fsynced so the
 * rename itself survives a crash.  On any failure the temp file is
 * removed and the old file is untouched.  Missing parent directories are
 * created 0700.  With --follow-symlinks the link chain is resolved first
 * and the file it ends at is replaced, not the link; without it a link at
 * the path is refused.
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
#include "store.h"
#include "backend.h"
#include "guard.h"

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Remove ".BASE.tmp.XXXXXX" files a writer killed mid-save left behind.
 * Every caller holds the circuit's lock, so no live writer owns one; once
 * per process is enough, a loop of runs need not read the directory again.
 * The directory is read without touching its access time (O_NOATIME, ours
 * to ask for): under relatime the read would dirty its inode, and the
 * fsync of the new state file would write that inode once more.
 */
static void
remove_stale_temps(const char *dir, const char *base)
{
	static int done;
	char prefix[NAME_MAX + 8];
	size_t plen;
	struct dirent *d;
	DIR *dp;
	int fd;

	if (done)
		return;
	done = 1;
	plen = (size_t)snprintf(prefix, sizeof(prefix), ".%s.tmp.", base);
	if (plen >= sizeof(prefix))
		return;
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
		    strlen(d->d_name) == plen + 6)
			unlinkat(dirfd(dp), d->d_name, 0);
	closedir(dp);
}

/*
 * text to path atomically (the file's header comment); with stale, the
 * temp files a killed writer left beside it are removed first.
 */
static int
write_text(const char *path, int follow_symlinks, const char *text,
    int stale, char *err, size_t errlen)
{
	char target[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX];
	const char *base, *slash;
	struct stat st;
	int fd = -1, dfd, e;

	if (follow_symlinks) {
		if (resolve_link(path, target, sizeof(target)) == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
	} else {
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
			snprintf(err, errlen, "%s: is a symbolic link "
			    "(use --follow-symlinks)", path);
			return -1;
		}
		if (snprintf(target, sizeof(target), "%s", path) >=
		    (int)sizeof(target)) {
			snprintf(err, errlen, "%s: %s", path,
			    strerror(ENAMETOOLONG));
			return -1;
		}
	}
	if (file_mkdirs(target, err, errlen) == -1 ||
	    guard_dir(target, err, errlen) == -1)
		return -1;
	/* Only a regular file of ours is ever replaced: a FIFO, a device or
	 * a directory at the path stays as it is. */
	if (lstat(target, &st) == 0 && (!S_ISREG(st.st_mode) ||
	    guard_file(target, &st, err, errlen) == -1)) {
		if (!S_ISREG(st.st_mode))
			snprintf(err, errlen, "%s: not a regular file", target);
		return -1;
	}
	if ((slash = strrchr(target, '/')) != NULL) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - target),
		    target);
		if (dir[0] == '\0')
			strcpy(dir, "/");
		base = slash + 1;
	} else {
		strcpy(dir, ".");
		base = target;
	}
	if (base[0] == '\0') {
		snprintf(err, errlen, "%s: %s", path, strerror(EISDIR));
		return -1;
	}
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.tmp.XXXXXX", dir, base) >=
	    (int)sizeof(tmp)) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENAMETOOLONG));
		return -1;
	}
	if (stale)
		remove_stale_temps(dir, base);

	/* mkostemp creates 0600 already; fchmod states the intent anyway. */
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1) {
		tmp[0] = '\0';
		goto fail;
	}
	if (fchmod(fd, 0600) == -1 ||
	    write_all(fd, text, strlen(text)) == -1 ||
	    fsync(fd) == -1)
		goto fail;
	/* NFS reports a failed write-back (EIO, ENOSPC) only at close. */
	e = close(fd);
	fd = -1;
	if (e == -1 || rename(tmp, target) == -1)
		goto fail;
	tmp[0] = '\0';

	/* The rename is durable only once the directory entry is on disk. */
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: sync of directory failed: %s", path,
		    strerror(errno));
		return -1;
	}
	/* Some filesystems cannot fsync a directory; that is not our error. */
	if (fsync(dfd) == -1 && errno != EINVAL && errno != ENOTSUP) {
		snprintf(err, errlen, "%s: sync of directory failed: %s", path,
		    strerror(errno));
		close(dfd);
		return -1;
	}
	close(dfd);
	return 0;
fail:
	e = errno;
	if (fd != -1)
		close(fd);
	if (tmp[0] != '\0')
		unlink(tmp);
	snprintf(err, errlen, "%s: write failed: %s", path, strerror(e));
	return -1;
}

int
store_write_text(const char *path, const char *text, char *err,
    size_t errlen)
{
	return write_text(path, 0, text, 0, err, errlen);
}

int
state_save(const char *path, int follow_symlinks, const struct cb_state *s,
    char *err, size_t errlen)
{
	char *text = NULL;
	int rc;

	if ((text = state_text(s)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	/* Never write what the loader would refuse: a state grown past its
	 * size limit (a long --history-size of long messages) loses its
	 * oldest history events until it fits. */
	if (strlen(text) > (size_t)MAX_STATE_SIZE) {
		struct cb_state t = *s;
		size_t len = strlen(text), drop;

		while (text != NULL && len > (size_t)MAX_STATE_SIZE &&
		    t.n_history > 0) {
			/* In proportion to the excess, oldest first. */
			drop = (size_t)((double)t.n_history * (double)(len -
			    (size_t)MAX_STATE_SIZE) / (double)len) + 1;
			if (drop > t.n_history)
				drop = t.n_history;
			t.history += drop;
			t.n_history -= drop;
			free(text);
			if ((text = state_text(&t)) != NULL)
				len = strlen(text);
		}
		if (text == NULL) {
			snprintf(err, errlen, "%s: out of memory", path);
			return -1;
		}
		if (len > (size_t)MAX_STATE_SIZE) {
			snprintf(err, errlen, "%s: state larger than %ld bytes "
			    "even without history; not written", path,
			    MAX_STATE_SIZE);
			free(text);
			return -1;
		}
	}
	rc = write_text(path, follow_symlinks, text, 1, err, errlen);
	free(text);
	return rc;
}
