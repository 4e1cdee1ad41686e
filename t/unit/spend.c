/* SPDX-License-Identifier: ISC */
/*
 * What cbexec watches in an agent's run, on the real clients' recorded
 * output (t/corpus/recorded/): the running totals every client that
 * reports a figure gives (a message's usage counted once however many of
 * its content blocks repeat it; OpenAI's and Google's cached tokens taken
 * out of their input), the per-run caps crossed on them, and the same
 * tool call repeated.  Then the circuit's spend ledger (breaker/spend.c):
 * totals, windows, when a window frees up, and that it stays bounded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "breaker.h"
#include "tap.h"

#define FX "t/corpus/recorded/"

static char *
slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	size_t cap = 0, got;

	*n = 0;
	if (f == NULL)
		return NULL;
	for (;;) {
		if ((p = realloc(p, cap + 65536 + 1)) == NULL)
			break;
		got = fread(p + cap, 1, 65536, f);
		cap += got;
		if (got < 65536)
			break;
	}
	fclose(f);
	if (p != NULL)
		p[cap] = '\0';
	*n = cap;
	return p;
}

/* What the hooks saw. */
static struct agent_watch W;
static struct agent_usage seen;
static int n_usage, stop_at_usage;
static enum agent_stop stopped;

static void
on_usage(void *arg, const struct agent_usage *u, int total)
{
	enum agent_stop st = agent_watch_usage(&W, u);

	seen = *u;
	n_usage++;
	if (st != AGENT_GO && stopped == AGENT_GO) {
		stopped = st;
		stop_at_usage = n_usage;
	}
}

static void
on_call(void *arg, const char *id, const char *name, const char *in,
    size_t n, int cut, unsigned long long digest)
{
	enum agent_stop st = agent_watch_call(&W, id, name, in, n, cut,
	    digest);

	if (st != AGENT_GO && stopped == AGENT_GO)
		stopped = st;
}

static void
on_result(void *arg, const char *id, unsigned long long digest, int err)
{
	enum agent_stop st = agent_watch_result(&W, id, digest, err);

	if (st != AGENT_GO && stopped == AGENT_GO)
		stopped = st;
}

static const struct agent_hooks hooks = { NULL, on_usage, on_call,
	on_result, NULL, NULL };

/* Feed the recording through the adapter with caps c; its totals land in
 * *u (the agent_result's). */
static void
run(const char *client, const char *rec, const struct agent_caps *c,
    struct agent_usage *u)
{
	char path[256], *out;
	size_t n, i;
	struct agent_run *r;
	struct agent_end e;
	struct agent_result res;

	memset(&seen, 0, sizeof(seen));
	n_usage = stop_at_usage = 0;
	stopped = AGENT_GO;
	agent_watch_init(&W, c);
	snprintf(path, sizeof(path), FX "%s.stdout", rec);
	out = slurp(path, &n);
	ok(out != NULL, rec);
	r = agent_run_new(agent_by_name(client), &hooks);
	/* in pieces of 5 bytes: every boundary crossed */
	for (i = 0; out != NULL && i < n; i += 5)
		agent_feed(r, out + i, n - i < 5 ? n - i : 5);
	memset(&e, 0, sizeof(e));
	agent_finish(r, &e, &res);
	if (agent_watch_end(&W) != AGENT_GO && stopped == AGENT_GO)
		stopped = AGENT_LOOP;
	*u = res.usage;
	status_free(&res.status);
	agent_run_free(r);
	free(out);
}

static void
fixtures(void)
{
	struct agent_caps none = { 0, 0, 0, 0 }, c;
	struct agent_usage u;

	/* Claude Code: three messages, one of them in three content
	 * blocks, each repeating the message's usage */
	run("claude", "claude-2.1.330/tools-stream-json", &none, &u);
	is_int(u.input_tokens, 3900, "claude: input tokens as its result's");
	is_int(u.cache_read_tokens, 18000, "claude: cache reads");
	is_int(u.cache_write_tokens, 900, "claude: cache writes");
	is_int(u.output_tokens, 480, "claude: output tokens");
	ok(u.cost_usd > 0.0332 && u.cost_usd < 0.0334, "claude: total_cost_usd");
	is_int(u.turns, 4, "claude: num_turns");
	c = none;
	c.max_tokens = 5000;
	run("claude", "claude-2.1.330/tools-stream-json", &c, &u);
	is_int(stopped, AGENT_MAX_TOKENS, "claude: --max-tokens crossed live");
	ok(stop_at_usage > 0 && stop_at_usage < n_usage,
	    "claude: before its result, from the messages' usage");
	c = none;
	c.max_turns = 2;
	run("claude", "claude-2.1.330/tools_loop-stream-json", &c, &u);
	is_int(stopped, AGENT_MAX_TURNS, "claude: --max-turns crossed live");
	ok(strstr(W.msg, "3 turns over --max-turns 2") != NULL, W.msg);
	c = none;
	c.max_cost = 0.05;
	run("claude", "claude-2.1.330/tools_loop-stream-json", &c, &u);
	is_int(stopped, AGENT_MAX_COST, "claude: --max-cost from its result");
	is_int(stop_at_usage, n_usage, "claude: cost only with the result");
	c = none;
	c.max_repeat_calls = 5;
	run("claude", "claude-2.1.330/tools_loop-stream-json", &c, &u);
	is_int(stopped, AGENT_LOOP, "claude: the same Bash call 5 times");
	is_str(W.msg, "the same tool call 5 times in a row with the same "
	    "result: Bash {\"command\":\"echo cbexec-loop\",\"description\":"
	    "\"Print a marker\"}", "claude: the message names the call");
	c.max_repeat_calls = 5;
	run("claude", "claude-2.1.330/tools-stream-json", &c, &u);
	is_int(stopped, AGENT_GO, "claude: different calls are no loop");

	/* Codex: tokens, cached counted in its input, no cost */
	run("codex", "codex-0.169.0/tools-json", &none, &u);
	is_int(u.input_tokens, 400, "codex: input without the cached");
	is_int(u.cache_read_tokens, 2000, "codex: cached input");
	is_int(u.output_tokens, 160, "codex: output tokens");
	ok(u.cost_usd < 0, "codex: no cost, not 0");
	is_int(agent_tokens(&u), 2560, "codex: all its tokens");
	c = none;
	c.max_tokens = 2000;
	c.max_cost = 0.001;
	run("codex", "codex-0.169.0/tools-json", &c, &u);
	is_int(stopped, AGENT_MAX_TOKENS, "codex: --max-tokens; no cost to cap");
	/* it counts no turns: one a model call, up to its commands' results */
	run("codex", "codex-0.169.0/tools-json", &none, &u);
	is_int(u.turns, 2, "codex: two model calls, one command between");
	run("codex", "codex-0.169.0/tools_loop-json", &none, &u);
	is_int(u.turns, 7, "codex: seven model calls around six commands");
	c = none;
	c.max_turns = 3;
	run("codex", "codex-0.169.0/tools_loop-json", &c, &u);
	is_int(stopped, AGENT_MAX_TURNS, "codex: --max-turns 3 stops it live");
	c = none;
	c.max_repeat_calls = 5;
	run("codex", "codex-0.169.0/tools_loop-json", &c, &u);
	is_int(stopped, AGENT_LOOP, "codex: the same command 5 times");

	/* Gemini CLI: tokens in its result's stats */
	run("gemini", "gemini-0.61.0/tools-stream-json", &none, &u);
	is_int(u.input_tokens, 16200, "gemini: input tokens");
	is_int(u.output_tokens, 82, "gemini: output tokens");
	ok(u.cost_usd < 0, "gemini: no cost");
	run("gemini", "gemini-0.61.0/tool_loop-stream-json", &none, &u);
	is_int(u.turns, 4, "gemini: its four model calls, a tool call each");
	c = none;
	c.max_turns = 2;
	run("gemini", "gemini-0.61.0/tool_loop-stream-json", &c, &u);
	is_int(stopped, AGENT_MAX_TURNS, "gemini: --max-turns 2 stops it live");
	c = none;
	c.max_repeat_calls = 4;
	run("gemini", "gemini-0.61.0/tool_loop-stream-json", &c, &u);
	is_int(stopped, AGENT_LOOP, "gemini: the same read_file 4 times");

	/* Qwen Code: per message, then its result */
	run("qwen", "qwen-0.15.10/tools-stream-json", &none, &u);
	is_int(u.input_tokens, 400, "qwen: input without the cached");
	is_int(u.cache_read_tokens, 2000, "qwen: cached input");
	is_int(u.output_tokens, 160, "qwen: output tokens");
	is_int(u.turns, 2, "qwen: num_turns");
	c = none;
	c.max_repeat_calls = 4;
	run("qwen", "qwen-0.15.10/tools_loop_detect-stream-json", &c, &u);
	is_int(stopped, AGENT_LOOP, "qwen: the same shell command 4 times");

	/* opencode: tokens and cost per step, added up */
	run("opencode", "opencode-1.18.33/tools-json", &none, &u);
	ok(u.cost_usd > 0.027674 && u.cost_usd < 0.027676,
	    "opencode: the steps' costs added");
	is_int(u.turns, 3, "opencode: one turn a step");
	c = none;
	c.max_cost = 0.015;
	run("opencode", "opencode-1.18.33/tools-json", &c, &u);
	is_int(stopped, AGENT_MAX_COST, "opencode: --max-cost crossed live");
	ok(stop_at_usage == 2, "opencode: at its second step");
	c = none;
	c.max_repeat_calls = 3;
	run("opencode", "opencode-1.18.33/tools_loop-json", &c, &u);
	is_int(stopped, AGENT_LOOP, "opencode: the same bash call 3 times");
}

static void
ledger(void)
{
	struct cb_state s;
	struct cb_usage u = { 0.5, 100, 10, 1000, 1 }, none = { -1, -1, -1,
	    -1, -1 };
	double frees, t = 1e9;
	int i, bounded = 1;

	breaker_init(&s, "x");
	ok(s.spent.cost_usd < 0 && s.spent.turns < 0,
	    "a fresh circuit has spent nothing it was told of");
	breaker_spend(&s, "codex", &none, t, 3600);
	ok(s.spent.cost_usd < 0, "a run that reported nothing adds nothing");
	is_str(s.spend_agent, "codex", "the agent of the last run");
	breaker_spend(&s, "claude", &u, t, 3600);
	breaker_spend(&s, "claude", &u, t + 100, 3600);
	ok(s.spent.cost_usd == 1.0, "lifetime cost");
	is_int(s.spent.cache_tokens, 2000, "lifetime cache tokens");
	is_int(s.spent.turns, 2, "lifetime turns");
	ok(breaker_window(&s, t + 200, 3600, 0, 1.0, &frees) == 1.0,
	    "the window sums both runs");
	ok(frees == t + 3600, "it frees up when the first leaves it");
	ok(breaker_window(&s, t + 200, 3600, 1, 5000, &frees) == 2220,
	    "the tokens window sums every kind");
	ok(frees == t + 200, "under its cap: free now");
	ok(breaker_window(&s, t + 3650, 3600, 0, 1.0, &frees) == 0.5,
	    "an hour on, the first run has left the window");
	for (i = 0; i < 1000; i++) {
		breaker_spend(&s, "claude", &u, t + 200 + i * 7.0, 3600);
		if (s.n_ledger > CB_LEDGER_MAX)
			bounded = 0;
	}
	ok(bounded, "the ledger never holds more than CB_LEDGER_MAX buckets");
	ok(breaker_window(&s, t + 200 + 999 * 7.0, 3600, 0, 1e9, &frees) >=
	    0.5 * 3600 / 7, "merged buckets still count all their spending");
	breaker_spend(&s, "claude", &u, t + 1e6, 0);
	is_int((long)s.n_ledger, 0, "no window in use: the ledger empties");
	breaker_free(&s);
}

int
main(void)
{
	fixtures();
	ledger();
	return done_testing();
}
