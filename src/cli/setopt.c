/*
 * One option's value (SPEC §1): parsed, checked and stored in struct
 * options.  The command line, the CB_* environment and the config file all
 * come through set_option(), so a value is judged the same wherever it
 * comes from.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_int.h"
#include "duration.h"
#include "optvalues.h"

/* "open=3,stuck=4": remaps of the four breaker codes. */
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

/* Apply one option.  Flags ignore v (NULL from argv). */
int
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
	case O_VERSION: {
		static const enum mode modes[] = {
			[O_STATUS] = MODE_STATUS, [O_RESET] = MODE_RESET,
			[O_HISTORY] = MODE_HISTORY, [O_TRIP] = MODE_TRIP,
			[O_HELP] = MODE_HELP, [O_VERSION] = MODE_VERSION,
		};
		/* --help and --version win over everything else. */
		if (o->mode == MODE_HELP || o->mode == MODE_VERSION)
			return 0;
		if (o->mode != MODE_RUN && op->id != O_HELP &&
		    op->id != O_VERSION && o->mode != modes[op->id])
			return errf(err, len, "--%s cannot be combined with "
			    "another operator command", op->name);
		o->mode = modes[op->id];
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
	case O_COUNT:
		break;
	}
	return errf(err, len, "internal error: option --%s", op->name);
}
