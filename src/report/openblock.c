/* SPDX-License-Identifier: ISC */
/*
 * The ---CIRCUIT_BREAKER_OPEN--- block (SPEC §5), printed when the circuit
 * opens: circuit and phase, the open reason, runs so far, tests passing
 * from the last run's status report (with " (no change)" when the phase's
 * last progress metric shows the same count), the last error, a
 * suggestion, the stuck analysis of the last failures (stuck.c: a header,
 * the most common error, the file most named, the task that failed most,
 * one hint; 3-5 lines whatever the history holds), every skip with when
 * and why, and the command that resets the circuit.  The same fields go
 * to the --log file as an "open" object.
 *
 * The block is printed even in quiet mode (silent mode keeps it to the
 * log) and, like every message, goes to stderr in one write.  The
 * suggestion is chosen from the outcome and the open reason: a provider's
 * limit, which passes by itself, first; an environment problem (abort, or
 * a fatal error) next, since a new approach will not fix it; then the
 * GREEN phase; then a failure that keeps repeating; else a general
 * review.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cJSON.h>

#include "core.h"
#include "report.h"
#include "say.h"

static int
starts(const char *s, const char *prefix)
{
	return s != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *
suggestion(const struct cb_state *s)
{
	/* A provider's limit passes by itself. */
	if (s->retry_at >= 0)
		return "Nothing to fix: a trial run is allowed at the retry "
		    "time, without a reset";
	/* An environment problem is not fixed by a new approach, so it
	 * comes before GREEN's advice. */
	if (starts(s->open_reason, "fatal: auth") ||
	    starts(s->open_reason, "fatal: billing"))
		return "Fix the provider account (API key, login, credit), "
		    "then reset";
	if (s->outcome == OUT_ABORT || starts(s->open_reason, "fatal:"))
		return "Fix the environment (permissions, missing command or "
		    "dependency), then reset";
	if (s->phase != NULL && strcasecmp(s->phase, "GREEN") == 0)
		return "Consider refactoring approach or splitting the feature";
	if (s->outcome == OUT_STUCK || starts(s->open_reason, "Same error") ||
	    starts(s->open_reason, "Task "))
		return "The same failure keeps repeating: change the approach "
		    "or fix the cause, then reset";
	return "Review the last error and recent changes, then reset or "
	    "give guidance";
}

/* Integers as integers, anything else as %g. */
static void
put_num(FILE *f, double v)
{
	if (v == (double)(long long)v && v > -1e15 && v < 1e15)
		fprintf(f, "%lld", (long long)v);
	else
		fprintf(f, "%g", v);
}

/* The analysis lines; none when the history holds no failure. */
static void
put_analysis(FILE *m, const struct stuck_analysis *a)
{
	if (a->failures == 1)
		fprintf(m, "ANALYSIS: the last failure (run %ld)\n",
		    a->last_run);
	else
		fprintf(m, "ANALYSIS: the last %d failures (runs %ld-%ld)\n",
		    a->failures, a->first_run, a->last_run);
	fprintf(m, "MOST_COMMON_ERROR: %dx ", a->error_count);
	text_put(m, a->error);
	fputc('\n', m);
	if (a->file[0] != '\0') {
		fputs("MOST_NAMED_FILE: ", m);
		text_put(m, a->file);
		fprintf(m, " (in %d of %d)\n", a->file_count, a->failures);
	}
	if (a->task[0] != '\0') {
		fputs("MOST_FAILED_TASK: ", m);
		text_put(m, a->task);
		fprintf(m, " (%d of %d)\n", a->task_count, a->failures);
	}
	fputs("HINT: ", m);
	text_put(m, a->hint);
	fputc('\n', m);
}

/* "phase GREEN at 2026-...Z by alice: why" */
static void
put_skip(FILE *m, const struct cb_skip *k)
{
	char at[40];

	fprintf(m, "%s ", skip_kind_name(k->kind));
	text_put(m, k->name);
	if (k->at >= 0)
		fprintf(m, " at %s", iso8601(k->at, at, sizeof(at)));
	if (k->user != NULL) {
		fputs(" by ", m);
		text_put(m, k->user);
	}
	if (k->reason != NULL) {
		fputs(": ", m);
		text_put(m, k->reason);
	}
}

static void
log_analysis(cJSON *o, const struct stuck_analysis *a)
{
	cJSON *j = cJSON_AddObjectToObject(o, "analysis");

	if (j == NULL)
		return;
	cJSON_AddNumberToObject(j, "failures", a->failures);
	cJSON_AddNumberToObject(j, "first_run", a->first_run);
	cJSON_AddNumberToObject(j, "last_run", a->last_run);
	add_str(j, "most_common_error", a->error);
	cJSON_AddNumberToObject(j, "error_count", a->error_count);
	add_str(j, "most_named_file", a->file[0] ? a->file : NULL);
	cJSON_AddNumberToObject(j, "file_count", a->file_count);
	add_str(j, "most_failed_task", a->task[0] ? a->task : NULL);
	cJSON_AddNumberToObject(j, "task_count", a->task_count);
	add_str(j, "hint", a->hint);
}

static void
log_skips(cJSON *o, const struct cb_state *s)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "skipped"), *k;
	char at[40];
	size_t i;

	for (i = 0; arr != NULL && i < s->n_skips; i++) {
		if ((k = cJSON_CreateObject()) == NULL)
			return;
		cJSON_AddStringToObject(k, "kind",
		    skip_kind_name(s->skips[i].kind));
		add_str(k, "name", s->skips[i].name);
		add_str(k, "at", s->skips[i].at >= 0 ?
		    iso8601(s->skips[i].at, at, sizeof(at)) : NULL);
		add_str(k, "reason", s->skips[i].reason);
		add_str(k, "user", s->skips[i].user);
		cJSON_AddItemToArray(arr, k);
	}
}

void
report_open_block(struct reporter *r, const struct cb_state *s,
    const struct status_report *st, const char *reset_hint)
{
	const char *phase = s->phase != NULL ? s->phase : "none";
	const char *lasterr = s->last_error.message != NULL &&
	    s->last_error.message[0] != '\0' ? s->last_error.message : NULL;
	const char *red = r->color ? RED : "", *off = r->color ? NOCOLOR : "";
	double pass = 0, fail = 0;
	int has_pass = st != NULL && status_metric(st, "tests_passing", &pass);
	int has_fail = has_pass && status_metric(st, "tests_failing", &fail);
	struct stuck_analysis a;
	int analysed = stuck_analyse(s, &a);
	char *p = NULL, when[80];
	size_t n = 0, i;
	cJSON *o, *last;
	FILE *m;

	if (r->verbosity <= -2)
		goto log;
	if ((m = open_memstream(&p, &n)) == NULL)
		return;
	line_start(m, STDERR_FILENO);
	fprintf(m, "%s---CIRCUIT_BREAKER_OPEN---%s\n", red, off);
	/* The circuit's, the command's and the operator's words, each
	 * escaped: every field stays on its line. */
	fputs("CIRCUIT: ", m);
	text_put(m, label_of(r));
	fputs("   PHASE: ", m);
	text_put(m, phase);
	fputs("\nREASON: ", m);
	text_put(m, s->open_reason != NULL ? s->open_reason : "unknown");
	fputc('\n', m);
	if (s->retry_at >= 0)
		fprintf(m, "RETRY_AT: %s\n", retry_in(s->retry_at, wall_now(),
		    when, sizeof(when)));
	fprintf(m, "ITERATIONS: %ld\n", s->iteration);
	if (has_pass) {
		fputs("TESTS_PASSING: ", m);
		put_num(m, pass);
		if (has_fail) {
			fputc('/', m);
			put_num(m, pass + fail);
		}
		last = s->phase != NULL && s->last_progress_metric != NULL ?
		    cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(s->last_progress_metric,
		    s->phase), "tests_passing") : NULL;
		if (cJSON_IsNumber(last) && last->valuedouble == pass)
			fputs(" (no change)", m);
		fputc('\n', m);
	}
	if (lasterr != NULL) {
		fputs("LAST_ERROR: ", m);
		text_put(m, lasterr);
		fputc('\n', m);
	}
	fprintf(m, "SUGGESTION: %s\n", suggestion(s));
	if (analysed)
		put_analysis(m, &a);
	for (i = 0; i < s->n_skips; i++) {
		fputs("SKIPPED: ", m);
		put_skip(m, &s->skips[i]);
		fputc('\n', m);
	}
	if (reset_hint != NULL) {
		fputs("RESET: ", m);
		text_put(m, reset_hint);
		fputc('\n', m);
	}
	fprintf(m, "%s---END_CIRCUIT_BREAKER_OPEN---%s\n", red, off);
	if (fclose(m) == 0) {
		fflush(stderr);
		write_all(STDERR_FILENO, p, n);
	}
	free(p);
log:
	if ((o = log_new(r, "open")) == NULL)
		return;
	add_str(o, "reason", s->open_reason);
	if (s->retry_at >= 0)
		add_str(o, "retry_at", iso8601(s->retry_at, when, sizeof(when)));
	cJSON_AddNumberToObject(o, "iteration", s->iteration);
	add_str(o, "phase", s->phase);
	if (has_pass) {
		cJSON_AddNumberToObject(o, "tests_passing", pass);
		if (has_fail)
			cJSON_AddNumberToObject(o, "tests_total", pass + fail);
	}
	add_str(o, "last_error", lasterr);
	add_str(o, "suggestion", suggestion(s));
	if (analysed)
		log_analysis(o, &a);
	log_skips(o, s);
	add_str(o, "reset", reset_hint);
	log_put(r, o);
}
