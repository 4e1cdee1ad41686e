/* SPDX-License-Identifier: ISC */
/*
 * The state file's JSON, inward (SPEC §6, §11): a cJSON object back into
 * struct cb_state by the rows of statefields.c, which statejson.c writes
 * by too.
 *
 * Loading is strict about what is present and lenient about what is
 * missing: every field is type-checked and a bad one is named in the error,
 * but an absent member takes its row's default, so older or hand-written
 * files still load.  Nothing is ever "repaired": a file that does not
 * parse is an error, never a fresh circuit, because silently resetting
 * would re-arm a tripped breaker.  For the same reason "state" must be
 * present, and a version newer than STATE_VERSION is refused.  A member
 * no row knows is kept as it was written, at the top and in each event.
 * Loading moves no value, so save(load(x)) is x.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core.h"
#include "store.h"
#include "schema.h"
#include "jsonfield.h"

/*
 * One history event, its text at text (or NULL).  The rows name a bad
 * member by its key alone; only when one fails is the name made
 * "history[i].key", so a good file costs no formatting per member.
 */
static int
event_from_json(const cJSON *j, size_t i, const char *text,
    struct cb_event *e, char *err, size_t errlen)
{
	static const char pre[] = "field '";
	char why[CB_WHYLEN];

	if (!cJSON_IsObject(j)) {
		snprintf(err, errlen, "field 'history[%zu]': expected an "
		    "object", i);
		return -1;
	}
	if (schema_read(&event_schema, j, text, NULL, e, why,
	    sizeof(why)) == 0)
		return 0;
	if (strncmp(why, pre, sizeof(pre) - 1) == 0)
		snprintf(err, errlen, "%shistory[%zu].%s", pre, i,
		    why + sizeof(pre) - 1);
	else
		snprintf(err, errlen, "%s", why);
	return -1;
}

/* A fresh event: the rows' defaults come only for what is absent, and
 * the strings must be freeable from the start. */
static void
event_blank(struct cb_event *e)
{
	memset(e, 0, sizeof(*e));
	e->from = e->to = e->progress = e->exit_code = -1;
}

int
history_event(struct event_list *l, const cJSON *j, const char *text,
    char *err, size_t errlen)
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
	event_blank(e);
	return event_from_json(j, l->n - 1, text, e, err, errlen);
}

void
event_list_free(struct event_list *l)
{
	while (l->n > 0)
		event_free(&l->v[--l->n]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/*
 * The text of the history's elements, found only when an event holds a
 * member no row knows: the state's text walked to the history, then
 * element by element as the events are read.
 */
struct history_text {
	const char *state;	/* the state's text, or NULL */
	size_t index;		/* "history"'s among its members */
	struct jraw r;
	size_t next;		/* the element r is at */
	int open;		/* 1 open, -1 not to be found */
};

static const char *
element_text(struct history_text *h, size_t i)
{
	const char *start, *value, *end;
	struct jraw top;
	size_t k;

	if (h->open == 0) {
		h->open = -1;
		if (h->state == NULL || !jraw_open(&top, h->state) || !top.obj)
			return NULL;
		for (k = 0; k <= h->index; k++)
			if (!jraw_next(&top, &start, &value, &end))
				return NULL;
		if (!jraw_open(&h->r, value) || h->r.obj)
			return NULL;
		h->open = 1;
	}
	if (h->open != 1 || i < h->next)
		return NULL;
	for (; h->next <= i; h->next++)
		if (!jraw_next(&h->r, &start, &value, &end)) {
			h->open = -1;
			return NULL;
		}
	return start;
}

int
state_read_history(const struct schema_ctx *c, const cJSON *j, void *dst,
    char *err, size_t errlen)
{
	struct cb_state *s = dst;
	struct event_list *l = c->arg;
	struct history_text h;
	const cJSON *it;
	struct cb_event *e;
	const char *text;
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
	memset(&h, 0, sizeof(h));
	h.state = c->text;
	h.index = c->index;
	cJSON_ArrayForEach(it, j) {
		/* Counted before filling so breaker_free() sees its strings. */
		e = &s->history[s->n_history++];
		event_blank(e);
		if (event_from_json(it, s->n_history - 1, NULL, e, err,
		    errlen) == -1)
			return -1;
		/* Its unknown members as the text has them. */
		if (e->unknown != NULL && (text = element_text(&h,
		    s->n_history - 1)) != NULL && schema_read(&event_schema,
		    it, text, NULL, e, err, errlen) == -1)
			return -1;
	}
	return 0;
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
 * this returned 0.  l: the history read already (history_event), or NULL;
 * text: the state's text, or NULL.
 */
int
state_from_tree(const cJSON *j, struct event_list *l, const char *text,
    struct cb_state *s, char *err, size_t errlen)
{
	int rc, version;

	if (no_duplicates(j, err, errlen) == -1)
		return -1;
	if (!cJSON_IsObject(j)) {
		snprintf(err, errlen, "corrupt state file: not a JSON object");
		return -1;
	}
	/* A newer version is refused before any field is read. */
	if ((rc = state_version(j, &version, err, errlen)) < 0)
		return rc;
	if (breaker_init(s, NULL) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (schema_read(&state_schema, j, text, l, s, err, errlen) == -1) {
		breaker_free(s);
		return -1;
	}
	state_migrate(s, version);
	return 0;
}

int
state_from_json(const cJSON *j, struct cb_state *s, char *err, size_t errlen)
{
	return state_from_tree(j, NULL, NULL, s, err, errlen);
}
