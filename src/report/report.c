/*
 * What cbexec tells people and machines as it runs (SPEC §5, §7): one
 * log line per run and per transition on stderr, warnings and operator
 * events, and the matching objects in the --log JSON Lines file.  The
 * line writer and the log helpers here serve the rest of report.h too,
 * through report_int.h: openblock.c (the OPEN block), hook.c (the
 * --on-state-change hook), metrics.c (the --metrics textfile) and show.c
 * (--status and --history).
 *
 * Every message is built whole in memory (open_memstream) and handed to
 * the kernel in one write(), so a line on stderr or in the --log file is
 * never torn by a concurrent writer: the log fd is O_APPEND and each JSON
 * object with its newline goes out in a single call.  Quiet mode (verbosity
 * < 0) keeps stderr to transitions into OPEN and the OPEN block; the log
 * always gets every event.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "report.h"
#include "report_int.h"
#include "clock.h"
#include "state.h"

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

const char *
sig_name(int signo, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(signames) / sizeof(signames[0]); i++)
		if (signames[i].signo == signo)
			return signames[i].name;
	snprintf(buf, len, "SIG%d", signo);
	return buf;
}

const char *
label_of(const struct reporter *r)
{
	if (r->label != NULL)
		return r->label;
	return r->state_path != NULL ? r->state_path : "";
}

const char *
circuit_color(int c)
{
	return c == CB_OPEN ? RED : c == CB_HALF_OPEN ? YELLOW : GREEN;
}

void
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

void
say(const struct reporter *r, const char *color, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(r, color, fmt, ap);
	va_end(ap);
}

void
add_str(cJSON *o, const char *key, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

/* A log object with ts, circuit and event filled in; NULL without --log. */
cJSON *
log_new(const struct reporter *r, const char *event)
{
	char ts[40];
	cJSON *o;

	if (r->log_fd < 0 || (o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "ts",
	    iso8601(wall_now(), ts, sizeof(ts)));
	cJSON_AddStringToObject(o, "circuit", label_of(r));
	cJSON_AddStringToObject(o, "event", event);
	return o;
}

/* Write o as one JSON line and free it. */
void
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
		if (rr->ignored)
			say(r, NULL, "run %ld %s after %.2fs: ignored "
			    "(--ignore-exit-codes)", rr->iteration, how,
			    rr->duration);
		else if (failed)
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
	if (rr->ignored)
		cJSON_AddTrueToObject(o, "ignored");
	log_put(r, o);
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
