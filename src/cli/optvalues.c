/* SPDX-License-Identifier: ISC */
/*
 * Values of options, shared by the command line, the environment and the
 * config file: whole numbers, exit-code lists, sizes, signal names,
 * circuit names.  Each accepts exactly its documented form and nothing
 * else: no signs, no spaces, no trailing junk.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "optvalues.h"

int
errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* A whole decimal number in [min, max]; no sign, no spaces, no junk. */
int
parse_long(const char *s, long min, long max, long *out)
{
	const char *p;
	long v = 0;

	if (*s == '\0')
		return -1;
	for (p = s; *p != '\0'; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		if (v > (LONG_MAX - (*p - '0')) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
signal_parse(const char *s)
{
	static const struct { const char *name; int sig; } sigs[] = {
		{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
		{ "ILL", SIGILL }, { "TRAP", SIGTRAP }, { "ABRT", SIGABRT },
		{ "IOT", SIGIOT }, { "BUS", SIGBUS }, { "FPE", SIGFPE },
		{ "KILL", SIGKILL }, { "USR1", SIGUSR1 }, { "SEGV", SIGSEGV },
		{ "USR2", SIGUSR2 }, { "PIPE", SIGPIPE }, { "ALRM", SIGALRM },
		{ "TERM", SIGTERM }, { "STKFLT", SIGSTKFLT },
		{ "CHLD", SIGCHLD }, { "CONT", SIGCONT }, { "STOP", SIGSTOP },
		{ "TSTP", SIGTSTP }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
		{ "URG", SIGURG }, { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ },
		{ "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
		{ "WINCH", SIGWINCH }, { "IO", SIGIO }, { "POLL", SIGPOLL },
		{ "PWR", SIGPWR }, { "SYS", SIGSYS },
	};
	size_t i;
	long n;

	if (parse_long(s, 0, SIGRTMAX, &n) == 0)
		return (int)n;
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (strcasecmp(s, sigs[i].name) == 0)
			return sigs[i].sig;
	return -1;
}

/* A comma-separated list with no empty item: not "", ",1", "1,", "1,,2". */
int
list_well_formed(const char *s)
{
	return *s != '\0' && *s != ',' && s[strlen(s) - 1] != ',' &&
	    strstr(s, ",,") == NULL;
}

/* "0,75" -> codes; each 0..255. */
int
parse_codes(const char *s, struct codes *c)
{
	char *copy, *tok, *save;
	long v;
	int *nv;

	free(c->v);
	c->v = NULL;
	c->n = 0;
	if ((copy = strdup(s)) == NULL)
		return -1;
	if (!list_well_formed(s))
		goto fail;
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if (parse_long(tok, 0, 255, &v) == -1)
			goto fail;
		if ((nv = realloc(c->v, (c->n + 1) * sizeof(*nv))) == NULL)
			goto fail;
		c->v = nv;
		c->v[c->n++] = (int)v;
	}
	free(copy);
	return c->n > 0 ? 0 : -1;
fail:
	free(copy);
	return -1;
}

/* Sizes for --capture-bytes: N, or N with k/K or m/M (KiB, MiB). */
int
parse_size(const char *s, size_t *out)
{
	char num[32];
	size_t n = strlen(s), mult = 1;
	long v;

	if (n == 0 || n >= sizeof(num))
		return -1;
	memcpy(num, s, n + 1);
	if (strchr("kK", num[n - 1]) != NULL)
		mult = 1024;
	else if (strchr("mM", num[n - 1]) != NULL)
		mult = 1024 * 1024;
	if (mult != 1)
		num[n - 1] = '\0';
	if (parse_long(num, 0, 64L * 1024 * 1024, &v) == -1 ||
	    (size_t)v * mult > 64UL * 1024 * 1024)
		return -1;
	*out = (size_t)v * mult;
	return 0;
}

int
replace_str(char **dst, const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		return -1;
	free(*dst);
	*dst = p;
	return 0;
}

int
valid_name(const char *s)
{
	const char *p;

	if (*s == '\0' || *s == '.')
		return 0;
	for (p = s; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && strchr("._-", *p) == NULL)
			return 0;
	return 1;
}
