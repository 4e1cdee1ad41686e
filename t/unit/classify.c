/* SPDX-License-Identifier: ISC */
/*
 * The classifier (SPEC §4): every built-in row with a real-world sample,
 * the stdout rules and their false positives, user rules, timeouts and
 * signals, message choice, normalisation step by step, fingerprints, and
 * hostile input (NULs, bad UTF-8, 64 KiB tails).  Also SHA-256 vectors for
 * digest.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "core.h"
#include "tap.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static struct run_facts
exited(int code, const char *err, const char *out)
{
	struct run_facts f = { 0 };

	f.command = "agent";
	f.exit_code = code;
	f.err = err;
	f.err_len = err ? strlen(err) : 0;
	f.out = out;
	f.out_len = out ? strlen(out) : 0;
	return f;
}

static struct run_facts
signalled(int signo, int by_us, int timed_out, const char *err)
{
	struct run_facts f = exited(-1, err, NULL);

	f.signo = signo;
	f.signalled_by_us = by_us;
	f.timed_out = timed_out;
	return f;
}

static int
is_hex64(const char *h)
{
	size_t i;

	for (i = 0; i < DIGEST_HEX_LEN; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
			return 0;
	return h[DIGEST_HEX_LEN] == '\0';
}

/*
 * Classify f with rules and check class, type and message (want_msg NULL:
 * success, no message).  The hash must be error_fingerprint's.
 */
static void
check(const char *desc, const struct rule *rules, size_t n,
    const struct run_facts *f, enum cb_class cls, const char *type,
    const char *msg)
{
	struct classification c;
	char d[256], h[DIGEST_HEX_LEN + 1];

	if (classify(rules, n, f, &c) == -1) {
		snprintf(d, sizeof(d), "%s: classify succeeds", desc);
		ok(0, d);
		return;
	}
	snprintf(d, sizeof(d), "%s: class %s", desc, class_name(cls));
	is_str(class_name(c.cls), class_name(cls), d);
	snprintf(d, sizeof(d), "%s: type \"%s\"", desc, type);
	is_str(c.type, type, d);
	snprintf(d, sizeof(d), "%s: message", desc);
	is_str(c.message, msg, d);
	snprintf(d, sizeof(d), "%s: hash", desc);
	if (msg == NULL)
		is_str(c.hash, "", d);
	else
		ok(is_hex64(c.hash) && error_fingerprint(c.type, c.message,
		    f->tmpdir, h) == 0 && strcmp(h, c.hash) == 0, d);
	classification_free(&c);
}

/* Shorthand: exit code, stderr, stdout, no user rules. */
static void
expect(const char *desc, int code, const char *err, const char *out,
    enum cb_class cls, const char *type, const char *msg)
{
	struct run_facts f = exited(code, err, out);

	check(desc, NULL, 0, &f, cls, type, msg);
}

static void
norm(const char *in, const char *tmpdir, const char *want)
{
	char d[256], *got = normalize_message(in, tmpdir);

	snprintf(d, sizeof(d), "normalize \"%s\"", want);
	is_str(got, want, d);
	free(got);
}

static void
same_fp(const char *type, const char *a, const char *b, int same,
    const char *desc)
{
	char ha[DIGEST_HEX_LEN + 1], hb[DIGEST_HEX_LEN + 1];

	if (!ok(error_fingerprint(type, a, "/run/user/1000", ha) == 0 &&
	    error_fingerprint(type, b, "/run/user/1000", hb) == 0 &&
	    (strcmp(ha, hb) == 0) == same, desc))
		printf("#   %s\n#   %s\n", a, b);
}

static void
test_digest(void)
{
	char hex[DIGEST_HEX_LEN + 1];
	struct digest *d;

	is_int(digest_hex("abc", 3, hex), 0, "digest_hex(abc)");
	is_str(hex, "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad", "SHA-256(abc)");
	is_int(digest_hex("", 0, hex), 0, "digest_hex(empty)");
	is_str(hex, "e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855", "SHA-256(empty)");
	d = digest_new();
	ok(d != NULL && digest_update(d, "a", 1) == 0 &&
	    digest_update(d, "bc", 2) == 0 && digest_final(d, hex) == 0,
	    "incremental digest");
	is_str(hex, "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad", "incremental = one-shot");
	d = digest_new();
	digest_update(d, "x", 1);
	digest_abort(d);
	digest_abort(NULL);
	ok(1, "digest_abort frees and takes NULL");
	is_int(error_fingerprint("build_error", "foo.c:3:5: error: x", NULL, hex),
	    0, "error_fingerprint");
	is_str(hex, "e2258702a61ebb3336b3b76d03029a85"
	    "7e9da4cc94e844fe382e5a6fc08e8c13",
	    "fingerprint = SHA-256(type NUL normalised message)");
}

static void
test_names(void)
{
	static const char *const names[] = {
		"success", "recoverable", "transient", "timeout", "fatal"
	};
	enum cb_class c;
	size_t i;

	for (i = 0; i < NELEM(names); i++) {
		is_str(class_name((enum cb_class)i), names[i], "class_name");
		ok(class_from_name(names[i], &c) == 0 && c == (enum cb_class)i,
		    "class_from_name round trip");
	}
	is_int(class_from_name("Fatal", &c), -1, "class names are lower-case");
	is_int(class_from_name("bogus", &c), -1, "unknown class rejected");
	is_int(class_from_name(NULL, &c), -1, "NULL class rejected");
	is_str(class_name(CB_CLASS_COUNT), "?", "out-of-range class");
}

static void
test_rules(void)
{
	struct rule r;
	char err[256];
	int codes[] = { 0, 1 };

	is_int(rule_init(&r, "(unclosed", RULE_STDERR, NULL, 0,
	    CB_CLASS_FATAL, "x", err, sizeof(err)), -1, "bad regex rejected");
	ok(strstr(err, "(unclosed") != NULL, "the error names the pattern");
	rule_free(&r);
	is_int(rule_init(&r, "x", 8, NULL, 0, CB_CLASS_FATAL, "x", err,
	    sizeof(err)), -1, "unknown stream bit rejected");
	is_int(rule_init(&r, "x", 0, NULL, 0, CB_CLASS_COUNT, "x", err,
	    sizeof(err)), -1, "bad class rejected");
	is_int(rule_init(&r, "x", 0, NULL, 0, CB_CLASS_FATAL, "", err,
	    sizeof(err)), -1, "empty type rejected");
	is_int(rule_init(&r, "x", 0, NULL, 0, CB_CLASS_FATAL,
	    "a_type_name_that_is_far_too_long_for_the_classification_type_field",
	    err, sizeof(err)), -1, "type over 63 bytes rejected");
	is_int(rule_init(&r, "bad creds", 0, codes, 2, CB_CLASS_FATAL,
	    "bad_credentials", err, sizeof(err)), 0, "good rule compiles");
	is_int(r.streams, RULE_STDERR, "streams default to stderr");
	ok(r.n_exit_codes == 2 && r.exit_codes[1] == 1, "exit codes copied");
	is_str(r.type, "bad_credentials", "type copied");
	rule_free(&r);
	rule_free(&r);
	ok(1, "rule_free twice is harmless");
}

static void
test_exec(void)
{
	struct run_facts f = exited(-1, NULL, NULL);
	char want[256];

	f.command = "nosuch";
	f.exec_errno = ENOENT;
	snprintf(want, sizeof(want), "nosuch: %s", strerror(ENOENT));
	check("exec ENOENT", NULL, 0, &f, CB_CLASS_FATAL, "command_not_found",
	    want);
	f.command = "./script";
	f.exec_errno = EACCES;
	snprintf(want, sizeof(want), "./script: %s", strerror(EACCES));
	check("exec EACCES", NULL, 0, &f, CB_CLASS_FATAL, "permission_denied",
	    want);
	f.exec_errno = ENOEXEC;
	snprintf(want, sizeof(want), "./script: %s", strerror(ENOEXEC));
	check("exec ENOEXEC", NULL, 0, &f, CB_CLASS_FATAL, "permission_denied",
	    want);
}

static void
test_builtins(void)
{
	const char *tb = "Traceback (most recent call last):\n"
	    "  File \"/app/main.py\", line 1, in <module>\n"
	    "    import requests\n"
	    "ModuleNotFoundError: No module named 'requests'\n";
	const char *node = "node:internal/modules/cjs/loader:1080\n"
	    "  throw err;\n  ^\n\n"
	    "Error: Cannot find module 'express'\n"
	    "Require stack:\n- /app/index.js\n";

	expect("success", 0, "warning: something\n", "error: none\n",
	    CB_CLASS_SUCCESS, "", NULL);
	expect("bash command not found + 127", 127,
	    "bash: foo: command not found\n", NULL,
	    CB_CLASS_FATAL, "command_not_found", "bash: foo: command not found");
	expect("exit 127 alone", 127, "", NULL,
	    CB_CLASS_FATAL, "command_not_found", "exited with status 127");
	expect("'command not found' with exit 1", 1,
	    "sh: 1: frob: command not found\n", NULL,
	    CB_CLASS_FATAL, "command_not_found",
	    "sh: 1: frob: command not found");
	expect("exit 126 alone", 126, "", NULL,
	    CB_CLASS_FATAL, "permission_denied", "exited with status 126");
	expect("exit 126 keeps the last stderr line", 126, "oops\n", NULL,
	    CB_CLASS_FATAL, "permission_denied", "oops");
	expect("Permission denied", 1,
	    "cp: cannot create regular file '/etc/x': Permission denied\n",
	    NULL, CB_CLASS_FATAL, "permission_denied",
	    "cp: cannot create regular file '/etc/x': Permission denied");
	expect("EACCES", 1, "Error: EACCES: permission denied, open 'x'\n",
	    NULL, CB_CLASS_FATAL, "permission_denied",
	    "Error: EACCES: permission denied, open 'x'");
	expect("operation not permitted", 1,
	    "chown: changing ownership of 'x': Operation not permitted\n", NULL,
	    CB_CLASS_FATAL, "permission_denied",
	    "chown: changing ownership of 'x': Operation not permitted");
	expect("Python ModuleNotFoundError", 1, tb, NULL, CB_CLASS_FATAL,
	    "missing_dependency",
	    "ModuleNotFoundError: No module named 'requests'");
	expect("Node Cannot find module (not build_error)", 1, node, NULL,
	    CB_CLASS_FATAL, "missing_dependency",
	    "Error: Cannot find module 'express'");
	expect("shared libraries", 127,
	    "./app: error while loading shared libraries: libfoo.so.1: cannot "
	    "open shared object file: No such file or directory\n", NULL,
	    CB_CLASS_FATAL, "command_not_found",
	    "./app: error while loading shared libraries: libfoo.so.1: cannot "
	    "open shared object file: No such file or directory");
	expect("shared libraries, exit 1", 1,
	    "./app: error while loading shared libraries: libfoo.so.1\n", NULL,
	    CB_CLASS_FATAL, "missing_dependency",
	    "./app: error while loading shared libraries: libfoo.so.1");
	expect("pkg-config package not found", 1,
	    "Package libfoo was not found in the pkg-config search path.\n",
	    NULL, CB_CLASS_FATAL, "missing_dependency",
	    "Package libfoo was not found in the pkg-config search path.");
	expect("HTTP 429 body", 1,
	    "HTTP/1.1 429 Too Many Requests\n{\"error\":{\"code\":429}}\n",
	    NULL, CB_CLASS_TRANSIENT, "rate_limited",
	    "HTTP/1.1 429 Too Many Requests");
	expect("JSON code:429 alone", 1,
	    "request failed\n{\"error\":{\"code\":429,\"message\":\"slow "
	    "down\"}}\n", NULL, CB_CLASS_TRANSIENT, "rate_limited",
	    "{\"error\":{\"code\":429,\"message\":\"slow down\"}}");
	expect("429 inside 14290 is not a status", 1, "processed 14290 rows\n",
	    NULL, CB_CLASS_RECOVERABLE, "unknown", "processed 14290 rows");
	expect("line 429 is not a status", 1,
	    "  File \"x.py\", line 429, in f\nValueError: bad value\n", NULL,
	    CB_CLASS_RECOVERABLE, "runtime_error", "ValueError: bad value");
	expect("file:429 is not a status", 1, "x.c:429:1: warning: w\n", NULL,
	    CB_CLASS_RECOVERABLE, "unknown", "x.c:429:1: warning: w");
	expect("1,429 is not a status", 1, "spent 1,429 tokens\n", NULL,
	    CB_CLASS_RECOVERABLE, "unknown", "spent 1,429 tokens");
	expect("Claude usage limit", 1,
	    "Claude AI usage limit reached|1700000000\n", NULL,
	    CB_CLASS_TRANSIENT, "usage_limit",
	    "Claude AI usage limit reached|1700000000");
	expect("overloaded_error", 1,
	    "API Error: {\"type\":\"error\",\"error\":{\"type\":"
	    "\"overloaded_error\",\"message\":\"Overloaded\"}}\n", NULL,
	    CB_CLASS_TRANSIENT, "overloaded",
	    "API Error: {\"type\":\"error\",\"error\":{\"type\":"
	    "\"overloaded_error\",\"message\":\"Overloaded\"}}");
	expect("rate_limit_error", 1, "anthropic: rate_limit_error\n", NULL,
	    CB_CLASS_TRANSIENT, "rate_limited", "anthropic: rate_limit_error");
	expect("quota exceeded", 1, "Error: Quota exceeded for model\n", NULL,
	    CB_CLASS_TRANSIENT, "rate_limited", "Error: Quota exceeded for model");
	expect("503 Service Unavailable", 1, "curl: (22) The requested URL "
	    "returned error: 503\n", NULL, CB_CLASS_TRANSIENT, "overloaded",
	    "curl: (22) The requested URL returned error: 503");
	expect("503 status line", 1, "<< 503 Service Unavailable\n", NULL,
	    CB_CLASS_TRANSIENT, "overloaded", "<< 503 Service Unavailable");
	expect("ECONNRESET", 1, "Error: read ECONNRESET\n    at TCP.onStreamRead\n",
	    NULL, CB_CLASS_TRANSIENT, "network", "Error: read ECONNRESET");
	expect("Connection refused", 1,
	    "curl: (7) Failed to connect to localhost port 80: Connection "
	    "refused\n", NULL, CB_CLASS_TRANSIENT, "network",
	    "curl: (7) Failed to connect to localhost port 80: Connection "
	    "refused");
	expect("name resolution", 1, "ssh: Could not resolve hostname x: "
	    "Temporary failure in name resolution\n", NULL, CB_CLASS_TRANSIENT,
	    "network", "ssh: Could not resolve hostname x: Temporary failure in "
	    "name resolution");
	expect("SyntaxError", 1, "/app/x.js:3\n  foo(;\n      ^\n\n"
	    "SyntaxError: Unexpected token ';'\n", NULL, CB_CLASS_RECOVERABLE,
	    "syntax_error", "SyntaxError: Unexpected token ';'");
	expect("bash syntax error", 2,
	    "x.sh: line 3: syntax error near unexpected token `fi'\n", NULL,
	    CB_CLASS_RECOVERABLE, "syntax_error",
	    "x.sh: line 3: syntax error near unexpected token `fi'");
	expect("AssertionError", 1, "Traceback (most recent call last):\n"
	    "AssertionError: 1 != 2\n", NULL, CB_CLASS_RECOVERABLE,
	    "test_failure", "AssertionError: 1 != 2");
	expect("FAILED on stderr", 1, "FAILED (failures=2)\n", NULL,
	    CB_CLASS_RECOVERABLE, "test_failure", "FAILED (failures=2)");
	expect("tests failed", 1, "3 tests failed\n", NULL,
	    CB_CLASS_RECOVERABLE, "test_failure", "3 tests failed");
	expect("TAP not ok on stderr", 1, "ok 1\nnot ok 2 - y\n", NULL,
	    CB_CLASS_RECOVERABLE, "test_failure", "not ok 2 - y");
	expect("gcc error", 1, "foo.c: In function 'main':\n"
	    "foo.c:3:5: error: expected ';' before 'return'\n"
	    "make: *** [Makefile:3: all] Error 1\n", NULL,
	    CB_CLASS_RECOVERABLE, "build_error",
	    "foo.c:3:5: error: expected ';' before 'return'");
	expect("ld undefined reference", 1,
	    "/usr/bin/ld: main.o: in function `main':\n"
	    "main.c:(.text+0x9): undefined reference to `bar'\n"
	    "collect2: ld returned 1 exit status\n", NULL,
	    CB_CLASS_RECOVERABLE, "build_error",
	    "main.c:(.text+0x9): undefined reference to `bar'");
	expect("make ***", 2, "make: *** [Makefile:3: all] Error 1\n", NULL,
	    CB_CLASS_RECOVERABLE, "build_error",
	    "make: *** [Makefile:3: all] Error 1");
	expect("build failed is not a test failure", 1, "Build failed.\n", NULL,
	    CB_CLASS_RECOVERABLE, "build_error", "Build failed.");
	expect("rustc error[E0308]", 1, "error[E0308]: mismatched types\n",
	    NULL, CB_CLASS_RECOVERABLE, "build_error",
	    "error[E0308]: mismatched types");
	expect("unknown: last stderr line", 3, "first\nsecond\n\n  \n", NULL,
	    CB_CLASS_RECOVERABLE, "unknown", "second");
	expect("unknown: no stderr", 3, "", NULL,
	    CB_CLASS_RECOVERABLE, "unknown", "exited with status 3");
	expect("row order beats line order", 1,
	    "foo.c:1: error: x\nbash: y: command not found\n", NULL,
	    CB_CLASS_FATAL, "command_not_found", "bash: y: command not found");
}

static void
test_stdout(void)
{
	expect("pytest summary on stdout", 1, "",
	    "collected 3 items\n\ntest_x.py F..\n"
	    "===== 1 failed, 2 passed in 0.1s =====\n",
	    CB_CLASS_RECOVERABLE, "test_failure",
	    "===== 1 failed, 2 passed in 0.1s =====");
	expect("jest summary on stdout", 1, "",
	    "Tests:       1 failed, 3 total\n", CB_CLASS_RECOVERABLE,
	    "test_failure", "Tests:       1 failed, 3 total");
	expect("TAP not ok on stdout", 1, NULL, "1..3\nok 1\nok 2\nnot ok 3 - x\n",
	    CB_CLASS_RECOVERABLE, "test_failure", "not ok 3 - x");
	expect("prove Result: FAIL on stdout", 1, NULL,
	    "t/a.t .. ok\nFiles=1, Tests=3\nResult: FAIL\n",
	    CB_CLASS_RECOVERABLE, "test_failure", "Result: FAIL");
	expect("pytest FAILED line on stdout", 1, NULL,
	    "FAILED tests/test_x.py::test_a - assert 1 == 2\n",
	    CB_CLASS_RECOVERABLE, "test_failure",
	    "FAILED tests/test_x.py::test_a - assert 1 == 2");
	expect("make *** on stdout", 2, NULL,
	    "cc -c x.c\nmake: *** [Makefile:3: all] Error 1\n",
	    CB_CLASS_RECOVERABLE, "build_error",
	    "make: *** [Makefile:3: all] Error 1");
	expect("file:line: error: on stdout", 1, NULL,
	    "x.c:3:5: error: expected ';'\n", CB_CLASS_RECOVERABLE,
	    "build_error", "x.c:3:5: error: expected ';'");
	expect("error[E0308]: on stdout", 101, NULL,
	    "error[E0308]: mismatched types\n", CB_CLASS_RECOVERABLE,
	    "build_error", "error[E0308]: mismatched types");
	expect("stdout cannot fail an exit-0 run", 0, "",
	    "{\"is_error\": false, \"result\": \"error: none\"}\n",
	    CB_CLASS_SUCCESS, "", NULL);
	expect("stdout cannot fail an exit-0 run (Result: FAIL)", 0, "",
	    "Result: FAIL\nnot ok 1\n", CB_CLASS_SUCCESS, "", NULL);
	expect("unanchored stdout error: stays unknown", 1, "",
	    "{\"is_error\": false, \"result\": \"fixed the error: in x\"}\n",
	    CB_CLASS_RECOVERABLE, "unknown", "exited with status 1");
	expect("stdout words only match anchored", 1, "agent stopped\n",
	    "I will check why 2 tests failed and the build failed\n",
	    CB_CLASS_RECOVERABLE, "unknown", "agent stopped");
	expect("stdout 'failed' at line start is not FAILED", 1, "",
	    "failed to do x\n", CB_CLASS_RECOVERABLE, "unknown",
	    "exited with status 1");
	expect("stderr row beats stdout", 1, "SyntaxError: bad\n",
	    "Result: FAIL\n", CB_CLASS_RECOVERABLE, "syntax_error",
	    "SyntaxError: bad");
	expect("test_failure beats build_error on stdout", 1, "",
	    "make: *** [test] Error 1\nnot ok 1\n", CB_CLASS_RECOVERABLE,
	    "test_failure", "not ok 1");
}

static void
test_user_rules(void)
{
	struct rule r[4];
	char err[256];
	int zero[] = { 0 }, one[] = { 1 };
	struct run_facts f;

	is_int(rule_init(&r[0], "\"is_error\": *true", RULE_STDOUT, zero, 1,
	    CB_CLASS_RECOVERABLE, "agent_error", err, sizeof(err)), 0,
	    "is_error rule");
	is_int(rule_init(&r[1], "invalid api key", RULE_STDERR | RULE_STDOUT,
	    NULL, 0, CB_CLASS_FATAL, "bad_credentials", err, sizeof(err)), 0,
	    "credentials rule");
	is_int(rule_init(&r[2], "flaky", 0, one, 1, CB_CLASS_SUCCESS,
	    "ignored", err, sizeof(err)), 0, "success rule");
	is_int(rule_init(&r[3], "invalid api key", RULE_STDOUT, NULL, 0,
	    CB_CLASS_FATAL, "bad_credentials", err, sizeof(err)), 0,
	    "stdout-only rule");

	f = exited(0, "", "{\"type\":\"result\",\"is_error\": true,"
	    "\"result\":\"API Error\"}\n");
	check("exit-0 rule turns success into error", r, 3, &f,
	    CB_CLASS_RECOVERABLE, "agent_error",
	    "{\"type\":\"result\",\"is_error\": true,\"result\":\"API Error\"}");
	f = exited(0, "", "{\"is_error\": false}\n");
	check("exit-0 rule that does not match", r, 3, &f,
	    CB_CLASS_SUCCESS, "", NULL);
	f = exited(1, "", "{\"is_error\": true}\n");
	check("exit-list rule ignores other codes", r, 1, &f,
	    CB_CLASS_RECOVERABLE, "unknown", "exited with status 1");
	f = exited(1, "Error: Invalid API key\n", NULL);
	check("user rule beats built-in", r, 3, &f, CB_CLASS_FATAL,
	    "bad_credentials", "Error: Invalid API key");
	f = exited(1, "", "Invalid API key\n");
	check("user rule on stdout", r, 3, &f, CB_CLASS_FATAL,
	    "bad_credentials", "Invalid API key");
	f = exited(0, "invalid api key\n", NULL);
	check("rule without exit list skips ok runs", r, 3, &f,
	    CB_CLASS_SUCCESS, "", NULL);
	f = exited(1, "flaky network test\n", NULL);
	check("rule may classify as success", r, 3, &f,
	    CB_CLASS_SUCCESS, "", NULL);
	f = exited(1, "", "Invalid API key\n");
	f.timed_out = 1;
	check("rules see a timed-out run before the timeout row", r, 3, &f,
	    CB_CLASS_FATAL, "bad_credentials", "Invalid API key");
	f = exited(1, "Invalid API key\n", NULL);
	check("rule only on stdout ignores stderr", r + 3, 1, &f,
	    CB_CLASS_FATAL, "auth", "Invalid API key");
	f = exited(1, "", "Invalid API key\n");
	check("stdout-only rule matches stdout", r + 3, 1, &f,
	    CB_CLASS_FATAL, "bad_credentials", "Invalid API key");
	f = exited(1, "Invalid API key\n", NULL);
	check("stdout rule with stdout not captured", r + 3, 1, &f,
	    CB_CLASS_FATAL, "auth", "Invalid API key");
	rule_free(&r[3]);
	rule_free(&r[0]);
	rule_free(&r[1]);
	rule_free(&r[2]);
}

static void
test_ok_codes(void)
{
	struct run_facts f;
	int codes[] = { 0, 75 };

	f = exited(75, "nothing to do\n", NULL);
	f.ok_codes = codes;
	f.n_ok_codes = 2;
	check("--ok-exit-codes 0,75: 75 is success", NULL, 0, &f,
	    CB_CLASS_SUCCESS, "", NULL);
	f.exit_code = 1;
	check("--ok-exit-codes 0,75: 1 fails", NULL, 0, &f,
	    CB_CLASS_RECOVERABLE, "unknown", "nothing to do");
	f = exited(0, "", NULL);
	f.ok_codes = codes + 1;
	f.n_ok_codes = 1;
	check("--ok-exit-codes 75: 0 fails", NULL, 0, &f,
	    CB_CLASS_RECOVERABLE, "unknown", "exited with status 0");
}

static void
test_signals(void)
{
	struct run_facts f;

	f = signalled(SIGTERM, 1, 1, "working...\nstill working\n");
	check("timeout: last stderr line", NULL, 0, &f, CB_CLASS_TIMEOUT,
	    "timeout", "still working");
	f = signalled(SIGKILL, 1, 1, "");
	check("timeout: no stderr", NULL, 0, &f, CB_CLASS_TIMEOUT, "timeout",
	    "timed out");
	f = exited(0, "error: x\n", NULL);
	f.timed_out = 1;
	check("timeout even when the child exited 0 on SIGTERM", NULL, 0, &f,
	    CB_CLASS_TIMEOUT, "timeout", "error: x");
	f = signalled(SIGSEGV, 0, 0, "");
	check("SIGSEGV not sent by us", NULL, 0, &f, CB_CLASS_RECOVERABLE,
	    "killed", "killed by signal SIGSEGV");
	f = signalled(SIGKILL, 0, 0, "loading\n");
	check("SIGKILL (OOM killer): stderr's last line is the message", NULL,
	    0, &f, CB_CLASS_RECOVERABLE, "killed", "loading");
	f = signalled(SIGKILL, 0, 0, "\n  \n");
	check("SIGKILL with a blank stderr: the signal is the message", NULL,
	    0, &f, CB_CLASS_RECOVERABLE, "killed", "killed by signal SIGKILL");
	f = signalled(SIGABRT, 0, 0, "x.c:3: error: assertion\n");
	check("a stderr row beats killed", NULL, 0, &f, CB_CLASS_RECOVERABLE,
	    "build_error", "x.c:3: error: assertion");
	f = signalled(SIGTERM, 1, 0, "");
	check("our signal without timeout is unknown", NULL, 0, &f,
	    CB_CLASS_RECOVERABLE, "unknown", "killed by signal SIGTERM");
	f = signalled(SIGRTMIN + 2, 0, 0, "");
	check("real-time signal", NULL, 0, &f, CB_CLASS_RECOVERABLE,
	    "killed", "killed by signal SIGRTMIN+2");
	f = exited(0, "", "not ok 1\n");
	f.signo = SIGSEGV;
	f.exit_code = -1;
	check("stdout is not read for a signal death", NULL, 0, &f,
	    CB_CLASS_RECOVERABLE, "killed", "killed by signal SIGSEGV");
}

static void
test_messages(void)
{
	static const char nul[] = "bad\0bytes\xff\xfe here\nerror: \xc3\x28 x\n";
	struct run_facts f;
	struct classification c;
	char *big, *s;
	size_t i, n = 64 * 1024;

	expect("first matching line wins", 1,
	    "a.c:1: error: one\nb.c:2: error: two\n", NULL,
	    CB_CLASS_RECOVERABLE, "build_error", "a.c:1: error: one");
	expect("trailing CR and blanks trimmed", 1,
	    "  SyntaxError: spaced out \t\r\n", NULL, CB_CLASS_RECOVERABLE,
	    "syntax_error", "SyntaxError: spaced out");
	expect("whitespace-only lines are never the message", 1,
	    "real line\n \t \n\r\n   \n", NULL, CB_CLASS_RECOVERABLE,
	    "unknown", "real line");
	expect("a line of only escapes is blank", 1,
	    "real line\n\033[0m\n", NULL, CB_CLASS_RECOVERABLE,
	    "unknown", "real line");
	expect("ANSI kept raw in the message, matched through", 1,
	    "\033[1m\033[31merror\033[0m: mismatched types\n", NULL,
	    CB_CLASS_RECOVERABLE, "build_error",
	    "\033[1m\033[31merror\033[0m: mismatched types");
	expect("progress bar CRs split lines", 1,
	    "10%\r50%\rSyntaxError: x\r\n", NULL,
	    CB_CLASS_RECOVERABLE, "syntax_error", "SyntaxError: x");
	expect("no trailing newline", 1, "last words", NULL,
	    CB_CLASS_RECOVERABLE, "unknown", "last words");

	f = exited(1, nul, NULL);
	f.err_len = sizeof(nul) - 1;
	check("NULs dropped, bad UTF-8 replaced", NULL, 0, &f,
	    CB_CLASS_RECOVERABLE, "build_error", "error: \xef\xbf\xbd( x");

	/* 64 KiB of lines, the match near the end, and one huge line */
	big = malloc(n + 1);
	for (i = 0; i < n; i++)
		big[i] = i % 64 == 63 ? '\n' : (char)('a' + i % 26);
	memcpy(big + n - 40, "\nTests: 2 failed\n", 17);
	big[n] = '\0';
	expect("64 KiB of lines", 1, big, NULL, CB_CLASS_RECOVERABLE,
	    "test_failure", "Tests: 2 failed");
	memset(big, 'e', n);
	memcpy(big + n - 10, "TypeError", 9);
	f = exited(1, big, NULL);
	ok(classify(NULL, 0, &f, &c) == 0 && c.message != NULL &&
	    strlen(c.message) <= 4096 && strcmp(c.type, "runtime_error") == 0,
	    "one 64 KiB line: matched, message capped at 4 KiB");
	classification_free(&c);
	for (i = 0; i < n; i++)
		big[i] = (char)(0x80 + i % 128);
	f = exited(1, big, big);
	ok(classify(NULL, 0, &f, &c) == 0 && c.message != NULL,
	    "64 KiB of invalid UTF-8 classifies");
	classification_free(&c);
	free(big);

	s = utf8_sanitize("a\0b\xe2\x82\xac\xf0\x9f\x98\x80", 10);
	is_str(s, "ab\xe2\x82\xac\xf0\x9f\x98\x80", "valid UTF-8 kept, NUL dropped");
	free(s);
	s = utf8_sanitize("\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82", 14);
	is_str(s, "\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd",
	    "overlong, surrogate, >U+10FFFF, truncated -> U+FFFD");
	free(s);
	s = utf8_sanitize(NULL, 0);
	is_str(s, "", "utf8_sanitize(NULL, 0)");
	free(s);
}

static void
test_normalize(void)
{
	norm("\033[1;31merror\033[0m: x", NULL, "error: x");
	norm("\033]0;window title\007after", NULL, "after");
	norm("\033]8;;http://x/\033\\link\033]8;;\033\\ text", NULL, "link text");
	norm("\033(Bplain\033[K", NULL, "plain");
	norm("at 2026-11-22T01:02:03.456Z failed", NULL, "at <TS> failed");
	norm("2026-11-22 01:02:03 ERROR x", NULL, "<TS> ERROR x");
	norm("[2026-11-22T01:02:03+05:30]", NULL, "[<TS>]");
	norm("2026-11-22T01:02:03-0500 x", NULL, "<TS> x");
	norm("2026-11-22 01:02:03,123 WARNING", NULL, "<TS> WARNING");
	norm("since 2026-11-22T01:02", NULL, "since <TS>");
	norm("date 2026-11-22 only", NULL, "date N-N-N only");
	norm("req 550e8400-e29b-41d4-a716-446655440000 gone", NULL,
	    "req <UUID> gone");
	norm("REQ 550E8400-E29B-41D4-A716-446655440000.", NULL, "REQ <UUID>.");
	norm("at 0x7ffd5e8a1c20 in f", NULL, "at <HEX> in f");
	norm("0XDEADBEEF, 0x1", NULL, "<HEX>, <HEX>");
	norm("commit 3f2a9c1e7b", NULL, "commit <HEX>");
	norm("deadbeef facade", NULL, "deadbeef facade");
	norm("abc1234 short", NULL, "abcN short");
	norm("x0x12 not hex", NULL, "xNxN not hex");
	norm("/tmp/tmp.a8f3/x.c:3: error: y", NULL, "<TMP>:N: error: y");
	norm("open '/var/tmp/cache file'", NULL, "open '<TMP> file'");
	norm("(/tmp/a),/tmp/b;", NULL, "(<TMP>),<TMP>;");
	norm("/scratch/job42/out.txt missing", "/scratch/job42/",
	    "<TMP> missing");
	norm("/scratch/job42/out.txt missing", NULL, "/scratch/jobN/out.txt missing");
	norm("/scratch/a1b2c3d4e5f6/f", "/scratch/a1b2c3d4e5f6", "<TMP>");
	norm("/home/u/tmp/x and /tmpfoo", NULL, "/home/u/tmp/x and /tmpfoo");
	norm("/tmp/<x>/y z", NULL, "<TMP> z");
	norm("line 42 col 7 pid 31337", NULL, "line N col N pid N");
	norm("  a \t b\n\r c  ", NULL, "a b c");
	norm("", NULL, "");
	norm(NULL, NULL, "");
	norm("\033[31m2026-11-22T01:02:03.456Z\033[0m ERROR [pid 12345] request "
	    "550e8400-e29b-41d4-a716-446655440000 failed at 0x7ffd5e8a1c20 "
	    "reading /tmp/pytest-of-u/pytest-7/data.json:  timeout after 30s",
	    "/run/user/1000",
	    "<TS> ERROR [pid N] request <UUID> failed at <HEX> reading <TMP>: "
	    "timeout after Ns");

	same_fp("build_error", "2026-11-22T01:02:03Z x.c:12: error: boom",
	    "2026-12-01T09:09:09Z x.c:99: error: boom", 1,
	    "different time and line: same fingerprint");
	same_fp("unknown", "segfault at 0x7ffd5e8a1c20 pid 123",
	    "segfault at 0x55d0e8a1c2ff pid 4567", 1,
	    "different address and pid: same fingerprint");
	same_fp("unknown", "cannot read /tmp/tmp.XYZ12/f",
	    "cannot read /run/user/1000/other", 1,
	    "different temp paths: same fingerprint");
	same_fp("unknown", "\033[31mboom\033[0m   now", "boom now", 1,
	    "colour and spacing: same fingerprint");
	same_fp("build_error", "x.c:1: error: boom", "x.c:1: error: bang", 0,
	    "different error: different fingerprint");
	same_fp("unknown", "a/tmp/x", "a/tmp/y", 0,
	    "not a temp path: different fingerprint");
}

int
main(void)
{
	/* classify() compiles a pattern when it is first needed: a typo in
	 * one would only show on the run that reaches it. */
	ok(classify_compile_all() == 0, "every built-in pattern compiles");
	test_digest();
	test_names();
	test_rules();
	test_exec();
	test_builtins();
	test_stdout();
	test_user_rules();
	test_ok_codes();
	test_signals();
	test_messages();
	test_normalize();
	return done_testing();
}
