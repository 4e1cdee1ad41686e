/*
 * Private to the supervisor (supervise.c, phases.c): the state of one run
 * and the phase machine that drives it on libev's default loop.
 */
#ifndef CBEXEC_SUPERVISE_INT_H
#define CBEXEC_SUPERVISE_INT_H

#include <sys/types.h>

#include <ev.h>

#include "relay.h"
#include "supervise.h"

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
	ev_timer t_kill, t_poll, t_prepare;
	struct relay s[2];
};

extern struct ev_loop *sup_loop;

void run_arm(struct run *r);
void run_disarm(struct run *r);
void run_stop(struct run *r, int sig);
void run_kill_now(struct run *r);
void run_on_relay(struct relay *s);

#endif
