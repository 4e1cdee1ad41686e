/* SPDX-License-Identifier: ISC */
/*
 * An etcd v3 client over etcd's JSON gateway (/v3/kv/range, /v3/kv/txn,
 * /v3/lease/grant, /v3/lease/keepalive, /v3/lease/revoke,
 * /v3/auth/authenticate), for the etcd backend of the store (etcd.c).
 *
 * The bodies are JSON made and read with cJSON: keys and values in
 * base64, 64-bit numbers as strings, members with a zero value left out
 * by the gateway (a transaction that failed has no "succeeded", a lease
 * that is gone no "TTL").  The requests go through http.c, which tries
 * the cluster's members in turn within the command's deadline.
 *
 * What the cluster answers decides what is tried again: an error that
 * says the member cannot serve now (no leader, a leader change, a
 * request timed out in Raft, too many requests: gRPC's Unavailable,
 * DeadlineExceeded, ResourceExhausted, Aborted) is asked again of the
 * next member after a short nap, while the deadline allows; an auth token
 * the cluster no longer knows is replaced once (authenticate again);
 * anything else is the caller's answer.  Asking again is safe for every
 * request the store makes: a lease grant at worst leaves a lease nobody
 * uses, which expires; a renewal or a revoke twice is one; and every
 * transaction is fenced by its comparisons, so a second copy of one that
 * did land changes nothing (etcd.c tells that case from another
 * holder's).
 *
 * etcd has no clock command.  Each answer's Date header (Go's net/http
 * puts the member's time on every answer, in whole seconds) says the
 * store's time was in [date, date + 1) at some instant between sending
 * and receiving: so the offset between our wall clock and the store's
 * lies in (date - got, date + 1 - sent).  The answers of one invocation
 * narrow that interval, and the offset used is the point in it nearest
 * to 0 (etcd_clock_fold): a host whose clock agrees with the cluster's
 * keeps it exactly, one that does not is set right to within a second
 * and the round trip.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core.h"
#include "http.h"
#include "etcd.h"
#include "guard.h"

/* ---- the URL ---- */

/* The scheme's length (8 or 9), or 0 when it is not etcd's. */
static size_t
scheme(const char *url, int *tls)
{
	if (strncmp(url, "etcd://", 7) == 0) {
		*tls = 0;
		return 7;
	}
	if (strncmp(url, "etcds://", 8) == 0) {
		*tls = 1;
		return 8;
	}
	return 0;
}

/* The user part's end ('@') within the authority, or NULL. */
static const char *
userinfo(const char *p)
{
	size_t n = strcspn(p, "/");

	return memchr(p, '@', n);
}

int
etcd_url_password(const char *url, size_t *off, size_t *len)
{
	const char *p, *at, *colon;
	size_t s;
	int tls;

	if ((s = scheme(url, &tls)) == 0)
		return 0;
	p = url + s;
	if ((at = userinfo(p)) == NULL ||
	    (colon = memchr(p, ':', (size_t)(at - p))) == NULL)
		return 0;
	*off = (size_t)(colon + 1 - url);
	*len = (size_t)(at - colon - 1);
	return 1;
}

/* One endpoint, [b, e): host[:port] or [v6][:port], into out. */
static int
endpoint(const char *b, const char *e, char *out, size_t outlen,
    const char **why)
{
	const char *host = b, *hend, *p;
	long port = ETCD_PORT;
	size_t i;
	int v6 = 0;

	if (b == e) {
		*why = "an empty host";
		return -1;
	}
	if (*b == '[') {
		if ((hend = memchr(b, ']', (size_t)(e - b))) == NULL) {
			*why = "an IPv6 address without its ']'";
			return -1;
		}
		host = b + 1;
		p = hend + 1;
		v6 = 1;
	} else {
		hend = memchr(b, ':', (size_t)(e - b));
		if (hend == NULL)
			hend = e;
		p = hend;
	}
	if (hend == host || hend - host > 253) {
		*why = "no host";
		return -1;
	}
	for (i = 0; host + i < hend; i++) {
		char c = host[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '-' ||
		    c == '_' || (v6 && c == ':'))) {
			*why = "bad host name";
			return -1;
		}
	}
	if (p < e) {
		if (*p != ':' || p + 1 == e || e - p > 6) {
			*why = "the port is a number from 1 to 65535";
			return -1;
		}
		port = 0;
		for (p++; p < e; p++) {
			if (*p < '0' || *p > '9') {
				*why = "the port is a number from 1 to 65535";
				return -1;
			}
			port = port * 10 + (*p - '0');
		}
		if (port < 1 || port > 65535) {
			*why = "the port is a number from 1 to 65535";
			return -1;
		}
	}
	snprintf(out, outlen, "%s%.*s%s:%ld", v6 ? "[" : "",
	    (int)(hend - host), host, v6 ? "]" : "", port);
	return 0;
}

int
etcd_url_parse(const char *url, struct etcd_url *u, const char **why)
{
	const char *p, *at, *end, *comma;
	size_t s;

	memset(u, 0, sizeof(*u));
	if ((s = scheme(url, &u->tls)) == 0) {
		*why = "the scheme is etcd:// or etcds://";
		return -1;
	}
	p = url + s;
	if ((at = userinfo(p)) != NULL) {
		const char *colon = memchr(p, ':', (size_t)(at - p));
		const char *ue = colon != NULL ? colon : at;

		if (ue == p || pct_decode(p, (size_t)(ue - p), u->user,
		    sizeof(u->user)) == -1) {
			*why = "bad user name (etcd://USER@host or "
			    "etcd://USER:PASSWORD@host)";
			return -1;
		}
		if (colon != NULL) {
			if (pct_decode(colon + 1, (size_t)(at - colon - 1),
			    u->pass, sizeof(u->pass)) == -1) {
				*why = "bad password";
				return -1;
			}
			u->has_pass = 1;
		}
		p = at + 1;
	}
	end = p + strcspn(p, "/");
	if (*end == '/' && end[1] != '\0') {
		*why = "nothing after the hosts (cbexec's keys are under "
		    "cbexec: in the cluster's key space)";
		return -1;
	}
	if (end == p) {
		*why = "no host";
		return -1;
	}
	while (p < end) {
		if ((comma = memchr(p, ',', (size_t)(end - p))) == NULL)
			comma = end;
		if (u->n == ETCD_MAX_ENDPOINTS) {
			*why = "more than 16 endpoints";
			return -1;
		}
		if (endpoint(p, comma, u->ep[u->n], sizeof(u->ep[u->n]),
		    why) == -1)
			return -1;
		u->n++;
		p = comma == end ? end : comma + 1;
		if (comma != end && p == end) {
			*why = "an empty host";
			return -1;
		}
	}
	return 0;
}

void
etcd_url_label(const struct etcd_url *u, char *label, size_t len)
{
	size_t i, o;

	o = (size_t)snprintf(label, len, "%s://%s%s", u->tls ? "etcds" :
	    "etcd", u->user, u->user[0] != '\0' ? "@" : "");
	for (i = 0; i < u->n && o < len; i++)
		o += (size_t)snprintf(label + o, len - o, "%s%s",
		    i > 0 ? "," : "", u->ep[i]);
}

/* ---- the bodies ---- */

/* A base64 member of o, from n bytes; 0, or -1. */
static int
add_b64(cJSON *o, const char *name, const char *p, size_t n)
{
	char *b = http_b64(p, n);
	cJSON *s;

	if (b == NULL)
		return -1;
	s = cJSON_AddStringToObject(o, name, b);
	free(b);
	return s != NULL ? 0 : -1;
}

static int
add_num(cJSON *o, const char *name, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	return cJSON_AddStringToObject(o, name, buf) != NULL ? 0 : -1;
}

/* The request of one operation, without its wrapper. */
static cJSON *
op_json(const struct etcd_op *op)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL || add_b64(o, "key", op->key, strlen(op->key)) == -1)
		goto fail;
	switch (op->kind) {
	case ETCD_RANGE:
	case ETCD_DELETE:
		if (op->end != NULL && add_b64(o, "range_end", op->end,
		    op->endlen) == -1)
			goto fail;
		if (op->kind == ETCD_RANGE && op->keys_only &&
		    cJSON_AddTrueToObject(o, "keys_only") == NULL)
			goto fail;
		break;
	case ETCD_PUT:
		if (add_b64(o, "value", op->value, op->vlen) == -1 ||
		    (op->lease != 0 && add_num(o, "lease", op->lease) == -1))
			goto fail;
		break;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

static int
add_ops(cJSON *req, const char *name, const struct etcd_op *ops, size_t n)
{
	static const char *const wrap[] = { "request_range", "request_put",
	    "request_delete_range" };
	cJSON *a, *w, *o;
	size_t i;

	if (n == 0)
		return 0;
	if ((a = cJSON_AddArrayToObject(req, name)) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if ((w = cJSON_CreateObject()) == NULL)
			return -1;
		cJSON_AddItemToArray(a, w);
		if ((o = op_json(&ops[i])) == NULL)
			return -1;
		cJSON_AddItemToObject(w, wrap[ops[i].kind], o);
	}
	return 0;
}

char *
etcd_txn_json(const struct etcd_cmp *cmp, size_t ncmp,
    const struct etcd_op *ok, size_t nok, const struct etcd_op *fail,
    size_t nfail)
{
	static const char *const target[] = { "CREATE", "MOD", "LEASE",
	    "VALUE" };
	static const char *const field[] = { "create_revision",
	    "mod_revision", "lease", "value" };
	cJSON *req = cJSON_CreateObject(), *a, *c;
	char *text = NULL;
	size_t i;

	if (req == NULL)
		return NULL;
	if (ncmp > 0) {
		if ((a = cJSON_AddArrayToObject(req, "compare")) == NULL)
			goto out;
		for (i = 0; i < ncmp; i++) {
			if ((c = cJSON_CreateObject()) == NULL)
				goto out;
			cJSON_AddItemToArray(a, c);
			if (add_b64(c, "key", cmp[i].key,
			    strlen(cmp[i].key)) == -1 ||
			    cJSON_AddStringToObject(c, "target",
			    target[cmp[i].target]) == NULL ||
			    cJSON_AddStringToObject(c, "result", "EQUAL") ==
			    NULL)
				goto out;
			if (cmp[i].target == ETCD_VALUE ? add_b64(c, "value",
			    cmp[i].value, cmp[i].vlen) == -1 : add_num(c,
			    field[cmp[i].target], cmp[i].v) == -1)
				goto out;
		}
	}
	if (add_ops(req, "success", ok, nok) == -1 ||
	    add_ops(req, "failure", fail, nfail) == -1)
		goto out;
	text = cJSON_PrintUnformatted(req);
out:
	cJSON_Delete(req);
	return text;
}

char *
etcd_range_json(const struct etcd_op *op)
{
	cJSON *o = op_json(op);
	char *text;

	if (o == NULL)
		return NULL;
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}

/* A 64-bit number the gateway writes as a string (or a number); 0 when
 * absent; -1 when it is something else. */
static int
num(const cJSON *o, const char *name, long long *v)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, name);
	char *end;

	*v = 0;
	if (j == NULL)
		return 0;
	if (cJSON_IsNumber(j)) {
		*v = (long long)j->valuedouble;
		return 0;
	}
	if (!cJSON_IsString(j) || j->valuestring[0] == '\0')
		return -1;
	errno = 0;
	*v = strtoll(j->valuestring, &end, 10);
	return *end != '\0' || errno != 0 ? -1 : 0;
}

/* A base64 member into a new buffer (NULL member: "", with absent) */
static int
b64_member(const cJSON *o, const char *name, char **out, size_t *len,
    int *absent)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, name);

	*absent = j == NULL;
	if (j == NULL) {
		*len = 0;
		return (*out = strdup("")) == NULL ? -1 : 0;
	}
	if (!cJSON_IsString(j))
		return -1;
	*out = http_unb64(j->valuestring, strlen(j->valuestring), len);
	return *out == NULL ? -1 : 0;
}

static int
kvs_parse(const cJSON *o, struct etcd_resp *r)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "kvs"), *kv;
	size_t n = 0;
	int absent;

	if (num(o, "count", &r->count) == -1 && num(o, "deleted",
	    &r->count) == -1)
		return -1;
	if (r->count == 0)
		num(o, "deleted", &r->count);
	if (a == NULL)
		return 0;
	if (!cJSON_IsArray(a))
		return -1;
	n = (size_t)cJSON_GetArraySize(a);
	if (n > 0 && (r->kvs = calloc(n, sizeof(*r->kvs))) == NULL)
		return -1;
	cJSON_ArrayForEach(kv, a) {
		struct etcd_kv *k = &r->kvs[r->nkvs];

		if (!cJSON_IsObject(kv))
			return -1;
		r->nkvs++;
		if (b64_member(kv, "key", &k->key, &k->keylen, &absent) ==
		    -1 || absent ||
		    b64_member(kv, "value", &k->value, &k->len, &absent) ==
		    -1 ||
		    num(kv, "create_revision", &k->create) == -1 ||
		    num(kv, "mod_revision", &k->mod) == -1 ||
		    num(kv, "version", &k->version) == -1 ||
		    num(kv, "lease", &k->lease) == -1)
			return -1;
	}
	return 0;
}

void
etcd_resp_free(struct etcd_resp *r)
{
	size_t i;

	for (i = 0; i < r->nkvs; i++) {
		free(r->kvs[i].key);
		free(r->kvs[i].value);
	}
	free(r->kvs);
	r->kvs = NULL;
	r->nkvs = 0;
}

void
etcd_txn_res_free(struct etcd_txn_res *r)
{
	size_t i;

	for (i = 0; i < r->nresp; i++)
		etcd_resp_free(&r->resp[i]);
	r->nresp = 0;
}

static int
header_rev(const cJSON *o, long long *rev)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "header");

	*rev = 0;
	return h != NULL && cJSON_IsObject(h) ? num(h, "revision", rev) : 0;
}

int
etcd_txn_parse(const char *body, struct etcd_txn_res *r, char *err,
    size_t errlen)
{
	static const char *const wrap[] = { "response_range", "response_put",
	    "response_delete_range" };
	const cJSON *a, *it, *o;
	cJSON *j;
	int k;

	memset(r, 0, sizeof(*r));
	if ((j = cJSON_Parse(body)) == NULL || !cJSON_IsObject(j))
		goto bad;
	r->succeeded = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j,
	    "succeeded"));
	if (header_rev(j, &r->revision) == -1)
		goto bad;
	if ((a = cJSON_GetObjectItemCaseSensitive(j, "responses")) != NULL) {
		if (!cJSON_IsArray(a))
			goto bad;
		cJSON_ArrayForEach(it, a) {
			struct etcd_resp *rp;

			if (r->nresp == ETCD_MAX_OPS || !cJSON_IsObject(it))
				goto bad;
			rp = &r->resp[r->nresp++];
			for (k = 0; k < 3; k++)
				if ((o = cJSON_GetObjectItemCaseSensitive(it,
				    wrap[k])) != NULL)
					break;
			if (k == 3 || !cJSON_IsObject(o))
				goto bad;
			rp->kind = (enum etcd_kind)k;
			if (kvs_parse(o, rp) == -1)
				goto bad;
		}
	}
	cJSON_Delete(j);
	return 0;
bad:
	cJSON_Delete(j);
	etcd_txn_res_free(r);
	snprintf(err, errlen, "an answer to a transaction that is not "
	    "etcd's");
	return -1;
}

int
etcd_range_parse(const char *body, struct etcd_resp *r, char *err,
    size_t errlen)
{
	cJSON *j;

	memset(r, 0, sizeof(*r));
	r->kind = ETCD_RANGE;
	if ((j = cJSON_Parse(body)) == NULL || !cJSON_IsObject(j) ||
	    kvs_parse(j, r) == -1) {
		cJSON_Delete(j);
		etcd_resp_free(r);
		snprintf(err, errlen, "an answer to a range that is not "
		    "etcd's");
		return -1;
	}
	cJSON_Delete(j);
	return 0;
}

int
etcd_error_parse(const char *body, char *msg, size_t msglen)
{
	const cJSON *e, *c;
	cJSON *j;
	int code = -1;

	if ((j = cJSON_Parse(body)) == NULL)
		return -1;
	e = cJSON_GetObjectItemCaseSensitive(j, "error");
	if (e == NULL)
		e = cJSON_GetObjectItemCaseSensitive(j, "message");
	c = cJSON_GetObjectItemCaseSensitive(j, "code");
	if (cJSON_IsString(e) && cJSON_IsNumber(c)) {
		snprintf(msg, msglen, "%s", e->valuestring);
		code = c->valueint;
	}
	cJSON_Delete(j);
	return code;
}

/* ---- the clock ---- */

double
etcd_clock_fold(int *have, double *lo, double *hi, double date,
    double sent, double got)
{
	double l = date - got, u = date + 1 - sent;

	if (!*have || l > *hi || u < *lo) {
		/* the first, or the store's clock moved (another member,
		 * a step): this answer alone */
		*lo = l;
		*hi = u;
		*have = 1;
	} else {
		if (l > *lo)
			*lo = l;
		if (u < *hi)
			*hi = u;
	}
	return *lo > 0 ? *lo : *hi < 0 ? *hi : 0;
}

/* ---- the client ---- */

/* gRPC's codes that say "not now": ask again (another member). */
#define UNAVAILABLE		14
#define DEADLINE_EXCEEDED	4
#define RESOURCE_EXHAUSTED	8
#define ABORTED			10
#define UNAUTHENTICATED		16
#define INVALID_ARGUMENT	3
#define PERMISSION_DENIED	7
#define FAILED_PRECONDITION	9

/* The largest answer taken: a state (MAX_STATE_SIZE) in base64, and the
 * JSON around it; a list of keys may be longer. */
#define MAX_ANSWER	((size_t)MAX_STATE_SIZE / 3 * 4 + 65536)
#define MAX_LIST	((size_t)64 << 20)

struct etcd {
	struct http *h;
	char label[512];
	struct etcd_url u;	/* wiped at the close */
	int has_user;
	char *auth;		/* "Authorization: TOKEN", or NULL */
	double timeout;
	int (*poll)(struct pollfd *, int, int);
	int have_clock;
	double lo, hi, offset;
	/* a renewal on the caller's loop: 1 sent, 2 to be sent again at
	 * ka_retry; by ka_until */
	int ka_state;
	long long ka_id;
	double ka_until, ka_retry, ka_pause;
	int maybe;		/* the last call failed, but its request may
				 * have been acted on */
};

static void
take_clock(struct etcd *e, const struct http_reply *rep)
{
	if (rep->date < 0)
		return;
	e->offset = etcd_clock_fold(&e->have_clock, &e->lo, &e->hi,
	    rep->date, rep->wall_sent, rep->wall_got);
}

int
etcd_maybe(const struct etcd *e)
{
	return e->maybe;
}

double
etcd_now(const struct etcd *e)
{
	return e->have_clock ? wall_now() + e->offset : -1;
}

int
etcd_offset(const struct etcd *e, double *off)
{
	*off = e->offset;
	return e->have_clock;
}

/* A nap an operator signal ends: 0, or ETCD_INTR. */
static int
nap(struct etcd *e, double secs)
{
	int ms = (int)(secs * 1000) + 1;

	if (e->poll != NULL)
		return e->poll(NULL, 0, ms) == -2 ? ETCD_INTR : 0;
	poll(NULL, 0, ms);
	return 0;
}

static int authenticate(struct etcd *e, double deadline, char *err,
    size_t errlen);

/* What an error answer means for us: err set; -1 or ETCD_REFUSED. */
static int
refusal(struct etcd *e, const struct http_reply *rep, int code,
    const char *msg, char *err, size_t errlen)
{
	if (code < 0) {
		char what[81];
		size_t i, n = 0;

		/* the start of what it said, printable only */
		for (i = 0; rep->body[i] != '\0' && n + 1 < sizeof(what);
		    i++)
			if (rep->body[i] >= ' ' && rep->body[i] < 127)
				what[n++] = rep->body[i];
		what[n] = '\0';
		snprintf(err, errlen, "store %s: %s answered HTTP %ld, not as "
		    "etcd's gateway does%s%s", e->label, rep->endpoint,
		    rep->status, n > 0 ? ": " : "", what);
		return rep->status >= 500 ? -1 : ETCD_REFUSED;
	}
	if (code == INVALID_ARGUMENT && strstr(msg, "user name is empty"))
		snprintf(err, errlen, "store %s: %s (the cluster wants a "
		    "user: etcd://USER@host,...)", e->label, msg);
	else
		snprintf(err, errlen, "store %s: %s", e->label, msg);
	return code == PERMISSION_DENIED || code == INVALID_ARGUMENT ||
	    code == UNAUTHENTICATED ? ETCD_REFUSED : -1;
}

/* POST body to path and take the answer, by deadline, asking again as
 * the comment at the top says: 0 with *rep (HTTP 200), or an error. */
static int
call(struct etcd *e, const char *path, const char *body, size_t max,
    double deadline, struct http_reply *rep, char *err, size_t errlen)
{
	double pause = 0.01;
	char msg[512];
	int rc, code, again = 0;

	if (deadline <= 0)
		deadline = mono_now() + e->timeout;
	if (e->ka_state != 0)
		etcd_settle(e);
	e->maybe = 0;
	for (;;) {
		rc = http_post(e->h, path, body, e->auth, max, deadline, rep,
		    err, errlen);
		if (rc != 0 && http_reached(e->h))
			e->maybe = 1;
		if (rc == HTTP_INTR)
			return ETCD_INTR;
		if (rc == HTTP_REFUSED)
			return ETCD_REFUSED;
		if (rc != 0)
			return -1;
		take_clock(e, rep);
		if (rep->status == 200)
			return 0;
		code = etcd_error_parse(rep->body, msg, sizeof(msg));
		/* A request Raft timed out on may yet be applied. */
		if (code == UNAVAILABLE || code == DEADLINE_EXCEEDED ||
		    code < 0)
			e->maybe = 1;
		if (code == UNAUTHENTICATED && e->has_user && !again &&
		    strcmp(path, "/v3/auth/authenticate") != 0) {
			/* the token expired: one new one */
			again = 1;
			http_reply_free(rep);
			if ((rc = authenticate(e, deadline, err, errlen)) != 0)
				return rc;
			continue;
		}
		if ((code == UNAVAILABLE || code == DEADLINE_EXCEEDED ||
		    code == RESOURCE_EXHAUSTED || code == ABORTED ||
		    (code < 0 && rep->status >= 500)) &&
		    mono_now() + pause < deadline) {
			snprintf(err, errlen, "store %s: %s: %s", e->label,
			    rep->endpoint, code < 0 ? "HTTP error" : msg);
			http_reply_free(rep);
			http_next(e->h);
			if (nap(e, pause) == ETCD_INTR) {
				snprintf(err, errlen, "store %s: interrupted",
				    e->label);
				return ETCD_INTR;
			}
			if (pause < 0.1)
				pause *= 2;
			continue;
		}
		rc = refusal(e, rep, code, msg, err, errlen);
		http_reply_free(rep);
		return rc;
	}
}

static int
authenticate(struct etcd *e, double deadline, char *err, size_t errlen)
{
	struct http_reply rep;
	const cJSON *t;
	cJSON *req, *j;
	char *body, msg[512];
	int rc, code;

	free(e->auth);
	e->auth = NULL;
	if ((req = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(req, "name", e->u.user) == NULL ||
	    cJSON_AddStringToObject(req, "password", e->u.pass) == NULL ||
	    (body = cJSON_PrintUnformatted(req)) == NULL) {
		cJSON_Delete(req);
		snprintf(err, errlen, "store %s: out of memory", e->label);
		return -1;
	}
	cJSON_Delete(req);
	memset(&rep, 0, sizeof(rep));
	rc = http_post(e->h, "/v3/auth/authenticate", body, NULL, 65536,
	    deadline, &rep, err, errlen);
	memset(body, 0, strlen(body));	/* the password */
	free(body);
	if (rc != 0)
		return rc == HTTP_INTR ? ETCD_INTR : rc == HTTP_REFUSED ?
		    ETCD_REFUSED : -1;
	take_clock(e, &rep);
	if (rep.status != 200) {
		code = etcd_error_parse(rep.body, msg, sizeof(msg));
		/* A cluster without auth takes us without a token. */
		if (code == FAILED_PRECONDITION &&
		    strstr(msg, "not enabled") != NULL) {
			http_reply_free(&rep);
			return 0;
		}
		if (code == INVALID_ARGUMENT)
			snprintf(err, errlen, "store %s: %s (etcd user %s)",
			    e->label, msg, e->u.user);
		else
			(void)refusal(e, &rep, code, msg, err, errlen);
		http_reply_free(&rep);
		return code == INVALID_ARGUMENT || code ==
		    PERMISSION_DENIED ? ETCD_REFUSED : -1;
	}
	j = cJSON_Parse(rep.body);
	http_reply_free(&rep);
	t = cJSON_GetObjectItemCaseSensitive(j, "token");
	if (!cJSON_IsString(t) || t->valuestring[0] == '\0' ||
	    strpbrk(t->valuestring, "\r\n") != NULL ||
	    asprintf(&e->auth, "Authorization: %s", t->valuestring) == -1) {
		e->auth = NULL;
		cJSON_Delete(j);
		snprintf(err, errlen, "store %s: no token in the answer to "
		    "authenticate", e->label);
		return -1;
	}
	cJSON_Delete(j);
	return 0;
}

int
etcd_open(struct etcd **ep, const struct etcd_cfg *cfg, char *label,
    size_t labellen, char *err, size_t errlen)
{
	const char *eps[ETCD_MAX_ENDPOINTS];
	struct http_cfg hc;
	const char *why = "";
	struct etcd *e;
	size_t i;
	int rc;

	*ep = NULL;
	if ((e = calloc(1, sizeof(*e))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (etcd_url_parse(cfg->url, &e->u, &why) == -1) {
		snprintf(err, errlen, "invalid --store URL: %s", why);
		free(e);
		return -1;
	}
	etcd_url_label(&e->u, e->label, sizeof(e->label));
	if (label != NULL)
		snprintf(label, labellen, "%s", e->label);
	e->timeout = cfg->timeout;
	e->poll = cfg->poll;
	if (cfg->password != NULL) {
		if (strlen(cfg->password) >= sizeof(e->u.pass)) {
			snprintf(err, errlen, "store %s: the password is "
			    "longer than %zu bytes", e->label,
			    sizeof(e->u.pass) - 1);
			goto fail;
		}
		snprintf(e->u.pass, sizeof(e->u.pass), "%s", cfg->password);
		e->u.has_pass = 1;
	}
	e->has_user = e->u.user[0] != '\0';
	if (e->has_user && !e->u.has_pass) {
		snprintf(err, errlen, "store %s: etcd user %s has no password "
		    "(--store-password-file, CBEXEC_STORE_PASSWORD, or "
		    "etcd://USER:PASSWORD@...)", e->label, e->u.user);
		goto fail;
	}
	if (!e->has_user && e->u.has_pass) {
		snprintf(err, errlen, "store %s: a password without a user: "
		    "etcd wants both (etcd://USER@host,...)", e->label);
		goto fail;
	}
	memset(&hc, 0, sizeof(hc));
	hc.tls = e->u.tls;
	hc.ca = cfg->ca;
	hc.cert = cfg->cert;
	hc.key = cfg->key;
	hc.poll = cfg->poll;
	hc.label = e->label;
	if (!e->u.tls && (cfg->ca != NULL || cfg->cert != NULL ||
	    cfg->key != NULL)) {
		snprintf(err, errlen, "store %s: --store-ca, --store-cert and "
		    "--store-key are for etcds:// (TLS)", e->label);
		rc = ETCD_REFUSED;
		goto out;
	}
	for (i = 0; i < e->u.n; i++)
		eps[i] = e->u.ep[i];
	if (http_new(&e->h, eps, e->u.n, &hc, err, errlen) == -1) {
		rc = ETCD_REFUSED;
		goto out;
	}
	if (e->has_user && (rc = authenticate(e, mono_now() + e->timeout,
	    err, errlen)) != 0)
		goto out;
	*ep = e;
	return 0;
fail:
	rc = -1;
out:
	etcd_close(e);
	return rc;
}

void
etcd_close(struct etcd *e)
{
	if (e == NULL)
		return;
	http_free(e->h);
	if (e->auth != NULL)
		memset(e->auth, 0, strlen(e->auth));
	free(e->auth);
	memset(&e->u, 0, sizeof(e->u));	/* the password */
	free(e);
}

int
etcd_txn(struct etcd *e, const struct etcd_cmp *cmp, size_t ncmp,
    const struct etcd_op *ok, size_t nok, const struct etcd_op *fail,
    size_t nfail, double deadline, struct etcd_txn_res *res, char *err,
    size_t errlen)
{
	struct http_reply rep;
	char *body, why[CB_WHYLEN];
	int rc;

	memset(res, 0, sizeof(*res));
	if ((body = etcd_txn_json(cmp, ncmp, ok, nok, fail, nfail)) == NULL) {
		snprintf(err, errlen, "store %s: out of memory", e->label);
		return -1;
	}
	rc = call(e, "/v3/kv/txn", body, MAX_ANSWER, deadline, &rep, err,
	    errlen);
	free(body);
	if (rc != 0)
		return rc;
	rc = etcd_txn_parse(rep.body, res, why, sizeof(why));
	http_reply_free(&rep);
	if (rc != 0)
		snprintf(err, errlen, "store %s: %s", e->label, why);
	return rc;
}

int
etcd_range(struct etcd *e, const struct etcd_op *op, double deadline,
    struct etcd_resp *res, char *err, size_t errlen)
{
	struct http_reply rep;
	char *body, why[CB_WHYLEN];
	int rc;

	memset(res, 0, sizeof(*res));
	if ((body = etcd_range_json(op)) == NULL) {
		snprintf(err, errlen, "store %s: out of memory", e->label);
		return -1;
	}
	rc = call(e, "/v3/kv/range", body, op->end != NULL ? MAX_LIST :
	    MAX_ANSWER, deadline, &rep, err, errlen);
	free(body);
	if (rc != 0)
		return rc;
	rc = etcd_range_parse(rep.body, res, why, sizeof(why));
	http_reply_free(&rep);
	if (rc != 0)
		snprintf(err, errlen, "store %s: %s", e->label, why);
	return rc;
}

/* {"ID": "id"} and the like. */
static char *
id_json(const char *name, long long v, const char *name2, long long v2)
{
	char *s;

	if (name2 != NULL)
		return asprintf(&s, "{\"%s\":\"%lld\",\"%s\":\"%lld\"}", name,
		    v, name2, v2) == -1 ? NULL : s;
	return asprintf(&s, "{\"%s\":\"%lld\"}", name, v) == -1 ? NULL : s;
}

/* A lease request to path whose body is id_json()'s: call()'s answer. */
static int
call_ids(struct etcd *e, const char *path, const char *name, long long v,
    const char *name2, long long v2, double deadline, struct http_reply *rep,
    char *err, size_t errlen)
{
	char *body;
	int rc;

	if ((body = id_json(name, v, name2, v2)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = call(e, path, body, 65536, deadline, rep, err, errlen);
	free(body);
	return rc;
}

/* An answer's top object, or NULL with err. */
static cJSON *
answer(struct etcd *e, const struct http_reply *rep, const char *what,
    char *err, size_t errlen)
{
	cJSON *j = cJSON_Parse(rep->body);

	if (j == NULL || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		snprintf(err, errlen, "store %s: an answer to %s that is not "
		    "etcd's", e->label, what);
		return NULL;
	}
	return j;
}

int
etcd_grant(struct etcd *e, long long ttl, double deadline, long long *id,
    long long *granted, double *sent, char *err, size_t errlen)
{
	struct http_reply rep;
	cJSON *j;
	int rc;

	if ((rc = call_ids(e, "/v3/lease/grant", "TTL", ttl, "ID", 0,
	    deadline, &rep, err, errlen)) != 0)
		return rc;
	*sent = rep.sent;
	j = answer(e, &rep, "a lease grant", err, errlen);
	http_reply_free(&rep);
	if (j == NULL)
		return -1;
	rc = num(j, "ID", id) == -1 || num(j, "TTL", granted) == -1 ||
	    *id == 0 || *granted <= 0 ? -1 : 0;
	if (rc == -1)
		snprintf(err, errlen, "store %s: %s", e->label,
		    cJSON_GetObjectItemCaseSensitive(j, "error") != NULL ?
		    cJSON_GetObjectItemCaseSensitive(j, "error")->valuestring :
		    "no lease granted");
	cJSON_Delete(j);
	return rc;
}

/* A keepalive's answer: {"result": {"ID": ..., "TTL": ...}} (no TTL:
 * the lease is gone). */
static int
kept(struct etcd *e, struct http_reply *rep, long long *ttl, double *sent,
    char *err, size_t errlen)
{
	const cJSON *r;
	cJSON *j;
	int rc = 0;

	*sent = rep->sent;
	j = answer(e, rep, "a lease renewal", err, errlen);
	http_reply_free(rep);
	if (j == NULL)
		return -1;
	r = cJSON_GetObjectItemCaseSensitive(j, "result");
	if (r == NULL)
		r = j;
	if (!cJSON_IsObject(r) || num(r, "TTL", ttl) == -1) {
		snprintf(err, errlen, "store %s: an answer to a lease renewal "
		    "that is not etcd's", e->label);
		rc = -1;
	}
	cJSON_Delete(j);
	return rc;
}

int
etcd_keepalive(struct etcd *e, long long id, double deadline,
    long long *ttl, double *sent, char *err, size_t errlen)
{
	struct http_reply rep;
	int rc;

	if ((rc = call_ids(e, "/v3/lease/keepalive", "ID", id, NULL, 0,
	    deadline, &rep, err, errlen)) != 0)
		return rc;
	return kept(e, &rep, ttl, sent, err, errlen);
}

/* The renewal of etcd_keepalive_start, sent now: 1, or an error. */
static int
ka_send(struct etcd *e, char *err, size_t errlen)
{
	char *body;
	int rc;

	if ((body = id_json("ID", e->ka_id, NULL, 0)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = http_start(e->h, "/v3/lease/keepalive", body, e->auth, 65536,
	    e->ka_until, err, errlen);
	free(body);
	e->ka_state = rc == 1 ? 1 : 0;
	return rc == 1 ? 1 : rc == HTTP_INTR ? ETCD_INTR : -1;
}

int
etcd_keepalive_start(struct etcd *e, long long id, double deadline,
    char *err, size_t errlen)
{
	if (http_pending(e->h))
		etcd_settle(e);
	e->ka_id = id;
	e->ka_until = deadline;
	e->ka_pause = 0.01;
	return ka_send(e, err, errlen);
}

int
etcd_keepalive_step(struct etcd *e, int wait, long long *ttl, double *sent,
    char *err, size_t errlen)
{
	struct http_reply rep;
	char msg[512];
	int rc, code;

	for (;;) {
		if (e->ka_state == 2) {
			/* a member said "not now": the next one, after a
			 * nap (the caller's loop takes it, unless wait) */
			if (mono_now() < e->ka_retry) {
				if (!wait)
					return 1;
				if (nap(e, e->ka_retry - mono_now()) ==
				    ETCD_INTR) {
					e->ka_state = 0;
					snprintf(err, errlen, "store %s: "
					    "interrupted", e->label);
					return ETCD_INTR;
				}
			}
			if ((rc = ka_send(e, err, errlen)) != 1)
				return rc;
		}
		if (e->ka_state != 1) {
			snprintf(err, errlen, "internal error: no renewal "
			    "pending");
			return -1;
		}
		memset(&rep, 0, sizeof(rep));
		rc = http_step(e->h, wait, &rep, err, errlen);
		if (rc == 1)
			return 1;
		e->ka_state = 0;
		if (rc != 0)
			return rc == HTTP_INTR ? ETCD_INTR : -1;
		take_clock(e, &rep);
		if (rep.status == 200)
			return kept(e, &rep, ttl, sent, err, errlen);
		code = etcd_error_parse(rep.body, msg, sizeof(msg));
		if ((code == UNAVAILABLE || code == DEADLINE_EXCEEDED ||
		    code == RESOURCE_EXHAUSTED || code == ABORTED ||
		    (code < 0 && rep.status >= 500)) &&
		    mono_now() + e->ka_pause < e->ka_until) {
			http_reply_free(&rep);
			http_next(e->h);
			e->ka_state = 2;
			e->ka_retry = mono_now() + e->ka_pause;
			if (e->ka_pause < 0.1)
				e->ka_pause *= 2;
			continue;
		}
		rc = refusal(e, &rep, code, msg, err, errlen);
		http_reply_free(&rep);
		return rc;
	}
}

int
etcd_pending(const struct etcd *e)
{
	return e->ka_state != 0;
}

int
etcd_fd(const struct etcd *e)
{
	return http_fd(e->h);
}

void
etcd_settle(struct etcd *e)
{
	struct http_reply rep;
	char err[CB_ERRLEN];

	memset(&rep, 0, sizeof(rep));
	if (http_pending(e->h) && http_step(e->h, 1, &rep, err,
	    sizeof(err)) == 0) {
		take_clock(e, &rep);
		http_reply_free(&rep);
	}
	e->ka_state = 0;
}

int
etcd_revoke(struct etcd *e, long long id, double deadline, char *err,
    size_t errlen)
{
	struct http_reply rep;
	int rc;

	rc = call_ids(e, "/v3/lease/revoke", "ID", id, NULL, 0, deadline, &rep,
	    err, errlen);
	if (rc == 0)
		http_reply_free(&rep);
	return rc;
}
