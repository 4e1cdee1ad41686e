/* SPDX-License-Identifier: ISC */
/*
 * The state file's JSON, inward (SPEC §6): a cJSON object back into
 * struct cb_state.  statejson.c writes the shape read here.
 *
 * Loading is strict about what is present and lenient about what is
 * missing: every field is type-checked and a bad one is named in the error,
 * but an absent counter keeps breaker_init()'s default, so older or
 * hand-written files still load.  Nothing is ever "repaired": a file that
 * does not parse is an error, never a fresh circuit, because silently
 * resetting would re-arm a tripped breaker.  For the same reason "version"
 * and "state" must be present, and a version newer than STATE_VERSION is
 * refused.  Loading moves no value, so save(load(x)) is x.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core.h"
#include "store.h"
#include "jsonfield.h"

/*
 * One history event.  The readers name a bad member by its key alone;
 * only when one fails is the name made "history[i].key", so a good file
 * costs no formatting per member.
 */
static int
event_fields(const cJSON *j, struct cb_event *e, char *err, size_t errlen)
{
	const cJSON *v;
	double d;

	if (member(j, "timestamp") == NULL)
		return bad_field(err, errlen, "timestamp",
		    "an ISO-8601 timestamp");
	if (get_time(j, "timestamp", "timestamp", 0, &e->ts, err,
	    errlen) == -1 ||
	    get_long(j, "iteration", "iteration", &e->iteration, err,
	    errlen) == -1 ||
	    get_circuit(j, "from_state", "from_state", &e->from, err,
	    errlen) == -1 ||
	    get_circuit(j, "to_state", "to_state", &e->to, err,
	    errlen) == -1 ||
	    get_str(j, "reason", "reason", &e->reason, err, errlen) == -1 ||
	    get_str(j, "user", "user", &e->user, err, errlen) == -1 ||
	    get_buf(j, "class", "class", e->cls, sizeof(e->cls), err,
	    errlen) == -1 ||
	    get_buf(j, "type", "type", e->type, sizeof(e->type), err,
	    errlen) == -1 ||
	    get_str(j, "task", "task", &e->task, err, errlen) == -1 ||
	    get_buf(j, "error_hash", "error_hash", e->hash, sizeof(e->hash),
	    err, errlen) == -1)
		return -1;
	v = member(j, "event");
	if (!cJSON_IsString(v) ||
	    event_kind_from_name(v->valuestring, &e->kind) == -1)
		return bad_field(err, errlen, "event", "\"state_change\", "
		    "\"progress\", \"error\", \"reset\", \"skip\" or "
		    "\"trip\"");
	v = member(j, "progress");
	if (v != NULL && !cJSON_IsNull(v)) {
		if (!cJSON_IsBool(v))
			return bad_field(err, errlen, "progress",
			    "true, false or null");
		e->progress = cJSON_IsTrue(v);
	}
	v = member(j, "exit_code");
	if (v != NULL && !cJSON_IsNull(v)) {
		d = 0;
		if (get_num(j, "exit_code", "exit_code", 0, INT_MAX, 1, &d,
		    err, errlen) == -1)
			return -1;
		e->exit_code = (int)d;
	}
	v = member(j, "complete");
	if (v != NULL && !cJSON_IsNull(v)) {
		if (!cJSON_IsBool(v))
			return bad_field(err, errlen, "complete",
			    "true, false or null");
		e->complete = cJSON_IsTrue(v);
	}
	return 0;
}

static int
event_from_json(const cJSON *j, size_t i, struct cb_event *e, char *err,
    size_t errlen)
{
	static const char pre[] = "field '";
	char why[256];

	if (!cJSON_IsObject(j)) {
		snprintf(err, errlen, "field 'history[%zu]': expected an "
		    "object", i);
		return -1;
	}
	if (event_fields(j, e, why, sizeof(why)) == 0)
		return 0;
	if (strncmp(why, pre, sizeof(pre) - 1) == 0)
		snprintf(err, errlen, "%shistory[%zu].%s", pre, i,
		    why + sizeof(pre) - 1);
	else
		snprintf(err, errlen, "%s", why);
	return -1;
}

int
history_event(struct event_list *l, const cJSON *j, char *err,
    size_t errlen)
{
	struct cb_event *e;
	size_t cap;

	if (no_duplicates(j, err, errlen) == -1)
		return -1;
	if (l->n == l->cap) {
		cap = l->cap > 0 ? l->cap * 2 : 128;
		if ((e = realloc(l->v, cap * sizeof(*e))) == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		l->v = e;
		l->cap = cap;
	}
	/* Counted before filling so event_list_free() sees its strings. */
	e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	e->from = e->to = e->progress = e->exit_code = -1;
	return event_from_json(j, l->n - 1, e, err, errlen);
}

void
event_list_free(struct event_list *l)
{
	while (l->n > 0)
		event_free(&l->v[--l->n]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int
load_history(const cJSON *j, struct cb_state *s, struct event_list *l,
    char *err, size_t errlen)
{
	const cJSON *it;
	struct cb_event *e;
	int n;

	/* Read already, event by event, as the text was parsed. */
	if (l != NULL && l->taken) {
		s->history = l->v;
		s->n_history = l->n;
		memset(l, 0, sizeof(*l));
		return 0;
	}
	if (j == NULL || cJSON_IsNull(j))
		return 0;
	if (!cJSON_IsArray(j))
		return bad_field(err, errlen, "history", "an array");
	if ((n = cJSON_GetArraySize(j)) == 0)
		return 0;
	if ((s->history = calloc((size_t)n, sizeof(*s->history))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	cJSON_ArrayForEach(it, j) {
		/* Counted before filling so breaker_free() sees its strings. */
		e = &s->history[s->n_history++];
		e->from = e->to = e->progress = e->exit_code = -1;
		if (event_from_json(it, s->n_history - 1, e, err, errlen) == -1)
			return -1;
	}
	return 0;
}

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
	if ((k->name = strdup(name)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* Counted before its fields so breaker_free() sees its strings. */
	s->n_skips++;
	if (rec == NULL)
		return 0;
	return get_time(rec, "at", "skips[].at", 1, &k->at, err, errlen) ==
	    -1 || get_str(rec, "reason", "skips[].reason", &k->reason, err,
	    errlen) == -1 || get_str(rec, "user", "skips[].user", &k->user,
	    err, errlen) == -1 ? -1 : 0;
}

/*
 * skipped_phases and skipped_tasks say what is skipped; "skips" adds when,
 * why and who, in the order they were skipped.  A record whose name the
 * list of its kind does not hold is dropped, so editing a list by hand is
 * enough to unskip; a name no record describes (an older file) comes last.
 */
static int
load_skips(const cJSON *j, struct cb_state *s, char *err, size_t errlen)
{
	/* In enum cb_skip_kind order. */
	static const char *const names[] = { "skipped_phases",
	    "skipped_tasks" };
	const cJSON *recs = member(j, "skips"), *list[2], *it, *k, *n;
	enum cb_skip_kind kind;
	size_t total = 0, i;

	for (i = 0; i < NELEM(names); i++) {
		list[i] = member(j, names[i]);
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
	if ((s->skips = calloc(total, sizeof(*s->skips))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
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

/* A span of seconds, or null (and absent: a file of before it) as -1. */
static int
get_seconds(const cJSON *j, const char *key, double *v, char *err,
    size_t errlen)
{
	const cJSON *m = member(j, key);

	*v = -1;
	if (m == NULL || cJSON_IsNull(m))
		return 0;
	return get_num(j, key, key, 0, 1e12, 0, v, err, errlen);
}

/* "thresholds": null before a run recorded them; a member left out stays
 * 0 (not recorded). */
static int
load_limits(const cJSON *j, struct cb_limits *l, char *err, size_t errlen)
{
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

/* A figure of struct cb_usage: null (never reported) is -1. */
static int
load_figure(const cJSON *o, const char *k, const char *where, int integral,
    double *v, char *err, size_t errlen)
{
	const cJSON *m = member(o, k);
	char f[64];

	if (m == NULL || cJSON_IsNull(m)) {
		*v = -1;
		return 0;
	}
	snprintf(f, sizeof(f), "%s.%s", where, k);
	return get_num(o, k, f, 0, integral ? (double)CB_LONG_MAX : CB_COST_MAX,
	    integral, v, err, errlen);
}

static int
load_usage(const cJSON *o, const char *where, struct cb_usage *u, char *err,
    size_t errlen)
{
	double v[5];
	static const char *const keys[] = { "cost_usd", "input_tokens",
	    "output_tokens", "cache_tokens", "turns" };
	size_t i;

	if (o == NULL || cJSON_IsNull(o))
		return 0;
	if (!cJSON_IsObject(o))
		return bad_field(err, errlen, where, "an object");
	for (i = 0; i < NELEM(keys); i++)
		if (load_figure(o, keys[i], where, i > 0, &v[i], err,
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
load_window(const cJSON *j, const char *k, double *limit, double *span,
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

/* "spend": totals, the last run's figures, the bounded ledger. */
static int
load_spend(const cJSON *j, struct cb_state *s, char *err, size_t errlen)
{
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
	if (load_usage(j, "spend", &s->spent, err, errlen) == -1 ||
	    load_usage(member(j, "last_run"), "spend.last_run",
	    &s->last_usage, err, errlen) == -1 ||
	    load_window(j, "cost_window", &s->cost_window,
	    &s->cost_window_span, err, errlen) == -1 ||
	    load_window(j, "tokens_window", &s->tokens_window,
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
		    get_num(e, "cost_usd", f, 0, CB_COST_MAX, 0, &le->cost_usd, err,
		    errlen) == -1 ||
		    get_num(e, "tokens", f, 0, (double)CB_LONG_MAX, 1, &t,
		    err, errlen) == -1)
			return -1;
		le->tokens = (long)t;
		s->n_ledger++;
	}
	return 0;
}

static int
load_fields(const cJSON *j, struct cb_state *s, struct event_list *l,
    char *err, size_t errlen)
{
	const cJSON *v, *le, *et;
	double d;
	size_t i;
	char f[64];

	if (!cJSON_IsObject(j)) {
		snprintf(err, errlen, "corrupt state file: not a JSON object");
		return -1;
	}
	v = member(j, "version");
	if (v == NULL) {
		snprintf(err, errlen, "corrupt state file: no 'version'");
		return -1;
	}
	d = 0;
	if (get_num(j, "version", "version", 1, INT_MAX, 1, &d, err,
	    errlen) == -1)
		return bad_field(err, errlen, "version", "a positive integer");
	if (d > STATE_VERSION) {
		snprintf(err, errlen, "state version %d is newer than this "
		    "cbexec supports (%d)", (int)d, STATE_VERSION);
		return -2;
	}
	s->version = (int)d;

	/* Without "state" a default CLOSED could re-arm a tripped breaker. */
	v = member(j, "state");
	if (v == NULL) {
		snprintf(err, errlen, "corrupt state file: no 'state'");
		return -1;
	}
	if (!cJSON_IsString(v) || circuit_from_name(v->valuestring,
	    &s->state) == -1)
		return bad_field(err, errlen, "state",
		    "\"CLOSED\", \"HALF_OPEN\" or \"OPEN\"");
	v = member(j, "outcome");
	if (v != NULL && (!cJSON_IsString(v) ||
	    outcome_from_name(v->valuestring, &s->outcome) == -1))
		return bad_field(err, errlen, "outcome", "an outcome name "
		    "(\"OK\", \"OPEN\", \"STUCK\", ...)");

	if (get_long(j, "generation", "generation", &s->generation, err,
	    errlen) == -1 ||
	    get_str(j, "name", "name", &s->name, err, errlen) == -1 ||
	    get_str(j, "phase", "phase", &s->phase, err, errlen) == -1 ||
	    get_int(j, "no_progress_count", "no_progress_count",
	    &s->no_progress_count, err, errlen) == -1 ||
	    get_int(j, "same_error_count", "same_error_count",
	    &s->same_error_count, err, errlen) == -1 ||
	    get_int(j, "consecutive_errors", "consecutive_errors",
	    &s->consecutive_errors, err, errlen) == -1 ||
	    get_int(j, "same_task_failures", "same_task_failures",
	    &s->same_task_failures, err, errlen) == -1 ||
	    get_str(j, "last_failed_task", "last_failed_task",
	    &s->last_failed_task, err, errlen) == -1 ||
	    get_long(j, "iteration", "iteration", &s->iteration, err,
	    errlen) == -1 ||
	    get_long(j, "total_opens", "total_opens", &s->total_opens, err,
	    errlen) == -1 ||
	    get_long(j, "last_progress_iteration", "last_progress_iteration",
	    &s->last_progress_iteration, err, errlen) == -1 ||
	    get_str(j, "last_fingerprint", "last_fingerprint",
	    &s->last_fingerprint, err, errlen) == -1 ||
	    get_str(j, "last_error_hash", "last_error_hash",
	    &s->last_error_hash, err, errlen) == -1 ||
	    get_time(j, "opened_at", "opened_at", 1, &s->opened_at, err,
	    errlen) == -1 ||
	    get_str(j, "open_reason", "open_reason", &s->open_reason, err,
	    errlen) == -1 ||
	    get_time(j, "retry_at", "retry_at", 1, &s->retry_at, err,
	    errlen) == -1 ||
	    get_str(j, "session_id", "session_id", &s->session_id, err,
	    errlen) == -1 ||
	    get_str(j, "account", "account", &s->account, err, errlen) == -1 ||
	    get_str(j, "guidance", "guidance", &s->guidance, err,
	    errlen) == -1 ||
	    get_time(j, "updated_at", "updated_at", 1, &s->updated_at, err,
	    errlen) == -1 ||
	    get_num(j, "cooldown", "cooldown", 0, 1e12, 0, &s->cooldown, err,
	    errlen) == -1 ||
	    get_int(j, "trials_left", "trials_left", &s->trials_left, err,
	    errlen) == -1 ||
	    get_str(j, "stuck_task", "stuck_task", &s->stuck_task, err,
	    errlen) == -1)
		return -1;

	v = member(j, "tripped");
	if (v != NULL) {
		if (!cJSON_IsBool(v))
			return bad_field(err, errlen, "tripped",
			    "true or false");
		s->tripped = cJSON_IsTrue(v);
	}
	/* absent in the files of an older cbexec: a trial closes on a
	 * success or progress, as it did */
	v = member(j, "open_cause");
	if (v != NULL && !cJSON_IsNull(v) && (!cJSON_IsString(v) ||
	    cause_from_name(v->valuestring, &s->open_cause) == -1))
		return bad_field(err, errlen, "open_cause", "\"no_progress\", "
		    "\"errors\", \"limit\" or null");
	/* absent in the files of an older cbexec: not complete */
	v = member(j, "complete");
	if (v != NULL) {
		if (!cJSON_IsBool(v))
			return bad_field(err, errlen, "complete",
			    "true or false");
		s->complete = cJSON_IsTrue(v);
	}

	v = member(j, "last_progress_metric");
	if (v != NULL && !cJSON_IsNull(v)) {
		if (!cJSON_IsObject(v))
			return bad_field(err, errlen, "last_progress_metric",
			    "an object");
		if ((s->last_progress_metric = cJSON_Duplicate(v, 1)) ==
		    NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}

	le = member(j, "last_error");
	if (le != NULL && !cJSON_IsNull(le)) {
		if (!cJSON_IsObject(le))
			return bad_field(err, errlen, "last_error",
			    "an object");
		d = 0;
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
	}

	et = member(j, "errors_total");
	if (et != NULL && !cJSON_IsNull(et)) {
		if (!cJSON_IsObject(et))
			return bad_field(err, errlen, "errors_total",
			    "an object");
		for (i = 0; i < CB_CLASS_COUNT; i++) {
			snprintf(f, sizeof(f), "errors_total.%s", class_keys[i]);
			if (get_long(et, class_keys[i], f, &s->errors_total[i],
			    err, errlen) == -1)
				return -1;
		}
	}

	if (get_time(j, "last_run_at", "last_run_at", 1, &s->last_run_at, err,
	    errlen) == -1 ||
	    get_time(j, "last_success_at", "last_success_at", 1,
	    &s->last_success_at, err, errlen) == -1 ||
	    get_seconds(j, "last_run_seconds", &s->last_run_seconds, err,
	    errlen) == -1 ||
	    load_limits(member(j, "thresholds"), &s->limits, err,
	    errlen) == -1 ||
	    load_skips(j, s, err, errlen) == -1 ||
	    load_spend(member(j, "spend"), s, err, errlen) == -1)
		return -1;
	return load_history(member(j, "history"), s, l, err, errlen);
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * A key given twice anywhere in the file makes it corrupt: readers
 * disagree on which one counts (cbexec's member() takes the first, jq the
 * last), so "state":"CLOSED","state":"OPEN" must not read as CLOSED to
 * one and OPEN to another.  Each object's names are sorted and compared
 * with their neighbours; the first duplicate is named.  A small object
 * (a history event, every object of a state file but its top) is
 * compared pair by pair instead: sorting it cost more than its parse.
 */
int
no_duplicates(const cJSON *j, char *err, size_t errlen)
{
	const cJSON *c;
	const char **names;
	size_t n = 0, i;
	int rc = 0;

	/* cJSON_IsObject() without a call into the library per node */
	if (j == NULL || ((j->type & 0xFF) != cJSON_Object &&
	    (j->type & 0xFF) != cJSON_Array))
		return 0;
	for (c = j->child; c != NULL; c = c->next) {
		if (c->child != NULL && no_duplicates(c, err, errlen) == -1)
			return -1;
		n++;
	}
	if ((j->type & 0xFF) != cJSON_Object || n < 2)
		return 0;
	if (n <= 16) {
		const cJSON *d;
		unsigned long long seen = 0, bit;
		const unsigned char *k;

		/* A bit per key from its first two bytes: only a key whose
		 * bit is taken is compared with those before it. */
		for (c = j->child; c != NULL; c = c->next) {
			if ((k = (const unsigned char *)c->string) == NULL)
				continue;
			bit = 1ULL << (((unsigned)k[0] << 8 | (k[0] != 0 ?
			    k[1] : 0)) * 0x9E3779B1u >> 26);
			if ((seen & bit) != 0)
				for (d = j->child; d != c; d = d->next)
					if (d->string != NULL &&
					    d->string[0] == c->string[0] &&
					    strcmp(d->string, c->string) == 0) {
						snprintf(err, errlen, "corrupt "
						    "state file: key '%.64s' "
						    "given twice", c->string);
						return -1;
					}
			seen |= bit;
		}
		return 0;
	}
	if ((names = malloc(n * sizeof(*names))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0, c = j->child; c != NULL; c = c->next)
		names[i++] = c->string != NULL ? c->string : "";
	qsort(names, n, sizeof(*names), cmp_names);
	for (i = 1; i < n; i++)
		if (strcmp(names[i - 1], names[i]) == 0) {
			snprintf(err, errlen, "corrupt state file: key '%.64s' "
			    "given twice", names[i]);
			rc = -1;
			break;
		}
	free(names);
	return rc;
}

/*
 * On failure *s is freed again, so a caller has nothing to clean up unless
 * this returned 0.  l: the history read already (history_event), or NULL.
 */
int
state_from_tree(const cJSON *j, struct event_list *l, struct cb_state *s,
    char *err, size_t errlen)
{
	int rc;

	if (no_duplicates(j, err, errlen) == -1)
		return -1;
	if (breaker_init(s, NULL) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((rc = load_fields(j, s, l, err, errlen)) < 0) {
		breaker_free(s);
		return rc;
	}
	return 0;
}

int
state_from_json(const cJSON *j, struct cb_state *s, char *err, size_t errlen)
{
	return state_from_tree(j, NULL, s, err, errlen);
}
