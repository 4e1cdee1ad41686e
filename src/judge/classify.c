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
 * case-sensitive pattern for stderr, an HTTP status to find as a number of
 * its own, and the line-anchored patterns tried on stdout of a failed run.
 * "FAILED" is case-sensitive: folded, it would match "build failed" and
 * every other "failed", leaving the build_error row unreachable.
 */
enum { P_ERR, P_ERR_EXACT, P_OUT, P_OUT_EXACT, P_N };

static const struct builtin {
	const char *type;
	enum cb_class cls;
	int exit_code;		/* exit status that selects the row, or -1 */
	const char *status;	/* "429", "503" or NULL */
	const char *re[P_N];
} builtins[] = {
	{ "command_not_found", CB_CLASS_FATAL, 127, NULL,
	    { "command not found" } },
	{ "permission_denied", CB_CLASS_FATAL, 126, NULL,
	    { "permission denied|EACCES|operation not permitted" } },
	{ "missing_dependency", CB_CLASS_FATAL, -1, NULL,
	    { "ModuleNotFoundError|Cannot find module|"
	      "error while loading shared libraries|No module named|"
	      "package .{0,200} not found" } },
	{ "rate_limited", CB_CLASS_TRANSIENT, -1, "429",
	    { "rate[ _-]?limit|too many requests|usage limit|quota exceeded|"
	      "overloaded" } },
	{ "network", CB_CLASS_TRANSIENT, -1, "503",
	    { "ECONNRESET|ECONNREFUSED|ETIMEDOUT|connection refused|"
	      "connection reset|temporary failure in name resolution|"
	      "could not resolve host|network is unreachable" } },
	{ "syntax_error", CB_CLASS_RECOVERABLE, -1, NULL,
	    { "SyntaxError|syntax error|parse error|unexpected token" } },
	{ "test_failure", CB_CLASS_RECOVERABLE, -1, NULL,
	    { "AssertionError|tests? failed|^not ok|^Result: FAIL|"
	      "^=+ .*[0-9]+ failed|^Tests: +[0-9]+ failed",
	      "(^|[^A-Za-z0-9_])FAILED([^A-Za-z0-9_]|$)",
	      "^Result: FAIL|^=+ .*[0-9]+ failed|^Tests: +[0-9]+ failed|"
	      "^not ok",
	      "^FAILED" } },
	{ "build_error", CB_CLASS_RECOVERABLE, -1, NULL,
	    { "error(\\[[A-Z0-9]+\\])?:|undefined reference|"
	      "make(\\[[0-9]+\\])?: \\*\\*\\*|compilation failed|build failed",
	      NULL,
	      "^make(\\[[0-9]+\\])?: \\*\\*\\*|"
	      "^[^ :]+:[0-9]+(:[0-9]+)?: (fatal )?error:|"
	      "^error(\\[[A-Z0-9]+\\])?:" } },
};

static regex_t builtin_re[NELEM(builtins)][P_N];
static int builtin_ready;

static long
earlier(long a, long b)
{
	return a < 0 || (b >= 0 && b < a) ? b : a;
}

/* First line of t matching row i's stderr (out=0) or stdout (out=1) side. */
static long
row_first(size_t i, int out, const struct text *t)
{
	long line = -1;
	int p;

	for (p = out ? P_OUT : P_ERR; p <= (out ? P_OUT_EXACT : P_ERR_EXACT);
	    p++)
		if (builtins[i].re[p] != NULL)
			line = earlier(line, re_first(&builtin_re[i][p], t));
	if (!out && builtins[i].status != NULL)
		line = earlier(line, status_first(builtins[i].status, t));
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
			if (p == P_ERR || p == P_OUT)
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

int
classify(const struct rule *rules, size_t n_rules,
    const struct run_facts *f, struct classification *out)
{
	struct text err = { 0 }, so = { 0 }, uerr = { 0 }, uso = { 0 };
	const struct text *src;
	const char *type = NULL;
	enum cb_class cls = CB_CLASS_RECOVERABLE;
	char *msg = NULL, fallback[64], sigbuf[32];
	int ok, have_out = 0, rc = -1;
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
	ok = run_ok(f);
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
		type = "timeout";
		cls = CB_CLASS_TIMEOUT;
		msg = last_line(&err, "timed out");
		goto found;
	}
	/* Compiled when first needed: a run that succeeded or timed out
	 * pays nothing for the table. */
	if (builtins_init() == -1)
		goto fail;
	for (i = 0; i < NELEM(builtins); i++) {
		line = row_first(i, 0, &err);
		if (line < 0 && !(f->signo == 0 && builtins[i].exit_code >= 0 &&
		    f->exit_code == builtins[i].exit_code))
			continue;
		type = builtins[i].type;
		cls = builtins[i].cls;
		msg = line >= 0 ? line_dup(&err, (size_t)line) :
		    last_line(&err, fallback);
		goto found;
	}
	/* stdout only refines a run that exited and already failed */
	for (i = 0; have_out && f->signo == 0 && i < NELEM(builtins); i++) {
		if (builtins[i].re[P_OUT] == NULL &&
		    builtins[i].re[P_OUT_EXACT] == NULL)
			continue;
		if ((line = row_first(i, 1, &so)) < 0)
			continue;
		type = builtins[i].type;
		cls = builtins[i].cls;
		msg = line_dup(&so, (size_t)line);
		goto found;
	}
	cls = CB_CLASS_RECOVERABLE;
	/* No row matched a line: the message is stderr's last line, or
	 * the signal or status when stderr has none (SPEC §4). */
	type = f->signo != 0 && !f->signalled_by_us ? "killed" : "unknown";
	msg = last_line(&err, fallback);

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
