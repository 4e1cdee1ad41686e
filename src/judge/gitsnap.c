/* SPDX-License-Identifier: ISC */
/*
 * The "git" progress fingerprint (SPEC §3.1): a SHA-256 of the work tree
 * as git sees it, taken before and after a run; the caller only compares
 * the two.
 *
 * One git status (porcelain v2, -z) gives HEAD's commit, every path
 * whose index or work tree differs, with its mode in the work tree, and
 * every untracked file that .gitignore does not exclude.  git's own stat
 * cache (the index) decides which files changed, so in a large tree only
 * those are read: cbexec reads their content itself, regular files only,
 * each lstat'ed first and opened without following a link and without
 * blocking, up to READ_FILE_MAX bytes a file and READ_TOTAL_MAX and
 * READ_FILES_MAX a snapshot; a file beyond them, or that is not a
 * regular file or a link, is hashed by its type, size and mtime instead.
 * A file read is remembered by its stat data (as git's index remembers
 * it) until the next snapshot, which reads it again only when they
 * changed or when it had changed within two seconds of the read (a change
 * in the same tick of the file system's clock would leave them equal):
 * the snapshot after a run reads what the run touched, not every file
 * again.  A submodule is its checked-out commit: the index's when git
 * says its work tree matches, else one git diff of those submodules says
 * it.
 *
 * What is hashed, in git's order (paths sorted): HEAD's commit; for each
 * changed path, the path, its mode in the work tree and what the work
 * tree holds there (gone, content, link target or commit); for each
 * untracked file, the path and its content.  The index itself is not:
 * staging a change the work tree already had is no progress, as a diff
 * against HEAD would say.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/stat.h>

#include "judge.h"
#include "run.h"
#include "gitrun.h"

/* Content is read up to these bounds, in git's order; past them a file
 * is hashed by its stat data.  The choice depends only on the tree, so
 * an unchanged tree gives the same fingerprint. */
#define READ_FILE_MAX	(4L << 20)
#define READ_TOTAL_MAX	(64L << 20)
#define READ_FILES_MAX	4096
/* A record of git's output longer than this is no path. */
#define RECORD_MAX	(64 * 1024)
/* Submodules named on one git diff command line. */
#define LINKS_BATCH	64

/* A file whose content was read, by its stat data. */
struct seen {
	char *path;		/* NULL: an empty slot */
	dev_t dev;
	ino_t ino;
	mode_t mode;
	off_t size;
	struct timespec mtime, ctime;
	char hex[DIGEST_HEX_LEN];
};

/* What one snapshot read, open addressing on the path's hash. */
struct seenset {
	struct seen *v;
	size_t cap, n;		/* cap a power of two, or 0 */
};

/* The last snapshot's files, and the top directory they are under. */
static struct seenset last_seen;
static char last_top[PATH_MAX];

struct snap {
	struct digest *d;
	int top;		/* the work tree's top directory */
	const char *topname;
	const char *skip;	/* the status file, or NULL */
	double until;
	char *rec;		/* the record being read */
	size_t len, cap;
	int orig;		/* a renamed entry's old path comes next */
	long bytes, files;	/* read so far */
	unsigned ticks;		/* files and blocks read */
	char **links;		/* submodules whose commit git did not say */
	size_t n_links, cap_links;
	struct seenset seen;	/* what this snapshot read or kept */
	struct seenset *prev;	/* the last snapshot's, or NULL */
	time_t now;		/* seconds, when git status was started */
	char buf[65536];
};

static size_t
path_hash(const char *p)
{
	size_t h = 2166136261u;

	while (*p != '\0')
		h = (h ^ (unsigned char)*p++) * 16777619u;
	return h;
}

static struct seen *
seen_slot(struct seenset *t, const char *path)
{
	size_t i;

	if (t == NULL || t->cap == 0)
		return NULL;
	for (i = path_hash(path) & (t->cap - 1); t->v[i].path != NULL;
	    i = (i + 1) & (t->cap - 1))
		if (strcmp(t->v[i].path, path) == 0)
			return &t->v[i];
	return &t->v[i];
}

static void
seen_free(struct seenset *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		free(t->v[i].path);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* Twice the room, every entry moved to its new slot. */
static int
seen_grow(struct seenset *t)
{
	struct seenset n = { NULL, t->cap == 0 ? 64 : 2 * t->cap, t->n };
	size_t i;

	if ((n.v = calloc(n.cap, sizeof(*n.v))) == NULL)
		return -1;
	for (i = 0; i < t->cap; i++)
		if (t->v[i].path != NULL)
			*seen_slot(&n, t->v[i].path) = t->v[i];
	free(t->v);
	*t = n;
	return 0;
}

/* The stat data a remembered content still goes with. */
static int
seen_same(const struct seen *e, const struct stat *st)
{
	return e->dev == st->st_dev && e->ino == st->st_ino &&
	    e->mode == st->st_mode && e->size == st->st_size &&
	    e->mtime.tv_sec == st->st_mtim.tv_sec &&
	    e->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	    e->ctime.tv_sec == st->st_ctim.tv_sec &&
	    e->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

/* Remember path's content for the next snapshot; nothing is lost but
 * time when this cannot be done. */
static void
seen_add(struct snap *s, const char *path, const struct stat *st,
    const char *hex)
{
	struct seenset *t = &s->seen;
	struct seen *e;

	/* Changed in the last two seconds: the next change could keep
	 * every stat field as it is. */
	if (st->st_ctim.tv_sec + 2 >= s->now || st->st_mtim.tv_sec + 2 >= s->now)
		return;
	if (t->n >= READ_FILES_MAX || (2 * (t->n + 1) > t->cap &&
	    seen_grow(t) == -1) || (e = seen_slot(t, path)) == NULL ||
	    e->path != NULL || (e->path = strdup(path)) == NULL)
		return;
	t->n++;
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	e->mode = st->st_mode;
	e->size = st->st_size;
	e->mtime = st->st_mtim;
	e->ctime = st->st_ctim;
	memcpy(e->hex, hex, DIGEST_HEX_LEN);
}

static int
put(struct snap *s, const void *p, size_t n)
{
	return digest_update(s->d, p, n);
}

/* A string and its NUL. */
static int
puts0(struct snap *s, const char *str)
{
	return put(s, str, strlen(str) + 1);
}

/* The probe's deadline passed, or an operator signal came (held while
 * git runs: looked for every few files, and git is then ended too). */
static int
out_of_time(struct snap *s)
{
	if (++s->ticks % 16 == 0 && sup_poll(NULL, 0, 0) == -2)
		return 1;
	if (mono_now() < child_bound(s->until))
		return 0;
	git_fail("reading the changed files did not finish in time");
	return 1;
}

/* A file by what lstat says of it. */
static int
put_stat(struct snap *s, const struct stat *st)
{
	int64_t rec[4];

	rec[0] = st->st_mode;
	rec[1] = st->st_size;
	rec[2] = st->st_mtim.tv_sec;
	rec[3] = st->st_mtim.tv_nsec;
	return put(s, "s", 1) == -1 || put(s, rec, sizeof(rec)) == -1 ?
	    -1 : 0;
}

static int
put_errno(struct snap *s, char tag, int e)
{
	int32_t v = e;

	return put(s, &tag, 1) == -1 || put(s, &v, sizeof(v)) == -1 ? -1 : 0;
}

/* A regular file's content, as its own SHA-256 (so no content can run
 * into the next record). */
static int
put_content(struct snap *s, const char *path, const struct stat *lst)
{
	char hex[DIGEST_HEX_LEN + 1];
	struct digest *fd_d;
	struct stat st;
	long got = 0;
	ssize_t n;
	int fd;

	fd = openat(s->top, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY | O_CLOEXEC);
	if (fd == -1)
		return put_errno(s, 'e', errno);
	/* Replaced since the lstat: what is there now, by its stat data. */
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_ino != lst->st_ino || st.st_dev != lst->st_dev) {
		close(fd);
		return put_stat(s, lst);
	}
	if ((fd_d = digest_new()) == NULL) {
		close(fd);
		return -1;
	}
	for (;;) {
		n = read(fd, s->buf, sizeof(s->buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (digest_update(fd_d, s->buf, (size_t)n) == -1)
			goto fail;
		if ((got += n) >= READ_FILE_MAX)
			break;
		if (out_of_time(s))
			goto fail;
	}
	close(fd);
	if (n == -1)
		return digest_abort(fd_d), put_errno(s, 'e', errno);
	if (digest_final(fd_d, hex) == -1)
		return -1;
	if (got < READ_FILE_MAX)
		seen_add(s, path, &st, hex);
	return put(s, "c", 1) == -1 || put(s, hex, DIGEST_HEX_LEN) == -1 ?
	    -1 : 0;
fail:
	close(fd);
	digest_abort(fd_d);
	return -1;
}

/* What the work tree holds at path. */
static int
put_path(struct snap *s, const char *path)
{
	char target[PATH_MAX + 1];
	struct seen *e;
	struct stat st;
	ssize_t n;

	if (out_of_time(s))
		return -1;
	if (fstatat(s->top, path, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return put_errno(s, 'g', errno);
	if (S_ISLNK(st.st_mode)) {
		if ((n = readlinkat(s->top, path, target,
		    sizeof(target) - 1)) == -1)
			return put_errno(s, 'e', errno);
		target[n] = '\0';
		return put(s, "l", 1) == -1 || puts0(s, target) == -1 ? -1 : 0;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > READ_FILE_MAX ||
	    s->bytes + st.st_size > READ_TOTAL_MAX ||
	    s->files >= READ_FILES_MAX)
		return put_stat(s, &st);
	s->bytes += st.st_size;
	s->files++;
	/* Read by the last snapshot, and not changed since. */
	if ((e = seen_slot(s->prev, path)) != NULL && e->path != NULL &&
	    seen_same(e, &st)) {
		seen_add(s, path, &st, e->hex);
		return put(s, "c", 1) == -1 ||
		    put(s, e->hex, DIGEST_HEX_LEN) == -1 ? -1 : 0;
	}
	return put_content(s, path, &st);
}

/* a and b name the same directory entry: the same name in the same
 * directory (the file itself may have been replaced meanwhile). */
static int
same_file(const char *a, const char *b)
{
	const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');
	char da[PATH_MAX], db[PATH_MAX];
	struct stat sa, sb;

	if (strcmp(ba != NULL ? ba + 1 : a, bb != NULL ? bb + 1 : b) != 0)
		return 0;
	if (file_dir_of(a, da, sizeof(da)) == -1 ||
	    file_dir_of(b, db, sizeof(db)) == -1 ||
	    stat(da, &sa) == -1 || stat(db, &sb) == -1)
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The status file, when it is in the work tree, is not the command's
 * work. */
static int
skipped(struct snap *s, const char *path)
{
	const char *base = strrchr(path, '/'), *sbase;
	char full[PATH_MAX * 2 + 2];

	if (s->skip == NULL)
		return 0;
	sbase = strrchr(s->skip, '/');
	if (strcmp(base != NULL ? base + 1 : path,
	    sbase != NULL ? sbase + 1 : s->skip) != 0)
		return 0;
	snprintf(full, sizeof(full), "%s/%s", s->topname, path);
	return same_file(full, s->skip);
}

static int
add_link(struct snap *s, const char *path)
{
	char **v;

	if (s->n_links == s->cap_links) {
		s->cap_links = s->cap_links * 2 + 8;
		if ((v = realloc(s->links, s->cap_links * sizeof(*v))) == NULL)
			return -1;
		s->links = v;
	}
	if ((s->links[s->n_links] = strdup(path)) == NULL)
		return -1;
	s->n_links++;
	return 0;
}

/*
 * A changed entry: "1 XY sub mH mI mW hH hI PATH" (nf 8), "2 ... Xscore
 * PATH" (9), "u XY sub m1 m2 m3 mW h1 h2 h3 PATH" (10).
 */
static int
tracked(struct snap *s, char *r, int nf)
{
	char *f[10], *p = r;
	const char *mw;
	int i;

	for (i = 0; i < nf; i++) {
		f[i] = p;
		/* Fewer fields than its type has: as far as it goes. */
		if ((p = strchr(p, ' ')) == NULL)
			return put(s, "X", 1) == -1 || puts0(s, f[i]) == -1 ?
			    -1 : 0;
		*p++ = '\0';
	}
	/* p is the path; the work tree's mode is field 5 (6 for "u"). */
	mw = f[r[0] == 'u' ? 6 : 5];
	if (put(s, "T", 1) == -1 || puts0(s, p) == -1 || puts0(s, mw) == -1)
		return -1;
	if (strcmp(mw, "000000") == 0)
		return put(s, "D", 1);
	if (strcmp(mw, "160000") != 0)
		return put_path(s, p);
	/* A submodule: its commit is the index's when the work tree
	 * agrees (Y, the second letter of XY, is '.'), else git diff says
	 * it after the status. */
	if (r[0] != 'u' && f[1][1] == '.')
		return put(s, "S", 1) == -1 || puts0(s, f[7]) == -1 ? -1 : 0;
	return put(s, "?", 1) == -1 || add_link(s, p) == -1 ? -1 : 0;
}

/* One NUL-terminated field of git status --porcelain=v2 -z. */
static int
field(struct snap *s, char *r, size_t n)
{
	if (s->orig) {
		s->orig = 0;
		return put(s, "O", 1) == -1 || put(s, r, n + 1) == -1 ? -1 : 0;
	}
	switch (r[0]) {
	case '#':
		if (strncmp(r, "# branch.oid ", 13) == 0)
			return put(s, "H", 1) == -1 || puts0(s, r + 13) == -1 ?
			    -1 : 0;
		return 0;	/* the branch's name, upstream, stashes */
	case '1':
		return tracked(s, r, 8);
	case '2':
		s->orig = 1;
		return tracked(s, r, 9);
	case 'u':
		return tracked(s, r, 10);
	case '?':
		if (n < 3 || r[1] != ' ')
			break;
		if (skipped(s, r + 2))
			return 0;
		if (put(s, "U", 1) == -1 || puts0(s, r + 2) == -1)
			return -1;
		return put_path(s, r + 2);
	case '!':
		return 0;
	}
	/* A record this git does not know yet: as it is. */
	return put(s, "X", 1) == -1 || put(s, r, n + 1) == -1 ? -1 : 0;
}

static int
status_sink(void *ctx, const char *p, size_t n)
{
	struct snap *s = ctx;
	const char *end = p + n, *z;
	size_t len;
	char *nr;

	while (p < end) {
		z = memchr(p, '\0', (size_t)(end - p));
		len = (size_t)((z != NULL ? z : end) - p);
		if (s->len + len + 1 > s->cap) {
			if (s->len + len + 1 > RECORD_MAX) {
				git_fail("git status printed a record of "
				    "over %d bytes", RECORD_MAX);
				return -1;
			}
			s->cap = (s->len + len + 1) * 2;
			if ((nr = realloc(s->rec, s->cap)) == NULL)
				return -1;
			s->rec = nr;
		}
		memcpy(s->rec + s->len, p, len);
		s->len += len;
		s->rec[s->len] = '\0';
		if (z == NULL)
			break;
		if (field(s, s->rec, s->len) == -1)
			return -1;
		s->len = 0;
		p = z + 1;
	}
	return 0;
}

static int
digest_sink(void *ctx, const char *p, size_t n)
{
	return put(ctx, p, n);
}

/*
 * The commits checked out in the submodules git status found moved:
 * git diff (index against work tree) prints "Subproject commit" lines for
 * them, from their HEAD, without running anything in them.
 */
static int
put_links(struct snap *s, char **env)
{
	static const char *const diff[] = {
		"git", "--no-pager", "diff", "--no-ext-diff", "--no-textconv",
		"--no-color", "--no-relative", "--submodule=short",
		"--ignore-submodules=dirty", "--src-prefix=a/",
		"--dst-prefix=b/", "--"
	};
	const char *args[NELEM(diff) + LINKS_BATCH + 1];
	char *spec[LINKS_BATCH];
	size_t i, k, n;
	int rc = 0;

	memcpy(args, diff, sizeof(diff));
	for (i = 0; i < s->n_links && rc == 0; i += n) {
		n = s->n_links - i < LINKS_BATCH ? s->n_links - i : LINKS_BATCH;
		for (k = 0; k < n; k++)
			if (asprintf(&spec[k], ":(top,literal)%s",
			    s->links[i + k]) == -1)
				break;
		if (k == n) {
			for (k = 0; k < n; k++)
				args[NELEM(diff) + k] = spec[k];
			args[NELEM(diff) + n] = NULL;
			if (put(s, "L", 1) == -1 ||
			    git_run(args, env, s->until, digest_sink, s) != 0)
				rc = -1;
		} else
			rc = -1;
		while (k-- > 0)
			free(spec[k]);
	}
	return rc;
}

int
progress_git(char hex[DIGEST_HEX_LEN + 1])
{
	return progress_git_except(hex, NULL);
}

int
progress_git_except(char hex[DIGEST_HEX_LEN + 1], const char *skip)
{
	static const char *const status[] = {
		"git", "--no-pager", "status", "--porcelain=v2", "-z",
		"--branch", "--no-ahead-behind", "--untracked-files=all",
		"--no-renames", "--ignore-submodules=dirty", NULL
	};
	char top[PATH_MAX];
	struct gitenv e;
	struct snap *s;
	int rc = -1;
	size_t i;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	s->until = mono_now() + GIT_TIMEOUT;
	s->skip = skip;
	s->top = -1;
	if (git_begin(&e, top, s->until) == -1) {
		free(s);
		return -1;
	}
	s->topname = top;
	if ((s->top = open(top, O_RDONLY | O_DIRECTORY | O_NONBLOCK |
	    O_CLOEXEC)) == -1) {
		git_fail("%s: %s", top, strerror(errno));
		goto out;
	}
	if ((s->d = digest_new()) == NULL)
		goto out;
	if (strcmp(last_top, top) == 0)
		s->prev = &last_seen;
	s->now = time(NULL);
	if (git_run(status, e.v, s->until, status_sink, s) != 0)
		goto out;
	/* A last record without its NUL: as it is. */
	if (s->len > 0 && (put(s, "X", 1) == -1 ||
	    put(s, s->rec, s->len) == -1))
		goto out;
	if (s->n_links > 0 && put_links(s, e.v) == -1)
		goto out;
	rc = digest_final(s->d, hex);
	s->d = NULL;
	/* What this one read is what the next may keep. */
	seen_free(&last_seen);
	last_seen = s->seen;
	memset(&s->seen, 0, sizeof(s->seen));
	snprintf(last_top, sizeof(last_top), "%s", top);
out:
	if (s->d != NULL)
		digest_abort(s->d);
	if (s->top != -1)
		close(s->top);
	for (i = 0; i < s->n_links; i++)
		free(s->links[i]);
	free(s->links);
	free(s->rec);
	seen_free(&s->seen);
	free(s);
	git_end(&e);
	return rc;
}
