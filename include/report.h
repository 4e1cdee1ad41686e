/* SPDX-License-Identifier: ISC */
/*
 * What cbexec tells people and machines (SPEC §5, §7): log lines on
 * stderr, the OPEN block, --status and --history output, the --log JSON
 * Lines file, the --metrics textfile and the --on-state-change hook; and
 * the menu it asks on a terminal when the circuit opens.
 */
#ifndef CBEXEC_REPORT_H
#define CBEXEC_REPORT_H

#include <stdio.h>

#include "breaker.h"
#include "judge.h"
#include "store.h"

/*
 * The "v" of every JSON document and --log line cbexec prints: the
 * vocabulary of cbexec(1)'s JSON section and contrib/schema/, one key for
 * one thing in every view and the log ("circuit", "reason", a "run"
 * event); the state file keeps its own (SPEC §6) names.  It grows only
 * when a member changes its meaning or goes away; new members come
 * without it.  2: "circuit" for the circuit in --status --all (was
 * "name"), --history's events in the log's words, "running" an object.
 */
#define JSON_VOCABULARY 2

struct cJSON;

/* The most logs besides --log an operator's act is written to. */
#define REPORT_MORE_LOGS 16

struct reporter {
	const char *label;	/* circuit name, else the state file path */
	const char *name;	/* --name or NULL (CBEXEC_NAME for hooks) */
	const char *state_path;
	int verbosity;		/* < 0 quiet: only errors and the OPEN block;
				 * <= -2 silent: nothing on stderr (the log
				 * still gets everything) */
	int color;		/* stderr is a terminal that takes colour */
	int log_fd;		/* --log, O_APPEND, or -1 */
	int log_stream;		/* --log - or /dev/stdout: 1; /dev/stderr:
				 * 2 (log_fd is that fd); 0: a file */
	const char *metrics_path;	/* --metrics or NULL */
	const char *hook;	/* --on-state-change CMD or NULL */
	const char *run_hook;	/* --on-run CMD or NULL */
	double hook_timeout;	/* --kill-after for the hooks */
	const char *log_path;	/* --log, for messages (reporter_open) */
	int follow;		/* --follow-symlinks: --log, --metrics too */
	const char *account;	/* --account NAME or NULL */
	int account_gate;	/* its gate (enum cb_circuit) as last seen, for
				 * --metrics; -1 not known */
	const char *store;	/* --store URL, or NULL: the file store */
	int store_fallback;	/* running on the local state instead */
	/* The logs the circuit's runs wrote on this host besides --log
	 * (SPEC §11: an operator's act goes there too), O_APPEND; opened
	 * by reporter_add_log(), closed by reporter_close(). */
	int more_fd[REPORT_MORE_LOGS];
	char *more_path[REPORT_MORE_LOGS];
	int n_more;
	struct cJSON *collect;	/* non-NULL: a copy of every event logged is
				 * added to this array (--record --json) */
};

/* Open the --log file (O_APPEND; NULL: none; "-" or /dev/stdout: cbexec's
 * stdout, /dev/stderr: its stderr, as they are) and decide on colour; the
 * caller has set the other fields.  0, or -1 with the message printed. */
int reporter_open(struct reporter *r, const char *log_path);
void reporter_close(struct reporter *r);
/* One more log for r's events: the existing regular file at path (never
 * made anew, no link followed unless follow), opened O_APPEND.  0; 1 when
 * there is no file at path any more; -1 with why in err. */
int reporter_add_log(struct reporter *r, const char *path, int follow,
    char *err, size_t errlen);

/* After a run: whether the command's output left cbexec's stdout and its
 * stderr in the middle of a line (its last byte no newline), so that the
 * next line cbexec writes there (a --log - object, a log line, the OPEN
 * block) ends that line first. */
void report_tails(int out_midline, int err_midline);

/* A finished run, as the breaker recorded it. */
struct run_report {
	long iteration;
	double at;			/* its history event's time, epoch
					 * seconds (0: now) */
	double started, duration;	/* epoch seconds, seconds */
	int exit_code;			/* -1 when killed or not run */
	int signo;
	int timed_out;
	int progress;
	int ignored;			/* CB_IGNORED_*, 0: counted */
	int stopped;			/* by a spend cap or a tool-call loop */
	int complete;			/* its status reported completion */
	const struct classification *c;
	const struct cb_usage *usage;	/* what the agent said it used, or
					 * NULL (no agent) */
	const char *task;		/* the task it worked on, or NULL */
};

/*
 * One log line per run on stderr ("cbexec[NAME]: run 3 exited 1 after
 * 2.41s: recoverable build_error: <msg>", "... exited 0 after 2.41s:
 * complete") and a "run" object in the log ("complete": true or false).
 */
void report_run(struct reporter *r, const struct run_report *rr);

/* A run's start or end, for the --on-run hook. */
struct run_hook_event {
	int end;			/* 0: before the run, 1: after it */
	long iteration;			/* the run's number */
	const char *phase;		/* or NULL */
	enum cb_circuit state;		/* the circuit before the run (start),
					 * after it and its save (end) */
	const struct run_report *rr;	/* end: what the run did */
	int exit_status;		/* end: the status the run stands for
					 * (SPEC §2: its own, 124, 122, ...) */
};

/*
 * The --on-run hook (nothing without r->run_hook): /bin/sh -c CMD with
 * CBEXEC_EVENT (start or end), CBEXEC_NAME, CBEXEC_STATE_FILE,
 * CBEXEC_ITERATION, CBEXEC_PHASE, CBEXEC_CIRCUIT_STATE and, at the end,
 * CBEXEC_RESULT (success, failure or ignored), CBEXEC_EXIT_STATUS,
 * CBEXEC_EXIT_CODE, CBEXEC_SIGNAL, CBEXEC_CLASS, CBEXEC_TYPE,
 * CBEXEC_MESSAGE, CBEXEC_DURATION, CBEXEC_PROGRESS, CBEXEC_COST_USD and
 * CBEXEC_TOKENS; bounded as the --on-state-change hook, its failure a
 * warning.
 */
void report_run_hook(struct reporter *r, const struct run_hook_event *e);

/*
 * One log line per transition, a "state_change" object in the log, and the
 * hook with CBEXEC_FROM, CBEXEC_TO, CBEXEC_REASON, CBEXEC_NAME and the
 * counters of before (the state as it was before a reset).
 */
void report_transition(struct reporter *r, const struct cb_transition *t,
    const struct cb_state *before, long iteration);

/* An event (guidance, account, budget, ...) in the log and, unless
 * quiet, on stderr. */
void report_event(struct reporter *r, const char *event, const char *reason);
/* An operator's act that the history keeps too (reset, trip, skip,
 * unskip): the same, with who (may be NULL) and its history event's time
 * at (0: now). */
void report_act(struct reporter *r, const char *event, const char *reason,
    const char *user, long iteration, double at);
/* What the operator must hear of even under -q (an approval revoked, an
 * approved config gone): "cbexec: MSG" on stderr unless silent (-qq),
 * and an object of event with MSG as its reason in the log.  With
 * logged set, MSG was said on stderr already: only the log. */
void report_notice(struct reporter *r, const char *event, const char *msg,
    int logged);

/*
 * The ---CIRCUIT_BREAKER_OPEN--- block on stderr and in the log.  st is the
 * last run's status report (for TESTS_PASSING), may be NULL.  reset_hint
 * is the command that resets this circuit ("cbexec --reset-circuit --name
 * nightly").
 */
void report_open_block(struct reporter *r, const struct cb_state *s,
    const struct status_report *st, const char *reset_hint);

/* Rewrite the metrics file atomically when what it says has changed
 * (nothing without r->metrics_path); 0 / -1 with a message in err. */
int report_metrics(struct reporter *r, const struct cb_state *s,
    char *err, size_t errlen);
/* The same, as flags say: METRICS_EXISTING only a file that is there
 * (one removed is never made anew); METRICS_NEWER only one (of ours)
 * that shows an older generation of the state than s -- for a reader
 * without the circuit's lock, implies METRICS_EXISTING.  0; 1 when there
 * is no file to rewrite; -1 with a message in err. */
#define METRICS_EXISTING 1
#define METRICS_NEWER 2
int report_metrics_file(struct reporter *r, const struct cb_state *s,
    int flags, char *err, size_t errlen);
/* The generation of the state the textfile at path shows (its first
 * line says), or -1. */
long report_metrics_generation(const char *path);

/* One circuit of --status and --status --all. */
struct status_row {
	const char *name;		/* the circuit: its name, or the state
					 * file's path */
	const char *path;		/* its state file, or its key */
	const struct cb_state *s;	/* NULL when it could not be read */
	const char *error;		/* then why */
	double retry_at;		/* refused until then; < 0: none */
	struct store_holder holder;	/* who has it now, and its run */
	int remote;			/* the holder is on another host */
};

/* Why the circuit is in its state, as every view says it ("reason"): the
 * open reason when OPEN, that of the change into HALF_OPEN, NULL when
 * CLOSED. */
const char *report_reason(const struct cb_state *s);

/* --status: a human table (ages as of now), or with json the circuit's
 * view and its state object (cbexec(1), JSON), with account_json (the
 * account's document as one line of JSON, or NULL) as its
 * "account_gate". */
void report_status(FILE *f, const struct status_row *row,
    const char *reset_hint, int json, const char *account_json, double now);

/* A retry time for people: "2026-11-22T21:23:00.000Z (in 1h12m)", or
 * "(due)" when it has come; returns buf. */
const char *retry_in(double at, double now, char *buf, size_t len);

/* --history: one line per event in columns, newest last; last > 0 keeps
 * the last N; json: the events as the log has them (circuit label).  width > 0: the output is a terminal that wide, and a
 * timeline of the events, wrapped to it, comes first. */
void report_history(FILE *f, const struct cb_state *s, const char *label,
    long last, int json, int width);

/* --status --all: a header and one line per circuit, OPEN first and
 * marked, fitted to width columns when width > 0 (the times shortened,
 * the reason and then the name cut with an ellipsis), a count after them
 * on a terminal; or a JSON array with json.  Ages as of now. */
void report_status_all(FILE *f, const struct status_row *rows, size_t n,
    int json, int width, int terminal, double now);

/* The width of the terminal on fd ($COLUMNS first), or 0 when fd is not
 * a terminal. */
int terminal_width(int fd);
/* The width --status --all fits: $COLUMNS when set (a terminal or not),
 * else the terminal's, else 0 (no limit); *terminal: fd is one. */
int status_width(int fd, int *terminal);

/*
 * An operator's skip or unskip (SPEC §9): an event line and a --log
 * object with res->why, the transition when the skip closed the circuit,
 * and the hook, which runs even without one (FROM and TO then both the
 * state the circuit stays in, CBEXEC_REASON what was skipped).
 */
void report_skip(struct reporter *r, const char *event,
    const struct cb_result *res, const struct cb_state *before,
    enum cb_circuit state, long iteration, const char *user, double at);

/* A run (or with recorded, a --record) for a skipped phase or task is not
 * started: the one line that says so, with when, why and unskip_hint (may
 * be NULL), and a "skipped" object in the log.  Silent only when
 * r->verbosity <= -2. */
void report_skipped(struct reporter *r, const struct cb_skip *k,
    const char *unskip_hint, int recorded);

/*
 * The stuck analysis of the OPEN block (stuck.c, seed 004's Pattern 3): the
 * last STUCK_WINDOW failures in the history since the last reset or skip,
 * and what they have in common.  Pure; bounded whatever the history holds.
 */
#define STUCK_WINDOW 10

struct stuck_analysis {
	int failures;		/* error events looked at */
	long first_run, last_run;
	int errors, tasks;	/* distinct errors, distinct tasks */
	int error_count;	/* failures with the most common error */
	char error[200];	/* "type: message" of it, cut short */
	int file_count;		/* failures naming the file named most */
	char file[160];		/* "" when no file is named twice */
	int task_count;		/* failures of the task that failed most */
	char task[160];		/* "" when no task failed twice */
	int transient;		/* transient failures among them */
	char hint[320];		/* one line of advice */
};

/* Analyse s's history into *a: 1, or 0 when it holds no failure to
 * analyse. */
int stuck_analyse(const struct cb_state *s, struct stuck_analysis *a);

/* A warning line "cbexec[LABEL]: warning: ..." unless quiet. */
void report_warn(struct reporter *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The interactive menu of SPEC §5 (menu.c): 'r', 's', 'a', or 'm' with
 * guidance (malloc'd) in *guidance.  EOF is 'a'. */
int menu_ask(char **guidance);
/* Remember the terminal's modes (before any run) for the menu. */
void menu_save_tty(void);

#endif
