/*
 * SHA-256 as 64 lower-case hex digits, through OpenSSL's EVP interface.
 *
 * struct digest wraps one EVP_MD_CTX; digest_final and digest_abort are
 * the only ways out and both free it, so callers never touch OpenSSL.
 */
#include <stdlib.h>

#include <openssl/evp.h>

#include "digest.h"

struct digest {
	EVP_MD_CTX *ctx;
};

struct digest *
digest_new(void)
{
	struct digest *d;

	if ((d = malloc(sizeof(*d))) == NULL)
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

	if (EVP_DigestFinal_ex(d->ctx, md, &n) != 1 || n * 2 != DIGEST_HEX_LEN)
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
