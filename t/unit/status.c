/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for the status parser (SPEC §3.2): blocks on stdout fed to the
 * streaming scanner in every possible split, blocks inside a JSON string,
 * truncated, oversized and binary input, and the status file's text.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "judge.h"

static const char claude[] =
    "{\"type\":\"result\",\"result\":\"Done.\\n\\n---RALPH_STATUS---\\n"
    "STATUS: COMPLETE\\nEXIT_SIGNAL: true\\n---END_RALPH_STATUS---\\n\","
    "\"is_error\":false}\n";

static const char plain[] =
    "Working on it.\n"
    "---CBEXEC_STATUS---\n"
    "STATUS: IN_PROGRESS\n"
    "TASK: 2.3-login-form\n"
    "TASKS_COMPLETED_THIS_LOOP: 1\n"
    "FILES_MODIFIED: 3\n"
    "TESTS_STATUS: FAILING\n"
    "TESTS_PASSING: 7\n"
    "TESTS_FAILING: 3\n"
    "EXIT_SIGNAL: false\n"
    "RECOMMENDATION: fix the validator next\n"
    "---END_CBEXEC_STATUS---\n"
    "bye\n";

/* Feed p in chunks of at most chunk bytes; a fresh report in *r. */
static int
scan(const char *p, size_t n, size_t chunk, struct status_report *r)
{
	struct status_scanner *s = status_scanner_new();
	size_t k;
	int found;

	status_init(r);
	for (; n > 0; p += k, n -= k) {
		k = n < chunk ? n : chunk;
		status_scanner_feed(s, p, k);
	}
	found = status_scanner_result(s, r);
	status_scanner_free(s);
	return found;
}

/* The same, split into two feeds at off. */
static int
scan2(const char *p, size_t n, size_t off, struct status_report *r)
{
	struct status_scanner *s = status_scanner_new();
	int found;

	status_init(r);
	status_scanner_feed(s, p, off);
	status_scanner_feed(s, p + off, n - off);
	found = status_scanner_result(s, r);
	status_scanner_free(s);
	return found;
}

static double
metric(const struct status_report *r, const char *key)
{
	double v;

	return status_metric(r, key, &v) ? v : -999;
}

static int
is_plain(const struct status_report *r)
{
	return r->present && r->status == RS_IN_PROGRESS &&
	    r->exit_signal == 0 && r->task != NULL &&
	    strcmp(r->task, "2.3-login-form") == 0 && r->tests_status &&
	    strcmp(r->tests_status, "FAILING") == 0 && r->recommendation &&
	    strcmp(r->recommendation, "fix the validator next") == 0 &&
	    metric(r, "tests_passing") == 7 && metric(r, "tests_failing") == 3 &&
	    metric(r, "files_modified") == 3 &&
	    metric(r, "tasks_completed") == 1 && r->warning[0] == '\0';
}

static int
is_claude(const struct status_report *r)
{
	return r->present && r->status == RS_COMPLETE && r->exit_signal == 1 &&
	    status_done(r) && r->warning[0] == '\0';
}

static void
test_plain(void)
{
	struct status_report r;

	is_int(scan(plain, strlen(plain), 4096, &r), 1, "plain block found");
	ok(is_plain(&r), "plain block: every field parsed");
	is_str(r.task, "2.3-login-form", "TASK");
	is_int(r.status, RS_IN_PROGRESS, "STATUS IN_PROGRESS");
	is_int(r.exit_signal, 0, "EXIT_SIGNAL false");
	is_int((long long)metric(&r, "tasks_completed_this_loop"), 1,
	    "TASKS_COMPLETED_THIS_LOOP kept under its own name too");
	is_int(status_done(&r), 0, "IN_PROGRESS is not done");
	status_free(&r);
	status_free(&r);
	ok(r.task == NULL && r.n_metrics == 0, "status_free resets");
}

static void
test_variants(void)
{
	struct status_report r;
	const char *t;
	double v;

	t = "---RALPH_STATUS---\nSTATUS: COMPLETE\n---END_RALPH_STATUS---\n";
	is_int(scan(t, strlen(t), 4096, &r), 1, "RALPH markers");
	is_int(r.status, RS_COMPLETE, "RALPH: COMPLETE");
	is_int(r.exit_signal, -1, "RALPH: EXIT_SIGNAL unset");
	is_int(status_done(&r), 1, "COMPLETE alone is done");
	status_free(&r);

	t = "---CBEXEC_STATUS---\nSTATUS: BLOCKED\n---END_RALPH_STATUS---\n";
	is_int(scan(t, strlen(t), 4096, &r), 1, "END_RALPH closes CBEXEC");
	is_int(r.status, RS_BLOCKED, "BLOCKED");
	is_int(status_done(&r), 0, "BLOCKED is not done");
	status_free(&r);

	t = "---CBEXEC_STATUS---\nStatus: complete\nexit_Signal: FALSE\n"
	    "Task: a\ntests_passing:4\n---END_CBEXEC_STATUS---\n";
	is_int(scan(t, strlen(t), 4096, &r), 1, "mixed case keys");
	is_int(r.status, RS_COMPLETE, "mixed case: status");
	is_int(r.exit_signal, 0, "mixed case: exit_signal");
	is_str(r.task, "a", "mixed case: task");
	is_int((long long)metric(&r, "tests_passing"), 4,
	    "mixed case: metric lower-cased");
	is_int(status_done(&r), 0, "EXIT_SIGNAL false beats COMPLETE");
	status_free(&r);

	t = "---CBEXEC_STATUS---\nSTATUS=COMPLETE\n  TASK = x y  \n"
	    "EXIT_SIGNAL=yes\nRECOMMENDATION: a=b: c\n---END_CBEXEC_STATUS---";
	is_int(scan(t, strlen(t), 4096, &r), 1, "KEY=value");
	is_int(r.status, RS_COMPLETE, "KEY=value: status");
	is_str(r.task, "x y", "KEY=value: value trimmed");
	is_int(r.exit_signal, 1, "EXIT_SIGNAL yes");
	is_str(r.recommendation, "a=b: c", "first separator splits");
	status_free(&r);

	t = "---CBEXEC_STATUS---\nEXIT_SIGNAL: true\n---END_CBEXEC_STATUS---";
	scan(t, strlen(t), 4096, &r);
	is_int(status_done(&r), 1, "EXIT_SIGNAL true alone is done");
	status_free(&r);

	t = "---CBEXEC_STATUS---\nSTATUS: COMPLETE\nTASK: first\n"
	    "---END_CBEXEC_STATUS---\nmore output\n"
	    "---CBEXEC_STATUS---\nSTATUS: IN_PROGRESS\nTASK: second\n"
	    "---END_CBEXEC_STATUS---\n";
	is_int(scan(t, strlen(t), 4096, &r), 1, "two blocks");
	is_str(r.task, "second", "last block wins: task");
	is_int(r.status, RS_IN_PROGRESS, "last block wins: status");
	status_free(&r);

	t = "---CBEXEC_STATUS---\nTASKS_COMPLETED_THIS_LOOP: 2\n"
	    "PATTERN_APPLIED=1\ncomplexity_score: -2.5\nflaky: TRUE\n"
	    "clean: false\nratio: +.5\nversion: 1.2.3\ncount: 7 tests\n"
	    "hex: 0x10\nnote: hello\n---END_CBEXEC_STATUS---\n";
	is_int(scan(t, strlen(t), 4096, &r), 1, "metrics block");
	is_int((long long)metric(&r, "tasks_completed"), 2,
	    "tasks_completed alias");
	is_int((long long)metric(&r, "pattern_applied"), 1, "unknown key kept");
	ok(metric(&r, "complexity_score") == -2.5, "negative fraction");
	is_int((long long)metric(&r, "flaky"), 1, "true is 1");
	is_int((long long)metric(&r, "clean"), 0, "false is 0");
	ok(metric(&r, "ratio") == 0.5, "sign and bare fraction");
	is_int(status_metric(&r, "version", &v), 0, "1.2.3 is no number");
	is_int(status_metric(&r, "count", &v), 0, "trailing junk: no number");
	is_int(status_metric(&r, "hex", &v), 0, "hex is no number");
	is_int(status_metric(&r, "note", &v), 0, "text ignored");
	is_int(status_metric(&r, "nope", &v), 0, "missing metric");
	is_int(r.status, RS_NONE, "no STATUS key: RS_NONE");
	status_free(&r);

	t = "---CBEXEC_STATUS---\nSTATUS: DONE\nthis line has no key\n"
	    "TASK: t\n---END_CBEXEC_STATUS---\n";
	is_int(scan(t, strlen(t), 4096, &r), 1, "malformed lines tolerated");
	is_int(r.status, RS_NONE, "unknown STATUS value: RS_NONE");
	ok(strstr(r.warning, "STATUS") != NULL, "unknown STATUS warned");
	is_str(r.task, "t", "keys after a bad line still parsed");
	status_free(&r);

	t = "---CBEXEC_STATUS---\n- **STATUS**: COMPLETE\n**TASK:** 4\n"
	    "```\n---END_CBEXEC_STATUS---\n";
	is_int(scan(t, strlen(t), 4096, &r), 1, "markdown block");
	is_int(r.status, RS_COMPLETE, "markdown: bold key and bullet");
	is_str(r.task, "4", "markdown: bold key with colon inside");
	status_free(&r);

	t = "---CBEXEC_STATUS---\r\nSTATUS: COMPLETE\r\nTASK: crlf\r\n"
	    "TESTS_PASSING: 5\r\n---END_CBEXEC_STATUS---\r\n";
	is_int(scan(t, strlen(t), 4096, &r), 1, "CRLF block");
	is_int(r.status, RS_COMPLETE, "CRLF: status");
	is_str(r.task, "crlf", "CRLF: no CR in value");
	is_int((long long)metric(&r, "tests_passing"), 5, "CRLF: metric");
	is_str(r.warning, "", "CRLF: no warning");
	status_free(&r);
}

static void
test_prose(void)
{
	struct status_report r;
	const char *t;

	t = "I will print ---CBEXEC_STATUS--- at the end, like this:\n"
	    "---CBEXEC_STATUS---\nTASK: real\n---END_CBEXEC_STATUS---\n";
	is_int(scan(t, strlen(t), 4096, &r), 1, "marker in prose, then block");
	is_str(r.task, "real", "a new start marker restarts the block");
	is_str(r.warning, "", "a restart is no warning");
	status_free(&r);

	t = "---CBEXEC_STATUS---\nTASK: real\n---END_CBEXEC_STATUS---\n"
	    "the ---RALPH_STATUS--- block ends with ---END_RALPH_STATUS---.\n"
	    "echo ---CBEXEC_STATUS---; echo ---END_CBEXEC_STATUS---\n";
	is_int(scan(t, strlen(t), 4096, &r), 1, "block, then prose markers");
	is_str(r.task, "real", "a block without keys does not win");
	ok(r.warning[0] != '\0', "the ignored block is warned about");
	status_free(&r);

	t = "---END_CBEXEC_STATUS---\n---CBEXEC_STATUS---\nTASK: x\n"
	    "---END_CBEXEC_STATUS---\n---END_CBEXEC_STATUS---\n";
	is_int(scan(t, strlen(t), 4096, &r), 1, "stray end markers ignored");
	is_str(r.task, "x", "stray end markers: block kept");
	status_free(&r);
}

static void
test_splits(void)
{
	struct status_report r;
	size_t n = strlen(plain), off, bad = 0;

	for (off = 0; off <= n; off++) {
		if (scan2(plain, n, off, &r) != 1 || !is_plain(&r))
			bad++;
		status_free(&r);
	}
	is_int(bad, 0, "plain block split into two feeds at every offset");
	is_int(scan(plain, n, 1, &r), 1, "plain block fed byte by byte");
	ok(is_plain(&r), "byte by byte: every field parsed");
	status_free(&r);
	for (bad = 0, off = 2; off < 40; off++) {
		if (scan(plain, n, off, &r) != 1 || !is_plain(&r))
			bad++;
		status_free(&r);
	}
	is_int(bad, 0, "plain block in chunks of 2..39 bytes");
}

static void
test_json(void)
{
	struct status_report r;
	size_t n = strlen(claude), off, bad = 0;
	const char *t;

	is_int(scan(claude, n, 4096, &r), 1, "claude -p json: found");
	ok(is_claude(&r), "claude -p json: COMPLETE, EXIT_SIGNAL true");
	status_free(&r);
	for (off = 0; off <= n; off++) {
		if (scan2(claude, n, off, &r) != 1 || !is_claude(&r))
			bad++;
		status_free(&r);
	}
	is_int(bad, 0, "claude json split into two feeds at every offset");
	is_int(scan(claude, n, 1, &r), 1, "claude json fed byte by byte");
	ok(is_claude(&r), "byte by byte: parsed");
	status_free(&r);

	t = "{\"result\":\"---CBEXEC_STATUS---\\r\\nTASK: \\\"q\\\" a\\\\b\\t"
	    "\\u00e9\\ud83d\\ude00\\r\\nTESTS_PASSING: 3\\r\\n"
	    "---END_CBEXEC_STATUS---\"}";
	is_int(scan(t, strlen(t), 4096, &r), 1, "escaped CRLF, quotes");
	is_str(r.task, "\"q\" a\\b\t\xc3\xa9\xf0\x9f\x98\x80",
	    "JSON escapes undone in values");
	is_int((long long)metric(&r, "tests_passing"), 3, "escaped: metric");
	status_free(&r);

	t = "{\"input\":{\"command\":\"echo \\\"---CBEXEC_STATUS---\\\\n"
	    "STATUS: BLOCKED\\\\n---END_CBEXEC_STATUS---\\\"\"}}";
	is_int(scan(t, strlen(t), 4096, &r), 1, "doubly escaped block");
	is_int(r.status, RS_BLOCKED, "doubly escaped: status");
	status_free(&r);

	t = "---CBEXEC_STATUS---\nTASK: C:\\new\\dir\n---END_CBEXEC_STATUS---";
	scan(t, strlen(t), 4096, &r);
	is_str(r.task, "C:\\new\\dir", "real newlines: backslashes kept");
	status_free(&r);
}

static void
test_truncated(void)
{
	struct status_report r;
	const char *t;

	t = "---CBEXEC_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n";
	is_int(scan(t, strlen(t), 4096, &r), 0, "truncated block not used");
	is_int(r.present, 0, "truncated: not present");
	is_int(status_done(&r), 0, "truncated: not done");
	ok(strstr(r.warning, "unterminated status block") != NULL,
	    "truncated: warning");
	status_free(&r);

	t = "---CBEXEC_STATUS---\nTASK: a\n---END_CBEXEC_STATUS---\n"
	    "---CBEXEC_STATUS---\nTASK: b\n";
	is_int(scan(t, strlen(t), 4096, &r), 1, "complete then truncated");
	is_str(r.task, "a", "the complete block is kept");
	ok(strstr(r.warning, "unterminated") != NULL,
	    "the truncated one is warned about");
	status_free(&r);

	is_int(scan("", 0, 1, &r), 0, "no output: nothing found");
	is_str(r.warning, "", "no output: no warning");
	status_free(&r);
}

static size_t
heap_used(void)
{
	return mallinfo2().uordblks;
}

static void
test_big(void)
{
	struct status_report r;
	struct status_scanner *s = status_scanner_new();
	size_t mb = 1 << 20, i, before, grew;
	char *big = malloc(mb);

	status_init(&r);
	memset(big, 'x', mb);
	for (i = 0; i < mb; i += 4096)
		memcpy(big + i, "STATUS---", 9);	/* near misses */
	before = heap_used();
	status_scanner_feed(s, big, mb);
	for (i = 0; i < 16; i++)
		status_scanner_feed(s, big, mb);
	grew = heap_used() - before;
	ok(grew < 1024, "17 MB without a newline: memory does not grow");
	status_scanner_feed(s, plain, strlen(plain));
	is_int(status_scanner_result(s, &r), 1, "block after 17 MB line found");
	ok(is_plain(&r), "block after 17 MB line parsed");
	status_free(&r);
	status_scanner_free(s);

	s = status_scanner_new();
	before = heap_used();
	status_scanner_feed(s, "---CBEXEC_STATUS---\n", 20);
	for (i = 0; i < 16; i++)
		status_scanner_feed(s, big, mb);
	grew = heap_used() - before;
	ok(grew < 80 * 1024, "16 MB inside a block: at most 64 KiB kept");
	status_scanner_feed(s, "\n---END_CBEXEC_STATUS---\n", 25);
	is_int(status_scanner_result(s, &r), 0, "oversized block dropped");
	ok(strstr(r.warning, "longer than 64 KiB") != NULL,
	    "oversized block: warning");
	status_free(&r);
	status_scanner_free(s);

	s = status_scanner_new();
	status_scanner_feed(s, "---CBEXEC_STATUS---\nTASK: big\n", 30);
	for (i = 0; i < 65; i++)
		status_scanner_feed(s, "PAD: 1\n", 7);
	for (i = 0; i < 65 * 1024; i += 1024)
		status_scanner_feed(s, big, 1024);
	status_scanner_feed(s, "\n---END_CBEXEC_STATUS---\n", 25);
	status_scanner_feed(s, plain, strlen(plain));
	is_int(status_scanner_result(s, &r), 1, "block after oversized found");
	is_str(r.task, "2.3-login-form", "block after oversized: the later one");
	ok(strstr(r.warning, "longer than 64 KiB") != NULL,
	    "block after oversized: warning kept");
	status_free(&r);
	status_scanner_free(s);

	/* Exactly 64 KiB of content is still kept. */
	s = status_scanner_new();
	memset(big, ' ', 64 * 1024);
	memcpy(big, "TASK: edge\n", 11);
	status_scanner_feed(s, "---CBEXEC_STATUS---", 19);
	status_scanner_feed(s, big, 64 * 1024);
	status_scanner_feed(s, "---END_CBEXEC_STATUS---", 23);
	is_int(status_scanner_result(s, &r), 1, "64 KiB block kept");
	is_str(r.task, "edge", "64 KiB block parsed");
	status_free(&r);
	status_scanner_free(s);
	free(big);
}

static void
test_binary(void)
{
	struct status_report r;
	struct status_scanner *s = status_scanner_new();
	static const char nul[] = "---CBEXEC_STATUS---\n\0\xff\xfe\n"
	    "TASK: ab\0cd\n\x80\x81: \xc0\n\xff=\xff\nSTATUS: COM\0PLETE\n"
	    "---END_CBEXEC_STATUS---\n";
	static const char *const frags[] = { "---CBEXEC_STATUS---",
	    "---END_RALPH_STATUS---", "\\n", "\n", "TASK:", "=", "\\u12",
	    "\\" };
	char *junk = malloc(1 << 20);
	unsigned seed = 12345;
	size_t i, n, k;

	status_init(&r);
	for (i = 0; i < 1 << 20; i++) {
		seed = seed * 1103515245 + 12345;
		junk[i] = (char)(seed >> 16);
	}
	status_scanner_feed(s, junk, 1 << 20);
	status_scanner_feed(s, nul, sizeof(nul) - 1);
	is_int(status_scanner_result(s, &r), 1, "block after binary found");
	is_str(r.task, "ab", "NUL ends a value");
	is_int(r.status, RS_NONE, "NUL inside STATUS: not a status");
	ok(r.warning[0] != '\0', "binary lines warned about");
	status_free(&r);
	status_scanner_free(s);

	/* Random bytes interleaved with marker fragments, random chunks. */
	s = status_scanner_new();
	for (i = 0; i < (1 << 20) - 64; i += n) {
		seed = seed * 1103515245 + 12345;
		k = seed >> 16;
		if (k % 3 == 0) {
			n = strlen(frags[k / 3 % 8]);
			memcpy(junk + i, frags[k / 3 % 8], n);
		} else
			n = k % 50 + 1;
	}
	for (i = 0; i < 1 << 20; i += n) {
		seed = seed * 1103515245 + 12345;
		n = (seed >> 16) % 3000 + 1;
		if (n > (1u << 20) - i)
			n = (1u << 20) - i;
		status_scanner_feed(s, junk + i, n);
	}
	status_scanner_result(s, &r);
	status_scanner_feed(s, claude, strlen(claude));
	is_int(status_scanner_result(s, &r), 1,
	    "random bytes and marker fragments: no crash, block found");
	ok(r.status == RS_COMPLETE && r.exit_signal == 1, "after fuzz: parsed");
	is_int(status_scanner_result(s, &r), 0, "result moves the report");
	status_free(&r);
	status_scanner_free(s);
	free(junk);
}

static void
test_many(void)
{
	struct status_report r;
	struct status_scanner *s = status_scanner_new();
	struct timespec a, b;
	char blk[128];
	double secs;
	int i, n;

	status_init(&r);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < 10000; i++) {
		n = snprintf(blk, sizeof(blk), "out %d\n---CBEXEC_STATUS---\n"
		    "TASK: t%d\nTESTS_PASSING: %d\n---END_CBEXEC_STATUS---\n",
		    i, i, i);
		status_scanner_feed(s, blk, (size_t)n);
	}
	is_int(status_scanner_result(s, &r), 1, "10000 blocks: found");
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	is_str(r.task, "t9999", "10000 blocks: the last wins");
	is_int((long long)metric(&r, "tests_passing"), 9999,
	    "10000 blocks: its metric");
	is_int(r.n_metrics, 1, "10000 blocks: metrics not accumulated");
	ok(secs < 5, "10000 blocks: bounded time");
	status_free(&r);
	status_scanner_free(s);
}

static void
test_text(void)
{
	struct status_report r;
	const char *t;

	status_init(&r);
	t = "STATUS: COMPLETE\nTASK: 2.3\nTESTS_PASSING: 9\nEXIT_SIGNAL: false\n";
	is_int(status_parse_text(t, strlen(t), &r), 1, "file: lines");
	is_int(r.present, 1, "file: present");
	is_int(r.status, RS_COMPLETE, "file: status");
	is_str(r.task, "2.3", "file: task");
	is_int((long long)metric(&r, "tests_passing"), 9, "file: metric");
	is_int(status_done(&r), 0, "file: EXIT_SIGNAL false wins");
	status_free(&r);

	t = "---CBEXEC_STATUS---\nstatus=blocked\ntask=\"quoted value\"\n"
	    "tasks_completed_this_loop=2\n---END_CBEXEC_STATUS---\n";
	is_int(status_parse_text(t, strlen(t), &r), 1, "file: KEY=value");
	is_int(r.status, RS_BLOCKED, "file: KEY=value status");
	is_str(r.task, "quoted value", "file: quotes stripped");
	is_int((long long)metric(&r, "tasks_completed"), 2, "file: alias");
	is_str(r.warning, "", "file: marker lines skipped silently");
	status_free(&r);

	t = "  {\"Status\":\"complete\",\"exit_signal\":false,\"task\":\"2.3\","
	    "\"tests_passing\":12,\"TASKS_COMPLETED_THIS_LOOP\":1,"
	    "\"refactored\":true,\"nested\":{\"a\":1},\"x\":null} \n";
	is_int(status_parse_text(t, strlen(t), &r), 1, "file: JSON object");
	is_int(r.status, RS_COMPLETE, "JSON: status");
	is_int(r.exit_signal, 0, "JSON: exit_signal false");
	is_int(status_done(&r), 0, "JSON: false beats COMPLETE");
	is_str(r.task, "2.3", "JSON: task");
	is_int((long long)metric(&r, "tests_passing"), 12, "JSON: number");
	is_int((long long)metric(&r, "tasks_completed"), 1, "JSON: alias");
	is_int((long long)metric(&r, "refactored"), 1, "JSON: bool metric");
	is_str(r.warning, "", "JSON: no warning");
	status_free(&r);

	t = "{\"task\": 2.3, \"exit_signal\": true, \"files_modified\": \"4\"}";
	is_int(status_parse_text(t, strlen(t), &r), 1, "JSON: numbers");
	is_str(r.task, "2.3", "JSON: numeric task as text");
	is_int(r.exit_signal, 1, "JSON: exit_signal true");
	is_int(status_done(&r), 1, "JSON: done");
	is_int((long long)metric(&r, "files_modified"), 4,
	    "JSON: numeric string is a metric");
	status_free(&r);

	is_int(status_parse_text("", 0, &r), 0, "file: empty");
	is_int(status_parse_text(" \n\t\r\n", 5, &r), 0, "file: blank");
	is_int(r.present, 0, "file: empty is not present");
	is_int(status_parse_text("{}", 2, &r), 0, "file: empty object");

	t = "{\"status\": \"COMPLETE\", garbage";
	is_int(status_parse_text(t, strlen(t), &r), -1, "file: garbage JSON");
	ok(r.warning[0] != '\0', "garbage JSON: warning");
	is_int(r.present, 0, "garbage JSON: not present");
	status_free(&r);

	t = "[1, 2]";
	is_int(status_parse_text(t, strlen(t), &r), -1, "file: JSON array");
	status_free(&r);

	t = "just some words\nand more\n";
	is_int(status_parse_text(t, strlen(t), &r), -1, "file: no keys");
	ok(r.warning[0] != '\0', "no keys: warning");
	status_free(&r);

	t = "hello there\nSTATUS: IN_PROGRESS\n";
	is_int(status_parse_text(t, strlen(t), &r), 1, "file: partly bad");
	is_int(r.status, RS_IN_PROGRESS, "partly bad: good line kept");
	ok(r.warning[0] != '\0', "partly bad: warning");
	status_free(&r);

	t = "a\0b: 1\nSTATUS: COMPLETE";
	is_int(status_parse_text(t, 23, &r), 1, "file: NUL in text");
	is_int(r.status, RS_COMPLETE, "NUL in text: later line parsed");
	status_free(&r);
}

int
main(void)
{
	test_plain();
	test_variants();
	test_prose();
	test_splits();
	test_json();
	test_truncated();
	test_big();
	test_binary();
	test_many();
	test_text();
	return done_testing();
}
