/* SPDX-License-Identifier: ISC */
/*
 * What cbexec tells people and machines as it runs (SPEC §5, §7): one
 * log line per run and per transition on stderr, operator events, and the
 * matching objects in the --log JSON Lines file; each transition also runs
 * the --on-state-change hook (hook.c).  Quiet mode (verbosity < 0) keeps
 * stderr to transitions into OPEN and the OPEN block, silent mode
 * (verbosity <= -2: -qq, or --record without -v) to nothing; the log
 * always gets every event.  A skip or unskip runs the hook even when it
 * moves no state, and a run refused because its phase or task was
 * skipped says so on one line whatever the verbosity short of silent.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "report.h"
#include "say.h"
#include "core.h"
#include "store.h"

/* " (0.0333 USD, 24380 tokens, 4 turns)": the figures the agent gave. */
static void
usage_words(const struct cb_usage *u, char *buf, size_t len)
{
	long tok = -1;
	int n = 0;

	if (u->input_tokens >= 0 || u->output_tokens >= 0 ||
	    u->cache_tokens >= 0)
		tok = (u->input_tokens > 0 ? u->input_tokens : 0) +
		    (u->output_tokens > 0 ? u->output_tokens : 0) +
		    (u->cache_tokens > 0 ? u->cache_tokens : 0);
	buf[0] = '\0';
	if (u->cost_usd >= 0)
		n += snprintf(buf + n, len - (size_t)n, "%s%g USD",
		    n ? ", " : " (", u->cost_usd);
	if (tok >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "%s%ld tokens",
		    n ? ", " : " (", tok);
	if (u->turns >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "%s%ld turn%s",
		    n ? ", " : " (", u->turns, u->turns == 1 ? "" : "s");
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ")");
}

/* The run's figures in its log object, named as the state's "spend"
 * names them: null where the agent gave none. */
static void
log_usage(cJSON *o, const struct cb_usage *u)
{
#define FIG(k, v) if ((v) >= 0) cJSON_AddNumberToObject(o, k, (double)(v)); \
	else cJSON_AddNullToObject(o, k)
	FIG("cost_usd", u->cost_usd);
	FIG("input_tokens", u->input_tokens);
	FIG("output_tokens", u->output_tokens);
	FIG("cache_tokens", u->cache_tokens);
	FIG("turns", u->turns);
#undef FIG
}

void
report_run(struct reporter *r, const struct run_report *rr)
{
	const struct classification *c = rr->c;
	int failed = c != NULL && c->cls != CB_CLASS_SUCCESS;
	char sb[16], *msg;
	const char *sig = rr->signo > 0 ? sig_name(rr->signo, sb, sizeof(sb)) :
	    NULL;
	cJSON *o;

	if (r->verbosity >= 0) {
		char how[64], tail[32] = "", used[160] = "";
		double secs = rr->duration > 0 ? rr->duration : 0;

		if (rr->stopped)
			snprintf(how, sizeof(how), "was stopped");
		else if (rr->timed_out)
			snprintf(how, sizeof(how), "timed out");
		else if (rr->exit_code >= 0)
			snprintf(how, sizeof(how), "exited %d", rr->exit_code);
		else if (sig != NULL)
			snprintf(how, sizeof(how), "killed by %s", sig);
		else
			snprintf(how, sizeof(how), "did not start");
		if (!failed && r->verbosity > 0)
			snprintf(tail, sizeof(tail), " (%s)",
			    rr->progress ? "progress" : "no progress");
		if (rr->usage != NULL)
			usage_words(rr->usage, used, sizeof(used));
		if (rr->ignored)
			say(r, NULL, "run %ld %s after %.2fs%s: ignored "
			    "(%s)", rr->iteration, how, secs, used,
			    rr->ignored == CB_IGNORED_CLOSED ? "its output "
			    "was closed downstream" : "--ignore-exit-codes");
		else if (failed)
			/* "timeout: ...", never "timeout timeout: ..." */
			say(r, NULL, "run %ld %s after %.2fs%s: %s%s%s%s%s%s",
			    rr->iteration, how, secs, used,
			    class_name(c->cls), strcmp(class_name(c->cls),
			    c->type) != 0 ? " " : "", strcmp(class_name(c->cls),
			    c->type) != 0 ? c->type : "",
			    c->message != NULL ? ": " : "",
			    c->message != NULL ? c->message : "",
			    rr->complete ? " (its status said complete)" : "");
		else
			say(r, NULL, "run %ld %s after %.2fs%s%s%s",
			    rr->iteration, how, secs, used, tail,
			    rr->complete ? ": complete" : "");
	}

	/* The time of its history event, so the log and --history say the
	 * same of it. */
	if ((o = log_new_at(r, "run", rr->at > 0 ? rr->at : -1)) == NULL)
		return;
	cJSON_AddNumberToObject(o, "iteration", rr->iteration);
	/* --record and a killed run have none to tell. */
	if (rr->duration >= 0)
		cJSON_AddNumberToObject(o, "duration", rr->duration);
	else
		cJSON_AddNullToObject(o, "duration");
	/* As a shell and the history have it: 128+N for signal N. */
	if (rr->exit_code >= 0)
		cJSON_AddNumberToObject(o, "exit_code", rr->exit_code);
	else if (rr->signo > 0)
		cJSON_AddNumberToObject(o, "exit_code", 128 + rr->signo);
	else
		cJSON_AddNullToObject(o, "exit_code");
	add_str(o, "signal", sig);
	cJSON_AddBoolToObject(o, "timed_out", rr->timed_out != 0);
	add_str(o, "class", class_name(c != NULL ? c->cls : CB_CLASS_SUCCESS));
	add_str(o, "type", failed ? c->type : "");
	/* An ignored run counted as no error: none to name, as in the
	 * history. */
	add_str(o, "error_hash", failed && !rr->ignored && c->hash[0] != '\0' ?
	    c->hash : NULL);
	/* The log must stay valid UTF-8 whatever the command printed. */
	msg = failed && !rr->ignored && c->message != NULL ?
	    utf8_sanitize(c->message, strlen(c->message)) : NULL;
	add_str(o, "message", msg);
	free(msg);
	cJSON_AddBoolToObject(o, "progress", rr->progress != 0);
	cJSON_AddBoolToObject(o, "complete", rr->complete != 0);
	if (rr->ignored)
		cJSON_AddTrueToObject(o, "ignored");
	if (rr->task != NULL)
		cJSON_AddStringToObject(o, "task", rr->task);
	if (rr->usage != NULL)
		log_usage(o, rr->usage);
	log_put(r, o);
}

void
report_transition(struct reporter *r, const struct cb_transition *t,
    const struct cb_state *before, long iteration)
{
	/* SPEC §4 rule 3 words the first step toward OPEN as a warning. */
	int warn = t->from == CB_CLOSED && t->to == CB_HALF_OPEN &&
	    strncmp(t->reason, "WARNING:", 8) != 0;
	cJSON *o;

	if (r->verbosity >= 0 || (t->to == CB_OPEN && r->verbosity > -2))
		say(r, circuit_color(t->to), "circuit %s -> %s: %s%s",
		    circuit_name(t->from), circuit_name(t->to),
		    warn ? "WARNING: " : "", t->reason);
	if ((o = log_new_at(r, "state_change", t->at > 0 ? t->at : -1)) !=
	    NULL) {
		cJSON_AddNumberToObject(o, "iteration", iteration);
		cJSON_AddStringToObject(o, "from_state", circuit_name(t->from));
		cJSON_AddStringToObject(o, "to_state", circuit_name(t->to));
		cJSON_AddStringToObject(o, "reason", t->reason);
		log_put(r, o);
	}
	if (r->hook != NULL)
		run_hook(r, t, before, iteration);
}

void
report_event(struct reporter *r, const char *event, const char *reason)
{
	int has = reason != NULL && reason[0] != '\0';

	if (r->verbosity >= 0)
		say(r, NULL, "%s%s%s", event, has ? ": " : "",
		    has ? reason : "");
	log_reason(r, event, reason);
}

void
report_act(struct reporter *r, const char *event, const char *reason,
    const char *user, long iteration, double at)
{
	int has = reason != NULL && reason[0] != '\0';
	cJSON *o;

	if (r->verbosity >= 0)
		say(r, NULL, "%s%s%s", event, has ? ": " : "",
		    has ? reason : "");
	if ((o = log_new_at(r, event, at > 0 ? at : -1)) == NULL)
		return;
	cJSON_AddNumberToObject(o, "iteration", (double)iteration);
	add_str(o, "reason", reason);
	add_str(o, "user", user);
	log_put(r, o);
}

void
report_notice(struct reporter *r, const char *event, const char *msg,
    int logged)
{
	if (!logged && r->verbosity > -2) {
		fputs("cbexec: ", stderr);
		text_put(stderr, msg);
		fputc('\n', stderr);
	}
	log_reason(r, event, msg);
}

void
report_skip(struct reporter *r, const char *event,
    const struct cb_result *res, const struct cb_state *before,
    enum cb_circuit state, long iteration, const char *user, double at)
{
	struct cb_transition t;
	int i;

	report_act(r, event, res->why, user, iteration, at);
	for (i = 0; i < res->n; i++)
		report_transition(r, &res->t[i], before, iteration);
	/* An alert hook must hear of a skip: what runs has changed. */
	if (res->n == 0 && r->hook != NULL) {
		t.from = t.to = state;
		snprintf(t.reason, sizeof(t.reason), "%s", res->why);
		run_hook(r, &t, before, iteration);
	}
}

void
report_skipped(struct reporter *r, const struct cb_skip *k,
    const char *unskip_hint, int recorded)
{
	char at[40] = "";
	cJSON *o;

	if (k->at >= 0)
		iso8601(k->at, at, sizeof(at));
	if (r->verbosity > -2)
		say(r, NULL, "%s %s was skipped%s%s%s%s%s%s; %s.%s%s",
		    skip_kind_name(k->kind), k->name, at[0] ? " at " : "", at,
		    k->user != NULL ? " by " : "",
		    k->user != NULL ? k->user : "",
		    k->reason != NULL ? ": " : "",
		    k->reason != NULL ? k->reason : "",
		    recorded ? "result not recorded" : "not running it",
		    unskip_hint != NULL ? " Unskip: " : "",
		    unskip_hint != NULL ? unskip_hint : "");
	if ((o = log_new(r, "skipped")) == NULL)
		return;
	cJSON_AddStringToObject(o, "kind", skip_kind_name(k->kind));
	add_str(o, "name", k->name);
	add_str(o, "at", at[0] ? at : NULL);
	add_str(o, "reason", k->reason);
	add_str(o, "user", k->user);
	log_put(r, o);
}
