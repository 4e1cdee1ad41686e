/* SPDX-License-Identifier: ISC */
/*
 * Quoting a word for the shell, for hints meant to be pasted into one
 * ("cbexec --unskip 'task 2.3'").  A word of only safe characters stays
 * as it is; anything else goes in single quotes, each single quote in it
 * written as '\'' (close, escaped quote, reopen), which every POSIX shell
 * reads back as the original bytes.
 */
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
