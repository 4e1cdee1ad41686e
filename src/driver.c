/*
 * The run loop of one invocation.  Under the circuit's lock: load the
 * state, then for each run ask the breaker for admission, fingerprint the
 * work tree, run COMMAND (supervise.c), read its status, judge progress,
 * classify the failure, let the breaker record it, save the state, report,
 * and decide whether to go on.  The exit status follows SPEC §2: the
 * command's own, unless cbexec intervened.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "driver.h"
#include "exitcodes.h"
#include "progress.h"
#include "report.h"
#include "state.h"
#include "status.h"
#include "supervise.h"

extern char **environ;

struct inv {
	struct options *o;
	const struct circuit *c;
	struct cb_state s;
	struct reporter rep;
	const struct phase_def *phase;
	unsigned sources;	/* PROG_* after resolving auto */
	double deadline;	/* budget end, sup_now() clock; 0 none */
	char *state_dir;	/* excluded from "files" */
	int retry;		/* the operator chose Reset or Modify */
};

double
wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
in_codes(const struct codes *c, int v)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->v[i] == v)
			return 1;
	return 0;
}

static int
save(struct inv *v)
{
	char err[512];

	if (state_save(v->c->path, v->o->follow_symlinks, &v->s, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "cbexec: %s\n", err);
		return -1;
	}
	return 0;
}

/* The environment of the command: ours minus stale CBEXEC_* values,
 * plus this run's. */
static char **
child_env(struct inv *v, const char *status_file)
{
	char **env, buf[64];
	size_t n = 0, i, k = 0;
	const char *last_err = NULL;
	char *le = NULL;

	while (environ[n] != NULL)
		n++;
	if ((env = calloc(n + 8, sizeof(*env))) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (strncmp(environ[i], "CBEXEC_", 7) == 0 &&
		    (strncmp(environ[i], "CBEXEC_ITERATION=", 17) == 0 ||
		    strncmp(environ[i], "CBEXEC_NAME=", 12) == 0 ||
		    strncmp(environ[i], "CBEXEC_PHASE=", 13) == 0 ||
		    strncmp(environ[i], "CBEXEC_CIRCUIT_STATE=", 21) == 0 ||
		    strncmp(environ[i], "CBEXEC_STATUS_FILE=", 19) == 0 ||
		    strncmp(environ[i], "CBEXEC_LAST_ERROR=", 18) == 0 ||
		    strncmp(environ[i], "CBEXEC_GUIDANCE=", 16) == 0))
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

/* A fresh private file for $CBEXEC_STATUS_FILE. */
static int
make_status_file(char *path, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	snprintf(path, len, "%s/cbexec-status.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if ((fd = mkostemp(path, O_CLOEXEC)) == -1)
		return -1;
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
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return;
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

/* Fingerprints before or after a run; "" when the source is off. */
struct prints {
	char git[DIGEST_HEX_LEN + 1];
	char files[DIGEST_HEX_LEN + 1];
};

static void
take_prints(struct inv *v, struct prints *p)
{
	struct progress_cfg pc;

	p->git[0] = p->files[0] = '\0';
	if ((v->sources & PROG_GIT) && progress_git(p->git) == -1) {
		report_warn(&v->rep, "progress: git fingerprint failed");
		p->git[0] = '\0';
	}
	if (v->sources & PROG_FILES) {
		memset(&pc, 0, sizeof(pc));
		pc.watch = v->o->watch.v;
		pc.n_watch = v->o->watch.n;
		pc.exclude = v->o->exclude.v;
		pc.n_exclude = v->o->exclude.n;
		pc.state_dir = v->state_dir;
		if (progress_files(&pc, p->files) == -1) {
			report_warn(&v->rep, "progress: files fingerprint "
			    "failed");
			p->files[0] = '\0';
		}
	}
}

static cJSON *
phase_baseline(struct inv *v, const char *key)
{
	if (v->s.last_progress_metric == NULL)
		v->s.last_progress_metric = cJSON_CreateObject();
	return cJSON_GetObjectItemCaseSensitive(v->s.last_progress_metric,
	    key);
}

/* Whether every phase metric r reports already has a baseline. */
static int
has_baseline(const struct phase_def *p, const struct status_report *r,
    const cJSON *base)
{
	static const char *const green[] = { "tests_passing", "tests_failing" };
	double x;
	size_t i;

	for (i = 0; i < p->n_metrics; i++)
		if (status_metric(r, p->metrics[i].key, &x) &&
		    cJSON_GetObjectItemCaseSensitive(base,
		    p->metrics[i].key) == NULL)
			return 0;
	for (i = 0; p->green_rule && i < 2; i++)
		if (status_metric(r, green[i], &x) &&
		    cJSON_GetObjectItemCaseSensitive(base, green[i]) == NULL)
			return 0;
	return 1;
}

/* "went up" for --progress-cmd without a phase: any metric above the
 * value it had after the previous run. */
static int
cmd_went_up(struct inv *v, const struct status_report *r)
{
	cJSON *base = phase_baseline(v, "cmd"), *item;
	int up = 0;
	size_t i;

	if (base == NULL) {
		base = cJSON_CreateObject();
		cJSON_AddItemToObject(v->s.last_progress_metric, "cmd", base);
		up = -1;	/* first report: a baseline only */
	}
	for (i = 0; i < r->n_metrics; i++) {
		item = cJSON_GetObjectItemCaseSensitive(base, r->metrics[i].key);
		if (item != NULL && cJSON_IsNumber(item)) {
			if (up >= 0 && r->metrics[i].value > item->valuedouble)
				up = 1;
			cJSON_SetNumberValue(item, r->metrics[i].value);
		} else
			cJSON_AddNumberToObject(base, r->metrics[i].key,
			    r->metrics[i].value);
	}
	return up == 1;
}

/* SPEC §3.1: did this run make progress? */
static int
judge_progress(struct inv *v, const struct prints *before,
    const struct prints *after, const struct status_report *st,
    const struct status_report *cmd, int success)
{
	int j = -1, any = 0;
	double x;

	if (st->present && st->status == RS_BLOCKED)
		return 0;
	if (v->phase != NULL) {
		cJSON *base = phase_baseline(v, v->phase->name);

		if (st->present)
			j = phase_judge(v->phase, st, base);
		if (j == -1 && cmd->present)
			j = phase_judge(v->phase, cmd, base);
		if (j != -1) {
			const struct status_report *r =
			    phase_judge(v->phase, st, base) != -1 ? st : cmd;

			/* A metric seen for the first time becomes the
			 * baseline even without progress, or a "down" metric
			 * could never show any. */
			if (j == 1 || !has_baseline(v->phase, r, base))
				phase_remember(v->s.last_progress_metric,
				    v->phase, r);
			return j;
		}
	}
	if ((v->sources & PROG_GIT) && before->git[0] && after->git[0] &&
	    strcmp(before->git, after->git) != 0)
		any = 1;
	if ((v->sources & PROG_FILES) && before->files[0] &&
	    after->files[0] && strcmp(before->files, after->files) != 0)
		any = 1;
	if ((v->sources & PROG_STATUS) && st->present &&
	    ((status_metric(st, "tasks_completed", &x) && x > 0) ||
	    (status_metric(st, "files_modified", &x) && x > 0)))
		any = 1;
	if ((v->sources & PROG_CMD) && cmd->present && cmd_went_up(v, cmd))
		any = 1;
	if ((v->sources & PROG_EXIT) && success)
		any = 1;
	return any;
}

/* The exit status a run stands for on its own (SPEC §2). */
static int
run_exit(const struct sup_result *r, const struct classification *c)
{
	if (r->exec_errno != 0)
		return r->exec_errno == ENOENT ? CB_EXIT_NOTFOUND :
		    CB_EXIT_NOEXEC;
	if (r->timed_out)
		return CB_EXIT_TIMEOUT;
	if (c->cls == CB_CLASS_FATAL)
		return CB_EXIT_ABORT;
	if (r->signo != 0)
		return CB_EXIT_SIGNAL + r->signo;
	return r->exit_code;
}

static enum cb_outcome
run_outcome(const struct sup_result *r, const struct classification *c)
{
	if (r->exec_errno != 0)
		return r->exec_errno == ENOENT ? OUT_NOTFOUND : OUT_NOEXEC;
	if (r->timed_out)
		return OUT_TIMEOUT;
	if (c->cls == CB_CLASS_FATAL)
		return OUT_ABORT;
	if (r->signo != 0)
		return OUT_SIGNAL;
	return r->exit_code == 0 ? OUT_OK : OUT_EXIT;
}

/* The counters as they were, for hooks; no pointers that record() may
 * free survive in the copy. */
void
state_snapshot(const struct cb_state *s, struct cb_state *b)
{
	*b = *s;
	b->phase = b->last_failed_task = b->last_fingerprint = NULL;
	b->last_error_hash = b->open_reason = b->guidance = NULL;
	b->last_error.message = NULL;
	b->last_progress_metric = NULL;
	b->skipped_phases = NULL;
	b->n_skipped = 0;
	b->history = NULL;
	b->n_history = 0;
}

static void
report_result(struct inv *v, const struct cb_result *res,
    const struct cb_state *before)
{
	int i;

	for (i = 0; i < res->n; i++)
		report_transition(&v->rep, &res->t[i], before, v->s.iteration);
}

static void
set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s != NULL ? strdup(s) : NULL;
}

/* Backoff before the next run after n consecutive failures. */
static double
backoff_delay(const struct options *o, int n)
{
	double d;

	if (o->backoff <= 0 || n <= 0)
		return 0;
	d = o->backoff * pow(2, n > 60 ? 60 : n - 1);
	if (d > o->backoff_max)
		d = o->backoff_max;
	/* ±20% jitter so that many agents do not retry in lock step. */
	return d * (0.8 + 0.4 * ((double)random() / RAND_MAX));
}

/*
 * The circuit has just opened.  Without a terminal, the exit status says
 * so.  With one, the menu: returns -1 to go on (Reset, Modify), else the
 * exit status.
 */
static int
opened(struct inv *v, const struct status_report *st, int code)
{
	struct cb_result res;
	struct cb_state before;
	char *guidance = NULL;
	int choice;

	report_open_block(&v->rep, &v->s, st, v->c->reset_hint);
	if (v->o->no_prompt || !isatty(STDIN_FILENO) || !isatty(STDERR_FILENO))
		return code;
	choice = menu_ask(&guidance);
	switch (choice) {
	case 's':
		breaker_skip(&v->s, &v->o->limits, v->s.phase, getenv("USER"),
		    wall_now());
		v->s.outcome = OUT_SKIP;
		report_event(&v->rep, "skip", v->s.phase);
		return save(v) == -1 ? CB_EXIT_ERROR : CB_EXIT_OK;
	case 'm':
		set_str(&v->s.guidance, guidance);
		report_event(&v->rep, "guidance", guidance);
		free(guidance);
		/* FALLTHROUGH */
	case 'r':
		state_snapshot(&v->s, &before);
		breaker_reset(&v->s, &v->o->limits, choice == 'm' ?
		    "reset with new guidance" : "reset from the menu",
		    getenv("USER"), wall_now(), &res);
		report_event(&v->rep, "reset", choice == 'm' ?
		    "reset with new guidance" : "reset from the menu");
		report_result(v, &res, &before);
		v->retry = 1;
		return save(v) == -1 ? CB_EXIT_ERROR : -1;
	default:
		v->s.outcome = OUT_ABORT;
		return save(v) == -1 ? CB_EXIT_ERROR : CB_EXIT_ABORT;
	}
}

static char *
dir_of(const char *path)
{
	char *d = strdup(path), *slash;

	if (d == NULL)
		return NULL;
	if ((slash = strrchr(d, '/')) == NULL) {
		free(d);
		return strdup(".");
	}
	if (slash == d)
		slash[1] = '\0';
	else
		*slash = '\0';
	return d;
}

/* One run and everything after it.  Returns -1 to go on looping, else the
 * invocation's exit status; *code gets the run's own exit status. */
static int
one_run(struct inv *v, int *code, int *failed)
{
	struct options *o = v->o;
	struct sup_cfg cfg;
	struct sup_result r;
	struct status_report st, cmd;
	struct status_scanner *sc = NULL;
	struct classification c;
	struct run_facts f;
	struct prints before, after;
	struct cb_run run;
	struct cb_result res;
	struct run_report rr;
	char sfile[4096], err[512];
	const char *tmpdir = getenv("TMPDIR");
	double started;
	int ret = -1, progress, success;

	memset(&cfg, 0, sizeof(cfg));
	memset(&c, 0, sizeof(c));
	status_init(&st);
	status_init(&cmd);
	if (make_status_file(sfile, sizeof(sfile)) == -1) {
		fprintf(stderr, "cbexec: cannot create the status file: %s\n",
		    strerror(errno));
		return CB_EXIT_ERROR;
	}
	if (o->argv != NULL && (cfg.envp = child_env(v, sfile)) == NULL)
		goto oom;
	if (!o->no_capture_stdout && (sc = status_scanner_new()) == NULL)
		goto oom;
	take_prints(v, &before);

	cfg.argv = o->argv;
	cfg.timeout = o->timeout;
	cfg.kill_after = o->kill_after;
	cfg.signal = o->signal;
	cfg.deadline = v->deadline;
	cfg.capture_bytes = o->capture_bytes;
	cfg.capture_stdout = !o->no_capture_stdout;
	cfg.keep_orphans = o->keep_orphans;
	cfg.scanner = sc;
	started = wall_now();
	if (sup_run(&cfg, &r) == -1) {
		fprintf(stderr, "cbexec: cannot run %s: %s\n", o->argv[0],
		    strerror(errno));
		ret = CB_EXIT_ERROR;
		goto out_noresult;
	}

	read_status_file(sfile, &st, &v->rep);
	if (!st.present && sc != NULL) {
		status_scanner_result(sc, &st);
		if (!st.present && st.warning[0] != '\0')
			report_warn(&v->rep, "status block: %s", st.warning);
	}
	if ((o->progress & PROG_CMD) && o->progress_cmd != NULL &&
	    progress_cmd(o->progress_cmd, o->timeout > 0 ? o->timeout : 120,
	    &cmd, err, sizeof(err)) == -1)
		report_warn(&v->rep, "%s", err);
	take_prints(v, &after);

	memset(&f, 0, sizeof(f));
	f.command = o->argv[0];
	f.exec_errno = r.exec_errno;
	f.exit_code = r.exit_code;
	f.signo = r.signo;
	f.signalled_by_us = r.signalled_by_us;
	f.timed_out = r.timed_out;
	{
		size_t el = 0, ol = 0;
		char *e = ring_dup(&r.err, &el), *out = ring_dup(&r.out, &ol);

		f.err = e;
		f.err_len = el;
		f.out = cfg.capture_stdout ? out : NULL;
		f.out_len = cfg.capture_stdout ? ol : 0;
		f.ok_codes = o->ok_codes.v;
		f.n_ok_codes = o->ok_codes.n;
		f.tmpdir = tmpdir;
		if (e == NULL || out == NULL || classify(o->rules, o->n_rules,
		    &f, &c) == -1) {
			free(e);
			free(out);
			goto oom_result;
		}
		free(e);
		free(out);
	}
	success = c.cls == CB_CLASS_SUCCESS;
	progress = judge_progress(v, &before, &after, &st, &cmd, success);

	memset(&run, 0, sizeof(run));
	run.progress = progress;
	run.ignored = r.exec_errno == 0 && r.signo == 0 && !r.timed_out &&
	    in_codes(&o->ignore_codes, r.exit_code) && !success;
	run.cls = c.cls;
	run.type = c.type;
	run.message = c.message;
	run.hash = c.hash;
	run.task = st.task != NULL ? st.task : o->task;
	run.exit_code = r.signo != 0 ? CB_EXIT_SIGNAL + r.signo : r.exit_code;
	if (r.exec_errno != 0)
		run.exit_code = r.exec_errno == ENOENT ? 127 : 126;

	breaker_record(&v->s, &o->limits, &run, wall_now(), &res);
	if (after.git[0] || after.files[0])
		set_str(&v->s.last_fingerprint, after.git[0] ? after.git :
		    after.files);
	*code = run_exit(&r, &c);
	*failed = !success && !run.ignored;
	v->s.outcome = res.outcome != OUT_OK ? res.outcome :
	    run_outcome(&r, &c);
	if (sup_aborted())
		v->s.outcome = OUT_ABORT;
	if (save(v) == -1) {
		ret = CB_EXIT_ERROR;
		goto out;
	}

	memset(&rr, 0, sizeof(rr));
	rr.iteration = v->s.iteration;
	rr.started = started;
	rr.duration = r.duration;
	rr.exit_code = r.exec_errno ? run.exit_code : r.exit_code;
	rr.signo = r.signo;
	rr.timed_out = r.timed_out;
	rr.progress = progress;
	rr.c = &c;
	report_run(&v->rep, &rr);
	/* The hook sees the counters that caused the transition. */
	report_result(v, &res, &v->s);
	if (v->rep.metrics_path != NULL &&
	    report_metrics(&v->rep, &v->s, r.duration, err, sizeof(err)) == -1)
		report_warn(&v->rep, "%s", err);

	if (sup_aborted()) {
		ret = CB_EXIT_ABORT;
		goto out;
	}
	if (res.outcome == OUT_OPEN || res.outcome == OUT_STUCK ||
	    res.outcome == OUT_ABORT) {
		int trip = res.outcome == OUT_OPEN ? CB_EXIT_OPEN :
		    res.outcome == OUT_STUCK ? CB_EXIT_STUCK :
		    r.exec_errno != 0 ? *code : CB_EXIT_ABORT;

		ret = opened(v, &st, trip);
		goto out;
	}
	if (r.budget_expired) {
		ret = CB_EXIT_TIMEOUT;
		goto out;
	}
	if (c.cls == CB_CLASS_FATAL) {
		ret = *code;
		goto out;
	}
	if (status_done(&st)) {
		ret = CB_EXIT_OK;
		goto out;
	}
out:
	sup_result_free(&r);
out_noresult:
	classification_free(&c);
	status_free(&st);
	status_free(&cmd);
	status_scanner_free(sc);
	free_env(cfg.envp);
	unlink(sfile);
	return ret;
oom_result:
	sup_result_free(&r);
oom:
	fprintf(stderr, "cbexec: out of memory\n");
	status_scanner_free(sc);
	free_env(cfg.envp);
	unlink(sfile);
	status_free(&st);
	status_free(&cmd);
	return CB_EXIT_ERROR;
}

int
reporter_open(struct reporter *r, const struct options *o,
    const struct circuit *c)
{
	memset(r, 0, sizeof(*r));
	r->label = c->label;
	r->name = o->name;
	r->state_path = c->path;
	r->verbosity = o->verbosity;
	r->color = isatty(STDERR_FILENO) && getenv("NO_COLOR") == NULL;
	r->log_fd = -1;
	r->metrics_path = o->metrics_path;
	r->hook = o->on_state_change;
	r->hook_timeout = o->kill_after;
	if (o->log_path != NULL && (r->log_fd = open(o->log_path,
	    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) == -1) {
		fprintf(stderr, "cbexec: %s: %s\n", o->log_path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

void
reporter_close(struct reporter *r)
{
	if (r->log_fd != -1)
		close(r->log_fd);
	r->log_fd = -1;
}

static int
refuse(struct inv *v)
{
	fprintf(stderr, "cbexec[%s]: circuit is OPEN%s%s; not running. "
	    "Reset: %s\n", v->c->label, v->s.open_reason ? ": " : "",
	    v->s.open_reason ? v->s.open_reason : "", v->c->reset_hint);
	return CB_EXIT_OPEN;
}

int
driver_run(struct options *o, const struct circuit *c)
{
	struct inv v;
	struct cb_result res;
	char err[512];
	long runs = 0;
	int lock, rc, ret = CB_EXIT_ERROR, code = 0, failed = 0;

	memset(&v, 0, sizeof(v));
	v.o = o;
	v.c = c;
	v.phase = options_phase(o);
	srandom((unsigned)getpid() ^ (unsigned)time(NULL));

	if (sup_init() == -1) {
		fprintf(stderr, "cbexec: cannot set up: %s\n", strerror(errno));
		return CB_EXIT_ERROR;
	}
	if (o->budget > 0)
		v.deadline = sup_now() + o->budget;
	if ((lock = state_lock(c->path, o->wait_lock, err, sizeof(err))) < 0) {
		if (lock == -2) {
			fprintf(stderr, "cbexec: circuit %s is busy: another "
			    "cbexec holds %s.lock\n", c->label, c->path);
			return CB_EXIT_BUSY;
		}
		fprintf(stderr, "cbexec: %s\n", err);
		return CB_EXIT_ERROR;
	}
	if (state_load(c->path, o->follow_symlinks, o->name, &v.s, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "cbexec: %s\n", err);
		close(lock);
		return CB_EXIT_ERROR;
	}
	if (reporter_open(&v.rep, o, c) == -1)
		goto out;
	if (o->phase != NULL)
		set_str(&v.s.phase, o->phase);
	v.state_dir = dir_of(c->path);

	v.sources = o->progress & ~PROG_AUTO;
	if (o->progress & PROG_AUTO)
		v.sources |= (progress_in_git() ? PROG_GIT : PROG_EXIT) |
		    PROG_STATUS;

	for (;;) {
		if (v.deadline > 0 && sup_now() >= v.deadline) {
			ret = CB_EXIT_TIMEOUT;
			break;
		}
		if (!breaker_admit(&v.s, &o->limits, wall_now(), &res)) {
			ret = refuse(&v);
			break;
		}
		if (res.n > 0) {
			report_result(&v, &res, &v.s);
			if (save(&v) == -1)
				break;
		}
		rc = one_run(&v, &code, &failed);
		runs++;
		if (rc >= 0) {
			ret = rc;
			break;
		}
		ret = code;
		/* "Reset and retry": one more run, whatever -n said. */
		if (v.retry) {
			v.retry = 0;
			runs--;
			continue;
		}
		if (o->until_success && !failed)
			break;
		if (o->iterations > 0 && runs >= o->iterations)
			break;
		{
			double pause = o->delay, b = failed ?
			    backoff_delay(o, v.s.consecutive_errors) : 0;

			if (b > pause)
				pause = b;
			rc = sup_sleep(pause, v.deadline);
			if (rc == 1) {
				ret = CB_EXIT_TIMEOUT;
				break;
			}
			if (rc == 2) {
				v.s.outcome = OUT_ABORT;
				ret = save(&v) == -1 ? CB_EXIT_ERROR :
				    CB_EXIT_ABORT;
				break;
			}
		}
	}
out:
	reporter_close(&v.rep);
	free(v.state_dir);
	breaker_free(&v.s);
	close(lock);
	return ret;
}
