/* SPDX-License-Identifier: ISC */
/*
 * The core every subsystem builds on: the two clocks, ISO-8601 time,
 * durations as SPEC §1 writes them, SHA-256, UTF-8 checking, the XDG base
 * directories, the bounded byte ring and shell quoting.  Nothing here
 * knows of circuits or commands.
 */
#ifndef CBEXEC_CORE_H
#define CBEXEC_CORE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Clocks (clock.c), as seconds in a double: wall time for timestamps,
 * monotonic time for every deadline and duration. */
double wall_now(void);		/* CLOCK_REALTIME, epoch seconds */
double mono_now(void);		/* CLOCK_MONOTONIC */

/* UTC ISO-8601 with milliseconds: 2026-11-22T01:02:03.456Z. */
char *iso8601(double t, char *buf, size_t len);
/* Parse that form back (also without milliseconds); -1 when malformed or
 * before 1970. */
int iso8601_parse(const char *s, double *t);

/*
 * Durations (duration.c): N, N.N, .N with an optional lower-case suffix
 * ms, s, m, h or d; bare numbers are seconds; 0 means "no limit".
 */
/* Ten years (365-day years), the largest duration accepted. */
#define DURATION_MAX (10.0 * 365 * 86400)

/*
 * Parse s into seconds.  Returns 0 on success, -2 for a well-formed
 * duration over DURATION_MAX, -1 for anything else: empty, sign, exponent,
 * unknown or upper-case suffix, trailing garbage.
 */
int duration_parse(const char *s, double *seconds);

/* Format seconds for humans ("2.41s", "15m", "1h30m"); returns buf. */
char *duration_format(double seconds, char *buf, unsigned long len);

/* SHA-256 through OpenSSL's EVP interface, as 64 lower-case hex digits
 * (digest.c).  libcrypto is loaded on the first digest: when it cannot
 * be, every digest fails with ELIBACC and digest_error() says why. */
#define DIGEST_HEX_LEN 64

struct digest;	/* opaque incremental hasher */

struct digest *digest_new(void);			/* NULL on failure */
int digest_update(struct digest *d, const void *p, size_t n);	/* 0 / -1 */
/* Writes 64 hex digits and a NUL into hex, frees d.  0 / -1. */
int digest_final(struct digest *d, char hex[DIGEST_HEX_LEN + 1]);
void digest_abort(struct digest *d);	/* frees d without a result */

/* Set OpenSSL up and fetch SHA-256 now rather than at the first digest;
 * 0 / -1. */
int digest_prepare(void);

/* Why libcrypto could not be loaded ("cannot load OpenSSL's libcrypto
 * (libcrypto.so.3) ..."), or NULL while it can. */
const char *digest_error(void);

/* One-shot helper. */
int digest_hex(const void *p, size_t n, char hex[DIGEST_HEX_LEN + 1]);

/*
 * UTF-8 (utf8.c).  A malloc'd copy of p[0..n) that is valid UTF-8: NUL
 * bytes dropped, invalid sequences replaced by U+FFFD.
 */
char *utf8_sanitize(const char *p, size_t n);
/* The sequence at s (n > 0 bytes left): its length, the maximal
 * ill-formed subpart when *valid is 0. */
size_t utf8_seq(const unsigned char *s, size_t n, int *valid);
/* The first byte of p[0..n) that does not start a valid sequence, or NULL. */
const char *utf8_invalid(const char *p, size_t n);
/* Code point c (at most U+10FFFF) as UTF-8 at o: its length, 1 to 4. */
size_t utf8_put(char *o, unsigned long c);
/*
 * An opaque id a run reported (a session id) that may be handed to the
 * next run (utf8.c): 1 when s is 1 to OPAQUE_ID_MAX bytes of
 * [A-Za-z0-9._:-] not starting with '-', so pasted into a command line it
 * can never be an option or more than one word.
 */
#define OPAQUE_ID_MAX	128
int opaque_id(const char *s);

/*
 * An XDG base directory (xdg.c): "$VAR/LEAF" when the variable var holds an
 * absolute path (relative values are ignored, as the spec says), else
 * "$HOME/HOME_SUB/LEAF" (xdg_dir("XDG_STATE_HOME", ".local/state",
 * "cbexec")).  Malloc'd; NULL when neither is usable or out of memory.
 */
char *xdg_dir(const char *var, const char *home_sub, const char *leaf);

/*
 * A bounded byte ring (ring.c): keeps the last cap bytes pushed into it,
 * whatever the volume.  Used for the stdout/stderr tails the classifier
 * reads.
 */
struct ring {
	char *buf;
	size_t cap;	/* bytes kept at most; 0 keeps nothing */
	size_t start;	/* index of the oldest byte */
	size_t len;	/* bytes held, <= cap */
};

int ring_init(struct ring *r, size_t cap);	/* -1 on ENOMEM */
void ring_push(struct ring *r, const void *p, size_t n);
/* Where the next n bytes go (0 < n <= cap), for a reader that fills the
 * ring in place: *a (*alen bytes), then *b (*blen, maybe 0).  Once they
 * are written, ring_commit(r, n) makes them the newest. */
void ring_room(struct ring *r, size_t n, char **a, size_t *alen, char **b,
    size_t *blen);
void ring_commit(struct ring *r, size_t n);
/* The held bytes in order as a malloc'd NUL-terminated string; *len gets
 * the byte count (the data may itself contain NULs).  NULL on ENOMEM. */
char *ring_dup(const struct ring *r, size_t *len);
void ring_clear(struct ring *r);
void ring_free(struct ring *r);

/* s quoted for a POSIX shell (quote.c): as it is when every byte is safe,
 * else in single quotes.  malloc'd; NULL on ENOMEM. */
char *shell_quote(const char *s);
/* s (NULL: nothing) to f as one printable line, control bytes escaped
 * (quote.c). */
void text_put(FILE *f, const char *s);
/* The same as a malloc'd string; NULL on ENOMEM. */
char *text_escaped(const char *s);
/* The value of hex digit c (either case); -1 when c is none (quote.c). */
int hex_value(int c);
/* The four hex digits at p (a JSON \u escape's) as a number; -1 when one
 * is none (quote.c). */
long hex4(const char *p);
/*
 * Files cbexec opens (file.c).  file_open: open(2) with O_CLOEXEC and
 * O_NONBLOCK, without following a final symbolic link unless follow,
 * accepting only a regular file.  The fd; -1 with errno (ELOOP: a link);
 * -2 when the path is a FIFO, device, socket or directory.  file_why(rc)
 * words a failure for a message.
 */
int file_open(const char *path, int flags, int mode, int follow);
const char *file_why(int rc);
/* 0 when st is owned by the effective uid or root and writable by no one
 * else (a directory: unless sticky); else -1 with the reason in why. */
struct stat;
int file_trusted(const struct stat *st, char *why, size_t len);
/* The directory part of path ("." or "/" at the ends); -1 ENAMETOOLONG. */
int file_dir_of(const char *path, char *dir, size_t len);
/* Create the missing parent directories of path with mode 0700 (those
 * there are left as they are): 0, or -1 with the reason in err. */
int file_mkdirs(const char *path, char *err, size_t errlen);
/* write(2) until all of p went, retrying EINTR: the bytes written (n, or
 * fewer with errno set when the file refused the rest), -1 when none. */
ssize_t file_write_all(int fd, const void *p, size_t n);
/* Give fds 0, 1 and 2, when closed, a placeholder that fails like a
 * closed descriptor, so no descriptor of ours takes their numbers. */
void file_std_fds(void);
/* The stack cbexec needs (stack.c): the soft RLIMIT_STACK raised up to
 * the hard one when smaller; -1 with err when even that is too small.
 * stack_restore: the limit cbexec was started with, for a child before it
 * execs (async-signal-safe). */
int stack_room(char *err, size_t errlen);
void stack_restore(void);
/* Whether fd (0, 1, 2) was closed when file_std_fds ran. */
int file_std_closed(int fd);
/*
 * Wall-clock time in a zone of the system's tz database (tz.c), for reset
 * times agents print.  zone is an IANA name ("America/Recife", "UTC"), or
 * NULL for cbexec's local time ($TZ).  An unknown zone is -1, never UTC.
 */
struct tm;
/* The epoch time of the wall-clock time *tm in zone (tm_isdst is
 * ignored: the zone's rules decide); 0 / -1. */
int tz_mktime(const char *zone, struct tm *tm, double *t);
/* The wall-clock time in zone of epoch time t; 0 / -1. */
int tz_localtime(const char *zone, double t, struct tm *tm);

#endif
