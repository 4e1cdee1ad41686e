/* SPDX-License-Identifier: ISC */
/*
 * TLS over a socket of redis.c's own (rediss://), with OpenSSL's libssl
 * loaded at run time: shared by the files of store/ only.
 */
#ifndef CBEXEC_STORE_TLS_H
#define CBEXEC_STORE_TLS_H

#include <stddef.h>
#include <sys/types.h>

/* What a session needs besides the socket: the CA file (NULL: the
 * system's store), the client certificate and its key (NULL: none; a key
 * NULL beside a certificate: in the certificate's file). */
struct tls_cfg {
	const char *ca, *cert, *key;
};

struct tls_ctx;			/* the settings and certificates, loaded once */
struct tls;			/* one session over one socket */

/* What a step that did not finish needs: wait for the socket to be
 * readable (TLS_WANT_READ) or writable (TLS_WANT_WRITE), then try again. */
#define TLS_WANT_READ	(-10)
#define TLS_WANT_WRITE	(-11)
/* The other end is gone (EOF, a reset): a new connection may be tried. */
#define TLS_EOF		(-12)
/* Anything else: err says what, and the session is dead. */
#define TLS_FAIL	(-1)

/* A private key's file (opt the option that named it, for err): ours
 * and private, or root's and not for others (libpq's rule, and ssh's).
 * 0, or -1 with "OPT PATH: ..." in err.  http.c's client key too. */
int tls_key_private(const char *opt, const char *path, char *err,
    size_t errlen);

/* Load libssl (once), and the CA and client certificate of cfg: 0, or -1
 * with err naming what is wrong (the library, a file and why). */
int tls_ctx_new(struct tls_ctx **ctx, const struct tls_cfg *cfg,
    char *err, size_t errlen);
void tls_ctx_free(struct tls_ctx *ctx);

/* A client session on connected socket fd to host (its name is verified
 * against the certificate and sent as SNI; an address is verified as
 * such): NULL with err when out of memory. */
struct tls *tls_new(struct tls_ctx *ctx, int fd, const char *host,
    char *err, size_t errlen);
/* A step of the handshake: 0 done, TLS_WANT_*, TLS_EOF or TLS_FAIL with
 * err naming the reason (an untrusted, expired or misnamed certificate,
 * a server that does not speak TLS, one that wants a client
 * certificate). */
int tls_handshake(struct tls *t, char *err, size_t errlen);
/* Bytes read (> 0) or written, else TLS_WANT_*, TLS_EOF or TLS_FAIL with
 * err. */
ssize_t tls_read(struct tls *t, void *buf, size_t n, char *err,
    size_t errlen);
ssize_t tls_write(struct tls *t, const void *buf, size_t n, char *err,
    size_t errlen);
/* Bytes already decrypted and not yet read: the socket will not say so. */
int tls_pending(struct tls *t);
/* Whether an idle session is still there: the records that came meanwhile
 * (a session ticket) are taken; 0 when the other end closed it or sent
 * what nobody asked for. */
int tls_idle(struct tls *t);
/* Free the session (a close_notify sent when it can be without waiting);
 * the socket is the caller's to close. */
void tls_free(struct tls *t);

#endif
