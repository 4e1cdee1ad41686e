/*
 * Progress sources (SPEC §3.1): fingerprints of the work tree taken just
 * before and after a run, a progress command, and the phase rules that
 * judge reported metrics.
 */
#ifndef CBEXEC_PROGRESS_H
#define CBEXEC_PROGRESS_H

#include <stddef.h>

#include "digest.h"
#include "status.h"

struct cJSON;

enum {
	PROG_GIT = 1 << 0,
	PROG_FILES = 1 << 1,
	PROG_STATUS = 1 << 2,
	PROG_CMD = 1 << 3,
	PROG_EXIT = 1 << 4,
	PROG_AUTO = 1 << 5
};

/* "git,files" -> mask; -1 naming the bad word in err. */
int progress_parse_list(const char *s, unsigned *mask, char *err, size_t errlen);

/* A phase: its thresholds and the rule that says what progress means. */
enum metric_dir { DIR_UP, DIR_DOWN, DIR_TRUE };

struct phase_metric {
	char *key;		/* lower case */
	enum metric_dir dir;
};

struct phase_def {
	char *name;		/* upper case */
	int no_progress;	/* threshold, 0 = not set */
	int same_error;
	struct phase_metric *metrics;
	size_t n_metrics;
	int green_rule;		/* tests_failing down with the same total */
};

/* RED, GREEN, REFACTOR, DOCUMENT (SPEC §1's table). */
const struct phase_def *phase_builtin(const char *name);	/* case-insens. */

/*
 * Judge a run's reported metrics by the phase rule.  last is the phase's
 * object in last_progress_metric (may be NULL: no baseline yet).  Returns
 * -1 when the report names none of the phase's metrics (the rule cannot
 * decide), else 1 (progress) or 0.  A metric with no baseline counts as
 * progress when "up" and above 0, or "true" and true.
 */
int phase_judge(const struct phase_def *p, const struct status_report *r,
    const struct cJSON *last);

/*
 * Store the phase's metrics reported in r into root[phase] (creating
 * objects as needed); called when a run made progress so the next run is
 * compared against it.  0 / -1 on ENOMEM.
 */
int phase_remember(struct cJSON *root, const struct phase_def *p,
    const struct status_report *r);

/* Fingerprint configuration. */
struct progress_cfg {
	char **watch;		/* --watch DIRs; none: "." */
	size_t n_watch;
	char **exclude;		/* --exclude GLOBs (fnmatch on the path
				 * relative to its watch dir and on the
				 * basename) */
	size_t n_exclude;
	const char *state_dir;	/* excluded from "files" */
};

/* 1 when the working directory is inside a git work tree, else 0. */
int progress_in_git(void);

/*
 * "git" fingerprint of the working directory's repository: HEAD, the diff
 * of tracked files against HEAD, and the path/size/mtime of untracked
 * non-ignored files.  0 / -1 (not a repository, git missing).
 */
int progress_git(char hex[DIGEST_HEX_LEN + 1]);

/*
 * "files" fingerprint: path, size, mtime, mode of every file under the
 * watch dirs, excluding .git, the state dir and the globs.  0 / -1.
 * With fw, the directories are also watched for changes from then on, and
 * *fw is set (NULL when it cannot be: files_changed(NULL) is 1).
 */
struct files_watch;
int progress_files(const struct progress_cfg *c, char hex[DIGEST_HEX_LEN + 1],
    struct files_watch **fw);
/* 0 when nothing the fingerprint covers changed since the walk, so a new
 * fingerprint would be the same; 1 when something may have. */
int files_changed(struct files_watch *fw);
void files_watch_free(struct files_watch *fw);

/*
 * Run cmd with /bin/sh -c, stdout captured (at most 64 KiB), killed after
 * timeout seconds.  Its output, key=value lines or one number (stored as
 * "metric"), becomes metrics in *r.  Returns 0, or -1 (could not run,
 * non-zero exit, no usable output) with a reason in err.
 */
int progress_cmd(const char *cmd, double timeout, struct status_report *r,
    char *err, size_t errlen);

#endif
