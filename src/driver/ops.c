/* SPDX-License-Identifier: ISC */
/*
 * The operator commands: --status and --history read the state without
 * the lock (a running cbexec holds it for as long as its command runs);
 * --reset-circuit, --trip, --skip and --unskip take the lock, waiting up
 * to 5 s for a running cbexec to finish its write.
 *
 * A reset also forgets every skip (SPEC §9: a skip lasts until
 * --reset-circuit or --unskip); the menu's Reset does not, it retries the
 * work at hand.  --skip without --phase or --task gives up the task the
 * circuit is stuck on, else the circuit's phase.
 *
 * Every verb first makes sure the circuit exists (ops_need_circuit): a
 * mistyped name must not read as a healthy CLOSED circuit or as done, nor
 * a reset, a trip or a skip create a new file beside the real one.  Only
 * --trip --create opens a circuit that has never run.
 *
 * --status --all reads every NAME.json of the state directory (not the
 * hidden temp files of a save, FILE.lock or FILE.corrupt-*), without
 * locks, and lists them (report_status_all() orders them, OPEN first);
 * one that cannot be read is a row saying why.  A NAME.json.lock with no
 * NAME.json is a circuit whose first run is going on when a process holds
 * that lock (state_lock_holder(), which reads /proc/locks and takes
 * nothing): a fresh CLOSED row that says so; else it is left out.  A state directory that
 * does not exist is an error (125), not an empty list: it is most often
 * the wrong one.  The retry time (retry_at, while a usage limit holds a circuit
 * OPEN) is read from the file's JSON as it is.  The text adds a line per
 * account (NAME.account, --account) after the table.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "driver.h"
#include "invocation.h"
#include "report.h"
#include "run.h"
#include "store.h"

#define OPERATOR_LOCK_WAIT 5.0

static void
no_such_circuit(const struct circuit *c, const struct store *st)
{
	char where[4400];

	store_where(st, where, sizeof(where));
	if (strcmp(c->label, c->path) != 0)
		fprintf(stderr, "cbexec: no such circuit '%s': %s does not "
		    "exist\n", c->label, where);
	else
		fprintf(stderr, "cbexec: no such circuit: %s does not exist\n",
		    where);
}

/* The circuit's store, open; 0, or -1 with the message printed. */
static int
open_store(const struct options *o, const struct circuit *c,
    struct store *st)
{
	return circuit_store(o, c, st, 0) < 0 ? -1 : 0;
}

/* The circuit exists in st: 0, else -1 with the message printed. */
static int
need_circuit(const struct circuit *c, struct store *st)
{
	char err[4400];
	int rc;

	/* Anything at the path (a corrupt file, a symlink) is for the load
	 * to judge.  A lock without a state is a circuit whose first run
	 * is going on (or saved nothing): it exists, fresh and CLOSED. */
	if ((rc = store_exists(st, err, sizeof(err))) == 1)
		return 0;
	if (rc == -1)
		fprintf(stderr, "cbexec: %s\n", err);
	else
		no_such_circuit(c, st);
	return -1;
}

int
ops_need_circuit(const struct options *o, const struct circuit *c)
{
	struct store st;
	int rc = -1;

	if (open_store(o, c, &st) == 0)
		rc = need_circuit(c, &st);
	store_close(&st);
	return rc;
}

static int
load(const struct options *o, const struct circuit *c, struct store *st,
    struct cb_state *s)
{
	char err[4400];

	if (open_store(o, c, st) == -1)
		return -1;
	if (need_circuit(c, st) == -1)
		return -1;
	if (store_load(st, s, err, sizeof(err)) < 0) {
		fprintf(stderr, "cbexec: %s\n", err);
		return -1;
	}
	return 0;
}

int
ops_status(const struct options *o, const struct circuit *c)
{
	struct cb_state s;
	const char *account;
	struct store st;
	int open, gate = 0;

	if (load(o, c, &st, &s) == -1) {
		store_close(&st);
		return CB_EXIT_ERROR;
	}
	/* --account, else the one the circuit last ran with. */
	account = o->account != NULL ? o->account : s.account;
	/* With an account, --json's object carries its gate. */
	if (account == NULL || !o->json)
		report_status(stdout, &s, c->label, c->reset_hint, o->json,
		    store_now(&st));
	if (account != NULL &&
	    (gate = gate_status(o, &st, account, &s, stdout)) == -1) {
		breaker_free(&s);
		store_close(&st);
		return CB_EXIT_ERROR;
	}
	open = s.state == CB_OPEN || gate == 1;
	breaker_free(&s);
	store_close(&st);
	return open ? CB_EXIT_OPEN : CB_EXIT_OK;
}

int
ops_history(const struct options *o, const struct circuit *c)
{
	struct cb_state s;
	struct store st;

	if (load(o, c, &st, &s) == -1) {
		store_close(&st);
		return CB_EXIT_ERROR;
	}
	report_history(stdout, &s, o->last, o->json,
	    terminal_width(STDOUT_FILENO));
	breaker_free(&s);
	store_close(&st);
	return CB_EXIT_OK;
}

enum op { OP_RESET, OP_TRIP, OP_SKIP, OP_UNSKIP };

/* What --skip gives up: --phase, --task, else the stuck task, else the
 * circuit's phase; -1 with the message printed when there is none. */
static int
skip_target(const struct options *o, const struct cb_state *s,
    enum cb_skip_kind *kind, const char **name)
{
	if (o->phase != NULL || o->task != NULL) {
		*kind = o->phase != NULL ? SKIP_PHASE : SKIP_TASK;
		*name = o->phase != NULL ? o->phase : o->task;
	} else if (s->stuck_task != NULL) {
		*kind = SKIP_TASK;
		*name = s->stuck_task;
	} else if (s->phase != NULL) {
		*kind = SKIP_PHASE;
		*name = s->phase;
	} else {
		fprintf(stderr, "cbexec: nothing to skip: the circuit has no "
		    "phase and is not stuck on a task (give --phase P or "
		    "--task T)\n");
		return -1;
	}
	return 0;
}

/* The operator's act on s; 0, or -1 with the message printed. */
static int
apply(const struct options *o, struct cb_state *s, enum op op, double now,
    struct cb_result *res, struct cb_result *unskip)
{
	const char *user = getenv("USER"), *name;
	enum cb_skip_kind kind;

	unskip->why[0] = '\0';
	switch (op) {
	case OP_RESET:
		breaker_reset(s, &o->limits, o->reason, user, now, res);
		breaker_unskip(s, &o->limits, NULL, user, now, unskip);
		return 0;
	case OP_TRIP:
		breaker_trip(s, &o->limits, o->reason, user, now, res);
		return 0;
	case OP_SKIP:
		if (skip_target(o, s, &kind, &name) == -1)
			return -1;
		if (breaker_skip(s, &o->limits, kind, name, o->reason, user,
		    now, res) == -1) {
			fprintf(stderr, "cbexec: cannot record the skip: %s\n",
			    s->n_skips >= CB_SKIPS_MAX ? "too many skips kept "
			    "(unskip some, or reset the circuit)" :
			    "out of memory");
			return -1;
		}
		return 0;
	case OP_UNSKIP:
		if (breaker_unskip(s, &o->limits, o->unskip, user, now,
		    res) == 0) {
			fprintf(stderr, "cbexec: '%s' is not skipped\n",
			    o->unskip);
			return -1;
		}
		return 0;
	}
	return -1;
}

/* Load (moving a corrupt file aside for a reset), apply, save, report.
 * The transition goes to the log and the hook like any. */
static int
operate(const struct options *o, const struct circuit *c, enum op op)
{
	struct cb_state s, before;
	struct cb_result res, unskip;
	struct reporter rep;
	struct store st;
	char err[4400], err2[4400], aside[4200] = "", where[4400];
	int rc = CB_EXIT_ERROR, i, ld, loaded = 0, reset = op == OP_RESET,
	    create = op == OP_TRIP && o->create;

	memset(&rep, 0, sizeof(rep));
	rep.log_fd = -1;
	if (open_store(o, c, &st) == -1)
		goto out;
	/* Before the lock, which would make the directory and FILE.lock. */
	if (!create && need_circuit(c, &st) == -1)
		goto out;
	/* Every reporter (--log) opened before the state is touched: one
	 * that cannot be opened leaves a corrupt state where it was. */
	if (circuit_reporter(o, c, &rep) == -1)
		goto out;
	if (o->store != NULL)
		rep.store = st.label;
	if ((i = circuit_lock(o, c, &st, OPERATOR_LOCK_WAIT, 0)) < 0) {
		rc = -i;
		goto out;
	}
	if ((ld = store_load(&st, &s, err, sizeof(err))) < 0) {
		/* A corrupt state is never silently replaced: a reset is the
		 * operator's explicit word, and even then it is kept.  A
		 * symlink or a newer version's state is not corrupt: refused. */
		if (!reset || ld == -2 || store_move_aside(&st, aside,
		    sizeof(aside), err2, sizeof(err2)) == -1) {
			fprintf(stderr, "cbexec: %s\n", err);
			if (reset && ld != -2)
				fprintf(stderr, "cbexec: %s\n", err2);
			goto out;
		}
		fprintf(stderr, "cbexec: %s\ncbexec: moved it aside to %s\n",
		    err, aside);
		if (breaker_init(&s, o->name) == -1)
			goto out;
		/* What is at the key now is nothing: generation 0. */
		st.generation = 0;
	} else if (ld == 1 && (op == OP_SKIP || op == OP_UNSKIP)) {
		/* Only its lock: nothing was ever recorded to skip. */
		loaded = 1;
		no_such_circuit(c, &st);
		goto out;
	}
	loaded = 1;
	breaker_snapshot(&s, &before);
	if (apply(o, &s, op, store_now(&st), &res, &unskip) == -1)
		goto out;
	if (store_save(&st, &s, err, sizeof(err)) < 0) {
		fprintf(stderr, "cbexec: %s\n", err);
		/* The corrupt state is gone from its place already: that
		 * alone reset the circuit (a missing state is a fresh CLOSED
		 * one), only its history event is lost. */
		if (aside[0] != '\0') {
			fprintf(stderr, "cbexec: the circuit is reset all the "
			    "same: %s was moved aside to %s and, with no "
			    "state, the circuit starts CLOSED\n",
			    store_where(&st, where, sizeof(where)), aside);
			rc = CB_EXIT_OK;
		}
		goto out;
	}
	if (op == OP_SKIP || op == OP_UNSKIP)
		report_skip(&rep, op == OP_SKIP ? "skip" : "unskip", &res,
		    &before, s.state, s.iteration);
	else {
		report_event(&rep, reset ? "reset" : "trip",
		    s.open_reason != NULL && !reset ? s.open_reason :
		    o->reason);
		for (i = 0; i < res.n; i++)
			report_transition(&rep, &res.t[i], &before,
			    s.iteration);
		if (unskip.why[0] != '\0')
			report_event(&rep, "unskip", unskip.why);
	}
	if (report_metrics(&rep, &s, err, sizeof(err)) == -1)
		report_warn(&rep, "%s", err);
	/* The state is saved; an interrupt (in the hook) still says so. */
	rc = sup_aborted() ? CB_EXIT_ABORT : CB_EXIT_OK;
out:
	reporter_close(&rep);
	if (loaded)
		breaker_free(&s);
	store_close(&st);
	return rc;
}

int
ops_reset(const struct options *o, const struct circuit *c)
{
	return operate(o, c, OP_RESET);
}

int
ops_trip(const struct options *o, const struct circuit *c)
{
	return operate(o, c, OP_TRIP);
}

int
ops_skip(const struct options *o, const struct circuit *c)
{
	return operate(o, c, OP_SKIP);
}

int
ops_unskip(const struct options *o, const struct circuit *c)
{
	return operate(o, c, OP_UNSKIP);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether name (of a directory entry) ends in suffix after something. */
static int
ends(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n > k && strcmp(name + n - k, suffix) == 0;
}

/* The NAME.json files of dir, sorted, and NAME.json.lock for each lock
 * without its state file; *n of them (NULL and 0 when none or dir is
 * missing), -1 on another error with the message printed. */
static int
circuit_files(const char *dir, char ***names, size_t *n)
{
	struct dirent *de;
	char **v = NULL, **nv, json[NAME_MAX + 1];
	size_t len;
	DIR *d;

	*names = NULL;
	*n = 0;
	if ((d = opendir(dir)) == NULL) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "cbexec: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		/* A name never starts with '.': that is a save's temp file. */
		if (de->d_name[0] == '.' || de->d_type == DT_DIR ||
		    (!ends(de->d_name, ".json") &&
		    !ends(de->d_name, ".json.lock")))
			continue;
		/* A lock beside its state file adds nothing. */
		if (ends(de->d_name, ".lock") && len < sizeof(json) &&
		    snprintf(json, sizeof(json), "%.*s", (int)(len - 5),
		    de->d_name) > 0 && faccessat(dirfd(d), json, F_OK,
		    AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		if ((nv = realloc(v, (*n + 1) * sizeof(*v))) == NULL ||
		    (nv[*n] = strdup(de->d_name)) == NULL) {
			v = nv != NULL ? nv : v;
			closedir(d);
			*names = v;
			fprintf(stderr, "cbexec: out of memory\n");
			return -1;
		}
		v = nv;
		(*n)++;
	}
	closedir(d);
	if (*n > 0)
		qsort(v, *n, sizeof(*v), by_name);
	*names = v;
	return 0;
}

/* A time member a newer state may carry: ISO-8601, or epoch seconds. */
static double
json_time(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	double t;

	if (cJSON_IsString(v) && iso8601_parse(v->valuestring, &t) == 0)
		return t;
	if (cJSON_IsNumber(v) && v->valuedouble >= 0)
		return v->valuedouble;
	return -1;
}

int
ops_status_all(const struct options *o)
{
	struct status_row *rows = NULL;
	struct cb_state *states = NULL;
	struct store_cfg cfg;
	struct store st;
	char err[512], *dir, **names = NULL, **paths = NULL, **errs = NULL;
	unsigned char *loaded = NULL;
	size_t n = 0, i, m = 0;
	cJSON *j;
	int rc = CB_EXIT_ERROR, any_open = 0, any_bad = 0, width, tty;

	memset(&st, 0, sizeof(st));
	if (o->store != NULL) {
		/* The circuits of the shared store, not of this host. */
		circuit_store_cfg(o, &cfg);
		if (store_open(&st, &cfg, err, sizeof(err)) == -1 ||
		    store_list(&st, &names, &n, err, sizeof(err)) == -1) {
			fprintf(stderr, "cbexec: %s\n", err);
			store_close(&st);
			return CB_EXIT_ERROR;
		}
		dir = strdup(st.label);
	} else {
		if ((dir = circuit_state_dir(err, sizeof(err))) == NULL) {
			fprintf(stderr, "cbexec: %s\n", err);
			return CB_EXIT_ERROR;
		}
		/* A mistyped CBEXEC_STATE_DIR, or another user's HOME, must
		 * not read as "no circuits, all is well". */
		if (access(dir, F_OK) == -1 && errno == ENOENT) {
			fprintf(stderr, "cbexec: no state directory %s: no "
			    "circuit has run with it (set CBEXEC_STATE_DIR or "
			    "XDG_STATE_HOME as the runs do)\n", dir);
			goto out;
		}
		if (circuit_files(dir, &names, &n) == -1)
			goto out;
	}
	if (dir == NULL) {
		fprintf(stderr, "cbexec: out of memory\n");
		goto out;
	}
	if (n == 0) {
		if (o->json)
			report_status_all(stdout, NULL, 0, 1, 0, 0,
			    store_now(&st));
		else {
			printf("no circuits in %s\n", dir);
			gate_list(stdout, &st, dir);
		}
		rc = CB_EXIT_OK;
		goto out;
	}
	rows = calloc(n, sizeof(*rows));
	states = calloc(n, sizeof(*states));
	paths = calloc(n, sizeof(*paths));
	errs = calloc(n, sizeof(*errs));
	loaded = calloc(n, sizeof(*loaded));
	if (rows == NULL || states == NULL || paths == NULL || errs == NULL ||
	    loaded == NULL) {
		fprintf(stderr, "cbexec: out of memory\n");
		goto out;
	}
	for (i = 0; i < n; i++) {
		int first_run = o->store == NULL && ends(names[i], ".lock");
		struct status_row *r = &rows[m];

		if (o->store == NULL)
			names[i][strlen(names[i]) - (first_run ? 10 : 5)] = '\0';
		r->name = names[i];
		r->retry_at = -1;
		if ((o->store != NULL ? asprintf(&paths[i],
		    "cbexec:circuit:%s", names[i]) : asprintf(&paths[i],
		    "%s/%s.json", dir, names[i])) == -1) {
			paths[i] = NULL;
			fprintf(stderr, "cbexec: out of memory\n");
			goto out;
		}
		r->path = paths[i];
		/* Its first run is going on: no state yet, and a fresh circuit
		 * is CLOSED.  A lock nobody holds (a run interrupted before it
		 * began) is no circuit. */
		if (first_run && access(paths[i], F_OK) == -1) {
			if ((r->running_pid = state_lock_holder(paths[i])) > 0 &&
			    breaker_init(&states[i], names[i]) == 0) {
				loaded[i] = 1;
				r->s = &states[i];
				m++;
			}
			continue;
		}
		m++;
		if ((o->store != NULL ? store_get_json(&st, names[i],
		    &states[i], &j, err, sizeof(err)) :
		    state_load_json(paths[i], o->follow_symlinks, &states[i],
		    &j, err, sizeof(err))) < 0) {
			errs[i] = strdup(err);
			r->error = errs[i] != NULL ? errs[i] : "unreadable";
			any_bad = 1;
			continue;
		}
		loaded[i] = 1;
		r->s = &states[i];
		r->retry_at = json_time(j, "retry_at");
		cJSON_Delete(j);
		if (states[i].state == CB_OPEN)
			any_open = 1;
	}
	width = status_width(STDOUT_FILENO, &tty);
	if (m == 0 && !o->json)
		printf("no circuits in %s\n", dir);
	else
		report_status_all(stdout, rows, m, o->json, width, tty,
		    store_now(&st));
	if (!o->json)
		gate_list(stdout, &st, dir);
	rc = any_open ? CB_EXIT_OPEN : any_bad ? CB_EXIT_ERROR : CB_EXIT_OK;
out:
	for (i = 0; i < n; i++) {
		if (loaded != NULL && loaded[i])
			breaker_free(&states[i]);
		if (paths != NULL)
			free(paths[i]);
		if (errs != NULL)
			free(errs[i]);
		free(names[i]);
	}
	free(rows);
	free(loaded);
	free(states);
	free(paths);
	free(errs);
	free(names);
	free(dir);
	store_close(&st);
	return rc;
}
