/* SPDX-License-Identifier: ISC */
/*
 * The command line (SPEC §1): one table of options shared by argv, the
 * environment and the config file (SPEC §6), so a value means the same
 * wherever it comes from and precedence is decided in one place.
 */
#ifndef CBEXEC_CLI_H
#define CBEXEC_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "breaker.h"
#include "core.h"
#include "judge.h"

enum mode { MODE_RUN, MODE_STATUS, MODE_RESET, MODE_HISTORY, MODE_TRIP,
	MODE_HELP, MODE_VERSION, MODE_SKIP, MODE_UNSKIP, MODE_RECORD,
	MODE_ALLOW_CONFIG, MODE_RESET_ACCOUNT };

/* Where a value came from; a later source only fills what is unset. */
enum origin { FROM_DEFAULT, FROM_PHASE, FROM_CONFIG, FROM_ENV, FROM_CLI };

struct codes {
	int *v;
	size_t n;
};

struct strv {
	char **v;
	size_t n;
};

struct options {
	enum mode mode;
	/* which circuit */
	char *state_path;		/* --state, CBEXEC_STATE or CIRCUIT */
	char *name;			/* --name */
	char *chdir;			/* -C */
	int follow_symlinks;
	/* operator commands */
	int json;
	long last;			/* --last N, 0 = all */
	char *reason;
	int create;			/* --trip --create: no state file yet */
	int all;			/* --status --all */
	/* running */
	char *phase;
	double timeout, kill_after, budget, delay, backoff, backoff_max;
	int signal;			/* 0: send none */
	long iterations;		/* 0: not given */
	int loop, until_success;
	char *task;
	char *config_path;
	int no_prompt;
	int verbosity;			/* 0 normal, < 0 quiet, > 0 verbose */
	char *log_path, *metrics_path;
	double wait_lock;		/* 0 fail at once, < 0 forever */
	char *on_state_change;
	char *on_run;			/* --on-run CMD */
	struct codes ok_codes, ignore_codes;
	struct cb_limits limits;
	unsigned progress;		/* PROG_* mask */
	char *progress_cmd;
	struct strv watch, exclude;
	size_t capture_bytes;
	int no_capture_stdout, keep_orphans;
	int exit_as[CB_EXIT_ROWS];	/* --exit-codes: what each row of
					 * cb_exits[] exits as */
	char *agent;			/* --agent NAME or "none"; NULL: detect */
	/* spend caps (SPEC §9), 0: none: per run, and per circuit over a
	 * rolling window of *_span seconds */
	double max_cost, max_cost_window, max_cost_span;
	long max_tokens, max_tokens_window;
	double max_tokens_span;
	long max_turns;
	int max_repeat_calls;		/* 0: off */
	double idle_timeout;		/* 0: none */
	double result_grace;		/* after an agent's final result;
					 * 0: none */
	/* from the config file */
	struct phase_def *phases;	/* custom phases */
	size_t n_phases;
	struct rule *rules;
	size_t n_rules;
	/* --skip, --unskip and --record (SPEC §9) */
	char *unskip;			/* --unskip NAME */
	int exit_code;			/* --record --exit N; -1: not given (0) */
	char *message;			/* --message TEXT: the run's stderr */
	char *stderr_file, *stdout_file;	/* their tails, read for it */
	int record_progress;		/* --progress yes / no: 1 / 0; -1 judge
					 * it as a run would */
	/* COMMAND [ARG...] */
	char **argv;
	/* --allow-config [FILE]: the file to approve */
	char *allow_path;
	/* --help [all | CATEGORY]: NULL for the short help */
	char *help_topic;
	/* --account NAME (SPEC §9): the provider account's gate */
	char *account;
	char *reset_account;		/* --reset-account NAME */
	/* the shared store (SPEC §9) */
	char *store;			/* --store URL; NULL: the file store */
	double store_lease;		/* --store-lease, seconds */
	double store_timeout;		/* --store-timeout: connect, command */
	int store_fallback;		/* --store-fallback local */
	char *store_password;		/* --store-password-file's or
					 * CBEXEC_STORE_PASSWORD; NULL: the
					 * URL's */
	char *store_ca, *store_cert, *store_key;	/* rediss://, etcds:// */
	int store_replicas;		/* --store-replicas: WAIT for N */
	/* origin of each option, by option id (see cli.c) */
	unsigned char origin[128];
};

/* Defaults of SPEC §1. */
void options_init(struct options *o);
void options_free(struct options *o);

/*
 * Parse argv.  Returns 0, or -1 with a one-line message in err (usage
 * error: exit 125).
 */
int cli_parse(struct options *o, int argc, char **argv, char *err, size_t len);

/*
 * Set the option with long name key (a config key: '_' for '-') from a
 * string value, if nothing of higher precedence set it.  Returns 0, 1 when
 * key names no option, -1 with a message for a bad value or for an option
 * a config file may not set (the circuit, the config, the commands).
 */
int cli_apply(struct options *o, const char *key, const char *value,
    enum origin from, char *err, size_t len);
/* -1 with the reason in err when key names an option a config file may
 * not set, else 0. */
int cli_config_refuses(const char *key, char *err, size_t len);
/* Whether the option named key was given (command line, environment or
 * config), not left at its default. */
int cli_given(const struct options *o, const char *key);
/* Whether the option named key may take several values (--watch). */
int cli_is_list(const char *key);
/* Whether the option is a flag that takes no value (--loop). */
int cli_is_flag(const char *key);

/* --help: the options most runs need and the categories (topic NULL),
 * every option ("all"), or one category's (a name cli_parse took). */
void cli_help(FILE *f, const char *topic);

/* The CB_* environment thresholds; -1 with a message naming the variable. */
int cli_env(struct options *o, char *err, size_t len);

/*
 * After config and env: resolve the phase (built-in or custom, exit 125 if
 * unknown), fill phase thresholds, check the combination.
 */
int cli_finish(struct options *o, char *err, size_t len);
/* Overwrite a store URL's password among argv's options (before
 * command, the COMMAND's own argv) where ps(1) shows it. */
void cli_wipe_secrets(int argc, char **argv, char **command);
/* Keep a copy of the store's password (the old one wiped). */
void options_set_password(struct options *o, const char *pw);

/* The phase definition in effect, or NULL. */
const struct phase_def *options_phase(const struct options *o);

/* Signal by name ("TERM", "SIGTERM", "term") or number; -1 if unknown. */
int signal_parse(const char *s);

/*
 * The config file (config.c): option defaults keyed by long option name,
 * custom phases and classifier rules, loaded into struct options.
 * Load path into o: each option key is applied below the CLI and the
 * environment.  Returns 0, or -1 with "FILE: ..." naming the bad key.
 * A missing file is an error only when required (given with --config).
 */
int config_load(struct options *o, const char *path, int required,
    char *err, size_t len);
/* Read a config file whole (at most 1 MiB; a regular file only, links
 * followed when follow): malloc'd text with *len bytes, or NULL with the
 * message in err and *missing set when there is no file. */
char *config_read(const char *path, int follow, size_t *len, int *missing,
    char *err, size_t errlen);
/* Load n bytes of config text read from path (named in messages). */
int config_parse(struct options *o, const char *path, const char *text,
    size_t n, char *err, size_t len);

#endif
