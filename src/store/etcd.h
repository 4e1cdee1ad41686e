/* SPDX-License-Identifier: ISC */
/*
 * An etcd v3 client over its JSON gateway (etcdapi.c), for the etcd
 * backend of the store (etcd.c); shared by the files of store/ only.
 */
#ifndef CBEXEC_STORE_ETCD_H
#define CBEXEC_STORE_ETCD_H

#include <stddef.h>

struct pollfd;

/* ---- the URL: etcd[s]://[user[:password]@]host[:port][,host[:port]...] ---- */

#define ETCD_MAX_ENDPOINTS 16
#define ETCD_PORT 2379

struct etcd_url {
	int tls;			/* etcds:// */
	char user[256], pass[256];
	int has_pass;			/* a password in the URL */
	char ep[ETCD_MAX_ENDPOINTS][272];	/* host:port, [v6]:port */
	size_t n;
};

/* Parse url into *u: 0, or -1 with what is wrong in *why. */
int etcd_url_parse(const char *url, struct etcd_url *u, const char **why);
/* The URL without its password, each endpoint with its port. */
void etcd_url_label(const struct etcd_url *u, char *label, size_t len);
/* Where url's password is (as written): 1 with its offset and length,
 * 0 when it has none. */
int etcd_url_password(const char *url, size_t *off, size_t *len);

/* ---- requests ---- */

/* A key and what etcd keeps of it (numbers 0 when it has none). */
struct etcd_kv {
	char *key, *value;	/* decoded, NUL-terminated (value "" when
				 * empty, NULL with keys_only) */
	size_t keylen, len;
	long long create, mod, version, lease;
};

/* One comparison of a transaction: target's value of key equal to v
 * (CREATE 0: the key does not exist). */
enum etcd_target { ETCD_CREATE, ETCD_MOD, ETCD_LEASE, ETCD_VALUE };
struct etcd_cmp {
	const char *key;
	enum etcd_target target;
	long long v;
	const char *value;	/* ETCD_VALUE */
	size_t vlen;
};

/* One operation: a range (end: the first key after it, NULL: one key;
 * "\0" as end with endlen 1: every key from key on), a put (with a lease
 * or 0), a delete. */
enum etcd_kind { ETCD_RANGE, ETCD_PUT, ETCD_DELETE };
struct etcd_op {
	enum etcd_kind kind;
	const char *key;
	const char *end;	/* range/delete: the end of a range */
	size_t endlen;
	const char *value;	/* put */
	size_t vlen;
	long long lease;	/* put */
	int keys_only;		/* range: no values */
};

/* What one operation of a transaction answered. */
struct etcd_resp {
	enum etcd_kind kind;
	struct etcd_kv *kvs;	/* range: the keys found */
	size_t nkvs;
	long long count;	/* range: how many; delete: how many went */
};

#define ETCD_MAX_OPS 8
struct etcd_txn_res {
	int succeeded;
	long long revision;	/* the store's after it */
	struct etcd_resp resp[ETCD_MAX_OPS];
	size_t nresp;
};
void etcd_txn_res_free(struct etcd_txn_res *r);

/* The request bodies as JSON text (caller frees; NULL when out of
 * memory or base64 cannot be had): a transaction, a range. */
char *etcd_txn_json(const struct etcd_cmp *cmp, size_t ncmp,
    const struct etcd_op *ok, size_t nok, const struct etcd_op *fail,
    size_t nfail);
char *etcd_range_json(const struct etcd_op *op);
/* An answer's body into *r (zeroed first): 0, or -1 with err. */
int etcd_txn_parse(const char *body, struct etcd_txn_res *r, char *err,
    size_t errlen);
/* A range's answer (also the response of a transaction's range): its
 * keys. */
int etcd_range_parse(const char *body, struct etcd_resp *r, char *err,
    size_t errlen);
void etcd_resp_free(struct etcd_resp *r);
/* An error answer ({"error": ..., "code": N}): its gRPC code, and its
 * message in msg; -1 when the body is no such thing. */
int etcd_error_parse(const char *body, char *msg, size_t msglen);

/* ---- the client ---- */

struct etcd_cfg {
	const char *url;
	const char *password;	/* --store-password-file, the environment;
				 * NULL: the URL's */
	const char *ca, *cert, *key;
	double timeout;		/* --store-timeout: each command */
	int (*poll)(struct pollfd *fds, int n, int ms);
};

struct etcd;

/* Errors besides -1: an operator signal ended a wait; the store answered
 * and refused us (a certificate, a password, permission): no fallback. */
#define ETCD_INTR	(-3)
#define ETCD_REFUSED	(-5)

/* Parse the URL, load libcurl, authenticate when a user is named: 0, or
 * -1 / ETCD_INTR / ETCD_REFUSED with err naming the store.  label gets
 * the URL without its password in any case (when it parses). */
int etcd_open(struct etcd **e, const struct etcd_cfg *cfg, char *label,
    size_t labellen, char *err, size_t errlen);
void etcd_close(struct etcd *e);

/* A transaction by deadline (0: --store-timeout from now): 0 with *res
 * (free it), or an error. */
int etcd_txn(struct etcd *e, const struct etcd_cmp *cmp, size_t ncmp,
    const struct etcd_op *ok, size_t nok, const struct etcd_op *fail,
    size_t nfail, double deadline, struct etcd_txn_res *res, char *err,
    size_t errlen);
/* One range: 0 with *res (free it), or an error. */
int etcd_range(struct etcd *e, const struct etcd_op *op, double deadline,
    struct etcd_resp *res, char *err, size_t errlen);
/* A lease of ttl seconds: 0 with its id and the ttl granted; *sent is
 * when it was asked for (mono_now()).  */
int etcd_grant(struct etcd *e, long long ttl, double deadline,
    long long *id, long long *granted, double *sent, char *err,
    size_t errlen);
/* Renew lease id: 0 with *ttl (0: the lease is gone) and *sent; or an
 * error. */
int etcd_keepalive(struct etcd *e, long long id, double deadline,
    long long *ttl, double *sent, char *err, size_t errlen);
/* The same in steps: start sends it (1 pending, or an error) and step
 * goes on with it, with wait 0 never blocking (1 while pending; a member
 * that says "not now" is left for the next after a nap the caller's loop
 * takes), with wait 1 until it is done; 0 with *ttl and *sent, or an
 * error; etcd_fd the descriptor to wait on (-1: none now). */
int etcd_keepalive_start(struct etcd *e, long long id, double deadline,
    char *err, size_t errlen);
int etcd_keepalive_step(struct etcd *e, int wait, long long *ttl,
    double *sent, char *err, size_t errlen);
int etcd_pending(const struct etcd *e);
int etcd_fd(const struct etcd *e);
/* Finish a pending renewal (by its own deadline), its answer dropped. */
void etcd_settle(struct etcd *e);
/* Whether the last request that failed may have been acted on all the
 * same (it reached the cluster). */
int etcd_maybe(const struct etcd *e);
/* Revoke lease id (its keys go with it); best effort. */
int etcd_revoke(struct etcd *e, long long id, double deadline, char *err,
    size_t errlen);

/*
 * The store's time now (epoch seconds).  etcd has no clock command: each
 * answer's Date header (whole seconds, the member's clock) bounds the
 * offset between our wall clock and the store's to an interval, and the
 * intervals of the answers so far are intersected; the offset used is
 * the one in that interval nearest to 0, so a host whose clock agrees
 * with the store's (to within the interval) keeps its own milliseconds,
 * and one off by more is set right to within about a second.  -1 before
 * any answer.
 */
double etcd_now(const struct etcd *e);
/* The offset (store minus our wall clock) in use, and whether any. */
int etcd_offset(const struct etcd *e, double *off);

/* The pure part of the clock, for the unit test: an answer dated date
 * (whole seconds) to a request sent at wall time sent and answered at
 * got narrows [*lo, *hi] (have: 0 when there is none yet, set to 1);
 * returns the offset to use. */
double etcd_clock_fold(int *have, double *lo, double *hi, double date,
    double sent, double got);

#endif
