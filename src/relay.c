/*
 * One output stream of the command, copied through to cbexec's own as it
 * arrives (include/relay.h).
 *
 * Into a terminal or a file the bytes are read into a buffer, kept (the
 * tail ring, the status scanner) and written.  Into a pipe of our own
 * they are not copied through user space at all: tee() puts a reference
 * to them in a hold pipe and splice() then moves them from the child's
 * pipe into ours.  For stdout, which the scanner must see whole, they are
 * read out of the hold pipe at once: one copy per byte instead of two.
 * For stderr only the last --capture-bytes matter, so they stay in the
 * hold pipe, whose oldest bytes are dropped by splicing them to /dev/null
 * once what is newer covers the tail; they reach the ring when the stream
 * ends.  A hold pipe is limited in buffers as well as bytes, and a trickle
 * of small writes fills a buffer per tee(): after 32 tee()s it is emptied
 * into the ring.  A writer in packet mode makes a buffer per write and can
 * fill it all the same; tee() then fails with EAGAIN although the child's
 * pipe has bytes or its end, which poll() tells apart.
 *
 * Each wake-up copies a few chunks, then yields to the loop, so timers and
 * signals are never starved by a chatty command.  A reader that is slow
 * (EAGAIN) pauses the copying until it can take more; one that is gone
 * (EPIPE) ends it, and our end of the child's pipe is closed so the
 * command sees EPIPE or SIGPIPE as it would without cbexec in between.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relay.h"

#define CHUNK		(64 * 1024)
#define HOLD_SIZE	(512 * 1024)	/* the hold pipe, when the tail is in it */
#define MAX_CHUNKS	32

static int devnull = -2;	/* -2 not opened yet, -1 unavailable */

/* hold's first n bytes, gone without being copied; 0 / -1. */
static int
discard(struct relay *s, size_t n)
{
	ssize_t k;

	if (devnull == -2)
		devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	while (n > 0) {
		k = devnull >= 0 ? splice(s->hold[0], NULL, devnull, NULL, n,
		    SPLICE_F_NONBLOCK) : -1;
		if (k <= 0 && !(k == -1 && errno == EINTR))
			return -1;
		if (k > 0)
			n -= (size_t)k;
	}
	return 0;
}

/* Everything in hold into the ring (through buf, which must be free),
 * read until the pipe is empty whatever s->held says. */
static void
empty_hold(struct relay *s)
{
	ssize_t k;

	if (s->hold[0] == -1)
		return;
	for (;;) {
		k = read(s->hold[0], s->buf, CHUNK);
		if (k == -1 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		ring_push(s->ring, s->buf, (size_t)k);
	}
	s->held = 0;
	s->chunks = 0;
}

/* n bytes just tee'd into hold: keep hold from filling up. */
static void
trim_hold(struct relay *s, size_t n)
{
	size_t cap = s->ring->cap;

	s->held += n;
	s->chunks++;
	if (s->held > cap + CHUNK) {
		/* What is left in hold is the whole tail: the ring's older
		 * bytes are of no use any more. */
		if (discard(s, s->held - cap) == 0) {
			ring_clear(s->ring);
			s->held = cap;
		} else
			empty_hold(s);
	}
	if (s->chunks >= MAX_CHUNKS)
		empty_hold(s);
}

void
relay_close(struct relay *s)
{
	if (s->rfd == -1)
		return;
	ev_io_stop(EV_DEFAULT_UC, &s->rio);
	ev_io_stop(EV_DEFAULT_UC, &s->wio);
	close(s->rfd);
	s->rfd = -1;
	s->len = s->off = s->pending = 0;
	empty_hold(s);
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
 * still in the child's pipe, so read it out to be written the plain way
 * (the ring and the scanner have it already, or hold has: into the ring
 * with it first, so the tail stays in order).
 */
static int
unsplice(struct relay *s)
{
	ssize_t n;

	s->splice = 0;
	empty_hold(s);
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

/* Pass on what is pending; 1 when all of it went, 0 when the reader is
 * slow (the write watcher is armed), -1 when the reader is gone. */
static int
flush(struct relay *s)
{
	ssize_t n;

	while (s->pending > 0) {
		/* Out of the child's pipe into our reader's, page by page. */
		n = splice(s->rfd, NULL, s->wfd, NULL, s->pending,
		    SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n > 0) {
			s->pending -= (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return wait_writable(s);
		if (n == -1 && errno == EINVAL && unsplice(s) == 0)
			break;
		return -1;
	}
	while (s->off < s->len) {
		n = write(s->wfd, s->buf + s->off, s->len - s->off);
		if (n >= 0) {
			s->off += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return wait_writable(s);
		return -1;
	}
	s->off = s->len = 0;
	return 1;
}

/* n bytes in buf just taken from the child: the ring and the scanner. */
static void
keep(struct relay *s, size_t n)
{
	ring_push(s->ring, s->buf, n);
	if (s->scanner != NULL)
		status_scanner_feed(s->scanner, s->buf, n);
}

/*
 * Take the next bytes from the child's pipe for the ring and the scanner,
 * leaving them to flush().  Returns the bytes taken, 0 at the end, -1
 * with errno (EAGAIN: nothing now).
 */
static ssize_t
take(struct relay *s)
{
	struct pollfd pfd = { s->rfd, POLLIN, 0 };
	ssize_t n, got, k;

	if (s->splice && s->hold[0] == -1) {
		if (pipe2(s->hold, O_CLOEXEC | O_NONBLOCK) == -1)
			s->splice = 0;
		/* Only a hold pipe with room for the tail and then some
		 * may keep it; else it is read out after every tee(). */
		else if (s->scanner == NULL &&
		    s->ring->cap + CHUNK <= HOLD_SIZE / 4 &&
		    fcntl(s->hold[0], F_SETPIPE_SZ, HOLD_SIZE) >= HOLD_SIZE)
			s->tail_held = 1;
	}
	if (s->splice) {
		n = tee(s->rfd, s->hold[1], CHUNK, SPLICE_F_NONBLOCK);
		if (n > 0) {
			if (s->tail_held) {
				trim_hold(s, (size_t)n);
				s->pending = (size_t)n;
				return n;
			}
			for (got = 0; got < n;) {
				k = read(s->hold[0], s->buf + got,
				    (size_t)(n - got));
				if (k > 0)
					got += k;
				else if (!(k == -1 && errno == EINTR))
					return -1;
			}
			keep(s, (size_t)n);
			s->pending = (size_t)n;
			return n;
		}
		/* A hold pipe full of small buffers makes tee() say EAGAIN
		 * while the child's pipe has bytes or its end: empty it and
		 * look again. */
		if (n == -1 && errno == EAGAIN && s->held > 0 &&
		    poll(&pfd, 1, 0) == 1) {
			empty_hold(s);
			return take(s);
		}
		if (!(n == -1 && errno == EINVAL))
			return n;
		s->splice = 0;
		empty_hold(s);
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
    struct ring *ring, struct status_scanner *scanner,
    void (*progress)(struct relay *), void *data)
{
	memset(s, 0, sizeof(*s));
	s->rfd = rfd;
	s->wfd = wfd;
	s->splice = wfd_pipe;
	s->hold[0] = s->hold[1] = -1;
	s->ring = ring;
	s->scanner = scanner;
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
