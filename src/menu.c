/*
 * The menu shown on a terminal when the circuit opens (SPEC §5).  Reads
 * one line at a time from stdin; anything unrecognised asks again, EOF is
 * Abort.  Only called when stdin and stderr are terminals.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

static char *
read_line(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if ((n = getline(&line, &cap, stdin)) == -1) {
		free(line);
		return NULL;
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	return line;
}

int
menu_ask(char **guidance)
{
	char *line, *p;
	int c;

	*guidance = NULL;
	for (;;) {
		fputs("[R]eset and retry  [S]kip phase  [A]bort  "
		    "[M]odify approach (give guidance) > ", stderr);
		fflush(stderr);
		if ((line = read_line()) == NULL) {
			fputc('\n', stderr);
			return 'a';
		}
		for (p = line; isspace((unsigned char)*p); p++)
			;
		c = tolower((unsigned char)*p);
		/* One letter, or the word it stands for. */
		if (c != '\0' && strchr("rsam", c) != NULL &&
		    (p[1] == '\0' || strcasecmp(p, c == 'r' ? "reset" :
		    c == 's' ? "skip" : c == 'a' ? "abort" : "modify") == 0)) {
			free(line);
			break;
		}
		free(line);
		fputs("Please answer R, S, A or M.\n", stderr);
	}
	if (c != 'm')
		return c;
	for (;;) {
		fputs("Guidance for the next runs: ", stderr);
		fflush(stderr);
		if ((line = read_line()) == NULL) {
			fputc('\n', stderr);
			return 'a';
		}
		for (p = line; isspace((unsigned char)*p); p++)
			;
		if (*p != '\0') {
			*guidance = strdup(p);
			free(line);
			return *guidance != NULL ? 'm' : 'a';
		}
		free(line);
	}
}
