/* SPDX-License-Identifier: ISC */
/*
 * Value parsers and small helpers shared by cli.c, options.c and
 * config.c.
 */
#ifndef CBEXEC_OPTVALUES_H
#define CBEXEC_OPTVALUES_H

#include <stddef.h>

#include "cli.h"

/* Format a one-line message into err; returns -1 for "return errf(...)". */
int errf(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A whole decimal number in [min, max]; 0 / -1. */
int parse_long(const char *s, long min, long max, long *out);
/* 1 when the comma-separated list s has no empty item, else 0. */
int list_well_formed(const char *s);
/* "0,75" -> codes, each 0..255; 0 / -1. */
int parse_codes(const char *s, struct codes *c);
/* N, or N with k/K or m/M (KiB, MiB), at most 64 MiB; 0 / -1. */
int parse_size(const char *s, size_t *out);
/* Replace *dst with a copy of s; 0 / -1 on ENOMEM. */
int replace_str(char **dst, const char *s);
/* A circuit name: [A-Za-z0-9._-]+, not starting with '.'. */
int valid_name(const char *s);
/* Append a copy of s; 0 / -1 on ENOMEM. */
int strv_push(struct strv *v, const char *s);

#endif
