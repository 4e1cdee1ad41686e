/* SPDX-License-Identifier: ISC */
/*
 * Shared by the status parsers (status.c, scanner.c); callers use judge.h.
 * The block markers, the shared line parser and the warning helper.
 */
#ifndef CBEXEC_JUDGE_STATUSLINES_H
#define CBEXEC_JUDGE_STATUSLINES_H

#include <stdarg.h>
#include <stddef.h>

#include "judge.h"


/* status.c */
/* Write a warning into w unless keep is set and w already holds one. */
void vwarn_to(char *w, size_t wn, int keep, const char *fmt, va_list ap);
/*
 * Apply each KEY: value / KEY=value line of p.  Returns how many lines had
 * a key; *other counts the lines that had text but no usable key.
 */
int parse_lines(struct status_report *r, const char *p, size_t n,
    size_t *other);

/* scanner.c */
/* 1 when p[0..n) is exactly one of the block markers. */
int is_marker(const char *p, size_t n);

#endif
