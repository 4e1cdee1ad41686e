/* SPDX-License-Identifier: ISC */
/*
 * The account gate (SPEC §9, --account): the provider-scoped half of rule
 * 8, shared by every circuit on one account.  Pure, like breaker.c: the
 * store loads and saves struct cb_account, the driver asks here before a
 * run whether it may start and tells here after it what it met.
 *
 * The gate is a small breaker of its own.  A usage limit opens it until
 * the provider's reset time; at that time the first circuit to ask claims
 * the one trial run (HALF_OPEN, trial_by) for as long as such a run may
 * last (lease), and the others are refused meanwhile.  The trial meeting
 * the limit again re-arms the gate with the new reset time; any other end
 * of it closes the gate.  A claim whose run never reported back (cbexec
 * was killed) lapses at trial_until, and the next circuit claims it.  A
 * billing or auth failure opens the gate with no time at all: only an
 * operator's --reset-account closes it.  Runs on a CLOSED gate that meet
 * none of these change nothing, so the document is written only when
 * something was learned.
 */
#include <stdlib.h>
#include <string.h>

#include "breaker.h"

int
breaker_account_init(struct cb_account *a, const char *name)
{
	memset(a, 0, sizeof(*a));
	a->gate = CB_CLOSED;
	a->since = a->retry_at = a->trial_until = a->updated_at = -1;
	if (name != NULL && (a->name = strdup(name)) == NULL)
		return -1;
	return 0;
}

void
breaker_account_free(struct cb_account *a)
{
	free(a->name);
	free(a->reason);
	free(a->message);
	free(a->circuit);
	free(a->trial_by);
	free(a->unknown);
	memset(a, 0, sizeof(*a));
}

int
breaker_gate_fact(const char *type)
{
	return type != NULL && (strcmp(type, "usage_limit") == 0 ||
	    strcmp(type, "billing") == 0 || strcmp(type, "auth") == 0);
}

static int
same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static void
forget(struct cb_account *a)
{
	a->type[0] = '\0';
	breaker_set_str(&a->reason, NULL);
	breaker_set_str(&a->message, NULL);
	breaker_set_str(&a->circuit, NULL);
	breaker_set_str(&a->trial_by, NULL);
	a->since = a->retry_at = a->trial_until = -1;
}

enum cb_gate_verdict
breaker_gate_admit(struct cb_account *a, const char *circuit, double lease,
    double now)
{
	switch (a->gate) {
	case CB_CLOSED:
		return GATE_PASS;
	case CB_OPEN:
		if (a->retry_at < 0 || now < a->retry_at)
			return GATE_REFUSE;
		break;
	case CB_HALF_OPEN:
		/* Our own claim is one an invocation of this circuit left
		 * (the circuit's lock lets only one run at a time). */
		if (!same(a->trial_by, circuit) && now < a->trial_until)
			return GATE_REFUSE;
		break;
	}
	a->gate = CB_HALF_OPEN;
	breaker_set_str(&a->trial_by, circuit);
	a->trial_until = now + lease;
	a->updated_at = now;
	return GATE_TRIAL;
}

double
breaker_gate_until(const struct cb_account *a)
{
	if (a->gate == CB_HALF_OPEN)
		return a->trial_until;
	if (a->gate == CB_OPEN)
		return a->retry_at;
	return 0;
}

int
breaker_gate_learn(struct cb_account *a, const char *circuit,
    const char *type, const char *reason, const char *message,
    double retry_at, double now)
{
	int limit = same(type, "usage_limit");

	/* A reset time already past is none (SPEC §11). */
	if (limit && retry_at <= now)
		retry_at = now + CB_LIMIT_WAIT;

	if (!breaker_gate_fact(type)) {
		/* Only the trial's run speaks for the provider again. */
		if (a->gate != CB_HALF_OPEN || !same(a->trial_by, circuit))
			return 0;
		forget(a);
		a->gate = CB_CLOSED;
		a->updated_at = now;
		return 1;
	}
	/* A usage limit never hides a billing or auth failure, which only
	 * an operator clears.  Otherwise the provider's latest word wins:
	 * its reset time is the one it reports now. */
	if (limit && a->gate == CB_OPEN && a->retry_at < 0)
		return 0;
	if (a->gate != CB_OPEN)
		a->total_opens += a->total_opens < CB_LONG_MAX;
	forget(a);
	a->gate = CB_OPEN;
	strncpy(a->type, type, sizeof(a->type) - 1);
	a->type[sizeof(a->type) - 1] = '\0';
	breaker_set_str(&a->reason, reason);
	breaker_set_str(&a->message, message);
	breaker_set_str(&a->circuit, circuit);
	a->since = now;
	a->retry_at = limit ? retry_at : -1;
	a->updated_at = now;
	return 1;
}

void
breaker_gate_reset(struct cb_account *a, double now)
{
	forget(a);
	a->gate = CB_CLOSED;
	a->updated_at = now;
}
