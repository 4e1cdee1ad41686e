/* SPDX-License-Identifier: ISC */
/*
 * The ---CIRCUIT_BREAKER_OPEN--- block (SPEC §5), printed when the circuit
 * opens: circuit and phase, the open reason, runs so far, tests passing
 * from the last run's status report (with " (no change)" when the phase's
 * last progress metric shows the same count), the last error, a
 * suggestion and the command that resets the circuit.  The same fields go
 * to the --log file as an "open" object.
 *
 * The block is printed even in quiet mode and, like every message, goes
 * to stderr in one write.  The suggestion is chosen from the outcome and
 * the open reason: an environment problem (abort, or a fatal error) first,
 * since a new approach will not fix it; then the GREEN phase; then a
 * failure that keeps repeating; else a general review.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cJSON.h>

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
	/* An environment problem is not fixed by a new approach, so it
	 * comes before GREEN's advice. */
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
	char *p = NULL;
	size_t n = 0;
	cJSON *o, *last;
	FILE *m;

	if ((m = open_memstream(&p, &n)) == NULL)
		return;
	fprintf(m, "%s---CIRCUIT_BREAKER_OPEN---%s\n", red, off);
	fprintf(m, "CIRCUIT: %s   PHASE: %s\n", label_of(r), phase);
	fprintf(m, "REASON: %s\n", s->open_reason != NULL ? s->open_reason :
	    "unknown");
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
	if (lasterr != NULL)
		fprintf(m, "LAST_ERROR: %s\n", lasterr);
	fprintf(m, "SUGGESTION: %s\n", suggestion(s));
	if (reset_hint != NULL)
		fprintf(m, "RESET: %s\n", reset_hint);
	fprintf(m, "%s---END_CIRCUIT_BREAKER_OPEN---%s\n", red, off);
	if (fclose(m) == 0) {
		fflush(stderr);
		write_all(STDERR_FILENO, p, n);
	}
	free(p);

	if ((o = log_new(r, "open")) == NULL)
		return;
	add_str(o, "reason", s->open_reason);
	cJSON_AddNumberToObject(o, "iterations", s->iteration);
	add_str(o, "phase", s->phase);
	if (has_pass) {
		cJSON_AddNumberToObject(o, "tests_passing", pass);
		if (has_fail)
			cJSON_AddNumberToObject(o, "tests_total", pass + fail);
	}
	add_str(o, "last_error", lasterr);
	add_str(o, "suggestion", suggestion(s));
	add_str(o, "reset", reset_hint);
	log_put(r, o);
}
