/*
 * The "files" progress fingerprint (SPEC §3.1): path, size, mtime and mode
 * of every file under the watch dirs, excluding .git, the state dir and the
 * --exclude globs.
 *
 * A fingerprint is a SHA-256 taken before and after a run; the caller only
 * compares the two.  "files" walks each watch dir with openat/fstatat
 * relative to the directory's fd, sorts every directory's names (readdir
 * order is not stable) and hashes path, size, mtime and mode per entry.
 * The names of all directories on the current path share one arena used as
 * a stack, so the walk allocates nothing per file once the arena has grown;
 * records are batched in a buffer before they reach the digest.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "progress.h"

struct walk {
	const struct progress_cfg *c;
	struct digest *d;
	int has_state;
	dev_t sdev;
	ino_t sino;
	char *path;		/* relative to the watch dir */
	size_t plen, pcap;
	char *names;		/* names of every dir on the path, a stack */
	size_t nlen, ncap;
	size_t *offs;		/* offsets into names, same stack */
	size_t olen, ocap;
	size_t blen;		/* records batched for the digest */
	unsigned char buf[32768];
};

/* p with room for need elements (capacity *cap), or NULL (p intact). */
static void *
grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap > 0 ? *cap : 256;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	if ((p = realloc(p, n * size)) != NULL)
		*cap = n;
	return p;
}

static int
emit(struct walk *w, const void *p, size_t n)
{
	if (w->blen + n > sizeof(w->buf)) {
		if (digest_update(w->d, w->buf, w->blen) == -1)
			return -1;
		w->blen = 0;
		if (n > sizeof(w->buf))
			return digest_update(w->d, p, n);
	}
	memcpy(w->buf + w->blen, p, n);
	w->blen += n;
	return 0;
}

static int
excluded(const struct walk *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->c->n_exclude; i++)
		if (fnmatch(w->c->exclude[i], w->path, 0) == 0 ||
		    fnmatch(w->c->exclude[i], name, 0) == 0)
			return 1;
	return 0;
}

static int
cmp_names(const void *a, const void *b, void *arg)
{
	const char *names = arg;

	return strcmp(names + *(const size_t *)a, names + *(const size_t *)b);
}

static int walk_dir(struct walk *w, int dfd);

/* One entry of the directory open as dfd; w->path already names it. */
static int
walk_entry(struct walk *w, int dfd, const char *name)
{
	struct stat st;
	int64_t rec[4];
	int cfd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : -1;	/* gone meanwhile */
	if (w->c->n_exclude > 0 && excluded(w, name))
		return 0;
	if (S_ISDIR(st.st_mode) && w->has_state && st.st_dev == w->sdev &&
	    st.st_ino == w->sino)
		return 0;
	/* A directory's size and mtime change when an excluded file is
	 * created in it; its entries already say what changed. */
	rec[0] = S_ISDIR(st.st_mode) ? 0 : st.st_size;
	rec[1] = S_ISDIR(st.st_mode) ? 0 : st.st_mtim.tv_sec;
	rec[2] = S_ISDIR(st.st_mode) ? 0 : st.st_mtim.tv_nsec;
	rec[3] = st.st_mode;
	if (emit(w, w->path, w->plen + 1) == -1 ||
	    emit(w, rec, sizeof(rec)) == -1)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return 0;
	cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd == -1)	/* unreadable or replaced meanwhile: entry only */
		return errno == EACCES || errno == ENOENT ||
		    errno == ENOTDIR || errno == ELOOP ? 0 : -1;
	return walk_dir(w, cfd);
}

/* Walk the directory open as dfd (closed here), names in sorted order. */
static int
walk_dir(struct walk *w, int dfd)
{
	size_t nbase = w->nlen, obase = w->olen, plen = w->plen, i, len;
	struct dirent *e;
	const char *name;
	DIR *dir;
	void *p;
	int rc = -1;

	if ((dir = fdopendir(dfd)) == NULL) {
		close(dfd);
		return -1;
	}
	for (errno = 0; (e = readdir(dir)) != NULL; errno = 0) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, ".git") == 0)
			continue;
		len = strlen(e->d_name) + 1;
		if ((p = grow(w->names, &w->ncap, w->nlen + len, 1)) == NULL)
			goto out;
		w->names = p;
		if ((p = grow(w->offs, &w->ocap, w->olen + 1, sizeof(size_t))) == NULL)
			goto out;
		w->offs = p;
		memcpy(w->names + w->nlen, e->d_name, len);
		w->offs[w->olen++] = w->nlen;
		w->nlen += len;
	}
	if (errno != 0)
		goto out;
	/* An empty directory has no offsets array yet (NULL). */
	if (w->olen > obase)
		qsort_r(w->offs + obase, w->olen - obase, sizeof(size_t),
		    cmp_names, w->names);
	for (i = obase; i < w->olen; i++) {
		/* Re-read each time: a subdirectory may move the arena. */
		name = w->names + w->offs[i];
		len = strlen(name);
		if ((p = grow(w->path, &w->pcap, plen + len + 2, 1)) == NULL)
			goto out;
		w->path = p;
		w->plen = plen;
		if (plen > 0)
			w->path[w->plen++] = '/';
		memcpy(w->path + w->plen, name, len + 1);
		w->plen += len;
		if (walk_entry(w, dirfd(dir), name) == -1)
			goto out;
	}
	rc = 0;
out:
	w->nlen = nbase;
	w->olen = obase;
	w->plen = plen;
	if (w->path != NULL)
		w->path[plen] = '\0';
	closedir(dir);
	return rc;
}

int
progress_files(const struct progress_cfg *c, char hex[DIGEST_HEX_LEN + 1])
{
	static char *const here[] = { "." };
	char *const *watch = c->n_watch > 0 ? c->watch : here;
	size_t i, n = c->n_watch > 0 ? c->n_watch : 1;
	struct walk *w;
	struct stat st;
	int fd, rc = -1;
	void *p;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -1;
	w->c = c;
	if (c->state_dir != NULL && stat(c->state_dir, &st) == 0) {
		w->has_state = 1;
		w->sdev = st.st_dev;
		w->sino = st.st_ino;
	}
	if ((w->d = digest_new()) == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if (digest_update(w->d, watch[i], strlen(watch[i]) + 1) == -1 ||
		    (p = grow(w->path, &w->pcap, 1, 1)) == NULL)
			goto out;
		w->path = p;
		w->path[0] = '\0';
		w->plen = 0;
		if ((fd = open(watch[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
		    walk_dir(w, fd) == -1 ||
		    digest_update(w->d, w->buf, w->blen) == -1)
			goto out;
		w->blen = 0;
	}
	rc = digest_final(w->d, hex);
	w->d = NULL;
out:
	if (w->d != NULL)
		digest_abort(w->d);
	free(w->path);
	free(w->names);
	free(w->offs);
	free(w);
	return rc;
}
