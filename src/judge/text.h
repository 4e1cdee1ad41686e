/* SPDX-License-Identifier: ISC */
/*
 * The classifier's text handling (classify.c, rules.c, text.c,
 * normalize.c); callers use judge.h.  ASCII character classes, a growable
 * string, ANSI stripping and the line-indexed tail the patterns run over.
 */
#ifndef CBEXEC_JUDGE_TEXT_H
#define CBEXEC_JUDGE_TEXT_H

#include <regex.h>
#include <stddef.h>


/*
 * Character classes are ASCII and written out here, so neither matching
 * nor the fingerprint ever depends on locale.
 */
static inline int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static inline int
is_alnum(int c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

static inline int
is_xdigit(int c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static inline int
is_space(int c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* A growable string; an allocation failure sticks and is seen at the end. */
struct sbuf {
	char *p;
	size_t len, cap;
	int oom;
};

/* text.c */
void sb_add(struct sbuf *b, const char *s, size_t n);
/* The string, or NULL (everything freed) if any append failed. */
char *sb_take(struct sbuf *b);
/* Append s[0..n) to b without its ANSI escape sequences. */
void strip_ansi(struct sbuf *b, const char *s, size_t n);

/* A tail made matchable: raw for messages, clean (no ANSI) for regexes. */
struct text {
	char *raw, *clean;
	size_t *raw_off, *clean_off;	/* line starts, n + 1 entries */
	size_t n;
};

/* text.c */
int text_init(struct text *t, const char *p, size_t len);	/* 0 / -1 */
void text_free(struct text *t);
/* A copy of t with each cleaned line cut to cap bytes (for user rules). */
int text_cap_lines(const struct text *t, size_t cap, struct text *out);
/* First non-blank line where re matches, or -1. */
long re_first(const regex_t *re, const struct text *t);
/* First line holding the HTTP status code as a number of its own, or -1. */
long status_first(const char *code, const struct text *t);
/* Line i of t, trimmed and capped, as a malloc'd string. */
char *line_dup(const struct text *t, size_t i);
/* The last non-blank line of t, else a copy of fallback. */
char *last_line(const struct text *t, const char *fallback);
/* The same, passing over lines without a letter or digit ("}"). */
char *last_words(const struct text *t, const char *fallback);

#endif
