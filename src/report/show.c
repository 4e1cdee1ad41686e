/* SPDX-License-Identifier: ISC */
/*
 * --status and --history (SPEC §5): a circuit's state as a person reads
 * it, or as JSON for scripts (the state file's own object for --status,
 * an array of events for --history).
 *
 * --status is a two-column table; "since" is opened_at for an OPEN
 * circuit, else the time of the last state_change event into the current
 * state.  The reason row (open_reason when OPEN, else that change's
 * reason) is left out for a CLOSED circuit.  Every skip gets a row with
 * when, who and why, and the task an OPEN circuit is stuck on one too.
 * --history prints one line per event, oldest first.  On a terminal a
 * one-line timeline comes first: a mark per run, error and state change,
 * coloured by the state the circuit was in at that point (the state before
 * the window is taken from the first change's "from"); NO_COLOR turns the
 * colour off.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core.h"
#include "report.h"
#include "say.h"
#include "store.h"

/* The last transition into state c, or NULL. */
static const struct cb_event *
last_change_to(const struct cb_state *s, int c)
{
	size_t i;

	for (i = s->n_history; i-- > 0; )
		if (s->history[i].kind == EV_STATE_CHANGE &&
		    s->history[i].to == c)
			return &s->history[i];
	return NULL;
}

/* "key: text" with the text escaped. */
#define ROWT(f, key, text) do {						\
	fprintf((f), "%-19s ", (key));					\
	text_put((f), (text));						\
	fputc('\n', (f));						\
} while (0)

/* One row per skip (SPEC §9): "phase GREEN  (at ... by alice: why)". */
static void
put_skips(FILE *f, const struct cb_state *s)
{
	const struct cb_skip *k;
	char ts[40];
	size_t i;

	if (s->stuck_task != NULL) {
		fprintf(f, "%-19s ", "stuck on task:");
		text_put(f, s->stuck_task);
		fputc('\n', f);
	}
	for (i = 0; i < s->n_skips; i++) {
		k = &s->skips[i];
		fprintf(f, "%-19s %s ", i == 0 ? "skipped:" : "",
		    skip_kind_name(k->kind));
		text_put(f, k->name);
		if (k->at >= 0 || k->user != NULL || k->reason != NULL) {
			fputs("  (", f);
			if (k->at >= 0)
				fprintf(f, "at %s", iso8601(k->at, ts,
				    sizeof(ts)));
			if (k->user != NULL) {
				fputs(k->at >= 0 ? " by " : "by ", f);
				text_put(f, k->user);
			}
			if (k->reason != NULL) {
				fputs(k->at >= 0 || k->user != NULL ? ": " :
				    "", f);
				text_put(f, k->reason);
			}
			fputc(')', f);
		}
		fputc('\n', f);
	}
}

#define ROW(f, key, ...) do {						\
	fprintf((f), "%-19s ", (key));					\
	fprintf((f), __VA_ARGS__);					\
	fputc('\n', (f));						\
} while (0)

void
report_status(FILE *f, const struct cb_state *s, const char *label,
    const char *reset_hint, int json)
{
	const struct cb_event *e = last_change_to(s, s->state);
	const char *reason = s->open_reason;
	double since = s->state == CB_OPEN && s->opened_at >= 0 ?
	    s->opened_at : e != NULL ? e->ts : -1;
	char ts[40];

	if (json) {
		char *p = state_text(s);

		if (p != NULL)
			fputs(p, f);
		free(p);
		return;
	}
	if (label == NULL)
		label = s->name != NULL ? s->name : "(default)";
	ROWT(f, "circuit:", label);
	if (since >= 0)
		ROW(f, "state:", "%s  (since %s)", circuit_name(s->state),
		    iso8601(since, ts, sizeof(ts)));
	else
		ROW(f, "state:", "%s", circuit_name(s->state));
	if (s->state != CB_OPEN && e != NULL)
		reason = e->reason;
	if (s->state != CB_CLOSED && reason != NULL)
		ROWT(f, "reason:", reason);
	if (s->phase != NULL)
		ROWT(f, "phase:", s->phase);
	if (s->last_progress_iteration > 0)
		ROW(f, "runs since progress:",
		    "%ld   (last progress at run %ld)",
		    s->iteration - s->last_progress_iteration,
		    s->last_progress_iteration);
	else if (s->iteration > 0)
		ROW(f, "runs since progress:", "%ld   (no progress yet)",
		    s->iteration);
	ROW(f, "current run:", "%ld", s->iteration);
	ROW(f, "counters:", "no-progress %d, same-error %d, consecutive "
	    "errors %d, same-task %d", s->no_progress_count,
	    s->same_error_count, s->consecutive_errors, s->same_task_failures);
	ROW(f, "total opens:", "%ld", s->total_opens);
	if (s->last_error.message != NULL && s->last_error.message[0] != '\0') {
		fprintf(f, "%-19s ", "last error:");
		text_put(f, s->last_error.cls);
		fputc(' ', f);
		text_put(f, s->last_error.type);
		fputs(": ", f);
		text_put(f, s->last_error.message);
		fprintf(f, " (exit %d)\n", s->last_error.exit_code);
	}
	if (s->guidance != NULL)
		ROWT(f, "guidance:", s->guidance);
	put_skips(f, s);
	if (s->updated_at >= 0)
		ROW(f, "updated:", "%s",
		    iso8601(s->updated_at, ts, sizeof(ts)));
	if (s->state != CB_CLOSED && reset_hint != NULL)
		ROW(f, "reset:", "%s", reset_hint);
}

static char
timeline_mark(const struct cb_event *e)
{
	switch (e->kind) {
	case EV_PROGRESS:
		return e->progress > 0 ? '.' : '-';
	case EV_ERROR:
		return strcmp(e->cls, "timeout") == 0 ? 'T' :
		    strcmp(e->cls, "transient") == 0 ? '~' :
		    strcmp(e->cls, "fatal") == 0 ? 'F' : 'E';
	case EV_STATE_CHANGE:
		return e->to == CB_OPEN ? '|' : e->to == CB_HALF_OPEN ? '/' :
		    e->to == CB_CLOSED ? '+' : 0;
	default:
		return 0;
	}
}

static void
timeline(FILE *f, const struct cb_state *s, size_t start)
{
	const char *nc = getenv("NO_COLOR"), *cur = NULL, *want;
	int color = nc == NULL || nc[0] == '\0';
	int state = s->state;
	size_t i;
	char c;

	/* The state before the window is where its first change came from. */
	for (i = start; i < s->n_history; i++)
		if (s->history[i].kind == EV_STATE_CHANGE &&
		    s->history[i].from >= 0) {
			state = s->history[i].from;
			break;
		}
	fputs("timeline: ", f);
	for (i = start; i < s->n_history; i++) {
		const struct cb_event *e = &s->history[i];

		if (e->kind == EV_STATE_CHANGE && e->to >= 0)
			state = e->to;
		if ((c = timeline_mark(e)) == 0)
			continue;
		want = circuit_color(state);
		if (color && want != cur)
			fputs(cur = want, f);
		fputc(c, f);
	}
	if (color && cur != NULL)
		fputs(NOCOLOR, f);
	fputs("\nlegend:   . progress  - no progress  E error  T timeout  "
	    "~ transient  F fatal  / half-open  | open  + closed\n", f);
}

static void
history_line(FILE *f, const struct cb_event *e)
{
	char ts[40];

	fprintf(f, "%s  run %ld  %s", iso8601(e->ts, ts, sizeof(ts)),
	    e->iteration, event_kind_name(e->kind));
	switch (e->kind) {
	case EV_STATE_CHANGE:
		fprintf(f, "  %s -> %s", circuit_name(e->from),
		    circuit_name(e->to));
		break;
	case EV_ERROR:
		fputs("  ", f);
		text_put(f, e->cls);
		fputc(' ', f);
		text_put(f, e->type);
		if (e->exit_code >= 0)
			fprintf(f, " (exit %d)", e->exit_code);
		if (e->reason != NULL) {
			fputs(": ", f);
			text_put(f, e->reason);
		}
		break;
	case EV_PROGRESS:
		fputs("  ", f);
		if (e->exit_code >= 0)
			fprintf(f, "exit %d, ", e->exit_code);
		fputs(e->progress > 0 ? "progress" : "no progress", f);
		break;
	default:
		break;
	}
	/* A run's reason only repeats "progress" / "no progress". */
	if (e->kind != EV_ERROR && e->kind != EV_PROGRESS &&
	    e->reason != NULL && e->reason[0] != '\0') {
		fputs("  ", f);
		text_put(f, e->reason);
	}
	if (e->user != NULL && e->user[0] != '\0') {
		fputs("  by ", f);
		text_put(f, e->user);
	}
	fputc('\n', f);
}

void
report_history(FILE *f, const struct cb_state *s, long last, int json,
    int tty)
{
	size_t start = last > 0 && s->n_history > (size_t)last ?
	    s->n_history - (size_t)last : 0, i;

	if (json) {
		char *p = events_text(s->history + start, s->n_history - start);

		if (p != NULL)
			fputs(p, f);
		free(p);
		return;
	}
	if (tty && start < s->n_history)
		timeline(f, s, start);
	for (i = start; i < s->n_history; i++)
		history_line(f, &s->history[i]);
}
