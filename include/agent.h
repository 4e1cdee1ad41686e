/* SPDX-License-Identifier: ISC */
/*
 * Agent adapters (SPEC §9): the AI coding clients cbexec knows (Claude
 * Code, Codex, Gemini CLI, Qwen Code, opencode), recognised from the
 * command line or named with --agent.  An adapter reads a run's stdout as
 * it passes, in the client's own formats, in bounded memory, and at the
 * end says what the run came to: the structured outcome classify() takes
 * before its built-in rows, when the provider said to try again, the
 * session to resume, the status block of the assistant's own text, and
 * what the run used.
 */
#ifndef CBEXEC_AGENT_H
#define CBEXEC_AGENT_H

#include <stddef.h>

#include "judge.h"

struct agent;		/* one client: a row of the table in agents.c */

/* The adapter named name ("claude", "codex", "gemini", "qwen",
 * "opencode"), or NULL. */
const struct agent *agent_by_name(const char *name);
const char *agent_name(const struct agent *a);
/* "claude, codex, gemini, qwen, opencode", for messages and --help. */
const char *agent_names(void);

/*
 * A client the operator describes in the config file (SPEC §10): its
 * command names, its output format and where its facts are, as JSON paths
 * (NULL: it has none), and its own classifier rows.
 */
enum agent_format { AGENT_JSONL, AGENT_JSON, AGENT_TEXT };

struct agent_desc_rule {
	const char *match;	/* POSIX ERE, case-insensitive */
	const char *type;	/* NULL: the row says only that the run failed,
				 * the built-in rows type its message */
	enum cb_class cls;
};

#define AGENT_DESC_EQUALS	8	/* values a condition may list */

/*
 * Where one fact is: keys joined by dots; "a[].b" is b of each element of
 * the array a (a tool call each), "a[k=v].b" is b of the element of a
 * whose k is v (the last such).  With when, the fact counts only in an
 * event whose string at when is one of when_equals.  is_error alone takes
 * equals: a string flag, the run failed when its value is one of them.
 */
struct agent_desc_path {
	const char *path;
	const char *when;
	const char *when_equals[AGENT_DESC_EQUALS + 1];	/* NULL-terminated */
	const char *equals[AGENT_DESC_EQUALS + 1];
};

struct agent_desc {
	const char *name;
	const char *const *commands;
	size_t n_commands;
	enum agent_format format;
	struct agent_desc_path result, is_error, error, status, session;
	struct {
		struct agent_desc_path input, output, cache_read, cache_write,
		    cost, turns;
	} usage;
	struct {
		struct agent_desc_path name, input, id, result, result_id,
		    is_error;
	} tool;
	const struct agent_desc_rule *rules;
	size_t n_rules;
};

/* Add the client d describes (everything copied); agent_by_name() and
 * agent_detect() know it from then on.  0, or -1 with the reason in err
 * (a known client's name, too many, a path given twice); a name
 * described before is replaced. */
int agent_describe(const struct agent_desc *d, char *err, size_t errlen);
/* Forget every described client (at the end). */
void agent_forget(void);

/*
 * The client argv runs, from its command's basename, also through the
 * wrappers that leave the name visible: npx/bunx/pnpx and npm exec (by
 * command or package name), env, nice, nohup, timeout, node, and sh -c
 * (any command of the script); NULL when none.
 */
const struct agent *agent_detect(char *const *argv);

/*
 * What a client reported it used.  -1 (a cost below 0) is "not said".
 * input_tokens are those not read from the cache, whichever way the
 * client counts them (OpenAI's and Google's input includes the cached).
 */
struct agent_usage {
	long input_tokens, output_tokens;
	long cache_read_tokens, cache_write_tokens;
	double cost_usd;
	long turns;
};

/* All the tokens of u, cached or not; -1 when it gives none. */
long agent_tokens(const struct agent_usage *u);

/*
 * Hook points, called as the run's output is read, for what watches a run
 * live (spend caps, an idle watchdog, tool-call loop detection).  Any of
 * them may be NULL.
 */
struct agent_hooks {
	/* An event arrived: a JSON event, or a piece of a text line. */
	void (*event)(void *arg);
	/* The run's running totals after an event that reported usage
	 * (total 1: the result's, the run's last word). */
	void (*usage)(void *arg, const struct agent_usage *u, int total);
	/* A tool call: the client's id for it (NULL when it gives none),
	 * its name, and its input as JSON text (cut at 4 KiB: cut 1; digest
	 * is of the whole input as written). */
	void (*tool_call)(void *arg, const char *id, const char *name,
	    const char *input, size_t input_len, int cut,
	    unsigned long long digest);
	/* A tool call's result: the call's id (NULL: the last call), a
	 * digest of the whole result as written, and whether the client
	 * says it failed. */
	void (*tool_result)(void *arg, const char *id,
	    unsigned long long digest, int is_error);
	/* The client's final result came: the run's work is over, and the
	 * client should exit (SPEC §10, --result-grace). */
	void (*final)(void *arg);
	void *arg;
};

/*
 * Watching a run live (watch.c, pure): the per-run spend caps against the
 * running totals, and the same tool call over and over with the same
 * result (SPEC §10).
 */
struct agent_caps {
	double max_cost;	/* USD; 0: none */
	long max_tokens;	/* all tokens, cached or not; 0: none */
	long max_turns;		/* 0: none */
	int max_repeat_calls;	/* the same call this many times in a row;
				 * 0: off */
};

enum agent_stop { AGENT_GO, AGENT_MAX_COST, AGENT_MAX_TOKENS,
	AGENT_MAX_TURNS, AGENT_LOOP };

#define WATCH_RECENT	64	/* calls whose results are matched by id */

struct agent_watch {
	struct agent_caps caps;
	enum agent_stop stop;	/* the first reason to stop, once found */
	char msg[512];		/* which, in words (the run's message) */
	unsigned long long call;	/* the identity of the calls in a row */
	int repeats;		/* how many times in a row it came */
	int results;		/* results of those calls seen */
	int same;		/* all of them the same as the first */
	int errors;		/* all of them errors */
	unsigned long long result;	/* the first one's digest */
	int shown;		/* the stream shows results at all */
	char what[256];		/* the call, for the message */
	struct {
		unsigned long long id, call;
	} recent[WATCH_RECENT];	/* a ring: a call's id -> its identity */
	unsigned n_recent;
};

void agent_watch_init(struct agent_watch *w, const struct agent_caps *caps);
/* The running totals u: AGENT_GO, or the cap u crossed (once). */
enum agent_stop agent_watch_usage(struct agent_watch *w,
    const struct agent_usage *u);
/*
 * A tool call, as the tool_call hook gives it: AGENT_GO, or AGENT_LOOP
 * once max_repeat_calls identical calls came in a row with identical
 * results, or with results that were all errors.  A call's identity is
 * its name and its input as canonical JSON (keys sorted, no insignificant
 * space), byte for byte: paging a file with another offset is another
 * call.
 */
enum agent_stop agent_watch_call(struct agent_watch *w, const char *id,
    const char *name, const char *input, size_t n, int cut,
    unsigned long long digest);
/* A tool call's result (the tool_result hook): AGENT_GO or AGENT_LOOP. */
enum agent_stop agent_watch_result(struct agent_watch *w, const char *id,
    unsigned long long digest, int is_error);
/* The run is over: identical calls in a row whose results the stream
 * never showed (or whose last results it did not get to) are a loop too;
 * AGENT_GO or AGENT_LOOP. */
enum agent_stop agent_watch_end(struct agent_watch *w);
/* "max_cost", "max_tokens", "max_turns", "loop"; "" for AGENT_GO. */
const char *agent_stop_type(enum agent_stop s);

struct agent_run;	/* one run's reading */

/* Start reading a run of a; hooks may be NULL.  NULL on ENOMEM. */
struct agent_run *agent_run_new(const struct agent *a,
    const struct agent_hooks *hooks);
/* stdout as it passes, in pieces split anywhere (the tap of sup_cfg). */
void agent_feed(struct agent_run *r, const char *p, size_t n);

/* How the run ended, for the adapter's last word. */
struct agent_end {
	int exit_code;		/* -1 unless it exited */
	int timed_out;
	const char *err;	/* stderr tail */
	size_t err_len;
	double now;		/* wall clock, for reset times of day */
};

struct agent_result {
	struct agent_verdict v;		/* for classify() */
	struct retry_hint hint;		/* reset time / delay the client gave
					 * outside its message (resetsAt, a
					 * retry-after header, retry_delay_ms) */
	const char *session_id;		/* session_id / thread_id, or NULL */
	int status_own;			/* the output was structured: its
					 * status block is the one in the
					 * assistant's own text (status) */
	struct status_report status;
	struct agent_usage usage;	/* the run's totals where reported */
	const char *note;		/* a figure cut to the state's bounds,
					 * in words, or NULL */
};

/*
 * The run is over: fill *res (its strings live until agent_run_free; free
 * res->status with status_free).  0, or -1 on ENOMEM.
 */
int agent_finish(struct agent_run *r, const struct agent_end *e,
    struct agent_result *res);
void agent_run_free(struct agent_run *r);

#endif
