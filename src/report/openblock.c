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
 * log) and, like every message, goes to stderr in one write.  Each line
 * fits 80 columns, a terminal's or a mail's: the fixed words are short
 * enough, and a line with someone's text in it (the reason, the last
 * error, a file or task name, an operator's words) is cut with an
 * ellipsis; the whole of it is in the run's log line, --status and the
 * log's "open" object.  Only RESET, a command to paste, is never cut.  The
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
		return "Nothing to fix: a trial runs at the retry time, "
		    "without a reset";
	/* An environment problem is not fixed by a new approach, so it
	 * comes before GREEN's advice. */
	if (starts(s->open_reason, "fatal: auth") ||
	    starts(s->open_reason, "fatal: billing"))
		return "Fix the provider account (API key, login, credit), "
		    "then reset";
	if (s->outcome == OUT_ABORT || starts(s->open_reason, "fatal:"))
		return "Fix the environment (permission, command, "
		    "dependency), then reset";
	if (s->phase != NULL && strcasecmp(s->phase, "GREEN") == 0)
		return "Consider refactoring approach or splitting the feature";
	if (s->outcome == OUT_STUCK || starts(s->open_reason, "Same error") ||
	    starts(s->open_reason, "Task "))
		return "The same failure repeats: change the approach or fix "
		    "it, then reset";
	return "Review the last error and recent changes; reset, or give "
	    "guidance";
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

#define BLOCK_COLUMNS	80
#define ELLIPSIS	"\u2026"

/* The byte offset of character i of s (its end when shorter). */
static size_t
char_at(const char *s, size_t i)
{
	const char *p;
	size_t k = 0;

	for (p = s; *p != '\0'; p++)
		if (((unsigned char)*p & 0xC0) != 0x80 && k++ == i)
			break;
	return (size_t)(p - s);
}

/*
 * "KEY: " and text (its control bytes escaped), then tail, on one line of
 * at most BLOCK_COLUMNS columns: the text is cut with an ellipsis when
 * the line would be longer (a character a column), at its end, or with
 * middle in its middle, keeping its last two thirds (a path's file name).
 */
static void
put_cut(FILE *m, const char *key, const char *text, const char *tail,
    int middle)
{
	char *e = text_escaped(text != NULL ? text : "");
	const char *t = e != NULL ? e : "";
	size_t used = strlen(key) + strlen(tail), n = 0, room, lead;
	const char *p;

	for (p = t; *p != '\0'; p++)
		n += ((unsigned char)*p & 0xC0) != 0x80;
	fputs(key, m);
	if (used + n <= BLOCK_COLUMNS) {
		fputs(t, m);
	} else {
		/* room characters and the ellipsis */
		room = used + 1 < BLOCK_COLUMNS ? BLOCK_COLUMNS - used - 1 : 0;
		lead = middle ? room / 3 : room;
		fprintf(m, "%.*s" ELLIPSIS "%s", (int)char_at(t, lead), t,
		    t + char_at(t, n - (room - lead)));
	}
	fputs(tail, m);
	fputc('\n', m);
	free(e);
}

static void
put_line(FILE *m, const char *key, const char *text, const char *tail)
{
	put_cut(m, key, text, tail, 0);
}

/* The analysis lines; none when the history holds no failure. */
static void
put_analysis(FILE *m, const struct stuck_analysis *a)
{
	char key[48], tail[48];

	if (a->failures == 1)
		fprintf(m, "ANALYSIS: the last failure (run %ld)\n",
		    a->last_run);
	else
		fprintf(m, "ANALYSIS: the last %d failures (runs %ld-%ld)\n",
		    a->failures, a->first_run, a->last_run);
	snprintf(key, sizeof(key), "MOST_COMMON_ERROR: %dx ", a->error_count);
	put_line(m, key, a->error, "");
	if (a->file[0] != '\0') {
		snprintf(tail, sizeof(tail), " (in %d of %d)", a->file_count,
		    a->failures);
		put_cut(m, "MOST_NAMED_FILE: ", a->file, tail, 1);
	}
	if (a->task[0] != '\0') {
		snprintf(tail, sizeof(tail), " (%d of %d)", a->task_count,
		    a->failures);
		put_line(m, "MOST_FAILED_TASK: ", a->task, tail);
	}
	put_line(m, "HINT: ", a->hint, "");
}

/* "SKIPPED: phase GREEN at 2026-...Z by alice: why" */
static void
put_skip(FILE *m, const struct cb_skip *k)
{
	char at[40], *line = NULL;
	size_t n = 0;
	FILE *l;

	/* the words as they are; put_line() escapes them */
	if ((l = open_memstream(&line, &n)) == NULL)
		return;
	fprintf(l, "%s %s", skip_kind_name(k->kind), k->name);
	if (k->at >= 0)
		fprintf(l, " at %s", iso8601(k->at, at, sizeof(at)));
	if (k->user != NULL)
		fprintf(l, " by %s", k->user);
	if (k->reason != NULL)
		fprintf(l, ": %s", k->reason);
	if (fclose(l) == 0)
		put_line(m, "SKIPPED: ", line, "");
	free(line);
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
	/* named as the state's skip records */
	cJSON *arr = cJSON_AddArrayToObject(o, "skips"), *k;
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
	 * escaped: every field stays on its line, and within 80 columns. */
	{
		char *ph = text_escaped(phase), *tail = NULL;

		if (asprintf(&tail, "   PHASE: %s", ph != NULL ? ph :
		    phase) == -1)
			tail = NULL;
		put_line(m, "CIRCUIT: ", label_of(r), tail != NULL ? tail :
		    "");
		free(tail);
		free(ph);
	}
	put_line(m, "REASON: ", s->open_reason != NULL ? s->open_reason :
	    "unknown", "");
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
	if (lasterr != NULL)
		put_line(m, "LAST_ERROR: ", lasterr, "");
	fprintf(m, "SUGGESTION: %s\n", suggestion(s));
	if (analysed)
		put_analysis(m, &a);
	for (i = 0; i < s->n_skips; i++)
		put_skip(m, &s->skips[i]);
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
