/*
 * Byte-level cleaning for the classifier: utf8_sanitize, ANSI escape
 * stripping, and the growable string both of them and normalize.c append
 * to.  Pure: no I/O.
 *
 * utf8_sanitize walks the input once against Unicode's table of
 * well-formed sequences, copying each valid sequence as it is, dropping
 * NULs and writing one U+FFFD per maximal ill-formed subpart, so the output
 * never needs more than three bytes per input byte.  strip_ansi copies the
 * runs between ESC bytes with memchr and skips each escape sequence by its
 * length (esc_len); it never removes a newline, which is what lets text.c
 * keep the raw and the stripped copy of a tail line for line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "classify_int.h"

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

size_t
utf8_seq(const unsigned char *s, size_t n, int *valid)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xBF;
	size_t k, need = 0;

	/* Unicode's table of well-formed sequences: no overlongs, no
	 * surrogates, nothing past U+10FFFF */
	if (c < 0x80) {
		*valid = 1;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF)
		need = 1;
	else if (c >= 0xE0 && c <= 0xEF) {
		need = 2;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 3;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	}
	for (k = 1; k <= need && k < n; k++) {
		if (s[k] < lo || s[k] > hi)
			break;
		lo = 0x80;
		hi = 0xBF;
	}
	*valid = need > 0 && k == need + 1;
	return k;
}

const char *
utf8_invalid(const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t k;
	int valid;

	for (; n > 0; s += k, n -= k) {
		k = utf8_seq(s, n, &valid);
		if (!valid)
			return (const char *)s;
	}
	return NULL;
}

char *
utf8_sanitize(const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i, k;
	char *out, *o;
	int valid;

	/* the worst case is every byte becoming a 3-byte U+FFFD */
	if (n > (((size_t)-1) - 1) / 3) {
		errno = ENOMEM;
		return NULL;
	}
	if ((out = malloc(n * 3 + 1)) == NULL)
		return NULL;
	for (o = out, i = 0; i < n; i += k) {
		k = utf8_seq(s + i, n - i, &valid);
		if (s[i] == '\0')
			continue;
		if (valid) {
			memcpy(o, s + i, k);
			o += k;
		} else {
			/* one U+FFFD per maximal ill-formed subpart */
			memcpy(o, "\xEF\xBF\xBD", 3);
			o += 3;
		}
	}
	*o = '\0';
	return out;
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
