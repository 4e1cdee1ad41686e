/* SPDX-License-Identifier: ISC */
/*
 * Judging a run: what the command reported about itself (SPEC §3.2, the
 * status block and file), whether it made progress (§3.1, the work-tree
 * fingerprints, the progress command and the phase rules), and how it
 * failed (§4, the classifier and the error fingerprint).  Pure parsing and
 * classification, plus the fingerprints of the work tree.
 */
#ifndef CBEXEC_JUDGE_H
#define CBEXEC_JUDGE_H

#include <regex.h>
#include <stddef.h>

#include "breaker.h"
#include "core.h"

struct cJSON;

/* Status a command reports about itself (status.c, scanner.c). */

enum run_status {
	RS_NONE,		/* no STATUS key */
	RS_IN_PROGRESS,
	RS_COMPLETE,
	RS_BLOCKED
};

struct metric {
	char *key;		/* lower-cased key, e.g. "tests_passing" */
	double value;		/* numbers as numbers; true/false as 1/0 */
};

struct status_report {
	int present;		/* a block or file was parsed */
	enum run_status status;
	int exit_signal;	/* -1 unset, 0 false, 1 true */
	char *task;		/* TASK, or NULL */
	char *tests_status;	/* TESTS_STATUS as written, or NULL */
	char *recommendation;
	struct metric *metrics;	/* every key whose value is a number or a
				 * boolean; TASKS_COMPLETED_THIS_LOOP is also
				 * stored as "tasks_completed" */
	size_t n_metrics;
	char warning[160];	/* non-empty: what was malformed */
};

void status_init(struct status_report *r);
void status_free(struct status_report *r);
/* The metric named key (lower case): 1 and *v when present, else 0. */
int status_metric(const struct status_report *r, const char *key, double *v);
/* 1 when the report says the loop is done: COMPLETE, or EXIT_SIGNAL true,
 * and not an explicit EXIT_SIGNAL false. */
int status_done(const struct status_report *r);

/*
 * A streaming scanner over a command's stdout.  Bytes are fed as they
 * arrive, split anywhere; the last complete block wins.  Memory is bounded:
 * a block longer than 64 KiB is dropped with a warning.  Blocks embedded in
 * a JSON string (lines joined by \n escapes) are found too.
 */
struct status_scanner;

struct status_scanner *status_scanner_new(void);	/* NULL on ENOMEM */
void status_scanner_feed(struct status_scanner *s, const char *p, size_t n);
/* Move the last block found (if any) into *r, which must be initialised.
 * Returns 1 when a block was found, 0 when none. */
int status_scanner_result(struct status_scanner *s, struct status_report *r);
void status_scanner_free(struct status_scanner *s);

/* The JSON string body b[0..n) (escapes, no quotes) unescaped in place;
 * its new length.  A broken escape is kept as it is. */
size_t json_unescape(char *b, size_t n);

/*
 * Parse the status file's text: KEY: value or KEY=value lines (an optional
 * block marker line is skipped), or one JSON object.  Returns 1 when
 * something was parsed, 0 when the text is empty, -1 when malformed
 * (r->warning says why; whatever parsed is kept).
 */
int status_parse_text(const char *p, size_t n, struct status_report *r);

/* Progress sources (phase.c, gitprint.c, filesprint.c, fswatch.c,
 * probe.c). */

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
	const char *skip;	/* one file left out of both fingerprints (the
				 * status file), or NULL */
};

/* 1 when the working directory is inside a git work tree, else 0. */
int progress_in_git(void);

/*
 * "git" fingerprint of the working directory's repository (gitsnap.c):
 * HEAD, and what the work tree holds at each path git status lists as
 * changed or untracked (not ignored).  0 / -1 (not a repository, git
 * missing).
 */
int progress_git(char hex[DIGEST_HEX_LEN + 1]);
/* The same, leaving out the untracked file skip (the status file, when
 * the state lives in the work tree); skip may be NULL. */
int progress_git_except(char hex[DIGEST_HEX_LEN + 1], const char *skip);
/* Why the last git fingerprint failed, when known (a file git would
 * block on, the deadline), else NULL. */
const char *progress_git_error(void);

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
 * Judging a run's progress (progress.c).  The sources in effect (PROG_*
 * after resolving auto), the phase, and what "files" watches.
 */
struct progress_ctx {
	unsigned sources;
	const struct phase_def *phase;	/* NULL: none */
	struct progress_cfg files;
};

/* Work-tree fingerprints before or after a run; "" when the source is off
 * or failed. */
struct prints {
	char git[DIGEST_HEX_LEN + 1];
	char files[DIGEST_HEX_LEN + 1];
	struct files_watch *fw;	/* before: what changed since "files" */
};

/* Take the fingerprints of the enabled sources: before a run (before
 * NULL), or after it, when before's watch may spare a walk (and is freed).
 * Returns the PROG_* bits of the sources that failed. */
unsigned take_prints(const struct progress_ctx *x, struct prints *p,
    struct prints *before);

/* SPEC §3.1: did this run make progress (1 / 0)?  *baseline is the
 * state's last_progress_metric, created and updated as the phase rule and
 * the progress command's "went up" need. */
int judge_progress(const struct progress_ctx *x, struct cJSON **baseline,
    const struct prints *before, const struct prints *after,
    const struct status_report *st, const struct status_report *cmd,
    int success);

/*
 * Run cmd with /bin/sh -c, stdout captured (at most 64 KiB), killed after
 * timeout seconds.  Its output, key=value lines or one number (stored as
 * "metric"), becomes metrics in *r.  Returns 0, or -1 (could not run,
 * non-zero exit, no usable output) with a reason in err.
 */
int progress_cmd(const char *cmd, double timeout, struct status_report *r,
    char *err, size_t errlen);

/* Failure classification (classify.c, rules.c, text.c, normalize.c): a
 * pure function from what a run did to a class, a type, a message and the
 * message's fingerprint. */

enum { RULE_STDERR = 1, RULE_STDOUT = 2 };

/* A user rule from the config file (SPEC §6), tried before the built-ins. */
struct rule {
	char *pattern;		/* as written, for messages */
	regex_t re;		/* REG_EXTENDED | REG_ICASE | REG_NEWLINE */
	int streams;		/* RULE_STDERR and/or RULE_STDOUT; default stderr */
	int *exit_codes;	/* NULL: any failed run (non-ok exit) */
	size_t n_exit_codes;
	enum cb_class cls;
	char *type;
};

/*
 * Compile r from its parts.  A NULL exit list means "any run that already
 * failed"; a list naming a code lets the rule match runs with that code,
 * including 0 (so it may turn a success into an error).  On error returns
 * -1 and writes a one-line reason into err.
 */
int rule_init(struct rule *r, const char *pattern, int streams,
    const int *exit_codes, size_t n_exit_codes, enum cb_class cls,
    const char *type, char *err, size_t errlen);
void rule_free(struct rule *r);

/* What one run did, as the supervisor saw it. */
struct run_facts {
	const char *command;	/* argv[0], for exec-failure messages */
	int exec_errno;		/* errno of cbexec's own exec, 0 when it ran */
	int exit_code;		/* exit status when it exited, else -1 */
	int signo;		/* signal that ended it, 0 when it exited */
	int signalled_by_us;	/* cbexec sent that signal (timeout, abort) */
	int timed_out;		/* --timeout or the budget stopped it */
	const char *err;	/* stderr tail (may hold NULs and bad UTF-8) */
	size_t err_len;
	const char *out;	/* stdout tail, NULL when not captured */
	size_t out_len;
	const int *ok_codes;	/* --ok-exit-codes; {0} by default */
	size_t n_ok_codes;
	const char *tmpdir;	/* $TMPDIR for normalisation, or NULL */
	/* A known agent (§9): stdout is classified too, and its structured
	 * outcome comes first.  NULL for any other command. */
	const struct agent_verdict *agent;
	/* cbexec stopped the run for a reason of its own: --idle-timeout
	 * (class timeout, type "idle"), a per-run spend cap (class budget)
	 * or a loop of tool calls (recoverable, "loop"); the message names
	 * it.  stop_type NULL: none.  A spend cap or a loop decides the class
	 * whatever else the run did; silence is a timeout unless a client
	 * was retrying a provider error then. */
	const char *stop_type;
	enum cb_class stop_cls;
	const char *stop_message;
};

/*
 * What an agent adapter (agent.h) made of a known agent's output: its
 * structured outcome, which classify() takes before the built-in rows.
 * Strings are borrowed from the adapter.
 */
struct agent_verdict {
	int failed;		/* the structured result says the run failed
				 * (is_error, turn.failed, an error event, an
				 * "[API Error: ...]" result), whatever the
				 * exit status */
	const char *message;	/* that error's own message, one line, or
				 * NULL */
	int http_status;	/* its HTTP status, 0 when none was given */
	const char *type;	/* a type the adapter settled (a Gemini exit
				 * code, a rejected rate-limit event), or
				 * NULL */
	enum cb_class cls;	/* with type */
	int retrying;		/* the client was retrying a transient error
				 * when the run ended */
	const char *retry_type;	/* that error's type and message */
	const char *retry_message;
	const struct rule *rules;	/* the adapter's own rows, tried on
					 * its messages before the built-ins */
	size_t n_rules;
	int structured;		/* the output was the client's JSON: the
				 * rows read only its own lines (own),
				 * never the tool results, file contents
				 * and answers the stream carries */
	const char *own;	/* its lines of stdout that were not JSON */
	size_t own_len;
};

struct classification {
	enum cb_class cls;
	char type[64];		/* "" on success */
	char *message;		/* malloc'd raw line, NULL on success */
	char hash[DIGEST_HEX_LEN + 1];	/* "" on success */
};

/*
 * Classify: user rules first (first match wins), then the built-in table in
 * SPEC §4 order.  Returns 0, or -1 on ENOMEM.
 */
int classify(const struct rule *rules, size_t n_rules,
    const struct run_facts *f, struct classification *out);
void classification_free(struct classification *c);
/* Every built-in pattern compiled now (classify compiles each when it is
 * first needed): 0, or -1 if one does not compile or a line mark matches
 * an empty line (classify skips an empty text). */
int classify_compile_all(void);

/*
 * The type of one message by the given rows (an adapter's own), then the
 * built-in ones: 1 with *cls and *type, 0 when none matches, -1 on ENOMEM.
 */
int message_type(const struct rule *rules, size_t n_rules, const char *msg,
    enum cb_class *cls, const char **type);

/*
 * The type of a provider error from its HTTP status alone (401 auth, 429
 * rate_limited, 503 overloaded, ...): 0 with *cls and *type, -1 when the
 * status says nothing.
 */
int status_type(int http_status, enum cb_class *cls, const char **type);

/*
 * When a provider says to try again (retry.c): the first reset time in s
 * (epoch seconds, "resets 9:23pm (UTC)", "try again at 3:04 PM." in local
 * time, ...) into h->at and the first delay ("retry-after: 2", "Please
 * retry in 12s", retryDelayMs, ...) into h->after; 0 where none.  Returns
 * 1 when either was found.  Reads the tz database for zone names.
 */
struct retry_hint {
	double at;		/* epoch seconds, 0: none */
	double after;		/* seconds, 0: none */
};
int retry_hint(const char *s, double now, struct retry_hint *h);
/*
 * A hint made safe to keep (SPEC §9): a time or delay that is not a
 * finite number > 0 is none, and none is more than RETRY_MAX (31 days)
 * ahead of now -- no provider gives one weeks ahead, and the state must
 * never hold a time it cannot load.  Returns 1 when one was cut.
 */
#define RETRY_MAX	(31 * 86400.0)
int retry_bound(struct retry_hint *h, double now);

/*
 * The normalised form of msg (malloc'd): ANSI escapes stripped, ISO-8601
 * timestamps -> <TS>, UUIDs -> <UUID>, 0x-hex and 8+ char hex words with a
 * digit -> <HEX>, temporary paths -> <TMP>, digit runs -> N, whitespace
 * folded and trimmed.  tmpdir may be NULL.
 */
char *normalize_message(const char *msg, const char *tmpdir);

/* SHA-256 hex of type, a NUL, and normalize_message(msg).  0 / -1. */
int error_fingerprint(const char *type, const char *msg, const char *tmpdir,
    char hex[DIGEST_HEX_LEN + 1]);

#endif
