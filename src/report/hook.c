/* SPDX-License-Identifier: ISC */
/*
 * The hooks (SPEC §7): --on-state-change CMD, run on every transition
 * with CBEXEC_FROM, CBEXEC_TO, CBEXEC_REASON, CBEXEC_NAME,
 * CBEXEC_STATE_FILE, CBEXEC_ITERATION and the counters in its
 * environment; and --on-run CMD, run before each run (CBEXEC_EVENT=start)
 * and after it (CBEXEC_EVENT=end, with what the run did: run_vars[]).
 * Each replaces any inherited variables of its names, and a variable a
 * hook is not given (the outcome at a start) is removed, never inherited
 * from cbexec's own environment.  The environment is built before fork;
 * child_spawn (run/child.c) starts the hook.
 *
 * Both run through spawn_hook(): under /bin/sh -c in its own process
 * group with stdin on /dev/null and stdout+stderr on one pipe, waited for
 * by child_wait (run/child.c), so neither a hook that hangs (killed at the
 * deadline), nor one that leaves a background process holding the pipe
 * open, nor an interrupt while it runs can hold cbexec up.  What the hook
 * prints goes to stderr a line at a time as "hook: ..."; a non-zero exit,
 * a signal or the timeout is a warning, never an error of the run.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "report.h"
#include "say.h"
#include "core.h"

#define HOOK_TIMEOUT	10.0	/* seconds, when hook_timeout is 0 */
#define HOOK_LINE_MAX	4096	/* longer hook output lines are split */

extern char **environ;

static const char *const hook_vars[] = {
	"CBEXEC_FROM", "CBEXEC_TO", "CBEXEC_REASON", "CBEXEC_NAME",
	"CBEXEC_STATE_FILE", "CBEXEC_ITERATION", "CBEXEC_NO_PROGRESS_COUNT",
	"CBEXEC_SAME_ERROR_COUNT", "CBEXEC_CONSECUTIVE_ERRORS",
	"CBEXEC_SAME_TASK_FAILURES", "CBEXEC_TOTAL_OPENS",
};
#define N_HOOK_VARS (sizeof(hook_vars) / sizeof(hook_vars[0]))

/* --on-run's variables, in the order run_env() fills them. */
enum { RV_EVENT, RV_NAME, RV_STATE_FILE, RV_ITERATION, RV_PHASE,
	RV_CIRCUIT_STATE, RV_RESULT, RV_EXIT_STATUS, RV_EXIT_CODE, RV_SIGNAL,
	RV_CLASS, RV_TYPE, RV_MESSAGE, RV_DURATION, RV_PROGRESS, RV_COST_USD,
	RV_TOKENS, RV_COMPLETE, N_RUN_VARS };
static const char *const run_vars[N_RUN_VARS] = {
	"CBEXEC_EVENT", "CBEXEC_NAME", "CBEXEC_STATE_FILE", "CBEXEC_ITERATION",
	"CBEXEC_PHASE", "CBEXEC_CIRCUIT_STATE", "CBEXEC_RESULT",
	"CBEXEC_EXIT_STATUS", "CBEXEC_EXIT_CODE", "CBEXEC_SIGNAL",
	"CBEXEC_CLASS", "CBEXEC_TYPE", "CBEXEC_MESSAGE", "CBEXEC_DURATION",
	"CBEXEC_PROGRESS", "CBEXEC_COST_USD", "CBEXEC_TOKENS",
	"CBEXEC_COMPLETE",
};

/* Whether the environment entry kv sets one of the n names. */
static int
is_one_of(const char *kv, const char *const *names, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		k = strlen(names[i]);
		if (strncmp(kv, names[i], k) == 0 && kv[k] == '=')
			return 1;
	}
	return 0;
}

static char *
env_pair(const char *k, const char *v)
{
	size_t kl = strlen(k), vl = strlen(v);
	char *p = malloc(kl + vl + 2);

	if (p != NULL) {
		memcpy(p, k, kl);
		p[kl] = '=';
		memcpy(p + kl + 1, v, vl + 1);
	}
	return p;
}

/*
 * A hook's environment, built before fork so the child only has to
 * execve: environ without any of the n names, then NAME=VALUE for each
 * value that is not NULL.  Entries [0, *nborrowed) point into environ;
 * the rest are ours.
 */
static char **
make_env(const char *const *names, const char *const *val, size_t n,
    size_t *nborrowed)
{
	size_t m = 0, k = 0, i;
	char **envp, **e;

	for (e = environ; e != NULL && *e != NULL; e++)
		m++;
	if ((envp = calloc(m + n + 1, sizeof(*envp))) == NULL)
		return NULL;
	for (e = environ; e != NULL && *e != NULL; e++)
		if (!is_one_of(*e, names, n))
			envp[k++] = *e;
	*nborrowed = k;
	for (i = 0; i < n; i++)
		if (val[i] != NULL &&
		    (envp[k++] = env_pair(names[i], val[i])) == NULL)
			goto fail;
	return envp;
fail:
	for (i = *nborrowed; envp[i] != NULL; i++)
		free(envp[i]);
	free(envp);
	return NULL;
}

/* --on-state-change's environment. */
static char **
hook_env(const struct reporter *r, const struct cb_transition *t,
    const struct cb_state *b, long iteration, size_t *nborrowed)
{
	char num[N_HOOK_VARS][32];
	const char *val[N_HOOK_VARS];
	size_t i;

	val[0] = circuit_name(t->from);
	val[1] = circuit_name(t->to);
	val[2] = t->reason;
	val[3] = r->name != NULL ? r->name : "";
	val[4] = r->state_path != NULL ? r->state_path : "";
	snprintf(num[5], sizeof(num[5]), "%ld", iteration);
	snprintf(num[6], sizeof(num[6]), "%d", b ? b->no_progress_count : 0);
	snprintf(num[7], sizeof(num[7]), "%d", b ? b->same_error_count : 0);
	snprintf(num[8], sizeof(num[8]), "%d", b ? b->consecutive_errors : 0);
	snprintf(num[9], sizeof(num[9]), "%d", b ? b->same_task_failures : 0);
	snprintf(num[10], sizeof(num[10]), "%ld", b ? b->total_opens : 0L);
	for (i = 5; i < N_HOOK_VARS; i++)
		val[i] = num[i];
	return make_env(hook_vars, val, N_HOOK_VARS, nborrowed);
}

struct linebuf {
	char p[HOOK_LINE_MAX];
	size_t n;
};

static void
hook_output(const struct reporter *r, struct linebuf *lb, const char *p,
    size_t n, int flush)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] != '\n')
			lb->p[lb->n++] = p[i];
		if (p[i] == '\n' || lb->n == sizeof(lb->p)) {
			say(r, NULL, "hook: %.*s", (int)lb->n, lb->p);
			lb->n = 0;
		}
	}
	if (flush && lb->n > 0) {
		say(r, NULL, "hook: %.*s", (int)lb->n, lb->p);
		lb->n = 0;
	}
}

struct hook_out {
	const struct reporter *r;
	struct linebuf lb;
};

static int
hook_sink(void *ctx, const char *p, size_t n)
{
	struct hook_out *h = ctx;

	hook_output(h->r, &h->lb, p, n, 0);
	return 0;
}

static void
hook_wait(struct reporter *r, const char *what, pid_t pid, int fd,
    double at, double timeout)
{
	struct hook_out h = { .r = r, .lb = { .n = 0 } };
	double until = child_bound(at);
	int status = 0, rc;
	char sb[16];

	rc = child_wait(pid, fd, until, 0, hook_sink, &h, &status);
	hook_output(r, &h.lb, NULL, 0, 1);
	if (rc == CHILD_TIMEOUT && until != at)
		report_warn(r, "%s killed: the --budget ran out", what);
	else if (rc == CHILD_TIMEOUT)
		report_warn(r, "%s timed out after %gs; killed", what, timeout);
	else if (rc == CHILD_INTERRUPTED)
		report_warn(r, "%s interrupted; killed", what);
	else if (rc == CHILD_EXITED && WIFEXITED(status) &&
	    WEXITSTATUS(status) != 0)
		report_warn(r, "%s exited %d", what, WEXITSTATUS(status));
	else if (rc == CHILD_EXITED && WIFSIGNALED(status))
		report_warn(r, "%s killed by %s", what,
		    sig_name(WTERMSIG(status), sb, sizeof(sb)));
}

/*
 * Run cmd with envp (the first nb entries borrowed) as a hook, bounded
 * and waited for as the file's comment says; what names it in warnings.
 * Frees envp.  Every hook goes through here, so a bound on hooks holds
 * for all of them.
 */
static void
spawn_hook(struct reporter *r, const char *what, const char *cmd,
    char **envp, size_t nb)
{
	double timeout = r->hook_timeout > 0 ? r->hook_timeout : HOOK_TIMEOUT;
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };
	double at = mono_now() + timeout;
	size_t i;
	pid_t pid;
	int fd;

	if (envp == NULL) {
		report_warn(r, "%s: %s", what, strerror(ENOMEM));
		return;
	}
	/* What is left of the --budget bounds it too (SPEC §11): once the
	 * budget is spent, it is not started. */
	if (child_bound(at) <= mono_now())
		report_warn(r, "%s not run: the --budget is spent", what);
	/* Its own group, so the deadline's kill(-pid) takes whatever it
	 * started along with it; stdout and stderr on one pipe. */
	else if ((pid = child_spawn(argv, envp, CHILD_ERR_PIPE, 1, &fd)) ==
	    -1)
		report_warn(r, "%s: %s", what, strerror(errno));
	else
		hook_wait(r, what, pid, fd, at, timeout);
	for (i = nb; envp[i] != NULL; i++)
		free(envp[i]);
	free(envp);
}

void
run_hook(struct reporter *r, const struct cb_transition *t,
    const struct cb_state *before, long iteration)
{
	size_t nb = 0;
	char **envp = hook_env(r, t, before, iteration, &nb);

	spawn_hook(r, "hook", r->hook, envp, nb);
}

void
report_run_hook(struct reporter *r, const struct run_hook_event *e)
{
	const struct run_report *rr = e->end ? e->rr : NULL;
	const char *val[N_RUN_VARS] = { NULL };
	char it[24], st[16], code[16], dur[32], cost[40], tok[24], sb[16];
	char **envp;
	size_t nb = 0;

	if (r->run_hook == NULL)
		return;
	val[RV_EVENT] = e->end ? "end" : "start";
	val[RV_NAME] = r->name != NULL ? r->name : "";
	val[RV_STATE_FILE] = r->state_path != NULL ? r->state_path : "";
	snprintf(it, sizeof(it), "%ld", e->iteration);
	val[RV_ITERATION] = it;
	val[RV_PHASE] = e->phase != NULL ? e->phase : "";
	val[RV_CIRCUIT_STATE] = circuit_name(e->state);
	if (rr != NULL) {
		const struct classification *c = rr->c;
		int failed = c != NULL && c->cls != CB_CLASS_SUCCESS;

		val[RV_RESULT] = rr->ignored ? "ignored" : failed ? "failure" :
		    "success";
		snprintf(st, sizeof(st), "%d", e->exit_status);
		val[RV_EXIT_STATUS] = st;
		snprintf(code, sizeof(code), "%d", rr->exit_code);
		val[RV_EXIT_CODE] = rr->exit_code >= 0 ? code : "";
		val[RV_SIGNAL] = rr->signo > 0 ? sig_name(rr->signo, sb,
		    sizeof(sb)) : "";
		val[RV_CLASS] = class_name(c != NULL ? c->cls :
		    CB_CLASS_SUCCESS);
		val[RV_TYPE] = failed ? c->type : "";
		val[RV_MESSAGE] = failed && c->message != NULL ? c->message :
		    "";
		snprintf(dur, sizeof(dur), "%.2f", rr->duration >= 0 ?
		    rr->duration : 0);
		val[RV_DURATION] = dur;
		val[RV_PROGRESS] = rr->progress ? "1" : "0";
		val[RV_COMPLETE] = rr->complete ? "1" : "0";
		cost[0] = tok[0] = '\0';
		if (rr->usage != NULL && rr->usage->cost_usd >= 0)
			snprintf(cost, sizeof(cost), "%g", rr->usage->cost_usd);
		if (rr->usage != NULL && (rr->usage->input_tokens >= 0 ||
		    rr->usage->output_tokens >= 0 ||
		    rr->usage->cache_tokens >= 0))
			snprintf(tok, sizeof(tok), "%ld",
			    (rr->usage->input_tokens > 0 ?
			    rr->usage->input_tokens : 0) +
			    (rr->usage->output_tokens > 0 ?
			    rr->usage->output_tokens : 0) +
			    (rr->usage->cache_tokens > 0 ?
			    rr->usage->cache_tokens : 0));
		val[RV_COST_USD] = cost;
		val[RV_TOKENS] = tok;
	}
	envp = make_env(run_vars, val, N_RUN_VARS, &nb);
	spawn_hook(r, "on-run hook", r->run_hook, envp, nb);
}
