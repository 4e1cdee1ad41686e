/*
 * Failure classification (SPEC §4): a pure function from what a run did to
 * a class, a type, a message and the message's fingerprint.
 */
#ifndef CBEXEC_CLASSIFY_H
#define CBEXEC_CLASSIFY_H

#include <regex.h>
#include <stddef.h>

#include "breaker.h"
#include "digest.h"

enum { RULE_STDERR = 1, RULE_STDOUT = 2 };

/* A user rule from the config file (SPEC §6), tried before the built-ins. */
struct rule {
	char *pattern;		/* as written, for messages */
	regex_t re;		/* REG_EXTENDED | REG_ICASE | REG_NEWLINE */
	int streams;		/* RULE_STDERR and/or RULE_STDOUT; default stderr */
	int *exit_codes;	/* NULL: any failed run (non-ok exit) */
	size_t n_exit_codes;
	enum cb_class cls;
	char *type;
};

/*
 * Compile r from its parts.  A NULL exit list means "any run that already
 * failed"; a list naming a code lets the rule match runs with that code,
 * including 0 (so it may turn a success into an error).  On error returns
 * -1 and writes a one-line reason into err.
 */
int rule_init(struct rule *r, const char *pattern, int streams,
    const int *exit_codes, size_t n_exit_codes, enum cb_class cls,
    const char *type, char *err, size_t errlen);
void rule_free(struct rule *r);

/* What one run did, as the supervisor saw it. */
struct run_facts {
	const char *command;	/* argv[0], for exec-failure messages */
	int exec_errno;		/* errno of cbexec's own exec, 0 when it ran */
	int exit_code;		/* exit status when it exited, else -1 */
	int signo;		/* signal that ended it, 0 when it exited */
	int signalled_by_us;	/* cbexec sent that signal (timeout, abort) */
	int timed_out;		/* --timeout or the budget stopped it */
	const char *err;	/* stderr tail (may hold NULs and bad UTF-8) */
	size_t err_len;
	const char *out;	/* stdout tail, NULL when not captured */
	size_t out_len;
	const int *ok_codes;	/* --ok-exit-codes; {0} by default */
	size_t n_ok_codes;
	const char *tmpdir;	/* $TMPDIR for normalisation, or NULL */
};

struct classification {
	enum cb_class cls;
	char type[64];		/* "" on success */
	char *message;		/* malloc'd raw line, NULL on success */
	char hash[DIGEST_HEX_LEN + 1];	/* "" on success */
};

/*
 * Classify: user rules first (first match wins), then the built-in table in
 * SPEC §4 order.  Returns 0, or -1 on ENOMEM.
 */
int classify(const struct rule *rules, size_t n_rules,
    const struct run_facts *f, struct classification *out);
void classification_free(struct classification *c);

/*
 * The normalised form of msg (malloc'd): ANSI escapes stripped, ISO-8601
 * timestamps -> <TS>, UUIDs -> <UUID>, 0x-hex and 8+ char hex words with a
 * digit -> <HEX>, temporary paths -> <TMP>, digit runs -> N, whitespace
 * folded and trimmed.  tmpdir may be NULL.
 */
char *normalize_message(const char *msg, const char *tmpdir);

/* SHA-256 hex of type, a NUL, and normalize_message(msg).  0 / -1. */
int error_fingerprint(const char *type, const char *msg, const char *tmpdir,
    char hex[DIGEST_HEX_LEN + 1]);

/*
 * A malloc'd copy of p[0..n) that is valid UTF-8: NUL bytes dropped, invalid
 * sequences replaced by U+FFFD.
 */
char *utf8_sanitize(const char *p, size_t n);
/* The sequence at s (n > 0 bytes left): its length, the maximal
 * ill-formed subpart when *valid is 0. */
size_t utf8_seq(const unsigned char *s, size_t n, int *valid);
/* The first byte of p[0..n) that does not start a valid sequence, or NULL. */
const char *utf8_invalid(const char *p, size_t n);

#endif
