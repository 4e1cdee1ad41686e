/* SPDX-License-Identifier: ISC */
/*
 * An LD_PRELOAD shim for t/0510-diskfault.t: makes writes to one file fail
 * the way a full or broken disk does, so the test can check that cbexec
 * keeps the old state file and says why.
 *
 *   FAULT_ON_PATH=SUBSTR  the file descriptors opened on a path containing
 *                         SUBSTR are the faulty ones; "SUBSTR$" means a
 *                         path ending in SUBSTR (a directory, say)
 *   FAULT_ERRNO=ENOSPC    or EIO, EDQUOT, EROFS (default ENOSPC)
 *   FAULT_OP=write        which call fails: write, fsync or close; or
 *                         short: the first write to a faulty descriptor
 *                         writes half (a disk filling up) and every later
 *                         one fails
 *
 * Descriptors are recorded by wrapping open/openat and mkostemp/mkstemp:
 * glibc's mkostemp opens through an internal symbol, so wrapping open alone
 * would never see the state file's temp file.  Only calls cbexec itself
 * makes through the PLT are affected; nothing inside libc is.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* Built with the project's CPPFLAGS, whose pkg-config part may say
 * -D_FILE_OFFSET_BITS=64: that makes <fcntl.h> rename open to open64,
 * and the two definitions below would be one symbol defined twice.  Each
 * is defined here under its own name. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define MAXFD 4096

static char faulty[MAXFD];

static const char *
want(void)
{
	const char *s = getenv("FAULT_ON_PATH");

	return s != NULL && *s != '\0' ? s : NULL;
}

static int
fault_errno(void)
{
	const char *e = getenv("FAULT_ERRNO");

	if (e == NULL || strcmp(e, "ENOSPC") == 0)
		return ENOSPC;
	if (strcmp(e, "EIO") == 0)
		return EIO;
	if (strcmp(e, "EDQUOT") == 0)
		return EDQUOT;
	if (strcmp(e, "EROFS") == 0)
		return EROFS;
	return ENOSPC;
}

static int
fault_op(const char *op)
{
	const char *o = getenv("FAULT_OP");

	return strcmp(o != NULL && *o != '\0' ? o : "write", op) == 0;
}

static int
matches(const char *path)
{
	const char *w = want();
	size_t n, p;

	if (w == NULL || path == NULL)
		return 0;
	n = strlen(w);
	if (n > 1 && w[n - 1] == '$') {
		p = strlen(path);
		return p >= n - 1 && strncmp(path + p - (n - 1), w, n - 1) == 0;
	}
	return strstr(path, w) != NULL;
}

static int
track(int fd, const char *path)
{
	if (fd >= 0 && fd < MAXFD)
		faulty[fd] = matches(path);
	return fd;
}

static int
is_faulty(int fd)
{
	return fd >= 0 && fd < MAXFD && faulty[fd];
}

/* The next definition of name, typed as libc declares it. */
#define REAL(name) \
	static __typeof__(&name) real_##name; \
	if (real_##name == NULL) \
		real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

static mode_t
mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ?
	    (mode_t)va_arg(ap, int) : 0;
}

int
open(const char *path, int flags, ...)
{
	REAL(open);
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = mode_arg(flags, ap);
	va_end(ap);
	return track(real_open(path, flags, m), path);
}

int
open64(const char *path, int flags, ...)
{
	REAL(open64);
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = mode_arg(flags, ap);
	va_end(ap);
	return track(real_open64(path, flags, m), path);
}

int
openat(int dfd, const char *path, int flags, ...)
{
	REAL(openat);
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = mode_arg(flags, ap);
	va_end(ap);
	return track(real_openat(dfd, path, flags, m), path);
}

int
openat64(int dfd, const char *path, int flags, ...)
{
	REAL(openat64);
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = mode_arg(flags, ap);
	va_end(ap);
	return track(real_openat64(dfd, path, flags, m), path);
}

int
mkostemp(char *tmpl, int flags)
{
	REAL(mkostemp);
	return track(real_mkostemp(tmpl, flags), tmpl);
}

int
mkostemp64(char *tmpl, int flags)
{
	REAL(mkostemp64);
	return track(real_mkostemp64(tmpl, flags), tmpl);
}

int
mkstemp(char *tmpl)
{
	REAL(mkstemp);
	return track(real_mkstemp(tmpl), tmpl);
}

int
mkstemp64(char *tmpl)
{
	REAL(mkstemp64);
	return track(real_mkstemp64(tmpl), tmpl);
}

ssize_t
write(int fd, const void *p, size_t n)
{
	static int shortened;

	REAL(write);
	if (is_faulty(fd) && fault_op("short")) {
		if (!shortened && n > 1) {
			shortened = 1;
			return real_write(fd, p, n / 2);
		}
		errno = fault_errno();
		return -1;
	}
	if (is_faulty(fd) && fault_op("write")) {
		errno = fault_errno();
		return -1;
	}
	return real_write(fd, p, n);
}

int
fsync(int fd)
{
	REAL(fsync);
	if (is_faulty(fd) && fault_op("fsync")) {
		errno = fault_errno();
		return -1;
	}
	return real_fsync(fd);
}

int
fdatasync(int fd)
{
	REAL(fdatasync);
	if (is_faulty(fd) && fault_op("fsync")) {
		errno = fault_errno();
		return -1;
	}
	return real_fdatasync(fd);
}

/* As NFS does: the descriptor is gone, and the write-back error shows. */
int
close(int fd)
{
	REAL(close);
	int bad = is_faulty(fd), rc;

	if (fd >= 0 && fd < MAXFD)
		faulty[fd] = 0;
	rc = real_close(fd);
	if (bad && rc == 0 && fault_op("close")) {
		errno = fault_errno();
		return -1;
	}
	return rc;
}
