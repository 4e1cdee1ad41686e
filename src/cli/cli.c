/* SPDX-License-Identifier: ISC */
/*
 * Options (SPEC §1).  Every option is one row of opts[]: its long name, its
 * short letter, whether it takes a value, how the value is read (a
 * duration, a count, a string, a list, a flag, ...) and the member of
 * struct options it goes to, and its --help category and description, so
 * an option added is one row (and a case of set_option() only when its
 * value is read in a way of its own).  argv, the CB_* environment and the
 * config file's keys all go through set_option(), so a value is validated
 * the same way wherever it comes from; o->origin[id]
 * remembers the source so that a lower-precedence source (CLI > env >
 * config > phase > built-in) never overrides a higher.  cli_parse() reads
 * argv in one ordered pass: a run stops at COMMAND, an operator command
 * takes its CIRCUIT anywhere; --help renders the table, by category.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "cli.h"
#include "core.h"
#include "optvalues.h"
#include "store.h"

enum opt_id {
	O_STATE, O_NAME, O_CHDIR, O_FOLLOW, O_STATUS, O_RESET, O_HISTORY,
	O_TRIP, O_JSON, O_LAST, O_REASON, O_HELP, O_VERSION, O_PHASE,
	O_TIMEOUT, O_KILL_AFTER, O_SIGNAL, O_BUDGET, O_ITERATIONS, O_LOOP,
	O_UNTIL_SUCCESS, O_DELAY, O_TASK, O_BACKOFF, O_CONFIG, O_NO_PROMPT,
	O_QUIET, O_VERBOSE, O_LOG, O_METRICS, O_WAIT_LOCK, O_ON_CHANGE, O_ON_RUN,
	O_OK_CODES, O_IGNORE_CODES, O_NO_PROGRESS, O_SAME_ERROR,
	O_HALF_OPEN_AFTER, O_MAX_CONSEC, O_MAX_RETRIES, O_COOLDOWN,
	O_HALF_OPEN_TRIALS, O_HISTORY_SIZE, O_PROGRESS, O_PROGRESS_CMD,
	O_WATCH, O_EXCLUDE, O_CAPTURE_BYTES, O_NO_CAPTURE_STDOUT,
	O_KEEP_ORPHANS, O_EXIT_CODES, O_SKIP, O_UNSKIP, O_RECORD, O_EXIT,
	O_MESSAGE, O_STDERR_FILE, O_STDOUT_FILE, O_CREATE, O_ALL, O_ALLOW_CONFIG,
	O_AGENT, O_IDLE_TIMEOUT, O_MAX_COST, O_MAX_TOKENS, O_MAX_TURNS,
	O_MAX_REPEAT_CALLS, O_ACCOUNT, O_RESET_ACCOUNT, O_STORE, O_STORE_LEASE,
	O_STORE_TIMEOUT, O_STORE_FALLBACK, O_STORE_PASSWORD_FILE,
	O_RESULT_GRACE, O_STORE_CA, O_STORE_CERT, O_STORE_KEY,
	O_STORE_REPLICAS, O_COUNT
};
/* o->origin has a slot per option; a table that outgrows it fails to
 * compile rather than writing past it. */
_Static_assert(O_COUNT <= sizeof(((struct options *)0)->origin),
    "struct options: origin[] is smaller than the option table");

/*
 * --help's categories (curl's "--help CATEGORY"): each option belongs to
 * one; COMMON marks the few that plain --help shows.  NO_CONFIG marks the
 * options a config file may not set: they pick the circuit or the config
 * itself, or they are commands rather than settings, or the facts of one
 * recorded run.
 */
enum help_cat { CAT_CIRCUIT, CAT_RUNNING, CAT_AGENTS, CAT_STORE,
	CAT_THRESHOLDS, CAT_OPERATOR, CAT_RECORD, N_CATS };
#define COMMON 0x100
#define NO_CONFIG 0x200
#define CAT_OF(c) ((c) & 0xff)

static const struct {
	const char *name;	/* --help NAME */
	const char *title;	/* its heading; also accepted as a name */
	const char *note;	/* under the heading, or NULL */
} cats[N_CATS] = {
	[CAT_CIRCUIT] = { "circuit", "which circuit", "CIRCUIT is a NAME, "
	    "or a path with '/' or ending in .json" },
	[CAT_RUNNING] = { "running", "running", "durations: N, N.N or .N "
	    "with ms, s, m, h or d; 0 = no limit" },
	[CAT_AGENTS] = { "agents", "agents and spend", "spend caps read a "
	    "known agent's output (0 = no cap): a run over one is\nstopped "
	    "as on --timeout, class budget, exit 124; a figure only its "
	    "result\ngives applies then, and no further run starts" },
	[CAT_STORE] = { "store", "shared store", "a circuit shared by "
	    "many hosts; needs --name; env CBEXEC_STORE" },
	[CAT_THRESHOLDS] = { "thresholds", "breaker thresholds", "option > "
	    "environment > config > phase > built-in" },
	[CAT_OPERATOR] = { "operator", "operator verbs", "a CIRCUIT without "
	    "a state file is \"no such circuit\", 125; options may also\n"
	    "come after CIRCUIT" },
	[CAT_RECORD] = { "record", "recording a run", "a run a loop script "
	    "made itself; prints nothing (-v to speak); --progress\n"
	    "yes|no|auto, --task and --phase as for a run" },
};

/*
 * How an option's value is read, and where it goes: the macros below give
 * a row its type and the member of struct options it sets (checked to
 * have the C type the reader writes, at compile time).
 */
enum opt_type {
	OT_STR,		/* a copy of the value */
	OT_TEXT,	/* the same as UTF-8 (it ends up in the state) */
	OT_FLAG,	/* 1; takes no value */
	OT_STEP,	/* += n (-q, -v) */
	OT_DURATION,	/* seconds (SPEC §1); n = 1: more than 0 */
	OT_INT,		/* a whole number, at least n */
	OT_LONG,	/* the same into a long */
	OT_LIST,	/* one more item of a repeatable option */
	OT_CODES,	/* a list of exit codes, e.g. as example */
	OT_NAME,	/* a NAME as a circuit's, of what example names */
	OT_MODE,	/* a command: the mode n (set_mode) */
	OT_OWN		/* read by set_option()'s own case */
};

#define AT(f, T) _Generic(((struct options *)0)->f,			\
	T: offsetof(struct options, f))
#define STR(f)		OT_STR, AT(f, char *), 0, NULL
#define TEXT(f)		OT_TEXT, AT(f, char *), 0, NULL
#define FLAG(f)		OT_FLAG, AT(f, int), 0, NULL
#define STEP(f, n)	OT_STEP, AT(f, int), n, NULL
#define DURATION(f)	OT_DURATION, AT(f, double), 0, NULL
#define DURATION_NZ(f)	OT_DURATION, AT(f, double), 1, NULL
#define COUNT(f, min)	_Generic(((struct options *)0)->f, int: OT_INT,	\
	long: OT_LONG), _Generic(((struct options *)0)->f,		\
	int: offsetof(struct options, f), long: offsetof(struct options, f)), \
	min, NULL
#define LIST(f)		OT_LIST, AT(f, struct strv), 0, NULL
#define CODES(f, eg)	OT_CODES, AT(f, struct codes), 0, eg
#define NAME(f, what)	OT_NAME, AT(f, char *), 0, what
#define MODE(m)		OT_MODE, 0, m, NULL
#define OWN		OT_OWN, 0, 0, NULL

/*
 * Every option is one row: its long name, whether it takes a value, its
 * short letter, its id (origin[]'s slot, and set_option()'s own cases),
 * how its value is read and where it goes (the macros above), its --help
 * category (| COMMON, | NO_CONFIG), what follows the name in --help
 * (" D", "[=D]"), and its description, lines of at most 50 columns, the
 * first one able to stand alone (plain --help shows only that).  The
 * config file's keys are the same rows (config.c).
 */
struct opt {
	const char *name;
	int has_arg;		/* no_argument, required_argument, optional_ */
	int letter;		/* short option or 0 */
	enum opt_id id;
	enum opt_type type;
	size_t off;		/* the member of struct options it sets */
	long n;			/* OT_STEP, _DURATION, _INT, _LONG, _MODE */
	const char *what;	/* OT_CODES's example, OT_NAME's noun */
	int cat;		/* enum help_cat, | COMMON, | NO_CONFIG */
	const char *arg;	/* after the name in --help, or "" */
	const char *help;
};

static const struct opt opts[] = {
	{ "state", required_argument, 0, O_STATE, STR(state_path),
	    CAT_CIRCUIT | NO_CONFIG, " FILE", "the state file itself" },
	{ "name", required_argument, 'N', O_NAME, NAME(name, "circuit"),
	    CAT_CIRCUIT | COMMON | NO_CONFIG, " NAME",
	    "the circuit: $CBEXEC_STATE_DIR/NAME.json\n"
	    "($CBEXEC_STATE_DIR defaults to\n"
	    "${XDG_STATE_HOME:-$HOME/.local/state}/cbexec;\n"
	    "neither --name nor --state: $CBEXEC_STATE, else\n"
	    "the working directory's own dir-BASE-HASH.json)" },
	{ "chdir", required_argument, 'C', O_CHDIR, STR(chdir),
	    CAT_CIRCUIT | NO_CONFIG, " DIR",
	    "change to DIR first; relative paths are in DIR" },
	{ "follow-symlinks", no_argument, 0, O_FOLLOW, FLAG(follow_symlinks),
	    CAT_CIRCUIT | NO_CONFIG, "",
	    "accept a symlinked state, --log or --metrics file" },
	{ "status", no_argument, 0, O_STATUS, MODE(MODE_STATUS),
	    CAT_OPERATOR | NO_CONFIG, "",
	    "show the circuit (exit 120 when OPEN)" },
	{ "reset-circuit", no_argument, 0, O_RESET, MODE(MODE_RESET),
	    CAT_OPERATOR | NO_CONFIG, "",
	    "close the circuit (waits up to 5s for the lock);\n"
	    "rewrites the textfiles and logs its runs wrote" },
	{ "history", no_argument, 0, O_HISTORY, MODE(MODE_HISTORY),
	    CAT_OPERATOR | NO_CONFIG, "",
	    "the circuit's events, oldest first" },
	{ "trip", no_argument, 0, O_TRIP, MODE(MODE_TRIP),
	    CAT_OPERATOR | NO_CONFIG, "",
	    "open the circuit by hand; no cooldown closes it" },
	{ "json", no_argument, 0, O_JSON, FLAG(json), CAT_OPERATOR | NO_CONFIG,
	    "", "with --status, --history or --record: JSON\n"
	    "(\"v\": 2; its fields: cbexec(1), JSON)" },
	{ "last", required_argument, 0, O_LAST, COUNT(last, 1),
	    CAT_OPERATOR | NO_CONFIG, " N",
	    "with --history: only the last N events" },
	{ "reason", required_argument, 0, O_REASON, TEXT(reason),
	    CAT_OPERATOR | NO_CONFIG, " TEXT",
	    "why, for --reset-circuit, --trip, --skip and\n"
	    "--reset-account: kept in the history" },
	{ "help", optional_argument, 'h', O_HELP, MODE(MODE_HELP),
	    CAT_OPERATOR | NO_CONFIG, " [CATEGORY]",
	    "this help; all, or one category: circuit, running,\n"
	    "agents, store, thresholds, operator, record" },
	{ "version", no_argument, 'V', O_VERSION, MODE(MODE_VERSION),
	    CAT_OPERATOR | NO_CONFIG, "", "print the version" },
	{ "phase", required_argument, 'p', O_PHASE, OWN, CAT_RUNNING | COMMON,
	    " P", "RED, GREEN, REFACTOR, DOCUMENT or a config phase" },
	{ "timeout", required_argument, 't', O_TIMEOUT, DURATION(timeout),
	    CAT_RUNNING | COMMON, " D", "limit for one run (120s)" },
	{ "kill-after", required_argument, 'k', O_KILL_AFTER,
	    DURATION(kill_after), CAT_RUNNING, " D",
	    "SIGKILL this long after the timeout signal (10s)" },
	{ "signal", required_argument, 's', O_SIGNAL, OWN, CAT_RUNNING, " SIG",
	    "signal sent on timeout: name or number, 0 = none" },
	{ "budget", required_argument, 'T', O_BUDGET, DURATION(budget),
	    CAT_RUNNING | COMMON, " D",
	    "total time for this invocation (30m)" },
	{ "iterations", required_argument, 'n', O_ITERATIONS,
	    COUNT(iterations, 1), CAT_RUNNING | COMMON, " N",
	    "at most N runs (1)" },
	{ "loop", no_argument, 'l', O_LOOP, FLAG(loop), CAT_RUNNING | COMMON,
	    "", "run until COMPLETE, tripped, or the budget is spent" },
	{ "until-success", no_argument, 0, O_UNTIL_SUCCESS, FLAG(until_success),
	    CAT_RUNNING, "", "with --loop/-n: stop after the first success" },
	{ "delay", required_argument, 0, O_DELAY, DURATION(delay), CAT_RUNNING,
	    " D", "pause between runs (0: a --loop of successes\n"
	    "runs hot, which it says once)" },
	{ "task", required_argument, 0, O_TASK, TEXT(task), CAT_RUNNING, " ID",
	    "the task the run works on (STUCK rule)" },
	{ "backoff", required_argument, 0, O_BACKOFF, OWN, CAT_RUNNING,
	    " D[:MAX]", "after a failure wait D, doubling to MAX (10xD)" },
	{ "config", required_argument, 'c', O_CONFIG, STR(config_path),
	    CAT_RUNNING | NO_CONFIG, " FILE",
	    "JSON config (default: ~/.config/cbexec/config.json,\n"
	    "yours and writable by nobody else, then\n"
	    ".cbexec/config.json if approved with\n"
	    "--allow-config: the command can write it)" },
	{ "no-prompt", no_argument, 0, O_NO_PROMPT, FLAG(no_prompt),
	    CAT_RUNNING, "", "never show the menu when the circuit opens" },
	{ "quiet", no_argument, 'q', O_QUIET, STEP(verbosity, -1),
	    CAT_RUNNING | COMMON, "",
	    "quieter (-qq: nothing on stderr but errors);\n"
	    "not even the refusal of an OPEN circuit" },
	{ "verbose", no_argument, 'v', O_VERBOSE, STEP(verbosity, 1),
	    CAT_RUNNING | COMMON, "",
	    "say whether a successful run made progress" },
	{ "log", required_argument, 0, O_LOG, STR(log_path),
	    CAT_RUNNING | COMMON, " FILE",
	    "append events as JSON lines (-: to stdout)" },
	{ "metrics", required_argument, 0, O_METRICS, STR(metrics_path),
	    CAT_RUNNING | COMMON, " FILE",
	    "keep a Prometheus textfile up to date" },
	{ "wait-lock", optional_argument, 0, O_WAIT_LOCK, OWN, CAT_RUNNING,
	    "[=D]", "wait for the lock instead of exiting BUSY (D after\n"
	    "'=': --wait-lock=30s)" },
	{ "on-state-change", required_argument, 0, O_ON_CHANGE,
	    STR(on_state_change), CAT_RUNNING, " CMD",
	    "run /bin/sh -c CMD after every transition\n"
	    "(killed after --kill-after, or when --budget ends)" },
	{ "on-run", required_argument, 0, O_ON_RUN, STR(on_run), CAT_RUNNING,
	    " CMD", "run /bin/sh -c CMD before and after each run\n"
	    "(CBEXEC_EVENT=start|end, CBEXEC_RESULT, ...)" },
	{ "ok-exit-codes", required_argument, 0, O_OK_CODES,
	    CODES(ok_codes, "0,75"), CAT_RUNNING, " LIST",
	    "exit codes that count as success (0)" },
	{ "ignore-exit-codes", required_argument, 0, O_IGNORE_CODES,
	    CODES(ignore_codes, "75"), CAT_RUNNING, " LIST",
	    "exit codes that count as nothing" },
	{ "no-progress-threshold", required_argument, 0, O_NO_PROGRESS,
	    COUNT(limits.no_progress, 1), CAT_THRESHOLDS, " N",
	    "open after N runs without progress;\n"
	    "CB_NO_PROGRESS_THRESHOLD (the phase's, else 3)" },
	{ "same-error-threshold", required_argument, 0, O_SAME_ERROR,
	    COUNT(limits.same_error, 1), CAT_THRESHOLDS, " N",
	    "STUCK after the same error N times;\n"
	    "CB_SAME_ERROR_THRESHOLD (the phase's, else 5)" },
	{ "half-open-after", required_argument, 0, O_HALF_OPEN_AFTER,
	    COUNT(limits.half_open_after, 1), CAT_THRESHOLDS, " N",
	    "HALF_OPEN after N runs without progress;\n"
	    "CB_HALF_OPEN_RETRIES (2)" },
	{ "max-consecutive-errors", required_argument, 0, O_MAX_CONSEC,
	    COUNT(limits.max_consecutive_errors, 1), CAT_THRESHOLDS, " N",
	    "open after N failed runs in a row;\n"
	    "CB_MAX_CONSECUTIVE_ERRORS (5)" },
	{ "max-retries", required_argument, 0, O_MAX_RETRIES,
	    COUNT(limits.max_retries, 1), CAT_THRESHOLDS, " N",
	    "STUCK when the same task failed N times in a row;\n"
	    "CB_MAX_RETRIES (3)" },
	{ "cooldown", required_argument, 0, O_COOLDOWN,
	    DURATION(limits.cooldown), CAT_THRESHOLDS, " D",
	    "wait before a trial run; CB_COOLDOWN (0: only an\n"
	    "operator closes an OPEN circuit)" },
	{ "half-open-trials", required_argument, 0, O_HALF_OPEN_TRIALS,
	    COUNT(limits.half_open_trials, 1), CAT_THRESHOLDS, " N",
	    "trial runs a cooldown allows (1)" },
	{ "history-size", required_argument, 0, O_HISTORY_SIZE,
	    COUNT(limits.history_size, 1), CAT_THRESHOLDS, " N",
	    "events the state's history keeps (100)" },
	{ "progress", required_argument, 0, O_PROGRESS, OWN, CAT_RUNNING,
	    " LIST", "git,files,status,cmd,exit,auto (auto); with\n"
	    "--record: yes, no or auto" },
	{ "progress-cmd", required_argument, 0, O_PROGRESS_CMD,
	    STR(progress_cmd), CAT_RUNNING, " CMD",
	    "prints key=value lines or one number (killed\n"
	    "after --timeout, or when --budget ends)" },
	{ "watch", required_argument, 0, O_WATCH, LIST(watch), CAT_RUNNING,
	    " DIR", "directory for --progress files (repeatable)" },
	{ "exclude", required_argument, 0, O_EXCLUDE, LIST(exclude),
	    CAT_RUNNING, " GLOB", "left out of --progress files (repeatable)" },
	{ "capture-bytes", required_argument, 0, O_CAPTURE_BYTES, OWN,
	    CAT_RUNNING, " N", "tail kept of stdout and stderr (64k)" },
	{ "no-capture-stdout", no_argument, 0, O_NO_CAPTURE_STDOUT,
	    FLAG(no_capture_stdout), CAT_RUNNING, "",
	    "the command writes straight to our stdout" },
	{ "keep-orphans", no_argument, 0, O_KEEP_ORPHANS, FLAG(keep_orphans),
	    CAT_RUNNING, "", "leave processes the command left behind" },
	{ "exit-codes", required_argument, 0, O_EXIT_CODES, OWN, CAT_RUNNING,
	    " LIST", "remap 120-123: open=N,stuck=N,abort=N,busy=N;\n"
	    "complete=N: a run that reported completion (0)" },
	{ "skip", no_argument, 0, O_SKIP, MODE(MODE_SKIP),
	    CAT_OPERATOR | NO_CONFIG, "",
	    "give up --phase P or --task T (default: the task\n"
	    "the circuit is stuck on, else its phase): runs\n"
	    "for it exit 0 unstarted; the circuit CLOSES" },
	{ "unskip", required_argument, 0, O_UNSKIP, MODE(MODE_UNSKIP),
	    CAT_OPERATOR | NO_CONFIG, " P|T",
	    "run that phase or task again (a reset does too)" },
	{ "record", no_argument, 0, O_RECORD, MODE(MODE_RECORD),
	    CAT_RECORD | NO_CONFIG, "",
	    "apply one run's result as a run would" },
	{ "exit", required_argument, 0, O_EXIT, OWN, CAT_RECORD | NO_CONFIG,
	    " N", "its exit status (0)" },
	{ "message", required_argument, 0, O_MESSAGE, STR(message),
	    CAT_RECORD | NO_CONFIG, " TEXT", "its stderr" },
	{ "stderr-file", required_argument, 0, O_STDERR_FILE, STR(stderr_file),
	    CAT_RECORD | NO_CONFIG, " F", "its stderr: the tail of file F" },
	{ "stdout-file", required_argument, 0, O_STDOUT_FILE, STR(stdout_file),
	    CAT_RECORD | NO_CONFIG, " F",
	    "its stdout: the tail, and the status block" },
	{ "create", no_argument, 0, O_CREATE, FLAG(create),
	    CAT_OPERATOR | NO_CONFIG, "",
	    "with --trip: open a circuit that has not run yet" },
	{ "all", no_argument, 0, O_ALL, FLAG(all), CAT_OPERATOR | NO_CONFIG, "",
	    "with --status: every circuit of the state dir (or\n"
	    "the store), OPEN first" },
	{ "allow-config", no_argument, 0, O_ALLOW_CONFIG,
	    MODE(MODE_ALLOW_CONFIG), CAT_OPERATOR | NO_CONFIG, " [FILE]",
	    "approve FILE's content (.cbexec/config.json) as\n"
	    "the work tree's config; a changed one is refused;\n"
	    "only the operator approves: refused inside a run\n"
	    "and while one goes on, and an approval written\n"
	    "during a run is revoked after it" },
	{ "agent", required_argument, 0, O_AGENT, STR(agent),
	    CAT_AGENTS | COMMON, " NAME",
	    "the AI client COMMAND runs (default: from its\n"
	    "name): claude, codex, gemini, ..., or none" },
	{ "idle-timeout", required_argument, 0, O_IDLE_TIMEOUT,
	    DURATION(idle_timeout), CAT_RUNNING, " D",
	    "stop a run that writes nothing (no agent event)\n"
	    "for D, as on --timeout (0 = none)" },
	{ "result-grace", required_argument, 0, O_RESULT_GRACE,
	    DURATION(result_grace), CAT_AGENTS, " D",
	    "end an agent that has not exited D after its\n"
	    "final result; judge the run by the result (10s)" },
	{ "max-cost", required_argument, 0, O_MAX_COST, OWN,
	    CAT_AGENTS | COMMON, " USD[/D]",
	    "a cost cap: USD per run, or USD/D per window D\n"
	    "of the circuit's runs, rolling (5,20/24h: both)" },
	{ "max-tokens", required_argument, 0, O_MAX_TOKENS, OWN, CAT_AGENTS,
	    " N[/D]", "a token cap: N per run, or N/D per window D of\n"
	    "the circuit's runs; input, output and cache" },
	{ "max-turns", required_argument, 0, O_MAX_TURNS, OWN, CAT_AGENTS, " N",
	    "a turn cap: N per run" },
	{ "max-repeat-calls", required_argument, 0, O_MAX_REPEAT_CALLS,
	    COUNT(max_repeat_calls, 0), CAT_AGENTS, " N",
	    "stop a run making the same tool call N times\n"
	    "in a row (5; 0 = off): recoverable loop, exit 124" },
	{ "account", required_argument, 0, O_ACCOUNT, NAME(account, "account"),
	    CAT_AGENTS, " NAME",
	    "the provider account COMMAND uses; a usage limit,\n"
	    "billing or auth failure one circuit on it meets\n"
	    "refuses every circuit on it (120) until the reset\n"
	    "time (then one trial) or --reset-account; env\n"
	    "CBEXEC_ACCOUNT" },
	{ "reset-account", required_argument, 0, O_RESET_ACCOUNT,
	    MODE(MODE_RESET_ACCOUNT), CAT_OPERATOR | NO_CONFIG, " NAME",
	    "close account NAME's gate (no such account: 125)" },
	{ "store", required_argument, 0, O_STORE, OWN, CAT_STORE, " URL",
	    "keep the circuit in a shared Redis:\n"
	    "redis://[user[:password]@]host[:port][/db],\n"
	    "rediss://... (TLS) or unix:///path.sock[?db=N]; or\n"
	    "etcd: etcd://[user@]host[:port][,host...] or\n"
	    "etcds://... (TLS);\n"
	    "the lock is a lease, every write fenced (a holder\n"
	    "that lost its lease is refused: 125); a replica\n"
	    "is refused (125); the store's clock decides;\n"
	    "CBEXEC_STORE is not passed on" },
	{ "store-lease", required_argument, 0, O_STORE_LEASE,
	    DURATION_NZ(store_lease), CAT_STORE, " D",
	    "the lease, renewed while the run goes on (30s)" },
	{ "store-timeout", required_argument, 0, O_STORE_TIMEOUT,
	    DURATION_NZ(store_timeout), CAT_STORE, " D",
	    "bound on name lookup, connecting and each whole\n"
	    "command (2s; at most a third of the lease); an\n"
	    "unreachable store is 125, COMMAND not started" },
	{ "store-fallback", required_argument, 0, O_STORE_FALLBACK, OWN,
	    CAT_STORE, " local|none",
	    "run on the local state file when the store\n"
	    "cannot be reached (said in the log and metrics;\n"
	    "with --account: refused, 125)" },
	{ "store-password-file", required_argument, 0, O_STORE_PASSWORD_FILE,
	    OWN, CAT_STORE, " F",
	    "the store's password, the first line of F (a\n"
	    "regular file, yours, mode 0600 or stricter; a FIFO\n"
	    "is 125 at once); or CBEXEC_STORE_PASSWORD" },
	{ "store-ca", required_argument, 0, O_STORE_CA, STR(store_ca),
	    CAT_STORE, " F",
	    "rediss://, etcds://: trust the CA certificates in\n"
	    "F (PEM), not the system's; the host name is\n"
	    "verified" },
	{ "store-cert", required_argument, 0, O_STORE_CERT, STR(store_cert),
	    CAT_STORE, " F",
	    "rediss://, etcds://: this client's certificate\n"
	    "(PEM), its key in F too unless --store-key" },
	{ "store-key", required_argument, 0, O_STORE_KEY, STR(store_key),
	    CAT_STORE, " F",
	    "rediss://, etcds://: the client certificate's key\n"
	    "(yours, mode 0600; or root's, not readable by\n"
	    "others)" },
	{ "store-replicas", required_argument, 0, O_STORE_REPLICAS,
	    COUNT(store_replicas, 0), CAT_STORE, " N",
	    "every lease and save waits for N replicas (WAIT)\n"
	    "within --store-timeout; not confirmed: 125, a save\n"
	    "\"may or may not have been saved\" (0: no wait)" },
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static int set_help_topic(struct options *o, const char *w, char *err,
    size_t len);

/* --exit-codes KEY=N,...: the keys of the rows of cb_exits[] that may be
 * remapped. */
static int
parse_exit_codes(struct options *o, const char *s)
{
	char *copy, *tok, *save, *eq;
	size_t i;
	long v;
	int rc = -1;

	if (!list_well_formed(s) || (copy = strdup(s)) == NULL)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if ((eq = strchr(tok, '=')) == NULL)
			goto out;
		*eq++ = '\0';
		if (parse_long(eq, 0, 255, &v) == -1)
			goto out;
		for (i = 0; i < CB_EXIT_ROWS && (cb_exits[i].key == NULL ||
		    strcmp(cb_exits[i].key, tok) != 0); i++)
			;
		if (i == CB_EXIT_ROWS)
			goto out;
		o->exit_as[i] = (int)v;
	}
	rc = 0;
out:
	free(copy);
	return rc;
}

/* The message for a duration v of option NAME that duration_parse
 * refused with rc. */
static int
duration_error(int rc, const char *v, const char *name, char *err,
    size_t len)
{
	if (rc == -2)
		return errf(err, len, "duration '%s' for --%s is over the "
		    "limit of 10 years", v, name);
	return errf(err, len, "invalid duration '%s' for --%s (use N, N.N "
	    "or .N with ms, s, m, h or d)", v, name);
}

/* An amount: N, N.N or .N, at most max (no sign, exponent or hex). */
static int
parse_amount(const char *s, int whole, double max, double *out)
{
	size_t n = strspn(s, "0123456789"), frac = 0;
	char *end;

	if (s[n] == '.' && !whole)
		frac = strspn(s + n + 1, "0123456789") + 1;
	if (n + frac == 0 || (n == 0 && frac == 1) || s[n + frac] != '\0')
		return -1;
	*out = strtod(s, &end);
	return *end == '\0' && *out <= max ? 0 : -1;
}

/*
 * --max-cost USD[/DURATION][,...], --max-tokens N[/DURATION][,...],
 * --max-turns N: a cap for one run, and with /DURATION one for the
 * circuit over that rolling window; a list gives both.
 */
static int
set_caps(struct options *o, const struct opt *op, const char *v,
    char *err, size_t len)
{
	char *buf, *tok, *save, *slash;
	int whole = op->id != O_MAX_COST, rc = -1, dr;
	double amount, span;

	if (!list_well_formed(v) || (buf = strdup(v)) == NULL)
		goto bad;
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		span = 0;
		if ((slash = strchr(tok, '/')) != NULL) {
			*slash++ = '\0';
			if (op->id == O_MAX_TURNS)
				goto out_bad;
			if ((dr = duration_parse(slash, &span)) != 0) {
				rc = duration_error(dr, slash, op->name, err,
				    len);
				goto out;
			}
			if (span == 0)
				goto out_bad;
		}
		if (parse_amount(tok, whole, whole ? (double)CB_LONG_MAX :
		    1e12, &amount) == -1)
			goto out_bad;
		if (op->id == O_MAX_COST && span > 0) {
			o->max_cost_window = amount;
			o->max_cost_span = span;
		} else if (op->id == O_MAX_COST)
			o->max_cost = amount;
		else if (op->id == O_MAX_TOKENS && span > 0) {
			o->max_tokens_window = (long)amount;
			o->max_tokens_span = span;
		} else if (op->id == O_MAX_TOKENS)
			o->max_tokens = (long)amount;
		else
			o->max_turns = (long)amount;
	}
	rc = 0;
	goto out;
out_bad:
	free(buf);
bad:
	return errf(err, len, "invalid value '%s' for --%s (%s%s; 0 for "
	    "none)", v, op->name, whole ? "a whole number" : "USD, as 5 or "
	    "0.50", op->id == O_MAX_TURNS ? "" : op->id == O_MAX_COST ?
	    ", or USD/DURATION for a rolling window of the circuit, as "
	    "20/24h" : ", or N/DURATION for a rolling window of the "
	    "circuit, as 500000/1h");
out:
	free(buf);
	return rc;
}

/* Free text that ends up in the state file, which is always UTF-8. */
static int
set_text(char **dst, const char *v)
{
	char *p = utf8_sanitize(v, strlen(v));

	if (p == NULL)
		return -1;
	free(*dst);
	*dst = p;
	return 0;
}

/* --backoff D[:MAX]; MAX defaults to 10 x D and may not be below it. */
static int
set_backoff(struct options *o, const struct opt *op, const char *v,
    char *err, size_t len)
{
	char *buf, *colon;
	int rc;

	if ((buf = strdup(v)) == NULL)
		return -1;
	if ((colon = strchr(buf, ':')) != NULL)
		*colon++ = '\0';
	if ((rc = duration_parse(buf, &o->backoff)) != 0) {
		rc = duration_error(rc, buf, op->name, err, len);
		goto out;
	}
	o->backoff_max = 10 * o->backoff;
	if (colon != NULL &&
	    (rc = duration_parse(colon, &o->backoff_max)) != 0) {
		rc = duration_error(rc, colon, op->name, err, len);
		goto out;
	}
	if (o->backoff_max < o->backoff)
		rc = errf(err, len, "--backoff: MAX %s is below the initial "
		    "delay %s", colon, buf);
out:
	free(buf);
	return rc;
}

/* The store's password: the first line of F, a regular file of ours
 * that nobody else may read or write (mode 0600 or stricter). */
static int
store_password_file(struct options *o, const char *path, char *err,
    size_t len)
{
	char buf[512];
	struct stat sb;
	ssize_t n;
	int fd;

	/* Non-blocking and a regular file only: a FIFO at the path is
	 * refused at once, never waited on in open(2). */
	if ((fd = file_open(path, O_RDONLY, 0, 0)) < 0)
		return errf(err, len, "--store-password-file %s: %s", path,
		    file_why(fd));
	if (fstat(fd, &sb) == -1) {
		close(fd);
		return errf(err, len, "--store-password-file %s: %s", path,
		    strerror(errno));
	}
	if (sb.st_uid != geteuid() || (sb.st_mode & 077) != 0) {
		close(fd);
		return errf(err, len, "--store-password-file %s: mode %04o, "
		    "owner %ld: it must be yours and private (chmod 600)",
		    path, (unsigned)(sb.st_mode & 07777), (long)sb.st_uid);
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return errf(err, len, "--store-password-file %s: %s", path,
		    strerror(errno));
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (buf[0] == '\0') {
		explicit_bzero(buf, sizeof(buf));
		return errf(err, len, "--store-password-file %s: no password "
		    "on its first line", path);
	}
	if ((size_t)n == sizeof(buf) - 1 && strchr(buf, '\n') == NULL &&
	    strlen(buf) == sizeof(buf) - 1) {
		explicit_bzero(buf, sizeof(buf));
		return errf(err, len, "--store-password-file %s: the password "
		    "is longer than 255 bytes", path);
	}
	options_set_password(o, buf);
	explicit_bzero(buf, sizeof(buf));
	return o->store_password != NULL ? 0 : errf(err, len,
	    "out of memory");
}

/* A NAME as SPEC §1's for a circuit (an account's too). */
static int
set_name(char **dst, const char *what, const struct opt *op, const char *v,
    char *err, size_t len)
{
	if (!valid_name(v))
		return errf(err, len, "invalid %s name '%s' for --%s (letters, "
		    "digits, '.', '_', '-'; not starting with '.')", what, v,
		    op->name);
	return replace_str(dst, v);
}

/* A command: the invocation's mode, and for some its value. */
static int
set_mode(struct options *o, const struct opt *op, const char *v, char *err,
    size_t len)
{
	/* --help and --version win over everything else. */
	if (o->mode == MODE_HELP || o->mode == MODE_VERSION)
		return 0;
	if (o->mode != MODE_RUN && op->id != O_HELP && op->id != O_VERSION &&
	    o->mode != (enum mode)op->n)
		return errf(err, len, "--%s cannot be combined with another "
		    "operator command", op->name);
	o->mode = (enum mode)op->n;
	switch (op->id) {
	case O_UNSKIP:
		if (*v == '\0')
			return errf(err, len, "empty name for --unskip");
		return set_text(&o->unskip, v);
	case O_RESET_ACCOUNT:
		return set_name(&o->reset_account, "account", op, v, err,
		    len);
	case O_HELP:
		return v != NULL ? set_help_topic(o, v, err, len) : 0;
	default:
		return 0;
	}
}

/*
 * Apply one option: by its row's type into its row's member of o, or
 * for the few that are read their own way, by its own case.  Flags ignore
 * v (NULL from argv).
 */
static int
set_option(struct options *o, const struct opt *op, const char *v,
    char *err, size_t len)
{
	void *dst = (char *)o + op->off;
	long n;
	int rc;

	switch (op->type) {
	case OT_STR:
		return replace_str(dst, v);
	case OT_TEXT:
		return set_text(dst, v);
	case OT_FLAG:
		*(int *)dst = 1;
		return 0;
	case OT_STEP:
		*(int *)dst += (int)op->n;
		return 0;
	case OT_DURATION:
		if ((rc = duration_parse(v, dst)) != 0)
			return duration_error(rc, v, op->name, err, len);
		/* 0 means "no limit" elsewhere: a lease that never expires
		 * or a store waited on forever is what this must not be. */
		if (op->n > 0 && *(double *)dst <= 0)
			return errf(err, len, "--%s must be more than 0",
			    op->name);
		return 0;
	case OT_INT:
	case OT_LONG:
		if (parse_long(v, op->n, op->type == OT_INT ? INT_MAX :
		    LONG_MAX, &n) == -1)
			return errf(err, len, "invalid value '%s' for --%s "
			    "(a whole number, at least %ld)", v, op->name,
			    op->n);
		if (op->type == OT_INT)
			*(int *)dst = (int)n;
		else
			*(long *)dst = n;
		return 0;
	case OT_LIST:
		return strv_push(dst, v);
	case OT_CODES:
		if (parse_codes(v, dst) == -1)
			return errf(err, len, "invalid exit code list '%s' "
			    "for --%s (e.g. %s)", v, op->name, op->what);
		return 0;
	case OT_NAME:
		return set_name(dst, op->what, op, v, err, len);
	case OT_MODE:
		return set_mode(o, op, v, err, len);
	case OT_OWN:
		break;
	}
	switch (op->id) {
	case O_PHASE:
		if (*v == '\0')
			return errf(err, len, "empty phase name for --phase");
		return replace_str(&o->phase, v);
	case O_SIGNAL:
		if ((o->signal = signal_parse(v)) == -1)
			return errf(err, len, "invalid signal '%s' for "
			    "--signal", v);
		return 0;
	case O_BACKOFF:
		return set_backoff(o, op, v, err, len);
	case O_WAIT_LOCK:
		if (v == NULL) {
			o->wait_lock = -1;
			return 0;
		}
		if ((rc = duration_parse(v, &o->wait_lock)) != 0)
			return duration_error(rc, v, op->name, err, len);
		if (o->wait_lock == 0)
			o->wait_lock = -1;	/* 0 = no limit, as elsewhere */
		return 0;
	case O_PROGRESS:
		/* --record's own words; cli_finish() refuses them elsewhere. */
		if (strcmp(v, "yes") == 0 || strcmp(v, "no") == 0) {
			o->record_progress = v[0] == 'y';
			return 0;
		}
		o->record_progress = -1;
		return progress_parse_list(v, &o->progress, err, len);
	case O_CAPTURE_BYTES:
		if (parse_size(v, &o->capture_bytes) == -1)
			return errf(err, len, "invalid size '%s' for "
			    "--capture-bytes (bytes, or N with k or m; at "
			    "most 64m)", v);
		return 0;
	case O_EXIT_CODES:
		if (parse_exit_codes(o, v) == -1)
			return errf(err, len, "invalid value '%s' for "
			    "--exit-codes (e.g. open=90,stuck=91,abort=92,"
			    "busy=93,complete=10)", v);
		return 0;
	case O_EXIT:
		if (parse_long(v, 0, 255, &n) == -1)
			return errf(err, len, "invalid exit status '%s' for "
			    "--exit (0 to 255)", v);
		o->exit_code = (int)n;
		return 0;
	case O_MAX_COST:
	case O_MAX_TOKENS:
	case O_MAX_TURNS:
		return set_caps(o, op, v, err, len);
	case O_STORE:
		if (store_url_check(v, NULL, 0, err, len) == -1)
			return -1;
		return replace_str(&o->store, v);
	case O_STORE_PASSWORD_FILE:
		return store_password_file(o, v, err, len);
	case O_STORE_FALLBACK:
		if (strcmp(v, "local") != 0 && strcmp(v, "none") != 0)
			return errf(err, len, "invalid value '%s' for "
			    "--store-fallback (local or none)", v);
		o->store_fallback = v[0] == 'l';
		return 0;
	default:
		break;
	}
	return errf(err, len, "internal error: option --%s", op->name);
}

static int
apply(struct options *o, const struct opt *op, const char *v,
    enum origin from, char *err, size_t len)
{
	int rc;

	if (o->origin[op->id] > from)
		return 0;
	if ((rc = set_option(o, op, v, err, len)) == -1 && err[0] == '\0')
		errf(err, len, "out of memory");
	if (rc == 0)
		o->origin[op->id] = (unsigned char)from;
	return rc;
}

/* What getopt_long refused in ARG ("--name[=value]"): an option given a
 * value it takes none of, an abbreviation of several, or none at all. */
static int
long_option_error(const char *arg, char *err, size_t len)
{
	const char *name = arg + 2, *eq = strchr(arg, '=');
	size_t n = eq != NULL ? (size_t)(eq - name) : strlen(name), i, hits = 0;
	char list[160] = "";
	const struct opt *hit = NULL;

	if (strncmp(arg, "--", 2) != 0 || n == 0)
		return errf(err, len, "unknown option '%s'", arg);
	for (i = 0; i < NOPTS; i++) {
		if (strncmp(opts[i].name, name, n) != 0)
			continue;
		if (opts[i].name[n] == '\0') {	/* exact */
			hit = &opts[i];
			hits = 1;
			break;
		}
		hit = &opts[i];
		if (hits++ < 4)
			snprintf(list + strlen(list), sizeof(list) - strlen(list),
			    "%s--%s", hits > 1 ? ", " : "", opts[i].name);
	}
	if (hits > 1)
		return errf(err, len, "ambiguous option '--%.*s' (%s%s)",
		    (int)n, name, list, hits > 4 ? ", ..." : "");
	if (hits == 1 && eq != NULL && hit->has_arg == no_argument)
		return errf(err, len, "option '--%s' takes no value", hit->name);
	return errf(err, len, "unknown option '%s'", arg);
}

/*
 * Whether word, the argument after an optional-value option given bare,
 * reads as that option's value.  getopt takes a value only when attached
 * with '=', so "--wait-lock 30 -- cmd" would run a command named 30: that
 * is refused instead of guessed at either way.
 */
static int
takes_word(const struct opt *op, const char *word)
{
	double d;

	switch (op->id) {
	case O_WAIT_LOCK:
		return duration_parse(word, &d) != -1;
	default:
		return 0;
	}
}

/*
 * The options that belong to some commands only, and the commands they
 * go with: given with any other (a run above all, which would otherwise
 * drop them without a word), they are a usage error.
 */
#define BIT(m) (1u << (m))
static const struct {
	enum opt_id id;
	unsigned modes;
	const char *with;
} verb_only[] = {
	{ O_JSON, BIT(MODE_STATUS) | BIT(MODE_HISTORY) | BIT(MODE_RECORD),
	    "--status, --history or --record" },
	{ O_LAST, BIT(MODE_HISTORY), "--history" },
	{ O_REASON, BIT(MODE_RESET) | BIT(MODE_TRIP) | BIT(MODE_SKIP) |
	    BIT(MODE_RESET_ACCOUNT),
	    "--reset-circuit, --trip, --skip or --reset-account" },
	{ O_CREATE, BIT(MODE_TRIP), "--trip" },
	{ O_ALL, BIT(MODE_STATUS), "--status" },
};

static int
check_verb_options(const struct options *o, char *err, size_t len)
{
	const struct opt *op;
	size_t i;

	for (i = 0; i < NELEM(verb_only); i++) {
		if (o->origin[verb_only[i].id] != FROM_CLI ||
		    (verb_only[i].modes & BIT(o->mode)))
			continue;
		for (op = opts; op->id != verb_only[i].id; op++)
			;
		return errf(err, len, "--%s goes only with %s%s", op->name,
		    verb_only[i].with, o->mode == MODE_RUN ? " (a run "
		    "would not use it)" : "");
	}
	return 0;
}

/* The category a --help word names: a category's name, its title or a
 * word of it, or a unique beginning of a name; -1 if none. */
static int
help_category(const char *w)
{
	size_t i, n = strlen(w);
	int hit = -1, hits = 0;
	const char *t;

	for (i = 0; i < N_CATS; i++) {
		if (strcasecmp(w, cats[i].name) == 0 ||
		    strcasecmp(w, cats[i].title) == 0)
			return (int)i;
		for (t = cats[i].title; *t != '\0'; t += strcspn(t, " "),
		    t += *t == ' ') {
			if (strncasecmp(t, w, n) == 0 &&
			    (t[n] == ' ' || t[n] == '\0') &&
			    strcasecmp(w, "and") != 0)
				return (int)i;
		}
		if (n >= 2 && strncasecmp(w, cats[i].name, n) == 0) {
			hit = (int)i;
			hits++;
		}
	}
	return hits == 1 ? hit : -1;
}

static int
set_help_topic(struct options *o, const char *w, char *err, size_t len)
{
	size_t i;

	if (strcasecmp(w, "all") != 0 && help_category(w) < 0) {
		char list[200] = "all";

		for (i = 0; i < N_CATS; i++)
			snprintf(list + strlen(list), sizeof(list) -
			    strlen(list), ", %s", cats[i].name);
		return errf(err, len, "unknown help category '%s' (%s)", w,
		    list);
	}
	return replace_str(&o->help_topic, w);
}

/* One option's lines of --help: all of its description, or its first. */
static void
put_option(FILE *f, const struct opt *op)
{
	char left[80];
	const char *h = op->help, *nl;
	int n;

	if (op->letter != 0)
		n = snprintf(left, sizeof(left), "  -%c, --%s%s", op->letter,
		    op->name, op->arg);
	else
		n = snprintf(left, sizeof(left), "      --%s%s", op->name,
		    op->arg);
	/* The description starts in column 28, under a long name on the
	 * next line. */
	if (n > 26)
		fprintf(f, "%s\n%28s", left, "");
	else
		fprintf(f, "%-28s", left);
	for (;;) {
		nl = strchr(h, '\n');
		fprintf(f, "%.*s\n", nl != NULL ? (int)(nl - h) : (int)strlen(h),
		    h);
		if (nl == NULL)
			break;
		h = nl + 1;
		fprintf(f, "%28s", "");
	}
}

/* A category's heading, "Title (note):" or, for a note of several lines,
 * "Title:" with the note under it; then its options. */
static void
put_category(FILE *f, int c, int first)
{
	const char *note = cats[c].note;
	size_t i;

	fprintf(f, "%s%c%s", first ? "" : "\n",
	    toupper((unsigned char)cats[c].title[0]), cats[c].title + 1);
	if (note != NULL && strchr(note, '\n') == NULL)
		fprintf(f, " (%s):\n", note);
	else if (note != NULL)
		fprintf(f, ":\n%c%s.\n", toupper((unsigned char)note[0]),
		    note + 1);
	else
		fputs(":\n", f);
	for (i = 0; i < NOPTS; i++)
		if (CAT_OF(opts[i].cat) == c)
			put_option(f, &opts[i]);
}

static const char synopsis[] =
"usage: cbexec [OPTIONS] [--] COMMAND [ARG...]   run COMMAND under the breaker\n"
"       cbexec --status [--json] [CIRCUIT]        show a circuit (no lock)\n"
"       cbexec --status --all [--json]            one line per circuit\n"
"       cbexec --reset-circuit [--reason TEXT] [CIRCUIT]\n"
"       cbexec --history [--json] [--last N] [CIRCUIT]\n"
"       cbexec --trip [--create] [--reason TEXT] [CIRCUIT]  open it by hand\n"
"       cbexec --skip [--phase P | --task T] [--reason TEXT] [CIRCUIT]\n"
"       cbexec --unskip P|T [CIRCUIT]\n"
"       cbexec --record [--exit N] [--message TEXT | --stderr-file F]\n"
"              [--stdout-file F] [--progress yes|no|auto] [--task T]\n"
"              [--phase P] [--json] [CIRCUIT]   apply a run's result\n"
"       cbexec --allow-config [FILE]              approve a work tree's config\n"
"       cbexec --reset-account NAME [--reason TEXT]  clear an account's gate\n"
"       cbexec --help [all | CATEGORY] | --version\n";

static const char synopsis_short[] =
"usage: cbexec [OPTIONS] [--] COMMAND [ARG...]   run COMMAND under the breaker\n"
"       cbexec --status [--all] [--json] [CIRCUIT]  show a circuit, or every one\n"
"       cbexec --reset-circuit | --trip [--reason TEXT] [CIRCUIT]\n"
"       cbexec --history [--json] [--last N] [CIRCUIT]\n"
"       cbexec --help [all | CATEGORY] | --version\n";

/*
 * "Exit status:" and a line per row of cb_exits[] (core.h): its brief
 * line, or all its lines, each after the row's label; cbexec's own
 * statuses are named (0 is everyone's success and needs no name).
 */
static void
put_exits(FILE *f, int all)
{
	const struct cb_exit_row *r;
	const char *h, *nl;
	size_t i;

	fputs("\nExit status:\n", f);
	for (i = 0; i < CB_EXIT_ROWS; i++) {
		r = &cb_exits[i];
		if (r->label == NULL || (h = all ? r->help : r->brief) == NULL)
			continue;
		fprintf(f, "  %-9s", r->label);
		if (r->name != NULL && r->code != CB_EXIT_OK)
			fprintf(f, "%s: ", r->name);
		for (;;) {
			nl = strchr(h, '\n');
			fprintf(f, "%.*s\n", nl != NULL ? (int)(nl - h) :
			    (int)strlen(h), h);
			if (nl == NULL)
				break;
			h = nl + 1;
			fprintf(f, "%11s", "");
		}
	}
}

/* Plain --help: what most runs need, then where the rest is. */
static void
help_short(FILE *f)
{
	size_t i, col;
	int c;

	fputs(synopsis_short, f);
	fputs("\nOptions most runs need (durations: N, N.N or .N with ms, s, m, "
	    "h or d):\n", f);
	for (i = 0; i < NOPTS; i++)
		if (opts[i].cat & COMMON)
			put_option(f, &opts[i]);
	fputs("\nThe others by category (cbexec --help CATEGORY; all: every "
	    "option):\n", f);
	for (c = 0; c < N_CATS; c++) {
		col = (size_t)fprintf(f, "  %-11s %s:", cats[c].name,
		    cats[c].title);
		for (i = 0; i < NOPTS; i++) {
			if (CAT_OF(opts[i].cat) != c || (opts[i].cat & COMMON))
				continue;
			if (col + strlen(opts[i].name) + 8 > 79) {
				fputs(" ...", f);
				break;
			}
			col += (size_t)fprintf(f, " --%s", opts[i].name);
		}
		fputc('\n', f);
	}
	put_exits(f, 0);
	fputs("\nSee cbexec(1).\n", f);
}

void
cli_help(FILE *f, const char *topic)
{
	int c, only = topic != NULL && strcasecmp(topic, "all") != 0 ?
	    help_category(topic) : -1;

	if (topic == NULL) {
		help_short(f);
		return;
	}
	if (only < 0)
		fputs(synopsis, f);
	for (c = 0; c < N_CATS; c++)
		if (only < 0 || only == c)
			put_category(f, c, only >= 0);
	if (only < 0)
		put_exits(f, 1);
	fputs("\nSee cbexec(1).\n", f);
}

/* What getopt_long returned in c: apply that option of argv. */
static int
one_option(struct options *o, int c, int argc, char **argv, char *err,
    size_t len)
{
	const struct opt *op;

	if (c == '?') {
		if (optopt != 0 && optopt < 256)
			return errf(err, len, "unknown option '-%c'", optopt);
		return long_option_error(argv[optind - 1], err, len);
	}
	if (c == ':') {
		if (optopt != 0 && optopt < 256)
			return errf(err, len, "option '-%c' needs a value",
			    optopt);
		return errf(err, len, "option '%s' needs a value",
		    argv[optind - 1]);
	}
	if (c >= 256)
		op = &opts[c - 256];
	else {
		for (op = opts; op->letter != c; op++)
			;
	}
	if (op->has_arg == no_argument && optarg != NULL)
		return errf(err, len, "option --%s takes no value", op->name);
	if (op->has_arg == optional_argument && optarg == NULL &&
	    optind < argc && takes_word(op, argv[optind]))
		return errf(err, len, "option --%s takes its value after '=': "
		    "write --%s=%s (or put -- before a command named %s)",
		    op->name, op->name, argv[optind], argv[optind]);
	return apply(o, op, optarg, FROM_CLI, err, len);
}

/* The operator's CIRCUIT argument: a path, or a name. */
static int
set_circuit(struct options *o, const char *a, char *err, size_t len)
{
	const struct opt *op;
	size_t al = strlen(a);

	if (o->state_path != NULL || o->name != NULL)
		return errf(err, len, "CIRCUIT '%s' given as well as --state "
		    "or --name", a);
	if (strchr(a, '/') != NULL ||
	    (al > 5 && strcmp(a + al - 5, ".json") == 0))
		return replace_str(&o->state_path, a);
	if (!valid_name(a))
		return errf(err, len, "invalid CIRCUIT '%s' (a name of "
		    "letters, digits, '.', '_', '-', not starting with '.'; or "
		    "a path with '/' or ending in .json)", a);
	for (op = opts; op->id != O_NAME; op++)
		;
	return apply(o, op, a, FROM_CLI, err, len);
}

/*
 * argv in one pass, in order ('-': getopt_long hands each word that is
 * no option back as code 1, and never reorders argv).  In a run the first
 * such word is COMMAND and parsing stops there, so COMMAND's own options
 * are never taken as ours, whatever POSIXLY_CORRECT says; an operator
 * command takes its words (its CIRCUIT, --help's CATEGORY) wherever they
 * stand, and options after them, as GNU getopt's permutation would.
 * After "--" every word is a word.
 */
int
cli_parse(struct options *o, int argc, char **argv, char *err, size_t len)
{
	struct option lopts[NOPTS + 1];
	char shorts[3 * NOPTS + 3], *sp = shorts;
	const char *words[2];
	size_t i;
	int c, idx, n_words = 0, first_extra = -1;

	err[0] = '\0';
	/* ':': report missing arguments ourselves. */
	*sp++ = '-';
	*sp++ = ':';
	for (i = 0; i < NOPTS; i++) {
		lopts[i].name = opts[i].name;
		lopts[i].has_arg = opts[i].has_arg;
		lopts[i].flag = NULL;
		lopts[i].val = 256 + (int)i;
		if (opts[i].letter != 0) {
			*sp++ = (char)opts[i].letter;
			if (opts[i].has_arg == required_argument)
				*sp++ = ':';
		}
	}
	*sp = '\0';
	memset(&lopts[NOPTS], 0, sizeof(lopts[NOPTS]));

	opterr = 0;
	optind = 0;	/* glibc: start afresh, whatever parsed before */
	while ((c = getopt_long(argc, argv, shorts, lopts, &idx)) != -1) {
		if (c != 1) {
			if (one_option(o, c, argc, argv, err, len) == -1)
				return -1;
			continue;
		}
		if (o->mode == MODE_RUN) {
			/* COMMAND: it and all after it are the run's. */
			optind--;
			break;
		}
		if (n_words < 2)
			words[n_words] = optarg;
		if (n_words++ == 1)
			first_extra = optind - 1;
	}
	/* After "--" (or COMMAND), the rest: the run's, or more words. */
	if (o->mode != MODE_RUN)
		for (; optind < argc; optind++) {
			if (n_words < 2)
				words[n_words] = argv[optind];
			if (n_words++ == 1)
				first_extra = optind;
		}
	if (o->mode == MODE_HELP) {
		if (n_words > 1)
			return errf(err, len, "too many arguments: '%s'",
			    argv[first_extra]);
		if (n_words == 1 && o->help_topic == NULL)
			return set_help_topic(o, words[0], err, len);
		return 0;
	}
	if (o->mode == MODE_VERSION)
		return 0;
	if (check_verb_options(o, err, len) == -1)
		return -1;
	if (o->mode == MODE_RUN) {
		if (optind >= argc)
			return errf(err, len, "no COMMAND given");
		o->argv = argv + optind;
		return 0;
	}
	/* Operator commands take at most one word: CIRCUIT (or FILE). */
	if (n_words > 1)
		return errf(err, len, "too many arguments: '%s'",
		    argv[first_extra]);
	if (o->mode == MODE_ALLOW_CONFIG)
		return replace_str(&o->allow_path, n_words == 1 ? words[0] :
		    ".cbexec/config.json");
	if (o->mode == MODE_RESET_ACCOUNT && n_words > 0)
		return errf(err, len, "--reset-account takes no CIRCUIT: "
		    "'%s'", words[0]);
	if (o->all && (n_words > 0 || o->state_path != NULL ||
	    o->name != NULL))
		return errf(err, len, "--status --all lists every circuit of "
		    "the state directory: no CIRCUIT, --state or --name");
	return n_words == 1 ? set_circuit(o, words[0], err, len) : 0;
}

static const struct opt *
find_key(const char *key)
{
	char name[64];
	size_t i;

	if (strlen(key) >= sizeof(name))
		return NULL;
	for (i = 0; key[i] != '\0'; i++)
		name[i] = key[i] == '_' ? '-' : key[i];
	name[i] = '\0';
	for (i = 0; i < NOPTS; i++)
		if (strcmp(opts[i].name, name) == 0)
			return &opts[i];
	return NULL;
}

int
cli_apply(struct options *o, const char *key, const char *value,
    enum origin from, char *err, size_t len)
{
	const struct opt *op = find_key(key);

	err[0] = '\0';
	if (op == NULL)
		return 1;
	if (from == FROM_CONFIG && cli_config_refuses(key, err, len) == -1)
		return -1;
	return apply(o, op, value, from, err, len);
}

int
cli_config_refuses(const char *key, char *err, size_t len)
{
	const struct opt *op = find_key(key);

	if (op == NULL || !(op->cat & NO_CONFIG))
		return 0;
	return errf(err, len, "cannot be set in a config file (give it on "
	    "the command line)");
}

int
cli_given(const struct options *o, const char *key)
{
	const struct opt *op = find_key(key);

	return op != NULL && o->origin[op->id] > FROM_DEFAULT;
}

int
cli_is_list(const char *key)
{
	const struct opt *op = find_key(key);

	return op != NULL && op->type == OT_LIST;
}

int
cli_is_flag(const char *key)
{
	const struct opt *op = find_key(key);

	return op != NULL && op->has_arg == no_argument;
}


/* The password of each URL (scheme://user:password@host...) in s,
 * overwritten with '*' in place: the bytes the --store parser takes for
 * the password (store_url_password), so what connects is what is wiped. */
static void
wipe_url_password(char *s)
{
	size_t off, len;
	char *p, *url;

	while ((p = strstr(s, "://")) != NULL) {
		/* The URL starts at its scheme (after "--store=", say). */
		for (url = p; url > s && (isalnum((unsigned char)url[-1]) ||
		    strchr("+.-", url[-1]) != NULL); url--)
			;
		if (store_url_password(url, &off, &len))
			memset(url + off, '*', len);
		s = p + 3;
	}
}

int
cli_env(struct options *o, char *err, size_t len)
{
	static const struct { const char *env, *key; } envs[] = {
		{ "CB_NO_PROGRESS_THRESHOLD", "no-progress-threshold" },
		{ "CB_SAME_ERROR_THRESHOLD", "same-error-threshold" },
		{ "CB_HALF_OPEN_RETRIES", "half-open-after" },
		{ "CB_MAX_CONSECUTIVE_ERRORS", "max-consecutive-errors" },
		{ "CB_MAX_RETRIES", "max-retries" },
		{ "CB_COOLDOWN", "cooldown" },
		{ "CBEXEC_ACCOUNT", "account" },
		{ "CBEXEC_STORE", "store" },
		{ "CBEXEC_STORE_LEASE", "store-lease" },
		{ "CBEXEC_STORE_TIMEOUT", "store-timeout" },
		{ "CBEXEC_STORE_CA", "store-ca" },
		{ "CBEXEC_STORE_CERT", "store-cert" },
		{ "CBEXEC_STORE_KEY", "store-key" },
		{ "CBEXEC_STORE_REPLICAS", "store-replicas" },
	};
	char sub[256];
	const char *v;
	size_t i;

	/* The store's secrets are read here, then gone from the
	 * environment: the command, git, --progress-cmd and the hook never
	 * see them. */
	if ((v = getenv("CBEXEC_STORE_PASSWORD")) != NULL) {
		if (o->store_password == NULL && *v != '\0')
			options_set_password(o, v);
		explicit_bzero((char *)v, strlen(v));
		unsetenv("CBEXEC_STORE_PASSWORD");
	}
	for (i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
		if ((v = getenv(envs[i].env)) == NULL)
			continue;
		/* An empty CBEXEC_ACCOUNT is none, as CBEXEC_STATE. */
		if (*v == '\0' && strcmp(envs[i].key, "account") == 0)
			continue;
		if (cli_apply(o, envs[i].key, v, FROM_ENV, sub,
		    sizeof(sub)) != 0)
			/* A store URL is not repeated: it may hold a
			 * password. */
			return errf(err, len, "invalid environment %s%s%s%s: "
			    "%s", envs[i].env, strcmp(envs[i].env,
			    "CBEXEC_STORE") == 0 ? "" : "='", strcmp(envs[i].env,
			    "CBEXEC_STORE") == 0 ? "" : v, strcmp(envs[i].env,
			    "CBEXEC_STORE") == 0 ? "" : "'", sub);
	}
	/* /proc/PID/environ shows the block the variable came in, whatever
	 * unsetenv does: its password is overwritten there too. */
	if ((v = getenv("CBEXEC_STORE")) != NULL)
		wipe_url_password((char *)v);
	unsetenv("CBEXEC_STORE");
	return 0;
}

/* A password in a store URL among cbexec's own arguments (not the
 * command's) is overwritten where ps(1) reads it, once it was taken. */
void
cli_wipe_secrets(int argc, char **argv, char **command)
{
	int i;

	for (i = 1; i < argc && argv + i != command; i++)
		wipe_url_password(argv[i]);
}

