/* SPDX-License-Identifier: ISC */
/*
 * The breaker's data (include/breaker.h): the names of states, outcomes,
 * events and error classes as the state file spells them, the built-in limits, a fresh
 * CLOSED circuit, freeing one, and the bounded history that every rule
 * appends to.
 */
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "breaker.h"

static const char *const circuit_names[] = { "CLOSED", "HALF_OPEN", "OPEN" };
static const char *const outcome_names[] = {
	"OK", "OPEN", "STUCK", "ABORT", "BUSY", "TIMEOUT", "ERROR", "EXIT",
	"SIGNAL", "NOEXEC", "NOTFOUND", "SKIP", "BUDGET"
};
static const char *const event_names[] = {
	"state_change", "progress", "error", "reset", "skip", "trip"
};
static const char *const class_names[] = {
	"success", "recoverable", "transient", "timeout", "fatal",
	"budget"
};
static const char *const skip_kind_names[] = { "phase", "task" };
static const char *const output_kind_names[] = { "metrics", "log" };
/* Same order as enum cb_cause; CAUSE_NONE is null in the file. */
static const char *const cause_names[] = {
	"", "no_progress", "errors", "limit"
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
static int
lookup(const char *const *names, size_t n, const char *s)
{
	size_t i;

	for (i = 0; s != NULL && i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

const char *
circuit_name(enum cb_circuit c)
{
	return (unsigned)c < NELEM(circuit_names) ? circuit_names[c] : "?";
}

int
circuit_from_name(const char *s, enum cb_circuit *c)
{
	int i = lookup(circuit_names, NELEM(circuit_names), s);

	if (i < 0)
		return -1;
	*c = (enum cb_circuit)i;
	return 0;
}

const char *
outcome_name(enum cb_outcome o)
{
	return (unsigned)o < NELEM(outcome_names) ? outcome_names[o] : "?";
}

int
outcome_from_name(const char *s, enum cb_outcome *o)
{
	int i = lookup(outcome_names, NELEM(outcome_names), s);

	if (i < 0)
		return -1;
	*o = (enum cb_outcome)i;
	return 0;
}

const char *
class_name(enum cb_class c)
{
	return (unsigned)c < NELEM(class_names) ? class_names[c] : "?";
}

int
class_from_name(const char *s, enum cb_class *c)
{
	int i = lookup(class_names, NELEM(class_names), s);

	if (i < 0)
		return -1;
	*c = (enum cb_class)i;
	return 0;
}

const char *
event_kind_name(enum cb_event_kind k)
{
	return (unsigned)k < NELEM(event_names) ? event_names[k] : "?";
}

const char *
event_name(const struct cb_event *e)
{
	return e->kind == EV_OTHER ? e->other : event_kind_name(e->kind);
}

int
event_kind_from_name(const char *s, enum cb_event_kind *k)
{
	int i = lookup(event_names, NELEM(event_names), s);

	if (i < 0)
		return -1;
	*k = (enum cb_event_kind)i;
	return 0;
}

const char *
cause_name(enum cb_cause c)
{
	return c != CAUSE_NONE && (unsigned)c < NELEM(cause_names) ?
	    cause_names[c] : NULL;
}

int
cause_from_name(const char *s, enum cb_cause *c)
{
	int i = lookup(cause_names, NELEM(cause_names), s);

	if (i <= 0)
		return -1;
	*c = (enum cb_cause)i;
	return 0;
}

const char *
skip_kind_name(enum cb_skip_kind k)
{
	return (unsigned)k < NELEM(skip_kind_names) ? skip_kind_names[k] : "?";
}

int
skip_kind_from_name(const char *s, enum cb_skip_kind *k)
{
	int i = lookup(skip_kind_names, NELEM(skip_kind_names), s);

	if (i < 0)
		return -1;
	*k = (enum cb_skip_kind)i;
	return 0;
}

const char *
output_kind_name(enum cb_output_kind k)
{
	return (unsigned)k < NELEM(output_kind_names) ?
	    output_kind_names[k] : "?";
}

int
output_kind_from_name(const char *s, enum cb_output_kind *k)
{
	int i = lookup(output_kind_names, NELEM(output_kind_names), s);

	if (i < 0)
		return -1;
	*k = (enum cb_output_kind)i;
	return 0;
}

void
breaker_default_limits(struct cb_limits *l)
{
	l->no_progress = 3;
	l->same_error = 5;
	l->half_open_after = 2;
	l->max_consecutive_errors = 5;
	l->max_retries = 3;
	l->half_open_trials = 1;
	l->cooldown = 0;
	l->history_size = 100;
}

int
breaker_init(struct cb_state *s, const char *name)
{
	memset(s, 0, sizeof(*s));
	s->version = 1;
	s->state = CB_CLOSED;
	s->opened_at = -1;
	s->updated_at = -1;
	s->last_run_at = -1;
	s->last_success_at = -1;
	s->last_run_seconds = -1;
	s->retry_at = -1;
	s->outcome = OUT_OK;
	s->spent.cost_usd = s->last_usage.cost_usd = -1;
	s->spent.input_tokens = s->spent.output_tokens = -1;
	s->spent.cache_tokens = s->spent.turns = -1;
	s->last_usage.input_tokens = s->last_usage.output_tokens = -1;
	s->last_usage.cache_tokens = s->last_usage.turns = -1;
	if (name != NULL && (s->name = strdup(name)) == NULL)
		return -1;
	return 0;
}

void
event_free(struct cb_event *e)
{
	free(e->reason);
	free(e->user);
	free(e->task);
	free(e->unknown);
}

void
output_free(struct cb_output *o)
{
	free(o->host);
	free(o->path);
	free(o->circuit);
	free(o->store);
	free(o->account);
	memset(o, 0, sizeof(*o));
}

void
breaker_free(struct cb_state *s)
{
	size_t i;

	free(s->name);
	free(s->phase);
	free(s->last_failed_task);
	cJSON_Delete(s->last_progress_metric);
	free(s->last_fingerprint);
	free(s->last_error_hash);
	free(s->last_error.message);
	free(s->open_reason);
	free(s->guidance);
	free(s->stuck_task);
	free(s->session_id);
	free(s->account);
	free(s->unknown);
	for (i = 0; i < s->n_skips; i++) {
		free(s->skips[i].name);
		free(s->skips[i].reason);
		free(s->skips[i].user);
	}
	free(s->skips);
	for (i = 0; i < s->n_outputs; i++)
		output_free(&s->outputs[i]);
	free(s->outputs);
	for (i = 0; i < s->n_history; i++)
		event_free(&s->history[i]);
	free(s->history);
	memset(s, 0, sizeof(*s));
}

static char *
dup_or_null(const char *p)
{
	return p != NULL ? strdup(p) : NULL;
}

void
breaker_add_event(struct cb_state *s, int max, const struct cb_event *e)
{
	struct cb_event *h, copy = *e;

	if (max <= 0)
		return;
	copy.reason = dup_or_null(e->reason);
	copy.user = dup_or_null(e->user);
	copy.task = dup_or_null(e->task);
	copy.unknown = dup_or_null(e->unknown);
	/* Drop the oldest first, so the array never grows past max; all at
	 * once, as a loaded file may hold far more than max. */
	if (s->n_history >= (size_t)max) {
		size_t drop = s->n_history - (size_t)max + 1, i;

		for (i = 0; i < drop; i++)
			event_free(&s->history[i]);
		memmove(&s->history[0], &s->history[drop],
		    (s->n_history - drop) * sizeof(*s->history));
		s->n_history -= drop;
	}
	h = realloc(s->history, (s->n_history + 1) * sizeof(*h));
	if (h == NULL) {
		/* History is advisory; losing one entry beats failing. */
		event_free(&copy);
		return;
	}
	s->history = h;
	s->history[s->n_history++] = copy;
}

/* The counters as they were, for hooks; no pointers that record() may
 * free survive in the copy. */
void
breaker_snapshot(const struct cb_state *s, struct cb_state *b)
{
	*b = *s;
	b->phase = b->last_failed_task = b->last_fingerprint = NULL;
	b->last_error_hash = b->open_reason = b->guidance = NULL;
	b->session_id = b->account = NULL;
	b->last_error.message = NULL;
	b->last_progress_metric = NULL;
	b->stuck_task = NULL;
	b->skips = NULL;
	b->n_skips = 0;
	b->outputs = NULL;
	b->n_outputs = 0;
	b->history = NULL;
	b->n_history = 0;
	b->unknown = NULL;
}
