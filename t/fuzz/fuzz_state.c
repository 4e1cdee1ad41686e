/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for the state file (SPEC §6): the input is parsed with
 * cJSON and handed to state_from_tree() with its text (where members no
 * row knows are kept from), and the same bytes are loaded from a file
 * with state_load(), the way a run reads its circuit.  Any
 * state that loads must survive state_to_json() and load again: a file
 * cbexec wrote and then refuses would leave the circuit stuck on 125.
 * Its history then goes through the OPEN block's stuck analysis, which
 * reads whatever the events' messages hold.  Every input is also read by
 * both JSON readers, cJSON's and the state file's own (jtree.c): they
 * must accept the same texts and build the same trees.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "judge.h"
#include "report.h"
#include "store.h"
#include "../../src/store/backend.h"
#include "../../src/store/schema.h"
#include "../../src/store/jsonfield.h"
#include "../../src/store/jtree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

/*
 * What cbexec writes for s must load again and print the same: a file it
 * wrote and then refused would stop the circuit at 125, and one that loads
 * differently would move a counter on a mere load (SPEC §4 rule 7).
 */
static void
roundtrip(const struct cb_state *s)
{
	struct stuck_analysis a;
	struct cb_state again;
	char err[512], *t1, *t2;
	cJSON *j, *k;

	if ((j = state_to_json(s)) == NULL || (t1 = cJSON_Print(j)) == NULL)
		abort();
	cJSON_Delete(j);
	if ((k = cJSON_Parse(t1)) == NULL) {
		fprintf(stderr, "state written by cbexec is not JSON:\n%s\n", t1);
		abort();
	}
	if (state_from_json(k, &again, err, sizeof(err)) != 0) {
		fprintf(stderr, "state written by cbexec does not load: %s\n%s\n",
		    err, t1);
		abort();
	}
	cJSON_Delete(k);
	if ((j = state_to_json(&again)) == NULL ||
	    (t2 = cJSON_Print(j)) == NULL)
		abort();
	cJSON_Delete(j);
	if (strcmp(t1, t2) != 0) {
		fprintf(stderr, "state changes on save and load:\n%s\n---\n%s\n",
		    t1, t2);
		abort();
	}
	free(t1);
	free(t2);
	breaker_free(&again);
	if (stuck_analyse(s, &a) == 1 && (a.failures < 1 ||
	    a.failures > STUCK_WINDOW || a.error_count > a.failures ||
	    a.file_count > a.failures || a.task_count > a.failures))
		abort();
}

/* jtree_parse()'s allocations, freed after each input. */
static void **blocks;
static size_t n_blocks, cap_blocks;

static void *
block(size_t n)
{
	void **b;

	if (n_blocks == cap_blocks) {
		cap_blocks = cap_blocks ? cap_blocks * 2 : 1024;
		if ((b = realloc(blocks, cap_blocks * sizeof(*b))) == NULL)
			abort();
		blocks = b;
	}
	return blocks[n_blocks++] = malloc(n);
}

static void
drop_blocks(void)
{
	while (n_blocks > 0)
		free(blocks[--n_blocks]);
}

/* The same tree: types, names, strings, numbers bit for bit, and the
 * links (the first child's prev is the last). */
static int
same(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y, *py = NULL;

	if (a->type != b->type || a->valueint != b->valueint ||
	    memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) != 0 ||
	    (a->string == NULL) != (b->string == NULL) ||
	    (a->string != NULL && strcmp(a->string, b->string) != 0) ||
	    (a->valuestring == NULL) != (b->valuestring == NULL) ||
	    (a->valuestring != NULL &&
	    strcmp(a->valuestring, b->valuestring) != 0))
		return 0;
	for (x = a->child, y = b->child; x != NULL && y != NULL;
	    x = x->next, py = y, y = y->next)
		if (!same(x, y) || (py != NULL && y->prev != py))
			return 0;
	if (x != NULL || y != NULL)
		return 0;
	return b->child == NULL || b->child->prev == py;
}

static void
both_readers(const char *text, size_t size)
{
	const char *e1 = NULL, *e2 = NULL;
	cJSON *a, *b;

	a = cJSON_ParseWithLengthOpts(text, size + 1, &e1, 1);
	b = jtree_parse(text, size, block, NULL, &e2);
	if ((a == NULL) != (b == NULL) || (a != NULL && !same(a, b))) {
		fprintf(stderr, "the JSON readers disagree: cJSON %s, "
		    "jtree %s\n", a ? "accepts" : "refuses",
		    b ? "accepts" : "refuses");
		abort();
	}
	cJSON_Delete(a);
	drop_blocks();
}

/*
 * state_load() reads the history event by event (state.c) and falls back
 * to the whole tree on any error: it must end as state_from_tree() on
 * cJSON's whole tree does -- the same state (unknown members kept as the
 * same text), or the same error.
 */
static void
same_load(int rc, const char *err, const struct cb_state *s, int ref_rc,
    const char *ref_err, struct cb_state *ref)
{
	char *t1, *t2;
	size_t n = strlen(err), m = strlen(ref_err);

	if (ref_rc == 0) {
		if (rc != 0) {
			fprintf(stderr, "state_load refuses what loads whole: "
			    "%s\n", err);
			abort();
		}
		if (ref->name == NULL && (ref->name = strdup("fuzz")) == NULL)
			abort();
		if ((t1 = state_text(s)) == NULL ||
		    (t2 = state_text(ref)) == NULL)
			abort();
		if (strcmp(t1, t2) != 0) {
			fprintf(stderr, "state_load reads another state:\n%s\n"
			    "---\n%s\n", t1, t2);
			abort();
		}
		free(t1);
		free(t2);
		return;
	}
	if (rc != ref_rc || n < m || strcmp(err + n - m, ref_err) != 0) {
		fprintf(stderr, "state_load: %d %s\nwhole: %d %s\n", rc, err,
		    ref_rc, ref_err);
		abort();
	}
}

/* Every member of in that sc has no row for is in out, the same value. */
static void
kept(const struct schema *sc, const cJSON *in, const cJSON *out,
    const char *where)
{
	const cJSON *m, *o;
	char *a, *b;
	int same;

	cJSON_ArrayForEach(m, in) {
		if (schema_field(sc, m->string) != NULL)
			continue;
		for (o = out->child; o != NULL; o = o->next)
			if (strcmp(o->string, m->string) == 0)
				break;
		/* As printed: cJSON_Compare() finds an infinity unequal to
		 * itself. */
		a = cJSON_PrintUnformatted(m);
		b = o != NULL ? cJSON_PrintUnformatted(o) : NULL;
		same = a != NULL && b != NULL && strcmp(a, b) == 0;
		cJSON_free(a);
		cJSON_free(b);
		if (!same) {
			fprintf(stderr, "a member cbexec does not know is "
			    "lost or changed: %s'%s'\n", where, m->string);
			abort();
		}
	}
}

/*
 * What a newer cbexec wrote survives: the members no row knows, at the
 * top and in each event, are written back as they were (SPEC §11).
 */
static void
unknown_kept(const char *text, size_t size, const struct cb_state *s)
{
	cJSON *in, *out;
	const cJSON *hi, *ho, *a, *b;
	char *t;

	if ((in = cJSON_ParseWithLengthOpts(text, size + 1, NULL, 1)) ==
	    NULL)
		return;
	if ((t = state_text(s)) == NULL || (out = cJSON_Parse(t)) == NULL)
		abort();
	free(t);
	kept(&state_schema, in, out, "");
	hi = cJSON_GetObjectItemCaseSensitive(in, "history");
	ho = cJSON_GetObjectItemCaseSensitive(out, "history");
	if (cJSON_IsArray(hi) && cJSON_GetArraySize(hi) ==
	    cJSON_GetArraySize(ho))
		for (a = hi->child, b = ho->child; a != NULL && b != NULL;
		    a = a->next, b = b->next)
			kept(&event_schema, a, b, "history[]: ");
	cJSON_Delete(in);
	cJSON_Delete(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_state s, ref;
	char err[512], ref_err[512], *text;
	cJSON *j;
	int fd, rc, ref_rc = 1;

	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	both_readers(text, size);
	/* state_from_json() takes what state_load() lets through: UTF-8
	 * without a NUL.  ref_rc 1: no reference; 2: not JSON. */
	ref_err[0] = '\0';
	if (utf8_invalid(text, size) == NULL &&
	    memchr(text, '\0', size) == NULL) {
		ref_rc = 2;
		if ((j = cJSON_ParseWithLengthOpts(text, size + 1, NULL,
		    1)) != NULL) {
			ref_rc = state_from_tree(j, NULL, text, &ref,
			    ref_err, sizeof(ref_err));
			if (ref_rc == 0)
				roundtrip(&ref);
			cJSON_Delete(j);
		}
	}

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/fuzz_state.%ld.json",
		    (long)getpid());
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		goto out;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		goto out;
	}
	close(fd);
	err[0] = '\0';
	rc = state_load(path, 0, "fuzz", &s, err, sizeof(err));
	if (ref_rc == 2 && rc >= 0)
		abort();	/* cJSON refused it: a syntax error */
	if (ref_rc <= 0)
		same_load(rc, err, &s, ref_rc, ref_err, &ref);
	if (rc >= 0) {
		roundtrip(&s);
		if (rc == 0)
			unknown_kept(text, size, &s);
		breaker_free(&s);
	}
	unlink(path);
out:
	if (ref_rc == 0)
		breaker_free(&ref);
	free(text);
	return 0;
}
