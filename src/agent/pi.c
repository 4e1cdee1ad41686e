/* SPDX-License-Identifier: ISC */
/*
 * pi (`pi -p`, npm @mariozechner/pi-coding-agent): its text output and
 * --mode json (JSON Lines of its agent events).
 *
 * --mode json exits 0 whatever happened, so the events decide: the last
 * assistant message_end does -- stopReason "error" or "aborted" is a
 * failure, its errorMessage the provider's status and body ("401
 * {\"type\":\"error\",...}") or pi's own words ("Connection error.", "You
 * have hit your ChatGPT usage limit ... Try again in ~60 min.").  An
 * error message_end that pi retries comes before auto_retry_start, and a
 * later message_end replaces its verdict.  Usage and cost are each
 * assistant message's (message.usage, cost.total in USD), a turn each;
 * tool calls are tool_execution_start and _end, matched by toolCallId;
 * the session id is the first line's.  In text mode the answer is on
 * stdout and an error is the first line of stderr, with exit 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"

enum { TYPE, ID, ROLE, STOP, ERRMSG, IN, OUT, CREAD, CWRITE, COST, RESP_ID,
	CALL_ID, TOOL, ARGS, RESULT, IS_ERROR, RETRY_MSG, DELAY };

static const struct field fields[] = {
	{ "type", TYPE, K_STR },
	{ "id", ID, K_STR },
	{ "message.role", ROLE, K_STR },
	{ "message.stopReason", STOP, K_STR },
	{ "message.errorMessage", ERRMSG, K_STR },
	{ "message.content.text", -1, K_TEXT },
	{ "message.usage.input", IN, K_NUM },
	{ "message.usage.output", OUT, K_NUM },
	{ "message.usage.cacheRead", CREAD, K_NUM },
	{ "message.usage.cacheWrite", CWRITE, K_NUM },
	{ "message.usage.cost.total", COST, K_NUM },
	{ "message.responseId", RESP_ID, K_STR },
	{ "toolCallId", CALL_ID, K_STR },
	{ "toolName", TOOL, K_STR },
	{ "args", ARGS, K_RAW },
	{ "result", RESULT, K_RAW },
	{ "isError", IS_ERROR, K_BOOL },
	{ "errorMessage", RETRY_MSG, K_STR },
	{ "delayMs", DELAY, K_NUM },
};

static const struct agent_rule rules[] = {
	{ "No API key found for", "auth", CB_CLASS_FATAL },
	{ "ChatGPT usage limit", "usage_limit", CB_CLASS_TRANSIENT },
};

/* "401 {...}": the HTTP status that leads pi's error message, else 0. */
static int
leading_status(const char *m)
{
	int v;

	if (m == NULL || strlen(m) < 5 || m[3] != ' ' || m[4] != '{' ||
	    sscanf(m, "%3d", &v) != 1 || v < 100 || v > 599)
		return 0;
	return v;
}

/* "Try again in ~60 min.": the wait its ChatGPT usage limit names. */
static void
try_again(struct agent_run *r, const char *m)
{
	const char *p;
	double n;

	if (m == NULL || (p = strstr(m, "Try again in ~")) == NULL)
		return;
	n = strtod(p + 14, NULL);
	if (n > 0 && strstr(p, " min") != NULL)
		r->hint.after = n * 60;
}

static void
message_end(struct agent_run *r)
{
	struct agent_usage u;
	const char *msg = sv(r, ERRMSG);

	usage_unknown(&u);
	u.input_tokens = sn_count(r, IN);
	u.output_tokens = sn_count(r, OUT);
	u.cache_read_tokens = sn_count(r, CREAD);
	u.cache_write_tokens = sn_count(r, CWRITE);
	u.cost_usd = sn_cost(r, COST);
	if (u.input_tokens >= 0 || u.output_tokens >= 0)
		run_step_usage(r, sv(r, RESP_ID), &u);
	if (is(r, STOP, "error") || is(r, STOP, "aborted")) {
		run_error(r, msg != NULL ? msg : is(r, STOP, "aborted") ?
		    "the run was aborted" : "error", leading_status(msg));
		try_again(r, msg);
	} else {
		run_ok(r);
		run_event_text(r);
	}
}

static int
event(struct agent_run *r)
{
	const char *type = sv(r, TYPE);

	if (type == NULL)
		return 0;
	if (strcmp(type, "session") == 0)
		run_session(r, sv(r, ID));
	else if (strcmp(type, "message_end") == 0) {
		if (is(r, ROLE, "assistant"))
			message_end(r);
	} else if (strcmp(type, "tool_execution_start") == 0) {
		run_progress(r);
		run_tool(r, sv(r, CALL_ID), sv(r, TOOL), ARGS);
	} else if (strcmp(type, "tool_execution_end") == 0)
		run_tool_result(r, sv(r, CALL_ID), RESULT, sb(r, IS_ERROR) == 1);
	else if (strcmp(type, "auto_retry_start") == 0) {
		run_retrying(r, sv(r, RETRY_MSG) != NULL ? sv(r, RETRY_MSG) :
		    "retrying", NULL);
		if (sn(r, DELAY, 0) > 0)
			r->hint.after = sn(r, DELAY, 0) / 1000;
	} else if (strcmp(type, "agent_end") == 0)
		run_final(r);
	else if (strcmp(type, "message_update") != 0 &&
	    strcmp(type, "message_start") != 0 &&
	    strcmp(type, "turn_start") != 0 && strcmp(type, "turn_end") != 0 &&
	    strcmp(type, "agent_start") != 0 &&
	    strcmp(type, "auto_retry_end") != 0 &&
	    strncmp(type, "tool_execution_", 15) != 0)
		return 0;
	return 1;
}

/* Text mode: the error is stderr's first line; its status leads it. */
static void
finish(struct agent_run *r, const struct agent_end *e)
{
	char buf[MSG_LEN];
	size_t n;

	if (r->json || e->err == NULL || e->exit_code <= 0)
		return;
	n = strcspn(e->err, "\n");
	if (n == 0 || n >= sizeof(buf))
		return;
	memcpy(buf, e->err, n);
	buf[n] = '\0';
	run_error(r, buf, leading_status(buf));
	try_again(r, buf);
}

/* An assistant message's text is the answer once it has ended. */
static int
answer(const struct agent_run *r)
{
	return is(r, TYPE, "message_end") && is(r, ROLE, "assistant");
}

static const char *const commands[] = { "pi", NULL };
static const char *const packages[] = { "@mariozechner/pi-coding-agent",
	NULL };

const struct agent agent_pi = {
	"pi", commands, packages, fields, NELEM(fields), event, NULL, finish,
	rules, NELEM(rules), answer
};
