/* SPDX-License-Identifier: ISC */
/*
 * What watches an agent's run live (SPEC §9, §10): the per-run spend caps
 * (--max-cost, --max-tokens, --max-turns) against the running totals the
 * adapter reports, and a loop of tool calls (--max-repeat-calls).  Pure:
 * the driver feeds it from the adapter's hooks and stops the run when it
 * says so.
 *
 * A tool call's identity is its name and its input as canonical JSON
 * (keys sorted, no insignificant space), compared exactly: no number,
 * path, hash or offset is normalised away, so a Read of the next page is
 * another call.  An input cut at 4 KiB is known by the digest of all of
 * it as written.  Calls come as the client makes them, several in one
 * message included; each call's result comes later, matched to its call
 * by the client's id.  A loop is --max-repeat-calls identical calls in a
 * row whose results are identical too, or all errors: polling a log that
 * changes, or running the tests again after an edit, is not one.  In a
 * stream that shows no results (none came before the last of those
 * calls), the identical calls alone are a loop.  Only
 * the identity of the calls in a row, their count and what their results
 * had in common are kept, with a small ring of recent ids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "agent.h"

#define CALL_SHOWN	200	/* bytes of a call's input in the message */
#define DIGEST0		14695981039346656037ULL

static unsigned long long
digest(unsigned long long h, const char *p, size_t n)
{
	while (n-- > 0)
		h = (h ^ (unsigned char)*p++) * 1099511628211ULL;
	return h;
}

void
agent_watch_init(struct agent_watch *w, const struct agent_caps *caps)
{
	memset(w, 0, sizeof(*w));
	w->caps = *caps;
}

const char *
agent_stop_type(enum agent_stop s)
{
	static const char *const types[] = {
		"", "max_cost", "max_tokens", "max_turns", "loop"
	};

	return (unsigned)s < NELEM(types) ? types[s] : "";
}

enum agent_stop
agent_watch_usage(struct agent_watch *w, const struct agent_usage *u)
{
	const struct agent_caps *c = &w->caps;
	long tokens = agent_tokens(u);

	if (w->stop != AGENT_GO)
		return AGENT_GO;
	/* at the cap is still within it: crossing it is going over */
	if (c->max_cost > 0 && u->cost_usd > c->max_cost) {
		w->stop = AGENT_MAX_COST;
		snprintf(w->msg, sizeof(w->msg), "spend cap: cost %g USD "
		    "over --max-cost %g USD", u->cost_usd, c->max_cost);
	} else if (c->max_tokens > 0 && tokens > c->max_tokens) {
		w->stop = AGENT_MAX_TOKENS;
		snprintf(w->msg, sizeof(w->msg), "spend cap: %ld tokens over "
		    "--max-tokens %ld", tokens, c->max_tokens);
	} else if (c->max_turns > 0 && u->turns > c->max_turns) {
		w->stop = AGENT_MAX_TURNS;
		snprintf(w->msg, sizeof(w->msg), "spend cap: %ld turns over "
		    "--max-turns %ld", u->turns, c->max_turns);
	}
	return w->stop;
}

/* Sort an object's members by key, at every depth. */
static void
sort_keys(cJSON *j)
{
	cJSON *c, *sorted = NULL, **p, *next;

	for (c = j != NULL ? j->child : NULL; c != NULL; c = c->next)
		sort_keys(c);
	if (j == NULL || !cJSON_IsObject(j))
		return;
	/* insertion into a list kept sorted; ties keep their order */
	for (c = j->child; c != NULL; c = next) {
		next = c->next;
		for (p = &sorted; *p != NULL && strcmp((*p)->string,
		    c->string) <= 0; p = &(*p)->next)
			;
		c->next = *p;
		*p = c;
	}
	j->child = sorted;
	/* cJSON keeps the head's prev at the tail, and each prev */
	for (c = sorted; c != NULL; c = c->next) {
		if (c->next != NULL)
			c->next->prev = c;
		else if (sorted != NULL)
			sorted->prev = c;
	}
}

/* The identity of a call: its name and canonical input. */
static unsigned long long
identity(const char *name, const char *input, size_t n, int cut,
    unsigned long long whole)
{
	unsigned long long h = digest(DIGEST0, name, strlen(name) + 1);
	cJSON *j = NULL;
	char *canon;

	if (!cut && n > 0)
		j = cJSON_ParseWithLength(input, n);
	if (j != NULL) {
		sort_keys(j);
		if ((canon = cJSON_PrintUnformatted(j)) != NULL) {
			h = digest(h, canon, strlen(canon));
			free(canon);
			cJSON_Delete(j);
			return h;
		}
		cJSON_Delete(j);
	}
	/* cut, not JSON or no memory: the input as written, all of it */
	return digest(h, (const char *)&whole, sizeof(whole));
}

static unsigned long long
id_key(const char *id)
{
	return id != NULL ? digest(DIGEST0, id, strlen(id)) : 0;
}

static enum agent_stop
loop(struct agent_watch *w)
{
	w->stop = AGENT_LOOP;
	snprintf(w->msg, sizeof(w->msg), "the same tool call %d times in a "
	    "row%s: %s", w->repeats, w->results == 0 ? "" : w->same ?
	    " with the same result" : ", every one failing", w->what);
	return w->stop;
}

enum agent_stop
agent_watch_call(struct agent_watch *w, const char *id, const char *name,
    const char *input, size_t n, int cut, unsigned long long whole)
{
	unsigned long long call;
	size_t shown;

	if (w->stop != AGENT_GO || w->caps.max_repeat_calls <= 0 ||
	    name == NULL)
		return AGENT_GO;
	call = identity(name, input, n, cut, whole);
	w->recent[w->n_recent % WATCH_RECENT].id = id_key(id);
	w->recent[w->n_recent % WATCH_RECENT].call = call;
	w->n_recent++;
	if (w->repeats > 0 && call == w->call) {
		/* a stream that has shown no result yet: the calls alone */
		if (++w->repeats >= w->caps.max_repeat_calls && !w->shown)
			return loop(w);
		return AGENT_GO;
	}
	w->call = call;
	w->repeats = 1;
	w->results = 0;
	w->same = w->errors = 1;
	shown = n > CALL_SHOWN ? CALL_SHOWN : n;
	/* never cut a UTF-8 character in two */
	while (shown > 0 && shown < n &&
	    ((unsigned char)input[shown] & 0xC0) == 0x80)
		shown--;
	snprintf(w->what, sizeof(w->what), "%s %.*s%s", name, (int)shown,
	    input, shown < n || cut ? "..." : "");
	return AGENT_GO;
}

enum agent_stop
agent_watch_result(struct agent_watch *w, const char *id,
    unsigned long long result, int is_error)
{
	unsigned long long key = id_key(id), call = w->call;
	unsigned i, n;

	if (w->stop != AGENT_GO || w->caps.max_repeat_calls <= 0 ||
	    w->repeats == 0)
		return AGENT_GO;
	w->shown = 1;
	if (id != NULL) {
		/* the newest call with that id */
		n = w->n_recent < WATCH_RECENT ? w->n_recent : WATCH_RECENT;
		for (i = 0; i < n; i++)
			if (w->recent[(w->n_recent - 1 - i) % WATCH_RECENT].id ==
			    key)
				break;
		if (i == n)
			return AGENT_GO;
		call = w->recent[(w->n_recent - 1 - i) % WATCH_RECENT].call;
	}
	/* a result of a call before the ones in a row */
	if (call != w->call)
		return AGENT_GO;
	if (w->results == 0)
		w->result = result;
	else if (result != w->result)
		w->same = 0;
	if (!is_error)
		w->errors = 0;
	w->results++;
	if (w->repeats >= w->caps.max_repeat_calls &&
	    w->results >= w->caps.max_repeat_calls && (w->same || w->errors))
		return loop(w);
	return AGENT_GO;
}

enum agent_stop
agent_watch_end(struct agent_watch *w)
{
	if (w->stop != AGENT_GO || w->caps.max_repeat_calls <= 0 ||
	    w->repeats < w->caps.max_repeat_calls)
		return AGENT_GO;
	/* A stream that shows no results: the calls alone.  One that
	 * does: all but the last call's result, the same or all failed. */
	if (!w->shown)
		return loop(w);
	if (w->results >= w->caps.max_repeat_calls - 1 &&
	    (w->same || w->errors))
		return loop(w);
	return AGENT_GO;
}
