/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for the account gate (breaker/gate.c, SPEC §9 --account):
 * what opens it, what a run is told before it starts, the one trial at the
 * reset time and its lapse, what closes it, with an injected clock; and
 * the account document's JSON as the store writes it.
 */
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "breaker.h"
#include "store.h"
#include "tap.h"

#define T0 1700000000.0

int
main(void)
{
	struct cb_account a;
	cJSON *j;
	char *t;

	if (breaker_account_init(&a, "max") != 0)
		abort();
	is_int(a.gate, CB_CLOSED, "a new gate is CLOSED");
	is_int(breaker_gate_admit(&a, "x", 60, T0), GATE_PASS,
	    "CLOSED: a run passes");
	is_int(breaker_gate_learn(&a, "x", "", NULL, NULL, -1, T0), 0,
	    "a success on a CLOSED gate changes nothing");
	is_int(breaker_gate_learn(&a, "x", "rate_limited", NULL, "429", -1,
	    T0), 0, "a rate limit is not the account's fact");
	ok(breaker_gate_fact("usage_limit") && breaker_gate_fact("billing") &&
	    breaker_gate_fact("auth") && !breaker_gate_fact("network") &&
	    !breaker_gate_fact(NULL), "facts: usage_limit, billing, auth");

	/* A usage limit: OPEN until its reset time. */
	is_int(breaker_gate_learn(&a, "a", "usage_limit", "usage limit until "
	    "00:01 UTC", "hit your limit", T0 + 60, T0), 1,
	    "a usage limit changes the gate");
	is_int(a.gate, CB_OPEN, "...OPEN");
	is_str(a.type, "usage_limit", "...type");
	is_str(a.circuit, "a", "...learned by a");
	is_str(a.message, "hit your limit", "...the message");
	ok(a.retry_at == T0 + 60 && a.since == T0, "...retry_at, since");
	is_int(a.total_opens, 1, "...total_opens 1");
	is_int(breaker_gate_admit(&a, "b", 60, T0 + 59), GATE_REFUSE,
	    "before retry_at: refused");
	ok(breaker_gate_until(&a) == T0 + 60, "...until retry_at");
	is_int(breaker_gate_admit(&a, "a", 60, T0 + 30), GATE_REFUSE,
	    "...the circuit that learned it too");

	/* At retry_at: one trial. */
	is_int(breaker_gate_admit(&a, "b", 100, T0 + 60), GATE_TRIAL,
	    "at retry_at: b claims the trial");
	is_int(a.gate, CB_HALF_OPEN, "...HALF_OPEN");
	is_str(a.trial_by, "b", "...trial_by b");
	is_int(breaker_gate_admit(&a, "c", 100, T0 + 61), GATE_REFUSE,
	    "c is refused while b's trial goes on");
	ok(breaker_gate_until(&a) == T0 + 160, "...until the claim lapses");
	is_int(breaker_gate_admit(&a, "b", 100, T0 + 62), GATE_TRIAL,
	    "b (a new invocation of it) claims it again");
	is_int(breaker_gate_learn(&a, "c", "", NULL, NULL, -1, T0 + 63), 0,
	    "another circuit's success does not close it");
	is_int(breaker_gate_admit(&a, "c", 100, T0 + 162), GATE_TRIAL,
	    "a claim that lapsed (its cbexec died) goes to the next");
	is_int(breaker_gate_learn(&a, "c", "usage_limit", "again", NULL,
	    T0 + 500, T0 + 170), 1, "the trial meets the limit again");
	ok(a.gate == CB_OPEN && a.retry_at == T0 + 500, "...re-armed until "
	    "the new reset time");
	is_int(a.total_opens, 2, "...an opening again, as a failed trial of "
	    "a circuit");
	ok(a.trial_by == NULL && a.trial_until < 0, "...the claim is gone");
	is_int(breaker_gate_admit(&a, "c", 100, T0 + 500), GATE_TRIAL,
	    "at the new time: a trial");
	is_int(breaker_gate_learn(&a, "c", "test_failure", NULL, "FAILED", -1,
	    T0 + 501), 1, "any other end of the trial...");
	is_int(a.gate, CB_CLOSED, "...closes the gate");
	ok(a.type[0] == '\0' && a.reason == NULL && a.retry_at < 0 &&
	    a.circuit == NULL, "...and forgets the fact");

	/* A usage limit without a time waits CB_LIMIT_WAIT. */
	breaker_gate_learn(&a, "a", "usage_limit", "usage limit", NULL, -1,
	    T0);
	ok(a.retry_at == T0 + CB_LIMIT_WAIT, "no reset time: 5 minutes");
	is_int(a.total_opens, 3, "total_opens 3");
	breaker_gate_learn(&a, "b", "usage_limit", "usage limit", NULL, T0 + 30,
	    T0 + 10);
	ok(a.retry_at == T0 + 30, "the provider's latest reset time wins");

	/* Billing and auth: until a reset, never hidden by a usage limit. */
	is_int(breaker_gate_learn(&a, "a", "billing", "fatal: billing",
	    "credit balance is too low", -1, T0 + 20), 1, "billing opens it");
	ok(a.gate == CB_OPEN && a.retry_at < 0, "...with no retry time");
	is_int(breaker_gate_admit(&a, "b", 60, T0 + 1e6), GATE_REFUSE,
	    "...refused however late");
	ok(breaker_gate_until(&a) < 0, "...until a reset");
	is_int(breaker_gate_learn(&a, "b", "usage_limit", "u", NULL, T0 + 99,
	    T0 + 21), 0, "a usage limit does not hide billing");
	is_str(a.type, "billing", "...still billing");
	is_int(breaker_gate_learn(&a, "b", "auth", "fatal: auth", NULL, -1,
	    T0 + 22), 1, "auth replaces it");
	is_str(a.reason, "fatal: auth", "...reason fatal: auth");
	breaker_gate_reset(&a, T0 + 30);
	ok(a.gate == CB_CLOSED && a.type[0] == '\0' && a.updated_at == T0 + 30,
	    "reset: CLOSED, forgotten");
	is_int(breaker_gate_admit(&a, "b", 60, T0 + 31), GATE_PASS,
	    "...runs pass");

	/* The document. */
	breaker_gate_learn(&a, "a", "usage_limit", "usage limit until 00:01 "
	    "UTC", "m\001", T0 + 60, T0);
	a.generation = 7;
	if ((j = account_to_json(&a)) == NULL || (t = account_text(&a)) == NULL)
		abort();
	is_str(cJSON_GetObjectItem(j, "account")->valuestring, "max",
	    "json: account");
	is_str(cJSON_GetObjectItem(j, "gate")->valuestring, "OPEN",
	    "json: gate");
	is_str(cJSON_GetObjectItem(j, "retry_at")->valuestring,
	    "2023-11-14T22:14:20.000Z", "json: retry_at ISO-8601");
	ok(cJSON_IsNull(cJSON_GetObjectItem(j, "trial_by")), "json: "
	    "trial_by null");
	is_int((long)cJSON_GetObjectItem(j, "generation")->valuedouble, 7,
	    "json: generation");
	ok(t[strlen(t) - 1] == '\n', "text ends in a newline");
	cJSON_Delete(j);
	free(t);
	breaker_account_free(&a);
	return done_testing();
}
