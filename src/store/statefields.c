/* SPDX-License-Identifier: ISC */
/*
 * The state file's fields (SPEC §6, §11): one table of the circuit's
 * members and one of a history event's, which the writer (statejson.c)
 * and the reader (stateparse.c) both walk through schema.c.  A new field
 * is one row here: its name, its type, where it lives in struct cb_state
 * (or struct cb_event), what an older file without it reads as, and the
 * version it came in.  Adding a field never changes STATE_VERSION: an
 * older cbexec keeps the member it does not know and writes it back.
 *
 * A member made of members (last_error, errors_total, thresholds, spend,
 * the skips) is one row with its own read and write, side by side below;
 * what is inside it is cbexec's own, so a new field goes at the top level
 * or into an event, never into one of these.
 *
 * "version" is the change an older reader cannot survive.  A newer one is
 * refused before any field is read; an older one is read by the same
 * rows (what it lacks takes its default) and then made this version's in
 * state_migrate(), the one place where versions branch:
 *
 *   0  no "version" member: the circuit breaker spec's own file (the
 *      schema cbexec's state keeps the names of: state, the two counters,
 *      last_progress_metric, last_error_hash, opened_at, open_reason and
 *      the history of state changes, progress and errors), as a loop
 *      script kept it before it used cbexec.  Its rows are those of
 *      "since" 0.
 *   1  every file cbexec has written.  Its fields came one by one (the
 *      skips, the thresholds, retry_at, spend, generation, account,
 *      last_run_seconds, an event's task and error_hash, ...), each
 *      absent from the files before it and read there as its default.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core.h"
#include "store.h"
#include "schema.h"
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

static int
nomem(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* ---- version: read before the rows (state_version), written as ours ---- */

static int
read_version(const struct schema_ctx *c, const cJSON *m, void *dst,
    char *err, size_t errlen)
{
	return 0;
}

static void
write_version(struct jbuf *b, const void *src)
{
	jb_long(b, STATE_VERSION);
}

/* ---- last_progress_metric: {"PHASE":{"metric":n}}, as progress.c keeps it ---- */

static int
read_metric(const struct schema_ctx *c, const cJSON *m, void *dst,
    char *err, size_t errlen)
{
	struct cb_state *s = dst;

	if (m == NULL || cJSON_IsNull(m))
		return 0;
	if (!cJSON_IsObject(m))
		return bad_field(err, errlen, "last_progress_metric",
		    "an object");
	if ((s->last_progress_metric = cJSON_Duplicate(m, 1)) == NULL)
		return nomem(err, errlen);
	return 0;
}

static void
write_metric(struct jbuf *b, const void *src)
{
	const struct cb_state *s = src;
	char *metric;

	if (s->last_progress_metric == NULL)
		jb_puts(b, "{}");
	else if ((metric = cJSON_PrintUnformatted(s->last_progress_metric)) !=
	    NULL) {
		jb_puts(b, metric);
		cJSON_free(metric);
	} else
		b->bad = 1;
}

/* ---- last_error: {"class", "type", "message", "exit_code"} ---- */

static int
read_last_error(const struct schema_ctx *c, const cJSON *le, void *dst,
    char *err, size_t errlen)
{
	struct cb_state *s = dst;
	double d = 0;

	if (le == NULL || cJSON_IsNull(le))
		return 0;
	if (!cJSON_IsObject(le))
		return bad_field(err, errlen, "last_error", "an object");
	if (get_buf(le, "class", "last_error.class", s->last_error.cls,
	    sizeof(s->last_error.cls), err, errlen) == -1 ||
	    get_buf(le, "type", "last_error.type", s->last_error.type,
	    sizeof(s->last_error.type), err, errlen) == -1 ||
	    get_str(le, "message", "last_error.message",
	    &s->last_error.message, err, errlen) == -1 ||
	    get_num(le, "exit_code", "last_error.exit_code", INT_MIN,
	    INT_MAX, 1, &d, err, errlen) == -1)
		return -1;
	s->last_error.exit_code = (int)d;
	/* "" is how a NULL message is written; read it back as NULL. */
	if (s->last_error.message != NULL &&
	    s->last_error.message[0] == '\0') {
		free(s->last_error.message);
		s->last_error.message = NULL;
	}
	return 0;
}

static void
write_last_error(struct jbuf *b, const void *src)
{
	const struct cb_state *s = src;

	jb_ckey(b, "class", 1);
	jb_str(b, s->last_error.cls);
	jb_ckey(b, "type", 0);
	jb_str(b, s->last_error.type);
	jb_ckey(b, "message", 0);
	jb_str(b, s->last_error.message != NULL ? s->last_error.message : "");
	jb_ckey(b, "exit_code", 0);
	jb_long(b, s->last_error.exit_code);
	jb_puts(b, "}");
}

/*
 * ---- the skips ----
 * skipped_phases and skipped_tasks say what is skipped (SPEC §6 lists the
 * first); "skips" adds when, why and who, in the order they were skipped.
 * The three are read together by the row of "skips": a record whose name
 * the list of its kind does not hold is dropped, so editing a list by
 * hand is enough to unskip; a name no record describes (an older file)
 * comes last.
 */

/* Whether list (an array already checked to hold strings) names name. */
static int
listed(const cJSON *list, const char *name)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, list)
		if (strcmp(it->valuestring, name) == 0)
			return 1;
	return 0;
}

/* One skip of kind, with when, why and who from its record rec when there
 * is one (an older file has none).  A name given twice is kept once. */
static int
add_skip(struct cb_state *s, enum cb_skip_kind kind, const char *name,
    const cJSON *rec, char *err, size_t errlen)
{
	struct cb_skip *k;
	size_t i;

	for (i = 0; i < s->n_skips; i++)
		if (s->skips[i].kind == kind &&
		    strcmp(s->skips[i].name, name) == 0)
			return 0;
	k = &s->skips[s->n_skips];
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->at = -1;
	if ((k->name = strdup(name)) == NULL)
		return nomem(err, errlen);
	/* Counted before its fields so breaker_free() sees its strings. */
	s->n_skips++;
	if (rec == NULL)
		return 0;
	return get_time(rec, "at", "skips[].at", 1, &k->at, err, errlen) ==
	    -1 || get_str(rec, "reason", "skips[].reason", &k->reason, err,
	    errlen) == -1 || get_str(rec, "user", "skips[].user", &k->user,
	    err, errlen) == -1 ? -1 : 0;
}

static int
read_skips(const struct schema_ctx *c, const cJSON *recs, void *dst,
    char *err, size_t errlen)
{
	/* In enum cb_skip_kind order. */
	static const char *const names[] = { "skipped_phases",
	    "skipped_tasks" };
	struct cb_state *s = dst;
	const cJSON *list[2], *it, *k, *n;
	enum cb_skip_kind kind;
	size_t total = 0, i;

	for (i = 0; i < NELEM(names); i++) {
		list[i] = member(c->obj, names[i]);
		if (list[i] == NULL || cJSON_IsNull(list[i])) {
			list[i] = NULL;
			continue;
		}
		if (!cJSON_IsArray(list[i]))
			return bad_field(err, errlen, names[i],
			    "an array of strings");
		cJSON_ArrayForEach(it, list[i])
			if (!cJSON_IsString(it))
				return bad_field(err, errlen, names[i],
				    "an array of strings");
		total += (size_t)cJSON_GetArraySize(list[i]);
	}
	if (recs != NULL && !cJSON_IsNull(recs)) {
		if (!cJSON_IsArray(recs))
			return bad_field(err, errlen, "skips",
			    "an array of objects");
		cJSON_ArrayForEach(it, recs)
			if (!cJSON_IsObject(it))
				return bad_field(err, errlen, "skips",
				    "an array of objects");
	} else
		recs = NULL;
	if (total == 0)
		return 0;
	if ((s->skips = calloc(total, sizeof(*s->skips))) == NULL)
		return nomem(err, errlen);
	cJSON_ArrayForEach(it, recs) {
		k = member(it, "kind");
		n = member(it, "name");
		if (!cJSON_IsString(k) || !cJSON_IsString(n) ||
		    skip_kind_from_name(k->valuestring, &kind) == -1 ||
		    list[kind] == NULL || !listed(list[kind], n->valuestring))
			continue;
		if (add_skip(s, kind, n->valuestring, it, err, errlen) == -1)
			return -1;
	}
	for (i = 0; i < NELEM(names); i++)
		cJSON_ArrayForEach(it, list[i])
			if (add_skip(s, (enum cb_skip_kind)i, it->valuestring,
			    NULL, err, errlen) == -1)
				return -1;
	return 0;
}

/* The names of the skips of one kind, as a one-line array. */
static void
write_skip_names(struct jbuf *b, const struct cb_state *s,
    enum cb_skip_kind kind)
{
	size_t i;
	int first = 1;

	jb_puts(b, "[");
	for (i = 0; i < s->n_skips; i++) {
		if (s->skips[i].kind != kind)
			continue;
		if (!first)
			jb_puts(b, ", ");
		first = 0;
		jb_str(b, s->skips[i].name);
	}
	jb_puts(b, "]");
}

static void
write_skipped_phases(struct jbuf *b, const void *src)
{
	write_skip_names(b, src, SKIP_PHASE);
}

static void
write_skipped_tasks(struct jbuf *b, const void *src)
{
	write_skip_names(b, src, SKIP_TASK);
}

/* The skip records, one per line as history events are. */
static void
write_skips(struct jbuf *b, const void *src)
{
	const struct cb_state *s = src;
	size_t i;

	if (s->n_skips == 0) {
		jb_puts(b, "[]");
		return;
	}
	jb_puts(b, "[");
	for (i = 0; i < s->n_skips; i++) {
		const struct cb_skip *k = &s->skips[i];

		jb_puts(b, i > 0 ? ",\n    " : "\n    ");
		jb_ckey(b, "kind", 1);
		jb_str(b, skip_kind_name(k->kind));
		jb_ckey(b, "name", 0);
		jb_str(b, k->name);
		jb_ckey(b, "at", 0);
		jb_time_or_null(b, k->at);
		jb_ckey(b, "reason", 0);
		jb_str_or_null(b, k->reason);
		jb_ckey(b, "user", 0);
		jb_str_or_null(b, k->user);
		jb_puts(b, "}");
	}
	jb_puts(b, "\n  ]");
}

/* ---- outputs: the files the runs write, by host (driver/outputs.c) ---- */

/*
 * [{"kind":"metrics","host":"h","path":"/abs","circuit":"c","store":null,
 *   "account":null,"follow":false,"at":"ISO-8601"}, ...]: at most
 * CB_OUTPUTS_MAX, one per line.  What only helps the operator's verbs
 * find those files is no reason to refuse a state: a record of a kind
 * this cbexec does not know (a newer one's), or without a host or a
 * path, is left out.
 */
static int
read_outputs(const struct schema_ctx *c, const cJSON *m, void *dst,
    char *err, size_t errlen)
{
	struct cb_state *s = dst;
	const cJSON *it, *k;
	struct cb_output *o;
	char f[48];
	int n;

	if (m == NULL || cJSON_IsNull(m))
		return 0;
	if (!cJSON_IsArray(m))
		return bad_field(err, errlen, "outputs", "an array of objects");
	n = cJSON_GetArraySize(m);
	if (n > CB_OUTPUTS_MAX)
		n = CB_OUTPUTS_MAX;
	if (n == 0)
		return 0;
	if ((s->outputs = calloc((size_t)n, sizeof(*s->outputs))) == NULL)
		return nomem(err, errlen);
	cJSON_ArrayForEach(it, m) {
		if (s->n_outputs >= (size_t)n)
			break;
		snprintf(f, sizeof(f), "outputs[%zu]", s->n_outputs);
		if (!cJSON_IsObject(it))
			return bad_field(err, errlen, f, "an object");
		o = &s->outputs[s->n_outputs];
		k = member(it, "kind");
		if (!cJSON_IsString(k) ||
		    output_kind_from_name(k->valuestring, &o->kind) == -1 ||
		    !cJSON_IsString(member(it, "host")) ||
		    !cJSON_IsString(member(it, "path")))
			continue;
		o->at = -1;
		/* Counted before its fields so breaker_free() sees them. */
		s->n_outputs++;
		if (get_str(it, "host", f, &o->host, err, errlen) == -1 ||
		    get_str(it, "path", f, &o->path, err, errlen) == -1 ||
		    get_str(it, "circuit", f, &o->circuit, err, errlen) == -1 ||
		    get_str(it, "store", f, &o->store, err, errlen) == -1 ||
		    get_str(it, "account", f, &o->account, err, errlen) == -1 ||
		    get_time(it, "at", f, 1, &o->at, err, errlen) == -1)
			return -1;
		o->follow = cJSON_IsTrue(member(it, "follow"));
	}
	return 0;
}

static void
write_outputs(struct jbuf *b, const void *src)
{
	const struct cb_state *s = src;
	size_t i;

	if (s->n_outputs == 0) {
		jb_puts(b, "[]");
		return;
	}
	jb_puts(b, "[");
	for (i = 0; i < s->n_outputs; i++) {
		const struct cb_output *o = &s->outputs[i];

		jb_puts(b, i > 0 ? ",\n    " : "\n    ");
		jb_ckey(b, "kind", 1);
		jb_str(b, output_kind_name(o->kind));
		jb_ckey(b, "host", 0);
		jb_str(b, o->host);
		jb_ckey(b, "path", 0);
		jb_str(b, o->path);
		jb_ckey(b, "circuit", 0);
		jb_str_or_null(b, o->circuit);
		jb_ckey(b, "store", 0);
		jb_str_or_null(b, o->store);
		jb_ckey(b, "account", 0);
		jb_str_or_null(b, o->account);
		jb_ckey(b, "follow", 0);
		jb_puts(b, o->follow ? "true" : "false");
		jb_ckey(b, "at", 0);
		jb_time_or_null(b, o->at);
		jb_puts(b, "}");
	}
	jb_puts(b, "\n  ]");
}

/* ---- errors_total: lifetime runs per class ---- */

static int
read_errors_total(const struct schema_ctx *c, const cJSON *et, void *dst,
    char *err, size_t errlen)
{
	struct cb_state *s = dst;
	char f[64];
	size_t i;

	if (et == NULL || cJSON_IsNull(et))
		return 0;
	if (!cJSON_IsObject(et))
		return bad_field(err, errlen, "errors_total", "an object");
	for (i = 0; i < CB_CLASS_COUNT; i++) {
		snprintf(f, sizeof(f), "errors_total.%s", class_keys[i]);
		if (get_long(et, class_keys[i], f, &s->errors_total[i], err,
		    errlen) == -1)
			return -1;
	}
	return 0;
}

static void
write_errors_total(struct jbuf *b, const void *src)
{
	const struct cb_state *s = src;
	size_t i;

	for (i = 0; i < CB_CLASS_COUNT; i++) {
		jb_ckey(b, class_keys[i], i == 0);
		jb_long(b, s->errors_total[i]);
	}
	jb_puts(b, "}");
}

/* ---- thresholds: what the last run was judged by, by option name ---- */

/* null before a run recorded them; a member left out stays 0 (not
 * recorded). */
static int
read_thresholds(const struct schema_ctx *c, const cJSON *j, void *dst,
    char *err, size_t errlen)
{
	struct cb_limits *l = &((struct cb_state *)dst)->limits;
	int *const v[N_THRESHOLD_KEYS] = { &l->no_progress, &l->same_error,
	    &l->half_open_after, &l->max_consecutive_errors, &l->max_retries,
	    &l->half_open_trials };
	char f[64];
	size_t i;

	if (j == NULL || cJSON_IsNull(j))
		return 0;
	if (!cJSON_IsObject(j))
		return bad_field(err, errlen, "thresholds", "an object");
	for (i = 0; i < N_THRESHOLD_KEYS; i++) {
		snprintf(f, sizeof(f), "thresholds.%s", threshold_keys[i]);
		if (get_int(j, threshold_keys[i], f, v[i], err, errlen) == -1)
			return -1;
	}
	return get_num(j, "cooldown", "thresholds.cooldown", 0, 1e12, 0,
	    &l->cooldown, err, errlen);
}

static void
write_thresholds(struct jbuf *b, const void *src)
{
	const struct cb_limits *l = &((const struct cb_state *)src)->limits;
	const int v[] = { l->no_progress, l->same_error, l->half_open_after,
	    l->max_consecutive_errors, l->max_retries, l->half_open_trials };
	size_t i;

	if (l->no_progress <= 0) {
		jb_puts(b, "null");
		return;
	}
	for (i = 0; i < NELEM(v); i++) {
		jb_ckey(b, threshold_keys[i], i == 0);
		jb_long(b, v[i]);
	}
	jb_ckey(b, "cooldown", 0);
	jb_num(b, l->cooldown);
	jb_puts(b, "}");
}

/* ---- spend: lifetime totals, the last run's figures, the ledger ---- */

/* A figure of struct cb_usage: null (never reported) is -1. */
static int
read_figure(const cJSON *o, const char *k, const char *where, int integral,
    double *v, char *err, size_t errlen)
{
	const cJSON *m = member(o, k);
	char f[64];

	if (m == NULL || cJSON_IsNull(m)) {
		*v = -1;
		return 0;
	}
	snprintf(f, sizeof(f), "%s.%s", where, k);
	return jv_num(m, f, 0, integral ? (double)CB_LONG_MAX : CB_COST_MAX,
	    integral, v, err, errlen);
}

static const char *const usage_keys[] = { "cost_usd", "input_tokens",
	"output_tokens", "cache_tokens", "turns" };

static int
read_usage(const cJSON *o, const char *where, struct cb_usage *u, char *err,
    size_t errlen)
{
	double v[NELEM(usage_keys)];
	size_t i;

	if (o == NULL || cJSON_IsNull(o))
		return 0;
	if (!cJSON_IsObject(o))
		return bad_field(err, errlen, where, "an object");
	for (i = 0; i < NELEM(usage_keys); i++)
		if (read_figure(o, usage_keys[i], where, i > 0, &v[i], err,
		    errlen) == -1)
			return -1;
	u->cost_usd = v[0];
	u->input_tokens = (long)v[1];
	u->output_tokens = (long)v[2];
	u->cache_tokens = (long)v[3];
	u->turns = (long)v[4];
	return 0;
}

static int
read_window(const cJSON *j, const char *k, double *limit, double *span,
    char *err, size_t errlen)
{
	const cJSON *w = member(j, k);
	char f[64];

	if (w == NULL || cJSON_IsNull(w))
		return 0;
	if (!cJSON_IsObject(w))
		return bad_field(err, errlen, k, "an object or null");
	snprintf(f, sizeof(f), "spend.%s.limit", k);
	if (get_num(w, "limit", f, 0, CB_COST_MAX, 0, limit, err, errlen) == -1)
		return -1;
	snprintf(f, sizeof(f), "spend.%s.seconds", k);
	return get_num(w, "seconds", f, 0, 1e12, 0, span, err, errlen);
}

static int
read_spend(const struct schema_ctx *c, const cJSON *j, void *dst,
    char *err, size_t errlen)
{
	struct cb_state *s = dst;
	const cJSON *led, *e;
	char *agent = NULL, f[64];
	struct cb_ledger_entry *le;
	double t = 0;

	if (j == NULL || cJSON_IsNull(j))
		return 0;
	if (!cJSON_IsObject(j))
		return bad_field(err, errlen, "spend", "an object");
	if (get_str(j, "agent", "spend.agent", &agent, err, errlen) == -1)
		return -1;
	snprintf(s->spend_agent, sizeof(s->spend_agent), "%s",
	    agent != NULL ? agent : "");
	free(agent);
	if (read_usage(j, "spend", &s->spent, err, errlen) == -1 ||
	    read_usage(member(j, "last_run"), "spend.last_run",
	    &s->last_usage, err, errlen) == -1 ||
	    read_window(j, "cost_window", &s->cost_window,
	    &s->cost_window_span, err, errlen) == -1 ||
	    read_window(j, "tokens_window", &s->tokens_window,
	    &s->tokens_window_span, err, errlen) == -1)
		return -1;
	led = member(j, "ledger");
	if (led == NULL || cJSON_IsNull(led))
		return 0;
	if (!cJSON_IsArray(led) || cJSON_GetArraySize(led) > CB_LEDGER_MAX)
		return bad_field(err, errlen, "spend.ledger", "an array of at "
		    "most 48 buckets");
	cJSON_ArrayForEach(e, led) {
		snprintf(f, sizeof(f), "spend.ledger[%zu]", s->n_ledger);
		if (!cJSON_IsObject(e))
			return bad_field(err, errlen, f, "an object");
		le = &s->ledger[s->n_ledger];
		memset(le, 0, sizeof(*le));
		if (get_time(e, "from", f, 0, &le->from, err, errlen) == -1 ||
		    get_time(e, "to", f, 0, &le->to, err, errlen) == -1 ||
		    get_num(e, "cost_usd", f, 0, CB_COST_MAX, 0, &le->cost_usd,
		    err, errlen) == -1 ||
		    get_num(e, "tokens", f, 0, (double)CB_LONG_MAX, 1, &t,
		    err, errlen) == -1)
			return -1;
		le->tokens = (long)t;
		s->n_ledger++;
	}
	return 0;
}

/* A figure of struct cb_usage: null when never reported. */
static void
write_figure(struct jbuf *b, const char *k, double v, int integral,
    int first)
{
	jb_ckey(b, k, first);
	if (v < 0)
		jb_puts(b, "null");
	else if (integral)
		jb_long(b, (long long)v);
	else
		jb_num(b, v);
}

static void
write_usage(struct jbuf *b, const struct cb_usage *u, int first)
{
	write_figure(b, usage_keys[0], u->cost_usd, 0, first);
	write_figure(b, usage_keys[1], (double)u->input_tokens, 1, 0);
	write_figure(b, usage_keys[2], (double)u->output_tokens, 1, 0);
	write_figure(b, usage_keys[3], (double)u->cache_tokens, 1, 0);
	write_figure(b, usage_keys[4], (double)u->turns, 1, 0);
}

static void
write_window(struct jbuf *b, double limit, double span)
{
	if (limit <= 0 || span <= 0) {
		jb_puts(b, "null");
		return;
	}
	jb_ckey(b, "limit", 1);
	jb_num(b, limit);
	jb_ckey(b, "seconds", 0);
	jb_num(b, span);
	jb_puts(b, "}");
}

static void
write_spend(struct jbuf *b, const void *src)
{
	const struct cb_state *s = src;
	size_t i;

	jb_ckey(b, "agent", 1);
	jb_str_or_null(b, s->spend_agent[0] != '\0' ? s->spend_agent : NULL);
	write_usage(b, &s->spent, 0);
	jb_ckey(b, "last_run", 0);
	write_usage(b, &s->last_usage, 1);
	jb_puts(b, "}");
	jb_ckey(b, "ledger", 0);
	jb_puts(b, "[");
	for (i = 0; i < s->n_ledger; i++) {
		jb_puts(b, i > 0 ? ", " : "");
		jb_ckey(b, "from", 1);
		jb_time_or_null(b, s->ledger[i].from);
		jb_ckey(b, "to", 0);
		jb_time_or_null(b, s->ledger[i].to);
		jb_ckey(b, "cost_usd", 0);
		jb_num(b, s->ledger[i].cost_usd);
		jb_ckey(b, "tokens", 0);
		jb_long(b, s->ledger[i].tokens);
		jb_puts(b, "}");
	}
	jb_puts(b, "]");
	jb_ckey(b, "cost_window", 0);
	write_window(b, s->cost_window, s->cost_window_span);
	jb_ckey(b, "tokens_window", 0);
	write_window(b, s->tokens_window, s->tokens_window_span);
	jb_puts(b, "}");
}

/* ---- history: the events, one per line (their own table, below) ---- */

/*
 * An event's kind.  One this cbexec does not know is a newer cbexec's
 * (a name as ours are: lowercase letters, digits and '_'): the event is
 * kept and written back as it came, and counts for nothing here, as an
 * unknown member does (SPEC §11: an older cbexec never erases what a
 * newer one wrote, nor refuses it).
 */
static int
read_event_kind(const struct schema_ctx *c, const cJSON *m, void *dst,
    char *err, size_t errlen)
{
	struct cb_event *e = dst;
	const char *p;
	size_t n;

	if (cJSON_IsString(m) && event_kind_from_name(m->valuestring,
	    &e->kind) == 0) {
		e->other[0] = '\0';
		return 0;
	}
	if (cJSON_IsString(m) && (n = strlen(m->valuestring)) > 0 &&
	    n < sizeof(e->other) && strspn(m->valuestring,
	    "abcdefghijklmnopqrstuvwxyz0123456789_") == n) {
		e->kind = EV_OTHER;
		memcpy(e->other, m->valuestring, n + 1);
		return 0;
	}
	p = "\"state_change\", \"progress\", \"error\", \"reset\", \"skip\", "
	    "\"trip\" or a newer cbexec's event name ([a-z0-9_], at most 31 "
	    "bytes)";
	return bad_field(err, errlen, "event", p);
}

static void
write_event_kind(struct jbuf *b, const void *src)
{
	jb_str(b, event_name(src));
}

static void
write_history(struct jbuf *b, const void *src)
{
	const struct cb_state *s = src;

	state_events(b, s->history, s->n_history, "    ", "  ]", NULL);
}

/* ---- the tables ---- */

#define S(m)	offsetof(struct cb_state, m)
#define E(m)	offsetof(struct cb_event, m)
#define CUSTOM(name, since, rd, wr) \
	{ FNAME(name), FT_CUSTOM, 0, 0, 0, since, 0, NULL, rd, wr }

/* The circuit, in the order its members are written. */
static const struct field state_fields[] = {
	/* name, type, where, size, default, since, flags, was */
	CUSTOM("version", 1, read_version, write_version),
	{ FNAME("generation"), FT_LONG, S(generation), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("name"), FT_STR, S(name), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("state"), FT_CIRCUIT, S(state), 0, CB_CLOSED, 0, FR_REQUIRED, NULL,
	  0, 0 },
	{ FNAME("phase"), FT_STR, S(phase), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("no_progress_count"), FT_INT, S(no_progress_count), 0, 0, 0, 0,
	  NULL, 0, 0 },
	{ FNAME("same_error_count"), FT_INT, S(same_error_count), 0, 0, 0, 0, NULL,
	  0, 0 },
	{ FNAME("consecutive_errors"), FT_INT, S(consecutive_errors), 0, 0, 1, 0,
	  NULL, 0, 0 },
	{ FNAME("same_task_failures"), FT_INT, S(same_task_failures), 0, 0, 1, 0,
	  NULL, 0, 0 },
	{ FNAME("last_failed_task"), FT_STR, S(last_failed_task), 0, 0, 1, 0, NULL,
	  0, 0 },
	{ FNAME("iteration"), FT_LONG, S(iteration), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("total_opens"), FT_LONG, S(total_opens), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("last_progress_iteration"), FT_LONG, S(last_progress_iteration), 0,
	  0, 1, 0, NULL, 0, 0 },
	CUSTOM("last_progress_metric", 0, read_metric, write_metric),
	{ FNAME("last_fingerprint"), FT_STR, S(last_fingerprint), 0, 0, 1, 0, NULL,
	  0, 0 },
	{ FNAME("last_error_hash"), FT_STR, S(last_error_hash), 0, 0, 0, 0, NULL, 0,
	  0 },
	CUSTOM("last_error", 1, read_last_error, write_last_error),
	{ FNAME("opened_at"), FT_TIME, S(opened_at), 0, -1, 0, 0, NULL, 0, 0 },
	{ FNAME("open_reason"), FT_STR, S(open_reason), 0, 0, 0, 0, NULL, 0, 0 },
	/* What a half-open trial must disprove (absent in an older file: a
	 * trial closes on a success or progress, as it did). */
	{ FNAME("open_cause"), FT_CAUSE, S(open_cause), 0, CAUSE_NONE, 1, 0,
	  NULL, 0, 0 },
	{ FNAME("retry_at"), FT_TIME, S(retry_at), 0, -1, 1, 0, NULL, 0, 0 },
	{ FNAME("outcome"), FT_OUTCOME, S(outcome), 0, OUT_OK, 1, 0, NULL, 0, 0 },
	{ FNAME("complete"), FT_BOOL, S(complete), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("guidance"), FT_STR, S(guidance), 0, 0, 1, 0, NULL, 0, 0 },
	/* Read by the row of "skips". */
	CUSTOM("skipped_phases", 1, NULL, write_skipped_phases),
	CUSTOM("skipped_tasks", 1, NULL, write_skipped_tasks),
	CUSTOM("skips", 1, read_skips, write_skips),
	{ FNAME("stuck_task"), FT_STR, S(stuck_task), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("updated_at"), FT_TIME, S(updated_at), 0, -1, 1, 0, NULL, 0, 0 },
	{ FNAME("cooldown"), FT_NUM, S(cooldown), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("trials_left"), FT_INT, S(trials_left), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("tripped"), FT_BOOL, S(tripped), 0, 0, 1, 0, NULL, 0, 0 },
	CUSTOM("errors_total", 1, read_errors_total, write_errors_total),
	{ FNAME("session_id"), FT_STR, S(session_id), 0, 0, 1, 0, NULL, 0, 0 },
	/* Only with --account: a state without one reads as before. */
	{ FNAME("account"), FT_STR, S(account), 0, 0, 1, FR_OPTIONAL, NULL, 0, 0 },
	{ FNAME("last_run_at"), FT_TIME, S(last_run_at), 0, -1, 1, 0, NULL, 0, 0 },
	{ FNAME("last_success_at"), FT_TIME, S(last_success_at), 0, -1, 1, 0, NULL,
	  0, 0 },
	{ FNAME("last_run_seconds"), FT_SECONDS, S(last_run_seconds), 0, -1, 1, 0,
	  NULL, 0, 0 },
	CUSTOM("thresholds", 1, read_thresholds, write_thresholds),
	CUSTOM("spend", 1, read_spend, write_spend),
	CUSTOM("outputs", 1, read_outputs, write_outputs),
	CUSTOM("history", 0, state_read_history, write_history),
};

/* A history event.  from_state and to_state are null for an event that
 * is no transition; the fields of a run's event are left out of others. */
static const struct field event_fields[] = {
	{ FNAME("timestamp"), FT_STAMP, E(ts), 0, 0, 0, FR_REQUIRED, NULL, 0, 0 },
	{ FNAME("iteration"), FT_LONG, E(iteration), 0, 0, 1, 0, NULL, 0, 0 },
	{ FNAME("event"), FT_CUSTOM, 0, 0, 0, 0, FR_REQUIRED, NULL,
	  read_event_kind, write_event_kind },
	{ FNAME("from_state"), FT_CIRCUIT_OR_NULL, E(from), 0, -1, 0, 0, NULL, 0,
	  0 },
	{ FNAME("to_state"), FT_CIRCUIT_OR_NULL, E(to), 0, -1, 0, 0, NULL, 0, 0 },
	{ FNAME("reason"), FT_STR, E(reason), 0, 0, 0, 0, NULL, 0, 0 },
	{ FNAME("user"), FT_STR, E(user), 0, 0, 1, FR_OPTIONAL, NULL, 0, 0 },
	{ FNAME("progress"), FT_TRI, E(progress), 0, -1, 1, FR_OPTIONAL, NULL, 0,
	  0 },
	{ FNAME("exit_code"), FT_CODE, E(exit_code), 0, -1, 1, FR_OPTIONAL, NULL, 0,
	  0 },
	{ FNAME("class"), FT_TEXT, E(cls), sizeof(((struct cb_event *)0)->cls), 0,
	  1, FR_OPTIONAL, NULL, 0, 0 },
	{ FNAME("type"), FT_TEXT, E(type), sizeof(((struct cb_event *)0)->type), 0,
	  1, FR_OPTIONAL, NULL, 0, 0 },
	{ FNAME("task"), FT_STR, E(task), 0, 0, 1, FR_OPTIONAL, NULL, 0, 0 },
	{ FNAME("error_hash"), FT_TEXT, E(hash), sizeof(((struct cb_event *)0)->hash),
	  0, 1, FR_OPTIONAL, NULL, 0, 0 },
	/* A run that reported completion (written only then). */
	{ FNAME("complete"), FT_BOOL, E(complete), 0, 0, 1, FR_OPTIONAL, NULL, 0,
	  0 },
};

_Static_assert(NELEM(state_fields) <= SCHEMA_MAX, "too many state fields");
_Static_assert(NELEM(event_fields) <= SCHEMA_MAX, "too many event fields");

const struct schema state_schema = {
	state_fields, NELEM(state_fields), S(unknown),
	"corrupt state file: no '%s'", "{\n  ", SEP(",\n  "), "\n}"
};

const struct schema event_schema = {
	event_fields, NELEM(event_fields), E(unknown), NULL, "{", SEP(", "), "}"
};

/* ---- versions ---- */

int
state_version(const cJSON *j, int *version, char *err, size_t errlen)
{
	double d = 0;

	/* The circuit breaker spec's own file has none. */
	if (member(j, "version") == NULL) {
		*version = 0;
		return 0;
	}
	if (get_num(j, "version", "version", 1, INT_MAX, 1, &d, err,
	    errlen) == -1)
		return bad_field(err, errlen, "version", "a positive integer");
	if (d > STATE_VERSION) {
		snprintf(err, errlen, "state version %d is newer than this "
		    "cbexec supports (%d)", (int)d, STATE_VERSION);
		return -2;
	}
	*version = (int)d;
	return 0;
}

void
state_migrate(struct cb_state *s, int version)
{
	/*
	 * 0 -> 1: the spec's members are ours, of the same names and
	 * types, and the rows of "since" 1 took their defaults: nothing is
	 * left to convert.  A change an older file cannot be read through
	 * the rows for gets its branch here, "if (version < N)", and N
	 * becomes STATE_VERSION.
	 */
	(void)version;
	s->version = STATE_VERSION;
}
