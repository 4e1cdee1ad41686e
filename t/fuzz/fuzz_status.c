/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for the status protocol (SPEC §3.2): the input after a
 * 4-byte seed is fed to a status scanner in chunks whose sizes the seed
 * picks (blocks and markers split anywhere, as pipe reads split them),
 * and the whole of it is parsed as a status file.  The same bytes fed in
 * one piece must find the same block as fed in chunks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t
next(uint32_t *x)
{
	/* xorshift32: cheap, and the same input gives the same chunks. */
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void
scan(const char *p, size_t n, uint32_t seed, struct status_report *r,
    int *found)
{
	struct status_scanner *sc;
	size_t off = 0, k;

	if ((sc = status_scanner_new()) == NULL)
		abort();
	while (off < n) {
		if (seed == 0)
			k = n - off;
		else {
			k = next(&seed) % 16 == 0 ? next(&seed) % 4096 + 1 :
			    next(&seed) % 24 + 1;
			if (k > n - off)
				k = n - off;
		}
		status_scanner_feed(sc, p + off, k);
		off += k;
	}
	status_scanner_feed(sc, p, 0);
	status_init(r);
	*found = status_scanner_result(sc, r);
	status_scanner_free(sc);
}

static int
same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) ||
	    (a != NULL && b != NULL && strcmp(a, b) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct status_report a, b, t;
	uint32_t seed;
	const char *p;
	size_t n, i;
	int fa, fb;
	double v;

	if (size < 4)
		return 0;
	memcpy(&seed, data, 4);
	seed |= 1;
	p = (const char *)data + 4;
	n = size - 4;

	scan(p, n, seed, &a, &fa);
	scan(p, n, 0, &b, &fb);
	if (fa != fb || a.present != b.present || a.status != b.status ||
	    a.exit_signal != b.exit_signal || !same_str(a.task, b.task) ||
	    a.n_metrics != b.n_metrics) {
		fprintf(stderr, "chunked scan differs from one-piece scan: "
		    "found %d/%d task %s/%s metrics %zu/%zu\n", fa, fb,
		    a.task ? a.task : "(null)", b.task ? b.task : "(null)",
		    a.n_metrics, b.n_metrics);
		abort();
	}
	for (i = 0; i < a.n_metrics; i++)
		if (status_metric(&a, a.metrics[i].key, &v) != 1)
			abort();
	(void)status_done(&a);
	status_free(&a);
	status_free(&b);

	status_init(&t);
	(void)status_parse_text(p, n, &t);
	(void)status_done(&t);
	status_free(&t);
	return 0;
}
