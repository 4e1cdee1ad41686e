/* SPDX-License-Identifier: ISC */
/*
 * Whether a tree changed since its "files" fingerprint was taken, without
 * walking it again (SPEC §3.1 takes one fingerprint before a run and one
 * after; when nothing changed the second is the first).
 *
 * The walk (filesprint.c) puts an inotify watch on every directory it
 * reads, before reading it.  After the run, any event on a name the
 * fingerprint covers means "may have changed": the caller walks again and
 * compares, so an event is never taken for progress by itself (a file
 * created and removed again is no change).  No event means no change, as
 * far as inotify can tell.  Some changes make no event: writes through a
 * shared memory mapping, writes to a file through a hard link outside the
 * tree, changes made by another machine on a network filesystem, a
 * filesystem mounted over a directory.  So the watch gives up (and the
 * tree is walked again) when a watch dir is a symbolic link, when the walk
 * meets a file with more than one link or enters a network or FUSE
 * filesystem, when the mount table changes during the run, and when the
 * directories would take more than a quarter of the user's inotify watches
 * (editors and build tools need them too).  Writes through a mapping are
 * the one blind spot left.
 *
 * Which paths the fingerprint leaves out (files_excluded) is decided here,
 * for the walk and the watch alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "judge.h"
#include "fswatch.h"

#define MASK (IN_MODIFY | IN_ATTRIB | IN_CREATE | IN_DELETE | \
	IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | \
	IN_ONLYDIR)

/* Filesystems whose changes inotify may not see (statfs f_type). */
static const long remote_fs[] = {
	0x6969,		/* NFS */
	0xff534d42,	/* CIFS */
	0xfe534d42,	/* SMB2 */
	0x517b,		/* SMB */
	0x65735546,	/* FUSE */
	0x01021997,	/* 9P */
	0x0bd00bd0,	/* Lustre */
	0x47504653,	/* GPFS */
	0x73757245,	/* Coda */
	0x564c,		/* NCP */
	0x61756673,	/* AFS */
	0x6b414653,	/* kAFS */
	0x00c36400,	/* Ceph */
};

struct files_watch {
	struct progress_cfg c;	/* watch dirs and globs, for the events */
	pthread_mutex_t mu;
	int fd;			/* inotify; -1 once it cannot tell */
	int mounts;		/* /proc/self/mounts, polled for changes */
	size_t limit;		/* watches we allow ourselves */
	struct {
		int root;
		char *rel;	/* NULL: not ours */
		int twice;	/* reached under two names: every event counts */
	} *wd;			/* by watch descriptor */
	size_t nwd;
};

static size_t
watch_limit(void)
{
	unsigned long max = 8192;
	FILE *f = fopen("/proc/sys/fs/inotify/max_user_watches", "re");

	if (f != NULL) {
		if (fscanf(f, "%lu", &max) != 1)
			max = 8192;
		fclose(f);
	}
	return max / 4;
}

static int
excluded(const struct progress_cfg *c, const char *path, const char *name)
{
	size_t i;

	for (i = 0; i < c->n_exclude; i++)
		if (fnmatch(c->exclude[i], path, 0) == 0 ||
		    fnmatch(c->exclude[i], name, 0) == 0)
			return 1;
	return 0;
}

int
files_excluded(const struct progress_cfg *c, const char *path,
    const char *name)
{
	return strcmp(name, ".git") == 0 ||
	    (c->n_exclude > 0 && excluded(c, path, name));
}

int
fswatch_remote(const char *path)
{
	struct statfs sf;
	size_t i;

	if (statfs(path, &sf) == -1)
		return 1;
	for (i = 0; i < sizeof(remote_fs) / sizeof(remote_fs[0]); i++)
		if ((unsigned long)sf.f_type == (unsigned long)remote_fs[i])
			return 1;
	return 0;
}

/* Give up watching: from now on files_changed() says "may have".  Called
 * with the lock held. */
static void
give_up(struct files_watch *w)
{
	if (w->fd != -1)
		close(w->fd);
	w->fd = -1;
}

void
fswatch_give_up(struct files_watch *w)
{
	pthread_mutex_lock(&w->mu);
	give_up(w);
	pthread_mutex_unlock(&w->mu);
}

struct files_watch *
fswatch_new(const struct progress_cfg *c)
{
	static char *const here[] = { "." };
	struct files_watch *w;
	struct stat st;
	size_t i;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->c = *c;
	if (w->c.n_watch == 0) {
		w->c.watch = (char **)here;
		w->c.n_watch = 1;
	}
	pthread_mutex_init(&w->mu, NULL);
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	w->limit = watch_limit();
	/* A mount or unmount makes this readable for poll() as POLLPRI. */
	if ((w->mounts = open("/proc/self/mounts", O_RDONLY | O_CLOEXEC)) ==
	    -1)
		give_up(w);
	for (i = 0; i < w->c.n_watch && w->fd != -1; i++)
		if (lstat(w->c.watch[i], &st) == -1 || S_ISLNK(st.st_mode) ||
		    fswatch_remote(w->c.watch[i]))
			give_up(w);
	return w;
}

void
fswatch_add(struct files_watch *w, const char *path, int root,
    const char *rel)
{
	void *p;
	int wd;

	pthread_mutex_lock(&w->mu);
	if (w->fd == -1)
		goto out;
	if (w->nwd >= w->limit) {
		give_up(w);
		goto out;
	}
	if ((wd = inotify_add_watch(w->fd, path, MASK)) == -1) {
		/* Gone or replaced since its parent was read: the parent's
		 * watch has seen that already. */
		if (errno != ENOENT && errno != ENOTDIR)
			give_up(w);
		goto out;
	}
	if ((size_t)wd >= w->nwd) {
		size_t n = (size_t)wd + 64;

		if ((p = realloc(w->wd, n * sizeof(*w->wd))) == NULL) {
			give_up(w);
			goto out;
		}
		w->wd = p;
		memset(w->wd + w->nwd, 0, (n - w->nwd) * sizeof(*w->wd));
		w->nwd = n;
	}
	/* The same directory reached twice (two watch dirs that overlap):
	 * --exclude globs may judge its names differently under each. */
	if (w->wd[wd].rel != NULL) {
		if (w->wd[wd].root != root || strcmp(w->wd[wd].rel, rel) != 0)
			w->wd[wd].twice = 1;
	} else if ((w->wd[wd].rel = strdup(rel)) == NULL)
		give_up(w);
	w->wd[wd].root = root;
out:
	pthread_mutex_unlock(&w->mu);
}

/* Whether the event is about something the fingerprint covers. */
static int
relevant(struct files_watch *w, const struct inotify_event *ev)
{
	const char *rel;
	char *path;
	int r;

	if (ev->wd < 0 || (size_t)ev->wd >= w->nwd ||
	    (rel = w->wd[ev->wd].rel) == NULL || w->wd[ev->wd].twice)
		return 1;	/* overflow, not one of ours, or unsure */
	if (ev->len == 0 || ev->name[0] == '\0')
		return 1;	/* the directory itself moved or went */
	if (rel[0] == '\0')
		return !files_excluded(&w->c, ev->name, ev->name);
	if (asprintf(&path, "%s/%s", rel, ev->name) == -1)
		return 1;
	r = !files_excluded(&w->c, path, ev->name);
	free(path);
	return r;
}

int
files_changed(struct files_watch *w)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct
	    inotify_event))));
	const struct inotify_event *ev;
	ssize_t n, off;

	struct pollfd pfd;

	if (w == NULL || w->fd == -1)
		return 1;
	pfd.fd = w->mounts;
	pfd.events = POLLPRI;
	if (poll(&pfd, 1, 0) != 0)
		return 1;	/* something was mounted or unmounted */
	for (;;) {
		n = read(w->fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return 0;	/* no event left */
		if (n <= 0)
			return 1;
		for (off = 0; off < n;
		    off += (ssize_t)sizeof(*ev) + (ssize_t)ev->len) {
			ev = (const struct inotify_event *)(buf + off);
			if ((ev->mask & IN_Q_OVERFLOW) || relevant(w, ev))
				return 1;
		}
	}
}

void
files_watch_free(struct files_watch *w)
{
	size_t i;

	if (w == NULL)
		return;
	if (w->fd != -1)
		close(w->fd);
	if (w->mounts != -1)
		close(w->mounts);
	for (i = 0; i < w->nwd; i++)
		free(w->wd[i].rel);
	free(w->wd);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
