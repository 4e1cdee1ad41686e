/* SPDX-License-Identifier: ISC */
/*
 * The store (SPEC §6): the circuit's state file, JSON via cJSON, written
 * atomically, guarded by an flock on FILE.lock.  Functions return 0 on success and -1 on failure
 * with a one-line reason in err (no "cbexec:" prefix, names the file).
 */
#ifndef CBEXEC_STORE_H
#define CBEXEC_STORE_H

#include <stddef.h>

#include "breaker.h"

#define STATE_VERSION 1

struct cJSON;

/*
 * Load path into *s (which must not be initialised).  A missing file gives
 * a fresh CLOSED state named name and returns 1.  Corrupt, unreadable or
 * wrong types: -1 (a reset may move such a file aside).  A version newer
 * than this cbexec's, a symlink without follow_symlinks, a FIFO, device or
 * directory at the path, or a file or directory not trusted (owned by
 * someone else, writable by others): -2 (refused, never moved aside).
 * Loading moves no counter.
 */
int state_load(const char *path, int follow_symlinks, const char *name,
    struct cb_state *s, char *err, size_t errlen);

/*
 * Load an existing state file (a missing one is an error here) into *s,
 * and hand back its parsed JSON in *j (the caller frees both) for members
 * this cbexec does not keep in struct cb_state.  Returns as state_load.
 */
int state_load_json(const char *path, int follow_symlinks, struct cb_state *s,
    struct cJSON **j, char *err, size_t errlen);

/*
 * Write s to path atomically: temp file in the same directory (0600),
 * fsync, rename, fsync of the directory.  Missing parent directories are
 * created 0700.  On failure the old file is untouched.
 */
int state_save(const char *path, int follow_symlinks,
    const struct cb_state *s, char *err, size_t errlen);

/* The state as JSON text with SPEC §6 field names, ending in a newline
 * (caller frees; NULL when out of memory). */
char *state_text(const struct cb_state *s);
/* The same, parsed into a cJSON object (caller frees). */
struct cJSON *state_to_json(const struct cb_state *s);
/* Fill *s from a cJSON object parsed from valid UTF-8 (state_load
 * checks); -1 with a reason on a bad field, -2 for a newer version. */
int state_from_json(const struct cJSON *j, struct cb_state *s,
    char *err, size_t errlen);
/* n history events as a JSON array, one per line, ending in a newline
 * (for --history --json; caller frees; NULL when out of memory). */
char *events_text(const struct cb_event *e, size_t n);

/*
 * Take the circuit's lock, an flock on "path.lock" (with follow_symlinks,
 * on "TARGET.lock" of the file the links end at) opened O_CLOEXEC,
 * created 0600, checked to be trusted and, once held, to be the file at
 * that path.  wait < 0 waits forever, 0 fails at once, > 0 waits that
 * many seconds, napping through nap(seconds) (NULL: nanosleep), which
 * returns non-zero to give up.  Returns the lock fd, -2 when another
 * process holds it (busy), -3 when nap gave up, -1 on error.
 */
int state_lock(const char *path, int follow_symlinks, double wait,
    int (*nap)(double), char *err, size_t errlen);

/* Before a save: the lock *fd is still the file at the lock's path; if
 * it was removed or replaced, the file there now is locked instead (*fd
 * replaced) unless another process holds it.  0, or -1 with err. */
int state_lock_check(int *fd, const char *path, int follow_symlinks,
    char *err, size_t errlen);

/* Rename a corrupt file to "path.corrupt-YYYYmmddTHHMMSSZ"; the new name
 * goes into newpath. */
int state_move_aside(const char *path, double now, char *newpath,
    size_t newlen, char *err, size_t errlen);

/* Create the missing parent directories of path with mode 0700. */
int state_mkdirs(const char *path, char *err, size_t errlen);

#endif
