/* SPDX-License-Identifier: ISC */
/*
 * report.c: the bytes users and machines see — stderr lines, the OPEN
 * block, --log JSON Lines, the metrics file, the hook, --status and
 * --history.  stderr is captured by pointing fd 2 at a temp file.
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "report.h"
#include "store.h"
#include "tap.h"

static char dir[64];
static int cap_fd = -1, cap_saved = -1;

static void
cap_start(void)
{
	char path[] = "/tmp/report-cap.XXXXXX";

	fflush(stderr);
	cap_fd = mkstemp(path);
	unlink(path);
	cap_saved = dup(STDERR_FILENO);
	dup2(cap_fd, STDERR_FILENO);
}

static char *
slurp_fd(int fd)
{
	char *p = NULL;
	size_t n = 0;
	ssize_t r;

	lseek(fd, 0, SEEK_SET);
	do {
		p = realloc(p, n + 4097);
		r = read(fd, p + n, 4096);
		if (r > 0)
			n += (size_t)r;
	} while (r > 0);
	p[n] = '\0';
	return p;
}

static char *
cap_end(void)
{
	char *p;

	fflush(stderr);
	dup2(cap_saved, STDERR_FILENO);
	close(cap_saved);
	p = slurp_fd(cap_fd);
	close(cap_fd);
	return p;
}

static char *
slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	char *p;

	if (fd < 0)
		return NULL;
	p = slurp_fd(fd);
	close(fd);
	return p;
}

static char *
tmp_path(const char *name)
{
	static char buf[8][128];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct reporter
reporter(void)
{
	struct reporter r = {
		.label = "nightly", .name = "nightly",
		.state_path = "/var/lib/cb/nightly.json", .verbosity = 0,
		.color = 0, .log_fd = -1, .metrics_path = NULL, .hook = NULL,
		.hook_timeout = 0,
	};
	return r;
}

static struct classification
cls(enum cb_class c, const char *type, char *msg)
{
	struct classification k;

	memset(&k, 0, sizeof(k));
	k.cls = c;
	snprintf(k.type, sizeof(k.type), "%s", type);
	k.message = msg;
	if (c != CB_CLASS_SUCCESS)
		memset(k.hash, 'a', 64);
	return k;
}

static void
test_run_lines(void)
{
	struct reporter r = reporter();
	char msg[] = "x.c:1: error: boom", tmsg[] = "run timed out",
	    kmsg[] = "killed by signal 9";
	struct classification err = cls(CB_CLASS_RECOVERABLE, "build_error",
	    msg), ok_ = cls(CB_CLASS_SUCCESS, "", NULL),
	    to = cls(CB_CLASS_TIMEOUT, "timeout", tmsg),
	    kl = cls(CB_CLASS_RECOVERABLE, "killed", kmsg);
	struct run_report rr = { .iteration = 3, .duration = 2.41,
	    .exit_code = 1, .c = &err };
	char *out;

	cap_start();
	report_run(&r, &rr);
	out = cap_end();
	is_str(out, "cbexec[nightly]: run 3 exited 1 after 2.41s: "
	    "recoverable build_error: x.c:1: error: boom\n", "run line: error");
	free(out);

	rr.exit_code = 0;
	rr.duration = 0.01;
	rr.progress = 1;
	rr.c = &ok_;
	cap_start();
	report_run(&r, &rr);
	out = cap_end();
	is_str(out, "cbexec[nightly]: run 3 exited 0 after 0.01s\n",
	    "run line: success");
	free(out);

	r.verbosity = 1;
	rr.progress = 0;
	cap_start();
	report_run(&r, &rr);
	out = cap_end();
	is_str(out, "cbexec[nightly]: run 3 exited 0 after 0.01s "
	    "(no progress)\n", "run line: verbose success says progress");
	free(out);
	r.verbosity = 0;

	rr.exit_code = -1;
	rr.signo = SIGTERM;
	rr.timed_out = 1;
	rr.duration = 0.2;
	rr.c = &to;
	cap_start();
	report_run(&r, &rr);
	out = cap_end();
	is_str(out, "cbexec[nightly]: run 3 timed out after 0.20s: "
	    "timeout: run timed out\n", "run line: timeout, the class once");
	free(out);

	rr.iteration = 4;
	rr.signo = SIGKILL;
	rr.timed_out = 0;
	rr.duration = 1;
	rr.c = &kl;
	cap_start();
	report_run(&r, &rr);
	out = cap_end();
	is_str(out, "cbexec[nightly]: run 4 killed by SIGKILL after 1.00s: "
	    "recoverable killed: killed by signal 9\n", "run line: killed");
	free(out);

	r.verbosity = -1;
	cap_start();
	report_run(&r, &rr);
	out = cap_end();
	is_str(out, "", "quiet: no run line");
	free(out);
}

static void
test_transitions(void)
{
	struct reporter r = reporter();
	struct cb_transition half = { CB_CLOSED, CB_HALF_OPEN,
	    "No progress detected for 2 iterations", 0 };
	struct cb_transition open_ = { CB_HALF_OPEN, CB_OPEN,
	    "No progress for 3 iterations", 0 };
	char *out;

	cap_start();
	report_transition(&r, &half, NULL, 2);
	report_transition(&r, &open_, NULL, 3);
	out = cap_end();
	is_str(out, "cbexec[nightly]: circuit CLOSED -> HALF_OPEN: WARNING: "
	    "No progress detected for 2 iterations\n"
	    "cbexec[nightly]: circuit HALF_OPEN -> OPEN: No progress for 3 "
	    "iterations\n",
	    "transition lines, WARNING for CLOSED -> HALF_OPEN");
	free(out);

	r.verbosity = -1;
	cap_start();
	report_transition(&r, &half, NULL, 2);
	report_transition(&r, &open_, NULL, 3);
	report_warn(&r, "something %d", 1);
	report_event(&r, "reset", "fixed");
	out = cap_end();
	is_str(out, "cbexec[nightly]: circuit HALF_OPEN -> OPEN: No progress "
	    "for 3 iterations\n", "quiet: only the transition to OPEN");
	free(out);

	r.verbosity = 0;
	r.color = 1;
	cap_start();
	report_transition(&r, &open_, NULL, 3);
	out = cap_end();
	ok(strstr(out, "\033[31m") != NULL && strstr(out, "\033[0m") != NULL,
	    "colour: OPEN in red");
	free(out);
	r.color = 0;
	cap_start();
	report_transition(&r, &open_, NULL, 3);
	out = cap_end();
	ok(strchr(out, '\033') == NULL, "no colour unless asked");
	free(out);

	cap_start();
	report_warn(&r, "disk %s", "full");
	report_event(&r, "reset", "fixed flaky fixture");
	out = cap_end();
	is_str(out, "cbexec[nightly]: warning: disk full\n"
	    "cbexec[nightly]: reset: fixed flaky fixture\n",
	    "warning and operator event lines");
	free(out);
}

/* A GREEN circuit opened for no progress, with a status report. */
static void
green_state(struct cb_state *s, struct status_report *st,
    struct metric *m)
{
	breaker_init(s, "nightly");
	s->state = CB_OPEN;
	s->phase = strdup("GREEN");
	s->open_reason = strdup("No progress for 2 iterations");
	s->iteration = 5;
	s->last_error.message = strdup("TypeError: Cannot read property 'x' "
	    "of undefined");
	s->last_progress_metric =
	    cJSON_Parse("{\"GREEN\":{\"tests_passing\":3}}");
	s->outcome = OUT_OPEN;
	memset(st, 0, sizeof(*st));
	m[0].key = "tests_passing";
	m[0].value = 3;
	m[1].key = "tests_failing";
	m[1].value = 7;
	st->present = 1;
	st->exit_signal = -1;
	st->metrics = m;
	st->n_metrics = 2;
}

static void
test_open_block(void)
{
	struct reporter r = reporter();
	struct cb_state s;
	struct status_report st;
	struct metric m[2];
	char *out;

	green_state(&s, &st, m);
	r.verbosity = -1;	/* shown even when quiet */
	cap_start();
	report_open_block(&r, &s, &st, "cbexec --reset-circuit --name nightly");
	out = cap_end();
	is_str(out,
	    "---CIRCUIT_BREAKER_OPEN---\n"
	    "CIRCUIT: nightly   PHASE: GREEN\n"
	    "REASON: No progress for 2 iterations\n"
	    "ITERATIONS: 5\n"
	    "TESTS_PASSING: 3/10 (no change)\n"
	    "LAST_ERROR: TypeError: Cannot read property 'x' of undefined\n"
	    "SUGGESTION: Consider refactoring approach or splitting the "
	    "feature\n"
	    "RESET: cbexec --reset-circuit --name nightly\n"
	    "---END_CIRCUIT_BREAKER_OPEN---\n", "OPEN block, GREEN");
	free(out);

	/* No phase, no status, no error, a repeating failure. */
	free(s.phase);
	s.phase = NULL;
	free(s.last_error.message);
	s.last_error.message = NULL;
	free(s.open_reason);
	s.open_reason = strdup("Same error 5 times");
	s.outcome = OUT_STUCK;
	m[0].value = 4;
	cap_start();
	report_open_block(&r, &s, NULL, "cbexec --reset-circuit");
	out = cap_end();
	is_str(out,
	    "---CIRCUIT_BREAKER_OPEN---\n"
	    "CIRCUIT: nightly   PHASE: none\n"
	    "REASON: Same error 5 times\n"
	    "ITERATIONS: 5\n"
	    "SUGGESTION: The same failure repeats: change the approach or "
	    "fix it, then reset\n"
	    "RESET: cbexec --reset-circuit\n"
	    "---END_CIRCUIT_BREAKER_OPEN---\n", "OPEN block, STUCK, no phase");
	free(out);

	s.phase = strdup("GREEN");
	cap_start();
	report_open_block(&r, &s, &st, "x");
	out = cap_end();
	ok(strstr(out, "TESTS_PASSING: 4/11\n") != NULL,
	    "TESTS_PASSING without (no change) when it moved");
	free(out);

	free(s.open_reason);
	s.open_reason = strdup("fatal: permission_denied");
	s.outcome = OUT_ABORT;
	cap_start();
	report_open_block(&r, &s, NULL, "x");
	out = cap_end();
	ok(strstr(out, "SUGGESTION: Fix the environment (permission, "
	    "command, dependency), then reset\n") != NULL,
	    "fatal suggestion");
	free(out);
	breaker_free(&s);
}

/* desc passes when hay holds needle. */
static void
like_str(const char *hay, const char *needle, const char *desc)
{
	if (!ok(hay != NULL && strstr(hay, needle) != NULL, desc))
		printf("#   got: %s\n#   want in it: %s\n", hay, needle);
}

/* An error event as breaker_record() logs one. */
static void
err_event(struct cb_state *s, long it, const char *cls_, const char *type,
    const char *msg, const char *hash, const char *task)
{
	struct cb_event e;

	memset(&e, 0, sizeof(e));
	e.ts = 1795000000 + it;
	e.iteration = it;
	e.kind = EV_ERROR;
	e.from = e.to = -1;
	e.progress = 0;
	e.exit_code = 1;
	e.reason = (char *)msg;
	e.task = (char *)task;
	snprintf(e.cls, sizeof(e.cls), "%s", cls_);
	snprintf(e.type, sizeof(e.type), "%s", type);
	snprintf(e.hash, sizeof(e.hash), "%s", hash);
	breaker_add_event(s, 100, &e);
}

static void
test_stuck(void)
{
	struct reporter r = reporter();
	struct stuck_analysis a;
	struct cb_result res;
	struct cb_limits l;
	struct cb_state s;
	char *out, line[64];
	int i, lines;

	breaker_default_limits(&l);
	breaker_init(&s, "nightly");
	is_int(stuck_analyse(&s, &a), 0, "no history: nothing to analyse");

	/* Old failures before a reset are not looked at. */
	err_event(&s, 1, "recoverable", "runtime_error", "old.py failed",
	    "h0", "T-0");
	breaker_reset(&s, &l, NULL, NULL, 1795000001.5, &res);
	err_event(&s, 2, "recoverable", "build_error",
	    "src/foo.c:12: error: 'x' undeclared", "h1", "T-1");
	err_event(&s, 3, "recoverable", "test_failure",
	    "FAILED tests/test_foo.py::test_x - see ./src/foo.c.", "h2",
	    "T-1");
	err_event(&s, 4, "recoverable", "build_error",
	    "src/foo.c:14: error: 'x' undeclared", "h1", "T-2");
	err_event(&s, 5, "recoverable", "build_error",
	    "src/foo.c:19: error: 'x' undeclared (see https://gcc.gnu.org/x.html)",
	    "h1", "T-1");
	is_int(stuck_analyse(&s, &a), 1, "failures: analysed");
	is_int(a.failures, 4, "the failures since the reset");
	ok(a.first_run == 2 && a.last_run == 5, "their runs");
	is_int(a.error_count, 3, "most common error: 3 of them");
	is_str(a.error, "build_error: src/foo.c:12: error: 'x' undeclared",
	    "most common error: its first message");
	is_str(a.file, "src/foo.c", "the file most named ('./' and '.' "
	    "dropped, a URL's host not a file)");
	is_int(a.file_count, 4, "named in all four");
	is_str(a.task, "T-1", "the task that failed most");
	is_int(a.task_count, 3, "3 of 4");
	is_str(a.hint, "task T-1 keeps failing: split it, or --skip --task "
	    "it", "hint: the task");

	s.state = CB_OPEN;
	s.open_reason = strdup("Same error 3 times: x");
	s.iteration = 5;
	s.outcome = OUT_STUCK;
	breaker_skip(&s, &l, SKIP_PHASE, "GREEN", "known failures", "alice",
	    1795000000.5, &res);
	s.state = CB_OPEN;	/* as if it opened again since */
	err_event(&s, 6, "recoverable", "build_error",
	    "src/foo.c:12: error: 'x' undeclared", "h1", NULL);
	err_event(&s, 7, "recoverable", "build_error",
	    "src/foo.c:12: error: 'x' undeclared", "h1", NULL);
	r.verbosity = -1;
	cap_start();
	report_open_block(&r, &s, NULL, "cbexec --reset-circuit --name x");
	out = cap_end();
	like_str(out, "\nANALYSIS: the last 2 failures (runs 6-7)\n"
	    "MOST_COMMON_ERROR: 2x build_error: src/foo.c:12: error: 'x' "
	    "undeclared\nMOST_NAMED_FILE: src/foo.c (in 2 of 2)\n"
	    "HINT: the same error every time: fix its cause first, in "
	    "src/foo.c\n", "OPEN block: the analysis");
	like_str(out, "\nSKIPPED: phase GREEN at 2026-11-18T11:06:40.500Z by "
	    "alice: known failures\n", "OPEN block: the skip, when, who, why");
	free(out);

	/* However long the history, the analysis stays 3 to 5 lines. */
	for (i = 0; i < 300; i++) {
		snprintf(line, sizeof(line), "file%d.py: boom %d", i, i);
		err_event(&s, 8 + i, i % 2 ? "transient" : "recoverable",
		    "unknown", line, i % 3 ? "hA" : "hB", i % 5 ? "T-a" : "T-b");
	}
	stuck_analyse(&s, &a);
	is_int(a.failures, STUCK_WINDOW, "the window is bounded");
	cap_start();
	report_open_block(&r, &s, NULL, NULL);
	out = cap_end();
	{
		const char *p = strstr(out, "ANALYSIS:");

		for (lines = 0; p != NULL && strncmp(p, "SKIPPED:", 8) != 0;
		    lines++)
			p = strchr(p, '\n') != NULL ? strchr(p, '\n') + 1 : NULL;
	}
	ok(lines >= 3 && lines <= 5, "the analysis: 3 to 5 lines");
	free(out);

	/* Silent: nothing on stderr. */
	r.verbosity = -2;
	cap_start();
	report_open_block(&r, &s, NULL, NULL);
	out = cap_end();
	is_str(out, "", "silent: no OPEN block on stderr");
	free(out);
	breaker_free(&s);
}

static cJSON *
line_json(char **cursor)
{
	char *nl = strchr(*cursor, '\n'), *line = *cursor;
	cJSON *j;

	if (nl == NULL)
		return NULL;
	*nl = '\0';
	*cursor = nl + 1;
	j = cJSON_Parse(line);
	return j;
}

static const char *
jstr(const cJSON *j, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, k));
}

static int
jnull(const cJSON *j, const char *k)
{
	return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, k));
}

static double
jnum(const cJSON *j, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);

	return cJSON_IsNumber(v) ? v->valuedouble : -999;
}

static void
test_log(void)
{
	struct reporter r = reporter();
	char msg[] = "x.c:1: error: boom";
	struct classification err = cls(CB_CLASS_RECOVERABLE, "build_error",
	    msg), good = cls(CB_CLASS_SUCCESS, "", NULL);
	struct run_report rr = { .iteration = 3, .duration = 2.5,
	    .exit_code = 1, .c = &err };
	struct cb_transition t = { CB_CLOSED, CB_HALF_OPEN,
	    "No progress detected for 2 iterations", 0 };
	struct cb_state s;
	struct status_report st;
	struct metric m[2];
	char *text, *cur, *out;
	cJSON *j;
	int nlines = 0, allvalid = 1;

	green_state(&s, &st, m);
	r.log_fd = open(tmp_path("log.jsonl"), O_WRONLY | O_CREAT | O_APPEND |
	    O_CLOEXEC, 0600);
	r.verbosity = -1;	/* the log gets everything anyway */
	cap_start();
	report_run(&r, &rr);
	rr.exit_code = 0;
	rr.progress = 1;
	rr.c = &good;
	report_run(&r, &rr);
	rr.exit_code = -1;
	rr.signo = SIGKILL;
	report_run(&r, &rr);
	report_transition(&r, &t, NULL, 3);
	report_open_block(&r, &s, &st, "cbexec --reset-circuit --name nightly");
	report_event(&r, "reset", "fixed it");
	report_warn(&r, "hook exited %d", 2);
	out = cap_end();
	close(r.log_fd);
	free(out);

	text = slurp(tmp_path("log.jsonl"));
	for (cur = text; *cur != '\0'; nlines++)
		if ((j = line_json(&cur)) == NULL)
			allvalid = 0;
		else
			cJSON_Delete(j);
	is_int(nlines, 7, "one log line per event");
	ok(allvalid, "every log line parses as JSON");
	free(text);

	text = slurp(tmp_path("log.jsonl"));
	cur = text;
	j = line_json(&cur);
	ok(jnum(j, "v") == 2, "\"v\": 2");
	ok(jstr(j, "timestamp") != NULL && strlen(jstr(j, "timestamp")) == 24 &&
	    jstr(j, "timestamp")[23] == 'Z', "timestamp is ISO-8601 with ms");
	is_str(jstr(j, "circuit"), "nightly", "circuit");
	is_str(jstr(j, "event"), "run", "run event");
	is_int(jnum(j, "iteration"), 3, "run: iteration");
	ok(jnum(j, "duration") == 2.5, "run: duration");
	is_int(jnum(j, "exit_code"), 1, "run: exit_code");
	ok(jnull(j, "signal"), "run: signal null");
	ok(cJSON_IsFalse(cJSON_GetObjectItem(j, "timed_out")),
	    "run: timed_out false");
	is_str(jstr(j, "class"), "recoverable", "run: class");
	is_str(jstr(j, "type"), "build_error", "run: type");
	ok(jstr(j, "error_hash") && strlen(jstr(j, "error_hash")) == 64,
	    "run: error_hash");
	is_str(jstr(j, "message"), "x.c:1: error: boom", "run: message");
	ok(cJSON_IsFalse(cJSON_GetObjectItem(j, "progress")),
	    "run: progress false");
	cJSON_Delete(j);

	j = line_json(&cur);
	is_str(jstr(j, "class"), "success", "success run: class");
	ok(jnull(j, "error_hash") && jnull(j, "message"),
	    "success run: error_hash and message null");
	ok(cJSON_IsTrue(cJSON_GetObjectItem(j, "progress")),
	    "success run: progress true");
	cJSON_Delete(j);

	j = line_json(&cur);
	is_int(jnum(j, "exit_code"), 137, "killed run: exit_code 128+9, as "
	    "the history has it");
	is_str(jstr(j, "signal"), "SIGKILL", "killed run: signal name");
	cJSON_Delete(j);

	j = line_json(&cur);
	is_str(jstr(j, "event"), "state_change", "transition: a state_change");
	is_str(jstr(j, "from_state"), "CLOSED", "transition: from_state");
	is_str(jstr(j, "to_state"), "HALF_OPEN", "transition: to_state");
	is_str(jstr(j, "reason"), "No progress detected for 2 iterations",
	    "transition: reason");
	is_int(jnum(j, "iteration"), 3, "transition: iteration");
	cJSON_Delete(j);

	j = line_json(&cur);
	is_str(jstr(j, "event"), "open", "open event");
	is_str(jstr(j, "reason"), "No progress for 2 iterations",
	    "open: reason");
	is_int(jnum(j, "iteration"), 5, "open: iteration");
	is_str(jstr(j, "phase"), "GREEN", "open: phase");
	ok(jstr(j, "last_error") && strncmp(jstr(j, "last_error"),
	    "TypeError", 9) == 0, "open: last_error");
	ok(jstr(j, "suggestion") != NULL, "open: suggestion");
	is_str(jstr(j, "reset"), "cbexec --reset-circuit --name nightly",
	    "open: reset");
	cJSON_Delete(j);

	j = line_json(&cur);
	is_str(jstr(j, "event"), "reset", "reset event");
	is_str(jstr(j, "reason"), "fixed it", "reset: reason");
	cJSON_Delete(j);

	j = line_json(&cur);
	is_str(jstr(j, "event"), "warning", "warning event");
	is_str(jstr(j, "reason"), "hook exited 2", "warning: reason");
	cJSON_Delete(j);
	free(text);
	breaker_free(&s);
}

static void
test_metrics(void)
{
	static const char *const names[] = { "cbexec_state",
	    "cbexec_runs_total", "cbexec_errors_total", "cbexec_opens_total",
	    "cbexec_last_run_seconds", "cbexec_no_progress_runs",
	    "cbexec_consecutive_errors", "cbexec_same_error_runs",
	    "cbexec_last_run_timestamp_seconds",
	    "cbexec_last_success_timestamp_seconds" };
	struct reporter r = reporter();
	struct cb_state s;
	struct stat sb;
	regex_t re;
	char err[256], want[128], *text, *line, *save = NULL;
	int rc, allmatch = 1, samples = 0, heads = 1;
	size_t i;

	breaker_init(&s, "nightly");
	s.state = CB_OPEN;
	s.iteration = 42;
	s.total_opens = 2;
	s.no_progress_count = 3;
	s.consecutive_errors = 4;
	s.same_error_count = 1;
	s.errors_total[CB_CLASS_RECOVERABLE] = 7;
	s.errors_total[CB_CLASS_TRANSIENT] = 1;
	s.errors_total[CB_CLASS_TIMEOUT] = 2;
	s.errors_total[CB_CLASS_FATAL] = 0;
	s.last_run_at = 1795316668.5884;
	s.last_run_seconds = 2.5;
	r.label = "night\"ly";
	r.metrics_path = tmp_path("cbexec.prom");
	rc = report_metrics(&r, &s, err, sizeof(err));
	is_int(rc, 0, "metrics written");
	ok(stat(r.metrics_path, &sb) == 0 && (sb.st_mode & 0777) == 0644,
	    "metrics file mode 0644");
	text = slurp(r.metrics_path);
	ok(text != NULL && text[0] != '\0' && text[strlen(text) - 1] == '\n',
	    "trailing newline");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(want, sizeof(want), "# HELP %s ", names[i]);
		if (strstr(text, want) == NULL)
			heads = 0;
		snprintf(want, sizeof(want), "# TYPE %s %s\n", names[i],
		    strstr(names[i], "_total") ? "counter" : "gauge");
		if (strstr(text, want) == NULL)
			heads = 0;
	}
	ok(heads, "HELP and TYPE for every metric");
	ok(strstr(text, "cbexec_state{circuit=\"night\\\"ly\"} 2\n") != NULL,
	    "state 2 for OPEN, label escaped");
	ok(strstr(text, "cbexec_runs_total{circuit=\"night\\\"ly\"} 42\n"),
	    "runs_total");
	ok(strstr(text, "cbexec_errors_total{circuit=\"night\\\"ly\","
	    "class=\"recoverable\"} 7\n") &&
	    strstr(text, "class=\"transient\"} 1\n") &&
	    strstr(text, "class=\"timeout\"} 2\n") &&
	    strstr(text, "class=\"fatal\"} 0\n"), "errors_total per class");
	ok(strstr(text, "cbexec_opens_total{circuit=\"night\\\"ly\"} 2\n"),
	    "opens_total");
	ok(strstr(text, "cbexec_last_run_seconds{circuit=\"night\\\"ly\"} "
	    "2.500\n"), "last_run_seconds");
	ok(strstr(text,
	    "cbexec_no_progress_runs{circuit=\"night\\\"ly\"} 3\n"),
	    "no_progress_runs");
	ok(strstr(text,
	    "cbexec_same_error_runs{circuit=\"night\\\"ly\"} 1\n"),
	    "same_error_runs");
	ok(strstr(text, "cbexec_last_run_timestamp_seconds{circuit=\"night"
	    "\\\"ly\"} 1795316668.588\n"), "last_run_timestamp_seconds");
	ok(strstr(text, "cbexec_last_success_timestamp_seconds{circuit=\"night"
	    "\\\"ly\"} 0.000\n"), "last_success_timestamp_seconds: 0, never");
	ok(strstr(text, "_count") == NULL, "no metric ends in _count");
	ok(strstr(text, "cbexec_open_reason{circuit=\"night\\\"ly\","
	    "reason=\"other\"} 1\n") != NULL,
	    "open_reason: a kind (other: no reason recorded)");
	regcomp(&re, "^[a-zA-Z_:][a-zA-Z0-9_:]*(\\{[^}]*\\})? [0-9.eE+-]+$",
	    REG_EXTENDED | REG_NOSUB);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		samples++;
		if (regexec(&re, line, 0, NULL, 0) != 0) {
			printf("# bad sample: %s\n", line);
			allmatch = 0;
		}
	}
	regfree(&re);
	ok(allmatch && samples == 16, "every sample line is well-formed");
	free(text);	/* strtok_r cut it up */
	text = slurp(r.metrics_path);
	ok(strstr(text, "cbexec_skips{circuit=\"night\\\"ly\"} 0\n") != NULL,
	    "no skips: cbexec_skips 0");
	ok(strstr(text, "cbexec_skip_timestamp_seconds") == NULL,
	    "no skips: no per-skip samples");
	free(text);

	/* Each skip: when as the value, what and why as labels. */
	{
		struct cb_limits l;
		struct cb_result res;

		breaker_default_limits(&l);
		breaker_skip(&s, &l, SKIP_PHASE, "GREEN", "say \"no\"\nnow",
		    "al", 1795000000.25, &res);
		breaker_skip(&s, &l, SKIP_TASK, "T-1", NULL, NULL,
		    1795000001.5, &res);
		is_int(report_metrics(&r, &s, err, sizeof(err)), 0,
		    "metrics with skips written");
		text = slurp(r.metrics_path);
		ok(strstr(text, "cbexec_skips{circuit=\"night\\\"ly\"} 2\n") !=
		    NULL, "cbexec_skips counts them");
		ok(strstr(text, "# TYPE cbexec_skip_timestamp_seconds gauge\n")
		    != NULL, "per-skip gauge typed");
		ok(strstr(text, "cbexec_skip_timestamp_seconds{circuit=\"night"
		    "\\\"ly\",kind=\"phase\",name=\"GREEN\",reason=\"say "
		    "\\\"no\\\"\\nnow\"} 1795000000.250\n") != NULL,
		    "a phase skip: labels escaped, when as the value");
		ok(strstr(text, "kind=\"task\",name=\"T-1\",reason=\"\"} "
		    "1795000001.500\n") != NULL, "a task skip");
		free(text);
	}

	r.metrics_path = "/nonexistent-dir/x.prom";
	rc = report_metrics(&r, &s, err, sizeof(err));
	is_int(rc, -1, "metrics: failure reported");
	ok(strncmp(err, "/nonexistent-dir/x.prom: ", 25) == 0,
	    "metrics: err names the file");
	breaker_free(&s);
}

static int
has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p;

	for (p = text; p != NULL && *p != '\0'; p = strchr(p, '\n'),
	    p = p ? p + 1 : NULL)
		if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}

/* Show what was captured as TAP comments. */
static void
diag(const char *text)
{
	const char *p, *nl;

	for (p = text; *p != '\0'; p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p) - 1;
		printf("# %.*s\n", (int)(nl - p), p);
	}
}

static pid_t
read_pid(const char *path)
{
	char *t = slurp(path);
	pid_t pid = t != NULL ? (pid_t)atoi(t) : 0;

	free(t);
	return pid;
}

/* Dead: no such process, or a zombie waiting for whoever reaps orphans. */
static int
gone(pid_t pid)
{
	char path[64], *stat, *paren;
	int i, z;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	for (i = 0; i < 100; i++) {
		if (kill(pid, 0) == -1 && errno == ESRCH)
			return 1;
		stat = slurp(path);
		paren = stat != NULL ? strrchr(stat, ')') : NULL;
		z = paren != NULL && strncmp(paren, ") Z", 3) == 0;
		free(stat);
		if (z)
			return 1;
		usleep(20000);
	}
	return 0;
}

static void
test_hook(void)
{
	struct reporter r = reporter();
	struct cb_transition t = { CB_HALF_OPEN, CB_OPEN,
	    "No progress for 3 iterations", 0 };
	struct cb_state before;
	char hook[512], ign[64], *out, *env;
	pid_t bg;
	double t0, el;

	/* What the hook should see: ours, with SIGPIPE at default. */
	signal(SIGPIPE, SIG_DFL);
	env = slurp("/proc/self/status");
	/* "SigIgn:\t<16 hex digits>", its tab escaped as a log line
	 * escapes what it quotes */
	snprintf(ign, sizeof(ign), "cbexec[nightly]: hook: SigIgn:\\t%.16s",
	    env != NULL && strstr(env, "SigIgn:\t") ? strstr(env,
	    "SigIgn:\t") + 8 : "?");
	free(env);
	breaker_init(&before, "nightly");
	before.no_progress_count = 3;
	before.same_error_count = 2;
	before.consecutive_errors = 4;
	before.same_task_failures = 1;
	before.total_opens = 5;
	setenv("CBEXEC_FROM", "stale", 1);
	snprintf(hook, sizeof(hook), "env > %s; echo hello; echo oops >&2; "
	    "if read x; then echo stdin-open; else echo stdin-eof; fi; "
	    "grep '^SigIgn' /proc/self/status; exit 3",
	    tmp_path("env"));
	r.hook = hook;
	/* cbexec ignores SIGPIPE; the hook must not inherit that.  (Its
	 * signal mask is not checked here: dash clears its own at start.) */
	signal(SIGPIPE, SIG_IGN);
	cap_start();
	report_transition(&r, &t, &before, 7);
	out = cap_end();
	signal(SIGPIPE, SIG_DFL);
	unsetenv("CBEXEC_FROM");
	env = slurp(tmp_path("env"));
	ok(env != NULL, "hook ran");
	if (env == NULL)
		env = strdup("");
	ok(has_line(env, "CBEXEC_FROM=HALF_OPEN") &&
	    strstr(env, "CBEXEC_FROM=stale") == NULL, "hook: CBEXEC_FROM "
	    "(replacing an inherited one)");
	ok(has_line(env, "CBEXEC_TO=OPEN"), "hook: CBEXEC_TO");
	ok(has_line(env, "CBEXEC_REASON=No progress for 3 iterations"),
	    "hook: CBEXEC_REASON");
	ok(has_line(env, "CBEXEC_NAME=nightly"), "hook: CBEXEC_NAME");
	ok(has_line(env, "CBEXEC_STATE_FILE=/var/lib/cb/nightly.json"),
	    "hook: CBEXEC_STATE_FILE");
	ok(has_line(env, "CBEXEC_ITERATION=7"), "hook: CBEXEC_ITERATION");
	ok(has_line(env, "CBEXEC_NO_PROGRESS_COUNT=3") &&
	    has_line(env, "CBEXEC_SAME_ERROR_COUNT=2") &&
	    has_line(env, "CBEXEC_CONSECUTIVE_ERRORS=4") &&
	    has_line(env, "CBEXEC_SAME_TASK_FAILURES=1") &&
	    has_line(env, "CBEXEC_TOTAL_OPENS=5"), "hook: counters of before");
	ok(getenv("PATH") == NULL || strstr(env, "PATH=") != NULL,
	    "hook: inherits the environment");
	free(env);
	ok(has_line(out, "cbexec[nightly]: hook: hello"), "hook stdout "
	    "prefixed");
	ok(has_line(out, "cbexec[nightly]: hook: oops"), "hook stderr "
	    "prefixed");
	ok(has_line(out, "cbexec[nightly]: hook: stdin-eof"),
	    "hook stdin is /dev/null");
	if (!ok(has_line(out, ign), "hook: SIGPIPE back to default, other "
	    "ignored signals kept"))
		diag(out);
	ok(has_line(out, "cbexec[nightly]: warning: hook exited 3"),
	    "hook: non-zero exit is a warning");
	free(out);

	r.name = NULL;
	snprintf(hook, sizeof(hook), "env > %s", tmp_path("env2"));
	cap_start();
	report_transition(&r, &t, &before, 7);
	out = cap_end();
	is_str(out, "cbexec[nightly]: circuit HALF_OPEN -> OPEN: No progress "
	    "for 3 iterations\n", "successful hook: nothing but the line");
	free(out);
	env = slurp(tmp_path("env2"));
	ok(env != NULL && has_line(env, "CBEXEC_NAME="),
	    "hook: CBEXEC_NAME empty without a name");
	free(env);

	snprintf(hook, sizeof(hook), "sleep 10 & echo $! > %s; wait",
	    tmp_path("hang.pid"));
	r.hook_timeout = 0.3;
	r.log_fd = open(tmp_path("hook.jsonl"), O_WRONLY | O_CREAT |
	    O_APPEND | O_CLOEXEC, 0600);
	t0 = mono();
	cap_start();
	report_transition(&r, &t, &before, 7);
	out = cap_end();
	el = mono() - t0;
	close(r.log_fd);
	r.log_fd = -1;
	ok(el >= 0.25 && el < 2, "hanging hook: returns at the deadline");
	ok(has_line(out, "cbexec[nightly]: warning: hook timed out after "
	    "0.3s; killed"), "hanging hook: warning");
	free(out);
	bg = read_pid(tmp_path("hang.pid"));
	ok(bg > 0 && gone(bg), "hanging hook: its process group is killed");
	env = slurp(tmp_path("hook.jsonl"));
	ok(env != NULL && strstr(env, "\"event\":\"warning\"") &&
	    strstr(env, "hook timed out"), "hanging hook: warning in the log");
	free(env);

	snprintf(hook, sizeof(hook), "sleep 10 & echo $! > %s; echo started",
	    tmp_path("bg.pid"));
	r.hook_timeout = 5;
	t0 = mono();
	cap_start();
	report_transition(&r, &t, &before, 7);
	out = cap_end();
	el = mono() - t0;
	ok(el < 2, "backgrounded process holding the pipe does not block");
	ok(has_line(out, "cbexec[nightly]: hook: started") &&
	    strstr(out, "warning") == NULL, "backgrounding hook: output, "
	    "no warning");
	free(out);
	if ((bg = read_pid(tmp_path("bg.pid"))) > 0)
		kill(bg, SIGKILL);
	breaker_free(&before);
}

/* --status of s as ops_status() asks for it, with nobody holding it. */
static void
status(FILE *f, const struct cb_state *s, const char *label,
    const char *hint, int json, double now)
{
	struct status_row row;

	memset(&row, 0, sizeof(row));
	row.name = label;
	row.path = "/var/lib/cb/nightly.json";
	row.s = s;
	row.retry_at = s->retry_at;
	report_status(f, &row, hint, json, NULL, now);
}

static void
test_status(void)
{
	struct cb_state s;
	char *out = NULL;
	size_t n = 0;
	double t;
	FILE *f;
	cJSON *j;

	breaker_init(&s, "nightly");
	iso8601_parse("2026-11-22T01:02:03.456Z", &t);
	s.state = CB_OPEN;
	s.opened_at = t;
	s.open_reason = strdup("No progress for 3 iterations");
	s.phase = strdup("GREEN");
	s.iteration = 5;
	s.last_progress_iteration = 2;
	s.no_progress_count = 3;
	s.same_error_count = 1;
	s.consecutive_errors = 3;
	s.total_opens = 1;
	strcpy(s.last_error.cls, "recoverable");
	strcpy(s.last_error.type, "build_error");
	s.last_error.message = strdup("x.c:1: error: boom");
	s.last_error.exit_code = 2;

	f = open_memstream(&out, &n);
	status(f, &s, "nightly", "cbexec --reset-circuit --name nightly",
	    0, t + 2 * 3600 + 13 * 60 + 5);
	fclose(f);
	ok(has_line(out, "circuit:             nightly"), "status: circuit");
	ok(has_line(out, "state:               OPEN  (since 01:02Z, 2h13m ago)"),
	    "status: state, since when and how long ago");
	ok(has_line(out, "reason:              No progress for 3 iterations"),
	    "status: reason");
	ok(has_line(out, "next trial:          none: no cooldown, only a reset "
	    "closes it"), "status: no cooldown, no trial");
	ok(has_line(out, "phase:               GREEN"), "status: phase");
	ok(has_line(out, "runs since progress: 3   (last progress at run 2)"),
	    "status: runs since progress");
	ok(has_line(out, "current run:         5"), "status: current run");
	ok(has_line(out, "counters:            no-progress 3, same-error 1, "
	    "consecutive errors 3, same-task 0"),
	    "status: counters, no thresholds recorded");
	ok(has_line(out, "total opens:         1"), "status: total opens");
	ok(has_line(out, "last error:          recoverable build_error: "
	    "x.c:1: error: boom (exit 2)"), "status: last error");
	ok(has_line(out, "reset:               cbexec --reset-circuit --name "
	    "nightly"), "status: reset");
	free(out);

	/* The thresholds the last run was judged by, and a cooldown. */
	breaker_default_limits(&s.limits);
	s.limits.no_progress = 3;
	s.limits.cooldown = 3600;
	s.last_run_at = t;
	out = NULL;
	f = open_memstream(&out, &n);
	status(f, &s, "nightly", "x", 0, t + 13 * 60);
	fclose(f);
	ok(has_line(out, "counters:            no-progress 3/3, same-error 1/5, "
	    "consecutive errors 3/5, same-task 0/3"),
	    "status: counters beside their thresholds");
	ok(has_line(out, "next trial:          02:02Z, in 47m  (cooldown 1h)"),
	    "status: next trial with a cooldown");
	ok(has_line(out, "last run:            01:02Z, 13m ago"),
	    "status: last run");
	free(out);
	s.cooldown = 7200;	/* doubled after a failed trial */
	out = NULL;
	f = open_memstream(&out, &n);
	status(f, &s, "nightly", "x", 0, t + 3 * 86400);
	fclose(f);
	ok(has_line(out, "next trial:          the next run  (cooldown of 2h "
	    "passed)"), "status: the cooldown has passed");
	ok(has_line(out, "state:               OPEN  (since 2026-11-22 01:02Z, "
	    "3d ago)"), "status: a date when not today");
	free(out);
	s.tripped = 1;
	out = NULL;
	f = open_memstream(&out, &n);
	status(f, &s, "nightly", "x", 0, t);
	fclose(f);
	ok(has_line(out, "next trial:          none: tripped by an operator, "
	    "only a reset closes it"), "status: a tripped circuit");
	free(out);

	s.state = CB_CLOSED;
	out = NULL;
	f = open_memstream(&out, &n);
	status(f, &s, "nightly", "cbexec --reset-circuit", 0, t);
	fclose(f);
	ok(strstr(out, "reason:") == NULL && strstr(out, "reset:") == NULL &&
	    strstr(out, "next trial:") == NULL &&
	    has_line(out, "state:               CLOSED"),
	    "status CLOSED: no reason, no next trial, no reset");
	free(out);

	s.state = CB_OPEN;
	out = NULL;
	f = open_memstream(&out, &n);
	status(f, &s, "nightly", "x", 1, t);
	fclose(f);
	j = cJSON_Parse(out);
	is_str(jstr(j, "state"), "OPEN", "status --json: the state object");
	ok(n > 0 && out[n - 1] == '\n', "status --json: trailing newline");
	cJSON_Delete(j);
	free(out);
	breaker_free(&s);
}

static void
add(struct cb_state *s, enum cb_event_kind k, long it, int from, int to,
    const char *reason, const char *cl, const char *type, int exit_code,
    int progress, const char *user)
{
	struct cb_event e;
	double t;

	memset(&e, 0, sizeof(e));
	iso8601_parse("2026-11-22T01:02:03.456Z", &t);
	e.ts = t + it;
	e.iteration = it;
	e.kind = k;
	e.from = from;
	e.to = to;
	e.reason = (char *)reason;
	e.user = (char *)user;
	e.progress = progress;
	e.exit_code = exit_code;
	snprintf(e.cls, sizeof(e.cls), "%s", cl);
	snprintf(e.type, sizeof(e.type), "%s", type);
	breaker_add_event(s, 100, &e);
}

static int
starts(const char *s, const char *prefix)
{
	return s != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
}

static char *
history(const struct cb_state *s, long last, int json, int width)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);

	report_history(f, s, "nightly", last, json, width);
	fclose(f);
	return out;
}

#define TL_HEAD "timeline, oldest first (each line starts at the run it " \
	"names):\n"
#define COLORED TL_HEAD "run 1  \033[32m.-E\033[33m/T~\033[31m|R\033[32m+F" \
	"\033[0m\n"

static void
test_history(void)
{
	struct cb_state s;
	char *out;
	cJSON *j;
	long n;

	breaker_init(&s, "nightly");
	add(&s, EV_PROGRESS, 1, -1, -1, "progress", "", "", 0, 1, NULL);
	add(&s, EV_PROGRESS, 2, -1, -1, "no progress", "", "", 0, 0, NULL);
	add(&s, EV_ERROR, 3, -1, -1, "x.c:1: error: boom", "recoverable",
	    "build_error", 1, -1, NULL);
	add(&s, EV_STATE_CHANGE, 3, CB_CLOSED, CB_HALF_OPEN,
	    "No progress detected for 2 iterations", "", "", -1, -1, NULL);
	add(&s, EV_ERROR, 4, -1, -1, "timed out", "timeout", "timeout", 143,
	    -1, NULL);
	add(&s, EV_ERROR, 5, -1, -1, "429", "transient", "rate_limited", 1,
	    -1, NULL);
	add(&s, EV_STATE_CHANGE, 5, CB_HALF_OPEN, CB_OPEN,
	    "No progress for 3 iterations", "", "", -1, -1, NULL);
	add(&s, EV_RESET, 5, -1, -1, "fixed flaky fixture", "", "", -1, -1,
	    "alice");
	add(&s, EV_STATE_CHANGE, 5, CB_OPEN, CB_CLOSED, "fixed flaky fixture",
	    "", "", -1, -1, NULL);
	add(&s, EV_ERROR, 6, -1, -1, "permission denied", "fatal",
	    "permission_denied", 126, -1, NULL);

	out = history(&s, 0, 0, 0);
	ok(has_line(out, "2026-11-22T01:02:04.456Z  run 1  progress      "
	    "exit 0, progress"), "history: progress line, in columns");
	ok(has_line(out, "2026-11-22T01:02:05.456Z  run 2  progress      "
	    "exit 0, no progress"), "history: no-progress line");
	ok(has_line(out, "2026-11-22T01:02:06.456Z  run 3  error         "
	    "recoverable build_error (exit 1): x.c:1: error: boom"),
	    "history: error line");
	ok(has_line(out, "2026-11-22T01:02:06.456Z  run 3  state_change  "
	    "CLOSED -> HALF_OPEN  No progress detected for 2 iterations"),
	    "history: state change line");
	ok(has_line(out, "2026-11-22T01:02:08.456Z  run 5  reset         "
	    "fixed flaky fixture  by alice"), "history: reset by user");
	ok(strncmp(out, "2026-11-22T01:02:04.456Z  run 1", 31) == 0,
	    "history: oldest first, no timeline off a terminal");
	free(out);

	out = history(&s, 2, 0, 0);
	is_str(out, "2026-11-22T01:02:08.456Z  run 5  state_change  "
	    "OPEN -> CLOSED  fixed flaky fixture\n"
	    "2026-11-22T01:02:09.456Z  run 6  error         fatal "
	    "permission_denied (exit 126): permission denied\n",
	    "history --last 2: columns as wide as the window's");
	free(out);

	out = history(&s, 2, 1, 80);
	j = cJSON_Parse(out);
	is_int(cJSON_GetArraySize(j), 2, "history --json --last 2: 2 events");
	is_str(jstr(cJSON_GetArrayItem(j, 1), "event"), "run",
	    "history --json: newest last, a run's result a run event");
	is_str(jstr(cJSON_GetArrayItem(j, 1), "message"), "permission denied",
	    "history --json: its message");
	is_str(jstr(cJSON_GetArrayItem(j, 1), "circuit"), "nightly",
	    "history --json: the circuit");
	ok(cJSON_IsArray(j) && strstr(out, "timeline") == NULL,
	    "history --json: an array, no timeline");
	cJSON_Delete(j);
	free(out);

	setenv("NO_COLOR", "1", 1);
	out = history(&s, 0, 0, 80);
	ok(starts(out, TL_HEAD "run 1  .-E/T~|R+F\nlegend:"),
	    "timeline marks, the reset's R among them");
	free(out);
	out = history(&s, 3, 0, 80);
	ok(starts(out, TL_HEAD "run 5  R+F\n"), "timeline: last 3, from run 5");
	free(out);
	setenv("NO_COLOR", "", 1);
	out = history(&s, 0, 0, 80);
	ok(strncmp(out, COLORED, strlen(COLORED)) == 0,
	    "timeline coloured by the circuit's state (NO_COLOR empty)");
	free(out);
	unsetenv("NO_COLOR");
	setenv("TERM", "dumb", 1);
	out = history(&s, 0, 0, 80);
	ok(strstr(out, "\033[") == NULL, "TERM=dumb: no colour");
	free(out);
	unsetenv("TERM");

	/* Wrapped to the width, each line led by the run of its first mark;
	 * trips and skips have their marks too. */
	add(&s, EV_STATE_CHANGE, 6, CB_CLOSED, CB_OPEN,
	    "tripped by operator: maintenance", "", "", -1, -1, "bob");
	add(&s, EV_SKIP, 6, -1, -1, "skipped phase GREEN", "", "", -1, -1,
	    "bob");
	for (n = 7; n <= 30; n++)
		add(&s, EV_PROGRESS, n, -1, -1, "progress", "", "", 0, 1, NULL);
	setenv("NO_COLOR", "1", 1);
	out = history(&s, 0, 0, 20);
	ok(starts(out, TL_HEAD "run  1  .-E/T~|R+F!S\n"
	    "run  7  ............\n"
	    "run 19  ............\n"
	    "legend:   . progress\n"
	    "          - no progress\n"),
	    "timeline wrapped at 20 columns, led by run numbers");
	ok(has_line(out, "2026-11-22T01:02:33.456Z  run 30  progress      "
	    "exit 0, progress"), "history: run numbers as wide as the widest");
	free(out);
	unsetenv("NO_COLOR");
	breaker_free(&s);
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/report-test.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return 1;
	test_run_lines();
	test_transitions();
	test_open_block();
	test_stuck();
	test_log();
	test_metrics();
	test_hook();
	test_status();
	test_history();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			ok(0, "scratch dir removed");
	}
	return done_testing();
}
