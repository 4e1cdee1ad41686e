/* SPDX-License-Identifier: ISC */
/*
 * How report/ speaks (report.h, say.h): the reporter an invocation opens
 * (its --log file), one "cbexec[LABEL]: " line on stderr, the --log JSON
 * Lines objects, warnings, and signal names.  report.c, openblock.c,
 * hook.c, metrics.c and show.c write through these.
 *
 * Every message is built whole in memory (open_memstream) and handed to
 * the kernel in one write(), so a line on stderr or in the --log file is
 * never torn by a concurrent writer: the log fd is O_APPEND and each JSON
 * object with its newline goes out in a single call.
 *
 * --log - (or /dev/stdout, /dev/stderr) writes the objects to cbexec's own
 * stdout (stderr), which the command's output is relayed to as well: for
 * a container's log.  Those lines stay whole because cbexec writes them
 * only between runs, when the command has ended and its leftovers are
 * killed, each in one write; and when the command's last output on that
 * stream did not end its line (report_tails()), a newline goes first, so
 * an object never starts in the middle of the command's line.  The same
 * holds for the "cbexec[LABEL]:" lines and the OPEN block on stderr.  A
 * stream that fails (its reader gone) is said once and written no more.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "report.h"
#include "say.h"
#include "core.h"

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

/* Whether cbexec's stdout ([1]) and stderr ([2]) stand in the middle of
 * a line of the command's output; a --log stream that failed. */
static int midline[3], stream_failed[3];

void
report_tails(int out_midline, int err_midline)
{
	midline[STDOUT_FILENO] = out_midline;
	midline[STDERR_FILENO] = err_midline;
}

void
line_start(FILE *m, int fd)
{
	if (fd >= 0 && fd <= 2 && midline[fd]) {
		fputc('\n', m);
		midline[fd] = 0;
	}
}

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

int
color_allowed(void)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

	/* no-color.org: set and not empty; a dumb terminal has no colour. */
	return !(nc != NULL && nc[0] != '\0') &&
	    !(term != NULL && strcmp(term, "dumb") == 0);
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

/*
 * "cbexec[LABEL]: " + the message (coloured when asked) + "\n", one
 * write.  The message often quotes the command (its error line) or an
 * operator (--reason): its control bytes, escapes and newlines are
 * written escaped (text_put), so it stays one line and cannot drive the
 * terminal.
 */
static void
vsay(const struct reporter *r, const char *color, const char *fmt, va_list ap)
{
	char *p = NULL, *msg = NULL;
	size_t n = 0, mn = 0;
	FILE *m;

	if ((m = open_memstream(&msg, &mn)) == NULL)
		return;
	vfprintf(m, fmt, ap);
	if (fclose(m) != 0 || (m = open_memstream(&p, &n)) == NULL) {
		free(msg);
		return;
	}
	line_start(m, STDERR_FILENO);
	fputs("cbexec[", m);
	text_put(m, label_of(r));
	fputs("]: ", m);
	if (color != NULL && r->color)
		fputs(color, m);
	text_put(m, msg);
	if (color != NULL && r->color)
		fputs(NOCOLOR, m);
	fputc('\n', m);
	if (fclose(m) == 0) {
		fflush(stderr);
		write_all(STDERR_FILENO, p, n);
	}
	free(msg);
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

/* Whether r has anywhere to put a log object. */
static int
logging(const struct reporter *r)
{
	return r->log_fd >= 0 || r->n_more > 0 || r->collect != NULL;
}

/* A log object with v, timestamp (at, or now when at < 0), circuit and
 * event filled in; NULL without a log.  cbexec(1)'s JSON section lists
 * each event's members; v says which vocabulary, and grows only when a
 * member changes its meaning or goes. */
cJSON *
log_new_at(const struct reporter *r, const char *event, double at)
{
	char ts[40];
	cJSON *o;

	if (!logging(r) || (o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "v", JSON_VOCABULARY);
	cJSON_AddStringToObject(o, "timestamp",
	    iso8601(at >= 0 ? at : wall_now(), ts, sizeof(ts)));
	cJSON_AddStringToObject(o, "circuit", label_of(r));
	cJSON_AddStringToObject(o, "event", event);
	return o;
}

cJSON *
log_new(const struct reporter *r, const char *event)
{
	return log_new_at(r, event, -1);
}

/*
 * One line into a log file (fd, named path in messages; stream: 1 or 2
 * when it is cbexec's stdout or stderr, else 0).  A write the disk cuts
 * short (ENOSPC, EDQUOT) would leave half a line for the next record to
 * glue onto: the file is cut back to where this line began -- unless
 * another writer has appended since, whose line must not be lost -- and
 * the loss is said on stderr (not in the log, which just failed).
 */
static void
log_write(const struct reporter *r, int fd, const char *path, int stream,
    const char *line, size_t n)
{
	ssize_t w;
	int e, cut = 0;
	struct stat st;
	off_t end;

	if (stream != 0) {
		if (stream_failed[stream])
			return;
		/* What cbexec itself printed there goes first. */
		if (stream == STDOUT_FILENO)
			fflush(stdout);
		else
			fflush(stderr);
	}
	w = file_write_all(fd, line, n);
	e = errno;
	if (w == (ssize_t)n)
		return;
	/* A stream is not ours to cut back; its reader may be gone. */
	if (stream != 0) {
		stream_failed[stream] = 1;
		if (stream != STDERR_FILENO)
			say(r, YELLOW, "warning: --log %s: %s; no more events "
			    "are written there", path != NULL ? path : "-",
			    strerror(e));
		return;
	}
	if (w > 0 && (end = lseek(fd, 0, SEEK_CUR)) != -1 &&
	    fstat(fd, &st) == 0 && st.st_size == end &&
	    ftruncate(fd, end - w) == 0)
		cut = 1;
	say(r, YELLOW, "warning: --log %s: %s%s", path != NULL ? path : "",
	    strerror(e), cut ? "; the partial line was removed" :
	    w > 0 ? "; a partial line is left" : "; a line was lost");
}

/* Write o as one JSON line into every log of r (and a copy into
 * r->collect), and free it. */
void
log_put(const struct reporter *r, cJSON *o)
{
	char *s, *line;
	size_t n, k = 0;
	int i;

	if (o == NULL)
		return;
	s = cJSON_PrintUnformatted(o);
	if (r->collect != NULL)
		cJSON_AddItemToArray(r->collect, o);
	else
		cJSON_Delete(o);
	if (s == NULL)
		return;
	n = strlen(s);
	/* The newline goes in the same write, or another writer's line
	 * could land between an object and its terminator; on a stream the
	 * command's unfinished line is ended first. */
	if ((line = malloc(n + 2)) == NULL) {
		cJSON_free(s);
		return;
	}
	if (r->log_fd >= 0 && r->log_stream != 0 && midline[r->log_stream]) {
		line[k++] = '\n';
		midline[r->log_stream] = 0;
	}
	memcpy(line + k, s, n);
	line[k + n] = '\n';
	if (r->log_fd >= 0)
		log_write(r, r->log_fd, r->log_path, r->log_stream, line,
		    k + n + 1);
	for (i = 0; i < r->n_more; i++)
		log_write(r, r->more_fd[i], r->more_path[i], 0, line + k,
		    n + 1);
	free(line);
	cJSON_free(s);
}

void
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

int
reporter_open(struct reporter *r, const char *log_path)
{
	int fd;

	r->color = isatty(STDERR_FILENO) && color_allowed();
	r->log_fd = -1;
	r->log_stream = 0;
	r->log_path = log_path;
	if (log_path == NULL)
		return 0;
	/* A container's log: the stream itself, whatever it is (a pipe, a
	 * terminal, a file), never opened anew by its name or checked as a
	 * regular file. */
	if (strcmp(log_path, "-") == 0 || strcmp(log_path, "/dev/stdout") == 0 ||
	    strcmp(log_path, "/dev/fd/1") == 0)
		r->log_stream = STDOUT_FILENO;
	else if (strcmp(log_path, "/dev/stderr") == 0 ||
	    strcmp(log_path, "/dev/fd/2") == 0)
		r->log_stream = STDERR_FILENO;
	if (r->log_stream != 0) {
		r->log_fd = r->log_stream;
		return 0;
	}
	/* No link followed unless asked (another user's link in /tmp would
	 * have us append to a file of ours), and no FIFO: a regular file. */
	if ((fd = file_open(log_path, O_WRONLY | O_APPEND | O_CREAT, 0644,
	    r->follow)) < 0) {
		fprintf(stderr, "cbexec: --log %s: %s\n", log_path,
		    fd == -1 && errno == ELOOP ? "is a symbolic link (use "
		    "--follow-symlinks)" : file_why(fd));
		return -1;
	}
	r->log_fd = fd;
	return 0;
}

int
reporter_add_log(struct reporter *r, const char *path, int follow,
    char *err, size_t errlen)
{
	int fd;

	if (r->n_more >= REPORT_MORE_LOGS)
		return 0;
	/* O_CREAT left out: a log somebody removed stays removed. */
	if ((fd = file_open(path, O_WRONLY | O_APPEND, 0, follow)) < 0) {
		if (fd == -1 && errno == ENOENT)
			return 1;
		snprintf(err, errlen, "%s: %s", path, fd == -1 &&
		    errno == ELOOP ? "is a symbolic link (use "
		    "--follow-symlinks)" : file_why(fd));
		return -1;
	}
	if ((r->more_path[r->n_more] = strdup(path)) == NULL) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->more_fd[r->n_more++] = fd;
	return 0;
}

void
reporter_close(struct reporter *r)
{
	int i;

	if (r->log_fd != -1 && r->log_stream == 0)
		close(r->log_fd);
	r->log_fd = -1;
	r->log_stream = 0;
	for (i = 0; i < r->n_more; i++) {
		close(r->more_fd[i]);
		free(r->more_path[i]);
	}
	r->n_more = 0;
}
