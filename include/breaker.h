/* SPDX-License-Identifier: ISC */
/*
 * The circuit breaker's state machine (SPEC §4): pure functions of the
 * state, the limits, a run's result and the time.  No syscalls, no clock,
 * no printing; the store persists struct cb_state, the driver drives it.
 */
#ifndef CBEXEC_BREAKER_H
#define CBEXEC_BREAKER_H

#include <stddef.h>

struct cJSON;

/* How a run ended, as the classifier (judge.h) decides and the breaker
 * counts it (SPEC §4). */
enum cb_class {
	CB_CLASS_SUCCESS,
	CB_CLASS_RECOVERABLE,
	CB_CLASS_TRANSIENT,
	CB_CLASS_TIMEOUT,
	CB_CLASS_FATAL,
	CB_CLASS_BUDGET,	/* a per-run spend cap stopped it (SPEC §9) */
	CB_CLASS_COUNT
};

enum cb_circuit { CB_CLOSED, CB_HALF_OPEN, CB_OPEN };

/* Counters saturate (SPEC §4 rule 7): the int counters at INT_MAX, the
 * long ones at 2^53, the largest integer a JSON number (a double) holds
 * exactly, so a state written is always one the loader takes. */
#define CB_LONG_MAX	9007199254740992L
/* The most a cost (USD) in the state may be: the writer saturates there
 * and the loader refuses more, so no figure a run reports can make the
 * state unloadable. */
#define CB_COST_MAX	1e15
/* A run's message and task are kept to this many bytes (UTF-8 intact). */
#define CB_TEXT_MAX	4096

/* What an invocation ended with; recorded as "outcome" in the state file. */
enum cb_outcome {
	OUT_OK,		/* "OK" */
	OUT_OPEN,	/* "OPEN" */
	OUT_STUCK,	/* "STUCK" */
	OUT_ABORT,	/* "ABORT" */
	OUT_BUSY,	/* "BUSY" */
	OUT_TIMEOUT,	/* "TIMEOUT" */
	OUT_ERROR,	/* "ERROR" */
	OUT_EXIT,	/* "EXIT": the command's own non-zero status */
	OUT_SIGNAL,	/* "SIGNAL": killed by a signal cbexec did not send */
	OUT_NOEXEC,	/* "NOEXEC": 126 from cbexec's exec */
	OUT_NOTFOUND,	/* "NOTFOUND": 127 from cbexec's exec */
	OUT_SKIP,	/* "SKIP": operator chose Skip */
	OUT_BUDGET	/* "BUDGET": a per-run spend cap stopped the run */
};

/* EV_TRIP: an operator's --trip of a circuit already OPEN (a trip that
 * opens it is the state_change).  EV_OTHER: an event of a kind a newer
 * cbexec wrote, its name in other; kept and written back, counted for
 * nothing. */
enum cb_event_kind { EV_STATE_CHANGE, EV_PROGRESS, EV_ERROR, EV_RESET, EV_SKIP,
	EV_TRIP, EV_OTHER };

/*
 * Why the circuit opened, for what its half-open trial must disprove
 * (SPEC §11): no progress (only progress closes it), errors (consecutive,
 * the same error or task, a fatal class: a success or progress closes
 * it), a limit (a usage limit or a spend window: any run that does not
 * hit it again closes it).  CAUSE_NONE: CLOSED, tripped, or a file of an
 * older cbexec (then a success or progress closes it, as before).
 */
enum cb_cause { CAUSE_NONE, CAUSE_NO_PROGRESS, CAUSE_ERRORS, CAUSE_LIMIT };

/* One history entry.  from/to are -1 for events that are not transitions. */
struct cb_event {
	double ts;		/* epoch seconds */
	long iteration;
	enum cb_event_kind kind;
	int from, to;		/* enum cb_circuit, or -1 */
	char *reason;		/* malloc'd, may be NULL */
	char *user;		/* reset/trip/skip: $USER, else NULL */
	int progress;		/* run events: 1/0; else -1 */
	int exit_code;		/* run events: exit status or 128+sig; else -1 */
	char cls[16];		/* error events: class name; else "" */
	char type[64];		/* error events: type; else "" */
	char *task;		/* error events: the run's task, cut to
				 * CB_EVENT_TASK_MAX bytes; else NULL */
	char hash[65];		/* error events: the error fingerprint; else
				 * "" (also in older files) */
	char *unknown;		/* members a newer cbexec wrote into the
				 * event, as the store read them; opaque
				 * here, written back unchanged; or NULL */
	int complete;		/* run events: the run reported completion
				 * (STATUS: COMPLETE, EXIT_SIGNAL: true) */
	char other[32];		/* EV_OTHER: the kind's name; else "" */
};

/* What a skip gives up (SPEC §9). */
enum cb_skip_kind { SKIP_PHASE, SKIP_TASK };

/* One skip: a phase or a task no run is started for, until an operator
 * unskips it or resets the circuit. */
struct cb_skip {
	enum cb_skip_kind kind;
	char *name;		/* the phase (canonical spelling) or task */
	double at;		/* epoch seconds; < 0: not known (older file) */
	char *reason;		/* why, may be NULL */
	char *user;		/* who, may be NULL */
};

/* At most this many skips are kept, so the state file stays bounded. */
#define CB_SKIPS_MAX 100
/* An error event keeps at most this many bytes of its task. */
#define CB_EVENT_TASK_MAX 256

/*
 * A file the circuit's runs write besides the state (SPEC §11): a
 * --metrics textfile or a --log, on one host, so that an operator's
 * reset, trip, skip or unskip makes them true again without being told
 * where they are.  The store keeps the list; the driver fills it
 * (driver/outputs.c), the breaker never looks at it.
 */
enum cb_output_kind { OUTPUT_METRICS, OUTPUT_LOG };

struct cb_output {
	enum cb_output_kind kind;
	char *host;		/* gethostname() of the writer */
	char *path;		/* absolute */
	char *circuit;		/* the circuit label its lines carry */
	char *store;		/* metrics: the store="" label, or NULL */
	char *account;		/* metrics: --account (its gate's sample) */
	int follow;		/* written with --follow-symlinks */
	double at;		/* when an invocation last wrote it */
};

/* At most this many are kept: the least recently written goes first. */
#define CB_OUTPUTS_MAX 16

/* Thresholds after precedence (CLI > env > config > phase > built-in). */
struct cb_limits {
	int no_progress;		/* --no-progress-threshold */
	int same_error;			/* --same-error-threshold */
	int half_open_after;		/* --half-open-after */
	int max_consecutive_errors;
	int max_retries;		/* same task failing N times = STUCK */
	int half_open_trials;
	double cooldown;		/* seconds; 0 = only an operator closes */
	int history_size;
};

/* What an agent's runs used (SPEC §9).  -1: never reported. */
struct cb_usage {
	double cost_usd;
	long input_tokens, output_tokens, cache_tokens, turns;
};

/* The bounded ledger of recent spending that the rolling windows of
 * --max-cost USD/D and --max-tokens N/D are summed over: at most
 * CB_LEDGER_MAX buckets, each what the runs that ended between from and
 * to spent, oldest first. */
#define CB_LEDGER_MAX 48
struct cb_ledger_entry {
	double from, to;		/* epoch seconds */
	double cost_usd;
	long tokens;
};

struct cb_state {
	int version;			/* 1 */
	long generation;		/* saves so far: a shared store's
					 * compare-and-set checks it (SPEC §9) */
	char *name;			/* NULL without --name */
	enum cb_circuit state;
	char *phase;			/* NULL: none */
	int no_progress_count;
	int same_error_count;
	int consecutive_errors;
	int same_task_failures;
	char *last_failed_task;
	long iteration;			/* runs over the circuit's lifetime */
	long total_opens;
	long last_progress_iteration;
	struct cJSON *last_progress_metric;	/* {"PHASE":{"metric":n}}, owned,
						 * maintained by progress.c */
	char *last_fingerprint;		/* work-tree fingerprint after last run */
	char *last_error_hash;		/* error fingerprint, NULL after success */
	struct {
		char cls[16];
		char type[64];
		char *message;		/* raw, valid UTF-8 */
		int exit_code;
	} last_error;
	double opened_at;		/* epoch seconds; < 0 means null */
	char *open_reason;
	enum cb_cause open_cause;	/* what a trial must disprove */
	enum cb_outcome outcome;
	char *guidance;
	struct cb_skip *skips;		/* skipped_phases and skipped_tasks, with
					 * when, why and who; oldest first */
	size_t n_skips;
	double updated_at;		/* epoch seconds; < 0 means null */
	/* cbexec's own additions */
	double cooldown;		/* current cooldown after doublings; 0 = the
					 * configured one */
	int trials_left;		/* > 0: HALF_OPEN on cooldown trial runs */
	int tripped;			/* opened by --trip: no cooldown closes it */
	long errors_total[CB_CLASS_COUNT];	/* lifetime runs per class */
	char *stuck_task;		/* OPEN as STUCK on this task (it failed
					 * max-retries times in a row): what
					 * Skip gives up; else NULL */
	double retry_at;		/* OPEN until then (a usage limit's reset
					 * time), epoch seconds; < 0 means null */
	char *session_id;		/* the agent's last session or thread id */
	char *account;			/* --account of the last invocation that
					 * ran, for --status; NULL: none */
	struct cb_event *history;	/* oldest first */
	size_t n_history;
	double last_run_at;		/* end of the last run; < 0 means null */
	double last_success_at;		/* end of the last successful run */
	double last_run_seconds;	/* how long the last run took; < 0: not
					 * known (older files, --record) */
	int complete;			/* the last run reported completion:
					 * the work is done (SPEC §11) */
	struct cb_limits limits;	/* what the last run was judged by, for
					 * --status; all 0: not recorded */
	struct cb_usage spent;		/* over the circuit's lifetime */
	char spend_agent[16];		/* the agent of the last run, or "" */
	struct cb_usage last_usage;	/* what that run reported (-1: not) */
	struct cb_ledger_entry ledger[CB_LEDGER_MAX];
	size_t n_ledger;
	/* the windows the last run was held to, for --status; 0: none */
	double cost_window, cost_window_span;
	double tokens_window, tokens_window_span;
	struct cb_output *outputs;	/* the files its runs write, by host */
	size_t n_outputs;
	char *unknown;			/* members a newer cbexec wrote, as the
					 * store read them (SPEC §11): opaque
					 * here, never looked at, written back
					 * unchanged; or NULL */
};

/* A finished run as the breaker sees it. */
/* Why a run counts neither as a success nor as a failure. */
enum { CB_IGNORED_CODE = 1,		/* its exit code: --ignore-exit-codes */
	CB_IGNORED_CLOSED };		/* it failed writing to a reader
					 * that had gone (cbexec's stdout
					 * closed downstream) */

struct cb_run {
	int progress;			/* 1: the run made progress (§3.1) */
	int ignored;			/* 0, or CB_IGNORED_* */
	enum cb_class cls;
	const char *type;		/* "" on success */
	const char *message;		/* NULL on success */
	const char *hash;		/* error fingerprint, "" on success */
	const char *task;		/* status TASK, else --task, else NULL */
	int exit_code;			/* exit status, or 128+signal */
	int usage_limit;		/* a provider usage limit (rule 8) */
	double retry_at;		/* when the provider said to try again,
					 * epoch seconds; 0: it did not say */
	double retry_after;		/* or after how long, seconds; 0: none */
	int unseen;			/* its end was never seen (its cbexec
					 * was killed, SPEC §11): it made no
					 * progress, yet counts none either */
	int complete;			/* its status reported completion */
};

struct cb_transition {
	enum cb_circuit from, to;
	char reason[256];
	double at;		/* the time it was given (its history event's) */
};

struct cb_result {
	struct cb_transition t[4];
	int n;
	enum cb_outcome outcome;	/* OPEN or STUCK when this call tripped the
					 * circuit, ABORT for a fatal error, else OK */
	char why[256];			/* a skip or unskip: what it did, in the
					 * words of its history event */
};

const char *circuit_name(enum cb_circuit c);	/* "CLOSED", ... */
int circuit_from_name(const char *s, enum cb_circuit *c);
const char *outcome_name(enum cb_outcome o);	/* "OK", ... */
int outcome_from_name(const char *s, enum cb_outcome *o);
const char *event_kind_name(enum cb_event_kind k);	/* "state_change", ... */
const char *event_name(const struct cb_event *e);	/* its kind's, or other */
int event_kind_from_name(const char *s, enum cb_event_kind *k);
const char *class_name(enum cb_class c);	/* "success", ... */
int class_from_name(const char *s, enum cb_class *c);	/* 0 / -1 */
const char *skip_kind_name(enum cb_skip_kind k);	/* "phase", "task" */
int skip_kind_from_name(const char *s, enum cb_skip_kind *k);
const char *output_kind_name(enum cb_output_kind k);	/* "metrics", "log" */
int output_kind_from_name(const char *s, enum cb_output_kind *k);
/* "no_progress", "errors", "limit"; NULL for CAUSE_NONE. */
const char *cause_name(enum cb_cause c);
int cause_from_name(const char *s, enum cb_cause *c);	/* 0 / -1 */

/* The built-in limits (3, 5, 2, 5, 3, 1, 0, 100). */
void breaker_default_limits(struct cb_limits *l);

/* A fresh CLOSED circuit. name may be NULL.  0 / -1 on ENOMEM. */
int breaker_init(struct cb_state *s, const char *name);
void breaker_free(struct cb_state *s);
/* The strings of one history event. */
void event_free(struct cb_event *e);
/* The strings of one output record. */
void output_free(struct cb_output *o);

/* Without a reset time, a usage limit waits 5 minutes, doubling per
 * failed trial up to 5 hours (unless --cooldown says otherwise). */
#define CB_LIMIT_WAIT		(5 * 60.0)
#define CB_LIMIT_WAIT_MAX	(5 * 3600.0)

/*
 * Before a run (SPEC §4 rules 5 and 8).  Returns 1 when the run may go
 * ahead, 0 when the circuit is OPEN and must refuse.  An OPEN circuit
 * whose retry_at has come, or else whose cooldown has passed (and that was
 * not tripped by an operator), becomes HALF_OPEN with trial runs (one for
 * retry_at, limits->half_open_trials for a cooldown); that transition
 * lands in *res.
 */
int breaker_admit(struct cb_state *s, const struct cb_limits *l, double now,
    struct cb_result *res);

/*
 * After a run (SPEC §4 rules 1-4, the trial rule of 5, and rule 8): bumps
 * iteration, moves the counters, records a run event and any transitions
 * in the history (bounded by l->history_size), sets last_error, opened_at,
 * open_reason, retry_at, total_opens, errors_total, updated_at,
 * last_run_at, last_success_at, and limits (a copy of *l).  A usage limit
 * opens the circuit until its reset time (run->retry_at, else a wait); so
 * does a trial that failed of a transient error.
 */
void breaker_record(struct cb_state *s, const struct cb_limits *l,
    const struct cb_run *run, double now, struct cb_result *res);

/* Operator reset (rule 6): CLOSED, counters 0, the spend ledger empty,
 * total_opens and the spend totals kept. */
void breaker_reset(struct cb_state *s, const struct cb_limits *l,
    const char *reason, const char *user, double now, struct cb_result *res);

/* Operator trip: OPEN with "tripped by operator[: reason]". */
void breaker_trip(struct cb_state *s, const struct cb_limits *l,
    const char *reason, const char *user, double now, struct cb_result *res);

/*
 * Skip (SPEC §9), from the menu or the operator: name (a phase or a task)
 * is recorded as skipped with when, why and who (the same skip again only
 * renews them), and the circuit is CLOSED for everything else, its
 * counters cleared as by a reset.  A skip event goes into the history, a
 * transition into res when the circuit was not CLOSED.  Returns 0, or -1
 * (nothing changed) when CB_SKIPS_MAX skips are kept already or memory ran
 * out.
 */
int breaker_skip(struct cb_state *s, const struct cb_limits *l,
    enum cb_skip_kind kind, const char *name, const char *reason,
    const char *user, double now, struct cb_result *res);

/*
 * Unskip: forget the skips named name, a phase (case-insensitively) or a
 * task (exactly); name NULL forgets them all.  Returns how many went; when
 * any did, a skip event (and res->why) says which.  The circuit's state is
 * left alone: res holds no transition.
 */
int breaker_unskip(struct cb_state *s, const struct cb_limits *l,
    const char *name, const char *user, double now, struct cb_result *res);

/* The skip that covers a run of phase or of task (either may be NULL), or
 * NULL when none does. */
const struct cb_skip *breaker_skipped(const struct cb_state *s,
    const char *phase, const char *task);

/*
 * Spend (spend.c, SPEC §9).  A run of agent used u (figures < 0: not
 * reported): the lifetime totals grow, and the ledger, which keeps the
 * last keep seconds (the longest window in use; 0: none is, and it is
 * emptied), gets it in a bucket of keep / CB_LEDGER_MAX seconds.  When
 * it is full the two oldest buckets are merged (the later end kept, so a
 * window may count spending a little longer, never less).
 */
void breaker_spend(struct cb_state *s, const char *agent,
    const struct cb_usage *u, double now, double keep);
/*
 * What the ledger holds for the window of span seconds before now (the
 * cost, or with tokens the tokens), and in *frees_at when the sum will
 * be below limit again as the window rolls on (now when it is).
 */
double breaker_window(const struct cb_state *s, double now, double span,
    int tokens, double limit, double *frees_at);
/*
 * Open the circuit until at, as a usage limit does (rule 8), with the
 * reason "WHAT until HH:MM UTC": a spend window over its cap.
 */
void breaker_hold(struct cb_state *s, const struct cb_limits *l,
    const char *what, double at, double now, struct cb_result *res);

/* A copy of s's counters with no pointer into s (for hooks that report
 * the counters as they were before a reset or a run). */
void breaker_snapshot(const struct cb_state *s, struct cb_state *copy);

/* Replace one of the state's owned strings (*dst) by a copy of src (NULL
 * stays NULL); on ENOMEM the field is left NULL. */
void breaker_set_str(char **dst, const char *src);

/* Append an event (copies the strings), dropping the oldest past max. */
void breaker_add_event(struct cb_state *s, int max, const struct cb_event *e);

/*
 * A provider account's gate (SPEC §9, --account NAME): what any run of any
 * circuit on the account learned of the provider -- a usage limit with its
 * reset time, a billing or auth failure -- so that every circuit on it
 * refuses to start a run the provider would refuse too.  OPEN refuses
 * (until retry_at for a usage limit; until an operator's --reset-account
 * for billing or auth); at retry_at one circuit claims the one trial run
 * (HALF_OPEN, trial_by), and what that run meets re-arms or closes it.  The
 * store keeps it as one JSON document per account; generation goes up by
 * one with every write, for a store that compares and sets.
 */
struct cb_account {
	char *name;
	enum cb_circuit gate;		/* CLOSED, HALF_OPEN (a trial), OPEN */
	char type[64];			/* usage_limit, billing or auth; "" */
	char *reason;			/* "usage limit until 21:00 UTC", "fatal:
					 * billing"; NULL when CLOSED */
	char *message;			/* the provider's words, UTF-8, or NULL */
	char *circuit;			/* the circuit whose run learned it */
	double since;			/* when it was learned; < 0 null */
	double retry_at;		/* refused until then; < 0: until a reset */
	char *trial_by;			/* HALF_OPEN: the circuit of the trial */
	double trial_until;		/* its claim lapses then; < 0 null */
	long generation;		/* writes so far */
	long total_opens;
	double updated_at;		/* < 0 null */
	char *unknown;			/* members a newer cbexec wrote, kept as
					 * read (opaque here); or NULL */
};

/* What breaker_gate_admit() decided. */
enum cb_gate_verdict {
	GATE_PASS,	/* the gate is CLOSED: run, nothing to write */
	GATE_TRIAL,	/* this circuit claimed the trial: save, then run */
	GATE_REFUSE	/* refused: do not run */
};

/* A CLOSED gate for account name.  0 / -1 on ENOMEM. */
int breaker_account_init(struct cb_account *a, const char *name);
void breaker_account_free(struct cb_account *a);

/*
 * Before a run of circuit: CLOSED passes; OPEN before retry_at, OPEN for
 * billing or auth, and a trial another circuit claimed until trial_until
 * refuse; otherwise circuit claims the trial (HALF_OPEN) for lease
 * seconds.
 */
enum cb_gate_verdict breaker_gate_admit(struct cb_account *a,
    const char *circuit, double lease, double now);

/* Refused until then (retry_at, or a trial's claim); < 0: until reset. */
double breaker_gate_until(const struct cb_account *a);

/*
 * After a run of circuit that ended as type (its classification's type;
 * "" for a success) with message: a usage limit opens the gate until
 * retry_at (the latest word wins), billing or auth opens it until
 * a reset (and wins over a usage limit), both with reason; any other end
 * of the trial circuit claimed closes it.  Returns 1 when a changed (to be
 * saved), else 0.
 */
int breaker_gate_learn(struct cb_account *a, const char *circuit,
    const char *type, const char *reason, const char *message,
    double retry_at, double now);

/* The provider fact type is: 1 for usage_limit, billing and auth. */
int breaker_gate_fact(const char *type);

/* An operator's --reset-account: CLOSED, the fact forgotten. */
void breaker_gate_reset(struct cb_account *a, double now);

#endif
