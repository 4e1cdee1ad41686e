/*
 * Status a command reports about itself (SPEC §3.2): a block on stdout
 * between ---CBEXEC_STATUS--- and ---END_CBEXEC_STATUS--- (or the RALPH
 * spellings), or a file at $CBEXEC_STATUS_FILE.  Pure parsing, no I/O.
 */
#ifndef CBEXEC_STATUS_H
#define CBEXEC_STATUS_H

#include <stddef.h>

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

/*
 * Parse the status file's text: KEY: value or KEY=value lines (an optional
 * block marker line is skipped), or one JSON object.  Returns 1 when
 * something was parsed, 0 when the text is empty, -1 when malformed
 * (r->warning says why; whatever parsed is kept).
 */
int status_parse_text(const char *p, size_t n, struct status_report *r);

#endif
