/*
 * The status a command reports about itself (SPEC §3.2), parsed without
 * I/O: a block on stdout between ---CBEXEC_STATUS--- and
 * ---END_CBEXEC_STATUS--- (or the RALPH spellings; either end closes either
 * start), or the text of $CBEXEC_STATUS_FILE.
 *
 * The scanner sits on the path that copies the command's stdout, so outside
 * a block it does no per-byte work: memmem() looks for "STATUS---", the tail
 * all four markers share, and only at a hit are the bytes before it
 * compared.  A marker split between feeds is found by searching the carry
 * (the last 22 bytes seen, one less than the longest marker) joined with
 * the head of the next feed; only hits starting in the carry count there,
 * so nothing is found twice.  Markers count anywhere, not only at line
 * start: inside a JSON string they follow a \n escape, and a stray marker
 * in prose does no harm because a new start marker restarts the block and
 * a block with no KEY: value line is ignored.
 *
 * Inside a block the bytes go into a buffer of 64 KiB plus room for the
 * end marker; past that they are only counted, and the block is dropped at
 * its end marker.  Each complete block is parsed at once into a report that
 * replaces the previous one, so the last wins and only one report is kept.
 * A block with no real newline is JSON-unescaped first, since that is how
 * it arrives from claude -p --output-format json.
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

#include "status.h"

#define BLOCK_MAX	(64 * 1024)
#define MARK_MAX	23		/* strlen("---END_CBEXEC_STATUS---") */
#define BUF_SIZE	(BLOCK_MAX + MARK_MAX)
#define KEY_MAX		64
#define METRICS_MAX	256		/* keeps the duplicate check cheap */
#define TAIL		"STATUS---"
#define TAIL_LEN	9

static const struct marker {
	const char *s;
	size_t len;
	int start;
} markers[] = {
	{ "---CBEXEC_STATUS---", 19, 1 },
	{ "---RALPH_STATUS---", 18, 1 },
	{ "---END_CBEXEC_STATUS---", 23, 0 },
	{ "---END_RALPH_STATUS---", 22, 0 },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct status_scanner {
	char carry[MARK_MAX - 1];
	size_t clen;
	int in_block;
	char *buf;		/* BUF_SIZE, allocated at the first block */
	size_t blen;		/* bytes of the current block, stored or not */
	struct status_report last;
	int found;
	char warning[sizeof(((struct status_report *)0)->warning)];
};

static void
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

/* The scanner keeps the newest: it describes how the output ended. */
static void
scanner_warn(struct status_scanner *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_to(s->warning, sizeof(s->warning), 0, fmt, ap);
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

static int
is_marker(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < NELEM(markers); i++)
		if (n == markers[i].len && memcmp(p, markers[i].s, n) == 0)
			return 1;
	return 0;
}

/*
 * Apply each KEY: value / KEY=value line of p.  Returns how many lines had
 * a key; *other counts the lines that had text but no usable key.
 */
static int
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

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static long
hex4(const char *p)
{
	long v = 0;
	int i, h;

	for (i = 0; i < 4; i++) {
		if ((h = hexval(p[i])) < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

static size_t
put_utf8(char *o, long c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6);
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12);
		o[1] = (char)(0x80 | (c >> 6 & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | c >> 18);
	o[1] = (char)(0x80 | (c >> 12 & 0x3f));
	o[2] = (char)(0x80 | (c >> 6 & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* In place: every escape is at least as long as what it stands for. */
static size_t
json_unescape(char *b, size_t n)
{
	size_t i, o = 0;
	long c, lo;

	for (i = 0; i < n; i++) {
		if (b[i] != '\\' || i + 1 == n) {
			b[o++] = b[i];
			continue;
		}
		switch (b[++i]) {
		case 'n':	b[o++] = '\n'; break;
		case 'r':	b[o++] = '\r'; break;
		case 't':	b[o++] = '\t'; break;
		case '"':	b[o++] = '"'; break;
		case '\\':	b[o++] = '\\'; break;
		case '/':	b[o++] = '/'; break;
		case 'u':
			if (i + 4 < n && (c = hex4(b + i + 1)) >= 0) {
				i += 4;
				if (c >= 0xd800 && c < 0xdc00 && i + 6 < n &&
				    b[i + 1] == '\\' && b[i + 2] == 'u' &&
				    (lo = hex4(b + i + 3)) >= 0xdc00 &&
				    lo < 0xe000) {
					c = 0x10000 + ((c - 0xd800) << 10) +
					    (lo - 0xdc00);
					i += 6;
				}
				o += put_utf8(b + o, c);
				break;
			}
			/* FALLTHROUGH */
		default:
			b[o++] = '\\';
			b[o++] = b[i];
		}
	}
	return o;
}

static void
parse_block(struct status_scanner *s, char *b, size_t n)
{
	struct status_report t;
	size_t other = 0;
	int pass;

	/* A block printed inside a JSON string inside a JSON string (a tool
	 * call in stream-json) needs a second round. */
	for (pass = 0; pass < 3 && memchr(b, '\n', n) == NULL &&
	    memchr(b, '\\', n) != NULL; pass++) {
		if (pass > 0 && memmem(b, n, "\\n", 2) == NULL)
			break;
		n = json_unescape(b, n);
	}
	status_init(&t);
	if (parse_lines(&t, b, n, &other) == 0) {
		scanner_warn(s, "status block without KEY: value lines "
		    "ignored");
		status_free(&t);
		return;
	}
	t.present = 1;
	status_free(&s->last);
	s->last = t;
	s->found = 1;
}

static void
block_append(struct status_scanner *s, const char *p, size_t n)
{
	size_t room = s->blen < BUF_SIZE ? BUF_SIZE - s->blen : 0;

	if (s->buf != NULL && room > 0)
		memcpy(s->buf + s->blen, p, n < room ? n : room);
	s->blen += n;
}

static void
on_marker(struct status_scanner *s, const struct marker *m)
{
	size_t n;

	if (m->start) {
		/* A restart is no warning: it is what a marker quoted in
		 * prose before the real block looks like. */
		if (s->buf == NULL && (s->buf = malloc(BUF_SIZE)) == NULL)
			scanner_warn(s, "out of memory for status block");
		s->in_block = 1;
		s->blen = 0;
		return;
	}
	if (!s->in_block)
		return;
	s->in_block = 0;
	/* The end marker's own bytes were appended: the carry only ever
	 * holds bytes from after the start marker. */
	n = s->blen >= m->len ? s->blen - m->len : 0;
	if (n > BLOCK_MAX)
		scanner_warn(s, "status block longer than %d KiB dropped",
		    BLOCK_MAX / 1024);
	else if (s->buf != NULL)
		parse_block(s, s->buf, n);
}

/* The marker whose "STATUS---" tail is at b + h, or NULL. */
static const struct marker *
marker_at(const char *b, size_t h)
{
	size_t i, pre;

	for (i = 0; i < NELEM(markers); i++) {
		pre = markers[i].len - TAIL_LEN;
		if (h >= pre && memcmp(b + h - pre, markers[i].s, pre) == 0)
			return &markers[i];
	}
	return NULL;
}

/* The first marker in carry + p; *end is where it ends in p. */
static const struct marker *
next_marker(struct status_scanner *s, const char *p, size_t n, size_t *end)
{
	const struct marker *m;
	char j[2 * (MARK_MAX - 1)];
	const char *q;
	size_t jn, h;

	if (s->clen > 0) {
		jn = n < MARK_MAX - 1 ? n : MARK_MAX - 1;
		memcpy(j, s->carry, s->clen);
		memcpy(j + s->clen, p, jn);
		jn += s->clen;
		for (q = j; (q = memmem(q, jn - (size_t)(q - j), TAIL,
		    TAIL_LEN)) != NULL; q++) {
			h = (size_t)(q - j);
			if ((m = marker_at(j, h)) != NULL &&
			    h + TAIL_LEN - m->len < s->clen &&
			    h + TAIL_LEN > s->clen) {
				*end = h + TAIL_LEN - s->clen;
				return m;
			}
		}
	}
	for (q = p; (q = memmem(q, n - (size_t)(q - p), TAIL, TAIL_LEN)) !=
	    NULL; q++) {
		h = (size_t)(q - p);
		if ((m = marker_at(p, h)) != NULL) {
			*end = h + TAIL_LEN;
			return m;
		}
	}
	return NULL;
}

static void
keep_carry(struct status_scanner *s, const char *p, size_t n)
{
	size_t keep;

	if (n >= sizeof(s->carry)) {
		memcpy(s->carry, p + n - sizeof(s->carry), sizeof(s->carry));
		s->clen = sizeof(s->carry);
		return;
	}
	keep = sizeof(s->carry) - n;
	if (s->clen > keep) {
		memmove(s->carry, s->carry + s->clen - keep, keep);
		s->clen = keep;
	}
	memcpy(s->carry + s->clen, p, n);
	s->clen += n;
}

struct status_scanner *
status_scanner_new(void)
{
	struct status_scanner *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	status_init(&s->last);
	return s;
}

void
status_scanner_feed(struct status_scanner *s, const char *p, size_t n)
{
	const struct marker *m;
	size_t end;

	while (n > 0) {
		if ((m = next_marker(s, p, n, &end)) == NULL) {
			if (s->in_block)
				block_append(s, p, n);
			keep_carry(s, p, n);
			return;
		}
		if (s->in_block)
			block_append(s, p, end);
		s->clen = 0;
		on_marker(s, m);
		p += end;
		n -= end;
	}
}

int
status_scanner_result(struct status_scanner *s, struct status_report *r)
{
	int found = s->found;

	if (s->in_block)
		scanner_warn(s, "unterminated status block");
	status_free(r);
	if (found) {
		*r = s->last;
		status_init(&s->last);
		s->found = 0;
	}
	if (r->warning[0] == '\0')
		memcpy(r->warning, s->warning, sizeof(r->warning));
	return found;
}

void
status_scanner_free(struct status_scanner *s)
{
	if (s == NULL)
		return;
	free(s->buf);
	status_free(&s->last);
	free(s);
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
