/* SPDX-License-Identifier: ISC */
/*
 * A persisted JSON document as one table of fields (SPEC §11, "One
 * schema, forward compatible"): the reader and the writer of the state
 * file, of its history events and of an account's gate walk the same
 * rows, so no member is spelled twice by hand.
 *
 * Reading walks the object's members once, finding each one's row (the
 * members of a file cbexec wrote come in the table's order, so the row
 * after the last one found is tried first), and reads it by the row's
 * type into the struct; a row whose member is absent takes its default;
 * a required one that is absent makes the document corrupt.  A member no
 * row knows -- one a newer cbexec wrote -- is kept: its text as it stands
 * in the document (key, colon and value, byte for byte, found by walking
 * the text once more with jraw_next()), or as cJSON prints it when there
 * is no text, joined into one string the struct carries without looking
 * at it.  Writing puts the rows in order, then those members as they were
 * read, so an older cbexec on a shared store never drops what a newer
 * one wrote.
 *
 * The text writer appends to one growing buffer instead of building a
 * cJSON tree and printing it: a loop of runs writes the whole state after
 * every run, and the tree, cJSON's number printing and its re-parse of
 * every number it prints were a fifth of cbexec's CPU per run.  A failed
 * allocation marks the buffer; the caller then gets NULL, never half a
 * document.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core.h"
#include "breaker.h"
#include "schema.h"
#include "jsonfield.h"

/* ---- the text writer ---- */

int
jb_grow(struct jbuf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->bad)
		return -1;
	for (cap = b->cap > 0 ? b->cap : 4096; cap < b->len + n + 1;)
		cap *= 2;
	if ((p = realloc(b->p, cap)) == NULL) {
		b->bad = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void
jb_long(struct jbuf *b, long long v)
{
	char buf[24], *p = buf + sizeof(buf);
	unsigned long long u = v < 0 ? 0 - (unsigned long long)v :
	    (unsigned long long)v;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--p = '-';
	jb_put(b, p, (size_t)(buf + sizeof(buf) - p));
}

/* The shortest of %.15g and %.17g that reads back exactly. */
void
jb_num(struct jbuf *b, double v)
{
	char buf[32];

	if (v != v || v > 1e300 || v < -1e300) {	/* NaN, infinity */
		jb_puts(b, "null");
		return;
	}
	if (v > -1e15 && v < 1e15 && (double)(long long)v == v) {
		jb_long(b, (long long)v);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	jb_puts(b, buf);
}

/*
 * Only quotes, backslashes and control characters need escaping; bytes
 * that are not UTF-8 (from $USER, say: text cbexec takes as it comes)
 * become U+FFFD, so the file is always valid UTF-8 whatever went in.
 */
void
jb_str(struct jbuf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run, *end = s + strlen(s);
	char esc[7];
	unsigned char c;
	size_t k;
	int valid;

	jb_put(b, "\"", 1);
	for (run = s; (c = (unsigned char)*s) != '\0'; s++) {
		if (c >= 0x80) {
			k = utf8_seq((const unsigned char *)s, (size_t)(end - s),
			    &valid);
			if (!valid) {
				jb_put(b, run, (size_t)(s - run));
				jb_put(b, "\xEF\xBF\xBD", 3);
				run = s + k;
			}
			s += k - 1;
			continue;
		}
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		jb_put(b, run, (size_t)(s - run));
		run = s + 1;
		esc[0] = '\\';
		switch (c) {
		case '"': case '\\': esc[1] = (char)c; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			jb_put(b, esc, 6);
			continue;
		}
		jb_put(b, esc, 2);
	}
	jb_put(b, run, (size_t)(s - run));
	jb_put(b, "\"", 1);
}

void
jb_str_or_null(struct jbuf *b, const char *s)
{
	if (s != NULL)
		jb_str(b, s);
	else
		jb_puts(b, "null");
}

void
jb_time_or_null(struct jbuf *b, double t)
{
	char buf[40];

	if (t >= 0)
		jb_str(b, iso8601(t, buf, sizeof(buf)));
	else
		jb_puts(b, "null");
}

void
jb_ckey(struct jbuf *b, const char *k, int first)
{
	jb_puts(b, first ? "{\"" : ", \"");
	jb_puts(b, k);
	jb_puts(b, "\": ");
}

char *
jb_finish(struct jbuf *b)
{
	jb_put(b, "\n", 1);
	if (b->bad) {
		free(b->p);
		return NULL;
	}
	b->p[b->len] = '\0';	/* jb_grow() keeps room for it */
	return b->p;
}

/* ---- a value's text, walked ---- */

static const char *
blanks(const char *p)
{
	/* As cJSON: any byte up to the space is blank. */
	while (*p != '\0' && (unsigned char)*p <= ' ')
		p++;
	return p;
}

/* p at a string's opening quote: the byte after its closing one. */
static const char *
skip_string(const char *p)
{
	for (p++; *p != '\0'; p++) {
		if (*p == '\\') {
			if (*++p == '\0')
				break;
		} else if (*p == '"')
			return p + 1;
	}
	return p;
}

/* p at a value: the byte after it. */
static const char *
skip_value(const char *p)
{
	int depth = 0;

	do {
		if (*p == '"')
			p = skip_string(p);
		else if (*p == '{' || *p == '[') {
			depth++;
			p++;
		} else if (*p == '}' || *p == ']') {
			depth--;
			p++;
		} else if (depth > 0)
			p++;
		else	/* a number, true, false or null */
			while (*p != '\0' && *p != ',' && *p != '}' &&
			    *p != ']' && (unsigned char)*p > ' ')
				p++;
		if (*p == '\0')
			break;
	} while (depth > 0);
	return p;
}

int
jraw_open(struct jraw *r, const char *text)
{
	const char *p = text;

	/* A UTF-8 BOM, as cJSON skips one; byte by byte, never past the
	 * NUL. */
	if (p[0] == '\xEF' && p[1] == '\xBB' && p[2] == '\xBF')
		p += 3;
	p = blanks(p);
	if (*p != '{' && *p != '[')
		return 0;
	r->obj = *p == '{';
	r->p = blanks(p + 1);
	return 1;
}

int
jraw_next(struct jraw *r, const char **start, const char **value,
    const char **end)
{
	const char *p = r->p;

	if (*p == '\0' || *p == '}' || *p == ']')
		return 0;
	*start = p;
	if (r->obj) {
		p = blanks(skip_string(p));
		if (*p == ':')
			p = blanks(p + 1);
	}
	*value = p;
	*end = p = skip_value(p);
	p = blanks(p);
	if (*p == ',')
		p = blanks(p + 1);
	r->p = p;
	return 1;
}

/* ---- reading ---- */

const struct field *
schema_field(const struct schema *sc, const char *name)
{
	size_t i;

	for (i = 0; i < sc->n; i++)
		if (strcmp(sc->f[i].name, name) == 0 ||
		    (sc->f[i].was != NULL && strcmp(sc->f[i].was, name) == 0))
			return &sc->f[i];
	return NULL;
}

/* The row of the member name, trying *hint (the row after the last one
 * found) first; *renamed when it matched an earlier name. */
static const struct field *
find(const struct schema *sc, const char *name, size_t *hint, int *renamed)
{
	const struct field *f;
	size_t i, k;

	*renamed = 0;
	for (k = 0, i = *hint; k < sc->n; k++, i++) {
		if (i == sc->n)
			i = 0;
		f = &sc->f[i];
		if (f->name[0] == name[0] && strcmp(f->name, name) == 0) {
			*hint = i + 1 == sc->n ? 0 : i + 1;
			return f;
		}
	}
	for (i = 0; i < sc->n; i++)
		if (sc->f[i].was != NULL && strcmp(sc->f[i].was, name) == 0) {
			*renamed = 1;
			return &sc->f[i];
		}
	return NULL;
}

/* An enum or int field, whichever it is (enums are int-sized here). */
static int
get_i(const void *p)
{
	int v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void
set_i(void *p, int v)
{
	memcpy(p, &v, sizeof(v));
}

static const char *const circuit_want = "\"CLOSED\", \"HALF_OPEN\" or \"OPEN\"";

/* What a member of the type must be, for the error. */
static const char *
want(enum ftype t)
{
	switch (t) {
	case FT_INT: case FT_LONG: case FT_CODE:
		return "a non-negative integer";
	case FT_NUM: case FT_SECONDS:
		return "a non-negative number";
	case FT_BOOL:
		return "true or false";
	case FT_TRI:
		return "true, false or null";
	case FT_STR:
		return "a string or null";
	case FT_TEXT:
		return "a string";
	case FT_TIME:
		return "an ISO-8601 timestamp or null";
	case FT_STAMP:
		return "an ISO-8601 timestamp";
	case FT_CIRCUIT: case FT_CIRCUIT_OR_NULL:
		return circuit_want;
	case FT_OUTCOME:
		return "an outcome name (\"OK\", \"OPEN\", \"STUCK\", ...)";
	case FT_CAUSE:
		return "\"no_progress\", \"errors\", \"limit\" or null";
	case FT_CUSTOM:
		break;
	}
	return "a value";
}

/* Member m into the field f of dst. */
static int
read_field(const struct field *f, const struct schema_ctx *c,
    const cJSON *m, void *dst, char *err, size_t errlen)
{
	char *p = (char *)dst + f->off;
	const char *name = f->name;
	enum cb_circuit cv;
	enum cb_outcome ov;
	enum cb_cause cause;
	double d;

	switch (f->type) {
	case FT_INT:
		return jv_int(m, name, (int *)(void *)p, err, errlen);
	case FT_LONG:
		return jv_long(m, name, (long *)(void *)p, err, errlen);
	case FT_NUM:
		return jv_num(m, name, 0, 1e12, 0, (double *)(void *)p, err,
		    errlen);
	case FT_SECONDS:
		if (cJSON_IsNull(m)) {
			*(double *)(void *)p = -1;
			return 0;
		}
		return jv_num(m, name, 0, 1e12, 0, (double *)(void *)p, err,
		    errlen);
	case FT_CODE:
		if (cJSON_IsNull(m)) {
			*(int *)(void *)p = -1;
			return 0;
		}
		d = 0;
		if (jv_num(m, name, 0, INT_MAX, 1, &d, err, errlen) == -1)
			return -1;
		*(int *)(void *)p = (int)d;
		return 0;
	case FT_BOOL:
	case FT_TRI:
		if (f->type == FT_TRI && cJSON_IsNull(m)) {
			*(int *)(void *)p = -1;
			return 0;
		}
		if (!cJSON_IsBool(m))
			break;
		*(int *)(void *)p = cJSON_IsTrue(m);
		return 0;
	case FT_STR:
		free(*(char **)(void *)p);
		*(char **)(void *)p = NULL;
		return jv_str(m, name, (char **)(void *)p, err, errlen);
	case FT_TEXT:
		return jv_buf(m, name, p, f->size, err, errlen);
	case FT_TIME:
	case FT_STAMP:
		return jv_time(m, name, f->type == FT_TIME,
		    (double *)(void *)p, err, errlen);
	case FT_CIRCUIT:
		if (cJSON_IsNull(m) && (f->flags & FR_NULL))
			return 0;
		/* FALLTHROUGH */
	case FT_CIRCUIT_OR_NULL:
		if (cJSON_IsNull(m) && f->type == FT_CIRCUIT_OR_NULL) {
			set_i(p, -1);
			return 0;
		}
		if (!cJSON_IsString(m) || circuit_from_name(m->valuestring,
		    &cv) == -1)
			break;
		set_i(p, (int)cv);
		return 0;
	case FT_OUTCOME:
		if (!cJSON_IsString(m) || outcome_from_name(m->valuestring,
		    &ov) == -1)
			break;
		set_i(p, (int)ov);
		return 0;
	case FT_CAUSE:
		if (cJSON_IsNull(m)) {
			set_i(p, CAUSE_NONE);
			return 0;
		}
		if (!cJSON_IsString(m) || cause_from_name(m->valuestring,
		    &cause) == -1)
			break;
		set_i(p, (int)cause);
		return 0;
	case FT_CUSTOM:
		return f->read != NULL ? f->read(c, m, dst, err, errlen) : 0;
	}
	return bad_field(err, errlen, name, want(f->type));
}

/* The field f of dst, its member absent. */
static void
set_default(const struct field *f, void *dst)
{
	char *p = (char *)dst + f->off;

	switch (f->type) {
	case FT_INT: case FT_BOOL: case FT_TRI: case FT_CODE:
	case FT_CIRCUIT: case FT_CIRCUIT_OR_NULL: case FT_OUTCOME:
	case FT_CAUSE:
		set_i(p, (int)f->dflt);
		break;
	case FT_LONG:
		*(long *)(void *)p = (long)f->dflt;
		break;
	case FT_NUM: case FT_SECONDS: case FT_TIME: case FT_STAMP:
		*(double *)(void *)p = f->dflt;
		break;
	case FT_STR:
		free(*(char **)(void *)p);
		*(char **)(void *)p = NULL;
		break;
	case FT_TEXT:
		p[0] = '\0';
		break;
	case FT_CUSTOM:
		break;
	}
}

/*
 * The members of obj no row knows, joined by sc->sep into one string at
 * dst's unknown_off (NULL when there are none): from text when there is
 * one (the object's own, walked member by member beside the tree: the
 * same members in the same order), else as cJSON prints them.
 */
static int
keep_unknown(const struct schema *sc, const cJSON *obj, const char *text,
    void *dst, char *err, size_t errlen)
{
	struct jbuf b = { NULL, 0, 0, 0 };
	struct jraw r;
	const cJSON *c;
	const char *start, *value, *end;
	char **out = (char **)(void *)((char *)dst + sc->unknown_off), *v;
	int raw = text != NULL && jraw_open(&r, text) && r.obj;

	for (c = obj->child; c != NULL; c = c->next) {
		if (raw && !jraw_next(&r, &start, &value, &end))
			raw = 0;
		if (schema_field(sc, c->string) != NULL)
			continue;
		if (b.len > 0)
			jb_puts(&b, sc->sep);
		if (raw) {
			jb_put(&b, start, (size_t)(end - start));
			continue;
		}
		jb_str(&b, c->string);
		jb_puts(&b, ": ");
		if ((v = cJSON_PrintUnformatted(c)) == NULL) {
			b.bad = 1;
			break;
		}
		jb_puts(&b, v);
		cJSON_free(v);
	}
	free(*out);
	*out = NULL;
	if (b.len == 0 && !b.bad) {
		free(b.p);
		return 0;
	}
	if ((*out = jb_finish(&b)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	(*out)[b.len - 1] = '\0';	/* jb_finish's newline */
	return 0;
}

int
schema_read(const struct schema *sc, const cJSON *obj, const char *text,
    void *arg, void *dst, char *err, size_t errlen)
{
	uint64_t seen[SCHEMA_MAX / 64] = { 0 };
	struct schema_ctx ctx;
	const struct field *f;
	const cJSON *m;
	size_t hint = 0, k = 0, i, unknown = 0;
	int renamed;

	if (sc->n > SCHEMA_MAX) {
		snprintf(err, errlen, "internal error: more than %d fields",
		    SCHEMA_MAX);
		return -1;
	}
	ctx.obj = obj;
	ctx.text = text;
	ctx.arg = arg;
	for (m = obj->child; m != NULL; m = m->next, k++) {
		if ((f = find(sc, m->string, &hint, &renamed)) == NULL) {
			unknown++;
			continue;
		}
		/* Under its earlier name only while the new one is absent. */
		if (renamed && member(obj, f->name) != NULL)
			continue;
		i = (size_t)(f - sc->f);
		seen[i / 64] |= 1ULL << (i % 64);
		ctx.index = k;
		if (read_field(f, &ctx, m, dst, err, errlen) == -1) {
			/* An error names the member as it was spelled. */
			if (renamed && strncmp(err, "field '", 7) == 0)
				bad_field(err, errlen, f->was, want(f->type));
			return -1;
		}
	}
	ctx.index = (size_t)-1;
	for (i = 0; i < sc->n; i++) {
		if ((seen[i / 64] >> (i % 64)) & 1)
			continue;
		f = &sc->f[i];
		if (f->flags & FR_REQUIRED) {
			if (sc->missing == NULL)
				return bad_field(err, errlen, f->name,
				    want(f->type));
			snprintf(err, errlen, sc->missing, f->name);
			return -1;
		}
		if (f->type != FT_CUSTOM)
			set_default(f, dst);
		else if (f->read != NULL &&
		    f->read(&ctx, NULL, dst, err, errlen) == -1)
			return -1;
	}
	if (unknown == 0) {
		free(*(char **)(void *)((char *)dst + sc->unknown_off));
		*(char **)(void *)((char *)dst + sc->unknown_off) = NULL;
		return 0;
	}
	return keep_unknown(sc, obj, text, dst, err, errlen);
}

/* ---- writing ---- */

/* Whether the field is written at all. */
static int
present(const struct field *f, const char *p)
{
	if (!(f->flags & FR_OPTIONAL))
		return 1;
	switch (f->type) {
	case FT_STR:
		return *(char *const *)(const void *)p != NULL;
	case FT_TEXT:
		return p[0] != '\0';
	case FT_TRI: case FT_CODE:
		return get_i(p) >= 0;
	case FT_BOOL:
		return get_i(p) != 0;
	default:
		return 1;
	}
}

static void
write_field(struct jbuf *b, const struct field *f, const void *src)
{
	const char *p = (const char *)src + f->off;
	double d;
	int v;

	switch (f->type) {
	case FT_INT:
		jb_long(b, get_i(p));
		break;
	case FT_LONG:
		jb_long(b, *(const long *)(const void *)p);
		break;
	case FT_NUM:
		jb_num(b, *(const double *)(const void *)p);
		break;
	case FT_SECONDS:
		/* To the millisecond, as every time in the file. */
		if ((d = *(const double *)(const void *)p) >= 0)
			jb_num(b, (double)(long long)(d * 1000 + 0.5) / 1000);
		else
			jb_puts(b, "null");
		break;
	case FT_BOOL:
	case FT_TRI:
		v = get_i(p);
		jb_puts(b, v < 0 ? "null" : v ? "true" : "false");
		break;
	case FT_CODE:
		if ((v = get_i(p)) >= 0)
			jb_long(b, v);
		else
			jb_puts(b, "null");
		break;
	case FT_STR:
		jb_str_or_null(b, *(char *const *)(const void *)p);
		break;
	case FT_TEXT:
		if (p[0] == '\0' && (f->flags & FR_NULL_EMPTY))
			jb_puts(b, "null");
		else
			jb_str(b, p);
		break;
	case FT_TIME:
	case FT_STAMP:
		jb_time_or_null(b, *(const double *)(const void *)p);
		break;
	case FT_CIRCUIT:
	case FT_CIRCUIT_OR_NULL:
		v = get_i(p);
		jb_str_or_null(b, v >= 0 ? circuit_name((enum cb_circuit)v) :
		    NULL);
		break;
	case FT_OUTCOME:
		jb_str(b, outcome_name((enum cb_outcome)get_i(p)));
		break;
	case FT_CAUSE:
		jb_str_or_null(b, cause_name((enum cb_cause)get_i(p)));
		break;
	case FT_CUSTOM:
		f->write(b, src);
		break;
	}
}

void
schema_write(struct jbuf *b, const struct schema *sc, const void *src,
    const char *lead)
{
	const char *unknown = *(char *const *)(const void *)((const char *)
	    src + sc->unknown_off);
	const struct field *f;
	int first = 1;
	size_t i;

	jb_puts(b, sc->open);
	if (lead != NULL)
		jb_puts(b, lead);
	for (i = 0; i < sc->n; i++) {
		f = &sc->f[i];
		if (!present(f, (const char *)src + f->off))
			continue;
		if (!first)
			jb_put(b, sc->sep, sc->seplen);
		first = 0;
		jb_put(b, f->key, f->keylen);
		write_field(b, f, src);
	}
	if (unknown != NULL) {
		if (!first)
			jb_put(b, sc->sep, sc->seplen);
		jb_puts(b, unknown);
	}
	jb_puts(b, sc->close);
}
