/* SPDX-License-Identifier: ISC */
/*
 * The --on-state-change hook (SPEC §7): CMD run on every transition with
 * CBEXEC_FROM, CBEXEC_TO, CBEXEC_REASON, CBEXEC_NAME, CBEXEC_STATE_FILE,
 * CBEXEC_ITERATION and the counters in its environment (replacing any
 * inherited variables of those names).  The environment is built before
 * fork; child_spawn (run/child.c) starts it.
 *
 * The hook runs under /bin/sh -c in its own process group with stdin on
 * /dev/null and stdout+stderr on one pipe, waited for by child_wait
 * (run/child.c), so neither a hook that hangs (killed at the deadline),
 * nor one that leaves a background process holding the pipe open, nor an
 * interrupt while it runs can hold cbexec up.  What the hook prints goes
 * to stderr a line at a time as "hook: ..."; a non-zero exit, a signal or
 * the timeout is a warning, never an error of the run.
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

static int
is_hook_var(const char *kv)
{
	size_t i, n;

	for (i = 0; i < N_HOOK_VARS; i++) {
		n = strlen(hook_vars[i]);
		if (strncmp(kv, hook_vars[i], n) == 0 && kv[n] == '=')
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
 * The hook's environment, built before fork so the child only has to
 * execve.  Entries [0, *nborrowed) point into environ; the rest are ours.
 */
static char **
hook_env(const struct reporter *r, const struct cb_transition *t,
    const struct cb_state *b, long iteration, size_t *nborrowed)
{
	char num[N_HOOK_VARS][32];
	const char *val[N_HOOK_VARS];
	size_t n = 0, k = 0, i;
	char **envp, **e;

	for (e = environ; e != NULL && *e != NULL; e++)
		n++;
	if ((envp = calloc(n + N_HOOK_VARS + 1, sizeof(*envp))) == NULL)
		return NULL;
	for (e = environ; e != NULL && *e != NULL; e++)
		if (!is_hook_var(*e))
			envp[k++] = *e;
	*nborrowed = k;

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
	for (i = 0; i < N_HOOK_VARS; i++)
		if ((envp[k++] = env_pair(hook_vars[i], val[i])) == NULL)
			goto fail;
	return envp;
fail:
	for (i = *nborrowed; envp[i] != NULL; i++)
		free(envp[i]);
	free(envp);
	return NULL;
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
hook_wait(struct reporter *r, pid_t pid, int fd, double at, double timeout)
{
	struct hook_out h = { .r = r, .lb = { .n = 0 } };
	double until = child_bound(at);
	int status = 0, rc;
	char sb[16];

	rc = child_wait(pid, fd, until, 0, hook_sink, &h, &status);
	hook_output(r, &h.lb, NULL, 0, 1);
	if (rc == CHILD_TIMEOUT && until != at)
		report_warn(r, "hook killed: the --budget ran out");
	else if (rc == CHILD_TIMEOUT)
		report_warn(r, "hook timed out after %gs; killed", timeout);
	else if (rc == CHILD_INTERRUPTED)
		report_warn(r, "hook interrupted; killed");
	else if (rc == CHILD_EXITED && WIFEXITED(status) &&
	    WEXITSTATUS(status) != 0)
		report_warn(r, "hook exited %d", WEXITSTATUS(status));
	else if (rc == CHILD_EXITED && WIFSIGNALED(status))
		report_warn(r, "hook killed by %s",
		    sig_name(WTERMSIG(status), sb, sizeof(sb)));
}

void
run_hook(struct reporter *r, const struct cb_transition *t,
    const struct cb_state *before, long iteration)
{
	double timeout = r->hook_timeout > 0 ? r->hook_timeout : HOOK_TIMEOUT;
	double at;
	char *argv[] = { "/bin/sh", "-c", (char *)r->hook, NULL };
	size_t nb = 0, i;
	char **envp;
	pid_t pid;
	int fd;

	/* What is left of the --budget bounds it too (SPEC §11): once the
	 * budget is spent, it is not started. */
	at = mono_now() + timeout;
	if (child_bound(at) <= mono_now()) {
		report_warn(r, "hook not run: the --budget is spent");
		return;
	}
	if ((envp = hook_env(r, t, before, iteration, &nb)) == NULL) {
		report_warn(r, "hook: %s", strerror(ENOMEM));
		return;
	}
	/* Its own group, so the deadline's kill(-pid) takes whatever it
	 * started along with it; stdout and stderr on one pipe. */
	if ((pid = child_spawn(argv, envp, CHILD_ERR_PIPE, 1, &fd)) == -1)
		report_warn(r, "hook: %s", strerror(errno));
	else
		hook_wait(r, pid, fd, at, timeout);
	for (i = nb; envp[i] != NULL; i++)
		free(envp[i]);
	free(envp);
}
