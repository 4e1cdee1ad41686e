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
 * The client argv runs, from its command's basename, also through the
 * wrappers that leave the name visible: npx/bunx/pnpx and npm exec (by
 * command or package name), env, nice, nohup, timeout, node, and sh -c
 * (any command of the script); NULL when none.
 */
const struct agent *agent_detect(char *const *argv);

/*
 * What a client reported it used.  -1 (a cost below 0) is "not said".
 */
struct agent_usage {
	long input_tokens, output_tokens;
	long cache_read_tokens, cache_write_tokens;
	double cost_usd;
	long turns;
};

/*
 * Hook points, called as the run's output is read, for what watches a run
 * live (spend caps, an idle watchdog, tool-call loop detection).  Any of
 * them may be NULL.
 */
struct agent_hooks {
	/* An event arrived: a JSON event, or a piece of a text line. */
	void (*event)(void *arg);
	/* Usage one event reported (total 0: that event's own figures, as
	 * the client gives them), or the run's totals from its result
	 * (total 1). */
	void (*usage)(void *arg, const struct agent_usage *u, int total);
	/* A tool call: its name and its input as JSON text (cut at 4 KiB). */
	void (*tool_call)(void *arg, const char *name, const char *input,
	    size_t input_len);
	void *arg;
};

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
};

/*
 * The run is over: fill *res (its strings live until agent_run_free; free
 * res->status with status_free).  0, or -1 on ENOMEM.
 */
int agent_finish(struct agent_run *r, const struct agent_end *e,
    struct agent_result *res);
void agent_run_free(struct agent_run *r);

#endif
