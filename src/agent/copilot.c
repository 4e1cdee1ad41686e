/* SPDX-License-Identifier: ISC */
/*
 * GitHub Copilot CLI (`copilot -p`, npm @github/copilot): its text output
 * and --output-format json (JSON Lines of its session events).
 *
 * json: the last line, "result", ends the run (exitCode, sessionId); a
 * "session.error" before it is the failure -- errorType "authentication"
 * (statusCode 401 or 403), "rate_limit" (the last model.call_failure's
 * errorCode tells an exhausted quota, insufficient_quota, or a usage
 * limit, usage_limit_reached, from a rate limit; its errorMessage, the
 * provider's body, gives the limit's resets_at), "query" (a statusCode of
 * 5xx, or "Could not connect to ..." with none).  Turns are
 * assistant.turn_start events; tool calls tool.execution_start and
 * _complete, matched by toolCallId; the answer is assistant.message's
 * content.  A tool it may not run without asking, in a run where nobody
 * can answer (no --allow-all-tools), completes with error.code "denied"
 * and the run goes on to exit 0: blocked (SPEC §10).  It reports premium
 * requests, not tokens or USD.
 * text: the answer on stdout (retry notices between its lines are no
 * verdict), a denied tool shown as "└ Permission denied ..." under it; the
 * error is the first line on stderr, before the footer (Changes,
 * Duration, Tokens, "Resume copilot --resume=ID": the session).
 */
#include <stdio.h>
#include <string.h>

#include "adapter.h"

enum { TYPE, ERR_TYPE, MSG, STATUS, ERR_CODE, CALL_ID, TOOL, ARGS, SUCCESS,
	RESULT, SESSION, EXIT, ERR_BODY, TOOL_ERR };

static const struct field fields[] = {
	{ "type", TYPE, K_STR },
	{ "data.errorType", ERR_TYPE, K_STR },
	{ "data.message", MSG, K_STR },
	{ "data.statusCode", STATUS, K_NUM },
	{ "data.errorCode", ERR_CODE, K_STR },
	{ "data.content", -1, K_TEXT },
	{ "data.toolCallId", CALL_ID, K_STR },
	{ "data.toolName", TOOL, K_STR },
	{ "data.arguments", ARGS, K_RAW },
	{ "data.success", SUCCESS, K_BOOL },
	{ "data.result.content", RESULT, K_RAW },
	{ "sessionId", SESSION, K_STR },
	{ "exitCode", EXIT, K_NUM },
	{ "data.errorMessage", ERR_BODY, K_STR },
	{ "data.error.code", TOOL_ERR, K_STR },
};

/* What its text mode shows under a tool it was denied (the wording of
 * 1.0.x, and of the 0.0.3xx releases). */
static const char *const denied_text[] = {
	"\n  \xe2\x94\x94 Permission denied because no interactive user "
	    "response was available",
	"\n  \xe2\x94\x94 Permission denied and could not request permission "
	    "from user",
	"\xe2\x94\x94 \xe2\x9c\x97 Denied, no one to approve",
};

static const struct agent_rule rules[] = {
	{ "Authentication failed with provider", "auth", CB_CLASS_FATAL },
	{ "Could not connect to .{0,40}model provider", "network",
	    CB_CLASS_TRANSIENT },
};

/* r->aux: the last model.call_failure's errorCode, as a kind. */
enum { FAIL_NONE, FAIL_QUOTA, FAIL_USAGE };

/* A tool was denied and nobody can approve it: the run is blocked. */
static void
denied(struct agent_run *r, const char *tool)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "permission to use %s was denied and "
	    "nobody can approve it in a headless run (--allow-all-tools, "
	    "--allow-tool)", tool != NULL ? tool : "a tool");
	run_client_stop(r, "blocked", CB_CLASS_RECOVERABLE, msg);
}

/* A model call failed: its kind, and the reset time its body gives
 * ("resets_at": epoch seconds, "resets_in_seconds"). */
static void
call_failure(struct agent_run *r)
{
	struct retry_hint h;

	r->aux = is(r, ERR_CODE, "insufficient_quota") ||
	    is(r, ERR_TYPE, "insufficient_quota") ? FAIL_QUOTA :
	    is(r, ERR_CODE, "usage_limit_reached") ||
	    is(r, ERR_TYPE, "usage_limit_reached") ? FAIL_USAGE : FAIL_NONE;
	/* epoch seconds and delays do not depend on the time it is now */
	if (retry_hint(sv(r, ERR_BODY), 0, &h) == 1) {
		r->hint.at = h.at > 1e9 ? h.at : 0;
		r->hint.after = h.after;
	}
}

static void
session_error(struct agent_run *r)
{
	run_error(r, sv(r, MSG) != NULL ? sv(r, MSG) : "session.error",
	    sn_status(r, STATUS));
	if (is(r, ERR_TYPE, "authentication")) {
		r->type = "auth";
		r->cls = CB_CLASS_FATAL;
	} else if (is(r, ERR_TYPE, "rate_limit")) {
		r->type = r->aux == FAIL_QUOTA ? "billing" :
		    r->aux == FAIL_USAGE ? "usage_limit" : "rate_limited";
		r->cls = r->aux == FAIL_QUOTA ? CB_CLASS_FATAL :
		    CB_CLASS_TRANSIENT;
	}
}

/*
 * A shell result ends with Copilot's own "<shellId: N completed with exit
 * code X>", N counting its shells: the tool's output is the rest, and so
 * the same command with the same output is the same result.
 */
static unsigned long long
result_digest(struct agent_run *r)
{
	const char *s = sv(r, RESULT), *p;
	unsigned long long h = JS_DIGEST0;
	size_t n;

	if (s == NULL)
		return h;
	if (r->slot[RESULT].cut || (p = strstr(s, "<shellId: ")) == NULL)
		return r->slot[RESULT].digest;
	h = js_digest(h, s, (size_t)(p - s));
	for (p += 10; *p >= '0' && *p <= '9'; p++)
		;
	n = strlen(p);
	return js_digest(h, p, n);
}

static int
event(struct agent_run *r)
{
	const char *type = sv(r, TYPE);

	if (type == NULL)
		return 0;
	if (strcmp(type, "session.error") == 0)
		session_error(r);
	else if (strcmp(type, "model.call_failure") == 0)
		call_failure(r);
	else if (strcmp(type, "assistant.turn_start") == 0) {
		run_progress(r);
		run_model_call(r);
	} else if (strcmp(type, "assistant.message") == 0) {
		run_progress(r);
		run_event_text(r);
	} else if (strcmp(type, "tool.execution_start") == 0) {
		run_progress(r);
		run_tool(r, sv(r, CALL_ID), sv(r, TOOL), ARGS);
	} else if (strcmp(type, "tool.execution_complete") == 0) {
		run_tool_digest(r, sv(r, CALL_ID), result_digest(r),
		    sb(r, SUCCESS) == 0);
		if (is(r, TOOL_ERR, "denied"))
			denied(r, r->tool[0] != '\0' ? r->tool : NULL);
	} else if (strcmp(type, "result") == 0) {
		run_session(r, sv(r, SESSION));
		if (sn(r, EXIT, 0) == 0)
			run_ok(r);
		else if (!r->failed)
			run_error(r, "copilot exited with its result's exitCode",
			    0);
		run_final(r);
	} else if (strncmp(type, "session.", 8) != 0 &&
	    strncmp(type, "assistant.", 10) != 0 &&
	    strncmp(type, "model.", 6) != 0 && strncmp(type, "tool.", 5) != 0 &&
	    strncmp(type, "user.", 5) != 0)
		return 0;
	return 1;
}

/* Text mode: the session from the footer, the error before it. */
static void
finish(struct agent_run *r, const struct agent_end *e)
{
	const char *p, *q;
	char buf[MSG_LEN];
	size_t n;

	if (r->json)
		return;
	for (n = 0; r->own != NULL && n < NELEM(denied_text); n++)
		if (strstr(r->own, denied_text[n]) != NULL) {
			denied(r, NULL);
			break;
		}
	if (e->err == NULL)
		return;
	if ((p = strstr(e->err, "copilot --resume=")) != NULL) {
		n = strcspn(p + 17, " \n");
		if (n > 0 && n < sizeof(buf)) {
			memcpy(buf, p + 17, n);
			buf[n] = '\0';
			run_session(r, buf);
		}
	}
	if (e->exit_code <= 0)
		return;
	for (p = e->err; *p == '\n' || *p == ' '; p++)
		;
	q = strstr(p, "\n\n");
	n = q != NULL ? (size_t)(q - p) : strlen(p);
	if (n == 0 || strncmp(p, "Changes ", 8) == 0)
		return;
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	run_error(r, buf, 0);
}

/* assistant.message names its type before its content. */
static int
answer(const struct agent_run *r)
{
	return is(r, TYPE, "assistant.message");
}

static const char *const commands[] = { "copilot", NULL };
static const char *const packages[] = { "@github/copilot", NULL };

const struct agent agent_copilot = {
	"copilot", commands, packages, fields, NELEM(fields), event, NULL,
	finish, rules, NELEM(rules), answer
};
