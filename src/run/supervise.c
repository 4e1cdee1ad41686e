/* SPDX-License-Identifier: ISC */
/*
 * The event loop of one run, on libev's default loop (which owns SIGCHLD
 * and reaps every child).  A run moves through three phases:
 *
 *   RUNNING  the command is alive; its stdout/stderr are copied through
 *            as they arrive and their tails kept in rings; --timeout, the
 *            budget, --idle-timeout, a stop the tap asks for (sup_stop)
 *            and operator signals send a signal to its process group and
 *            arm --kill-after for SIGKILL.
 *   CLEANUP  the command has exited; anything of the run still alive (its
 *            group, orphans reparented to us) gets SIGTERM, then SIGKILL
 *            after --kill-after, until nothing is left.
 *   DRAIN    the pipes are read to their end, which now comes at once:
 *            every writer is dead, so a daemon holding stdout can never
 *            make cbexec hang.  With --keep-orphans, DRAIN stops at the
 *            first empty read instead.
 *
 * Through all three, a caller's keepalive (a shared store's lease) runs
 * on a repeating timer and whenever its descriptor becomes readable (the
 * store hung up); once it fails, the run has lost what made it
 * exclusive, and everything of it is killed at once.
 *
 * sup_init() sets the loop up once; sup_run() starts each run, and the
 * watchers and timers below move it through its phases.
 *
 * Output goes to cbexec's own stdout/stderr through relay.c.  When those
 * are pipes they are reopened through /proc/self/fd as new, non-blocking
 * open file descriptions, so a stalled reader never blocks the loop (timers
 * still fire), the O_NONBLOCK flag never leaks to whoever shares the pipe,
 * and the relay can splice into them.  Those pipes and the command's are
 * made 256 KiB (where the pipe limits allow), so that neither the command
 * nor our reader waits while cbexec copies the other stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ev.h>

#include "core.h"
#include "ptimer.h"
#include "relay.h"
#include "spawn.h"
#include "run.h"

#define PIPE_SIZE (256 * 1024)

enum phase { RUNNING, CLEANUP, DRAIN };

struct run {
	const struct sup_cfg *cfg;
	struct sup_result *res;
	pid_t pid;
	enum phase phase;
	int reaped;
	int cleanup_kill;	/* leftovers get SIGKILL now */
	int cleanup_begun;	/* the group had its SIGTERM */
	int termed_all;		/* every child of ours had its SIGTERM too */
	double cleanup_at;
	int fg_tty;
	double start;
	ev_child cw, anyw;
	ev_timer t_kill, t_poll, t_prepare, t_drain, t_idle, t_keep, t_grace;
	ev_timer t_until;	/* the keepalive's own deadline */
	ev_timer t_pend;	/* a keepalive waiting for its answer */
	ev_io io_keep;
	unsigned long long drained;	/* bytes out at the last t_drain */
	double started_at;		/* the fork, on the loop's clock */
	struct relay s[2];
};

static struct ev_loop *sup_loop;
static struct run *cur;
static int aborted;
static int out_fd[2] = { STDOUT_FILENO, STDERR_FILENO };
static int out_nonblock[2];
static ev_signal sigw[9];
static ev_timer sleep_timer;
/* The operator signals while held back (sup_hold): blocked, and read
 * from sig_fd so a wait outside the loop can end on one at once. */
static sigset_t stop_set;
static int hold_depth, sig_fd = -1;
static sigset_t hold_old;

static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static const int pass_sigs[] = { SIGUSR1, SIGUSR2, SIGWINCH, SIGTSTP,
	SIGCONT };

static void run_kill_now(struct run *r);

/* --timeout and the budget: precise, and kept for the process. */
static struct ptimer t_timeout = PTIMER_INITIALIZER;
static struct ptimer t_budget = PTIMER_INITIALIZER;

static void
group_kill(struct run *r, int sig)
{
	if (sig == 0)
		return;
	/* The watchdog need not send it again (watchdog.c). */
	watch_sent(WATCH_RUN, sig, 0);
	r->res->signalled_by_us = 1;
	kill(-r->pid, sig);
	/* The command may have left its group (setsid); reach it too. */
	kill(r->pid, sig);
	/* A stopped process would only act on the signal once continued:
	 * continue it, as timeout(1) does. */
	if (sig != SIGKILL && sig != SIGCONT) {
		kill(-r->pid, SIGCONT);
		kill(r->pid, SIGCONT);
	}
}

/* What the watchdog did while cbexec was stopped or late, as a result. */
static void
watch_ended(struct run *r)
{
	int why, did = watch_fired(WATCH_RUN, &why);

	/* Only when the watchdog was first: a stop cbexec began itself
	 * (an interrupt, a cap) keeps its own meaning. */
	if (!(did & (WATCH_WD_SENT | WATCH_WD_KILLED)) ||
	    (did & (WATCH_SENT | WATCH_WD_LEASE | WATCH_WD_AFTER)))
		return;
	r->res->timed_out = 1;
	r->res->signalled_by_us = 1;
	if (why == WATCH_BUDGET)
		r->res->budget_expired = 1;
}

static void
check_done(struct run *r)
{
	if (r->phase == DRAIN && r->s[0].rfd == -1 && r->s[1].rfd == -1)
		ev_break(sup_loop, EVBREAK_ONE);
}

/* After each round of copying: the run may be over. */
static void
run_on_relay(struct relay *s)
{
	check_done(s->data);
}

/*
 * DRAIN ends when our reader has taken nothing for a whole --kill-after
 * (10 s when that is 0): what is left then is dropped, so a reader that
 * stopped reading (`cbexec ... | sleep 30`) cannot hold cbexec, while a
 * slow one that keeps reading gets everything.
 */
static void
on_drain(struct ev_loop *l, ev_timer *w, int revents)
{
	struct run *r = w->data;
	unsigned long long moved = r->s[0].moved + r->s[1].moved;

	if (moved != r->drained) {
		r->drained = moved;
		return;
	}
	ev_timer_stop(sup_loop, w);
	relay_close(&r->s[0]);
	relay_close(&r->s[1]);
	check_done(r);
}

static void
start_drain(struct run *r)
{
	double grace = r->cfg->kill_after > 0 ? r->cfg->kill_after : 10;
	int i;

	r->phase = DRAIN;
	/* Nothing of the run is alive: no deadline is left to keep. */
	watch_quiet(WATCH_RUN);
	ev_timer_stop(sup_loop, &r->t_poll);
	ev_timer_stop(sup_loop, &r->t_kill);
	ptimer_stop(sup_loop, &t_timeout);
	r->drained = r->s[0].moved + r->s[1].moved;
	ev_timer_set(&r->t_drain, grace, grace);
	ev_timer_start(sup_loop, &r->t_drain);
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
		watch_sent(WATCH_RUN, r->cleanup_kill ? SIGKILL : SIGTERM,
		    r->cleanup_kill ? 0 : r->cleanup_at + r->cfg->kill_after);
		kill(-r->pid, r->cleanup_kill ? SIGKILL : SIGTERM);
		if (!r->cleanup_kill)
			kill(-r->pid, SIGCONT);
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

/* SIGTTOU blocked around tcsetpgrp: a background group asking for the
 * terminal would otherwise be stopped by it. */
static void
give_terminal(pid_t pgrp)
{
	sigset_t ttou, old;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(STDIN_FILENO, pgrp);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/*
 * The command, which holds the terminal, was stopped (Ctrl-Z): the shell
 * waits for cbexec, not for it, so cbexec takes the terminal back and
 * stops itself the same way, as sudo and su --pty do.  When the shell
 * continues cbexec in the foreground (fg), the command gets the terminal
 * and SIGCONT; continued in the background (bg), it only gets SIGCONT.
 */
static void
child_stopped(struct run *r, int sig)
{
	struct sigaction dfl, old;

	give_terminal(getpgrp());
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	if (sig == SIGTSTP && sigaction(SIGTSTP, &dfl, &old) == 0) {
		kill(getpid(), SIGTSTP);
		sigaction(SIGTSTP, &old, NULL);
	} else
		kill(getpid(), SIGSTOP);
	/* Here again once continued. */
	if (tcgetpgrp(STDIN_FILENO) == getpgrp())
		give_terminal(r->pid);
	kill(-r->pid, SIGCONT);
}

static void
on_child(struct ev_loop *l, ev_child *w, int revents)
{
	struct run *r = w->data;

	if (WIFCONTINUED(w->rstatus))
		return;
	if (WIFSTOPPED(w->rstatus)) {
		if (r->fg_tty && r->phase == RUNNING)
			child_stopped(r, WSTOPSIG(w->rstatus));
		return;
	}
	ev_child_stop(sup_loop, w);
	r->reaped = 1;
	r->res->duration = mono_now() - r->start;
	/* Stopped past a deadline, cbexec did not end the run; the
	 * watchdog did: a time limit all the same (SPEC §11). */
	watch_ended(r);
	if (WIFEXITED(w->rstatus))
		r->res->exit_code = WEXITSTATUS(w->rstatus);
	else if (WIFSIGNALED(w->rstatus))
		r->res->signo = WTERMSIG(w->rstatus);
	if (r->fg_tty)
		give_terminal(getpgrp());
	ptimer_stop(sup_loop, &t_timeout);
	ev_timer_stop(sup_loop, &r->t_idle);
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
static void
run_stop(struct run *r, int sig)
{
	if (r->phase != RUNNING) {
		/* It has exited already: what it left gets SIGKILL now. */
		run_kill_now(r);
		return;
	}
	group_kill(r, sig);
	/* While the command dies, set up what its failure will need: the
	 * fingerprint's SHA-256 (at once when on_prepare did it).  This is
	 * time cbexec would otherwise spend after the command's exit. */
	digest_prepare();
	if (ev_is_active(&r->t_kill))
		return;
	/* --kill-after 0: no SIGKILL; with --signal 0 as well the command
	 * runs to its end, as under timeout -s0 -k0. */
	if (r->cfg->kill_after > 0) {
		ev_timer_set(&r->t_kill, r->cfg->kill_after, 0);
		ev_timer_start(sup_loop, &r->t_kill);
		/* ... and the watchdog sends it should cbexec be stopped. */
		watch_sent(WATCH_RUN, 0, mono_now() + r->cfg->kill_after);
	}
}

/*
 * A run near its time limit will most likely be stopped, and its failure
 * needs SHA-256 for the fingerprint: set OpenSSL up now, while the
 * command still runs, so neither the kill nor the exit after it waits for
 * it.  A run that then ends in time has paid for it anyway.
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

/* --idle-timeout: fires when the last output may be that old; stops the
 * run if nothing came since, else waits for the rest of the time. */
static void
on_idle(struct ev_loop *l, ev_timer *w, int revents)
{
	struct run *r = w->data;
	double last = r->started_at, left;

	/* the relays note when output came, so a busy stream costs no
	 * timer restarts */
	if (r->s[0].heard_at > last)
		last = r->s[0].heard_at;
	if (r->s[1].heard_at > last)
		last = r->s[1].heard_at;
	left = last + r->cfg->idle_timeout - ev_now(l);

	if (r->phase != RUNNING)
		return;
	if (left > 0) {
		ev_timer_set(w, left, 0);
		ev_timer_start(l, w);
		return;
	}
	r->res->timed_out = 1;
	r->res->idle = 1;
	run_stop(r, r->cfg->signal);
}

void
sup_stop(int why)
{
	struct run *r = cur;

	if (r == NULL || why <= 0 || r->res->stopped != 0 ||
	    r->phase != RUNNING)
		return;
	r->res->timed_out = 1;
	r->res->stopped = why;
	run_stop(r, r->cfg->signal);
}

/* The grace after the command's final result is over, and it is still
 * there. */
static void
on_grace(struct ev_loop *l, ev_timer *w, int revents)
{
	struct run *r = w->data;

	if (r->phase != RUNNING)
		return;
	r->res->lingered = 1;
	run_stop(r, r->cfg->signal);
}

void
sup_grace(double seconds)
{
	struct run *r = cur;

	if (r == NULL || seconds <= 0 || r->phase != RUNNING ||
	    ev_is_active(&r->t_grace) || r->res->lingered)
		return;
	ev_timer_set(&r->t_grace, seconds, 0);
	ev_timer_start(sup_loop, &r->t_grace);
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

/* The keepalive's deadline, armed anew (a renewal moves it). */
static void
until_arm(struct run *r)
{
	double at;

	ev_timer_stop(sup_loop, &r->t_until);
	if (r->cfg->keepalive_until == NULL ||
	    (at = r->cfg->keepalive_until(r->cfg->keepalive_arg)) <= 0)
		return;
	ev_timer_set(&r->t_until, at - mono_now() > 0 ? at - mono_now() : 0,
	    0);
	ev_timer_start(sup_loop, &r->t_until);
	/* A stopped cbexec renews nothing: the run must still be dead
	 * before the lease can lapse. */
	watch_lease(WATCH_RUN, at);
}

/* The caller's keepalive; when it fails, the run ends now. */
static void
keepalive(struct run *r)
{
	int fd, rc;

	if (r->res->keepalive_failed)
		return;
	/* its descriptor may be another after it (connected again) */
	ev_io_stop(sup_loop, &r->io_keep);
	ev_timer_stop(sup_loop, &r->t_pend);
	if ((rc = r->cfg->keepalive(r->cfg->keepalive_arg)) >= 0) {
		fd = r->cfg->keepalive_fd_of != NULL ?
		    r->cfg->keepalive_fd_of(r->cfg->keepalive_arg) :
		    r->cfg->keepalive_fd;
		if (fd >= 0) {
			ev_io_set(&r->io_keep, fd, EV_READ);
			ev_io_start(sup_loop, &r->io_keep);
		}
		if (rc == 1) {
			/* the answer is awaited on the loop, never blocking
			 * the relay or the timers */
			ev_timer_set(&r->t_pend, 0.05, 0);
			ev_timer_start(sup_loop, &r->t_pend);
		} else {
			until_arm(r);
		}
		return;
	}
	r->res->keepalive_failed = 1;
	ev_timer_stop(sup_loop, &r->t_keep);
	ev_timer_stop(sup_loop, &r->t_until);
	ev_io_stop(sup_loop, &r->io_keep);
	run_stop(r, SIGKILL);
}

static void
on_keep(struct ev_loop *l, ev_timer *w, int revents)
{
	keepalive(w->data);
}

static void
on_keep_io(struct ev_loop *l, ev_io *w, int revents)
{
	keepalive(w->data);
}

static void
on_until(struct ev_loop *l, ev_timer *w, int revents)
{
	keepalive(w->data);
}

/*
 * The run's limits, kept by the watchdog too, set before the fork: a
 * command that stops cbexec (kill -STOP $PPID) stops cbexec's timers,
 * never the watchdog's.
 */
static void
watch_limits(const struct run *r)
{
	const struct sup_cfg *c = r->cfg;

	watch_arm(WATCH_RUN);
	if (c->timeout > 0 && (c->deadline <= 0 ||
	    r->start + c->timeout < c->deadline))
		watch_deadline(WATCH_RUN, c->signal, r->start + c->timeout,
		    c->kill_after, WATCH_TIMEOUT);
	else if (c->deadline > 0)
		watch_deadline(WATCH_RUN, c->signal, c->deadline,
		    c->kill_after, WATCH_BUDGET);
	if (c->keepalive != NULL && c->keepalive_until != NULL)
		watch_lease(WATCH_RUN, c->keepalive_until(c->keepalive_arg));
}

/* The watchers and timers of run r, just forked. */
static void
run_arm(struct run *r)
{
	double now, limit;

	/* trace: stops too, for Ctrl-Z at a terminal. */
	ev_child_init(&r->cw, on_child, r->pid, r->fg_tty);
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
	ev_init(&r->t_drain, on_drain);
	ev_init(&r->t_idle, on_idle);
	ev_init(&r->t_grace, on_grace);
	r->t_kill.data = r->t_poll.data = r->t_drain.data = r;
	r->t_idle.data = r->t_grace.data = r;
	r->t_poll.repeat = 0.01;
	ev_init(&r->t_keep, on_keep);
	ev_init(&r->io_keep, on_keep_io);
	ev_init(&r->t_until, on_until);
	ev_init(&r->t_pend, on_until);
	r->t_keep.data = r->io_keep.data = r->t_until.data = r->t_pend.data =
	    r;
	if (r->cfg->keepalive != NULL) {
		if (r->cfg->keepalive_every > 0) {
			ev_timer_set(&r->t_keep, r->cfg->keepalive_every,
			    r->cfg->keepalive_every);
			ev_timer_start(sup_loop, &r->t_keep);
		}
		if (r->cfg->keepalive_fd >= 0) {
			ev_io_set(&r->io_keep, r->cfg->keepalive_fd, EV_READ);
			ev_io_start(sup_loop, &r->io_keep);
		}
		until_arm(r);
	}
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
	if (r->cfg->idle_timeout > 0) {
		/* silence counts from the fork, as the timeout does */
		r->started_at = ev_now(sup_loop) - (now - r->start);
		ev_timer_set(&r->t_idle, r->cfg->idle_timeout -
		    (now - r->start), 0);
		ev_timer_start(sup_loop, &r->t_idle);
	}
}

static void
run_disarm(struct run *r)
{
	ev_child_stop(sup_loop, &r->cw);
	ev_child_stop(sup_loop, &r->anyw);
	ptimer_stop(sup_loop, &t_timeout);
	ptimer_stop(sup_loop, &t_budget);
	ev_timer_stop(sup_loop, &r->t_kill);
	ev_timer_stop(sup_loop, &r->t_poll);
	ev_timer_stop(sup_loop, &r->t_prepare);
	ev_timer_stop(sup_loop, &r->t_drain);
	ev_timer_stop(sup_loop, &r->t_idle);
	ev_timer_stop(sup_loop, &r->t_grace);
	ev_timer_stop(sup_loop, &r->t_keep);
	ev_timer_stop(sup_loop, &r->t_until);
	ev_timer_stop(sup_loop, &r->t_pend);
	ev_io_stop(sup_loop, &r->io_keep);
}

/* No more grace for anything of the run: --kill-after has passed, or a
 * second interrupt came. */
static void
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

void
sup_unguard(void)
{
	watch_release();
}

void
sup_done(void)
{
	watch_stop();
}

int
sup_aborted(void)
{
	return aborted;
}

/*
 * Waits outside the event loop: the lock, git, --progress-cmd, the hook.
 * libev only hears of a signal when the loop runs, so while cbexec waits
 * elsewhere the operator signals are blocked instead and read from a
 * signalfd that every such wait polls beside what it waits for: an
 * interrupt ends the wait at once and is recorded as sup_aborted(), and
 * a second one, once the loop runs again, still kills at once.  This
 * works with or without sup_init() (the operator commands): the
 * signalfd does not need libev.
 */
static void
stop_set_init(void)
{
	size_t i;

	sigemptyset(&stop_set);
	for (i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++)
		sigaddset(&stop_set, stop_sigs[i]);
}

void
sup_hold(void)
{
	if (hold_depth++ > 0)
		return;
	stop_set_init();
	sigprocmask(SIG_BLOCK, &stop_set, &hold_old);
	if (sig_fd == -1)
		sig_fd = signalfd(-1, &stop_set, SFD_NONBLOCK | SFD_CLOEXEC);
}

void
sup_release(void)
{
	if (hold_depth == 0 || --hold_depth > 0)
		return;
	sigprocmask(SIG_SETMASK, &hold_old, NULL);
}

/* A held operator signal, read off the signalfd, becomes aborted. */
static int
take_held(void)
{
	struct signalfd_siginfo si;

	while (sig_fd != -1 && read(sig_fd, &si, sizeof(si)) ==
	    (ssize_t)sizeof(si))
		if (aborted == 0)
			aborted = (int)si.ssi_signo;
	return aborted;
}

/* poll(2) while libev's handlers take the signals: one it caught ends
 * the wait (-2) -- at once when it interrupts poll, else within the
 * 50 ms slice it came in. */
static int
poll_unheld(struct pollfd *fds, int n, int ms)
{
	double end = mono_now() + ms / 1000.0;
	int r, slice;

	for (;;) {
		slice = ms < 0 ? 50 : (int)((end - mono_now()) * 1000);
		if (slice > 50)
			slice = 50;
		if (slice < 0)
			slice = 0;
		r = poll(fds, (nfds_t)n, slice);
		if ((r == -1 && errno == EINTR) || r == 0) {
			if (sup_interrupted())
				return -2;
			if (r == -1)
				continue;
		}
		if (r != 0 || (ms >= 0 && mono_now() >= end))
			return r;
	}
}

int
sup_poll(struct pollfd *fds, int n, int ms)
{
	struct pollfd all[8];
	int i, r;

	if (take_held() != 0)
		return -2;
	if (n > 7 || sig_fd == -1 || hold_depth == 0)
		return poll_unheld(fds, n, ms);
	for (i = 0; i < n; i++)
		all[i] = fds[i];
	all[n].fd = sig_fd;
	all[n].events = POLLIN;
	all[n].revents = 0;
	r = poll(all, (nfds_t)n + 1, ms);
	for (i = 0; i < n; i++)
		fds[i].revents = all[i].revents;
	if (r > 0 && all[n].revents != 0 && take_held() != 0)
		return -2;
	return r > 0 && all[n].revents != 0 ? r - 1 : r;
}

int
sup_nap(double seconds)
{
	double end = mono_now() + seconds, left;

	while ((left = end - mono_now()) > 0)
		if (sup_poll(NULL, 0, (int)(left * 1000) + 1) == -2)
			return 1;
	return take_held() != 0;
}

int
sup_interrupted(void)
{
	/* A signal libev has caught but not yet handed to on_signal. */
	if (aborted == 0 && sup_loop != NULL && cur == NULL)
		ev_run(sup_loop, EVRUN_NOWAIT);
	return take_held();
}

static void
on_signal(struct ev_loop *l, ev_signal *w, int revents)
{
	int sig = w->signum;
	size_t i;

	for (i = 0; i < sizeof(pass_sigs) / sizeof(pass_sigs[0]); i++) {
		if (sig == pass_sigs[i]) {
			if (cur != NULL && cur->phase == RUNNING)
				kill(-cur->pid, sig);
			return;
		}
	}
	if (cur == NULL) {
		aborted = sig;
		ev_break(sup_loop, EVBREAK_ONE);
		return;
	}
	if (aborted != 0 && (sig == SIGINT || sig == SIGTERM)) {
		/* A second interrupt: no more grace. */
		run_kill_now(cur);
		return;
	}
	aborted = sig;
	run_stop(cur, sig);
}

/* The pipe on fd made PIPE_SIZE, unless it is larger already (a pipe of
 * our caller's must never shrink) or the pipe limits say no. */
static void
grow_pipe(int fd)
{
	int n = fcntl(fd, F_GETPIPE_SZ);

	if (n != -1 && n < PIPE_SIZE)
		fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE);
}

/* A non-blocking writer of our own for a pipe on fd, else fd itself. */
static void
setup_output(int i)
{
	char path[32];
	struct stat st;
	int fd;

	if (fstat(i + 1, &st) == -1 || !S_ISFIFO(st.st_mode))
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", i + 1);
	if ((fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) == -1)
		return;
	out_fd[i] = fd;
	out_nonblock[i] = 1;
	grow_pipe(fd);
}

/*
 * libev's own system calls failed where it cannot go on (no descriptor
 * left for its signal pipe or epoll, under a small ulimit -n): it would
 * abort.  cbexec's failure instead: the message and 125.  What a run had
 * started, the watchdog kills when cbexec is gone.
 */
static void
on_syserr(const char *msg)
{
	int e = errno;

	fprintf(stderr, "cbexec: %s: %s\n", msg, strerror(e));
	fflush(stderr);
	_exit(CB_EXIT_ERROR);
}

int
sup_init(void)
{
	int sigs[16], n = 0;
	struct sigaction sa;
	size_t i;

	for (i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++)
		sigs[n++] = stop_sigs[i];
	for (i = 0; i < sizeof(pass_sigs) / sizeof(pass_sigs[0]); i++)
		sigs[n++] = pass_sigs[i];
	sigs[n++] = SIGPIPE;
	sigs[n++] = SIGCHLD;
	sigs[n++] = SIGTTOU;
	/* Made when the first run or helper is spawned.  Should that fail,
	 * cbexec still runs; only a kill -9 of cbexec would leave more
	 * behind. */
	watch_want();
	if (spawn_init(sigs, n) == -1)
		return -1;
	ev_set_syserr_cb(on_syserr);
	if ((sup_loop = ev_default_loop(EVFLAG_AUTO)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	/* EPIPE instead of death when our reader goes away. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);
	for (i = 0; i < 4 + 5; i++) {
		int sig = i < 4 ? stop_sigs[i] : pass_sigs[i - 4];

		ev_signal_init(&sigw[i], on_signal, sig);
		ev_signal_start(sup_loop, &sigw[i]);
		/* The signal watchers alone must not keep ev_run alive. */
		ev_unref(sup_loop);
	}
	setup_output(0);
	setup_output(1);
	return 0;
}

void
sup_result_free(struct sup_result *res)
{
	ring_free(&res->out);
	ring_free(&res->err);
}

int
sup_run(const struct sup_cfg *cfg, struct sup_result *res)
{
	struct run r;
	int op[2] = { -1, -1 }, ep[2] = { -1, -1 }, i, e;

	memset(res, 0, sizeof(*res));
	memset(&r, 0, sizeof(r));
	res->exit_code = -1;
	if (ring_init(&res->out, cfg->capture_stdout ? cfg->capture_bytes :
	    0) == -1 || ring_init(&res->err, cfg->capture_bytes) == -1)
		goto fail;
	r.cfg = cfg;
	r.res = res;
	r.phase = RUNNING;
	/* Our stdout or stderr closed (file_std_fds): the command gets the
	 * same closed-like placeholder, not a pipe into nowhere. */
	if ((cfg->capture_stdout && !file_std_closed(STDOUT_FILENO) &&
	    pipe2(op, O_CLOEXEC) == -1) ||
	    (!file_std_closed(STDERR_FILENO) && pipe2(ep, O_CLOEXEC) == -1))
		goto fail;
	for (i = 0; i < 2; i++) {
		int fd = i == 0 ? op[0] : ep[0];

		if (fd == -1)
			continue;
		/* Our own new pipes: no flags yet, and the default size. */
		fcntl(fd, F_SETFL, O_NONBLOCK);
		fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE);
	}
	if (relay_init(&r.s[0], op[0], out_fd[0], out_nonblock[0], &res->out,
	    cfg->tap, cfg->tap_arg, run_on_relay, &r) == -1 ||
	    relay_init(&r.s[1], ep[0], out_fd[1], out_nonblock[1], &res->err,
	    NULL, NULL, run_on_relay, &r) == -1)
		goto fail;
	/* Give the command the terminal only when we hold it ourselves. */
	r.fg_tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();

	r.start = mono_now();
	/* The watchdog first, with the run's deadlines: the command may
	 * stop cbexec as soon as it runs. */
	watch_resume();
	watch_limits(&r);
	if (spawn_child(cfg->argv, cfg->envp, r.fg_tty, op[1], ep[1], &r.pid,
	    &res->exec_errno) == -1)
		goto fail;
	if (op[1] != -1)
		close(op[1]);
	if (ep[1] != -1)
		close(ep[1]);
	op[1] = ep[1] = -1;
	if (res->exec_errno != 0) {
		/* The child named itself to the watchdog and is reaped. */
		watch_group(WATCH_RUN, 0);
		for (i = 0; i < 2; i++)
			relay_free(&r.s[i]);
		res->duration = mono_now() - r.start;
		return 0;
	}

	watch_group(WATCH_RUN, r.pid);
	cur = &r;
	/* The loop's clock may be stale after time spent outside it
	 * (progress probes, state writes): timers are relative to it. */
	ev_now_update(sup_loop);
	run_arm(&r);
	for (i = 0; i < 2; i++)
		relay_start(&r.s[i]);
	/* An operator signal that came before the fork still counts. */
	if (aborted != 0)
		run_stop(&r, aborted);

	ev_run(sup_loop, 0);
	watch_group(WATCH_RUN, 0);

	cur = NULL;
	run_disarm(&r);
	res->out_gone = r.s[0].gone;
	res->out_werr = r.s[0].werr;
	res->err_werr = r.s[1].werr;
	for (i = 0; i < 2; i++)
		relay_free(&r.s[i]);
	if (!r.reaped)
		res->duration = mono_now() - r.start;
	return 0;
fail:
	e = errno;
	for (i = 0; i < 2; i++) {
		if (op[i] != -1)
			close(op[i]);
		if (ep[i] != -1)
			close(ep[i]);
	}
	free(r.s[0].buf);
	free(r.s[1].buf);
	sup_result_free(res);
	errno = e;
	return -1;
}

int
sup_stdout_gone(void)
{
	struct pollfd p = { STDOUT_FILENO, POLLOUT, 0 };

	/* A pipe or socket whose reader has gone polls as an error. */
	return !file_std_closed(STDOUT_FILENO) && poll(&p, 1, 0) == 1 &&
	    (p.revents & POLLERR) != 0;
}

static void
on_readable(struct ev_loop *l, ev_io *w, int revents)
{
	ev_break(l, EVBREAK_ONE);
}

int
sup_wait_readable(int fd)
{
	ev_io w;

	if (aborted)
		return 0;
	ev_io_init(&w, on_readable, fd, EV_READ);
	ev_io_start(sup_loop, &w);
	ev_run(sup_loop, 0);
	ev_io_stop(sup_loop, &w);
	return !aborted;
}

static void
on_sleep(struct ev_loop *l, ev_timer *w, int revents)
{
	ev_break(sup_loop, EVBREAK_ONE);
}

int
sup_sleep(double seconds, double deadline)
{
	double left = seconds;
	int budget = 0;

	if (aborted)
		return 2;
	if (deadline > 0 && deadline - mono_now() <= left) {
		left = deadline - mono_now();
		budget = 1;
	}
	if (left > 0) {
		ev_now_update(sup_loop);
		ev_timer_init(&sleep_timer, on_sleep, left, 0);
		ev_timer_start(sup_loop, &sleep_timer);
		ev_run(sup_loop, 0);
		ev_timer_stop(sup_loop, &sleep_timer);
	}
	if (aborted)
		return 2;
	return budget;
}
