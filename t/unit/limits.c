/* SPDX-License-Identifier: ISC */
/*
 * Provider errors and their limits: the built-in rows of SPEC §4 for
 * auth, billing, usage_limit, rate_limited, overloaded, server_error,
 * network and runtime_error, and build_error's narrowed shapes; the reset
 * times and delays agents print (retry_hint), zone names included; and
 * the breaker's rule 8 with an injected clock: OPEN until the reset time,
 * refused before it, a trial after it without an operator, the waits
 * without a time doubling to 5 hours.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "breaker.h"
#include "judge.h"
#include "tap.h"

/* 2026-11-22T21:00:00Z, a Sunday */
#define NOW 1795381200.0

static void
row(const char *desc, int code, const char *err, const char *type)
{
	struct run_facts f;
	struct classification c;
	char d[256];

	memset(&f, 0, sizeof(f));
	f.command = "cmd";
	f.exit_code = code;
	f.err = err;
	f.err_len = strlen(err);
	snprintf(d, sizeof(d), "%s: %s", desc, type);
	if (classify(NULL, 0, &f, &c) == -1) {
		ok(0, d);
		return;
	}
	if (!ok(strcmp(c.type, type) == 0, d))
		printf("#   got %s %s: %s\n", class_name(c.cls), c.type,
		    c.message ? c.message : "");
	classification_free(&c);
}

static void
test_rows(void)
{
	row("401 status", 1, "HTTP/1.1 401 Unauthorized\n", "auth");
	row("invalid x-api-key", 1, "Error: invalid x-api-key\n", "auth");
	row("not logged in", 1, "Not logged in · Please run /login\n", "auth");
	row("missing key (Codex)", 1,
	    "ERROR: Missing environment variable: `OPENAI_API_KEY`.\n", "auth");
	row("missing key (Gemini)", 1, "When using Gemini API, you must specify "
	    "the GEMINI_API_KEY environment variable.\n", "auth");
	row("missing key (opencode)", 1, "Error: Anthropic API key is missing. "
	    "Pass it using the 'apiKey' parameter\n", "auth");
	row("api key not valid", 1, "{\"error\":{\"code\":400,\"message\":"
	    "\"API key not valid. Please pass a valid API key.\"}}\n", "auth");
	row("403 permission", 1, "Your API key does not have permission to "
	    "use the specified resource.\n", "auth");
	row("credit", 1, "Your credit balance is too low to access the "
	    "Anthropic API.\n", "billing");
	row("insufficient_quota", 1, "{\"code\":\"insufficient_quota\"}\n",
	    "billing");
	row("OpenAI quota", 1, "ERROR: Quota exceeded. Check your plan and "
	    "billing details.\n", "billing");
	row("usage limit reached", 1,
	    "Claude AI usage limit reached|1763846400\n", "usage_limit");
	row("hit your limit", 1, "You've hit your 5-hour limit · resets "
	    "11:53pm (UTC)\n", "usage_limit");
	row("hit your usage limit (Codex)", 1, "ERROR: You\xe2\x80\x99ve hit "
	    "your usage limit. Try again at 3:04 PM.\n", "usage_limit");
	row("daily quota", 1, "TerminalQuotaError: You have exhausted your "
	    "daily quota on this model.\n", "usage_limit");
	row("out of extra usage", 1, "You're out of extra usage\n",
	    "usage_limit");
	row("rate limit", 1, "Rate limit reached for requests\n",
	    "rate_limited");
	row("429 in words", 1, "API Error: Request rejected (429) · slow "
	    "down\n", "rate_limited");
	row("RESOURCE_EXHAUSTED", 1, "status: RESOURCE_EXHAUSTED\n",
	    "rate_limited");
	row("529", 1, "API Error: 529 {\"type\":\"error\"}\n", "overloaded");
	row("503 high demand", 1, "This model is currently experiencing high "
	    "demand.\n", "overloaded");
	row("at capacity", 1, "ERROR: Selected model is at capacity.\n",
	    "overloaded");
	row("500", 1, "API Error: 500 Internal server error.\n",
	    "server_error");
	row("502", 1, "HTTP/1.1 502 Bad Gateway\n", "server_error");
	row("ECONNREFUSED", 1, "API Error: Connection refused (ECONNREFUSED)\n",
	    "network");
	row("fetch failed, a TypeError", 1, "Error: exception TypeError: fetch "
	    "failed sending request\n", "network");
	row("waiting for network", 1, "ERROR: Reconnecting... waiting for "
	    "network\n", "network");
	row("ENOTFOUND", 1, "getaddrinfo ENOTFOUND api.example.com\n",
	    "network");
	row("TypeError", 1, "TypeError: Cannot read property 'x' of "
	    "undefined\n", "runtime_error");
	row("Python traceback", 1, "Traceback (most recent call last):\n"
	    "  File \"x.py\", line 3, in <module>\nRuntimeError: boom\n",
	    "runtime_error");
	row("panic", 2, "panic: runtime error: index out of range\n",
	    "runtime_error");
	row("segfault", 139, "Segmentation fault (core dumped)\n",
	    "runtime_error");
	row("bare Error: is no build error", 1, "Error: something broke\n",
	    "unknown");
	row("error: at line start", 1, "error: linking failed\n",
	    "build_error");
	row("file:line: error:", 1, "x.c:3:5: error: expected ';'\n",
	    "build_error");
	row("ld returned", 1, "collect2: error: ld returned 1 exit status\n",
	    "build_error");
	row("tsc", 2, "src/a.ts(3,5): error TS2322: Type 'x'\n",
	    "build_error");
}

/* The hint in s at NOW: at as "HH:MM" UTC and the delay. */
static void
hint(const char *s, const char *at, double after)
{
	struct retry_hint h;
	char got[64] = "-", d[256];
	struct tm tm;
	time_t t;

	retry_hint(s, NOW, &h);
	if (h.at > 0) {
		t = (time_t)h.at;
		gmtime_r(&t, &tm);
		strftime(got, sizeof(got), "%Y-%m-%d %H:%M", &tm);
	}
	snprintf(d, sizeof(d), "hint in \"%s\": at %s after %g", s, at, after);
	if (!ok(strcmp(got, at) == 0 && h.after == after, d))
		printf("#   got at %s after %g\n", got, h.after);
}

static void
test_hints(void)
{
	hint("Claude AI usage limit reached|1795392000", "2026-11-23 00:00", 0);
	hint("{\"resetsAt\":1795391580,\"status\":\"rejected\"}",
	    "2026-11-22 23:53", 0);
	hint("You've hit your 5-hour limit · resets 11:53pm (UTC)",
	    "2026-11-22 23:53", 0);
	hint("resets 12am (UTC)", "2026-11-23 00:00", 0);
	/* a time of day just past is today's, not tomorrow's */
	hint("resets 8:55pm (UTC)", "2026-11-22 20:55", 0);
	hint("resets 8:30pm (UTC)", "2026-11-23 20:30", 0);
	hint("resets Dec 3, 2:30pm (UTC)", "2026-12-03 14:30", 0);
	hint("resets Jan 2, 2027, 9am (UTC)", "2027-01-02 09:00", 0);
	hint("resets Apr 23 at 4pm (America/Recife)", "2027-04-23 19:00", 0);
	hint("resets 4pm (Europe/Berlin)", "2026-11-23 15:00", 0);
	hint("resets 9pm (Atlantis/Nowhere)", "-", 0);
	hint("resets 9pm (../../etc/passwd)", "-", 0);
	/* local time is TZ, UTC here */
	hint("You\xe2\x80\x99ve hit your usage limit. Upgrade to Pro or try "
	    "again at 10:02 PM.", "2026-11-22 22:02", 0);
	hint("or try again at Nov 25th, 2026 9:02 PM.", "2026-11-25 21:02", 0);
	hint("try again at Apr 28th, 2027 10:03 AM.", "2027-04-28 10:03", 0);
	hint("Please retry in 12.345678901s.", "-", 12.345678901);
	hint("Suggested retry after 12s.", "-", 12);
	hint("retryDelayMs: 12000,", "-", 12);
	hint("retryDelayMs: undefined, then Please retry in 37s", "-", 37);
	hint("{\"retryDelay\": \"900ms\"}", "-", 0.9);
	hint("{\"retry_delay_ms\":518}", "-", 0.518);
	hint("\"retry-after\":\"2\"", "-", 2);
	hint("Rate limit reached. Please try again in 6m0s.", "-", 360);
	hint("Retrying after 14380ms...", "-", 14.38);
	/* Gemini's Code Assist quota, and the forms of the same kind */
	hint("You have exhausted your capacity on this model. Your quota "
	    "will reset after 2h52m39s.", "-", 10359);
	hint("Your quota will reset after 19h14m47s.", "-", 69287);
	hint("quota resets in 3h 12m", "-", 11520);
	hint("limit resets after 2 hours 5 minutes", "-", 7500);
	hint("usage resets in 1d4h", "-", 100800);
	hint("nothing here", "-", 0);
	hint("resets soon", "-", 0);
}

static struct cb_limits L;
static struct cb_state S;
static struct cb_result R;

static void
fresh(void)
{
	breaker_free(&S);
	if (breaker_init(&S, "unit") != 0)
		abort();
	breaker_default_limits(&L);
}

static void
limit_run(double at, double now)
{
	struct cb_run r;

	memset(&r, 0, sizeof(r));
	r.cls = CB_CLASS_TRANSIENT;
	r.type = "usage_limit";
	r.message = "You've hit your limit";
	r.hash = "";
	r.exit_code = 1;
	r.usage_limit = 1;
	r.retry_at = at;
	breaker_record(&S, &L, &r, now, &R);
}

static void
test_rule8(void)
{
	struct cb_run r;

	fresh();
	limit_run(NOW + 4320, NOW);
	is_int(S.state, CB_OPEN, "a usage limit opens the circuit at once");
	is_int(R.outcome, OUT_OPEN, "outcome OPEN (120)");
	ok(S.retry_at == NOW + 4320, "retry_at is the reset time");
	is_str(S.open_reason, "usage limit until 22:12 UTC",
	    "reason names the reset time");
	is_int(breaker_admit(&S, &L, NOW + 4319, &R), 0,
	    "refused before the reset time");
	is_int(S.state, CB_OPEN, "still OPEN");
	is_int(breaker_admit(&S, &L, NOW + 4320, &R), 1,
	    "admitted at the reset time, without an operator");
	is_int(S.state, CB_HALF_OPEN, "HALF_OPEN: a trial");
	is_int(S.trials_left, 1, "one trial");
	ok(S.retry_at < 0, "retry_at cleared");
	memset(&r, 0, sizeof(r));
	r.cls = CB_CLASS_SUCCESS;
	r.type = "";
	r.hash = "";
	breaker_record(&S, &L, &r, NOW + 4330, &R);
	is_int(S.state, CB_CLOSED, "a successful trial closes it");

	/* no reset time: 5 minutes, doubling, up to 5 hours */
	fresh();
	limit_run(0, NOW);
	ok(S.retry_at == NOW + 300, "no reset time: 5 minutes");
	is_str(S.open_reason, "usage limit until 21:05 UTC", "reason");
	breaker_admit(&S, &L, NOW + 300, &R);
	limit_run(0, NOW + 301);
	ok(S.retry_at == NOW + 301 + 600, "again: 10 minutes");
	S.cooldown = 4 * 3600;
	breaker_admit(&S, &L, NOW + 1e6, &R);
	limit_run(0, NOW + 1e6);
	ok(S.retry_at == NOW + 1e6 + 5 * 3600, "capped at 5 hours");
	fresh();
	L.cooldown = 90;
	limit_run(0, NOW);
	ok(S.retry_at == NOW + 90, "--cooldown sets the wait");
	fresh();
	limit_run(NOW - 30, NOW);
	ok(S.retry_at == NOW + 300,
	    "a reset time already past is none: 5 minutes, not a trial at once");
	breaker_admit(&S, &L, NOW + 300, &R);
	limit_run(NOW + 200, NOW + 301);
	ok(S.retry_at == NOW + 301 + 600,
	    "... and again: 10 minutes (the stated reset is past)");
	fresh();
	limit_run(NOW + 3 * 86400, NOW);
	is_str(S.open_reason, "usage limit until Wed 21:00 UTC",
	    "a reset days away names its weekday");
	/* almost a day: 20:59 tomorrow must not read as later today */
	fresh();
	limit_run(NOW + 86400 - 60, NOW);
	is_str(S.open_reason, "usage limit until Mon 20:59 UTC",
	    "a reset tomorrow at an earlier hour names its day");
	fresh();
	limit_run(NOW + 3 * 3600 + 60, NOW);
	is_str(S.open_reason, "usage limit until Mon 00:01 UTC",
	    "past midnight UTC: tomorrow, named");
	fresh();
	limit_run(NOW + 10 * 86400, NOW);
	is_str(S.open_reason, "usage limit until 2026-12-02 21:00 UTC",
	    "a week or more away: the date");

	/* after a usage limit, a trial that meets a rate limit did not
	 * meet the limit again: it closes the circuit (SPEC §11) */
	fresh();
	limit_run(NOW + 60, NOW);
	breaker_admit(&S, &L, NOW + 60, &R);
	memset(&r, 0, sizeof(r));
	r.cls = CB_CLASS_TRANSIENT;
	r.type = "rate_limited";
	r.message = "429";
	r.hash = "";
	r.exit_code = 1;
	r.retry_after = 900;
	breaker_record(&S, &L, &r, NOW + 61, &R);
	is_int(S.state, CB_CLOSED, "after a usage limit, a trial's rate limit "
	    "closes it");
	/* after errors, a trial that meets a rate limit waits again, as
	 * long as asked */
	fresh();
	L.cooldown = 60;
	for (int i = 0; i < 5; i++) {
		struct cb_run e = r;

		e.cls = CB_CLASS_RECOVERABLE;
		e.type = "build_error";
		e.hash = "h";
		e.retry_after = 0;
		breaker_record(&S, &L, &e, NOW + i, &R);
	}
	breaker_admit(&S, &L, S.opened_at + 60, &R);
	breaker_record(&S, &L, &r, S.opened_at + 61, &R);
	is_int(S.state, CB_OPEN, "a trial's rate limit re-opens it");
	ok(S.retry_at == S.opened_at + 900, "until the provider's retry-after");
	L.cooldown = 0;
	/* an operator's reset or trip forgets the retry time */
	breaker_reset(&S, &L, NULL, NULL, NOW + 62, &R);
	ok(S.retry_at < 0 && S.state == CB_CLOSED, "reset clears retry_at");
	limit_run(NOW + 600, NOW + 63);
	breaker_trip(&S, &L, NULL, NULL, NOW + 64, &R);
	ok(S.retry_at < 0, "trip clears retry_at");
	is_int(breaker_admit(&S, &L, NOW + 1e6, &R), 0,
	    "a tripped circuit is never admitted by a retry time");

	/* rate limits never open it by themselves, nor count as the same */
	fresh();
	r.retry_after = 0;
	breaker_record(&S, &L, &r, NOW, &R);
	breaker_record(&S, &L, &r, NOW + 1, &R);
	breaker_record(&S, &L, &r, NOW + 2, &R);
	is_int(S.state, CB_CLOSED, "three 429s: still CLOSED");
	is_int(S.same_error_count, 0, "transient: not the same error");
	breaker_free(&S);
}

int
main(void)
{
	setenv("TZ", "UTC", 1);
	test_rows();
	test_hints();
	test_rule8();
	return done_testing();
}
