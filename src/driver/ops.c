/* SPDX-License-Identifier: ISC */
/*
 * The operator commands: --status and --history read the state without
 * the lock (a running cbexec holds it for as long as its command runs);
 * --reset-circuit and --trip take the lock, waiting up to 5 s for a
 * running cbexec to finish its write.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "invocation.h"
#include "report.h"
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

static int
lock(const struct circuit *c, char *err, size_t len)
{
	int fd = state_lock(c->path, OPERATOR_LOCK_WAIT, err, len);

	if (fd == -2)
		fprintf(stderr, "cbexec: circuit %s is busy: another cbexec "
		    "holds %s.lock\n", c->label, c->path);
	else if (fd == -1)
		fprintf(stderr, "cbexec: %s\n", err);
	return fd;
}

/* Reset or trip: load (moving a corrupt file aside for a reset), apply,
 * save, report.  The transition goes to the log and the hook like any. */
static int
operate(const struct options *o, const struct circuit *c, int reset)
{
	struct cb_state s, before;
	struct cb_result res;
	struct reporter rep;
	char err[512], err2[512], aside[4200];
	const char *user = getenv("USER");
	int fd, rc = CB_EXIT_ERROR, i, ld;

	if ((fd = lock(c, err, sizeof(err))) < 0)
		return fd == -2 ? CB_EXIT_BUSY : CB_EXIT_ERROR;
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
	}
	if (circuit_reporter(o, c, &rep) == -1)
		goto out;
	breaker_snapshot(&s, &before);
	if (reset)
		breaker_reset(&s, &o->limits, o->reason, user, wall_now(),
		    &res);
	else
		breaker_trip(&s, &o->limits, o->reason, user, wall_now(), &res);
	if (state_save(c->path, o->follow_symlinks, &s, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "cbexec: %s\n", err);
		goto out;
	}
	report_event(&rep, reset ? "reset" : "trip", s.open_reason != NULL &&
	    !reset ? s.open_reason : o->reason);
	for (i = 0; i < res.n; i++)
		report_transition(&rep, &res.t[i], &before, s.iteration);
	if (o->metrics_path != NULL &&
	    report_metrics(&rep, &s, 0, err, sizeof(err)) == -1)
		report_warn(&rep, "%s", err);
	rc = CB_EXIT_OK;
out:
	reporter_close(&rep);
	breaker_free(&s);
	close(fd);
	return rc;
}

int
ops_reset(const struct options *o, const struct circuit *c)
{
	return operate(o, c, 1);
}

int
ops_trip(const struct options *o, const struct circuit *c)
{
	return operate(o, c, 0);
}
