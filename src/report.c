/*
 * What cbexec tells people and machines (SPEC §5, §7).
 *
 * Every message is built whole in memory (open_memstream) and handed to
 * the kernel in one write(), so a line on stderr or in the --log file is
 * never torn by a concurrent writer: the log fd is O_APPEND and each JSON
 * object with its newline goes out in a single call.  Quiet mode (verbosity
 * < 0) keeps stderr to transitions into OPEN and the OPEN block; the log
 * always gets every event.
 *
 * The --on-state-change hook runs under /bin/sh -c in its own process
 * group with stdin on /dev/null and stdout+stderr on one pipe.  The parent
 * polls that pipe in short slices, checking the hook's pid each time, so
 * neither a hook that hangs (killed at the deadline) nor one that leaves a
 * background process holding the pipe open (drained without blocking once
 * the hook itself has exited) can hold cbexec up.  Only that pid is ever
 * waited for: libev owns SIGCHLD and reaps everything else.
 *
 * The metrics file is Prometheus text format 0.0.4, replaced atomically
 * (temp file, fsync, rename) so node_exporter never reads half of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "report.h"
#include "state.h"

#define RED	"\033[31m"
#define GREEN	"\033[32m"
#define YELLOW	"\033[33m"
#define NOCOLOR	"\033[0m"

#define HOOK_TIMEOUT	10.0	/* seconds, when hook_timeout is 0 */
#define HOOK_SLICE_MS	50	/* how often a running hook's pid is checked */
#define HOOK_LINE_MAX	4096	/* longer hook output lines are split */
#define HOOK_DRAIN_MAX	(1 << 20)	/* bytes read after the hook exited */

extern char **environ;

static const struct {
	int signo;
	const char *name;
} signames[] = {
	{ SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" }, { SIGQUIT, "SIGQUIT" },
	{ SIGILL, "SIGILL" }, { SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
	{ SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" }, { SIGKILL, "SIGKILL" },
	{ SIGUSR1, "SIGUSR1" }, { SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
	{ SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" },
	{ SIGCHLD, "SIGCHLD" }, { SIGCONT, "SIGCONT" }, { SIGSTOP, "SIGSTOP" },
	{ SIGTSTP, "SIGTSTP" }, { SIGTTIN, "SIGTTIN" }, { SIGTTOU, "SIGTTOU" },
	{ SIGURG, "SIGURG" }, { SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" },
	{ SIGVTALRM, "SIGVTALRM" }, { SIGPROF, "SIGPROF" },
	{ SIGWINCH, "SIGWINCH" }, { SIGSYS, "SIGSYS" },
};

static const char *
sig_name(int signo, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(signames) / sizeof(signames[0]); i++)
		if (signames[i].signo == signo)
			return signames[i].name;
	snprintf(buf, len, "SIG%d", signo);
	return buf;
}

static const char *
label_of(const struct reporter *r)
{
	if (r->label != NULL)
		return r->label;
	return r->state_path != NULL ? r->state_path : "";
}

static const char *
circuit_color(int c)
{
	return c == CB_OPEN ? RED : c == CB_HALF_OPEN ? YELLOW : GREEN;
}

static double
clock_now(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return;		/* nowhere left to complain to */
		}
		p += w;
		n -= (size_t)w;
	}
}

/* "cbexec[LABEL]: " + the message (coloured when asked) + "\n", one write. */
static void
vsay(const struct reporter *r, const char *color, const char *fmt, va_list ap)
{
	char *p = NULL;
	size_t n = 0;
	FILE *m;

	if ((m = open_memstream(&p, &n)) == NULL)
		return;
	fprintf(m, "cbexec[%s]: ", label_of(r));
	if (color != NULL && r->color)
		fputs(color, m);
	vfprintf(m, fmt, ap);
	if (color != NULL && r->color)
		fputs(NOCOLOR, m);
	fputc('\n', m);
	if (fclose(m) == 0) {
		fflush(stderr);
		write_all(STDERR_FILENO, p, n);
	}
	free(p);
}

static void say(const struct reporter *r, const char *color,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
say(const struct reporter *r, const char *color, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(r, color, fmt, ap);
	va_end(ap);
}

static void
add_str(cJSON *o, const char *key, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

/* A log object with ts, circuit and event filled in; NULL without --log. */
static cJSON *
log_new(const struct reporter *r, const char *event)
{
	char ts[40];
	cJSON *o;

	if (r->log_fd < 0 || (o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "ts",
	    iso8601(clock_now(CLOCK_REALTIME), ts, sizeof(ts)));
	cJSON_AddStringToObject(o, "circuit", label_of(r));
	cJSON_AddStringToObject(o, "event", event);
	return o;
}

/* Write o as one JSON line and free it. */
static void
log_put(const struct reporter *r, cJSON *o)
{
	char *s, *line;
	size_t n;

	if (o == NULL)
		return;
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (s == NULL)
		return;
	n = strlen(s);
	/* The newline goes in the same write, or another writer's line
	 * could land between an object and its terminator. */
	if ((line = malloc(n + 1)) != NULL) {
		memcpy(line, s, n);
		line[n] = '\n';
		write_all(r->log_fd, line, n + 1);
		free(line);
	}
	cJSON_free(s);
}

static void
log_reason(const struct reporter *r, const char *event, const char *reason)
{
	cJSON *o = log_new(r, event);

	if (o != NULL)
		add_str(o, "reason", reason);
	log_put(r, o);
}

static void
vwarn(struct reporter *r, const char *fmt, va_list ap)
{
	char *msg = NULL;
	size_t n = 0;
	FILE *m;

	if ((m = open_memstream(&msg, &n)) == NULL)
		return;
	vfprintf(m, fmt, ap);
	if (fclose(m) != 0) {
		free(msg);
		return;
	}
	if (r->verbosity >= 0)
		say(r, YELLOW, "warning: %s", msg);
	log_reason(r, "warning", msg);
	free(msg);
}

void
report_warn(struct reporter *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(r, fmt, ap);
	va_end(ap);
}

void
report_run(struct reporter *r, const struct run_report *rr)
{
	const struct classification *c = rr->c;
	int failed = c != NULL && c->cls != CB_CLASS_SUCCESS;
	char sb[16], *msg;
	const char *sig = rr->signo > 0 ? sig_name(rr->signo, sb, sizeof(sb)) :
	    NULL;
	cJSON *o;

	if (r->verbosity >= 0) {
		char how[64], tail[32] = "";

		if (rr->timed_out)
			snprintf(how, sizeof(how), "timed out");
		else if (rr->exit_code >= 0)
			snprintf(how, sizeof(how), "exited %d", rr->exit_code);
		else if (sig != NULL)
			snprintf(how, sizeof(how), "killed by %s", sig);
		else
			snprintf(how, sizeof(how), "did not start");
		if (!failed && r->verbosity > 0)
			snprintf(tail, sizeof(tail), " (%s)",
			    rr->progress ? "progress" : "no progress");
		if (failed)
			say(r, NULL, "run %ld %s after %.2fs: %s %s%s%s",
			    rr->iteration, how, rr->duration,
			    class_name(c->cls), c->type,
			    c->message != NULL ? ": " : "",
			    c->message != NULL ? c->message : "");
		else
			say(r, NULL, "run %ld %s after %.2fs%s", rr->iteration,
			    how, rr->duration, tail);
	}

	if ((o = log_new(r, "run")) == NULL)
		return;
	cJSON_AddNumberToObject(o, "iteration", rr->iteration);
	cJSON_AddNumberToObject(o, "duration", rr->duration);
	if (rr->exit_code >= 0)
		cJSON_AddNumberToObject(o, "exit_code", rr->exit_code);
	else
		cJSON_AddNullToObject(o, "exit_code");
	add_str(o, "signal", sig);
	cJSON_AddBoolToObject(o, "timed_out", rr->timed_out != 0);
	add_str(o, "class", class_name(c != NULL ? c->cls : CB_CLASS_SUCCESS));
	add_str(o, "type", failed ? c->type : "");
	add_str(o, "fingerprint", failed && c->hash[0] != '\0' ? c->hash :
	    NULL);
	/* The log must stay valid UTF-8 whatever the command printed. */
	msg = failed && c->message != NULL ?
	    utf8_sanitize(c->message, strlen(c->message)) : NULL;
	add_str(o, "message", msg);
	free(msg);
	cJSON_AddBoolToObject(o, "progress", rr->progress != 0);
	log_put(r, o);
}

/* --- the --on-state-change hook ------------------------------------- */

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

/* Move fd above stdin/stdout/stderr so the child's dup2s cannot clobber
 * it (cbexec may have been started with one of 0-2 closed). */
static int
above_stdio(int fd)
{
	int nfd;

	if (fd < 0 || fd > STDERR_FILENO)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	close(fd);
	return nfd;
}

static void __attribute__((noreturn))
hook_child(const char *cmd, char **envp, int in, int out)
{
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	struct sigaction sa;
	sigset_t none;
	int sig;

	/* Its own group, so the deadline's kill(-pid) takes whatever it
	 * started along with it. */
	setpgid(0, 0);
	if (in >= 0)
		dup2(in, STDIN_FILENO);
	dup2(out, STDOUT_FILENO);
	dup2(out, STDERR_FILENO);
	/* Handlers from cbexec must not run here before exec replaces them,
	 * and SIGPIPE (ignored by cbexec) must kill a writer as usual;
	 * other signals inherited as ignored stay ignored. */
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP ||
		    sigaction(sig, NULL, &sa) == -1)
			continue;
		if (sig == SIGPIPE || (sa.sa_flags & SA_SIGINFO) ||
		    (sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL)) {
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = SIG_DFL;
			sigemptyset(&sa.sa_mask);
			sigaction(sig, &sa, NULL);
		}
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve("/bin/sh", argv, envp);
	_exit(127);
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

/* Read what is there now without waiting; stop at EOF, error or cap. */
static void
hook_drain(const struct reporter *r, struct linebuf *lb, int fd)
{
	char buf[4096];
	size_t total = 0;
	ssize_t n;

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (total < HOOK_DRAIN_MAX) {
		if ((n = read(fd, buf, sizeof(buf))) == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		hook_output(r, lb, buf, (size_t)n, 0);
		total += (size_t)n;
	}
}

static void
hook_wait(struct reporter *r, pid_t pid, int fd, double timeout)
{
	struct linebuf lb = { .n = 0 };
	double deadline = clock_now(CLOCK_MONOTONIC) + timeout, left;
	int status = 0, done = 0, reaped = 1, ms, slice;
	char buf[4096], sb[16];
	struct pollfd pfd;
	pid_t w;
	ssize_t n;

	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid || (w == -1 && errno == ECHILD)) {
			reaped = w == pid;
			done = 1;
			break;
		}
		if ((left = deadline - clock_now(CLOCK_MONOTONIC)) <= 0)
			break;
		/* Once the pipe is at EOF the hook is normally about to be a
		 * zombie: look again soon. */
		slice = fd >= 0 ? HOOK_SLICE_MS : HOOK_SLICE_MS / 10;
		ms = left * 1000 < slice ? (int)(left * 1000) + 1 : slice;
		pfd.fd = fd;
		pfd.events = POLLIN;
		/* With the pipe at EOF this is a sleep until the next pid
		 * check; a background process holding it open does not
		 * keep us here past the hook's own exit. */
		if (poll(&pfd, fd >= 0, ms) <= 0 || fd < 0)
			continue;
		if ((n = read(fd, buf, sizeof(buf))) > 0)
			hook_output(r, &lb, buf, (size_t)n, 0);
		else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			close(fd);
			fd = -1;
		}
	}
	if (!done) {
		/* The group first (what the hook started), then the pid in
		 * case the child had not reached setpgid yet. */
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		while ((w = waitpid(pid, &status, 0)) == -1 && errno == EINTR)
			;
		reaped = w == pid;
	}
	if (fd >= 0) {
		hook_drain(r, &lb, fd);
		close(fd);
	}
	hook_output(r, &lb, NULL, 0, 1);
	if (!done)
		report_warn(r, "hook timed out after %gs; killed", timeout);
	else if (reaped && WIFEXITED(status) && WEXITSTATUS(status) != 0)
		report_warn(r, "hook exited %d", WEXITSTATUS(status));
	else if (reaped && WIFSIGNALED(status))
		report_warn(r, "hook killed by %s",
		    sig_name(WTERMSIG(status), sb, sizeof(sb)));
}

static void
run_hook(struct reporter *r, const struct cb_transition *t,
    const struct cb_state *before, long iteration)
{
	double timeout = r->hook_timeout > 0 ? r->hook_timeout : HOOK_TIMEOUT;
	int pfd[2] = { -1, -1 }, in = -1;
	sigset_t all, old;
	size_t nb = 0, i;
	char **envp;
	pid_t pid;

	if ((envp = hook_env(r, t, before, iteration, &nb)) == NULL) {
		report_warn(r, "hook: %s", strerror(ENOMEM));
		return;
	}
	if (pipe2(pfd, O_CLOEXEC) == -1) {
		report_warn(r, "hook: pipe: %s", strerror(errno));
		goto out;
	}
	pfd[0] = above_stdio(pfd[0]);
	pfd[1] = above_stdio(pfd[1]);
	in = above_stdio(open("/dev/null", O_RDONLY | O_CLOEXEC));
	if (pfd[0] < 0 || pfd[1] < 0) {
		report_warn(r, "hook: %s", strerror(errno));
		goto out;
	}
	/* Blocked so no handler of cbexec's runs in the child before it has
	 * reset the dispositions. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid = fork();
	if (pid == 0)
		hook_child(r->hook, envp, in, pfd[1]);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(pfd[1]);
	pfd[1] = -1;
	if (pid == -1) {
		report_warn(r, "hook: fork: %s", strerror(errno));
		goto out;
	}
	/* Also from this side, so kill(-pid) works whoever runs first. */
	setpgid(pid, pid);
	hook_wait(r, pid, pfd[0], timeout);
	pfd[0] = -1;
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (in >= 0)
		close(in);
	for (i = nb; envp[i] != NULL; i++)
		free(envp[i]);
	free(envp);
}

void
report_transition(struct reporter *r, const struct cb_transition *t,
    const struct cb_state *before, long iteration)
{
	/* SPEC §4 rule 3 words the first step toward OPEN as a warning. */
	int warn = t->from == CB_CLOSED && t->to == CB_HALF_OPEN &&
	    strncmp(t->reason, "WARNING:", 8) != 0;
	cJSON *o;

	if (r->verbosity >= 0 || t->to == CB_OPEN)
		say(r, circuit_color(t->to), "circuit %s -> %s: %s%s",
		    circuit_name(t->from), circuit_name(t->to),
		    warn ? "WARNING: " : "", t->reason);
	if ((o = log_new(r, "transition")) != NULL) {
		cJSON_AddStringToObject(o, "from", circuit_name(t->from));
		cJSON_AddStringToObject(o, "to", circuit_name(t->to));
		cJSON_AddStringToObject(o, "reason", t->reason);
		cJSON_AddNumberToObject(o, "iteration", iteration);
		log_put(r, o);
	}
	if (r->hook != NULL)
		run_hook(r, t, before, iteration);
}

void
report_event(struct reporter *r, const char *event, const char *reason)
{
	int has = reason != NULL && reason[0] != '\0';

	if (r->verbosity >= 0)
		say(r, NULL, "%s%s%s", event, has ? ": " : "",
		    has ? reason : "");
	log_reason(r, event, reason);
}

/* --- the OPEN block -------------------------------------------------- */

static int
starts(const char *s, const char *prefix)
{
	return s != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *
suggestion(const struct cb_state *s)
{
	/* An environment problem is not fixed by a new approach, so it
	 * comes before GREEN's advice. */
	if (s->outcome == OUT_ABORT || starts(s->open_reason, "fatal:"))
		return "Fix the environment (permissions, missing command or "
		    "dependency), then reset";
	if (s->phase != NULL && strcasecmp(s->phase, "GREEN") == 0)
		return "Consider refactoring approach or splitting the feature";
	if (s->outcome == OUT_STUCK || starts(s->open_reason, "Same error") ||
	    starts(s->open_reason, "Task "))
		return "The same failure keeps repeating: change the approach "
		    "or fix the cause, then reset";
	return "Review the last error and recent changes, then reset or "
	    "give guidance";
}

/* Integers as integers, anything else as %g. */
static void
put_num(FILE *f, double v)
{
	if (v == (double)(long long)v && v > -1e15 && v < 1e15)
		fprintf(f, "%lld", (long long)v);
	else
		fprintf(f, "%g", v);
}

void
report_open_block(struct reporter *r, const struct cb_state *s,
    const struct status_report *st, const char *reset_hint)
{
	const char *phase = s->phase != NULL ? s->phase : "none";
	const char *lasterr = s->last_error.message != NULL &&
	    s->last_error.message[0] != '\0' ? s->last_error.message : NULL;
	const char *red = r->color ? RED : "", *off = r->color ? NOCOLOR : "";
	double pass = 0, fail = 0;
	int has_pass = st != NULL && status_metric(st, "tests_passing", &pass);
	int has_fail = has_pass && status_metric(st, "tests_failing", &fail);
	char *p = NULL;
	size_t n = 0;
	cJSON *o, *last;
	FILE *m;

	if ((m = open_memstream(&p, &n)) == NULL)
		return;
	fprintf(m, "%s---CIRCUIT_BREAKER_OPEN---%s\n", red, off);
	fprintf(m, "CIRCUIT: %s   PHASE: %s\n", label_of(r), phase);
	fprintf(m, "REASON: %s\n", s->open_reason != NULL ? s->open_reason :
	    "unknown");
	fprintf(m, "ITERATIONS: %ld\n", s->iteration);
	if (has_pass) {
		fputs("TESTS_PASSING: ", m);
		put_num(m, pass);
		if (has_fail) {
			fputc('/', m);
			put_num(m, pass + fail);
		}
		last = s->phase != NULL && s->last_progress_metric != NULL ?
		    cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(s->last_progress_metric,
		    s->phase), "tests_passing") : NULL;
		if (cJSON_IsNumber(last) && last->valuedouble == pass)
			fputs(" (no change)", m);
		fputc('\n', m);
	}
	if (lasterr != NULL)
		fprintf(m, "LAST_ERROR: %s\n", lasterr);
	fprintf(m, "SUGGESTION: %s\n", suggestion(s));
	if (reset_hint != NULL)
		fprintf(m, "RESET: %s\n", reset_hint);
	fprintf(m, "%s---END_CIRCUIT_BREAKER_OPEN---%s\n", red, off);
	if (fclose(m) == 0) {
		fflush(stderr);
		write_all(STDERR_FILENO, p, n);
	}
	free(p);

	if ((o = log_new(r, "open")) == NULL)
		return;
	add_str(o, "reason", s->open_reason);
	cJSON_AddNumberToObject(o, "iterations", s->iteration);
	add_str(o, "phase", s->phase);
	if (has_pass) {
		cJSON_AddNumberToObject(o, "tests_passing", pass);
		if (has_fail)
			cJSON_AddNumberToObject(o, "tests_total", pass + fail);
	}
	add_str(o, "last_error", lasterr);
	add_str(o, "suggestion", suggestion(s));
	add_str(o, "reset", reset_hint);
	log_put(r, o);
}

/* --- metrics ----------------------------------------------------------- */

/* A label value: backslash, double quote and newline escaped. */
static void
put_label(FILE *f, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void
put_head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void
put_sample(FILE *f, const char *name, const char *label, const char *cls,
    long v)
{
	fprintf(f, "%s{circuit=\"", name);
	put_label(f, label);
	if (cls != NULL)
		fprintf(f, "\",class=\"%s", cls);
	fprintf(f, "\"} %ld\n", v);
}

static char *
metrics_text(const struct reporter *r, const struct cb_state *s,
    double secs, size_t *len)
{
	static const enum cb_class classes[] = { CB_CLASS_RECOVERABLE,
	    CB_CLASS_TRANSIENT, CB_CLASS_TIMEOUT, CB_CLASS_FATAL };
	const char *l = label_of(r);
	char *p = NULL;
	size_t i;
	FILE *f;

	if ((f = open_memstream(&p, len)) == NULL)
		return NULL;
	put_head(f, "cbexec_state", "gauge",
	    "Circuit state (0 CLOSED, 1 HALF_OPEN, 2 OPEN).");
	put_sample(f, "cbexec_state", l, NULL, (long)s->state);
	put_head(f, "cbexec_runs_total", "counter",
	    "Runs over the circuit's lifetime.");
	put_sample(f, "cbexec_runs_total", l, NULL, s->iteration);
	put_head(f, "cbexec_errors_total", "counter",
	    "Failed runs over the circuit's lifetime, by class.");
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		put_sample(f, "cbexec_errors_total", l,
		    class_name(classes[i]), s->errors_total[classes[i]]);
	put_head(f, "cbexec_opens_total", "counter",
	    "Times the circuit opened.");
	put_sample(f, "cbexec_opens_total", l, NULL, s->total_opens);
	put_head(f, "cbexec_last_run_seconds", "gauge",
	    "Duration of the last run in seconds.");
	/* NaN, infinities and negatives would not parse as a sample. */
	if (!(secs >= 0 && secs < 1e12))
		secs = 0;
	fprintf(f, "cbexec_last_run_seconds{circuit=\"");
	put_label(f, l);
	fprintf(f, "\"} %.3f\n", secs);
	put_head(f, "cbexec_no_progress_count", "gauge",
	    "Consecutive runs without progress.");
	put_sample(f, "cbexec_no_progress_count", l, NULL,
	    s->no_progress_count);
	put_head(f, "cbexec_consecutive_errors", "gauge",
	    "Consecutive failed runs.");
	put_sample(f, "cbexec_consecutive_errors", l, NULL,
	    s->consecutive_errors);
	put_head(f, "cbexec_same_error_count", "gauge",
	    "Consecutive runs failing with the same error fingerprint.");
	put_sample(f, "cbexec_same_error_count", l, NULL, s->same_error_count);
	if (fclose(f) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

int
report_metrics(struct reporter *r, const struct cb_state *s,
    double last_run_seconds, char *err, size_t errlen)
{
	const char *path = r->metrics_path;
	char *text = NULL, *tmp = NULL;
	size_t len = 0, off;
	ssize_t w;
	int fd = -1;

	if (path == NULL)
		return 0;
	if ((text = metrics_text(r, s, last_run_seconds, &len)) == NULL ||
	    (tmp = malloc(strlen(path) + 8)) == NULL) {
		errno = ENOMEM;
		goto fail;
	}
	/* Same directory so rename is atomic; the suffix keeps the textfile
	 * collector (which reads *.prom) away from the partial file. */
	sprintf(tmp, "%s.XXXXXX", path);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1) {
		free(tmp);
		tmp = NULL;
		goto fail;
	}
	if (fchmod(fd, 0644) == -1)
		goto fail;
	for (off = 0; off < len; ) {
		if ((w = write(fd, text + off, len - off)) == -1 &&
		    errno == EINTR)
			continue;
		if (w == -1)
			goto fail;
		off += (size_t)w;
	}
	if (fsync(fd) == -1)
		goto fail;
	if (close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) == -1)
		goto fail;
	free(tmp);
	free(text);
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (tmp != NULL)
		unlink(tmp);
	free(tmp);
	free(text);
	return -1;
}

/* --- --status and --history -------------------------------------------- */

/* The last transition into state c, or NULL. */
static const struct cb_event *
last_change_to(const struct cb_state *s, int c)
{
	size_t i;

	for (i = s->n_history; i-- > 0; )
		if (s->history[i].kind == EV_STATE_CHANGE &&
		    s->history[i].to == c)
			return &s->history[i];
	return NULL;
}

#define ROW(f, key, ...) do {						\
	fprintf((f), "%-19s ", (key));					\
	fprintf((f), __VA_ARGS__);					\
	fputc('\n', (f));						\
} while (0)

void
report_status(FILE *f, const struct cb_state *s, const char *label,
    const char *reset_hint, int json)
{
	const struct cb_event *e = last_change_to(s, s->state);
	const char *reason = s->open_reason;
	double since = s->state == CB_OPEN && s->opened_at >= 0 ?
	    s->opened_at : e != NULL ? e->ts : -1;
	char ts[40];
	size_t i;

	if (json) {
		cJSON *j = state_to_json(s);
		char *p = j != NULL ? cJSON_Print(j) : NULL;

		if (p != NULL)
			fprintf(f, "%s\n", p);
		cJSON_free(p);
		cJSON_Delete(j);
		return;
	}
	if (label == NULL)
		label = s->name != NULL ? s->name : "(default)";
	ROW(f, "circuit:", "%s", label);
	if (since >= 0)
		ROW(f, "state:", "%s  (since %s)", circuit_name(s->state),
		    iso8601(since, ts, sizeof(ts)));
	else
		ROW(f, "state:", "%s", circuit_name(s->state));
	if (s->state != CB_OPEN && e != NULL)
		reason = e->reason;
	if (s->state != CB_CLOSED && reason != NULL)
		ROW(f, "reason:", "%s", reason);
	if (s->phase != NULL)
		ROW(f, "phase:", "%s", s->phase);
	if (s->last_progress_iteration > 0)
		ROW(f, "runs since progress:",
		    "%ld   (last progress at run %ld)",
		    s->iteration - s->last_progress_iteration,
		    s->last_progress_iteration);
	else if (s->iteration > 0)
		ROW(f, "runs since progress:", "%ld   (no progress yet)",
		    s->iteration);
	ROW(f, "current run:", "%ld", s->iteration);
	ROW(f, "counters:", "no-progress %d, same-error %d, consecutive "
	    "errors %d, same-task %d", s->no_progress_count,
	    s->same_error_count, s->consecutive_errors, s->same_task_failures);
	ROW(f, "total opens:", "%ld", s->total_opens);
	if (s->last_error.message != NULL && s->last_error.message[0] != '\0')
		ROW(f, "last error:", "%s %s: %s (exit %d)", s->last_error.cls,
		    s->last_error.type, s->last_error.message,
		    s->last_error.exit_code);
	if (s->guidance != NULL)
		ROW(f, "guidance:", "%s", s->guidance);
	for (i = 0; i < s->n_skipped; i++)
		ROW(f, i == 0 ? "skipped phases:" : "", "%s",
		    s->skipped_phases[i]);
	if (s->updated_at >= 0)
		ROW(f, "updated:", "%s",
		    iso8601(s->updated_at, ts, sizeof(ts)));
	if (s->state != CB_CLOSED && reset_hint != NULL)
		ROW(f, "reset:", "%s", reset_hint);
}

static char
timeline_mark(const struct cb_event *e)
{
	switch (e->kind) {
	case EV_PROGRESS:
		return e->progress > 0 ? '.' : '-';
	case EV_ERROR:
		return strcmp(e->cls, "timeout") == 0 ? 'T' :
		    strcmp(e->cls, "transient") == 0 ? '~' :
		    strcmp(e->cls, "fatal") == 0 ? 'F' : 'E';
	case EV_STATE_CHANGE:
		return e->to == CB_OPEN ? '|' : e->to == CB_HALF_OPEN ? '/' :
		    e->to == CB_CLOSED ? '+' : 0;
	default:
		return 0;
	}
}

static void
timeline(FILE *f, const struct cb_state *s, size_t start)
{
	const char *nc = getenv("NO_COLOR"), *cur = NULL, *want;
	int color = nc == NULL || nc[0] == '\0';
	int state = s->state;
	size_t i;
	char c;

	/* The state before the window is where its first change came from. */
	for (i = start; i < s->n_history; i++)
		if (s->history[i].kind == EV_STATE_CHANGE &&
		    s->history[i].from >= 0) {
			state = s->history[i].from;
			break;
		}
	fputs("timeline: ", f);
	for (i = start; i < s->n_history; i++) {
		const struct cb_event *e = &s->history[i];

		if (e->kind == EV_STATE_CHANGE && e->to >= 0)
			state = e->to;
		if ((c = timeline_mark(e)) == 0)
			continue;
		want = circuit_color(state);
		if (color && want != cur)
			fputs(cur = want, f);
		fputc(c, f);
	}
	if (color && cur != NULL)
		fputs(NOCOLOR, f);
	fputs("\nlegend:   . progress  - no progress  E error  T timeout  "
	    "~ transient  F fatal  / half-open  | open  + closed\n", f);
}

static void
history_line(FILE *f, const struct cb_event *e)
{
	char ts[40];

	fprintf(f, "%s  run %ld  %s", iso8601(e->ts, ts, sizeof(ts)),
	    e->iteration, event_kind_name(e->kind));
	switch (e->kind) {
	case EV_STATE_CHANGE:
		fprintf(f, "  %s -> %s", circuit_name(e->from),
		    circuit_name(e->to));
		break;
	case EV_ERROR:
		fprintf(f, "  %s %s", e->cls, e->type);
		if (e->exit_code >= 0)
			fprintf(f, " (exit %d)", e->exit_code);
		if (e->reason != NULL)
			fprintf(f, ": %s", e->reason);
		break;
	case EV_PROGRESS:
		fputs("  ", f);
		if (e->exit_code >= 0)
			fprintf(f, "exit %d, ", e->exit_code);
		fputs(e->progress > 0 ? "progress" : "no progress", f);
		break;
	default:
		break;
	}
	/* A run's reason only repeats "progress" / "no progress". */
	if (e->kind != EV_ERROR && e->kind != EV_PROGRESS &&
	    e->reason != NULL && e->reason[0] != '\0')
		fprintf(f, "  %s", e->reason);
	if (e->user != NULL && e->user[0] != '\0')
		fprintf(f, "  by %s", e->user);
	fputc('\n', f);
}

void
report_history(FILE *f, const struct cb_state *s, long last, int json,
    int tty)
{
	size_t start = last > 0 && s->n_history > (size_t)last ?
	    s->n_history - (size_t)last : 0, i;

	if (json) {
		cJSON *a = cJSON_CreateArray();
		char *p;

		for (i = start; a != NULL && i < s->n_history; i++)
			cJSON_AddItemToArray(a, event_to_json(&s->history[i]));
		if ((p = a != NULL ? cJSON_Print(a) : NULL) != NULL)
			fprintf(f, "%s\n", p);
		cJSON_free(p);
		cJSON_Delete(a);
		return;
	}
	if (tty && start < s->n_history)
		timeline(f, s, start);
	for (i = start; i < s->n_history; i++)
		history_line(f, &s->history[i]);
}
