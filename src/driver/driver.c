/* SPDX-License-Identifier: ISC */
/*
 * The loop of one invocation.  Under the circuit's lock: load the state,
 * then before each run ask the breaker for admission, hand the run to
 * runonce.c, judge and record what it did (the breaker, the durable save, the
 * report), and decide whether to go on: -n, --loop, --until-success, the
 * budget, --delay and --backoff.  When the circuit opens, the OPEN block
 * and, on a terminal, the menu.  A provider's usage limit opens the
 * circuit until its reset time instead (SPEC §4 rule 8): there is nothing
 * to ask an operator, and --loop sleeps until then when the budget
 * allows.  The exit status follows SPEC §2: the command's own, unless
 * cbexec intervened.
 *
 * A run for a skipped phase or task (SPEC §9) is not started: the check
 * comes before the breaker's, so a phase given up needs no closed circuit.
 * A task the command reports only in its status block is known after the
 * run: such a run made no progress, whatever it did, and never counts
 * toward the same-task rule (the command was told the skipped tasks in
 * CBEXEC_SKIPPED_TASKS).  --record (record.c) takes the same circuit
 * through inv_begin() and applies its result through record().
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "driver.h"
#include "invocation.h"
#include "judge.h"
#include "store.h"
#include "run.h"

static int
save(struct inv *v)
{
	char err[CB_ERRLEN];

	/* Still the holder of the circuit's lock (file or lease), and in a
	 * shared store over the generation loaded, or none is saved. */
	if (store_save(v->st, &v->s, err, sizeof(err)) < 0) {
		fprintf(stderr, "cbexec: %s\n", err);
		return -1;
	}
	v->outputs_new = 0;
	return 0;
}

/* An invocation that saves nothing (a refusal, a skipped run) still puts
 * a file new to the circuit on record, or a reset would never know to
 * rewrite it (SPEC §11); once per file, so no refusal after it saves. */
static void
carry_outputs(struct inv *v)
{
	if (v->outputs_new)
		(void)save(v);
}

/* The --metrics textfile says what the state now says: after a run, a
 * transition and a refusal alike (the file is left as it is when that
 * has not changed). */
void
inv_metrics(struct inv *v)
{
	char err[CB_ERRLEN];

	if (v->rep.metrics_path != NULL &&
	    report_metrics(&v->rep, &v->s, err, sizeof(err)) == -1)
		report_warn(&v->rep, "%s", err);
}

/* The time for the breaker: the shared store's clock, so every host
 * means the same instant by opened_at and retry_at. */
static double
now(const struct inv *v)
{
	return store_now(v->st);
}

int
inv_keepalive(void *arg)
{
	struct inv *v = arg;

	return store_keepalive(v->st, v->store_err, sizeof(v->store_err));
}

/* The same on the run engine's loop: 1 while the answer is awaited. */
int
inv_keepalive_async(void *arg)
{
	struct inv *v = arg;

	return store_keepalive_async(v->st, v->store_err,
	    sizeof(v->store_err));
}

double
inv_lease_until(void *arg)
{
	struct inv *v = arg;

	return store_lease_until(v->st);
}

int
inv_store_fd(void *arg)
{
	struct inv *v = arg;

	return store_fd(v->st);
}

/* While a helper runs: the lease renewed when a third of it has gone. */
static int
inv_keep_fresh(void *arg)
{
	struct inv *v = arg;

	return store_fresh(v->st) ? 0 : inv_keepalive(v);
}

/* sup_sleep() in pieces short enough to keep a lease alive between them;
 * 3 when the store's lease was lost (message in v->store_err). */
static int
inv_sleep(struct inv *v, double secs)
{
	double step, end = mono_now() + secs, left;
	int rc;

	if ((step = store_keepalive_every(v->st)) <= 0)
		return sup_sleep(secs, v->deadline);
	for (;;) {
		left = end - mono_now();
		if ((rc = sup_sleep(left > step ? step : left > 0 ? left : 0,
		    v->deadline)) != 0)
			return rc;
		if (inv_keep_fresh(v) == -1)
			return 3;
		if (left <= step)
			return 0;
	}
}

/* The budget ran out between runs (a --delay or --backoff pause): the
 * exit status is 124 as when it stops a run, and the state says why. */
static int
budget_spent(struct inv *v)
{
	report_event(&v->rep, "budget", "spent before the next run");
	v->s.outcome = OUT_TIMEOUT;
	return save(v) == -1 ? CB_EXIT_ERROR : CB_EXIT_TIMEOUT;
}

/* --loop waits for an OPEN circuit's retry time when the budget lasts
 * that long (SPEC §4 rule 8); wait_until says until when. */
static int
waitable(struct inv *v)
{
	double until;

	if (!v->o->loop || v->s.state != CB_OPEN || v->s.retry_at < 0 ||
	    v->s.tripped)
		return 0;
	until = mono_now() + (v->s.retry_at - now(v));
	v->wait_until = v->s.retry_at;
	return v->deadline <= 0 || until <= v->deadline;
}

static void
report_result(struct inv *v, const struct cb_result *res,
    const struct cb_state *before)
{
	int i;

	for (i = 0; i < res->n; i++)
		report_transition(&v->rep, &res->t[i], before, v->s.iteration);
}

/* Backoff before the next run after n consecutive failures. */
#define GUIDANCE_MAX 4096

static double
backoff_delay(const struct options *o, int n)
{
	double d;

	if (o->backoff <= 0 || n <= 0)
		return 0;
	d = o->backoff;
	while (--n > 0 && d < o->backoff_max)
		d *= 2;
	if (d > o->backoff_max)
		d = o->backoff_max;
	/* ±20% jitter so that many agents do not retry in lock step. */
	return d * (0.8 + 0.4 * ((double)random() / RAND_MAX));
}

/*
 * The circuit has just opened.  Without a terminal, the exit status says
 * so.  With one, the menu: returns -1 to go on (Reset, Modify), else the
 * exit status.
 */
static int
opened(struct inv *v, const struct status_report *st, int code)
{
	struct cb_result res;
	struct cb_state before;
	char *guidance = NULL;
	double t;
	int choice;

	report_open_block(&v->rep, &v->s, st, v->c->reset_hint);
	if (v->o->no_prompt || !isatty(STDIN_FILENO) || !isatty(STDERR_FILENO))
		return code;
again:
	choice = menu_ask(&guidance);
	switch (choice) {
	case 's':
		/* Skip gives up the task the circuit is stuck on, else the
		 * phase; with neither there is nothing to move on to. */
		if (v->s.stuck_task == NULL && v->s.phase == NULL) {
			fputs("Nothing to skip: no phase (--phase) and no "
			    "task stuck.\n", stderr);
			goto again;
		}
		breaker_snapshot(&v->s, &before);
		t = now(v);
		if (breaker_skip(&v->s, &v->o->limits, v->s.stuck_task != NULL ?
		    SKIP_TASK : SKIP_PHASE, v->s.stuck_task != NULL ?
		    v->s.stuck_task : v->s.phase, "skipped from the menu",
		    getenv("USER"), t, &res) == -1) {
			fprintf(stderr, "cbexec: cannot record the skip: %s\n",
			    v->s.n_skips >= CB_SKIPS_MAX ? "too many skips "
			    "kept (unskip some, or reset)" : "out of memory");
			goto again;
		}
		if (save(v) == -1)
			return CB_EXIT_ERROR;
		report_skip(&v->rep, "skip", &res, &before, v->s.state,
		    v->s.iteration, getenv("USER"), t);
		inv_metrics(v);
		return CB_EXIT_OK;
	case 'm':
		/* Typed at a terminal: make it UTF-8, and short enough
		 * that CBEXEC_GUIDANCE never makes exec fail with E2BIG. */
		if (strlen(guidance) > GUIDANCE_MAX)
			guidance[GUIDANCE_MAX] = '\0';
		{
			char *g = utf8_sanitize(guidance, strlen(guidance));

			breaker_set_str(&v->s.guidance, g != NULL ? g : "");
			free(g);
		}
		report_event(&v->rep, "guidance", guidance);
		free(guidance);
		/* FALLTHROUGH */
	case 'r':
		breaker_snapshot(&v->s, &before);
		t = now(v);
		breaker_reset(&v->s, &v->o->limits, choice == 'm' ?
		    "reset with new guidance" : "reset from the menu",
		    getenv("USER"), t, &res);
		report_act(&v->rep, "reset", choice == 'm' ?
		    "reset with new guidance" : "reset from the menu",
		    getenv("USER"), v->s.iteration, t);
		report_result(v, &res, &before);
		v->retry = 1;
		if (save(v) == -1)
			return CB_EXIT_ERROR;
		inv_metrics(v);
		return -1;
	default:
		v->s.outcome = OUT_ABORT;
		return save(v) == -1 ? CB_EXIT_ERROR : CB_EXIT_ABORT;
	}
}

static char *
dir_of(const char *path)
{
	char *d = strdup(path), *slash;

	if (d == NULL)
		return NULL;
	if ((slash = strrchr(d, '/')) == NULL) {
		free(d);
		return strdup(".");
	}
	if (slash == d)
		slash[1] = '\0';
	else
		*slash = '\0';
	return d;
}

/* What the agent's run used, into the circuit's totals and ledger. */
static void
spend(struct inv *v, const struct run_done *d)
{
	const struct agent_usage *a = &d->usage;
	struct cb_usage u;
	double keep = v->o->max_cost_span > v->o->max_tokens_span ?
	    v->o->max_cost_span : v->o->max_tokens_span;

	u.cost_usd = a->cost_usd;
	u.input_tokens = a->input_tokens;
	u.output_tokens = a->output_tokens;
	u.cache_tokens = a->cache_read_tokens;
	if (a->cache_write_tokens >= 0)
		u.cache_tokens = (u.cache_tokens > 0 ? u.cache_tokens : 0) +
		    a->cache_write_tokens;
	u.turns = a->turns;
	breaker_spend(&v->s, agent_name(v->agent), &u, now(v), keep);
}

static int spend_hold(struct inv *v, double now, struct cb_result *res);

/* A run's spending took a window to its cap: the circuit is held OPEN
 * from this run on, its transitions added to the run's in res. */
static void
spend_crossed(struct inv *v, struct cb_result *res)
{
	struct cb_result hold;
	int i;

	if (!spend_hold(v, now(v), &hold))
		return;
	for (i = 0; i < hold.n && res->n < (int)NELEM(res->t); i++)
		res->t[res->n++] = hold.t[i];
	res->outcome = hold.outcome;
}

static int
in_codes(const struct codes *c, int v)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->v[i] == v)
			return 1;
	return 0;
}

/* The exit status a run stands for on its own (SPEC §2); fatal: its class
 * is fatal and its exit code is not one --ignore-exit-codes names. */
static int
run_exit(const struct sup_result *r, int fatal)
{
	if (r->exec_errno != 0)
		return r->exec_errno == ENOENT ? CB_EXIT_NOTFOUND :
		    CB_EXIT_NOEXEC;
	if (r->timed_out)
		return CB_EXIT_TIMEOUT;
	if (fatal)
		return CB_EXIT_ABORT;
	if (r->signo != 0)
		return CB_EXIT_SIGNAL + r->signo;
	return r->exit_code;
}

/*
 * Writing the command's output to ours failed for a reason other than a
 * reader that went away (EPIPE): a full disk, EIO.  That output is lost,
 * which is cbexec's failure, not the command's: said once, and the
 * invocation exits 125 at the end (driver_run).
 */
static void
out_errors(struct inv *v, const struct sup_result *r)
{
	int e = r->out_werr != 0 ? r->out_werr : r->err_werr;

	if (e == 0 || v->write_err != 0)
		return;
	v->write_err = e;
	fprintf(stderr, "cbexec: write error on standard %s: %s; the "
	    "command's output is lost from there on\n", r->out_werr != 0 ?
	    "output" : "error", strerror(e));
}

static enum cb_outcome
run_outcome(const struct sup_result *r, int fatal)
{
	if (r->exec_errno != 0)
		return r->exec_errno == ENOENT ? OUT_NOTFOUND : OUT_NOEXEC;
	if (r->timed_out)
		return OUT_TIMEOUT;
	if (fatal)
		return OUT_ABORT;
	if (r->signo != 0)
		return OUT_SIGNAL;
	return r->exit_code == 0 ? OUT_OK : OUT_EXIT;
}

/*
 * A run judged a failure never exits 0, whatever the command exited
 * (SPEC §11): a client that stopped itself in a loop gives 124, as a loop
 * cbexec stopped does; any other failure read from its output, 1.  Nor
 * does a known client's own exit status above 128 (Gemini CLI exits with
 * an API error's HTTP status & 0xFF: 144 for 400, 173 for 429) pass for
 * a signal (SPEC §2's 128+N): it gives 1 too.  The state says what the
 * command did (last_error.exit_code), the outcome what cbexec exits for.
 */
static void
never_ok(struct inv *v, const struct run_done *d, const struct cb_result *res,
    int *code, int failed, int fatal)
{
	const struct sup_result *r = &d->r;
	int own = r->exec_errno == 0 && r->signo == 0 && !r->timed_out &&
	    *code == r->exit_code;

	if (!failed || fatal || !own)
		return;
	if (*code == 0 && strcmp(d->c.type, "loop") == 0)
		*code = CB_EXIT_TIMEOUT;
	else if (*code == 0 || (*code > CB_EXIT_SIGNAL && v->agent != NULL))
		*code = 1;
	else
		return;
	if (res->outcome == OUT_OK)
		v->s.outcome = *code == CB_EXIT_TIMEOUT ? OUT_TIMEOUT : OUT_EXIT;
}

int
record(struct inv *v, const struct run_done *d, int *code, int *failed)
{
	struct options *o = v->o;
	const struct sup_result *r = &d->r;
	struct cb_run run;
	struct cb_result res;
	struct run_report rr;
	double at;
	int progress, success, fatal;

	success = d->c.cls == CB_CLASS_SUCCESS;
	progress = d->progress >= 0 ? d->progress :
	    judge_progress(&v->px, &v->s.last_progress_metric, &d->before,
	    &d->after, &d->st, &d->cmd, success);
	/* A run that ended waiting for an approval nobody could give made
	 * no progress, whatever it changed on the way (SPEC §10). */
	if (strcmp(d->c.type, "blocked") == 0)
		progress = 0;

	memset(&run, 0, sizeof(run));
	run.task = d->task != NULL ? d->task : o->task;
	/* Work on a task given up is no progress, and the task rule must
	 * not trip on it again. */
	if (run.task != NULL && breaker_skipped(&v->s, NULL, run.task)) {
		report_warn(&v->rep, "run %ld worked on skipped task %s "
		    "(CBEXEC_SKIPPED_TASKS names it): no progress",
		    v->s.iteration + 1, run.task);
		progress = 0;
		run.task = NULL;
	}
	run.progress = progress;
	/* Whether a killed run made progress was never seen: it neither
	 * counts as none nor clears the count. */
	run.unseen = d->killed;
	run.ignored = r->exec_errno == 0 && r->signo == 0 && !r->timed_out &&
	    in_codes(&o->ignore_codes, r->exit_code) && !success;
	/* Our stdout was closed downstream (`cbexec --loop ... | head`):
	 * a run that then failed (SIGPIPE, EPIPE) did so for want of a
	 * reader, which is nothing against the command. */
	v->out_closed = !d->killed && (r->out_gone || (o->no_capture_stdout &&
	    r->exec_errno == 0 && sup_stdout_gone()));
	if (v->out_closed && !success && r->exec_errno == 0 && !run.ignored)
		run.ignored = CB_IGNORED_CLOSED;
	out_errors(v, r);
	run.cls = d->c.cls;
	run.type = d->c.type;
	run.message = d->c.message;
	run.hash = d->c.hash;
	run.exit_code = r->signo != 0 ? CB_EXIT_SIGNAL + r->signo :
	    r->exit_code;
	if (r->exec_errno != 0)
		run.exit_code = r->exec_errno == ENOENT ? CB_EXIT_NOTFOUND :
		    CB_EXIT_NOEXEC;
	run.usage_limit = d->c.cls == CB_CLASS_TRANSIENT &&
	    strcmp(d->c.type, "usage_limit") == 0;
	run.retry_at = d->retry_at;
	run.retry_after = d->retry_after;
	run.complete = status_done(&d->st);
	v->retry_after = d->retry_after;
	if (d->retry_capped)
		report_warn(&v->rep, "the provider's reset time was more than "
		    "31 days ahead: waiting 31 days at most");

	at = now(v);
	breaker_record(&v->s, &o->limits, &run, at, &res);
	/* --record and a killed run have no duration to tell. */
	v->s.last_run_seconds = o->mode == MODE_RECORD || d->killed ? -1 :
	    r->duration;
	if (d->have_usage) {
		spend(v, d);
		/* The run that takes a spend window to its cap opens the
		 * circuit itself (120), in the same save, rather than
		 * leaving it to the next invocation's refusal. */
		if (v->s.state != CB_OPEN)
			spend_crossed(v, &res);
	}
	if (d->session != NULL)
		breaker_set_str(&v->s.session_id, d->session);
	if (d->after.git[0] || d->after.files[0])
		breaker_set_str(&v->s.last_fingerprint, d->after.git[0] ?
		    d->after.git : d->after.files);
	/* An exit code the caller said to ignore is never fatal either. */
	fatal = d->c.cls == CB_CLASS_FATAL && !run.ignored;
	*code = run_exit(r, fatal);
	*failed = !success && !run.ignored;
	v->s.outcome = res.outcome != OUT_OK ? res.outcome :
	    run_outcome(r, fatal);
	/* A per-run spend cap is a limit of cbexec's, also when the figure
	 * came only with the result, after the command had exited. */
	if (d->c.cls == CB_CLASS_BUDGET) {
		*code = CB_EXIT_TIMEOUT;
		if (res.outcome == OUT_OK)
			v->s.outcome = OUT_BUDGET;
	}
	never_ok(v, d, &res, code, *failed, fatal);
	if (sup_aborted())
		v->s.outcome = OUT_ABORT;
	/* Nothing of the run is left (sup_run saw to it): the watchdog
	 * exits while the state is written, not after. */
	if (v->last)
		sup_unguard();
	if (save(v) == -1)
		return CB_EXIT_ERROR;

	memset(&rr, 0, sizeof(rr));
	rr.iteration = v->s.iteration;
	rr.at = at;
	rr.started = d->started;
	rr.duration = v->s.last_run_seconds;
	rr.exit_code = r->exec_errno ? run.exit_code : r->exit_code;
	rr.signo = r->signo;
	rr.timed_out = r->timed_out;
	rr.progress = progress;
	rr.ignored = run.ignored;
	rr.complete = run.complete;
	rr.stopped = d->stop_type != NULL && strcmp(d->stop_type, "idle") != 0;
	rr.c = &d->c;
	rr.usage = d->have_usage ? &v->s.last_usage : NULL;
	rr.task = run.task;
	report_run(&v->rep, &rr);
	/* The hook sees the counters that caused the transition. */
	report_result(v, &res, &v->s);
	/* What the provider said holds for every circuit on the account (a
	 * killed run said nothing, not even that a trial is over). */
	if (gate_learn(v, d, run.ignored || d->killed) == -1)
		return CB_EXIT_ERROR;
	inv_metrics(v);
	/* --on-run's end, once everything of the run is saved and told. */
	{
		struct run_hook_event he = { .end = 1,
		    .iteration = v->s.iteration, .phase = v->s.phase,
		    .state = v->s.state, .rr = &rr, .exit_status = *code };

		report_run_hook(&v->rep, &he);
	}

	if (sup_aborted())
		return CB_EXIT_ABORT;
	if (res.outcome == OUT_OPEN && v->s.retry_at >= 0) {
		/* Nothing an operator could do: wait, or say so. */
		report_open_block(&v->rep, &v->s, &d->st, v->c->reset_hint);
		return waitable(v) ? -1 : CB_EXIT_OPEN;
	}
	if (res.outcome == OUT_OPEN || res.outcome == OUT_STUCK ||
	    res.outcome == OUT_ABORT)
		return opened(v, &d->st, res.outcome == OUT_OPEN ?
		    CB_EXIT_OPEN : res.outcome == OUT_STUCK ? CB_EXIT_STUCK :
		    r->exec_errno != 0 ? *code : CB_EXIT_ABORT);
	if (r->budget_expired)
		return CB_EXIT_TIMEOUT;
	/* a run over its spend cap: the next would be too */
	if (d->c.cls == CB_CLASS_BUDGET)
		return CB_EXIT_TIMEOUT;
	if (fatal)
		return *code;
	/* The work is done: the loop ends, and says so where scripts can
	 * read it (SPEC §11) -- unless the run failed, which it says. */
	if (run.complete)
		return *failed ? *code : CB_EXIT_COMPLETE;
	return -1;
}

/* Refused: exit 120.  Under -q silently: the run that opened the circuit
 * reported it, and cron would mail this line every time until a reset. */
static int
refuse(struct inv *v)
{
	char in[32] = "", d[24];
	long secs;

	if (v->o->verbosity < 0)
		return CB_EXIT_OPEN;
	if (v->s.retry_at >= 0) {
		/* whole seconds, rounded up: never "in 0s" before it */
		secs = (long)(v->s.retry_at - now(v)) + 1;
		snprintf(in, sizeof(in), " (retry in %s)", duration_format(
		    (double)(secs > 0 ? secs : 0), d, sizeof(d)));
	}
	/* One line whatever the reason says (an operator's --reason). */
	fputs("cbexec[", stderr);
	text_put(stderr, v->c->label);
	fputs("]: circuit is OPEN", stderr);
	if (v->s.open_reason != NULL) {
		fputs(": ", stderr);
		text_put(stderr, v->s.open_reason);
	}
	fprintf(stderr, "%s; not running. Reset: ", in);
	text_put(stderr, v->c->reset_hint);
	fputc('\n', stderr);
	return CB_EXIT_OPEN;
}

/* The lease went to another holder while we waited: nothing of ours may
 * be saved now. */
static int
store_lost(struct inv *v)
{
	fprintf(stderr, "cbexec: %s; not going on\n", v->store_err);
	return CB_EXIT_ERROR;
}

/* Sleep until the circuit's retry time, then the loop tries again.
 * -1 to go on, else the exit status. */
static int
wait_retry(struct inv *v)
{
	double secs = v->wait_until - now(v);
	char d[24];
	int rc;

	if (v->o->verbosity >= 0)
		fprintf(stderr, "cbexec[%s]: waiting %s for the retry time\n",
		    v->c->label, duration_format(secs > 0 ? secs : 0, d,
		    sizeof(d)));
	/* a little past it, so the wall clock has surely reached it */
	if ((rc = inv_sleep(v, secs + 0.05)) == 1)
		return budget_spent(v);
	if (rc == 3)
		return store_lost(v);
	if (rc == 2) {
		v->s.outcome = OUT_ABORT;
		return save(v) == -1 ? CB_EXIT_ERROR : CB_EXIT_ABORT;
	}
	return -1;
}

/* Take the circuit's lock, waiting as --wait-lock says, within the
 * budget: the lock fd, or the exit status as a negative number. */
static int
take_lock(const struct options *o, const struct circuit *c, struct store *st)
{
	double wait = o->wait_lock;

	/* --wait-lock waits within the budget, which counts from here. */
	if (wait != 0 && o->budget > 0 && (wait < 0 || wait > o->budget))
		wait = o->budget;
	return circuit_lock(o, c, st, wait, wait != o->wait_lock);
}

/* Interrupted between runs: no new run; the state says so when a run
 * was recorded in this invocation. */
static int
interrupted(struct inv *v, long runs)
{
	if (runs == 0)
		return CB_EXIT_ABORT;
	v->s.outcome = OUT_ABORT;
	return save(v) == -1 ? CB_EXIT_ERROR : CB_EXIT_ABORT;
}

/*
 * A spend window over its cap (SPEC §9): the circuit is held OPEN until
 * enough of the window has rolled off, as for a usage limit (rule 8).
 * 1 when it was, with the transition in *res.
 */
static int
spend_hold(struct inv *v, double now, struct cb_result *res)
{
	const struct options *o = v->o;
	double spent, frees, at = 0;
	char what[256] = "", d[24];
	int n;

	v->s.cost_window = o->max_cost_window;
	v->s.cost_window_span = o->max_cost_span;
	v->s.tokens_window = (double)o->max_tokens_window;
	v->s.tokens_window_span = o->max_tokens_span;

	if (o->max_cost_window > 0) {
		spent = breaker_window(&v->s, now, o->max_cost_span, 0,
		    o->max_cost_window, &frees);
		if (spent >= o->max_cost_window) {
			snprintf(what, sizeof(what), "spend cap: %g of %g "
			    "USD in %s", spent, o->max_cost_window,
			    duration_format(o->max_cost_span, d, sizeof(d)));
			at = frees;
		}
	}
	if (o->max_tokens_window > 0) {
		spent = breaker_window(&v->s, now, o->max_tokens_span, 1,
		    (double)o->max_tokens_window, &frees);
		if (spent >= (double)o->max_tokens_window) {
			n = (int)strlen(what);
			snprintf(what + n, sizeof(what) - (size_t)n, "%s%.0f of "
			    "%ld tokens in %s", n > 0 ? ", " : "spend cap: ",
			    spent, o->max_tokens_window, duration_format(
			    o->max_tokens_span, d, sizeof(d)));
			if (frees > at)
				at = frees;
		}
	}
	if (what[0] == '\0')
		return 0;
	breaker_hold(&v->s, &o->limits, what, at, now, res);
	return 1;
}

int
admit(struct inv *v)
{
	struct cb_result res;
	/* The shared store's clock, as every time the breaker is given. */
	double now = store_now(v->st);

	int go = breaker_admit(&v->s, &v->o->limits, now, &res), rc;

	if (res.n > 0) {
		report_result(v, &res, &v->s);
		if (save(v) == -1)
			return CB_EXIT_ERROR;
		inv_metrics(v);
	}
	if (go && spend_hold(v, now, &res)) {
		go = 0;
		report_result(v, &res, &v->s);
		if (save(v) == -1)
			return CB_EXIT_ERROR;
	}
	if (!go) {
		/* Refused: opened here, by an operator or by another host,
		 * and the textfile may not say so yet. */
		carry_outputs(v);
		inv_metrics(v);
		if (waitable(v))
			return ADMIT_WAIT;
		/* --record prints nothing unless asked (-v). */
		return v->rep.verbosity > -2 ? refuse(v) : CB_EXIT_OPEN;
	}
	/* The circuit admits the run; the provider's account may not. */
	if ((rc = gate_admit(v)) == CB_EXIT_OPEN || rc == ADMIT_WAIT) {
		carry_outputs(v);
		inv_metrics(v);
	}
	return rc;
}

/* The command that unskips name on this circuit: the reset hint with
 * --unskip NAME (shell-quoted) in place of --reset-circuit. */
static char *
unskip_hint(const char *reset_hint, const char *name)
{
	const char *at = reset_hint != NULL ?
	    strstr(reset_hint, "--reset-circuit") : NULL;
	char *q, *hint = NULL;

	if (at == NULL || (q = shell_quote(name)) == NULL)
		return NULL;
	if (asprintf(&hint, "%.*s--unskip %s%s", (int)(at - reset_hint),
	    reset_hint, q, at + strlen("--reset-circuit")) == -1)
		hint = NULL;
	free(q);
	return hint;
}

int
skipped(struct inv *v, const char *task)
{
	const struct cb_skip *k = breaker_skipped(&v->s, v->o->phase, task);
	char *hint;

	if (k == NULL)
		return 0;
	hint = unskip_hint(v->c->reset_hint, k->name);
	report_skipped(&v->rep, k, hint, v->o->mode == MODE_RECORD);
	free(hint);
	carry_outputs(v);
	inv_metrics(v);
	return 1;
}

int
killed_run(const struct store_run *r, struct classification *c)
{
	memset(c, 0, sizeof(*c));
	c->cls = CB_CLASS_RECOVERABLE;
	snprintf(c->type, sizeof(c->type), "killed");
	if (asprintf(&c->message, "cbexec was killed during run %ld",
	    r->run) == -1) {
		c->message = NULL;
		return -1;
	}
	/* The number is normalised away: every killed run is one error, so
	 * a command that kills its supervisor every time ends STUCK. */
	if (error_fingerprint(c->type, c->message, NULL, c->hash) == -1) {
		free(c->message);
		c->message = NULL;
		return -1;
	}
	return 0;
}

/*
 * The start record found under the lock names a run whose result was
 * never saved: the cbexec that ran it is gone, killed with its command
 * (SPEC §11).  It counts first, as a failed run, through the same
 * record() as any run.  -1 to go on, else the exit status (the count
 * opened the circuit, or the save failed).
 */
static int
count_killed(struct inv *v)
{
	const struct store_run *k = &v->killed;
	struct run_done d;
	char ts[40] = "?";
	int rc, code, failed;

	memset(&d, 0, sizeof(d));
	status_init(&d.st);
	status_init(&d.cmd);
	d.progress = 0;
	d.killed = 1;
	d.started = k->started;
	/* What the watchdog does to the command when cbexec dies. */
	d.r.signo = SIGKILL;
	d.r.exit_code = -1;
	if (killed_run(k, &d.c) == -1) {
		fprintf(stderr, "cbexec: %s\n", digest_error() != NULL ?
		    digest_error() : "out of memory");
		run_done_free(&d);
		return CB_EXIT_ERROR;
	}
	if (k->started >= 0)
		iso8601(k->started, ts, sizeof(ts));
	report_warn(&v->rep, "run %ld (cbexec pid %ld on %s, since %s) was "
	    "never recorded: its cbexec was killed; counted as a failed run",
	    k->run, k->pid, k->host[0] != '\0' ? k->host : "?", ts);
	rc = record(v, &d, &code, &failed);
	run_done_free(&d);
	memset(&v->killed, 0, sizeof(v->killed));
	return rc;
}

int
inv_begin(struct inv *v, struct options *o, const struct circuit *c)
{
	char err[CB_ERRLEN];
	int rc;

	memset(v, 0, sizeof(*v));
	v->o = o;
	v->c = c;
	if (o->budget > 0)
		v->deadline = mono_now() + o->budget;
	/* git, --progress-cmd and the hook never outlast the budget. */
	child_budget(v->deadline);
	v->rep.log_fd = -1;
	if (o->store != NULL && store_url_check(o->store, v->store_label,
	    sizeof(v->store_label), err, sizeof(err)) == -1) {
		fprintf(stderr, "cbexec: %s\n", err);
		return CB_EXIT_ERROR;
	}
	if ((rc = circuit_store(o, c, &v->st, 1)) < 0)
		return rc == -2 ? CB_EXIT_ABORT : CB_EXIT_ERROR;
	v->fallback = rc == 1;
	if ((rc = take_lock(o, c, v->st)) < 0) {
		store_close(v->st);
		v->st = NULL;
		return -rc;
	}
	/* git, --progress-cmd and the hook do not outlast the lease. */
	if (store_keepalive_every(v->st) > 0)
		child_keepalive(inv_keep_fresh, v,
		    store_keepalive_every(v->st) / 2);
	/* With the state, the start record of a run whose result was never
	 * saved: under the lock, its cbexec is gone. */
	if ((rc = store_load(v->st, &v->s, &v->killed, err,
	    sizeof(err))) < 0) {
		fprintf(stderr, "cbexec: %s\n", err);
		store_close(v->st);
		v->st = NULL;
		return CB_EXIT_ERROR;
	}
	v->loaded = 1;
	/* A new circuit of the working directory takes over the state it
	 * had in the tree before (an upgrade never re-arms it). */
	if (rc == 1 && circuit_migrate(c, v->st, &v->s, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "cbexec: %s\n", err);
		inv_end(v);
		return CB_EXIT_ERROR;
	}
	/* The status file goes beside the local state, in the state
	 * directory, also when the state itself is in a shared store. */
	if (file_mkdirs(c->path, err, sizeof(err)) == -1) {
		fprintf(stderr, "cbexec: %s\n", err);
		inv_end(v);
		return CB_EXIT_ERROR;
	}
	if (circuit_reporter(o, c, &v->rep) == -1) {
		inv_end(v);
		return CB_EXIT_ERROR;
	}
	if (o->store != NULL) {
		v->rep.store = v->store_label;
		v->rep.store_fallback = v->fallback;
	}
	if (v->fallback)
		report_event(&v->rep, "store_fallback", "the store could not "
		    "be reached: running on the local state file");
	if (o->phase != NULL)
		breaker_set_str(&v->s.phase, o->phase);
	/* So that --status shows the gate without being told the account. */
	if (o->account != NULL)
		breaker_set_str(&v->s.account, o->account);
	v->state_dir = dir_of(c->path);
	if (asprintf(&v->status_file, "%s.status", c->path) == -1) {
		v->status_file = NULL;
		fprintf(stderr, "cbexec: out of memory\n");
		inv_end(v);
		return CB_EXIT_ERROR;
	}

	v->px.sources = o->progress & ~PROG_AUTO;
	if (o->progress & PROG_AUTO)
		v->px.sources |= (progress_in_git() ? PROG_GIT : PROG_EXIT) |
		    PROG_STATUS;
	v->px.phase = options_phase(o);
	v->px.files.watch = o->watch.v;
	v->px.files.n_watch = o->watch.n;
	v->px.files.exclude = o->exclude.v;
	v->px.files.n_exclude = o->exclude.n;
	v->px.files.state_dir = v->state_dir;
	v->px.files.skip = v->status_file;
	if (o->agent != NULL)
		v->agent = agent_by_name(o->agent);	/* NULL for "none" */
	else if (o->argv != NULL)
		v->agent = agent_detect(o->argv);
	/* A --timeout the --budget always cuts short is not the limit it
	 * looks like: say which one will stop the run. */
	if (o->argv != NULL && o->budget > 0 && o->timeout > o->budget &&
	    cli_given(o, "timeout")) {
		char t[24], b[24];

		report_warn(&v->rep, "--timeout %s is longer than --budget %s: "
		    "the budget stops the run first (exit 124)",
		    duration_format(o->timeout, t, sizeof(t)),
		    duration_format(o->budget, b, sizeof(b)));
	}
	/* A cap that cannot hold is said to be so, never left to look
	 * like one that does. */
	if (o->argv != NULL && (o->max_cost > 0 || o->max_tokens > 0 ||
	    o->max_turns > 0 || o->max_cost_window > 0 ||
	    o->max_tokens_window > 0) && (v->agent == NULL ||
	    o->no_capture_stdout))
		report_warn(&v->rep, "spend caps need a known agent's output "
		    "(--agent%s): nothing is counted for %s",
		    o->no_capture_stdout ? ", without --no-capture-stdout" :
		    "", o->argv[0]);
	/* The files this invocation writes are the circuit's (SPEC §11):
	 * remembered, so that an operator's act rewrites them; and what
	 * this host's files say is made true now, before anything runs (a
	 * verb on another host of a shared store may have changed it). */
	if ((rc = outputs_remember(&v->s, &v->rep, store_now(v->st))) == -1) {
		fprintf(stderr, "cbexec: out of memory\n");
		inv_end(v);
		return CB_EXIT_ERROR;
	}
	v->outputs_new = rc;
	outputs_refresh(&v->s, &v->rep, v->st, OUTPUTS_OWN);
	/* A run of a cbexec that was killed is counted before anything
	 * else happens to the circuit. */
	if (v->killed.run > 0 && (rc = count_killed(v)) >= 0) {
		inv_end(v);
		return rc;
	}
	return -1;
}

void
inv_end(struct inv *v)
{
	reporter_close(&v->rep);
	free(v->state_dir);
	v->state_dir = NULL;
	free(v->status_file);
	v->status_file = NULL;
	free(v->acct_who);
	v->acct_who = NULL;
	if (v->loaded)
		breaker_free(&v->s);
	v->loaded = 0;
	child_keepalive(NULL, NULL, 0);
	child_budget(0);
	store_close(v->st);
	v->st = NULL;
}

int
driver_run(struct options *o, const struct circuit *c)
{
	struct inv v;
	struct run_done d;
	long runs = 0;
	int rc, ret = CB_EXIT_ERROR, code = 0, failed = 0;

	srandom((unsigned)getpid() ^ (unsigned)time(NULL));

	menu_save_tty();
	if (sup_init() == -1) {
		fprintf(stderr, "cbexec: cannot set up: %s\n", strerror(errno));
		return CB_EXIT_ERROR;
	}
	if ((rc = inv_begin(&v, o, c)) >= 0) {
		sup_done();
		return rc;
	}
	/* A phase or task given up is "complete": not started (SPEC §9). */
	if (skipped(&v, o->task)) {
		ret = CB_EXIT_OK;
		goto out;
	}

	for (;;) {
		if (sup_interrupted()) {
			ret = interrupted(&v, runs);
			break;
		}
		/* Nobody reads our stdout any more: the loop ends as `yes`
		 * ends under `head`, with the last run's status. */
		if (runs > 0 && (v.out_closed || sup_stdout_gone())) {
			ret = code;
			break;
		}
		if (v.deadline > 0 && mono_now() >= v.deadline) {
			/* Before any run (a long --wait-lock) nothing ran
			 * and the state is left as it was. */
			if (runs == 0) {
				/* Said, never a silent 124: what took the
				 * time (git hung on a FIFO, a lock wait). */
				const char *why = progress_git_error();

				fprintf(stderr, "cbexec: circuit %s: the "
				    "--budget ran out before run %ld could "
				    "start%s%s; nothing ran\n", v.c->label,
				    v.s.iteration + 1, why != NULL ? ": " : "",
				    why != NULL ? why : "");
				ret = CB_EXIT_TIMEOUT;
			} else
				ret = budget_spent(&v);
			break;
		}
		if ((ret = admit(&v)) == ADMIT_WAIT) {
			if ((ret = wait_retry(&v)) >= 0)
				break;
			continue;
		}
		if (ret >= 0)
			break;
		v.last = o->iterations > 0 && runs + 1 >= o->iterations;
		/* From here until the end an approval does not count. */
		allow_guard_begin();
		if ((rc = run_once(&v, &d)) != 0) {
			ret = rc == 1 ? interrupted(&v, runs) : CB_EXIT_ERROR;
			break;
		}
		rc = record(&v, &d, &code, &failed);
		run_done_free(&d);
		runs++;
		if (rc >= 0) {
			ret = rc;
			break;
		}
		ret = code;
		if (v.out_closed)
			break;
		/* "Reset and retry": one more run, whatever -n said. */
		if (v.retry) {
			v.retry = 0;
			runs--;
			continue;
		}
		if (o->until_success && !failed)
			break;
		if (o->iterations > 0 && runs >= o->iterations)
			break;
		/* Success after success with nothing between them: said
		 * once, as nothing else will slow the loop down. */
		if (o->loop && !failed && o->delay <= 0 && !v.hot_said) {
			report_warn(&v.rep, "--loop with no --delay runs hot: "
			    "the next run starts at once after a success, "
			    "until a run reports completion (STATUS: COMPLETE "
			    "in a status block) or the budget is spent; "
			    "give --delay");
			v.hot_said = 1;
		}
		{
			double pause = o->delay, b = failed ?
			    backoff_delay(o, v.s.consecutive_errors) : 0;

			if (b > pause)
				pause = b;
			/* a provider that said when to try again is heard */
			if (failed && v.retry_after > pause)
				pause = v.retry_after;
			rc = inv_sleep(&v, pause);
			if (rc == 1) {
				ret = budget_spent(&v);
				break;
			}
			if (rc == 3) {
				ret = store_lost(&v);
				break;
			}
			if (rc == 2) {
				v.s.outcome = OUT_ABORT;
				ret = save(&v) == -1 ? CB_EXIT_ERROR :
				    CB_EXIT_ABORT;
				break;
			}
		}
	}
out:
	/* Output lost to a write error is cbexec's failure, whatever the
	 * runs did; the breaker's and the lock's statuses keep their
	 * meaning. */
	if (v.write_err != 0 && (ret < CB_EXIT_OPEN || ret > CB_EXIT_BUSY))
		ret = CB_EXIT_ERROR;
	/* Approvals written while the runs went on are revoked. */
	allow_guard_end(&v.rep);
	inv_end(&v);
	sup_done();
	return ret;
}
