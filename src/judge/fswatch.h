/* SPDX-License-Identifier: ISC */
/*
 * The "files" progress source's two halves (filesprint.c walks the watch
 * dirs, fswatch.c watches them with inotify so an unchanged tree is not
 * walked again) and the rule both apply: which paths are left out.
 */
#ifndef CBEXEC_FSWATCH_H
#define CBEXEC_FSWATCH_H

#include <stddef.h>

struct files_watch;
struct progress_cfg;

/* Whether path (below its watch dir) with that base name is left out of
 * the "files" fingerprint: .git, or an --exclude glob. */
int files_excluded(const struct progress_cfg *c, const char *path,
    const char *name);

/* An inotify watch set for a walk of c's watch dirs (NULL when out of
 * memory), and one directory added to it (thread-safe). */
struct files_watch *fswatch_new(const struct progress_cfg *c);
void fswatch_add(struct files_watch *w, const char *path, int root,
    const char *rel);
/* Stop trusting the watch: files_changed() will say "may have". */
void fswatch_give_up(struct files_watch *w);
/* 1 when path is on a network or FUSE filesystem, whose changes inotify
 * may not see (or when that cannot be told). */
int fswatch_remote(const char *path);

#endif
