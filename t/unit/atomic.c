/* SPDX-License-Identifier: ISC */
/*
 * atomic_write() (core/atomic.c), the one way cbexec replaces a file: the
 * bytes and the mode asked for, a new inode renamed in (a hard link to the
 * old file keeps the old bytes), no temp file left after a success or a
 * failure, the old file as it was after a failed write, a link at the
 * path replaced and not followed, and the temp files of a killed writer
 * removed only when asked and only its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "tap.h"

static char top[512];

static const char *
at(const char *name)
{
	static char buf[4][700];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", top, name);
	return buf[i];
}

/* The file's bytes (up to 255), or "(none)". */
static const char *
slurp(const char *path)
{
	static char buf[256];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return "(none)";
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void
put(const char *name, const char *text)
{
	int fd = open(at(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd != -1) {
		if (write(fd, text, strlen(text)) == -1)
			perror(name);
		close(fd);
	}
}

/* How many names in the directory start with ".NAME.tmp.". */
static int
temps(const char *name)
{
	char prefix[300], **v;
	int dfd, n = 0;
	size_t i;

	snprintf(prefix, sizeof(prefix), ".%s.tmp.", name);
	if ((dfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if ((v = file_names(dfd, "")) != NULL) {
		for (i = 0; v[i] != NULL; i++)
			n += strncmp(v[i], prefix, strlen(prefix)) == 0;
		file_names_free(v);
	}
	close(dfd);
	return n;
}

static int
mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

int
main(void)
{
	struct stat a, b;
	struct rlimit rl, small;
	mode_t um;
	int rc, e;

	snprintf(top, sizeof(top), "%s/cbexec-atomic.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(top) == NULL) {
		printf("1..0 # skip no temporary directory\n");
		return 0;
	}
	um = umask(077);

	/* A new file: its bytes, the mode asked for whatever the umask. */
	is_int(atomic_write(at("new.prom"), "a 1\n", 4, 0644, 0), 0,
	    "a new file: 0");
	is_str(slurp(at("new.prom")), "a 1\n", "a new file: its bytes");
	is_int(mode_of(at("new.prom")), 0644, "0644 under umask 077");
	is_int(temps("new.prom"), 0, "a new file: no temp file left");
	is_int(atomic_write(at("st.json"), "{}\n", 3, 0600, ATOMIC_SYNC_DIR),
	    0, "with ATOMIC_SYNC_DIR: 0");
	is_int(mode_of(at("st.json")), 0600, "0600");
	is_int(atomic_write(at("empty"), "", 0, 0600, 0), 0, "no bytes: 0");
	is_str(slurp(at("empty")), "", "no bytes: an empty file");

	/* A replacement is a new inode renamed in: a link to the old one
	 * keeps what it had, so no reader ever sees a mix. */
	put("old", "old bytes\n");
	if (link(at("old"), at("old.link")) == -1)
		perror("link");
	stat(at("old"), &a);
	is_int(atomic_write(at("old"), "new\n", 4, 0600, ATOMIC_SYNC_DIR), 0,
	    "a replacement: 0");
	stat(at("old"), &b);
	is_str(slurp(at("old")), "new\n", "a replacement: the new bytes");
	ok(a.st_ino != b.st_ino, "a replacement: a new inode renamed in");
	is_str(slurp(at("old.link")), "old bytes\n",
	    "a link to the old inode keeps the old bytes");

	/* A link at the path is replaced, its target left alone. */
	put("target", "target\n");
	if (symlink("target", at("ln")) == -1)
		perror("symlink");
	is_int(atomic_write(at("ln"), "over\n", 5, 0600, 0), 0,
	    "a symlink at the path: 0");
	ok(lstat(at("ln"), &a) == 0 && S_ISREG(a.st_mode),
	    "the link is replaced by a regular file");
	is_str(slurp(at("target")), "target\n", "its target is untouched");

	/* Failures: -1 with errno, the old file as it was, no temp file. */
	errno = 0;
	rc = atomic_write(at("nodir/x"), "x", 1, 0600, 0);
	e = errno;
	is_int(rc, -1, "a missing directory: -1");
	is_int(e, ENOENT, "a missing directory: ENOENT");
	if (mkdir(at("adir"), 0700) == -1)
		perror("mkdir");
	errno = 0;
	rc = atomic_write(at("adir"), "x", 1, 0600, 0);
	e = errno;
	is_int(rc, -1, "a directory at the path: -1");
	ok(e == EISDIR || e == ENOTEMPTY || e == EEXIST,
	    "a directory at the path: the rename's errno");
	is_int(temps("adir"), 0, "a directory at the path: no temp file left");
	is_int(mode_of(at("adir")) != -1, 1, "the directory is still there");
	errno = 0;
	rc = atomic_write(at("dir/"), "x", 1, 0600, 0);
	is_int(rc, -1, "a path ending in /: -1");
	is_int(errno, EISDIR, "a path ending in /: EISDIR");

	/* A write the disk refuses half way (the file size limit stands in
	 * for a full disk): the old bytes stay. */
	put("full", "the old state\n");
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &rl);
	small = rl;
	small.rlim_cur = 4;
	if (setrlimit(RLIMIT_FSIZE, &small) == 0) {
		errno = 0;
		rc = atomic_write(at("full"), "a new state, too long\n", 22,
		    0600, ATOMIC_SYNC_DIR);
		e = errno;
		setrlimit(RLIMIT_FSIZE, &rl);
		is_int(rc, -1, "a refused write: -1");
		is_int(e, EFBIG, "a refused write: its errno");
		is_str(slurp(at("full")), "the old state\n",
		    "a refused write: the old bytes stay");
		is_int(temps("full"), 0, "a refused write: no temp file left");
	} else {
		printf("ok %d # skip setrlimit: %s\n", ++tap_n,
		    strerror(errno));
	}

	/* A killed writer's temp files: removed with ATOMIC_STALE only, and
	 * only the target's own (its prefix and six characters, a regular
	 * file). */
	put(".s.json.tmp.Ab12Cd", "torn");
	put(".s.json.tmp.Ab12", "not ours: four characters");
	put(".t.json.tmp.Ab12Cd", "another file's");
	if (mkdir(at(".s.json.tmp.Zz99Yy"), 0700) == -1)
		perror("mkdir");
	is_int(atomic_write(at("s.json"), "1", 1, 0600, 0), 0,
	    "without ATOMIC_STALE: 0");
	is_int(temps("s.json"), 3, "without ATOMIC_STALE: the temps stay");
	is_int(atomic_write(at("s.json"), "2", 1, 0600, ATOMIC_STALE), 0,
	    "with ATOMIC_STALE: 0");
	is_str(slurp(at(".s.json.tmp.Ab12Cd")), "(none)",
	    "a dead writer's temp file is removed");
	is_str(slurp(at(".s.json.tmp.Ab12")), "not ours: four characters",
	    "a name of another length stays");
	is_str(slurp(at(".t.json.tmp.Ab12Cd")), "another file's",
	    "another file's temp file stays");
	is_int(mode_of(at(".s.json.tmp.Zz99Yy")) != -1, 1,
	    "a directory of the same name stays");
	is_str(slurp(at("s.json")), "2", "and the file is written");

	umask(um);
	{
		char cmd[800];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", top);
	}
	return done_testing();
}
