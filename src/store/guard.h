/* SPDX-License-Identifier: ISC */
/*
 * Shared by the files of store/ (guard.c): which file a state path
 * really names, and whether its directory and the file may be trusted.
 */
#ifndef CBEXEC_STORE_GUARD_H
#define CBEXEC_STORE_GUARD_H

#include <stddef.h>
#include <sys/stat.h>

/* The largest state file the loader reads (a real one is a few hundred
 * KiB); the writer never writes a larger one. */
#define MAX_STATE_SIZE	(16L * 1024 * 1024)

/* path's symbolic links followed to the file they end at (which may not
 * exist yet) in out; 0 / -1 with errno. */
int resolve_link(const char *path, char *out, size_t outlen);

/* The directory of path, if it exists, is a directory we may trust
 * (file_trusted): 0, or -1 with "DIR: why" in err. */
int guard_dir(const char *path, char *err, size_t errlen);

/* The file path, opened as st says, may be trusted: 0, or -1 with
 * "PATH: why" in err. */
int guard_file(const char *path, const struct stat *st, char *err,
    size_t errlen);

#endif
