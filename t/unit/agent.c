/* SPDX-License-Identifier: ISC */
/*
 * The agent adapters on the real clients' recorded output
 * (t/corpus/recorded/CLIENT-VERSION/SCENARIO-FORMAT.{stdout,stderr,exit}):
 * every recording is fed in pieces of odd sizes, finished with its exit
 * status and stderr, and classified with the adapter's verdict.  Each
 * scenario must come out as the type it is (a bad key auth, a 429
 * rate_limited, ...), successes as successes with their status block
 * found in every format, different errors with different messages, and
 * tool calls and usage reported to the hooks.  Then the tokenizer's edges
 * on made-up input, and detection from command lines.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "judge.h"
#include "core.h"
#include "tap.h"

#define FIXTURES "t/corpus/recorded"

static char *
slurp(const char *dir, const char *name, const char *ext, size_t *len)
{
	char path[1024];
	FILE *f;
	char *buf = NULL;
	long n;

	snprintf(path, sizeof(path), "%s/%s.%s", dir, name, ext);
	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
		*len = fread(buf, 1, (size_t)n, f);
		buf[*len] = '\0';
	}
	fclose(f);
	return buf;
}

/* What a scenario is, by its name; a client may differ where its own
 * words say something else. */
static const char *
expected(const char *client, const char *scenario)
{
	static const struct {
		const char *client, *prefix, *type;
	} map[] = {
		/* Codex hides a 500 behind "high demand" */
		{ "codex", "500", "overloaded" },
		{ "codex", "hang", "network" },
		{ "codex", "model_warning", "" },
		/* a tool nobody could approve (no --allow-all-tools) */
		{ "copilot", "tools_ask_noallow", "blocked" },
		/* the client's own turn cap */
		{ "claude", "tools_turns1", "turn_limit" },
		{ NULL, "cut", "network" },
		{ NULL, "capacity", "usage_limit" },
		{ NULL, "key_expired", "auth" },
		/* Qwen retries silently: cut short, it is a timeout */
		{ "qwen", "429_defaults", "timeout" },
		{ "qwen", "oauth_discontinued", "auth" },
		/* opencode's own guard against a tool called over and over */
		{ "opencode", "tools_loop_burst", "loop" },
		/* the client's own loop stop is a loop (SPEC §10), where the
		 * format shows it */
		{ "gemini", "tool_loop-json", "loop" },
		{ "gemini", "tool_loop-stream-json", "loop" },
		{ "qwen", "tools_loop_detect-text", "loop" },
		/* Kilo, an opencode fork: its guard and its permissions */
		{ "kilo", "tools_loop_burst", "loop" },
		{ "kilo", "tools_ask_auto", "" },
		{ "kilo", "tools_ask", "blocked" },
		{ "kilo", "usage_limit-plain", "rate_limited" },
		/* no reset time shown: a subscription's limit reads as a 429 */
		{ "pi", "usage_limit-", "rate_limited" },
		{ "cn", "usage_limit", "rate_limited" },
		{ "copilot", "usage_limit_anthropic", "rate_limited" },
		/* its plain output shows no sign of a subscription's limit */
		{ "opencode", "usage_limit-plain", "rate_limited" },
		/* three good turns, then the limit: as its usage_limit */
		{ "pi", "tools_limit_mid", "rate_limited" },
		{ "cn", "tools_limit_mid", "rate_limited" },
		{ "kilo", "tools_limit_mid-plain", "rate_limited" },
		{ "opencode", "tools_limit_mid-plain", "rate_limited" },
		{ NULL, "tools_limit_mid", "usage_limit" },
		{ NULL, "success", "" }, { NULL, "complete", "" },
		{ NULL, "tools", "" }, { NULL, "tool_loop", "" },
		{ NULL, "slow", "" }, { NULL, "usage_warning", "" },
		{ NULL, "401", "auth" }, { NULL, "403", "auth" },
		{ NULL, "400", "auth" }, { NULL, "missing_key", "auth" },
		{ NULL, "usage_limit_apikey", "rate_limited" },
		{ NULL, "usage_limit", "usage_limit" },
		{ NULL, "quota_daily", "usage_limit" },
		{ NULL, "429", "rate_limited" },
		{ NULL, "500", "server_error" },
		{ NULL, "503", "overloaded" }, { NULL, "529", "overloaded" },
		{ NULL, "credit", "billing" },
		{ NULL, "refused", "network" }, { NULL, "drop", "network" },
	};
	size_t i;

	for (i = 0; i < NELEM(map); i++)
		if ((map[i].client == NULL ||
		    strcmp(map[i].client, client) == 0) &&
		    strncmp(scenario, map[i].prefix, strlen(map[i].prefix)) == 0)
			return map[i].type;
	return NULL;
}

static int n_tools, n_usage_total, n_events;

static void
hook_event(void *arg)
{
	n_events++;
}

static void
hook_usage(void *arg, const struct agent_usage *u, int total)
{
	if (total)
		n_usage_total++;
}

static void
hook_tool(void *arg, const char *id, const char *name, const char *input,
    size_t n, int cut, unsigned long long digest)
{
	if (name != NULL && *name != '\0')
		n_tools++;
}

static const struct agent_hooks hooks = {
	hook_event, hook_usage, hook_tool, NULL, NULL, NULL
};

struct seen {
	char client[64], format[16], scenario[64], hash[DIGEST_HEX_LEN + 1];
	char *message;
};

static struct seen seen[512];
static size_t n_seen;

/* Feed p[0..n) in pieces of odd sizes, so every boundary is crossed. */
static void
feed(struct agent_run *r, struct status_scanner *sc, const char *p, size_t n)
{
	static const size_t sizes[] = { 1, 7, 64, 3, 4099, 2, 511, 13 };
	size_t off = 0, k, i = 0;

	while (off < n) {
		k = sizes[i++ % NELEM(sizes)];
		if (k > n - off)
			k = n - off;
		agent_feed(r, p + off, k);
		status_scanner_feed(sc, p + off, k);
		off += k;
	}
}

static void
one(const char *dir, const char *client, const char *name)
{
	const struct agent *a = agent_by_name(client);
	const char *fmt, *want;
	char scenario[64], d[512], *out, *err, *ex;
	size_t on = 0, en = 0, xn = 0;
	struct agent_run *r;
	struct agent_end e;
	struct agent_result res;
	struct run_facts f;
	struct classification c;
	struct status_report st;
	struct status_scanner *sc;
	int code, tools_before = n_tools, usage_before = n_usage_total;

	fmt = strstr(name, "-stream-json") != NULL ? "stream-json" :
	    strrchr(name, '-') + 1;
	snprintf(scenario, sizeof(scenario), "%.*s",
	    (int)(strlen(name) - strlen(fmt) - 1), name);
	if ((want = expected(client, name)) == NULL) {
		printf("# %s/%s: no expectation\n", client, name);
		return;
	}
	out = slurp(dir, name, "stdout", &on);
	err = slurp(dir, name, "stderr", &en);
	ex = slurp(dir, name, "exit", &xn);
	if (a == NULL || out == NULL || err == NULL || ex == NULL) {
		snprintf(d, sizeof(d), "%s/%s: readable", client, name);
		ok(0, d);
		goto out;
	}
	code = atoi(ex);
	r = agent_run_new(a, &hooks);
	sc = status_scanner_new();
	feed(r, sc, out, on);
	memset(&e, 0, sizeof(e));
	e.exit_code = code;
	/* recorded under timeout(1) while the client still retried */
	e.timed_out = code == 124;
	e.err = err;
	e.err_len = en;
	e.now = wall_now();
	agent_finish(r, &e, &res);

	memset(&f, 0, sizeof(f));
	f.command = client;
	f.exit_code = e.timed_out ? -1 : code;
	f.signo = e.timed_out ? 15 : 0;
	f.signalled_by_us = f.timed_out = e.timed_out;
	f.err = err;
	f.err_len = en;
	f.out = out;
	f.out_len = on;
	f.agent = &res.v;
	classify(NULL, 0, &f, &c);
	snprintf(d, sizeof(d), "%s %s %s: %s", client, fmt, scenario,
	    *want ? want : "success");
	if (!ok(strcmp(c.type, want) == 0 &&
	    (*want != '\0') == (c.cls != CB_CLASS_SUCCESS), d))
		printf("#   got %s %s: %s\n", class_name(c.cls), c.type,
		    c.message ? c.message : "");
	if (*want != '\0' && c.message != NULL) {
		snprintf(d, sizeof(d), "%s %s %s: a message of its own", client,
		    fmt, scenario);
		if (!ok(strncmp(c.message, "exited with status", 18) != 0 &&
		    strlen(c.message) >= 8, d))
			printf("#   message: %s\n", c.message);
		if (n_seen < NELEM(seen)) {
			snprintf(seen[n_seen].client, sizeof(seen[0].client),
			    "%s", client);
			snprintf(seen[n_seen].format, sizeof(seen[0].format),
			    "%s", fmt);
			snprintf(seen[n_seen].scenario,
			    sizeof(seen[0].scenario), "%s", scenario);
			memcpy(seen[n_seen].hash, c.hash, sizeof(c.hash));
			seen[n_seen++].message = strdup(c.message);
		}
	}
	/* a loop stopped by the client itself has no answer */
	if (*want == '\0' && strcmp(scenario, "tool_loop") != 0 &&
	    strcmp(scenario, "tools_loop_detect") != 0 &&
	    strcmp(scenario, "tools_noyolo") != 0) {
		/* the status block, in every format */
		status_init(&st);
		if (res.status_own)
			st = res.status;
		else
			status_scanner_result(sc, &st);
		snprintf(d, sizeof(d), "%s %s %s: status block read", client,
		    fmt, scenario);
		ok(st.present && st.task != NULL &&
		    strcmp(st.task, "2.3-login-form") == 0, d);
		snprintf(d, sizeof(d), "%s %s %s: %s", client, fmt, scenario,
		    strcmp(scenario, "complete") == 0 ? "COMPLETE ends a loop" :
		    "IN_PROGRESS does not end a loop");
		ok(status_done(&st) == (strcmp(scenario, "complete") == 0), d);
		if (st.present && !res.status_own)
			status_free(&st);
		/* cn shows no session id in any format */
		if (strcmp(fmt, "text") != 0 && strcmp(fmt, "plain") != 0 &&
		    strcmp(client, "cn") != 0) {
			snprintf(d, sizeof(d), "%s %s %s: session id", client,
			    fmt, scenario);
			ok(res.session_id != NULL && strlen(res.session_id) > 8,
			    d);
		}
	}
	if (strncmp(scenario, "tools", 5) == 0 && strcmp(fmt, "text") != 0 &&
	    strcmp(fmt, "plain") != 0 && strcmp(fmt, "json") != 0) {
		snprintf(d, sizeof(d), "%s %s %s: tool calls reach the hook",
		    client, fmt, scenario);
		ok(n_tools > tools_before, d);
	}
	if (*want == '\0' && strcmp(fmt, "stream-json") == 0) {
		snprintf(d, sizeof(d), "%s %s %s: usage reaches the hook",
		    client, fmt, scenario);
		ok(n_usage_total > usage_before ||
		    strcmp(client, "gemini") == 0, d);
	}
	status_free(&res.status);
	classification_free(&c);
	status_scanner_free(sc);
	agent_run_free(r);
out:
	free(out);
	free(err);
	free(ex);
}

/* Scenarios a client words the same: cn sends a placeholder key when it
 * has none (the provider's 401 then), Copilot names a 401 and a 403 alike
 * but for the number (which a fingerprint folds). */
static int
same_words(const char *client, const char *x, const char *y)
{
	static const char *const pairs[][3] = {
		{ "cn", "missing_key", "401" }, { "copilot", "401", "403" },
	};
	size_t i;

	/* a usage limit mid-session is the same error as at the start
	 * (Gemini's: its daily quota) */
	if (strcmp(x, "tools_limit_mid") == 0 || strcmp(y, "tools_limit_mid") == 0) {
		const char *o = strcmp(x, "tools_limit_mid") == 0 ? y : x;

		if (strcmp(o, "usage_limit") == 0 || strcmp(o, "quota_daily") == 0)
			return 1;
	}
	for (i = 0; i < NELEM(pairs); i++)
		if (strcmp(client, pairs[i][0]) == 0 &&
		    ((strcmp(x, pairs[i][1]) == 0 && strcmp(y, pairs[i][2]) == 0) ||
		    (strcmp(x, pairs[i][2]) == 0 && strcmp(y, pairs[i][1]) == 0)))
			return 1;
	return 0;
}

/* Different errors of one client in one format never share a message. */
static void
distinct(void)
{
	size_t i, k;
	int same = 0;

	for (i = 0; i < n_seen; i++)
		for (k = i + 1; k < n_seen; k++) {
			size_t a = strcspn(seen[i].scenario, "_"),
			    b = strcspn(seen[k].scenario, "_");

			if (strcmp(seen[i].client, seen[k].client) != 0 ||
			    strcmp(seen[i].format, seen[k].format) != 0 ||
			    (a == b && strncmp(seen[i].scenario,
			    seen[k].scenario, a) == 0) ||
			    same_words(seen[i].client, seen[i].scenario,
			    seen[k].scenario))
				continue;
			if (strcmp(seen[i].hash, seen[k].hash) == 0) {
				printf("# same fingerprint: %s %s %s / %s: %s\n",
				    seen[i].client, seen[i].format,
				    seen[i].scenario, seen[k].scenario,
				    seen[i].message);
				same++;
			}
		}
	ok(same == 0, "different errors of a client have different "
	    "fingerprints");
	for (i = 0; i < n_seen; i++)
		free(seen[i].message);
}

static void
fixtures(void)
{
	DIR *top, *d;
	struct dirent *ent, *f;
	char dir[512], client[64], name[256], names[1024] = "";
	int clients = 0;

	if ((top = opendir(FIXTURES)) == NULL) {
		ok(0, "t/corpus/recorded is readable");
		return;
	}
	while ((ent = readdir(top)) != NULL) {
		if (ent->d_name[0] == '.' || strchr(ent->d_name, '-') == NULL)
			continue;
		snprintf(client, sizeof(client), "%.*s",
		    (int)strcspn(ent->d_name, "-"), ent->d_name);
		if (agent_by_name(client) == NULL) {
			/* a client cbexec has no adapter for: its recordings
			 * are the judgement corpus's alone */
			printf("# %s: no adapter, not read\n", ent->d_name);
			continue;
		}
		snprintf(dir, sizeof(dir), "%s/%s", FIXTURES, ent->d_name);
		if ((d = opendir(dir)) == NULL)
			continue;
		/* each client once, whatever versions were recorded */
		snprintf(name, sizeof(name), " %s ", client);
		if (strstr(names, name) == NULL) {
			clients++;
			snprintf(names + strlen(names), sizeof(names) -
			    strlen(names), "%s", name);
		}
		while ((f = readdir(d)) != NULL) {
			size_t n = strlen(f->d_name);

			if (n < 6 || strcmp(f->d_name + n - 5, ".exit") != 0)
				continue;
			snprintf(name, sizeof(name), "%.*s", (int)(n - 5),
			    f->d_name);
			one(dir, client, name);
		}
		closedir(d);
	}
	closedir(top);
	is_int(clients, 9, "recordings of the nine clients");
	distinct();
}

/* Read text with the adapter named client, in one piece or byte by byte. */
static void
read_as(const char *client, const char *text, int bytewise,
    struct agent_result *res, struct agent_run **rp)
{
	struct agent_end e;
	size_t i, n = strlen(text);

	*rp = agent_run_new(agent_by_name(client), &hooks);
	if (bytewise)
		for (i = 0; i < n; i++)
			agent_feed(*rp, text + i, 1);
	else
		agent_feed(*rp, text, n);
	memset(&e, 0, sizeof(e));
	e.exit_code = 1;
	e.err = "";
	e.now = wall_now();
	agent_finish(*rp, &e, res);
}

static char last_tool[256], last_input[256];

static void
hook_tool_keep(void *arg, const char *id, const char *name,
    const char *input, size_t n, int cut, unsigned long long digest)
{
	snprintf(last_tool, sizeof(last_tool), "%s", name);
	snprintf(last_input, sizeof(last_input), "%.*s", (int)n, input);
}

static void
tokenizer(void)
{
	static const struct agent_hooks keep = { NULL, NULL, hook_tool_keep,
	    NULL, NULL, NULL };
	struct agent_result res;
	struct agent_run *r;
	struct agent_end e;
	char *big, *deep;
	size_t i, n;
	int b;

	for (b = 0; b < 2; b++) {
		read_as("claude", "{\"type\":\"result\",\"is_error\":true,"
		    "\"result\":\"Caf\\u00e9 \\ud83d\\ude00 \\\"quoted\\\" "
		    "\\u0041\"}\n", b, &res, &r);
		is_str(res.v.message, "Caf\xc3\xa9 \xf0\x9f\x98\x80 \"quoted\" A",
		    b ? "escapes and surrogate pairs, byte by byte" :
		    "escapes and surrogate pairs");
		status_free(&res.status);
		agent_run_free(r);
	}
	read_as("claude", "{\"type\":\"result\",\"is_error\":tru\n"
	    "{\"type\":\"result\",\"is_error\":true,\"result\":\"second\"}\n",
	    0, &res, &r);
	is_str(res.v.message, "second", "a broken line is passed over");
	status_free(&res.status);
	agent_run_free(r);
	read_as("claude", "{\"type\":\"result\",\"result\":\"a\nb\"}\n"
	    "{\"type\":\"result\",\"is_error\":true,\"result\":\"third\"}",
	    1, &res, &r);
	is_str(res.v.message, "third", "a raw newline in a string breaks the "
	    "line, not the stream");
	status_free(&res.status);
	agent_run_free(r);
	/* containers nested past the tracked depth are skipped */
	n = 64;
	deep = malloc(16 * n + 256);
	strcpy(deep, "{\"x\":");
	for (i = 0; i < n; i++)
		strcat(deep, "[{\"a\":");
	strcat(deep, "\"}\\\"]\"");
	for (i = 0; i < n; i++)
		strcat(deep, "}]");
	strcat(deep, ",\"type\":\"result\",\"is_error\":true,"
	    "\"result\":\"deep\"}\n");
	read_as("claude", deep, 0, &res, &r);
	is_str(res.v.message, "deep", "nesting past the tracked depth");
	status_free(&res.status);
	agent_run_free(r);
	free(deep);
	/* a string of 8 MiB and a key of 1 KiB cost nothing */
	n = 8 << 20;
	big = malloc(n + 2048);
	memcpy(big, "{\"", 2);
	memset(big + 2, 'k', 1024);
	i = 1026;
	memcpy(big + i, "\":\"", 3);
	i += 3;
	memset(big + i, 'x', n);
	i += n;
	strcpy(big + i, "\",\"type\":\"result\",\"is_error\":true,"
	    "\"result\":\"after\"}\n");
	read_as("claude", big, 0, &res, &r);
	is_str(res.v.message, "after", "an 8 MiB string and a 1 KiB key");
	status_free(&res.status);
	agent_run_free(r);
	free(big);
	/* Qwen's json: the events are the objects of one array */
	read_as("qwen", "[{\"type\":\"system\",\"session_id\":\"s-1\"},"
	    "{\"type\":\"result\",\"is_error\":false,\"result\":"
	    "\"[API Error: 401 bad key]\"}]", 0, &res, &r);
	ok(res.v.failed && res.v.http_status == 401,
	    "an [API Error: 401 ...] result is a failure, with its status");
	is_str(res.session_id, "s-1", "session id from an array's event");
	status_free(&res.status);
	agent_run_free(r);
	read_as("qwen", "{\"type\":\"result\",\"is_error\":false,\"result\":"
	    "\"Fixed the [API Error: 401 x] message handling.\"}\n", 0, &res,
	    &r);
	ok(!res.v.failed, "an answer that quotes an [API Error: ...] is none");
	status_free(&res.status);
	agent_run_free(r);
	/* text that only looks like JSON is text */
	read_as("claude", "{not json}\nhello\n---RALPH_STATUS---\nSTATUS: "
	    "COMPLETE\n---END_RALPH_STATUS---\n", 0, &res, &r);
	ok(!res.status_own && !res.v.failed, "text mode stays text");
	status_free(&res.status);
	agent_run_free(r);
	/* a tool call's input, as JSON text, to the hook */
	r = agent_run_new(agent_by_name("claude"), &keep);
	big = "{\"type\":\"assistant\",\"message\":{\"content\":["
	    "{\"type\":\"tool_use\",\"name\":\"Bash\",\"input\":"
	    "{\"command\": \"ls -l\", \"n\": [1, 2]}}]}}\n";
	agent_feed(r, big, strlen(big));
	memset(&e, 0, sizeof(e));
	e.err = "";
	agent_finish(r, &e, &res);
	is_str(last_tool, "Bash", "tool call: its name");
	is_str(last_input, "{\"command\": \"ls -l\", \"n\": [1, 2]}",
	    "tool call: its input as written");
	status_free(&res.status);
	agent_run_free(r);
	r = agent_run_new(agent_by_name("codex"), &keep);
	big = "{\"type\":\"item.started\",\"item\":{\"type\":"
	    "\"command_execution\",\"command\":\"bash -lc \\\"ls\\\"\"}}\n";
	agent_feed(r, big, strlen(big));
	agent_finish(r, &e, &res);
	is_str(last_input, "\"bash -lc \\\"ls\\\"\"",
	    "a string input, as written");
	status_free(&res.status);
	agent_run_free(r);
}

static void
detect(const char *desc, const char *want, ...)
{
	char *argv[16], d[256];
	const struct agent *a;
	va_list ap;
	int n = 0;

	va_start(ap, want);
	while (n < 15 && (argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	a = agent_detect(argv);
	snprintf(d, sizeof(d), "detect %s: %s", desc, want ? want : "none");
	is_str(a != NULL ? agent_name(a) : NULL, want, d);
}

static void
detection(void)
{
	detect("basename", "claude", "claude", "-p", "x", NULL);
	detect("path", "codex", "/usr/local/bin/codex", "exec", NULL);
	detect("env", "gemini", "env", "-u", "X", "A=1", "gemini", "-p", "x",
	    NULL);
	detect("npx package", "claude", "npx", "-y",
	    "@anthropic-ai/claude-code@2.1.330", "-p", "x", NULL);
	detect("npx --package", "qwen", "npx", "--package=@qwen-code/qwen-code",
	    "qwen", NULL);
	detect("npm exec", "opencode", "npm", "exec", "--", "opencode", "run",
	    NULL);
	detect("sh -c", "codex", "sh", "-c", "cd /w && OPENAI_API_KEY=x exec "
	    "codex exec --json 'do it'", NULL);
	detect("bash -lc", "gemini", "bash", "-lc", "gemini -p \"$(cat P)\"",
	    NULL);
	detect("node script", "gemini", "node",
	    "/x/node_modules/@google/gemini-cli/bundle/gemini.js", NULL);
	detect("timeout", "claude", "timeout", "-s", "INT", "10m", "claude",
	    NULL);
	detect("nice nohup", "qwen", "nice", "-n", "5", "nohup", "qwen", NULL);
	detect("a name in an argument is not the command", NULL, "echo",
	    "claude", NULL);
	detect("sh -c without one", NULL, "sh", "-c", "echo claude", NULL);
	detect("a script", NULL, "./agent-step.sh", NULL);
	is_str(agent_name(agent_by_name("opencode")), "opencode",
	    "by name");
	ok(agent_by_name("aider") == NULL, "an unknown name");
}

/* Read a recording with its client's adapter; 0, or -1 when it is not
 * there. */
static int
read_recording(const char *client, const char *dir, const char *name,
    struct agent_result *res, struct agent_run **rp)
{
	char *out, *err, *ex;
	size_t on = 0, en = 0, xn = 0;
	struct agent_end e;

	out = slurp(dir, name, "stdout", &on);
	err = slurp(dir, name, "stderr", &en);
	ex = slurp(dir, name, "exit", &xn);
	if (out == NULL || err == NULL || ex == NULL) {
		free(out);
		free(err);
		free(ex);
		return -1;
	}
	*rp = agent_run_new(agent_by_name(client), &hooks);
	agent_feed(*rp, out, on);
	memset(&e, 0, sizeof(e));
	e.exit_code = atoi(ex);
	e.err = err;
	e.err_len = en;
	e.now = wall_now();
	agent_finish(*rp, &e, res);
	free(out);
	free(err);
	free(ex);
	return 0;
}

/* What the recordings say beyond the verdict. */
static void
recorded_truths(void)
{
	struct agent_result res;
	struct agent_run *r;

	/* Copilot's usage limit: the reset time its model.call_failure
	 * carries (the provider's body, "resets_at"), the last one given */
	if (read_recording("copilot", FIXTURES "/copilot-1.0.102",
	    "usage_limit-json", &res, &r) == 0) {
		ok(res.hint.at == 1795582345, "copilot usage limit: resets_at "
		    "of its last model.call_failure is the reset time");
		ok(res.hint.after == 3600, "... and resets_in_seconds the "
		    "delay");
		status_free(&res.status);
		agent_run_free(r);
	} else
		ok(0, "copilot usage_limit-json is readable");
	/* Claude's own turn cap: its errors' words, type turn_limit */
	if (read_recording("claude", FIXTURES "/claude-2.1.332",
	    "tools_turns1-json", &res, &r) == 0) {
		is_str(res.v.message, "Reached maximum number of turns (1)",
		    "claude error_max_turns: the message is its errors'");
		is_str(res.v.type, "turn_limit", "... type turn_limit");
		status_free(&res.status);
		agent_run_free(r);
	} else
		ok(0, "claude tools_turns1-json is readable");
}

int
main(void)
{
	setenv("TZ", "UTC", 1);
	fixtures();
	recorded_truths();
	tokenizer();
	detection();
	return done_testing();
}
