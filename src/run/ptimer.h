/* SPDX-License-Identifier: ISC */
/*
 * A one-shot timer at an absolute CLOCK_MONOTONIC time, for the limits
 * whose precision a user measures (--timeout, the budget).  libev's epoll
 * backend rounds every sleep up to the next millisecond and then some;
 * a timerfd in the same loop wakes it when the time has come.  Where
 * timerfd_create fails the timer falls back to an ev_timer.
 */
#ifndef CBEXEC_PTIMER_H
#define CBEXEC_PTIMER_H

#include <ev.h>

struct ptimer {
	int fd;			/* timerfd; -1 before the first start */
	int use_ev;		/* no timerfd here: tm instead */
	ev_io io;
	ev_timer tm;
	void (*cb)(struct ptimer *);
	void *data;
};

/* Define a ptimer with PTIMER_INITIALIZER, then ptimer_init it. */
#define PTIMER_INITIALIZER { .fd = -1 }

void ptimer_init(struct ptimer *t, void (*cb)(struct ptimer *));
/* Fire cb once at mono_now() time at (at once when that has passed). */
void ptimer_start(struct ev_loop *loop, struct ptimer *t, double at);
void ptimer_stop(struct ev_loop *loop, struct ptimer *t);

#endif
