/* SPDX-License-Identifier: ISC */
/*
 * Gemini CLI (`gemini -p`): its text, --output-format json and stream-json
 * output.
 *
 * stream-json is JSON Lines: init (the session), message events whose
 * assistant content is one streamed chunk each, split anywhere (so the
 * status block is found in the deltas joined in order), tool_use and
 * tool_result, error events, and a last result with status "success" or
 * "error" and the message "[API Error: ...]".  json is one object on
 * stdout (session_id, response, stats) on success, and on failure an
 * object {"error": {"message", "code"}} on stderr.  Text mode prints the
 * answer on stdout and the failure on stderr: "Error when talking to
 * Gemini API Full report available at: FILE <Name>: <message>", the
 * message going on over further lines, a node stack after it.
 *
 * Exit codes: 41 auth, 42 input, 44 sandbox, 52 config, 53 turn limit,
 * 54 tool, 55 untrusted folder; in json and stream-json an API error
 * exits with its HTTP status & 0xFF (145 for 401, 173 for 429, ...).
 * "Quota exceeded" from Google is a per-minute or per-day limit, never
 * money, and 503 ("high demand") comes as a RetryableQuotaError: its own
 * rows come before the built-in ones.  While it retries, stderr says
 * "Attempt N failed: <why>. Retrying after 12708ms...".
 */
#include <stdio.h>
#include <string.h>

#include "adapter.h"

enum { TYPE, ROLE, SESSION, STATUS, ERROR_MSG, CODE, SEVERITY, MESSAGE,
	TOOL, PARAMS, IN, OUT, CACHED, RESPONSE, WARNINGS, TOOL_ID, OUTPUT };

static const struct field fields[] = {
	{ "type", TYPE, K_STR },
	{ "role", ROLE, K_STR },
	{ "content", -1, K_TEXT },
	{ "response", RESPONSE, K_TEXT },
	{ "session_id", SESSION, K_STR },
	{ "status", STATUS, K_STR },
	{ "error.message", ERROR_MSG, K_STR },
	{ "error.code", CODE, K_NUM },
	{ "severity", SEVERITY, K_STR },
	{ "message", MESSAGE, K_STR },
	{ "tool_name", TOOL, K_STR },
	{ "parameters", PARAMS, K_RAW },
	{ "stats.input_tokens", IN, K_NUM },
	{ "stats.output_tokens", OUT, K_NUM },
	{ "stats.cached", CACHED, K_NUM },
	{ "warnings", WARNINGS, K_STR },
	{ "tool_id", TOOL_ID, K_STR },
	{ "output", OUTPUT, K_RAW },
};

/* Its own loop detection stopped the run: a warning event, or a warning
 * of the json object, says so and the run exits 0. */
#define LOOP_STOP "Loop detected, stopping execution"

static void
loop_stop(struct agent_run *r, const char *msg)
{
	if (msg != NULL && strstr(msg, LOOP_STOP) != NULL)
		run_client_stop(r, "loop", CB_CLASS_RECOVERABLE, msg);
}

static const struct agent_rule rules[] = {
	{ "insufficient (ai )?credits|INSUFFICIENT_G1_CREDITS|"
	  "credits are depleted", "billing", CB_CLASS_FATAL },
	{ "exhausted your [a-z ]{0,20}(quota|capacity)|quota will reset|"
	  "TerminalQuotaError", "usage_limit", CB_CLASS_TRANSIENT },
	{ "high demand|overloaded|UNAVAILABLE", "overloaded",
	    CB_CLASS_TRANSIENT },
	{ "RetryableQuotaError|exceeded your current quota|quota exceeded|"
	  "resource has been exhausted|RESOURCE_EXHAUSTED", "rate_limited",
	    CB_CLASS_TRANSIENT },
};

/* Its stream-json counts no turns: a model call is the answer and tool
 * calls that come before the next tool result (aux: one is under way). */
static void
model_call(struct agent_run *r)
{
	if (r->aux == 0) {
		r->aux = 1;
		run_model_call(r);
	}
}

static int
event(struct agent_run *r)
{
	const char *type = sv(r, TYPE), *msg;
	struct agent_usage u;

	run_session(r, sv(r, SESSION));
	if (type == NULL) {
		/* json: the answer, or on stderr the error object */
		if ((msg = sv(r, ERROR_MSG)) != NULL) {
			run_error(r, msg, sn_status(r, CODE));
			return 1;
		}
		loop_stop(r, sv(r, WARNINGS));
		if (sv(r, RESPONSE) == NULL && !r->client_stop)
			return 0;
		run_ok(r);
		run_event_text(r);
		run_final(r);
		return 1;
	}
	if (strcmp(type, "message") == 0) {
		if (is(r, ROLE, "assistant")) {
			/* a delta: joined to the last as it is */
			run_progress(r);
			run_event_delta(r);
			model_call(r);
		}
	} else if (strcmp(type, "tool_use") == 0) {
		run_progress(r);
		model_call(r);
		run_tool(r, sv(r, TOOL_ID), sv(r, TOOL), PARAMS);
	} else if (strcmp(type, "tool_result") == 0) {
		run_progress(r);
		run_tool_result(r, sv(r, TOOL_ID), OUTPUT,
		    is(r, STATUS, "error"));
		r->aux = 0;
	} else if (strcmp(type, "error") == 0) {
		/* not fatal in itself; a failed result or exit confirms it */
		if (is(r, SEVERITY, "error") && (msg = sv(r, MESSAGE)) != NULL)
			run_error(r, msg, 0);
		loop_stop(r, sv(r, MESSAGE));
	} else if (strcmp(type, "result") == 0) {
		if (is(r, STATUS, "error")) {
			msg = sv(r, ERROR_MSG);
			if (!api_error(r, msg))
				run_error(r, msg != NULL ? msg : "error", 0);
		} else
			run_ok(r);
		usage_unknown(&u);
		u.input_tokens = sn_count(r, IN);
		u.output_tokens = sn_count(r, OUT);
		u.cache_read_tokens = sn_count(r, CACHED);
		/* its input_tokens count the cached ones too */
		if (u.input_tokens >= 0 && u.cache_read_tokens > 0)
			u.input_tokens = u.input_tokens > u.cache_read_tokens ?
			    u.input_tokens - u.cache_read_tokens : 0;
		run_total_usage(r, &u);
		run_final(r);
	} else if (strcmp(type, "init") != 0)
		return 0;
	return 1;
}

/* In json and stream-json an API error exits with its HTTP status & 0xFF. */
static void
exit_code(struct agent_run *r, int code)
{
	static const int http[] = { 400, 401, 403, 404, 429, 500, 502, 503 };
	size_t i;

	fatal_exit(r, code);
	for (i = 0; r->http == 0 && i < NELEM(http); i++)
		if ((http[i] & 0xff) == code)
			r->http = http[i];
}

/*
 * Text mode: the message of "Error when talking to Gemini API ... <Name>:
 * <message>", with the lines that go on with it; an _ApiError's message
 * is a JSON body, read for its own message and code.
 */
static void
talk_error(struct agent_run *r, const char *err)
{
	const char *p = NULL, *q, *s;
	char buf[MSG_LEN];
	size_t n = 0, k;

	for (q = err; (q = strstr(q, "Error when talking to Gemini API")) !=
	    NULL; q++)
		p = q;
	if (p == NULL || (q = strstr(p, ".json ")) == NULL ||
	    (s = strchr(p, '\n')) == NULL || q > s)
		return;
	p = q + 6;
	if (strncmp(p, "_ApiError: {", 12) == 0) {
		run_read(r, p + 11, (size_t)(s - p - 11));
		if (r->failed)
			return;
	}
	/* the message and its continuation lines, up to the stack */
	for (q = p; *q != '\0' && n < sizeof(buf) - 2; q = s + 1) {
		if ((s = strchr(q, '\n')) == NULL)
			s = q + strlen(q);
		if (q != p && (strncmp(q, "    at ", 7) == 0 || *q == '{' ||
		    s == q))
			break;
		k = (size_t)(s - q);
		if (k > sizeof(buf) - 2 - n)
			k = sizeof(buf) - 2 - n;
		memcpy(buf + n, q, k);
		n += k;
		buf[n++] = ' ';
		if (*s == '\0')
			break;
	}
	buf[n] = '\0';
	run_error(r, buf, 0);
}

/* "Attempt N failed: <why>. Retrying after 12708ms...": the last thing
 * it said, unless the attempts ran out. */
static void
attempts(struct agent_run *r, const char *err)
{
	const char *p = NULL, *q;
	char buf[MSG_LEN];
	size_t n;

	for (q = err; (q = strstr(q, "Attempt ")) != NULL; q++)
		if (q == err || q[-1] == '\n')
			p = q;
	if (p == NULL || strstr(p, "Max attempts reached") != NULL ||
	    strstr(p, "Error when talking") != NULL)
		return;
	n = strlen(p);
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	run_retrying(r, buf, NULL);
}

static void
finish(struct agent_run *r, const struct agent_end *e)
{
	if (e->exit_code > 0)
		exit_code(r, e->exit_code);
	if (e->err == NULL)
		return;
	if (e->timed_out) {
		attempts(r, e->err);
		return;
	}
	if (e->exit_code <= 0 || r->failed)
		return;
	/* json: the error object is on stderr, after the log lines */
	run_read(r, e->err, e->err_len);
	if (!r->failed)
		talk_error(r, e->err);
}

/* A message names its role before its content. */
static int
answer(const struct agent_run *r)
{
	return is(r, TYPE, "message") && is(r, ROLE, "assistant");
}

static const char *const commands[] = { "gemini", NULL };
static const char *const packages[] = { "@google/gemini-cli", NULL };

const struct agent agent_gemini = {
	"gemini", commands, packages, fields, NELEM(fields), event, NULL,
	finish, rules, NELEM(rules), answer
};
