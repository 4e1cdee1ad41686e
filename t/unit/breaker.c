/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for the breaker (SPEC §4 rules 1-7): every rule and threshold
 * driven with an injected clock, no processes, no files.
 */
#include <stdlib.h>
#include <string.h>

#include "breaker.h"
#include "tap.h"

#define T0 1700000000.0

static struct cb_limits L;
static struct cb_state S;
static struct cb_result R;

static void
fresh(void)
{
	breaker_free(&S);
	if (breaker_init(&S, "unit") != 0)
		abort();
	breaker_default_limits(&L);
}

static struct cb_run
ok_run(int progress)
{
	struct cb_run r = { progress, 0, CB_CLASS_SUCCESS, "", NULL, "", NULL,
	    0, 0, 0, 0, 0, 0 };

	return r;
}

static struct cb_run
err_run(enum cb_class cls, const char *type, const char *msg,
    const char *hash, const char *task, int progress)
{
	struct cb_run r = { progress, 0, cls, type, msg, hash, task, 1, 0, 0,
	    0, 0, 0 };

	return r;
}

static struct cb_run
build(const char *hash, int progress)
{
	return err_run(CB_CLASS_RECOVERABLE, "build_error", "error: boom",
	    hash, NULL, progress);
}

/* Record run at T0 + S.iteration + 1, one second per run. */
static void
rec(struct cb_run r)
{
	breaker_record(&S, &L, &r, T0 + (double)S.iteration + 1, &R);
}

static const struct cb_event *
last_event(void)
{
	return S.n_history ? &S.history[S.n_history - 1] : NULL;
}

static int
valid_utf8(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	int need = 0;

	for (; *u; u++) {
		if (need > 0) {
			if ((*u & 0xC0) != 0x80)
				return 0;
			need--;
		} else if (*u >= 0xF0) {
			need = 3;
		} else if (*u >= 0xE0) {
			need = 2;
		} else if (*u >= 0xC0) {
			need = 1;
		} else if (*u >= 0x80) {
			return 0;
		}
	}
	return need == 0;
}

static void
test_names_and_defaults(void)
{
	enum cb_circuit c;
	enum cb_outcome o;
	enum cb_event_kind k;

	fresh();
	is_int(L.no_progress, 3, "default no_progress 3");
	is_int(L.same_error, 5, "default same_error 5");
	is_int(L.half_open_after, 2, "default half_open_after 2");
	is_int(L.max_consecutive_errors, 5, "default max_consecutive_errors 5");
	is_int(L.max_retries, 3, "default max_retries 3");
	is_int(L.half_open_trials, 1, "default half_open_trials 1");
	ok(L.cooldown == 0, "default cooldown 0");
	is_int(L.history_size, 100, "default history_size 100");
	is_int(S.state, CB_CLOSED, "fresh circuit CLOSED");
	is_str(S.name, "unit", "name kept");
	ok(S.opened_at < 0 && S.updated_at < 0, "fresh opened_at/updated_at null");
	is_int(S.outcome, OUT_OK, "fresh outcome OK");

	is_str(circuit_name(CB_HALF_OPEN), "HALF_OPEN", "circuit_name");
	ok(circuit_from_name("OPEN", &c) == 0 && c == CB_OPEN,
	    "circuit_from_name OPEN");
	ok(circuit_from_name("open", &c) == -1, "circuit names are exact");
	is_str(outcome_name(OUT_SKIP), "SKIP", "outcome_name SKIP");
	ok(outcome_from_name("STUCK", &o) == 0 && o == OUT_STUCK,
	    "outcome_from_name STUCK");
	ok(outcome_from_name(NULL, &o) == -1, "outcome_from_name NULL");
	is_str(event_kind_name(EV_STATE_CHANGE), "state_change", "event name");
	ok(event_kind_from_name("skip", &k) == 0 && k == EV_SKIP,
	    "event_kind_from_name skip");
	is_str(circuit_name((enum cb_circuit)7), "?", "bad circuit is ?");
}

static void
test_no_progress(void)
{
	const struct cb_event *e;

	fresh();
	rec(ok_run(0));
	is_int(S.state, CB_CLOSED, "1 no-progress run: CLOSED");
	is_int(S.no_progress_count, 1, "no_progress_count 1");
	is_int(R.n, 0, "no transition");
	is_int(S.iteration, 1, "iteration 1");
	ok(S.updated_at == T0 + 1, "updated_at = now");
	e = last_event();
	ok(e && e->kind == EV_PROGRESS && e->progress == 0 &&
	    e->exit_code == 0 && e->from == -1, "progress event, progress 0");
	is_str(e ? e->reason : NULL, "no progress", "its reason");

	rec(ok_run(0));
	is_int(S.state, CB_HALF_OPEN, "2 no-progress runs: HALF_OPEN");
	is_int(R.n, 1, "one transition");
	is_int(R.t[0].from, CB_CLOSED, "from CLOSED");
	is_int(R.t[0].to, CB_HALF_OPEN, "to HALF_OPEN");
	is_str(R.t[0].reason, "No progress detected for 2 iterations",
	    "HALF_OPEN reason");
	is_int(R.outcome, OUT_OK, "outcome still OK");
	e = last_event();
	ok(e && e->kind == EV_STATE_CHANGE && e->from == CB_CLOSED &&
	    e->to == CB_HALF_OPEN && e->progress == -1 && e->exit_code == -1,
	    "state_change event recorded");
	is_int(S.n_history, 3, "two run events and a transition");
	is_int(S.trials_left, 0, "rule 3 HALF_OPEN is no trial");

	rec(ok_run(0));
	is_int(S.state, CB_OPEN, "3rd no-progress run: OPEN");
	is_int(R.outcome, OUT_OPEN, "outcome OPEN");
	is_int(R.n, 1, "HALF_OPEN -> OPEN only");
	is_int(R.t[0].from, CB_HALF_OPEN, "from HALF_OPEN");
	is_str(R.t[0].reason, "No progress for 3 iterations", "OPEN reason");
	is_str(S.open_reason, "No progress for 3 iterations", "open_reason");
	ok(S.opened_at == T0 + 3, "opened_at = now");
	is_int(S.total_opens, 1, "total_opens 1");
	is_int(S.no_progress_count, 3, "no_progress_count 3");
	is_int(S.errors_total[CB_CLASS_SUCCESS], 3, "errors_total success 3");
	is_int(S.outcome, OUT_OK, "record leaves s->outcome to the caller");
}

static void
test_half_open_progress(void)
{
	fresh();
	rec(ok_run(0));
	rec(ok_run(0));
	is_int(S.state, CB_HALF_OPEN, "HALF_OPEN after 2");
	rec(ok_run(1));
	is_int(S.state, CB_CLOSED, "progress closes HALF_OPEN");
	is_int(R.n, 1, "one transition");
	is_str(R.t[0].reason, "Progress detected", "reason Progress detected");
	is_int(S.no_progress_count, 0, "no_progress_count reset");
	is_int(S.last_progress_iteration, 3, "last_progress_iteration 3");
	is_int(last_event()->kind, EV_STATE_CHANGE, "transition logged last");
	is_int(S.history[S.n_history - 2].progress, 1,
	    "run event with progress 1 before it");
	is_str(S.history[S.n_history - 2].reason, "progress",
	    "run event reason progress");
}

static void
test_threshold_at_half_open(void)
{
	size_t n;

	fresh();
	L.no_progress = 2;
	rec(ok_run(0));
	n = S.n_history;
	rec(ok_run(0));
	is_int(S.state, CB_OPEN, "threshold 2 = half_open_after: OPEN at 2");
	is_int(R.n, 2, "two transitions in one call");
	ok(R.t[0].from == CB_CLOSED && R.t[0].to == CB_HALF_OPEN,
	    "CLOSED -> HALF_OPEN");
	ok(R.t[1].from == CB_HALF_OPEN && R.t[1].to == CB_OPEN,
	    "HALF_OPEN -> OPEN");
	is_str(R.t[0].reason, "No progress detected for 2 iterations",
	    "first reason");
	is_str(R.t[1].reason, "No progress for 2 iterations", "second reason");
	is_int(S.n_history - n, 3, "run event plus two state_change events");
	ok(S.history[n + 1].kind == EV_STATE_CHANGE &&
	    S.history[n + 1].to == CB_HALF_OPEN &&
	    S.history[n + 2].kind == EV_STATE_CHANGE &&
	    S.history[n + 2].to == CB_OPEN, "both transitions in history");
	is_int(S.total_opens, 1, "one opening");

	/* Below half_open_after: rule 3 has not fired, the trip still warns. */
	fresh();
	L.no_progress = 1;
	rec(ok_run(0));
	is_int(S.state, CB_OPEN, "threshold 1 < half_open_after: OPEN at 1");
	is_int(R.n, 2, "still CLOSED -> HALF_OPEN -> OPEN");
	is_str(R.t[0].reason, "No progress detected for 1 iteration",
	    "warning reason, singular");
	is_str(R.t[1].reason, "No progress for 1 iteration",
	    "open reason, singular");
	is_int(R.outcome, OUT_OPEN, "outcome OPEN");

	fresh();
	L.max_consecutive_errors = 1;
	L.no_progress = 9;
	rec(build("h", 1));
	is_str(S.open_reason, "1 consecutive error", "1 consecutive error");
	fresh();
	L.same_error = 1;
	rec(build("h", 1));
	is_str(S.open_reason, "Same error 1 time: error: boom",
	    "same error 1 time");
}

static void
test_consecutive_errors(void)
{
	char h[16];
	int i;

	fresh();
	for (i = 1; i <= 4; i++) {
		snprintf(h, sizeof(h), "h%d", i);
		rec(build(h, 1));
	}
	is_int(S.state, CB_CLOSED, "4 errors with progress: CLOSED");
	is_int(S.consecutive_errors, 4, "consecutive_errors 4");
	is_int(S.same_error_count, 1, "different fingerprints: same_error 1");
	is_int(S.no_progress_count, 0, "progress keeps no_progress 0");
	rec(build("h5", 1));
	is_int(S.state, CB_OPEN, "5th error: OPEN");
	is_int(R.outcome, OUT_OPEN, "outcome OPEN");
	is_int(R.n, 1, "CLOSED -> OPEN directly");
	is_int(R.t[0].from, CB_CLOSED, "from CLOSED");
	is_str(S.open_reason, "5 consecutive errors", "reason");
	is_int(S.errors_total[CB_CLASS_RECOVERABLE], 5, "errors_total 5");
	is_int(last_event()->kind, EV_STATE_CHANGE, "logged");
	is_int(S.history[S.n_history - 2].kind, EV_ERROR, "after the error");
	is_str(S.history[S.n_history - 2].cls, "recoverable", "event class");
	is_str(S.history[S.n_history - 2].type, "build_error", "event type");
	is_str(S.history[S.n_history - 2].reason, "error: boom",
	    "event reason is the message");
	is_int(S.history[S.n_history - 2].progress, 1, "event progress 1");
	is_int(S.history[S.n_history - 2].exit_code, 1, "event exit_code");
}

static void
test_same_error(void)
{
	int i;

	fresh();
	for (i = 0; i < 4; i++)
		rec(build("aaaa", 1));
	is_int(S.same_error_count, 4, "same fingerprint 4 times");
	is_str(S.last_error_hash, "aaaa", "last_error_hash");
	is_int(S.state, CB_CLOSED, "still CLOSED");
	rec(build("aaaa", 1));
	is_int(S.state, CB_OPEN, "5th: OPEN");
	is_int(R.outcome, OUT_STUCK, "STUCK outranks consecutive errors");
	is_str(S.open_reason, "Same error 5 times: error: boom", "reason");
	is_int(R.n, 1, "CLOSED -> OPEN directly");

	fresh();
	rec(build("a", 1));
	rec(build("b", 1));
	rec(build("a", 1));
	is_int(S.same_error_count, 1, "A B A: same_error 1");
	is_str(S.last_error_hash, "a", "hash follows the last error");
	rec(build("a", 1));
	is_int(S.same_error_count, 2, "A again: 2");
	rec(build("", 1));
	is_int(S.same_error_count, 1, "an empty fingerprint starts over");
	ok(S.last_error_hash == NULL, "and is not stored");
	rec(build("", 1));
	is_int(S.same_error_count, 1, "empty fingerprints never match");
}

/* A run whose cbexec was killed (SPEC §11): its progress never seen, it
 * counts no no-progress, so the same such error five times is STUCK. */
static void
test_unseen(void)
{
	struct cb_run k = err_run(CB_CLASS_RECOVERABLE, "killed",
	    "cbexec was killed during run 1", "kkkk", NULL, 0);
	int i;

	fresh();
	k.unseen = 1;
	for (i = 0; i < 4; i++)
		rec(k);
	is_int(S.no_progress_count, 0, "unseen runs: no no-progress counted");
	is_int(S.same_error_count, 4, "... but the same error 4 times");
	is_int(S.state, CB_CLOSED, "... and still CLOSED, never HALF_OPEN");
	rec(k);
	is_int(R.outcome, OUT_STUCK, "the fifth: STUCK");
	fresh();
	rec(build("a", 0));
	rec(build("b", 0));
	is_int(S.no_progress_count, 2, "two runs without progress");
	rec(k);
	is_int(S.no_progress_count, 2, "an unseen run keeps the count");
	is_int(S.consecutive_errors, 3, "and is an error all the same");
}

static void
test_transient(void)
{
	struct cb_run t = err_run(CB_CLASS_TRANSIENT, "rate_limited",
	    "429 Too Many Requests", "tttt", "T1", 0);
	int i;

	fresh();
	rec(err_run(CB_CLASS_RECOVERABLE, "test_failure", "FAILED x",
	    "aaaa", "T1", 0));
	is_int(S.no_progress_count, 1, "recoverable without progress: 1");
	rec(t);
	is_int(S.no_progress_count, 1, "transient: no_progress unchanged");
	is_int(S.same_error_count, 1, "transient: same_error unchanged");
	is_str(S.last_error_hash, "aaaa", "transient: hash unchanged");
	is_int(S.same_task_failures, 1, "transient: same_task unchanged");
	is_int(S.consecutive_errors, 2, "transient counts as consecutive");
	is_str(S.last_error.cls, "transient", "last_error class");
	is_str(S.last_error.type, "rate_limited", "last_error type");
	is_str(S.last_error.message, "429 Too Many Requests",
	    "last_error message");
	is_int(S.errors_total[CB_CLASS_TRANSIENT], 1, "errors_total transient");
	rec(err_run(CB_CLASS_RECOVERABLE, "test_failure", "FAILED x",
	    "aaaa", NULL, 1));
	is_int(S.same_error_count, 2, "transient in between: same_error 2");

	fresh();
	for (i = 0; i < 4; i++)
		rec(t);
	is_int(S.state, CB_CLOSED, "4 transients: CLOSED (no HALF_OPEN)");
	is_int(S.no_progress_count, 0, "no_progress_count 0");
	is_int(S.same_error_count, 0, "same_error_count 0");
	rec(t);
	is_int(S.state, CB_OPEN, "5 transients: OPEN by consecutive errors");
	is_int(R.outcome, OUT_OPEN, "outcome OPEN");
	is_str(S.open_reason, "5 consecutive errors", "reason");
}

static void
test_same_task(void)
{
	fresh();
	L.max_consecutive_errors = 10;	/* six errors in a row below */
	rec(err_run(CB_CLASS_RECOVERABLE, "unknown", "m1", "h1", "T1", 1));
	rec(err_run(CB_CLASS_RECOVERABLE, "unknown", "m2", "h2", "T1", 1));
	is_int(S.same_task_failures, 2, "T1 twice");
	is_str(S.last_failed_task, "T1", "last_failed_task");
	rec(err_run(CB_CLASS_RECOVERABLE, "unknown", "m3", "h3", NULL, 1));
	is_int(S.same_task_failures, 2, "no task: counter unchanged");
	is_str(S.last_failed_task, "T1", "no task: task kept");
	rec(err_run(CB_CLASS_RECOVERABLE, "unknown", "m4", "h4", "T2", 1));
	is_int(S.same_task_failures, 1, "task changes: back to 1");
	is_str(S.last_failed_task, "T2", "new task stored");
	rec(err_run(CB_CLASS_RECOVERABLE, "unknown", "m5", "h5", "T2", 1));
	is_int(S.state, CB_CLOSED, "T2 twice: CLOSED");
	rec(err_run(CB_CLASS_RECOVERABLE, "unknown", "m6", "h6", "T2", 1));
	is_int(S.state, CB_OPEN, "T2 max_retries times: OPEN");
	is_int(R.outcome, OUT_STUCK, "outcome STUCK");
	is_str(S.open_reason, "Task T2 failed 3 times in a row", "reason");
}

static void
test_success_resets(void)
{
	fresh();
	rec(err_run(CB_CLASS_RECOVERABLE, "syntax_error", "SyntaxError: x",
	    "ssss", "T1", 0));
	rec(err_run(CB_CLASS_RECOVERABLE, "syntax_error", "SyntaxError: x",
	    "ssss", "T1", 1));
	is_int(S.consecutive_errors, 2, "2 errors");
	rec(ok_run(0));
	is_int(S.consecutive_errors, 0, "success: consecutive 0");
	is_int(S.same_error_count, 0, "success: same_error 0");
	is_int(S.same_task_failures, 0, "success: same_task 0");
	ok(S.last_error_hash == NULL, "success: last_error_hash null");
	ok(S.last_failed_task == NULL, "success: last_failed_task null");
	is_str(S.last_error.message, "SyntaxError: x", "last_error kept");
	is_int(S.no_progress_count, 1, "success without progress counts");
	rec(err_run(CB_CLASS_RECOVERABLE, "syntax_error", "SyntaxError: x",
	    "ssss", "T1", 1));
	is_int(S.same_error_count, 1, "after success the same error is new");
	is_int(S.same_task_failures, 1, "and so is the task");
}

static void
test_ignored(void)
{
	struct cb_run r = build("aaaa", 0);
	struct cb_state before;

	fresh();
	rec(build("aaaa", 0));
	before = S;
	r.ignored = 1;
	rec(r);
	is_int(S.iteration, 2, "ignored: iteration still bumps");
	ok(S.updated_at == T0 + 2, "ignored: updated_at");
	is_int(S.no_progress_count, before.no_progress_count,
	    "ignored: no_progress unchanged");
	is_int(S.consecutive_errors, 1, "ignored: consecutive unchanged");
	is_int(S.same_error_count, 1, "ignored: same_error unchanged");
	is_int(S.errors_total[CB_CLASS_RECOVERABLE], 1,
	    "ignored: errors_total unchanged");
	is_int(S.n_history, before.n_history + 1, "ignored: one history event");
	is_str(S.history[S.n_history - 1].reason, "ignored exit code",
	    "ignored: the event says so");
	is_int(S.history[S.n_history - 1].progress, -1,
	    "ignored: neither progress nor no progress");
	is_int(R.n, 0, "ignored: no transition");
	is_int(R.outcome, OUT_OK, "ignored: outcome OK");
	r.cls = CB_CLASS_FATAL;
	rec(r);
	is_int(S.state, CB_CLOSED, "ignored fatal exit does not trip");
}

static void
test_fatal(void)
{
	struct cb_run f = err_run(CB_CLASS_FATAL, "permission_denied",
	    "permission denied", "ffff", NULL, 0);

	fresh();
	rec(f);
	is_int(S.state, CB_OPEN, "fatal: OPEN at once");
	is_int(R.outcome, OUT_ABORT, "outcome ABORT");
	is_int(R.n, 1, "CLOSED -> OPEN directly");
	is_str(R.t[0].reason, "fatal: permission_denied", "reason");
	is_str(S.open_reason, "fatal: permission_denied", "open_reason");
	is_int(S.total_opens, 1, "total_opens");
	is_int(S.errors_total[CB_CLASS_FATAL], 1, "errors_total fatal");
	is_str(S.last_error.cls, "fatal", "last_error class");

	fresh();
	rec(ok_run(0));
	rec(ok_run(0));
	f.progress = 1;
	rec(f);
	is_int(R.n, 1, "fatal with progress in HALF_OPEN: straight to OPEN");
	is_int(R.t[0].from, CB_HALF_OPEN, "from HALF_OPEN");
	is_int(R.outcome, OUT_ABORT, "ABORT");

	rec(f);
	is_int(R.n, 0, "fatal on an OPEN circuit: no transition");
	is_int(R.outcome, OUT_ABORT, "still ABORT");
	is_int(S.total_opens, 1, "not counted as another opening");
}

static void
open_by_no_progress(void)
{
	rec(ok_run(0));
	rec(ok_run(0));
	rec(ok_run(0));
}

static void
test_admit(void)
{
	fresh();
	ok(breaker_admit(&S, &L, T0, &R) == 1, "CLOSED admits");
	is_int(R.n, 0, "no transition");
	open_by_no_progress();
	is_int(S.state, CB_OPEN, "opened");
	ok(breaker_admit(&S, &L, T0 + 1e9, &R) == 0,
	    "cooldown 0: OPEN refuses forever");
	is_int(S.state, CB_OPEN, "still OPEN");
	is_int(R.n, 0, "no transition");

	L.cooldown = 600;
	ok(breaker_admit(&S, &L, S.opened_at + 599, &R) == 0,
	    "before the cooldown: refuse");
	ok(S.updated_at == T0 + 3, "a refusal changes nothing");
	ok(breaker_admit(&S, &L, S.opened_at + 600, &R) == 1,
	    "cooldown passed: admit");
	is_int(S.state, CB_HALF_OPEN, "HALF_OPEN");
	is_int(S.trials_left, 1, "one trial");
	is_int(R.n, 1, "one transition");
	ok(R.t[0].from == CB_OPEN && R.t[0].to == CB_HALF_OPEN,
	    "OPEN -> HALF_OPEN");
	is_str(R.t[0].reason, "Cooldown of 600s passed", "reason");
	is_int(last_event()->kind, EV_STATE_CHANGE, "logged");
	ok(breaker_admit(&S, &L, S.opened_at + 601, &R) == 1,
	    "HALF_OPEN admits");
	is_int(R.n, 0, "without a transition");

	fresh();
	open_by_no_progress();
	L.cooldown = 1.5;
	S.opened_at = -1;
	ok(breaker_admit(&S, &L, T0 + 100, &R) == 0,
	    "OPEN without opened_at refuses");
	S.opened_at = T0;
	ok(breaker_admit(&S, &L, T0 + 2, &R) == 1, "fractional cooldown");
	is_str(R.t[0].reason, "Cooldown of 1.5s passed", "reason 1.5s");

	fresh();
	open_by_no_progress();
	L.cooldown = 0;
	S.cooldown = 1200;
	ok(breaker_admit(&S, &L, S.opened_at + 5000, &R) == 0,
	    "configured cooldown 0 wins over a doubled one on file");
}

static void
test_trials(void)
{
	double opened;

	fresh();
	L.cooldown = 600;
	open_by_no_progress();
	breaker_admit(&S, &L, S.opened_at + 600, &R);
	rec(ok_run(1));
	is_int(S.state, CB_CLOSED, "trial with progress closes");
	is_int(R.n, 1, "one transition");
	is_str(R.t[0].reason, "Trial run made progress", "reason");
	is_int(S.trials_left, 0, "trials_left 0");
	ok(S.cooldown == 0, "cooldown back to the configured one");
	is_int(R.outcome, OUT_OK, "outcome OK");
	is_int(S.open_cause, CAUSE_NONE, "no cause once CLOSED");

	fresh();
	L.cooldown = 600;
	open_by_no_progress();
	breaker_admit(&S, &L, S.opened_at + 600, &R);
	rec(build("x", 1));
	is_int(S.state, CB_CLOSED, "trial error with progress closes");

	fresh();
	L.cooldown = 600;
	open_by_no_progress();
	breaker_admit(&S, &L, S.opened_at + 600, &R);
	rec(build("x", 0));
	is_int(S.state, CB_OPEN, "failed trial re-opens");
	is_int(R.outcome, OUT_OPEN, "outcome OPEN");
	is_int(R.n, 1, "HALF_OPEN -> OPEN");
	is_int(R.t[0].from, CB_HALF_OPEN, "from HALF_OPEN");
	is_str(S.open_reason, "Trial run failed", "reason");
	ok(S.cooldown == 1200, "cooldown doubled to 1200");
	ok(S.opened_at == T0 + 4, "opened_at = now");
	is_int(S.total_opens, 2, "total_opens 2");
	opened = S.opened_at;
	ok(breaker_admit(&S, &L, opened + 600, &R) == 0,
	    "the configured cooldown is not enough now");
	ok(breaker_admit(&S, &L, opened + 1200, &R) == 1,
	    "the doubled one is");
	is_str(R.t[0].reason, "Cooldown of 1200s passed", "reason 1200s");
	rec(build("x", 0));
	ok(S.cooldown == 2400, "2400");
	breaker_admit(&S, &L, S.opened_at + 2400, &R);
	rec(build("x", 0));
	ok(S.cooldown == 3600, "capped at 3600");
	breaker_admit(&S, &L, S.opened_at + 3600, &R);
	rec(build("x", 0));
	ok(S.cooldown == 3600, "stays at 3600");

	fresh();
	L.cooldown = 5000;
	open_by_no_progress();
	breaker_admit(&S, &L, S.opened_at + 5000, &R);
	rec(build("x", 0));
	ok(S.cooldown == 5000, "a configured cooldown over 1h is the cap");

	fresh();
	L.cooldown = 60;
	L.half_open_trials = 2;
	open_by_no_progress();
	breaker_admit(&S, &L, S.opened_at + 60, &R);
	is_int(S.trials_left, 2, "two trials");
	rec(build("x", 0));
	is_int(S.state, CB_HALF_OPEN, "one failure: still HALF_OPEN");
	is_int(S.trials_left, 1, "one trial left");
	is_int(R.n, 0, "no transition");
	is_int(R.outcome, OUT_OK, "outcome OK");
	rec(build("x", 0));
	is_int(S.state, CB_OPEN, "second failure: OPEN");
	ok(S.cooldown == 120, "cooldown 120");

	/* Rules 3 and 4 wait while trials are pending. */
	fresh();
	L.cooldown = 60;
	L.half_open_trials = 3;
	L.same_error = 2;
	open_by_no_progress();
	breaker_admit(&S, &L, S.opened_at + 60, &R);
	rec(build("x", 0));
	rec(build("x", 0));
	is_int(S.same_error_count, 2, "same_error at its threshold");
	is_int(S.state, CB_HALF_OPEN, "a trial does not trip STUCK");
	rec(err_run(CB_CLASS_FATAL, "command_not_found", "nope", "n", NULL,
	    0));
	is_int(S.state, CB_OPEN, "fatal during a trial opens");
	is_int(R.outcome, OUT_ABORT, "ABORT");
	is_str(S.open_reason, "fatal: command_not_found", "reason");
	is_int(S.trials_left, 0, "trials cleared");

	/* An ignored run leaves the trial pending. */
	fresh();
	L.cooldown = 60;
	open_by_no_progress();
	breaker_admit(&S, &L, S.opened_at + 60, &R);
	{
		struct cb_run r = build("x", 0);

		r.ignored = 1;
		rec(r);
	}
	is_int(S.state, CB_HALF_OPEN, "ignored run: still HALF_OPEN");
	is_int(S.trials_left, 1, "trial still pending");
}

/* What a trial must disprove (SPEC §11), by why the circuit opened. */
static void
test_disprove(void)
{
	struct cb_run r;
	double t, end;
	int i, closed, trials;

	/* No progress: a success without progress does not close it. */
	fresh();
	L.cooldown = 600;
	open_by_no_progress();
	is_int(S.open_cause, CAUSE_NO_PROGRESS, "opened by no progress");
	breaker_admit(&S, &L, S.opened_at + 600, &R);
	rec(ok_run(0));
	is_int(S.state, CB_OPEN, "no progress: a success without progress "
	    "re-opens");
	is_int(R.outcome, OUT_OPEN, "outcome OPEN");
	is_str(S.open_reason, "Trial run made no progress", "reason says so");
	ok(S.cooldown == 1200, "cooldown doubled");
	is_int(S.open_cause, CAUSE_NO_PROGRESS, "the cause stays");
	breaker_admit(&S, &L, S.opened_at + 1200, &R);
	rec(build("x", 0));
	is_str(S.open_reason, "Trial run failed", "a failed one: failed");
	breaker_admit(&S, &L, S.opened_at + 2400, &R);
	rec(build("x", 1));
	is_int(S.state, CB_CLOSED, "no progress: a failure with progress "
	    "closes");

	/* Errors: a success closes it, with or without progress. */
	fresh();
	L.cooldown = 60;
	for (i = 0; i < 5; i++)
		rec(build(i % 2 ? "a" : "b", 1));
	is_int(S.state, CB_OPEN, "five errors open it");
	is_int(S.open_cause, CAUSE_ERRORS, "opened by errors");
	breaker_admit(&S, &L, S.opened_at + 60, &R);
	rec(ok_run(0));
	is_int(S.state, CB_CLOSED, "errors: a success without progress "
	    "closes");
	is_str(R.t[0].reason, "Trial run succeeded", "reason");
	fresh();
	L.cooldown = 60;
	L.same_error = 2;
	rec(build("a", 1));
	rec(build("a", 1));
	is_int(S.open_cause, CAUSE_ERRORS, "the same error: errors");
	breaker_admit(&S, &L, S.opened_at + 60, &R);
	rec(build("c", 0));
	is_int(S.state, CB_OPEN, "errors: a failure without progress "
	    "re-opens");
	fresh();
	L.cooldown = 60;
	rec(err_run(CB_CLASS_FATAL, "auth", "bad key", "k", NULL, 0));
	is_int(S.open_cause, CAUSE_ERRORS, "a fatal class: errors");

	/* A usage limit: any run that does not meet it again closes it. */
	fresh();
	r = err_run(CB_CLASS_TRANSIENT, "usage_limit", "limit", "", NULL, 0);
	r.usage_limit = 1;
	r.retry_at = T0 + 3600;
	rec(r);
	is_int(S.open_cause, CAUSE_LIMIT, "a usage limit: limit");
	breaker_admit(&S, &L, T0 + 3600, &R);
	rec(build("x", 0));
	is_int(S.state, CB_CLOSED, "limit: a failure of another kind closes");
	fresh();
	rec(r);
	breaker_admit(&S, &L, T0 + 3600, &R);
	rec(err_run(CB_CLASS_TRANSIENT, "rate_limited", "429", "", NULL, 0));
	is_int(S.state, CB_CLOSED, "limit: a rate limit is not the limit");
	fresh();
	rec(r);
	breaker_admit(&S, &L, T0 + 3600, &R);
	r.retry_at = T0 + 9000;
	rec(r);
	is_int(S.state, CB_OPEN, "limit: the limit again re-opens");
	ok(S.retry_at == T0 + 9000, "until its new reset time");
	is_int(S.open_cause, CAUSE_LIMIT, "still a limit");

	/* ralph-claude-code's scenario: a stuck agent exits 0 every time
	 * and never makes progress.  With a cooldown of 60s, each cooldown
	 * admits one trial (60, 120, 240, ... s apart: six in the first
	 * 3 800 s), and the circuit holds: never CLOSED again. */
	fresh();
	L.cooldown = 60;
	open_by_no_progress();
	closed = trials = 0;
	end = S.opened_at + 3800;
	for (t = S.opened_at + 1; t < end; t += 10) {
		if (breaker_admit(&S, &L, t, &R) == 1) {
			trials++;
			r = ok_run(0);
			breaker_record(&S, &L, &r, t, &R);
			if (S.state == CB_CLOSED)
				closed++;
		}
	}
	is_int(closed, 0, "a stuck agent that exits 0: never CLOSED");
	is_int(S.state, CB_OPEN, "the circuit holds");
	is_int(trials, 6, "one trial per (doubling) cooldown");
}

static void
test_trip(void)
{
	fresh();
	L.cooldown = 10;
	rec(ok_run(1));
	breaker_trip(&S, &L, NULL, "alice", T0 + 50, &R);
	is_int(S.state, CB_OPEN, "trip: OPEN");
	is_str(S.open_reason, "tripped by operator", "reason");
	is_int(S.tripped, 1, "tripped");
	ok(S.opened_at == T0 + 50, "opened_at");
	is_int(S.total_opens, 1, "total_opens 1");
	is_int(R.n, 1, "one transition");
	ok(R.t[0].from == CB_CLOSED && R.t[0].to == CB_OPEN, "CLOSED -> OPEN");
	is_int(R.outcome, OUT_OPEN, "outcome OPEN");
	is_int(last_event()->kind, EV_STATE_CHANGE, "state_change event");
	is_str(last_event()->user, "alice", "with the user");
	ok(S.updated_at == T0 + 50, "updated_at");
	ok(breaker_admit(&S, &L, T0 + 1e6, &R) == 0,
	    "a tripped circuit ignores the cooldown");

	breaker_trip(&S, &L, "maintenance", "bob", T0 + 60, &R);
	is_str(S.open_reason, "tripped by operator: maintenance",
	    "reason with text");
	is_int(S.total_opens, 1, "already OPEN: no new opening");
	ok(S.opened_at == T0 + 50, "opened_at kept");
	is_int(R.n, 0, "no transition");
	is_str(last_event()->user, "bob", "but the act is in the history");
	ok(last_event()->kind == EV_TRIP && last_event()->from == -1 &&
	    last_event()->to == -1, "... as a trip, not OPEN -> OPEN");
	is_str(last_event()->reason, "tripped by operator: maintenance",
	    "... with its reason");

	/* Tripping a circuit that a cooldown could have closed. */
	fresh();
	L.cooldown = 10;
	open_by_no_progress();
	breaker_trip(&S, &L, "", "carol", T0 + 100, &R);
	is_str(S.open_reason, "tripped by operator", "empty reason: none");
	ok(breaker_admit(&S, &L, T0 + 1e6, &R) == 0,
	    "tripping an OPEN circuit also disables the cooldown");
}

static void
test_reset(void)
{
	const struct cb_event *e;

	fresh();
	L.cooldown = 60;
	rec(build("aaaa", 0));
	rec(err_run(CB_CLASS_RECOVERABLE, "unknown", "m", "aaaa", "T1", 0));
	rec(build("aaaa", 0));
	is_int(S.state, CB_OPEN, "opened");
	S.cooldown = 240;
	S.guidance = strdup("try smaller steps");
	breaker_reset(&S, &L, "fixed flaky fixture", "alice", T0 + 99, &R);
	is_int(S.state, CB_CLOSED, "reset: CLOSED");
	is_int(S.no_progress_count, 0, "no_progress 0");
	is_int(S.same_error_count, 0, "same_error 0");
	is_int(S.consecutive_errors, 0, "consecutive 0");
	is_int(S.same_task_failures, 0, "same_task 0");
	ok(S.last_failed_task == NULL, "last_failed_task null");
	ok(S.last_error_hash == NULL, "last_error_hash null");
	ok(S.opened_at < 0, "opened_at null");
	ok(S.open_reason == NULL, "open_reason null");
	ok(S.cooldown == 0 && S.trials_left == 0 && S.tripped == 0,
	    "cooldown, trials, tripped cleared");
	is_int(S.outcome, OUT_OK, "outcome OK");
	is_int(S.total_opens, 1, "total_opens kept");
	is_int(S.iteration, 3, "iteration kept");
	is_int(S.errors_total[CB_CLASS_RECOVERABLE], 3, "errors_total kept");
	is_str(S.guidance, "try smaller steps", "guidance untouched");
	ok(S.updated_at == T0 + 99, "updated_at");
	is_int(R.n, 1, "one transition");
	ok(R.t[0].from == CB_OPEN && R.t[0].to == CB_CLOSED, "OPEN -> CLOSED");
	is_str(R.t[0].reason, "fixed flaky fixture", "with the reason");
	e = last_event();
	is_int(e->kind, EV_RESET, "reset event");
	is_str(e->reason, "fixed flaky fixture", "event reason");
	is_str(e->user, "alice", "event user");
	ok(e->from == CB_OPEN && e->to == CB_CLOSED, "event from/to");
	ok(e->ts == T0 + 99 && e->iteration == 3, "event time and iteration");

	breaker_reset(&S, &L, NULL, NULL, T0 + 100, &R);
	is_int(R.n, 0, "reset of a CLOSED circuit: no transition");
	e = last_event();
	is_int(e->kind, EV_RESET, "but a reset event");
	is_str(e->reason, "reset by operator", "default reason");
	ok(e->from == -1 && e->to == -1, "not a transition");

	fresh();
	breaker_trip(&S, &L, NULL, "alice", T0, &R);
	breaker_reset(&S, &L, NULL, "alice", T0 + 1, &R);
	ok(S.state == CB_CLOSED && S.tripped == 0, "reset un-trips");
}

static void
test_skip(void)
{
	const struct cb_skip *k;

	fresh();
	is_int(breaker_skip(&S, &L, SKIP_PHASE, "GREEN", "flaky", "alice",
	    T0 + 5, &R), 0, "skip GREEN");
	is_int(R.outcome, OUT_SKIP, "skip: outcome SKIP");
	is_str(R.why, "skipped phase GREEN: flaky", "skip: why");
	is_int(R.n, 0, "skip of a CLOSED circuit: no transition");
	breaker_skip(&S, &L, SKIP_PHASE, "green", "again", "bob", T0 + 6, &R);
	breaker_skip(&S, &L, SKIP_TASK, "T-1", NULL, NULL, T0 + 7, &R);
	breaker_skip(&S, &L, SKIP_TASK, "t-1", NULL, NULL, T0 + 8, &R);
	is_int(breaker_skip(&S, &L, SKIP_TASK, NULL, NULL, NULL, T0 + 9, &R),
	    -1, "skip of nothing: refused");
	is_int(S.n_skips, 3, "a phase once, whatever its case; tasks exactly");
	is_int(S.skips[0].kind, SKIP_PHASE, "first: a phase");
	is_str(S.skips[0].name, "GREEN", "first: GREEN, as first given");
	ok(S.skips[0].at == T0 + 6, "skipping again renews when");
	is_str(S.skips[0].reason, "again", "... and why");
	is_str(S.skips[0].user, "bob", "... and who");
	is_int(S.skips[1].kind, SKIP_TASK, "second: a task");
	ok(S.skips[1].reason == NULL, "no reason: null");
	is_int(S.n_history, 4, "an event per skip");
	is_int(S.history[0].kind, EV_SKIP, "skip event");
	is_str(S.history[0].reason, "skipped phase GREEN: flaky", "its reason");
	is_str(S.history[0].user, "alice", "its user");
	is_int(S.outcome, OUT_SKIP, "state outcome SKIP");
	ok(S.updated_at == T0 + 8, "updated_at");

	k = breaker_skipped(&S, "Green", NULL);
	ok(k != NULL && strcmp(k->name, "GREEN") == 0,
	    "a run of phase Green is skipped");
	ok(breaker_skipped(&S, "RED", NULL) == NULL, "RED is not");
	ok(breaker_skipped(&S, NULL, "T-1") != NULL, "task T-1 is skipped");
	ok(breaker_skipped(&S, NULL, "GREEN") == NULL,
	    "a task named like a skipped phase is not");
	ok(breaker_skipped(&S, "T-1", NULL) == NULL,
	    "a phase named like a skipped task is not");
	ok(breaker_skipped(&S, NULL, NULL) == NULL, "no phase, no task: run");

	/* Skip closes an OPEN circuit for everything else, as a reset. */
	fresh();
	L.no_progress = 2;
	L.half_open_after = 1;
	rec(build("h", 0));
	rec(build("h", 0));
	is_int(S.state, CB_OPEN, "opened");
	breaker_skip(&S, &L, SKIP_PHASE, "GREEN", NULL, "alice", T0 + 50, &R);
	is_int(S.state, CB_CLOSED, "skip closes the circuit");
	is_int(R.n, 1, "one transition");
	ok(R.t[0].from == CB_OPEN && R.t[0].to == CB_CLOSED, "OPEN -> CLOSED");
	is_str(R.t[0].reason, "skipped phase GREEN", "transition reason");
	ok(S.no_progress_count == 0 && S.consecutive_errors == 0 &&
	    S.same_error_count == 0 && S.opened_at < 0 &&
	    S.open_reason == NULL && S.last_error_hash == NULL,
	    "counters and the opening cleared");
	is_int(S.total_opens, 1, "total_opens kept");
	ok(last_event()->kind == EV_SKIP && last_event()->from == CB_OPEN &&
	    last_event()->to == CB_CLOSED, "skip event with the transition");

	/* The skip list is bounded. */
	fresh();
	{
		char name[16];
		int i, rc = 0;

		for (i = 0; i < CB_SKIPS_MAX && rc == 0; i++) {
			snprintf(name, sizeof(name), "t%d", i);
			rc = breaker_skip(&S, &L, SKIP_TASK, name, NULL, NULL,
			    T0, &R);
		}
		is_int(rc, 0, "CB_SKIPS_MAX skips kept");
		is_int(breaker_skip(&S, &L, SKIP_TASK, "one-more", NULL, NULL,
		    T0, &R), -1, "one more: refused");
		is_int(breaker_skip(&S, &L, SKIP_TASK, "t3", "again", NULL,
		    T0, &R), 0, "renewing a kept one still works");
		is_int(S.n_skips, CB_SKIPS_MAX, "the list does not grow");
	}
}

static void
test_unskip(void)
{
	fresh();
	breaker_skip(&S, &L, SKIP_PHASE, "GREEN", NULL, NULL, T0, &R);
	breaker_skip(&S, &L, SKIP_TASK, "T-1", NULL, NULL, T0, &R);
	breaker_skip(&S, &L, SKIP_TASK, "T-2", NULL, NULL, T0, &R);
	S.state = CB_HALF_OPEN;
	is_int(breaker_unskip(&S, &L, "green", "carol", T0 + 1, &R), 1,
	    "unskip green: one went");
	is_int(S.n_skips, 2, "two left");
	is_str(S.skips[0].name, "T-1", "order kept");
	is_str(R.why, "unskipped phase GREEN", "why");
	is_int(R.n, 0, "no transition");
	is_int(S.state, CB_HALF_OPEN, "the state is left alone");
	ok(last_event()->kind == EV_SKIP &&
	    strcmp(last_event()->reason, "unskipped phase GREEN") == 0 &&
	    strcmp(last_event()->user, "carol") == 0, "a skip event says so");
	is_int(breaker_unskip(&S, &L, "t-1", NULL, T0 + 2, &R), 0,
	    "tasks are named exactly");
	is_int(breaker_unskip(&S, &L, "nothing", NULL, T0 + 2, &R), 0,
	    "unskip of what is not skipped: 0");
	is_int(breaker_unskip(&S, &L, NULL, NULL, T0 + 3, &R), 2,
	    "unskip all");
	is_int(S.n_skips, 0, "none left");
	is_str(R.why, "unskipped task T-1, task T-2", "why names them");
}

static void
test_stuck_task(void)
{
	struct cb_run r;

	fresh();
	L.max_retries = 2;
	r = err_run(CB_CLASS_RECOVERABLE, "build_error", "a", "h1", "T-9", 0);
	rec(r);
	ok(S.stuck_task == NULL, "one failure: not stuck");
	r.hash = "h2";
	rec(r);
	is_int(R.outcome, OUT_STUCK, "same task twice: STUCK");
	is_str(S.stuck_task, "T-9", "stuck_task names it");
	is_str(last_event()->task, NULL, "the transition event has no task");
	is_str(S.history[0].task, "T-9", "error events keep the task");
	is_str(S.history[0].hash, "h1", "... and the fingerprint");
	breaker_reset(&S, &L, NULL, NULL, T0 + 10, &R);
	ok(S.stuck_task == NULL, "a reset clears it");

	/* Stuck by the same error, not on one task: Skip gives the phase. */
	fresh();
	L.same_error = 2;
	rec(err_run(CB_CLASS_RECOVERABLE, "x", "m", "h", "A", 0));
	rec(err_run(CB_CLASS_RECOVERABLE, "x", "m", "h", "B", 0));
	is_int(R.outcome, OUT_STUCK, "same error twice: STUCK");
	ok(S.stuck_task == NULL, "two tasks: stuck on none");

	/* A task longer than the event keeps is cut, on a character. */
	fresh();
	{
		char long_task[CB_EVENT_TASK_MAX + 50];

		memset(long_task, 'a', sizeof(long_task) - 3);
		memcpy(long_task + CB_EVENT_TASK_MAX - 1, "\xc3\xbc", 2);
		long_task[sizeof(long_task) - 1] = '\0';
		rec(err_run(CB_CLASS_RECOVERABLE, "x", "m", "h", long_task, 0));
		is_int(strlen(last_event()->task), CB_EVENT_TASK_MAX - 1,
		    "event task cut short on a character boundary");
	}
}

static void
test_history_bound(void)
{
	int i;

	fresh();
	L.history_size = 3;
	for (i = 0; i < 10; i++)
		rec(ok_run(1));
	is_int(S.n_history, 3, "history holds 3");
	is_int(S.history[0].iteration, 8, "oldest kept is run 8");
	is_int(S.history[2].iteration, 10, "newest is run 10");
	ok(S.history[2].ts == T0 + 10, "event ts is now");
	is_int(S.iteration, 10, "iteration 10");
}

static void
test_timeout_class(void)
{
	struct cb_run t = err_run(CB_CLASS_TIMEOUT, "timeout",
	    "timed out after 120s", "tmo", NULL, 0);

	fresh();
	rec(t);
	rec(t);
	is_int(S.same_error_count, 2, "timeout: same fingerprint counts");
	is_int(S.no_progress_count, 2, "timeout without progress counts");
	is_int(S.consecutive_errors, 2, "and is an error");
	is_str(S.last_error.cls, "timeout", "class timeout");
	t.progress = 1;
	rec(t);
	is_int(S.no_progress_count, 0, "timeout after real work: progress");
	is_int(S.same_error_count, 3, "while its error still counts");
	is_int(S.state, CB_CLOSED, "progress closed the warning");
}

static void
test_green_limits(void)
{
	int i;

	fresh();
	L.no_progress = 2;
	L.same_error = 3;
	rec(build("g", 1));
	rec(build("g", 1));
	is_int(S.state, CB_CLOSED, "GREEN: same error twice: CLOSED");
	rec(build("g", 1));
	is_int(S.state, CB_OPEN, "GREEN: same error 3 times: OPEN");
	is_int(R.outcome, OUT_STUCK, "STUCK");
	is_str(S.open_reason, "Same error 3 times: error: boom", "reason");

	fresh();
	L.no_progress = 2;
	L.same_error = 3;
	rec(ok_run(0));
	rec(ok_run(0));
	is_int(S.state, CB_OPEN, "GREEN: 2 no-progress runs open");
	is_str(S.open_reason, "No progress for 2 iterations", "reason");
	is_int(R.n, 2, "through HALF_OPEN");

	/* 0 thresholds are disabled, defensively. */
	fresh();
	L.no_progress = L.same_error = L.half_open_after = 0;
	L.max_consecutive_errors = L.max_retries = 0;
	for (i = 0; i < 20; i++)
		rec(err_run(CB_CLASS_RECOVERABLE, "x", "m", "h", "T", 0));
	is_int(S.state, CB_CLOSED, "all thresholds 0: never trips");
}

static void
test_utf8_reason(void)
{
	char msg[600];
	size_t i;

	fresh();
	L.same_error = 1;
	/* 'é' is two bytes; 22 + 2k bytes puts a cut inside one. */
	for (i = 0; i + 2 < sizeof(msg); i += 2)
		memcpy(msg + i, "\xc3\xa9", 2);
	msg[i] = '\0';
	rec(err_run(CB_CLASS_RECOVERABLE, "x", msg, "h", NULL, 1));
	is_int(S.state, CB_OPEN, "opened");
	ok(strlen(R.t[0].reason) < sizeof(R.t[0].reason), "reason fits");
	ok(valid_utf8(R.t[0].reason), "truncated reason is valid UTF-8");
	ok(strlen(S.open_reason) > 500, "open_reason is not truncated");
	ok(valid_utf8(S.open_reason), "open_reason is valid UTF-8");
}

/* The end of the last run and of the last success, and the limits the
 * run was judged by, for --status and the staleness metrics. */
static void
test_run_times(void)
{
	struct cb_run r;
	struct cb_result res;

	fresh();
	ok(S.last_run_at < 0 && S.last_success_at < 0,
	    "fresh: no last run, no last success");
	is_int(S.limits.no_progress, 0, "fresh: no thresholds recorded");
	L.no_progress = 7;
	rec(build("h1", 0));
	ok(S.last_run_at == T0 + 1 && S.last_success_at < 0,
	    "a failed run: last_run_at, no last success");
	is_int(S.limits.no_progress, 7, "the run's thresholds are kept");
	rec(ok_run(1));
	ok(S.last_run_at == T0 + 2 && S.last_success_at == T0 + 2,
	    "a success: both times");
	r = build("h2", 0);
	r.ignored = 1;
	rec(r);
	ok(S.last_run_at == T0 + 3 && S.last_success_at == T0 + 2,
	    "an ignored exit ran, but is no success");
	breaker_trip(&S, &L, NULL, "op", T0 + 10, &res);
	ok(S.last_run_at == T0 + 3, "a trip is not a run");
}

int
main(void)
{
	test_names_and_defaults();
	test_no_progress();
	test_half_open_progress();
	test_threshold_at_half_open();
	test_consecutive_errors();
	test_same_error();
	test_unseen();
	test_transient();
	test_same_task();
	test_success_resets();
	test_ignored();
	test_fatal();
	test_admit();
	test_trials();
	test_disprove();
	test_trip();
	test_reset();
	test_skip();
	test_unskip();
	test_stuck_task();
	test_history_bound();
	test_timeout_class();
	test_green_limits();
	test_utf8_reason();
	test_run_times();
	breaker_free(&S);
	return done_testing();
}
