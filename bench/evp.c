/* SPDX-License-Identifier: ISC */
/*
 * evp: one SHA-256 of one byte through OpenSSL, in a fresh process linked
 * with libcrypto: "evp" through the EVP interface, "sha" through
 * SHA256_Init/Update/Final (what src/core/digest.c uses where libcrypto
 * has them), nothing without an argument.  The differences are what the
 * first digest costs: the EVP path sets up OpenSSL's library context and
 * fetches SHA-256 from the default provider first, the direct functions
 * do not.  cbexec pays it on every failed run (the error fingerprint),
 * for the working directory's circuit and with --progress git or files.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

int
main(int argc, char **argv)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n;
	EVP_MD_CTX *c;
	SHA256_CTX s;

	if (argc < 2)
		return 0;
	if (strcmp(argv[1], "sha") == 0)
		return SHA256_Init(&s) != 1 || SHA256_Update(&s, "x", 1) != 1 ||
		    SHA256_Final(md, &s) != 1;
	if ((c = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(c, "x", 1) != 1 ||
	    EVP_DigestFinal_ex(c, md, &n) != 1)
		return 1;
	EVP_MD_CTX_free(c);
	return 0;
}
