/* SPDX-License-Identifier: ISC */
/*
 * The table of adapters, and which one a command line runs.
 *
 * Each client is one file (claude.c, codex.c, ...) defining its row;
 * adding one is a file and a line in table[].  Detection looks at the
 * command's basename, and through the wrappers that leave the client's
 * name visible: env (its options and NAME=value words), nice, nohup,
 * time, stdbuf, timeout (its duration), npx / bunx / pnpx / npm exec /
 * pnpm dlx (a command name or a package, with or without @version), node
 * or bun running a script of an installed package, and sh -c SCRIPT (the
 * first command of the script that names a client, after NAME=value
 * words, exec and the like).  Nothing is run or read: only argv.
 */
#include <stdio.h>
#include <string.h>

#include "adapter.h"

static const struct agent *const table[] = {
	&agent_claude, &agent_codex, &agent_gemini, &agent_qwen,
	&agent_opencode, &agent_pi, &agent_copilot, &agent_cn, &agent_kilo,
};

#define DEPTH 8		/* wrappers inside wrappers, at most */

const struct agent *
agent_nth(size_t i)
{
	return i < NELEM(table) ? table[i] : agent_described(i - NELEM(table));
}

const struct agent *
agent_by_name(const char *name)
{
	const struct agent *a;
	size_t i;

	for (i = 0; name != NULL && (a = agent_nth(i)) != NULL; i++)
		if (strcmp(a->name, name) == 0)
			return a;
	return NULL;
}

const char *
agent_name(const struct agent *a)
{
	return a != NULL ? a->name : "none";
}

const char *
agent_names(void)
{
	static char names[512];
	const struct agent *a;
	size_t i, n = 0;

	for (i = 0; (a = agent_nth(i)) != NULL && n < sizeof(names); i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
		    i > 0 ? ", " : "", a->name);
	return names;
}

static const char *
base(const char *s)
{
	const char *b = strrchr(s, '/');

	return b != NULL ? b + 1 : s;
}

static const struct agent *
by_command(const char *cmd, size_t n)
{
	const char *const *c;
	const struct agent *a;
	size_t i;

	for (i = 0; (a = agent_nth(i)) != NULL; i++)
		for (c = a->commands; *c != NULL; c++)
			if (strlen(*c) == n && strncmp(*c, cmd, n) == 0)
				return a;
	return NULL;
}

/* "@google/gemini-cli", "@google/gemini-cli@0.61.0", "opencode-ai@latest",
 * or a path inside node_modules/PACKAGE/. */
static const struct agent *
by_package(const char *s)
{
	const char *const *pk, *hit;
	const struct agent *a;
	size_t i, n;

	for (i = 0; (a = agent_nth(i)) != NULL; i++)
		for (pk = a->packages; *pk != NULL; pk++) {
			n = strlen(*pk);
			if (strncmp(s, *pk, n) == 0 &&
			    (s[n] == '\0' || s[n] == '@'))
				return a;
			if ((hit = strstr(s, "node_modules/")) != NULL &&
			    (hit = strstr(hit, *pk)) != NULL &&
			    hit[-1] == '/' && hit[n] == '/')
				return a;
		}
	return NULL;
}

static const struct agent *detect(char *const *argv, int depth);

static int
assignment(const char *w)
{
	const char *eq = strchr(w, '=');

	return eq != NULL && eq > w && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789_") == (size_t)(eq - w);
}

/*
 * The words of a shell script, each checked in command position: at the
 * start, after ; & | ( and newlines, and after words that run the next
 * (exec, env, command, nohup, ...) or set a variable.  Quotes are dropped;
 * nothing is expanded.
 */
static const struct agent *
script(const char *s, int depth)
{
	static const char *const runs[] = { "exec", "command", "env",
	    "nohup", "nice", "time", "builtin", "npx", "bunx", "pnpx",
	    "stdbuf", NULL };
	const struct agent *a;
	const char *const *r;
	char word[256], *argv[2];
	size_t n;
	int cmdpos = 1;

	while (*s != '\0') {
		if (strchr(";&|(\n", *s) != NULL) {
			cmdpos = 1;
			s++;
			continue;
		}
		if (*s == ' ' || *s == '\t' || *s == ')') {
			s++;
			continue;
		}
		for (n = 0; *s != '\0' && strchr(" \t\n;&|()", *s) == NULL;
		    s++)
			if (*s != '"' && *s != '\'' && n < sizeof(word) - 1)
				word[n++] = *s;
		word[n] = '\0';
		if (!cmdpos)
			continue;
		if (assignment(word) || (word[0] == '-' && n > 1))
			continue;
		for (r = runs; *r != NULL && strcmp(*r, base(word)) != 0; r++)
			;
		if (*r != NULL)
			continue;
		argv[0] = word;
		argv[1] = NULL;
		if ((a = detect(argv, depth + 1)) != NULL)
			return a;
		a = by_package(word);
		if (a != NULL)
			return a;
		cmdpos = 0;
	}
	return NULL;
}

/* Past a wrapper's own options: the first word that is not one (options
 * that take a value skip it too). */
static char *const *
past_options(char *const *argv, const char *with_value)
{
	const char *o;

	for (; *argv != NULL && (*argv)[0] == '-'; argv++) {
		if (strcmp(*argv, "--") == 0)
			return argv + 1;
		o = *argv;
		if (o[1] != '-' && o[1] != '\0' && o[2] == '\0' &&
		    strchr(with_value, o[1]) != NULL && argv[1] != NULL)
			argv++;
		else if (strncmp(o, "--", 2) == 0 && strchr(o, '=') == NULL) {
			/* long options of npx that take a value */
			if ((strcmp(o, "--package") == 0 ||
			    strcmp(o, "--call") == 0 ||
			    strcmp(o, "--signal") == 0 ||
			    strcmp(o, "--kill-after") == 0 ||
			    strcmp(o, "--unset") == 0 ||
			    strcmp(o, "--chdir") == 0) && argv[1] != NULL)
				argv++;
		}
	}
	return argv;
}

static const struct agent *
detect(char *const *argv, int depth)
{
	const struct agent *a;
	const char *cmd, *v;
	char *const *p;

	if (argv == NULL || argv[0] == NULL || depth > DEPTH)
		return NULL;
	cmd = base(argv[0]);
	if ((a = by_command(cmd, strlen(cmd))) != NULL)
		return a;
	if (strcmp(cmd, "env") == 0) {
		p = past_options(argv + 1, "uCS");
		while (*p != NULL && assignment(*p))
			p++;
		return detect(p, depth + 1);
	}
	if (strcmp(cmd, "nice") == 0 || strcmp(cmd, "nohup") == 0 ||
	    strcmp(cmd, "time") == 0 || strcmp(cmd, "stdbuf") == 0 ||
	    strcmp(cmd, "exec") == 0 || strcmp(cmd, "command") == 0)
		return detect(past_options(argv + 1, "nioeo"), depth + 1);
	if (strcmp(cmd, "timeout") == 0) {
		p = past_options(argv + 1, "sk");
		return *p != NULL ? detect(p + 1, depth + 1) : NULL;
	}
	if (strcmp(cmd, "npm") == 0 || strcmp(cmd, "pnpm") == 0 ||
	    strcmp(cmd, "yarn") == 0) {
		if (argv[1] == NULL || (strcmp(argv[1], "exec") != 0 &&
		    strcmp(argv[1], "dlx") != 0 && strcmp(argv[1], "x") != 0))
			return NULL;
		argv++;
		cmd = "npx";
	}
	if (strcmp(cmd, "npx") == 0 || strcmp(cmd, "bunx") == 0 ||
	    strcmp(cmd, "pnpx") == 0) {
		/* --package=PKG / -p PKG names what runs the command */
		for (p = argv + 1; *p != NULL && (*p)[0] == '-'; p++) {
			v = strncmp(*p, "--package=", 10) == 0 ? *p + 10 :
			    (strcmp(*p, "-p") == 0 || strcmp(*p, "--package") ==
			    0) ? p[1] : NULL;
			if (v != NULL && (a = by_package(v)) != NULL)
				return a;
			if ((strcmp(*p, "-c") == 0 || strcmp(*p, "--call") ==
			    0) && p[1] != NULL)
				return script(p[1], depth);
		}
		p = past_options(argv + 1, "pc");
		if (*p == NULL)
			return NULL;
		if ((a = by_package(*p)) != NULL)
			return a;
		return detect(p, depth + 1);
	}
	if (strcmp(cmd, "node") == 0 || strcmp(cmd, "bun") == 0) {
		p = past_options(argv + 1, "r");
		if (*p == NULL)
			return NULL;
		if ((a = by_package(*p)) != NULL)
			return a;
		return by_command(base(*p), strlen(base(*p)));
	}
	if (strcmp(cmd, "sh") == 0 || strcmp(cmd, "bash") == 0 ||
	    strcmp(cmd, "dash") == 0 || strcmp(cmd, "zsh") == 0 ||
	    strcmp(cmd, "ksh") == 0 || strcmp(cmd, "ash") == 0) {
		/* sh -c SCRIPT, also -ec, -lc, ... */
		for (p = argv + 1; *p != NULL && (*p)[0] == '-'; p++)
			if (strchr(*p, 'c') != NULL && (*p)[1] != '-' &&
			    p[1] != NULL)
				return script(p[1], depth);
		return NULL;
	}
	return NULL;
}

const struct agent *
agent_detect(char *const *argv)
{
	return detect(argv, 0);
}
