/* SPDX-License-Identifier: ISC */
/*
 * Phase rules (SPEC §3.1) and the progress source list.  Pure: no I/O.
 *
 * A phase rule compares the metrics a run reported with the values stored
 * the last time the phase made progress: "up" and "down" metrics must move
 * that way, "true" metrics only need to be non-zero, and GREEN also counts
 * tests_failing going down while the total stays the same.  The stored
 * values live in the state file's last_progress_metric, one object per
 * phase, which phase_remember updates after a run that made progress.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cJSON.h>

#include "judge.h"


int
progress_parse_list(const char *s, unsigned *mask, char *err, size_t errlen)
{
	static const struct { const char *word; unsigned bit; } words[] = {
		{ "git", PROG_GIT }, { "files", PROG_FILES },
		{ "status", PROG_STATUS }, { "cmd", PROG_CMD },
		{ "exit", PROG_EXIT }, { "auto", PROG_AUTO }
	};
	unsigned m = 0;
	size_t i, n;

	for (;;) {
		n = strcspn(s, ",");
		if (n == 0) {
			if (err != NULL && errlen > 0)
				snprintf(err, errlen, "empty word in progress list");
			return -1;
		}
		for (i = 0; i < NELEM(words); i++)
			if (strlen(words[i].word) == n &&
			    strncmp(words[i].word, s, n) == 0)
				break;
		if (i == NELEM(words)) {
			if (err != NULL && errlen > 0)
				snprintf(err, errlen, "unknown progress "
				    "source '%.*s'", (int)n, s);
			return -1;
		}
		m |= words[i].bit;
		if (s[n] == '\0')
			break;
		s += n + 1;
	}
	*mask = m;
	return 0;
}

static struct phase_metric red_metrics[] = {
	{ "tests_generated", DIR_UP }, { "criteria_covered", DIR_UP }
};
static struct phase_metric green_metrics[] = {
	{ "tests_passing", DIR_UP }
};
static struct phase_metric refactor_metrics[] = {
	{ "pattern_applied", DIR_TRUE }, { "complexity_score", DIR_DOWN },
	{ "duplication_removed", DIR_TRUE }
};
static struct phase_metric document_metrics[] = {
	{ "docs_generated", DIR_UP }, { "diagrams_valid", DIR_UP }
};

static const struct phase_def builtins[] = {
	{ "RED", 3, 5, red_metrics, NELEM(red_metrics), 0 },
	{ "GREEN", 2, 3, green_metrics, NELEM(green_metrics), 1 },
	{ "REFACTOR", 5, 5, refactor_metrics, NELEM(refactor_metrics), 0 },
	{ "DOCUMENT", 3, 5, document_metrics, NELEM(document_metrics), 0 }
};

const struct phase_def *
phase_builtin(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < NELEM(builtins); i++)
		if (strcasecmp(builtins[i].name, name) == 0)
			return &builtins[i];
	return NULL;
}

static int
baseline(const cJSON *last, const char *key, double *v)
{
	const cJSON *it;

	if (!cJSON_IsObject(last))
		return 0;
	it = cJSON_GetObjectItemCaseSensitive(last, key);
	if (cJSON_IsNumber(it))
		*v = it->valuedouble;
	else if (cJSON_IsBool(it))
		*v = cJSON_IsTrue(it);
	else
		return 0;
	return 1;
}

int
phase_judge(const struct phase_def *p, const struct status_report *r,
    const cJSON *last)
{
	double v, b, pass, fail, bpass, bfail;
	int seen = 0, moved = 0, has;
	size_t i;

	if (p == NULL || r == NULL)
		return -1;
	for (i = 0; i < p->n_metrics; i++) {
		if (!status_metric(r, p->metrics[i].key, &v))
			continue;
		seen = 1;
		has = baseline(last, p->metrics[i].key, &b);
		switch (p->metrics[i].dir) {
		case DIR_UP:
			moved |= has ? v > b : v > 0;
			break;
		case DIR_DOWN:
			/* No baseline: nothing to be lower than yet. */
			moved |= has && v < b;
			break;
		case DIR_TRUE:
			moved |= v != 0;
			break;
		}
	}
	if (p->green_rule && status_metric(r, "tests_failing", &fail)) {
		seen = 1;
		/* A falling failure count only counts when no tests were
		 * deleted to get there: the total must not change. */
		if (status_metric(r, "tests_passing", &pass) &&
		    baseline(last, "tests_passing", &bpass) &&
		    baseline(last, "tests_failing", &bfail) &&
		    fail < bfail && pass + fail == bpass + bfail)
			moved = 1;
	}
	return seen ? moved : -1;
}

static int
remember(cJSON *obj, const char *key, const struct status_report *r)
{
	cJSON *it, *num;
	double v;

	if (!status_metric(r, key, &v))
		return 0;
	it = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (cJSON_IsNumber(it)) {
		cJSON_SetNumberValue(it, v);
		return 0;
	}
	if ((num = cJSON_CreateNumber(v)) == NULL)
		return -1;
	if (it != NULL)
		return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, num) ?
		    0 : (cJSON_Delete(num), -1);
	if (!cJSON_AddItemToObject(obj, key, num)) {
		cJSON_Delete(num);
		return -1;
	}
	return 0;
}

int
phase_remember(cJSON *root, const struct phase_def *p,
    const struct status_report *r)
{
	cJSON *obj;
	size_t i;

	if (!cJSON_IsObject(root) || p == NULL || r == NULL)
		return -1;
	obj = cJSON_GetObjectItemCaseSensitive(root, p->name);
	if (!cJSON_IsObject(obj)) {
		cJSON_DeleteItemFromObjectCaseSensitive(root, p->name);
		if ((obj = cJSON_AddObjectToObject(root, p->name)) == NULL)
			return -1;
	}
	for (i = 0; i < p->n_metrics; i++)
		if (remember(obj, p->metrics[i].key, r) == -1)
			return -1;
	if (p->green_rule && remember(obj, "tests_failing", r) == -1)
		return -1;
	return 0;
}
