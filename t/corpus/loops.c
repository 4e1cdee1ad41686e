/* SPDX-License-Identifier: ISC */
/*
 * make corpus, second part: the loop rules side by side on the same
 * streams.  Every case of the corpus read as an agent's output (its
 * .expect names an agent, or its directory a recorded client) is fed
 * through that client's adapter, and the tool calls with their results,
 * in the order they came, are scored by three rules:
 *
 *   cbexec     --max-repeat-calls 5: five identical calls in a row (name
 *              and canonical JSON input) whose results are identical, or
 *              all errors (SPEC §10; agent/watch.c itself)
 *   gemini     Gemini CLI's tool-call loop rule: five consecutive calls
 *              with the same name and the same arguments as written
 *              (loopDetectionService, TOOL_CALL_LOOP_THRESHOLD 5)
 *   openhands  OpenHands' StuckDetector: the same action with the same
 *              observation four times, the same action with an error
 *              observation three times, or an A-B-A-B pattern of action
 *              and observation pairs over six steps
 *
 * A case labelled type loop is a loop; every other case is not.  A rule
 * "catches" a loop case when it fires on its calls, and makes a "false
 * loop" when it fires on any other.  The client's own loop stops (Gemini's
 * "Loop detected", Qwen's "Loop detection halted", opencode's doom_loop)
 * are cbexec's verdict too but no rule's here: these are the tool-call
 * rules alone.
 *
 *   t/corpus/loops [-v] CASE-OR-DIRECTORY...
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent.h"

#define MAX_STEPS	4096

struct step {
	unsigned long long call;	/* name and input as written */
	unsigned long long obs;		/* its result; 0: none yet */
	int error;
	int has_obs;
	char id[128];
};

static struct step steps[MAX_STEPS];
static size_t n_steps;
static struct agent_watch watch;
static int verbose;

static unsigned long long
fnv(unsigned long long h, const void *p, size_t n)
{
	const unsigned char *s = p;

	while (n-- > 0)
		h = (h ^ *s++) * 1099511628211ULL;
	return h;
}

static void
on_call(void *arg, const char *id, const char *name, const char *in,
    size_t n, int cut, unsigned long long digest)
{
	struct step *s;

	agent_watch_call(&watch, id, name, in, n, cut, digest);
	if (n_steps == MAX_STEPS)
		return;
	s = &steps[n_steps++];
	memset(s, 0, sizeof(*s));
	s->call = fnv(fnv(14695981039346656037ULL, name, strlen(name) + 1),
	    &digest, sizeof(digest));
	snprintf(s->id, sizeof(s->id), "%s", id != NULL ? id : "");
}

static void
on_result(void *arg, const char *id, unsigned long long digest, int error)
{
	size_t i;

	agent_watch_result(&watch, id, digest, error);
	/* the newest call with that id, else the last call */
	for (i = n_steps; i-- > 0;)
		if (id == NULL || strcmp(steps[i].id, id) == 0) {
			steps[i].obs = digest;
			steps[i].error = error;
			steps[i].has_obs = 1;
			return;
		}
}

static const struct agent_hooks hooks = { NULL, NULL, on_call, on_result,
	NULL, NULL };

/* Gemini CLI: the same name and arguments five calls in a row. */
static int
gemini_rule(void)
{
	size_t i, run = 0;

	for (i = 0; i < n_steps; i++) {
		run = i > 0 && steps[i].call == steps[i - 1].call ? run + 1 : 1;
		if (run >= 5)
			return 1;
	}
	return 0;
}

/* OpenHands' StuckDetector, after each step. */
static int
openhands_rule(void)
{
	size_t i, k;
	int same;

	for (i = 0; i < n_steps; i++) {
		/* the same action and observation, four times */
		if (i >= 3) {
			for (same = 1, k = i - 3; k < i && same; k++)
				same = steps[k].call == steps[i].call &&
				    steps[k].has_obs && steps[i].has_obs &&
				    steps[k].obs == steps[i].obs;
			if (same)
				return 1;
		}
		/* the same action, an error each time, three times */
		if (i >= 2) {
			for (same = 1, k = i - 2; k <= i && same; k++)
				same = steps[k].call == steps[i].call &&
				    steps[k].has_obs && steps[k].error;
			if (same)
				return 1;
		}
		/* A B A B A B: pairs of action and observation alternating */
		if (i >= 5) {
			for (same = 1, k = i - 5; k + 2 <= i && same; k++)
				same = steps[k].call == steps[k + 2].call &&
				    steps[k].obs == steps[k + 2].obs;
			if (same && steps[i].call != steps[i - 1].call)
				return 1;
		}
	}
	return 0;
}

static char *
slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	long len;

	*n = 0;
	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)len + 1)) != NULL)
		*n = fread(b, 1, (size_t)len, f);
	if (b != NULL)
		b[*n] = '\0';
	fclose(f);
	return b;
}

/* A label of stem.expect, or NULL. */
static char *
label(const char *expect, const char *key, char *buf, size_t len)
{
	size_t n, k = strlen(key);
	char *p, *q;

	for (p = (char *)expect; p != NULL && *p != '\0'; p = q) {
		q = strchr(p, '\n');
		n = q != NULL ? (size_t)(q - p) : strlen(p);
		if (q != NULL)
			q++;
		if (n > k + 1 && strncmp(p, key, k) == 0 && p[k] == ':') {
			p += k + 1;
			n -= k + 1;
			while (n > 0 && *p == ' ') {
				p++;
				n--;
			}
			snprintf(buf, len, "%.*s", (int)n, p);
			return buf;
		}
	}
	return NULL;
}

enum { R_CBEXEC, R_GEMINI, R_OPENHANDS, N_RULES };
static const char *const rule_names[N_RULES] = {
	"cbexec (calls and results)", "Gemini CLI (5 identical calls)",
	"OpenHands StuckDetector"
};
static int loops, clean, caught[N_RULES], falsely[N_RULES];

static void
score(const char *stem)
{
	static const struct agent_caps caps = { 0, 0, 0, 5 };
	char path[4096], agent[64], type[64], *exp, *out;
	const char *p;
	const struct agent *a = NULL;
	struct agent_run *r;
	struct agent_end e;
	struct agent_result res;
	size_t n;
	int fired[N_RULES], is_loop, i;

	if ((size_t)snprintf(path, sizeof(path), "%s.expect", stem) >=
	    sizeof(path) || (exp = slurp(path, &n)) == NULL)
		return;
	if (label(exp, "agent", agent, sizeof(agent)) == NULL) {
		agent[0] = '\0';
		if ((p = strstr(stem, "recorded/")) != NULL)
			sscanf(p + 9, "%63[a-z]", agent);
	}
	a = agent_by_name(agent);
	is_loop = label(exp, "type", type, sizeof(type)) != NULL &&
	    strcmp(type, "loop") == 0;
	free(exp);
	if (a == NULL)
		return;
	if ((size_t)snprintf(path, sizeof(path), "%s.stdout", stem) >=
	    sizeof(path) || (out = slurp(path, &n)) == NULL)
		return;
	n_steps = 0;
	agent_watch_init(&watch, &caps);
	if ((r = agent_run_new(a, &hooks)) == NULL) {
		free(out);
		return;
	}
	agent_feed(r, out, n);
	memset(&e, 0, sizeof(e));
	e.err = "";
	agent_finish(r, &e, &res);
	agent_watch_end(&watch);
	status_free(&res.status);
	agent_run_free(r);
	free(out);
	fired[R_CBEXEC] = watch.stop == AGENT_LOOP;
	fired[R_GEMINI] = gemini_rule();
	fired[R_OPENHANDS] = openhands_rule();
	if (is_loop)
		loops++;
	else
		clean++;
	for (i = 0; i < N_RULES; i++) {
		if (fired[i] && is_loop)
			caught[i]++;
		else if (fired[i])
			falsely[i]++;
	}
	if (verbose)
		printf("%s %s: %zu calls; cbexec %d, gemini %d, openhands %d\n",
		    is_loop ? "loop " : "clean", stem, n_steps, fired[0],
		    fired[1], fired[2]);
}

static int
by_name(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static void
walk(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;
	char path[4096], **names = NULL;
	size_t n = 0, i, len;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if ((names = realloc(names, (n + 1) * sizeof(*names))) == NULL)
			break;
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), by_name);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		len = strlen(path);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			walk(path);
		else if (len > 7 && strcmp(path + len - 7, ".expect") == 0) {
			path[len - 7] = '\0';
			score(path);
		}
		free(names[i]);
	}
	free(names);
}

int
main(int argc, char **argv)
{
	int i;

	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		verbose = 1;
		argc--;
		argv++;
	}
	for (i = 1; i < argc; i++)
		walk(argv[i]);
	printf("loop rules side by side on the same %d agent streams "
	    "(%d loops, %d not):\n", loops + clean, loops, clean);
	printf("%-32s %8s %12s\n", "rule", "caught", "false loops");
	for (i = 0; i < N_RULES; i++)
		printf("%-32s %4d/%-3d %12d\n", rule_names[i], caught[i], loops,
		    falsely[i]);
	return 0;
}
