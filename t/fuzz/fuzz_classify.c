/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for the classifier (SPEC §4).  The input is split into
 * a header (exec errno, exit code, signal, flags), a stderr tail, a stdout
 * tail and a $TMPDIR; classify() runs with and without a few user rules,
 * and normalize_message(), error_fingerprint() and utf8_sanitize() run on
 * the pieces.  What SPEC §4 promises is checked, not only "no crash":
 * a run that exited with an ok code is a success unless a user rule says
 * otherwise, an error has a type, a valid UTF-8 message and the fingerprint
 * of that message, and a normalised message has no digits and no runs of
 * whitespace.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c, what) do { if (!(c)) { \
	fprintf(stderr, "invariant failed: %s\n", what); abort(); } } while (0)

static struct rule rules[3];
static int have_rules;

static void
init_rules(void)
{
	static const int zero[] = { 0 }, one_two[] = { 1, 2 };
	char err[256];

	if (rule_init(&rules[0], "\"is_error\": *true", RULE_STDOUT, zero, 1,
	    CB_CLASS_RECOVERABLE, "agent_error", err, sizeof(err)) == -1 ||
	    rule_init(&rules[1], "^fatal: .*", RULE_STDERR, NULL, 0,
	    CB_CLASS_FATAL, "custom_fatal", err, sizeof(err)) == -1 ||
	    rule_init(&rules[2], "(a|b)+c$", RULE_STDERR | RULE_STDOUT,
	    one_two, 2, CB_CLASS_TRANSIENT, "ab", err, sizeof(err)) == -1) {
		fprintf(stderr, "rule_init: %s\n", err);
		abort();
	}
	have_rules = 1;
}

/* Strict UTF-8: no overlongs, no surrogates, nothing past U+10FFFF. */
static int
valid_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0, k, len;
	uint32_t c, min;

	while (i < n) {
		c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			len = 2, c &= 0x1f, min = 0x80;
		else if ((c & 0xf0) == 0xe0)
			len = 3, c &= 0x0f, min = 0x800;
		else if ((c & 0xf8) == 0xf0)
			len = 4, c &= 0x07, min = 0x10000;
		else
			return 0;
		if (i + len > n)
			return 0;
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			c = c << 6 | (s[i + k] & 0x3f);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return 0;
		i += len;
	}
	return 1;
}

static void
check_normal(const char *norm)
{
	size_t i, n = strlen(norm);

	for (i = 0; i < n; i++) {
		CHECK(norm[i] < '0' || norm[i] > '9',
		    "normalised message still has a digit");
		CHECK(strchr("\t\n\v\f\r", norm[i]) == NULL,
		    "normalised message has a whitespace other than ' '");
		CHECK(!(norm[i] == ' ' && (i == 0 || i + 1 == n ||
		    norm[i + 1] == ' ')), "whitespace not folded or trimmed");
	}
}

static char *
dup0(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s == NULL)
		abort();
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

static void
check_result(const struct run_facts *f, const struct classification *c)
{
	char hex[DIGEST_HEX_LEN + 1];
	size_t i;

	if (c->cls == CB_CLASS_SUCCESS) {
		CHECK(c->message == NULL, "success with a message");
		CHECK(c->type[0] == '\0', "success with a type");
		return;
	}
	CHECK(c->type[0] != '\0', "error without a type");
	CHECK(c->message != NULL, "error without a message");
	CHECK(valid_utf8((const unsigned char *)c->message,
	    strlen(c->message)), "message is not valid UTF-8");
	CHECK(f->exec_errno != 0 || strpbrk(c->message, "\r\n") == NULL,
	    "message is more than one line");
	CHECK(strlen(c->hash) == DIGEST_HEX_LEN, "hash length");
	for (i = 0; i < DIGEST_HEX_LEN; i++)
		CHECK(strchr("0123456789abcdef", c->hash[i]) != NULL,
		    "hash not lower-case hex");
	CHECK(error_fingerprint(c->type, c->message, f->tmpdir, hex) == 0,
	    "error_fingerprint failed");
	CHECK(strcmp(hex, c->hash) == 0, "hash is not the message's");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int ok2[] = { 0, 75 };
	struct classification c;
	struct run_facts f;
	size_t nerr, nout, ntmp;
	char *err, *out, *tmp, *norm, *san;
	char hex[DIGEST_HEX_LEN + 1];
	uint8_t flags;

	if (!have_rules)
		init_rules();
	if (size < 7)
		return 0;
	flags = data[0];
	memset(&f, 0, sizeof(f));
	f.command = "cmd";
	f.exec_errno = (flags & 3) == 1 ? ENOENT : (flags & 3) == 2 ?
	    EACCES : 0;
	f.signalled_by_us = (flags >> 2) & 1;
	f.timed_out = (flags >> 3) & 1;
	f.signo = data[2] % 40 < 32 ? data[2] % 32 : 0;
	f.exit_code = f.signo != 0 ? -1 : data[1];
	if (flags & 0x20) {
		f.ok_codes = ok2;
		f.n_ok_codes = 2;
	}
	nerr = ((size_t)data[3] << 8 | data[4]);
	nout = ((size_t)data[5] << 8 | data[6]);
	data += 7;
	size -= 7;
	if (nerr > size)
		nerr = size;
	if (nout > size - nerr)
		nout = size - nerr;
	ntmp = size - nerr - nout;
	/* NUL-terminated like ring_dup()'s copies, and exactly that long. */
	err = dup0(data, nerr);
	out = dup0(data + nerr, nout);
	tmp = dup0(data + nerr + nout, ntmp);
	f.err = err;
	f.err_len = nerr;
	f.out = (flags & 0x10) ? NULL : out;
	f.out_len = (flags & 0x10) ? 0 : nout;
	f.tmpdir = (flags & 0x40) ? tmp : "/tmp/fz";

	if (classify(NULL, 0, &f, &c) == 0) {
		check_result(&f, &c);
		if (f.exec_errno != 0)
			CHECK(c.cls == CB_CLASS_FATAL, "exec failure not fatal");
		else if (f.signo == 0 && !f.timed_out && (f.exit_code == 0 ||
		    (f.ok_codes != NULL && f.exit_code == 75)))
			CHECK(c.cls == CB_CLASS_SUCCESS,
			    "an ok exit without user rules is not a success");
		else
			CHECK(c.cls != CB_CLASS_SUCCESS,
			    "a failed run classified as a success");
		if (f.timed_out && f.exec_errno == 0 && c.cls != CB_CLASS_SUCCESS)
			CHECK(c.cls == CB_CLASS_TIMEOUT, "timeout not timeout");
		classification_free(&c);
	}
	if (classify(rules, 3, &f, &c) == 0) {
		check_result(&f, &c);
		classification_free(&c);
	}

	/* the pieces on their own, as C strings (the API takes them so) */
	if ((norm = normalize_message(err, f.tmpdir)) != NULL) {
		check_normal(norm);
		free(norm);
	}
	(void)error_fingerprint(out, err, tmp[0] == '/' ? tmp : NULL, hex);
	if ((san = utf8_sanitize(err, nerr)) != NULL) {
		CHECK(valid_utf8((unsigned char *)san, strlen(san)),
		    "utf8_sanitize output is not valid UTF-8");
		CHECK(memchr(err, '\0', nerr) != NULL || nerr == 0 ||
		    san[0] != '\0', "utf8_sanitize lost NUL-free input");
		free(san);
	}
	free(err);
	free(out);
	free(tmp);
	return 0;
}
