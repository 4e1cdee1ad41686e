/* SPDX-License-Identifier: ISC */
/*
 * --record (SPEC §9): one run's result, given on the command line by a
 * loop script that ran the command itself, applied to the circuit as if
 * cbexec had supervised that run.  Nothing is run.
 *
 * The result becomes a struct run_done, what runonce.c hands the loop after a
 * real run: the exit status from --exit, stderr from --message or the tail
 * of --stderr-file, stdout (and so the status block) from the tail of
 * --stdout-file, each kept to --capture-bytes as a run's would be.  It is
 * classified by the same run_judge() and applied by the same record() as
 * a run, under the circuit's lock, so the rules, the durable save, the
 * log, the metrics and the hook are the ones a run has.  A skipped phase
 * or task, or an OPEN circuit, refuses it as it would refuse a run.
 *
 * Progress is --progress yes or no when given; else it is judged as for a
 * run, with the work tree's fingerprint after the previous recorded run
 * (the state's last_fingerprint) standing in for the one taken before it.
 *
 * The files are the caller's, read without following a final symlink
 * (unless --follow-symlinks), non-blocking, and only when regular: a FIFO
 * at the path is an error, never a hang.  Only the tail is read, so a
 * file of any size costs at most --capture-bytes.  --record prints nothing
 * unless asked (-v): the exit status says what happened; --json prints it
 * as one JSON object, built from the events it logged (the reporter
 * collects a copy of each) and the state it saved.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "driver.h"
#include "invocation.h"
#include "judge.h"
#include "run.h"

/* The last r->cap bytes of path into r; -1 with the reason in err. */
static int
read_tail(const char *path, int follow, struct ring *r, char *err,
    size_t errlen)
{
	char buf[16384];
	struct stat st;
	off_t left;
	ssize_t n;
	int fd;

	/* O_NONBLOCK: a FIFO at the path must not hang open(). */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
	    (follow ? 0 : O_NOFOLLOW))) == -1) {
		if (errno == ELOOP && !follow)
			snprintf(err, errlen, "%s: is a symbolic link (use "
			    "--follow-symlinks)", path);
		else
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	/* The size now bounds the read, even if the file still grows. */
	left = st.st_size;
	if (left > (off_t)r->cap) {
		if (lseek(fd, left - (off_t)r->cap, SEEK_SET) == -1)
			goto fail;
		left = (off_t)r->cap;
	}
	while (left > 0) {
		n = read(fd, buf, left < (off_t)sizeof(buf) ? (size_t)left :
		    sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			goto fail;
		if (n == 0)
			break;
		ring_push(r, buf, (size_t)n);
		left -= n;
	}
	close(fd);
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	close(fd);
	return -1;
}

/* The status block in the stdout tail, as the scanner finds it in a run. */
static int
scan_status(struct run_done *d)
{
	struct status_scanner *sc;
	size_t n;
	char *out;

	if ((sc = status_scanner_new()) == NULL)
		return -1;
	if ((out = ring_dup(&d->r.out, &n)) == NULL) {
		status_scanner_free(sc);
		return -1;
	}
	status_scanner_feed(sc, out, n);
	status_scanner_result(sc, &d->st);
	status_scanner_free(sc);
	free(out);
	return 0;
}

/* The run the options describe, classified; -1 with the message printed. */
static int
record_facts(const struct options *o, struct run_done *d)
{
	const struct agent *a;
	char err[CB_ERRLEN];

	memset(d, 0, sizeof(*d));
	d->progress = o->record_progress;
	status_init(&d->st);
	status_init(&d->cmd);
	/* Set first: run_done_free() then frees whichever ring was made. */
	d->have_result = 1;
	if (ring_init(&d->r.err, o->capture_bytes) == -1 ||
	    ring_init(&d->r.out, o->capture_bytes) == -1)
		goto oom;
	d->r.exit_code = o->exit_code >= 0 ? o->exit_code : 0;
	d->started = wall_now();
	if (o->message != NULL)
		ring_push(&d->r.err, o->message, strlen(o->message));
	if (o->stderr_file != NULL && read_tail(o->stderr_file,
	    o->follow_symlinks, &d->r.err, err, sizeof(err)) == -1) {
		fprintf(stderr, "cbexec: --stderr-file %s\n", err);
		return -1;
	}
	if (o->stdout_file != NULL) {
		if (read_tail(o->stdout_file, o->follow_symlinks, &d->r.out,
		    err, sizeof(err)) == -1) {
			fprintf(stderr, "cbexec: --stdout-file %s\n", err);
			return -1;
		}
		if (scan_status(d) == -1)
			goto oom;
	}
	/* Read before the circuit is taken: a reset time given as a delay
	 * counts from this host's clock.  A known agent's output is read
	 * in its format, as a run reads it (SPEC §10). */
	if (o->agent != NULL && (a = agent_by_name(o->agent)) != NULL &&
	    o->stdout_file != NULL)
		return run_judge_agent(o, a, d, wall_now());
	return run_judge(o, d, o->stdout_file != NULL, NULL, wall_now());
oom:
	fprintf(stderr, "cbexec: out of memory\n");
	return -1;
}

/* What --record --json prints: built at the end of driver_record(), the
 * exit status added by driver_record_json(). */
static cJSON *decided;

/* The document of what the record did: its run's event (null when it was
 * refused or its phase or task skipped), the transitions, the skip that
 * turned it away, and the circuit's state after it. */
static void
decide(struct inv *v)
{
	cJSON *events = v->rep.collect, *e, *ev, *run = NULL, *skipped = NULL,
	    *changes, *ts;
	char now[40];

	v->rep.collect = NULL;
	if ((decided = cJSON_CreateObject()) == NULL ||
	    (changes = cJSON_CreateArray()) == NULL) {
		cJSON_Delete(decided);
		decided = NULL;
		cJSON_Delete(events);
		return;
	}
	cJSON_ArrayForEach(e, events) {
		ev = cJSON_GetObjectItemCaseSensitive(e, "event");
		if (!cJSON_IsString(ev))
			continue;
		if (strcmp(ev->valuestring, "run") == 0)
			run = e;
		else if (strcmp(ev->valuestring, "skipped") == 0)
			skipped = e;
		else if (strcmp(ev->valuestring, "state_change") == 0)
			cJSON_AddItemReferenceToArray(changes, e);
	}
	ts = run != NULL ? cJSON_GetObjectItemCaseSensitive(run,
	    "timestamp") : NULL;
	cJSON_AddNumberToObject(decided, "v", JSON_VOCABULARY);
	cJSON_AddStringToObject(decided, "timestamp", cJSON_IsString(ts) ?
	    ts->valuestring : iso8601(store_now(v->st), now, sizeof(now)));
	cJSON_AddStringToObject(decided, "circuit", v->c->label);
	cJSON_AddStringToObject(decided, "event", "record");
	cJSON_AddItemToObject(decided, "run", run != NULL ?
	    cJSON_Duplicate(run, 1) : cJSON_CreateNull());
	/* the run reported the work done (SPEC §11) */
	cJSON_AddBoolToObject(decided, "complete", run != NULL &&
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "complete")));
	cJSON_AddItemToObject(decided, "transitions",
	    cJSON_Duplicate(changes, 1));
	cJSON_AddItemToObject(decided, "skipped", skipped != NULL ?
	    cJSON_Duplicate(skipped, 1) : cJSON_CreateNull());
	cJSON_AddStringToObject(decided, "state", circuit_name(v->s.state));
	if (report_reason(&v->s) != NULL)
		cJSON_AddStringToObject(decided, "reason",
		    report_reason(&v->s));
	else
		cJSON_AddNullToObject(decided, "reason");
	cJSON_Delete(changes);
	cJSON_Delete(events);
}

void
driver_record_json(FILE *f, int status)
{
	char *p;

	if (decided == NULL)
		return;
	cJSON_AddNumberToObject(decided, "exit_status", status);
	if ((p = cJSON_PrintUnformatted(decided)) != NULL) {
		fprintf(f, "%s\n", p);
		cJSON_free(p);
	}
	cJSON_Delete(decided);
	decided = NULL;
}

int
driver_record(struct options *o, const struct circuit *c)
{
	struct inv v;
	struct run_done d;
	int rc, code = 0, failed = 0;

	/* A script asks nothing at a terminal and is told nothing unless it
	 * asks: -v speaks as a run does, -vv as a run's -v. */
	o->no_prompt = 1;
	o->verbosity = o->verbosity > 0 ? o->verbosity - 1 : -2;
	if (record_facts(o, &d) == -1) {
		run_done_free(&d);
		return CB_EXIT_ERROR;
	}
	if ((rc = inv_begin(&v, o, c)) >= 0) {
		run_done_free(&d);
		return rc;
	}
	/* --json: what is logged from here on is what it decided. */
	if (o->json && (v.rep.collect = cJSON_CreateArray()) == NULL) {
		fprintf(stderr, "cbexec: out of memory\n");
		run_done_free(&d);
		inv_end(&v);
		return CB_EXIT_ERROR;
	}
	if (!d.st.present && d.st.warning[0] != '\0')
		report_warn(&v.rep, "status block: %s", d.st.warning);
	/* A skipped phase or task takes no result; an OPEN circuit refuses
	 * it as it would refuse the run. */
	if (skipped(&v, d.task != NULL ? d.task : o->task)) {
		rc = CB_EXIT_OK;
		goto out;
	}
	if ((rc = admit(&v)) >= 0)
		goto out;
	/* The fingerprint after the previous recorded run is this one's
	 * "before"; only the source that wrote it can compare with it. */
	if (v.s.last_fingerprint != NULL) {
		if (v.px.sources & PROG_GIT)
			snprintf(d.before.git, sizeof(d.before.git), "%s",
			    v.s.last_fingerprint);
		else if (v.px.sources & PROG_FILES)
			snprintf(d.before.files, sizeof(d.before.files), "%s",
			    v.s.last_fingerprint);
	}
	if (take_prints(&v.px, &d.after, NULL) != 0)
		report_warn(&v.rep, "progress: fingerprint of the work tree "
		    "failed");
	if ((rc = record(&v, &d, &code, &failed)) < 0)
		rc = code;
out:
	/* A failure of cbexec's own (125) decided nothing: said on stderr. */
	if (v.rep.collect != NULL && rc != CB_EXIT_ERROR)
		decide(&v);
	run_done_free(&d);
	inv_end(&v);
	return rc;
}
