/* SPDX-License-Identifier: ISC */
/*
 * The incremental JSON tokenizer of jstream.h.
 *
 * A byte-at-a-time state machine for the structure (braces, keys, colons,
 * commas, numbers) and a fast path for the inside of strings, which is
 * where nearly all the bytes of an agent's output are: memchr() finds the
 * next quote, backslash or newline, and the bytes before it are either
 * handed on as they are (a string the reader wants) or passed over.  So a
 * long answer costs a few vectorised scans, not a switch per byte.
 *
 * Nothing grows with the input: the path, the key and a number are cut at
 * fixed sizes (a cut key names no path the reader looks for), containers
 * deeper than JS_DEPTH are skipped by counting, and a raw value is kept up
 * to JS_RAW_MAX bytes.  JSON that breaks (a stray byte, a raw newline inside a
 * string) ends the event as incomplete, and the rest of that line is
 * passed over: the next line starts afresh.
 */
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core.h"
#include "jstream.h"

enum {
	S_LINE,		/* at the start of a line, outside any JSON */
	S_TEXT,		/* in a line that is not JSON */
	S_SKIP,		/* in a line whose JSON broke off */
	S_VALUE,	/* a value is expected */
	S_KEY_OR_END,	/* after '{' or ',' in an object */
	S_KEY,		/* in a key */
	S_COLON,	/* after a key */
	S_STRING,	/* in a string value */
	S_SCALAR,	/* in a number or literal */
	S_AFTER,	/* after a value inside a container */
	S_DEEP,		/* inside containers past JS_DEPTH */
	S_DEEP_STR	/* in a string there */
};

void
jstream_init(struct jstream *j, const struct jstream_ops *ops, void *arg)
{
	memset(j, 0, sizeof(*j));
	j->ops = ops;
	j->arg = arg;
	j->state = S_LINE;
}

static int
in_event(const struct jstream *j)
{
	return j->event_depth > 0 && j->depth >= j->event_depth;
}

static void
raw_add(struct jstream *j, const char *p, size_t n)
{
	size_t room = JS_RAW_MAX - j->rawlen;

	j->raw_digest = js_digest(j->raw_digest, p, n);
	if (n > room) {
		n = room;
		j->raw_cut = 1;
	}
	memcpy(j->raw + j->rawlen, p, n);
	j->rawlen += n;
}

/* The raw value ends with the bytes [s, p). */
static void
raw_done(struct jstream *j, const char *s, const char *p)
{
	raw_add(j, s, (size_t)(p - s));
	j->raw_on = 0;
	if (j->ops->raw != NULL)
		j->ops->raw(j->arg, j->raw_path, j->raw, j->rawlen, j->raw_cut,
		    j->raw_digest);
}

/* Give up on the current JSON: the rest of the line is passed over. */
static void
broken(struct jstream *j)
{
	j->nl = 0;
	j->olen = 0;
	if (j->event_depth > 0 && j->ops->event_end != NULL)
		j->ops->event_end(j->arg, 0);
	j->event_depth = 0;
	j->depth = j->deep = 0;
	j->raw_on = 0;
	j->plen = 0;
	j->path[0] = '\0';
	j->state = S_SKIP;
}

static void
set_path(struct jstream *j, size_t len)
{
	j->plen = len;
	j->path[len] = '\0';
}

/* Back to the path (and its hash) that members at depth d start from. */
static void
to_base(struct jstream *j, int d)
{
	set_path(j, j->base[d]);
	j->phash = j->bhash[d];
}

/* What follows a value at depth (0: the top level). */
static void
after_value(struct jstream *j)
{
	j->state = j->depth == 0 ? S_LINE : S_AFTER;
}

/* A value starts: ask the reader, start a raw copy if it wants one. */
static enum js_want
value_start(struct jstream *j, int str)
{
	enum js_want w;

	if (!in_event(j) || j->ops->want == NULL)
		return JS_SKIP;
	w = j->ops->want(j->arg, j->path, j->phash, str);
	if (w == JS_RAW) {
		j->raw_on = 1;
		j->raw_depth = j->depth;
		j->rawlen = 0;
		j->raw_cut = 0;
		j->raw_digest = JS_DIGEST0;
		memcpy(j->raw_path, j->path, j->plen + 1);
	}
	return w;
}

static void
open_container(struct jstream *j, int array)
{
	if (j->depth == JS_DEPTH) {
		j->deep = 1;
		j->state = S_DEEP;
		return;
	}
	j->depth++;
	j->array[j->depth] = (unsigned char)array;
	if (j->depth == 1 && !array) {
		j->event_depth = 1;
		if (j->ops->event_begin != NULL)
			j->ops->event_begin(j->arg);
		set_path(j, 0);
		j->phash = JS_HASH0;
	} else if (j->depth == 2 && !array && j->array[1]) {
		/* an object of a top-level array is an event */
		j->event_depth = 2;
		if (j->ops->event_begin != NULL)
			j->ops->event_begin(j->arg);
		set_path(j, 0);
		j->phash = JS_HASH0;
	}
	j->base[j->depth] = (unsigned short)j->plen;
	j->bhash[j->depth] = j->phash;
	j->state = array ? S_VALUE : S_KEY_OR_END;
}

/* Close the container at the top; c is '}' or ']'. */
static int
close_container(struct jstream *j, char c)
{
	int d = j->depth;

	if (d == 0 || (c == ']') != (j->array[d] != 0))
		return -1;
	to_base(j, d);
	if (!j->array[d] && j->event_depth > 0) {
		if (d == j->event_depth) {
			j->event_depth = 0;
			if (j->ops->event_end != NULL)
				j->ops->event_end(j->arg, 1);
		} else if (d > j->event_depth && j->ops->object_end != NULL)
			j->ops->object_end(j->arg, j->path);
	}
	j->depth--;
	after_value(j);
	/* A member's path ends at its container's base. */
	if (j->depth > 0)
		to_base(j, j->depth);
	return 0;
}

/* A key starts: it is read straight onto its container's path. */
static void
key_start(struct jstream *j)
{
	to_base(j, j->depth);
	if (j->plen > 0 && j->plen < JS_PATH)
		j->path[j->plen++] = '.';
	j->kstart = j->plen;
	j->kcut = 0;
	j->state = S_KEY;
	j->esc = 0;
	j->hi = 0;
}

/* The key just read names the path of the value that follows. */
static void
key_done(struct jstream *j)
{
	j->path[j->plen] = '\0';
	j->phash = js_hash_key(j->phash, j->path + j->kstart,
	    j->plen - j->kstart);
	/* a key cut short must match nothing */
	if (j->kcut)
		j->phash = ~j->phash;
	j->state = S_COLON;
}

/* Hand the wanted string's bytes gathered so far to the reader. */
static void
flush(struct jstream *j)
{
	if (j->olen > 0 && j->ops->chunk != NULL)
		j->ops->chunk(j->arg, j->path, j->out, j->olen);
	j->olen = 0;
}

/* Unescaped bytes of the key or string being read; a string's are
 * gathered so the reader gets them in pieces, not between escapes. */
static void
emit(struct jstream *j, const char *p, size_t n)
{
	size_t room;

	if (n == 0)
		return;
	if (j->state == S_KEY) {
		room = JS_PATH - j->plen;
		if (n > room) {
			n = room;
			j->kcut = 1;
		}
		memcpy(j->path + j->plen, p, n);
		j->plen += n;
		return;
	}
	if (j->olen + n > sizeof(j->out)) {
		flush(j);
		if (n >= sizeof(j->out)) {
			if (j->ops->chunk != NULL)
				j->ops->chunk(j->arg, j->path, p, n);
			return;
		}
	}
	memcpy(j->out + j->olen, p, n);
	j->olen += n;
}

/* One byte of an escape; -1 when it is not JSON. */
static int
escape(struct jstream *j, char c)
{
	char o[8];
	size_t n = 0;
	int h;

	if (j->esc == 1) {
		if (j->hi != 0 && c != 'u') {
			/* a high surrogate not followed by its pair */
			j->hi = 0;
			emit(j, "\xef\xbf\xbd", 3);
		}
		switch (c) {
		case 'n': o[n++] = '\n'; break;
		case 't': o[n++] = '\t'; break;
		case 'r': o[n++] = '\r'; break;
		case 'b': o[n++] = '\b'; break;
		case 'f': o[n++] = '\f'; break;
		case '"': case '\\': case '/': o[n++] = c; break;
		case 'u':
			j->esc = 2;
			j->u = 0;
			return 0;
		default:
			return -1;
		}
		j->esc = 0;
		emit(j, o, n);
		return 0;
	}
	if ((h = hex_value(c)) < 0)
		return -1;
	j->u = j->u << 4 | (unsigned)h;
	if (++j->esc < 6)
		return 0;
	j->esc = 0;
	if (j->u >= 0xd800 && j->u < 0xdc00) {
		j->hi = j->u;
		return 0;
	}
	if (j->u >= 0xdc00 && j->u < 0xe000 && j->hi != 0)
		n += utf8_put(o + n, 0x10000 + ((j->hi - 0xd800) << 10) +
		    (j->u - 0xdc00));
	else
		/* a lone surrogate is no character: U+FFFD */
		n += utf8_put(o + n, j->u >= 0xd800 && j->u < 0xe000 ?
		    0xfffd : j->u);
	j->hi = 0;
	emit(j, o, n);
	return 0;
}

#ifndef __SSE2__
/* The bytes of w equal to c, as their high bits (the classic "has zero
 * byte" test on w ^ c). */
#define ONES	0x0101010101010101ULL
#define HIGHS	0x8080808080808080ULL

static inline uint64_t
bytes_eq(uint64_t w, unsigned char c)
{
	uint64_t v = w ^ (ONES * c);

	return (v - ONES) & ~v & HIGHS;
}
#endif

/*
 * Where the plain run of string bytes at p ends: a quote, a backslash, a
 * newline (broken JSON), or end.  Sixteen bytes at a time with SSE2 (every
 * x86-64 has it), else eight: agents' strings have an escape every line or
 * so, too often for three memchr() calls per run to pay.
 */
static const char *
plain_end(const char *p, const char *end)
{
#ifdef __SSE2__
	const __m128i q = _mm_set1_epi8('"'), b = _mm_set1_epi8('\\'),
	    nl = _mm_set1_epi8('\n');
	__m128i v;
	int m;

	for (; end - p >= 16; p += 16) {
		v = _mm_loadu_si128((const __m128i *)(const void *)p);
		m = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(
		    _mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, b)),
		    _mm_cmpeq_epi8(v, nl)));
		if (m != 0)
			return p + __builtin_ctz((unsigned)m);
	}
#else
	uint64_t w;

	for (; end - p >= 8; p += 8) {
		memcpy(&w, p, 8);
		if ((bytes_eq(w, '"') | bytes_eq(w, '\\') |
		    bytes_eq(w, '\n')) != 0)
			break;
	}
#endif
	while (p < end && *p != '"' && *p != '\\' && *p != '\n')
		p++;
	return p;
}

/*
 * A string nobody wants (or one copied raw, or wanted as it is written):
 * only where it ends matters, which is the first quote after an even
 * number of backslashes.  So memchr() runs from quote to quote, and
 * escapes cost nothing; j->bs carries the backslashes a piece ended with
 * into the next.  A JS_ESCAPED string's bytes go to the reader as they
 * are.  (A raw newline is not looked for here: a line broken inside such
 * a string is found broken a few bytes into the next.)
 */
static const char *
skip_string(struct jstream *j, const char *p, const char *end)
{
	const char *q, *b, *s = p;
	size_t k;
	int give = j->want == JS_ESCAPED && j->ops->chunk != NULL;

	while ((q = memchr(p, '"', (size_t)(end - p))) != NULL) {
		for (b = q, k = 0; b > p && b[-1] == '\\'; b--)
			k++;
		if (b == p)
			k += j->bs;
		j->bs = 0;
		if (k % 2 == 0) {
			if (give) {
				if (q > s)
					j->ops->chunk(j->arg, j->path, s,
					    (size_t)(q - s));
				if (j->ops->string_end != NULL)
					j->ops->string_end(j->arg, j->path);
			}
			after_value(j);
			return q + 1;
		}
		p = q + 1;
	}
	for (b = end, k = 0; b > p && b[-1] == '\\'; b--)
		k++;
	j->bs = b == p ? j->bs + k : k;
	if (give && end > s)
		j->ops->chunk(j->arg, j->path, s, (size_t)(end - s));
	return end;
}

/* The string or key at p: returns where reading stopped. */
static const char *
string_bytes(struct jstream *j, const char *p, const char *end)
{
	const char *q;

	if (j->state == S_STRING && j->want != JS_CHUNKS)
		return skip_string(j, p, end);
	while (p < end) {
		if (j->esc > 0) {
			if (escape(j, *p++) == -1) {
				broken(j);
				return p;
			}
			continue;
		}
		q = plain_end(p, end);
		if (j->hi != 0 && q > p) {
			/* a high surrogate not followed by its pair */
			j->hi = 0;
			emit(j, "\xef\xbf\xbd", 3);
		}
		emit(j, p, (size_t)(q - p));
		p = q;
		if (p == end)
			break;
		if (*p == '\\') {
			j->esc = 1;
			p++;
			continue;
		}
		if (*p == '\n') {
			broken(j);
			return p;
		}
		/* the closing quote */
		p++;
		if (j->state == S_KEY) {
			key_done(j);
			return p;
		}
		flush(j);
		if (j->ops->string_end != NULL)
			j->ops->string_end(j->arg, j->path);
		after_value(j);
		return p;
	}
	if (j->state == S_STRING)
		flush(j);
	return p;
}

static int
scalar_byte(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    c == '-' || c == '+' || c == '.' || c == 'E';
}

/* Bytes inside containers too deep to track: strings and brackets are
 * counted until the depth is back. */
static const char *
deep_bytes(struct jstream *j, const char *p, const char *end)
{
	while (p < end) {
		char c = *p;

		if (j->state == S_DEEP_STR) {
			if (j->esc) {
				j->esc = 0;
				p++;
				continue;
			}
			p = plain_end(p, end);
			if (p == end)
				break;
			if (*p == '\n') {
				broken(j);
				return p;
			}
			if (*p == '\\')
				j->esc = 1;
			else
				j->state = S_DEEP;
			p++;
			continue;
		}
		p++;
		if (c == '"')
			j->state = S_DEEP_STR;
		else if (c == '{' || c == '[')
			j->deep++;
		else if ((c == '}' || c == ']') && --j->deep == 0) {
			after_value(j);
			return p;
		}
	}
	return p;
}

void
jstream_feed(struct jstream *j, const char *p, size_t n)
{
	const char *end = p + n, *s, *q;
	char c;

	while (p < end) {
		s = p;
		switch (j->state) {
		case S_TEXT:
		case S_SKIP:
			q = memchr(p, '\n', (size_t)(end - p));
			p = q != NULL ? q + 1 : end;
			if (j->state == S_TEXT && j->ops->text != NULL)
				j->ops->text(j->arg, s, (size_t)(p - s));
			if (q != NULL)
				j->state = S_LINE;
			continue;
		case S_STRING:
		case S_KEY:
			p = string_bytes(j, p, end);
			if (j->raw_on && j->state != S_STRING &&
			    j->depth == j->raw_depth)
				raw_done(j, s, p);
			else if (j->raw_on)
				raw_add(j, s, (size_t)(p - s));
			continue;
		case S_DEEP:
		case S_DEEP_STR:
			p = deep_bytes(j, p, end);
			if (j->raw_on)
				raw_add(j, s, (size_t)(p - s));
			continue;
		default:
			break;
		}
		c = *p;
		if (j->state == S_SCALAR) {
			if (scalar_byte(c)) {
				if (j->slen < JS_SCALAR)
					j->scalar[j->slen++] = c;
				p++;
				if (j->raw_on)
					raw_add(j, s, 1);
				continue;
			}
			j->scalar[j->slen] = '\0';
			if (j->raw_on && j->depth == j->raw_depth)
				raw_done(j, s, s);
			else if (!j->raw_on && in_event(j) &&
			    j->ops->scalar != NULL)
				j->ops->scalar(j->arg, j->path, j->scalar,
				    j->slen);
			after_value(j);
			continue;	/* c is read again after the value */
		}
		p++;
		if (c == ' ' || c == '\t' || c == '\r' ||
		    (c == '\n' && j->state != S_LINE && j->depth > 0)) {
			if (c == '\n')
				j->nl = 1;
			if (j->raw_on)
				raw_add(j, s, 1);
			continue;
		}
		/* JSON that broke off at the end of a line: a line that
		 * starts a new one is read afresh, not passed over. */
		if (j->nl && (c == '{' || c == '[') &&
		    j->state != S_VALUE) {
			broken(j);
			j->state = S_LINE;
			p = s;
			continue;
		}
		j->nl = 0;
		switch (j->state) {
		case S_LINE:
			if (c == '\n')
				break;
			if (c == '{' || c == '[') {
				open_container(j, c == '[');
				break;
			}
			/* not JSON: the line is text, this byte included */
			j->state = S_TEXT;
			p = s;
			break;
		case S_VALUE:
			if (c == '"') {
				j->want = value_start(j, 1);
				j->state = S_STRING;
				j->esc = 0;
				j->hi = 0;
				j->bs = 0;
			} else if (c == '{' || c == '[') {
				value_start(j, 0);
				open_container(j, c == '[');
			} else if (c == ']' && j->array[j->depth]) {
				if (close_container(j, c) == -1)
					broken(j);
			} else if (scalar_byte(c)) {
				value_start(j, 0);
				j->state = S_SCALAR;
				j->slen = 0;
				j->scalar[j->slen++] = c;
			} else
				broken(j);
			break;
		case S_KEY_OR_END:
			if (c == '"')
				key_start(j);
			else if (c != '}' || close_container(j, c) == -1)
				broken(j);
			break;
		case S_COLON:
			if (c == ':')
				j->state = S_VALUE;
			else
				broken(j);
			break;
		case S_AFTER:
			if (c == ',') {
				if (j->array[j->depth])
					to_base(j, j->depth);
				j->state = j->array[j->depth] ? S_VALUE :
				    S_KEY_OR_END;
			} else if ((c != '}' && c != ']') ||
			    close_container(j, c) == -1)
				broken(j);
			break;
		default:
			broken(j);
			break;
		}
		if (j->raw_on) {
			/* the value ends where its container closed */
			if (j->depth < j->raw_depth ||
			    (j->depth == j->raw_depth && j->state != S_STRING &&
			    j->state != S_SCALAR && (c == '}' || c == ']')))
				raw_done(j, s, p);
			else
				raw_add(j, s, (size_t)(p - s));
		}
	}
}

void
jstream_end(struct jstream *j)
{
	if (j->event_depth > 0)
		broken(j);
	j->state = S_LINE;
}
