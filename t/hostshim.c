/* SPDX-License-Identifier: ISC */
/*
 * LD_PRELOAD shim for the tests of a shared store seen from several hosts
 * on one machine (t/0715-metrics-hosts.t, t/0960-store-hosts.t): with
 * SHIM_HOST set, gethostname() says that is this host's name, so each
 * "host" keeps its own textfiles, start records and lease.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
gethostname(char *name, size_t len)
{
	static int (*real)(char *, size_t);
	const char *h = getenv("SHIM_HOST");

	if (h == NULL) {
		if (real == NULL)
			real = (int (*)(char *, size_t))dlsym(RTLD_NEXT,
			    "gethostname");
		return real(name, len);
	}
	if (strlen(h) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(name, h, strlen(h) + 1);
	return 0;
}
