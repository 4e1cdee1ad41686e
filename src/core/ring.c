/* SPDX-License-Identifier: ISC */
/*
 * A bounded byte ring for the stdout/stderr tails.
 *
 * The buffer is allocated once at cap bytes.  Bytes are appended after the
 * newest one, wrapping at the end of the buffer, and once it is full every
 * push advances start past the bytes it overwrote.  A push of cap bytes or
 * more simply replaces the contents with its own last cap bytes.  All
 * copying is at most two memcpy calls, so the cost of a push is linear in
 * what is kept, never in what is thrown away.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

int
ring_init(struct ring *r, size_t cap)
{
	r->buf = NULL;
	r->cap = cap;
	r->start = r->len = 0;
	/* cap 0 keeps nothing and needs no buffer (malloc(0) may be NULL) */
	if (cap > 0 && (r->buf = malloc(cap)) == NULL) {
		r->cap = 0;
		return -1;
	}
	return 0;
}

void
ring_push(struct ring *r, const void *p, size_t n)
{
	const char *s = p;
	size_t end, first;

	if (r->cap == 0 || n == 0)
		return;
	if (n >= r->cap) {
		memcpy(r->buf, s + (n - r->cap), r->cap);
		r->start = 0;
		r->len = r->cap;
		return;
	}
	end = (r->start + r->len) % r->cap;
	first = r->cap - end < n ? r->cap - end : n;
	memcpy(r->buf + end, s, first);
	memcpy(r->buf, s + first, n - first);
	if (r->len + n > r->cap) {
		r->start = (r->start + (r->len + n - r->cap)) % r->cap;
		r->len = r->cap;
	} else
		r->len += n;
}

void
ring_room(struct ring *r, size_t n, char **a, size_t *alen, char **b,
    size_t *blen)
{
	size_t end = (r->start + r->len) % r->cap;

	*a = r->buf + end;
	*alen = r->cap - end < n ? r->cap - end : n;
	*b = r->buf;
	*blen = n - *alen;
}

void
ring_commit(struct ring *r, size_t n)
{
	if (r->len + n > r->cap) {
		r->start = (r->start + (r->len + n - r->cap)) % r->cap;
		r->len = r->cap;
	} else
		r->len += n;
}

char *
ring_dup(const struct ring *r, size_t *len)
{
	size_t first;
	char *s;

	if ((s = malloc(r->len + 1)) == NULL)
		return NULL;
	if (r->len > 0) {
		first = r->cap - r->start < r->len ? r->cap - r->start : r->len;
		memcpy(s, r->buf + r->start, first);
		memcpy(s + first, r->buf, r->len - first);
	}
	s[r->len] = '\0';
	if (len != NULL)
		*len = r->len;
	return s;
}

void
ring_clear(struct ring *r)
{
	r->start = r->len = 0;
}

void
ring_free(struct ring *r)
{
	free(r->buf);
	r->buf = NULL;
	r->cap = r->start = r->len = 0;
}
