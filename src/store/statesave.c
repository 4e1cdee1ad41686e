/* SPDX-License-Identifier: ISC */
/*
 * Writing the state file (SPEC §6) so that a crash at any instant leaves
 * the old file or the new one, never a mix.
 *
 * The JSON is written by atomic_write() (core): a temp file
 * ".NAME.tmp.XXXXXX" beside the target, 0600, fsynced, closed, renamed
 * over the target, then the directory fsynced so the rename itself
 * survives a crash; the first save of a process removes the temp files a
 * killed writer left.  On any failure the old file is untouched and no
 * temp file is left.  Missing parent directories are created 0700.
 * With --follow-symlinks the link chain is resolved first and the file it
 * ends at is replaced, not the link; without it a link at the path is
 * refused.
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
#include "store.h"
#include "backend.h"
#include "guard.h"

/*
 * text to path atomically (atomic_write(), the file's header comment);
 * with stale, the temp files a killed writer left beside it are removed
 * first.
 */
static int
write_text(const char *path, int follow_symlinks, const char *text,
    int stale, char *err, size_t errlen)
{
	char target[PATH_MAX];
	size_t n;
	struct stat st;
	int rc;

	if (follow_symlinks) {
		if (resolve_link(path, target, sizeof(target)) == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
	} else {
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
			snprintf(err, errlen, "%s: is a symbolic link "
			    "(use --follow-symlinks)", path);
			return -1;
		}
		if (snprintf(target, sizeof(target), "%s", path) >=
		    (int)sizeof(target)) {
			snprintf(err, errlen, "%s: %s", path,
			    strerror(ENAMETOOLONG));
			return -1;
		}
	}
	if ((n = strlen(target)) == 0 || target[n - 1] == '/') {
		snprintf(err, errlen, "%s: %s", path, strerror(EISDIR));
		return -1;
	}
	if (file_mkdirs(target, err, errlen) == -1 ||
	    guard_dir(target, err, errlen) == -1)
		return -1;
	/* Only a regular file of ours is ever replaced: a FIFO, a device or
	 * a directory at the path stays as it is. */
	if (lstat(target, &st) == 0 && (!S_ISREG(st.st_mode) ||
	    guard_file(target, &st, err, errlen) == -1)) {
		if (!S_ISREG(st.st_mode))
			snprintf(err, errlen, "%s: not a regular file", target);
		return -1;
	}
	rc = atomic_write(target, text, strlen(text), 0600, ATOMIC_SYNC_DIR |
	    (stale ? ATOMIC_STALE : 0));
	if (rc == -2)
		snprintf(err, errlen, "%s: sync of directory failed: %s", path,
		    strerror(errno));
	else if (rc == -1)
		snprintf(err, errlen, "%s: write failed: %s", path,
		    strerror(errno));
	return rc == 0 ? 0 : -1;
}

int
store_write_text(const char *path, const char *text, char *err,
    size_t errlen)
{
	return write_text(path, 0, text, 0, err, errlen);
}

int
state_save(const char *path, int follow_symlinks, const struct cb_state *s,
    char *err, size_t errlen)
{
	static int swept;
	char *text = NULL;
	int rc;

	if ((text = state_text(s)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	/* Never write what the loader would refuse: a state grown past its
	 * size limit (a long --history-size of long messages) loses its
	 * oldest history events until it fits. */
	if (strlen(text) > (size_t)MAX_STATE_SIZE) {
		struct cb_state t = *s;
		size_t len = strlen(text), drop;

		while (text != NULL && len > (size_t)MAX_STATE_SIZE &&
		    t.n_history > 0) {
			/* In proportion to the excess, oldest first. */
			drop = (size_t)((double)t.n_history * (double)(len -
			    (size_t)MAX_STATE_SIZE) / (double)len) + 1;
			if (drop > t.n_history)
				drop = t.n_history;
			t.history += drop;
			t.n_history -= drop;
			free(text);
			if ((text = state_text(&t)) != NULL)
				len = strlen(text);
		}
		if (text == NULL) {
			snprintf(err, errlen, "%s: out of memory", path);
			return -1;
		}
		if (len > (size_t)MAX_STATE_SIZE) {
			snprintf(err, errlen, "%s: state larger than %ld bytes "
			    "even without history; not written", path,
			    MAX_STATE_SIZE);
			free(text);
			return -1;
		}
	}
	/* Every caller holds the circuit's lock, so no live writer owns a
	 * temp file; once per process is enough, a loop of runs need not
	 * read the directory again. */
	rc = write_text(path, follow_symlinks, text, !swept, err, errlen);
	swept = 1;
	free(text);
	return rc;
}
