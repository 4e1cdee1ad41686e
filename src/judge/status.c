/* SPDX-License-Identifier: ISC */
/*
 * The status a command reports about itself (SPEC §3.2), parsed without
 * I/O: a block on stdout between ---CBEXEC_STATUS--- and
 * ---END_CBEXEC_STATUS--- (or the RALPH spellings), or the text of
 * $CBEXEC_STATUS_FILE.  This file holds the report and its parsing; the
 * streaming scanner that finds blocks in stdout is in scanner.c.
 *
 * Blocks and the status file share one line parser (KEY: value or
 * KEY=value) and one function applying a key to the report; the file may
 * instead be one JSON object, whose members go through the same function.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cJSON.h>

#include "judge.h"
#include "statuslines.h"

#define KEY_MAX		64
#define METRICS_MAX	256		/* keeps the duplicate check cheap */

void
vwarn_to(char *w, size_t wn, int keep, const char *fmt, va_list ap)
{
	if (keep && w[0] != '\0')
		return;
	vsnprintf(w, wn, fmt, ap);
}

/* The first warning is kept: later ones are usually its consequences. */
static void
warn(struct status_report *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_to(r->warning, sizeof(r->warning), 1, fmt, ap);
	va_end(ap);
}

/* A printable excerpt for a warning: the input may be binary. */
static const char *
excerpt(char *b, size_t bn, const char *p, size_t n)
{
	size_t i;

	if (n > bn - 1)
		n = bn - 1;
	for (i = 0; i < n; i++)
		b[i] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';
	b[n] = '\0';
	return b;
}

void
status_init(struct status_report *r)
{
	memset(r, 0, sizeof(*r));
	r->status = RS_NONE;
	r->exit_signal = -1;
}

void
status_free(struct status_report *r)
{
	size_t i;

	free(r->task);
	free(r->tests_status);
	free(r->recommendation);
	for (i = 0; i < r->n_metrics; i++)
		free(r->metrics[i].key);
	free(r->metrics);
	status_init(r);
}

int
status_metric(const struct status_report *r, const char *key, double *v)
{
	size_t i;

	for (i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].key, key) == 0) {
			*v = r->metrics[i].value;
			return 1;
		}
	return 0;
}

int
status_done(const struct status_report *r)
{
	return (r->status == RS_COMPLETE || r->exit_signal == 1) &&
	    r->exit_signal != 0;
}

static void
add_metric(struct status_report *r, const char *key, double v)
{
	struct metric *m;
	size_t i;

	for (i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].key, key) == 0) {
			r->metrics[i].value = v;
			return;
		}
	if (r->n_metrics >= METRICS_MAX) {
		warn(r, "more than %d status metrics", METRICS_MAX);
		return;
	}
	/* The array grows at each power of two: no capacity field needed. */
	if ((r->n_metrics & (r->n_metrics - 1)) == 0) {
		m = realloc(r->metrics,
		    (r->n_metrics ? 2 * r->n_metrics : 1) * sizeof(*m));
		if (m == NULL)
			goto fail;
		r->metrics = m;
	}
	if ((r->metrics[r->n_metrics].key = strdup(key)) == NULL)
		goto fail;
	r->metrics[r->n_metrics++].value = v;
	return;
fail:
	warn(r, "out of memory storing status metric");
}

static void
set_str(struct status_report *r, char **dst, const char *v, size_t n)
{
	free(*dst);
	*dst = NULL;
	if (n > 0 && (*dst = strndup(v, n)) == NULL)
		warn(r, "out of memory storing status value");
}

/* Plain decimal only: "1.2.3", "7 tests" or "0x10" are not metrics. */
static int
parse_number(const char *v, size_t n, double *out)
{
	char b[64];
	size_t i = 0, digits = 0;

	if (n == 0 || n >= sizeof(b))
		return 0;
	memcpy(b, v, n);
	b[n] = '\0';
	if (b[i] == '+' || b[i] == '-')
		i++;
	for (; b[i] >= '0' && b[i] <= '9'; i++)
		digits++;
	if (b[i] == '.')
		for (i++; b[i] >= '0' && b[i] <= '9'; i++)
			digits++;
	if (digits == 0 || i != n)
		return 0;
	*out = strtod(b, NULL);
	return 1;
}

static int
word_is(const char *v, size_t n, const char *w)
{
	return n == strlen(w) && strncasecmp(v, w, n) == 0;
}

/* 1, 0, or -1 when not a boolean; loose admits yes/no/on/off/1/0. */
static int
parse_bool(const char *v, size_t n, int loose)
{
	if (word_is(v, n, "true") || (loose && (word_is(v, n, "yes") ||
	    word_is(v, n, "on") || word_is(v, n, "1"))))
		return 1;
	if (word_is(v, n, "false") || (loose && (word_is(v, n, "no") ||
	    word_is(v, n, "off") || word_is(v, n, "0"))))
		return 0;
	return -1;
}

static void
set_status(struct status_report *r, const char *v, size_t n)
{
	static const char *const names[] = { "IN_PROGRESS", "COMPLETE",
	    "BLOCKED" };
	static const enum run_status values[] = { RS_IN_PROGRESS,
	    RS_COMPLETE, RS_BLOCKED };
	char b[16], x[41];
	size_t i;

	if (n < sizeof(b)) {
		/* "In progress" and "in-progress" are how people write it. */
		for (i = 0; i < n; i++)
			b[i] = v[i] == ' ' || v[i] == '-' ? '_' : v[i];
		for (i = 0; i < NELEM(names); i++)
			if (word_is(b, n, names[i])) {
				r->status = values[i];
				return;
			}
	}
	warn(r, "unknown STATUS value \"%s\"", excerpt(x, sizeof(x), v, n));
}

/* key is lower case; num is the value when it came as a JSON number. */
static void
apply(struct status_report *r, const char *key, const char *v, size_t n,
    const double *num)
{
	char x[41];
	double d;
	int b;

	if (num == NULL && parse_number(v, n, &d))
		num = &d;
	if (num == NULL && (b = parse_bool(v, n, 0)) >= 0) {
		d = b;
		num = &d;
	}
	if (num != NULL) {
		add_metric(r, key, *num);
		if (strcmp(key, "tasks_completed_this_loop") == 0)
			add_metric(r, "tasks_completed", *num);
	}
	if (strcmp(key, "status") == 0)
		set_status(r, v, n);
	else if (strcmp(key, "task") == 0)
		set_str(r, &r->task, v, n);
	else if (strcmp(key, "tests_status") == 0)
		set_str(r, &r->tests_status, v, n);
	else if (strcmp(key, "recommendation") == 0)
		set_str(r, &r->recommendation, v, n);
	else if (strcmp(key, "exit_signal") == 0) {
		if ((b = parse_bool(v, n, 1)) >= 0)
			r->exit_signal = b;
		else
			warn(r, "bad EXIT_SIGNAL value \"%s\"",
			    excerpt(x, sizeof(x), v, n));
	}
}

static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
	    c == '\v';
}

static void
trim(const char **p, const char **e, const char *also)
{
	while (*p < *e && (is_space(**p) || (**p && strchr(also, **p))))
		(*p)++;
	while (*e > *p && (is_space((*e)[-1]) || ((*e)[-1] &&
	    strchr(also, (*e)[-1]))))
		(*e)--;
}

/*
 * Apply each KEY: value / KEY=value line of p.  Returns how many lines had
 * a key; *other counts the lines that had text but no usable key.
 */
int
parse_lines(struct status_report *r, const char *p, size_t n, size_t *other)
{
	const char *end = p + n, *a, *e, *sep, *c, *k, *ke, *v;
	char key[KEY_MAX], x[41];
	int nkeys = 0;
	size_t i;

	for (a = p; a < end; a = e + 1) {
		if ((e = memchr(a, '\n', (size_t)(end - a))) == NULL)
			e = end;
		trim(&a, &e, "");
		if (a == e || is_marker(a, (size_t)(e - a)) ||
		    (e - a >= 3 && memcmp(a, "```", 3) == 0))
			continue;
		/* Markdown bullets and bold keys, as agents like to write. */
		if (e - a >= 2 && (a[0] == '-' || a[0] == '*') && a[1] == ' ')
			a += 2;
		sep = memchr(a, ':', (size_t)(e - a));
		if ((c = memchr(a, '=', (size_t)(e - a))) != NULL &&
		    (sep == NULL || c < sep))
			sep = c;
		k = a;
		ke = sep != NULL ? sep : a;
		trim(&k, &ke, "*`");
		for (i = 0; k + i < ke && i < KEY_MAX - 1; i++) {
			c = k + i;
			if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' &&
			    *c <= '9') || *c == '_' || *c == '-' || *c == '.' ||
			    (*c >= 'A' && *c <= 'Z')))
				break;
			key[i] = *c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c;
		}
		if (sep == NULL || i == 0 || k + i != ke) {
			(*other)++;
			warn(r, "status line without KEY: value: \"%s\"",
			    excerpt(x, sizeof(x), a, (size_t)(e - a)));
			continue;
		}
		key[i] = '\0';
		v = sep + 1;
		c = e;
		trim(&v, &c, "");
		while (v < c && *v == '*')
			v++;
		trim(&v, &c, "");
		if (c - v >= 2 && (*v == '"' || *v == '\'' || *v == '`') &&
		    c[-1] == *v) {
			v++;
			c--;
		}
		apply(r, key, v, (size_t)(c - v), NULL);
		nkeys++;
	}
	return nkeys;
}

/* Each member is a key, as a line is; nested values are ignored. */
static int
parse_json(struct status_report *r, const char *p, size_t n, size_t *other)
{
	const char *rest;
	cJSON *root, *it;
	char key[KEY_MAX], num[32];
	size_t i;
	int nkeys = 0;

	if ((root = cJSON_ParseWithLengthOpts(p, n, &rest, 0)) == NULL ||
	    !cJSON_IsObject(root)) {
		warn(r, "status file is not a JSON object");
		cJSON_Delete(root);
		return -1;
	}
	for (; rest != NULL && rest < p + n && is_space(*rest); rest++)
		;
	if (rest != NULL && rest < p + n)
		warn(r, "text after the JSON object in the status file");
	cJSON_ArrayForEach(it, root) {
		for (i = 0; it->string[i] != '\0' && i < KEY_MAX - 1; i++)
			key[i] = it->string[i] >= 'A' && it->string[i] <= 'Z' ?
			    it->string[i] - 'A' + 'a' : it->string[i];
		if (i == 0 || it->string[i] != '\0') {
			(*other)++;
			warn(r, "bad key in the status file");
			continue;
		}
		key[i] = '\0';
		nkeys++;
		if (cJSON_IsString(it))
			apply(r, key, it->valuestring,
			    strlen(it->valuestring), NULL);
		else if (cJSON_IsNumber(it)) {
			snprintf(num, sizeof(num), "%.15g", it->valuedouble);
			apply(r, key, num, strlen(num), &it->valuedouble);
		} else if (cJSON_IsBool(it))
			apply(r, key, cJSON_IsTrue(it) ? "true" : "false",
			    cJSON_IsTrue(it) ? 4 : 5, NULL);
	}
	cJSON_Delete(root);
	return nkeys;
}

int
status_parse_text(const char *p, size_t n, struct status_report *r)
{
	size_t i = 0, other = 0;
	int nkeys;

	while (i < n && is_space(p[i]))
		i++;
	if (i == n)
		return 0;
	if (p[i] == '{')
		nkeys = parse_json(r, p + i, n - i, &other);
	else
		nkeys = parse_lines(r, p, n, &other);
	if (nkeys > 0) {
		r->present = 1;
		return 1;
	}
	if (nkeys == 0 && other == 0)
		return 0;
	warn(r, "status file has no KEY: value lines");
	return -1;
}
