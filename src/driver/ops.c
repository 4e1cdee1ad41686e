/* SPDX-License-Identifier: ISC */
/*
 * The operator commands: --status and --history read the state without
 * the lock (a running cbexec holds it for as long as its command runs);
 * --reset-circuit, --trip, --skip and --unskip take the lock, waiting up
 * to 5 s for a running cbexec to finish its write.
 *
 * A reset also forgets every skip (SPEC §9: a skip lasts until
 * --reset-circuit or --unskip); the menu's Reset does not, it retries the
 * work at hand.  --skip without --phase or --task gives up the task the
 * circuit is stuck on, else the circuit's phase.
 *
 * Every verb first makes sure the circuit exists (need_circuit): a
 * mistyped name must not read as a healthy CLOSED circuit or as done, nor
 * a reset, a trip or a skip create a new file beside the real one.  Only
 * --trip --create opens a circuit that has never run.
 *
 * A verb that writes (a reset, a trip, a skip, an unskip) takes the lock,
 * and under it a start record whose run was never saved is a run whose
 * cbexec was killed: it is counted first, as a run would count it (SPEC
 * §11), and saved with the verb's change in the one save.  What the verb
 * did then reaches the views the runs keep on this host, --metrics and
 * --log or not: every textfile of the state's outputs is rewritten and
 * every log gets its events (outputs.c).  --status and --history, which
 * take no lock, rewrite only this host's textfiles that show an older
 * state than they read: an act on another host of a shared store reaches
 * this host's files at its next invocation of any kind.
 *
 * --status shows who holds the circuit and the run going on (its start
 * record), from store_holder(); --status --all each circuit's.
 *
 * --status --all reads every circuit of the store (store_list: the
 * NAME.json of the state directory, or the keys of a shared store),
 * without locks, and lists them (report_status_all() orders them, OPEN
 * first); one that cannot be read is a row saying why.  A state directory
 * that does not exist is an error (125), not an empty list: it is most
 * often the wrong one.  The retry time (retry_at, while a usage limit
 * holds a circuit OPEN) is read from the state's JSON as it is.  The text
 * adds a line per account (--account) after the table.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "driver.h"
#include "invocation.h"
#include "report.h"
#include "run.h"
#include "store.h"

#define OPERATOR_LOCK_WAIT 5.0

static void
no_such_circuit(const struct circuit *c, const struct store *st)
{
	char where[CB_WHERELEN];

	store_where(st, where, sizeof(where));
	if (strcmp(c->label, c->path) != 0)
		fprintf(stderr, "cbexec: no such circuit '%s': %s does not "
		    "exist\n", c->label, where);
	else
		fprintf(stderr, "cbexec: no such circuit: %s does not exist\n",
		    where);
}

/* The circuit's store, open; 0, or -1 with the message printed. */
static int
open_store(const struct options *o, const struct circuit *c,
    struct store **st)
{
	return circuit_store(o, c, st, 0) < 0 ? -1 : 0;
}

/* The circuit exists in st: 0, else -1 with the message printed. */
static int
need_circuit(const struct circuit *c, struct store *st)
{
	char err[CB_ERRLEN];
	int rc;

	/* Anything at the path (a corrupt file, a symlink) is for the load
	 * to judge.  A lock without a state is a circuit whose first run
	 * is going on (or saved nothing): it exists, fresh and CLOSED. */
	if ((rc = store_exists(st, err, sizeof(err))) == 1)
		return 0;
	if (rc == -1)
		fprintf(stderr, "cbexec: %s\n", err);
	else
		no_such_circuit(c, st);
	return -1;
}

static int
load(const struct options *o, const struct circuit *c, struct store **st,
    struct cb_state *s)
{
	char err[CB_ERRLEN];

	if (open_store(o, c, st) == -1)
		return -1;
	if (need_circuit(c, *st) == -1)
		return -1;
	if (store_load(*st, s, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "cbexec: %s\n", err);
		return -1;
	}
	return 0;
}

/* What this host's textfiles of the circuit show made true, if they show
 * an older state than s (SPEC §11: an act on another host of a shared
 * store, seen here at this host's next invocation of any kind).  No lock
 * is held: only files that are behind are written. */
static void
refresh(const char *label, const struct cb_state *s, struct store *st)
{
	struct reporter r;

	memset(&r, 0, sizeof(r));
	r.log_fd = -1;
	r.label = label;
	r.verbosity = -2;
	r.account_gate = -1;
	outputs_refresh(s, &r, st, 0);
}

/* Who holds the circuit, into row (nothing when the store cannot tell:
 * --status goes on). */
static void
holder_of(struct store *st, const char *name, struct status_row *row)
{
	char err[CB_ERRLEN], host[HOSTNAME_KEPT + 1];

	if (store_holder(st, name, row->s, &row->holder, err,
	    sizeof(err)) == -1)
		return;
	store_hostname(host, sizeof(host));
	row->remote = row->holder.pid > 0 &&
	    strcmp(row->holder.host, host) != 0;
}

int
ops_status(const struct options *o, const struct circuit *c)
{
	struct cb_state s;
	struct status_row row;
	const char *account;
	struct store *st = NULL;
	char key[CB_WHERELEN], *acct = NULL;
	int open, gate = 0;

	if (load(o, c, &st, &s) == -1) {
		store_close(st);
		return CB_EXIT_ERROR;
	}
	refresh(c->label, &s, st);
	memset(&row, 0, sizeof(row));
	row.name = c->label;
	row.path = store_key(st, key, sizeof(key));
	row.s = &s;
	row.retry_at = s.retry_at;
	holder_of(st, NULL, &row);
	/* --account, else the one the circuit last ran with. */
	account = o->account != NULL ? o->account : s.account;
	/* JSON: the account's document inside the circuit's object; text:
	 * its rows after the circuit's. */
	if (account != NULL && o->json)
		gate = gate_status(st, account, stdout, &acct);
	if (gate != -1)
		report_status(stdout, &row, c->reset_hint, o->json, acct,
		    store_now(st));
	if (account != NULL && !o->json)
		gate = gate_status(st, account, stdout, NULL);
	free(acct);
	if (gate == -1) {
		breaker_free(&s);
		store_close(st);
		return CB_EXIT_ERROR;
	}
	open = s.state == CB_OPEN || gate == 1;
	breaker_free(&s);
	store_close(st);
	return open ? CB_EXIT_OPEN : CB_EXIT_OK;
}

int
ops_history(const struct options *o, const struct circuit *c)
{
	struct cb_state s;
	struct store *st = NULL;

	if (load(o, c, &st, &s) == -1) {
		store_close(st);
		return CB_EXIT_ERROR;
	}
	refresh(c->label, &s, st);
	report_history(stdout, &s, c->label, o->last, o->json,
	    terminal_width(STDOUT_FILENO));
	breaker_free(&s);
	store_close(st);
	return CB_EXIT_OK;
}

enum op { OP_RESET, OP_TRIP, OP_SKIP, OP_UNSKIP };

/* What --skip gives up: --phase, --task, else the stuck task, else the
 * circuit's phase; -1 with the message printed when there is none. */
static int
skip_target(const struct options *o, const struct cb_state *s,
    enum cb_skip_kind *kind, const char **name)
{
	if (o->phase != NULL || o->task != NULL) {
		*kind = o->phase != NULL ? SKIP_PHASE : SKIP_TASK;
		*name = o->phase != NULL ? o->phase : o->task;
	} else if (s->stuck_task != NULL) {
		*kind = SKIP_TASK;
		*name = s->stuck_task;
	} else if (s->phase != NULL) {
		*kind = SKIP_PHASE;
		*name = s->phase;
	} else {
		fprintf(stderr, "cbexec: nothing to skip: the circuit has no "
		    "phase and is not stuck on a task (give --phase P or "
		    "--task T)\n");
		return -1;
	}
	return 0;
}

/* The operator's act on s; 0, or -1 with the message printed. */
static int
apply(const struct options *o, struct cb_state *s, enum op op, double now,
    struct cb_result *res, struct cb_result *unskip)
{
	const char *user = getenv("USER"), *name;
	enum cb_skip_kind kind;

	unskip->why[0] = '\0';
	switch (op) {
	case OP_RESET:
		breaker_reset(s, &o->limits, o->reason, user, now, res);
		breaker_unskip(s, &o->limits, NULL, user, now, unskip);
		return 0;
	case OP_TRIP:
		breaker_trip(s, &o->limits, o->reason, user, now, res);
		return 0;
	case OP_SKIP:
		if (skip_target(o, s, &kind, &name) == -1)
			return -1;
		if (breaker_skip(s, &o->limits, kind, name, o->reason, user,
		    now, res) == -1) {
			fprintf(stderr, "cbexec: cannot record the skip: %s\n",
			    s->n_skips >= CB_SKIPS_MAX ? "too many skips kept "
			    "(unskip some, or reset the circuit)" :
			    "out of memory");
			return -1;
		}
		return 0;
	case OP_UNSKIP:
		if (breaker_unskip(s, &o->limits, o->unskip, user, now,
		    res) == 0) {
			fprintf(stderr, "cbexec: '%s' is not skipped\n",
			    o->unskip);
			return -1;
		}
		return 0;
	}
	return -1;
}

/*
 * A run of a cbexec that was killed (its start record r, found under the
 * lock), counted in s as a run would count it, and reported.  0, or -1
 * with the message printed.
 */
static int
count_killed(const struct options *o, struct cb_state *s,
    const struct store_run *r, double now, struct reporter *rep)
{
	struct classification c;
	struct cb_state before;
	struct cb_result res;
	struct cb_run run;
	int i;

	if (killed_run(r, &c) == -1) {
		fprintf(stderr, "cbexec: %s\n", digest_error() != NULL ?
		    digest_error() : "out of memory");
		return -1;
	}
	memset(&run, 0, sizeof(run));
	run.unseen = 1;
	run.cls = c.cls;
	run.type = c.type;
	run.message = c.message;
	run.hash = c.hash;
	run.exit_code = CB_EXIT_SIGNAL + SIGKILL;
	breaker_snapshot(s, &before);
	breaker_record(s, &o->limits, &run, now, &res);
	report_warn(rep, "run %ld (cbexec pid %ld on %s) was never recorded: "
	    "its cbexec was killed; counted as a failed run", r->run, r->pid,
	    r->host[0] != '\0' ? r->host : "?");
	for (i = 0; i < res.n; i++)
		report_transition(rep, &res.t[i], &before, s->iteration);
	classification_free(&c);
	return 0;
}

/* Load (moving a corrupt file aside for a reset), count a killed run,
 * apply, save, report.  The transition goes to the log and the hook like
 * any. */
static int
operate(const struct options *o, const struct circuit *c, enum op op)
{
	struct cb_state s, before;
	struct cb_result res, unskip;
	struct reporter rep;
	struct store_run killed;
	struct store *st = NULL;
	char err[CB_ERRLEN], err2[CB_ERRLEN];
	char aside[CB_WHERELEN] = "", where[CB_WHERELEN];
	const char *user = getenv("USER");
	double now;
	int rc = CB_EXIT_ERROR, i, ld, loaded = 0, reset = op == OP_RESET,
	    create = op == OP_TRIP && o->create;

	memset(&rep, 0, sizeof(rep));
	rep.log_fd = -1;
	if (open_store(o, c, &st) == -1)
		goto out;
	/* Before the lock, which would make the directory and FILE.lock. */
	if (!create && need_circuit(c, st) == -1)
		goto out;
	/* Every reporter (--log) opened before the state is touched: one
	 * that cannot be opened leaves a corrupt state where it was. */
	if (circuit_reporter(o, c, &rep) == -1)
		goto out;
	if (o->store != NULL)
		rep.store = store_label(st);
	if ((i = circuit_lock(o, c, st, OPERATOR_LOCK_WAIT, 0)) < 0) {
		rc = -i;
		goto out;
	}
	if ((ld = store_load(st, &s, &killed, err, sizeof(err))) < 0) {
		/* A corrupt state is never silently replaced: a reset is the
		 * operator's explicit word, and even then it is kept.  A
		 * symlink or a newer version's state is not corrupt: refused. */
		if (!reset || ld == -2 || store_move_aside(st, aside,
		    sizeof(aside), err2, sizeof(err2)) == -1) {
			fprintf(stderr, "cbexec: %s\n", err);
			if (reset && ld != -2)
				fprintf(stderr, "cbexec: %s\n", err2);
			goto out;
		}
		fprintf(stderr, "cbexec: %s\ncbexec: moved it aside to %s\n",
		    err, aside);
		if (breaker_init(&s, o->name) == -1)
			goto out;
	} else if (ld == 1 && killed.run == 0 &&
	    (op == OP_SKIP || op == OP_UNSKIP)) {
		/* Only its lock: nothing was ever recorded to skip. */
		loaded = 1;
		no_such_circuit(c, st);
		goto out;
	}
	loaded = 1;
	now = store_now(st);
	/* What happens here goes to the logs the runs write too (SPEC §11). */
	outputs_open_logs(&s, &rep);
	/* The run of a cbexec that was killed counts before the verb. */
	if (ld >= 0 && killed.run > 0 && count_killed(o, &s, &killed,
	    now, &rep) == -1)
		goto out;
	breaker_snapshot(&s, &before);
	if (apply(o, &s, op, now, &res, &unskip) == -1)
		goto out;
	/* Of the files the circuit's runs write (SPEC §11), one that is
	 * gone is forgotten. */
	outputs_forget_gone(&s);
	if (store_save(st, &s, err, sizeof(err)) < 0) {
		fprintf(stderr, "cbexec: %s\n", err);
		/* The corrupt state is gone from its place already: that
		 * alone reset the circuit (a missing state is a fresh CLOSED
		 * one), only its history event is lost. */
		if (aside[0] != '\0') {
			fprintf(stderr, "cbexec: the circuit is reset all the "
			    "same: %s was moved aside to %s and, with no "
			    "state, the circuit starts CLOSED\n",
			    store_where(st, where, sizeof(where)), aside);
			rc = CB_EXIT_OK;
		}
		goto out;
	}
	if (op == OP_SKIP || op == OP_UNSKIP)
		report_skip(&rep, op == OP_SKIP ? "skip" : "unskip", &res,
		    &before, s.state, s.iteration, user, now);
	else {
		/* In the words of the history's event. */
		report_act(&rep, reset ? "reset" : "trip", !reset ?
		    s.open_reason : o->reason != NULL && o->reason[0] != '\0' ?
		    o->reason : "reset by operator", user, s.iteration, now);
		for (i = 0; i < res.n; i++)
			report_transition(&rep, &res.t[i], &before,
			    s.iteration);
		if (unskip.why[0] != '\0')
			report_act(&rep, "unskip", unskip.why, user,
			    s.iteration, now);
	}
	/* Every textfile the runs write on this host says what the state
	 * now says, --metrics or not: the operator cannot know which file a
	 * cron line wrote. */
	if (report_metrics(&rep, &s, err, sizeof(err)) == -1)
		report_warn(&rep, "%s", err);
	outputs_refresh(&s, &rep, st, OUTPUTS_LOCKED);
	/* The state is saved; an interrupt (in the hook) still says so. */
	rc = sup_aborted() ? CB_EXIT_ABORT : CB_EXIT_OK;
out:
	reporter_close(&rep);
	if (loaded)
		breaker_free(&s);
	store_close(st);
	return rc;
}

int
ops_reset(const struct options *o, const struct circuit *c)
{
	return operate(o, c, OP_RESET);
}

int
ops_trip(const struct options *o, const struct circuit *c)
{
	return operate(o, c, OP_TRIP);
}

int
ops_skip(const struct options *o, const struct circuit *c)
{
	return operate(o, c, OP_SKIP);
}

int
ops_unskip(const struct options *o, const struct circuit *c)
{
	return operate(o, c, OP_UNSKIP);
}

/* A time member a newer state may carry: ISO-8601, or epoch seconds. */
static double
json_time(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	double t;

	if (cJSON_IsString(v) && iso8601_parse(v->valuestring, &t) == 0)
		return t;
	if (cJSON_IsNumber(v) && v->valuedouble >= 0)
		return v->valuedouble;
	return -1;
}

int
ops_status_all(const struct options *o)
{
	struct status_row *rows = NULL;
	struct cb_state *states = NULL;
	struct store *st = NULL;
	char err[CB_ERRLEN], **names = NULL, **paths = NULL, **errs = NULL;
	char where[CB_WHERELEN];
	size_t n = 0, i;
	cJSON *j;
	int rc = CB_EXIT_ERROR, any_open = 0, any_bad = 0, width, tty, ld;

	/* The circuits of the store: the state directory's, or a shared
	 * store's (not this host's). */
	if (circuit_store(o, NULL, &st, 0) < 0)
		return CB_EXIT_ERROR;
	if ((ld = store_list(st, &names, &n, err, sizeof(err))) < 0) {
		/* A mistyped CBEXEC_STATE_DIR, or another user's HOME, must
		 * not read as "no circuits, all is well". */
		fprintf(stderr, "cbexec: %s%s\n", err, ld == -2 ? ": no "
		    "circuit has run with it (set CBEXEC_STATE_DIR or "
		    "XDG_STATE_HOME as the runs do)" : "");
		goto out;
	}
	if (n == 0) {
		if (o->json)
			report_status_all(stdout, NULL, 0, 1, 0, 0,
			    store_now(st));
		else {
			printf("no circuits in %s\n", store_place(st));
			gate_list(stdout, st);
		}
		rc = CB_EXIT_OK;
		goto out;
	}
	rows = calloc(n, sizeof(*rows));
	states = calloc(n, sizeof(*states));
	paths = calloc(n, sizeof(*paths));
	errs = calloc(n, sizeof(*errs));
	if (rows == NULL || states == NULL || paths == NULL || errs == NULL) {
		fprintf(stderr, "cbexec: out of memory\n");
		goto out;
	}
	for (i = 0; i < n; i++) {
		rows[i].name = names[i];
		rows[i].retry_at = -1;
		ld = store_get_json(st, names[i], &states[i], &j, where,
		    sizeof(where), err, sizeof(err));
		if ((paths[i] = strdup(where)) == NULL) {
			if (ld >= 0) {
				breaker_free(&states[i]);
				cJSON_Delete(j);
			}
			fprintf(stderr, "cbexec: out of memory\n");
			goto out;
		}
		rows[i].path = paths[i];
		if (ld < 0) {
			errs[i] = strdup(err);
			rows[i].error = errs[i] != NULL ? errs[i] : "unreadable";
			any_bad = 1;
			continue;
		}
		rows[i].s = &states[i];
		holder_of(st, names[i], &rows[i]);
		if (ld == 0)
			refresh(names[i], &states[i], st);
		rows[i].retry_at = json_time(j, "retry_at");
		cJSON_Delete(j);
		if (states[i].state == CB_OPEN)
			any_open = 1;
	}
	width = status_width(STDOUT_FILENO, &tty);
	report_status_all(stdout, rows, n, o->json, width, tty,
	    store_now(st));
	if (!o->json)
		gate_list(stdout, st);
	rc = any_open ? CB_EXIT_OPEN : any_bad ? CB_EXIT_ERROR : CB_EXIT_OK;
out:
	for (i = 0; i < n; i++) {
		if (rows != NULL && rows[i].s != NULL)
			breaker_free(&states[i]);
		if (paths != NULL)
			free(paths[i]);
		if (errs != NULL)
			free(errs[i]);
		free(names[i]);
	}
	free(rows);
	free(states);
	free(paths);
	free(errs);
	free(names);
	store_close(st);
	return rc;
}
