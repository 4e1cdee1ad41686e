/* SPDX-License-Identifier: ISC */
/*
 * UTF-8 checking and cleaning.  Pure: no I/O.
 *
 * utf8_sanitize walks the input once against Unicode's table of
 * well-formed sequences, copying each valid sequence as it is, dropping
 * NULs and writing one U+FFFD per maximal ill-formed subpart, so the output
 * never needs more than three bytes per input byte.  The state file and the
 * config file are checked with utf8_invalid, the same table.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

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
		uint64_t w;

		/* ASCII, most of a state file, eight bytes at a time */
		while (n >= 8 && (memcpy(&w, s, 8), (w & 0x8080808080808080ULL)
		    == 0)) {
			s += 8;
			n -= 8;
		}
		if (n == 0)
			break;
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

int
opaque_id(const char *s)
{
	size_t n;

	if (s == NULL || *s == '\0' || *s == '-')
		return 0;
	for (n = 0; s[n] != '\0'; n++)
		if (n == OPAQUE_ID_MAX || !((s[n] >= 'a' && s[n] <= 'z') ||
		    (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9') ||
		    strchr("._:-", s[n]) != NULL))
			return 0;
	return 1;
}

size_t
utf8_put(char *o, unsigned long c)
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
