/* SPDX-License-Identifier: ISC */
/*
 * Did a run make progress (SPEC §3.1)?  Work-tree fingerprints taken
 * before and after it, the phase rule over reported metrics with its
 * baseline (the state's last_progress_metric), and the other sources for
 * when no phase decides.
 */
#include <string.h>

#include <cJSON.h>

#include "judge.h"

unsigned
take_prints(const struct progress_ctx *x, struct prints *p,
    struct prints *before)
{
	unsigned failed = 0;

	p->git[0] = p->files[0] = '\0';
	p->fw = NULL;
	if ((x->sources & PROG_GIT) && progress_git_except(p->git,
	    x->files.skip) == -1) {
		failed |= PROG_GIT;
		p->git[0] = '\0';
	}
	if (x->sources & PROG_FILES) {
		/* Nothing changed since the walk before: the same print. */
		if (before != NULL && before->files[0] != '\0' &&
		    !files_changed(before->fw))
			memcpy(p->files, before->files, sizeof(p->files));
		else if (progress_files(&x->files, p->files, before == NULL ?
		    &p->fw : NULL) == -1) {
			failed |= PROG_FILES;
			p->files[0] = '\0';
		}
	}
	if (before != NULL) {
		files_watch_free(before->fw);
		before->fw = NULL;
	}
	return failed;
}

static cJSON *
phase_baseline(cJSON **root, const char *key)
{
	if (*root == NULL)
		*root = cJSON_CreateObject();
	return cJSON_GetObjectItemCaseSensitive(*root, key);
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
cmd_went_up(cJSON **root, const struct status_report *r)
{
	cJSON *base = phase_baseline(root, "cmd"), *item;
	int up = 0;
	size_t i;

	if (base == NULL) {
		base = cJSON_CreateObject();
		cJSON_AddItemToObject(*root, "cmd", base);
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
judge_progress(const struct progress_ctx *px, struct cJSON **baseline,
    const struct prints *before, const struct prints *after,
    const struct status_report *st, const struct status_report *cmd,
    int success)
{
	int j = -1, any = 0;
	double x;

	if (st->present && st->status == RS_BLOCKED)
		return 0;
	if (px->phase != NULL) {
		cJSON *base = phase_baseline(baseline, px->phase->name);
		const struct status_report *r = NULL;

		/* The status report decides first, the command's metrics if
		 * the status names none of the phase's. */
		if (st->present && (j = phase_judge(px->phase, st, base)) != -1)
			r = st;
		else if (cmd->present &&
		    (j = phase_judge(px->phase, cmd, base)) != -1)
			r = cmd;
		if (r != NULL) {
			/* A metric seen for the first time becomes the
			 * baseline even without progress, or a "down" metric
			 * could never show any. */
			if (j == 1 || !has_baseline(px->phase, r, base))
				phase_remember(*baseline, px->phase, r);
			return j;
		}
	}
	if ((px->sources & PROG_GIT) && before->git[0] && after->git[0] &&
	    strcmp(before->git, after->git) != 0)
		any = 1;
	if ((px->sources & PROG_FILES) && before->files[0] &&
	    after->files[0] && strcmp(before->files, after->files) != 0)
		any = 1;
	if ((px->sources & PROG_STATUS) && st->present &&
	    ((status_metric(st, "tasks_completed", &x) && x > 0) ||
	    (status_metric(st, "files_modified", &x) && x > 0)))
		any = 1;
	if ((px->sources & PROG_CMD) && cmd->present &&
	    cmd_went_up(baseline, cmd))
		any = 1;
	if ((px->sources & PROG_EXIT) && success)
		any = 1;
	return any;
}

