/* SPDX-License-Identifier: ISC */
/*
 * HTTP POSTs to one of several endpoints (an etcd cluster's members), by a
 * deadline, through libcurl loaded at run time (http.c); shared by the
 * files of store/ only.
 */
#ifndef CBEXEC_STORE_HTTP_H
#define CBEXEC_STORE_HTTP_H

#include <stddef.h>

struct pollfd;

struct http_cfg {
	int tls;		/* https:// */
	const char *ca;		/* --store-ca (NULL: the system's CAs) */
	const char *cert, *key;	/* a client certificate and its key (NULL:
				 * none; key NULL: in cert's file) */
	/* A wait: poll(2) on n fds that returns -2 at once when an
	 * operator signal comes; NULL: poll(2). */
	int (*poll)(struct pollfd *fds, int n, int ms);
	const char *label;	/* the store, for messages */
};

struct http;

/* What came back. */
struct http_reply {
	long status;		/* the HTTP status */
	char *body;		/* NUL-terminated (caller frees) */
	size_t len;
	double date;		/* the Date header (epoch seconds), -1: none */
	double wall_sent, wall_got;	/* wall_now() when the request that
				 * answered was sent, and its answer came */
	double sent;		/* mono_now() then */
	const char *endpoint;	/* host:port that answered (the handle's) */
};

/* The outcomes besides 0 (an answer, whatever its status) and 1
 * (pending). */
#define HTTP_FAIL	(-1)	/* no answer; err says why */
#define HTTP_INTR	(-3)	/* an operator signal ended the wait */
#define HTTP_REFUSED	(-5)	/* no answer that a retry could change: a
				 * certificate refused, a TLS mismatch */

/* Load libcurl (once) and make a handle over endpoints[0..n-1]
 * ("host:port", "[v6]:port"): 0, or -1 with err (the library cannot be
 * loaded; a key file not private). */
int http_new(struct http **h, const char *const *endpoints, size_t n,
    const struct http_cfg *cfg, char *err, size_t errlen);
void http_free(struct http *h);

/*
 * POST body (JSON) to path on an endpoint, and its whole answer (at most
 * max bytes) by deadline (mono_now() clock), with headers (NULL or a
 * "Authorization: ..." line).  The endpoint that answered last is asked
 * first; one that cannot be reached, resets or does not answer in its
 * share of the time is given up for the next, in turn.  0 with *rep
 * (http_reply_free it), or HTTP_FAIL, HTTP_INTR, HTTP_REFUSED with err.
 */
int http_post(struct http *h, const char *path, const char *body,
    const char *auth, size_t max, double deadline, struct http_reply *rep,
    char *err, size_t errlen);
/*
 * The same in two steps: http_start begins it (1: pending, or an error
 * as http_post) and http_step goes on with it: with wait 0 never
 * blocking (1 while pending), with wait 1 until it is done or its
 * deadline; 0 with *rep, or an error as http_post.  One request at a
 * time: a pending one is finished (http_step) before another starts.
 */
int http_start(struct http *h, const char *path, const char *body,
    const char *auth, size_t max, double deadline, char *err,
    size_t errlen);
int http_step(struct http *h, int wait, struct http_reply *rep, char *err,
    size_t errlen);
/* Whether the last request, though it failed, may have reached a server
 * (it was sent): then it may have been acted on. */
int http_reached(const struct http *h);
/* Ask the endpoint after the one that answered last first next time
 * (that one said it cannot serve now). */
void http_next(struct http *h);
/* Whether a request is pending. */
int http_pending(const struct http *h);
/* A descriptor of the pending request (readable when its answer comes),
 * else -1. */
int http_fd(const struct http *h);
void http_reply_free(struct http_reply *rep);

/* Base64 of n bytes (RFC 4648, padded) into a new string; and back:
 * len bytes of text into a new NUL-terminated buffer (*outlen bytes
 * without the NUL): NULL when not base64 or out of memory.  Through
 * libcrypto, which libcurl has loaded (http_new first). */
char *http_b64(const void *p, size_t n);
char *http_unb64(const char *s, size_t len, size_t *outlen);

#endif
