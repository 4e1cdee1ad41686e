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

/*
 * state.c: read path whole (no link followed unless follow_symlinks, a
 * regular file in a trusted directory, owned as guard_file says) and check
 * that it can be cbexec's JSON text: 0 with the NUL-terminated text in
 * *out (*outlen bytes, caller frees), 1 when there is no file, -1 when it
 * is unreadable or corrupt, -2 when it is refused (a link, a FIFO, a
 * device, a directory, not trusted).
 */
int store_read_text(const char *path, int follow_symlinks, char **out,
    size_t *outlen, char *err, size_t errlen);

/* statesave.c: text to path atomically, as state_save() writes (temp
 * file, fsync, rename, fsync of the directory; no link followed; missing
 * directories made 0700). */
int store_write_text(const char *path, const char *text, char *err,
    size_t errlen);

#endif
