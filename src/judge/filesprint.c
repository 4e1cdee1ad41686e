/* SPDX-License-Identifier: ISC */
/*
 * The "files" progress fingerprint (SPEC §3.1): path, size, mtime and mode
 * of every file under the watch dirs, excluding .git, the state dir and the
 * --exclude globs.
 *
 * A fingerprint is a SHA-256 taken before and after a run; the caller only
 * compares the two.  The walk is a queue of directories worked off by one
 * thread per CPU (at most four): most of its time is the kernel's, in one
 * fstatat per entry, and two threads halve it.  Each directory is read
 * whole, its entries sorted by name (readdir order is not stable) and
 * hashed, name, size, mtime and mode, into a digest of its own; the
 * fingerprint hashes the watch dirs' names, then every directory's path
 * and digest in path order, so it does not depend on which thread took
 * what.  A directory's own size and mtime are left out: they change when
 * an excluded file is created in it, and its entries already say what
 * changed.  With a watch (fswatch.c) each directory is also watched with
 * inotify before it is read, so a change made after it was read is seen.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "judge.h"
#include "fswatch.h"

#define MAX_THREADS	4

/* A directory to read, then its digest. */
struct dir {
	int root;		/* index into the watch dirs */
	char *rel;		/* path below the watch dir, "" for itself */
	char hex[DIGEST_HEX_LEN + 1];	/* its digest; "" until read */
};

struct walk {
	const struct progress_cfg *c;
	char *const *watch;
	struct files_watch *fw;	/* may be NULL */
	int has_state;
	dev_t sdev;
	ino_t sino;
	int has_skip;		/* c->skip's directory, and its name there */
	dev_t kdev;
	ino_t kino;
	const char *kname;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct dir *dirs;	/* the queue: [next, n) still to read */
	size_t next, n, cap;
	int busy;		/* threads reading a directory */
	int failed;		/* errno of the first failure, 0 none */
};

/* One entry of a directory being read. */
struct entry {
	size_t name;		/* offset into the names buffer */
	int64_t rec[4];		/* size, mtime s, mtime ns, mode */
};

/* Queue a directory; called with the lock held.  0 / -1 (ENOMEM). */
static int
push(struct walk *w, int root, char *rel)
{
	size_t cap;
	void *p;

	if (w->n == w->cap) {
		cap = w->cap > 0 ? w->cap * 2 : 256;
		if ((p = realloc(w->dirs, cap * sizeof(*w->dirs))) == NULL) {
			free(rel);
			return -1;
		}
		w->dirs = p;
		w->cap = cap;
	}
	memset(&w->dirs[w->n], 0, sizeof(w->dirs[0]));
	w->dirs[w->n].root = root;
	w->dirs[w->n].rel = rel;
	w->n++;
	pthread_cond_signal(&w->cv);
	return 0;
}

/* "rel/name", or name when rel is "" (malloc'd; NULL when out of memory). */
static char *
join(const char *rel, const char *name)
{
	size_t a = strlen(rel), b = strlen(name);
	char *p = malloc(a + b + 2);

	if (p == NULL)
		return NULL;
	if (a > 0) {
		memcpy(p, rel, a);
		p[a++] = '/';
	}
	memcpy(p + a, name, b + 1);
	return p;
}

/* Whether the filesystem mounted at dir/name is one a watch cannot
 * vouch for. */
static int
mount_unwatchable(const char *dir, const char *name)
{
	char *p = join(dir, name);
	int r = p == NULL || fswatch_remote(p);

	free(p);
	return r;
}

static int
cmp_entries(const void *a, const void *b, void *names)
{
	return strcmp((const char *)names + ((const struct entry *)a)->name,
	    (const char *)names + ((const struct entry *)b)->name);
}

/*
 * Read directory i of the queue: stat and hash its entries, queue its
 * subdirectories.  Called without the lock; takes it to queue and to
 * record.  0, or -1 with errno.
 */
static int
read_dir(struct walk *w, size_t i)
{
	struct entry *ents = NULL;
	size_t n = 0, cap = 0, nlen = 0, ncap = 0, k, len;
	char *names = NULL, *path = NULL, *sub, hex[DIGEST_HEX_LEN + 1];
	struct digest *d = NULL;
	struct dirent *e;
	struct stat st;
	struct dir dir;
	int fd, rc = -1, e2, distrust = 0;
	dev_t dev = 0;
	DIR *dp = NULL;
	void *p;

	pthread_mutex_lock(&w->mu);
	dir = w->dirs[i];	/* the array may move while we work */
	pthread_mutex_unlock(&w->mu);
	if ((path = dir.rel[0] == '\0' ? strdup(w->watch[dir.root]) :
	    join(w->watch[dir.root], dir.rel)) == NULL)
		return -1;
	/* Watched before it is read: a change after the read is an event. */
	if (w->fw != NULL)
		fswatch_add(w->fw, path, dir.root, dir.rel);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
	    (dir.rel[0] != '\0' ? O_NOFOLLOW : 0));
	if (fd == -1) {
		/* A subdirectory unreadable or replaced meanwhile: its entry
		 * in the parent is all it adds. */
		rc = dir.rel[0] != '\0' && (errno == EACCES ||
		    errno == ENOENT || errno == ENOTDIR || errno == ELOOP) ?
		    0 : -1;
		hex[0] = '\0';
		goto record;
	}
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		goto out;
	}
	if (w->fw != NULL && fstat(fd, &st) == 0)
		dev = st.st_dev;
	for (errno = 0; (e = readdir(dp)) != NULL; errno = 0) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		len = strlen(e->d_name) + 1;
		if (nlen + len > ncap) {
			ncap = ncap > 0 ? ncap * 2 : 4096;
			while (ncap < nlen + len)
				ncap *= 2;
			if ((p = realloc(names, ncap)) == NULL)
				goto out;
			names = p;
		}
		if (n == cap) {
			cap = cap > 0 ? cap * 2 : 64;
			if ((p = realloc(ents, cap * sizeof(*ents))) == NULL)
				goto out;
			ents = p;
		}
		memcpy(names + nlen, e->d_name, len);
		ents[n++].name = nlen;
		nlen += len;
	}
	if (errno != 0)
		goto out;
	/* Excluded names and vanished entries are dropped as they come. */
	for (k = 0; k < n;) {
		const char *name = names + ents[k].name;

		if (w->c->n_exclude > 0 || strcmp(name, ".git") == 0) {
			if ((sub = join(dir.rel, name)) == NULL)
				goto out;
			e2 = files_excluded(w->c, sub, name);
			free(sub);
			if (e2) {
				ents[k] = ents[--n];
				continue;
			}
		}
		if (w->has_skip && strcmp(name, w->kname) == 0 &&
		    fstat(dirfd(dp), &st) == 0 && st.st_dev == w->kdev &&
		    st.st_ino == w->kino) {
			ents[k] = ents[--n];
			continue;
		}
		if (fstatat(dirfd(dp), name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
			if (errno != ENOENT)
				goto out;
			ents[k] = ents[--n];	/* gone meanwhile */
			continue;
		}
		if (S_ISDIR(st.st_mode) && w->has_state &&
		    st.st_dev == w->sdev && st.st_ino == w->sino) {
			ents[k] = ents[--n];
			continue;
		}
		if (w->fw != NULL && !distrust &&
		    ((S_ISREG(st.st_mode) && st.st_nlink > 1) ||
		    (S_ISDIR(st.st_mode) && st.st_dev != dev &&
		    mount_unwatchable(path, name)))) {
			/* Written through another link, or on another
			 * machine: no event would say so. */
			fswatch_give_up(w->fw);
			distrust = 1;
		}
		ents[k].rec[0] = S_ISDIR(st.st_mode) ? 0 : st.st_size;
		ents[k].rec[1] = S_ISDIR(st.st_mode) ? 0 : st.st_mtim.tv_sec;
		ents[k].rec[2] = S_ISDIR(st.st_mode) ? 0 : st.st_mtim.tv_nsec;
		ents[k].rec[3] = st.st_mode;
		k++;
	}
	if (n > 0)
		qsort_r(ents, n, sizeof(*ents), cmp_entries, names);
	if ((d = digest_new()) == NULL)
		goto out;
	for (k = 0; k < n; k++) {
		const char *name = names + ents[k].name;

		if (digest_update(d, name, strlen(name) + 1) == -1 ||
		    digest_update(d, ents[k].rec, sizeof(ents[k].rec)) == -1)
			goto out;
		if (!S_ISDIR(ents[k].rec[3]))
			continue;
		if ((sub = join(dir.rel, name)) == NULL)
			goto out;
		pthread_mutex_lock(&w->mu);
		e2 = push(w, dir.root, sub);
		pthread_mutex_unlock(&w->mu);
		if (e2 == -1)
			goto out;
	}
	e2 = digest_final(d, hex);
	d = NULL;
	if (e2 == -1)
		goto out;
	rc = 0;
record:
	pthread_mutex_lock(&w->mu);
	memcpy(w->dirs[i].hex, hex, sizeof(hex));
	pthread_mutex_unlock(&w->mu);
out:
	e2 = errno;
	if (d != NULL)
		digest_abort(d);
	if (dp != NULL)
		closedir(dp);
	free(ents);
	free(names);
	free(path);
	errno = e2;
	return rc;
}

/* Take directories off the queue until it is empty and nobody is reading
 * one (which could queue more), or something failed. */
static void *
worker(void *arg)
{
	struct walk *w = arg;
	size_t i;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->next == w->n && w->busy > 0 && w->failed == 0)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->next == w->n || w->failed != 0)
			break;
		i = w->next++;
		w->busy++;
		pthread_mutex_unlock(&w->mu);
		if (read_dir(w, i) == -1) {
			int e = errno != 0 ? errno : EIO;

			pthread_mutex_lock(&w->mu);
			if (w->failed == 0)
				w->failed = e;
		} else
			pthread_mutex_lock(&w->mu);
		w->busy--;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Walk with up to MAX_THREADS threads, the caller being one of them.
 * Signals stay with the caller's thread. */
static void
run_workers(struct walk *w)
{
	pthread_t t[MAX_THREADS - 1];
	sigset_t all, old;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int i, n = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 1; i < (cpus < MAX_THREADS ? cpus : MAX_THREADS); i++)
		if (pthread_create(&t[n], NULL, worker, w) == 0)
			n++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	worker(w);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

static int
cmp_dirs(const void *a, const void *b)
{
	const struct dir *x = a, *y = b;

	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	return strcmp(x->rel, y->rel);
}

int
progress_files(const struct progress_cfg *c, char hex[DIGEST_HEX_LEN + 1],
    struct files_watch **fw)
{
	static char *const here[] = { "." };
	struct walk w;
	struct digest *d = NULL;
	struct stat st;
	size_t i, n_watch = c->n_watch > 0 ? c->n_watch : 1;
	char *rel, kdir[PATH_MAX];
	int rc = -1;

	memset(&w, 0, sizeof(w));
	w.c = c;
	w.watch = c->n_watch > 0 ? c->watch : here;
	pthread_mutex_init(&w.mu, NULL);
	pthread_cond_init(&w.cv, NULL);
	if (fw != NULL)
		w.fw = *fw = fswatch_new(c);
	if (c->state_dir != NULL && stat(c->state_dir, &st) == 0) {
		w.has_state = 1;
		w.sdev = st.st_dev;
		w.sino = st.st_ino;
	}
	if (c->skip != NULL && file_dir_of(c->skip, kdir, sizeof(kdir)) == 0 &&
	    stat(kdir, &st) == 0) {
		w.has_skip = 1;
		w.kdev = st.st_dev;
		w.kino = st.st_ino;
		w.kname = strrchr(c->skip, '/') != NULL ?
		    strrchr(c->skip, '/') + 1 : c->skip;
	}
	/* OpenSSL set up before any thread needs it. */
	if (digest_prepare() == -1)
		goto out;
	for (i = 0; i < n_watch; i++)
		if ((rel = strdup("")) == NULL || push(&w, (int)i, rel) == -1)
			goto out;
	run_workers(&w);
	if (w.failed != 0) {
		errno = w.failed;
		goto out;
	}
	qsort(w.dirs, w.n, sizeof(*w.dirs), cmp_dirs);
	if ((d = digest_new()) == NULL)
		goto out;
	for (i = 0; i < n_watch; i++)
		if (digest_update(d, w.watch[i], strlen(w.watch[i]) + 1) == -1)
			goto out;
	for (i = 0; i < w.n; i++)
		if (w.dirs[i].hex[0] != '\0' &&
		    (digest_update(d, w.dirs[i].rel,
		    strlen(w.dirs[i].rel) + 1) == -1 ||
		    digest_update(d, w.dirs[i].hex, DIGEST_HEX_LEN) == -1))
			goto out;
	rc = digest_final(d, hex);
	d = NULL;
out:
	if (d != NULL)
		digest_abort(d);
	for (i = 0; i < w.n; i++)
		free(w.dirs[i].rel);
	free(w.dirs);
	pthread_mutex_destroy(&w.mu);
	pthread_cond_destroy(&w.cv);
	if (rc == -1 && fw != NULL) {
		files_watch_free(*fw);
		*fw = NULL;
	}
	return rc;
}
