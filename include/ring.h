/*
 * A bounded byte ring: keeps the last cap bytes pushed into it, whatever
 * the volume.  Used for the stdout/stderr tails the classifier reads.
 */
#ifndef CBEXEC_RING_H
#define CBEXEC_RING_H

#include <stddef.h>

struct ring {
	char *buf;
	size_t cap;	/* bytes kept at most; 0 keeps nothing */
	size_t start;	/* index of the oldest byte */
	size_t len;	/* bytes held, <= cap */
};

int ring_init(struct ring *r, size_t cap);	/* -1 on ENOMEM */
void ring_push(struct ring *r, const void *p, size_t n);
/* The held bytes in order as a malloc'd NUL-terminated string; *len gets
 * the byte count (the data may itself contain NULs).  NULL on ENOMEM. */
char *ring_dup(const struct ring *r, size_t *len);
void ring_clear(struct ring *r);
void ring_free(struct ring *r);

#endif
