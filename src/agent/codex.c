/* SPDX-License-Identifier: ISC */
/*
 * Codex CLI (`codex exec`): its plain output and `exec --json` (JSON
 * Lines).
 *
 * Plain: the answer on stdout, everything else on stderr, errors as
 * "ERROR: ..." lines the classifier reads there.  --json: thread.started
 * names the thread to resume, item.* carry the answer (agent_message) and
 * the commands it runs, turn.completed its usage, and a failure is an
 * error event and a turn.failed with the message.  While Codex retries it
 * says "Reconnecting... 2/5 (<why>)" (an error event, or an ERROR line),
 * and with its default settings it waits for the network that way
 * forever: a run that hits --timeout there failed of <why>.  "Quota
 * exceeded" from OpenAI means the account is out of money.
 */
#include <string.h>

#include "adapter.h"

enum { TYPE, THREAD, MESSAGE, ERROR_MSG, ITEM_TYPE, COMMAND, IN, CACHED,
	OUT, ITEM_ID, OUTPUT, EXIT, ITEM_STATUS };

static const struct field fields[] = {
	{ "type", TYPE, K_STR },
	{ "thread_id", THREAD, K_STR },
	{ "message", MESSAGE, K_STR },
	{ "error.message", ERROR_MSG, K_STR },
	{ "item.type", ITEM_TYPE, K_STR },
	{ "item.text", -1, K_TEXT },
	{ "item.command", COMMAND, K_RAW },
	{ "item.id", ITEM_ID, K_STR },
	{ "item.aggregated_output", OUTPUT, K_RAW },
	{ "item.exit_code", EXIT, K_NUM },
	{ "item.status", ITEM_STATUS, K_STR },
	{ "usage.input_tokens", IN, K_NUM },
	{ "usage.cached_input_tokens", CACHED, K_NUM },
	{ "usage.output_tokens", OUT, K_NUM },
};

static const struct agent_rule rules[] = {
	{ "quota exceeded", "billing", CB_CLASS_FATAL },
	{ "unexpected status 403", "auth", CB_CLASS_FATAL },
};

static int
reconnecting(const char *msg)
{
	return strncmp(msg, "Reconnecting...", 15) == 0;
}

/*
 * Codex counts no turns (one turn.completed per exec): each model call is
 * the items it makes, up to the results of its commands.  aux: the model
 * is talking (its items came since the last command's result).
 */
static void
model_call(struct agent_run *r, const char *type)
{
	int tool = is(r, ITEM_TYPE, "command_execution") ||
	    is(r, ITEM_TYPE, "file_change") || is(r, ITEM_TYPE, "mcp_tool_call")
	    || is(r, ITEM_TYPE, "web_search");

	if (strcmp(type, "item.completed") == 0 && tool) {
		r->aux = 0;
		return;
	}
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

	if (type == NULL)
		return 0;
	if (strcmp(type, "thread.started") == 0) {
		run_session(r, sv(r, THREAD));
	} else if (strcmp(type, "error") == 0) {
		if ((msg = sv(r, MESSAGE)) != NULL && reconnecting(msg))
			run_retrying(r, msg, NULL);
		else if (msg != NULL)
			run_error(r, msg, 0);
	} else if (strcmp(type, "turn.failed") == 0) {
		run_error(r, sv(r, ERROR_MSG), 0);
		run_final(r);
	} else if (strcmp(type, "turn.completed") == 0) {
		run_ok(r);
		usage_unknown(&u);
		u.input_tokens = sn_count(r, IN);
		u.output_tokens = sn_count(r, OUT);
		u.cache_read_tokens = sn_count(r, CACHED);
		/* its input counts the cached tokens too */
		if (u.input_tokens >= 0 && u.cache_read_tokens > 0)
			u.input_tokens = u.input_tokens > u.cache_read_tokens ?
			    u.input_tokens - u.cache_read_tokens : 0;
		/* the usage of this turn, the run's whole when it is one */
		run_step_usage(r, NULL, &u);
		run_final(r);
	} else if (strncmp(type, "item.", 5) == 0) {
		run_progress(r);
		model_call(r, type);
		if (strcmp(type, "item.completed") == 0 &&
		    is(r, ITEM_TYPE, "agent_message"))
			run_event_text(r);
		if (strcmp(type, "item.started") == 0 &&
		    is(r, ITEM_TYPE, "command_execution"))
			run_tool(r, sv(r, ITEM_ID), "command_execution",
			    COMMAND);
		if (strcmp(type, "item.completed") == 0 &&
		    is(r, ITEM_TYPE, "command_execution"))
			run_tool_result(r, sv(r, ITEM_ID), OUTPUT,
			    sn(r, EXIT, 0) != 0 || is(r, ITEM_STATUS, "failed"));
	} else if (strcmp(type, "turn.started") != 0)
		return 0;
	return 1;
}

/*
 * Plain output: the last "ERROR: " line is the error (its retries come
 * before it); a run cut short while "ERROR: Reconnecting..." was the last
 * thing Codex said was retrying.
 */
static void
finish(struct agent_run *r, const struct agent_end *e)
{
	char buf[MSG_LEN];
	const char *p, *line = NULL;
	size_t n;

	if (r->json || e->err == NULL || e->exit_code == 0)
		return;
	for (p = e->err; p != NULL; p = (p = strchr(p, '\n')) != NULL ?
	    p + 1 : NULL)
		if (strncmp(p, "ERROR: ", 7) == 0)
			line = p + 7;
	if (line == NULL)
		return;
	if ((n = strcspn(line, "\n")) >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, line, n);
	buf[n] = '\0';
	if (reconnecting(buf)) {
		if (e->timed_out)
			run_retrying(r, buf, NULL);
	} else if (!e->timed_out)
		run_error(r, buf, 0);
}

/* item.completed names the item's type before its text. */
static int
answer(const struct agent_run *r)
{
	return is(r, TYPE, "item.completed") && is(r, ITEM_TYPE, "agent_message");
}

static const char *const commands[] = { "codex", NULL };
static const char *const packages[] = { "@openai/codex", NULL };

const struct agent agent_codex = {
	"codex", commands, packages, fields, NELEM(fields), event, NULL,
	finish, rules, NELEM(rules), answer
};
