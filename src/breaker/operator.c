/*
 * What an operator does to a circuit (SPEC §4 rule 6, §5): a reset closes
 * it and clears every counter but total_opens; a trip opens it with a
 * reason no cooldown closes; Skip records the phase given up.  Like the
 * rest of the breaker these are pure functions over struct cb_state.
 */
#include <stdlib.h>
#include <string.h>

#include "breaker_int.h"

void
breaker_reset(struct cb_state *s, const struct cb_limits *l,
    const char *reason, const char *user, double now, struct cb_result *res)
{
	struct cb_event e;

	if (reason == NULL || *reason == '\0')
		reason = "reset by operator";
	res->n = 0;
	res->outcome = OUT_OK;
	brk_event_init(&e, s, EV_RESET, now, reason, user);
	if (s->state != CB_CLOSED) {
		brk_add_transition(res, s->state, CB_CLOSED, reason);
		e.from = (int)s->state;
		e.to = CB_CLOSED;
	}
	breaker_add_event(s, l->history_size, &e);

	s->state = CB_CLOSED;
	s->no_progress_count = 0;
	s->same_error_count = 0;
	s->consecutive_errors = 0;
	s->same_task_failures = 0;
	brk_set_str(&s->last_failed_task, NULL);
	brk_set_str(&s->last_error_hash, NULL);
	s->opened_at = -1;
	brk_set_str(&s->open_reason, NULL);
	s->tripped = 0;
	s->trials_left = 0;
	s->cooldown = 0;
	s->outcome = OUT_OK;
	s->updated_at = now;
}

void
breaker_trip(struct cb_state *s, const struct cb_limits *l,
    const char *reason, const char *user, double now, struct cb_result *res)
{
	struct cb_event e;
	char *why = NULL;
	const char *r = "tripped by operator";

	res->n = 0;
	res->outcome = OUT_OPEN;
	if (reason != NULL && *reason != '\0' &&
	    (why = brk_fmt("%s: %s", r, reason)) != NULL)
		r = why;
	if (s->state != CB_OPEN) {
		brk_transition(s, l, res, CB_OPEN, r, user, now);
		s->opened_at = now;
		s->total_opens++;
	} else {
		/* Already open: no new opening, but the operator's act and
		 * reason still belong in the history. */
		brk_event_init(&e, s, EV_STATE_CHANGE, now, r, user);
		e.from = e.to = CB_OPEN;
		breaker_add_event(s, l->history_size, &e);
	}
	brk_set_str(&s->open_reason, r);
	s->tripped = 1;
	s->trials_left = 0;
	s->updated_at = now;
	free(why);
}

void
breaker_skip(struct cb_state *s, const struct cb_limits *l,
    const char *phase, const char *user, double now)
{
	struct cb_event e;
	char **p, *why;
	size_t i;

	for (i = 0; phase != NULL && i < s->n_skipped; i++)
		if (strcmp(s->skipped_phases[i], phase) == 0)
			break;
	if (phase != NULL && i == s->n_skipped) {
		p = realloc(s->skipped_phases, (s->n_skipped + 1) * sizeof(*p));
		if (p != NULL) {
			s->skipped_phases = p;
			if ((p[s->n_skipped] = strdup(phase)) != NULL)
				s->n_skipped++;
		}
	}
	why = phase != NULL ? brk_fmt("skipped phase %s", phase) : NULL;
	brk_event_init(&e, s, EV_SKIP, now, why != NULL ? why : "skipped phase",
	    user);
	breaker_add_event(s, l->history_size, &e);
	free(why);
	s->updated_at = now;
}
