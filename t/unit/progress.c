/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for the progress sources (phase.c, gitprint.c, filesprint.c,
 * probe.c): the progress list, the phase rules and
 * their baseline, the git and files fingerprints in scratch trees under a
 * mkdtemp dir, and the progress command (output, failure, timeout, no
 * process left behind).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "judge.h"
#include "tap.h"

static char top[256];

static void
put(struct status_report *r, const char *key, double v)
{
	r->metrics = realloc(r->metrics, (r->n_metrics + 1) * sizeof(*r->metrics));
	r->metrics[r->n_metrics].key = strdup(key);
	r->metrics[r->n_metrics++].value = v;
	r->present = 1;
}

/* Judge a report of up to two metrics against last (JSON text or NULL). */
static int
judge(const char *phase, const char *k1, double v1, const char *k2, double v2,
    const char *last)
{
	struct status_report r;
	cJSON *j = last != NULL ? cJSON_Parse(last) : NULL;
	int rc;

	status_init(&r);
	if (k1 != NULL)
		put(&r, k1, v1);
	if (k2 != NULL)
		put(&r, k2, v2);
	rc = phase_judge(phase_builtin(phase), &r, j);
	status_free(&r);
	cJSON_Delete(j);
	return rc;
}

static void
t_parse_list(void)
{
	unsigned m = 0;
	char err[128] = "";

	is_int(progress_parse_list("git", &m, err, sizeof(err)), 0, "git");
	is_int(m, PROG_GIT, "git mask");
	progress_parse_list("git,files", &m, err, sizeof(err));
	is_int(m, PROG_GIT | PROG_FILES, "git,files mask");
	progress_parse_list("status,cmd,exit,auto", &m, err, sizeof(err));
	is_int(m, PROG_STATUS | PROG_CMD | PROG_EXIT | PROG_AUTO,
	    "status,cmd,exit,auto mask");
	m = 77;
	is_int(progress_parse_list("git,svn", &m, err, sizeof(err)), -1,
	    "unknown word rejected");
	is_str(err, "unknown progress source 'svn'", "error names the word");
	is_int(m, 77, "mask untouched on error");
	is_int(progress_parse_list("GIT", &m, err, sizeof(err)), -1,
	    "words are lower case");
	is_str(err, "unknown progress source 'GIT'", "upper case named");
	is_int(progress_parse_list("", &m, err, sizeof(err)), -1, "empty list");
	is_int(progress_parse_list("git,", &m, err, sizeof(err)), -1,
	    "trailing comma");
	is_int(progress_parse_list(",git", &m, err, sizeof(err)), -1,
	    "leading comma");
	is_int(progress_parse_list("git,,files", &m, err, sizeof(err)), -1,
	    "empty word inside");
	is_int(progress_parse_list("git files", &m, err, sizeof(err)), -1,
	    "space is not a separator");
}

static void
t_builtin(void)
{
	const struct phase_def *p;

	p = phase_builtin("green");
	ok(p != NULL && strcmp(p->name, "GREEN") == 0, "green found");
	ok(p != NULL && p->no_progress == 2 && p->same_error == 3 &&
	    p->green_rule, "GREEN thresholds 2/3, green rule");
	p = phase_builtin("Red");
	ok(p != NULL && p->no_progress == 3 && p->same_error == 5 &&
	    p->n_metrics == 2, "RED 3/5, two metrics");
	p = phase_builtin("REFACTOR");
	ok(p != NULL && p->no_progress == 5 && p->same_error == 5 &&
	    !p->green_rule, "REFACTOR 5/5");
	p = phase_builtin("document");
	ok(p != NULL && p->no_progress == 3 && p->same_error == 5,
	    "DOCUMENT 3/5");
	ok(phase_builtin("LINT") == NULL, "unknown phase NULL");
	ok(phase_builtin("") == NULL, "empty name NULL");
}

static void
t_judge(void)
{
	const char *g = "{\"tests_passing\":3,\"tests_failing\":7}";

	is_int(judge("RED", "tests_generated", 4, NULL, 0,
	    "{\"tests_generated\":3}"), 1, "RED tests_generated up");
	is_int(judge("RED", "tests_generated", 3, NULL, 0,
	    "{\"tests_generated\":3}"), 0, "RED tests_generated same");
	is_int(judge("RED", "tests_generated", 2, "criteria_covered", 5,
	    "{\"tests_generated\":3,\"criteria_covered\":4}"), 1,
	    "RED criteria_covered up");
	is_int(judge("RED", "tests_passing", 9, NULL, 0, NULL), -1,
	    "RED without its metrics: -1");

	is_int(judge("GREEN", "tests_passing", 4, NULL, 0, g), 1,
	    "GREEN tests_passing up");
	is_int(judge("GREEN", "tests_passing", 3, "tests_failing", 7, g), 0,
	    "GREEN same counts");
	is_int(judge("GREEN", "tests_passing", 2, "tests_failing", 8, g), 0,
	    "GREEN passing down");
	is_int(judge("GREEN", "tests_passing", 4, "tests_failing", 6, g), 1,
	    "GREEN failing down, same total");
	is_int(judge("GREEN", "tests_passing", 3, "tests_failing", 5, g), 0,
	    "GREEN failing down, total changed");
	is_int(judge("GREEN", "tests_failing", 5, NULL, 0, g), 0,
	    "GREEN tests_failing alone decides (no progress)");
	is_int(judge("GREEN", "tests_generated", 5, "docs_generated", 1, g),
	    -1, "GREEN without its metrics: -1");
	is_int(judge("GREEN", NULL, 0, NULL, 0, g), -1, "empty report: -1");

	is_int(judge("REFACTOR", "complexity_score", 8, NULL, 0,
	    "{\"complexity_score\":10}"), 1, "REFACTOR complexity down");
	is_int(judge("REFACTOR", "complexity_score", 10, NULL, 0,
	    "{\"complexity_score\":10}"), 0, "REFACTOR complexity same");
	is_int(judge("REFACTOR", "complexity_score", 12, NULL, 0,
	    "{\"complexity_score\":10}"), 0, "REFACTOR complexity up");
	is_int(judge("REFACTOR", "pattern_applied", 1, NULL, 0, NULL), 1,
	    "REFACTOR pattern_applied true");
	is_int(judge("REFACTOR", "pattern_applied", 0, NULL, 0,
	    "{\"pattern_applied\":1}"), 0, "REFACTOR pattern_applied false");
	is_int(judge("REFACTOR", "duplication_removed", 1,
	    "complexity_score", 11, "{\"complexity_score\":10}"), 1,
	    "REFACTOR duplication_removed true");

	is_int(judge("DOCUMENT", "docs_generated", 2, NULL, 0,
	    "{\"docs_generated\":1}"), 1, "DOCUMENT docs_generated up");
	is_int(judge("DOCUMENT", "docs_generated", 1, NULL, 0,
	    "{\"docs_generated\":1}"), 0, "DOCUMENT docs_generated same");
	is_int(judge("DOCUMENT", "diagrams_valid", 3, NULL, 0,
	    "{\"diagrams_valid\":2}"), 1, "DOCUMENT diagrams_valid up");
}

static void
t_no_baseline(void)
{
	is_int(judge("RED", "tests_generated", 3, NULL, 0, NULL), 1,
	    "up, no baseline, > 0: progress");
	is_int(judge("RED", "tests_generated", 0, NULL, 0, NULL), 0,
	    "up, no baseline, 0: none");
	is_int(judge("GREEN", "tests_passing", 2, NULL, 0, "{}"), 1,
	    "empty baseline object, > 0: progress");
	is_int(judge("REFACTOR", "complexity_score", 10, NULL, 0, NULL), 0,
	    "down, no baseline: none");
	is_int(judge("GREEN", "tests_passing", 3, "tests_failing", 5,
	    "{\"tests_passing\":3}"), 0,
	    "green rule needs a tests_failing baseline");
	is_int(judge("RED", "tests_generated", 1, NULL, 0,
	    "{\"tests_generated\":\"9\"}"), 1, "non-number baseline ignored");
}

static void
t_remember(void)
{
	const struct phase_def *g = phase_builtin("GREEN");
	struct status_report r;
	cJSON *root = cJSON_CreateObject(), *obj, *item;
	char *s;

	status_init(&r);
	put(&r, "tests_passing", 3);
	put(&r, "tests_failing", 7);
	put(&r, "tests_generated", 1);
	is_int(phase_remember(root, g, &r), 0, "remember GREEN");
	s = cJSON_PrintUnformatted(root);
	is_str(s, "{\"GREEN\":{\"tests_passing\":3,\"tests_failing\":7}}",
	    "only GREEN's metrics (and tests_failing) stored");
	free(s);
	obj = cJSON_GetObjectItem(root, "GREEN");
	is_int(phase_judge(g, &r, obj), 0, "same report after remember: 0");
	item = cJSON_GetObjectItem(obj, "tests_passing");
	r.metrics[0].value = 4;
	r.metrics[1].value = 6;
	is_int(phase_judge(g, &r, obj), 1, "better report: 1");
	is_int(phase_remember(root, g, &r), 0, "remember again");
	ok(cJSON_GetObjectItem(obj, "tests_passing") == item &&
	    item->valuedouble == 4, "number replaced in place");
	is_int(phase_judge(g, &r, obj), 0, "now the baseline: 0");
	status_free(&r);
	cJSON_Delete(root);

	root = cJSON_Parse("{\"GREEN\":\"junk\",\"RED\":{\"x\":1}}");
	status_init(&r);
	put(&r, "tests_generated", 2);
	is_int(phase_remember(root, phase_builtin("RED"), &r), 0,
	    "remember RED");
	is_int(phase_remember(root, g, &r), 0, "remember GREEN over junk");
	s = cJSON_PrintUnformatted(root);
	is_str(s, "{\"RED\":{\"x\":1,\"tests_generated\":2},\"GREEN\":{}}",
	    "other keys kept, junk replaced by an object");
	free(s);
	status_free(&r);
	cJSON_Delete(root);
}

static void
sh(const char *fmt, const char *arg)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), fmt, arg);
	if (system(cmd) != 0)
		printf("# command failed: %s\n", cmd);
}

static void
t_git(void)
{
	char dir[300], h0[DIGEST_HEX_LEN + 1], h1[DIGEST_HEX_LEN + 1];

	snprintf(dir, sizeof(dir), "%s/plain", top);
	mkdir(dir, 0700);
	if (chdir(dir) == -1)
		return;
	is_int(progress_in_git(), 0, "plain dir: not in git");
	is_int(progress_git(h0), -1, "plain dir: git fingerprint fails");

	snprintf(dir, sizeof(dir), "%s/repo", top);
	mkdir(dir, 0700);
	if (chdir(dir) == -1)
		return;
	sh("git init -q%s", "");
	is_int(progress_in_git(), 1, "repo: in git");
	is_int(progress_git(h0), 0, "fingerprint without commits");
	progress_git(h1);
	is_str(h1, h0, "stable without commits");
	sh("echo one > a.txt && git add a.txt%s", "");
	progress_git(h1);
	ok(strcmp(h0, h1) != 0, "staged file before the first commit");
	sh("echo '*.log' > .gitignore && git add .gitignore && "
	    "git commit -q -m one%s", "");
	progress_git(h0);
	ok(strcmp(h0, h1) != 0, "changed after the first commit");
	progress_git(h1);
	is_str(h1, h0, "stable across two calls");
	sh("git commit -q --allow-empty -m two%s", "");
	progress_git(h1);
	ok(strcmp(h0, h1) != 0, "changed after a commit (HEAD moved)");
	sh("echo two >> a.txt%s", "");
	progress_git(h0);
	ok(strcmp(h0, h1) != 0, "changed after editing a tracked file");
	sh("echo three >> a.txt%s", "");
	progress_git(h1);
	ok(strcmp(h0, h1) != 0, "changed after editing it more");
	sh("echo new > new.txt%s", "");
	progress_git(h0);
	ok(strcmp(h0, h1) != 0, "changed after an untracked file appears");
	sh("echo more >> new.txt%s", "");
	progress_git(h1);
	ok(strcmp(h0, h1) != 0, "changed when the untracked file grows");
	sh("echo ignored > x.log && mkdir -p sub && echo i > sub/y.log%s", "");
	progress_git(h0);
	is_str(h0, h1, "unchanged by ignored files");
	if (chdir("sub") == 0) {
		/* Paths print relative to the working directory, so only
		 * fingerprints taken in the same directory compare. */
		progress_git(h0);
		sh("echo top > ../top.txt%s", "");
		progress_git(h1);
		ok(strcmp(h0, h1) != 0,
		    "subdirectory sees untracked files elsewhere");
	}
	snprintf(dir, sizeof(dir), "%s/repo/.git", top);
	if (chdir(dir) == 0)
		is_int(progress_in_git(), 0, "inside .git: not a work tree");
}

static void
fp(const struct progress_cfg *c, char hex[DIGEST_HEX_LEN + 1])
{
	if (progress_files(c, hex, NULL) == -1)
		strcpy(hex, "error");
}

static void
t_files(void)
{
	char dir[300], state[320], file[320];
	char h0[DIGEST_HEX_LEN + 1], h1[DIGEST_HEX_LEN + 1];
	char *watch[1] = { dir }, *excl[] = { "*.log", "build", "sub/keep*" };
	struct progress_cfg c = { watch, 1, excl, 3, state, NULL };
	struct timespec ts[2] = { { 1000000, 5 }, { 1000000, 5 } };

	snprintf(dir, sizeof(dir), "%s/files", top);
	snprintf(state, sizeof(state), "%s/.cbexec", dir);
	mkdir(dir, 0700);
	sh("cd %s && mkdir -p sub .git .cbexec build && "
	    "echo a > a && echo b > sub/b && ln -s . loop", dir);
	is_int(progress_files(&c, h0, NULL), 0, "files fingerprint");
	fp(&c, h1);
	is_str(h1, h0, "stable across two calls");
	sh("cd %s && echo c > sub/c", dir);
	fp(&c, h1);
	ok(strcmp(h0, h1) != 0, "changed by a new file");
	sh("cd %s && echo more >> sub/c", dir);
	fp(&c, h0);
	ok(strcmp(h0, h1) != 0, "changed by a size change");
	snprintf(file, sizeof(file), "%s/a", dir);
	utimensat(AT_FDCWD, file, ts, 0);
	fp(&c, h1);
	ok(strcmp(h0, h1) != 0, "changed by an mtime change");
	ts[1].tv_nsec = 6;
	utimensat(AT_FDCWD, file, ts, 0);
	fp(&c, h0);
	ok(strcmp(h0, h1) != 0, "mtime nanoseconds count");
	chmod(file, 0700);
	fp(&c, h1);
	ok(strcmp(h0, h1) != 0, "changed by chmod");
	sh("cd %s && echo x > .git/x && echo x > .cbexec/state.json && "
	    "echo l > x.log && echo l > sub/y.log && echo z > build/z && "
	    "echo k > sub/keep1 && mkdir -p sub/deep/build && echo z > "
	    "sub/deep/build/z", dir);
	fp(&c, h0);
	ok(strcmp(h0, h1) != 0, "changed by sub/deep (not excluded)");
	sh("cd %s && echo x >> .git/x && echo x >> .cbexec/state.json && "
	    "echo l >> x.log && echo l > sub/y2.log && echo z >> build/z && "
	    "echo k > sub/keep2 && echo z >> sub/deep/build/z", dir);
	fp(&c, h1);
	is_str(h1, h0, "unchanged under .git, state dir, excluded globs");

	if (chdir(dir) == 0) {
		c.watch = NULL;
		c.n_watch = 0;
		fp(&c, h0);
		ok(strcmp(h0, "error") != 0, "default watch dir is .");
		sh("touch -d @5 %s/sub/b", dir);
		fp(&c, h1);
		ok(strcmp(h0, h1) != 0, "default watch dir sees changes");
	}
	watch[0] = "/nonexistent/watch";
	c.watch = watch;
	c.n_watch = 1;
	is_int(progress_files(&c, h0, NULL), -1, "missing watch dir fails");
}

/* A fresh watch of c, its fingerprint into h; then cmd; then whether the
 * watch saw a change, checked against a new walk: "no change" must mean
 * the same fingerprint. */
static int
changed_by(const struct progress_cfg *c, const char *dir, const char *cmd)
{
	char h0[DIGEST_HEX_LEN + 1], h1[DIGEST_HEX_LEN + 1];
	struct files_watch *fw = NULL;
	int r;

	char line[1024];

	if (progress_files(c, h0, &fw) == -1 || fw == NULL)
		return -1;
	snprintf(line, sizeof(line), "cd %s && %s", dir, cmd);
	sh("%s", line);
	r = files_changed(fw);
	files_watch_free(fw);
	fp(c, h1);
	if (r == 0 && strcmp(h0, h1) != 0)
		return -2;	/* a change the watch missed */
	return r;
}

static void
t_watch(void)
{
	char dir[300], state[320], h[DIGEST_HEX_LEN + 1];
	char *watch[1] = { dir }, *excl[] = { "*.log", "build", "sub/keep*" };
	struct progress_cfg c = { watch, 1, excl, 3, state, NULL };
	struct files_watch *fw = NULL;
	static const struct { const char *cmd; int want; } t[] = {
		{ "true", 0 },
		{ "echo x >> .git/x", 0 },
		{ "echo x >> .cbexec/state.json", 0 },
		{ "echo l >> x.log && echo l > sub/new.log", 0 },
		{ "echo z >> build/z && echo z >> sub/deep/build/z", 0 },
		{ "echo k > sub/keep3", 0 },
		{ "echo more >> sub/b", 1 },
		{ "echo c > sub/deep/c", 1 },
		{ "mkdir sub/newdir", 1 },
		{ "touch -d @7 a", 1 },
		{ "chmod 640 a", 1 },
		{ "mv sub/b sub/b2", 1 },
		{ "rm sub/b2", 1 },
		{ "rm -r sub/newdir", 1 },
		{ "echo t > tmp && rm tmp", 1 },
	};
	char desc[160];
	size_t i;

	snprintf(dir, sizeof(dir), "%s/watched", top);
	snprintf(state, sizeof(state), "%s/.cbexec", dir);
	mkdir(dir, 0700);
	sh("cd %s && mkdir -p sub/deep/build .git .cbexec build && "
	    "echo a > a && echo b > sub/b && echo x > .git/x && "
	    "echo z > build/z && echo z > sub/deep/build/z", dir);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(desc, sizeof(desc), "watch: \"%s\" %s", t[i].cmd,
		    t[i].want ? "may change the print" : "changes nothing");
		is_int(changed_by(&c, dir, t[i].cmd), t[i].want, desc);
	}
	is_int(files_changed(NULL), 1, "no watch: may have changed");

	/* What a watch cannot see makes it give up: a file with another
	 * link, written through that link from outside the tree... */
	sh("cd %s && echo h > hard && ln hard ../hard-outside", dir);
	is_int(changed_by(&c, dir, "echo more >> ../hard-outside"), 1,
	    "watch: a file with two links: cannot tell");
	sh("rm -f %s/hard", dir);
	is_int(changed_by(&c, dir, "true"), 0, "watch: trusted again");
	/* ...a watch dir that is a symbolic link... */
	sh("ln -sfn watched %s/../watched-link", dir);
	{
		char link[320], *lw[1] = { link };
		struct progress_cfg lc = { lw, 1, excl, 3, state, NULL };

		snprintf(link, sizeof(link), "%s/watched-link", top);
		is_int(changed_by(&lc, dir, "true"), 1,
		    "watch: a symlinked watch dir: cannot tell");
	}
	/* ...and one directory under two watch dirs, whose --exclude globs
	 * judge its names differently. */
	{
		char sub[320], *two[2] = { dir, sub }, *ex[] = { "sub/x" };
		struct progress_cfg tc = { two, 2, ex, 1, state, NULL };

		snprintf(sub, sizeof(sub), "%s/sub", dir);
		is_int(changed_by(&tc, dir, "echo x >> sub/x"), 1,
		    "watch: overlapping watch dirs: the stricter one wins");
	}
	/* A watch that could not be set up says "may have changed". */
	watch[0] = "/nonexistent/watch";
	is_int(progress_files(&c, h, &fw), -1, "missing watch dir fails");
	ok(fw == NULL, "missing watch dir: no watch");
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1 when pid is gone (or a zombie) within a second. */
static int
gone(pid_t pid)
{
	char path[64], buf[256], *p;
	double end = now() + 1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	do {
		if ((f = fopen(path, "r")) == NULL)
			return 1;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		if (p != NULL && (p = strrchr(buf, ')')) != NULL && p[2] == 'Z')
			return 1;
		usleep(10000);
	} while (now() < end);
	return 0;
}

static pid_t
read_pid(const char *path)
{
	FILE *f = fopen(path, "r");
	int pid = 0;

	if (f != NULL) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return pid;
}

static void
t_cmd(void)
{
	struct status_report r;
	char err[128], cmd[512], pidf[300];
	double v = -1, t;
	pid_t pid;
	int rc;

	status_init(&r);
	is_int(progress_cmd("echo 5", 5, &r, err, sizeof(err)), 0, "echo 5");
	ok(status_metric(&r, "metric", &v) && v == 5, "one number: metric 5");
	ok(r.present == 1, "report marked present");
	status_free(&r);

	status_init(&r);
	put(&r, "tests_passing", 1);
	is_int(progress_cmd("printf 'tests_passing=3\\nfoo: 2\\n'", 5, &r, err,
	    sizeof(err)), 0, "key=value and key: value");
	ok(status_metric(&r, "tests_passing", &v) && v == 3,
	    "tests_passing=3 replaces the earlier value");
	ok(status_metric(&r, "foo", &v) && v == 2, "foo: 2");
	is_int(r.n_metrics, 2, "no duplicate metric");
	status_free(&r);

	status_init(&r);
	is_int(progress_cmd("printf 'TESTS_FAILING : 4\\nDone=TRUE\\n"
	    "note: hello\\nx = 0x10\\n'", 5, &r, err, sizeof(err)), 0,
	    "upper-case keys, booleans");
	ok(status_metric(&r, "tests_failing", &v) && v == 4,
	    "key lower-cased");
	ok(status_metric(&r, "done", &v) && v == 1, "true is 1");
	ok(!status_metric(&r, "note", &v) && !status_metric(&r, "x", &v),
	    "non-numeric values ignored");
	status_free(&r);

	status_init(&r);
	is_int(progress_cmd("printf '  -2.5e1 \\n'", 5, &r, err, sizeof(err)),
	    0, "number with spaces");
	ok(status_metric(&r, "metric", &v) && v == -25, "metric -25");
	status_free(&r);

	status_init(&r);
	is_int(progress_cmd("exit 3", 5, &r, err, sizeof(err)), -1,
	    "failing command");
	is_str(err, "progress command exited 3", "exit code named");
	is_int(progress_cmd("echo 5; exit 1", 5, &r, err, sizeof(err)), -1,
	    "output of a failing command not used");
	is_int(r.n_metrics, 0, "no metric from it");
	is_int(progress_cmd("echo hello; cat", 5, &r, err, sizeof(err)), -1,
	    "nothing usable (and stdin is /dev/null)");
	is_str(err, "progress command printed nothing usable", "reason");
	is_int(progress_cmd("echo 0x10", 5, &r, err, sizeof(err)), -1,
	    "hex is not a number");
	is_int(progress_cmd("kill -9 $$", 5, &r, err, sizeof(err)), -1,
	    "killed command");
	is_str(err, "progress command killed by signal 9", "signal named");

	t = now();
	is_int(progress_cmd("sleep 10", 0.2, &r, err, sizeof(err)), -1,
	    "hanging command fails");
	t = now() - t;
	ok(t < 2, "promptly");
	if (t >= 2)
		printf("#   took %.2fs\n", t);
	is_str(err, "progress command timed out after 0.2s", "timeout reason");

	snprintf(pidf, sizeof(pidf), "%s/sleep.pid", top);
	snprintf(cmd, sizeof(cmd), "sleep 10 & echo $! > %s; wait", pidf);
	is_int(progress_cmd(cmd, 0.3, &r, err, sizeof(err)), -1,
	    "timed out with a child");
	pid = read_pid(pidf);
	ok(pid > 0 && gone(pid), "its sleep was killed");

	snprintf(cmd, sizeof(cmd), "sleep 10 & echo $! > %s; echo 7", pidf);
	t = now();
	rc = progress_cmd(cmd, 5, &r, err, sizeof(err));
	is_int(rc, 0, "background child holding stdout");
	ok(now() - t < 2, "does not wait for it");
	ok(status_metric(&r, "metric", &v) && v == 7, "output read");
	pid = read_pid(pidf);
	ok(pid > 0 && gone(pid), "leftover in its group killed");
	status_free(&r);

	status_init(&r);
	is_int(progress_cmd("yes tests_passing=1 | head -c 200000", 5, &r, err,
	    sizeof(err)), 0, "200 KB of output");
	ok(status_metric(&r, "tests_passing", &v) && v == 1, "parsed");
	status_free(&r);
}

int
main(void)
{
	char parent[256];

	snprintf(top, sizeof(top), "%s/progress-t.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(top) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	/* Keep git away from the user's config and any enclosing repo. */
	snprintf(parent, sizeof(parent), "%s", top);
	*strrchr(parent, '/') = '\0';
	setenv("GIT_CEILING_DIRECTORIES", parent, 1);
	setenv("HOME", top, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "t", 1);
	setenv("GIT_AUTHOR_EMAIL", "t@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "t", 1);
	setenv("GIT_COMMITTER_EMAIL", "t@example.org", 1);
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	unsetenv("GIT_INDEX_FILE");
	unsetenv("GIT_CONFIG_GLOBAL");

	t_parse_list();
	t_builtin();
	t_judge();
	t_no_baseline();
	t_remember();
	t_git();
	t_files();
	t_watch();
	t_cmd();

	if (chdir("/") == 0)
		sh("rm -rf %s", top);
	return done_testing();
}
