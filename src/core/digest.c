/* SPDX-License-Identifier: ISC */
/*
 * SHA-256 as 64 lower-case hex digits, from OpenSSL's libcrypto.
 *
 * struct digest wraps one hash in progress; digest_final and digest_abort
 * are the only ways out and both free it, so callers never touch OpenSSL.
 * It uses libcrypto's own SHA256_Init/Update/Final where the library
 * still exports them (OpenSSL 3 does, deprecated), else its EVP
 * interface.  They compute the same function with the same code; the EVP
 * path first sets up OpenSSL's library context and fetches SHA-256 from
 * its default provider, which took a fresh process 0.7 ms and 1.3 MiB of
 * resident memory, more than the load of the library itself -- and every
 * failed run hashes its error.
 *
 * libcrypto is loaded with dlopen on the first digest, by the soname of
 * the OpenSSL the build saw: most invocations (a successful run with
 * --name, --status) never hash anything, and mapping and relocating
 * libcrypto at start-up cost each of them more than half a millisecond
 * and 1.4 MiB of resident memory.  OpenSSL's configuration file is not
 * read: SHA-256 from the default provider needs none of it.
 *
 * So that a packager still sees the dependency, the binary carries an ELF
 * ".note.dlopen" (https://systemd.io/ELF_DLOPEN_METADATA/) naming that
 * soname as required: `readelf -p .note.dlopen cbexec`, and Debian's
 * dh_dlopenlibdeps turns it into ${dlopen:Depends}.  Where the library
 * is missing, the first digest fails with ELIBACC and digest_error() says
 * which library could not be loaded and why.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/sha.h>

#include "core.h"

/* The soname of the libcrypto built against (CRYPTO_SONAME overrides). */
#ifndef CRYPTO_SONAME
#define CB_STR2(x) #x
#define CB_STR(x) CB_STR2(x)
#if defined(OPENSSL_VERSION_MAJOR) && OPENSSL_VERSION_MAJOR >= 3
#define CRYPTO_SONAME "libcrypto.so." CB_STR(OPENSSL_VERSION_MAJOR)
#else
#define CRYPTO_SONAME "libcrypto.so.1.1"
#endif
#endif

/* The ELF dlopen note (CB_DLOPEN_NOTE): a JSON array. */
#define DLOPEN_JSON "[{\"feature\":\"sha256\",\"description\":" \
	"\"SHA-256 of error and progress fingerprints\"," \
	"\"priority\":\"required\",\"soname\":[\"" CRYPTO_SONAME "\"]}]"

CB_DLOPEN_NOTE(DLOPEN_JSON);

/* Room for a SHA256_CTX (112 bytes in OpenSSL 1.1 and 3), kept opaque:
 * the functions are reached through dlsym, whatever the header hides. */
#define SHA_CTX_ROOM 256
#ifndef OPENSSL_NO_DEPRECATED_3_0
_Static_assert(sizeof(SHA256_CTX) <= SHA_CTX_ROOM, "SHA256_CTX fits");
#endif

static struct {
	int state;		/* 0 not tried, 1 loaded, -1 failed */
	char why[CB_WHYLEN];
	/* The direct functions; NULL where libcrypto has only EVP. */
	int (*sha_init)(void *);
	int (*sha_update)(void *, const void *, size_t);
	int (*sha_final)(unsigned char *, void *);
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
	const char *e;
	void *h;

	if (ossl.state != 0) {
		if (ossl.state == -1)
			errno = ELIBACC;
		return ossl.state == 1 ? 0 : -1;
	}
	ossl.state = -1;
	errno = ELIBACC;
	if ((h = dlopen(CRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		e = dlerror();
		snprintf(ossl.why, sizeof(ossl.why), "cannot load OpenSSL's "
		    "libcrypto (%s) for SHA-256: %s", CRYPTO_SONAME,
		    e != NULL ? e : "not found");
		return -1;
	}
	if (SYM(sha_init, "SHA256_Init") && SYM(sha_update, "SHA256_Update") &&
	    SYM(sha_final, "SHA256_Final")) {
		ossl.state = 1;
		return 0;
	}
	ossl.sha_init = NULL;
	if (!SYM(ctx_new, "EVP_MD_CTX_new") ||
	    !SYM(ctx_free, "EVP_MD_CTX_free") ||
	    !SYM(sha256, "EVP_sha256") ||
	    !SYM(init, "EVP_DigestInit_ex") ||
	    !SYM(update, "EVP_DigestUpdate") ||
	    !SYM(final, "EVP_DigestFinal_ex") ||
	    !SYM(init_crypto, "OPENSSL_init_crypto")) {
		snprintf(ossl.why, sizeof(ossl.why), "%s lacks the SHA-256 "
		    "functions of the OpenSSL cbexec was built with",
		    CRYPTO_SONAME);
		return -1;
	}
	if (ossl.init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG |
	    OPENSSL_INIT_NO_ATEXIT, NULL) != 1) {
		snprintf(ossl.why, sizeof(ossl.why), "OpenSSL (%s) failed to "
		    "initialise", CRYPTO_SONAME);
		return -1;
	}
	ossl.state = 1;
	return 0;
}

const char *
digest_error(void)
{
	return ossl.state == -1 ? ossl.why : NULL;
}

struct digest {
	EVP_MD_CTX *ctx;	/* NULL: the direct functions, on sha */
	_Alignas(16) unsigned char sha[SHA_CTX_ROOM];
};

int
digest_prepare(void)
{
	char hex[DIGEST_HEX_LEN + 1];

	/* With EVP, one digest also makes OpenSSL fetch SHA-256 from its
	 * provider, the slow part of the first digest after the load. */
	return load() == -1 ? -1 : digest_hex("", 0, hex);
}

struct digest *
digest_new(void)
{
	struct digest *d;

	if (load() == -1 || (d = malloc(sizeof(*d))) == NULL)
		return NULL;
	d->ctx = NULL;
	if (ossl.sha_init != NULL) {
		if (ossl.sha_init(d->sha) != 1)
			goto fail;
		return d;
	}
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
	if (d->ctx == NULL)
		return ossl.sha_update(d->sha, p, n) == 1 ? 0 : -1;
	return ossl.update(d->ctx, p, n) == 1 ? 0 : -1;
}

int
digest_final(struct digest *d, char hex[DIGEST_HEX_LEN + 1])
{
	static const char xd[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;
	int rc = -1;

	if (d->ctx == NULL) {
		if (ossl.sha_final(md, d->sha) != 1)
			goto out;
		n = SHA256_DIGEST_LENGTH;
	} else if (ossl.final(d->ctx, md, &n) != 1)
		goto out;
	if (n * 2 != DIGEST_HEX_LEN)
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
