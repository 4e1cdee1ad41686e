/* SPDX-License-Identifier: ISC */
/*
 * JSON text into a cJSON tree in one pass, every node and string taken
 * from the caller's allocator: how the state file is read (state.c hands
 * it the arena that is dropped whole after the load).
 *
 * It accepts exactly the texts cJSON_ParseWithLengthOpts(buf, len + 1,
 * &end, 1) accepts and builds the same tree -- the types, the strings,
 * the double and the saturated int of every number, child, next and prev
 * (the first child's prev is the last) -- quirks included, since a file
 * that loaded before must load the same after: any byte up to the space
 * (NUL too) counts as blank, a leading UTF-8 BOM is skipped, a number is
 * what strtod() reads of the bytes 0-9 + - . e E that follow, "\u" with a
 * non-hex digit is U+0000, a lone low surrogate is an error, and at most
 * 1000 arrays and objects nest.  The reference is cJSON as fixed for
 * CVE-2023-26819 (1.7.18, and Debian's 1.7.15 since +deb12u3).  t/fuzz/fuzz_state.c holds the two to
 * each other on every input it makes.  On an error *end is where it was
 * found, which may differ from cJSON's by a few bytes.
 *
 * What it saves: cJSON's reader checks the buffer's bounds byte by byte,
 * walks every string twice, and reads every number with strtod(); on a
 * state with a full history that was half of what a run spends on the
 * load.  Here a string without escapes is one scan and one memcpy, and a
 * whole number of up to 15 digits is read without strtod() (the same
 * double: it is exact).
 */
#include <limits.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core.h"
#include "jtree.h"

#define NEST_MAX	1000	/* cJSON's CJSON_NESTING_LIMIT */

struct jp {
	const unsigned char *p;		/* where the reader is */
	const unsigned char *lim;	/* one past the final NUL */
	void *(*alloc)(size_t);
	size_t depth;
	struct jtree_each *each;
};

static int value(struct jp *j, cJSON *item);

static void
blank(struct jp *j)
{
	while (j->p < j->lim && *j->p <= 32)
		j->p++;
	/* As cJSON: the final NUL is blank too, and stepped back onto. */
	if (j->p == j->lim)
		j->p--;
}

static cJSON *
node(struct jp *j)
{
	cJSON *n = j->alloc(sizeof(*n));

	if (n != NULL)
		memset(n, 0, sizeof(*n));
	return n;
}

/* Four hex digits; 0 when any is not one (cJSON's parse_hex4). */
static unsigned
hex4_or_0(const unsigned char *s)
{
	long h = hex4((const char *)s);

	return h < 0 ? 0 : (unsigned)h;
}

/*
 * The \u escape at in (its backslash), the string's closing quote at
 * close: UTF-8 out at *out.  The escape's length (6 or 12), 0 on error.
 */
static int
u_escape(const unsigned char *in, const unsigned char *close,
    unsigned char **out)
{
	unsigned long cp;
	unsigned first, second;
	int len = 6;

	if (close - in < 6)
		return 0;
	first = hex4_or_0(in + 2);
	if (first >= 0xDC00 && first <= 0xDFFF)
		return 0;
	if (first >= 0xD800 && first <= 0xDBFF) {
		if (close - (in + 6) < 6 || in[6] != '\\' || in[7] != 'u')
			return 0;
		second = hex4_or_0(in + 8);
		if (second < 0xDC00 || second > 0xDFFF)
			return 0;
		cp = 0x10000 + (((unsigned long)(first & 0x3FF) << 10) |
		    (second & 0x3FF));
		len = 12;
	} else
		cp = first;
	*out += utf8_put((char *)*out, cp);
	return len;
}

/* The string at j->p (its opening quote) into *s. */
static int
string(struct jp *j, char **s)
{
	const unsigned char *in = j->p + 1, *close;
	unsigned char *out, *o;
	size_t escapes = 0;
	int n;

	if (*j->p != '"')
		return -1;
	/* Most strings have no backslash before their first quote: two
	 * memchr()s find that. */
	close = memchr(in, '"', (size_t)(j->lim - in));
	if (close != NULL && memchr(in, '\\', (size_t)(close - in)) != NULL)
		/* The closing quote: the byte after a backslash is skipped,
		 * and a backslash on the final NUL is an error (as cJSON). */
		for (close = in; close < j->lim && *close != '"'; close++)
			if (*close == '\\') {
				if (close + 1 >= j->lim) {
					j->p = in;
					return -1;
				}
				escapes++;
				close++;
			}
	if (close == NULL || close >= j->lim) {
		j->p = in;
		return -1;
	}
	if ((out = j->alloc((size_t)(close - in) - escapes + 1)) == NULL)
		return -1;
	if (escapes == 0) {
		memcpy(out, in, (size_t)(close - in));
		out[close - in] = '\0';
		*s = (char *)out;
		j->p = close + 1;
		return 0;
	}
	for (o = out; in < close;) {
		if (*in != '\\') {
			*o++ = *in++;
			continue;
		}
		switch (in[1]) {
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case '"':
		case '\\':
		case '/':
			*o++ = in[1];
			break;
		case 'u':
			if ((n = u_escape(in, close, &o)) == 0) {
				j->p = in;
				return -1;
			}
			in += n;
			continue;
		default:
			j->p = in;
			return -1;
		}
		in += 2;
	}
	*o = '\0';
	*s = (char *)out;
	j->p = close + 1;
	return 0;
}

static int
number(struct jp *j, cJSON *item)
{
	char small[64], *buf = small, *after;
	const unsigned char *p = j->p;
	size_t i, n, neg = *p == '-';
	int simple = 1;
	double d;

	/* What cJSON hands strtod(): the run of bytes 0-9 + - . e E, however
	 * long (its reader stopped at 63 before the fix of CVE-2023-26819). */
	for (n = 0; p + n < j->lim; n++) {
		unsigned char c = p[n];

		if (c >= '0' && c <= '9')
			continue;
		if (c == '-' || c == '+' || c == 'e' || c == 'E' || c == '.') {
			if (!(n == 0 && c == '-'))
				simple = 0;
			continue;
		}
		break;
	}
	/* -?[0-9]{1,15}: strtod() would read it all, and the double is
	 * exact. */
	if (simple && n > neg && n - neg <= 15) {
		long long v = 0;

		for (i = neg; i < n; i++)
			v = v * 10 + (p[i] - '0');
		d = neg ? -(double)v : (double)v;
		j->p += n;
	} else {
		if (n >= sizeof(small) && (buf = malloc(n + 1)) == NULL)
			return -1;
		for (i = 0; i < n; i++)
			buf[i] = p[i] == '.' ? *localeconv()->decimal_point :
			    (char)p[i];
		buf[n] = '\0';
		d = strtod(buf, &after);
		n = (size_t)(after - buf);
		if (buf != small)
			free(buf);
		if (n == 0)
			return -1;
		j->p += n;
	}
	item->valuedouble = d;
	if (d >= INT_MAX)
		item->valueint = INT_MAX;
	else if (d <= (double)INT_MIN)
		item->valueint = INT_MIN;
	else
		item->valueint = (int)d;
	item->type = cJSON_Number;
	return 0;
}

/*
 * The array of j->each at j->p (its '['): as container() reads an array,
 * each element built from the scratch allocator, handed over and dropped.
 */
static int
each_array(struct jp *j, cJSON *item)
{
	struct jtree_each *e = j->each;
	void *(*alloc)(size_t) = j->alloc;
	const unsigned char *start;
	cJSON elem;
	int rc = 0;

	if (j->depth >= NEST_MAX)
		return -1;
	j->depth++;
	j->p++;
	blank(j);
	e->called = 1;
	if (*j->p != ']') {
		j->alloc = e->scratch;
		for (;;) {
			memset(&elem, 0, sizeof(elem));
			start = j->p;
			if (value(j, &elem) == -1) {
				rc = -1;
				break;
			}
			if (e->fn(e->arg, &elem, (const char *)start) == -1) {
				e->stopped = 1;
				rc = -1;
				break;
			}
			e->reset();
			blank(j);
			if (*j->p != ',')
				break;
			j->p++;
			blank(j);
		}
		j->alloc = alloc;
		if (rc == -1 || *j->p != ']')
			return -1;
	}
	j->depth--;
	item->type = cJSON_Array;
	j->p++;
	return 0;
}

/*
 * An array (open '[') or an object (open '{') at j->p, its members
 * chained under item.
 */
static int
container(struct jp *j, cJSON *item, int obj)
{
	cJSON *head = NULL, *cur = NULL, *n;
	unsigned char close = obj ? '}' : ']';

	if (j->depth >= NEST_MAX)
		return -1;
	j->depth++;
	j->p++;
	blank(j);
	if (*j->p != close) {
		for (;;) {
			if ((n = node(j)) == NULL)
				return -1;
			if (head == NULL)
				head = n;
			else {
				cur->next = n;
				n->prev = cur;
			}
			cur = n;
			if (obj) {
				if (string(j, &n->string) == -1)
					return -1;
				blank(j);
				if (*j->p != ':')
					return -1;
				j->p++;
				blank(j);
			}
			/* The top object's member named by each. */
			if (obj && j->each != NULL && j->depth == 1 &&
			    *j->p == '[' && strcmp(n->string, j->each->key) == 0) {
				if (each_array(j, n) == -1)
					return -1;
			} else if (value(j, n) == -1)
				return -1;
			blank(j);
			if (*j->p != ',')
				break;
			j->p++;
			blank(j);
		}
		if (*j->p != close)
			return -1;
	}
	j->depth--;
	if (head != NULL)
		head->prev = cur;
	item->type = obj ? cJSON_Object : cJSON_Array;
	item->child = head;
	j->p++;
	return 0;
}

static int
value(struct jp *j, cJSON *item)
{
	size_t left = (size_t)(j->lim - j->p);
	unsigned char c = *j->p;

	if (c == '"') {
		if (string(j, &item->valuestring) == -1)
			return -1;
		item->type = cJSON_String;
		return 0;
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return number(j, item);
	if (c == '[' || c == '{')
		return container(j, item, c == '{');
	if (left >= 4 && memcmp(j->p, "null", 4) == 0) {
		item->type = cJSON_NULL;
		j->p += 4;
		return 0;
	}
	if (left >= 5 && memcmp(j->p, "false", 5) == 0) {
		item->type = cJSON_False;
		j->p += 5;
		return 0;
	}
	if (left >= 4 && memcmp(j->p, "true", 4) == 0) {
		item->type = cJSON_True;
		item->valueint = 1;
		j->p += 4;
		return 0;
	}
	return -1;
}

cJSON *
jtree_parse(const char *buf, size_t len, void *(*alloc)(size_t),
    struct jtree_each *each, const char **end)
{
	struct jp j;
	cJSON *root;

	j.p = (const unsigned char *)buf;
	j.lim = j.p + len + 1;
	j.alloc = alloc;
	j.depth = 0;
	j.each = each;
	if ((root = node(&j)) == NULL)
		goto fail;
	if (len + 1 > 4 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		j.p += 3;
	blank(&j);
	if (value(&j, root) == -1)
		goto fail;
	blank(&j);
	if (*j.p != '\0')
		goto fail;
	if (end != NULL)
		*end = (const char *)j.p;
	return root;
fail:
	if (end != NULL)
		*end = (const char *)(j.p < j.lim ? j.p : j.lim - 1);
	return NULL;
}
