/* SPDX-License-Identifier: ISC */
/*
 * Options (SPEC §1).  Every option is one row of opts[]: its long name, its
 * short letter, whether it takes a value, and the id set_option()
 * switches on to validate and store its value.  argv, the CB_* environment and the config file
 * all go through set_option(), so a value is validated the same way
 * wherever it comes from; o->origin[id] remembers the source so that a
 * lower-precedence source (CLI > env > config > phase > built-in) never
 * overrides a higher.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	O_QUIET, O_VERBOSE, O_LOG, O_METRICS, O_WAIT_LOCK, O_ON_CHANGE,
	O_OK_CODES, O_IGNORE_CODES, O_NO_PROGRESS, O_SAME_ERROR,
	O_HALF_OPEN_AFTER, O_MAX_CONSEC, O_MAX_RETRIES, O_COOLDOWN,
	O_HALF_OPEN_TRIALS, O_HISTORY_SIZE, O_PROGRESS, O_PROGRESS_CMD,
	O_WATCH, O_EXCLUDE, O_CAPTURE_BYTES, O_NO_CAPTURE_STDOUT,
	O_KEEP_ORPHANS, O_EXIT_CODES, O_SKIP, O_UNSKIP, O_RECORD, O_EXIT,
	O_MESSAGE, O_STDERR_FILE, O_STDOUT_FILE, O_CREATE, O_ALL, O_ALLOW_CONFIG,
	O_AGENT, O_IDLE_TIMEOUT, O_MAX_COST, O_MAX_TOKENS, O_MAX_TURNS,
	O_MAX_REPEAT_CALLS, O_ACCOUNT, O_RESET_ACCOUNT, O_STORE, O_STORE_LEASE,
	O_STORE_TIMEOUT, O_STORE_FALLBACK, O_COUNT
};
/* o->origin has a slot per option; a table that outgrows it fails to
 * compile rather than writing past it. */
_Static_assert(O_COUNT <= sizeof(((struct options *)0)->origin),
    "struct options: origin[] is smaller than the option table");

/* Which options a config file may not set: they pick the circuit or the
 * config itself, or they are commands rather than settings, or the facts
 * of one recorded run. */
#define NOT_IN_CONFIG(id) ((id) <= O_VERSION || (id) == O_CONFIG ||	\
	((id) >= O_SKIP && (id) <= O_STDOUT_FILE) || (id) == O_CREATE ||	\
	(id) == O_ALL || (id) == O_ALLOW_CONFIG || (id) == O_RESET_ACCOUNT)

struct opt {
	const char *name;
	int has_arg;		/* no_argument, required_argument, optional_ */
	int letter;		/* short option or 0 */
	enum opt_id id;
};

static const struct opt opts[] = {
	{ "state", required_argument, 0, O_STATE },
	{ "name", required_argument, 'N', O_NAME },
	{ "chdir", required_argument, 'C', O_CHDIR },
	{ "follow-symlinks", no_argument, 0, O_FOLLOW },
	{ "status", no_argument, 0, O_STATUS },
	{ "reset-circuit", no_argument, 0, O_RESET },
	{ "history", no_argument, 0, O_HISTORY },
	{ "trip", no_argument, 0, O_TRIP },
	{ "json", no_argument, 0, O_JSON },
	{ "last", required_argument, 0, O_LAST },
	{ "reason", required_argument, 0, O_REASON },
	{ "help", no_argument, 'h', O_HELP },
	{ "version", no_argument, 'V', O_VERSION },
	{ "phase", required_argument, 'p', O_PHASE },
	{ "timeout", required_argument, 't', O_TIMEOUT },
	{ "kill-after", required_argument, 'k', O_KILL_AFTER },
	{ "signal", required_argument, 's', O_SIGNAL },
	{ "budget", required_argument, 'T', O_BUDGET },
	{ "iterations", required_argument, 'n', O_ITERATIONS },
	{ "loop", no_argument, 'l', O_LOOP },
	{ "until-success", no_argument, 0, O_UNTIL_SUCCESS },
	{ "delay", required_argument, 0, O_DELAY },
	{ "task", required_argument, 0, O_TASK },
	{ "backoff", required_argument, 0, O_BACKOFF },
	{ "config", required_argument, 'c', O_CONFIG },
	{ "no-prompt", no_argument, 0, O_NO_PROMPT },
	{ "quiet", no_argument, 'q', O_QUIET },
	{ "verbose", no_argument, 'v', O_VERBOSE },
	{ "log", required_argument, 0, O_LOG },
	{ "metrics", required_argument, 0, O_METRICS },
	{ "wait-lock", optional_argument, 0, O_WAIT_LOCK },
	{ "on-state-change", required_argument, 0, O_ON_CHANGE },
	{ "ok-exit-codes", required_argument, 0, O_OK_CODES },
	{ "ignore-exit-codes", required_argument, 0, O_IGNORE_CODES },
	{ "no-progress-threshold", required_argument, 0, O_NO_PROGRESS },
	{ "same-error-threshold", required_argument, 0, O_SAME_ERROR },
	{ "half-open-after", required_argument, 0, O_HALF_OPEN_AFTER },
	{ "max-consecutive-errors", required_argument, 0, O_MAX_CONSEC },
	{ "max-retries", required_argument, 0, O_MAX_RETRIES },
	{ "cooldown", required_argument, 0, O_COOLDOWN },
	{ "half-open-trials", required_argument, 0, O_HALF_OPEN_TRIALS },
	{ "history-size", required_argument, 0, O_HISTORY_SIZE },
	{ "progress", required_argument, 0, O_PROGRESS },
	{ "progress-cmd", required_argument, 0, O_PROGRESS_CMD },
	{ "watch", required_argument, 0, O_WATCH },
	{ "exclude", required_argument, 0, O_EXCLUDE },
	{ "capture-bytes", required_argument, 0, O_CAPTURE_BYTES },
	{ "no-capture-stdout", no_argument, 0, O_NO_CAPTURE_STDOUT },
	{ "keep-orphans", no_argument, 0, O_KEEP_ORPHANS },
	{ "exit-codes", required_argument, 0, O_EXIT_CODES },
	{ "skip", no_argument, 0, O_SKIP },
	{ "unskip", required_argument, 0, O_UNSKIP },
	{ "record", no_argument, 0, O_RECORD },
	{ "exit", required_argument, 0, O_EXIT },
	{ "message", required_argument, 0, O_MESSAGE },
	{ "stderr-file", required_argument, 0, O_STDERR_FILE },
	{ "stdout-file", required_argument, 0, O_STDOUT_FILE },
	{ "create", no_argument, 0, O_CREATE },
	{ "all", no_argument, 0, O_ALL },
	{ "allow-config", no_argument, 0, O_ALLOW_CONFIG },
	{ "agent", required_argument, 0, O_AGENT },
	{ "idle-timeout", required_argument, 0, O_IDLE_TIMEOUT },
	{ "max-cost", required_argument, 0, O_MAX_COST },
	{ "max-tokens", required_argument, 0, O_MAX_TOKENS },
	{ "max-turns", required_argument, 0, O_MAX_TURNS },
	{ "max-repeat-calls", required_argument, 0, O_MAX_REPEAT_CALLS },
	{ "account", required_argument, 0, O_ACCOUNT },
	{ "reset-account", required_argument, 0, O_RESET_ACCOUNT },
	{ "store", required_argument, 0, O_STORE },
	{ "store-lease", required_argument, 0, O_STORE_LEASE },
	{ "store-timeout", required_argument, 0, O_STORE_TIMEOUT },
	{ "store-fallback", required_argument, 0, O_STORE_FALLBACK },
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static int
parse_exit_codes(struct options *o, const char *s)
{
	char *copy, *tok, *save, *eq;
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
		if (strcmp(tok, "open") == 0)
			o->exit_open = (int)v;
		else if (strcmp(tok, "stuck") == 0)
			o->exit_stuck = (int)v;
		else if (strcmp(tok, "abort") == 0)
			o->exit_abort = (int)v;
		else if (strcmp(tok, "busy") == 0)
			o->exit_busy = (int)v;
		else
			goto out;
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

static int
set_duration(double *dst, const struct opt *op, const char *v, char *err,
    size_t len)
{
	int rc;

	if ((rc = duration_parse(v, dst)) != 0)
		return duration_error(rc, v, op->name, err, len);
	return 0;
}

static int
set_count(int *dst, long min, const struct opt *op, const char *v, char *err,
    size_t len)
{
	long n;

	if (parse_long(v, min, INT_MAX, &n) == -1)
		return errf(err, len, "invalid value '%s' for --%s "
		    "(a whole number, at least %ld)", v, op->name, min);
	*dst = (int)n;
	return 0;
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

/* An account is named as a circuit is (SPEC §1's NAME). */
static int
set_account(char **dst, const struct opt *op, const char *v, char *err,
    size_t len)
{
	if (!valid_name(v))
		return errf(err, len, "invalid account name '%s' for --%s "
		    "(letters, digits, '.', '_', '-'; not starting with '.')",
		    v, op->name);
	return replace_str(dst, v);
}

/* Apply one option.  Flags ignore v (NULL from argv). */
static int
set_option(struct options *o, const struct opt *op, const char *v,
    char *err, size_t len)
{
	long n;

	switch (op->id) {
	case O_STATE:
		return replace_str(&o->state_path, v);
	case O_NAME:
		if (!valid_name(v))
			return errf(err, len, "invalid circuit name '%s' for "
			    "--name (letters, digits, '.', '_', '-'; not "
			    "starting with '.')", v);
		return replace_str(&o->name, v);
	case O_CHDIR:
		return replace_str(&o->chdir, v);
	case O_FOLLOW:
		o->follow_symlinks = 1;
		return 0;
	case O_STATUS:
	case O_RESET:
	case O_HISTORY:
	case O_TRIP:
	case O_HELP:
	case O_VERSION:
	case O_SKIP:
	case O_UNSKIP:
	case O_RECORD:
	case O_ALLOW_CONFIG:
	case O_RESET_ACCOUNT: {
		static const enum mode modes[] = {
			[O_STATUS] = MODE_STATUS, [O_RESET] = MODE_RESET,
			[O_HISTORY] = MODE_HISTORY, [O_TRIP] = MODE_TRIP,
			[O_HELP] = MODE_HELP, [O_VERSION] = MODE_VERSION,
			[O_SKIP] = MODE_SKIP, [O_UNSKIP] = MODE_UNSKIP,
			[O_RECORD] = MODE_RECORD,
			[O_ALLOW_CONFIG] = MODE_ALLOW_CONFIG,
			[O_RESET_ACCOUNT] = MODE_RESET_ACCOUNT,
		};
		/* --help and --version win over everything else. */
		if (o->mode == MODE_HELP || o->mode == MODE_VERSION)
			return 0;
		if (o->mode != MODE_RUN && op->id != O_HELP &&
		    op->id != O_VERSION && o->mode != modes[op->id])
			return errf(err, len, "--%s cannot be combined with "
			    "another operator command", op->name);
		o->mode = modes[op->id];
		if (op->id == O_UNSKIP) {
			if (*v == '\0')
				return errf(err, len, "empty name for "
				    "--unskip");
			return set_text(&o->unskip, v);
		}
		if (op->id == O_RESET_ACCOUNT)
			return set_account(&o->reset_account, op, v, err, len);
		return 0;
	}
	case O_JSON:
		o->json = 1;
		return 0;
	case O_LAST:
		if (parse_long(v, 1, LONG_MAX, &n) == -1)
			return errf(err, len, "invalid value '%s' for --last "
			    "(a whole number, at least 1)", v);
		o->last = n;
		return 0;
	case O_REASON:
		return set_text(&o->reason, v);
	case O_PHASE:
		if (*v == '\0')
			return errf(err, len, "empty phase name for --phase");
		return replace_str(&o->phase, v);
	case O_TIMEOUT:
		return set_duration(&o->timeout, op, v, err, len);
	case O_KILL_AFTER:
		return set_duration(&o->kill_after, op, v, err, len);
	case O_SIGNAL:
		if ((o->signal = signal_parse(v)) == -1)
			return errf(err, len, "invalid signal '%s' for "
			    "--signal", v);
		return 0;
	case O_BUDGET:
		return set_duration(&o->budget, op, v, err, len);
	case O_ITERATIONS:
		if (parse_long(v, 1, LONG_MAX, &n) == -1)
			return errf(err, len, "invalid value '%s' for "
			    "--iterations (a whole number, at least 1)", v);
		o->iterations = n;
		return 0;
	case O_LOOP:
		o->loop = 1;
		return 0;
	case O_UNTIL_SUCCESS:
		o->until_success = 1;
		return 0;
	case O_DELAY:
		return set_duration(&o->delay, op, v, err, len);
	case O_TASK:
		return set_text(&o->task, v);
	case O_BACKOFF:
		return set_backoff(o, op, v, err, len);
	case O_CONFIG:
		return replace_str(&o->config_path, v);
	case O_NO_PROMPT:
		o->no_prompt = 1;
		return 0;
	case O_QUIET:
		o->verbosity--;
		return 0;
	case O_VERBOSE:
		o->verbosity++;
		return 0;
	case O_LOG:
		return replace_str(&o->log_path, v);
	case O_METRICS:
		return replace_str(&o->metrics_path, v);
	case O_WAIT_LOCK: {
		int rc;

		if (v == NULL) {
			o->wait_lock = -1;
			return 0;
		}
		if ((rc = duration_parse(v, &o->wait_lock)) != 0)
			return duration_error(rc, v, op->name, err, len);
		if (o->wait_lock == 0)
			o->wait_lock = -1;	/* 0 = no limit, as elsewhere */
		return 0;
	}
	case O_ON_CHANGE:
		return replace_str(&o->on_state_change, v);
	case O_OK_CODES:
		if (parse_codes(v, &o->ok_codes) == -1)
			return errf(err, len, "invalid exit code list '%s' "
			    "for --ok-exit-codes (e.g. 0,75)", v);
		return 0;
	case O_IGNORE_CODES:
		if (parse_codes(v, &o->ignore_codes) == -1)
			return errf(err, len, "invalid exit code list '%s' "
			    "for --ignore-exit-codes (e.g. 75)", v);
		return 0;
	case O_NO_PROGRESS:
		return set_count(&o->limits.no_progress, 1, op, v, err, len);
	case O_SAME_ERROR:
		return set_count(&o->limits.same_error, 1, op, v, err, len);
	case O_HALF_OPEN_AFTER:
		return set_count(&o->limits.half_open_after, 1, op, v, err,
		    len);
	case O_MAX_CONSEC:
		return set_count(&o->limits.max_consecutive_errors, 1, op, v,
		    err, len);
	case O_MAX_RETRIES:
		return set_count(&o->limits.max_retries, 1, op, v, err, len);
	case O_COOLDOWN:
		return set_duration(&o->limits.cooldown, op, v, err, len);
	case O_HALF_OPEN_TRIALS:
		return set_count(&o->limits.half_open_trials, 1, op, v, err,
		    len);
	case O_HISTORY_SIZE:
		return set_count(&o->limits.history_size, 1, op, v, err, len);
	case O_PROGRESS:
		/* --record's own words; cli_finish() refuses them elsewhere. */
		if (strcmp(v, "yes") == 0 || strcmp(v, "no") == 0) {
			o->record_progress = v[0] == 'y';
			return 0;
		}
		o->record_progress = -1;
		return progress_parse_list(v, &o->progress, err, len);
	case O_PROGRESS_CMD:
		return replace_str(&o->progress_cmd, v);
	case O_WATCH:
		return strv_push(&o->watch, v);
	case O_EXCLUDE:
		return strv_push(&o->exclude, v);
	case O_CAPTURE_BYTES:
		if (parse_size(v, &o->capture_bytes) == -1)
			return errf(err, len, "invalid size '%s' for "
			    "--capture-bytes (bytes, or N with k or m; at "
			    "most 64m)", v);
		return 0;
	case O_NO_CAPTURE_STDOUT:
		o->no_capture_stdout = 1;
		return 0;
	case O_KEEP_ORPHANS:
		o->keep_orphans = 1;
		return 0;
	case O_EXIT_CODES:
		if (parse_exit_codes(o, v) == -1)
			return errf(err, len, "invalid value '%s' for "
			    "--exit-codes (e.g. open=90,stuck=91,abort=92,"
			    "busy=93)", v);
		return 0;
	case O_EXIT:
		if (parse_long(v, 0, 255, &n) == -1)
			return errf(err, len, "invalid exit status '%s' for "
			    "--exit (0 to 255)", v);
		o->exit_code = (int)n;
		return 0;
	case O_MESSAGE:
		return replace_str(&o->message, v);
	case O_STDERR_FILE:
		return replace_str(&o->stderr_file, v);
	case O_STDOUT_FILE:
		return replace_str(&o->stdout_file, v);
	case O_CREATE:
		o->create = 1;
		return 0;
	case O_ALL:
		o->all = 1;
		return 0;
	case O_AGENT:
		if (strcmp(v, "none") != 0 && agent_by_name(v) == NULL)
			return errf(err, len, "unknown agent '%s' for --agent "
			    "(%s or none)", v, agent_names());
		return replace_str(&o->agent, v);
	case O_IDLE_TIMEOUT:
		return set_duration(&o->idle_timeout, op, v, err, len);
	case O_MAX_COST:
	case O_MAX_TOKENS:
	case O_MAX_TURNS:
		return set_caps(o, op, v, err, len);
	case O_MAX_REPEAT_CALLS:
		return set_count(&o->max_repeat_calls, 0, op, v, err, len);
	case O_ACCOUNT:
		return set_account(&o->account, op, v, err, len);
	case O_STORE:
		if (store_url_check(v, NULL, 0, err, len) == -1)
			return -1;
		return replace_str(&o->store, v);
	case O_STORE_LEASE:
	case O_STORE_TIMEOUT: {
		double *dst = op->id == O_STORE_LEASE ? &o->store_lease :
		    &o->store_timeout;

		if (set_duration(dst, op, v, err, len) == -1)
			return -1;
		/* 0 means "no limit" elsewhere: a lease that never expires
		 * or a store waited on forever is what this must not be. */
		if (*dst <= 0)
			return errf(err, len, "--%s must be more than 0",
			    op->name);
		return 0;
	}
	case O_STORE_FALLBACK:
		if (strcmp(v, "local") != 0 && strcmp(v, "none") != 0)
			return errf(err, len, "invalid value '%s' for "
			    "--store-fallback (local or none)", v);
		o->store_fallback = v[0] == 'l';
		return 0;
	case O_COUNT:
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

/* The operator options that go with one verb only. */
static int
check_verb_options(const struct options *o, char *err, size_t len)
{
	if (o->create && o->mode != MODE_TRIP)
		return errf(err, len, "--create goes only with --trip");
	if (o->all && o->mode != MODE_STATUS)
		return errf(err, len, "--all goes only with --status");
	return 0;
}

int
cli_parse(struct options *o, int argc, char **argv, char *err, size_t len)
{
	struct option lopts[NOPTS + 1];
	char shorts[3 * NOPTS + 2], *sp = shorts;
	const struct opt *op;
	size_t i;
	int c, idx, n_cmd;

	err[0] = '\0';
	/* '+': stop at the first non-option, so COMMAND's own options are
	 * never parsed as ours; ':': report missing arguments ourselves. */
	*sp++ = '+';
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
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, lopts, &idx)) != -1) {
		if (c == '?') {
			if (optopt != 0 && optopt < 256)
				return errf(err, len, "unknown option '-%c'",
				    optopt);
			return long_option_error(argv[optind - 1], err, len);
		}
		if (c == ':') {
			if (optopt != 0 && optopt < 256)
				return errf(err, len, "option '-%c' needs a "
				    "value", optopt);
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
			return errf(err, len, "option --%s takes no value",
			    op->name);
		if (op->has_arg == optional_argument && optarg == NULL &&
		    optind < argc && takes_word(op, argv[optind]))
			return errf(err, len, "option --%s takes its value "
			    "after '=': write --%s=%s (or put -- before a "
			    "command named %s)", op->name, op->name,
			    argv[optind], argv[optind]);
		if (apply(o, op, optarg, FROM_CLI, err, len) == -1)
			return -1;
	}
	n_cmd = argc - optind;
	if (o->mode == MODE_HELP || o->mode == MODE_VERSION)
		return 0;
	if (check_verb_options(o, err, len) == -1)
		return -1;
	if (o->mode == MODE_RUN) {
		if (n_cmd == 0)
			return errf(err, len, "no COMMAND given");
		o->argv = argv + optind;
		return 0;
	}
	if (o->mode == MODE_ALLOW_CONFIG) {
		if (n_cmd > 1)
			return errf(err, len, "too many arguments: '%s'",
			    argv[optind + 1]);
		return replace_str(&o->allow_path, n_cmd == 1 ?
		    argv[optind] : ".cbexec/config.json");
	}
	if (o->mode == MODE_RESET_ACCOUNT && n_cmd > 0)
		return errf(err, len, "--reset-account takes no CIRCUIT: "
		    "'%s'", argv[optind]);
	if (o->all && (n_cmd > 0 || o->state_path != NULL ||
	    o->name != NULL))
		return errf(err, len, "--status --all lists every circuit of "
		    "the state directory: no CIRCUIT, --state or --name");
	/* Operator commands take at most one CIRCUIT: a path or a name. */
	if (n_cmd > 1)
		return errf(err, len, "too many arguments: '%s'",
		    argv[optind + 1]);
	if (n_cmd == 1) {
		const char *a = argv[optind];
		size_t al = strlen(a);

		if (o->state_path != NULL || o->name != NULL)
			return errf(err, len, "CIRCUIT '%s' given as well as "
			    "--state or --name", a);
		if (strchr(a, '/') != NULL ||
		    (al > 5 && strcmp(a + al - 5, ".json") == 0))
			return replace_str(&o->state_path, a);
		if (!valid_name(a))
			return errf(err, len, "invalid CIRCUIT '%s' (a name of "
			    "letters, digits, '.', '_', '-', not starting with "
			    "'.'; or a path with '/' or ending in .json)", a);
		for (op = opts; op->id != O_NAME; op++)
			;
		return apply(o, op, a, FROM_CLI, err, len);
	}
	return 0;
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

	if (op == NULL || !NOT_IN_CONFIG(op->id))
		return 0;
	return errf(err, len, "cannot be set in a config file (give it on "
	    "the command line)");
}

int
cli_is_list(const char *key)
{
	const struct opt *op = find_key(key);

	return op != NULL && (op->id == O_WATCH || op->id == O_EXCLUDE);
}

int
cli_is_flag(const char *key)
{
	const struct opt *op = find_key(key);

	return op != NULL && op->has_arg == no_argument;
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
	};
	char sub[256];
	const char *v;
	size_t i;

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
	return 0;
}

