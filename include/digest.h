/*
 * SHA-256 through OpenSSL's EVP interface, as 64 lower-case hex digits.
 */
#ifndef CBEXEC_DIGEST_H
#define CBEXEC_DIGEST_H

#include <stddef.h>

#define DIGEST_HEX_LEN 64

struct digest;	/* opaque incremental hasher */

struct digest *digest_new(void);			/* NULL on failure */
int digest_update(struct digest *d, const void *p, size_t n);	/* 0 / -1 */
/* Writes 64 hex digits and a NUL into hex, frees d.  0 / -1. */
int digest_final(struct digest *d, char hex[DIGEST_HEX_LEN + 1]);
void digest_abort(struct digest *d);	/* frees d without a result */

/* Load libcrypto now rather than at the first digest; 0 / -1. */
int digest_prepare(void);

/* One-shot helper. */
int digest_hex(const void *p, size_t n, char hex[DIGEST_HEX_LEN + 1]);

#endif
