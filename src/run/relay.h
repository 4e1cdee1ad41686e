/* SPDX-License-Identifier: ISC */
/*
 * Copying one of the command's output streams through to cbexec's own, on
 * libev's default loop, keeping its tail in a ring and handing the bytes
 * to a tap (SPEC §3).  Each run (supervise.c) owns two of these.
 */
#ifndef CBEXEC_RELAY_H
#define CBEXEC_RELAY_H

#include <stddef.h>

#include <ev.h>

#include "core.h"

struct relay {
	int rfd;		/* read end of the child's pipe, -1 closed */
	int wfd;		/* where the bytes go */
	int splice;		/* wfd is a non-blocking pipe: splice into it */
	int hold[2];		/* the pipe tee() copies into, -1 until used */
	size_t pending;		/* bytes tee'd, still to splice out of rfd */
	int tail_held;		/* no tap: the hold pipe keeps the tail */
	size_t held;		/* bytes of the tail in the hold pipe */
	char *buf;		/* bytes read but not yet written */
	size_t off, len;
	struct ring *ring;
	void (*tap)(void *, const char *, size_t);
	void *tap_arg;
	int draining;		/* nothing to read now means the end */
	int gone;		/* the reader went away (EPIPE) */
	int werr;		/* the first other write error, 0: none; the
				 * rest of the stream is read and dropped */
	unsigned long long moved;	/* bytes passed on so far */
	double heard_at;	/* when bytes last came from the child, on the
				 * loop's clock; 0: never */
	ev_io rio, wio;
	/* Called after every round of copying, and when the stream ends. */
	void (*progress)(struct relay *);
	void *data;
};

/*
 * Set up s to copy rfd (a non-blocking pipe, -1 for none) to wfd; wfd_pipe
 * says wfd is a non-blocking pipe of our own, so bytes can be spliced into
 * it.  The tail goes to ring, every chunk to tap(tap_arg, ...) when tap is
 * not NULL.  -1 on ENOMEM, with nothing to free.
 */
int relay_init(struct relay *s, int rfd, int wfd, int wfd_pipe,
    struct ring *ring, void (*tap)(void *, const char *, size_t),
    void *tap_arg, void (*progress)(struct relay *), void *data);
void relay_start(struct relay *s);
/* The command is gone: copy what is left; the first read that finds
 * nothing ends the stream. */
void relay_drain(struct relay *s);
/* Stop copying and close our end of the child's pipe.  Idempotent. */
void relay_close(struct relay *s);
/* relay_close, and free what relay_init took. */
void relay_free(struct relay *s);

#endif
