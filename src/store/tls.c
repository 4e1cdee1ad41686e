/* SPDX-License-Identifier: ISC */
/*
 * TLS for a rediss:// store: OpenSSL's libssl over the non-blocking socket
 * redis.c dialled itself (Debian's hiredis 0.14 has no TLS; its reader
 * still parses the replies).  This file does the TLS and nothing else:
 * redis.c polls the socket for what a step wants (TLS_WANT_READ or
 * TLS_WANT_WRITE) against its own deadlines, so the handshake, every
 * request and every reply are bounded exactly as on a plain connection.
 *
 * The server's certificate is verified against the system's CA store
 * (OpenSSL's default paths, SSL_CERT_FILE and SSL_CERT_DIR) or the one CA
 * file of --store-ca, and must be for the host of the URL (SSL_set1_host;
 * an address is checked as an address); a host name is also sent as SNI.
 * TLS 1.2 at least.  A client certificate and key are optional
 * (--store-cert, --store-key); the key, a secret, must be private as ssh
 * and libpq want theirs.  When the handshake fails, the message says
 * which of the usual reasons it was (verify_words[], alert_words[]).
 *
 * libssl is loaded with dlopen on the first rediss:// connection, as
 * core/digest.c loads libcrypto: linking it would map and relocate libssl
 * and libcrypto at every start-up (an empty program linked with both took
 * about 1.3 ms more CPU and 1.8 MiB more resident memory than without),
 * and only a --store rediss:// invocation needs them.  Every function is
 * reached through the table below; none of OpenSSL's function-like macros
 * is used (they would need the symbols at link time).  The binary names
 * the soname in its ELF .note.dlopen, as "recommended".  OpenSSL reads its
 * configuration file (the system's policy: protocol versions, ciphers) as
 * any TLS client of the system does.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/opensslv.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "core.h"
#include "tls.h"

#ifndef SSL_SONAME
#define TLS_STR2(x) #x
#define TLS_STR(x) TLS_STR2(x)
#if defined(OPENSSL_VERSION_MAJOR) && OPENSSL_VERSION_MAJOR >= 3
#define SSL_SONAME "libssl.so." TLS_STR(OPENSSL_VERSION_MAJOR)
#else
#define SSL_SONAME "libssl.so.1.1"
#endif
#endif

/* The ELF dlopen note (https://systemd.io/ELF_DLOPEN_METADATA/). */
#define DLOPEN_JSON "[{\"feature\":\"tls\",\"description\":" \
	"\"TLS to a rediss:// store\"," \
	"\"priority\":\"recommended\",\"soname\":[\"" SSL_SONAME "\"]}]"

CB_DLOPEN_NOTE(DLOPEN_JSON);

/* The functions used, by name, from libssl and the libcrypto it brings. */
#define TLS_FUNCS \
	F(int, OPENSSL_init_ssl, (uint64_t, const OPENSSL_INIT_SETTINGS *)) \
	F(const SSL_METHOD *, TLS_client_method, (void)) \
	F(SSL_CTX *, SSL_CTX_new, (const SSL_METHOD *)) \
	F(void, SSL_CTX_free, (SSL_CTX *)) \
	F(long, SSL_CTX_ctrl, (SSL_CTX *, int, long, void *)) \
	F(void, SSL_CTX_set_verify, (SSL_CTX *, int, SSL_verify_cb)) \
	F(int, SSL_CTX_set_default_verify_paths, (SSL_CTX *)) \
	F(int, SSL_CTX_load_verify_locations, (SSL_CTX *, const char *, \
	    const char *)) \
	F(int, SSL_CTX_use_certificate_chain_file, (SSL_CTX *, const char *)) \
	F(int, SSL_CTX_use_PrivateKey_file, (SSL_CTX *, const char *, int)) \
	F(int, SSL_CTX_check_private_key, (const SSL_CTX *)) \
	F(SSL *, SSL_new, (SSL_CTX *)) \
	F(void, SSL_free, (SSL *)) \
	F(int, SSL_set_fd, (SSL *, int)) \
	F(long, SSL_ctrl, (SSL *, int, long, void *)) \
	F(int, SSL_set1_host, (SSL *, const char *)) \
	F(X509_VERIFY_PARAM *, SSL_get0_param, (SSL *)) \
	F(int, SSL_connect, (SSL *)) \
	F(int, SSL_read, (SSL *, void *, int)) \
	F(int, SSL_write, (SSL *, const void *, int)) \
	F(int, SSL_get_error, (const SSL *, int)) \
	F(int, SSL_pending, (const SSL *)) \
	F(long, SSL_get_verify_result, (const SSL *)) \
	F(int, SSL_shutdown, (SSL *)) \
	F(unsigned long, ERR_get_error, (void)) \
	F(unsigned long, ERR_peek_last_error, (void)) \
	F(void, ERR_clear_error, (void)) \
	F(const char *, ERR_reason_error_string, (unsigned long)) \
	F(void, ERR_error_string_n, (unsigned long, char *, size_t)) \
	F(const char *, X509_verify_cert_error_string, (long)) \
	F(int, X509_VERIFY_PARAM_set1_ip_asc, (X509_VERIFY_PARAM *, \
	    const char *))

static struct lib {
#define F(ret, name, args) ret (*name) args;
	TLS_FUNCS
#undef F
} lib;

static const struct { const char *name; size_t off; } lib_syms[] = {
#define F(ret, name, args) { #name, offsetof(struct lib, name) },
	TLS_FUNCS
#undef F
};

/* A call through the table; the name is never followed by "(", so no
 * macro of OpenSSL's of that name is expanded. */
#define L(f) (lib.f)

static int lib_state;		/* 0 not tried, 1 loaded, -1 failed */
static char lib_why[CB_WHYLEN];

static int
lib_load(char *err, size_t errlen)
{
	const char *e;
	size_t i;
	void *h, *p;

	if (lib_state == 0) {
		lib_state = -1;
		if ((h = dlopen(SSL_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
			e = dlerror();
			snprintf(lib_why, sizeof(lib_why), "cannot load "
			    "OpenSSL's libssl (%s) for TLS: %s", SSL_SONAME,
			    e != NULL ? e : "not found");
			goto out;
		}
		for (i = 0; i < sizeof(lib_syms) / sizeof(lib_syms[0]); i++) {
			/* Casting dlsym's void * to a function pointer is
			 * what POSIX intends. */
			if ((p = dlsym(h, lib_syms[i].name)) == NULL) {
				snprintf(lib_why, sizeof(lib_why), "%s lacks %s, "
				    "which TLS needs", SSL_SONAME,
				    lib_syms[i].name);
				goto out;
			}
			memcpy((char *)&lib + lib_syms[i].off, &p, sizeof(p));
		}
		if (L(OPENSSL_init_ssl)(OPENSSL_INIT_LOAD_SSL_STRINGS |
		    OPENSSL_INIT_LOAD_CRYPTO_STRINGS | OPENSSL_INIT_NO_ATEXIT,
		    NULL) != 1) {
			snprintf(lib_why, sizeof(lib_why), "OpenSSL's libssl "
			    "(%s) failed to initialise", SSL_SONAME);
			goto out;
		}
		lib_state = 1;
	}
out:
	if (lib_state == 1)
		return 0;
	snprintf(err, errlen, "%s", lib_why);
	return -1;
}

/* OpenSSL's reason for e (or for the last error queued), in words. */
static const char *
reason(unsigned long e, char *buf, size_t len)
{
	const char *s;

	if (e == 0)
		e = L(ERR_peek_last_error)();
	if (e == 0)
		return "unknown error";
	if ((s = L(ERR_reason_error_string)(e)) != NULL)
		return s;
	L(ERR_error_string_n)(e, buf, len);
	return buf;
}

struct tls_ctx {
	SSL_CTX *ctx;
};

struct tls {
	SSL *ssl;
	char host[256];
	int done;		/* the handshake is over */
	int dead;		/* a fatal error: no close_notify */
};

int
tls_key_private(const char *opt, const char *path, char *err, size_t errlen)
{
	struct stat sb;

	if (stat(path, &sb) == -1) {
		snprintf(err, errlen, "%s %s: %s", opt, path, strerror(errno));
		return -1;
	}
	if ((sb.st_uid == geteuid() && (sb.st_mode & 077) == 0) ||
	    (sb.st_uid == 0 && (sb.st_mode & 007) == 0))
		return 0;
	snprintf(err, errlen, "%s %s: mode %04o, owner %ld: a private key "
	    "must be yours and private (chmod 600), or root's and not "
	    "readable by others", opt, path, (unsigned)(sb.st_mode & 07777),
	    (long)sb.st_uid);
	return -1;
}

/* A file OpenSSL is to read: one we can read, else why not. */
static int
readable(const char *opt, const char *path, char *err, size_t errlen)
{
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s %s: %s", opt, path, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

int
tls_ctx_new(struct tls_ctx **out, const struct tls_cfg *cfg, char *err,
    size_t errlen)
{
	const char *key = cfg->key != NULL ? cfg->key : cfg->cert;
	const char *keyopt = cfg->key != NULL ? "--store-key" : "--store-cert";
	struct tls_ctx *c;
	const char *why;
	char buf[256];
	SSL_CTX *ctx;

	*out = NULL;
	if (lib_load(err, errlen) == -1)
		return -1;
	L(ERR_clear_error)();
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (ctx = c->ctx = L(SSL_CTX_new)(L(TLS_client_method)())) == NULL) {
		free(c);
		snprintf(err, errlen, "TLS: cannot set up: %s",
		    reason(0, buf, sizeof(buf)));
		return -1;
	}
	L(SSL_CTX_ctrl)(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION,
	    NULL);
	/* redis.c retries a write that wanted more with what is left of
	 * the same bytes, from where it got to. */
	L(SSL_CTX_ctrl)(ctx, SSL_CTRL_MODE, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, NULL);
	L(SSL_CTX_set_verify)(ctx, SSL_VERIFY_PEER, NULL);
	if (cfg->ca != NULL) {
		if (readable("--store-ca", cfg->ca, err, errlen) == -1)
			goto fail;
		if (L(SSL_CTX_load_verify_locations)(ctx, cfg->ca, NULL) != 1) {
			snprintf(err, errlen, "--store-ca %s: no CA certificate "
			    "in it (%s)", cfg->ca, reason(0, buf, sizeof(buf)));
			goto fail;
		}
	} else if (L(SSL_CTX_set_default_verify_paths)(ctx) != 1) {
		snprintf(err, errlen, "TLS: cannot read the system's CA "
		    "store: %s", reason(0, buf, sizeof(buf)));
		goto fail;
	}
	if (cfg->cert != NULL) {
		if (readable("--store-cert", cfg->cert, err, errlen) == -1 ||
		    tls_key_private(keyopt, key, err, errlen) == -1 ||
		    readable(keyopt, key, err, errlen) == -1)
			goto fail;
		if (L(SSL_CTX_use_certificate_chain_file)(ctx, cfg->cert) !=
		    1) {
			snprintf(err, errlen, "--store-cert %s: no certificate "
			    "in it (%s)", cfg->cert, reason(0, buf,
			    sizeof(buf)));
			goto fail;
		}
		if (L(SSL_CTX_use_PrivateKey_file)(ctx, key,
		    SSL_FILETYPE_PEM) != 1) {
			why = reason(0, buf, sizeof(buf));
			if (strstr(why, "mismatch") != NULL)
				snprintf(err, errlen, "%s %s is not the key of "
				    "--store-cert %s", keyopt, key, cfg->cert);
			else
				snprintf(err, errlen, "%s %s: no private key in "
				    "it (%s)", keyopt, key, why);
			goto fail;
		}
		if (L(SSL_CTX_check_private_key)(ctx) != 1) {
			snprintf(err, errlen, "%s %s is not the key of "
			    "--store-cert %s", keyopt, key, cfg->cert);
			goto fail;
		}
	}
	*out = c;
	return 0;
fail:
	tls_ctx_free(c);
	return -1;
}

void
tls_ctx_free(struct tls_ctx *c)
{
	if (c == NULL)
		return;
	if (c->ctx != NULL)
		L(SSL_CTX_free)(c->ctx);
	free(c);
}

struct tls *
tls_new(struct tls_ctx *c, int fd, const char *host, char *err,
    size_t errlen)
{
	unsigned char addr[16];
	struct tls *t;
	char buf[256];
	int ip;

	L(ERR_clear_error)();
	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->ssl = L(SSL_new)(c->ctx)) == NULL) {
		free(t);
		snprintf(err, errlen, "TLS: cannot set up: %s",
		    reason(0, buf, sizeof(buf)));
		return NULL;
	}
	snprintf(t->host, sizeof(t->host), "%s", host);
	ip = inet_pton(AF_INET, host, addr) == 1 ||
	    inet_pton(AF_INET6, host, addr) == 1;
	/* SNI carries names only (RFC 6066), and an address is matched
	 * against the certificate's IP addresses, not its names. */
	if (L(SSL_set_fd)(t->ssl, fd) != 1 || (ip ?
	    L(X509_VERIFY_PARAM_set1_ip_asc)(L(SSL_get0_param)(t->ssl),
	    host) != 1 : L(SSL_set1_host)(t->ssl, host) != 1 ||
	    L(SSL_ctrl)(t->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME,
	    TLSEXT_NAMETYPE_host_name, (void *)host) != 1)) {
		snprintf(err, errlen, "TLS: cannot set up for %s: %s", host,
		    reason(0, buf, sizeof(buf)));
		tls_free(t);
		return NULL;
	}
	return t;
}

/* Why a certificate was not accepted, by OpenSSL's verify code: the
 * words say what to do; the host (%s) where it is about the name. */
static const struct {
	long code;
	const char *words;
} verify_words[] = {
	{ X509_V_ERR_HOSTNAME_MISMATCH, "the server's certificate is not for "
	    "%s (host name mismatch)" },
	{ X509_V_ERR_IP_ADDRESS_MISMATCH, "the server's certificate is not "
	    "for %s (IP address mismatch)" },
	{ X509_V_ERR_CERT_HAS_EXPIRED, "the server's certificate has "
	    "expired" },
	{ X509_V_ERR_CERT_NOT_YET_VALID, "the server's certificate is not "
	    "valid yet (a clock is wrong?)" },
	{ X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, "the server's "
	    "certificate is signed by an unknown CA (--store-ca FILE names "
	    "the CA to trust)" },
	{ X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, "the server's certificate is "
	    "signed by an unknown CA (--store-ca FILE names the CA to "
	    "trust)" },
	{ X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, "the server's certificate "
	    "is self-signed and not trusted (--store-ca FILE names the CA "
	    "to trust)" },
	{ X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, "the server's certificate is "
	    "signed by an unknown CA (--store-ca FILE names the CA to "
	    "trust)" },
	{ X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, "the server's "
	    "certificate is signed by an unknown CA (--store-ca FILE names "
	    "the CA to trust)" },
	{ X509_V_ERR_CERT_REVOKED, "the server's certificate is revoked" },
};

/* What a TLS alert or error said, in words for the operator: the words
 * where OpenSSL's reason contains the key. */
static const struct {
	const char *key;
	const char *words;
} alert_words[] = {
	{ "wrong version number", "the server does not speak TLS there "
	    "(a plain port? use redis://)" },
	{ "packet length too long", "the server does not speak TLS there "
	    "(a plain port? use redis://)" },
	{ "certificate required", "the server wants a client certificate "
	    "(--store-cert FILE, --store-key FILE)" },
	{ "alert unknown ca", "the server does not trust the client "
	    "certificate (--store-cert)" },
	{ "alert bad certificate", "the server refused the client "
	    "certificate (--store-cert)" },
	{ "certificate unknown", "the server refused the client certificate "
	    "(--store-cert)" },
	{ "certificate expired", "the server refused the client "
	    "certificate: expired (--store-cert)" },
	{ "unsupported protocol", "no TLS version in common with the server "
	    "(1.2 or later)" },
};

/* err: why the session failed, in words.  The verify result first: a
 * certificate refused is said as such, not as "certificate verify
 * failed". */
static void
explain(struct tls *t, unsigned long e, char *err, size_t errlen)
{
	long v = L(SSL_get_verify_result)(t->ssl);
	char buf[256];
	const char *why;
	size_t i;

	if (!t->done && v != X509_V_OK) {
		for (i = 0; i < sizeof(verify_words) / sizeof(verify_words[0]);
		    i++)
			if (verify_words[i].code == v)
				break;
		if (i < sizeof(verify_words) / sizeof(verify_words[0])) {
			snprintf(buf, sizeof(buf), verify_words[i].words,
			    t->host);
			snprintf(err, errlen, "TLS: %s", buf);
		} else
			snprintf(err, errlen, "TLS: the server's certificate "
			    "is not accepted: %s",
			    L(X509_verify_cert_error_string)(v));
		return;
	}
	why = reason(e, buf, sizeof(buf));
	for (i = 0; i < sizeof(alert_words) / sizeof(alert_words[0]); i++)
		if (strstr(why, alert_words[i].key) != NULL) {
			snprintf(err, errlen, "TLS: %s (%s)",
			    alert_words[i].words, why);
			return;
		}
	snprintf(err, errlen, "TLS: %s", why);
}

/* What an SSL_* call that returned rc means: TLS_WANT_*, TLS_EOF or
 * TLS_FAIL with err. */
static int
outcome(struct tls *t, int rc, char *err, size_t errlen)
{
	unsigned long e;
	int saved = errno;

	switch (L(SSL_get_error)(t->ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		return TLS_WANT_READ;
	case SSL_ERROR_WANT_WRITE:
		return TLS_WANT_WRITE;
	case SSL_ERROR_ZERO_RETURN:
		t->dead = 1;
		return TLS_EOF;
	case SSL_ERROR_SYSCALL:
		t->dead = 1;
		if (L(ERR_peek_last_error)() != 0)
			break;
		if (saved == 0 || saved == ECONNRESET || saved == EPIPE) {
			errno = saved != 0 ? saved : ECONNRESET;
			return TLS_EOF;
		}
		snprintf(err, errlen, "%s", strerror(saved));
		return TLS_FAIL;
	default:
		t->dead = 1;
		break;
	}
	e = L(ERR_peek_last_error)();
#ifdef SSL_R_UNEXPECTED_EOF_WHILE_READING
	if (ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
		errno = ECONNRESET;
		return TLS_EOF;
	}
#endif
	explain(t, e, err, errlen);
	return TLS_FAIL;
}

int
tls_handshake(struct tls *t, char *err, size_t errlen)
{
	int rc;

	L(ERR_clear_error)();
	errno = 0;
	if ((rc = L(SSL_connect)(t->ssl)) == 1) {
		t->done = 1;
		return 0;
	}
	return outcome(t, rc, err, errlen);
}

ssize_t
tls_read(struct tls *t, void *buf, size_t n, char *err, size_t errlen)
{
	int rc;

	L(ERR_clear_error)();
	errno = 0;
	if ((rc = L(SSL_read)(t->ssl, buf, n > INT32_MAX ? INT32_MAX :
	    (int)n)) > 0)
		return rc;
	return outcome(t, rc, err, errlen);
}

ssize_t
tls_write(struct tls *t, const void *buf, size_t n, char *err,
    size_t errlen)
{
	int rc;

	L(ERR_clear_error)();
	errno = 0;
	if ((rc = L(SSL_write)(t->ssl, buf, n > INT32_MAX ? INT32_MAX :
	    (int)n)) > 0)
		return rc;
	return outcome(t, rc, err, errlen);
}

int
tls_pending(struct tls *t)
{
	return L(SSL_pending)(t->ssl);
}

int
tls_idle(struct tls *t)
{
	char c, why[CB_WHYLEN];

	return tls_read(t, &c, 1, why, sizeof(why)) == TLS_WANT_READ;
}

void
tls_free(struct tls *t)
{
	if (t == NULL)
		return;
	if (t->ssl != NULL) {
		/* Once, never waiting: the server learns the session ended
		 * on purpose; a socket gone takes nothing with it (SIGPIPE
		 * is ignored where a store is open). */
		if (t->done && !t->dead) {
			L(ERR_clear_error)();
			L(SSL_shutdown)(t->ssl);
		}
		L(SSL_free)(t->ssl);
	}
	free(t);
}
