/*
 * One run: the command's environment and status file, the supervised run
 * itself (supervise.c), its status report, progress (judge.c), the
 * classification, the breaker's record, the durable save and the report.
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

#include "exitcodes.h"
#include "invocation.h"
#include "progress.h"
#include "state.h"
#include "supervise.h"

extern char **environ;

int
in_codes(const struct codes *c, int v)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->v[i] == v)
			return 1;
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
	struct stat st;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return;
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


/* The exit status a run stands for on its own (SPEC §2); fatal: its class
 * is fatal and its exit code is not one --ignore-exit-codes names. */
static int
run_exit(const struct sup_result *r, int fatal)
{
	if (r->exec_errno != 0)
		return r->exec_errno == ENOENT ? CB_EXIT_NOTFOUND :
		    CB_EXIT_NOEXEC;
	if (r->timed_out)
		return CB_EXIT_TIMEOUT;
	if (fatal)
		return CB_EXIT_ABORT;
	if (r->signo != 0)
		return CB_EXIT_SIGNAL + r->signo;
	return r->exit_code;
}

static enum cb_outcome
run_outcome(const struct sup_result *r, int fatal)
{
	if (r->exec_errno != 0)
		return r->exec_errno == ENOENT ? OUT_NOTFOUND : OUT_NOEXEC;
	if (r->timed_out)
		return OUT_TIMEOUT;
	if (fatal)
		return OUT_ABORT;
	if (r->signo != 0)
		return OUT_SIGNAL;
	return r->exit_code == 0 ? OUT_OK : OUT_EXIT;
}

/* One run and everything after it.  Returns -1 to go on looping, else the
 * invocation's exit status; *code gets the run's own exit status. */
int
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
	char sfile[4096], err[512], *task = NULL;
	const char *tmpdir = getenv("TMPDIR");
	double started;
	int ret = -1, progress, success, fatal;

	memset(&cfg, 0, sizeof(cfg));
	memset(&c, 0, sizeof(c));
	memset(&before, 0, sizeof(before));
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
	take_prints(v, &before, NULL);

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
	take_prints(v, &after, &before);

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
	/* A task the command reported goes into the state file: UTF-8. */
	if (st.task != NULL && (task = utf8_sanitize(st.task,
	    strlen(st.task))) == NULL)
		goto oom_result;
	run.task = task != NULL ? task : o->task;
	run.exit_code = r.signo != 0 ? CB_EXIT_SIGNAL + r.signo : r.exit_code;
	if (r.exec_errno != 0)
		run.exit_code = r.exec_errno == ENOENT ? 127 : 126;

	breaker_record(&v->s, &o->limits, &run, wall_now(), &res);
	if (after.git[0] || after.files[0])
		set_str(&v->s.last_fingerprint, after.git[0] ? after.git :
		    after.files);
	/* An exit code the caller said to ignore is never fatal either. */
	fatal = c.cls == CB_CLASS_FATAL && !run.ignored;
	*code = run_exit(&r, fatal);
	*failed = !success && !run.ignored;
	v->s.outcome = res.outcome != OUT_OK ? res.outcome :
	    run_outcome(&r, fatal);
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
	rr.ignored = run.ignored;
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
	if (fatal) {
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
	files_watch_free(before.fw);
	free(task);
	classification_free(&c);
	status_free(&st);
	status_free(&cmd);
	status_scanner_free(sc);
	free_env(cfg.envp);
	unlink(sfile);
	return ret;
oom_result:
	sup_result_free(&r);
	classification_free(&c);
oom:
	fprintf(stderr, "cbexec: out of memory\n");
	files_watch_free(before.fw);
	status_scanner_free(sc);
	free_env(cfg.envp);
	unlink(sfile);
	status_free(&st);
	status_free(&cmd);
	return CB_EXIT_ERROR;
}
