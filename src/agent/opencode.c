/* SPDX-License-Identifier: ISC */
/*
 * opencode (`opencode run`): its plain output and --format json (JSON
 * Lines of step_start, text, tool_use, step_finish and error events).
 *
 * Plain: the answer on stdout; a failure is "Error: <message>" on stderr
 * (in colour) and exit 1.  json: an error event carries the provider's
 * message, HTTP status and response headers (retry-after), or names a
 * ProviderAuthError when no key is set; a subscription's usage limit
 * shows only in the anthropic-ratelimit-unified-* headers it carries, with
 * the reset time.  Text parts carry the answer, step_finish the tokens and
 * cost of each step.  Its guard against a tool called over and over
 * ("permission requested: doom_loop", on stderr) fails the run.
 */
#include <string.h>

#include "adapter.h"

enum { TYPE, SESSION, PART_TYPE, TOOL, INPUT, IN, OUT, CREAD, CWRITE, COST,
	ERR_NAME, ERR_MSG, ERR_STATUS, RETRY_AFTER, UNIFIED, UNIFIED_RESET,
	CALL_ID, STATE, OUTPUT, ST_ERROR, REASON, ERR_STR };

static const struct field fields[] = {
	{ "type", TYPE, K_STR },
	{ "sessionID", SESSION, K_STR },
	{ "part.type", PART_TYPE, K_STR },
	{ "part.text", -1, K_TEXT },
	{ "part.tool", TOOL, K_STR },
	{ "part.state.input", INPUT, K_RAW },
	{ "part.callID", CALL_ID, K_STR },
	{ "part.state.status", STATE, K_STR },
	{ "part.state.output", OUTPUT, K_RAW },
	{ "part.state.error", ST_ERROR, K_RAW },
	{ "part.reason", REASON, K_STR },
	{ "error", ERR_STR, K_STR },
	{ "part.tokens.input", IN, K_NUM },
	{ "part.tokens.output", OUT, K_NUM },
	{ "part.tokens.cache.read", CREAD, K_NUM },
	{ "part.tokens.cache.write", CWRITE, K_NUM },
	{ "part.cost", COST, K_NUM },
	{ "error.name", ERR_NAME, K_STR },
	{ "error.data.message", ERR_MSG, K_STR },
	{ "error.data.statusCode", ERR_STATUS, K_NUM },
	{ "error.data.responseHeaders.retry-after", RETRY_AFTER, K_NUM },
	{ "error.data.responseHeaders.anthropic-ratelimit-unified-status",
	    UNIFIED, K_STR },
	{ "error.data.responseHeaders.anthropic-ratelimit-unified-reset",
	    UNIFIED_RESET, K_NUM },
};

/*
 * A permission it asked for in a headless run is auto-rejected, and the
 * run ends (on stderr: "permission requested: bash (make test);
 * auto-rejecting").  For doom_loop -- its own guard against the same tool
 * call over and over -- that is its loop stop; for anything else the run
 * was blocked on an approval nobody could give (SPEC §10).
 */
static void
finish(struct agent_run *r, const struct agent_end *e)
{
	const char *p;
	char buf[MSG_LEN];
	size_t n;

	if (e->err == NULL || (p = strstr(e->err, "permission requested: ")) ==
	    NULL)
		return;
	n = strcspn(p, "\n");
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	if (strncmp(p + 22, "doom_loop", 9) == 0)
		run_client_stop(r, "loop", CB_CLASS_RECOVERABLE, buf);
	else if (strstr(buf, "auto-rejecting") != NULL)
		run_client_stop(r, "blocked", CB_CLASS_RECOVERABLE, buf);
}

/* A step's figures, added to the run's totals. */
static void
step(struct agent_run *r)
{
	struct agent_usage u;

	usage_unknown(&u);
	u.input_tokens = sn_count(r, IN);
	u.output_tokens = sn_count(r, OUT);
	u.cache_read_tokens = sn_count(r, CREAD);
	u.cache_write_tokens = sn_count(r, CWRITE);
	u.cost_usd = sn_cost(r, COST);
	run_step_usage(r, NULL, &u);
}

static int
event(struct agent_run *r)
{
	const char *type = sv(r, TYPE), *msg;

	if (type == NULL)
		return 0;
	run_session(r, sv(r, SESSION));
	if (strcmp(type, "error") == 0) {
		/* Kilo's own verdicts are a plain string */
		msg = sv(r, ERR_MSG) != NULL ? sv(r, ERR_MSG) :
		    sv(r, ERR_NAME) != NULL ? sv(r, ERR_NAME) : sv(r, ERR_STR);
		run_error(r, msg != NULL ? msg : "error",
		    sn_status(r, ERR_STATUS));
		if (is(r, ERR_NAME, "ProviderAuthError")) {
			r->type = "auth";
			r->cls = CB_CLASS_FATAL;
		}
		if (sn(r, RETRY_AFTER, 0) > 0)
			r->hint.after = sn(r, RETRY_AFTER, 0);
		/* A subscription's limit shows only in Anthropic's headers,
		 * with its reset time. */
		if (is(r, UNIFIED, "rejected")) {
			r->type = "usage_limit";
			r->cls = CB_CLASS_TRANSIENT;
			if (sn(r, UNIFIED_RESET, 0) > 0)
				r->hint.at = sn(r, UNIFIED_RESET, 0);
		}
	} else if (strcmp(type, "text") == 0) {
		run_progress(r);
		run_event_text(r);
	} else if (strcmp(type, "tool_use") == 0) {
		run_progress(r);
		run_tool(r, sv(r, CALL_ID), sv(r, TOOL), INPUT);
		/* the part comes when the call is over, its result with it */
		if (is(r, STATE, "completed"))
			run_tool_result(r, sv(r, CALL_ID), OUTPUT, 0);
		else if (is(r, STATE, "error"))
			run_tool_result(r, sv(r, CALL_ID), ST_ERROR, 1);
	} else if (strcmp(type, "step_finish") == 0) {
		run_progress(r);
		step(r);
		/* its last step ends with "stop" (not "tool-calls") */
		if (is(r, REASON, "stop"))
			run_final(r);
	} else if (strcmp(type, "step_start") != 0 &&
	    strcmp(type, "reasoning") != 0)
		return 0;
	return 1;
}

/* A text event says so before its part's text. */
static int
answer(const struct agent_run *r)
{
	return is(r, TYPE, "text");
}

static const char *const commands[] = { "opencode", NULL };
static const char *const packages[] = { "opencode-ai", NULL };

const struct agent agent_opencode = {
	"opencode", commands, packages, fields, NELEM(fields), event, NULL,
	finish, NULL, 0, answer
};

/*
 * Kilo (`kilo run`, npm @kilocode/cli) is a fork of opencode with the same
 * events and the same permission guard; its own verdicts come as a string
 * error ("run ended with an auto-rejected permission; ...").
 */
static const struct agent_rule kilo_rules[] = {
	{ "without an assistant message", "unknown", CB_CLASS_RECOVERABLE },
};
static const char *const kilo_commands[] = { "kilo", "kilocode", NULL };
static const char *const kilo_packages[] = { "@kilocode/cli", NULL };

const struct agent agent_kilo = {
	"kilo", kilo_commands, kilo_packages, fields, NELEM(fields), event,
	NULL, finish, kilo_rules, NELEM(kilo_rules), answer
};
