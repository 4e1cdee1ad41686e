/* SPDX-License-Identifier: ISC */
/*
 * The etcd backend of the store (SPEC §11, --store etcd://h1,h2,h3 or
 * etcds://): circuits kept in an etcd v3 cluster, through its JSON
 * gateway (etcdapi.c over http.c), so that many hosts share one breaker
 * through a store that keeps every acknowledged write across a leader's
 * failure.
 *
 * Keys, one circuit NAME (the same names as in Redis):
 *   cbexec:circuit:NAME   the state, the same JSON as a state file
 *   cbexec:lock:NAME      the lock: a key attached to this holder's lease
 *                         (its value says which host and pid hold it)
 *   cbexec:run:NAME       the start record of the run going on (SPEC §11)
 *   cbexec:corrupt:NAME:TIMESTAMP  a corrupt state a reset moved aside
 *   cbexec:account:NAME   an account's gate (--account); changed by a
 *                         compare-and-set on its revision
 *
 * The lock is a lease: one granted with the TTL of --store-lease (whole
 * seconds, rounded up; etcd may give more, never less), then one
 * transaction that creates the lock key attached to it only if it does
 * not exist (its create_revision is 0) and reads the state and the start
 * record in the same step.  The lease is kept alive with keepalives from
 * the run's event loop (never blocking it; one nobody answered within
 * --store-timeout sent again while the lease can still be kept) and
 * revoked at the end, which deletes the lock key with it.  A holder that stops (SIGSTOP, a
 * partition, a host that hangs) loses its lease when its TTL runs out in
 * the cluster, and the lock key goes with it.  The run's command must be
 * dead by then: the local deadline is the time the last successful
 * renewal was sent plus the lease less an eighth (the store's handle,
 * store_lease_until()); etcd counts a lease's TTL from when the leader
 * received the request, later than we sent it, and a new leader gives
 * every lease its whole TTL again, so the lease cannot have expired in
 * the cluster before that deadline.
 *
 * The fence is etcd's own: every write is one transaction that compares
 * the circuit key's mod_revision with the one this holder loaded (the
 * cluster-wide revision of the state it read, 0 for none) and the lock
 * key's lease with this holder's, and writes only if both hold.  A
 * holder that lost its lease can therefore never write: its lock key is
 * gone or another holder's.  A request that a partition delivers late
 * can never take the circuit for a holder that has gone either: the
 * lease it names has expired, and etcd refuses a key attached to a lease
 * it does not know.  etcd's transactions are linearizable (through
 * Raft): an acknowledged save is on a quorum, and a leader's failover
 * loses none.
 *
 * Asking again is safe: every request is tried on the next member when
 * one cannot serve (etcdapi.c).  A save asked twice whose first copy did
 * land fails its comparison the second time; the answer then carries the
 * state in the store, and when that is this holder's text under its own
 * lease, the save did land (byte for byte, generation and time included,
 * nobody else writes that).
 *
 * Time: etcd has no clock command; the store's time comes from its
 * answers' Date headers (etcdapi.c, etcd_now()), kept from going back
 * within one invocation.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "core.h"
#include "store.h"
#include "backend.h"
#include "etcd.h"

struct store_etcd {
	struct etcd *c;
	char *key, *lock, *run;	/* the circuit's keys (NULL: no circuit) */
	char holder[320];	/* the lock key's value: host and pid */
	long long lease;	/* this holder's lease, 0: none */
	long long mod;		/* the state's mod_revision as loaded or
				 * saved, 0: none */
	int pending;		/* a renewal on the run's loop */
	/* what the lock step read */
	int have_fetched;
	char *fetched, *fetched_run;
	size_t fetched_len;
	long long fetched_mod;
};

#define E(st) ((struct store_etcd *)(st)->priv)

/* The first key after every key that starts with prefix. */
static void
prefix_end(const char *prefix, char *end, size_t len)
{
	size_t n = strlen(prefix);

	snprintf(end, len, "%s", prefix);
	if (n > 0 && n < len)
		end[n - 1]++;
}

/* The store's clock after an answer: etcd's Date headers, never going
 * back within one invocation. */
static void
tick(struct store *st)
{
	double now = etcd_now(E(st)->c), mono = mono_now(), was;

	if (now < 0)
		return;
	if (st->clock_at >= 0) {
		was = st->clock_at + (mono - st->clock_mono);
		if (was > now)
			now = was;
	}
	st->clock_at = now;
	st->clock_mono = mono;
}

/* A renewal left pending on the run's loop: its answer taken now (it is
 * the lease's), before another command. */
static void settle(struct store *st);

static int
etcd_check(const char *url, char *label, size_t labellen, char *err,
    size_t errlen)
{
	struct etcd_url u;
	const char *why = "";

	/* The URL is not repeated: it may hold a password. */
	if (etcd_url_parse(url, &u, &why) == -1) {
		snprintf(err, errlen, "invalid --store URL: %s (use "
		    "etcd[s]://[user[:password]@]host[:port][,host[:port]...])",
		    why);
		memset(&u, 0, sizeof(u));
		return -1;
	}
	etcd_url_label(&u, label, labellen);
	memset(&u, 0, sizeof(u));
	return 0;
}

/* The outcome of a failed store command as the handle's callers take it:
 * an operator signal is -3 with st->interrupted. */
static int
failed(struct store *st, int rc)
{
	st->interrupted = rc == ETCD_INTR;
	return rc == ETCD_INTR ? -3 : -1;
}

static int
etcd_open_(struct store *st, const char *url, char *err, size_t errlen)
{
	struct store_etcd *e;
	struct etcd_cfg cfg;
	struct etcd_resp r;
	struct etcd_op op;
	char host[256];
	int rc;

	if ((e = st->priv = calloc(1, sizeof(*e))) == NULL)
		goto nomem;
	if (st->name != NULL && (asprintf(&e->key, "cbexec:circuit:%s",
	    st->name) == -1 || asprintf(&e->lock, "cbexec:lock:%s",
	    st->name) == -1 || asprintf(&e->run, "cbexec:run:%s",
	    st->name) == -1)) {
		e->key = e->lock = e->run = NULL;
		goto nomem;
	}
	/* The host as a start record names it (letters, digits, '.', '-'
	 * and '?' only: nothing to quote), so that --status can tell the
	 * record is the holder's. */
	store_hostname(host, sizeof(host));
	snprintf(e->holder, sizeof(e->holder), "{\"host\":\"%s\","
	    "\"pid\":%ld}", host, (long)getpid());
	memset(&cfg, 0, sizeof(cfg));
	cfg.url = url;
	cfg.password = st->password;
	cfg.ca = st->ca;
	cfg.cert = st->cert;
	cfg.key = st->key;
	cfg.timeout = st->timeout;
	cfg.poll = store_poll;
	if ((rc = etcd_open(&e->c, &cfg, st->label, sizeof(st->label), err,
	    errlen)) != 0) {
		st->refused = rc == ETCD_REFUSED;
		return failed(st, rc);
	}
	tick(st);
	if (st->clock_at >= 0)
		return 0;
	/* Not a word from the cluster yet (no user to authenticate): one
	 * read, which a member answers only with a quorum behind it, so
	 * that a store out of reach is said now, and its clock read. */
	memset(&op, 0, sizeof(op));
	op.kind = ETCD_RANGE;
	op.key = e->lock != NULL ? e->lock : "cbexec:";
	op.keys_only = 1;
	if ((rc = etcd_range(e->c, &op, 0, &r, err, errlen)) != 0) {
		st->refused = rc == ETCD_REFUSED;
		return failed(st, rc);
	}
	etcd_resp_free(&r);
	tick(st);
	return 0;
nomem:
	snprintf(err, errlen, "store %s: out of memory", st->label);
	return -1;
}

static void
drop_fetched(struct store_etcd *e)
{
	free(e->fetched);
	free(e->fetched_run);
	e->fetched = e->fetched_run = NULL;
	e->have_fetched = 0;
}

static void
etcd_close_(struct store *st)
{
	struct store_etcd *e = E(st);

	if (e == NULL)
		return;
	etcd_close(e->c);
	free(e->key);
	free(e->lock);
	free(e->run);
	drop_fetched(e);
	free(e);
	st->priv = NULL;
}

static void
etcd_where(const struct store *st, const char *name, int in, char *buf,
    size_t len)
{
	const struct store_etcd *e = E(st);

	if (name != NULL)
		snprintf(buf, len, "cbexec:circuit:%s%s%s", name, in ? " in " :
		    "", in ? st->label : "");
	else
		snprintf(buf, len, "%s%s%s", e != NULL && e->key != NULL ?
		    e->key : "?", in ? " in " : "", in ? st->label : "");
}

static void
etcd_lock_where(const struct store *st, char *buf, size_t len)
{
	snprintf(buf, len, "its lease in %s", st->label);
}

static const char *
etcd_place(const struct store *st)
{
	return st->label;
}

static int
etcd_fd_(const struct store *st)
{
	return E(st) != NULL && E(st)->c != NULL ? etcd_fd(E(st)->c) : -1;
}

/* The TTL asked for: --store-lease in whole seconds, rounded up. */
static long long
ttl_of(const struct store *st)
{
	double t = ceil(st->lease - 1e-9);

	return t < 1 ? 1 : t > 1e9 ? 1000000000LL : (long long)t;
}

/* A deadline for a command that sets the lease: --store-timeout from
 * now, never past the lease's local deadline while it is held. */
static double
lease_deadline(const struct store *st)
{
	double d = mono_now() + st->timeout, until = store_lease_until(st);

	return st->held && until > 0 && until < d ? until : d;
}

/* A new lease for this holder (the old one, if any, left to expire):
 * 0, or an error as failed(). */
static int
grant(struct store *st, char *err, size_t errlen)
{
	struct store_etcd *e = E(st);
	long long id, ttl;
	double sent;
	int rc;

	if ((rc = etcd_grant(e->c, ttl_of(st), 0, &id, &ttl, &sent, err,
	    errlen)) != 0)
		return failed(st, rc);
	tick(st);
	if (ttl < ttl_of(st)) {
		snprintf(err, errlen, "store %s: a lease of %llds asked for, "
		    "%llds granted", st->label, ttl_of(st), ttl);
		return -1;
	}
	e->lease = id;
	/* the lease counts from when it was asked for */
	st->renewed = sent;
	return 0;
}

/* The state's text and revision, and the start record, from a range's
 * answer into what the load takes. */
static int
keep_fetched(struct store_etcd *e, const struct etcd_resp *state,
    const struct etcd_resp *run)
{
	drop_fetched(e);
	e->have_fetched = 1;
	e->fetched_mod = 0;
	if (state->nkvs > 0) {
		e->fetched = state->kvs[0].value;
		e->fetched_len = state->kvs[0].len;
		e->fetched_mod = state->kvs[0].mod;
		state->kvs[0].value = NULL;
	}
	if (run != NULL && run->nkvs > 0) {
		e->fetched_run = run->kvs[0].value;
		run->kvs[0].value = NULL;
	}
	return 0;
}

/* Keys a and b (with b_only, whether b is there and not its value) in
 * one read: 0 with their answers in *res (the caller frees it), else
 * failed()'s -1 or -3 with err. */
static int
read_two(struct store *st, const char *a, const char *b, int b_only,
    struct etcd_txn_res *res, char *err, size_t errlen)
{
	struct etcd_op ops[2];
	int rc;

	memset(ops, 0, sizeof(ops));
	ops[0].kind = ops[1].kind = ETCD_RANGE;
	ops[0].key = a;
	ops[1].key = b;
	ops[1].keys_only = b_only;
	if ((rc = etcd_txn(E(st)->c, NULL, 0, ops, 2, NULL, 0, 0, res, err,
	    errlen)) != 0)
		return failed(st, rc);
	tick(st);
	if (res->nresp != 2) {
		etcd_txn_res_free(res);
		snprintf(err, errlen, "store %s: unexpected answer to a read",
		    st->label);
		return -1;
	}
	return 0;
}

/* A read of the circuit's state and start record, in one step. */
static int
read_state(struct store *st, char *err, size_t errlen)
{
	struct store_etcd *e = E(st);
	struct etcd_txn_res res;
	int rc;

	if ((rc = read_two(st, e->key, e->run, 0, &res, err, errlen)) != 0)
		return rc;
	keep_fetched(e, &res.resp[0], &res.resp[1]);
	etcd_txn_res_free(&res);
	return 0;
}

static int
etcd_lock_(struct store *st, double wait, int (*nap)(double), char *err,
    size_t errlen)
{
	struct store_etcd *e = E(st);
	double deadline = wait > 0 ? mono_now() + wait : 0, delay = 0.01;
	struct etcd_cmp cmp[1];
	struct etcd_op ok[3], fail[1], probe;
	struct etcd_txn_res res;
	struct etcd_resp pr;
	int rc, taken;

	settle(st);
	memset(cmp, 0, sizeof(cmp));
	memset(ok, 0, sizeof(ok));
	memset(fail, 0, sizeof(fail));
	cmp[0].key = e->lock;
	cmp[0].target = ETCD_CREATE;
	cmp[0].v = 0;
	ok[0].kind = ETCD_PUT;
	ok[0].key = e->lock;
	ok[0].value = e->holder;
	ok[0].vlen = strlen(e->holder);
	ok[1].kind = ok[2].kind = fail[0].kind = ETCD_RANGE;
	ok[1].key = e->key;
	ok[2].key = e->run;
	fail[0].key = e->lock;
	memset(&probe, 0, sizeof(probe));
	probe.kind = ETCD_RANGE;
	probe.key = e->lock;
	probe.keys_only = 1;
	for (;;) {
		/* A lease with most of its time before it. */
		if (e->lease == 0 || mono_now() - st->renewed > st->lease / 3)
			if ((rc = grant(st, err, errlen)) != 0)
				return rc;
		ok[0].lease = e->lease;
		if ((rc = etcd_txn(e->c, cmp, 1, ok, 3, fail, 1, 0, &res, err,
		    errlen)) != 0)
			return failed(st, rc);
		tick(st);
		if (res.succeeded && res.nresp == 3) {
			keep_fetched(e, &res.resp[1], &res.resp[2]);
			taken = 1;
		} else {
			/* An earlier copy of this request took it. */
			taken = !res.succeeded && res.nresp == 1 &&
			    res.resp[0].nkvs == 1 &&
			    res.resp[0].kvs[0].lease == e->lease;
			if (taken)
				drop_fetched(e);
		}
		etcd_txn_res_free(&res);
		if (taken) {
			st->held = 1;
			return e->have_fetched ? 0 : read_state(st, err,
			    errlen);
		}
		/* Busy: wait (if asked) until the lock key is gone, by reads
		 * any member answers from what it has (no write, no quorum:
		 * the transaction above decides). */
		for (;;) {
			if ((rc = lock_nap(wait, deadline, &delay, nap)) != 0) {
				char why[CB_WHYLEN];

				etcd_revoke(e->c, e->lease, 0, why,
				    sizeof(why));
				e->lease = 0;
				return rc;
			}
			if ((rc = etcd_range(e->c, &probe, 0, &pr, err,
			    errlen)) != 0)
				return failed(st, rc);
			taken = pr.nkvs == 0;
			etcd_resp_free(&pr);
			if (taken)
				break;
		}
	}
}

static void
etcd_unlock_(struct store *st)
{
	struct store_etcd *e = E(st);
	char err[CB_ERRLEN];

	if (e == NULL || e->lease == 0)
		return;
	settle(st);
	/* Its keys go with it; gone with the store, it simply expires. */
	etcd_revoke(e->c, e->lease, 0, err, sizeof(err));
	e->lease = 0;
}

/* The lease's renewal can no longer be in time. */
static int
ran_out(struct store *st, char *err, size_t errlen)
{
	snprintf(err, errlen, "store %s: the lease on circuit %s ran out "
	    "before it could be renewed", st->label, st->name);
	return -1;
}

static int
lost_lease(struct store *st, char *err, size_t errlen)
{
	st->held = 0;
	snprintf(err, errlen, "store %s: the lease on circuit %s expired and "
	    "another holder took the circuit", st->label, st->name);
	return -1;
}

/*
 * The lease gone from the cluster though our deadline has not come: the
 * lock taken again with a new lease if nobody took it and nobody saved
 * since (as the Redis store does), else lost.
 */
static int
retake(struct store *st, char *err, size_t errlen)
{
	struct store_etcd *e = E(st);
	struct etcd_cmp cmp[2];
	struct etcd_op ok[1];
	struct etcd_txn_res res;
	int rc, won;

	if ((rc = grant(st, err, errlen)) != 0)
		return rc;
	memset(cmp, 0, sizeof(cmp));
	memset(ok, 0, sizeof(ok));
	cmp[0].key = e->lock;
	cmp[0].target = ETCD_CREATE;
	cmp[1].key = e->key;
	cmp[1].target = ETCD_MOD;
	cmp[1].v = e->mod;
	ok[0].kind = ETCD_PUT;
	ok[0].key = e->lock;
	ok[0].value = e->holder;
	ok[0].vlen = strlen(e->holder);
	ok[0].lease = e->lease;
	if ((rc = etcd_txn(e->c, cmp, 2, ok, 1, NULL, 0, lease_deadline(st),
	    &res, err, errlen)) != 0)
		return failed(st, rc);
	tick(st);
	won = res.succeeded;
	etcd_txn_res_free(&res);
	return won ? 0 : lost_lease(st, err, errlen);
}

static int
etcd_keepalive_(struct store *st, char *err, size_t errlen)
{
	struct store_etcd *e = E(st);
	long long ttl;
	double sent;
	int rc;

	settle(st);
	if (store_lease_until(st) <= mono_now())
		return ran_out(st, err, errlen);
	if ((rc = etcd_keepalive(e->c, e->lease, lease_deadline(st), &ttl,
	    &sent, err, errlen)) != 0)
		return failed(st, rc);
	tick(st);
	if (ttl > 0) {
		st->renewed = sent;
		return 0;
	}
	return retake(st, err, errlen);
}

/* What a renewal's answer says: 0 renewed, -1 with err. */
static int
renewed(struct store *st, long long ttl, double sent, char *err,
    size_t errlen)
{
	tick(st);
	if (ttl <= 0) {
		/* Gone from the cluster: another may take the circuit
		 * now, so the run must end. */
		st->held = 0;
		snprintf(err, errlen, "store %s: the lease on circuit %s is "
		    "gone from the store", st->label, st->name);
		return -1;
	}
	st->renewed = sent;
	return 0;
}

static int
etcd_keepalive_async_(struct store *st, char *err, size_t errlen)
{
	struct store_etcd *e = E(st);
	long long ttl = 0;
	double sent = 0;
	int rc;

	if (!e->pending) {
		if (store_lease_until(st) <= mono_now())
			return ran_out(st, err, errlen);
		if ((rc = etcd_keepalive_start(e->c, e->lease,
		    lease_deadline(st), err, errlen)) != 1)
			return failed(st, rc);
		e->pending = 1;
		return 1;
	}
	if ((rc = etcd_keepalive_step(e->c, 0, &ttl, &sent, err,
	    errlen)) == 1)
		return 1;
	e->pending = 0;
	/* No member answered in time (a leader stopped and the election
	 * not over yet): a renewal sent again while the lease can still be
	 * kept, not the run ended; the local deadline ends it if none
	 * comes in time. */
	if (rc == -1 && !st->refused && store_lease_until(st) - mono_now() >
	    0.05 && etcd_keepalive_start(e->c, e->lease, lease_deadline(st),
	    err, errlen) == 1) {
		e->pending = 1;
		return 1;
	}
	if (rc != 0)
		return failed(st, rc);
	return renewed(st, ttl, sent, err, errlen);
}

static void
settle(struct store *st)
{
	struct store_etcd *e = E(st);
	long long ttl = 0;
	double sent = 0;
	char err[CB_ERRLEN];

	if (e == NULL || !e->pending)
		return;
	e->pending = 0;
	if (etcd_keepalive_step(e->c, 1, &ttl, &sent, err, sizeof(err)) == 0)
		(void)renewed(st, ttl, sent, err, sizeof(err));
}

static int
etcd_load(struct store *st, struct cb_state *s, struct store_run *run,
    char *err, size_t errlen)
{
	struct store_etcd *e = E(st);
	int rc;

	settle(st);
	/* Read with the lock, in the same step; else now. */
	if (!e->have_fetched && (rc = read_state(st, err, errlen)) != 0)
		return rc;
	e->mod = e->fetched_mod;
	rc = shared_parse_state(st, st->name, e->key, e->fetched,
	    e->fetched_len, e->fetched != NULL, s, err, errlen);
	if (e->fetched_run != NULL && run != NULL)
		store_run_parse(e->fetched_run, strlen(e->fetched_run), run);
	drop_fetched(e);
	return rc;
}

/*
 * A fenced write of text under key, with del deleted too (NULL: none):
 * only while the state has the revision loaded and the lock key is this
 * holder's lease.  0 (for the state, e->mod the new revision); -1 with
 * err; -4 with err when another holder has the circuit now.  what: what
 * it writes, for messages.
 */
static int
fenced(struct store *st, const char *key, const char *text,
    const char *del, const char *what, char *err, size_t errlen)
{
	struct store_etcd *e = E(st);
	struct etcd_cmp cmp[2];
	struct etcd_op ok[2], fail[3];
	struct etcd_txn_res res;
	const struct etcd_kv *lk, *sk, *wk;
	int rc, ours, state = strcmp(key, e->key) == 0;

	settle(st);
	memset(cmp, 0, sizeof(cmp));
	memset(ok, 0, sizeof(ok));
	memset(fail, 0, sizeof(fail));
	cmp[0].key = e->key;
	cmp[0].target = ETCD_MOD;
	cmp[0].v = e->mod;
	cmp[1].key = e->lock;
	cmp[1].target = ETCD_LEASE;
	cmp[1].v = e->lease;
	ok[0].kind = ETCD_PUT;
	ok[0].key = key;
	ok[0].value = text;
	ok[0].vlen = strlen(text);
	ok[1].kind = ETCD_DELETE;
	ok[1].key = del;
	fail[0].kind = fail[1].kind = fail[2].kind = ETCD_RANGE;
	fail[0].key = e->lock;
	fail[1].key = e->key;
	fail[1].keys_only = !state;
	fail[2].key = key;
	if ((rc = etcd_txn(e->c, cmp, 2, ok, del != NULL ? 2 : 1, fail,
	    state ? 2 : 3, lease_deadline(st), &res, err, errlen)) != 0) {
		/* Sent and not answered: it may have landed all the same. */
		if (rc != ETCD_INTR && etcd_maybe(e->c)) {
			size_t n = strlen(err);

			snprintf(err + n, errlen - n, "; the %s may or may "
			    "not have been saved", what);
		}
		return failed(st, rc);
	}
	tick(st);
	if (res.succeeded) {
		if (state)
			e->mod = res.revision;
		etcd_txn_res_free(&res);
		return 0;
	}
	if (res.nresp != (state ? 2u : 3u)) {
		etcd_txn_res_free(&res);
		snprintf(err, errlen, "store %s: unexpected answer to the save",
		    st->label);
		return -1;
	}
	lk = res.resp[0].nkvs > 0 ? &res.resp[0].kvs[0] : NULL;
	sk = res.resp[1].nkvs > 0 ? &res.resp[1].kvs[0] : NULL;
	wk = res.resp[state ? 1 : 2].nkvs > 0 ? &res.resp[state ? 1 : 2].kvs[0] :
	    NULL;
	ours = lk != NULL && lk->lease == e->lease;
	/* An earlier copy of this very write landed (asked again). */
	if (ours && wk != NULL && wk->len == strlen(text) &&
	    memcmp(wk->value, text, wk->len) == 0 &&
	    (state || (sk != NULL ? sk->mod : 0) == e->mod)) {
		if (state)
			e->mod = wk->mod;
		etcd_txn_res_free(&res);
		return 0;
	}
	st->held = ours;
	snprintf(err, errlen, "store %s: circuit %s: %s; this holder's %s "
	    "not saved (the newer one is kept)", st->label, st->name,
	    !ours && lk != NULL ? "the lease expired and another holder has "
	    "it now" : (sk != NULL ? sk->mod : 0) != e->mod ? "the lease "
	    "expired and another holder saved a newer state" : "the lease "
	    "expired", what);
	etcd_txn_res_free(&res);
	return -4;
}

static int
etcd_save(struct store *st, const struct cb_state *s, char *err,
    size_t errlen)
{
	struct store_etcd *e = E(st);
	char *text;
	int rc;

	if ((text = state_text(s)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", st->label);
		return -1;
	}
	rc = fenced(st, e->key, text, e->run, "state", err, errlen);
	free(text);
	return rc;
}

static int
etcd_begin(struct store *st, const struct store_run *run, char *err,
    size_t errlen)
{
	char text[STORE_RUN_TEXT_MAX + 1], what[64];

	if (store_run_text(run, text, sizeof(text)) == -1) {
		snprintf(err, errlen, "internal error: no run to put on record");
		return -1;
	}
	text[strcspn(text, "\n")] = '\0';
	snprintf(what, sizeof(what), "start record of run %ld", run->run);
	return fenced(st, E(st)->run, text, NULL, what, err, errlen);
}

static void
etcd_unbegin(struct store *st)
{
	struct store_etcd *e = E(st);
	struct etcd_cmp cmp[1];
	struct etcd_op ok[1];
	struct etcd_txn_res res;
	char err[CB_ERRLEN];

	if (e == NULL || e->lease == 0)
		return;
	settle(st);
	memset(cmp, 0, sizeof(cmp));
	memset(ok, 0, sizeof(ok));
	cmp[0].key = e->lock;
	cmp[0].target = ETCD_LEASE;
	cmp[0].v = e->lease;
	ok[0].kind = ETCD_DELETE;
	ok[0].key = e->run;
	if (etcd_txn(e->c, cmp, 1, ok, 1, NULL, 0, 0, &res, err,
	    sizeof(err)) == 0)
		etcd_txn_res_free(&res);
}

static int
etcd_exists(struct store *st, char *err, size_t errlen)
{
	struct store_etcd *e = E(st);
	struct etcd_op ops[3];
	struct etcd_txn_res res;
	size_t i;
	int rc, found = 0;

	settle(st);
	/* A circuit whose first run is going on, or was: its lock, or
	 * only the start record of that run. */
	memset(ops, 0, sizeof(ops));
	for (i = 0; i < 3; i++) {
		ops[i].kind = ETCD_RANGE;
		ops[i].keys_only = 1;
	}
	ops[0].key = e->key;
	ops[1].key = e->lock;
	ops[2].key = e->run;
	if ((rc = etcd_txn(e->c, NULL, 0, ops, 3, NULL, 0, 0, &res, err,
	    errlen)) != 0)
		return failed(st, rc);
	tick(st);
	for (i = 0; i < res.nresp; i++)
		found |= res.resp[i].nkvs > 0;
	etcd_txn_res_free(&res);
	return found;
}

/* The document at key moved to PREFIX NAME:TIMESTAMP (".N" added when
 * taken), named in newname, in one transaction that checks it is still
 * what was read: a corrupt document kept for the operator. */
static int
move_aside(struct store *st, const char *key, const char *prefix,
    const char *name, char *newname, size_t newlen, char *err,
    size_t errlen)
{
	struct store_etcd *e = E(st);
	struct etcd_cmp cmp[2];
	struct etcd_op ok[2], fail[1], rd;
	struct etcd_txn_res res;
	struct etcd_resp cur;
	char stamp[32];
	int i, rc, moved, taken;

	settle(st);
	if (shared_aside_stamp(st, stamp, sizeof(stamp), err, errlen) == -1)
		return -1;
	memset(&rd, 0, sizeof(rd));
	rd.kind = ETCD_RANGE;
	rd.key = key;
	for (i = 0; i < 1000; i++) {
		if ((rc = etcd_range(e->c, &rd, 0, &cur, err, errlen)) != 0)
			return failed(st, rc);
		if (cur.nkvs == 0) {
			etcd_resp_free(&cur);
			snprintf(err, errlen, "store %s: %s is gone", st->label,
			    key);
			return -1;
		}
		shared_aside_name(newname, newlen, prefix, name, stamp, i);
		memset(cmp, 0, sizeof(cmp));
		memset(ok, 0, sizeof(ok));
		memset(fail, 0, sizeof(fail));
		cmp[0].key = key;
		cmp[0].target = ETCD_MOD;
		cmp[0].v = cur.kvs[0].mod;
		/* Two resets in one second keep both pieces of evidence. */
		cmp[1].key = newname;
		cmp[1].target = ETCD_CREATE;
		ok[0].kind = ETCD_PUT;
		ok[0].key = newname;
		ok[0].value = cur.kvs[0].value;
		ok[0].vlen = cur.kvs[0].len;
		ok[1].kind = ETCD_DELETE;
		ok[1].key = key;
		fail[0].kind = ETCD_RANGE;
		fail[0].key = newname;
		fail[0].keys_only = 1;
		rc = etcd_txn(e->c, cmp, 2, ok, 2, fail, 1, 0, &res, err,
		    errlen);
		etcd_resp_free(&cur);
		if (rc != 0)
			return failed(st, rc);
		tick(st);
		moved = res.succeeded;
		taken = !moved && res.nresp == 1 && res.resp[0].nkvs > 0;
		etcd_txn_res_free(&res);
		if (moved)
			return 0;
		if (!taken)
			i--;	/* it changed meanwhile: read it again */
		if (i < -100)
			break;
	}
	snprintf(err, errlen, "store %s: cannot move %s aside", st->label,
	    key);
	return -1;
}

static int
etcd_move_aside(struct store *st, char *newname, size_t newlen, char *err,
    size_t errlen)
{
	int rc = move_aside(st, E(st)->key, "cbexec:corrupt:", st->name,
	    newname, newlen, err, errlen);

	if (rc == 0)
		E(st)->mod = 0;
	return rc;
}

/* The names after prefix of the keys that start with it -- and, with
 * also, after also (a circuit whose first run is going on has only its
 * lock) -- sorted, each once. */
static int
list_keys(struct store *st, const char *prefix, const char *also,
    char ***names, size_t *n, char *err, size_t errlen)
{
	struct store_etcd *e = E(st);
	struct etcd_op ops[2];
	struct etcd_txn_res res;
	char end[2][64], **v = NULL, **nv;
	const char *pre;
	size_t i, k, m, plen;
	int rc;

	settle(st);
	*names = NULL;
	*n = 0;
	memset(ops, 0, sizeof(ops));
	for (k = 0; k < 2; k++) {
		pre = k == 0 ? prefix : also != NULL ? also : prefix;
		prefix_end(pre, end[k], sizeof(end[k]));
		ops[k].kind = ETCD_RANGE;
		ops[k].key = pre;
		ops[k].end = end[k];
		ops[k].endlen = strlen(end[k]);
		ops[k].keys_only = 1;
	}
	if ((rc = etcd_txn(e->c, NULL, 0, ops, also != NULL ? 2 : 1, NULL, 0,
	    0, &res, err, errlen)) != 0)
		return failed(st, rc);
	tick(st);
	for (k = 0; k < res.nresp; k++) {
		pre = k == 0 ? prefix : also;
		plen = strlen(pre);
		m = res.resp[k].nkvs;
		if (m > 0 && (nv = realloc(v, (*n + m) * sizeof(*v))) == NULL)
			goto nomem;
		if (m > 0)
			v = nv;
		for (i = 0; i < m; i++) {
			const struct etcd_kv *kv = &res.resp[k].kvs[i];

			if (kv->keylen <= plen || memcmp(kv->key, pre, plen) != 0 ||
			    memchr(kv->key, '\0', kv->keylen) != NULL)
				continue;
			if ((v[*n] = strdup(kv->key + plen)) == NULL)
				goto nomem;
			(*n)++;
		}
	}
	etcd_txn_res_free(&res);
	if (*n > 1) {
		qsort(v, *n, sizeof(*v), shared_by_name);
		for (i = k = 1; i < *n; i++) {
			if (strcmp(v[i], v[k - 1]) == 0)
				free(v[i]);
			else
				v[k++] = v[i];
		}
		*n = k;
	}
	*names = v;
	return 0;
nomem:
	for (i = 0; i < *n; i++)
		free(v[i]);
	free(v);
	*n = 0;
	etcd_txn_res_free(&res);
	snprintf(err, errlen, "out of memory");
	return -1;
}

static int
etcd_list(struct store *st, char ***names, size_t *n, char *err,
    size_t errlen)
{
	return list_keys(st, "cbexec:circuit:", "cbexec:lock:", names, n, err,
	    errlen);
}

/* One key's value: 1 with it (caller frees), 0 when there is none. */
static int
get(struct store *st, const char *key, char **value, size_t *len,
    long long *mod, char *err, size_t errlen)
{
	struct etcd_op op;
	struct etcd_resp r;
	int rc;

	settle(st);
	*value = NULL;
	memset(&op, 0, sizeof(op));
	op.kind = ETCD_RANGE;
	op.key = key;
	if ((rc = etcd_range(E(st)->c, &op, 0, &r, err, errlen)) != 0)
		return failed(st, rc);
	tick(st);
	if (r.nkvs == 0) {
		etcd_resp_free(&r);
		if (mod != NULL)
			*mod = 0;
		return 0;
	}
	*value = r.kvs[0].value;
	*len = r.kvs[0].len;
	if (mod != NULL)
		*mod = r.kvs[0].mod;
	r.kvs[0].value = NULL;
	etcd_resp_free(&r);
	return 1;
}

/* The host and pid a lock key's value names ({"host": ..., "pid": N}):
 * 1, or 0 when it names none. */
static int
holder_of(const char *value, size_t len, char *host, size_t hostlen,
    long *pid)
{
	cJSON *j, *h, *p;
	int ok = 0;

	if ((j = cJSON_ParseWithLength(value, len)) == NULL)
		return 0;
	h = cJSON_GetObjectItemCaseSensitive(j, "host");
	p = cJSON_GetObjectItemCaseSensitive(j, "pid");
	if (cJSON_IsString(h) && h->valuestring[0] != '\0' &&
	    strlen(h->valuestring) < hostlen && cJSON_IsNumber(p) &&
	    p->valuedouble >= 1 && p->valuedouble <= 4194304 &&
	    p->valuedouble == (long)p->valuedouble) {
		snprintf(host, hostlen, "%s", h->valuestring);
		*pid = (long)p->valuedouble;
		ok = 1;
	}
	cJSON_Delete(j);
	return ok;
}

static int
etcd_get_json(struct store *st, const char *name, struct cb_state *s,
    cJSON **j, char *err, size_t errlen)
{
	struct etcd_txn_res res;
	const struct etcd_kv *sk, *lk;
	char *key = NULL, *lock = NULL, where[512];
	int rc = -1;

	settle(st);
	*j = NULL;
	if (asprintf(&key, "cbexec:circuit:%s", name) == -1 ||
	    asprintf(&lock, "cbexec:lock:%s", name) == -1) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	snprintf(where, sizeof(where), "%s in %s", key, st->label);
	/* The state, and its lock (a first run going on has no state yet),
	 * in one read. */
	if (read_two(st, key, lock, 1, &res, err, errlen) != 0)
		goto out;
	sk = res.resp[0].nkvs > 0 ? &res.resp[0].kvs[0] : NULL;
	lk = res.resp[1].nkvs > 0 ? &res.resp[1].kvs[0] : NULL;
	if (sk == NULL) {
		if (lk == NULL) {
			snprintf(err, errlen, "%s: gone", where);
			goto done;
		}
		/* Its first run is going on: no state yet, a fresh one. */
		if (breaker_init(s, name) == -1 ||
		    (*j = cJSON_CreateObject()) == NULL) {
			snprintf(err, errlen, "out of memory");
			goto done;
		}
		rc = 1;
		goto done;
	}
	if (state_text_check(where, sk->value, sk->len, err, errlen) == 0)
		rc = state_parse_json(where, sk->value, sk->len, s, j, err,
		    errlen);
done:
	etcd_txn_res_free(&res);
out:
	free(key);
	free(lock);
	return rc;
}

/* The lock key's holder (its value: {"host": ..., "pid": N}; a value
 * that names none leaves the start record to name it) and the start
 * record, in one read. */
static int
etcd_holder(struct store *st, const char *name, struct store_holder *h,
    char *err, size_t errlen)
{
	struct etcd_txn_res res;
	const struct etcd_kv *lk, *rk;
	char *lock = NULL, *rec = NULL;
	int rc = -1;

	settle(st);
	if (name == NULL)
		name = st->name;
	if (asprintf(&lock, "cbexec:lock:%s", name) == -1 ||
	    asprintf(&rec, "cbexec:run:%s", name) == -1) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (read_two(st, lock, rec, 0, &res, err, errlen) != 0)
		goto out;
	lk = res.resp[0].nkvs > 0 ? &res.resp[0].kvs[0] : NULL;
	rk = res.resp[1].nkvs > 0 ? &res.resp[1].kvs[0] : NULL;
	if (rk != NULL)
		store_run_parse(rk->value, rk->len, &h->run);
	if (lk != NULL && !holder_of(lk->value, lk->len, h->host,
	    sizeof(h->host), &h->pid) && h->run.run > 0) {
		snprintf(h->host, sizeof(h->host), "%s", h->run.host);
		h->pid = h->run.pid;
	}
	rc = 0;
	etcd_txn_res_free(&res);
out:
	free(lock);
	free(rec);
	return rc;
}

/* ---- accounts (SPEC §9, --account) ---- */

/* The account document at key into *a, its revision into *mod: 0, 1 when
 * there is none (a CLOSED gate), -1/-2 with err when corrupt or the store
 * cannot be read (*unread set). */
static int
account_get(struct store *st, const char *key, const char *name,
    struct cb_account *a, long long *mod, int *unread, char *err,
    size_t errlen)
{
	char why[CB_WHYLEN], *text;
	size_t len = 0;
	int rc;

	*unread = 0;
	if ((rc = get(st, key, &text, &len, mod, err, errlen)) < 0) {
		*unread = 1;
		breaker_account_init(a, name);
		return -1;
	}
	if (rc == 0) {
		if (breaker_account_init(a, name) == -1) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		return 1;
	}
	rc = account_from_text(text, len, name, a, why, sizeof(why));
	free(text);
	if (rc < 0)
		snprintf(err, errlen, "%s in %s: corrupt account: %s", key,
		    st->label, why);
	return rc;
}

static int
etcd_account_load(struct store *st, const char *name, struct cb_account *a,
    char *err, size_t errlen)
{
	char *key = shared_account_key(name);
	long long mod;
	int rc, unread;

	if (key == NULL) {
		breaker_account_init(a, name);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = account_get(st, key, name, a, &mod, &unread, err, errlen);
	free(key);
	return rc;
}

/*
 * Read, change, compare-and-set: the document is written only if its
 * mod_revision is still the one read (0: it still does not exist), else
 * read again and fn asked again (another host changed it meanwhile); no
 * lock is held across.
 */
static int
etcd_account_update(struct store *st, const char *name, double wait,
    int create, int (*fn)(struct cb_account *, void *), void *arg,
    char *aside, size_t asidelen, char *err, size_t errlen)
{
	struct store_etcd *e = E(st);
	struct cb_account a;
	struct etcd_cmp cmp[1];
	struct etcd_op ok[1];
	struct etcd_txn_res res;
	char *key, *text = NULL, why[CB_ERRLEN];
	long long mod = 0;
	int rc, ld, tries, unread, w;

	if ((key = shared_account_key(name)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return ACCOUNT_ERROR;
	}
	for (tries = 0; tries < 100; tries++) {
		ld = account_get(st, key, name, &a, &mod, &unread, err, errlen);
		if (ld == 1 && !create) {
			snprintf(err, errlen, "%s in %s", key, st->label);
			rc = ACCOUNT_NONE;
			goto out;
		}
		if (ld < 0) {
			/* The store out of reach is no corrupt document. */
			if (aside == NULL || ld == -2 || unread) {
				rc = ld == -2 || unread ? ACCOUNT_ERROR :
				    ACCOUNT_BAD;
				goto out;
			}
			snprintf(why, sizeof(why), "%s", err);
			if (move_aside(st, key, "cbexec:corrupt-account:", name,
			    aside, asidelen, err, errlen) == -1) {
				rc = ACCOUNT_ERROR;
				goto out;
			}
			snprintf(err, errlen, "%s", why);
			breaker_account_free(&a);
			breaker_account_init(&a, name);
			mod = 0;
		} else if (aside != NULL)
			aside[0] = '\0';
		if ((rc = fn(&a, arg)) != 1)
			goto out;
		a.generation += a.generation < CB_LONG_MAX;
		if ((text = account_text(&a)) == NULL) {
			snprintf(err, errlen, "out of memory");
			rc = ACCOUNT_ERROR;
			goto out;
		}
		memset(cmp, 0, sizeof(cmp));
		memset(ok, 0, sizeof(ok));
		cmp[0].key = key;
		cmp[0].target = ETCD_MOD;
		cmp[0].v = mod;
		ok[0].kind = ETCD_PUT;
		ok[0].key = key;
		ok[0].value = text;
		ok[0].vlen = strlen(text);
		rc = etcd_txn(e->c, cmp, 1, ok, 1, NULL, 0, 0, &res, err,
		    errlen);
		free(text);
		text = NULL;
		if (rc != 0) {
			(void)failed(st, rc);
			rc = ACCOUNT_ERROR;
			goto out;
		}
		tick(st);
		w = res.succeeded;
		etcd_txn_res_free(&res);
		if (w) {
			rc = 1;
			goto out;
		}
		breaker_account_free(&a);
	}
	snprintf(err, errlen, "%s in %s: changed by others 100 times in a row",
	    key, st->label);
	free(key);
	return ACCOUNT_BUSY;
out:
	free(text);
	breaker_account_free(&a);
	free(key);
	return rc;
}

static int
etcd_account_list(struct store *st, char ***names, size_t *n, char *err,
    size_t errlen)
{
	return list_keys(st, "cbexec:account:", NULL, names, n, err, errlen);
}

const struct store_backend store_etcd = {
	.name = "etcd",
	.check = etcd_check,
	.password = etcd_url_password,
	.open = etcd_open_,
	.close = etcd_close_,
	.lock = etcd_lock_,
	.unlock = etcd_unlock_,
	.lock_where = etcd_lock_where,
	.keepalive = etcd_keepalive_,
	.keepalive_async = etcd_keepalive_async_,
	.fd = etcd_fd_,
	.load = etcd_load,
	.begin = etcd_begin,
	.unbegin = etcd_unbegin,
	.save = etcd_save,
	.exists = etcd_exists,
	.move_aside = etcd_move_aside,
	.where = etcd_where,
	.place = etcd_place,
	.list = etcd_list,
	.get_json = etcd_get_json,
	.holder = etcd_holder,
	.account_load = etcd_account_load,
	.account_update = etcd_account_update,
	.account_list = etcd_account_list,
};
