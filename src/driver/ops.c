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
 * circuit is stuck on, else the circuit's phase.  --skip and --unskip need
 * a circuit that exists: a mistyped name must not read as done.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "invocation.h"
#include "report.h"
#include "run.h"
#include "store.h"

#define OPERATOR_LOCK_WAIT 5.0

static int
load(const struct options *o, const struct circuit *c, struct cb_state *s)
{
	char err[512];

	if (state_load(c->path, o->follow_symlinks, o->name, s, err,
	    sizeof(err)) < 0) {
		fprintf(stderr, "cbexec: %s\n", err);
		return -1;
	}
	return 0;
}

int
ops_status(const struct options *o, const struct circuit *c)
{
	struct cb_state s;
	int open;

	if (load(o, c, &s) == -1)
		return CB_EXIT_ERROR;
	report_status(stdout, &s, c->label, c->reset_hint, o->json);
	open = s.state == CB_OPEN;
	breaker_free(&s);
	if (fflush(stdout) == EOF)
		return CB_EXIT_ERROR;
	return open ? CB_EXIT_OPEN : CB_EXIT_OK;
}

int
ops_history(const struct options *o, const struct circuit *c)
{
	struct cb_state s;

	if (load(o, c, &s) == -1)
		return CB_EXIT_ERROR;
	report_history(stdout, &s, o->last, o->json, isatty(STDOUT_FILENO));
	breaker_free(&s);
	return fflush(stdout) == EOF ? CB_EXIT_ERROR : CB_EXIT_OK;
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
apply(const struct options *o, struct cb_state *s, enum op op,
    struct cb_result *res, struct cb_result *unskip)
{
	const char *user = getenv("USER"), *name;
	enum cb_skip_kind kind;
	double now = wall_now();

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

/* Load (moving a corrupt file aside for a reset), apply, save, report.
 * The transition goes to the log and the hook like any. */
static int
operate(const struct options *o, const struct circuit *c, enum op op)
{
	struct cb_state s, before;
	struct cb_result res, unskip;
	struct reporter rep;
	char err[4400], err2[4400], aside[4200] = "";
	int fd, rc = CB_EXIT_ERROR, i, ld, reset = op == OP_RESET;

	memset(&rep, 0, sizeof(rep));
	rep.log_fd = -1;
	if ((fd = circuit_lock(o, c, OPERATOR_LOCK_WAIT, 0)) < 0)
		return -fd;
	if ((ld = state_load(c->path, o->follow_symlinks, o->name, &s, err,
	    sizeof(err))) < 0) {
		/* A corrupt file is never silently replaced: a reset is the
		 * operator's explicit word, and even then it is kept.  A
		 * symlink or a newer version's file is not corrupt: refused. */
		if (!reset || ld == -2 || state_move_aside(c->path, wall_now(),
		    aside, sizeof(aside), err2, sizeof(err2)) == -1) {
			fprintf(stderr, "cbexec: %s\n", err);
			if (reset && ld != -2)
				fprintf(stderr, "cbexec: %s\n", err2);
			close(fd);
			return CB_EXIT_ERROR;
		}
		fprintf(stderr, "cbexec: %s\ncbexec: moved it aside to %s\n",
		    err, aside);
		if (breaker_init(&s, o->name) == -1) {
			close(fd);
			return CB_EXIT_ERROR;
		}
	} else if (ld == 1 && (op == OP_SKIP || op == OP_UNSKIP)) {
		fprintf(stderr, "cbexec: no such circuit: no state file at "
		    "%s\n", c->path);
		goto out;
	}
	if (circuit_reporter(o, c, &rep) == -1)
		goto out;
	breaker_snapshot(&s, &before);
	if (apply(o, &s, op, &res, &unskip) == -1)
		goto out;
	if (state_lock_check(&fd, c->path, o->follow_symlinks, err,
	    sizeof(err)) == -1 || state_save(c->path, o->follow_symlinks, &s,
	    err, sizeof(err)) == -1) {
		fprintf(stderr, "cbexec: %s\n", err);
		/* The corrupt file is gone from the path already: that alone
		 * reset the circuit (a missing file is a fresh CLOSED one),
		 * only its history event is lost. */
		if (aside[0] != '\0') {
			fprintf(stderr, "cbexec: the circuit is reset all the "
			    "same: %s was moved aside to %s and, with no state "
			    "file, the circuit starts CLOSED\n", c->path,
			    aside);
			rc = CB_EXIT_OK;
		}
		goto out;
	}
	if (op == OP_SKIP || op == OP_UNSKIP)
		report_skip(&rep, op == OP_SKIP ? "skip" : "unskip", &res,
		    &before, s.state, s.iteration);
	else {
		report_event(&rep, reset ? "reset" : "trip",
		    s.open_reason != NULL && !reset ? s.open_reason :
		    o->reason);
		for (i = 0; i < res.n; i++)
			report_transition(&rep, &res.t[i], &before,
			    s.iteration);
		if (unskip.why[0] != '\0')
			report_event(&rep, "unskip", unskip.why);
	}
	if (o->metrics_path != NULL &&
	    report_metrics(&rep, &s, 0, err, sizeof(err)) == -1)
		report_warn(&rep, "%s", err);
	/* The state is saved; an interrupt (in the hook) still says so. */
	rc = sup_aborted() ? CB_EXIT_ABORT : CB_EXIT_OK;
out:
	reporter_close(&rep);
	breaker_free(&s);
	close(fd);
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
