/* SPDX-License-Identifier: ISC */
/*
 * Shared by the files of agent/: the row of the adapter table, one run's
 * reading (reading.c), and the helpers an adapter uses to say what it read.
 *
 * An adapter is declarative where it can be: a table of the JSON paths it
 * wants, each into a numbered slot of the current event, and its own rows
 * for classifying its messages.  Code runs when an event ends (its slots
 * are filled), when an object inside an event ends (a content block), and
 * once at the end of the run (the exit status and stderr).
 */
#ifndef CBEXEC_AGENT_ADAPTER_H
#define CBEXEC_AGENT_ADAPTER_H

#include "agent.h"
#include "jstream.h"

#define NSLOTS		32
#define SLOT_MAX	4096	/* bytes of a string kept (a message) */
#define TEXT_MAX	(64 * 1024)	/* of an event's text, its tail */
#define MSG_LEN		4096
#define HEAD_MAX	1024	/* of a text that went to the scanner */
#define OWN_MAX		(16 * 1024)	/* of the lines that were not JSON */

enum slot_kind {
	K_STR,		/* a string, its first SLOT_MAX bytes */
	K_NUM,		/* a number */
	K_BOOL,		/* true or false */
	K_TEXT,		/* assistant text: the event's text buffer */
	K_RAW		/* a value's JSON text (a tool's input) */
};

struct field {
	const char *path;	/* "message.content.type" (keys with no dot) */
	int slot;
	enum slot_kind kind;
};

/* One of an adapter's own classifier rows. */
struct agent_rule {
	const char *re;		/* POSIX ERE, case-insensitive */
	const char *type;
	enum cb_class cls;
};

struct agent_run;

struct agent {
	const char *name;
	const char *const *commands;	/* basenames that run it */
	const char *const *packages;	/* npm packages that install it */
	const struct field *fields;
	size_t n_fields;
	/* An event ended complete: read its slots.  1 when it was one of
	 * the client's (the output is structured), 0 when not. */
	int (*event)(struct agent_run *r);
	/* An object inside an event ended (path: where); may be NULL. */
	void (*object)(struct agent_run *r, const char *path);
	/* The run is over; may be NULL. */
	void (*finish)(struct agent_run *r, const struct agent_end *e);
	const struct agent_rule *rules;
	size_t n_rules;
	/* Whether the event's text (its K_TEXT) is, by what the event said
	 * before it, the assistant's: then it goes to the status scanner as
	 * it is read instead of being kept; may be NULL. */
	int (*answer)(const struct agent_run *r);
};

/* A slot's bytes live apart (agent_run's bufs), so that only the pages of
 * the slots a stream fills are ever touched. */
struct slot {
	int set;
	enum slot_kind kind;
	double num;
	size_t len;
	int cut;
	unsigned long long digest;	/* K_RAW: of the whole value */
	char *buf;		/* SLOT_MAX + 1 bytes */
};

struct agent_run {
	const struct agent *a;
	struct agent_hooks hooks;
	struct jstream js;
	int json;			/* a JSON event was read */
	struct slot slot[NSLOTS];
	char *bufs;			/* the slots' bytes */
	const struct field *cur;	/* the string being read */
	char *text;			/* the event's K_TEXT, its tail (or,
					 * when it went to the scanner as it
					 * came, its head) */
	size_t tlen;
	int streamed;			/* the event's text went so (kept
					 * escaped: 1; unescaped since: 2) */
	struct status_scanner *sc;	/* the assistant's own text */
	/* What the run came to, as events and the end said it. */
	int failed;
	char msg[MSG_LEN];
	int http;
	const char *type;
	enum cb_class cls;
	int retrying;
	const char *retry_type;
	char retry_msg[MSG_LEN];
	struct retry_hint hint;
	char session[256];
	struct agent_usage usage;	/* running totals (usage_live) */
	struct agent_usage done, step;	/* the steps before, the current */
	struct agent_usage final;	/* what the result says, -1: not */
	char step_id[128];		/* the current step's id */
	long steps;
	const struct rule *rules;	/* compiled from a->rules */
	size_t n_rules;
	const short *index;		/* of a->fields by path */
	long aux;			/* an adapter's own bit of state */
	char *own;			/* stdout's lines that were not JSON,
					 * their tail: the client's own words
					 * beside its events */
	size_t own_len;
	int reading_err;		/* run_read: stderr, not stdout */
	int client_stop;		/* run_client_stop() was called */
	int text_seen;			/* the event had its K_TEXT field */
	char note[160];			/* a figure cut to its bound: which */
	int finished;			/* run_final() was called */
	char tool[64];			/* the last tool called, its name */
	char asked[64];			/* the last tool call asked a person
					 * (request_user_input, ...): its
					 * name; "" after any other call */
	long model_calls;		/* run_model_call()s: turns, where a
					 * client counts none itself */
};

/* The clients the config described (described.c), i from 0; NULL past
 * the last. */
const struct agent *agent_described(size_t i);

/* The i-th client from 0, NULL past the last: the table's, in its order,
 * then those the config described (agents.c). */
const struct agent *agent_nth(size_t i);

/* The table (agents.c). */
extern const struct agent agent_claude, agent_codex, agent_gemini,
    agent_qwen, agent_opencode, agent_pi, agent_copilot, agent_cn,
    agent_kilo;

/* Slots of the current event (reading.c).  NULL / -1 / dflt when unset. */
const char *sv(const struct agent_run *r, int slot);
int sb(const struct agent_run *r, int slot);
double sn(const struct agent_run *r, int slot, double dflt);
/*
 * Figures from the stream, checked where they are read (SPEC §9: nothing
 * the run prints may make the state unloadable): a count (tokens, turns)
 * and a cost are -1 ("not said") unless a finite number >= 0, and at most
 * the state's own bounds (CB_LONG_MAX, CB_COST_MAX) -- a larger one is
 * cut there and noted (agent_result's note); an HTTP status is 0 unless a
 * whole number from 100 to 599.
 */
long sn_count(struct agent_run *r, int slot);
double sn_cost(struct agent_run *r, int slot);
int sn_status(const struct agent_run *r, int slot);
/* Whether slot holds exactly s. */
int is(const struct agent_run *r, int slot, const char *s);
void slot_clear(struct agent_run *r, int slot);

/* The run failed with msg (whitespace folded to one line); http 0: none.
 * A later call replaces an earlier one. */
void run_error(struct agent_run *r, const char *msg, int http);
/* A result said the run succeeded: nothing failed after all (unless the
 * client stopped the run itself). */
void run_ok(struct agent_run *r);
/* The client's final result event: the run is over as far as the client
 * is concerned (its process should exit now). */
void run_final(struct agent_run *r);
/* The model was called once more (a turn), for a client that reports no
 * turn count of its own. */
void run_model_call(struct agent_run *r);
/* The client stopped the run itself, for a reason of type (its own loop
 * detection: "loop"), whatever its exit status and whatever a later
 * result says (SPEC §10); the first such stop stands. */
void run_client_stop(struct agent_run *r, const char *type,
    enum cb_class cls, const char *msg);
/* The client is retrying after msg, an error of type (NULL: as the rows
 * say); only a transient type counts. */
void run_retrying(struct agent_run *r, const char *msg, const char *type);
/* Something happened that is not a retry. */
void run_progress(struct agent_run *r);
void run_session(struct agent_run *r, const char *id);
/* The event's K_TEXT buffer, text of the assistant, to the status
 * scanner, then a line break. */
void run_event_text(struct agent_run *r);
/* The same without the line break: a delta of an answer (joined to what
 * came before as it is). */
void run_event_delta(struct agent_run *r);
/* The event's K_TEXT buffer as a string ("" when none). */
const char *event_text(struct agent_run *r);
/* A tool call to the hook: its id (NULL: none), name and input (a K_RAW
 * slot). */
void run_tool(struct agent_run *r, const char *id, const char *name,
    int input_slot);
/* A tool call's result to the hook: the call's id (NULL: the last call),
 * the result (a K_RAW slot: its digest), whether it failed. */
void run_tool_result(struct agent_run *r, const char *id, int result_slot,
    int is_error);

/* The same with the result's digest given (a client that decorates its
 * results computes it over the tool's own output). */
void run_tool_digest(struct agent_run *r, const char *id,
    unsigned long long digest, int is_error);

/* The slots of a content block of message.content (the shape Claude Code
 * and Qwen Code share): its type, a tool_use's id, name and input, a
 * tool_result's tool_use_id, content and is_error. */
struct block_slots {
	int type, id, name, input, result_id, result, is_error;
};
/* An object at path ended: when it is a block of message.content, a
 * tool_use or tool_result block goes to the hooks, and the block's slots
 * are cleared for the next. */
void run_block(struct agent_run *r, const char *path,
    const struct block_slots *b);
/*
 * Usage as the client reports it, in struct agent_usage's terms (input
 * tokens without the cached ones).  A step's own (an API call: a message,
 * a step_finish), id naming it (NULL: a step of its own): a later report
 * of the same id replaces the earlier one, and each new id is a turn.
 * Or the run's totals from its result: every figure it gives replaces
 * the running one.  The running totals go to the usage hook.
 */
void run_step_usage(struct agent_run *r, const char *id,
    const struct agent_usage *u);
void run_total_usage(struct agent_run *r, const struct agent_usage *u);
void usage_unknown(struct agent_usage *u);
/* "[API Error: 401 ...]" in s: the run failed with that message; the
 * HTTP status when one leads it.  1 when found. */
int api_error(struct agent_run *r, const char *s);

/* The exit codes of Gemini CLI's FatalErrors (Qwen Code's too): 41 auth,
 * 42 input, 44 sandbox, 52 config, 53 turn limit, 54 tool, 55 untrusted
 * folder settle the type. */
void fatal_exit(struct agent_run *r, int code);

/* The last line of s that is not blank: its length, *line its start. */
size_t last_line_of(const char *s, const char **line);

/*
 * Read text (stderr at the end of the run) as JSON events with the
 * adapter's fields and event function: an error object printed there.
 */
void run_read(struct agent_run *r, const char *p, size_t n);

#endif
