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

#include "judge.h"
#include "text.h"

/*
 * The built-in table, in SPEC order.  Per row: a case-insensitive and a
 * case-sensitive pattern for stderr, HTTP statuses to find as numbers of
 * their own, the line-anchored patterns tried on stdout of a failed run,
 * and a weak pattern: a line that shows the row applies without being the
 * message (a Python traceback's head; its last line says what failed).
 * "FAILED" is case-sensitive: folded, it would match "build failed" and
 * every other "failed", leaving the build_error row unreachable; so is a
 * line-initial "error:", which folded would take every bare "Error:".
 */
enum { P_ERR, P_ERR_EXACT, P_OUT, P_OUT_EXACT, P_WEAK, P_N };

static const struct builtin {
	const char *type;
	enum cb_class cls;
	int exit_code;		/* exit status that selects the row, or -1 */
	const char *status[2];	/* HTTP statuses ("429"), or NULL */
	const char *re[P_N];
} builtins[] = {
	{ "command_not_found", CB_CLASS_FATAL, 127, { NULL },
	    { "command not found" } },
	{ "permission_denied", CB_CLASS_FATAL, 126, { NULL },
	    { "permission denied|EACCES|operation not permitted" } },
	{ "missing_dependency", CB_CLASS_FATAL, -1, { NULL },
	    { "ModuleNotFoundError|Cannot find module|"
	      "error while loading shared libraries|No module named|"
	      "package .{0,200} not found" } },
	{ "auth", CB_CLASS_FATAL, -1, { "401" },
	    { "invalid[ _-]?(api[ _-]?key|x-api-key)|incorrect api key|"
	      "api key not valid|not logged in|please run /login|"
	      "authentication_error|authentication_failed|"
	      "failed to authenticate|authentication required|"
	      "invalid (auth(entication)?|access) (token|credentials)|"
	      "api key (is )?(missing|required)|missing api key|"
	      "no api key|didn't provide an api key|"
	      "x-api-key header is required|"
	      "must specify the [a-z_]*api_key|"
	      "missing environment variable:? .{0,2}[a-z_]*(api_key|token)|"
	      "does not have permission|does not have access to (the )?model" } },
	{ "billing", CB_CLASS_FATAL, -1, { NULL },
	    { "credit balance is too low|insufficient_quota|billing_error|"
	      "exceeded your current quota.{0,200}billing|"
	      "quota exceeded\\. check your plan and billing|"
	      "credits are depleted|insufficient (ai )?credits" } },
	{ "usage_limit", CB_CLASS_TRANSIENT, -1, { NULL },
	    { "usage limit (has been )?reached|usage_limit_reached|"
	      "hit your [^.\n]{0,40}limit|out of (extra )?usage|"
	      "exhausted your daily quota|(session|weekly) limit reached" } },
	{ "rate_limited", CB_CLASS_TRANSIENT, -1, { "429" },
	    { "rate[ _-]?limit|too many requests|RESOURCE_EXHAUSTED|"
	      "quota exceeded|RetryableQuotaError" } },
	{ "overloaded", CB_CLASS_TRANSIENT, -1, { "529", "503" },
	    { "overloaded|high demand|at capacity|service unavailable" } },
	{ "server_error", CB_CLASS_TRANSIENT, -1, { "500", "502" },
	    { "internal server error|bad gateway|"
	      "an internal error has occurred|server had an error" } },
	{ "network", CB_CLASS_TRANSIENT, -1, { NULL },
	    { "ECONNRESET|ETIMEDOUT|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|"
	      "connection refused|connection reset|connection error|"
	      "connection failed|connection dropped|unable to connect|"
	      "fetch failed|temporary failure in name resolution|"
	      "could not resolve host|network is unreachable|"
	      "waiting for network|reconnecting\\.\\.\\.|request timed out|"
	      "stream disconnected|"
	      "stream ended without|socket hang up" } },
	{ "syntax_error", CB_CLASS_RECOVERABLE, -1, { NULL },
	    { "SyntaxError|syntax error|parse error|unexpected token" } },
	{ "test_failure", CB_CLASS_RECOVERABLE, -1, { NULL },
	    { "AssertionError|tests? failed|^not ok|^Result: FAIL|"
	      "^=+ .*[0-9]+ failed|^Tests: +[0-9]+ failed",
	      "(^|[^A-Za-z0-9_])FAILED([^A-Za-z0-9_]|$)",
	      "^Result: FAIL|^=+ .*[0-9]+ failed|^Tests: +[0-9]+ failed|"
	      "^not ok",
	      "^FAILED" } },
	{ "runtime_error", CB_CLASS_RECOVERABLE, -1, { NULL },
	    { "TypeError|ReferenceError|ValueError|KeyError|AttributeError|"
	      "NameError|IndexError|ZeroDivisionError|RangeError|"
	      "NullPointerException|panic:|Segmentation fault|Uncaught|"
	      "unhandled (promise )?rejection|unhandled exception|"
	      "Exception in thread",
	      NULL, NULL, NULL,
	      "^Traceback \\(most recent call last\\)" } },
	{ "build_error", CB_CLASS_RECOVERABLE, -1, { NULL },
	    { "^[^ :]+:[0-9]+(:[0-9]+)?: (fatal )?error:|"
	      "undefined reference|ld returned|error TS[0-9]+:|"
	      "make(\\[[0-9]+\\])?: \\*\\*\\*|compilation failed|build failed",
	      "^error(\\[[A-Z0-9]+\\])?:",
	      "^make(\\[[0-9]+\\])?: \\*\\*\\*|"
	      "^[^ :]+:[0-9]+(:[0-9]+)?: (fatal )?error:",
	      "^error(\\[[A-Z0-9]+\\])?:" } },
};

static regex_t builtin_re[NELEM(builtins)][P_N];
static int builtin_ready;

static long
earlier(long a, long b)
{
	return a < 0 || (b >= 0 && b < a) ? b : a;
}

/* Which patterns of a row a text is matched against. */
enum side {
	SIDE_ERR,	/* stderr, or a known agent's stdout or message */
	SIDE_OUT	/* stdout of another failed command: summaries */
};

/* First line of t matching row i on that side, or -1. */
static long
row_first(size_t i, enum side side, const struct text *t)
{
	long line = -1;
	int p, lo = side == SIDE_OUT ? P_OUT : P_ERR;
	size_t k;

	for (p = lo; p <= lo + 1; p++)
		if (builtins[i].re[p] != NULL)
			line = earlier(line, re_first(&builtin_re[i][p], t));
	for (k = 0; side == SIDE_ERR && k < NELEM(builtins[i].status) &&
	    builtins[i].status[k] != NULL; k++)
		line = earlier(line, status_first(builtins[i].status[k], t));
	return line;
}

static int
builtins_init(void)
{
	static unsigned char done[NELEM(builtins)][P_N];
	size_t i;
	int p, flags;

	if (builtin_ready)
		return 0;
	for (i = 0; i < NELEM(builtins); i++)
		for (p = 0; p < P_N; p++) {
			if (builtins[i].re[p] == NULL)
				continue;
			flags = REG_EXTENDED | REG_NEWLINE;
			if (p == P_ERR || p == P_OUT || p == P_WEAK)
				flags |= REG_ICASE;
			if (regcomp(&builtin_re[i][p], builtins[i].re[p],
			    flags) != 0)
				goto fail;
			done[i][p] = 1;
		}
	builtin_ready = 1;
	return 0;
fail:
	for (i = 0; i < NELEM(builtins); i++)
		for (p = 0; p < P_N; p++)
			if (done[i][p]) {
				regfree(&builtin_re[i][p]);
				done[i][p] = 0;
			}
	return -1;
}

int
status_type(int http_status, enum cb_class *cls, const char **type)
{
	static const struct {
		int status;
		const char *type;
	} map[] = {
		{ 401, "auth" }, { 403, "auth" }, { 402, "billing" },
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

/* The adapter's own rows, then the built-in ones, on t; exit_code (-1:
 * none) selects the rows that an exit status names. */
static int
match_rows(const struct agent_verdict *a, const struct text *t,
    enum side side, int exit_code, struct match *m)
{
	size_t i;
	long line;

	for (i = 0; a != NULL && side == SIDE_ERR && i < a->n_rules; i++)
		if ((line = re_first(&a->rules[i].re, t)) >= 0) {
			m->type = a->rules[i].type;
			m->cls = a->rules[i].cls;
			m->t = t;
			m->line = line;
			m->weak = 0;
			return 1;
		}
	for (i = 0; i < NELEM(builtins); i++) {
		m->weak = 0;
		line = row_first(i, side, t);
		if (line < 0 && side == SIDE_ERR && builtins[i].re[P_WEAK] &&
		    re_first(&builtin_re[i][P_WEAK], t) >= 0)
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

/*
 * A known agent's structured error: its own message, typed by the
 * adapter, else by the rows that match the message, else by its HTTP
 * status, else by what matches stderr or stdout.
 */
static int
structured(const struct agent_verdict *a, const struct text *err,
    const struct text *so, struct match *m)
{
	struct text msg;
	int found;

	if (a->type != NULL) {
		m->type = a->type;
		m->cls = a->cls;
		return 1;
	}
	if (text_init(&msg, a->message, strlen(a->message)) == -1)
		return -1;
	found = match_rows(a, &msg, SIDE_ERR, -1, m);
	text_free(&msg);
	if (found)
		return 1;
	if (status_type(a->http_status, &m->cls, &m->type) == 0)
		return 1;
	return match_rows(a, err, SIDE_ERR, -1, m) ||
	    (so != NULL && match_rows(a, so, SIDE_ERR, -1, m));
}

int
message_type(const struct rule *rules, size_t n_rules, const char *msg,
    enum cb_class *cls, const char **type)
{
	struct agent_verdict a;
	struct text t;
	struct match m;
	int got;

	if (builtins_init() == -1 || text_init(&t, msg, strlen(msg)) == -1)
		return -1;
	memset(&a, 0, sizeof(a));
	a.rules = rules;
	a.n_rules = n_rules;
	got = match_rows(&a, &t, SIDE_ERR, -1, &m);
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
			    strdup(a->retry_message) : last_line(&err, fallback);
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
		msg = a == NULL ? last_line(&err, "timed out") :
		    a->message != NULL ? strdup(a->message) :
		    last_words(&err, "timed out");
		goto found;
	}
	/* Compiled when first needed: a run that succeeded or timed out
	 * pays nothing for the table. */
	if (builtins_init() == -1)
		goto fail;
	if (a != NULL && a->message != NULL) {
		if ((got = structured(a, &err, have_out ? &so : NULL,
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
	    &m);
	if (!got && have_out && (a != NULL || f->signo == 0))
		got = match_rows(a, &so, a != NULL ? SIDE_ERR : SIDE_OUT, -1,
		    &m);
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
		if (m.line >= 0)
			msg = line_dup(m.t, (size_t)m.line);
		else if ((msg = a != NULL ? last_words(m.t, "") :
		    last_line(m.t, "")) != NULL && *msg == '\0') {
			free(msg);
			msg = a != NULL && have_out ?
			    last_words(&so, fallback) : strdup(fallback);
		}
		goto found;
	}
	cls = CB_CLASS_RECOVERABLE;
	/* No row matched a line: the message is stderr's last line (a known
	 * agent's stdout when it wrote nothing there), or the signal or
	 * status when there is none (SPEC §4). */
	type = f->signo != 0 && !f->signalled_by_us ? "killed" : "unknown";
	msg = a != NULL ? last_words(&err, "") : last_line(&err, "");
	if (msg != NULL && *msg == '\0') {
		free(msg);
		msg = a != NULL && have_out ? last_words(&so, fallback) :
		    strdup(fallback);
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
