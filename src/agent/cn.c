/* SPDX-License-Identifier: ISC */
/*
 * Continue's CLI (`cn -p`, npm @continuedev/cli): its text output and
 * --format json.
 *
 * Both report nothing structured on stdout but the answer (with --format
 * json the answer wrapped, or the model's own JSON verbatim: a "status"
 * there is the model's, never cn's verdict).  The exit status decides; a
 * failed run's last line on stderr is cn's own error object,
 * {"status":"error","message":...}, the message being the provider's raw
 * body when it was JSON (its error.type names the kind: the rows read
 * it) or the HTTP client's words ("request to URL failed, reason: connect
 * ECONNREFUSED").  It shows no usage, turns, tool calls or session id.
 */
#include <string.h>

#include "adapter.h"

enum { STATUS, MESSAGE };

static const struct field fields[] = {
	{ "status", STATUS, K_STR },
	{ "message", MESSAGE, K_STR },
};

/* Only its error object on stderr is its own; stdout is the answer. */
static int
event(struct agent_run *r)
{
	if (!r->reading_err)
		return 0;
	if (is(r, STATUS, "error") && sv(r, MESSAGE) != NULL)
		run_error(r, sv(r, MESSAGE), 0);
	return 0;
}

static void
finish(struct agent_run *r, const struct agent_end *e)
{
	if (e->err != NULL && e->exit_code > 0)
		run_read(r, e->err, e->err_len);
}

static const char *const commands[] = { "cn", NULL };
static const char *const packages[] = { "@continuedev/cli", NULL };

const struct agent agent_cn = {
	"cn", commands, packages, fields, NELEM(fields), event, NULL, finish,
	NULL, 0, NULL
};
