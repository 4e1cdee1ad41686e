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

/*
 * What a line is, as the classifier marks it before any row is tried
 * (classify.c: mark_lines): rows skip or need lines by these.
 */
enum {
	L_NOISE = 1,	/* a warning or fall-back notice: never a verdict */
	L_TEST = 2,	/* a test runner's result or assertion line */
	L_PROVIDER = 4,	/* in a provider's or HTTP client's own shape */
	L_FAIL = 8,	/* a failing test's own line (its name) */
	L_START = 16,	/* while marking: a region starts, ends here */
	L_END = 32
};

/* A tail made matchable: raw for messages, clean (no ANSI) for regexes. */
struct text {
	char *raw, *clean;
	size_t *raw_off, *clean_off;	/* line starts, n + 1 entries */
	size_t n;
	unsigned char *flags;		/* per line: L_* */
	char **said;			/* per line, or NULL: what it says
					 * once read (a runner's JSON event:
					 * the line its string holds), for
					 * messages */
};

/* text.c */
int text_init(struct text *t, const char *p, size_t len);	/* 0 / -1 */
void text_free(struct text *t);
/* A copy of t with each cleaned line cut to cap bytes (for user rules). */
int text_cap_lines(const struct text *t, size_t cap, struct text *out);
/* First non-blank line where re matches, or -1. */
long re_first(const regex_t *re, const struct text *t);
/* The same over the lines with none of the flags skip and, when need is
 * not 0, one of need. */
long re_first_in(const regex_t *re, const struct text *t, int skip,
    int need);
/* Set flag on every line where re matches. */
void re_mark(const regex_t *re, struct text *t, int flag);
/* Whether any line has flag. */
int text_has(const struct text *t, int flag);
/* First line (as re_first_in) holding the HTTP status code in an HTTP or
 * provider shape ("HTTP/1.1 429", "status 503", "API Error: 529", "401
 * Unauthorized", "returned error: 401", "\"code\": 429"), or -1: a bare
 * number is never one. */
long status_first(const char *code, const struct text *t, int skip,
    int need);
/* Line i of t says s (malloc'd, taken; NULL is ENOMEM): line_dup gives
 * s for it.  0, or -1 on ENOMEM. */
int text_say(struct text *t, size_t i, char *s);
/* Line i of t (what it says, when text_say said), trimmed and capped, as
 * a malloc'd string. */
char *line_dup(const struct text *t, size_t i);
/* The last non-blank line of t without any of the flags skip, else a copy
 * of fallback. */
char *last_line(const struct text *t, int skip, const char *fallback);
/* The same, passing over lines without a letter or digit ("}"). */
char *last_words(const struct text *t, int skip, const char *fallback);

#endif
