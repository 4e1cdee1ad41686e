/* SPDX-License-Identifier: ISC */
/*
 * SHA-256 as 64 lower-case hex digits, through OpenSSL's EVP interface.
 *
 * struct digest wraps one EVP_MD_CTX; digest_final and digest_abort are
 * the only ways out and both free it, so callers never touch OpenSSL.
 *
 * libcrypto is linked like any library, so packaging tools see it among
 * the binary's NEEDED entries and a system without it fails at start-up
 * with the dynamic loader's message naming the library.  OpenSSL is
 * initialised on the first digest, without reading its configuration
 * file (SHA-256 from the default provider needs none of it): most
 * invocations (a successful run, --status) never hash anything and so
 * never pay for the provider's set-up.
 */
#include <stdint.h>
#include <stdlib.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core.h"

static int
load(void)
{
	static int state;	/* 0 not tried, 1 ready, -1 failed */

	if (state == 0)
		state = OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG |
		    OPENSSL_INIT_NO_ATEXIT, NULL) == 1 ? 1 : -1;
	return state == 1 ? 0 : -1;
}

struct digest {
	EVP_MD_CTX *ctx;
};

int
digest_prepare(void)
{
	char hex[DIGEST_HEX_LEN + 1];

	/* One digest makes OpenSSL fetch SHA-256 from its provider, the
	 * slow part of the first digest. */
	return digest_hex("", 0, hex);
}

struct digest *
digest_new(void)
{
	struct digest *d;

	if (load() == -1 || (d = malloc(sizeof(*d))) == NULL)
		return NULL;
	if ((d->ctx = EVP_MD_CTX_new()) == NULL)
		goto fail;
	if (EVP_DigestInit_ex(d->ctx, EVP_sha256(), NULL) != 1)
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
	return EVP_DigestUpdate(d->ctx, p, n) == 1 ? 0 : -1;
}

int
digest_final(struct digest *d, char hex[DIGEST_HEX_LEN + 1])
{
	static const char xd[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;
	int rc = -1;

	if (EVP_DigestFinal_ex(d->ctx, md, &n) != 1 ||
	    n * 2 != DIGEST_HEX_LEN)
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
	EVP_MD_CTX_free(d->ctx);
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
