/* SPDX-License-Identifier: ISC */
/*
 * The files a circuit's runs write besides its state (SPEC §11,
 * "Operator commands keep the views true"): the --metrics textfile and
 * the --log, which an operator's reset, trip, skip or unskip must make
 * true again although the operator cannot know which file a cron line
 * wrote.  So the state remembers them (its "outputs": kind, host,
 * absolute path, and for a textfile the labels its samples carry), at
 * most CB_OUTPUTS_MAX, the least recently written forgotten first.
 *
 * Every invocation that writes one puts it on the list
 * (outputs_remember(); in memory, carried by the invocation's next
 * save).  A verb rewrites this host's textfiles from the state it saved
 * and appends its events to this host's logs; a file that is gone stays
 * gone and is forgotten (outputs_forget_gone()).  Files are local: a
 * host can write only its own, so on a shared store a verb on host B
 * rewrites B's, and A's are made true by A's next invocation of any kind
 * -- a run, --record or a verb rewrites them under the lock when what
 * they say changed, --status, --history and --status --all (no lock)
 * when they show an older generation of the state than the one read
 * (outputs_refresh()).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "invocation.h"
#include "report.h"
#include "store.h"

const char *
outputs_host(void)
{
	static char host[256];

	if (host[0] == '\0' && (gethostname(host, sizeof(host) - 1) == -1 ||
	    host[0] == '\0'))
		snprintf(host, sizeof(host), "?");
	return host;
}

/* path made absolute, its directory canonical (the file itself may be a
 * link, or not there yet), into buf; -1 when too long. */
static int
absolute(const char *path, char *buf, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *base = strrchr(path, '/');
	int n;

	if (file_dir_of(path, dir, sizeof(dir)) == 0 &&
	    realpath(dir, real) != NULL) {
		n = snprintf(buf, len, "%s/%s", strcmp(real, "/") == 0 ? "" :
		    real, base != NULL ? base + 1 : path);
		return n < 0 || (size_t)n >= len ? -1 : 0;
	}
	if (path[0] == '/')
		n = snprintf(buf, len, "%s", path);
	else if (getcwd(dir, sizeof(dir)) != NULL)
		n = snprintf(buf, len, "%s/%s", dir, path);
	else
		return -1;
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int
same_str(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Replace *dst by a copy of v: 1 when it changed, -1 out of memory. */
static int
set(char **dst, const char *v)
{
	char *c = NULL;

	if (same_str(*dst, v))
		return 0;
	if (v != NULL && (c = strdup(v)) == NULL)
		return -1;
	free(*dst);
	*dst = c;
	return 1;
}

/* The record of kind at path on this host, made when missing (the least
 * recently written one giving way when the list is full); NULL when out
 * of memory.  *fresh: it was made. */
static struct cb_output *
slot(struct cb_state *s, enum cb_output_kind kind, const char *path,
    int *fresh)
{
	const char *host = outputs_host();
	struct cb_output *o, *nv;
	size_t i, old = 0;

	*fresh = 0;
	for (i = 0; i < s->n_outputs; i++) {
		o = &s->outputs[i];
		if (o->kind == kind && same_str(o->host, host) &&
		    same_str(o->path, path))
			return o;
		if (o->at < s->outputs[old].at)
			old = i;
	}
	if (s->n_outputs >= CB_OUTPUTS_MAX) {
		o = &s->outputs[old];
		output_free(o);
	} else {
		if ((nv = realloc(s->outputs, (s->n_outputs + 1) *
		    sizeof(*nv))) == NULL)
			return NULL;
		s->outputs = nv;
		o = &s->outputs[s->n_outputs++];
		memset(o, 0, sizeof(*o));
	}
	o->kind = kind;
	o->at = -1;
	if ((o->host = strdup(host)) == NULL ||
	    (o->path = strdup(path)) == NULL)
		return NULL;
	*fresh = 1;
	return o;
}

static int
remember(struct cb_state *s, enum cb_output_kind kind, const char *given,
    const struct reporter *r, double now)
{
	char path[PATH_MAX];
	struct cb_output *o;
	int fresh, a, b, c, d;

	if (absolute(given, path, sizeof(path)) == -1)
		return 0;
	if ((o = slot(s, kind, path, &fresh)) == NULL)
		return -1;
	o->at = now;
	if (kind == OUTPUT_LOG)
		return fresh;
	/* The labels its samples carry, so that a rewrite by a verb (which
	 * may name the circuit otherwise) starts no new series. */
	if ((a = set(&o->circuit, r->label)) == -1 ||
	    (b = set(&o->store, r->store)) == -1 ||
	    (c = set(&o->account, r->account)) == -1)
		return -1;
	d = o->follow != r->follow;
	o->follow = r->follow;
	return fresh || a || b || c || d;
}

int
outputs_remember(struct cb_state *s, const struct reporter *r, double now)
{
	int rc = 0, k;

	if (r->metrics_path != NULL) {
		if ((k = remember(s, OUTPUT_METRICS, r->metrics_path, r,
		    now)) == -1)
			return -1;
		rc |= k;
	}
	/* A stream (--log -) is nobody's file. */
	if (r->log_fd >= 0 && r->log_stream == 0 && r->log_path != NULL) {
		if ((k = remember(s, OUTPUT_LOG, r->log_path, r, now)) == -1)
			return -1;
		rc |= k;
	}
	return rc;
}

/* Whether o is this host's, and (unless NULL) not the file at given. */
static int
ours(const struct cb_output *o, const char *given)
{
	char path[PATH_MAX];

	if (!same_str(o->host, outputs_host()))
		return 0;
	return given == NULL || absolute(given, path, sizeof(path)) == -1 ||
	    strcmp(path, o->path) != 0;
}

int
outputs_forget_gone(struct cb_state *s)
{
	struct stat st;
	size_t i, kept = 0;
	int gone = 0;

	for (i = 0; i < s->n_outputs; i++) {
		if (ours(&s->outputs[i], NULL) &&
		    lstat(s->outputs[i].path, &st) == -1 && errno == ENOENT) {
			output_free(&s->outputs[i]);
			gone++;
		} else
			s->outputs[kept++] = s->outputs[i];
	}
	s->n_outputs = kept;
	return gone;
}

void
outputs_open_logs(const struct cb_state *s, struct reporter *r)
{
	char err[CB_ERRLEN];
	size_t i;

	for (i = 0; i < s->n_outputs; i++) {
		const struct cb_output *o = &s->outputs[i];

		if (o->kind != OUTPUT_LOG || !ours(o, r->log_fd >= 0 &&
		    r->log_stream == 0 ? r->log_path : NULL))
			continue;
		if (reporter_add_log(r, o->path, o->follow, err,
		    sizeof(err)) == -1)
			report_warn(r, "%s", err);
	}
}

/* The gate of account as the store has it, for the textfile's sample;
 * -1 when it cannot be read. */
static int
gate_of(struct store *st, const char *account)
{
	struct cb_account a;
	char err[CB_ERRLEN];
	int gate = -1;

	if (st != NULL && store_account_load(st, account, &a, err,
	    sizeof(err)) >= 0)
		gate = (int)a.gate;
	breaker_account_free(&a);
	return gate;
}

void
outputs_refresh(const struct cb_state *s, struct reporter *r,
    struct store *st, int how)
{
	char err[CB_ERRLEN];
	struct reporter m;
	size_t i;

	for (i = 0; i < s->n_outputs; i++) {
		const struct cb_output *o = &s->outputs[i];

		/* The invocation's own --metrics is its caller's to write,
		 * unless asked. */
		if (o->kind != OUTPUT_METRICS || !ours(o, how & OUTPUTS_OWN ?
		    NULL : r->metrics_path))
			continue;
		if ((how & OUTPUTS_ACCOUNT) && (o->account == NULL ||
		    r->account == NULL || strcmp(o->account, r->account) != 0))
			continue;
		/* Shows this state already: nothing to read or write. */
		if (!(how & (OUTPUTS_LOCKED | OUTPUTS_ACCOUNT)) &&
		    report_metrics_generation(o->path) >= s->generation)
			continue;
		m = *r;
		m.metrics_path = o->path;
		m.label = o->circuit != NULL ? o->circuit : r->label;
		m.store = o->store;
		m.account = o->account;
		m.account_gate = o->account != NULL ? (r->account != NULL &&
		    strcmp(o->account, r->account) == 0 &&
		    r->account_gate >= 0 ? r->account_gate :
		    gate_of(st, o->account)) : -1;
		m.follow = o->follow;
		m.store_fallback = 0;
		if (report_metrics_file(&m, s, how & OUTPUTS_LOCKED ?
		    METRICS_EXISTING : how & OUTPUTS_ACCOUNT ? METRICS_NEWER |
		    METRICS_SAME : METRICS_NEWER, err, sizeof(err)) == -1 &&
		    (how & OUTPUTS_LOCKED))
			report_warn(r, "%s", err);
	}
}
