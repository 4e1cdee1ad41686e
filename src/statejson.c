/*
 * The state file's JSON, outward (SPEC §6): struct cb_state and its
 * history events as cJSON objects with the spec's field names.
 * stateparse.c reads the same shape back.
 *
 * Every state field is always written (null, or an empty object, when
 * unset), so a file shows the whole schema; an event's optional fields
 * (user, progress, exit_code, class, type) appear only when set.  Each
 * member goes in through put(), which records a failed allocation instead
 * of returning early; any failure frees the whole object and the caller
 * gets NULL, so a half-built state never reaches the disk.
 */
#include <cJSON.h>

#include "state.h"
#include "state_int.h"

/* Same order as enum cb_class; classify.c's names, kept here so the state
 * module links without the classifier. */
const char *const class_keys[CB_CLASS_COUNT] = {
	"success", "recoverable", "transient", "timeout", "fatal"
};

static void
put(cJSON *o, const char *key, cJSON *v, int *bad)
{
	if (v == NULL || !cJSON_AddItemToObject(o, key, v)) {
		cJSON_Delete(v);
		*bad = 1;
	}
}

static cJSON *
str_or_null(const char *p)
{
	return p != NULL ? cJSON_CreateString(p) : cJSON_CreateNull();
}

static cJSON *
time_or_null(double t)
{
	char buf[40];

	return t >= 0 ? cJSON_CreateString(iso8601(t, buf, sizeof(buf))) :
	    cJSON_CreateNull();
}

static cJSON *
circuit_or_null(int c)
{
	return c >= 0 ? cJSON_CreateString(circuit_name((enum cb_circuit)c)) :
	    cJSON_CreateNull();
}

cJSON *
event_to_json(const struct cb_event *e)
{
	cJSON *o = cJSON_CreateObject();
	char buf[40];
	int bad = 0;

	if (o == NULL)
		return NULL;
	put(o, "timestamp", cJSON_CreateString(iso8601(e->ts, buf,
	    sizeof(buf))), &bad);
	put(o, "iteration", cJSON_CreateNumber((double)e->iteration), &bad);
	put(o, "event", cJSON_CreateString(event_kind_name(e->kind)), &bad);
	put(o, "from_state", circuit_or_null(e->from), &bad);
	put(o, "to_state", circuit_or_null(e->to), &bad);
	put(o, "reason", str_or_null(e->reason), &bad);
	if (e->user != NULL)
		put(o, "user", cJSON_CreateString(e->user), &bad);
	if (e->progress >= 0)
		put(o, "progress", cJSON_CreateBool(e->progress), &bad);
	if (e->exit_code >= 0)
		put(o, "exit_code", cJSON_CreateNumber(e->exit_code), &bad);
	if (e->cls[0] != '\0')
		put(o, "class", cJSON_CreateString(e->cls), &bad);
	if (e->type[0] != '\0')
		put(o, "type", cJSON_CreateString(e->type), &bad);
	if (bad) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *
state_to_json(const struct cb_state *s)
{
	cJSON *o, *le, *a, *et;
	size_t i;
	int bad = 0;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	put(o, "version", cJSON_CreateNumber(STATE_VERSION), &bad);
	put(o, "name", str_or_null(s->name), &bad);
	put(o, "state", cJSON_CreateString(circuit_name(s->state)), &bad);
	put(o, "phase", str_or_null(s->phase), &bad);
	put(o, "no_progress_count", cJSON_CreateNumber(s->no_progress_count),
	    &bad);
	put(o, "same_error_count", cJSON_CreateNumber(s->same_error_count),
	    &bad);
	put(o, "consecutive_errors", cJSON_CreateNumber(s->consecutive_errors),
	    &bad);
	put(o, "same_task_failures", cJSON_CreateNumber(s->same_task_failures),
	    &bad);
	put(o, "last_failed_task", str_or_null(s->last_failed_task), &bad);
	put(o, "iteration", cJSON_CreateNumber((double)s->iteration), &bad);
	put(o, "total_opens", cJSON_CreateNumber((double)s->total_opens), &bad);
	put(o, "last_progress_iteration",
	    cJSON_CreateNumber((double)s->last_progress_iteration), &bad);
	put(o, "last_progress_metric", s->last_progress_metric != NULL ?
	    cJSON_Duplicate(s->last_progress_metric, 1) : cJSON_CreateObject(),
	    &bad);
	put(o, "last_fingerprint", str_or_null(s->last_fingerprint), &bad);
	put(o, "last_error_hash", str_or_null(s->last_error_hash), &bad);
	if ((le = cJSON_CreateObject()) != NULL) {
		put(le, "class", cJSON_CreateString(s->last_error.cls), &bad);
		put(le, "type", cJSON_CreateString(s->last_error.type), &bad);
		put(le, "message", cJSON_CreateString(s->last_error.message ?
		    s->last_error.message : ""), &bad);
		put(le, "exit_code", cJSON_CreateNumber(s->last_error.exit_code),
		    &bad);
	}
	put(o, "last_error", le, &bad);
	put(o, "opened_at", time_or_null(s->opened_at), &bad);
	put(o, "open_reason", str_or_null(s->open_reason), &bad);
	put(o, "outcome", cJSON_CreateString(outcome_name(s->outcome)), &bad);
	put(o, "guidance", str_or_null(s->guidance), &bad);
	if ((a = cJSON_CreateArray()) != NULL)
		for (i = 0; i < s->n_skipped; i++)
			if (!cJSON_AddItemToArray(a,
			    cJSON_CreateString(s->skipped_phases[i])))
				bad = 1;
	put(o, "skipped_phases", a, &bad);
	put(o, "updated_at", time_or_null(s->updated_at), &bad);
	put(o, "cooldown", cJSON_CreateNumber(s->cooldown), &bad);
	put(o, "trials_left", cJSON_CreateNumber(s->trials_left), &bad);
	put(o, "tripped", cJSON_CreateBool(s->tripped), &bad);
	if ((et = cJSON_CreateObject()) != NULL)
		for (i = 0; i < CB_CLASS_COUNT; i++)
			put(et, class_keys[i],
			    cJSON_CreateNumber((double)s->errors_total[i]), &bad);
	put(o, "errors_total", et, &bad);
	if ((a = cJSON_CreateArray()) != NULL)
		for (i = 0; i < s->n_history; i++)
			if (!cJSON_AddItemToArray(a,
			    event_to_json(&s->history[i])))
				bad = 1;
	put(o, "history", a, &bad);
	if (bad) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
