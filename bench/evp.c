/* SPDX-License-Identifier: ISC */
/*
 * evp: with an argument, one SHA-256 of one byte through OpenSSL's EVP
 * interface (as src/digest.c does), else nothing; linked with libcrypto
 * either way.  The difference is what the first digest costs a fresh
 * process: OpenSSL's lazy initialisation (openssl.cnf, the default
 * provider, the algorithm fetch), which cbexec pays on every failed run
 * (the error fingerprint) and with --progress git or files.
 */
#include <openssl/evp.h>

int
main(int argc, char **argv)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n;
	EVP_MD_CTX *c;

	(void)argv;
	if (argc < 2)
		return 0;
	if ((c = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(c, "x", 1) != 1 ||
	    EVP_DigestFinal_ex(c, md, &n) != 1)
		return 1;
	EVP_MD_CTX_free(c);
	return 0;
}
