/*
 * The parts of one invocation that driver.c (the loop), run.c (one run)
 * and judge.c (progress) share.  Private to those three files.
 */
#ifndef CBEXEC_INVOCATION_H
#define CBEXEC_INVOCATION_H

#include "cli.h"
#include "driver.h"
#include "report.h"
#include "progress.h"
#include "status.h"

struct inv {
	struct options *o;
	const struct circuit *c;
	struct cb_state s;
	struct reporter rep;
	const struct phase_def *phase;
	unsigned sources;	/* PROG_* after resolving auto */
	double deadline;	/* budget end, mono_now() clock; 0 none */
	char *state_dir;	/* excluded from "files" */
	int retry;		/* the operator chose Reset or Modify */
};

/* Fingerprints before or after a run; "" when the source is off. */
struct prints {
	char git[DIGEST_HEX_LEN + 1];
	char files[DIGEST_HEX_LEN + 1];
	struct files_watch *fw;	/* before: what changed since "files" */
};

/* Save the state; -1 with the message printed. */
int save(struct inv *v);
/* Log and hook every transition in res; before: counters for hooks. */
void report_result(struct inv *v, const struct cb_result *res,
    const struct cb_state *before);
void set_str(char **dst, const char *s);
/* The circuit just opened: the OPEN block, and the menu on a terminal.
 * -1 to go on, else the exit status. */
int opened(struct inv *v, const struct status_report *st, int code);
int in_codes(const struct codes *c, int v);

/* One run and everything after it (run.c): -1 to go on looping, else
 * the invocation's exit status; *code: the run's own exit status. */
int one_run(struct inv *v, int *code, int *failed);

/* Work-tree fingerprints for the enabled sources (judge.c): before the
 * run (before NULL), or after it, when before's watch may spare a walk
 * (and is freed). */
void take_prints(struct inv *v, struct prints *p, struct prints *before);
/* SPEC §3.1: did this run make progress? */
int judge_progress(struct inv *v, const struct prints *before,
    const struct prints *after, const struct status_report *st,
    const struct status_report *cmd, int success);

#endif
