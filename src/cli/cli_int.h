/*
 * Private to the option code (cli.c, setopt.c): the rows of the option
 * table and the function that validates and stores one option's value.
 */
#ifndef CBEXEC_CLI_INT_H
#define CBEXEC_CLI_INT_H

#include <stddef.h>

#include "cli.h"

enum opt_id {
	O_STATE, O_NAME, O_CHDIR, O_FOLLOW, O_STATUS, O_RESET, O_HISTORY,
	O_TRIP, O_JSON, O_LAST, O_REASON, O_HELP, O_VERSION, O_PHASE,
	O_TIMEOUT, O_KILL_AFTER, O_SIGNAL, O_BUDGET, O_ITERATIONS, O_LOOP,
	O_UNTIL_SUCCESS, O_DELAY, O_TASK, O_BACKOFF, O_CONFIG, O_NO_PROMPT,
	O_QUIET, O_VERBOSE, O_LOG, O_METRICS, O_WAIT_LOCK, O_ON_CHANGE,
	O_OK_CODES, O_IGNORE_CODES, O_NO_PROGRESS, O_SAME_ERROR,
	O_HALF_OPEN_AFTER, O_MAX_CONSEC, O_MAX_RETRIES, O_COOLDOWN,
	O_HALF_OPEN_TRIALS, O_HISTORY_SIZE, O_PROGRESS, O_PROGRESS_CMD,
	O_WATCH, O_EXCLUDE, O_CAPTURE_BYTES, O_NO_CAPTURE_STDOUT,
	O_KEEP_ORPHANS, O_EXIT_CODES, O_COUNT
};

/* Which options a config file may not set: they pick the circuit or the
 * config itself, or they are commands rather than settings. */
#define NOT_IN_CONFIG(id) ((id) <= O_VERSION || (id) == O_CONFIG)

struct opt {
	const char *name;
	int has_arg;		/* no_argument, required_argument, optional_ */
	int letter;		/* short option or 0 */
	enum opt_id id;
};

/* Validate v for op and store it in o; -1 with err set when it is bad. */
int set_option(struct options *o, const struct opt *op, const char *v,
    char *err, size_t len);

#endif
