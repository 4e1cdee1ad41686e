/* SPDX-License-Identifier: ISC */
/*
 * A minimal TAP producer for the C unit tests: plan at the end
 * (done_testing), ok/is_int/is_str with a description.
 */
#ifndef CBEXEC_TAP_H
#define CBEXEC_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_n, tap_fail;

static int tap_ok(int cond, const char *file, int line, const char *desc)
{
	tap_n++;
	printf("%sok %d - %s\n", cond ? "" : "not ", tap_n, desc);
	if (!cond) {
		tap_fail++;
		printf("#   failed at %s:%d\n", file, line);
	}
	return cond;
}

#define ok(cond, desc) tap_ok(!!(cond), __FILE__, __LINE__, (desc))

#define is_int(got, want, desc) do {					\
	long long g_ = (got), w_ = (want);				\
	if (!tap_ok(g_ == w_, __FILE__, __LINE__, (desc)))		\
		printf("#   got %lld, want %lld\n", g_, w_);		\
} while (0)

#define is_str(got, want, desc) do {					\
	const char *g_ = (got), *w_ = (want);				\
	int c_ = (g_ == NULL && w_ == NULL) ||				\
	    (g_ != NULL && w_ != NULL && strcmp(g_, w_) == 0);		\
	if (!tap_ok(c_, __FILE__, __LINE__, (desc)))			\
		printf("#   got \"%s\", want \"%s\"\n",			\
		    g_ ? g_ : "(null)", w_ ? w_ : "(null)");		\
} while (0)

static int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_fail != 0;
}

#endif
