/* SPDX-License-Identifier: ISC */
/*
 * Claude Code (`claude -p`): its text, --output-format json (one result
 * object) and stream-json (JSON Lines) output.
 *
 * Everything goes to stdout, errors included.  The result object decides:
 * an API error comes back as subtype "success" with is_error true, the
 * HTTP status in api_error_status, the message in result, and a
 * subscription usage limit as api_error "usage_limit_reached".  The stream
 * adds system/api_retry lines before each retry of a request (which a
 * timeout may cut short), a rate_limit_event whose status "rejected"
 * carries the limit's reset time as epoch seconds (resetsAt), a synthetic
 * assistant message with the error when a request finally failed, and
 * tool_use blocks.  In text mode the error is the line on stdout, which
 * the classifier reads since the agent is known.  Its own turn cap
 * (--max-turns) ends with subtype "error_max_turns" and the words in
 * "errors": type turn_limit, as Gemini's exit 53.
 */
#include <stdio.h>
#include <string.h>

#include "adapter.h"

enum {
	TYPE, SUBTYPE, IS_ERROR, STATUS, API_ERROR, ERROR, SESSION, TURNS,
	COST, IN, OUT, CREAD, CWRITE, RL_STATUS, RL_RESETS, DELAY, ERR_STATUS,
	ATTEMPT, MAX_RETRIES, BLOCK, TOOL, INPUT, SYNTHETIC, MSG_ID, CALL_ID,
	RES_ID, RESULT, RES_ERROR, DENIED, ERRORS
};

static const struct field fields[] = {
	{ "type", TYPE, K_STR },
	{ "subtype", SUBTYPE, K_STR },
	{ "is_error", IS_ERROR, K_BOOL },
	{ "api_error_status", STATUS, K_NUM },
	{ "api_error", API_ERROR, K_STR },
	{ "error", ERROR, K_STR },
	{ "session_id", SESSION, K_STR },
	{ "num_turns", TURNS, K_NUM },
	{ "total_cost_usd", COST, K_NUM },
	{ "usage.input_tokens", IN, K_NUM },
	{ "usage.output_tokens", OUT, K_NUM },
	{ "usage.cache_read_input_tokens", CREAD, K_NUM },
	{ "usage.cache_creation_input_tokens", CWRITE, K_NUM },
	{ "message.usage.input_tokens", IN, K_NUM },
	{ "message.usage.output_tokens", OUT, K_NUM },
	{ "message.usage.cache_read_input_tokens", CREAD, K_NUM },
	{ "message.usage.cache_creation_input_tokens", CWRITE, K_NUM },
	{ "rate_limit_info.status", RL_STATUS, K_STR },
	{ "rate_limit_info.resetsAt", RL_RESETS, K_NUM },
	{ "retry_delay_ms", DELAY, K_NUM },
	{ "error_status", ERR_STATUS, K_NUM },
	{ "attempt", ATTEMPT, K_NUM },
	{ "max_retries", MAX_RETRIES, K_NUM },
	{ "result", -1, K_TEXT },
	{ "message.content.text", -1, K_TEXT },
	{ "message.content.type", BLOCK, K_STR },
	{ "message.content.name", TOOL, K_STR },
	{ "message.content.input", INPUT, K_RAW },
	{ "message.content.id", CALL_ID, K_STR },
	{ "message.content.tool_use_id", RES_ID, K_STR },
	{ "message.content.content", RESULT, K_RAW },
	{ "message.content.is_error", RES_ERROR, K_BOOL },
	{ "permission_denials.tool_name", DENIED, K_STR },
	{ "is_api_error_message", SYNTHETIC, K_BOOL },
	{ "message.id", MSG_ID, K_STR },
	{ "errors", ERRORS, K_STR },
};

/*
 * Its own words for its own stops (text mode prints them as "Error: ..."
 * on stdout): its turn cap (--max-turns) ends a run short of the work,
 * as Gemini's exit 53 does.
 */
static const struct agent_rule rules[] = {
	{ "reached max(imum number of)? turns", "turn_limit",
	    CB_CLASS_RECOVERABLE },
};

/* The transient type of an api_retry line, or NULL. */
static const char *
retry_type(const char *error, int status)
{
	if (error == NULL)
		return NULL;
	if (strcmp(error, "overloaded") == 0)
		return "overloaded";
	if (strcmp(error, "rate_limit") == 0)
		return "rate_limited";
	if (strcmp(error, "server_error") == 0)
		return status == 529 || status == 503 ? "overloaded" :
		    "server_error";
	/* no HTTP status: the connection itself failed */
	if (strcmp(error, "unknown") == 0 && status == 0)
		return "network";
	return NULL;
}

static void
usage(struct agent_run *r, int total)
{
	struct agent_usage u;

	usage_unknown(&u);
	u.input_tokens = sn_count(r, IN);
	u.output_tokens = sn_count(r, OUT);
	u.cache_read_tokens = sn_count(r, CREAD);
	u.cache_write_tokens = sn_count(r, CWRITE);
	if (total) {
		u.cost_usd = sn_cost(r, COST);
		u.turns = sn_count(r, TURNS);
	}
	if (u.input_tokens < 0 && u.output_tokens < 0 && u.cost_usd < 0)
		return;
	if (total)
		run_total_usage(r, &u);
	else
		/* each content block of a message repeats its usage */
		run_step_usage(r, sv(r, MSG_ID), &u);
}

static void
api_retry(struct agent_run *r)
{
	int status = sn_status(r, ERR_STATUS);
	const char *error = sv(r, ERROR);
	char msg[256], http[32] = "";

	if (status > 0)
		snprintf(http, sizeof(http), " (HTTP %d)", status);
	snprintf(msg, sizeof(msg), "API retry %.0f of %.0f after %s%s",
	    sn(r, ATTEMPT, 0), sn(r, MAX_RETRIES, 0),
	    error != NULL ? error : "an error", http);
	run_retrying(r, msg, retry_type(error, status));
	if (sn(r, DELAY, 0) > 0)
		r->hint.after = sn(r, DELAY, 0) / 1000;
}

static void
result(struct agent_run *r)
{
	const char *text = event_text(r), *sub = sv(r, SUBTYPE);
	char msg[256];

	if (sb(r, IS_ERROR) == 1 || (sub != NULL &&
	    strncmp(sub, "error_", 6) == 0)) {
		/* an error with no text, as error_max_turns: what its
		 * errors say, else its subtype */
		run_error(r, *text != '\0' ? text : sv(r, ERRORS) != NULL ?
		    sv(r, ERRORS) : sub != NULL ? sub : "is_error",
		    sn_status(r, STATUS));
		if (is(r, API_ERROR, "usage_limit_reached")) {
			r->type = "usage_limit";
			r->cls = CB_CLASS_TRANSIENT;
		} else if (is(r, SUBTYPE, "error_max_turns")) {
			r->type = "turn_limit";
			r->cls = CB_CLASS_RECOVERABLE;
		}
	} else {
		run_ok(r);
		run_event_text(r);
	}
	usage(r, 1);
	/* A tool it was not allowed to use, with nobody to approve it: the
	 * run ended blocked on that, whatever it says. */
	if (sv(r, DENIED) != NULL) {
		snprintf(msg, sizeof(msg), "permission to use %s was denied "
		    "and nobody can approve it in a headless run", sv(r, DENIED));
		run_client_stop(r, "blocked", CB_CLASS_RECOVERABLE, msg);
	}
	run_final(r);
}

static int
event(struct agent_run *r)
{
	const char *type = sv(r, TYPE);

	if (type == NULL)
		return 0;
	run_session(r, sv(r, SESSION));
	if (strcmp(type, "system") == 0) {
		if (is(r, SUBTYPE, "api_retry"))
			api_retry(r);
	} else if (strcmp(type, "rate_limit_event") == 0) {
		/* A limit the subscription hit: it names its reset time. */
		if (is(r, RL_STATUS, "rejected")) {
			r->type = "usage_limit";
			r->cls = CB_CLASS_TRANSIENT;
			if (sn(r, RL_RESETS, 0) > 0)
				r->hint.at = sn(r, RL_RESETS, 0);
		}
	} else if (strcmp(type, "assistant") == 0) {
		if (sb(r, SYNTHETIC) == 1)
			run_error(r, event_text(r), sn_status(r, STATUS));
		else {
			run_progress(r);
			run_event_text(r);
			usage(r, 0);
		}
	} else if (strcmp(type, "user") == 0) {
		run_progress(r);
	} else if (strcmp(type, "result") == 0) {
		result(r);
	} else if (strcmp(type, "stream_event") != 0)
		return 0;
	return 1;
}

/* A content block ended: a tool call or its result goes to the hooks. */
static void
object(struct agent_run *r, const char *path)
{
	static const struct block_slots b = {
		BLOCK, CALL_ID, TOOL, INPUT, RES_ID, RESULT, RES_ERROR
	};

	run_block(r, path, &b);
}

/* An assistant line says so before its text. */
static int
answer(const struct agent_run *r)
{
	return is(r, TYPE, "assistant");
}

static const char *const commands[] = { "claude", NULL };
static const char *const packages[] = { "@anthropic-ai/claude-code", NULL };

const struct agent agent_claude = {
	"claude", commands, packages, fields, NELEM(fields), event, object,
	NULL, rules, NELEM(rules), answer
};
