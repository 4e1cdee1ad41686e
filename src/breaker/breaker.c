/* SPDX-License-Identifier: ISC */
/*
 * The circuit breaker (SPEC §4) as pure functions over struct cb_state.
 *
 * breaker_admit() is rule 5 (before a run), breaker_record() rules 1-4 and
 * the trial half of rule 5 (after a run), and both keep rule 8: a usage
 * limit opens the circuit until the provider's reset time (retry_at), and
 * the first admission at or after it is a trial; the operator's acts, rule 6,
 * come last: breaker_reset() closes the circuit and clears every counter
 * but total_opens, breaker_trip() opens it with a reason no cooldown
 * closes, breaker_skip() gives up a phase or a task (SPEC §9) and closes
 * the circuit for everything else, breaker_unskip() takes that back.  Each
 * appends what it did to the bounded history and reports the transitions
 * in a struct cb_result so the caller can log and alert; none reads the
 * clock, touches a file or prints.
 *
 * A skip is kept as a record (what, when, why, who) in a list bounded by
 * CB_SKIPS_MAX; breaker_skipped() is the check before a run.  An error
 * event keeps the run's task (cut short) and error fingerprint, so the
 * OPEN block can analyse the last failures from the history alone.
 *
 * breaker_record() first moves the counters (rules 1 and 2) and logs the
 * run, then decides at most one path: a fatal run opens the circuit at once;
 * a usage limit opens it until its reset time; a trial (trials_left > 0)
 * closes or re-opens it and nothing else, a transient failure re-opening it
 * until a later retry time.  A trial closes the circuit only when it
 * disproves why it opened (SPEC §11, open_cause): progress after no
 * progress, a success or progress after errors, any run that does not meet
 * the limit again after a limit;
 * otherwise progress closes a HALF_OPEN circuit, rule 3 warns and rule 4
 * trips.  A no-progress trip from CLOSED always passes through HALF_OPEN so
 * both steps are logged.  Allocation failures lose a string, never a
 * transition: an OPEN circuit with a NULL reason beats a CLOSED one.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cJSON.h>

#include "breaker.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static char *
dup_or_null(const char *p)
{
	return p != NULL ? strdup(p) : NULL;
}


/* Copy src into dst[n], cut at a character boundary so it stays UTF-8. */
static void
copy_utf8(char *dst, size_t n, const char *src)
{
	size_t len = src != NULL ? strlen(src) : 0;

	if (len >= n) {
		len = n - 1;
		while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
			len--;
	}
	if (len > 0)
		memcpy(dst, src, len);
	dst[len] = '\0';
}

/* A malloc'd formatted string, or NULL on ENOMEM. */
static char *str_fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static char *
str_fmt(const char *f, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, f);
	n = vsnprintf(NULL, 0, f, ap);
	va_end(ap);
	if (n < 0 || (p = malloc((size_t)n + 1)) == NULL)
		return NULL;
	va_start(ap, f);
	vsnprintf(p, (size_t)n + 1, f, ap);
	va_end(ap);
	return p;
}

void
breaker_set_str(char **dst, const char *src)
{
	char *p = dup_or_null(src);

	free(*dst);
	*dst = p;
}

/* Seconds without trailing zeros: 600, 1.5, 0.25. */
static void
fmt_secs(char *buf, size_t n, double v)
{
	size_t len;

	snprintf(buf, n, "%.3f", v);
	len = strlen(buf);
	while (len > 0 && buf[len - 1] == '0')
		buf[--len] = '\0';
	if (len > 0 && buf[len - 1] == '.')
		buf[--len] = '\0';
}

/* Counting never wraps (rule 7): past the top a counter stays there. */
static void
inc(int *c)
{
	if (*c < INT_MAX)
		(*c)++;
}

static void
inc_long(long *c)
{
	if (*c < CB_LONG_MAX)
		(*c)++;
}

/* "s" unless n is 1: "1 iteration", "2 iterations". */
static const char *
plural(long n)
{
	return n == 1 ? "" : "s";
}

/* A threshold of 0 is disabled; the CLI only lets 1 and up through. */
static int
reached(int count, int threshold)
{
	return threshold > 0 && count >= threshold;
}

static void
event_init(struct cb_event *e, const struct cb_state *s,
    enum cb_event_kind kind, double now, const char *reason, const char *user)
{
	memset(e, 0, sizeof(*e));
	e->ts = now;
	e->iteration = s->iteration;
	e->kind = kind;
	e->from = e->to = -1;
	e->progress = -1;
	e->exit_code = -1;
	/* breaker_add_event() copies both; nothing writes through them. */
	e->reason = (char *)(uintptr_t)reason;
	e->user = (char *)(uintptr_t)user;
}

static void
add_transition(struct cb_result *res, enum cb_circuit from,
    enum cb_circuit to, const char *reason, double now)
{
	struct cb_transition *t;

	if (res->n >= (int)NELEM(res->t))
		return;
	t = &res->t[res->n++];
	t->from = from;
	t->to = to;
	t->at = now;
	copy_utf8(t->reason, sizeof(t->reason), reason);
}

/* Move to state to, reporting it in res and in the history. */
static void
move_to(struct cb_state *s, const struct cb_limits *l,
    struct cb_result *res, enum cb_circuit to, const char *reason,
    const char *user, double now)
{
	struct cb_event e;

	add_transition(res, s->state, to, reason, now);
	event_init(&e, s, EV_STATE_CHANGE, now, reason, user);
	e.from = (int)s->state;
	e.to = (int)to;
	breaker_add_event(s, l->history_size, &e);
	s->state = to;
	/* A circuit that is no longer OPEN is stuck on nothing. */
	if (to != CB_OPEN)
		breaker_set_str(&s->stuck_task, NULL);
}

static void
open_circuit(struct cb_state *s, const struct cb_limits *l,
    struct cb_result *res, const char *reason, enum cb_cause cause,
    double now)
{
	move_to(s, l, res, CB_OPEN, reason, NULL, now);
	s->opened_at = now;
	breaker_set_str(&s->open_reason, reason);
	s->open_cause = cause;
	inc_long(&s->total_opens);
	breaker_set_str(&s->stuck_task, NULL);
	s->trials_left = 0;
	s->retry_at = -1;
}

/*
 * How long a limit that named no time of its own is waited out: the
 * configured cooldown (as doubled by failed trials), else 5 minutes,
 * doubling each time up to 5 hours; s->cooldown keeps the current wait
 * and a successful trial clears it.
 */
static double
limit_wait(struct cb_state *s, const struct cb_limits *l)
{
	double w;

	if (l->cooldown > 0)
		return s->cooldown > 0 ? s->cooldown : l->cooldown;
	w = s->cooldown > 0 ? 2 * s->cooldown : CB_LIMIT_WAIT;
	if (w > CB_LIMIT_WAIT_MAX)
		w = CB_LIMIT_WAIT_MAX;
	s->cooldown = w;
	return w;
}

/*
 * Open the circuit until the time at (rule 8), with the reason
 * "WHAT until HH:MM UTC".  A time that is not on now's UTC day names its
 * day: the weekday within the next six days ("until Fri 23:04 UTC"), the
 * date further ahead ("until 2026-12-04 23:04 UTC"), so a wait of almost
 * a day never reads as a time later today.  The minute is rounded up so
 * the time read is never before retry_at.
 */
static void
open_until(struct cb_state *s, const struct cb_limits *l,
    struct cb_result *res, const char *what, enum cb_cause cause, double at,
    double now)
{
	static const char wday[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu",
	    "Fri", "Sat" };
	time_t t = (time_t)at, n = (time_t)now;
	struct tm tm;
	char day[48] = "", *why;
	long days;

	if ((double)t < at)
		t++;
	t = (t + 59) / 60 * 60;
	if (gmtime_r(&t, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	/* whole UTC days between now's date and the reset's */
	days = (long)(t / 86400 - n / 86400);
	if (days > 0 && days < 7)
		snprintf(day, sizeof(day), "%s ", wday[tm.tm_wday % 7]);
	else if (days != 0)
		snprintf(day, sizeof(day), "%04d-%02d-%02d ", tm.tm_year + 1900,
		    tm.tm_mon + 1, tm.tm_mday);
	why = str_fmt("%s until %s%02d:%02d UTC", what, day, tm.tm_hour,
	    tm.tm_min);
	open_circuit(s, l, res, why, cause, now);
	s->retry_at = at;
	res->outcome = OUT_OPEN;
	free(why);
}

void
breaker_hold(struct cb_state *s, const struct cb_limits *l,
    const char *what, double at, double now, struct cb_result *res)
{
	res->n = 0;
	res->outcome = OUT_OK;
	open_until(s, l, res, what, CAUSE_LIMIT, at, now);
	s->updated_at = now;
}

/* Rule 3: the warning step.  Only ever taken from CLOSED. */
static void
half_open(struct cb_state *s, const struct cb_limits *l,
    struct cb_result *res, double now)
{
	char *why = str_fmt("No progress detected for %d iteration%s",
	    s->no_progress_count, plural(s->no_progress_count));

	move_to(s, l, res, CB_HALF_OPEN, why, NULL, now);
	free(why);
}

/* Rules 1 and 2: the counters, last_error and errors_total. */
static void
count_run(struct cb_state *s, const struct cb_run *run)
{
	int transient = run->cls == CB_CLASS_TRANSIENT;
	char task[CB_EVENT_TASK_MAX + 1];

	/* A task name from the run (its TASK:) is cut where the history
	 * cuts it: whatever the command prints, the state, the skips and the
	 * environment built from them stay bounded. */
	copy_utf8(task, sizeof(task), run->task);

	if ((unsigned)run->cls < CB_CLASS_COUNT)
		inc_long(&s->errors_total[run->cls]);
	if (run->progress) {
		s->no_progress_count = 0;
		s->last_progress_iteration = s->iteration;
	} else if (!transient && !run->unseen) {
		inc(&s->no_progress_count);
	}

	if (run->cls == CB_CLASS_SUCCESS) {
		s->consecutive_errors = 0;
		s->same_error_count = 0;
		s->same_task_failures = 0;
		breaker_set_str(&s->last_error_hash, NULL);
		breaker_set_str(&s->last_failed_task, NULL);
		return;
	}
	inc(&s->consecutive_errors);
	if (!transient) {
		/* A missing fingerprint proves nothing, so it never matches. */
		if (run->hash != NULL && *run->hash != '\0' &&
		    s->last_error_hash != NULL &&
		    strcmp(s->last_error_hash, run->hash) == 0) {
			inc(&s->same_error_count);
		} else {
			s->same_error_count = 1;
			breaker_set_str(&s->last_error_hash,
			    run->hash != NULL && *run->hash != '\0' ?
			    run->hash : NULL);
		}
		if (*task != '\0') {
			if (s->last_failed_task != NULL &&
			    strcmp(s->last_failed_task, task) == 0) {
				inc(&s->same_task_failures);
			} else {
				s->same_task_failures = 1;
				breaker_set_str(&s->last_failed_task, task);
			}
		}
	}
	copy_utf8(s->last_error.cls, sizeof(s->last_error.cls),
	    (unsigned)run->cls < CB_CLASS_COUNT ? class_name(run->cls) : "");
	copy_utf8(s->last_error.type, sizeof(s->last_error.type), run->type);
	breaker_set_str(&s->last_error.message, run->message);
	s->last_error.exit_code = run->exit_code;
}

static void
log_run(struct cb_state *s, const struct cb_limits *l,
    const struct cb_run *run, double now)
{
	char task[CB_EVENT_TASK_MAX + 1];
	struct cb_event e;

	if (run->cls != CB_CLASS_SUCCESS) {
		event_init(&e, s, EV_ERROR, now, run->message, NULL);
		copy_utf8(e.cls, sizeof(e.cls),
		    (unsigned)run->cls < CB_CLASS_COUNT ?
		    class_name(run->cls) : "");
		copy_utf8(e.type, sizeof(e.type), run->type);
		/* What the stuck analysis reads: a task cut short keeps
		 * every event, and so the state file, bounded. */
		if (run->task != NULL && *run->task != '\0') {
			copy_utf8(task, sizeof(task), run->task);
			e.task = task;
		}
		if (run->hash != NULL)
			copy_utf8(e.hash, sizeof(e.hash), run->hash);
	} else {
		event_init(&e, s, EV_PROGRESS, now,
		    run->progress ? "progress" : "no progress", NULL);
	}
	e.progress = run->progress ? 1 : 0;
	e.exit_code = run->exit_code;
	e.complete = run->complete != 0;
	breaker_add_event(s, l->history_size, &e);
}

/*
 * Whether a trial run disproved why the circuit opened (SPEC §11): after
 * no progress, only progress does (an agent that exits 0 while stuck
 * must not close it); after errors, a success or progress; after a
 * limit, any run that did not meet it again (one that did re-opened
 * the circuit before this is asked).
 */
static int
disproved(const struct cb_state *s, const struct cb_run *run)
{
	switch (s->open_cause) {
	case CAUSE_NO_PROGRESS:
		return run->progress;
	case CAUSE_LIMIT:
		return !run->usage_limit;
	default:
		return run->progress || run->cls == CB_CLASS_SUCCESS;
	}
}

/* The trial half of rule 5: a HALF_OPEN circuit that a cooldown opened. */
static void
trial(struct cb_state *s, const struct cb_limits *l,
    const struct cb_run *run, double now, struct cb_result *res)
{
	double base, cap;

	if (disproved(s, run)) {
		s->trials_left = 0;
		s->cooldown = 0;
		/* CLOSED again: no opening is current any more. */
		s->opened_at = -1;
		breaker_set_str(&s->open_reason, NULL);
		s->open_cause = CAUSE_NONE;
		move_to(s, l, res, CB_CLOSED, run->progress ? "Trial run "
		    "made progress" : "Trial run succeeded", NULL, now);
		return;
	}
	if (--s->trials_left > 0)
		return;
	/* Each failed trial doubles the wait, up to an hour (or the
	 * configured cooldown when that is longer). */
	base = s->cooldown > 0 ? s->cooldown : l->cooldown;
	cap = l->cooldown > 3600 ? l->cooldown : 3600;
	s->cooldown = 2 * base < cap ? 2 * base : cap;
	open_circuit(s, l, res, s->open_cause == CAUSE_NO_PROGRESS &&
	    run->cls == CB_CLASS_SUCCESS ? "Trial run made no progress" :
	    "Trial run failed", s->open_cause, now);
	res->outcome = OUT_OPEN;
}

/* Rule 4.  STUCK outranks OPEN; a no-progress trip warns first. */
static void
check_trip(struct cb_state *s, const struct cb_limits *l, double now,
    struct cb_result *res)
{
	enum cb_outcome out = OUT_STUCK;
	enum cb_cause cause = CAUSE_ERRORS;
	const char *msg;
	char *why;

	if (reached(s->same_error_count, l->same_error)) {
		msg = s->last_error.message != NULL ?
		    s->last_error.message : s->last_error.type;
		why = str_fmt("Same error %d time%s: %s", s->same_error_count,
		    plural(s->same_error_count), msg);
	} else if (s->last_failed_task != NULL &&
	    reached(s->same_task_failures, l->max_retries)) {
		why = str_fmt("Task %s failed %d time%s in a row",
		    s->last_failed_task, s->same_task_failures,
		    plural(s->same_task_failures));
	} else if (reached(s->no_progress_count, l->no_progress)) {
		out = OUT_OPEN;
		cause = CAUSE_NO_PROGRESS;
		if (s->state == CB_CLOSED && l->half_open_after > 0)
			half_open(s, l, res, now);
		why = str_fmt("No progress for %d iteration%s",
		    s->no_progress_count, plural(s->no_progress_count));
	} else if (reached(s->consecutive_errors, l->max_consecutive_errors)) {
		out = OUT_OPEN;
		why = str_fmt("%d consecutive error%s", s->consecutive_errors,
		    plural(s->consecutive_errors));
	} else {
		return;
	}
	open_circuit(s, l, res, why, cause, now);
	res->outcome = out;
	free(why);
	/* The task rule holds, whichever reason won: Skip gives this task
	 * up rather than the phase. */
	if (out == OUT_STUCK && s->last_failed_task != NULL &&
	    reached(s->same_task_failures, l->max_retries))
		breaker_set_str(&s->stuck_task, s->last_failed_task);
}

int
breaker_admit(struct cb_state *s, const struct cb_limits *l, double now,
    struct cb_result *res)
{
	double cooldown = s->cooldown > 0 ? s->cooldown : l->cooldown;
	char secs[64], *why;

	res->n = 0;
	res->outcome = OUT_OK;
	if (s->state != CB_OPEN)
		return 1;
	/* A provider's limit is waited out to the time it named, then one
	 * trial run needs no operator. */
	if (!s->tripped && s->retry_at >= 0) {
		if (now < s->retry_at)
			return 0;
		move_to(s, l, res, CB_HALF_OPEN, "Retry time reached", NULL,
		    now);
		s->retry_at = -1;
		s->trials_left = 1;
		s->updated_at = now;
		return 1;
	}
	/* A configured cooldown of 0 means only an operator closes it, even
	 * when an earlier, doubled cooldown is still on file. */
	if (s->tripped || l->cooldown <= 0 || s->opened_at < 0 ||
	    now - s->opened_at < cooldown)
		return 0;
	fmt_secs(secs, sizeof(secs), cooldown);
	why = str_fmt("Cooldown of %ss passed", secs);
	move_to(s, l, res, CB_HALF_OPEN, why, NULL, now);
	free(why);
	s->trials_left = l->half_open_trials > 0 ? l->half_open_trials : 1;
	s->updated_at = now;
	return 1;
}

/* A copy of text cut to CB_TEXT_MAX bytes when it is longer, else NULL. */
static char *
cut_text(const char *text)
{
	char *p;

	if (text == NULL || strlen(text) <= CB_TEXT_MAX ||
	    (p = malloc(CB_TEXT_MAX + 1)) == NULL)
		return NULL;
	copy_utf8(p, CB_TEXT_MAX + 1, text);
	return p;
}

static void record(struct cb_state *s, const struct cb_limits *l,
    const struct cb_run *run, double now, struct cb_result *res);

void
breaker_record(struct cb_state *s, const struct cb_limits *l,
    const struct cb_run *run, double now, struct cb_result *res)
{
	struct cb_run r = *run;
	char *msg = cut_text(run->message), *task = cut_text(run->task);

	/* What the command printed is kept bounded, so a state of many
	 * runs stays well below what the store accepts. */
	if (msg != NULL)
		r.message = msg;
	if (task != NULL)
		r.task = task;
	record(s, l, &r, now, res);
	free(msg);
	free(task);
}

static void
record(struct cb_state *s, const struct cb_limits *l,
    const struct cb_run *run, double now, struct cb_result *res)
{
	char *why;

	res->n = 0;
	res->outcome = OUT_OK;
	inc_long(&s->iteration);
	s->updated_at = now;
	s->last_run_at = now;
	s->limits = *l;
	s->complete = run->complete != 0 && !run->ignored;
	/* An ignored exit neither counts nor spends a trial; the history
	 * still shows that it ran. */
	if (run->ignored) {
		struct cb_event e;

		memset(&e, 0, sizeof(e));
		e.ts = now;
		e.iteration = s->iteration;
		e.kind = EV_PROGRESS;
		e.from = e.to = -1;
		e.progress = -1;
		e.exit_code = run->exit_code;
		e.reason = run->ignored == CB_IGNORED_CLOSED ?
		    (char *)"ignored: its output was closed downstream" :
		    (char *)"ignored exit code";
		/* how it ended, as for any run (the log says it too) */
		copy_utf8(e.cls, sizeof(e.cls), (unsigned)run->cls <
		    CB_CLASS_COUNT ? class_name(run->cls) : "");
		if (run->cls != CB_CLASS_SUCCESS && run->type != NULL)
			copy_utf8(e.type, sizeof(e.type), run->type);
		breaker_add_event(s, l->history_size, &e);
		return;
	}
	if (run->cls == CB_CLASS_SUCCESS)
		s->last_success_at = now;
	count_run(s, run);
	log_run(s, l, run, now);

	if (run->cls == CB_CLASS_FATAL) {
		if (s->state != CB_OPEN) {
			why = str_fmt("fatal: %s", run->type != NULL &&
			    *run->type != '\0' ? run->type : "unknown");
			open_circuit(s, l, res, why, CAUSE_ERRORS, now);
			free(why);
		}
		res->outcome = OUT_ABORT;
		return;
	}
	/* Only a caller that skipped breaker_admit() gets here. */
	if (s->state == CB_OPEN)
		return;
	/* Rule 8: nothing will work before the provider's reset time.  One
	 * already past is no reset time (SPEC §11: the limit was met after
	 * it, so it still holds): the wait is as without one, --cooldown or
	 * 5 minutes doubling, never a retry at once. */
	if (run->usage_limit) {
		open_until(s, l, res, "usage limit", CAUSE_LIMIT,
		    run->retry_at > now ? run->retry_at : now + limit_wait(s, l),
		    now);
		return;
	}
	if (s->state == CB_HALF_OPEN && s->trials_left > 0) {
		/* A trial that met a rate limit or an outage waits again,
		 * at least as long as the provider asked (after a limit, a
		 * run that did not meet it closes the circuit). */
		if (run->cls == CB_CLASS_TRANSIENT && !run->progress &&
		    s->open_cause != CAUSE_LIMIT) {
			double w = limit_wait(s, l);

			if (run->retry_after > w)
				w = run->retry_after;
			if (run->retry_at > now + w)
				w = run->retry_at - now;
			open_until(s, l, res, "Trial run failed; retrying",
			    s->open_cause, now + w, now);
			return;
		}
		trial(s, l, run, now, res);
		return;
	}
	if (s->state == CB_HALF_OPEN && run->progress)
		move_to(s, l, res, CB_CLOSED, "Progress detected", NULL, now);
	if (s->state == CB_CLOSED &&
	    reached(s->no_progress_count, l->half_open_after))
		half_open(s, l, res, now);
	check_trip(s, l, now, res);
}

/* Rule 6's closing, shared by a reset and a skip: an operator event
 * (with the transition, when there is one) and the counters cleared. */
static void
close_by_operator(struct cb_state *s, const struct cb_limits *l,
    enum cb_event_kind kind, const char *reason, const char *user, double now,
    struct cb_result *res)
{
	struct cb_event e;

	event_init(&e, s, kind, now, reason, user);
	if (s->state != CB_CLOSED) {
		add_transition(res, s->state, CB_CLOSED, reason, now);
		e.from = (int)s->state;
		e.to = CB_CLOSED;
	}
	breaker_add_event(s, l->history_size, &e);

	s->state = CB_CLOSED;
	s->no_progress_count = 0;
	s->same_error_count = 0;
	s->consecutive_errors = 0;
	s->same_task_failures = 0;
	breaker_set_str(&s->last_failed_task, NULL);
	breaker_set_str(&s->last_error_hash, NULL);
	breaker_set_str(&s->stuck_task, NULL);
	s->opened_at = -1;
	breaker_set_str(&s->open_reason, NULL);
	s->open_cause = CAUSE_NONE;
	s->retry_at = -1;
	s->tripped = 0;
	s->trials_left = 0;
	s->cooldown = 0;
	s->outcome = OUT_OK;
	s->updated_at = now;
}

void
breaker_reset(struct cb_state *s, const struct cb_limits *l,
    const char *reason, const char *user, double now, struct cb_result *res)
{
	if (reason == NULL || *reason == '\0')
		reason = "reset by operator";
	res->n = 0;
	res->outcome = OUT_OK;
	close_by_operator(s, l, EV_RESET, reason, user, now, res);
	/* The spend windows start again too, or the next run would be held
	 * at once; the lifetime totals stay, as total_opens does. */
	s->n_ledger = 0;
}

void
breaker_trip(struct cb_state *s, const struct cb_limits *l,
    const char *reason, const char *user, double now, struct cb_result *res)
{
	struct cb_event e;
	char *why = NULL;
	const char *r = "tripped by operator";

	res->n = 0;
	res->outcome = OUT_OPEN;
	if (reason != NULL && *reason != '\0' &&
	    (why = str_fmt("%s: %s", r, reason)) != NULL)
		r = why;
	if (s->state != CB_OPEN) {
		move_to(s, l, res, CB_OPEN, r, user, now);
		s->opened_at = now;
		inc_long(&s->total_opens);
		breaker_set_str(&s->stuck_task, NULL);
	} else {
		/* Already open: no new opening and no change of state (never
		 * "OPEN -> OPEN"), but the operator's act and reason still
		 * belong in the history: a trip event. */
		event_init(&e, s, EV_TRIP, now, r, user);
		breaker_add_event(s, l->history_size, &e);
	}
	breaker_set_str(&s->open_reason, r);
	s->open_cause = CAUSE_NONE;
	s->retry_at = -1;
	s->tripped = 1;
	s->trials_left = 0;
	s->updated_at = now;
	free(why);
}

/* Phases are named case-insensitively (--phase green is GREEN), tasks
 * exactly as reported. */
static int
same_name(enum cb_skip_kind kind, const char *a, const char *b)
{
	return kind == SKIP_PHASE ? strcasecmp(a, b) == 0 : strcmp(a, b) == 0;
}

int
breaker_skip(struct cb_state *s, const struct cb_limits *l,
    enum cb_skip_kind kind, const char *name, const char *reason,
    const char *user, double now, struct cb_result *res)
{
	struct cb_skip *k = NULL, *p;
	char *why, cut[CB_EVENT_TASK_MAX + 1];
	size_t i;

	res->n = 0;
	res->outcome = OUT_SKIP;
	res->why[0] = '\0';
	if (name == NULL || *name == '\0')
		return -1;
	/* a name as long as a task name can be, no longer */
	copy_utf8(cut, sizeof(cut), name);
	name = cut;
	if (reason != NULL && *reason == '\0')
		reason = NULL;
	for (i = 0; i < s->n_skips && k == NULL; i++)
		if (s->skips[i].kind == kind &&
		    same_name(kind, s->skips[i].name, name))
			k = &s->skips[i];
	if (k == NULL) {
		if (s->n_skips >= CB_SKIPS_MAX ||
		    (p = realloc(s->skips, (s->n_skips + 1) *
		    sizeof(*p))) == NULL)
			return -1;
		s->skips = p;
		k = &p[s->n_skips];
		memset(k, 0, sizeof(*k));
		if ((k->name = strdup(name)) == NULL)
			return -1;
		k->kind = kind;
		s->n_skips++;
	}
	k->at = now;
	breaker_set_str(&k->reason, reason);
	breaker_set_str(&k->user, user);

	why = str_fmt("skipped %s %s%s%s", skip_kind_name(kind), name,
	    reason != NULL ? ": " : "", reason != NULL ? reason : "");
	copy_utf8(res->why, sizeof(res->why), why != NULL ? why : "skipped");
	close_by_operator(s, l, EV_SKIP, why != NULL ? why : res->why, user,
	    now, res);
	free(why);
	s->outcome = OUT_SKIP;
	return 0;
}

/* Append "phase GREEN" to buf (of size n, holding a string) while it
 * fits; a name too long for the rest is cut, and then nothing more. */
static void
append_skip(char *buf, size_t n, const struct cb_skip *k)
{
	size_t len = strlen(buf);

	if (len + 1 >= n)
		return;
	snprintf(buf + len, n - len, "%s%s ", len > 0 ? ", " : "",
	    skip_kind_name(k->kind));
	len = strlen(buf);
	copy_utf8(buf + len, n - len, k->name);
}

int
breaker_unskip(struct cb_state *s, const struct cb_limits *l,
    const char *name, const char *user, double now, struct cb_result *res)
{
	struct cb_event e;
	char what[200] = "";
	size_t i, kept = 0;
	int gone = 0;

	res->n = 0;
	res->outcome = OUT_OK;
	res->why[0] = '\0';
	for (i = 0; i < s->n_skips; i++) {
		struct cb_skip *k = &s->skips[i];

		if (name == NULL || same_name(k->kind, k->name, name)) {
			append_skip(what, sizeof(what), k);
			free(k->name);
			free(k->reason);
			free(k->user);
			gone++;
		} else
			s->skips[kept++] = *k;
	}
	s->n_skips = kept;
	if (gone == 0)
		return 0;
	snprintf(res->why, sizeof(res->why), "unskipped %s", what);
	event_init(&e, s, EV_SKIP, now, res->why, user);
	breaker_add_event(s, l->history_size, &e);
	s->updated_at = now;
	return gone;
}

const struct cb_skip *
breaker_skipped(const struct cb_state *s, const char *phase,
    const char *task)
{
	size_t i;

	for (i = 0; i < s->n_skips; i++) {
		const struct cb_skip *k = &s->skips[i];
		const char *want = k->kind == SKIP_PHASE ? phase : task;

		if (want != NULL && same_name(k->kind, k->name, want))
			return k;
	}
	return NULL;
}
