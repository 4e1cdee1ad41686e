/* SPDX-License-Identifier: ISC */
/*
 * Shared by the JSON code of store/ (schema.c, statefields.c,
 * statejson.c, stateparse.c, jsonfield.c, account.c): the typed value
 * readers, and the state file's tables and the pieces of its reading and
 * writing that they name.
 */
#ifndef CBEXEC_STORE_JSONFIELD_H
#define CBEXEC_STORE_JSONFIELD_H

#include <stddef.h>

#include "breaker.h"

struct cJSON;
struct jbuf;
struct schema;
struct schema_ctx;

/* errors_total's keys, in enum cb_class order (statefields.c). */
extern const char *const class_keys[CB_CLASS_COUNT];
/* The whole-number members of "thresholds" (statefields.c):
 * no_progress, same_error, half_open_after, max_consecutive_errors,
 * max_retries and half_open_trials of struct cb_limits. */
#define N_THRESHOLD_KEYS 6
extern const char *const threshold_keys[N_THRESHOLD_KEYS];

/*
 * jsonfield.c: read a value into the destination; field names the member
 * in the error.  jv_* read the value j (not NULL); get_* read o[key],
 * where an absent member leaves the destination as it was and returns 0.
 * A wrong type or value returns -1 with the reason in err.
 */
/* o[key]: the first member of that name, or NULL. */
const struct cJSON *member(const struct cJSON *o, const char *key);
/* Always -1, with "field 'F': expected WANT" in err. */
int bad_field(char *err, size_t errlen, const char *field, const char *want);
int jv_num(const struct cJSON *j, const char *field, double min, double max,
    int integral, double *v, char *err, size_t errlen);
int jv_int(const struct cJSON *j, const char *field, int *v, char *err,
    size_t errlen);
int jv_long(const struct cJSON *j, const char *field, long *v, char *err,
    size_t errlen);
int jv_str(const struct cJSON *j, const char *field, char **v, char *err,
    size_t errlen);
int jv_buf(const struct cJSON *j, const char *field, char *buf,
    size_t size, char *err, size_t errlen);
int jv_time(const struct cJSON *j, const char *field, int nullable,
    double *t, char *err, size_t errlen);
int get_num(const struct cJSON *o, const char *key, const char *field,
    double min, double max, int integral, double *v, char *err,
    size_t errlen);
int get_int(const struct cJSON *o, const char *key, const char *field,
    int *v, char *err, size_t errlen);
int get_long(const struct cJSON *o, const char *key, const char *field,
    long *v, char *err, size_t errlen);
int get_str(const struct cJSON *o, const char *key, const char *field,
    char **v, char *err, size_t errlen);
int get_buf(const struct cJSON *o, const char *key, const char *field,
    char *buf, size_t size, char *err, size_t errlen);
int get_time(const struct cJSON *o, const char *key, const char *field,
    int nullable, double *t, char *err, size_t errlen);

/* stateparse.c: -1 with the first key given twice in any object of j
 * named in err, else 0. */
int no_duplicates(const struct cJSON *j, char *err, size_t errlen);

/* statefields.c: the state's table and a history event's. */
extern const struct schema state_schema, event_schema;
/* The version of the state j: 0 without one (the circuit breaker spec's
 * own file); -1 when it is no positive integer, -2 (with "newer than
 * this cbexec supports") when it is newer than STATE_VERSION. */
int state_version(const struct cJSON *j, int *version, char *err,
    size_t errlen);
/* A state read from a file of an older version made this version's. */
void state_migrate(struct cb_state *s, int version);

/* statejson.c: n events as a JSON array, one per line, each after indent,
 * close after the last; lead (or NULL) first in each. */
void state_events(struct jbuf *b, const struct cb_event *e, size_t n,
    const char *indent, const char *close, const char *lead);

/*
 * A state's history read event by event as its text is parsed (state.c,
 * jtree.c), so no event's tree outlives it.  history_event() reads one
 * event (the history's i-th, i = l->n), whose text starts at text (or
 * NULL), into l: 0, or -1 with the error in err.  state_from_tree() is
 * state_from_json() taking the history from l once l->taken (l may be
 * NULL), else from the tree; text is the whole state's (or NULL), where
 * members no row knows are kept from.  On success l is emptied.
 */
struct event_list {
	struct cb_event *v;
	size_t n, cap;
	int taken;		/* the history array was read this way */
};
int history_event(struct event_list *l, const struct cJSON *j,
    const char *text, char *err, size_t errlen);
void event_list_free(struct event_list *l);
int state_from_tree(const struct cJSON *j, struct event_list *l,
    const char *text, struct cb_state *s, char *err, size_t errlen);
/* The row of "history" reads it (statefields.c names it). */
int state_read_history(const struct schema_ctx *c, const struct cJSON *m,
    void *dst, char *err, size_t errlen);

#endif
