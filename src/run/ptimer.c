/* SPDX-License-Identifier: ISC */
/*
 * Precise one-shot timers (ptimer.h).  The timerfd is created on
 * the first start and kept for the process (close-on-exec), so a loop of
 * runs arms the same descriptor again.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "ptimer.h"

static void
on_fd(struct ev_loop *loop, ev_io *w, int revents)
{
	struct ptimer *t = w->data;
	uint64_t n;

	(void)revents;
	if (read(t->fd, &n, sizeof(n)) == -1 && errno == EAGAIN)
		return;		/* disarmed since the wake-up */
	ev_io_stop(loop, &t->io);
	t->cb(t);
}

static void
on_ev(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ptimer *t = w->data;

	(void)loop;
	(void)revents;
	t->cb(t);
}

void
ptimer_init(struct ptimer *t, void (*cb)(struct ptimer *))
{
	t->cb = cb;
	ev_init(&t->tm, on_ev);
	t->tm.data = t;
}

void
ptimer_start(struct ev_loop *loop, struct ptimer *t, double at)
{
	struct itimerspec its;
	double left;

	ptimer_stop(loop, t);
	if (t->fd == -1 && !t->use_ev) {
		t->fd = timerfd_create(CLOCK_MONOTONIC,
		    TFD_NONBLOCK | TFD_CLOEXEC);
		if (t->fd == -1)
			t->use_ev = 1;
	}
	if (!t->use_ev) {
		memset(&its, 0, sizeof(its));
		if (at < 1e-9)	/* zero would disarm it */
			at = 1e-9;
		its.it_value.tv_sec = (time_t)at;
		its.it_value.tv_nsec = (long)((at - (double)(time_t)at) * 1e9);
		if (its.it_value.tv_nsec >= 1000000000L)
			its.it_value.tv_nsec = 999999999L;
		if (timerfd_settime(t->fd, TFD_TIMER_ABSTIME, &its, NULL) == 0) {
			ev_io_init(&t->io, on_fd, t->fd, EV_READ);
			t->io.data = t;
			ev_io_start(loop, &t->io);
			return;
		}
	}
	ev_now_update(loop);
	left = at - mono_now();
	ev_timer_set(&t->tm, left > 0 ? left : 0, 0);
	ev_timer_start(loop, &t->tm);
}

void
ptimer_stop(struct ev_loop *loop, struct ptimer *t)
{
	static const struct itimerspec off;

	ev_timer_stop(loop, &t->tm);
	if (t->fd != -1 && ev_is_active(&t->io)) {
		ev_io_stop(loop, &t->io);
		timerfd_settime(t->fd, 0, &off, NULL);
	}
}
