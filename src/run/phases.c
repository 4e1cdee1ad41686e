/*
 * The phases of one run (supervise.c describes them): the run's watchers
 * and timers, the stop of the command with its escalation to SIGKILL, the
 * clean-up of whatever it left behind, and the drain of its pipes.
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ev.h>

#include "clock.h"
#include "digest.h"
#include "ptimer.h"
#include "spawn.h"
#include "supervise_int.h"

/* --timeout and the budget: precise, and kept for the process. */
static struct ptimer t_timeout = PTIMER_INITIALIZER;
static struct ptimer t_budget = PTIMER_INITIALIZER;

static void
group_kill(struct run *r, int sig)
{
	if (sig == 0)
		return;
	r->res->signalled_by_us = 1;
	kill(-r->pid, sig);
	/* The command may have left its group (setsid); reach it too. */
	kill(r->pid, sig);
}

static void
check_done(struct run *r)
{
	if (r->phase == DRAIN && r->s[0].rfd == -1 && r->s[1].rfd == -1)
		ev_break(sup_loop, EVBREAK_ONE);
}

/* After each round of copying: the run may be over. */
void
run_on_relay(struct relay *s)
{
	check_done(s->data);
}

static void
start_drain(struct run *r)
{
	int i;

	r->phase = DRAIN;
	ev_timer_stop(sup_loop, &r->t_poll);
	ev_timer_stop(sup_loop, &r->t_kill);
	ptimer_stop(sup_loop, &t_timeout);
	for (i = 0; i < 2; i++)
		relay_drain(&r->s[i]);
	check_done(r);
}

/*
 * CLEANUP: runs first from a zero timer, after libev has reaped every
 * child that already died, then on each child reaped and every 10 ms.  The
 * group gets SIGTERM at once; children outside it (daemons that called
 * setsid) are named by a walk of /proc only if they are still there 10 ms
 * later, so a run whose group dies at once never pays for the walk.
 */
static void
check_leftovers(struct run *r)
{
	if (!spawn_leftovers(r->pid)) {
		start_drain(r);
		return;
	}
	if (!r->cleanup_begun) {
		r->cleanup_begun = 1;
		r->cleanup_at = mono_now();
		ev_timer_stop(sup_loop, &r->t_kill);
		if (!r->cleanup_kill && r->cfg->kill_after > 0) {
			ev_timer_set(&r->t_kill, r->cfg->kill_after, 0);
			ev_timer_start(sup_loop, &r->t_kill);
		} else
			r->cleanup_kill = 1;
		kill(-r->pid, r->cleanup_kill ? SIGKILL : SIGTERM);
	} else if (r->cleanup_kill)
		spawn_kill_leftovers(r->pid, SIGKILL);
	else if (!r->termed_all && mono_now() - r->cleanup_at >= 0.01) {
		spawn_kill_leftovers(r->pid, SIGTERM);
		r->termed_all = 1;
	}
	if (!ev_is_active(&r->t_poll))
		ev_timer_again(sup_loop, &r->t_poll);
}

static void
begin_cleanup(struct run *r)
{
	r->phase = CLEANUP;
	ev_timer_stop(sup_loop, &r->t_poll);
	ev_timer_set(&r->t_poll, 0, 0.01);
	ev_timer_start(sup_loop, &r->t_poll);
}

static void
on_child(struct ev_loop *l, ev_child *w, int revents)
{
	struct run *r = w->data;
	sigset_t ttou, old;

	ev_child_stop(sup_loop, w);
	r->reaped = 1;
	r->res->duration = mono_now() - r->start;
	if (WIFEXITED(w->rstatus))
		r->res->exit_code = WEXITSTATUS(w->rstatus);
	else if (WIFSIGNALED(w->rstatus))
		r->res->signo = WTERMSIG(w->rstatus);
	if (r->fg_tty) {
		/* We are a background group now: tcsetpgrp would stop us
		 * with SIGTTOU unless it is blocked. */
		sigemptyset(&ttou);
		sigaddset(&ttou, SIGTTOU);
		sigprocmask(SIG_BLOCK, &ttou, &old);
		tcsetpgrp(STDIN_FILENO, getpgrp());
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	ptimer_stop(sup_loop, &t_timeout);
	if (r->cfg->keep_orphans)
		start_drain(r);
	else
		begin_cleanup(r);
}

static void
on_any_child(struct ev_loop *l, ev_child *w, int revents)
{
	struct run *r = w->data;

	if (r->phase == CLEANUP)
		check_leftovers(r);
}

static void
on_poll(struct ev_loop *l, ev_timer *w, int revents)
{
	struct run *r = w->data;

	if (r->phase == CLEANUP)
		check_leftovers(r);
	else
		ev_timer_stop(sup_loop, w);
}

static void
on_kill(struct ev_loop *l, ev_timer *w, int revents)
{
	run_kill_now(w->data);
}

/* Stop the command: the signal now, SIGKILL after --kill-after. */
void
run_stop(struct run *r, int sig)
{
	if (r->phase != RUNNING) {
		/* It has exited already: what it left gets SIGKILL now. */
		run_kill_now(r);
		return;
	}
	group_kill(r, sig);
	/* While the command dies, load what its failure will need: the
	 * fingerprint's libcrypto (at once when on_prepare did it).  This
	 * is time cbexec would otherwise spend after the command's exit. */
	digest_prepare();
	if (ev_is_active(&r->t_kill))
		return;
	/* --kill-after 0: no SIGKILL; with --signal 0 as well the command
	 * runs to its end, as under timeout -s0 -k0. */
	if (r->cfg->kill_after > 0) {
		ev_timer_set(&r->t_kill, r->cfg->kill_after, 0);
		ev_timer_start(sup_loop, &r->t_kill);
	}
}

/*
 * A run near its time limit will most likely be stopped, and its failure
 * needs libcrypto for the fingerprint: load it now, while the command
 * still runs, so neither the kill nor the exit after it waits for the
 * load.  A run that then ends in time has paid about a millisecond.
 */
static void
on_prepare(struct ev_loop *l, ev_timer *w, int revents)
{
	digest_prepare();
}

static void
on_timeout(struct ptimer *t)
{
	struct run *r = t->data;

	r->res->timed_out = 1;
	run_stop(r, r->cfg->signal);
}

static void
on_budget(struct ptimer *t)
{
	struct run *r = t->data;

	r->res->timed_out = 1;
	r->res->budget_expired = 1;
	if (r->phase == DRAIN) {
		relay_close(&r->s[0]);
		relay_close(&r->s[1]);
		check_done(r);
		return;
	}
	run_stop(r, r->cfg->signal);
}

/* The watchers and timers of run r, just forked. */
void
run_arm(struct run *r)
{
	double now, limit;

	ev_child_init(&r->cw, on_child, r->pid, 0);
	ev_child_init(&r->anyw, on_any_child, 0, 0);
	r->cw.data = r->anyw.data = r;
	ev_child_start(sup_loop, &r->cw);
	ev_child_start(sup_loop, &r->anyw);
	ptimer_init(&t_timeout, on_timeout);
	ptimer_init(&t_budget, on_budget);
	t_timeout.data = t_budget.data = r;
	ev_init(&r->t_kill, on_kill);
	ev_init(&r->t_poll, on_poll);
	ev_init(&r->t_prepare, on_prepare);
	r->t_kill.data = r->t_poll.data = r;
	r->t_poll.repeat = 0.01;
	/* Like timeout(1), the time counts from the fork, not from the
	 * moment the exec has succeeded. */
	now = mono_now();
	limit = -1;
	if (r->cfg->timeout > 0) {
		limit = r->cfg->timeout - (now - r->start);
		ptimer_start(sup_loop, &t_timeout, r->start + r->cfg->timeout);
	}
	if (r->cfg->deadline > 0) {
		double left = r->cfg->deadline - now;

		if (limit < 0 || left < limit)
			limit = left;
		ptimer_start(sup_loop, &t_budget, r->cfg->deadline);
	}
	if (limit > 0) {
		ev_timer_set(&r->t_prepare, limit * 0.75, 0);
		ev_timer_start(sup_loop, &r->t_prepare);
	}
}

void
run_disarm(struct run *r)
{
	ev_child_stop(sup_loop, &r->cw);
	ev_child_stop(sup_loop, &r->anyw);
	ptimer_stop(sup_loop, &t_timeout);
	ptimer_stop(sup_loop, &t_budget);
	ev_timer_stop(sup_loop, &r->t_kill);
	ev_timer_stop(sup_loop, &r->t_poll);
	ev_timer_stop(sup_loop, &r->t_prepare);
}

/* No more grace for anything of the run: --kill-after has passed, or a
 * second interrupt came. */
void
run_kill_now(struct run *r)
{
	if (r->phase == RUNNING)
		group_kill(r, SIGKILL);
	else {
		r->cleanup_kill = 1;
		if (r->phase == CLEANUP)
			check_leftovers(r);
	}
}
