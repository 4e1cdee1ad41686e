/*
 * The state file (SPEC §6): struct cb_state as pretty-printed JSON, an
 * atomic write, and the per-circuit lock.
 *
 * Loading is strict about what is present and lenient about what is
 * missing: every field is type-checked and a bad one is named in the error,
 * but an absent counter keeps breaker_init()'s default, so older or
 * hand-written files still load.  Nothing is ever "repaired": a file that
 * does not parse is an error, never a fresh circuit, because silently
 * resetting would re-arm a tripped breaker.  Loading moves no value, so
 * save(load(x)) is x.
 *
 * Saving writes a temp file beside the target, fsyncs it, renames it over
 * the target and fsyncs the directory, so a crash leaves the old file or
 * the new one.  The lock is an flock on "FILE.lock", polled with short
 * sleeps when the caller is willing to wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "state.h"

/* A real state file is a few hundred KiB at most (bounded history). */
#define MAX_STATE_SIZE	(16L * 1024 * 1024)
/* Integers travel as JSON numbers (doubles): exact up to 2^53. */
#define MAX_EXACT	9007199254740992.0
#define MAX_HOPS	40

/* Same order as enum cb_class; classify.c's names, kept here so the state
 * module links without the classifier. */
static const char *const class_keys[CB_CLASS_COUNT] = {
	"success", "recoverable", "transient", "timeout", "fatal"
};

/* ---- timestamps ---- */

char *
iso8601(double t, char *buf, size_t len)
{
	long long ms, secs;
	time_t tt;
	struct tm tm;
	int frac;

	/* Keep the arithmetic inside time_t and long long for any input. */
	if (!(t > -1e13 && t < 1e13))
		t = 0;
	ms = (long long)(t * 1000.0 + (t >= 0 ? 0.5 : -0.5));
	secs = ms / 1000;
	frac = (int)(ms % 1000);
	if (frac < 0) {
		frac += 1000;
		secs--;
	}
	tt = (time_t)secs;
	if (gmtime_r(&tt, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, frac);
	return buf;
}

/* n decimal digits at *p into *v; advances *p. */
static int
digits(const char **p, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -1;
		*v = *v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return 0;
}

int
iso8601_parse(const char *s, double *t)
{
	const char *p = s;
	struct tm tm, chk;
	int y, mo, d, h, mi, sec, n;
	long ns = 0, scale = 100000000;
	time_t tt;

	if (s == NULL ||
	    digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) ||
	    *p++ != '-' || digits(&p, 2, &d) || *p++ != 'T' ||
	    digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) ||
	    *p++ != ':' || digits(&p, 2, &sec))
		return -1;
	if (*p == '.') {
		p++;
		for (n = 0; *p >= '0' && *p <= '9'; n++, p++) {
			if (n == 9)
				return -1;
			ns += (*p - '0') * scale;
			scale /= 10;
		}
		if (n == 0)
			return -1;
	}
	if (p[0] != 'Z' || p[1] != '\0')
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	/* timegm() normalises Feb 30 into March: compare to catch it. */
	tt = timegm(&tm);
	if (gmtime_r(&tt, &chk) == NULL || chk.tm_year != tm.tm_year ||
	    chk.tm_mon != tm.tm_mon || chk.tm_mday != d || chk.tm_hour != h ||
	    chk.tm_min != mi || chk.tm_sec != sec)
		return -1;
	if (ns % 1000000 == 0)	/* the usual case: exact to the nearest double */
		*t = ((double)tt * 1000.0 + (double)(ns / 1000000)) / 1000.0;
	else
		*t = (double)tt + (double)ns / 1e9;
	return 0;
}

/* ---- to JSON ---- */

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

/* ---- from JSON ---- */

static int
bad_field(char *err, size_t errlen, const char *field, const char *want)
{
	snprintf(err, errlen, "field '%s': expected %s", field, want);
	return -1;
}

/*
 * An integral number in [min, max] at o[key] into *v; absent leaves *v.
 * field is the name used in the error.
 */
static int
get_num(const cJSON *o, const char *key, const char *field, double min,
    double max, int integral, double *v, char *err, size_t errlen)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
	const char *want;
	double d;

	if (j == NULL)
		return 0;
	want = !integral ? "a non-negative number" :
	    min >= 0 ? "a non-negative integer" : "an integer";
	if (!cJSON_IsNumber(j))
		return bad_field(err, errlen, field, want);
	d = j->valuedouble;
	/* The range test comes first so the cast below is defined. */
	if (!(d >= min && d <= max) ||
	    (integral && d != (double)(long long)d))
		return bad_field(err, errlen, field, want);
	*v = d;
	return 0;
}

static int
get_int(const cJSON *o, const char *key, const char *field, int *v,
    char *err, size_t errlen)
{
	double d = *v;

	if (get_num(o, key, field, 0, INT_MAX, 1, &d, err, errlen) == -1)
		return -1;
	*v = (int)d;
	return 0;
}

static int
get_long(const cJSON *o, const char *key, const char *field, long *v,
    char *err, size_t errlen)
{
	double d = (double)*v;

	if (get_num(o, key, field, 0, MAX_EXACT, 1, &d, err, errlen) == -1)
		return -1;
	*v = (long)d;
	return 0;
}

/* A string or null at o[key] into a malloc'd *v (NULL for null/absent). */
static int
get_str(const cJSON *o, const char *key, const char *field, char **v,
    char *err, size_t errlen)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);

	if (j == NULL || cJSON_IsNull(j))
		return 0;
	if (!cJSON_IsString(j))
		return bad_field(err, errlen, field, "a string or null");
	if ((*v = strdup(j->valuestring)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* A string that must fit buf (the struct's fixed-size fields). */
static int
get_buf(const cJSON *o, const char *key, const char *field, char *buf,
    size_t size, char *err, size_t errlen)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);

	if (j == NULL || cJSON_IsNull(j))
		return 0;
	if (!cJSON_IsString(j))
		return bad_field(err, errlen, field, "a string");
	if (strlen(j->valuestring) >= size) {
		snprintf(err, errlen, "field '%s': longer than %zu bytes",
		    field, size - 1);
		return -1;
	}
	strcpy(buf, j->valuestring);
	return 0;
}

/* An ISO-8601 timestamp or null (-1) at o[key]. */
static int
get_time(const cJSON *o, const char *key, const char *field, int nullable,
    double *t, char *err, size_t errlen)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
	const char *want = nullable ? "an ISO-8601 timestamp or null" :
	    "an ISO-8601 timestamp";

	if (j == NULL || (nullable && cJSON_IsNull(j)))
		return 0;
	if (!cJSON_IsString(j) || iso8601_parse(j->valuestring, t) == -1)
		return bad_field(err, errlen, field, want);
	return 0;
}

static int
get_circuit(const cJSON *o, const char *key, const char *field, int *c,
    char *err, size_t errlen)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
	enum cb_circuit v;

	if (j == NULL || cJSON_IsNull(j))
		return 0;
	if (!cJSON_IsString(j) || circuit_from_name(j->valuestring, &v) == -1)
		return bad_field(err, errlen, field,
		    "\"CLOSED\", \"HALF_OPEN\" or \"OPEN\"");
	*c = (int)v;
	return 0;
}

static int
event_from_json(const cJSON *j, size_t i, struct cb_event *e, char *err,
    size_t errlen)
{
	const cJSON *v;
	char f[64];
	double d;

	snprintf(f, sizeof(f), "history[%zu]", i);
	if (!cJSON_IsObject(j))
		return bad_field(err, errlen, f, "an object");
#define F(k) (snprintf(f, sizeof(f), "history[%zu].%s", i, k), f)
	if (cJSON_GetObjectItemCaseSensitive(j, "timestamp") == NULL)
		return bad_field(err, errlen, F("timestamp"),
		    "an ISO-8601 timestamp");
	if (get_time(j, "timestamp", F("timestamp"), 0, &e->ts, err,
	    errlen) == -1 ||
	    get_long(j, "iteration", F("iteration"), &e->iteration, err,
	    errlen) == -1 ||
	    get_circuit(j, "from_state", F("from_state"), &e->from, err,
	    errlen) == -1 ||
	    get_circuit(j, "to_state", F("to_state"), &e->to, err,
	    errlen) == -1 ||
	    get_str(j, "reason", F("reason"), &e->reason, err, errlen) == -1 ||
	    get_str(j, "user", F("user"), &e->user, err, errlen) == -1 ||
	    get_buf(j, "class", F("class"), e->cls, sizeof(e->cls), err,
	    errlen) == -1 ||
	    get_buf(j, "type", F("type"), e->type, sizeof(e->type), err,
	    errlen) == -1)
		return -1;
	v = cJSON_GetObjectItemCaseSensitive(j, "event");
	if (!cJSON_IsString(v) ||
	    event_kind_from_name(v->valuestring, &e->kind) == -1)
		return bad_field(err, errlen, F("event"), "\"state_change\", "
		    "\"progress\", \"error\", \"reset\" or \"skip\"");
	v = cJSON_GetObjectItemCaseSensitive(j, "progress");
	if (v != NULL && !cJSON_IsNull(v)) {
		if (!cJSON_IsBool(v))
			return bad_field(err, errlen, F("progress"),
			    "true, false or null");
		e->progress = cJSON_IsTrue(v);
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "exit_code");
	if (v != NULL && !cJSON_IsNull(v)) {
		d = 0;
		if (get_num(j, "exit_code", F("exit_code"), 0, INT_MAX, 1, &d,
		    err, errlen) == -1)
			return -1;
		e->exit_code = (int)d;
	}
#undef F
	return 0;
}

static int
load_history(const cJSON *j, struct cb_state *s, char *err, size_t errlen)
{
	const cJSON *it;
	struct cb_event *e;
	int n;

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

static int
load_skipped(const cJSON *j, struct cb_state *s, char *err, size_t errlen)
{
	const cJSON *it;
	int n;

	if (j == NULL || cJSON_IsNull(j))
		return 0;
	if (!cJSON_IsArray(j))
		return bad_field(err, errlen, "skipped_phases",
		    "an array of strings");
	if ((n = cJSON_GetArraySize(j)) == 0)
		return 0;
	if ((s->skipped_phases = calloc((size_t)n, sizeof(char *))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	cJSON_ArrayForEach(it, j) {
		if (!cJSON_IsString(it))
			return bad_field(err, errlen, "skipped_phases",
			    "an array of strings");
		if ((s->skipped_phases[s->n_skipped] =
		    strdup(it->valuestring)) == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		s->n_skipped++;
	}
	return 0;
}

static int
load_fields(const cJSON *j, struct cb_state *s, char *err, size_t errlen)
{
	const cJSON *v, *le, *et;
	double d;
	size_t i;
	char f[64];

	if (!cJSON_IsObject(j)) {
		snprintf(err, errlen, "corrupt state file: not a JSON object");
		return -1;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "version");
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
		return -1;
	}
	s->version = (int)d;

	/* Without "state" a default CLOSED could re-arm a tripped breaker. */
	v = cJSON_GetObjectItemCaseSensitive(j, "state");
	if (v == NULL) {
		snprintf(err, errlen, "corrupt state file: no 'state'");
		return -1;
	}
	if (!cJSON_IsString(v) || circuit_from_name(v->valuestring,
	    &s->state) == -1)
		return bad_field(err, errlen, "state",
		    "\"CLOSED\", \"HALF_OPEN\" or \"OPEN\"");
	v = cJSON_GetObjectItemCaseSensitive(j, "outcome");
	if (v != NULL && (!cJSON_IsString(v) ||
	    outcome_from_name(v->valuestring, &s->outcome) == -1))
		return bad_field(err, errlen, "outcome", "an outcome name "
		    "(\"OK\", \"OPEN\", \"STUCK\", ...)");

	if (get_str(j, "name", "name", &s->name, err, errlen) == -1 ||
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
	    get_str(j, "guidance", "guidance", &s->guidance, err,
	    errlen) == -1 ||
	    get_time(j, "updated_at", "updated_at", 1, &s->updated_at, err,
	    errlen) == -1 ||
	    get_num(j, "cooldown", "cooldown", 0, 1e12, 0, &s->cooldown, err,
	    errlen) == -1 ||
	    get_int(j, "trials_left", "trials_left", &s->trials_left, err,
	    errlen) == -1)
		return -1;

	v = cJSON_GetObjectItemCaseSensitive(j, "tripped");
	if (v != NULL) {
		if (!cJSON_IsBool(v))
			return bad_field(err, errlen, "tripped",
			    "true or false");
		s->tripped = cJSON_IsTrue(v);
	}

	v = cJSON_GetObjectItemCaseSensitive(j, "last_progress_metric");
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

	le = cJSON_GetObjectItemCaseSensitive(j, "last_error");
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

	et = cJSON_GetObjectItemCaseSensitive(j, "errors_total");
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

	if (load_skipped(cJSON_GetObjectItemCaseSensitive(j,
	    "skipped_phases"), s, err, errlen) == -1)
		return -1;
	return load_history(cJSON_GetObjectItemCaseSensitive(j, "history"), s,
	    err, errlen);
}

/*
 * On failure *s is freed again, so a caller has nothing to clean up unless
 * this returned 0.
 */
int
state_from_json(const cJSON *j, struct cb_state *s, char *err, size_t errlen)
{
	if (breaker_init(s, NULL) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (load_fields(j, s, err, errlen) == -1) {
		breaker_free(s);
		return -1;
	}
	return 0;
}

/* ---- load ---- */

static int
read_all(int fd, const char *path, char **out, size_t *outlen, char *err,
    size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0, cap;
	ssize_t n;

	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return -1;
	}
	if (st.st_size > MAX_STATE_SIZE) {
		snprintf(err, errlen, "%s: state file too large (%lld bytes)",
		    path, (long long)st.st_size);
		return -1;
	}
	/* The size may change under us: read to EOF, but never past the cap. */
	cap = (size_t)st.st_size + 1;
	if ((buf = malloc(cap + 1)) == NULL)
		goto nomem;
	for (;;) {
		if (len == cap) {
			char *nb;

			if (cap > (size_t)MAX_STATE_SIZE) {
				snprintf(err, errlen, "%s: state file too "
				    "large (more than %ld bytes)", path,
				    MAX_STATE_SIZE);
				free(buf);
				return -1;
			}
			cap = cap * 2 > (size_t)MAX_STATE_SIZE + 1 ?
			    (size_t)MAX_STATE_SIZE + 1 : cap * 2;
			if ((nb = realloc(buf, cap + 1)) == NULL)
				goto nomem;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			free(buf);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
nomem:
	free(buf);
	snprintf(err, errlen, "%s: out of memory", path);
	return -1;
}

/* "line L column C" of the byte at off, for the corrupt-file message. */
static void
where(const char *buf, size_t off, char *out, size_t outlen)
{
	size_t i, line = 1, col = 1;

	for (i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			line++;
			col = 1;
		} else
			col++;
	}
	snprintf(out, outlen, "line %zu column %zu", line, col);
}

int
state_load(const char *path, int follow_symlinks, const char *name,
    struct cb_state *s, char *err, size_t errlen)
{
	const char *end = NULL;
	char *buf = NULL, pos[64], why[256];
	size_t len;
	cJSON *j;
	int fd;

	/*
	 * O_NONBLOCK so a FIFO planted at the path cannot hang us in open();
	 * it is then refused as not a regular file.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
	    (follow_symlinks ? 0 : O_NOFOLLOW));
	if (fd == -1) {
		if (errno == ENOENT) {
			if (breaker_init(s, name) == -1) {
				snprintf(err, errlen, "%s: out of memory",
				    path);
				return -1;
			}
			return 1;
		}
		if (errno == ELOOP && !follow_symlinks)
			snprintf(err, errlen, "%s: is a symbolic link "
			    "(use --follow-symlinks)", path);
		else
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (read_all(fd, path, &buf, &len, err, errlen) == -1) {
		close(fd);
		return -1;
	}
	close(fd);

	if (len == 0) {
		snprintf(err, errlen, "%s: corrupt state file: empty", path);
		goto fail;
	}
	if (memchr(buf, '\0', len) != NULL) {
		snprintf(err, errlen, "%s: corrupt state file: NUL byte at "
		    "offset %zu", path, (size_t)((char *)memchr(buf, '\0',
		    len) - buf));
		goto fail;
	}
	if ((j = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1)) == NULL) {
		if (end != NULL && end >= buf && end <= buf + len)
			where(buf, (size_t)(end - buf), pos, sizeof(pos));
		else
			snprintf(pos, sizeof(pos), "unknown position");
		snprintf(err, errlen, "%s: corrupt state file: JSON syntax "
		    "error at %s", path, pos);
		goto fail;
	}
	free(buf);
	buf = NULL;
	if (state_from_json(j, s, why, sizeof(why)) == -1) {
		cJSON_Delete(j);
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	cJSON_Delete(j);
	if (s->name == NULL && name != NULL &&
	    (s->name = strdup(name)) == NULL) {
		breaker_free(s);
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	return 0;
fail:
	free(buf);
	return -1;
}

/* ---- save ---- */

int
state_mkdirs(const char *path, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	struct stat st;
	char *p, *slash;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENAMETOOLONG));
		return -1;
	}
	if ((slash = strrchr(buf, '/')) == NULL)
		return 0;
	*slash = '\0';
	if (buf[0] == '\0' || (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)))
		return 0;
	/* Walk down from the top; existing directories are left as they are. */
	for (p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		if (p[-1] != '/') {
			char c = *p;

			*p = '\0';
			if (mkdir(buf, 0700) == -1 && (errno != EEXIST ||
			    stat(buf, &st) == -1 || !S_ISDIR(st.st_mode))) {
				int e = errno == EEXIST ? ENOTDIR : errno;

				snprintf(err, errlen, "%s: cannot create "
				    "directory: %s", buf, strerror(e));
				return -1;
			}
			*p = c;
		}
		if (*p == '\0')
			break;
	}
	return 0;
}

/*
 * Follow path's symlinks to the file they finally name (which may not exist
 * yet), so the rename replaces that file and not the link.
 */
static int
resolve_link(const char *path, char *out, size_t outlen)
{
	char link[PATH_MAX];
	struct stat st;
	const char *slash;
	ssize_t n;
	int hops, w;

	if (snprintf(out, outlen, "%s", path) >= (int)outlen)
		return errno = ENAMETOOLONG, -1;
	for (hops = 0;; hops++) {
		if (lstat(out, &st) == -1)
			return errno == ENOENT ? 0 : -1;
		if (!S_ISLNK(st.st_mode))
			return 0;
		if (hops == MAX_HOPS)
			return errno = ELOOP, -1;
		if ((n = readlink(out, link, sizeof(link) - 1)) == -1)
			return -1;
		link[n] = '\0';
		slash = strrchr(out, '/');
		if (link[0] == '/' || slash == NULL)
			w = snprintf(out, outlen, "%s", link);
		else {
			/* Relative to the link's own directory. */
			char dir[PATH_MAX];

			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - out),
			    out);
			w = snprintf(out, outlen, "%s/%s", dir, link);
		}
		if (w < 0 || (size_t)w >= outlen)
			return errno = ENAMETOOLONG, -1;
	}
}

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
state_save(const char *path, int follow_symlinks, const struct cb_state *s,
    char *err, size_t errlen)
{
	char target[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX];
	const char *base, *slash;
	char *text = NULL;
	struct stat st;
	cJSON *j;
	int fd = -1, dfd, e;

	if (follow_symlinks) {
		if (resolve_link(path, target, sizeof(target)) == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
	} else {
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
			snprintf(err, errlen, "%s: is a symbolic link "
			    "(use --follow-symlinks)", path);
			return -1;
		}
		if (snprintf(target, sizeof(target), "%s", path) >=
		    (int)sizeof(target)) {
			snprintf(err, errlen, "%s: %s", path,
			    strerror(ENAMETOOLONG));
			return -1;
		}
	}
	if (state_mkdirs(target, err, errlen) == -1)
		return -1;
	if ((slash = strrchr(target, '/')) != NULL) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - target),
		    target);
		if (dir[0] == '\0')
			strcpy(dir, "/");
		base = slash + 1;
	} else {
		strcpy(dir, ".");
		base = target;
	}
	if (base[0] == '\0') {
		snprintf(err, errlen, "%s: %s", path, strerror(EISDIR));
		return -1;
	}
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.tmp.XXXXXX", dir, base) >=
	    (int)sizeof(tmp)) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENAMETOOLONG));
		return -1;
	}

	if ((j = state_to_json(s)) == NULL || (text = cJSON_Print(j)) == NULL) {
		cJSON_Delete(j);
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	cJSON_Delete(j);

	/* mkostemp creates 0600 already; fchmod states the intent anyway. */
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1) {
		tmp[0] = '\0';
		goto fail;
	}
	if (fchmod(fd, 0600) == -1 ||
	    write_all(fd, text, strlen(text)) == -1 ||
	    write_all(fd, "\n", 1) == -1 ||
	    fsync(fd) == -1)
		goto fail;
	/* NFS reports a failed write-back (EIO, ENOSPC) only at close. */
	e = close(fd);
	fd = -1;
	if (e == -1 || rename(tmp, target) == -1)
		goto fail;
	tmp[0] = '\0';
	free(text);
	text = NULL;

	/* The rename is durable only once the directory entry is on disk. */
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: sync of directory failed: %s", path,
		    strerror(errno));
		return -1;
	}
	/* Some filesystems cannot fsync a directory; that is not our error. */
	if (fsync(dfd) == -1 && errno != EINVAL && errno != ENOTSUP) {
		snprintf(err, errlen, "%s: sync of directory failed: %s", path,
		    strerror(errno));
		close(dfd);
		return -1;
	}
	close(dfd);
	return 0;
fail:
	e = errno;
	if (fd != -1)
		close(fd);
	if (tmp[0] != '\0')
		unlink(tmp);
	free(text);
	snprintf(err, errlen, "%s: write failed: %s", path, strerror(e));
	return -1;
}

/* ---- lock ---- */

static double
monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
state_lock(const char *path, double wait, char *err, size_t errlen)
{
	char lock[PATH_MAX];
	struct timespec ts;
	struct stat st;
	double deadline = 0, delay = 0.01, left;
	int fd;

	if (snprintf(lock, sizeof(lock), "%s.lock", path) >=
	    (int)sizeof(lock)) {
		snprintf(err, errlen, "%s.lock: %s", path,
		    strerror(ENAMETOOLONG));
		return -1;
	}
	if (state_mkdirs(lock, err, errlen) == -1)
		return -1;
	/*
	 * O_CLOEXEC: a daemon the command leaves behind must never inherit
	 * (and so hold) the lock.  O_NOFOLLOW: a planted link cannot make us
	 * create or open some other file.  O_NONBLOCK: nor can a FIFO hang us.
	 */
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
	    0600);
	if (fd == -1) {
		if (errno == ELOOP)
			snprintf(err, errlen, "%s: is a symbolic link", lock);
		else
			snprintf(err, errlen, "%s: %s", lock, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", lock);
		close(fd);
		return -1;
	}
	if (wait > 0)
		deadline = monotonic() + wait;
	/* flock, not fcntl locks: those vanish when any fd of ours closes. */
	while (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK) {
			snprintf(err, errlen, "%s: %s", lock, strerror(errno));
			close(fd);
			return -1;
		}
		if (wait == 0)
			goto busy;
		left = delay;
		if (wait > 0) {
			if ((left = deadline - monotonic()) <= 0)
				goto busy;
			if (left > delay)
				left = delay;
		}
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
		if ((delay *= 1.5) > 0.05)
			delay = 0.05;
	}
	return fd;
busy:
	close(fd);
	return -2;
}

/* ---- corrupt files ---- */

int
state_move_aside(const char *path, double now, char *newpath, size_t newlen,
    char *err, size_t errlen)
{
	char stamp[32];
	struct stat st;
	struct tm tm;
	time_t t = (time_t)now;
	int i, w;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm) == 0) {
		snprintf(err, errlen, "%s: bad time", path);
		return -1;
	}
	for (i = 0; i < 1000; i++) {
		w = i == 0 ? snprintf(newpath, newlen, "%s.corrupt-%s", path,
		    stamp) : snprintf(newpath, newlen, "%s.corrupt-%s.%d",
		    path, stamp, i);
		if (w < 0 || (size_t)w >= newlen) {
			snprintf(err, errlen, "%s: %s", path,
			    strerror(ENAMETOOLONG));
			return -1;
		}
		/* NOREPLACE: two resets in one second must not clobber the
		 * first one's evidence. */
		if (renameat2(AT_FDCWD, path, AT_FDCWD, newpath,
		    RENAME_NOREPLACE) == 0)
			return 0;
		if (errno == EEXIST)
			continue;
		if (errno != EINVAL && errno != ENOSYS)
			break;
		/* The filesystem lacks NOREPLACE: check, then rename. */
		if (lstat(newpath, &st) == 0)
			continue;
		if (rename(path, newpath) == 0)
			return 0;
		break;
	}
	if (i == 1000)
		errno = EEXIST;
	snprintf(err, errlen, "%s: cannot move aside: %s", path,
	    strerror(errno));
	return -1;
}
