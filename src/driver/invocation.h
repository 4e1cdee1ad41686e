/* SPDX-License-Identifier: ISC */
/*
 * Shared by the files of driver/: the invocation the loop (driver.c)
 * drives, what one run (runonce.c) or one recorded result (record.c) hands
 * back to it, and the circuit's reporter (circuit.c).
 */
#ifndef CBEXEC_INVOCATION_H
#define CBEXEC_INVOCATION_H

#include "agent.h"
#include "cli.h"
#include "driver.h"
#include "judge.h"
#include "report.h"
#include "run.h"
#include "store.h"

struct inv {
	struct options *o;
	const struct circuit *c;
	struct cb_state s;
	struct reporter rep;
	struct progress_ctx px;	/* sources after resolving auto, phase */
	double deadline;	/* budget end, mono_now() clock; 0 none */
	char *state_dir;	/* excluded from "files" */
	int retry;		/* the operator chose Reset or Modify */
	int last;		/* no run follows the one under way */
	struct store *st;	/* the circuit's store, its lock held */
	int fallback;		/* on the local state: --store-fallback */
	char store_err[CB_ERRLEN];	/* why the store's keepalive failed */
	char store_label[256];	/* --store without its password, or "" */
	char *status_file;	/* $CBEXEC_STATUS_FILE, beside the state */
	int loaded;		/* s holds a loaded state (free it) */
	const struct agent *agent;	/* the client COMMAND runs, or NULL */
	double retry_after;	/* the last run's provider asked to wait */
	double wait_until;	/* ADMIT_WAIT: --loop sleeps until then */
	char *acct_who;		/* the circuit as the document names it */
	int out_closed;		/* the last run found our stdout closed
				 * downstream: the loop ends */
	int write_err;		/* writing the command's output failed
				 * (errno, said once): 125 at the end */
	struct store_run killed;	/* the start record found under the
					 * lock: a run never counted */
	int outputs_new;	/* the state remembers a file of this
				 * invocation that no save has carried yet */
	int hot_said;		/* the hot --loop was warned of */
};

/* What one run did, as runonce.c saw it; the loop judges and records it. */
struct run_done {
	struct sup_result r;
	int have_result;		/* r is filled (free it) */
	double started;			/* wall clock */
	struct status_report st;	/* what the command reported */
	struct status_report cmd;	/* --progress-cmd's metrics */
	struct prints before, after;	/* work-tree fingerprints */
	struct classification c;
	char *task;			/* the reported TASK as UTF-8, or NULL */
	int progress;			/* --record --progress yes/no: 1/0;
					 * -1: judged as SPEC §3.1 says */
	char *session;			/* the agent's session id, UTF-8 */
	double retry_at;		/* a usage limit's reset time, 0: none */
	double retry_after;		/* a transient error's wait, 0: none */
	int retry_capped;		/* the provider's time was over 31 days
					 * ahead: cut to that */
	/* cbexec stopped it for a reason of its own (SPEC §9): the type
	 * ("idle", "max_cost", ..., "loop"; NULL: none), its class and
	 * message */
	const char *stop_type;
	enum cb_class stop_cls;
	char stop_msg[512];
	struct agent_usage usage;	/* what the agent said it used */
	int have_usage;			/* a known agent ran */
	int killed;			/* a run whose cbexec was killed: its
					 * end never seen (killed_run()) */
};

/*
 * Take the circuit for v (driver.c): the lock (waiting as --wait-lock
 * says, within the budget), the state, the reporter and the progress
 * sources.  Returns -1 once it is taken, else the exit status (message
 * printed).  inv_end() lets it go again.
 */
int inv_begin(struct inv *v, struct options *o, const struct circuit *c);
void inv_end(struct inv *v);

/* Rewrite --metrics from v's state when it says something new; a
 * failure is a warning. */
void inv_metrics(struct inv *v);

/* The store's keepalive (struct sup_cfg's, arg the inv): the lease
 * renewed, the store's clock read; -1 with the reason in v->store_err. */
int inv_keepalive(void *arg);
/* The same without waiting (store_keepalive_async): 1 while pending. */
int inv_keepalive_async(void *arg);
/* The lease's local deadline, and the store's descriptor now, for the
 * run engine (sup_cfg). */
double inv_lease_until(void *arg);
int inv_store_fd(void *arg);

/* A run for a skipped phase (--phase) or task is not started: 1 after the
 * line that says so, else 0. */
int skipped(struct inv *v, const char *task);

/* Before a run (SPEC §4 rules 5 and 8): -1 when it may start, ADMIT_WAIT
 * when --loop should sleep until the circuit's retry time, else the exit
 * status (an OPEN circuit refuses: 120, said on stderr). */
#define ADMIT_WAIT (-2)
int admit(struct inv *v);

/*
 * Judge the run d, record it in the breaker, save and report it.  Returns
 * -1 to go on looping, else the invocation's exit status; *code gets the
 * run's own exit status, *failed whether it counts as a failure.
 */
int record(struct inv *v, const struct run_done *d, int *code, int *failed);

/*
 * The account's gate (accountgate.c, --account).  gate_admit: after the
 * circuit admitted a run, -1 when it may start, ADMIT_WAIT (wait_until
 * set) when --loop should sleep, else the exit status (120 refused, said
 * on stderr unless -q; 125, 123).  gate_learn: after the run d was
 * recorded, what it met goes into the gate; 0, or -1 with the message
 * printed.  gate_status: --status's rows for account on f (or with json
 * its document as one line of JSON, --json's "account_gate"); 1 when the gate refuses runs, 0 when not, -1 error.
 */
int gate_admit(struct inv *v);
int gate_learn(struct inv *v, const struct run_done *d, int ignored);
int gate_status(struct store *st, const char *account, FILE *f,
    char **json);
/* --status --all (text): one line per account of the store st. */
void gate_list(FILE *f, struct store *st);

/*
 * A run on record as begun (the start record r) that was never saved:
 * its cbexec was killed, and the run counts as failed (SPEC §11).  Its
 * classification into *c (free it): recoverable, type "killed", "cbexec
 * was killed during run N", one fingerprint whatever N.  0, or -1 when
 * out of memory.
 */
int killed_run(const struct store_run *r, struct classification *c);

/* Run COMMAND once (runonce.c): 0 with *d filled (free it with
 * run_done_free), 1 when an operator signal came before it started
 * (nothing ran), -1 when cbexec itself failed (message printed). */
int run_once(struct inv *v, struct run_done *d);
void run_done_free(struct run_done *d);
/* Classify what d->r holds (with a known agent's verdict ar, or NULL),
 * read when the provider said to try again, and take the task d->st and
 * the session ar report (runonce.c): 0, or -1 when out of memory (message
 * printed).  stdout counts only when with_stdout; a reset time given as a
 * delay counts from now (the store's clock). */
int run_judge(const struct options *o, struct run_done *d, int with_stdout,
    const struct agent_result *ar, double now);
/* The same for a run of the known agent a that is over (--record): d's
 * stdout read through its adapter and the watch over a run, as a run
 * reads it as it passes (runonce.c). */
int run_judge_agent(const struct options *o, const struct agent *a,
    struct run_done *d, double now);

/* The directory of named circuits (circuit.c): $CBEXEC_STATE_DIR, else
 * ${XDG_STATE_HOME:-$HOME/.local/state}/cbexec (malloc'd); NULL with the
 * reason in err. */
char *circuit_state_dir(char *err, size_t len);

/* The reporter for circuit c, its --log opened (circuit.c); 0, or -1 with
 * the message printed. */
int circuit_reporter(const struct options *o, const struct circuit *c,
    struct reporter *r);

/* The store's settings o gives (URL, lease, timeout cut to a third of
 * the lease with a notice, password, the state directory in dir, which
 * the caller frees), the rest of cfg zero. */
void circuit_store_cfg(const struct options *o, struct store_cfg *cfg,
    char **dir);
/* Open the store o names (c's circuit; c NULL: none, --status --all,
 * --reset-account) into *st: 0, or -1 with the message printed (the
 * store is unreachable: 125), -2 when a signal ended the wait (122).
 * With fallback and --store-fallback local, an unreachable store gives
 * the local state file instead, said on stderr: 1. */
int circuit_store(const struct options *o, const struct circuit *c,
    struct store **st, int fallback);

/*
 * The files the circuit's runs write besides the state (outputs.c, SPEC
 * §11).  outputs_remember: r's --metrics and --log file (not a stream)
 * put on s's list for this host at time now: 1 when s changed so that a
 * save must carry it (a file new to it, or other labels), 0 when only
 * the time moved, -1 out of memory.  outputs_forget_gone: this host's
 * files that are no longer there dropped from s; how many.
 * outputs_open_logs: this host's logs other than r's --log added to r
 * (reporter_add_log), so an operator's act is written there too.
 * outputs_refresh: this host's textfiles other than r's --metrics
 * rewritten from s with the labels they were written with (an account's
 * gate read from st): with OUTPUTS_LOCKED in how (the circuit's lock
 * held) when what they say changed, else only those that show an older
 * generation of the state; with OUTPUTS_OWN r's --metrics too; with
 * OUTPUTS_ACCOUNT only the files labelled with r's account, also those
 * that show s's generation (the gate changed, the state did not).  A file
 * that is gone is not made anew.  outputs_host: this
 * host's name as the records keep it.
 */
int outputs_remember(struct cb_state *s, const struct reporter *r,
    double now);
int outputs_forget_gone(struct cb_state *s);
void outputs_open_logs(const struct cb_state *s, struct reporter *r);
#define OUTPUTS_LOCKED 1	/* the circuit's lock is held */
#define OUTPUTS_OWN 2		/* r's --metrics too */
#define OUTPUTS_ACCOUNT 4	/* only r's account's, its gate changed */
void outputs_refresh(const struct cb_state *s, struct reporter *r,
    struct store *st, int how);
const char *outputs_host(void);

/* The working directory's circuit as it was kept before, in the tree. */
#define LEGACY_STATE ".cbexec/state.json"

/*
 * c is the working directory's circuit, st (locked) has no state for it
 * yet, and LEGACY_STATE is there: move that state into st (store_adopt:
 * saved, *s replaced; the old file renamed to LEGACY_STATE.migrated) and
 * say so: 1.  0 when there is nothing to move; -1 with err when it cannot
 * be read (it may be OPEN: never passed over) or saved.
 */
int circuit_migrate(const struct circuit *c, struct store *st,
    struct cb_state *s, char *err, size_t len);

/* Take c's lock in st, waiting up to wait seconds (< 0 forever, 0 not at
 * all); an operator signal ends the wait.  0, or the exit status as a
 * negative number, the message printed: BUSY, TIMEOUT when budget says
 * the wait was cut to the budget, ABORT when interrupted, ERROR. */
int circuit_lock(const struct options *o, const struct circuit *c,
    struct store *st, double wait, int budget);

#endif
