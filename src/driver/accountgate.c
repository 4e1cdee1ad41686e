/* SPDX-License-Identifier: ISC */
/*
 * The provider account's gate in an invocation (SPEC §9, --account NAME):
 * asked before each run after the circuit's own breaker, told after each
 * run what the run met, shown by --status, cleared by --reset-account.
 * The rules are breaker/gate.c's; the document is the store's
 * (store_account_load, store_account_update): a file in the state
 * directory, or with --store a key in the shared Redis, whose clock then
 * tells the time here too.
 *
 * The common case costs one failed open(2): a gate is read without its
 * lock, and the lock (a short flock around one read-change-write) is
 * taken only to claim a trial or to write what was learned.  A refused
 * run exits 120, as a run refused by an OPEN circuit does whatever opened
 * it (SPEC §2: "fatal error seen earlier" is 120; 122 is the run that
 * met the fatal error itself), so a cron script tells "not run, the
 * breaker said no" from everything else by one code.  A corrupt document
 * stops every circuit on the account with 125 and is never replaced; an
 * operator's --reset-account moves it aside.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "driver.h"
#include "invocation.h"
#include "report.h"
#include "run.h"
#include "store.h"

/* A holder keeps the account's lock for one read and one write. */
#define ACCOUNT_LOCK_WAIT 5.0

/* How long a trial's claim lasts: as long as one run may take. */
static double
trial_lease(const struct options *o)
{
	if (o->timeout > 0)
		return o->timeout + o->kill_after + 5;
	if (o->budget > 0)
		return o->budget;
	return 3600;
}

/* The message of a failed account_update (the caller exits 125, or 123
 * for BUSY). */
static int
update_failed(const char *name, int rc, const char *err)
{
	if (rc == ACCOUNT_NONE) {
		fprintf(stderr, "cbexec: no such account '%s': %s does not "
		    "exist\n", name, err);
		return CB_EXIT_ERROR;
	}
	if (rc == ACCOUNT_BUSY) {
		fprintf(stderr, "cbexec: account %s is busy: %s\n", name, err);
		return CB_EXIT_BUSY;
	}
	fprintf(stderr, "cbexec: %s\n", err);
	return CB_EXIT_ERROR;
}

/* The circuit as the document names it: its label made UTF-8 (a --state
 * path may hold any bytes; the document holds only UTF-8). */
static const char *
who(struct inv *v)
{
	if (v->acct_who == NULL)
		v->acct_who = utf8_sanitize(v->c->label, strlen(v->c->label));
	return v->acct_who;
}

struct claim {
	const char *circuit;
	double lease, now;
	enum cb_gate_verdict verdict;
	struct cb_account seen;		/* the gate as it was decided on */
};

static int
claim_fn(struct cb_account *a, void *arg)
{
	struct claim *c = arg;

	c->verdict = breaker_gate_admit(a, c->circuit, c->lease, c->now);
	/* What the refusal line and --loop need, outliving a.  A shared
	 * store asks again when another host wrote meanwhile: the answer
	 * before this one goes. */
	free(c->seen.reason);
	free(c->seen.circuit);
	free(c->seen.trial_by);
	c->seen = *a;
	c->seen.name = c->seen.message = c->seen.trial_by = NULL;
	c->seen.unknown = NULL;
	c->seen.reason = a->reason != NULL ? strdup(a->reason) : NULL;
	c->seen.circuit = a->circuit != NULL ? strdup(a->circuit) : NULL;
	if (c->verdict == GATE_REFUSE)
		c->seen.trial_by = a->trial_by != NULL ? strdup(a->trial_by) :
		    NULL;
	return c->verdict == GATE_TRIAL;
}

/* The one line of a refused run: what, who learned it, until when. */
static void
gate_refusal(const struct inv *v, const struct cb_account *a)
{
	char in[64] = "", d[24];
	double until = breaker_gate_until(a);
	long secs;

	if (until >= 0) {
		/* whole seconds, rounded up: never "in 0s" before it */
		secs = (long)(until - store_now(v->st)) + 1;
		snprintf(in, sizeof(in), "; retry in %s", duration_format(
		    (double)(secs > 0 ? secs : 0), d, sizeof(d)));
	}
	fprintf(stderr, "cbexec[%s]: account %s is %s: ", v->c->label,
	    v->o->account, circuit_name(a->gate));
	if (a->gate == CB_HALF_OPEN) {
		fputs("a trial run of circuit ", stderr);
		text_put(stderr, a->trial_by != NULL ? a->trial_by : "?");
		fputs(" is going on", stderr);
	} else {
		text_put(stderr, a->reason != NULL ? a->reason : a->type);
		if (a->circuit != NULL) {
			fputs(" (learned by circuit ", stderr);
			text_put(stderr, a->circuit);
			fputc(')', stderr);
		}
	}
	fprintf(stderr, "%s; not running. Reset: cbexec --reset-account %s\n",
	    in, v->o->account);
}

int
gate_admit(struct inv *v)
{
	struct cb_account a;
	struct claim c;
	char err[CB_ERRLEN], msg[600];
	double until;
	int rc;

	if (v->o->account == NULL)
		return -1;
	/* Lock-free first: a CLOSED gate (or none) is the common case. */
	rc = store_account_load(v->st, v->o->account, &a, err, sizeof(err));
	if (rc < 0) {
		breaker_account_free(&a);
		fprintf(stderr, "cbexec: %s\n", err);
		return CB_EXIT_ERROR;
	}
	rc = a.gate == CB_CLOSED;
	v->rep.account_gate = (int)a.gate;
	breaker_account_free(&a);
	if (rc)
		return -1;

	memset(&c, 0, sizeof(c));
	if ((c.circuit = who(v)) == NULL) {
		fprintf(stderr, "cbexec: out of memory\n");
		return CB_EXIT_ERROR;
	}
	c.lease = trial_lease(v->o);
	c.now = store_now(v->st);
	rc = store_account_update(v->st, v->o->account, ACCOUNT_LOCK_WAIT, 1,
	    claim_fn, &c, NULL, 0, err, sizeof(err));
	if (rc < 0) {
		free(c.seen.reason);
		free(c.seen.circuit);
		free(c.seen.trial_by);
		return update_failed(v->o->account, rc, err);
	}
	rc = -1;
	v->rep.account_gate = c.verdict == GATE_TRIAL ? CB_HALF_OPEN :
	    (int)c.seen.gate;
	if (c.verdict == GATE_TRIAL) {
		snprintf(msg, sizeof(msg), "%s: HALF_OPEN: retry time reached; "
		    "this run is the account's trial", v->o->account);
		report_event(&v->rep, "account", msg);
	} else if (c.verdict == GATE_REFUSE) {
		until = breaker_gate_until(&c.seen);
		if (until >= 0 && v->o->loop && (v->deadline <= 0 ||
		    mono_now() + (until - store_now(v->st)) <= v->deadline)) {
			v->wait_until = until;
			rc = ADMIT_WAIT;
		} else {
			if (v->rep.verbosity >= 0)
				gate_refusal(v, &c.seen);
			rc = CB_EXIT_OPEN;
		}
	}
	free(c.seen.reason);
	free(c.seen.circuit);
	free(c.seen.trial_by);
	return rc;
}

struct lesson {
	const char *circuit, *type, *reason, *message;
	double retry_at, now;
	struct cb_account after;	/* gate, for the log line */
};

static int
learn_fn(struct cb_account *a, void *arg)
{
	struct lesson *l = arg;
	int rc = breaker_gate_learn(a, l->circuit, l->type, l->reason,
	    l->message, l->retry_at, l->now);

	l->after.gate = a->gate;
	l->after.retry_at = a->retry_at;
	return rc;
}

int
gate_learn(struct inv *v, const struct run_done *d, int ignored)
{
	struct cb_account a;
	struct lesson l;
	char err[CB_ERRLEN], msg[600], ts[64], *why = NULL;
	int fact, rc, closed;

	if (v->o->account == NULL || ignored)
		return 0;
	fact = breaker_gate_fact(d->c.type);
	if (!fact) {
		/* Nothing learned: only a trial of ours has to be closed. */
		if (store_account_load(v->st, v->o->account, &a, err,
		    sizeof(err)) < 0) {
			breaker_account_free(&a);
			fprintf(stderr, "cbexec: %s\n", err);
			return -1;
		}
		v->rep.account_gate = (int)a.gate;
		closed = a.gate != CB_HALF_OPEN || a.trial_by == NULL ||
		    who(v) == NULL || strcmp(a.trial_by, who(v)) != 0;
		breaker_account_free(&a);
		if (closed)
			return 0;
	}
	memset(&l, 0, sizeof(l));
	if ((l.circuit = who(v)) == NULL) {
		fprintf(stderr, "cbexec: out of memory\n");
		return -1;
	}
	l.type = fact ? d->c.type : "";
	/* As the circuit keeps it: UTF-8, cut to CB_TEXT_MAX. */
	l.message = v->s.last_error.message;
	l.now = store_now(v->st);
	if (strcmp(l.type, "usage_limit") == 0) {
		/* The circuit's breaker read the reset time (rule 8). */
		l.retry_at = v->s.retry_at;
		l.reason = v->s.retry_at >= 0 && v->s.open_reason != NULL ?
		    v->s.open_reason : "usage limit";
	} else if (fact) {
		if (asprintf(&why, "fatal: %s", l.type) == -1)
			why = NULL;
		l.reason = why;
		l.retry_at = -1;
	}
	rc = store_account_update(v->st, v->o->account, ACCOUNT_LOCK_WAIT, 1,
	    learn_fn, &l, NULL, 0, err, sizeof(err));
	free(why);
	if (rc < 0) {
		update_failed(v->o->account, rc, err);
		return -1;
	}
	v->rep.account_gate = (int)l.after.gate;
	if (rc == 0)
		return 0;
	if (l.after.gate == CB_CLOSED)
		snprintf(msg, sizeof(msg), "%s: CLOSED: the trial run met no "
		    "provider limit", v->o->account);
	else if (l.after.retry_at >= 0)
		snprintf(msg, sizeof(msg), "%s: OPEN: %s; every circuit on it "
		    "waits until %s", v->o->account, l.type,
		    iso8601(l.after.retry_at, ts, sizeof(ts)));
	else
		snprintf(msg, sizeof(msg), "%s: OPEN: %s; every circuit on it "
		    "waits for: cbexec --reset-account %s", v->o->account,
		    l.type, v->o->account);
	report_event(&v->rep, "account", msg);
	return 0;
}

/* --status: the gate's rows under the circuit's (text), or with json the
 * document as one line of JSON in *json (malloc'd; the "account_gate" of
 * the circuit's object), whose "account" is the name.  1 when the gate
 * refuses runs now, 0 when not, -1 on error (printed). */
int
gate_status(struct store *st, const char *account, FILE *f, char **json)
{
	struct cb_account a;
	char err[CB_ERRLEN], ts[80];
	cJSON *aj;
	int rc, refusing;

	rc = store_account_load(st, account, &a, err, sizeof(err));
	if (rc < 0) {
		breaker_account_free(&a);
		fprintf(stderr, "cbexec: %s\n", err);
		return -1;
	}
	refusing = a.gate == CB_OPEN && (a.retry_at < 0 ||
	    a.retry_at > store_now(st));
	if (json != NULL) {
		aj = account_to_json(&a);
		if (aj == NULL || (*json = cJSON_PrintUnformatted(aj)) ==
		    NULL) {
			cJSON_Delete(aj);
			breaker_account_free(&a);
			fprintf(stderr, "cbexec: out of memory\n");
			return -1;
		}
		cJSON_Delete(aj);
	} else {
		fprintf(f, "%-20s %s  (gate %s", "account:", account,
		    circuit_name(a.gate));
		if (a.since >= 0 && a.gate != CB_CLOSED)
			fprintf(f, " since %s", iso8601(a.since, ts,
			    sizeof(ts)));
		fputs(")\n", f);
		if (a.gate != CB_CLOSED) {
			fprintf(f, "%-20s ", "account reason:");
			text_put(f, a.reason != NULL ? a.reason : a.type);
			if (a.circuit != NULL) {
				fputs(" (learned by circuit ", f);
				text_put(f, a.circuit);
				fputc(')', f);
			}
			fputc('\n', f);
		}
		if (a.gate == CB_OPEN && a.retry_at >= 0)
			fprintf(f, "%-20s %s\n", "account retry at:",
			    retry_in(a.retry_at, store_now(st), ts, sizeof(ts)));
		if (a.gate == CB_HALF_OPEN && a.trial_by != NULL) {
			fprintf(f, "%-20s ", "account trial:");
			text_put(f, a.trial_by);
			fputc('\n', f);
		}
		if (a.gate != CB_CLOSED)
			fprintf(f, "%-20s cbexec --reset-account %s\n",
			    "account reset:", account);
	}
	breaker_account_free(&a);
	return refusing;
}

void
gate_list(FILE *f, struct store *st)
{
	struct cb_account a;
	char **v = NULL, err[CB_ERRLEN], ts[80];
	size_t n = 0, i;

	if (store_account_list(st, &v, &n, err, sizeof(err)) == -1) {
		fputc('\n', f);
		text_put(f, err);
		fputc('\n', f);
		return;
	}
	if (n > 0)
		fputc('\n', f);
	for (i = 0; i < n; i++) {
		fprintf(f, "account %s: ", v[i]);
		if (store_account_load(st, v[i], &a, err, sizeof(err)) < 0) {
			text_put(f, err);
			fputc('\n', f);
		} else {
			fputs(circuit_name(a.gate), f);
			if (a.gate != CB_CLOSED) {
				fputs("  ", f);
				text_put(f, a.reason != NULL ? a.reason :
				    a.type);
				if (a.circuit != NULL) {
					fputs(" (learned by circuit ", f);
					text_put(f, a.circuit);
					fputc(')', f);
				}
			}
			if (a.gate == CB_OPEN && a.retry_at >= 0)
				fprintf(f, "; retry at %s", retry_in(a.retry_at,
				    store_now(st), ts, sizeof(ts)));
			fputc('\n', f);
		}
		breaker_account_free(&a);
		free(v[i]);
	}
	free(v);
}

struct reset {
	enum cb_circuit gate;	/* as it was */
	char *why;		/* its reason, if it was not CLOSED */
	double now;		/* the store's clock */
};

static int
reset_fn(struct cb_account *a, void *arg)
{
	struct reset *r = arg;

	free(r->why);		/* asked again: the earlier answer goes */
	r->why = NULL;
	r->gate = a->gate;
	if (a->gate != CB_CLOSED && (r->why = strdup(a->reason != NULL ?
	    a->reason : a->type)) == NULL)
		return -1;
	breaker_gate_reset(a, r->now);
	return 1;
}

/* This host's textfiles of the circuits on account, rewritten with its
 * gate CLOSED (SPEC §11: a reset keeps the views true).  No circuit's lock
 * is taken: a file that shows a newer state than read here is left. */
static void
refresh_gate(struct store *st, const char *account)
{
	struct reporter r;
	struct cb_state s;
	cJSON *j;
	char **names = NULL, err[CB_ERRLEN], where[PATH_MAX];
	size_t i, n = 0;

	if (store_list(st, &names, &n, err, sizeof(err)) != 0)
		return;
	memset(&r, 0, sizeof(r));
	r.log_fd = -1;
	r.verbosity = -2;
	r.account = account;
	r.account_gate = CB_CLOSED;
	for (i = 0; i < n; i++) {
		if (store_get_json(st, names[i], &s, &j, where,
		    sizeof(where), err, sizeof(err)) >= 0) {
			r.label = names[i];
			outputs_refresh(&s, &r, st, OUTPUTS_ACCOUNT);
			breaker_free(&s);
			cJSON_Delete(j);
		}
		free(names[i]);
	}
	free(names);
}

int
ops_reset_account(const struct options *o)
{
	char err[CB_ERRLEN], aside[CB_WHERELEN] = "";
	struct reset r = { CB_CLOSED, NULL, 0 };
	struct store *st = NULL;
	int rc;

	if (circuit_store(o, NULL, &st, 0) < 0)
		return CB_EXIT_ERROR;
	r.now = store_now(st);
	rc = store_account_update(st, o->reset_account, ACCOUNT_LOCK_WAIT, 0,
	    reset_fn, &r, aside, sizeof(aside), err, sizeof(err));
	if (rc == 1)
		refresh_gate(st, o->reset_account);
	store_close(st);
	if (rc < 0) {
		free(r.why);
		return update_failed(o->reset_account, rc, err);
	}
	if (aside[0] != '\0')
		fprintf(stderr, "cbexec: %s\ncbexec: moved it aside to %s\n",
		    err, aside);
	if (o->verbosity >= 0) {
		fprintf(stderr, "cbexec: account %s reset: ", o->reset_account);
		if (r.why != NULL) {
			fprintf(stderr, "%s -> CLOSED (was: ",
			    circuit_name(r.gate));
			text_put(stderr, r.why);
			fputc(')', stderr);
		} else
			fputs("CLOSED already", stderr);
		if (o->reason != NULL) {
			fputs(": ", stderr);
			text_put(stderr, o->reason);
		}
		fputc('\n', stderr);
	}
	free(r.why);
	return CB_EXIT_OK;
}
