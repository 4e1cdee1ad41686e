/* SPDX-License-Identifier: ISC */
/*
 * The --metrics textfile (SPEC §7): the circuit's state, run, error and
 * open counters, last run duration, breaker counters, and when the last
 * run and the last successful run ended (node_exporter's convention for
 * staleness alerts: *_timestamp_seconds) in Prometheus text format 0.0.4,
 * for node_exporter's textfile collector; promtool check metrics accepts
 * it (no gauge ends in _count).  Every sample is labelled circuit="LABEL"
 * (escaped as the format requires) and, for a circuit in a shared store,
 * store="URL" (never its password), with cbexec_store_fallback saying
 * whether the local state stood in for it; cbexec_errors_total also carries
 * class="...".  The skips (SPEC §9) are a count and one
 * cbexec_skip_timestamp_seconds sample per skip, labelled with its kind,
 * name and reason (cut short: a label is no place for an essay); its value
 * is when it was skipped, 0 when an older state file did not say.  With
 * --account, cbexec_account_gate{account="NAME"} is the account's gate as
 * the run last saw it.  While the circuit is OPEN, cbexec_open_reason
 * says why as one kind from a fixed table (reasons[] below: no_progress,
 * same_error, ..., other), never the reason's text: the text holds
 * counts, times, error messages and an operator's words, and a label
 * made of it would start a new series at every opening.  So the series
 * of a circuit stay as many as the table has rows, whatever happens.
 *
 * The file is rewritten after every run, transition, refusal and
 * operator command, but only when what it says has changed: a cron line
 * refused every ten minutes by an OPEN circuit writes it once.  Its
 * first line, a comment, names the generation of the state it shows ("#
 * cbexec state generation N"): a reader that holds no lock (--status on a
 * host of a shared store, driver/outputs.c) rewrites only a file that
 * shows an older one, so it never puts back what a lock holder has just
 * written over it.
 *
 * The text is built in memory and the file replaced atomically
 * (atomic_write(): temp file ".FILE.tmp.XXXXXX" in the same directory,
 * fsync, rename) so node_exporter never reads half of it; the temp name
 * does not end in .prom, so the collector skips it meanwhile.  Only a regular file is ever replaced (a
 * link is refused unless --follow-symlinks, when its target is written;
 * a device or FIFO never), and temp files a killed cbexec left behind are
 * removed by the next write under the circuit's lock, whose holders are
 * the only other writers (without the lock, METRICS_NEWER leaves them:
 * they may be a live writer's).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "report.h"
#include "say.h"

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

/* One sample: NAME{LABELS[,class="CLS"]} V; LABELS is the circuit's,
 * escaped already (labels_of). */
static void
put_sample(FILE *f, const char *name, const char *label, const char *cls,
    const char *v)
{
	fprintf(f, "%s{%s", name, label);
	if (cls != NULL)
		fprintf(f, ",class=\"%s\"", cls);
	fprintf(f, "} %s\n", v);
}

/* The labels of every sample: circuit="LABEL", and store="URL" (without
 * its password) when the circuit is in a shared store.  malloc'd. */
static char *
labels_of(const struct reporter *r, const char *label)
{
	char *p = NULL;
	size_t len = 0;
	FILE *f;

	if ((f = open_memstream(&p, &len)) == NULL)
		return NULL;
	fputs("circuit=\"", f);
	put_label(f, label);
	if (r->store != NULL) {
		fputs("\",store=\"", f);
		put_label(f, r->store);
	}
	fputs("\"", f);
	if (fclose(f) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

static void
put_long(FILE *f, const char *name, const char *label, const char *cls,
    long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	put_sample(f, name, label, cls, buf);
}

/* Seconds with milliseconds; NaN, infinities and negatives (a time never
 * recorded) would not parse as a sample or mean nothing: 0. */
static void
put_secs(FILE *f, const char *name, const char *label, double v)
{
	char buf[32];

	if (!(v >= 0 && v < 1e12))
		v = 0;
	snprintf(buf, sizeof(buf), "%.3f", v);
	put_sample(f, name, label, NULL, buf);
}

/* A label value cut to at most 200 bytes on a character boundary. */
static void
put_label_cut(FILE *f, const char *v)
{
	char buf[201];
	size_t n = strlen(v);

	if (n >= sizeof(buf)) {
		n = sizeof(buf) - 1;
		while (n > 0 && ((unsigned char)v[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(buf, v, n);
	buf[n] = '\0';
	put_label(f, buf);
}

static void
put_skips(FILE *f, const char *l, const struct cb_state *s)
{
	const struct cb_skip *k;
	size_t i;

	put_head(f, "cbexec_skips", "gauge",
	    "Phases and tasks skipped: not run until unskipped or reset.");
	put_long(f, "cbexec_skips", l, NULL, (long)s->n_skips);
	if (s->n_skips == 0)
		return;
	put_head(f, "cbexec_skip_timestamp_seconds", "gauge",
	    "When each skipped phase or task was skipped (0: not known).");
	for (i = 0; i < s->n_skips; i++) {
		k = &s->skips[i];
		fprintf(f, "cbexec_skip_timestamp_seconds{%s,kind=\"%s\","
		    "name=\"", l, skip_kind_name(k->kind));
		put_label_cut(f, k->name);
		fputs("\",reason=\"", f);
		put_label_cut(f, k->reason != NULL ? k->reason : "");
		fprintf(f, "\"} %.3f\n", k->at >= 0 ? k->at : 0.0);
	}
}

/*
 * What the agent's runs used.  A figure its agent never reported is left
 * out, never written as 0 (--status says which).
 */
static void
put_spend(FILE *f, const char *l, const struct cb_state *s)
{
	static const char *const kinds[] = { "input", "output", "cache" };
	const long tok[] = { s->spent.input_tokens, s->spent.output_tokens,
	    s->spent.cache_tokens };
	char buf[64];
	size_t i;
	int head = 0;

	if (s->spent.cost_usd >= 0) {
		put_head(f, "cbexec_cost_usd_total", "counter",
		    "Cost the agent reported over the circuit's lifetime, in "
		    "USD.");
		snprintf(buf, sizeof(buf), "%.6f", s->spent.cost_usd);
		put_sample(f, "cbexec_cost_usd_total", l, NULL, buf);
	}
	for (i = 0; i < NELEM(kinds); i++) {
		if (tok[i] < 0)
			continue;
		if (!head++)
			put_head(f, "cbexec_tokens_total", "counter",
			    "Tokens the agent reported over the circuit's "
			    "lifetime, by kind.");
		fprintf(f, "cbexec_tokens_total{%s,kind=\"%s\"} %ld\n", l,
		    kinds[i], tok[i]);
	}
	if (s->spent.turns >= 0) {
		put_head(f, "cbexec_turns_total", "counter",
		    "Turns the agent reported over the circuit's lifetime.");
		put_long(f, "cbexec_turns_total", l, NULL, s->spent.turns);
	}
}

/*
 * The kind of an OPEN circuit's reason, from the words the breaker and
 * the driver open it with (breaker.c, driver.c's spend_hold): the first
 * row whose text starts the reason (or, with anywhere, is in it) names
 * it.
 */
static const struct {
	const char *text;
	int anywhere;
	const char *kind;
} reasons[] = {
	{ "tripped by operator", 0, "tripped" },
	{ "usage limit", 0, "usage_limit" },
	{ "spend cap", 0, "spend_cap" },
	{ "Trial run failed", 0, "trial_failed" },
	{ "Same error", 0, "same_error" },
	{ "Task ", 0, "same_task" },
	{ "No progress", 0, "no_progress" },
	{ " consecutive error", 1, "consecutive_errors" },
	{ "fatal: ", 0, "fatal" },
};

static const char *
reason_kind(const struct cb_state *s)
{
	const char *why = s->open_reason != NULL ? s->open_reason : "";
	size_t i;

	if (s->tripped)
		return "tripped";
	for (i = 0; i < NELEM(reasons); i++)
		if (reasons[i].anywhere ? strstr(why, reasons[i].text) != NULL :
		    strncmp(why, reasons[i].text, strlen(reasons[i].text)) == 0)
			return reasons[i].kind;
	return "other";
}

#define GENERATION_LINE "# cbexec state generation "

static char *
metrics_text(const struct reporter *r, const struct cb_state *s,
    size_t *len)
{
	static const enum cb_class classes[] = { CB_CLASS_RECOVERABLE,
	    CB_CLASS_TRANSIENT, CB_CLASS_TIMEOUT, CB_CLASS_FATAL,
	    CB_CLASS_BUDGET };
	char *l = labels_of(r, label_of(r));
	char *p = NULL;
	size_t i;
	FILE *f;

	if (l == NULL || (f = open_memstream(&p, len)) == NULL) {
		free(l);
		return NULL;
	}
	/* Which state the file shows: a reader without the lock rewrites
	 * only a file that shows an older one (report_metrics_file()). */
	fprintf(f, "%s%ld\n", GENERATION_LINE, s->generation);
	put_head(f, "cbexec_state", "gauge",
	    "Circuit state (0 CLOSED, 1 HALF_OPEN, 2 OPEN).");
	put_long(f, "cbexec_state", l, NULL, (long)s->state);
	if (s->state == CB_OPEN) {
		put_head(f, "cbexec_open_reason", "gauge", "Why the circuit is "
		    "OPEN, as a kind (1; only while OPEN): no_progress, "
		    "same_error, same_task, consecutive_errors, fatal, "
		    "usage_limit, spend_cap, trial_failed, tripped, other.");
		fprintf(f, "cbexec_open_reason{%s,reason=\"%s\"} 1\n", l,
		    reason_kind(s));
	}
	put_head(f, "cbexec_runs_total", "counter",
	    "Runs over the circuit's lifetime.");
	put_long(f, "cbexec_runs_total", l, NULL, s->iteration);
	put_head(f, "cbexec_errors_total", "counter",
	    "Failed runs over the circuit's lifetime, by class.");
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		put_long(f, "cbexec_errors_total", l,
		    class_name(classes[i]), s->errors_total[classes[i]]);
	put_head(f, "cbexec_opens_total", "counter",
	    "Times the circuit opened.");
	put_long(f, "cbexec_opens_total", l, NULL, s->total_opens);
	put_skips(f, l, s);
	put_head(f, "cbexec_last_run_seconds", "gauge",
	    "Duration of the last run in seconds.");
	put_secs(f, "cbexec_last_run_seconds", l, s->last_run_seconds);
	put_head(f, "cbexec_no_progress_runs", "gauge",
	    "Consecutive runs without progress.");
	put_long(f, "cbexec_no_progress_runs", l, NULL, s->no_progress_count);
	put_head(f, "cbexec_consecutive_errors", "gauge",
	    "Consecutive failed runs.");
	put_long(f, "cbexec_consecutive_errors", l, NULL,
	    s->consecutive_errors);
	put_head(f, "cbexec_same_error_runs", "gauge",
	    "Consecutive runs failing with the same error fingerprint.");
	put_long(f, "cbexec_same_error_runs", l, NULL, s->same_error_count);
	put_head(f, "cbexec_last_run_timestamp_seconds", "gauge",
	    "When the last run ended, in seconds since the epoch (0: never).");
	put_secs(f, "cbexec_last_run_timestamp_seconds", l, s->last_run_at);
	put_head(f, "cbexec_last_success_timestamp_seconds", "gauge",
	    "When the last successful run ended, in seconds since the epoch "
	    "(0: never).");
	put_secs(f, "cbexec_last_success_timestamp_seconds", l,
	    s->last_success_at);
	put_spend(f, l, s);
	if (r->account != NULL && r->account_gate >= 0) {
		put_head(f, "cbexec_account_gate", "gauge", "Gate of the "
		    "circuit's --account (0 CLOSED, 1 HALF_OPEN: a trial, 2 "
		    "OPEN: runs refused).");
		fprintf(f, "cbexec_account_gate{%s,account=\"", l);
		put_label(f, r->account);
		fprintf(f, "\"} %d\n", r->account_gate);
	}
	if (r->store != NULL) {
		put_head(f, "cbexec_store_fallback", "gauge",
		    "1 when the shared store could not be reached and the "
		    "local state was used (--store-fallback local).");
		put_long(f, "cbexec_store_fallback", l, NULL,
		    r->store_fallback);
	}
	free(l);
	if (fclose(f) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

/* Whether the regular file at path holds exactly text[0, len). */
static int
same_text(const char *path, const char *text, size_t len)
{
	char buf[8192];
	size_t off = 0;
	ssize_t n;
	int fd, same = 0;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC |
	    O_NOFOLLOW)) == -1)
		return 0;
	for (;;) {
		if ((n = read(fd, buf, sizeof(buf))) == -1 && errno == EINTR)
			continue;
		if (n <= 0 || off + (size_t)n > len ||
		    memcmp(buf, text + off, (size_t)n) != 0)
			break;
		off += (size_t)n;
	}
	same = n == 0 && off == len;
	close(fd);
	return same;
}

long
report_metrics_generation(const char *path)
{
	char buf[128], *end;
	ssize_t n;
	long g;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= (ssize_t)strlen(GENERATION_LINE))
		return -1;
	buf[n] = '\0';
	if (strncmp(buf, GENERATION_LINE, strlen(GENERATION_LINE)) != 0)
		return -1;
	g = strtol(buf + strlen(GENERATION_LINE), &end, 10);
	return *end == '\n' && g >= 0 ? g : -1;
}

int
report_metrics(struct reporter *r, const struct cb_state *s, char *err,
    size_t errlen)
{
	return report_metrics_file(r, s, 0, err, errlen) < 0 ? -1 : 0;
}

int
report_metrics_file(struct reporter *r, const struct cb_state *s, int flags,
    char *err, size_t errlen)
{
	static int swept;
	const char *path = r->metrics_path;
	char *text = NULL, real[PATH_MAX];
	struct stat st;
	size_t len = 0;
	int stale = 0;

	if (path == NULL)
		return 0;
	if ((flags & (METRICS_EXISTING | METRICS_NEWER)) &&
	    lstat(path, &st) == -1 && errno == ENOENT)
		return 1;
	/* Without the lock: only a file of ours that shows an older state
	 * (a lock holder may be writing a newer one this very moment). */
	if ((flags & METRICS_NEWER) && (stat(path, &st) == -1 ||
	    st.st_uid != geteuid() || report_metrics_generation(path) >=
	    s->generation + ((flags & METRICS_SAME) != 0)))
		return 0;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (!r->follow) {
			snprintf(err, errlen, "--metrics %s: is a symbolic "
			    "link (use --follow-symlinks)", path);
			return -1;
		}
		/* The target is replaced, not the link. */
		if (realpath(path, real) != NULL)
			path = real;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "--metrics %s: not a regular file", path);
		return -1;
	}
	if ((text = metrics_text(r, s, &len)) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return -1;
	}
	/* Nothing new to say: the file (and its mtime) stays. */
	if (same_text(path, text, len)) {
		free(text);
		return 0;
	}
	/* A temp file is a dead writer's only under the lock; the first
	 * write under it removes them. */
	if (!(flags & METRICS_NEWER))
		stale = !swept++;
	if (atomic_write(path, text, len, 0644, stale ? ATOMIC_STALE : 0) ==
	    -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(text);
		return -1;
	}
	free(text);
	return 0;
}
