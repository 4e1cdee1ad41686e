/* SPDX-License-Identifier: ISC */
/*
 * Quoting a word for the shell, for hints meant to be pasted into one
 * ("cbexec --unskip 'task 2.3'").  A word of only safe characters stays
 * as it is; anything else goes in single quotes, each single quote in it
 * written as '\'' (close, escaped quote, reopen), which every POSIX shell
 * reads back as the original bytes.
 *
 * And the other direction: text a command chose (an error message, a
 * reason) printed as one line a terminal cannot be steered by -- C0
 * controls, DEL and the C1 controls (U+0080 to U+009F, which some
 * terminals obey as escape sequences) written as \n, \t, \xNN, \u00NN;
 * and the value of a hex digit, for the readers of those escapes and of
 * %XX in a URL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

char *
shell_quote(const char *s)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,:/@%+=";
	size_t n = 0, i;
	char *q, *p;

	if (*s != '\0' && strspn(s, safe) == strlen(s))
		return strdup(s);
	for (i = 0; s[i] != '\0'; i++)
		n += s[i] == '\'' ? 4 : 1;
	if ((q = p = malloc(n + 3)) == NULL)
		return NULL;
	*p++ = '\'';
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else
			*p++ = s[i];
	}
	*p++ = '\'';
	*p = '\0';
	return q;
}

void
text_put(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s != NULL ? s : "");

	for (; *p != '\0'; p++) {
		if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			fprintf(f, "\\u%04x", p[1]);
			p++;
		} else
			putc(*p, f);
	}
}

char *
text_escaped(const char *s)
{
	char *p = NULL;
	size_t n = 0;
	FILE *m;

	if ((m = open_memstream(&p, &n)) == NULL)
		return NULL;
	text_put(m, s);
	if (fclose(m) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

int
hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

int
pct_decode(const char *s, size_t n, char *out, size_t outlen)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (c == '%') {
			if (i + 2 >= n || hex_value(s[i + 1]) < 0 ||
			    hex_value(s[i + 2]) < 0)
				return -1;
			c = hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]);
			i += 2;
			if (c == 0)
				return -1;
		}
		if (o + 1 >= outlen)
			return -1;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

long
hex4(const char *p)
{
	long v = 0;
	int i, h;

	for (i = 0; i < 4; i++) {
		if ((h = hex_value((unsigned char)p[i])) < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}
