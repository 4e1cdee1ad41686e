/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for durations (SPEC §1): duration_parse() on a
 * NUL-terminated copy of the input.  An accepted duration must match the
 * grammar N, N.N or .N with an optional ms/s/m/h/d suffix, be a finite
 * number of seconds in [0, DURATION_MAX], agree with strtod() on the same
 * digits, and not be 0 unless every digit is 0 ("0 = no limit" must never
 * come from a typo).  duration_format() of it fits its buffer.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The grammar; returns the unit in seconds, or 0 when s does not match. */
static double
grammar(const char *s, size_t *numlen, int *nonzero)
{
	const char *p = s;
	size_t digits = 0;

	*nonzero = 0;
	for (; *p >= '0' && *p <= '9'; p++, digits++)
		*nonzero |= *p != '0';
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, digits++)
			*nonzero |= *p != '0';
	if (digits == 0)
		return 0;
	*numlen = (size_t)(p - s);
	if (strcmp(p, "") == 0 || strcmp(p, "s") == 0)
		return 1;
	if (strcmp(p, "ms") == 0)
		return 0.001;
	if (strcmp(p, "m") == 0)
		return 60;
	if (strcmp(p, "h") == 0)
		return 3600;
	if (strcmp(p, "d") == 0)
		return 86400;
	return 0;
}

static void
fail(const char *s, double v, const char *why)
{
	fprintf(stderr, "duration_parse(\"%s\") = %.17g: %s\n", s, v, why);
	abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, *num, buf[64];
	double v = -1, unit, want;
	size_t numlen = 0;
	int nonzero;

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (duration_parse(s, &v) == 0) {
		if ((unit = grammar(s, &numlen, &nonzero)) == 0)
			fail(s, v, "accepted outside the grammar");
		if (!isfinite(v) || v < 0 || v > DURATION_MAX)
			fail(s, v, "out of range");
		if (nonzero && v == 0)
			fail(s, v, "a non-zero duration read as 0 (no limit)");
		if ((num = strndup(s, numlen)) == NULL)
			abort();
		want = strtod(num, NULL) * unit;
		free(num);
		if (fabs(v - want) > want * 1e-12)
			fail(s, v, "disagrees with strtod");
		if (duration_format(v, buf, sizeof(buf)) != buf ||
		    memchr(buf, '\0', sizeof(buf)) == NULL)
			abort();
	}
	free(s);
	return 0;
}
