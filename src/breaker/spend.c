/* SPDX-License-Identifier: ISC */
/*
 * Spend (SPEC §9): what an agent's runs used, added up over the circuit's
 * lifetime, and the ledger the rolling windows of --max-cost USD/D and
 * --max-tokens N/D are summed over.  Pure, as the rest of the breaker.
 *
 * The ledger never grows with the number of runs: a run's spending goes
 * into the newest bucket while that bucket is younger than keep /
 * CB_LEDGER_MAX seconds, buckets older than keep go, and when all
 * CB_LEDGER_MAX are still in use the two oldest become one.  A bucket
 * counts as spent at its end (to), so a window sums a little more than
 * exactly, never less, and frees up when the end of a bucket leaves it.
 */
#include <string.h>

#include "breaker.h"

/* *total += v, saturating; v < 0 (not reported) adds nothing. */
static void
add_long(long *total, long v)
{
	if (v < 0)
		return;
	if (*total < 0)
		*total = 0;
	*total = v > CB_LONG_MAX - *total ? CB_LONG_MAX : *total + v;
}

/* *total += v for a cost, saturating at CB_COST_MAX. */
static void
add_cost(double *total, double v)
{
	if (!(v >= 0))
		return;
	if (*total < 0)
		*total = 0;
	*total = v > CB_COST_MAX - *total ? CB_COST_MAX : *total + v;
}

/* A figure as the state may hold it: -1 (not reported) unless >= 0,
 * at most max. */
static double
held(double v, double max)
{
	return !(v >= 0) ? -1 : v > max ? max : v;
}

static long
tokens_of(const struct cb_usage *u)
{
	long n = -1;

	add_long(&n, u->input_tokens);
	add_long(&n, u->output_tokens);
	add_long(&n, u->cache_tokens);
	return n;
}

void
breaker_spend(struct cb_state *s, const char *agent,
    const struct cb_usage *u, double now, double keep)
{
	struct cb_ledger_entry *e;
	long tokens = tokens_of(u);
	size_t i, k;

	for (i = 0; agent != NULL && agent[i] != '\0' &&
	    i < sizeof(s->spend_agent) - 1; i++)
		s->spend_agent[i] = agent[i];
	s->spend_agent[i] = '\0';
	/* the writer never holds what the loader would refuse */
	s->last_usage.cost_usd = held(u->cost_usd, CB_COST_MAX);
	s->last_usage.input_tokens = (long)held(u->input_tokens, CB_LONG_MAX);
	s->last_usage.output_tokens = (long)held(u->output_tokens,
	    CB_LONG_MAX);
	s->last_usage.cache_tokens = (long)held(u->cache_tokens, CB_LONG_MAX);
	s->last_usage.turns = (long)held(u->turns, CB_LONG_MAX);
	add_cost(&s->spent.cost_usd, u->cost_usd);
	add_long(&s->spent.input_tokens, u->input_tokens);
	add_long(&s->spent.output_tokens, u->output_tokens);
	add_long(&s->spent.cache_tokens, u->cache_tokens);
	add_long(&s->spent.turns, u->turns);

	/* what no window looks at any more */
	for (i = k = 0; i < s->n_ledger; i++)
		if (keep > 0 && s->ledger[i].to > now - keep)
			s->ledger[k++] = s->ledger[i];
	s->n_ledger = k;
	if (keep <= 0 || (u->cost_usd <= 0 && tokens <= 0))
		return;
	e = s->n_ledger > 0 ? &s->ledger[s->n_ledger - 1] : NULL;
	if (e == NULL || now - e->from >= keep / CB_LEDGER_MAX ||
	    now < e->to) {
		if (s->n_ledger == CB_LEDGER_MAX) {
			s->ledger[1].from = s->ledger[0].from;
			add_cost(&s->ledger[1].cost_usd, s->ledger[0].cost_usd);
			add_long(&s->ledger[1].tokens, s->ledger[0].tokens);
			memmove(s->ledger, s->ledger + 1, (CB_LEDGER_MAX - 1) *
			    sizeof(*s->ledger));
			s->n_ledger--;
		}
		e = &s->ledger[s->n_ledger++];
		memset(e, 0, sizeof(*e));
		e->from = now;
	}
	e->to = now;
	if (u->cost_usd > 0)
		add_cost(&e->cost_usd, u->cost_usd);
	add_long(&e->tokens, tokens > 0 ? tokens : 0);
}

double
breaker_window(const struct cb_state *s, double now, double span,
    int tokens, double limit, double *frees_at)
{
	double sum = 0, left;
	size_t i;

	for (i = 0; i < s->n_ledger; i++)
		if (s->ledger[i].to > now - span)
			sum += tokens ? (double)s->ledger[i].tokens :
			    s->ledger[i].cost_usd;
	*frees_at = now;
	left = sum;
	/* oldest first: the window frees up as each bucket leaves it */
	for (i = 0; i < s->n_ledger && left >= limit; i++) {
		if (s->ledger[i].to <= now - span)
			continue;
		left -= tokens ? (double)s->ledger[i].tokens :
		    s->ledger[i].cost_usd;
		*frees_at = s->ledger[i].to + span;
	}
	return sum;
}
