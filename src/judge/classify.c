/* SPDX-License-Identifier: ISC */
/*
 * Failure classification (SPEC §4): what a run did -> class, type, message
 * and the message's fingerprint.  Pure: no I/O, no clock.
 *
 * Decision order: exec failure, user rules, success, timeout, the built-in
 * rows on stderr (first row that matches anywhere wins), the test_failure
 * and build_error summary patterns on stdout of a run that exited non-ok,
 * a signal cbexec did not send, and finally "unknown".
 *
 * This file holds that order and the built-in table, compiled once on first
 * use.  The tails are made matchable and searched in text.c (raw and
 * ANSI-stripped copies, one regexec per pattern over the whole tail), user
 * rules are built in rules.c, and the message's fingerprint comes from
 * normalize.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "judge.h"
#include "text.h"

/*
 * The built-in table, in SPEC order.  Per row: what kind of row it is (a
 * provider's state, a fatal fault of the machine, the program's own
 * failure), a case-insensitive and a case-sensitive pattern for stderr,
 * HTTP statuses to find in an HTTP shape, the line-anchored patterns
 * tried on stdout of a failed run, and a weak pattern: a line that shows
 * the row applies without being the message (a Python traceback's head;
 * its last line says what failed).  "FAILED" is case-sensitive: folded,
 * it would match "build failed" and every other "failed", leaving the
 * build_error row unreachable; so is a line-initial "error:", which folded
 * would take every bare "Error:".  Provider words are whole words (W):
 * "rate limiter" is not "rate limit".
 */
enum { P_ERR, P_ERR_EXACT, P_OUT, P_OUT_EXACT, P_WEAK, P_N };

enum row_kind {
	ROW_FATAL,	/* the machine: command, permission, dependency */
	ROW_PROVIDER,	/* the provider's state: auth ... network */
	ROW_OWN		/* the program's own failure */
};

#define W(x)	"(^|[^[:alnum:]_])(" x ")([^[:alnum:]_]|$)"

/*
 * A provider's machine code as its JSON (or a Python dict of it) gives
 * one: "errorType":"rate_limit", 'code': 'invalid_api_key', also inside
 * an escaped JSON string (the key's end is enough: no unbounded prefix,
 * which regexec would try from every byte of a long line).  An underscore is part of a word (W): a
 * terraform resource named rate_limit, a test named
 * test_invalid_api_key or a function rate_limited() is nobody's limit.
 * Only codes no identifier is named like (rate_limit_exceeded,
 * insufficient_quota) are words of their own.
 */
#define CODE(x)	"(type|code|reason|error|status)\\\\?[\"'] *: *" \
	"\\\\?[\"'](" x ")\\\\?[\"']"

static const struct builtin {
	const char *type;
	enum cb_class cls;
	enum row_kind kind;
	int exit_code;		/* exit status that selects the row, or -1 */
	const char *status[2];	/* HTTP statuses ("429"), or NULL */
	const char *re[P_N];
} builtins[] = {
	{ "command_not_found", CB_CLASS_FATAL, ROW_FATAL, CB_EXIT_NOTFOUND,
	    { NULL }, { "command not found" } },
	{ "permission_denied", CB_CLASS_FATAL, ROW_FATAL, CB_EXIT_NOEXEC,
	    { NULL },
	    { W("permission denied|EACCES|operation not permitted") } },
	{ "missing_dependency", CB_CLASS_FATAL, ROW_FATAL, -1, { NULL },
	    { "ModuleNotFoundError|Cannot find module|"
	      "error while loading shared libraries|No module named|"
	      "package .{0,200} not found" } },
	/* A proxy that wants credentials it was not given (HTTP 407): the
	 * proxy settings must change.  A proxy that cannot be reached is a
	 * network failure.  Before auth: it is the proxy that wants them. */
	{ "proxy_auth", CB_CLASS_FATAL, ROW_PROVIDER, -1, { "407" },
	    { W("proxy authentication (required|failed)|"
	      "received http code 407|tunnel failed, response 407|"
	      "statusCode=407") } },
	{ "auth", CB_CLASS_FATAL, ROW_PROVIDER, -1, { "401" },
	    { W("invalid[ -]?(api[ -]?key|x-api-key)|incorrect api key|"
	      "api key not valid|not logged in|please run /login|"
	      "failed to authenticate|authentication required|"
	      "authentication failed|bad credentials|"
	      "invalid (auth(entication)?|access) (token|credentials)|"
	      "api key (is )?(missing|required)|missing api key|"
	      "no api key|didn't provide an api key|"
	      "x-api-key header is required|"
	      "(api[ -]?key|access token|oauth token|credentials?) "
	      "(has |have )?(expired|been revoked)|renew the api key|"
	      "must specify the [a-z_]*api_key|"
	      "missing environment variable:? .{0,2}[a-z_]*(api_key|token)|"
	      "does not have permission|does not have access to (the )?model|"
	      "country, region,? or territory (is )?not supported|"
	      "authentication_error")
	      "|" CODE("authentication_error|authentication_failed|"
	      "invalid_api_key") } },
	{ "billing", CB_CLASS_FATAL, ROW_PROVIDER, -1, { NULL },
	    { W("credit balance is too low|"
	      "exceeded your current quota.{0,200}billing|"
	      "quota exceeded\\. check your plan and billing|"
	      "credits are depleted|insufficient (ai )?credits|"
	      "insufficient_quota|billing_error") } },
	{ "usage_limit", CB_CLASS_TRANSIENT, ROW_PROVIDER, -1, { NULL },
	    { W("usage limit (has been )?reached|"
	      "hit your [^.\n]{0,40}limit|out of (extra )?usage|"
	      "exhausted your (daily |weekly |monthly )?(quota|capacity)|"
	      "quota will reset|(5-hour|five-hour|session|weekly) limit reached|"
	      "usage_limit_(reached|exceeded)") } },
	{ "rate_limited", CB_CLASS_TRANSIENT, ROW_PROVIDER, -1, { "429" },
	    { W("rate[ -]?limit(s|ed)?|too many requests|RESOURCE_EXHAUSTED|"
	      "quota exceeded|RetryableQuotaError|toomanyrequests|"
	      "rate_limit_(error|exceeded)")
	      "|" CODE("rate_limit(_error|_exceeded|ed)?|too_many_requests") } },
	{ "overloaded", CB_CLASS_TRANSIENT, ROW_PROVIDER, -1, { "529", "503" },
	    { W("overloaded|high demand|at capacity|service unavailable|"
	      "overloaded_error") } },
	{ "server_error", CB_CLASS_TRANSIENT, ROW_PROVIDER, -1, { "500", "502" },
	    { W("internal server error|bad gateway|"
	      "an internal error has occurred|server had an error") } },
	/*
	 * A TLS certificate the client will not trust (a proxy that
	 * intercepts TLS without its CA installed, a missing CA store, an
	 * expired certificate): no retry heals it, the machine's trust
	 * store or the proxy must change.  Before network: the clients wrap
	 * it in their connection errors ("fetch failed", "Unable to connect").
	 */
	{ "certificate", CB_CLASS_FATAL, ROW_PROVIDER, -1, { NULL },
	    { W("self[- ]signed certificate|"
	      "unable to get (local )?issuer certificate|"
	      "unable to verify the first certificate|"
	      "certificate (has expired|is not yet valid|verify failed|"
	      "signed by unknown authority)|"
	      "certificate verification failed|ssl certificate problem|"
	      "x509: certificate|tls: failed to verify certificate|"
	      "invalid peer certificate|pkix path building failed|"
	      "unable to find valid certification path|"
	      "hostname/ip does not match certificate|"
	      "error setting certificate verify locations|"
	      "CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|CERTIFICATE_VERIFY_FAILED|"
	      "UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|"
	      "(DEPTH_ZERO_)?SELF_SIGNED_CERT(_IN_CHAIN)?|"
	      "ERR_TLS_CERT_ALTNAME_INVALID") } },
	{ "network", CB_CLASS_TRANSIENT, ROW_PROVIDER, -1, { NULL },
	    { W("ECONNRESET|ETIMEDOUT|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|"
	      "ECONNABORTED|EHOSTUNREACH|ENETUNREACH|ENETDOWN|"
	      "connection refused|connection reset|connection error|"
	      "connection failed|connection dropped|unable to connect|"
	      "couldn't connect to server|failed to connect to|"
	      "fetch failed|temporary failure in name resolution|"
	      "could not resolve (host|proxy)|network is unreachable|"
	      "waiting for network|reconnecting\\.\\.\\.|request timed out|"
	      "stream disconnected|"
	      "stream ended without|socket hang up|"
	      "other side closed|premature close|"
	      "network socket disconnected|cannot connect to|"
	      /* the same cut in other HTTP clients: Bun, hyper and
	       * reqwest, Go, requests and httpx */
	      "socket connection was closed unexpectedly|"
	      "connection closed before message completed|"
	      "error reading a body from connection|"
	      "error decoding response body|unexpected eof during chunk|"
	      "transport connection broken|connection broken|"
	      "incomplete (chunked )?read|peer closed connection|"
	      "ChunkedEncodingError|RemoteProtocolError|"
	      "connect tunnel failed|tunneling socket could not be established|"
	      "ERR_TUNNEL_CONNECTION_FAILED|ERR_STREAM_PREMATURE_CLOSE|"
	      "UND_ERR_(SOCKET|CLOSED|CONNECT_TIMEOUT|HEADERS_TIMEOUT|"
	      "BODY_TIMEOUT)|"
	      "(Socket|ConnectTimeout|HeadersTimeout|BodyTimeout)Error"),
	      /* undici's cut stream: a response that ended mid-way is
	       * "terminated", lower case (a shell's "Terminated" is a
	       * signal) */
	      "(^|(TypeError|API Error|Error): )terminated\\]?$" } },
{ "syntax_error", CB_CLASS_RECOVERABLE, ROW_OWN, -1, { NULL },
	    { "SyntaxError|syntax error|parse error|unexpected token" } },
	{ "test_failure", CB_CLASS_RECOVERABLE, ROW_OWN, -1, { NULL },
	    { "AssertionError|tests? failed|^not ok|^Result: FAIL|"
	      "^=+ .*[0-9]+ failed|^Tests: +[0-9]+ failed",
	      "(^|[^A-Za-z0-9_])FAILED([^A-Za-z0-9_]|$)",
	      "^Result: FAIL|^=+ .*[0-9]+ failed|^Tests: +[0-9]+ failed|"
	      "^not ok",
	      "^FAILED" } },
	{ "runtime_error", CB_CLASS_RECOVERABLE, ROW_OWN, -1, { NULL },
	    { "TypeError|ReferenceError|ValueError|KeyError|AttributeError|"
	      "NameError|IndexError|ZeroDivisionError|RangeError|"
	      "NullPointerException|panic:|Segmentation fault|Uncaught|"
	      "unhandled (promise )?rejection|unhandled exception|"
	      "Exception in thread",
	      NULL, NULL, NULL,
	      "^Traceback \\(most recent call last\\)" } },
	{ "build_error", CB_CLASS_RECOVERABLE, ROW_OWN, -1, { NULL },
	    { "^[^ :]+:[0-9]+(:[0-9]+)?: (fatal )?error:|"
	      "undefined reference|ld returned|error TS[0-9]+:|"
	      "make(\\[[0-9]+\\])?: \\*\\*\\*|compilation failed|build failed",
	      "^error(\\[[A-Z0-9]+\\])?:",
	      "^make(\\[[0-9]+\\])?: \\*\\*\\*|"
	      "^[^ :]+:[0-9]+(:[0-9]+)?: (fatal )?error:",
	      "^error(\\[[A-Z0-9]+\\])?:" } },
};

/*
 * What a line is (text.h's L_*), marked before any row is tried: the
 * classifier's knowledge of other programs' output, a table as the rows
 * are.  Per mark: the flag, whether case matters, the pattern.
 *
 * L_NOISE: what a client or a tool prints on every run -- a warning, a
 * fall-back notice, a deprecation -- never makes a run fatal and is never
 * its message (SPEC §10).
 * L_TEST: a test runner's result lines and assertions ("Expected: 401",
 * "assert resp.status_code == 401", "expect(res.status).toBe(429)", a
 * runner's pass/fail lines): words there are the test's, not a provider's.
 * L_FAIL: the failing test's own line (jest/vitest ●/✕/×, mocha and
 * rspec "1) title", pytest's section and FAILED lines, go's --- FAIL, cargo's
 * "test x ... FAILED", JUnit's "<<< FAILURE!", TAP's "not ok", ...): the
 * message of a test failure, so different failing tests differ.
 * L_PROVIDER: a line in a provider's or an HTTP client's own shape (curl's
 * error, a response status line, an SDK's error class, "API Error", npm's
 * E401): where the output shows the program's own failure, only such a
 * line can make it a provider's.
 */
static const struct mark {
	int flag;
	int icase;
	const char *re;
} marks[] = {
	{ L_NOISE, 1, "^[[:space:]]*(\\(node:[0-9]+\\) )?(\\[?warn(ing)?\\]?|"
	    "\\[?DEP[0-9]+\\]?|[a-z]*deprecationwarning|experimentalwarning)"
	    "([^[:alnum:]]|$)|"
	    "(^|[^[:alnum:]])fall(s|ing)? ?back( to)?([^[:alnum:]]|$)|"
	    "(is|been|are) deprecated|"
	    /* Codex, whenever its stdin is not a terminal */
	    "^reading (additional )?(input|prompt) from stdin\\.*$" },
	{ L_NOISE, 0, "(^|[[:space:]])\\[?(WARN|WARNING)\\]?[]: ]" },
	{ L_TEST | L_FAIL, 0, "^[[:space:]]*(●|✕|✗|×|✖) |"
	    "^ *(FAIL|×) +[^ ].* > |"
	    "^[[:space:]]*[0-9]+\\) [^ ]|"
	    "^_{3,} .* _{3,}$|^FAILED [^ ]+::|"
	    "^(FAIL|ERROR): [^ ]+ \\(|"
	    "^[[:space:]]*--- FAIL: |"
	    "^test [^ ]+ \\.\\.\\. FAILED$|^---- [^ ]+ stdout ----$|"
	    "^rspec \\./[^ ]+ # |"
	    "^\\[ERROR\\] [^ ]+\\.[^ .]+ -- Time elapsed.*<<< (FAILURE|ERROR)!|"
	    "^[^ ].* > .*\\) FAILED$|"
	    "^not ok [0-9]+|^#[[:space:]]+Failed test |"
	    /* vitest's list of failing tests, before their reports */
	    "^ *❯ [^ ].* > " },
	{ L_TEST, 0, "^[[:space:]]*(✓|✔|√|PASS|FAIL|ok [0-9]+|--- PASS:|"
	    "=== (RUN|PAUSE|CONT|NAME) |"
	    "Tests:|Test Suites:|Test Files|Tests run:|Failure/Error:)|"
	    " \\.\\.\\. (ok|FAILED|ignored)$|"
	    "^[[:space:]]*(Expected|Received|expected|actual|got|want)"
	    "[ a-z]*:|"
	    "expected .{0,200}( to | but |==|!=)|expected:<|"
	    "(^|[^[:alnum:]_])(assert|Assert|assertion|Assertion)"
	    "[A-Za-z]*([^[:alnum:]_]|$)|"
	    "expect\\(|\\.(to|not\\.to)[A-Z][A-Za-z]*\\(|"
	    "Failed asserting|<<< FAILURE|^E  |^>  |"
	    "[0-9]+ (passing|failing)$|examples?, [0-9]+ failures?|"
	    /* a go test's own log line (t.Log, t.Error) */
	    "^ {4,}[^ ]+_test\\.go:[0-9]+: |"
	    /* a code frame of jest, vitest or babel: the test's source */
	    "^ *>? *[0-9]+ ?\\| |"
	    /* vitest: a failing test's error under it, a stack frame */
	    "^ +→ |^ *❯ [^ ]+:[0-9]+:[0-9]+$" },
	{ L_PROVIDER, 1, "^[[:space:]]*curl: \\([0-9]+\\)|"
	    "^[[:space:]]*HTTP/[0-9.]+ [0-9]{3}|API Error|"
	    "error code:? [0-9]{3}|status code [0-9]{3}|"
	    "(RateLimit|Authentication|PermissionDenied|APIConnection|"
	    "APITimeout|InternalServer|Overloaded|APIStatus|HTTP|SSL|"
	    "SSLCertVerification|Proxy|Socket|ConnectTimeout)Error|"
	    "(Client|Server|API|Api)Error: [0-9]{3} |"
	    "^[a-z]+ (err!|error) (code )?e?[0-9]{3}|"
	    "^(fatal|error): (unable to access|authentication failed)|"
	    "^remote: |\"type\" *: *\"[a-z_]*error\"|"
	    "error response from daemon|"
	    /* an HTTP client naming a URL and its status */
	    "https?://[^ ]+: [0-9]{3} [A-Z][a-z]|"
	    /* an HTTP client's or TLS library's own words: undici's cut
	     * stream and its codes, a proxy's refusal, a certificate */
	    "^[[:space:]]*(TypeError: )?(terminated|fetch failed)$|"
	    "code: '(UND_ERR_[A-Z_]+|E[A-Z]+|[A-Z_]*CERT[A-Z_]*)'|"
	    "other side closed|CONNECT tunnel failed|"
	    "proxy authentication|tunneling socket|"
	    "certificate|x509: |CERTIFICATE_VERIFY_FAILED|"
	    "(SELF_SIGNED|UNABLE_TO|CERT_)[A-Z_]+" },
};

/*
 * A failing test's report, line by line: from its header to where the
 * runner goes on to something else, every line is the test's -- its
 * source with the fake bodies it serves, its captured output, its
 * traceback -- and no provider's (SPEC §10).  Per runner, the header
 * that starts a report and the first line after it (which may start the
 * next one); a report cut off by the tail runs to its end.
 */
static const struct region {
	const char *start, *end;
} regions[] = {
	/* pytest: "____ test_x ____" up to the next one or "=== ..." */
	{ "^_{3,} .+ _{3,}$", "^_{3,} .+ _{3,}$|^={3,} " },
	/* unittest: "FAIL: test_x (m.C)" up to the next "=====" or "Ran N" */
	{ "^(FAIL|ERROR): [^ ]+ \\(", "^={20,}$|^Ran [0-9]+ tests? in " },
	/* jest: "● Suite › test" up to the next ● or the summary */
	{ "^[[:space:]]*● ", "^[[:space:]]*● |"
	    "^(Test Suites|Tests|Snapshots|Time|Ran all test suites)" },
	/* vitest: " FAIL  file > test" up to its "⎯⎯⎯" rule */
	{ "^ *(FAIL|×) +[^ ].* > ", "^ *⎯{3,}|^ *(Test Files|Tests) " },
	/* go test -v: "=== RUN TestX" up to its "--- FAIL/PASS" */
	{ "^=== (RUN|CONT) ", "^[[:space:]]*--- (PASS|FAIL|SKIP): |"
	    "^(PASS|FAIL|ok )" },
	/* go test: "--- FAIL: TestX" and its indented lines */
	{ "^[[:space:]]*--- FAIL: ", "^[^[:space:]]" },
	/* cargo: "---- tests::x stdout ----" up to "failures:" */
	{ "^---- [^ ]+ stdout ----$", "^---- [^ ]+ stdout ----$|^failures:$|"
	    "^test result: " },
	/* TAP: "not ok N" and its indented or "#" diagnostics */
	{ "^not ok [0-9]+", "^[^[:space:]#]" },
};

/*
 * A test runner that reports in JSON (go test -json, cargo's libtest
 * JSON, pytest's report log, jest --json) says the same things inside
 * its strings.  A line that is one JSON object is read by what its
 * strings say: it takes the marks of the lines they hold, and an event
 * of one test (an object naming its test, or a whole report) is the
 * test's whatever it carries.  Per member: its name, and the value it
 * must have (NULL: any).
 */
static const struct test_key {
	const char *key, *value;
} test_keys[] = {
	{ "Test", NULL },		/* go test -json */
	{ "type", "test" },		/* libtest --format json */
	{ "nodeid", NULL },		/* pytest --report-log */
	{ "testResults", NULL },	/* jest/vitest --json */
	{ "assertionResults", NULL },
	{ "failureMessages", NULL },
};

/*
 * The program's own failure shows (a traceback, a stack, a compiler's
 * error), besides a test runner's lines: then a provider's row needs a
 * provider-shaped line (L_PROVIDER) for a command that is not a known
 * agent.
 */
static const char own_failure[] =
	"^Traceback \\(most recent call last\\)|"
	"^[[:space:]]+at [^ ]+ \\(.*:[0-9]+:[0-9]+\\)$|"
	"^[[:space:]]+at [^ ]+:[0-9]+:[0-9]+$|"
	"^thread '.*' panicked at|^panic: |error TS[0-9]+:|"
	"^error(\\[E[0-9]+\\])?: |^[^ :]+:[0-9]+:[0-9]+: (fatal )?error:|"
	"^[[:space:]]*--> [^ ]+:[0-9]+:[0-9]+$";

/*
 * The built-in patterns are compiled when a line is first matched against
 * them (row_re, marks_init): regcomp of the whole table was some 12
 * million instructions, 2 ms of every failed run.  A run that failed in
 * silence (a timeout with no output) compiles none, one that matched an
 * early row only those before it.  classify_compile_all() compiles all of
 * them, for the tests.
 */
static regex_t builtin_re[NELEM(builtins)][P_N];
static signed char builtin_ok[NELEM(builtins)][P_N];	/* 1 compiled, -1 not */
static regex_t mark_re[NELEM(marks)];
static regex_t region_re[NELEM(regions)][2];
static regex_t own_failure_re;
static int marks_ready;

/* Pattern p of row i, compiled now if need be; NULL if it does not
 * compile (then it matches nothing). */
static const regex_t *
row_re(size_t i, int p)
{
	int flags = REG_EXTENDED | REG_NEWLINE;

	if (builtin_ok[i][p] == 0) {
		if (p == P_ERR || p == P_OUT || p == P_WEAK)
			flags |= REG_ICASE;
		builtin_ok[i][p] = regcomp(&builtin_re[i][p],
		    builtins[i].re[p], flags) == 0 ? 1 : -1;
	}
	return builtin_ok[i][p] == 1 ? &builtin_re[i][p] : NULL;
}

/* No word at all: no pattern can match it (the rows pass over blank
 * lines, and classify_compile_all() checks that no mark matches one). */
static int
text_empty(const struct text *t)
{
	return t->n == 0 || t->clean == NULL || t->clean[0] == '\0';
}

/* t's first line matching pattern p of row i (lines of skip passed
 * over, of need only), or -1; nothing is compiled for an empty text. */
static long
row_first_in(size_t i, int p, const struct text *t, int skip, int need)
{
	const regex_t *re;

	if (text_empty(t) || (re = row_re(i, p)) == NULL)
		return -1;
	return re_first_in(re, t, skip, need);
}

static long
earlier(long a, long b)
{
	return a < 0 || (b >= 0 && b < a) ? b : a;
}

/* Which patterns of a row a text is matched against. */
enum side {
	SIDE_ERR,	/* stderr, or a known agent's own words */
	SIDE_OUT	/* stdout of another failed command: summaries */
};

/*
 * Where the rows look: the lines they pass over and, for a provider's
 * row, the lines it needs (the program's own failure shows), and whether
 * the machine's fatal rows still read words (not in a test run: a test of
 * "permission denied" is a test).
 */
struct scope {
	int need_provider;
	int tests;
};

/* First line of t matching row i on that side, or -1. */
static long
row_first(size_t i, enum side side, const struct text *t,
    const struct scope *sc)
{
	const struct builtin *b = &builtins[i];
	long line = -1;
	int p, lo = side == SIDE_OUT ? P_OUT : P_ERR, skip = L_NOISE, need = 0;
	size_t k;

	if (b->kind != ROW_OWN)
		skip |= L_TEST;
	if (b->kind == ROW_PROVIDER && sc->need_provider)
		need = L_PROVIDER;
	if (b->kind == ROW_FATAL && sc->tests)
		return -1;
	for (p = lo; p <= lo + 1; p++)
		if (b->re[p] != NULL)
			line = earlier(line, row_first_in(i, p, t, skip, need));
	for (k = 0; side == SIDE_ERR && k < NELEM(b->status) &&
	    b->status[k] != NULL; k++)
		line = earlier(line, status_first(b->status[k], t, skip, need));
	return line;
}

/* The line marks, the regions and own_failure, all at once: every text
 * with a line is marked.  0, or -1 when one does not compile. */
static int
marks_init(void)
{
	size_t n = 0, r = 0;

	if (marks_ready)
		return 0;
	for (; n < NELEM(marks); n++)
		if (regcomp(&mark_re[n], marks[n].re, REG_EXTENDED |
		    REG_NEWLINE | (marks[n].icase ? REG_ICASE : 0)) != 0)
			goto fail;
	for (; r < NELEM(regions); r++) {
		if (regcomp(&region_re[r][0], regions[r].start, REG_EXTENDED |
		    REG_NEWLINE) != 0)
			goto fail;
		if (regcomp(&region_re[r][1], regions[r].end, REG_EXTENDED |
		    REG_NEWLINE) != 0) {
			regfree(&region_re[r][0]);
			goto fail;
		}
	}
	if (regcomp(&own_failure_re, own_failure, REG_EXTENDED |
	    REG_NEWLINE) != 0)
		goto fail;
	marks_ready = 1;
	return 0;
fail:
	while (r > 0) {
		r--;
		regfree(&region_re[r][0]);
		regfree(&region_re[r][1]);
	}
	while (n > 0)
		regfree(&mark_re[--n]);
	return -1;
}

int
classify_compile_all(void)
{
	regmatch_t m;
	size_t i;
	int p;

	for (i = 0; i < NELEM(builtins); i++)
		for (p = 0; p < P_N; p++)
			if (builtins[i].re[p] != NULL && row_re(i, p) == NULL)
				return -1;
	if (marks_init() == -1)
		return -1;
	/* An empty text is never marked (text_empty): no mark may match
	 * an empty line. */
	for (i = 0; i < NELEM(marks); i++)
		if (regexec(&mark_re[i], "", 1, &m, 0) == 0)
			return -1;
	return 0;
}

/* The first line of t with flag, or -1. */
static long
flagged(const struct text *t, int flag)
{
	size_t i;

	for (i = 0; t != NULL && i < t->n; i++)
		if (t->flags[i] & flag)
			return (long)i;
	return -1;
}

/* Whether o is one test's event of a runner's JSON report. */
static int
test_event(const cJSON *o)
{
	const cJSON *v;
	size_t i;

	for (i = 0; i < NELEM(test_keys); i++)
		if ((v = cJSON_GetObjectItemCaseSensitive(o, test_keys[i].key))
		    != NULL && (test_keys[i].value == NULL ||
		    (cJSON_IsString(v) &&
		    strcmp(v->valuestring, test_keys[i].value) == 0)))
			return 1;
	return 0;
}

/* Every string of v, a line break after each, onto b. */
static void
strings_of(const cJSON *v, struct sbuf *b, int depth)
{
	const cJSON *c;

	if (depth > 16)
		return;
	if (cJSON_IsString(v) && v->valuestring != NULL) {
		sb_add(b, v->valuestring, strlen(v->valuestring));
		sb_add(b, "\n", 1);
	}
	for (c = v->child; c != NULL; c = c->next)
		strings_of(c, b, depth + 1);
}

/*
 * Line i of t, one JSON object, read by what it says: its strings are
 * marked as lines of their own, and line i takes their L_TEST and
 * L_FAIL (with the failing test's own line as what it says).  0, or -1
 * on ENOMEM.
 */
static int
mark_json(struct text *t, size_t i)
{
	const char *s = t->clean + t->clean_off[i];
	size_t n = t->clean_off[i + 1] - t->clean_off[i] - 1, k;
	struct sbuf b = { 0 };
	struct text in;
	cJSON *o;
	long f;
	int rc = 0;

	while (n > 0 && is_space((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n > 0 && is_space((unsigned char)s[n - 1]))
		n--;
	if (n < 2 || s[0] != '{' || s[n - 1] != '}' ||
	    (o = cJSON_ParseWithLength(s, n)) == NULL)
		return 0;
	if (test_event(o))
		t->flags[i] |= L_TEST;
	strings_of(o, &b, 0);
	cJSON_Delete(o);
	if (b.oom) {
		free(b.p);
		return -1;
	}
	if (b.len == 0)
		return 0;
	if (text_init(&in, b.p, b.len) == -1) {
		free(b.p);
		return -1;
	}
	free(b.p);
	for (k = 0; k < NELEM(marks); k++)
		if (marks[k].flag & (L_TEST | L_FAIL))
			re_mark(&mark_re[k], &in, marks[k].flag);
	if (text_has(&in, L_TEST))
		t->flags[i] |= L_TEST;
	if ((f = flagged(&in, L_FAIL)) >= 0 && !(t->flags[i] & L_FAIL)) {
		t->flags[i] |= L_FAIL;
		rc = text_say(t, i, line_dup(&in, (size_t)f));
	}
	text_free(&in);
	return rc;
}

/* Every line of a failing test's report (regions) is L_TEST. */
static void
mark_regions(struct text *t)
{
	size_t r, i;
	int in;

	for (r = 0; r < NELEM(regions); r++) {
		re_mark(&region_re[r][0], t, L_START);
		re_mark(&region_re[r][1], t, L_END);
		for (i = 0, in = 0; i < t->n; i++) {
			if (in && (t->flags[i] & L_END))
				in = 0;
			if (!in && (t->flags[i] & L_START))
				in = 1;
			if (in)
				t->flags[i] |= L_TEST;
			t->flags[i] &= ~(L_START | L_END);
		}
	}
}

/* Mark t's lines (L_*); 0, or -1 when the marks do not compile or on
 * ENOMEM. */
static int
mark_lines(struct text *t)
{
	size_t i;

	if (text_empty(t))
		return 0;
	if (marks_init() == -1)
		return -1;
	for (i = 0; i < NELEM(marks); i++)
		re_mark(&mark_re[i], t, marks[i].flag);
	/* a JSON object on a line: only where one may be (cheap to see) */
	if (strstr(t->clean, "{\"") != NULL)
		for (i = 0; i < t->n; i++)
			if (mark_json(t, i) == -1)
				return -1;
	if (text_has(t, L_FAIL))
		mark_regions(t);
	return 0;
}

/* The first line of t where the program shows its own failure, or -1. */
static long
own_failure_line(const struct text *t)
{
	if (text_empty(t) || marks_init() == -1)
		return -1;
	return re_first(&own_failure_re, t);
}

int
status_type(int http_status, enum cb_class *cls, const char **type)
{
	static const struct {
		int status;
		const char *type;
	} map[] = {
		{ 401, "auth" }, { 403, "auth" }, { 402, "billing" },
		{ 407, "proxy_auth" },
		{ 429, "rate_limited" }, { 529, "overloaded" },
		{ 503, "overloaded" }, { 500, "server_error" },
		{ 502, "server_error" }, { 504, "server_error" },
	};
	size_t i, r;

	for (i = 0; i < NELEM(map); i++) {
		if (map[i].status != http_status)
			continue;
		for (r = 0; r < NELEM(builtins); r++)
			if (strcmp(builtins[r].type, map[i].type) == 0) {
				*cls = builtins[r].cls;
				*type = builtins[r].type;
				return 0;
			}
	}
	return -1;
}

static const char *
sig_abbrev(int signo, char *buf, size_t len)
{
	static const struct {
		int no;
		const char *name;
	} sigs[] = {
		{ SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" },
		{ SIGQUIT, "SIGQUIT" }, { SIGILL, "SIGILL" },
		{ SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
		{ SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" },
		{ SIGKILL, "SIGKILL" }, { SIGUSR1, "SIGUSR1" },
		{ SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
		{ SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" },
		{ SIGTERM, "SIGTERM" }, { SIGCHLD, "SIGCHLD" },
		{ SIGCONT, "SIGCONT" }, { SIGSTOP, "SIGSTOP" },
		{ SIGTSTP, "SIGTSTP" }, { SIGTTIN, "SIGTTIN" },
		{ SIGTTOU, "SIGTTOU" }, { SIGURG, "SIGURG" },
		{ SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" },
		{ SIGVTALRM, "SIGVTALRM" }, { SIGPROF, "SIGPROF" },
		{ SIGSYS, "SIGSYS" },
#ifdef SIGWINCH
		{ SIGWINCH, "SIGWINCH" },
#endif
#ifdef SIGIO
		{ SIGIO, "SIGIO" },
#endif
#ifdef SIGPWR
		{ SIGPWR, "SIGPWR" },
#endif
#ifdef SIGSTKFLT
		{ SIGSTKFLT, "SIGSTKFLT" },
#endif
	};
	size_t i;

	for (i = 0; i < NELEM(sigs); i++)
		if (sigs[i].no == signo)
			return sigs[i].name;
#ifdef SIGRTMIN
	if (signo >= SIGRTMIN && signo <= SIGRTMAX) {
		snprintf(buf, len, "SIGRTMIN+%d", signo - SIGRTMIN);
		return buf;
	}
#endif
	snprintf(buf, len, "signal %d", signo);
	return buf;
}

static int
run_ok(const struct run_facts *f)
{
	static const int zero = 0;
	const int *codes = f->ok_codes;
	size_t i, n = f->n_ok_codes;

	if (f->exec_errno != 0 || f->signo != 0 || f->timed_out)
		return 0;
	if (codes == NULL || n == 0) {
		codes = &zero;
		n = 1;
	}
	for (i = 0; i < n; i++)
		if (codes[i] == f->exit_code)
			return 1;
	return 0;
}

/* Does r look at this run at all (before any pattern)? */
static int
rule_applies(const struct rule *r, const struct run_facts *f, int ok)
{
	size_t i;

	if (r->exit_codes == NULL)
		return !ok;
	if (f->signo != 0 || f->exit_code < 0)
		return 0;
	for (i = 0; i < r->n_exit_codes; i++)
		if (r->exit_codes[i] == f->exit_code)
			return 1;
	return 0;
}

/* "COMMAND: No such file or directory", as the shell would say it */
static char *
exec_message(const char *cmd, int errnum)
{
	const char *why = strerror(errnum);
	size_t n = strlen(cmd) + strlen(why) + 3;
	char *s;

	if ((s = malloc(n)) != NULL)
		snprintf(s, n, "%s: %s", cmd, why);
	return s;
}

/* What a user rule sees of one line: see text_cap_lines(). */
#define USER_LINE_MAX 4096

/* A match: the row's type and class, and the line of the text it names
 * (-1: the row was chosen by the exit status, or by a weak pattern). */
struct match {
	const char *type;
	enum cb_class cls;
	const struct text *t;
	long line;
	int weak;
};

/* The adapter's own rows, then the built-in ones, on t within sc;
 * exit_code (-1: none) selects the rows that an exit status names. */
static int
match_rows(const struct agent_verdict *a, const struct text *t,
    enum side side, int exit_code, const struct scope *sc, struct match *m)
{
	size_t i;
	long line;

	/* the client's own rows: never on a test runner's line, which is
	 * the work's, not the client's */
	for (i = 0; a != NULL && side == SIDE_ERR && i < a->n_rules; i++)
		if ((line = re_first_in(&a->rules[i].re, t, L_NOISE | L_TEST,
		    0)) >= 0) {
			m->type = a->rules[i].type;
			m->cls = a->rules[i].cls;
			m->t = t;
			m->line = line;
			m->weak = 0;
			return 1;
		}
	for (i = 0; i < NELEM(builtins); i++) {
		m->weak = 0;
		line = row_first(i, side, t, sc);
		/* a failing test's own line is a test failure wherever it
		 * is, whichever runner printed it */
		if (strcmp(builtins[i].type, "test_failure") == 0)
			line = earlier(line, flagged(t, L_FAIL));
		if (line < 0 && side == SIDE_ERR && builtins[i].re[P_WEAK] &&
		    row_first_in(i, P_WEAK, t, L_NOISE, 0) >= 0)
			m->weak = 1;
		else if (line < 0 && (side == SIDE_OUT ||
		    exit_code != builtins[i].exit_code || exit_code < 0))
			continue;
		m->type = builtins[i].type;
		m->cls = builtins[i].cls;
		m->t = t;
		m->line = line;
		return 1;
	}
	return 0;
}

/* A text made matchable and its lines marked; 0, or -1 on ENOMEM. */
static int
text_marked(struct text *t, const char *p, size_t n)
{
	if (text_init(t, p, n) == -1)
		return -1;
	if (mark_lines(t) == -1) {
		text_free(t);
		return -1;
	}
	return 0;
}

/*
 * A known agent's structured error: its own message, typed by the
 * adapter, else by the rows that match the message, else by its HTTP
 * status, else by what matches stderr or the client's own lines of
 * stdout.
 */
static int
structured(const struct agent_verdict *a, const struct text *err,
    const struct text *so, const struct scope *sc, struct match *m)
{
	struct text msg;
	int found;

	if (a->type != NULL) {
		m->type = a->type;
		m->cls = a->cls;
		return 1;
	}
	if (text_marked(&msg, a->message, strlen(a->message)) == -1)
		return -1;
	found = match_rows(a, &msg, SIDE_ERR, -1, sc, m);
	text_free(&msg);
	if (found)
		return 1;
	if (status_type(a->http_status, &m->cls, &m->type) == 0)
		return 1;
	return match_rows(a, err, SIDE_ERR, -1, sc, m) ||
	    (so != NULL && match_rows(a, so, SIDE_ERR, -1, sc, m));
}

int
message_type(const struct rule *rules, size_t n_rules, const char *msg,
    enum cb_class *cls, const char **type)
{
	struct agent_verdict a;
	struct text t;
	struct match m;
	int got;

	static const struct scope sc = { 0, 0 };

	if (text_marked(&t, msg, strlen(msg)) == -1)
		return -1;
	memset(&a, 0, sizeof(a));
	a.rules = rules;
	a.n_rules = n_rules;
	got = match_rows(&a, &t, SIDE_ERR, -1, &sc, &m);
	text_free(&t);
	if (!got)
		return 0;
	*cls = m.cls;
	*type = m.type;
	return 1;
}

int
classify(const struct rule *rules, size_t n_rules,
    const struct run_facts *f, struct classification *out)
{
	struct text err = { 0 }, so = { 0 }, uerr = { 0 }, uso = { 0 };
	const struct agent_verdict *a = f->agent;
	const struct text *src;
	const char *type = NULL;
	enum cb_class cls = CB_CLASS_RECOVERABLE;
	struct match m;
	struct scope sc;
	char *msg = NULL, fallback[64], sigbuf[32];
	int ok, have_out = 0, rc = -1, got;
	size_t i;
	long line;

	memset(out, 0, sizeof(*out));
	out->cls = CB_CLASS_SUCCESS;

	if (f->exec_errno != 0) {
		type = f->exec_errno == ENOENT ? "command_not_found" :
		    "permission_denied";
		cls = CB_CLASS_FATAL;
		msg = exec_message(f->command != NULL ? f->command : "command",
		    f->exec_errno);
		goto found;
	}
	if (f->stop_type != NULL && f->stop_cls != CB_CLASS_TIMEOUT) {
		type = f->stop_type;
		cls = f->stop_cls;
		msg = strdup(f->stop_message != NULL ? f->stop_message :
		    f->stop_type);
		goto found;
	}
	/* An agent's structured failure is a failure whatever it exited. */
	ok = run_ok(f) && !(a != NULL && a->failed);
	if (text_init(&err, f->err, f->err_len) == -1)
		goto fail;
	/* stdout matters only to user rules and to a failed run */
	if (f->out != NULL && (n_rules > 0 || !ok)) {
		if (text_init(&so, f->out, f->out_len) == -1)
			goto fail;
		have_out = 1;
	}
	if (n_rules > 0 && (text_cap_lines(&err, USER_LINE_MAX, &uerr) == -1 ||
	    (have_out && text_cap_lines(&so, USER_LINE_MAX, &uso) == -1)))
		goto fail;

	for (i = 0; i < n_rules; i++) {
		if (!rule_applies(&rules[i], f, ok))
			continue;
		line = -1;
		src = &err;
		if (rules[i].streams & RULE_STDERR)
			line = re_first(&rules[i].re, &uerr);
		if (line < 0 && (rules[i].streams & RULE_STDOUT) && have_out) {
			line = re_first(&rules[i].re, &uso);
			src = &so;
		}
		if (line < 0)
			continue;
		if (rules[i].cls == CB_CLASS_SUCCESS)
			goto success;
		type = rules[i].type;
		cls = rules[i].cls;
		msg = line_dup(src, (size_t)line);
		goto found;
	}
	if (ok)
		goto success;
	if (mark_lines(&err) == -1)
		goto fail;
	if (a != NULL && a->structured) {
		/* A structured stream carries tool results, file contents and
		 * answers: only the client's own lines are its words. */
		text_free(&so);
		if (text_marked(&so, a->own, a->own_len) == -1)
			goto fail;
		have_out = 1;
	} else if (have_out && mark_lines(&so) == -1)
		goto fail;
	sc.tests = text_has(&err, L_TEST) || (have_out && text_has(&so, L_TEST));
	/* Where a command shows its own failure (a test run, a traceback,
	 * a compiler's error), a provider's words need a provider's shape;
	 * a known agent's stderr and own lines are its own words. */
	sc.need_provider = a == NULL && (sc.tests ||
	    own_failure_line(&err) >= 0 ||
	    (have_out && own_failure_line(&so) >= 0));
	if (f->signo != 0)
		snprintf(fallback, sizeof(fallback), "killed by signal %s",
		    sig_abbrev(f->signo, sigbuf, sizeof(sigbuf)));
	else
		snprintf(fallback, sizeof(fallback), "exited with status %d",
		    f->exit_code);
	if (f->timed_out) {
		/* A client that was still retrying a provider error when
		 * time ran out failed of that error, not of slowness. */
		if (a != NULL && a->retrying && a->retry_type != NULL) {
			type = a->retry_type;
			cls = CB_CLASS_TRANSIENT;
			msg = a->retry_message != NULL ?
			    strdup(a->retry_message) :
			    last_line(&err, L_NOISE, fallback);
			goto found;
		}
		if (f->stop_type != NULL) {
			type = f->stop_type;
			cls = f->stop_cls;
			msg = strdup(f->stop_message != NULL ?
			    f->stop_message : f->stop_type);
			goto found;
		}
		type = "timeout";
		cls = CB_CLASS_TIMEOUT;
		msg = a == NULL ? last_line(&err, L_NOISE, "timed out") :
		    a->message != NULL ? strdup(a->message) :
		    last_words(&err, L_NOISE, "timed out");
		goto found;
	}
	if (a != NULL && a->message != NULL) {
		if ((got = structured(a, &err, have_out ? &so : NULL, &sc,
		    &m)) == -1)
			goto fail;
		type = got ? m.type : "unknown";
		cls = got ? m.cls : CB_CLASS_RECOVERABLE;
		msg = strdup(a->message);
		goto found;
	}
	/* The stderr rows, then stdout: every row for a known agent (its
	 * errors are printed there), only the summaries of a command that
	 * exited and already failed for any other. */
	got = match_rows(a, &err, SIDE_ERR, f->signo == 0 ? f->exit_code : -1,
	    &sc, &m);
	if (!got && have_out && (a != NULL || f->signo == 0))
		got = match_rows(a, &so, a != NULL ? SIDE_ERR : SIDE_OUT, -1,
		    &sc, &m);
	if (a != NULL && a->type != NULL) {
		/* The adapter knows better what the exit status means. */
		m.type = a->type;
		m.cls = a->cls;
		if (!got) {
			m.t = &err;
			m.line = -1;
		}
		got = 1;
	}
	if (got) {
		type = m.type;
		cls = m.cls;
		/* A test failure is the failing test's own line, not the
		 * runner's summary: different tests are different errors. */
		if (strcmp(type, "test_failure") == 0 &&
		    ((line = flagged(&err, L_FAIL)) >= 0 ||
		    (have_out && (line = flagged(&so, L_FAIL)) >= 0))) {
			m.t = line == flagged(&err, L_FAIL) ? &err : &so;
			m.line = line;
		}
		if (m.line >= 0)
			msg = line_dup(m.t, (size_t)m.line);
		else if ((msg = a != NULL ? last_words(m.t, L_NOISE, "") :
		    last_line(m.t, L_NOISE, "")) != NULL && *msg == '\0') {
			free(msg);
			msg = a != NULL && have_out ?
			    last_words(&so, L_NOISE, fallback) :
			    strdup(fallback);
		}
		goto found;
	}
	cls = CB_CLASS_RECOVERABLE;
	/* No row matched a line: the message is stderr's last line (a known
	 * agent's stdout when it wrote nothing there), or the signal or
	 * status when there is none (SPEC §4). */
	type = f->signo != 0 && !f->signalled_by_us ? "killed" : "unknown";
	msg = a != NULL ? last_words(&err, L_NOISE, "") :
	    last_line(&err, L_NOISE, "");
	if (msg != NULL && *msg == '\0') {
		free(msg);
		msg = a != NULL && have_out ?
		    last_words(&so, L_NOISE, fallback) : strdup(fallback);
	}

found:
	if (msg == NULL)
		goto fail;
	out->cls = cls;
	snprintf(out->type, sizeof(out->type), "%s", type);
	out->message = msg;
	if (error_fingerprint(out->type, msg, f->tmpdir, out->hash) == -1)
		goto fail;
success:
	rc = 0;
fail:
	text_free(&err);
	text_free(&so);
	text_free(&uerr);
	text_free(&uso);
	if (rc == -1) {
		classification_free(out);
		memset(out, 0, sizeof(*out));
	}
	return rc;
}

void
classification_free(struct classification *c)
{
	free(c->message);
	c->message = NULL;
}
