/* SPDX-License-Identifier: ISC */
/*
 * Clients an operator describes in the config file (SPEC §10, "agents"):
 * where in the client's JSON its result, error, HTTP status, session,
 * usage and tool calls are, and its own classifier rows -- knowledge, not
 * code.  Each description becomes an adapter row like the built-in ones
 * (agents.c), whose fields are the described paths, each into the slot of
 * its role, and whose event function reads the roles:
 *
 *   session              the session id, from any event
 *   tool.name/.input     a tool call (tool.id names it for its result)
 *   tool.result          a tool's result (tool.result_id, tool.is_error)
 *   error                an error event's message (status: its HTTP
 *                        status); the run failed unless a later result
 *                        says otherwise
 *   result / is_error    an event with either is the client's final
 *                        result: is_error true fails the run (result or
 *                        error its message), else the result text is the
 *                        answer, where the status block is read
 *   usage.*              the figures of the event: the run's totals in
 *                        the result event, else a step's
 *
 * "jsonl" is one event a line, "json" one object; "text" reads no JSON:
 * the exit status and the rows decide, as for any known agent.
 */
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "judge.h"

enum role { D_IS_ERROR, D_ERROR, D_STATUS, D_SESSION, D_IN, D_OUT, D_CREAD,
	D_CWRITE, D_COST, D_TURNS, D_TOOL_NAME, D_TOOL_INPUT, D_TOOL_ID,
	D_TOOL_RESULT, D_TOOL_RESULT_ID, D_TOOL_IS_ERROR, D_ROLES };

#define DESCRIBED_MAX	16	/* clients a config may describe */

static struct agent *described[DESCRIBED_MAX];
static const char *const no_packages[] = { NULL };
static size_t n_described;

static void
usage(struct agent_run *r, int total)
{
	struct agent_usage u;

	usage_unknown(&u);
	u.input_tokens = sn_count(r, D_IN);
	u.output_tokens = sn_count(r, D_OUT);
	u.cache_read_tokens = sn_count(r, D_CREAD);
	u.cache_write_tokens = sn_count(r, D_CWRITE);
	u.cost_usd = sn_cost(r, D_COST);
	u.turns = sn_count(r, D_TURNS);
	if (u.input_tokens < 0 && u.output_tokens < 0 && u.cost_usd < 0 &&
	    u.turns < 0)
		return;
	if (total)
		run_total_usage(r, &u);
	else
		run_step_usage(r, NULL, &u);
}

static int
event(struct agent_run *r)
{
	const char *text, *err = sv(r, D_ERROR);
	int result = sb(r, D_IS_ERROR) >= 0 || r->text_seen, any = result;

	if (sv(r, D_SESSION) != NULL) {
		run_session(r, sv(r, D_SESSION));
		any = 1;
	}
	if (sv(r, D_TOOL_NAME) != NULL) {
		run_progress(r);
		run_tool(r, sv(r, D_TOOL_ID), sv(r, D_TOOL_NAME), D_TOOL_INPUT);
		any = 1;
	}
	if (r->slot[D_TOOL_RESULT].set) {
		run_tool_result(r, sv(r, D_TOOL_RESULT_ID) != NULL ?
		    sv(r, D_TOOL_RESULT_ID) : sv(r, D_TOOL_ID), D_TOOL_RESULT,
		    sb(r, D_TOOL_IS_ERROR) == 1);
		any = 1;
	}
	usage(r, result);
	if (err != NULL) {
		run_error(r, err, sn_status(r, D_STATUS));
		any = 1;
	}
	if (!result)
		return any;
	text = event_text(r);
	if (sb(r, D_IS_ERROR) == 1)
		run_error(r, *text != '\0' ? text : err != NULL ? err :
		    "is_error", sn_status(r, D_STATUS));
	else if (err == NULL) {
		run_ok(r);
		run_event_text(r);
	}
	run_final(r);
	return 1;
}

/* The first line of p[0..n) one of the description's own rows matches
 * (a test runner's line never does), into line; 1 if any. */
static int
own_row(struct agent_run *r, const char *p, size_t n, char *line,
    size_t len)
{
	const char *e, *end = p + n, *type;
	enum cb_class cls;
	size_t i, k;

	for (; p < end; p = e + 1) {
		if ((e = memchr(p, '\n', (size_t)(end - p))) == NULL)
			e = end;
		k = (size_t)(e - p) < len - 1 ? (size_t)(e - p) : len - 1;
		memcpy(line, p, k);
		line[k] = '\0';
		if (k == 0 || message_type(r->rules, r->n_rules, line, &cls,
		    &type) != 1)
			continue;
		for (i = 0; i < r->n_rules; i++)
			if (type == r->rules[i].type)
				return 1;
	}
	return 0;
}

/*
 * format text: a client that exits 0 after its own error (aider does,
 * with --message) failed all the same when one of the description's rows
 * matches a line of its stderr or of its stdout; the rows know the
 * client's words, the exit status does not.
 */
static void
finish(struct agent_run *r, const struct agent_end *e)
{
	char line[1024];

	if (e->exit_code != 0 || r->failed || r->n_rules == 0)
		return;
	if ((e->err != NULL && own_row(r, e->err, e->err_len, line,
	    sizeof(line))) || (r->own != NULL && own_row(r, r->own,
	    r->own_len, line, sizeof(line))))
		run_error(r, line, 0);
}

/* The result text is the answer. */
static int
answer(const struct agent_run *r)
{
	return 1;
}

static char *
dup_or_null(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

static void
described_free(struct agent *a)
{
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->n_fields; i++)
		free((char *)a->fields[i].path);
	free((void *)a->fields);
	for (i = 0; a->commands != NULL && a->commands[i] != NULL; i++)
		free((char *)a->commands[i]);
	free((void *)a->commands);
	for (i = 0; i < a->n_rules; i++) {
		free((char *)a->rules[i].re);
		free((char *)a->rules[i].type);
	}
	free((void *)a->rules);
	free((char *)a->name);
	free(a);
}

int
agent_describe(const struct agent_desc *d, char *err, size_t errlen)
{
	const char *path[D_ROLES + 1];
	static const enum slot_kind kind[D_ROLES + 1] = {
		K_BOOL, K_STR, K_NUM, K_STR, K_NUM, K_NUM, K_NUM, K_NUM, K_NUM,
		K_NUM, K_STR, K_RAW, K_STR, K_RAW, K_STR, K_BOOL, K_TEXT
	};
	struct agent *a = NULL;
	struct field *f = NULL;
	struct agent_rule *rules = NULL;
	struct rule probe;
	const char **cmds = NULL;
	char why[256];
	size_t i, n = 0, k, slot;

	/* A later file's description of a name replaces the earlier (the
	 * work tree's after the user's); a client cbexec knows stays. */
	for (slot = 0; slot < n_described; slot++)
		if (strcmp(described[slot]->name, d->name) == 0)
			break;
	if (slot == n_described && agent_by_name(d->name) != NULL) {
		snprintf(err, errlen, "'%s' is a client cbexec knows: give "
		    "the description another name", d->name);
		return -1;
	}
	if (slot == DESCRIBED_MAX) {
		snprintf(err, errlen, "at most %d agents may be described",
		    DESCRIBED_MAX);
		return -1;
	}
	path[D_IS_ERROR] = d->is_error;
	path[D_ERROR] = d->error;
	path[D_STATUS] = d->status;
	path[D_SESSION] = d->session;
	path[D_IN] = d->usage.input;
	path[D_OUT] = d->usage.output;
	path[D_CREAD] = d->usage.cache_read;
	path[D_CWRITE] = d->usage.cache_write;
	path[D_COST] = d->usage.cost;
	path[D_TURNS] = d->usage.turns;
	path[D_TOOL_NAME] = d->tool.name;
	path[D_TOOL_INPUT] = d->tool.input;
	path[D_TOOL_ID] = d->tool.id;
	path[D_TOOL_RESULT] = d->tool.result;
	path[D_TOOL_RESULT_ID] = d->tool.result_id;
	path[D_TOOL_IS_ERROR] = d->tool.is_error;
	path[D_ROLES] = d->result;
	if ((a = calloc(1, sizeof(*a))) == NULL ||
	    (f = calloc(D_ROLES + 1, sizeof(*f))) == NULL ||
	    (cmds = calloc(d->n_commands + 1, sizeof(*cmds))) == NULL ||
	    (d->n_rules > 0 && (rules = calloc(d->n_rules,
	    sizeof(*rules))) == NULL))
		goto oom;
	a->fields = f;
	a->commands = (const char *const *)cmds;
	a->rules = rules;
	/* text: no field, so no line is ever the client's JSON */
	for (i = 0; d->format != AGENT_TEXT && i <= D_ROLES; i++) {
		if (path[i] == NULL)
			continue;
		for (k = 0; k < n; k++)
			if (strcmp(f[k].path, path[i]) == 0) {
				snprintf(err, errlen, "agent '%s': the path '%s' "
				    "is given twice", d->name, path[i]);
				described_free(a);
				return -1;
			}
		if ((f[n].path = strdup(path[i])) == NULL)
			goto oom;
		f[n].slot = i == D_ROLES ? -1 : (int)i;
		f[n++].kind = kind[i];
		a->n_fields = n;
	}
	for (i = 0; i < d->n_commands; i++)
		if ((cmds[i] = strdup(d->commands[i])) == NULL)
			goto oom;
	for (i = 0; i < d->n_rules; i++) {
		/* a row that would not compile is refused here, named, not
		 * dropped at the run */
		if (rule_init(&probe, d->rules[i].match, RULE_STDERR, NULL, 0,
		    d->rules[i].cls, d->rules[i].type, why,
		    sizeof(why)) == -1) {
			snprintf(err, errlen, "rules[%zu]: %s", i, why);
			described_free(a);
			return -1;
		}
		rule_free(&probe);
		rules[i].cls = d->rules[i].cls;
		if ((rules[i].re = dup_or_null(d->rules[i].match)) == NULL ||
		    (rules[i].type = dup_or_null(d->rules[i].type)) == NULL)
			goto oom;
		a->n_rules = i + 1;
	}
	if ((a->name = strdup(d->name)) == NULL)
		goto oom;
	a->packages = no_packages;
	a->event = event;
	a->answer = answer;
	if (d->format == AGENT_TEXT)
		a->finish = finish;
	if (slot < n_described)
		described_free(described[slot]);
	else
		n_described++;
	described[slot] = a;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	described_free(a);
	return -1;
}

const struct agent *
agent_described(size_t i)
{
	return i < n_described ? described[i] : NULL;
}

void
agent_forget(void)
{
	while (n_described > 0)
		described_free(described[--n_described]);
}
