/* SPDX-License-Identifier: ISC */
/*
 * Which config files cbexec takes orders from (SPEC §1, §6).  A config
 * can name programs to run (--on-state-change, --progress-cmd) and can
 * loosen every limit, so only the operator's own are read implicitly:
 * --config FILE when given, else the user's
 * ${XDG_CONFIG_HOME:-$HOME/.config}/cbexec/config.json.  The working
 * directory's .cbexec/config.json is the command's to write, so it is read
 * only after the operator approved that exact content, as direnv's
 * "allow" does: `cbexec --allow-config [FILE]` keeps the SHA-256 of the
 * file in the state directory, under allow/ with the SHA-256 of the
 * file's canonical path as its name.  An unapproved file is ignored with
 * a notice; an approved file that changed is refused until it is reviewed
 * and approved again.  The bytes hashed are the bytes parsed: the file is
 * read once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "driver.h"
#include "invocation.h"

#define TREE_CONFIG ".cbexec/config.json"

/* The canonical path of file (its directory resolved, its own name
 * kept: the file itself is never followed). */
static int
canonical(const char *file, char *out, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *base = strrchr(file, '/');

	if (file_dir_of(file, dir, sizeof(dir)) == -1 ||
	    realpath(dir, real) == NULL)
		return -1;
	base = base != NULL ? base + 1 : file;
	if (snprintf(out, len, "%s/%s", strcmp(real, "/") == 0 ? "" : real,
	    base) >= (int)len)
		return errno = ENAMETOOLONG, -1;
	return 0;
}

/* The approval record of the file at canonical path cpath. */
static char *
record_path(const char *cpath, char *err, size_t len)
{
	char hex[DIGEST_HEX_LEN + 1], *dir, *p = NULL;

	if ((dir = circuit_state_dir(err, len)) == NULL)
		return NULL;
	if (digest_hex(cpath, strlen(cpath), hex) == -1 ||
	    asprintf(&p, "%s/allow/%s", dir, hex) == -1) {
		snprintf(err, len, "out of memory");
		p = NULL;
	}
	free(dir);
	return p;
}

/* Check that the directory of path is ours alone (or create it 0700). */
static int
trusted_dir(const char *path, int create, char *err, size_t len)
{
	char dir[PATH_MAX], why[160], *p;
	struct stat st;

	if (file_dir_of(path, dir, sizeof(dir)) == -1) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (create) {
		/* Every missing level, 0700, as for state files. */
		for (p = dir + 1; (p = strchr(p, '/')) != NULL; p++) {
			*p = '\0';
			if (mkdir(dir, 0700) == -1 && errno != EEXIST)
				goto mkfail;
			*p = '/';
		}
		if (mkdir(dir, 0700) == -1 && errno != EEXIST)
			goto mkfail;
	}
	if (stat(dir, &st) == -1)
		return errno == ENOENT && !create ? 0 : -1;
	if (!S_ISDIR(st.st_mode) || file_trusted(&st, why, sizeof(why)) == -1) {
		snprintf(err, len, "%s: %s; not trusted", dir,
		    S_ISDIR(st.st_mode) ? why : "not a directory");
		return -1;
	}
	return 0;
mkfail:
	snprintf(err, len, "%s: cannot create directory: %s", dir,
	    strerror(errno));
	return -1;
}

/*
 * The content hash approved for the file at cpath: 1 with it in hex,
 * 0 when none was, -1 on error.
 */
static int
approved(const char *cpath, char hex[DIGEST_HEX_LEN + 1], char *err,
    size_t len)
{
	char *rec, buf[DIGEST_HEX_LEN + 8 + PATH_MAX + 2], why[160];
	struct stat st;
	ssize_t n;
	int fd, rc = -1;

	if ((rec = record_path(cpath, err, len)) == NULL)
		return -1;
	if (trusted_dir(rec, 0, err, len) == -1)
		goto out;
	if ((fd = file_open(rec, O_RDONLY, 0, 0)) < 0) {
		if (fd == -1 && errno == ENOENT)
			rc = 0;
		else
			snprintf(err, len, "%s: %s", rec, file_why(fd));
		goto out;
	}
	if (fstat(fd, &st) == -1 || file_trusted(&st, why, sizeof(why)) == -1) {
		snprintf(err, len, "%s: %s; not trusted", rec, why);
		close(fd);
		goto out;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 7 + DIGEST_HEX_LEN || strncmp(buf, "sha256:", 7) != 0) {
		snprintf(err, len, "%s: not an approval cbexec wrote", rec);
		goto out;
	}
	memcpy(hex, buf + 7, DIGEST_HEX_LEN);
	hex[DIGEST_HEX_LEN] = '\0';
	rc = 1;
out:
	free(rec);
	return rc;
}

int
config_implicit(struct options *o, char *err, size_t len)
{
	char cpath[PATH_MAX], want[DIGEST_HEX_LEN + 1], have[DIGEST_HEX_LEN + 1];
	char *dir, *user = NULL, *text, *q;
	struct stat st;
	size_t n;
	int missing, rc;

	/* No config directory (no HOME) is no user config. */
	if ((dir = xdg_dir("XDG_CONFIG_HOME", ".config", "cbexec")) != NULL) {
		rc = asprintf(&user, "%s/config.json", dir);
		free(dir);
		if (rc == -1) {
			snprintf(err, len, "out of memory");
			return -1;
		}
	}
	/* One the user cannot even see (HOME another user's, as under
	 * sudo -u) is no config of theirs. */
	rc = user != NULL && stat(user, &st) == 0 ?
	    config_load(o, user, 1, err, len) : 0;
	free(user);
	if (rc == -1)
		return -1;

	/* The work tree's, only as approved. */
	if (lstat(TREE_CONFIG, &st) == -1)
		return 0;
	if (canonical(TREE_CONFIG, cpath, sizeof(cpath)) == -1) {
		snprintf(err, len, "%s: %s", TREE_CONFIG, strerror(errno));
		return -1;
	}
	if ((q = shell_quote(cpath)) == NULL) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	if ((rc = approved(cpath, want, err, len)) <= 0) {
		/* Even with -q: a config not read is worth a line. */
		if (rc == 0)
			fprintf(stderr, "cbexec: %s is not approved and was "
			    "ignored (review it, then: cbexec --allow-config "
			    "%s)\n", cpath, q);
		free(q);
		return rc;
	}
	if ((text = config_read(TREE_CONFIG, 0, &n, &missing, err,
	    len)) == NULL) {
		free(q);
		return -1;
	}
	if (digest_hex(text, n, have) == -1 || strcmp(want, have) != 0) {
		snprintf(err, len, "%s changed since it was approved; review "
		    "it, then approve it again with: cbexec --allow-config %s",
		    cpath, q);
		rc = -1;
	} else
		rc = config_parse(o, cpath, text, n, err, len);
	free(text);
	free(q);
	return rc;
}

int
config_allow(const struct options *o)
{
	char cpath[PATH_MAX], hex[DIGEST_HEX_LEN + 1], err[4400];
	char *rec = NULL, *tmp = NULL, *text = NULL, *line = NULL;
	struct options scratch;
	size_t n;
	int missing, fd, rc = CB_EXIT_ERROR, w;

	options_init(&scratch);
	if ((text = config_read(o->allow_path, 0, &n, &missing, err,
	    sizeof(err))) == NULL)
		goto out;
	/* A config that would be refused is not approved. */
	if (config_parse(&scratch, o->allow_path, text, n, err,
	    sizeof(err)) == -1)
		goto out;
	if (canonical(o->allow_path, cpath, sizeof(cpath)) == -1) {
		snprintf(err, sizeof(err), "%s: %s", o->allow_path,
		    strerror(errno));
		goto out;
	}
	if (digest_hex(text, n, hex) == -1 ||
	    (rec = record_path(cpath, err, sizeof(err))) == NULL ||
	    trusted_dir(rec, 1, err, sizeof(err)) == -1)
		goto out;
	if ((w = asprintf(&line, "sha256:%s\n%s\n", hex, cpath)) == -1 ||
	    asprintf(&tmp, "%s.XXXXXX", rec) == -1) {
		tmp = NULL;
		snprintf(err, sizeof(err), "out of memory");
		goto out;
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1) {
		snprintf(err, sizeof(err), "%s: %s", rec, strerror(errno));
		goto out;
	}
	if (file_write_all(fd, line, (size_t)w) != w || fsync(fd) == -1) {
		snprintf(err, sizeof(err), "%s: %s", rec, strerror(errno));
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (close(fd) == -1 || rename(tmp, rec) == -1) {
		snprintf(err, sizeof(err), "%s: %s", rec, strerror(errno));
		unlink(tmp);
		goto out;
	}
	printf("cbexec: approved %s (sha256 %.12s...)\n", cpath, hex);
	rc = fflush(stdout) == EOF ? CB_EXIT_ERROR : CB_EXIT_OK;
	err[0] = '\0';
out:
	if (rc != CB_EXIT_OK && err[0] != '\0')
		fprintf(stderr, "cbexec: %s\n", err);
	options_free(&scratch);
	free(text);
	free(line);
	free(tmp);
	free(rec);
	return rc;
}
