/*
 * Private to the progress sources (phase.c, gitprint.c, filesprint.c,
 * fswatch.c, probe.c); callers use progress.h.
 */
#ifndef CBEXEC_PROGRESS_INT_H
#define CBEXEC_PROGRESS_INT_H

#include <stddef.h>

struct files_watch;
struct progress_cfg;

/* filesprint.c: whether path (below its watch dir) with that base name is
 * left out of the "files" fingerprint: .git, or an --exclude glob. */
int files_excluded(const struct progress_cfg *c, const char *path,
    const char *name);

/* fswatch.c: an inotify watch set for a walk of c's watch dirs (NULL when
 * out of memory), and one directory added to it (thread-safe). */
struct files_watch *fswatch_new(const struct progress_cfg *c);
void fswatch_add(struct files_watch *w, const char *path, int root,
    const char *rel);
/* Stop trusting the watch: files_changed() will say "may have". */
void fswatch_give_up(struct files_watch *w);
/* 1 when path is on a network or FUSE filesystem, whose changes inotify
 * may not see (or when that cannot be told). */
int fswatch_remote(const char *path);

/* probe.c */
/* vsnprintf into err, when there is an err to write to. */
void seterr(char *err, size_t errlen, const char *fmt, ...);

#endif
