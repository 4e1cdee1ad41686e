/* SPDX-License-Identifier: ISC */
/*
 * What watches an agent's run live (SPEC §9): the per-run spend caps
 * (--max-cost, --max-tokens, --max-turns) against the running totals the
 * adapter reports, and a loop of tool calls (--max-repeat-calls).  Pure:
 * the driver feeds it from the adapter's hooks and stops the run when it
 * says so.
 *
 * A tool call is fingerprinted as an error is (SPEC §4): SHA-256 of its
 * name, a NUL and its input normalised, so the same call with another
 * line number, time stamp or temporary path is the same call.  Only the
 * last call's fingerprint and how many times in a row it came are kept.
 */
#include <stdio.h>
#include <string.h>

#include "agent.h"

#define CALL_SHOWN	200	/* bytes of a call's input in the message */

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

enum agent_stop
agent_watch_call(struct agent_watch *w, const char *name, const char *input,
    size_t n)
{
	char in[4097], hash[DIGEST_HEX_LEN + 1];
	size_t shown;

	if (w->stop != AGENT_GO || w->caps.max_repeat_calls <= 0 ||
	    name == NULL)
		return AGENT_GO;
	if (n >= sizeof(in))
		n = sizeof(in) - 1;
	memcpy(in, input, n);
	in[n] = '\0';
	/* out of memory: this call is not counted */
	if (error_fingerprint(name, in, NULL, hash) == -1)
		return AGENT_GO;
	if (w->repeats > 0 && strcmp(hash, w->call) == 0)
		w->repeats++;
	else {
		memcpy(w->call, hash, sizeof(w->call));
		w->repeats = 1;
	}
	if (w->repeats < w->caps.max_repeat_calls)
		return AGENT_GO;
	w->stop = AGENT_LOOP;
	shown = n > CALL_SHOWN ? CALL_SHOWN : n;
	/* never cut a UTF-8 character in two */
	while (shown > 0 && shown < n && ((unsigned char)in[shown] & 0xC0) ==
	    0x80)
		shown--;
	snprintf(w->msg, sizeof(w->msg), "the same tool call %d times in a "
	    "row: %s %.*s%s", w->repeats, name, (int)shown, in,
	    shown < n ? "..." : "");
	return w->stop;
}
