/* SPDX-License-Identifier: ISC */
/*
 * struct options: SPEC §1's defaults, freeing, and the last step after the
 * command line, the environment and the config file have been applied:
 * the phase is resolved and its thresholds fill what nothing else set.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent.h"
#include "cli.h"
#include "optvalues.h"

void
options_init(struct options *o)
{
	size_t i;

	memset(o, 0, sizeof(*o));
	o->mode = MODE_RUN;
	o->timeout = 120;
	o->kill_after = 10;
	o->signal = SIGTERM;
	o->budget = 30 * 60;
	o->capture_bytes = 64 * 1024;
	o->progress = PROG_AUTO;
	for (i = 0; i < CB_EXIT_ROWS; i++)
		o->exit_as[i] = cb_exits[i].as;
	o->record_progress = -1;
	o->exit_code = -1;
	o->max_repeat_calls = 5;
	o->result_grace = 10;
	o->store_lease = 30;
	o->store_timeout = 2;
	breaker_default_limits(&o->limits);
	/* 0 = "not set": cli_finish() fills phase or built-in values. */
	o->limits.no_progress = 0;
	o->limits.same_error = 0;
}

static void
strv_free(struct strv *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		free(v->v[i]);
	free(v->v);
	v->v = NULL;
	v->n = 0;
}

int
strv_push(struct strv *v, const char *s)
{
	char **nv = realloc(v->v, (v->n + 1) * sizeof(*nv));

	if (nv == NULL)
		return -1;
	v->v = nv;
	if ((v->v[v->n] = strdup(s)) == NULL)
		return -1;
	v->n++;
	return 0;
}

void
options_free(struct options *o)
{
	size_t i, j;

	free(o->state_path);
	free(o->name);
	free(o->chdir);
	free(o->reason);
	free(o->phase);
	free(o->task);
	free(o->config_path);
	free(o->allow_path);
	free(o->log_path);
	free(o->metrics_path);
	free(o->on_state_change);
	free(o->on_run);
	free(o->ok_codes.v);
	free(o->ignore_codes.v);
	free(o->progress_cmd);
	free(o->unskip);
	free(o->message);
	free(o->stderr_file);
	free(o->stdout_file);
	free(o->agent);
	/* the clients the config described go with the options */
	agent_forget();
	free(o->account);
	free(o->reset_account);
	if (o->store != NULL)
		explicit_bzero(o->store, strlen(o->store));
	free(o->store);
	options_set_password(o, NULL);
	free(o->store_ca);
	free(o->store_cert);
	free(o->store_key);
	strv_free(&o->watch);
	strv_free(&o->exclude);
	free(o->help_topic);
	for (i = 0; i < o->n_phases; i++) {
		for (j = 0; j < o->phases[i].n_metrics; j++)
			free(o->phases[i].metrics[j].key);
		free(o->phases[i].metrics);
		free(o->phases[i].name);
	}
	free(o->phases);
	for (i = 0; i < o->n_rules; i++)
		rule_free(&o->rules[i]);
	free(o->rules);
	memset(o, 0, sizeof(*o));
}

const struct phase_def *
options_phase(const struct options *o)
{
	size_t i;

	if (o->phase == NULL)
		return NULL;
	for (i = 0; i < o->n_phases; i++)
		if (strcasecmp(o->phases[i].name, o->phase) == 0)
			return &o->phases[i];
	return phase_builtin(o->phase);
}

/* What --skip and --record take, and what only they take. */
static int
record_options(const struct options *o, char *err, size_t len)
{
	if (o->mode == MODE_SKIP && o->phase != NULL && o->task != NULL)
		return errf(err, len, "--skip takes --phase P or --task T, "
		    "not both");
	if (o->mode != MODE_RECORD) {
		if (o->exit_code >= 0)
			return errf(err, len, "--exit is for --record");
		if (o->message != NULL)
			return errf(err, len, "--message is for --record");
		if (o->stderr_file != NULL)
			return errf(err, len, "--stderr-file is for --record");
		if (o->stdout_file != NULL)
			return errf(err, len, "--stdout-file is for --record");
		if (o->record_progress != -1)
			return errf(err, len, "--progress %s is for --record "
			    "(a run takes a list of sources)",
			    o->record_progress ? "yes" : "no");
	}
	if (o->message != NULL && o->stderr_file != NULL)
		return errf(err, len, "--message and --stderr-file cannot both "
		    "be given");
	return 0;
}

int
cli_finish(struct options *o, char *err, size_t len)
{
	const struct phase_def *p = NULL;
	char *up;

	if (o->phase != NULL) {
		if ((p = options_phase(o)) == NULL)
			return errf(err, len, "unknown phase '%s' (RED, "
			    "GREEN, REFACTOR, DOCUMENT or one defined in the "
			    "config file)", o->phase);
		/* Store the canonical spelling: it names the phase in the
		 * state file and in last_progress_metric. */
		if ((up = strdup(p->name)) == NULL)
			return errf(err, len, "out of memory");
		free(o->phase);
		o->phase = up;
	}
	if (o->limits.no_progress == 0)
		o->limits.no_progress = p != NULL && p->no_progress > 0 ?
		    p->no_progress : 3;
	if (o->limits.same_error == 0)
		o->limits.same_error = p != NULL && p->same_error > 0 ?
		    p->same_error : 5;
	if (o->agent != NULL && strcmp(o->agent, "none") != 0 &&
	    agent_by_name(o->agent) == NULL)
		return errf(err, len, "unknown agent '%s' for --agent (%s or "
		    "none)", o->agent, agent_names());
	if (o->ok_codes.n == 0) {
		if ((o->ok_codes.v = malloc(sizeof(int))) == NULL)
			return errf(err, len, "out of memory");
		o->ok_codes.v[0] = 0;
		o->ok_codes.n = 1;
	}
	if (record_options(o, err, len) == -1)
		return -1;
	if (o->until_success && !o->loop && o->iterations == 0)
		return errf(err, len, "--until-success needs --loop or "
		    "--iterations");
	if (o->iterations == 0)
		o->iterations = o->loop ? 0 : 1;
	if ((o->progress & PROG_CMD) && o->progress_cmd == NULL)
		return errf(err, len, "--progress cmd needs --progress-cmd");
	if (o->progress_cmd != NULL)
		o->progress |= PROG_CMD;
	if ((o->watch.n > 0 || o->exclude.n > 0) &&
	    !(o->progress & PROG_FILES))
		o->progress |= PROG_FILES;
	return 0;
}

void
options_set_password(struct options *o, const char *pw)
{
	if (o->store_password != NULL) {
		explicit_bzero(o->store_password, strlen(o->store_password));
		free(o->store_password);
	}
	o->store_password = pw != NULL ? strdup(pw) : NULL;
}
