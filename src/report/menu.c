/* SPDX-License-Identifier: ISC */
/*
 * The menu shown on a terminal when the circuit opens (SPEC §5).  Reads
 * one line at a time from stdin; anything unrecognised asks again, EOF is
 * Abort, and so is an operator signal while it waits (SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT: the wait runs on the event loop, which sees them).
 * Only called when stdin and stderr are terminals.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "report.h"
#include "run.h"

/* The terminal's modes before the first run. */
static struct termios saved_tty;
static int have_tty;

void
menu_save_tty(void)
{
	/* Fails (ENOTTY) when stdin is no terminal. */
	have_tty = tcgetattr(STDIN_FILENO, &saved_tty) == 0;
}

/* A command may leave the terminal raw (a TUI agent killed at its
 * timeout): the menu reads lines, and Ctrl-C must reach cbexec, so the
 * modes from before the first run come back first.  SIGTTOU is blocked
 * in case cbexec is not in the foreground. */
static void
restore_tty(void)
{
	sigset_t ttou, old;

	if (!have_tty)
		return;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_tty);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Longer lines are cut here (guidance is cut shorter still). */
#define LINE_MAX_BYTES (64 * 1024)

/* One line from the terminal without its newline; NULL on EOF, on an
 * operator signal or when out of memory.  A terminal in canonical mode
 * hands over a line per read, so nothing after the newline is lost. */
static char *
read_line(void)
{
	char *line = NULL, *nl = NULL, chunk[4096];
	size_t n = 0;
	ssize_t r;

	for (;;) {
		if (!sup_wait_readable(STDIN_FILENO))
			goto none;
		if ((r = read(STDIN_FILENO, chunk, sizeof(chunk))) == -1 &&
		    (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0) {
			if (n == 0)
				goto none;
			break;
		}
		if (n < LINE_MAX_BYTES) {
			size_t take = (size_t)r;
			char *p;

			if (take > LINE_MAX_BYTES - n)
				take = LINE_MAX_BYTES - n;
			if ((p = realloc(line, n + take + 1)) == NULL)
				goto none;
			line = p;
			memcpy(line + n, chunk, take);
			n += take;
			line[n] = '\0';
		}
		if (memchr(chunk, '\n', (size_t)r) != NULL)
			break;
	}
	if ((nl = memchr(line, '\n', n)) != NULL)
		n = (size_t)(nl - line);
	while (n > 0 && line[n - 1] == '\r')
		n--;
	line[n] = '\0';
	return line;
none:
	free(line);
	return NULL;
}

int
menu_ask(char **guidance)
{
	char *line, *p;
	int c;

	*guidance = NULL;
	restore_tty();
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
