/* SPDX-License-Identifier: ISC */
/*
 * Shared by the state file's JSON code (statejson.c, stateparse.c,
 * jsonfield.c): the errors_total keys and the typed member readers.
 */
#ifndef CBEXEC_STORE_JSONFIELD_H
#define CBEXEC_STORE_JSONFIELD_H

#include <stddef.h>

#include "breaker.h"

struct cJSON;

/* errors_total's keys, in enum cb_class order (statejson.c). */
extern const char *const class_keys[CB_CLASS_COUNT];
/* The whole-number members of "thresholds" (statejson.c): no_progress,
 * same_error, half_open_after, max_consecutive_errors, max_retries and
 * half_open_trials of struct cb_limits. */
#define N_THRESHOLD_KEYS 6
extern const char *const threshold_keys[N_THRESHOLD_KEYS];

/*
 * jsonfield.c: read o[key] into the destination.  field names the member
 * in the error.  Absent leaves the destination as it was and returns 0;
 * a wrong type or value returns -1 with the reason in err.
 */
/* o[key]: the first member of that name, or NULL. */
const struct cJSON *member(const struct cJSON *o, const char *key);
/* Always -1, with "field 'F': expected WANT" in err. */
int bad_field(char *err, size_t errlen, const char *field, const char *want);
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
int get_circuit(const struct cJSON *o, const char *key, const char *field,
    int *c, char *err, size_t errlen);

/* stateparse.c: -1 with the first key given twice in any object of j
 * named in err, else 0. */
int no_duplicates(const struct cJSON *j, char *err, size_t errlen);

/*
 * A state's history read event by event as its text is parsed (state.c,
 * jtree.c), so no event's tree outlives it.  history_event() reads one
 * event (the history's i-th, i = l->n) into l: 0, or -1 with the error in
 * err.  state_from_tree() is state_from_json() taking the history from l
 * once l->taken, else from the tree; on success l is emptied.
 */
struct event_list {
	struct cb_event *v;
	size_t n, cap;
	int taken;		/* the history array was read this way */
};
int history_event(struct event_list *l, const struct cJSON *j, char *err,
    size_t errlen);
void event_list_free(struct event_list *l);
int state_from_tree(const struct cJSON *j, struct event_list *l,
    struct cb_state *s, char *err, size_t errlen);

#endif
