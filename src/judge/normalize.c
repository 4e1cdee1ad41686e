/* SPDX-License-Identifier: ISC */
/*
 * Message normalisation and the error fingerprint (SPEC §4): two messages
 * that differ only in timestamps, ids, temporary paths, numbers or spacing
 * get the same fingerprint.  Pure: no I/O, no clock.
 *
 * normalize_message runs one pass per SPEC step over the message, each
 * pass a left-to-right scan with a matcher that says how many bytes at this
 * position to replace with the step's placeholder.  Character classes are
 * ASCII (text.h), so the fingerprint never depends on locale.
 * error_fingerprint hashes the type, a NUL and the normalised message.
 */
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "text.h"

/*
 * normalize_message, one pass per step.  A matcher returns how many bytes
 * at s[at] its placeholder replaces, 0 for none; s is the whole string so
 * it can look at the byte before.
 */
typedef size_t (*matcher)(const char *s, size_t at, const void *arg);

static char *
subst(const char *s, matcher m, const char *repl, const void *arg)
{
	struct sbuf b = { 0 };
	size_t i = 0, start = 0, n;

	while (s[i] != '\0') {
		if ((n = m(s, i, arg)) == 0) {
			i++;
			continue;
		}
		sb_add(&b, s + start, i - start);
		sb_add(&b, repl, strlen(repl));
		i += n;
		start = i;
	}
	sb_add(&b, s + start, i - start);
	return sb_take(&b);
}

static int
ndigits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return 0;
	return 1;
}

/* 2026-11-22T01:02[:03[.456]][Z|+01[:00]], T or a space in the middle */
static size_t
m_ts(const char *s, size_t at, const void *arg)
{
	const char *p = s + at;
	size_t i = 16;

	if ((at > 0 && is_alnum(s[at - 1])) || !ndigits(p, 4) ||
	    p[4] != '-' || !ndigits(p + 5, 2) || p[7] != '-' ||
	    !ndigits(p + 8, 2) || (p[10] != 'T' && p[10] != 't' &&
	    p[10] != ' ') || !ndigits(p + 11, 2) || p[13] != ':' ||
	    !ndigits(p + 14, 2))
		return 0;
	if (p[i] == ':' && ndigits(p + i + 1, 2)) {
		i += 3;
		if ((p[i] == '.' || p[i] == ',') && is_digit(p[i + 1]))
			for (i++; is_digit(p[i]); i++)
				;
	}
	if (p[i] == 'Z' || p[i] == 'z')
		i++;
	else if ((p[i] == '+' || p[i] == '-') && ndigits(p + i + 1, 2)) {
		i += 3;
		if (p[i] == ':' && ndigits(p + i + 1, 2))
			i += 3;
		else if (ndigits(p + i, 2))
			i += 2;
	}
	return i;
}

static size_t
m_uuid(const char *s, size_t at, const void *arg)
{
	static const size_t seg[] = { 8, 4, 4, 4, 12 };
	const char *p = s + at;
	size_t i, j;

	if (at > 0 && is_alnum(s[at - 1]))
		return 0;
	for (i = 0; i < NELEM(seg); i++) {
		for (j = 0; j < seg[i]; j++, p++)
			if (!is_xdigit(*p))
				return 0;
		if (i + 1 < NELEM(seg) && *p++ != '-')
			return 0;
	}
	return is_alnum(*p) ? 0 : (size_t)(p - (s + at));
}

/* 0x1f, or a whole word of 8+ hex digits with at least one digit */
static size_t
m_hex(const char *s, size_t at, const void *arg)
{
	const char *p = s + at;
	size_t n;
	int digit = 0;

	if (at > 0 && is_alnum(s[at - 1]))
		return 0;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && is_xdigit(p[2])) {
		for (n = 2; is_xdigit(p[n]); n++)
			;
		return is_alnum(p[n]) ? 0 : n;
	}
	for (n = 0; is_xdigit(p[n]); n++)
		digit |= is_digit(p[n]);
	return n >= 8 && digit && !is_alnum(p[n]) ? n : 0;
}

struct tmpdir {
	const char *dir;	/* normalised $TMPDIR without trailing '/' */
	size_t len;
};

/*
 * A path under /tmp/, /var/tmp/ or $TMPDIR/ up to whitespace, a quote or
 * one of :,;)]} -- the usual ends of a path in a message ("file:line",
 * lists, parentheses).  The prefix must start a path, not end a longer
 * one like /home/u/tmp/.
 */
static size_t
m_tmp(const char *s, size_t at, const void *arg)
{
	const struct tmpdir *td = arg;
	const char *p = s + at;
	size_t n;

	if (*p != '/' || (at > 0 && (is_alnum(s[at - 1]) ||
	    strchr("._-~", s[at - 1]) != NULL)))
		return 0;
	if (strncmp(p, "/tmp/", 5) == 0)
		n = 5;
	else if (strncmp(p, "/var/tmp/", 9) == 0)
		n = 9;
	else if (td->len > 0 && strncmp(p, td->dir, td->len) == 0 &&
	    p[td->len] == '/')
		n = td->len + 1;
	else
		return 0;
	for (; p[n] != '\0' && !is_space((unsigned char)p[n]) &&
	    strchr("'\"`:,;)]}", p[n]) == NULL; n++)
		;
	return n;
}

static size_t
m_digits(const char *s, size_t at, const void *arg)
{
	size_t n;

	for (n = 0; is_digit(s[at + n]); n++)
		;
	return n;
}

/* Steps 1-4 (ANSI, timestamps, UUIDs, hex); NULL on ENOMEM. */
static char *
normalize_ids(const char *msg)
{
	struct sbuf b = { 0 };
	static const struct {
		matcher m;
		const char *repl;
	} steps[] = {
		{ m_ts, "<TS>" }, { m_uuid, "<UUID>" }, { m_hex, "<HEX>" },
	};
	char *s, *t;
	size_t i;

	strip_ansi(&b, msg, strlen(msg));
	if ((s = sb_take(&b)) == NULL)
		return NULL;
	for (i = 0; i < NELEM(steps); i++) {
		t = subst(s, steps[i].m, steps[i].repl, NULL);
		free(s);
		if ((s = t) == NULL)
			return NULL;
	}
	return s;
}

char *
normalize_message(const char *msg, const char *tmpdir)
{
	struct tmpdir td = { NULL, 0 };
	struct sbuf b = { 0 };
	char *s, *t, *dir = NULL;
	size_t i;
	int gap = 0;

	if ((s = normalize_ids(msg != NULL ? msg : "")) == NULL)
		return NULL;
	/* $TMPDIR went through the same steps so it still matches */
	if (tmpdir != NULL && tmpdir[0] == '/') {
		if ((dir = normalize_ids(tmpdir)) == NULL)
			goto fail;
		for (td.len = strlen(dir); td.len > 0 && dir[td.len - 1] == '/';)
			td.len--;
		td.dir = dir;
	}
	t = subst(s, m_tmp, "<TMP>", &td);
	free(s);
	if ((s = t) == NULL)
		goto fail;
	t = subst(s, m_digits, "N", NULL);
	free(s);
	if ((s = t) == NULL)
		goto fail;
	for (i = 0; s[i] != '\0'; i++) {
		if (is_space((unsigned char)s[i])) {
			gap = 1;
			continue;
		}
		if (gap && b.len > 0)
			sb_add(&b, " ", 1);
		gap = 0;
		sb_add(&b, s + i, 1);
	}
	free(s);
	free(dir);
	return sb_take(&b);
fail:
	free(dir);
	return NULL;
}

int
error_fingerprint(const char *type, const char *msg, const char *tmpdir,
    char hex[DIGEST_HEX_LEN + 1])
{
	struct digest *d;
	char *norm;

	if (type == NULL)
		type = "";
	if ((norm = normalize_message(msg, tmpdir)) == NULL)
		return -1;
	if ((d = digest_new()) == NULL)
		goto fail;
	/* the NUL keeps ("ab", "c") and ("a", "bc") apart */
	if (digest_update(d, type, strlen(type) + 1) == -1 ||
	    digest_update(d, norm, strlen(norm)) == -1) {
		digest_abort(d);
		goto fail;
	}
	free(norm);
	return digest_final(d, hex);
fail:
	free(norm);
	return -1;
}
