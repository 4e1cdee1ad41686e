/* SPDX-License-Identifier: ISC */
/*
 * Opening the files cbexec reads and writes (SPEC §6) so that nothing
 * planted at a path can hang it, redirect it or make it trust another
 * user's file.
 *
 * file_open() refuses a final symbolic link unless the caller follows
 * links, opens non-blocking (a FIFO then neither blocks open() nor any
 * read), and accepts only a regular file: a FIFO, device, socket or
 * directory at the path is refused before it is opened when lstat/stat
 * already says so (opening some devices has effects of its own), and again
 * on the descriptor, which is what counts.  file_trusted() is the owner
 * and mode rule of ssh's StrictModes: a file or directory cbexec keeps its
 * state in must belong to the effective uid or root and be writable by no
 * one else, a directory being allowed group or world write only with the
 * sticky bit (as /tmp has), which keeps others from renaming or removing
 * what we put there.  file_mkdirs() makes the directories a state file
 * goes into, 0700.  file_names() lists a directory for the layers that
 * must not walk one themselves (the driver: the store's seam).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"

int
file_open(const char *path, int flags, int mode, int follow)
{
	struct stat st;
	int fd, e;

	if ((follow ? stat(path, &st) : lstat(path, &st)) == 0 &&
	    !S_ISREG(st.st_mode)) {
		if (S_ISLNK(st.st_mode))
			return errno = ELOOP, -1;
		return -2;
	}
	fd = open(path, flags | O_CLOEXEC | O_NONBLOCK |
	    (follow ? 0 : O_NOFOLLOW), (mode_t)mode);
	if (fd == -1)
		return errno == ENXIO ? -2 : -1;
	if (fstat(fd, &st) == -1) {
		e = errno;
		close(fd);
		return errno = e, -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -2;
	}
	return fd;
}

const char *
file_why(int rc)
{
	if (rc == -2)
		return "not a regular file";
	if (errno == ELOOP)
		return "is a symbolic link";
	return strerror(errno);
}

int
file_trusted(const struct stat *st, char *why, size_t len)
{
	struct passwd *pw;
	uid_t euid = geteuid();
	mode_t w = S_IWGRP | S_IWOTH;

	if (st->st_uid != euid && st->st_uid != 0) {
		pw = getpwuid(st->st_uid);
		snprintf(why, len, "owned by %s (uid %lu), not by you",
		    pw != NULL ? pw->pw_name : "another user",
		    (unsigned long)st->st_uid);
		return -1;
	}
	if ((st->st_mode & w) != 0 &&
	    !(S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))) {
		snprintf(why, len, "writable by %s (mode %04o)",
		    (st->st_mode & w) == w ? "group and others" :
		    (st->st_mode & S_IWGRP) ? "its group" : "others",
		    (unsigned)(st->st_mode & 07777));
		return -1;
	}
	return 0;
}

int
file_dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');
	int n;

	if (slash == NULL)
		n = snprintf(dir, len, ".");
	else if (slash == path)
		n = snprintf(dir, len, "/");
	else
		n = snprintf(dir, len, "%.*s", (int)(slash - path), path);
	if (n < 0 || (size_t)n >= len)
		return errno = ENAMETOOLONG, -1;
	return 0;
}

ssize_t
file_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	size_t done = 0;
	ssize_t w;

	while (done < n) {
		w = write(fd, c + done, n - done);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1)
			return done > 0 ? (ssize_t)done : -1;
		if (w == 0)
			return errno = ENOSPC, (ssize_t)done;
		done += (size_t)w;
	}
	return (ssize_t)done;
}

/*
 * Started with fd 0, 1 or 2 closed, the next open() or pipe() would take
 * that number: the lock file or libev's epoll fd would then receive our
 * messages or the command's output.  Each closed one gets /dev/null opened
 * the wrong way round (0 for writing, 1 and 2 for reading), so it stays as
 * useless as a closed descriptor -- a write to it fails with EBADF -- and
 * holds its number.  The command is then given the same placeholder,
 * not a pipe of ours, so it finds its output closed as it would without
 * cbexec instead of being told its writes succeeded.
 */
static int std_closed;		/* bit fd: fd was closed at start */

void
file_std_fds(void)
{
	int fd;

	for (fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
			if (open("/dev/null", fd == 0 ? O_WRONLY :
			    O_RDONLY) != fd)
				return;
			std_closed |= 1 << fd;
		}
}

int
file_std_closed(int fd)
{
	return (std_closed >> fd) & 1;
}

int
file_mkdirs(const char *path, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	struct stat st;
	char *p, *slash;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENAMETOOLONG));
		return -1;
	}
	if ((slash = strrchr(buf, '/')) == NULL)
		return 0;
	*slash = '\0';
	if (buf[0] == '\0' || (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)))
		return 0;
	/* Walk down from the top; existing directories are left as they are. */
	for (p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		if (p[-1] != '/') {
			char c = *p;

			*p = '\0';
			if (mkdir(buf, 0700) == -1 && (errno != EEXIST ||
			    stat(buf, &st) == -1 || !S_ISDIR(st.st_mode))) {
				int e = errno == EEXIST ? ENOTDIR : errno;

				snprintf(err, errlen, "%s: cannot create "
				    "directory: %s", buf, strerror(e));
				return -1;
			}
			*p = c;
		}
		if (*p == '\0')
			break;
	}
	return 0;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **
file_names(int dirfd, const char *suffix)
{
	size_t n = 0, cap = 0, sl = strlen(suffix), len;
	char **v = NULL, **nv;
	struct dirent *e;
	DIR *d;
	int fd, saved;

	/* A descriptor of its own: readdir moves its offset, which a dup
	 * would share with the caller's. */
	if ((fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return NULL;
	if ((d = fdopendir(fd)) == NULL) {
		saved = errno;
		close(fd);
		errno = saved;
		return NULL;
	}
	for (errno = 0; (e = readdir(d)) != NULL; errno = 0) {
		len = strlen(e->d_name);
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    len < sl || strcmp(e->d_name + len - sl, suffix) != 0)
			continue;
		if (n + 1 >= cap) {
			cap = cap > 0 ? 2 * cap : 16;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL)
				goto fail;
			v = nv;
		}
		if ((v[n] = strdup(e->d_name)) == NULL)
			goto fail;
		v[++n] = NULL;
	}
	if (errno != 0 || (v == NULL && (v = calloc(1, sizeof(*v))) == NULL))
		goto fail;
	closedir(d);
	qsort(v, n, sizeof(*v), by_name);
	return v;
fail:
	saved = errno != 0 ? errno : ENOMEM;
	closedir(d);
	file_names_free(v);
	errno = saved;
	return NULL;
}

void
file_names_free(char **names)
{
	size_t i;

	for (i = 0; names != NULL && names[i] != NULL; i++)
		free(names[i]);
	free(names);
}
