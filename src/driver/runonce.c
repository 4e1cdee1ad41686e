/* SPDX-License-Identifier: ISC */
/*
 * One run: the command's environment and status file, the supervised run
 * itself (run/), the status it reported, the work-tree fingerprints around
 * it and its classification.  For a known agent its adapter reads stdout
 * beside the status scanner, and its verdict, status block, session and
 * the provider's word on when to try again go with the run.  It returns
 * what the run did; the loop (driver.c) judges progress, records it in the
 * breaker, saves and reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "driver.h"
#include "invocation.h"
#include "judge.h"
#include "store.h"
#include "run.h"

extern char **environ;

/* The most CBEXEC_SKIPPED_PHASES or _TASKS holds: far below what exec(2)
 * takes, whatever a state written by another cbexec holds. */
#define SKIP_LIST_MAX	8192

/* The names of the skips of one kind, comma-separated (malloc'd); those
 * that do not fit in SKIP_LIST_MAX are left out, counted in *left. */
static char *
skip_list(const struct cb_state *s, enum cb_skip_kind kind, size_t *left)
{
	char *p = NULL;
	size_t i, n = 0;
	FILE *m;

	if ((m = open_memstream(&p, &n)) == NULL)
		return NULL;
	for (i = 0; i < s->n_skips; i++)
		if (s->skips[i].kind != kind)
			continue;
		else if (ftell(m) + 1 + strlen(s->skips[i].name) > SKIP_LIST_MAX)
			(*left)++;
		else
			fprintf(m, "%s%s", ftell(m) > 0 ? "," : "",
			    s->skips[i].name);
	if (fclose(m) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

/* The environment of the command: ours minus stale CBEXEC_* values,
 * plus this run's. */
static char **
child_env(struct inv *v, const char *status_file)
{
	char **env, buf[64];
	size_t n = 0, i, k = 0, left = 0;
	const char *last_err = NULL;
	char *le = NULL, *sp, *st;

	while (environ[n] != NULL)
		n++;
	if ((env = calloc(n + 11, sizeof(*env))) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (strncmp(environ[i], "CBEXEC_", 7) == 0 &&
		    (strncmp(environ[i], "CBEXEC_ITERATION=", 17) == 0 ||
		    strncmp(environ[i], "CBEXEC_NAME=", 12) == 0 ||
		    strncmp(environ[i], "CBEXEC_PHASE=", 13) == 0 ||
		    strncmp(environ[i], "CBEXEC_CIRCUIT_STATE=", 21) == 0 ||
		    strncmp(environ[i], "CBEXEC_STATUS_FILE=", 19) == 0 ||
		    strncmp(environ[i], "CBEXEC_LAST_ERROR=", 18) == 0 ||
		    strncmp(environ[i], "CBEXEC_GUIDANCE=", 16) == 0 ||
		    strncmp(environ[i], "CBEXEC_SKIPPED_PHASES=", 22) == 0 ||
		    strncmp(environ[i], "CBEXEC_SKIPPED_TASKS=", 21) == 0 ||
		    strncmp(environ[i], "CBEXEC_SESSION_ID=", 18) == 0))
			continue;
		env[k++] = strdup(environ[i]);
	}
	snprintf(buf, sizeof(buf), "%ld", v->s.iteration + 1);
	if (v->s.consecutive_errors > 0 && v->s.last_error.message != NULL) {
		if (asprintf(&le, "%s: %s", v->s.last_error.type,
		    v->s.last_error.message) != -1)
			last_err = le;
	}
#define ADD(fmt, val) do {						\
	if (asprintf(&env[k], fmt, val) == -1)				\
		env[k] = NULL;						\
	k++;								\
} while (0)
	ADD("CBEXEC_ITERATION=%s", buf);
	ADD("CBEXEC_NAME=%s", v->o->name != NULL ? v->o->name : "");
	ADD("CBEXEC_PHASE=%s", v->s.phase != NULL ? v->s.phase : "");
	ADD("CBEXEC_CIRCUIT_STATE=%s", circuit_name(v->s.state));
	ADD("CBEXEC_STATUS_FILE=%s", status_file);
	ADD("CBEXEC_LAST_ERROR=%s", last_err != NULL ? last_err : "");
	if (v->s.guidance != NULL)
		ADD("CBEXEC_GUIDANCE=%s", v->s.guidance);
	/* checked when read from the run, and again here: a state file
	 * written by an older cbexec may hold anything */
	if (v->s.session_id != NULL && opaque_id(v->s.session_id))
		ADD("CBEXEC_SESSION_ID=%s", v->s.session_id);
	/* What was given up, so the command can pick something else. */
	sp = skip_list(&v->s, SKIP_PHASE, &left);
	st = skip_list(&v->s, SKIP_TASK, &left);
	if (left > 0)
		report_warn(&v->rep, "%zu skipped names left out of "
		    "CBEXEC_SKIPPED_PHASES/_TASKS (%d bytes each at most)", left,
		    SKIP_LIST_MAX);
	ADD("CBEXEC_SKIPPED_PHASES=%s", sp != NULL ? sp : "");
	ADD("CBEXEC_SKIPPED_TASKS=%s", st != NULL ? st : "");
	free(sp);
	free(st);
#undef ADD
	env[k] = NULL;
	free(le);
	/* A strdup or asprintf that failed leaves a hole: close it up. */
	for (i = n = 0; i < k; i++)
		if (env[i] != NULL)
			env[n++] = env[i];
	env[n] = NULL;
	return env;
}

static void
free_env(char **env)
{
	size_t i;

	for (i = 0; env != NULL && env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

/*
 * A fresh private file for $CBEXEC_STATUS_FILE, beside the state file:
 * whatever the last run left there (a kill -9 of cbexec) is removed, and
 * only a new, empty, regular file of ours is handed to the command.
 */
static int
make_status_file(const char *path)
{
	int fd;

	if (unlink(path) == -1 && errno != ENOENT)
		return -1;
	if ((fd = file_open(path, O_WRONLY | O_CREAT | O_EXCL, 0600, 0)) < 0)
		return fd;
	close(fd);
	return 0;
}

static void
read_status_file(const char *path, struct status_report *r,
    struct reporter *rep)
{
	char *buf;
	ssize_t n;
	size_t got = 0, cap = 1024 * 1024;
	struct stat st;
	int fd;

	/* The command may have put a FIFO or a link in its place: read only
	 * a regular file, never wait on one. */
	if ((fd = file_open(path, O_RDONLY, 0, 0)) < 0) {
		if (fd == -2 || errno != ENOENT)
			report_warn(rep, "status file: %s", file_why(fd));
		return;
	}
	/* Most commands never write it: an empty file costs one fstat. */
	if (fstat(fd, &st) == -1 || st.st_size == 0) {
		close(fd);
		return;
	}
	if ((size_t)st.st_size < cap)
		cap = (size_t)st.st_size;
	if ((buf = malloc(cap + 1)) == NULL) {
		close(fd);
		return;
	}
	while (got < cap && (n = read(fd, buf + got, cap - got)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = '\0';
	if (status_parse_text(buf, got, r) == -1 || r->warning[0] != '\0')
		report_warn(rep, "status file: %s", r->warning[0] ?
		    r->warning : "malformed");
	free(buf);
}

/* The run's stdout, as it passes, goes to the status block scanner and
 * to the agent's adapter, whose hooks feed the watch over the run. */
struct readers {
	struct status_scanner *sc;
	struct agent_run *ar;
	struct agent_watch w;
	int live;		/* a run goes on: a stop stops it */
	double grace;		/* --result-grace */
};

/* A per-run cap crossed, or the same tool call over and over: the run is
 * stopped as a timeout stops it. */
static void
watch_usage(void *arg, const struct agent_usage *u, int total)
{
	struct readers *rd = arg;
	enum agent_stop st = agent_watch_usage(&rd->w, u);

	if (st != AGENT_GO && rd->live)
		sup_stop(st);
}

static void
watch_call(void *arg, const char *id, const char *name, const char *input,
    size_t n, int cut, unsigned long long digest)
{
	struct readers *rd = arg;
	enum agent_stop st = agent_watch_call(&rd->w, id, name, input, n, cut,
	    digest);

	if (st != AGENT_GO && rd->live)
		sup_stop(st);
}

static void
watch_result(void *arg, const char *id, unsigned long long digest,
    int is_error)
{
	struct readers *rd = arg;
	enum agent_stop st = agent_watch_result(&rd->w, id, digest, is_error);

	if (st != AGENT_GO && rd->live)
		sup_stop(st);
}

/* The client's final result: it has this long to exit (SPEC §10). */
static void
watch_final(void *arg)
{
	struct readers *rd = arg;

	if (rd->live)
		sup_grace(rd->grace);
}

/* Whether the tail r ends in the middle of a line (an empty one does
 * not). */
static int
mid_line(const struct ring *r)
{
	return r->len > 0 && r->cap > 0 &&
	    r->buf[(r->start + r->len - 1) % r->cap] != '\n';
}

/* The watch over a run of o, its hooks into rd. */
static void
readers_init(const struct options *o, struct readers *rd,
    struct agent_hooks *hooks, int live)
{
	struct agent_caps caps;

	memset(rd, 0, sizeof(*rd));
	caps.max_cost = o->max_cost;
	caps.max_tokens = o->max_tokens;
	caps.max_turns = o->max_turns;
	caps.max_repeat_calls = o->max_repeat_calls;
	agent_watch_init(&rd->w, &caps);
	rd->live = live;
	rd->grace = o->result_grace;
	memset(hooks, 0, sizeof(*hooks));
	hooks->usage = watch_usage;
	hooks->tool_call = watch_call;
	hooks->tool_result = watch_result;
	hooks->final = watch_final;
	hooks->arg = rd;
}

/* Why cbexec stopped the run, if it did: silence, a cap or a loop (one
 * seen only in the result, after the command exited, counts as well). */
static void
stop_reason(const struct options *o, struct readers *rd,
    const struct agent_result *res, struct run_done *d)
{
	char dur[24];

	if (rd->ar != NULL && d->r.exec_errno == 0) {
		d->usage = res->usage;
		d->have_usage = 1;
		agent_watch_usage(&rd->w, &res->usage);
		agent_watch_end(&rd->w);
	}
	if (rd->ar != NULL && rd->w.stop != AGENT_GO) {
		d->stop_type = agent_stop_type(rd->w.stop);
		d->stop_cls = rd->w.stop == AGENT_LOOP ? CB_CLASS_RECOVERABLE :
		    CB_CLASS_BUDGET;
		snprintf(d->stop_msg, sizeof(d->stop_msg), "%s", rd->w.msg);
	} else if (d->r.idle) {
		d->stop_type = "idle";
		d->stop_cls = CB_CLASS_TIMEOUT;
		snprintf(d->stop_msg, sizeof(d->stop_msg), "no output for %s "
		    "(--idle-timeout)", duration_format(o->idle_timeout, dur,
		    sizeof(dur)));
	} else if (d->r.budget_expired) {
		/* Not its own --timeout: the invocation's time ran out. */
		d->stop_type = "timeout";
		d->stop_cls = CB_CLASS_TIMEOUT;
		snprintf(d->stop_msg, sizeof(d->stop_msg), "the --budget of %s "
		    "ran out", duration_format(o->budget, dur, sizeof(dur)));
	}
}

static void
scan_stdout(void *arg, const char *p, size_t n)
{
	struct readers *rd = arg;

	if (rd->sc != NULL)
		status_scanner_feed(rd->sc, p, n);
	if (rd->ar != NULL)
		agent_feed(rd->ar, p, n);
}

/*
 * When the provider said to try again: a usage limit's reset time, or how
 * long a transient error should be waited out.  The adapter's structured
 * hints (resetsAt, a retry-after header) first, then the message.
 */
static void
retry_times(struct run_done *d, const struct retry_hint *given, double now)
{
	struct retry_hint h = { 0, 0 }, g = { 0, 0 };
	double at, after;

	if (d->c.cls != CB_CLASS_TRANSIENT)
		return;
	retry_hint(d->c.message, now, &h);
	if (given != NULL)
		g = *given;
	/* what the run said is bounded before anything else sees it */
	d->retry_capped = retry_bound(&h, now) | retry_bound(&g, now);
	at = g.at > 0 ? g.at : h.at;
	after = g.after > h.after ? g.after : h.after;
	if (strcmp(d->c.type, "usage_limit") == 0) {
		d->retry_at = at > 0 ? at : after > 0 ? now + after : 0;
		return;
	}
	d->retry_after = at > now && at - now > after ? at - now : after;
}

/* The adapter's last word: the run is over (stderr's tail, exit). */
static int
agent_end(struct agent_run *ar, const struct sup_result *r,
    struct agent_result *res)
{
	struct agent_end end;
	size_t el = 0;
	char *e;
	int rc;

	if ((e = ring_dup(&r->err, &el)) == NULL)
		return -1;
	memset(&end, 0, sizeof(end));
	end.exit_code = r->exit_code;
	end.timed_out = r->timed_out;
	end.err = e;
	end.err_len = el;
	end.now = wall_now();
	rc = agent_finish(ar, &end, res);
	free(e);
	return rc;
}

/* Tell the operator which fingerprints could not be taken. */
static void
warn_prints(struct inv *v, unsigned failed)
{
	if (failed & PROG_GIT)
		report_warn(&v->rep, "progress: git fingerprint failed%s%s",
		    progress_git_error() != NULL ? ": " : "",
		    progress_git_error() != NULL ? progress_git_error() : "");
	if (failed & PROG_FILES)
		report_warn(&v->rep, "progress: files fingerprint failed");
}

int
run_once(struct inv *v, struct run_done *d)
{
	struct options *o = v->o;
	struct sup_cfg cfg;
	struct status_scanner *sc = NULL;
	struct agent_run *ar = NULL;
	struct agent_result res;
	struct readers rd;
	struct agent_hooks hooks;
	const char *sfile = v->status_file;
	char err[CB_ERRLEN];
	int ret = -1, begun = 0;

	memset(d, 0, sizeof(*d));
	d->progress = -1;
	memset(&cfg, 0, sizeof(cfg));
	memset(&res, 0, sizeof(res));
	status_init(&res.status);
	status_init(&d->st);
	status_init(&d->cmd);
	if ((ret = make_status_file(sfile)) != 0) {
		fprintf(stderr, "cbexec: cannot create the status file %s: "
		    "%s\n", sfile, file_why(ret));
		return -1;
	}
	ret = -1;
	if (o->argv != NULL && (cfg.envp = child_env(v, sfile)) == NULL)
		goto oom;
	if (!o->no_capture_stdout && (sc = status_scanner_new()) == NULL)
		goto oom;
	readers_init(o, &rd, &hooks, 1);
	if (v->agent != NULL && (ar = agent_run_new(v->agent, &hooks)) ==
	    NULL)
		goto oom;
	/* --on-run's start (a healthchecks.io /start ping), before git and
	 * the lease's last check, so the command still starts right after
	 * them. */
	{
		struct run_hook_event he = { .end = 0,
		    .iteration = v->s.iteration + 1, .phase = v->s.phase,
		    .state = v->s.state };

		report_run_hook(&v->rep, &he);
	}
	warn_prints(v, take_prints(&v->px, &d->before, NULL));
	/* Interrupted while git looked: no run is started. */
	if (sup_interrupted()) {
		ret = 1;
		goto out;
	}
	/* The run is on record before the command starts (SPEC §11): if
	 * cbexec dies with it, the next invocation counts it.  A record
	 * that cannot be written starts nothing.  In a shared store the
	 * record renews the lease, checked right before the command starts,
	 * after git; it is renewed while the command runs, and a store
	 * gone, a lease lost or its local deadline come end the run at
	 * once. */
	if (store_begin(v->st, v->s.iteration + 1, err, sizeof(err)) != 0) {
		fprintf(stderr, "cbexec: %s; not running the command\n", err);
		goto out;
	}
	begun = 1;
	/* A copy of the record with the watchdog: a command that erases
	 * the lock file and kills cbexec is counted all the same. */
	{
		const char *wp, *wb;
		size_t wn;

		if (store_record_file(v->st, &wp, &wb, &wn))
			watch_will(WATCH_WILL_RECORD, wp, wb, wn);
	}
	if ((cfg.keepalive_every = store_keepalive_every(v->st)) > 0) {
		cfg.keepalive = inv_keepalive_async;
		cfg.keepalive_arg = v;
		cfg.keepalive_until = inv_lease_until;
		cfg.keepalive_fd_of = inv_store_fd;
	}
	cfg.keepalive_fd = store_fd(v->st);

	cfg.argv = o->argv;
	cfg.timeout = o->timeout;
	cfg.kill_after = o->kill_after;
	cfg.signal = o->signal;
	cfg.deadline = v->deadline;
	cfg.capture_bytes = o->capture_bytes;
	cfg.capture_stdout = !o->no_capture_stdout;
	cfg.keep_orphans = o->keep_orphans;
	cfg.idle_timeout = o->idle_timeout;
	rd.sc = sc;
	rd.ar = ar;
	if (sc != NULL) {
		cfg.tap = scan_stdout;
		cfg.tap_arg = &rd;
	}
	d->started = wall_now();
	if (sup_run(&cfg, &d->r) == -1) {
		fprintf(stderr, "cbexec: cannot run %s: %s\n", o->argv[0],
		    strerror(errno));
		goto out;
	}
	d->have_result = 1;
	/* A line cbexec writes next to our stdout or stderr (--log -, its
	 * log lines) must not start in the middle of the command's. */
	report_tails(cfg.capture_stdout && mid_line(&d->r.out),
	    mid_line(&d->r.err));
	/* exec(2) refused the command line and environment as too big:
	 * nothing the command did, and nothing to count against it. */
	if (d->r.exec_errno == E2BIG) {
		fprintf(stderr, "cbexec: cannot run %s: its arguments and "
		    "environment are too big for exec (%s)\n", o->argv[0],
		    strerror(E2BIG));
		goto out;
	}
	/* The command ran: from here on, a run not saved is a run to
	 * count, and its record stays for the next invocation. */
	begun = 0;
	if (d->r.keepalive_failed) {
		fprintf(stderr, "cbexec: %s; the run was killed, its result "
		    "not saved\n", v->store_err);
		goto out;
	}
	if (ar != NULL && d->r.lingered) {
		/* Its work was over (its final result came) and it did not
		 * exit: it was ended, and the run is what the result says. */
		report_warn(&v->rep, "%s had not exited %gs after its final "
		    "result: ended (--result-grace)", agent_name(v->agent),
		    o->result_grace);
		d->r.timed_out = d->r.signalled_by_us = 0;
		d->r.signo = 0;
		d->r.exit_code = 0;
	}
	if (ar != NULL && agent_end(ar, &d->r, &res) == -1)
		goto oom;
	if (ar != NULL && res.note != NULL)
		report_warn(&v->rep, "%s: %s", agent_name(v->agent), res.note);
	if (ar != NULL && d->r.lingered && res.v.failed)
		d->r.exit_code = 1;
	/* A cap on what a client does not report is said to count nothing,
	 * never silently blind (SPEC §9). */
	if (ar != NULL && o->max_turns > 0 && res.usage.turns < 0)
		report_warn(&v->rep, "--max-turns: %s reported no turns in this "
		    "run (its output format shows none): the cap could not "
		    "count them", agent_name(v->agent));
	stop_reason(o, &rd, &res, d);

	read_status_file(sfile, &d->st, &v->rep);
	if (!d->st.present && ar != NULL && res.status_own) {
		/* a structured format: the block in the assistant's own
		 * text, not one quoted in a prompt or a tool's output */
		status_free(&d->st);
		d->st = res.status;
		status_init(&res.status);
	} else if (!d->st.present && sc != NULL) {
		status_scanner_result(sc, &d->st);
		if (!d->st.present && d->st.warning[0] != '\0')
			report_warn(&v->rep, "status block: %s",
			    d->st.warning);
	}
	if ((o->progress & PROG_CMD) && o->progress_cmd != NULL &&
	    progress_cmd(o->progress_cmd, o->timeout > 0 ? o->timeout : 120,
	    &d->cmd, err, sizeof(err)) == -1)
		report_warn(&v->rep, "%s", err);
	warn_prints(v, take_prints(&v->px, &d->after, &d->before));

	if (run_judge(o, d, cfg.capture_stdout, ar != NULL ? &res : NULL,
	    store_now(v->st)) == -1)
		goto out;
	ret = 0;
	goto out;
oom:
	fprintf(stderr, "cbexec: out of memory\n");
out:
	/* Put on record, and nothing ran after all. */
	if (begun) {
		watch_will(WATCH_WILL_RECORD, NULL, NULL, 0);
		store_unbegin(v->st);
	}
	status_free(&res.status);
	agent_run_free(ar);
	status_scanner_free(sc);
	free_env(cfg.envp);
	unlink(sfile);
	if (ret != 0)
		run_done_free(d);
	return ret;
}

int
run_judge_agent(const struct options *o, const struct agent *a,
    struct run_done *d, double now)
{
	struct readers rd;
	struct agent_hooks hooks;
	struct agent_result res;
	char *out;
	size_t n;
	int ret = -1;

	memset(&res, 0, sizeof(res));
	status_init(&res.status);
	readers_init(o, &rd, &hooks, 0);
	if ((rd.ar = agent_run_new(a, &hooks)) == NULL)
		goto oom;
	if ((out = ring_dup(&d->r.out, &n)) == NULL)
		goto oom;
	agent_feed(rd.ar, out, n);
	free(out);
	if (agent_end(rd.ar, &d->r, &res) == -1)
		goto oom;
	stop_reason(o, &rd, &res, d);
	if (res.status_own) {
		/* the block in the assistant's own text, as in a run */
		status_free(&d->st);
		d->st = res.status;
		status_init(&res.status);
	}
	ret = run_judge(o, d, 1, &res, now);
	goto out;
oom:
	fprintf(stderr, "cbexec: out of memory\n");
out:
	status_free(&res.status);
	agent_run_free(rd.ar);
	return ret;
}

int
run_judge(const struct options *o, struct run_done *d, int with_stdout,
    const struct agent_result *ar, double now)
{
	struct run_facts f;
	char *e = NULL, *out = NULL;
	size_t el = 0, ol = 0;
	int ret = -1;

	memset(&f, 0, sizeof(f));
	f.command = o->argv != NULL ? o->argv[0] : NULL;
	f.exec_errno = d->r.exec_errno;
	f.exit_code = d->r.exit_code;
	f.signo = d->r.signo;
	f.signalled_by_us = d->r.signalled_by_us;
	f.timed_out = d->r.timed_out;
	if ((e = ring_dup(&d->r.err, &el)) == NULL ||
	    (out = ring_dup(&d->r.out, &ol)) == NULL)
		goto out;
	f.err = e;
	f.err_len = el;
	f.out = with_stdout ? out : NULL;
	f.out_len = with_stdout ? ol : 0;
	f.ok_codes = o->ok_codes.v;
	f.n_ok_codes = o->ok_codes.n;
	f.tmpdir = getenv("TMPDIR");
	f.agent = ar != NULL ? &ar->v : NULL;
	f.stop_type = d->stop_type;
	f.stop_cls = d->stop_cls;
	f.stop_message = d->stop_msg;
	if (classify(o->rules, o->n_rules, &f, &d->c) == -1)
		goto out;
	retry_times(d, ar != NULL ? &ar->hint : NULL, now);
	if (ar != NULL && ar->session_id != NULL && (d->session =
	    utf8_sanitize(ar->session_id, strlen(ar->session_id))) == NULL)
		goto out;
	/* A task the command reported goes into the state file: UTF-8. */
	if (d->st.task != NULL && (d->task = utf8_sanitize(d->st.task,
	    strlen(d->st.task))) == NULL)
		goto out;
	ret = 0;
out:
	if (ret == -1)
		fprintf(stderr, "cbexec: %s\n", digest_error() != NULL ?
		    digest_error() : "out of memory");
	free(e);
	free(out);
	return ret;
}

void
run_done_free(struct run_done *d)
{
	if (d->have_result)
		sup_result_free(&d->r);
	d->have_result = 0;
	files_watch_free(d->before.fw);
	files_watch_free(d->after.fw);
	d->before.fw = d->after.fw = NULL;
	free(d->task);
	d->task = NULL;
	free(d->session);
	d->session = NULL;
	classification_free(&d->c);
	status_free(&d->st);
	status_free(&d->cmd);
}
