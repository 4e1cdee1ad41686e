/* SPDX-License-Identifier: ISC */
/*
 * One invocation: the circuit's lock and state, the runs, the breaker, and
 * the exit status (SPEC §2-§5).  Also the operator commands.  cbexec.c is
 * the only place that turns an exit status into a process exit; everything
 * below it returns one of enum cb_exit (core.h's table of them).
 */
#ifndef CBEXEC_DRIVER_H
#define CBEXEC_DRIVER_H

#include <stdio.h>

#include "cli.h"
#include "core.h"

/* Which state file, and how people should name the circuit. */
struct circuit {
	char *path;		/* the state file */
	char *label;		/* NAME, else the path */
	char *reset_hint;	/* the command that resets it */
	int cwd;		/* the working directory's circuit */
};

int circuit_resolve(const struct options *o, struct circuit *c,
    char *err, size_t len);
void circuit_free(struct circuit *c);

/* Run COMMAND under the breaker; returns the exit status (not remapped). */
int driver_run(struct options *o, const struct circuit *c);

/* The configs read without --config (allow.c): the user's, then the
 * working directory's .cbexec/config.json if approved (a notice when it
 * is not).  0, or -1 with the message in err. */
int config_implicit(struct options *o, char *err, size_t len);
/* --allow-config [FILE]: approve FILE's present content; exit status.
 * Refused (125) inside a run of cbexec and while one goes on. */
int config_allow(const struct options *o);
/*
 * Only the operator approves (allow.c): allow_guard_begin() registers
 * this invocation's runs as going on, before the first; allow_guard_end()
 * revokes every approval written since, saying so to r, and ends the
 * registration.  allow_log_notes(): what config_implicit() said on
 * stderr (an approved config gone, approvals revoked), into r's log.
 */
struct reporter;
void allow_guard_begin(void);
void allow_guard_end(struct reporter *r);
void allow_log_notes(struct reporter *r);

/* --status, --history, --reset-circuit, --trip, --skip, --unskip. */
int ops_status(const struct options *o, const struct circuit *c);
/* --status --all: one line per circuit of the state directory. */
int ops_status_all(const struct options *o);
int ops_history(const struct options *o, const struct circuit *c);
int ops_reset(const struct options *o, const struct circuit *c);
int ops_trip(const struct options *o, const struct circuit *c);
int ops_skip(const struct options *o, const struct circuit *c);
int ops_unskip(const struct options *o, const struct circuit *c);
/* --reset-account NAME (accountgate.c): close the account's gate. */
int ops_reset_account(const struct options *o);

/* --record: apply one run's result given on the command line, as a run
 * with that result would have been; returns the exit status such a run
 * would give (not remapped). */
int driver_record(struct options *o, const struct circuit *c);
/* --record --json: what driver_record() decided, as one JSON object on f
 * with status, the exit status cbexec exits with (cbexec(1), JSON);
 * nothing when it decided nothing (an error of cbexec's own). */
void driver_record_json(FILE *f, int status);

#endif
