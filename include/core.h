/* SPDX-License-Identifier: ISC */
/*
 * The core every subsystem builds on: the two clocks, ISO-8601 time,
 * durations as SPEC §1 writes them, SHA-256, UTF-8 checking, the XDG base
 * directories, the bounded byte ring and shell quoting; and the table of
 * cbexec's exit statuses, which every layer returns or exits with.  Apart
 * from that table's words, nothing here knows of circuits or commands.
 */
#ifndef CBEXEC_CORE_H
#define CBEXEC_CORE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * Room for one of cbexec's own messages, an error or the reason for one:
 * a path of PATH_MAX and the words about it.  Every buffer a message is
 * written into (char err[CB_ERRLEN], then err, sizeof(err)) has it, so
 * none cuts a message its callee wrote longer (t/0003-seam.t).
 */
#define CB_ERRLEN	4400
/* Room for a reason that goes inside such a message ("writable by
 * others", a library's one-line error). */
#define CB_WHYLEN	256
/*
 * Room for where a circuit is kept, as a message names it: a path of
 * PATH_MAX with a suffix of cbexec's (".lock", ".corrupt.TIME"), or a
 * store's label and key.
 */
#define CB_WHERELEN	4200

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * cbexec's exit statuses (SPEC §2), one row each in the order --help,
 * the man page's EXIT STATUS and README's table list them:
 *   X(ID, code, exits as, label, name, --exit-codes key, --help's line,
 *     --help all's lines)
 * CB_EXIT_ID is the code the layers below main() return; main() exits
 * with what --exit-codes made of it ("exits as" by default); a row
 * without a key is never remapped.  The label is what the tables print
 * (NULL: in none of them), the name SPEC §2's (NULL: "-", a status that
 * is the command's, or its exec's, not cbexec's verdict).  A new exit
 * status is a row here; t/unit/exits.c holds the man page and README to
 * these rows.
 */
#define CB_EXIT_TABLE(X)						\
X(OK, 0, 0, "0", "OK", NULL,						\
	"the last run succeeded or reported completion; --status: not "	\
	"OPEN",								\
	"the last run succeeded or reported completion (--exit-codes\n"	\
	"complete=N tells completion apart), the phase or task was\n"	\
	"skipped (not run), or Skip was chosen; --status: not OPEN\n"	\
	"(--status --all: none is OPEN)")				\
X(OWN, 1, 1, "1-119", NULL, NULL,					\
	"the command's own exit status (1: a failure it exited 0 for)",	\
	"the command's own exit status; 1 for a run judged a failure\n"	\
	"that exited 0 (an error in a client's own result)")		\
X(OPEN, 120, 120, "120", "OPEN", "open",				\
	"refused, or opened by this invocation",			\
	"the circuit is open (refused, or opened now; a usage limit\n"	\
	"or a spend window over its cap holds it until it frees up), or\n" \
	"its --account's gate refused the run (--status: either refuses\n" \
	"runs)")							\
X(STUCK, 121, 121, "121", "STUCK", "stuck",				\
	"the same error or the same task failed repeatedly",		\
	"the same error or the same task failed repeatedly")		\
X(ABORT, 122, 122, "122", "ABORT", "abort",				\
	"fatal error class, or interrupted by the operator",		\
	"fatal error class, or interrupted by the operator")		\
X(BUSY, 123, 123, "123", "BUSY", "busy",				\
	"another cbexec holds this circuit",				\
	"another cbexec holds this circuit")				\
X(TIMEOUT, 124, 124, "124", "TIMEOUT", NULL,				\
	"--timeout, --idle-timeout, --budget or a spend cap",		\
	"--timeout, --idle-timeout or --budget ran out, a per-run\n"	\
	"spend cap was crossed (outcome BUDGET), or a tool-call loop\n"	\
	"was stopped (by cbexec, or by the client itself)")		\
X(ERROR, 125, 125, "125", "ERROR", NULL,				\
	"cbexec itself failed (usage, config, state, I/O)",		\
	"cbexec itself failed (usage, config, state, no such\n"		\
	"circuit, I/O, a write error on stdout)")			\
X(NOEXEC, 126, 126, "126", NULL, NULL,					\
	"COMMAND found but not executable",				\
	"COMMAND found but not executable")				\
X(NOTFOUND, 127, 127, "127", NULL, NULL,				\
	"COMMAND not found",						\
	"COMMAND not found")						\
X(SIGNAL, 128, 128, "128+N", NULL, NULL,				\
	"the command was killed by signal N",				\
	"the command was killed by signal N (a known client's own\n"	\
	"status above 128, as Gemini CLI's 144 for HTTP 400, gives 1)")	\
/* The run reported completion (STATUS: COMPLETE, EXIT_SIGNAL:		\
 * true): never an exit status itself; 0 unless --exit-codes		\
 * complete=N (SPEC §11). */						\
X(COMPLETE, 256, 0, NULL, NULL, "complete", NULL, NULL)

/* CB_EXIT_OK, CB_EXIT_OPEN, ...: the codes; CB_EXIT_SIGNAL plus the
 * signal's number for a run a signal ended. */
enum cb_exit {
#define X(id, code, as, label, name, key, brief, help) CB_EXIT_##id = code,
	CB_EXIT_TABLE(X)
#undef X
};

/* The rows' indexes in cb_exits[]: CB_EXIT_ROW_OPEN, ... */
enum {
#define X(id, code, as, label, name, key, brief, help) CB_EXIT_ROW_##id,
	CB_EXIT_TABLE(X)
#undef X
	CB_EXIT_ROWS
};

struct cb_exit_row {
	int code;		/* CB_EXIT_... */
	int as;			/* what it exits as, unless remapped */
	const char *label;	/* "120", "1-119"; NULL: not in the tables */
	const char *name;	/* "OPEN"; NULL: none */
	const char *key;	/* --exit-codes KEY=N; NULL: not remapped */
	const char *brief;	/* --help's line; NULL: in none */
	const char *help;	/* --help all's, lines split by '\n' */
};

/* The table (exits.c). */
extern const struct cb_exit_row cb_exits[CB_EXIT_ROWS];

/* What code exits as, with as[] (by row, as cb_exits[].as by default)
 * for the rows --exit-codes may remap. */
int exit_remap(const int as[CB_EXIT_ROWS], int code);

/* Clocks (clock.c), as seconds in a double: wall time for timestamps,
 * monotonic time for every deadline and duration. */
double wall_now(void);		/* CLOCK_REALTIME, epoch seconds */
double mono_now(void);		/* CLOCK_MONOTONIC */
/* What is left until deadline (mono_now()'s clock) as poll(2)
 * milliseconds: at least 1 while anything is, 0 when nothing is. */
int mono_ms_left(double deadline);

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
 * The ELF note that names a library loaded with dlopen
 * (https://systemd.io/ELF_DLOPEN_METADATA/): section ".note.dlopen",
 * owner "FDO", type 0x407c0c0a, and JSON, a string literal holding a JSON
 * array of the features and their sonames.  One a file (it defines the
 * static dlopen_note); the file includes <stdint.h>.
 */
#define CB_DLOPEN_NOTE(JSON)						\
	__attribute__((used, section(".note.dlopen")))			\
	_Alignas(4) static const struct {				\
		uint32_t n_namesz, n_descsz, n_type;			\
		char name[4];						\
		_Alignas(4) char json[sizeof(JSON)];			\
	} dlopen_note = {						\
		4, sizeof(JSON), 0x407c0c0a, "FDO", JSON		\
	}

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
/* n bytes of s, %XX decoded, into out (NUL-terminated): 0, or -1 when an
 * escape is bad or %00, or out (outlen bytes) is too short (quote.c). */
int pct_decode(const char *s, size_t n, char *out, size_t outlen);
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
/*
 * Replace the file at path with data[0, len) atomically (atomic.c): a temp
 * file ".BASE.tmp.XXXXXX" beside it, of the given mode, written, fsynced,
 * closed and renamed over path.  ATOMIC_SYNC_DIR: then fsync the
 * directory (a directory that cannot be fsynced is no error).
 * ATOMIC_STALE: first remove the temp files a killed writer left beside
 * path (only under the lock path is written under).  0; -1 with errno,
 * path as it was and no temp file left; -2 with errno: path replaced, the
 * directory's fsync failed.  path itself is neither resolved nor checked:
 * a link at path is replaced, not followed.
 */
#define ATOMIC_SYNC_DIR	1
#define ATOMIC_STALE	2
int atomic_write(const char *path, const void *data, size_t len, mode_t mode,
    int flags);
/* The names in the directory dirfd is open on that end in suffix ("":
 * all), but "." and "..", sorted (readdir's order is none): a malloc'd
 * array ending in NULL, for file_names_free(); NULL with errno.  dirfd
 * is left as it was, for the caller's fstatat() and unlinkat(). */
char **file_names(int dirfd, const char *suffix);
void file_names_free(char **names);
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
