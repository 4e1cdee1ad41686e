/* SPDX-License-Identifier: ISC */
/*
 * The streaming status scanner (SPEC §3.2): finds the last status block in
 * a command's stdout as it is copied, fed in pieces split anywhere.  A block
 * runs from ---CBEXEC_STATUS--- to ---END_CBEXEC_STATUS--- (or the RALPH
 * spellings; either end closes either start).
 *
 * The scanner sits on the path that copies the command's stdout, so outside
 * a block it does no per-byte work: find_tail() looks for "STATUS---" (the
 * tail all four markers share) with memchr, and only at a hit are the bytes
 * before it compared.  A marker split between feeds is found by searching
 * the carry (the last 22 bytes seen, one less than the longest marker)
 * joined with the head of the next feed; only hits starting in the carry
 * count there, so nothing is found twice.  Markers count anywhere, not only
 * at line start: inside a JSON string they follow a \n escape, and a stray
 * marker in prose does no harm because a new start marker restarts the block
 * and a block with no KEY: value line is ignored.
 *
 * Inside a block the bytes go into a buffer of 64 KiB plus room for the
 * end marker; past that they are only counted, and the block is dropped at
 * its end marker.  Each complete block is parsed at once (parse_lines in
 * status.c) into a report that replaces the previous one, so the last wins
 * and only one report is kept.  A block with no real newline is
 * JSON-unescaped first, since that is how it arrives from claude -p
 * --output-format json.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "statuslines.h"

#define BLOCK_MAX	(64 * 1024)
#define MARK_MAX	23		/* strlen("---END_CBEXEC_STATUS---") */
#define BUF_SIZE	(BLOCK_MAX + MARK_MAX)
#define TAIL		"STATUS---"
#define TAIL_LEN	9

static const struct marker {
	const char *s;
	size_t len;
	int start;
} markers[] = {
	{ "---CBEXEC_STATUS---", 19, 1 },
	{ "---RALPH_STATUS---", 18, 1 },
	{ "---END_CBEXEC_STATUS---", 23, 0 },
	{ "---END_RALPH_STATUS---", 22, 0 },
};

struct status_scanner {
	char carry[MARK_MAX - 1];
	size_t clen;
	int in_block;
	char *buf;		/* BUF_SIZE, allocated at the first block */
	size_t blen;		/* bytes of the current block, stored or not */
	struct status_report last;
	int found;
	char warning[sizeof(((struct status_report *)0)->warning)];
};

/* The scanner keeps the newest: it describes how the output ended. */
static void
scanner_warn(struct status_scanner *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_to(s->warning, sizeof(s->warning), 0, fmt, ap);
	va_end(ap);
}

int
is_marker(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < NELEM(markers); i++)
		if (n == markers[i].len && memcmp(p, markers[i].s, n) == 0)
			return 1;
	return 0;
}

/* In place: every escape is at least as long as what it stands for. */
size_t
json_unescape(char *b, size_t n)
{
	size_t i, o = 0;
	long c, lo;

	for (i = 0; i < n; i++) {
		if (b[i] != '\\' || i + 1 == n) {
			b[o++] = b[i];
			continue;
		}
		switch (b[++i]) {
		case 'n':	b[o++] = '\n'; break;
		case 'r':	b[o++] = '\r'; break;
		case 't':	b[o++] = '\t'; break;
		case '"':	b[o++] = '"'; break;
		case '\\':	b[o++] = '\\'; break;
		case '/':	b[o++] = '/'; break;
		case 'u':
			if (i + 4 < n && (c = hex4(b + i + 1)) >= 0) {
				i += 4;
				if (c >= 0xd800 && c < 0xdc00 && i + 6 < n &&
				    b[i + 1] == '\\' && b[i + 2] == 'u' &&
				    (lo = hex4(b + i + 3)) >= 0xdc00 &&
				    lo < 0xe000) {
					c = 0x10000 + ((c - 0xd800) << 10) +
					    (lo - 0xdc00);
					i += 6;
				}
				o += utf8_put(b + o, (unsigned long)c);
				break;
			}
			/* FALLTHROUGH */
		default:
			b[o++] = '\\';
			b[o++] = b[i];
		}
	}
	return o;
}

static void
parse_block(struct status_scanner *s, char *b, size_t n)
{
	struct status_report t;
	size_t other = 0;
	int pass;

	/* A block printed inside a JSON string inside a JSON string (a tool
	 * call in stream-json) needs a second round. */
	for (pass = 0; pass < 3 && memchr(b, '\n', n) == NULL &&
	    memchr(b, '\\', n) != NULL; pass++) {
		if (pass > 0 && memmem(b, n, "\\n", 2) == NULL)
			break;
		n = json_unescape(b, n);
	}
	status_init(&t);
	if (parse_lines(&t, b, n, &other) == 0) {
		scanner_warn(s, "status block without KEY: value lines "
		    "ignored");
		status_free(&t);
		return;
	}
	t.present = 1;
	status_free(&s->last);
	s->last = t;
	s->found = 1;
}

static void
block_append(struct status_scanner *s, const char *p, size_t n)
{
	size_t room = s->blen < BUF_SIZE ? BUF_SIZE - s->blen : 0;

	if (s->buf != NULL && room > 0)
		memcpy(s->buf + s->blen, p, n < room ? n : room);
	s->blen += n;
}

static void
on_marker(struct status_scanner *s, const struct marker *m)
{
	size_t n;

	if (m->start) {
		/* A restart is no warning: it is what a marker quoted in
		 * prose before the real block looks like. */
		if (s->buf == NULL && (s->buf = malloc(BUF_SIZE)) == NULL)
			scanner_warn(s, "out of memory for status block");
		s->in_block = 1;
		s->blen = 0;
		return;
	}
	if (!s->in_block)
		return;
	s->in_block = 0;
	/* The end marker's own bytes were appended: the carry only ever
	 * holds bytes from after the start marker. */
	n = s->blen >= m->len ? s->blen - m->len : 0;
	if (n > BLOCK_MAX)
		scanner_warn(s, "status block longer than %d KiB dropped",
		    BLOCK_MAX / 1024);
	else if (s->buf != NULL)
		parse_block(s, s->buf, n);
}

/* The marker whose "STATUS---" tail is at b + h, or NULL. */
static const struct marker *
marker_at(const char *b, size_t h)
{
	size_t i, pre;

	for (i = 0; i < NELEM(markers); i++) {
		pre = markers[i].len - TAIL_LEN;
		if (h >= pre && memcmp(b + h - pre, markers[i].s, pre) == 0)
			return &markers[i];
	}
	return NULL;
}

/*
 * The first "STATUS---" in p[0..n).  memchr finds dashes with vector
 * instructions; glibc's memmem has none, and this runs over every byte a
 * command writes to stdout.
 */
static const char *
find_tail(const char *p, size_t n)
{
	const char *d, *end = p + n;

	if (n < TAIL_LEN)
		return NULL;
	for (d = p + TAIL_LEN - 3; d < end - 2 &&
	    (d = memchr(d, '-', (size_t)(end - 2 - d))) != NULL; d++)
		if (d[1] == '-' && d[2] == '-' &&
		    memcmp(d - (TAIL_LEN - 3), TAIL, TAIL_LEN - 3) == 0)
			return d - (TAIL_LEN - 3);
	return NULL;
}

/* The first marker in carry + p; *end is where it ends in p. */
static const struct marker *
next_marker(struct status_scanner *s, const char *p, size_t n, size_t *end)
{
	const struct marker *m;
	char j[2 * (MARK_MAX - 1)];
	const char *q;
	size_t jn, h;

	if (s->clen > 0) {
		jn = n < MARK_MAX - 1 ? n : MARK_MAX - 1;
		memcpy(j, s->carry, s->clen);
		memcpy(j + s->clen, p, jn);
		jn += s->clen;
		for (q = j; (q = memmem(q, jn - (size_t)(q - j), TAIL,
		    TAIL_LEN)) != NULL; q++) {
			h = (size_t)(q - j);
			if ((m = marker_at(j, h)) != NULL &&
			    h + TAIL_LEN - m->len < s->clen &&
			    h + TAIL_LEN > s->clen) {
				*end = h + TAIL_LEN - s->clen;
				return m;
			}
		}
	}
	for (q = p; (q = find_tail(q, n - (size_t)(q - p))) != NULL; q++) {
		h = (size_t)(q - p);
		if ((m = marker_at(p, h)) != NULL) {
			*end = h + TAIL_LEN;
			return m;
		}
	}
	return NULL;
}

static void
keep_carry(struct status_scanner *s, const char *p, size_t n)
{
	size_t keep;

	if (n >= sizeof(s->carry)) {
		memcpy(s->carry, p + n - sizeof(s->carry), sizeof(s->carry));
		s->clen = sizeof(s->carry);
		return;
	}
	keep = sizeof(s->carry) - n;
	if (s->clen > keep) {
		memmove(s->carry, s->carry + s->clen - keep, keep);
		s->clen = keep;
	}
	memcpy(s->carry + s->clen, p, n);
	s->clen += n;
}

struct status_scanner *
status_scanner_new(void)
{
	struct status_scanner *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	status_init(&s->last);
	return s;
}

void
status_scanner_feed(struct status_scanner *s, const char *p, size_t n)
{
	const struct marker *m;
	size_t end;

	while (n > 0) {
		if ((m = next_marker(s, p, n, &end)) == NULL) {
			if (s->in_block)
				block_append(s, p, n);
			keep_carry(s, p, n);
			return;
		}
		if (s->in_block)
			block_append(s, p, end);
		s->clen = 0;
		on_marker(s, m);
		p += end;
		n -= end;
	}
}

int
status_scanner_result(struct status_scanner *s, struct status_report *r)
{
	int found = s->found;

	if (s->in_block)
		scanner_warn(s, "unterminated status block");
	status_free(r);
	if (found) {
		*r = s->last;
		status_init(&s->last);
		s->found = 0;
	}
	if (r->warning[0] == '\0')
		memcpy(r->warning, s->warning, sizeof(r->warning));
	return found;
}

void
status_scanner_free(struct status_scanner *s)
{
	if (s == NULL)
		return;
	free(s->buf);
	status_free(&s->last);
	free(s);
}
