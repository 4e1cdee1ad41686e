/* SPDX-License-Identifier: ISC */
/*
 * The state file's JSON, outward (SPEC §6): struct cb_state and its
 * history events as JSON text with the spec's field names.  stateparse.c
 * reads the same shape back.
 *
 * Every state field is always written (null, or an empty object, when
 * unset), so a file shows the whole schema; an event's optional fields
 * (user, progress, exit_code, class, type, task, error_hash, complete)
 * appear only when set.  The skips are written twice over: as the names SPEC §6 lists
 * (skipped_phases, and skipped_tasks beside it) and as records with when,
 * why and who ("skips"); the loader takes the names as the truth.  The
 * text is written directly into one growing buffer, not built as a cJSON
 * tree and printed: a loop of runs saves the whole state after every run,
 * and the tree, cJSON's number printing and its re-parse of every number
 * it prints were a fifth of cbexec's CPU per run.  Top-level members go
 * one per line, history events one per line.  A failed allocation marks
 * the buffer; the caller then gets NULL, never half a state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core.h"
#include "store.h"
#include "jsonfield.h"

/* Same order as enum cb_class; classify.c's names, kept here so the state
 * module links without the classifier. */
const char *const class_keys[CB_CLASS_COUNT] = {
	"success", "recoverable", "transient", "timeout", "fatal",
	"budget"
};

/* "thresholds": the int members of struct cb_limits in this order, then
 * "cooldown". */
const char *const threshold_keys[N_THRESHOLD_KEYS] = {
	"no_progress_threshold", "same_error_threshold", "half_open_after",
	"max_consecutive_errors", "max_retries", "half_open_trials"
};

struct jbuf {
	char *p;
	size_t len, cap;
	int bad;		/* an allocation failed */
};

/* Room for n more bytes and the final NUL; 0, or -1 once out of memory. */
static int
grow(struct jbuf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->bad)
		return -1;
	for (cap = b->cap > 0 ? b->cap : 4096; cap < b->len + n + 1;)
		cap *= 2;
	if ((p = realloc(b->p, cap)) == NULL) {
		b->bad = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

/* Inline, so the many short literal pieces become plain stores. */
static inline void
put(struct jbuf *b, const char *s, size_t n)
{
	if (b->cap - b->len <= n && grow(b, n) == -1)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static inline void
puts_(struct jbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void
put_long(struct jbuf *b, long long v)
{
	char buf[24], *p = buf + sizeof(buf);
	unsigned long long u = v < 0 ? 0 - (unsigned long long)v :
	    (unsigned long long)v;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--p = '-';
	put(b, p, (size_t)(buf + sizeof(buf) - p));
}

/* A number as cJSON prints one: integral values without a fraction, else
 * the shortest of %.15g and %.17g that reads back exactly. */
static void
put_num(struct jbuf *b, double v)
{
	char buf[32];

	if (v != v || v > 1e300 || v < -1e300) {	/* NaN, infinity */
		puts_(b, "null");
		return;
	}
	if (v > -1e15 && v < 1e15 && (double)(long long)v == v) {
		put_long(b, (long long)v);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	puts_(b, buf);
}

/*
 * s as a JSON string.  Only quotes, backslashes and control characters
 * need escaping; bytes that are not UTF-8 (from $USER, say: text cbexec
 * takes as it comes) become U+FFFD, so the file is always valid UTF-8
 * whatever went into the state.
 */
static void
put_str(struct jbuf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run, *end = s + strlen(s);
	char esc[7];
	unsigned char c;
	size_t k;
	int valid;

	put(b, "\"", 1);
	for (run = s; (c = (unsigned char)*s) != '\0'; s++) {
		if (c >= 0x80) {
			k = utf8_seq((const unsigned char *)s, (size_t)(end - s),
			    &valid);
			if (!valid) {
				put(b, run, (size_t)(s - run));
				put(b, "\xEF\xBF\xBD", 3);
				run = s + k;
			}
			s += k - 1;
			continue;
		}
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		put(b, run, (size_t)(s - run));
		run = s + 1;
		esc[0] = '\\';
		switch (c) {
		case '"': case '\\': esc[1] = (char)c; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			put(b, esc, 6);
			continue;
		}
		put(b, esc, 2);
	}
	put(b, run, (size_t)(s - run));
	put(b, "\"", 1);
}

static void
put_str_or_null(struct jbuf *b, const char *s)
{
	if (s != NULL)
		put_str(b, s);
	else
		puts_(b, "null");
}

static void
put_time_or_null(struct jbuf *b, double t)
{
	char buf[40];

	if (t >= 0)
		put_str(b, iso8601(t, buf, sizeof(buf)));
	else
		puts_(b, "null");
}

static void
put_circuit_or_null(struct jbuf *b, int c)
{
	put_str_or_null(b, c >= 0 ? circuit_name((enum cb_circuit)c) : NULL);
}

/* A top-level member's key: ",\n  \"key\": " (the first: no comma). */
static inline void
key(struct jbuf *b, const char *k)
{
	puts_(b, b->len > 0 ? ",\n  \"" : "{\n  \"");
	puts_(b, k);
	puts_(b, "\": ");
}

/* A compact object's key: ", \"key\": ", or "{\"key\": " for the first. */
static inline void
ckey(struct jbuf *b, const char *k, int first)
{
	puts_(b, first ? "{\"" : ", \"");
	puts_(b, k);
	puts_(b, "\": ");
}

/* One event; lead (or NULL) is text put first, a member or more
 * ("\"v\": 1, "). */
static void
put_event(struct jbuf *b, const struct cb_event *e, const char *lead)
{
	if (lead != NULL) {
		puts_(b, "{");
		puts_(b, lead);
		puts_(b, "\"timestamp\": ");
	} else
		ckey(b, "timestamp", 1);
	put_time_or_null(b, e->ts);
	ckey(b, "iteration", 0);
	put_long(b, e->iteration);
	ckey(b, "event", 0);
	put_str(b, event_kind_name(e->kind));
	ckey(b, "from_state", 0);
	put_circuit_or_null(b, e->from);
	ckey(b, "to_state", 0);
	put_circuit_or_null(b, e->to);
	ckey(b, "reason", 0);
	put_str_or_null(b, e->reason);
	if (e->user != NULL) {
		ckey(b, "user", 0);
		put_str(b, e->user);
	}
	if (e->progress >= 0) {
		ckey(b, "progress", 0);
		puts_(b, e->progress ? "true" : "false");
	}
	if (e->exit_code >= 0) {
		ckey(b, "exit_code", 0);
		put_long(b, e->exit_code);
	}
	if (e->cls[0] != '\0') {
		ckey(b, "class", 0);
		put_str(b, e->cls);
	}
	if (e->type[0] != '\0') {
		ckey(b, "type", 0);
		put_str(b, e->type);
	}
	if (e->task != NULL) {
		ckey(b, "task", 0);
		put_str(b, e->task);
	}
	if (e->hash[0] != '\0') {
		ckey(b, "error_hash", 0);
		put_str(b, e->hash);
	}
	if (e->complete) {
		ckey(b, "complete", 0);
		puts_(b, "true");
	}
	puts_(b, "}");
}

/* The names of the skips of one kind, as a one-line array. */
static void
put_skip_names(struct jbuf *b, const struct cb_state *s,
    enum cb_skip_kind kind)
{
	size_t i;
	int first = 1;

	puts_(b, "[");
	for (i = 0; i < s->n_skips; i++) {
		if (s->skips[i].kind != kind)
			continue;
		if (!first)
			puts_(b, ", ");
		first = 0;
		put_str(b, s->skips[i].name);
	}
	puts_(b, "]");
}

/* The skip records, one per line as history events are. */
static void
put_skips(struct jbuf *b, const struct cb_state *s)
{
	size_t i;

	if (s->n_skips == 0) {
		puts_(b, "[]");
		return;
	}
	puts_(b, "[");
	for (i = 0; i < s->n_skips; i++) {
		const struct cb_skip *k = &s->skips[i];

		puts_(b, i > 0 ? ",\n    " : "\n    ");
		ckey(b, "kind", 1);
		put_str(b, skip_kind_name(k->kind));
		ckey(b, "name", 0);
		put_str(b, k->name);
		ckey(b, "at", 0);
		put_time_or_null(b, k->at);
		ckey(b, "reason", 0);
		put_str_or_null(b, k->reason);
		ckey(b, "user", 0);
		put_str_or_null(b, k->user);
		puts_(b, "}");
	}
	puts_(b, "\n  ]");
}

/* "[\n  e,\n  e\n]" with the given indent before each event. */
static void
put_events(struct jbuf *b, const struct cb_event *e, size_t n,
    const char *indent, const char *close, const char *lead)
{
	size_t i;

	if (n == 0) {
		puts_(b, "[]");
		return;
	}
	puts_(b, "[");
	for (i = 0; i < n; i++) {
		puts_(b, i > 0 ? ",\n" : "\n");
		puts_(b, indent);
		put_event(b, &e[i], lead);
	}
	puts_(b, "\n");
	puts_(b, close);
}

/* The thresholds of the last run by their option names (config keys), or
 * null before any run recorded them. */
static void
put_limits(struct jbuf *b, const struct cb_limits *l)
{
	const int v[] = { l->no_progress, l->same_error, l->half_open_after,
	    l->max_consecutive_errors, l->max_retries, l->half_open_trials };
	size_t i;

	if (l->no_progress <= 0) {
		puts_(b, "null");
		return;
	}
	for (i = 0; i < NELEM(v); i++) {
		ckey(b, threshold_keys[i], i == 0);
		put_long(b, v[i]);
	}
	ckey(b, "cooldown", 0);
	put_num(b, l->cooldown);
	puts_(b, "}");
}

/* A figure of struct cb_usage: null when never reported. */
static void
put_figure(struct jbuf *b, const char *k, double v, int integral,
    int first)
{
	ckey(b, k, first);
	if (v < 0)
		puts_(b, "null");
	else if (integral)
		put_long(b, (long long)v);
	else
		put_num(b, v);
}

static void
put_usage(struct jbuf *b, const struct cb_usage *u, int first)
{
	put_figure(b, "cost_usd", u->cost_usd, 0, first);
	put_figure(b, "input_tokens", (double)u->input_tokens, 1, 0);
	put_figure(b, "output_tokens", (double)u->output_tokens, 1, 0);
	put_figure(b, "cache_tokens", (double)u->cache_tokens, 1, 0);
	put_figure(b, "turns", (double)u->turns, 1, 0);
}

static void
put_window(struct jbuf *b, double limit, double span)
{
	if (limit <= 0 || span <= 0) {
		puts_(b, "null");
		return;
	}
	ckey(b, "limit", 1);
	put_num(b, limit);
	ckey(b, "seconds", 0);
	put_num(b, span);
	puts_(b, "}");
}

/* "spend": the lifetime totals, the last run's figures and the ledger. */
static void
put_spend(struct jbuf *b, const struct cb_state *s)
{
	size_t i;

	ckey(b, "agent", 1);
	put_str_or_null(b, s->spend_agent[0] != '\0' ? s->spend_agent :
	    NULL);
	put_usage(b, &s->spent, 0);
	ckey(b, "last_run", 0);
	put_usage(b, &s->last_usage, 1);
	puts_(b, "}");
	ckey(b, "ledger", 0);
	puts_(b, "[");
	for (i = 0; i < s->n_ledger; i++) {
		puts_(b, i > 0 ? ", " : "");
		ckey(b, "from", 1);
		put_time_or_null(b, s->ledger[i].from);
		ckey(b, "to", 0);
		put_time_or_null(b, s->ledger[i].to);
		ckey(b, "cost_usd", 0);
		put_num(b, s->ledger[i].cost_usd);
		ckey(b, "tokens", 0);
		put_long(b, s->ledger[i].tokens);
		puts_(b, "}");
	}
	puts_(b, "]");
	ckey(b, "cost_window", 0);
	put_window(b, s->cost_window, s->cost_window_span);
	ckey(b, "tokens_window", 0);
	put_window(b, s->tokens_window, s->tokens_window_span);
	puts_(b, "}");
}

static char *
finish(struct jbuf *b)
{
	put(b, "\n", 1);
	if (b->bad) {
		free(b->p);
		return NULL;
	}
	b->p[b->len] = '\0';	/* grow() keeps room for it */
	return b->p;
}

char *
state_text(const struct cb_state *s)
{
	struct jbuf b = { NULL, 0, 0, 0 };
	char *metric;
	size_t i;

	key(&b, "version");
	put_long(&b, STATE_VERSION);
	key(&b, "generation");
	put_long(&b, s->generation);
	key(&b, "name");
	put_str_or_null(&b, s->name);
	key(&b, "state");
	put_str(&b, circuit_name(s->state));
	key(&b, "phase");
	put_str_or_null(&b, s->phase);
	key(&b, "no_progress_count");
	put_long(&b, s->no_progress_count);
	key(&b, "same_error_count");
	put_long(&b, s->same_error_count);
	key(&b, "consecutive_errors");
	put_long(&b, s->consecutive_errors);
	key(&b, "same_task_failures");
	put_long(&b, s->same_task_failures);
	key(&b, "last_failed_task");
	put_str_or_null(&b, s->last_failed_task);
	key(&b, "iteration");
	put_long(&b, s->iteration);
	key(&b, "total_opens");
	put_long(&b, s->total_opens);
	key(&b, "last_progress_iteration");
	put_long(&b, s->last_progress_iteration);
	key(&b, "last_progress_metric");
	if (s->last_progress_metric == NULL)
		puts_(&b, "{}");
	else if ((metric = cJSON_PrintUnformatted(s->last_progress_metric)) !=
	    NULL) {
		puts_(&b, metric);
		cJSON_free(metric);
	} else
		b.bad = 1;
	key(&b, "last_fingerprint");
	put_str_or_null(&b, s->last_fingerprint);
	key(&b, "last_error_hash");
	put_str_or_null(&b, s->last_error_hash);
	key(&b, "last_error");
	ckey(&b, "class", 1);
	put_str(&b, s->last_error.cls);
	ckey(&b, "type", 0);
	put_str(&b, s->last_error.type);
	ckey(&b, "message", 0);
	put_str(&b, s->last_error.message != NULL ? s->last_error.message : "");
	ckey(&b, "exit_code", 0);
	put_long(&b, s->last_error.exit_code);
	puts_(&b, "}");
	key(&b, "opened_at");
	put_time_or_null(&b, s->opened_at);
	key(&b, "open_reason");
	put_str_or_null(&b, s->open_reason);
	key(&b, "open_cause");
	put_str_or_null(&b, cause_name(s->open_cause));
	key(&b, "retry_at");
	put_time_or_null(&b, s->retry_at);
	key(&b, "outcome");
	put_str(&b, outcome_name(s->outcome));
	key(&b, "complete");
	puts_(&b, s->complete ? "true" : "false");
	key(&b, "guidance");
	put_str_or_null(&b, s->guidance);
	key(&b, "skipped_phases");
	put_skip_names(&b, s, SKIP_PHASE);
	key(&b, "skipped_tasks");
	put_skip_names(&b, s, SKIP_TASK);
	key(&b, "skips");
	put_skips(&b, s);
	key(&b, "stuck_task");
	put_str_or_null(&b, s->stuck_task);
	key(&b, "updated_at");
	put_time_or_null(&b, s->updated_at);
	key(&b, "cooldown");
	put_num(&b, s->cooldown);
	key(&b, "trials_left");
	put_long(&b, s->trials_left);
	key(&b, "tripped");
	puts_(&b, s->tripped ? "true" : "false");
	key(&b, "errors_total");
	for (i = 0; i < CB_CLASS_COUNT; i++) {
		ckey(&b, class_keys[i], i == 0);
		put_long(&b, s->errors_total[i]);
	}
	puts_(&b, "}");
	key(&b, "session_id");
	put_str_or_null(&b, s->session_id);
	/* Only with --account: a state without one reads as before. */
	if (s->account != NULL) {
		key(&b, "account");
		put_str_or_null(&b, s->account);
	}
	key(&b, "last_run_at");
	put_time_or_null(&b, s->last_run_at);
	key(&b, "last_success_at");
	put_time_or_null(&b, s->last_success_at);
	key(&b, "last_run_seconds");
	if (s->last_run_seconds >= 0)
		put_num(&b, (double)(long long)(s->last_run_seconds * 1000 +
		    0.5) / 1000);
	else
		puts_(&b, "null");
	key(&b, "thresholds");
	put_limits(&b, &s->limits);
	key(&b, "spend");
	put_spend(&b, s);
	key(&b, "history");
	put_events(&b, s->history, s->n_history, "    ", "  ]", NULL);
	puts_(&b, "\n}");
	return finish(&b);
}

char *
events_text(const struct cb_event *e, size_t n, const char *lead)
{
	struct jbuf b = { NULL, 0, 0, 0 };

	put_events(&b, e, n, "  ", "]", lead);
	return finish(&b);
}

cJSON *
state_to_json(const struct cb_state *s)
{
	char *text = state_text(s);
	cJSON *j = text != NULL ? cJSON_Parse(text) : NULL;

	free(text);
	return j;
}
