/* SPDX-License-Identifier: ISC */
/*
 * The tails the classifier searches (stderr, and stdout where it matters),
 * made safe to match and indexed by line.  Pure: no I/O.
 *
 * The tails are first made safe to match: NULs dropped and bad UTF-8
 * replaced (utf8_sanitize), every CR turned into a newline so a progress
 * bar's last frame and a CRLF line end read as lines of their own.  A
 * second copy with ANSI escapes stripped is what the regexes see; stripping
 * never removes a newline, so line i of one copy is line i of the other and
 * the message can be taken raw.  Each pattern runs once over the whole tail
 * (REG_NEWLINE makes ^, $ and . work per line) and the first match is mapped
 * to its line by binary search over the line offsets, so a 64 KiB tail costs
 * one regexec per pattern, not one per line.  HTTP status codes are found
 * with strstr and a look at the bytes around each hit (status_at).
 *
 * strip_ansi copies the runs between ESC bytes with memchr and skips each
 * escape sequence by its length (esc_len); it never removes a newline,
 * which is what keeps the raw and the stripped copy line for line.  Both it
 * and normalize.c append to the growable string, struct sbuf.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "judge.h"
#include "text.h"

#define MSG_MAX 4096	/* bytes of a message kept, cut at a UTF-8 boundary */

void
sb_add(struct sbuf *b, const char *s, size_t n)
{
	size_t ncap;
	char *np;

	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		for (ncap = b->cap ? b->cap : 64; ncap < b->len + n + 1;)
			ncap *= 2;
		if ((np = realloc(b->p, ncap)) == NULL) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* The string, or NULL (everything freed) if any append failed. */
char *
sb_take(struct sbuf *b)
{
	if (b->oom) {
		free(b->p);
		return NULL;
	}
	return b->p != NULL ? b->p : strdup("");
}

/*
 * Length of the escape sequence at s (s[0] is ESC): CSI, OSC (ended by BEL
 * or ESC \), the nF sequences like ESC ( B, and two-byte ESC x.  A
 * malformed sequence ends before the offending byte and never swallows a
 * newline.
 */
static size_t
esc_len(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i;

	if (n < 2)
		return 1;
	if (u[1] == '[') {
		for (i = 2; i < n && u[i] >= 0x30 && u[i] <= 0x3F; i++)
			;
		for (; i < n && u[i] >= 0x20 && u[i] <= 0x2F; i++)
			;
		return i < n && u[i] >= 0x40 && u[i] <= 0x7E ? i + 1 : i;
	}
	if (u[1] == ']') {
		for (i = 2; i < n && u[i] != '\a' && u[i] != '\n' &&
		    u[i] != 033; i++)
			;
		if (i < n && u[i] == '\a')
			return i + 1;
		if (i + 1 < n && u[i] == 033 && u[i + 1] == '\\')
			return i + 2;
		return i;
	}
	if (u[1] >= 0x20 && u[1] <= 0x2F) {
		for (i = 2; i < n && u[i] >= 0x20 && u[i] <= 0x2F; i++)
			;
		return i < n && u[i] >= 0x30 && u[i] <= 0x7E ? i + 1 : i;
	}
	return u[1] >= 0x30 && u[1] <= 0x7E ? 2 : 1;
}

void
strip_ansi(struct sbuf *b, const char *s, size_t n)
{
	const char *e;
	size_t i = 0;

	while (i < n) {
		if ((e = memchr(s + i, 033, n - i)) == NULL) {
			sb_add(b, s + i, n - i);
			break;
		}
		sb_add(b, s + i, (size_t)(e - (s + i)));
		i = (size_t)(e - s);
		i += esc_len(s + i, n - i);
	}
}

static size_t *
line_offsets(const char *s, size_t len, size_t n)
{
	size_t *off, i, k = 1;

	if ((off = calloc(n + 1, sizeof(*off))) == NULL)
		return NULL;
	for (i = 0; i < len; i++)
		if (s[i] == '\n')
			off[k++] = i + 1;
	off[n] = len + 1;	/* so every line's length is off[i+1]-off[i]-1 */
	return off;
}

/*
 * A copy of t whose cleaned lines are cut to cap bytes, for user rules:
 * glibc's regexec can take time quadratic in a line's length on a pattern
 * like (a+)+$, and a 64 KiB line must not stall cbexec for a minute.
 * Line numbers and the raw text stay those of t; a cut line ends in a
 * control byte, so its cut end never matches as its real end.
 */
int
text_cap_lines(const struct text *t, size_t cap, struct text *out)
{
	struct sbuf b = { 0 };
	size_t i, start, end, clen = strlen(t->clean), rlen = strlen(t->raw);

	memset(out, 0, sizeof(*out));
	for (i = 0; i < t->n; i++) {
		start = t->clean_off[i];
		end = i + 1 < t->n ? t->clean_off[i + 1] - 1 : clen;
		if (end - start > cap) {
			/* A cut line must not look like it ended there: $
			 * or a pattern ending in a class would match the
			 * cut.  A control byte hides the real end. */
			sb_add(&b, t->clean + start, cap);
			sb_add(&b, "\001", 1);
		} else
			sb_add(&b, t->clean + start, end - start);
		if (i + 1 < t->n)
			sb_add(&b, "\n", 1);
	}
	out->n = t->n;
	if ((out->clean = sb_take(&b)) == NULL ||
	    (out->raw = strdup(t->raw)) == NULL ||
	    (out->flags = malloc(t->n)) == NULL ||
	    (out->raw_off = line_offsets(out->raw, rlen, t->n)) == NULL ||
	    (out->clean_off = line_offsets(out->clean, strlen(out->clean),
	    t->n)) == NULL) {
		text_free(out);
		return -1;
	}
	memcpy(out->flags, t->flags, t->n);
	return 0;
}

void
text_free(struct text *t)
{
	size_t i;

	for (i = 0; t->said != NULL && i < t->n; i++)
		free(t->said[i]);
	free(t->said);
	free(t->raw);
	free(t->clean);
	free(t->raw_off);
	free(t->clean_off);
	free(t->flags);
	memset(t, 0, sizeof(*t));
}

int
text_init(struct text *t, const char *p, size_t len)
{
	struct sbuf b = { 0 };
	size_t i, rlen;

	memset(t, 0, sizeof(*t));
	if ((t->raw = utf8_sanitize(p, p != NULL ? len : 0)) == NULL)
		return -1;
	rlen = strlen(t->raw);
	t->n = 1;
	for (i = 0; i < rlen; i++) {
		if (t->raw[i] == '\r')
			t->raw[i] = '\n';
		if (t->raw[i] == '\n')
			t->n++;
	}
	strip_ansi(&b, t->raw, rlen);
	if ((t->clean = sb_take(&b)) == NULL ||
	    (t->flags = calloc(t->n, 1)) == NULL ||
	    (t->raw_off = line_offsets(t->raw, rlen, t->n)) == NULL ||
	    (t->clean_off = line_offsets(t->clean, strlen(t->clean),
	    t->n)) == NULL) {
		text_free(t);
		return -1;
	}
	return 0;
}

static size_t
line_of(const struct text *t, size_t off)
{
	size_t lo = 0, hi = t->n - 1, mid;

	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (t->clean_off[mid] <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static int
blank(const struct text *t, size_t i)
{
	size_t j;

	for (j = t->clean_off[i]; j + 1 < t->clean_off[i + 1]; j++)
		if (!is_space((unsigned char)t->clean[j]))
			return 0;
	return 1;
}

/* First non-blank line where re matches, or -1. */
long
re_first(const regex_t *re, const struct text *t)
{
	return re_first_in(re, t, 0, 0);
}

static int
wanted(const struct text *t, size_t line, int skip, int need)
{
	return !(t->flags[line] & skip) && (need == 0 ||
	    (t->flags[line] & need));
}

long
re_first_in(const regex_t *re, const struct text *t, int skip, int need)
{
	regmatch_t m;
	size_t i, line;

	/* every search starts at a line start, so ^ needs no REG_NOTBOL */
	for (i = 0; i < t->n; i = line + 1) {
		if (regexec(re, t->clean + t->clean_off[i], 1, &m, 0) != 0)
			return -1;
		line = line_of(t, t->clean_off[i] + (size_t)m.rm_so);
		if (!blank(t, line) && wanted(t, line, skip, need))
			return (long)line;
	}
	return -1;
}

void
re_mark(const regex_t *re, struct text *t, int flag)
{
	regmatch_t m;
	size_t i, line;

	for (i = 0; i < t->n; i = line + 1) {
		if (regexec(re, t->clean + t->clean_off[i], 1, &m, 0) != 0)
			return;
		line = line_of(t, t->clean_off[i] + (size_t)m.rm_so);
		t->flags[line] |= flag;
	}
}

int
text_has(const struct text *t, int flag)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->flags[i] & flag)
			return 1;
	return 0;
}

/*
 * Is the "429" at s[at] an HTTP status rather than part of something
 * else?  Not inside a longer number, word, version, path, "file:line",
 * "1,429", "#429" or after "line"; but "HTTP/1.1 429", "(429)",
 * "status=429", "\"code\":429" and "429: Too Many Requests" all are.
 */
static int
status_at(const char *s, size_t at, size_t n)
{
	unsigned char b = at > 0 ? (unsigned char)s[at - 1] : ' ';
	unsigned char a = (unsigned char)s[at + n];
	size_t i;

	if (is_alnum(a) || (a != '\0' && strchr("._/-", a) != NULL) ||
	    (a == ',' && is_digit(s[at + n + 1])))
		return 0;
	if (b == ':') {
		if (at < 2 || (s[at - 2] != '"' && s[at - 2] != '\''))
			return 0;
	} else if (is_alnum(b) || strchr("._/-#@$%+~", b) != NULL ||
	    (b == ',' && at >= 2 && is_digit(s[at - 2])))
		return 0;
	for (i = at; i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'); i--)
		;
	if (i >= 4 && strncasecmp(s + i - 4, "line", 4) == 0 &&
	    (i == 4 || !is_alnum(s[i - 5])))
		return 0;
	return 1;
}

/* Does the word w (lower case) end at s[end), starting a word? */
static int
word_before(const char *s, size_t start, size_t end, const char *w)
{
	size_t n = strlen(w);

	return end - start >= n && strncasecmp(s + end - n, w, n) == 0 &&
	    (end - start == n || !is_alnum((unsigned char)s[end - n - 1]));
}

/*
 * Is the status at s[at] (n digits, on the line from start) in an HTTP
 * or provider shape?  Before it, past separators: "HTTP", "HTTP/1.1",
 * "status", "status code", "statusCode", "code" (as a JSON key or a
 * field), "error code", "returned error", "API Error", "rejected",
 * "api_error_status"; or after it a reason phrase ("401 Unauthorized",
 * "429 Too Many Requests").  A quote ends the words only when it closes
 * a key ("\"status\": 429"), so an access log's `HTTP/1.1" 429` is not.
 */
static int
http_shape(const char *s, size_t start, size_t at, size_t n)
{
	static const char *const before[] = {
		"http", "status", "status code", "statuscode", "status_code",
		"code", "error code", "returned error", "api error",
		"rejected", "error_status", "api_error_status", "response code",
		"http error", "http status",
	};
	static const char *const after[] = {
		"unauthorized", "forbidden", "too many requests",
		"internal server error", "bad gateway", "service unavailable",
		"gateway timeout", "payment required", "server error",
		"client error", "overloaded",
	};
	size_t e = at, i, k;
	int quoted = 0;

	while (e > start && strchr(" \t:=([", s[e - 1]) != NULL)
		e--;
	if (e > start && (s[e - 1] == '"' || s[e - 1] == '\'')) {
		e--;
		quoted = 1;
	}
	for (i = 0; i < NELEM(before); i++)
		if (word_before(s, start, e, before[i]) && (!quoted ||
		    (e > start + strlen(before[i]) &&
		    strchr("\"'", s[e - strlen(before[i]) - 1]) != NULL)))
			return 1;
	/* HTTP/1.1, HTTP/2 */
	for (k = e; k > start && (is_digit((unsigned char)s[k - 1]) ||
	    s[k - 1] == '.'); k--)
		;
	if (!quoted && k < e && k > start && s[k - 1] == '/' &&
	    word_before(s, start, k - 1, "http"))
		return 1;
	for (k = at + n; s[k] == ' ' || s[k] == '-' || s[k] == ':'; k++)
		;
	for (i = 0; i < NELEM(after); i++)
		if (strncasecmp(s + k, after[i], strlen(after[i])) == 0)
			return 1;
	return 0;
}

long
status_first(const char *code, const struct text *t, int skip, int need)
{
	const char *p = t->clean;
	size_t n = strlen(code), at, line;

	while ((p = strstr(p, code)) != NULL) {
		at = (size_t)(p - t->clean);
		line = line_of(t, at);
		if (wanted(t, line, skip, need) &&
		    status_at(t->clean, at, n) &&
		    http_shape(t->clean, t->clean_off[line], at, n))
			return (long)line;
		p++;
	}
	return -1;
}

int
text_say(struct text *t, size_t i, char *s)
{
	if (s == NULL)
		return -1;
	if (t->said == NULL && (t->said = calloc(t->n, sizeof(*t->said))) ==
	    NULL) {
		free(s);
		return -1;
	}
	free(t->said[i]);
	t->said[i] = s;
	return 0;
}

/* Line i of t, trimmed and capped, as a malloc'd string. */
char *
line_dup(const struct text *t, size_t i)
{
	const char *s = t->raw + t->raw_off[i];
	size_t n = t->raw_off[i + 1] - t->raw_off[i] - 1;

	if (t->said != NULL && t->said[i] != NULL) {
		s = t->said[i];
		n = strlen(s);
	}

	while (n > 0 && is_space((unsigned char)s[n - 1]))
		n--;
	while (n > 0 && is_space((unsigned char)*s)) {
		s++;
		n--;
	}
	if (n > MSG_MAX)
		for (n = MSG_MAX; n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80;)
			n--;
	return strndup(s, n);
}

/* The last non-blank line of t without the flags skip, else a copy of
 * fallback. */
char *
last_line(const struct text *t, int skip, const char *fallback)
{
	size_t i;

	for (i = t->n; i-- > 0;)
		if (!blank(t, i) && !(t->flags[i] & skip))
			return line_dup(t, i);
	return strdup(fallback);
}

/* Whether line i has a letter or a digit (more than a "}" or "---"). */
static int
has_word(const struct text *t, size_t i)
{
	size_t j;

	for (j = t->clean_off[i]; j + 1 < t->clean_off[i + 1]; j++)
		if (is_alnum((unsigned char)t->clean[j]))
			return 1;
	return 0;
}

char *
last_words(const struct text *t, int skip, const char *fallback)
{
	size_t i;

	for (i = t->n; i-- > 0;)
		if (has_word(t, i) && !(t->flags[i] & skip))
			return line_dup(t, i);
	return strdup(fallback);
}
