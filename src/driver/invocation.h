/* SPDX-License-Identifier: ISC */
/*
 * Shared by the files of driver/: the invocation the loop (driver.c)
 * drives, what one run (run.c) hands back to it, and the circuit's
 * reporter (circuit.c).
 */
#ifndef CBEXEC_INVOCATION_H
#define CBEXEC_INVOCATION_H

#include "cli.h"
#include "driver.h"
#include "judge.h"
#include "report.h"
#include "run.h"

struct inv {
	struct options *o;
	const struct circuit *c;
	struct cb_state s;
	struct reporter rep;
	struct progress_ctx px;	/* sources after resolving auto, phase */
	double deadline;	/* budget end, mono_now() clock; 0 none */
	char *state_dir;	/* excluded from "files" */
	int retry;		/* the operator chose Reset or Modify */
	int lock;		/* the circuit's lock fd */
	char *status_file;	/* $CBEXEC_STATUS_FILE, beside the state */
};

/* What one run did, as run.c saw it; the loop judges and records it. */
struct run_done {
	struct sup_result r;
	int have_result;		/* r is filled (free it) */
	double started;			/* wall clock */
	struct status_report st;	/* what the command reported */
	struct status_report cmd;	/* --progress-cmd's metrics */
	struct prints before, after;	/* work-tree fingerprints */
	struct classification c;
	char *task;			/* the reported TASK as UTF-8, or NULL */
};

/* Run COMMAND once (run.c): 0 with *d filled (free it with
 * run_done_free), 1 when an operator signal came before it started
 * (nothing ran), -1 when cbexec itself failed (message printed). */
int run_once(struct inv *v, struct run_done *d);
void run_done_free(struct run_done *d);

/* The reporter for circuit c, its --log opened (circuit.c); 0, or -1 with
 * the message printed. */
int circuit_reporter(const struct options *o, const struct circuit *c,
    struct reporter *r);

/* The state directory: $CBEXEC_STATE_DIR, else
 * ${XDG_STATE_HOME:-$HOME/.local/state}/cbexec (circuit.c); malloc'd, or
 * NULL with the message in err. */
char *circuit_state_dir(char *err, size_t len);
/* s quoted for a POSIX shell (unchanged when it needs no quotes);
 * malloc'd, NULL on ENOMEM. */
char *shell_quote(const char *s);

#endif
