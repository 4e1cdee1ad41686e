/* SPDX-License-Identifier: ISC */
/*
 * --status and --history (SPEC §5, §7): a circuit's state as a person reads
 * it, or as JSON for scripts (its view and the state object for --status,
 * an array of events for --history); and --status --all, one line per
 * circuit of the state directory.  --status leads with the run going on,
 * as systemctl status does: its number, since when, the pid and host of
 * its cbexec (or who holds the circuit between runs).
 *
 * --status is a two-column table; "since" is opened_at for an OPEN
 * circuit, else the time of the last state_change event into the current
 * state, shown as a clock time and an age ("19:17Z, 2h13m ago").  The
 * reason row (open_reason when OPEN, else that change's reason) is left
 * out for a CLOSED circuit.  Each counter stands beside the threshold the
 * last run was judged by ("no-progress 2/3"), which the state file keeps;
 * an OPEN circuit says when its cooldown allows the next trial run, or,
 * held by a provider's usage limit, when it retries.  Every skip gets a
 * row with when, who and why, and the task an OPEN circuit is stuck on
 * one too.
 * --history prints one line per event, oldest first, in columns.  On a
 * terminal a timeline comes first: a mark per run, error, state change,
 * reset, trip and skip, coloured by the state the circuit was in at that
 * point (the state before the window is taken from the first change's
 * "from"), wrapped to the terminal's width, each line led by the run
 * number of its first mark; NO_COLOR or TERM=dumb turn the colour off.
 * --status --all is a table like systemctl list-timers: a header, one row
 * per circuit, OPEN first and marked, its columns as wide as their widest
 * value; a column that says "-" in every row is left out, so the name and
 * the reason get its room.  Fitted to a width ($COLUMNS, else a
 * terminal's): the times shorten to ages, then the reason and the name
 * give up columns in turns (fit()), the reason cut at its end, the name in
 * its middle as systemd cuts a unit's ("team-plat…t-07": the end that
 * tells thirty similar names apart stays).  A circuit whose first run is
 * going on (its lock held, no state yet) is a row too.
 * The JSON views speak one vocabulary, "v" (JSON_VOCABULARY): a circuit's
 * view (circuit_view(): the members of a --status --all row, who holds it
 * and the run going on) leads --status --json, followed by the state
 * object itself (SPEC §7, its own names); --history --json gives the
 * state's events as the log has them (a run's error or progress event is
 * a "run", an act's transition a state_change of its own), with the
 * same timestamps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cJSON.h>

#include "core.h"
#include "report.h"
#include "say.h"
#include "store.h"

/* The last transition into state c (a change of state, or a reset or
 * skip that closed the circuit), or NULL. */
static const struct cb_event *
last_change_to(const struct cb_state *s, int c)
{
	size_t i;

	for (i = s->n_history; i-- > 0; )
		if (s->history[i].to == c && s->history[i].from >= 0)
			return &s->history[i];
	return NULL;
}

/* "timeout idle", or the class alone when the type says the same
 * ("timeout", not "timeout timeout"). */
static void
put_class_type(FILE *f, const char *cls, const char *type)
{
	text_put(f, cls);
	if (strcmp(cls, type) != 0) {
		fputc(' ', f);
		text_put(f, type);
	}
}

/* "key: text" with the text escaped. */
#define ROWT(f, key, text) do {						\
	fprintf((f), "%-20s ", (key));					\
	text_put((f), (text));						\
	fputc('\n', (f));						\
} while (0)

/* One row per skip (SPEC §9): "phase GREEN  (at ... by alice: why)". */
static void
put_skips(FILE *f, const struct cb_state *s)
{
	const struct cb_skip *k;
	char ts[40];
	size_t i;

	if (s->stuck_task != NULL) {
		fprintf(f, "%-20s ", "stuck on task:");
		text_put(f, s->stuck_task);
		fputc('\n', f);
	}
	for (i = 0; i < s->n_skips; i++) {
		k = &s->skips[i];
		fprintf(f, "%-20s %s ", i == 0 ? "skipped:" : "",
		    skip_kind_name(k->kind));
		text_put(f, k->name);
		if (k->at >= 0 || k->user != NULL || k->reason != NULL) {
			fputs("  (", f);
			if (k->at >= 0)
				fprintf(f, "at %s", iso8601(k->at, ts,
				    sizeof(ts)));
			if (k->user != NULL) {
				fputs(k->at >= 0 ? " by " : "by ", f);
				text_put(f, k->user);
			}
			if (k->reason != NULL) {
				fputs(k->at >= 0 || k->user != NULL ? ": " :
				    "", f);
				text_put(f, k->reason);
			}
			fputc(')', f);
		}
		fputc('\n', f);
	}
}

/* Since when the circuit is in its state, or -1 when unknown. */
static double
since_of(const struct cb_state *s)
{
	const struct cb_event *e = last_change_to(s, s->state);

	return s->state == CB_OPEN && s->opened_at >= 0 ? s->opened_at :
	    e != NULL ? e->ts : -1;
}

/* When the last run ended: the state's record, else its newest run event
 * (a file written before cbexec kept last_run_at); -1 when none ran. */
static double
last_run_of(const struct cb_state *s)
{
	size_t i;

	if (s->last_run_at >= 0)
		return s->last_run_at;
	for (i = s->n_history; i-- > 0; )
		if (s->history[i].kind == EV_PROGRESS ||
		    s->history[i].kind == EV_ERROR)
			return s->history[i].ts;
	return -1;
}

/*
 * The run the count of runs without progress starts from: the last run
 * that made progress, or a later reset or skip, which cleared the
 * no-progress counter (SPEC §4 rule 6): so "runs since progress" never
 * says 3 beside "no-progress 0/3".  *reset: that it was a reset or skip
 * (its kind in *by), else 0.
 */
static long
progress_base(const struct cb_state *s, int *reset, const char **by)
{
	size_t i;

	*reset = 0;
	for (i = s->n_history; i-- > 0; )
		if (s->history[i].kind == EV_RESET ||
		    s->history[i].kind == EV_SKIP) {
			if (s->history[i].iteration > s->last_progress_iteration) {
				*reset = 1;
				*by = event_kind_name(s->history[i].kind);
				return s->history[i].iteration;
			}
			break;
		}
	return s->last_progress_iteration;
}

/* Runs since the last progress, or since a reset that came after it. */
static long
runs_since_progress(const struct cb_state *s)
{
	const char *by;
	int reset;

	return s->iteration - progress_base(s, &reset, &by);
}

/* "19:17Z" when t falls on now's UTC day, else "2026-11-20 19:17Z". */
static char *
clock_time(double t, double now, char *buf, size_t len)
{
	char a[40], b[40];

	iso8601(t, a, sizeof(a));
	iso8601(now, b, sizeof(b));
	if (strncmp(a, b, 10) == 0)
		snprintf(buf, len, "%.5sZ", a + 11);
	else
		snprintf(buf, len, "%.10s %.5sZ", a, a + 11);
	return buf;
}

/* A span for people, its two largest units: "2h13m", "5m12s", "3d4h". */
static char *
span(double secs, char *buf, size_t len)
{
	static const struct {
		char c;
		long long s;
	} u[] = { { 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 } };
	long long t = secs > 0 && secs < 1e15 ? (long long)(secs + 0.5) : 0,
	    rest;
	size_t i;

	for (i = 0; i + 1 < NELEM(u) && t < u[i].s; i++)
		;
	rest = i + 1 < NELEM(u) ? t % u[i].s / u[i + 1].s : 0;
	if (rest == 0)
		snprintf(buf, len, "%lld%c", t / u[i].s, u[i].c);
	else
		snprintf(buf, len, "%lld%c%lld%c", t / u[i].s, u[i].c, rest,
		    u[i + 1].c);
	return buf;
}

/* "19:17Z, 2h13m ago", or "20:17Z, in 47m" for a time to come. */
static char *
when(double t, double now, char *buf, size_t len)
{
	char c[32], d[32];

	clock_time(t, now, c, sizeof(c));
	if (t <= now)
		snprintf(buf, len, "%s, %s ago", c, span(now - t, d, sizeof(d)));
	else
		snprintf(buf, len, "%s, in %s", c, span(t - now, d, sizeof(d)));
	return buf;
}

/* "NAME N" or "NAME N/LIMIT" when the limit is known. */
static void
counter(FILE *f, const char *name, long n, int limit, int first)
{
	fprintf(f, "%s%s %ld", first ? "" : ", ", name, n);
	if (limit > 0)
		fprintf(f, "/%d", limit);
}

/* When an OPEN circuit's cooldown lets the next trial run (SPEC §4 rule
 * 5, as breaker_admit() decides it), or why none will. */
static void
next_trial(FILE *f, const struct cb_state *s, double now)
{
	double cooldown = s->cooldown > 0 ? s->cooldown : s->limits.cooldown;
	char at[64], d[32];

	if (s->tripped)
		fputs("none: tripped by an operator, only a reset closes it",
		    f);
	else if (s->limits.cooldown <= 0 || s->opened_at < 0)
		fputs("none: no cooldown, only a reset closes it", f);
	else if (s->opened_at + cooldown > now)
		fprintf(f, "%s  (cooldown %s)", when(s->opened_at + cooldown,
		    now, at, sizeof(at)), span(cooldown, d, sizeof(d)));
	else
		fprintf(f, "the next run  (cooldown of %s passed)",
		    span(cooldown, d, sizeof(d)));
}

/* "2026-11-22T21:23:00.000Z (in 1h12m)", or "(due)" once it has come. */
const char *
retry_in(double at, double now, char *buf, size_t len)
{
	char when[40], in[32];
	long secs = (long)(at - now);

	if ((double)secs < at - now)
		secs++;
	if (secs > 0)
		snprintf(buf, len, "%s (in %s)", iso8601(at, when, sizeof(when)),
		    duration_format((double)secs, in, sizeof(in)));
	else
		snprintf(buf, len, "%s (due)", iso8601(at, when, sizeof(when)));
	return buf;
}

#define ROW(f, key, ...) do {						\
	fprintf((f), "%-20s ", (key));					\
	fprintf((f), __VA_ARGS__);					\
	fputc('\n', (f));						\
} while (0)

/*
 * What an agent's runs used: "cost 0.42 USD, 24380 tokens (3900 input,
 * 480 output, 20000 cache), 7 turns"; a figure the agent never reported
 * is said to be so, never shown as 0.
 */
static void
put_usage(FILE *f, const struct cb_usage *u, const char *agent)
{
	long tok = -1;

	if (u->cost_usd >= 0)
		fprintf(f, "cost %g USD", u->cost_usd);
	else
		fprintf(f, "cost not reported by %s", agent);
	if (u->input_tokens >= 0 || u->output_tokens >= 0 ||
	    u->cache_tokens >= 0) {
		tok = (u->input_tokens > 0 ? u->input_tokens : 0) +
		    (u->output_tokens > 0 ? u->output_tokens : 0) +
		    (u->cache_tokens > 0 ? u->cache_tokens : 0);
		fprintf(f, ", %ld tokens (", tok);
		if (u->input_tokens >= 0)
			fprintf(f, "%ld input", u->input_tokens);
		if (u->output_tokens >= 0)
			fprintf(f, "%s%ld output", u->input_tokens >= 0 ? ", " :
			    "", u->output_tokens);
		if (u->cache_tokens >= 0)
			fprintf(f, ", %ld cache", u->cache_tokens);
		fputc(')', f);
	} else
		fprintf(f, ", tokens not reported by %s", agent);
	if (u->turns >= 0)
		fprintf(f, ", %ld turn%s", u->turns, u->turns == 1 ? "" : "s");
	else
		fprintf(f, ", turns not reported by %s", agent);
	fputc('\n', f);
}

/* A spend window: "1.2 of 1 USD in 24h, under the cap again at ..." */
static void
put_window(FILE *f, const struct cb_state *s, const char *key, int tokens,
    double limit, double span, double now)
{
	double frees, spent = breaker_window(s, now, span, tokens, limit,
	    &frees);
	char d[24], ts[80];

	fprintf(f, "%-20s ", key);
	if (tokens)
		fprintf(f, "%.0f of %.0f tokens", spent, limit);
	else
		fprintf(f, "%g of %g USD", spent, limit);
	fprintf(f, " in %s", duration_format(span, d, sizeof(d)));
	if (spent >= limit)
		fprintf(f, ", over the cap until %s", retry_in(frees, now, ts,
		    sizeof(ts)));
	fputc('\n', f);
}

static void
put_spend(FILE *f, const struct cb_state *s, double now)
{
	const char *agent = s->spend_agent[0] != '\0' ? s->spend_agent :
	    "the agent";

	if (s->spend_agent[0] != '\0') {
		fprintf(f, "%-20s ", "spent (all runs):");
		put_usage(f, &s->spent, agent);
		fprintf(f, "%-20s ", "last run used:");
		put_usage(f, &s->last_usage, agent);
	}
	if (s->cost_window > 0 && s->cost_window_span > 0)
		put_window(f, s, "cost window:", 0, s->cost_window,
		    s->cost_window_span, now);
	if (s->tokens_window > 0 && s->tokens_window_span > 0)
		put_window(f, s, "token window:", 1, s->tokens_window,
		    s->tokens_window_span, now);
}

/* The reason a row shows: why it is OPEN or HALF_OPEN, else NULL. */
const char *
report_reason(const struct cb_state *s)
{
	const struct cb_event *e = last_change_to(s, s->state);

	if (s->state == CB_CLOSED)
		return NULL;
	return s->state == CB_OPEN || e == NULL ? s->open_reason : e->reason;
}

/* ---- the JSON views (cbexec(1), JSON; contrib/schema/) ---- */

static void
add_time(cJSON *o, const char *key, double t)
{
	char ts[40];

	if (t >= 0)
		cJSON_AddStringToObject(o, key, iso8601(t, ts, sizeof(ts)));
	else
		cJSON_AddNullToObject(o, key);
}

/* A new object with the members every document and event leads with:
 * v, then (unless NULL) timestamp, circuit and event. */
static cJSON *
vocab_new(const char *circuit, double ts, const char *event)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "v", JSON_VOCABULARY);
	if (ts >= 0)
		add_time(o, "timestamp", ts);
	cJSON_AddStringToObject(o, "circuit", circuit);
	if (event != NULL)
		cJSON_AddStringToObject(o, "event", event);
	return o;
}

/* "running": the run going on (null: none); "holder": the cbexec that
 * holds the circuit's lock or lease now (null: none). */
static void
add_holder(cJSON *o, const struct store_holder *h)
{
	cJSON *r;

	if (h->run.run > 0 && (r = cJSON_CreateObject()) != NULL) {
		cJSON_AddNumberToObject(r, "iteration", (double)h->run.run);
		cJSON_AddNumberToObject(r, "pid", (double)h->pid);
		cJSON_AddStringToObject(r, "host", h->host);
		add_time(r, "started_at", h->run.started);
		cJSON_AddItemToObject(o, "running", r);
	} else
		cJSON_AddNullToObject(o, "running");
	if (h->pid > 0 && (r = cJSON_CreateObject()) != NULL) {
		cJSON_AddNumberToObject(r, "pid", (double)h->pid);
		cJSON_AddStringToObject(r, "host", h->host);
		cJSON_AddItemToObject(o, "holder", r);
	} else
		cJSON_AddNullToObject(o, "holder");
}

/* One circuit as --status --all --json shows it; the first members of
 * --status --json too. */
static cJSON *
circuit_view(const struct status_row *r)
{
	const struct cb_state *s = r->s;
	cJSON *o = vocab_new(r->name, -1, NULL);

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "path", r->path);
	if (s == NULL) {
		cJSON_AddNullToObject(o, "state");
		add_str(o, "error", r->error);
		add_holder(o, &r->holder);
		return o;
	}
	cJSON_AddStringToObject(o, "state", circuit_name(s->state));
	add_time(o, "changed_at", since_of(s));
	add_time(o, "opened_at", s->state == CB_OPEN ? s->opened_at : -1);
	add_str(o, "reason", report_reason(s));
	cJSON_AddNumberToObject(o, "runs_since_progress",
	    (double)runs_since_progress(s));
	add_time(o, "retry_at", r->retry_at);
	add_time(o, "last_run_at", last_run_of(s));
	cJSON_AddNumberToObject(o, "iteration", (double)s->iteration);
	cJSON_AddBoolToObject(o, "complete", s->complete);
	add_holder(o, &r->holder);
	return o;
}

/* Whether the state's text (state_text()) has the member key. */
static int
state_has(const char *text, const char *key)
{
	char pat[96];

	snprintf(pat, sizeof(pat), "\n  \"%s\": ", key);
	return strstr(text, pat) != NULL;
}

/*
 * --status --json: the circuit's view (circuit_view()) and then the state
 * object of the state file, as SPEC §7 has it, whose own names (name,
 * open_reason, ...) are SPEC §6's; a member both have is written once,
 * the state's.  With an account, its document as "account_gate".
 */
static void
status_json(FILE *f, const struct status_row *row, const char *account_json)
{
	struct cb_state shown = *row->s;
	cJSON *view = circuit_view(row), *m;
	const char *body, *end;
	char *p, *text;

	/* A file of before last_run_at says when by its last run event. */
	shown.last_run_at = last_run_of(row->s);
	if (view == NULL || (p = state_text(&shown)) == NULL ||
	    strncmp(p, "{\n", 2) != 0 || (end = strrchr(p, '}')) == NULL) {
		cJSON_Delete(view);
		return;
	}
	fputs("{\n", f);
	cJSON_ArrayForEach(m, view) {
		if (state_has(p, m->string))
			continue;
		if ((text = cJSON_PrintUnformatted(m)) == NULL)
			continue;
		fprintf(f, "  \"%s\": %s,\n", m->string, text);
		cJSON_free(text);
	}
	/* The state's members, then the account's gate before the '}'. */
	body = p + 2;
	while (end > body && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	fwrite(body, 1, (size_t)(end - body), f);
	if (account_json != NULL)
		fprintf(f, ",\n  \"account_gate\": %s", account_json);
	fputs("\n}\n", f);
	free(p);
	cJSON_Delete(view);
}

/* The kinds of events the history keeps, in the vocabulary of the log:
 * a run's result is "run", whatever the state file calls it. */
static cJSON *
event_view(const struct cb_event *e, const char *circuit, const char *event)
{
	cJSON *o = vocab_new(circuit, e->ts, event);

	if (o != NULL)
		cJSON_AddNumberToObject(o, "iteration", (double)e->iteration);
	return o;
}

static void
put_view(FILE *f, cJSON *o, int *first)
{
	char *p;

	if (o == NULL)
		return;
	if ((p = cJSON_PrintUnformatted(o)) != NULL) {
		fprintf(f, "%s  %s", *first ? "" : ",\n", p);
		*first = 0;
		cJSON_free(p);
	}
	cJSON_Delete(o);
}

/* The transition an operator's act (a reset, a skip) made, which the
 * state file keeps in the act's event and the log says apart. */
static void
put_change(FILE *f, const struct cb_event *e, const char *circuit,
    int *first)
{
	cJSON *o;

	if (e->from < 0 || e->to < 0 ||
	    (o = event_view(e, circuit, "state_change")) == NULL)
		return;
	cJSON_AddStringToObject(o, "from_state", circuit_name(e->from));
	cJSON_AddStringToObject(o, "to_state", circuit_name(e->to));
	add_str(o, "reason", e->reason);
	put_view(f, o, first);
}

static int is_trip(const struct cb_event *e);

/* An event of the history as the log has it: one or two events (an act
 * and the transition it made). */
static void
put_event(FILE *f, const struct cb_event *e, const char *circuit,
    int *first)
{
	static const char unskipped[] = "unskipped ";
	cJSON *o;
	int ignored;

	switch (e->kind) {
	case EV_PROGRESS:
	case EV_ERROR:
		if ((o = event_view(e, circuit, "run")) == NULL)
			return;
		ignored = e->kind == EV_PROGRESS && e->progress < 0;
		if (e->exit_code >= 0)
			cJSON_AddNumberToObject(o, "exit_code", e->exit_code);
		else
			cJSON_AddNullToObject(o, "exit_code");
		add_str(o, "class", e->cls[0] != '\0' ? e->cls :
		    ignored ? NULL : "success");
		add_str(o, "type", e->kind == EV_ERROR || e->type[0] != '\0' ?
		    e->type : ignored ? NULL : "");
		add_str(o, "error_hash", e->hash[0] != '\0' ? e->hash : NULL);
		add_str(o, "message", e->kind == EV_ERROR ? e->reason : NULL);
		cJSON_AddBoolToObject(o, "progress", e->progress > 0);
		cJSON_AddBoolToObject(o, "complete", e->complete != 0);
		if (ignored)
			cJSON_AddTrueToObject(o, "ignored");
		if (e->task != NULL)
			cJSON_AddStringToObject(o, "task", e->task);
		put_view(f, o, first);
		return;
	case EV_STATE_CHANGE:
		/* A trip that opened the circuit: the act, then the change,
		 * as the log says it. */
		if (is_trip(e) && (o = event_view(e, circuit, "trip")) != NULL) {
			add_str(o, "reason", e->reason);
			add_str(o, "user", e->user);
			put_view(f, o, first);
		}
		put_change(f, e, circuit, first);
		return;
	case EV_TRIP:
	case EV_RESET:
	case EV_SKIP:
		if ((o = event_view(e, circuit, e->kind == EV_TRIP ? "trip" :
		    e->kind == EV_RESET ? "reset" : e->reason != NULL &&
		    strncmp(e->reason, unskipped, sizeof(unskipped) - 1) ==
		    0 ? "unskip" : "skip")) == NULL)
			return;
		add_str(o, "reason", e->reason);
		add_str(o, "user", e->user);
		put_view(f, o, first);
		put_change(f, e, circuit, first);
		return;
	case EV_OTHER:
		/* A newer cbexec's: not of this vocabulary (--history
		 * shows it by its name). */
		return;
	}
}

/* --history --json: an array of the events from start, one per line. */
static void
history_json(FILE *f, const struct cb_state *s, const char *circuit,
    size_t start)
{
	int first = 1;
	size_t i;

	fputs("[\n", f);
	for (i = start; i < s->n_history; i++)
		put_event(f, &s->history[i], circuit, &first);
	fputs(first ? "]\n" : "\n]\n", f);
}

void
report_status(FILE *f, const struct status_row *row, const char *reset_hint,
    int json, const char *account_json, double now)
{
	const struct cb_state *s = row->s;
	const struct cb_event *e = last_change_to(s, s->state);
	const char *reason = s->open_reason, *by = NULL, *label = row->name;
	double since = since_of(s), last = last_run_of(s);
	char ts[80], w[64];
	long base;
	int reset;

	if (json) {
		status_json(f, row, account_json);
		return;
	}
	if (label == NULL)
		label = s->name != NULL ? s->name : "(default)";
	ROWT(f, "circuit:", label);
	if (since >= 0)
		ROW(f, "state:", "%s  (since %s)", circuit_name(s->state),
		    when(since, now, w, sizeof(w)));
	else
		ROW(f, "state:", "%s", circuit_name(s->state));
	/* What is going on now, as systemctl status leads with it. */
	if (row->holder.run.run > 0) {
		fprintf(f, "%-20s run %ld", "running:", row->holder.run.run);
		if (row->holder.run.started >= 0)
			fprintf(f, " since %s", when(row->holder.run.started,
			    now, w, sizeof(w)));
		fprintf(f, "  (pid %ld on ", row->holder.pid);
		text_put(f, row->holder.host);
		fputs(")\n", f);
	} else if (row->holder.pid > 0) {
		fprintf(f, "%-20s pid %ld on ", "held by:", row->holder.pid);
		text_put(f, row->holder.host);
		fputs("  (no run going on)\n", f);
	}
	if (s->state != CB_OPEN && e != NULL)
		reason = e->reason;
	if (s->state != CB_CLOSED && reason != NULL)
		ROWT(f, "reason:", reason);
	if (s->state == CB_OPEN && s->retry_at >= 0)
		ROW(f, "retry at:", "%s", retry_in(s->retry_at, now, ts,
		    sizeof(ts)));
	else if (s->state == CB_OPEN) {
		fprintf(f, "%-20s ", "next trial:");
		next_trial(f, s, now);
		fputc('\n', f);
	}
	if (s->phase != NULL)
		ROWT(f, "phase:", s->phase);
	base = progress_base(s, &reset, &by);
	if (reset && s->last_progress_iteration > 0)
		ROW(f, "runs since progress:", "%ld   (counted from the %s "
		    "after run %ld; last progress at run %ld)",
		    s->iteration - base, by, base, s->last_progress_iteration);
	else if (reset)
		ROW(f, "runs since progress:", "%ld   (counted from the %s "
		    "after run %ld; no progress yet)", s->iteration - base, by,
		    base);
	else if (s->last_progress_iteration > 0)
		ROW(f, "runs since progress:",
		    "%ld   (last progress at run %ld)",
		    s->iteration - s->last_progress_iteration,
		    s->last_progress_iteration);
	else if (s->iteration > 0)
		ROW(f, "runs since progress:", "%ld   (no progress yet)",
		    s->iteration);
	ROW(f, "current run:", "%ld", s->iteration);
	fprintf(f, "%-20s ", "counters:");
	counter(f, "no-progress", s->no_progress_count, s->limits.no_progress,
	    1);
	counter(f, "same-error", s->same_error_count, s->limits.same_error, 0);
	counter(f, "consecutive errors", s->consecutive_errors,
	    s->limits.max_consecutive_errors, 0);
	counter(f, "same-task", s->same_task_failures, s->limits.max_retries,
	    0);
	fputc('\n', f);
	ROW(f, "total opens:", "%ld", s->total_opens);
	if (last >= 0)
		ROW(f, "last run:", "%s%s", when(last, now, w, sizeof(w)),
		    s->complete ? "   (complete: its status said the work is "
		    "done)" : "");
	if (s->last_success_at >= 0)
		ROW(f, "last success:", "%s",
		    when(s->last_success_at, now, w, sizeof(w)));
	if (s->last_error.message != NULL && s->last_error.message[0] != '\0') {
		fprintf(f, "%-20s ", "last error:");
		put_class_type(f, s->last_error.cls, s->last_error.type);
		fputs(": ", f);
		text_put(f, s->last_error.message);
		fprintf(f, " (exit %d)\n", s->last_error.exit_code);
	}
	if (s->guidance != NULL)
		ROWT(f, "guidance:", s->guidance);
	put_spend(f, s, now);
	put_skips(f, s);
	if (s->updated_at >= 0)
		ROW(f, "updated:", "%s",
		    iso8601(s->updated_at, ts, sizeof(ts)));
	if (s->state != CB_CLOSED && reset_hint != NULL)
		ROW(f, "reset:", "%s", reset_hint);
}

static int
is_trip(const struct cb_event *e)
{
	static const char trip[] = "tripped by operator";

	return e->kind == EV_STATE_CHANGE && e->to == CB_OPEN &&
	    e->reason != NULL && strncmp(e->reason, trip, sizeof(trip) - 1) == 0;
}

static char
timeline_mark(const struct cb_event *e)
{
	switch (e->kind) {
	case EV_PROGRESS:
		return e->progress > 0 ? '.' : '-';
	case EV_ERROR:
		return strcmp(e->cls, "timeout") == 0 ? 'T' :
		    strcmp(e->cls, "transient") == 0 ? '~' :
		    strcmp(e->cls, "fatal") == 0 ? 'F' : 'E';
	case EV_STATE_CHANGE:
		return is_trip(e) ? '!' : e->to == CB_OPEN ? '|' :
		    e->to == CB_HALF_OPEN ? '/' : e->to == CB_CLOSED ? '+' : 0;
	case EV_RESET:
		return 'R';
	case EV_SKIP:
		return 'S';
	case EV_TRIP:
		return '!';
	default:
		return 0;
	}
}

/* The legend, its items wrapped to width. */
static void
legend(FILE *f, int width)
{
	static const char *const items[] = { ". progress", "- no progress",
	    "E error", "T timeout", "~ transient", "F fatal", "/ half-open",
	    "| open", "+ closed", "R reset", "! trip", "S skip" };
	static const char head[] = "legend:   ";
	size_t i, col = sizeof(head) - 1, n;

	fputs(head, f);
	for (i = 0; i < NELEM(items); i++) {
		n = strlen(items[i]);
		if (i > 0 && col + 2 + n > (size_t)width) {
			fprintf(f, "\n%*s", (int)sizeof(head) - 1, "");
			col = sizeof(head) - 1;
		} else if (i > 0) {
			fputs("  ", f);
			col += 2;
		}
		fputs(items[i], f);
		col += n;
	}
	fputc('\n', f);
}

/*
 * The timeline of events [start, n_history), wrapped to width: each line
 * "run N  marks", N the run of its first mark, right-aligned to the
 * widest run number.
 */
static void
timeline(FILE *f, const struct cb_state *s, size_t start, int width)
{
	const char *cur = NULL, *want;
	int color = color_allowed(), state = s->state, digits, col = 0,
	    per_line;
	char num[24];
	size_t i;
	char c;

	/* The state before the window is where its first change came from. */
	for (i = start; i < s->n_history; i++)
		if (s->history[i].from >= 0) {
			state = s->history[i].from;
			break;
		}
	digits = snprintf(num, sizeof(num), "%ld",
	    s->history[s->n_history - 1].iteration);
	per_line = width - (int)sizeof("run ") - digits - 1;
	if (per_line < 10)
		per_line = 10;
	fputs("timeline, oldest first (each line starts at the run it names):\n",
	    f);
	for (i = start; i < s->n_history; i++) {
		const struct cb_event *e = &s->history[i];

		if (e->to >= 0)
			state = e->to;
		if ((c = timeline_mark(e)) == 0)
			continue;
		if (col == per_line) {
			if (color && cur != NULL)
				fputs(NOCOLOR, f);
			fputc('\n', f);
			cur = NULL;
			col = 0;
		}
		if (col == 0)
			fprintf(f, "run %*ld  ", digits, e->iteration);
		want = circuit_color(state);
		if (color && want != cur)
			fputs(cur = want, f);
		fputc(c, f);
		col++;
	}
	if (color && cur != NULL)
		fputs(NOCOLOR, f);
	fputc('\n', f);
	legend(f, width);
}

static void
history_line(FILE *f, const struct cb_event *e, int digits, int kind_w)
{
	char ts[40];

	fprintf(f, "%s  run %-*ld  %-*s", iso8601(e->ts, ts, sizeof(ts)),
	    digits, e->iteration, kind_w, event_name(e));
	switch (e->kind) {
	case EV_STATE_CHANGE:
		fprintf(f, "  %s -> %s", circuit_name(e->from),
		    circuit_name(e->to));
		break;
	case EV_ERROR:
		fputs("  ", f);
		put_class_type(f, e->cls, e->type);
		if (e->exit_code >= 0)
			fprintf(f, " (exit %d)", e->exit_code);
		if (e->reason != NULL) {
			fputs(": ", f);
			text_put(f, e->reason);
		}
		break;
	case EV_PROGRESS:
		fputs("  ", f);
		if (e->exit_code >= 0)
			fprintf(f, "exit %d, ", e->exit_code);
		fputs(e->progress > 0 ? "progress" : "no progress", f);
		if (e->complete)
			fputs(", complete", f);
		break;
	default:
		break;
	}
	/* A run's reason only repeats "progress" / "no progress". */
	if (e->kind != EV_ERROR && e->kind != EV_PROGRESS &&
	    e->reason != NULL && e->reason[0] != '\0') {
		fputs("  ", f);
		text_put(f, e->reason);
	}
	if (e->user != NULL && e->user[0] != '\0') {
		fputs("  by ", f);
		text_put(f, e->user);
	}
	fputc('\n', f);
}

void
report_history(FILE *f, const struct cb_state *s, const char *label,
    long last, int json, int width)
{
	size_t start = last > 0 && s->n_history > (size_t)last ?
	    s->n_history - (size_t)last : 0, i, k;
	int digits = 1, kind_w = 0, n;
	char num[24];

	if (json) {
		history_json(f, s, label, start);
		return;
	}
	if (width > 0 && start < s->n_history)
		timeline(f, s, start, width);
	/* Columns as wide as the window's widest run number and event. */
	for (i = start; i < s->n_history; i++) {
		n = snprintf(num, sizeof(num), "%ld", s->history[i].iteration);
		if (n > digits)
			digits = n;
		k = strlen(event_name(&s->history[i]));
		if ((int)k > kind_w)
			kind_w = (int)k;
	}
	for (i = start; i < s->n_history; i++)
		history_line(f, &s->history[i], digits, kind_w);
}

int
status_width(int fd, int *terminal)
{
	struct winsize ws;
	const char *c;
	long n;

	*terminal = isatty(fd);
	/* $COLUMNS first, also off a terminal: it is asked for. */
	if ((c = getenv("COLUMNS")) != NULL && (n = atol(c)) > 0 && n < 10000)
		return (int)n;
	if (!*terminal)
		return 0;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

int
terminal_width(int fd)
{
	struct winsize ws;
	const char *c;
	long n;

	if (!isatty(fd))
		return 0;
	/* COLUMNS first, as ls(1) takes it: a person may want it narrower. */
	if ((c = getenv("COLUMNS")) != NULL && (n = atol(c)) > 0 && n < 10000)
		return (int)n;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* ---- --status --all ---- */

enum { COL_NAME, COL_STATE, COL_SINCE, COL_PROGRESS, COL_RETRY, COL_LAST,
	COL_REASON, N_COLS };

static const char *const col_head[N_COLS] = { "CIRCUIT", "STATE", "SINCE",
	"PROGRESS", "RETRY AT", "LAST RUN", "REASON" };

/* A cell's bytes: a name of the state directory fits whole. */
#define CELL 300

/* The mark before a circuit that refuses runs (OPEN, or unreadable), and
 * the blank of the same width before the others. */
#define MARK	"\u25cf "
#define NOMARK	"  "
#define ELLIPSIS "\u2026"

/* "19:17Z (2h13m ago)", or with short "2h13m ago" (a narrow terminal);
 * "-" for no time. */
static char *
cell_time(double t, double now, int short_form, char *buf, size_t len)
{
	char c[32], d[32];

	if (t < 0)
		snprintf(buf, len, "-");
	else if (short_form)
		snprintf(buf, len, t <= now ? "%s ago" : "in %s",
		    span(t <= now ? now - t : t - now, d, sizeof(d)));
	else if (t <= now)
		snprintf(buf, len, "%s (%s ago)", clock_time(t, now, c,
		    sizeof(c)), span(now - t, d, sizeof(d)));
	else
		snprintf(buf, len, "%s (in %s)", clock_time(t, now, c,
		    sizeof(c)), span(t - now, d, sizeof(d)));
	return buf;
}

/* Whether the row's circuit refuses runs: OPEN, or its state unreadable. */
static int
refuses(const struct status_row *r)
{
	return r->s == NULL || r->s->state == CB_OPEN;
}

/* The order of the text: OPEN first, then the unreadable, HALF_OPEN,
 * CLOSED; by name (the order rows come in) within each. */
static int
rank(const struct status_row *r)
{
	return r->s == NULL ? 1 : r->s->state == CB_OPEN ? 0 :
	    r->s->state == CB_HALF_OPEN ? 2 : 3;
}

/* The cells of one row (the reason pointed to, not copied). */
static void
row_cells(const struct status_row *r, double now, int short_form,
    char cell[][CELL], const char **reason)
{
	const struct cb_state *s = r->s;
	char *name = text_escaped(r->name);
	long n;

	/* a store's key may hold any bytes: escaped as --status does */
	snprintf(cell[COL_NAME], CELL, "%s%s", refuses(r) ? MARK : NOMARK,
	    name != NULL ? name : "?");
	free(name);
	if (s == NULL) {
		snprintf(cell[COL_STATE], CELL, "ERROR");
		strcpy(cell[COL_SINCE], "-");
		strcpy(cell[COL_PROGRESS], "-");
		strcpy(cell[COL_RETRY], "-");
		strcpy(cell[COL_LAST], "-");
		*reason = r->error;
		return;
	}
	snprintf(cell[COL_STATE], CELL, "%s", circuit_name(s->state));
	cell_time(since_of(s), now, short_form, cell[COL_SINCE], CELL);
	n = runs_since_progress(s);
	if (s->iteration == 0)
		strcpy(cell[COL_PROGRESS], "-");
	else if (n == 0)
		strcpy(cell[COL_PROGRESS], "last run");
	else if (s->last_progress_iteration == 0 && n == s->iteration)
		strcpy(cell[COL_PROGRESS], "never");
	else
		snprintf(cell[COL_PROGRESS], CELL, "%ld run%s ago", n,
		    n == 1 ? "" : "s");
	cell_time(r->retry_at, now, short_form, cell[COL_RETRY], CELL);
	if (r->holder.pid > 0 && r->remote)
		snprintf(cell[COL_LAST], CELL, "running (pid %ld on %s)",
		    r->holder.pid, r->holder.host);
	else if (r->holder.pid > 0)
		snprintf(cell[COL_LAST], CELL, "running (pid %ld)",
		    r->holder.pid);
	else
		cell_time(last_run_of(s), now, short_form, cell[COL_LAST],
		    CELL);
	*reason = report_reason(s);
}

/* A JSON array, one circuit's object per line (as --history --json). */
static void
status_all_json(FILE *f, const struct status_row *rows, size_t n)
{
	cJSON *o;
	char *p;
	size_t i;

	fputs(n == 0 ? "[" : "[\n", f);
	for (i = 0; i < n; i++) {
		if ((o = circuit_view(&rows[i])) == NULL)
			break;
		if ((p = cJSON_PrintUnformatted(o)) != NULL) {
			fprintf(f, "  %s%s\n", p, i + 1 < n ? "," : "");
			cJSON_free(p);
		}
		cJSON_Delete(o);
	}
	fputs("]\n", f);
}

/* Columns a UTF-8 string takes: one per character. */
static size_t
cols(const char *p)
{
	size_t n = 0;

	for (; *p != '\0'; p++)
		n += ((unsigned char)*p & 0xC0) != 0x80;
	return n;
}

/* s padded to w columns, or cut to w with an ellipsis at its end; last:
 * no padding. */
static void
put_cell(FILE *f, const char *s, size_t w, int last)
{
	size_t n = cols(s), k;
	const char *p;

	if (n <= w) {
		fputs(s, f);
		if (!last)
			fprintf(f, "%*s", (int)(w - n), "");
		return;
	}
	if (w == 0)
		return;
	/* w - 1 characters, then the ellipsis */
	for (p = s, k = 0; *p != '\0'; p++) {
		if (((unsigned char)*p & 0xC0) != 0x80 && k++ == w - 1)
			break;
	}
	fprintf(f, "%.*s" ELLIPSIS, (int)(p - s), s);
}

/* The byte offset of character i of s (its end when shorter). */
static size_t
char_at(const char *s, size_t i)
{
	const char *p;
	size_t k = 0;

	for (p = s; *p != '\0'; p++)
		if (((unsigned char)*p & 0xC0) != 0x80 && k++ == i)
			break;
	return (size_t)(p - s);
}

/*
 * A name cell (its mark, then the name) in w columns, the name cut in
 * its middle when too long: two thirds of what is kept from its start,
 * the rest from its end, as systemd's ellipsize() with 66 percent.
 */
static void
put_name(FILE *f, const char *cell, size_t w, int last)
{
	size_t mark = cols(NOMARK), n = cols(cell), keep, lead, tail;
	const char *name = cell + char_at(cell, mark);

	if (n <= w || w <= mark + 1) {
		put_cell(f, cell, w, last);
		return;
	}
	keep = w - mark - 1;
	lead = (keep * 66 + 50) / 100;
	tail = keep - lead;
	fprintf(f, "%.*s%.*s" ELLIPSIS "%s", (int)(name - cell), cell,
	    (int)char_at(name, lead), name, name + char_at(name, cols(name) -
	    tail));
}

/* One line: each shown cell in its column, two spaces apart. */
static void
table_line(FILE *f, const char *const *cells, const size_t *w,
    const int *shown, int header)
{
	size_t i, last = 0;
	int first = 1;

	for (i = 0; i < N_COLS; i++)
		if (shown[i])
			last = i;
	for (i = 0; i < N_COLS; i++) {
		if (!shown[i])
			continue;
		if (!first)
			fputs("  ", f);
		first = 0;
		if (i == COL_NAME && !header)
			put_name(f, cells[i], w[i], i == last);
		else
			put_cell(f, cells[i], w[i], i == last);
	}
	fputc('\n', f);
}

/* The widest cell of column j over rows and the header. */
static size_t
col_width(char (*cells)[N_COLS][CELL], const char **reasons, size_t n,
    size_t j)
{
	size_t w = cols(col_head[j]) + (j == COL_NAME ? cols(NOMARK) : 0), i,
	    c;

	for (i = 0; i < n; i++) {
		c = cols(j == COL_REASON ? reasons[i] : cells[i][j]);
		if (c > w)
			w = c;
	}
	return w;
}

/* Which columns say something: all but those that are "-" in every row
 * (the name and the state always are). */
static void
shown_cols(char (*cells)[N_COLS][CELL], const char **reasons, size_t n,
    int *shown)
{
	size_t i, j;

	for (j = 0; j < N_COLS; j++) {
		shown[j] = j == COL_NAME || j == COL_STATE;
		for (i = 0; i < n && !shown[j]; i++)
			shown[j] = strcmp(j == COL_REASON ? reasons[i] :
			    cells[i][j], "-") != 0;
	}
}

/* The columns a line of the shown ones takes at widths w (with reason
 * up to cap, 0: whole). */
static size_t
line_cols(const size_t *w, const int *shown, size_t cap)
{
	size_t j, total = 0, k = 0;

	for (j = 0; j < N_COLS; j++) {
		if (!shown[j])
			continue;
		total += j == COL_REASON && cap > 0 && w[j] > cap ? cap : w[j];
		k++;
	}
	return total + (k > 0 ? 2 * (k - 1) : 0);
}

/*
 * The widths of the shown columns for a line of at most width columns
 * (0: no limit): each column as wide as its widest cell; then, while the
 * line is too long, the reason and the name give up columns in turns,
 * each down to the floor of its step (a reason of 40 is still worth more
 * than a name of 16, which, cut in its middle, still tells names apart).  A line that still does not fit is cut at its end
 * (put_line).
 */
static void
fit(char (*cells)[N_COLS][CELL], const char **reasons, size_t n,
    size_t width, const int *shown, size_t *w)
{
	static const struct {
		int col;
		size_t floor;
	} steps[] = { { COL_REASON, 40 }, { COL_NAME, 16 },
	    { COL_REASON, 20 }, { COL_NAME, 12 }, { COL_REASON, 8 },
	    { COL_NAME, 8 }, { COL_REASON, 1 } };
	size_t j, total, over, give;

	for (j = 0; j < N_COLS; j++)
		w[j] = shown[j] ? col_width(cells, reasons, n, j) : 0;
	total = line_cols(w, shown, 0);
	if (width == 0 || total <= width)
		return;
	over = total - width;
	for (j = 0; j < NELEM(steps) && over > 0; j++) {
		if (!shown[steps[j].col] || w[steps[j].col] <= steps[j].floor)
			continue;
		give = w[steps[j].col] - steps[j].floor;
		if (give > over)
			give = over;
		w[steps[j].col] -= give;
		over -= give;
	}
}

/* The line in buf, cut to width columns (0: not at all) with an
 * ellipsis. */
static void
put_line(FILE *f, const char *buf, size_t width)
{
	size_t n = strlen(buf);

	if (n > 0 && buf[n - 1] == '\n')
		n--;
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	{
		char *line = strndup(buf, n);

		if (line == NULL)
			return;
		if (width > 0 && cols(line) > width)
			put_cell(f, line, width, 1);
		else
			fputs(line, f);
		free(line);
	}
	fputc('\n', f);
}

static int
by_rank(const void *a, const void *b)
{
	const struct status_row *const *x = a, *const *y = b;
	int d = rank(*x) - rank(*y);

	return d != 0 ? d : *x < *y ? -1 : *x > *y;
}

void
report_status_all(FILE *f, const struct status_row *rows, size_t n,
    int json, int width, int terminal, double now)
{
	char (*cells)[N_COLS][CELL] = NULL, *buf = NULL;
	const struct status_row **order = NULL;
	const char **reasons = NULL, *line[N_COLS];
	char **escaped = NULL;
	size_t w[N_COLS], i, j, open = 0, len = 0;
	int short_form, shown[N_COLS];
	FILE *m;

	if (json) {
		status_all_json(f, rows, n);
		return;
	}
	cells = calloc(n + 1, sizeof(*cells));
	reasons = calloc(n + 1, sizeof(*reasons));
	order = calloc(n + 1, sizeof(*order));
	escaped = calloc(n + 1, sizeof(*escaped));
	if (cells == NULL || reasons == NULL || order == NULL ||
	    escaped == NULL)
		goto out;
	for (i = 0; i < n; i++)
		order[i] = &rows[i];
	qsort(order, n, sizeof(*order), by_rank);
	/* The long form of the times when the rest fits so beside a
	 * reason of 40 columns (or its whole, when shorter), else the short
	 * one. */
	for (short_form = 0; short_form < 2; short_form++) {
		for (i = 0; i < n; i++) {
			row_cells(order[i], now, short_form, cells[i],
			    &reasons[i]);
			/* text from the command: control bytes escaped */
			free(escaped[i]);
			escaped[i] = reasons[i] != NULL ?
			    text_escaped(reasons[i]) : NULL;
			reasons[i] = escaped[i] != NULL ? escaped[i] : "-";
		}
		shown_cols(cells, reasons, n, shown);
		for (j = 0; j < N_COLS; j++)
			w[j] = shown[j] ? col_width(cells, reasons, n, j) : 0;
		if (width <= 0 || line_cols(w, shown, 40) <= (size_t)width)
			break;
	}
	fit(cells, reasons, n, width > 0 ? (size_t)width : 0, shown, w);
	for (i = 0; i <= n; i++) {
		if ((m = open_memstream(&buf, &len)) == NULL)
			goto out;
		if (i == 0) {
			for (j = 0; j < N_COLS; j++)
				line[j] = col_head[j];
			/* the header's first column starts under the names */
			fputs(NOMARK, m);
			w[COL_NAME] -= cols(NOMARK);
			table_line(m, line, w, shown, 1);
			w[COL_NAME] += cols(NOMARK);
		} else {
			for (j = 0; j < COL_REASON; j++)
				line[j] = cells[i - 1][j];
			line[COL_REASON] = reasons[i - 1];
			table_line(m, line, w, shown, 0);
			if (refuses(order[i - 1]) && order[i - 1]->s != NULL)
				open++;
		}
		if (fclose(m) == 0)
			put_line(f, buf, width > 0 ? (size_t)width : 0);
		free(buf);
		buf = NULL;
	}
	if (terminal)
		fprintf(f, "\n%zu circuit%s listed, %zu OPEN.\n", n,
		    n == 1 ? "" : "s", open);
out:
	for (i = 0; escaped != NULL && i < n; i++)
		free(escaped[i]);
	free(escaped);
	free(cells);
	free(reasons);
	free(order);
}
