/* SPDX-License-Identifier: ISC */
/*
 * One output stream of the command, copied through to cbexec's own as it
 * arrives (relay.h).
 *
 * Into a terminal or a file the bytes are read into a buffer, kept (the
 * tail ring, the tap) and written.  Into a pipe of our own
 * they are not written: tee() puts a reference to them in a hold pipe,
 * and splice() then moves them from the child's pipe into ours.  A stream
 * with a tap (stdout: the status scanner, an agent's adapter) reads them
 * out of the hold pipe straight into the ring, and the tap reads them
 * there: each byte is copied once.  A stream without one (stderr) needs
 * only its tail, so the hold pipe itself keeps it: what tee() put there
 * stays, trimmed from the front (spliced into /dev/null) to the ring's
 * size, and is copied into the ring only when the stream ends -- nothing
 * is copied on the way.
 *
 * Each wake-up copies a few chunks, then yields to the loop, so timers and
 * signals are never starved by a chatty command.  A reader that is slow
 * (EAGAIN) pauses the copying until it can take more; one that is gone
 * (EPIPE) ends it, and our end of the child's pipe is closed so the
 * command sees EPIPE or SIGPIPE as it would without cbexec in between.
 * Any other write error (a full disk, EIO) is cbexec's, not the
 * command's: it is kept in werr, and the stream is still read to its end
 * for the ring and the tap, its bytes dropped, so the command runs on as
 * if they had been written.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "relay.h"

#define CHUNK		(64 * 1024)

/* Where the front of a hold pipe goes when it is trimmed. */
static int devnull = -1;

/* The tail kept in the hold pipe goes into the ring: at the end of the
 * stream, or before the stream is copied the plain way. */
static void
hold_to_ring(struct relay *s)
{
	ssize_t k;

	while (s->held > 0) {
		k = read(s->hold[0], s->buf, s->held < CHUNK ? s->held : CHUNK);
		if (k > 0) {
			ring_push(s->ring, s->buf, (size_t)k);
			s->held -= (size_t)k;
		} else if (!(k == -1 && errno == EINTR))
			break;
	}
	s->held = 0;
}

/* Drop the front of the hold pipe beyond the ring's size. */
static void
trim_hold(struct relay *s)
{
	ssize_t k;

	while (s->held > s->ring->cap) {
		k = splice(s->hold[0], NULL, devnull, NULL,
		    s->held - s->ring->cap, SPLICE_F_NONBLOCK);
		if (k > 0)
			s->held -= (size_t)k;
		else if (!(k == -1 && errno == EINTR)) {
			/* Keep it the plain way from here on. */
			hold_to_ring(s);
			s->tail_held = 0;
			return;
		}
	}
}

/*
 * A stream without a tap spliced into a pipe keeps its tail in the hold
 * pipe, when that can be made large enough for the tail and a chunk more.
 */
static void
hold_setup(struct relay *s)
{
	size_t need = s->ring->cap + CHUNK;

	s->tail_held = 0;
	if (s->tap != NULL || s->ring->cap == 0 || s->ring->cap > CHUNK * 4)
		return;
	if (devnull == -1 &&
	    (devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		return;
	if (fcntl(s->hold[1], F_SETPIPE_SZ, (int)need) >= (int)need)
		s->tail_held = 1;
}

void
relay_close(struct relay *s)
{
	if (s->rfd == -1)
		return;
	hold_to_ring(s);
	ev_io_stop(EV_DEFAULT_UC, &s->rio);
	ev_io_stop(EV_DEFAULT_UC, &s->wio);
	close(s->rfd);
	s->rfd = -1;
	s->len = s->off = s->pending = 0;
}

/* The reader is slow: wait until it can take more. */
static int
wait_writable(struct relay *s)
{
	ev_io_stop(EV_DEFAULT_UC, &s->rio);
	ev_io_start(EV_DEFAULT_UC, &s->wio);
	return 0;
}

/*
 * Our reader's pipe does not take splice after all: what was tee'd is
 * still in the child's pipe (the ring and the tap have it already), so
 * read it out to be written the plain way.
 */
static int
unsplice(struct relay *s)
{
	ssize_t n;

	hold_to_ring(s);
	s->tail_held = 0;
	s->splice = 0;
	while (s->pending > 0) {
		n = read(s->rfd, s->buf + s->len, s->pending);
		if (n <= 0 && !(n == -1 && errno == EINTR))
			return -1;
		if (n > 0) {
			s->len += (size_t)n;
			s->pending -= (size_t)n;
		}
	}
	return 0;
}

/*
 * A write failed with errno: EPIPE, the reader is gone (-1: the stream
 * ends); anything else is kept and what is pending dropped, and from now
 * on this stream is only read (1).
 */
static int
write_failed(struct relay *s)
{
	if (errno == EPIPE) {
		s->gone = 1;
		return -1;
	}
	if (s->werr == 0)
		s->werr = errno;
	if (s->pending > 0 && unsplice(s) == -1)
		return -1;
	hold_to_ring(s);
	s->tail_held = 0;
	s->splice = 0;
	s->off = s->len = 0;
	return 1;
}

/* Pass on what is pending; 1 when all of it went, 0 when the reader is
 * slow (the write watcher is armed), -1 when the reader is gone. */
static int
flush(struct relay *s)
{
	ssize_t n;

	if (s->werr != 0) {
		/* Writing failed: only read, and drop. */
		s->off = s->len = 0;
		return 1;
	}
	while (s->pending > 0) {
		/* Out of the child's pipe into our reader's, page by page. */
		n = splice(s->rfd, NULL, s->wfd, NULL, s->pending,
		    SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n > 0) {
			s->pending -= (size_t)n;
			s->moved += (unsigned long long)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return wait_writable(s);
		if (n == -1 && errno == EINVAL && unsplice(s) == 0)
			break;
		return write_failed(s);
	}
	while (s->off < s->len) {
		n = write(s->wfd, s->buf + s->off, s->len - s->off);
		if (n >= 0) {
			s->off += (size_t)n;
			s->moved += (unsigned long long)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return wait_writable(s);
		return write_failed(s);
	}
	s->off = s->len = 0;
	return 1;
}

/* n bytes in buf just taken from the child: the ring and the tap. */
static void
keep(struct relay *s, size_t n)
{
	s->heard_at = ev_now(EV_DEFAULT_UC);
	ring_push(s->ring, s->buf, n);
	if (s->tap != NULL)
		s->tap(s->tap_arg, s->buf, n);
}

/* Read exactly n bytes out of the hold pipe into p; 0 / -1. */
static int
read_hold(struct relay *s, char *p, size_t n)
{
	ssize_t k;

	while (n > 0) {
		k = read(s->hold[0], p, n);
		if (k > 0) {
			p += k;
			n -= (size_t)k;
		} else if (!(k == -1 && errno == EINTR))
			return -1;
	}
	return 0;
}

/* n bytes just tee'd into the hold pipe: into the ring, in place when
 * they fit, and to the tap from there. */
static int
keep_held(struct relay *s, size_t n)
{
	char *a, *b;
	size_t alen, blen;

	s->heard_at = ev_now(EV_DEFAULT_UC);
	if (s->tail_held) {
		s->held += n;
		trim_hold(s);
		return 0;
	}
	if (n > s->ring->cap) {
		if (read_hold(s, s->buf, n) == -1)
			return -1;
		keep(s, n);
		return 0;
	}
	ring_room(s->ring, n, &a, &alen, &b, &blen);
	if (read_hold(s, a, alen) == -1 || read_hold(s, b, blen) == -1)
		return -1;
	ring_commit(s->ring, n);
	if (s->tap != NULL) {
		s->tap(s->tap_arg, a, alen);
		if (blen > 0)
			s->tap(s->tap_arg, b, blen);
	}
	return 0;
}

/*
 * Take the next bytes from the child's pipe for the ring and the tap,
 * leaving them to flush().  Returns the bytes taken, 0 at the end, -1
 * with errno (EAGAIN: nothing now).
 */
static ssize_t
take(struct relay *s)
{
	ssize_t n;
	int avail;

	if (s->splice && s->hold[0] == -1) {
		if (pipe2(s->hold, O_CLOEXEC | O_NONBLOCK) == -1)
			s->splice = 0;
		else
			hold_setup(s);
	}
	if (s->splice) {
		n = tee(s->rfd, s->hold[1], CHUNK, SPLICE_F_NONBLOCK);
		/* With a tail in it, the hold pipe may be what is full
		 * (tee counts its buffers, not bytes, and says EAGAIN for a
		 * full output before it looks for the input's end): with
		 * bytes waiting, make room once; with none, the end of
		 * the stream shows as a hang-up. */
		if (n == -1 && errno == EAGAIN && s->held > 0) {
			struct pollfd p = { s->rfd, POLLIN, 0 };

			if (ioctl(s->rfd, FIONREAD, &avail) == 0 && avail > 0) {
				hold_to_ring(s);
				n = tee(s->rfd, s->hold[1], CHUNK,
				    SPLICE_F_NONBLOCK);
			} else if (poll(&p, 1, 0) == 1 &&
			    (p.revents & POLLHUP) != 0)
				n = 0;
		}
		/* Otherwise EAGAIN means the child's pipe is empty. */
		if (n > 0) {
			if (keep_held(s, (size_t)n) == -1)
				return -1;
			s->pending = (size_t)n;
			return n;
		}
		if (!(n == -1 && errno == EINVAL))
			return n;
		hold_to_ring(s);
		s->tail_held = 0;
		s->splice = 0;
	}
	n = read(s->rfd, s->buf, CHUNK);
	if (n > 0) {
		keep(s, (size_t)n);
		s->len = (size_t)n;
		s->off = 0;
	}
	return n;
}

static void
pump(struct relay *s)
{
	ssize_t n;
	int i, f;

	for (i = 0; i < 4; i++) {
		if ((f = flush(s)) == 0)
			return;
		if (f == -1) {
			relay_close(s);
			break;
		}
		if ((n = take(s)) > 0)
			continue;
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN && !s->draining)
			return;
		/* EOF, an error, or nothing more while draining. */
		relay_close(s);
		break;
	}
	/* Out of rounds: pass on what the last one took, or it would wait
	 * for the command's next write. */
	if (i == 4 && flush(s) == -1)
		relay_close(s);
	if (s->rfd != -1 && s->draining)
		ev_feed_event(EV_DEFAULT_UC, &s->rio, EV_READ);
	s->progress(s);
}

static void
on_read(struct ev_loop *l, ev_io *w, int revents)
{
	pump(w->data);
}

static void
on_writable(struct ev_loop *l, ev_io *w, int revents)
{
	struct relay *s = w->data;

	ev_io_stop(EV_DEFAULT_UC, &s->wio);
	ev_io_start(EV_DEFAULT_UC, &s->rio);
	pump(s);
}

int
relay_init(struct relay *s, int rfd, int wfd, int wfd_pipe,
    struct ring *ring, void (*tap)(void *, const char *, size_t),
    void *tap_arg, void (*progress)(struct relay *), void *data)
{
	memset(s, 0, sizeof(*s));
	s->rfd = rfd;
	s->wfd = wfd;
	s->splice = wfd_pipe;
	s->hold[0] = s->hold[1] = -1;
	s->ring = ring;
	s->tap = tap;
	s->tap_arg = tap_arg;
	s->progress = progress;
	s->data = data;
	if ((s->buf = malloc(CHUNK)) == NULL)
		return -1;
	ev_io_init(&s->rio, on_read, rfd < 0 ? 0 : rfd, EV_READ);
	ev_io_init(&s->wio, on_writable, wfd, EV_WRITE);
	s->rio.data = s->wio.data = s;
	return 0;
}

void
relay_start(struct relay *s)
{
	if (s->rfd != -1)
		ev_io_start(EV_DEFAULT_UC, &s->rio);
}

void
relay_drain(struct relay *s)
{
	s->draining = 1;
	if (s->rfd != -1)
		ev_feed_event(EV_DEFAULT_UC, &s->rio, EV_READ);
}

void
relay_free(struct relay *s)
{
	relay_close(s);
	if (s->hold[0] != -1) {
		close(s->hold[0]);
		close(s->hold[1]);
		s->hold[0] = s->hold[1] = -1;
	}
	free(s->buf);
	s->buf = NULL;
}
