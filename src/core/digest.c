/* SPDX-License-Identifier: ISC */
/*
 * SHA-256 as 64 lower-case hex digits, through OpenSSL's EVP interface.
 *
 * struct digest wraps one EVP_MD_CTX; digest_final and digest_abort are
 * the only ways out and both free it, so callers never touch OpenSSL.
 *
 * libcrypto is loaded with dlopen on the first digest, not linked: most
 * invocations (a successful run, --status) never hash anything, and
 * loading and relocating libcrypto would cost them about a millisecond and
 * 1.4 MiB of resident memory.  OpenSSL's configuration file is not read
 * either: SHA-256 from the default provider needs none of it.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core.h"

#ifndef CRYPTO_SONAME
#define CRYPTO_SONAME "libcrypto.so.3"
#endif

static struct {
	int state;		/* 0 not tried, 1 loaded, -1 failed */
	EVP_MD_CTX *(*ctx_new)(void);
	void (*ctx_free)(EVP_MD_CTX *);
	const EVP_MD *(*sha256)(void);
	int (*init)(EVP_MD_CTX *, const EVP_MD *, ENGINE *);
	int (*update)(EVP_MD_CTX *, const void *, size_t);
	int (*final)(EVP_MD_CTX *, unsigned char *, unsigned int *);
	int (*init_crypto)(uint64_t, const OPENSSL_INIT_SETTINGS *);
} ossl;

/* Casting dlsym's void * to a function pointer is what POSIX intends. */
#define SYM(field, name) (*(void **)&ossl.field = dlsym(h, name))

static int
load(void)
{
	void *h;

	if (ossl.state != 0)
		return ossl.state == 1 ? 0 : -1;
	ossl.state = -1;
	if ((h = dlopen(CRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL)
		return -1;
	if (!SYM(ctx_new, "EVP_MD_CTX_new") ||
	    !SYM(ctx_free, "EVP_MD_CTX_free") ||
	    !SYM(sha256, "EVP_sha256") ||
	    !SYM(init, "EVP_DigestInit_ex") ||
	    !SYM(update, "EVP_DigestUpdate") ||
	    !SYM(final, "EVP_DigestFinal_ex") ||
	    !SYM(init_crypto, "OPENSSL_init_crypto"))
		return -1;
	if (ossl.init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG |
	    OPENSSL_INIT_NO_ATEXIT, NULL) != 1)
		return -1;
	ossl.state = 1;
	return 0;
}

struct digest {
	EVP_MD_CTX *ctx;
};

int
digest_prepare(void)
{
	char hex[DIGEST_HEX_LEN + 1];

	/* One digest also makes OpenSSL fetch SHA-256 from its provider,
	 * the slow part of the first digest after the load. */
	return load() == -1 ? -1 : digest_hex("", 0, hex);
}

struct digest *
digest_new(void)
{
	struct digest *d;

	if (load() == -1 || (d = malloc(sizeof(*d))) == NULL)
		return NULL;
	if ((d->ctx = ossl.ctx_new()) == NULL)
		goto fail;
	if (ossl.init(d->ctx, ossl.sha256(), NULL) != 1)
		goto fail;
	return d;
fail:
	digest_abort(d);
	return NULL;
}

int
digest_update(struct digest *d, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	return ossl.update(d->ctx, p, n) == 1 ? 0 : -1;
}

int
digest_final(struct digest *d, char hex[DIGEST_HEX_LEN + 1])
{
	static const char xd[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;
	int rc = -1;

	if (ossl.final(d->ctx, md, &n) != 1 || n * 2 != DIGEST_HEX_LEN)
		goto out;
	for (i = 0; i < n; i++) {
		hex[2 * i] = xd[md[i] >> 4];
		hex[2 * i + 1] = xd[md[i] & 0xf];
	}
	hex[DIGEST_HEX_LEN] = '\0';
	rc = 0;
out:
	digest_abort(d);
	return rc;
}

void
digest_abort(struct digest *d)
{
	if (d == NULL)
		return;
	if (d->ctx != NULL)
		ossl.ctx_free(d->ctx);
	free(d);
}

int
digest_hex(const void *p, size_t n, char hex[DIGEST_HEX_LEN + 1])
{
	struct digest *d;

	if ((d = digest_new()) == NULL)
		return -1;
	if (digest_update(d, p, n) == -1) {
		digest_abort(d);
		return -1;
	}
	return digest_final(d, hex);
}
