/*
 * Progress (SPEC §3.1): work-tree fingerprints taken before and after a
 * run, the phase rule over reported metrics with its baseline in
 * last_progress_metric, and the other sources for when no phase decides.
 */
#include <string.h>

#include <cJSON.h>

#include "invocation.h"
#include "judge.h"

void
take_prints(struct inv *v, struct prints *p, struct prints *before)
{
	struct progress_cfg pc;

	p->git[0] = p->files[0] = '\0';
	p->fw = NULL;
	if ((v->sources & PROG_GIT) && progress_git(p->git) == -1) {
		report_warn(&v->rep, "progress: git fingerprint failed");
		p->git[0] = '\0';
	}
	if (v->sources & PROG_FILES) {
		memset(&pc, 0, sizeof(pc));
		pc.watch = v->o->watch.v;
		pc.n_watch = v->o->watch.n;
		pc.exclude = v->o->exclude.v;
		pc.n_exclude = v->o->exclude.n;
		pc.state_dir = v->state_dir;
		/* Nothing changed since the walk before: the same print. */
		if (before != NULL && before->files[0] != '\0' &&
		    !files_changed(before->fw))
			memcpy(p->files, before->files, sizeof(p->files));
		else if (progress_files(&pc, p->files, before == NULL ?
		    &p->fw : NULL) == -1) {
			report_warn(&v->rep, "progress: files fingerprint "
			    "failed");
			p->files[0] = '\0';
		}
	}
	if (before != NULL) {
		files_watch_free(before->fw);
		before->fw = NULL;
	}
}

static cJSON *
phase_baseline(struct inv *v, const char *key)
{
	if (v->s.last_progress_metric == NULL)
		v->s.last_progress_metric = cJSON_CreateObject();
	return cJSON_GetObjectItemCaseSensitive(v->s.last_progress_metric,
	    key);
}

/* Whether every phase metric r reports already has a baseline. */
static int
has_baseline(const struct phase_def *p, const struct status_report *r,
    const cJSON *base)
{
	static const char *const green[] = { "tests_passing", "tests_failing" };
	double x;
	size_t i;

	for (i = 0; i < p->n_metrics; i++)
		if (status_metric(r, p->metrics[i].key, &x) &&
		    cJSON_GetObjectItemCaseSensitive(base,
		    p->metrics[i].key) == NULL)
			return 0;
	for (i = 0; p->green_rule && i < 2; i++)
		if (status_metric(r, green[i], &x) &&
		    cJSON_GetObjectItemCaseSensitive(base, green[i]) == NULL)
			return 0;
	return 1;
}

/* "went up" for --progress-cmd without a phase: any metric above the
 * value it had after the previous run. */
static int
cmd_went_up(struct inv *v, const struct status_report *r)
{
	cJSON *base = phase_baseline(v, "cmd"), *item;
	int up = 0;
	size_t i;

	if (base == NULL) {
		base = cJSON_CreateObject();
		cJSON_AddItemToObject(v->s.last_progress_metric, "cmd", base);
		up = -1;	/* first report: a baseline only */
	}
	for (i = 0; i < r->n_metrics; i++) {
		item = cJSON_GetObjectItemCaseSensitive(base, r->metrics[i].key);
		if (item != NULL && cJSON_IsNumber(item)) {
			if (up >= 0 && r->metrics[i].value > item->valuedouble)
				up = 1;
			cJSON_SetNumberValue(item, r->metrics[i].value);
		} else
			cJSON_AddNumberToObject(base, r->metrics[i].key,
			    r->metrics[i].value);
	}
	return up == 1;
}

/* SPEC §3.1: did this run make progress? */
int
judge_progress(struct inv *v, const struct prints *before,
    const struct prints *after, const struct status_report *st,
    const struct status_report *cmd, int success)
{
	int j = -1, any = 0;
	double x;

	if (st->present && st->status == RS_BLOCKED)
		return 0;
	if (v->phase != NULL) {
		cJSON *base = phase_baseline(v, v->phase->name);
		const struct status_report *r = NULL;

		/* The status report decides first, the command's metrics if
		 * the status names none of the phase's. */
		if (st->present && (j = phase_judge(v->phase, st, base)) != -1)
			r = st;
		else if (cmd->present &&
		    (j = phase_judge(v->phase, cmd, base)) != -1)
			r = cmd;
		if (r != NULL) {
			/* A metric seen for the first time becomes the
			 * baseline even without progress, or a "down" metric
			 * could never show any. */
			if (j == 1 || !has_baseline(v->phase, r, base))
				phase_remember(v->s.last_progress_metric,
				    v->phase, r);
			return j;
		}
	}
	if ((v->sources & PROG_GIT) && before->git[0] && after->git[0] &&
	    strcmp(before->git, after->git) != 0)
		any = 1;
	if ((v->sources & PROG_FILES) && before->files[0] &&
	    after->files[0] && strcmp(before->files, after->files) != 0)
		any = 1;
	if ((v->sources & PROG_STATUS) && st->present &&
	    ((status_metric(st, "tasks_completed", &x) && x > 0) ||
	    (status_metric(st, "files_modified", &x) && x > 0)))
		any = 1;
	if ((v->sources & PROG_CMD) && cmd->present && cmd_went_up(v, cmd))
		any = 1;
	if ((v->sources & PROG_EXIT) && success)
		any = 1;
	return any;
}

