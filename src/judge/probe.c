/* SPDX-License-Identifier: ISC */
/*
 * The progress command (SPEC §3.1).  It runs with /bin/sh -c in a
 * process group of its own; child_wait (run/child.c) keeps the first 64
 * KiB of its stdout until it exits, the timeout passes or cbexec is
 * interrupted, and kills whatever is left in its group once it is done.  Its output is
 * one number or key=value lines, parsed with strict number syntax into the
 * report's metrics.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/wait.h>

#include "judge.h"
#include "run.h"
#include "core.h"

#define CMD_MAX_OUTPUT (64 * 1024)

extern char **environ;

/* vsnprintf into err, when there is an err to write to. */
static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

struct capture {
	char *out;
	size_t len;
};

/* Keep the first CMD_MAX_OUTPUT bytes; the rest is read and dropped. */
static int
capture_sink(void *ctx, const char *p, size_t n)
{
	struct capture *c = ctx;

	if (n > CMD_MAX_OUTPUT - c->len)
		n = CMD_MAX_OUTPUT - c->len;
	memcpy(c->out + c->len, p, n);
	c->len += n;
	return 0;
}

/* Strict number syntax: strtod alone would take "inf", "nan", "0x1p3". */
static int
number(const char *s, size_t n, double *v)
{
	char tmp[64], *end;
	size_t i = 0, digits = 0;

	if (n == 0 || n >= sizeof(tmp))
		return 0;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (tmp[i] == '+' || tmp[i] == '-')
		i++;
	for (; isdigit((unsigned char)tmp[i]) || tmp[i] == '.'; i++)
		digits += tmp[i] != '.';
	if (digits == 0)
		return 0;
	if (tmp[i] == 'e' || tmp[i] == 'E') {
		i += tmp[i + 1] == '+' || tmp[i + 1] == '-' ? 2 : 1;
		if (!isdigit((unsigned char)tmp[i]))
			return 0;
		while (isdigit((unsigned char)tmp[i]))
			i++;
	}
	if (tmp[i] != '\0')
		return 0;
	*v = strtod(tmp, &end);
	return *end == '\0' && isfinite(*v);
}

static void
trim(const char **p, size_t *n)
{
	while (*n > 0 && isspace((unsigned char)**p))
		(*p)++, (*n)--;
	while (*n > 0 && isspace((unsigned char)(*p)[*n - 1]))
		(*n)--;
}

static int
add_metric(struct status_report *r, const char *key, size_t klen, double v)
{
	struct metric *m;
	size_t i;
	char *k;

	if ((k = strndup(key, klen)) == NULL)
		return -1;
	for (i = 0; i < klen; i++)
		k[i] = (char)tolower((unsigned char)k[i]);
	for (i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].key, k) == 0) {
			r->metrics[i].value = v;
			free(k);
			return 0;
		}
	if ((m = realloc(r->metrics, (r->n_metrics + 1) * sizeof(*m))) == NULL) {
		free(k);
		return -1;
	}
	r->metrics = m;
	m[r->n_metrics].key = k;
	m[r->n_metrics++].value = v;
	r->present = 1;
	return 0;
}

/* "key=value" or "KEY: value" with a number or true/false: 1, else 0. */
static int
parse_line(struct status_report *r, const char *p, size_t n)
{
	const char *val;
	size_t klen, vlen, i;
	double v;

	klen = strcspn(p, "=:\n");
	if (klen >= n)
		return 0;
	val = p + klen + 1;
	vlen = n - klen - 1;
	trim(&p, &klen);
	trim(&val, &vlen);
	for (i = 0; i < klen; i++)
		if (!isalnum((unsigned char)p[i]) && strchr("_-.", p[i]) == NULL)
			return 0;
	if (klen == 0)
		return 0;
	if (vlen == 4 && strncasecmp(val, "true", 4) == 0)
		v = 1;
	else if (vlen == 5 && strncasecmp(val, "false", 5) == 0)
		v = 0;
	else if (!number(val, vlen, &v))
		return 0;
	return add_metric(r, p, klen, v) == -1 ? -1 : 1;
}

static int
parse_output(struct status_report *r, char *out, size_t len)
{
	const char *p = out, *nl;
	size_t n = len, i;
	int got = 0, rc;
	double v;

	for (i = 0; i < len; i++)
		if (out[i] == '\0')
			out[i] = '\n';
	out[len] = '\0';
	trim(&p, &n);
	if (number(p, n, &v))
		return add_metric(r, "metric", 6, v) == -1 ? -1 : 1;
	for (p = out; *p != '\0'; p = *nl ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		if ((rc = parse_line(r, p, (size_t)(nl - p))) == -1)
			return -1;
		got |= rc;
	}
	return got;
}

int
progress_cmd(const char *cmd, double timeout, struct status_report *r,
    char *err, size_t errlen)
{
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };
	char out[CMD_MAX_OUTPUT + 1];
	struct capture c = { out, 0 };
	double at = timeout > 0 ? mono_now() + timeout : 0;
	double until = child_bound(at);
	int fd, st, rc;
	pid_t pid;

	/* What is left of the --budget bounds it too; none left: not run. */
	if (until > 0 && until <= mono_now()) {
		seterr(err, errlen, "progress command not run: the --budget "
		    "is spent");
		return -1;
	}
	if ((pid = child_spawn(argv, environ, CHILD_ERR_KEEP, 1, &fd)) == -1) {
		seterr(err, errlen, "progress command: %s", strerror(errno));
		return -1;
	}
	/* Whatever it left in its group is killed once it is done. */
	rc = child_wait(pid, fd, until, 1, capture_sink, &c, &st);
	if (rc == -1) {
		seterr(err, errlen, "progress command: %s", strerror(errno));
		return -1;
	}
	if (rc == CHILD_TIMEOUT && until != at) {
		seterr(err, errlen, "progress command killed: the --budget "
		    "ran out");
		return -1;
	}
	if (rc == CHILD_TIMEOUT) {
		seterr(err, errlen, "progress command timed out after %gs",
		    timeout);
		return -1;
	}
	if (rc == CHILD_INTERRUPTED) {
		seterr(err, errlen, "progress command interrupted");
		return -1;
	}
	if (WIFSIGNALED(st)) {
		seterr(err, errlen, "progress command killed by signal %d",
		    WTERMSIG(st));
		return -1;
	}
	if (WEXITSTATUS(st) != 0) {
		seterr(err, errlen, "progress command exited %d",
		    WEXITSTATUS(st));
		return -1;
	}
	if ((rc = parse_output(r, out, c.len)) == -1) {
		seterr(err, errlen, "progress command: %s", strerror(ENOMEM));
		return -1;
	}
	if (rc == 0) {
		seterr(err, errlen, "progress command printed nothing usable");
		return -1;
	}
	return 0;
}
