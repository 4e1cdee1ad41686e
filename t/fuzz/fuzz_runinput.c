/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for what a run can print (SPEC §9: nothing it prints
 * may make the circuit unloadable or steer the next run).  A 2-byte seed
 * picks the adapter and the exit status; the rest is the run's stdout and
 * stderr.  The adapter's figures, session id, status block task and the
 * provider's reset time are then applied as the driver applies them
 * (retry_bound, breaker_spend, breaker_record), and the invariants checked:
 * every figure within the state's bounds or "not said", a session id
 * opaque or none, and the state written loads again.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "agent.h"
#include "breaker.h"
#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = { "claude", "codex", "gemini", "qwen",
    "opencode" };

static void
check_count(long v, const char *what)
{
	if (v < -1 || v > CB_LONG_MAX) {
		fprintf(stderr, "%s out of bounds: %ld\n", what, v);
		abort();
	}
}

static void
on_call(void *arg, const char *id, const char *name, const char *in,
    size_t n, int cut, unsigned long long digest)
{
	agent_watch_call(arg, id, name, in, n, cut, digest);
}

static void
on_result(void *arg, const char *id, unsigned long long digest, int err)
{
	agent_watch_result(arg, id, digest, err);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct agent_caps caps = { 1, 1000, 10, 3 };
	const double now = 1795381200;
	struct agent_watch w;
	struct agent_hooks hooks = { NULL, NULL, on_call, on_result, NULL,
	    &w };
	struct agent_run *r;
	struct agent_end e;
	struct agent_result res;
	struct run_facts f;
	struct classification c;
	struct retry_hint h;
	struct cb_state s, again;
	struct cb_limits l;
	struct cb_result out;
	struct cb_run run;
	struct cb_usage u;
	char err[512], *text, *p;
	cJSON *j;
	size_t n;

	if (size < 2)
		return 0;
	n = size - 2;
	if ((p = malloc(n + 1)) == NULL)
		return 0;
	memcpy(p, data + 2, n);
	p[n] = '\0';
	agent_watch_init(&w, &caps);
	if ((r = agent_run_new(agent_by_name(names[data[0] % NELEM(names)]),
	    &hooks)) == NULL)
		abort();
	agent_feed(r, p, n);
	memset(&e, 0, sizeof(e));
	e.exit_code = data[1] % 4 == 0 ? 0 : data[1];
	e.err = p;
	e.err_len = n;
	e.now = now;
	if (agent_finish(r, &e, &res) == -1)
		abort();
	agent_watch_end(&w);

	check_count(res.usage.input_tokens, "input_tokens");
	check_count(res.usage.output_tokens, "output_tokens");
	check_count(res.usage.cache_read_tokens, "cache_read_tokens");
	check_count(res.usage.cache_write_tokens, "cache_write_tokens");
	check_count(res.usage.turns, "turns");
	if (!(res.usage.cost_usd == -1 || (res.usage.cost_usd >= 0 &&
	    res.usage.cost_usd <= CB_COST_MAX)))
		abort();
	if (res.session_id != NULL && !opaque_id(res.session_id))
		abort();

	memset(&f, 0, sizeof(f));
	f.command = "agent";
	f.exit_code = e.exit_code;
	f.err = p;
	f.err_len = n;
	f.out = p;
	f.out_len = n;
	f.agent = &res.v;
	if (classify(NULL, 0, &f, &c) == -1)
		abort();
	retry_hint(c.message, now, &h);
	if (res.hint.at > 0)
		h.at = res.hint.at;
	if (res.hint.after > h.after)
		h.after = res.hint.after;
	retry_bound(&h, now);
	if (h.at > now + RETRY_MAX || h.after > RETRY_MAX || isnan(h.at) ||
	    isnan(h.after))
		abort();

	/* Applied to a circuit as the driver applies a run. */
	if (breaker_init(&s, "fuzz") == -1)
		abort();
	breaker_default_limits(&l);
	u.cost_usd = res.usage.cost_usd;
	u.input_tokens = res.usage.input_tokens;
	u.output_tokens = res.usage.output_tokens;
	u.cache_tokens = res.usage.cache_read_tokens;
	u.turns = res.usage.turns;
	breaker_spend(&s, names[data[0] % NELEM(names)], &u, now, 86400);
	breaker_spend(&s, names[data[0] % NELEM(names)], &u, now + 1, 86400);
	memset(&run, 0, sizeof(run));
	run.cls = c.cls;
	run.type = c.type;
	run.message = c.message;
	run.hash = c.hash;
	run.exit_code = e.exit_code;
	run.task = res.status.task;
	run.usage_limit = c.cls == CB_CLASS_TRANSIENT &&
	    strcmp(c.type, "usage_limit") == 0;
	run.retry_at = run.usage_limit ? h.at : 0;
	run.retry_after = h.after;
	breaker_admit(&s, &l, now, &out);
	breaker_record(&s, &l, &run, now + 2, &out);

	/* What is written loads again. */
	if ((j = state_to_json(&s)) == NULL || (text = cJSON_Print(j)) == NULL)
		abort();
	cJSON_Delete(j);
	if ((j = cJSON_Parse(text)) == NULL ||
	    state_from_json(j, &again, err, sizeof(err)) != 0) {
		fprintf(stderr, "the state written does not load: %s\n%s\n",
		    err, text);
		abort();
	}
	cJSON_Delete(j);
	free(text);
	breaker_free(&again);
	breaker_free(&s);
	classification_free(&c);
	status_free(&res.status);
	agent_run_free(r);
	free(p);
	return 0;
}
