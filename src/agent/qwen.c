/* SPDX-License-Identifier: ISC */
/*
 * Qwen Code (`qwen -p`): its text, --output-format json (one array of
 * events on one line) and stream-json (the same events as JSON Lines),
 * shaped like Claude Code's.
 *
 * An API error does not make the run fail: the result says is_error
 * false, subtype "success", exit 0, and its text is "[API Error: 401
 * ...]" (or ends with one, after a stream that broke off).  Such a result
 * is a failure here, with the status that leads the message.  is_error
 * true comes with error.message (a missing key).  Text mode prints the
 * same "[API Error: ...]" line on stderr and exits 1.
 */
#include <string.h>

#include "adapter.h"

enum { TYPE, SUBTYPE, IS_ERROR, SESSION, ERROR_MSG, TURNS, IN, OUT, CREAD,
	BLOCK, TOOL, INPUT, MSG_ID, CALL_ID, RES_ID, RESULT, RES_ERROR };

static const struct field fields[] = {
	{ "type", TYPE, K_STR },
	{ "subtype", SUBTYPE, K_STR },
	{ "is_error", IS_ERROR, K_BOOL },
	{ "session_id", SESSION, K_STR },
	{ "error.message", ERROR_MSG, K_STR },
	{ "num_turns", TURNS, K_NUM },
	{ "result", -1, K_TEXT },
	{ "usage.input_tokens", IN, K_NUM },
	{ "usage.output_tokens", OUT, K_NUM },
	{ "usage.cache_read_input_tokens", CREAD, K_NUM },
	{ "message.usage.input_tokens", IN, K_NUM },
	{ "message.usage.output_tokens", OUT, K_NUM },
	{ "message.usage.cache_read_input_tokens", CREAD, K_NUM },
	{ "message.content.text", -1, K_TEXT },
	{ "message.content.type", BLOCK, K_STR },
	{ "message.content.name", TOOL, K_STR },
	{ "message.content.input", INPUT, K_RAW },
	{ "message.content.id", CALL_ID, K_STR },
	{ "message.content.tool_use_id", RES_ID, K_STR },
	{ "message.content.content", RESULT, K_RAW },
	{ "message.content.is_error", RES_ERROR, K_BOOL },
	{ "message.id", MSG_ID, K_STR },
};

static void
usage(struct agent_run *r, int total)
{
	struct agent_usage u;

	usage_unknown(&u);
	u.input_tokens = sn_count(r, IN);
	u.output_tokens = sn_count(r, OUT);
	u.cache_read_tokens = sn_count(r, CREAD);
	/* its input counts the cached tokens too, as OpenAI's does */
	if (u.input_tokens >= 0 && u.cache_read_tokens > 0)
		u.input_tokens = u.input_tokens > u.cache_read_tokens ?
		    u.input_tokens - u.cache_read_tokens : 0;
	if (u.input_tokens < 0 && u.output_tokens < 0)
		return;
	if (total) {
		u.turns = sn_count(r, TURNS);
		run_total_usage(r, &u);
	} else
		run_step_usage(r, sv(r, MSG_ID), &u);
}

static int
event(struct agent_run *r)
{
	const char *type = sv(r, TYPE), *text;

	if (type == NULL) {
		/* json: an error object on stderr (a cancelled run) */
		if (sv(r, ERROR_MSG) == NULL)
			return 0;
		run_error(r, sv(r, ERROR_MSG), 0);
		return 1;
	}
	run_session(r, sv(r, SESSION));
	if (strcmp(type, "assistant") == 0) {
		text = event_text(r);
		if (!api_error(r, text)) {
			run_progress(r);
			run_event_text(r);
		}
		usage(r, 0);
	} else if (strcmp(type, "user") == 0) {
		run_progress(r);
	} else if (strcmp(type, "result") == 0) {
		text = event_text(r);
		if (sb(r, IS_ERROR) == 1)
			run_error(r, sv(r, ERROR_MSG) != NULL ? sv(r, ERROR_MSG) :
			    *text != '\0' ? text : sv(r, SUBTYPE) != NULL ?
			    sv(r, SUBTYPE) : "is_error", 0);
		else if (!api_error(r, text)) {
			run_ok(r);
			run_event_text(r);
		}
		usage(r, 1);
		run_final(r);
	} else if (strcmp(type, "system") != 0)
		return 0;
	return 1;
}

static const struct agent_rule rules[] = {
	{ "free tier was discontinued|run /auth", "auth", CB_CLASS_FATAL },
};

static void
object(struct agent_run *r, const char *path)
{
	static const struct block_slots b = {
		BLOCK, CALL_ID, TOOL, INPUT, RES_ID, RESULT, RES_ERROR
	};

	run_block(r, path, &b);
}

/*
 * Its exit codes are Gemini CLI's.  Text mode: the "[API Error: NNN ...]"
 * line on stderr, for its status.  Retries are silent, but for the
 * heartbeat of QWEN_CODE_UNATTENDED_RETRY.
 */
static void
finish(struct agent_run *r, const struct agent_end *e)
{
	const char *line;
	char buf[MSG_LEN];
	size_t n;

	if (e->exit_code > 0)
		fatal_exit(r, e->exit_code);
	if (e->err == NULL)
		return;
	/* Its own loop detection halted the run (exit 0): a loop. */
	if ((line = strstr(e->err, "Loop detection halted the run")) != NULL) {
		n = strcspn(line, "\n");
		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, line, n);
		buf[n] = '\0';
		run_client_stop(r, "loop", CB_CLASS_RECOVERABLE, buf);
		return;
	}
	if (e->timed_out) {
		n = last_line_of(e->err, &line);
		if (n > 0 && n < sizeof(buf) &&
		    strstr(line, "Waiting for API capacity") != NULL) {
			memcpy(buf, line, n);
			buf[n] = '\0';
			run_retrying(r, buf, "rate_limited");
		} else
			run_read(r, e->err, e->err_len);
		return;
	}
	if (r->json || r->failed || e->exit_code <= 0)
		return;
	for (line = e->err; line != NULL && strncmp(line, "[API Error: ", 12);
	    line = (line = strchr(line, '\n')) != NULL ? line + 1 : NULL)
		;
	if (line == NULL)
		return;
	n = strcspn(line, "\n");
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, line, n);
	buf[n] = '\0';
	api_error(r, buf);
}

/* An assistant event says so before its text. */
static int
answer(const struct agent_run *r)
{
	return is(r, TYPE, "assistant");
}

static const char *const commands[] = { "qwen", NULL };
static const char *const packages[] = { "@qwen-code/qwen-code", NULL };

const struct agent agent_qwen = {
	"qwen", commands, packages, fields, NELEM(fields), event, object,
	finish, rules, NELEM(rules), answer
};
