/* SPDX-License-Identifier: ISC */
/*
 * The JSON config file.  Top-level keys are long option names with '_'
 * for '-' and go through cli_apply() as strings, so the config accepts
 * exactly what the command line accepts; "phases" adds custom phases and
 * "rules" adds classifier rules.  Anything else is an error naming the
 * key: a typo in a threshold must not silently leave the default in place.
 * The file is read whole (at most 1 MiB) from a regular file only: a FIFO
 * or device at the path is refused, never waited on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include <unistd.h>

#include <cJSON.h>

#include "agent.h"
#include "cli.h"
#include "core.h"
#include "optvalues.h"

#define CONFIG_MAX (1024 * 1024)

char *
config_read(const char *path, int follow, size_t *len, int *missing,
    char *err, size_t errlen)
{
	char *buf;
	size_t n = 0;
	ssize_t r;
	int fd;

	*missing = 0;
	/* A FIFO or device at the path is refused, never read from. */
	if ((fd = file_open(path, O_RDONLY, 0, follow)) < 0) {
		*missing = fd == -1 && errno == ENOENT;
		errf(err, errlen, "%s: %s", path, file_why(fd));
		return NULL;
	}
	if ((buf = malloc(CONFIG_MAX + 1)) == NULL) {
		close(fd);
		errf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	while (n <= CONFIG_MAX) {
		r = read(fd, buf + n, CONFIG_MAX + 1 - n);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (r == -1 || n > CONFIG_MAX) {
		errf(err, errlen, "%s: %s", path, r == -1 ? strerror(errno) :
		    "config file larger than 1 MiB");
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* A scalar JSON value as the string the command line would have given. */
static int
scalar(const cJSON *v, char *buf, size_t len)
{
	if (cJSON_IsString(v))
		snprintf(buf, len, "%s", v->valuestring);
	else if (cJSON_IsNumber(v)) {
		if (v->valuedouble < 0)
			return -1;
		snprintf(buf, len, "%.15g", v->valuedouble);
	} else
		return -1;
	return 0;
}

static int
option_key(struct options *o, const cJSON *item, const char *path,
    char *err, size_t len)
{
	char val[4096], sub[256];
	const cJSON *e;
	int rc;

	/* Refused whatever its value, false and wrong types included. */
	if (cli_config_refuses(item->string, sub, sizeof(sub)) == -1)
		return errf(err, len, "%s: key '%s': %s", path, item->string,
		    sub);
	if (cli_is_flag(item->string)) {
		if (!cJSON_IsBool(item))
			return errf(err, len, "%s: key '%s': expected true or "
			    "false", path, item->string);
		if (cJSON_IsFalse(item))
			return 0;
		rc = cli_apply(o, item->string, NULL, FROM_CONFIG, sub,
		    sizeof(sub));
	} else if (cJSON_IsArray(item)) {
		if (!cli_is_list(item->string))
			return errf(err, len, "%s: key '%s': expected a single "
			    "value, not an array", path, item->string);
		rc = 0;
		cJSON_ArrayForEach(e, item) {
			if (scalar(e, val, sizeof(val)) == -1)
				return errf(err, len, "%s: key '%s': expected "
				    "strings", path, item->string);
			if ((rc = cli_apply(o, item->string, val,
			    FROM_CONFIG, sub, sizeof(sub))) != 0)
				break;
		}
	} else {
		if (scalar(item, val, sizeof(val)) == -1)
			return errf(err, len, "%s: key '%s': expected a string "
			    "or a non-negative number", path, item->string);
		rc = cli_apply(o, item->string, val, FROM_CONFIG, sub,
		    sizeof(sub));
	}
	if (rc == 1)
		return errf(err, len, "%s: unknown key '%s'", path,
		    item->string);
	if (rc == -1)
		return errf(err, len, "%s: key '%s': %s", path, item->string,
		    sub);
	return 0;
}

static int
positive_int(const cJSON *v, int *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble < 1 ||
	    v->valuedouble > 1e9 || v->valuedouble != (int)v->valuedouble)
		return -1;
	*out = (int)v->valuedouble;
	return 0;
}

static int
load_phase(struct phase_def *p, const cJSON *def, const char *path,
    char *err, size_t len)
{
	const cJSON *k, *m;
	char *q;

	if (!cJSON_IsObject(def))
		return errf(err, len, "%s: phases.%s: expected an object",
		    path, p->name);
	cJSON_ArrayForEach(k, def) {
		if (strcmp(k->string, "no_progress") == 0) {
			if (positive_int(k, &p->no_progress) == -1)
				goto bad_count;
		} else if (strcmp(k->string, "same_error") == 0) {
			if (positive_int(k, &p->same_error) == -1)
				goto bad_count;
		} else if (strcmp(k->string, "progress") == 0) {
			if (!cJSON_IsObject(k))
				return errf(err, len, "%s: phases.%s.progress: "
				    "expected an object of metric: up|down|"
				    "true", path, p->name);
			cJSON_ArrayForEach(m, k) {
				struct phase_metric *pm;
				enum metric_dir d;

				if (!cJSON_IsString(m))
					goto bad_dir;
				if (strcmp(m->valuestring, "up") == 0)
					d = DIR_UP;
				else if (strcmp(m->valuestring, "down") == 0)
					d = DIR_DOWN;
				else if (strcmp(m->valuestring, "true") == 0)
					d = DIR_TRUE;
				else
					goto bad_dir;
				pm = realloc(p->metrics,
				    (p->n_metrics + 1) * sizeof(*pm));
				if (pm == NULL)
					return errf(err, len, "out of memory");
				p->metrics = pm;
				if ((pm[p->n_metrics].key =
				    strdup(m->string)) == NULL)
					return errf(err, len, "out of memory");
				for (q = pm[p->n_metrics].key; *q; q++)
					*q = (char)tolower((unsigned char)*q);
				pm[p->n_metrics++].dir = d;
				continue;
bad_dir:
				return errf(err, len, "%s: phases.%s.progress."
				    "%s: expected \"up\", \"down\" or \"true\"",
				    path, p->name, m->string);
			}
		} else
			return errf(err, len, "%s: unknown key 'phases.%s.%s'",
			    path, p->name, k->string);
		continue;
bad_count:
		return errf(err, len, "%s: phases.%s.%s: expected a whole "
		    "number, at least 1", path, p->name, k->string);
	}
	return 0;
}

static int
load_phases(struct options *o, const cJSON *phases, const char *path,
    char *err, size_t len)
{
	const cJSON *def;
	struct phase_def *p;
	char *q;

	if (!cJSON_IsObject(phases))
		return errf(err, len, "%s: 'phases': expected an object", path);
	cJSON_ArrayForEach(def, phases) {
		if (def->string[0] == '\0')
			return errf(err, len, "%s: phases: empty phase name",
			    path);
		p = realloc(o->phases, (o->n_phases + 1) * sizeof(*p));
		if (p == NULL)
			return errf(err, len, "out of memory");
		o->phases = p;
		p = &o->phases[o->n_phases++];
		memset(p, 0, sizeof(*p));
		if ((p->name = strdup(def->string)) == NULL)
			return errf(err, len, "out of memory");
		for (q = p->name; *q; q++)
			*q = (char)toupper((unsigned char)*q);
		if (load_phase(p, def, path, err, len) == -1)
			return -1;
	}
	return 0;
}

static int
load_rule(struct rule *r, const cJSON *def, int i, const char *path,
    char *err, size_t len)
{
	const cJSON *k, *e;
	const char *match = NULL, *type = NULL;
	int streams = 0, *codes = NULL, *nc, have_codes = 0, rc = -1;
	size_t n_codes = 0;
	enum cb_class cls = CB_CLASS_RECOVERABLE;
	char sub[256];

	if (!cJSON_IsObject(def))
		return errf(err, len, "%s: rules[%d]: expected an object",
		    path, i);
	cJSON_ArrayForEach(k, def) {
		if (strcmp(k->string, "match") == 0 && cJSON_IsString(k))
			match = k->valuestring;
		else if (strcmp(k->string, "type") == 0 && cJSON_IsString(k))
			type = k->valuestring;
		else if (strcmp(k->string, "class") == 0 &&
		    cJSON_IsString(k)) {
			if (class_from_name(k->valuestring, &cls) == -1 ||
			    cls == CB_CLASS_SUCCESS || cls == CB_CLASS_TIMEOUT ||
			    cls == CB_CLASS_BUDGET) {
				errf(err, len, "%s: rules[%d].class: '%s' is "
				    "not recoverable, transient or fatal", path,
				    i, k->valuestring);
				goto out;
			}
		} else if (strcmp(k->string, "stream") == 0 &&
		    cJSON_IsString(k)) {
			if (strcmp(k->valuestring, "stderr") == 0)
				streams |= RULE_STDERR;
			else if (strcmp(k->valuestring, "stdout") == 0)
				streams |= RULE_STDOUT;
			else if (strcmp(k->valuestring, "both") == 0)
				streams |= RULE_STDERR | RULE_STDOUT;
			else {
				errf(err, len, "%s: rules[%d].stream: expected "
				    "stderr, stdout or both", path, i);
				goto out;
			}
		} else if (strcmp(k->string, "exit") == 0 &&
		    cJSON_IsArray(k)) {
			have_codes = 1;
			cJSON_ArrayForEach(e, k) {
				if (!cJSON_IsNumber(e) || e->valuedouble < 0 ||
				    e->valuedouble > 255 ||
				    e->valuedouble != (int)e->valuedouble) {
					errf(err, len, "%s: rules[%d].exit: "
					    "expected exit codes 0-255", path, i);
					goto out;
				}
				nc = realloc(codes, (n_codes + 1) * sizeof(*nc));
				if (nc == NULL) {
					errf(err, len, "out of memory");
					goto out;
				}
				codes = nc;
				codes[n_codes++] = (int)e->valuedouble;
			}
		} else {
			errf(err, len, "%s: rules[%d]: unknown key or bad value "
			    "'%s'", path, i, k->string);
			goto out;
		}
	}
	if (match == NULL || type == NULL || *type == '\0') {
		errf(err, len, "%s: rules[%d]: needs \"match\" and \"type\"",
		    path, i);
		goto out;
	}
	if (have_codes && n_codes == 0) {
		errf(err, len, "%s: rules[%d].exit: empty list", path, i);
		goto out;
	}
	if (rule_init(r, match, streams ? streams : RULE_STDERR,
	    have_codes ? codes : NULL, n_codes, cls, type, sub,
	    sizeof(sub)) == -1) {
		errf(err, len, "%s: rules[%d].match: %s", path, i, sub);
		goto out;
	}
	rc = 0;
out:
	free(codes);
	return rc;
}

static int
load_rules(struct options *o, const cJSON *rules, const char *path,
    char *err, size_t len)
{
	const cJSON *def;
	struct rule *r;
	int i = 0;

	if (!cJSON_IsArray(rules))
		return errf(err, len, "%s: 'rules': expected an array", path);
	cJSON_ArrayForEach(def, rules) {
		r = realloc(o->rules, (o->n_rules + 1) * sizeof(*r));
		if (r == NULL)
			return errf(err, len, "out of memory");
		o->rules = r;
		if (load_rule(&o->rules[o->n_rules], def, i++, path, err,
		    len) == -1)
			return -1;
		o->n_rules++;
	}
	return 0;
}

/* Whether p is keys joined by dots, a key maybe ending in "[]" or
 * "[k=v]" (at most one of the latter). */
static int
path_ok(const char *p)
{
	size_t n;
	int picks = 0;

	for (;;) {
		if ((n = strcspn(p, ".[")) == 0 && *p != '[')
			return 0;
		p += n;
		if (*p == '[') {
			if (p[1] == ']')
				p += 2;
			else {
				if (picks++ > 0 || (n = strcspn(p + 1, "=].[")) ==
				    0 || p[1 + n] != '=' ||
				    (n = strcspn(p + 2 + n, "]")) == 0 ||
				    p[2 + strcspn(p + 1, "=") + n] != ']')
					return 0;
				p = strchr(p, ']') + 1;
			}
		}
		if (*p == '\0')
			return 1;
		if (*p != '.' || p[1] == '\0')
			return 0;
		p++;
	}
}

/* A string, or an array of 1..AGENT_DESC_EQUALS strings, into dst
 * (NULL-terminated). */
static int
desc_strings(const cJSON *v, const char **dst, const char *where,
    char *err, size_t len)
{
	const cJSON *c;
	size_t n = 0;

	if (cJSON_IsString(v)) {
		dst[0] = v->valuestring;
		dst[1] = NULL;
		return 0;
	}
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1 ||
	    cJSON_GetArraySize(v) > AGENT_DESC_EQUALS)
		return errf(err, len, "%s: expected a string or an array of 1 "
		    "to %d strings", where, AGENT_DESC_EQUALS);
	cJSON_ArrayForEach(c, v) {
		if (!cJSON_IsString(c))
			return errf(err, len, "%s: expected strings", where);
		dst[n++] = c->valuestring;
	}
	dst[n] = NULL;
	return 0;
}

/*
 * Where a fact of an agent's description is: a path ("a.b", "a[].b",
 * "a[k=v].b"), or {"path", "when": {"path", "equals"}}, and for a flag
 * (is_error) also {"path", "equals"}: the values that mean it is set.
 */
static int
desc_path(const cJSON *k, struct agent_desc_path *dst, int flag,
    const char *where, char *err, size_t len)
{
	const cJSON *m, *w;
	char sub[200];

	snprintf(sub, sizeof(sub), "%s.%s", where, k->string);
	memset(dst, 0, sizeof(*dst));
	if (cJSON_IsString(k)) {
		dst->path = k->valuestring;
	} else if (cJSON_IsObject(k)) {
		cJSON_ArrayForEach(m, k) {
			if (strcmp(m->string, "path") == 0 && cJSON_IsString(m))
				dst->path = m->valuestring;
			else if (strcmp(m->string, "equals") == 0 && flag) {
				if (desc_strings(m, dst->equals, sub, err,
				    len) == -1)
					return -1;
			} else if (strcmp(m->string, "when") == 0 &&
			    cJSON_IsObject(m)) {
				cJSON_ArrayForEach(w, m) {
					if (strcmp(w->string, "path") == 0 &&
					    cJSON_IsString(w))
						dst->when = w->valuestring;
					else if (strcmp(w->string, "equals") ==
					    0) {
						if (desc_strings(w,
						    dst->when_equals, sub, err,
						    len) == -1)
							return -1;
					} else
						return errf(err, len, "%s.when: "
						    "unknown key or bad value "
						    "'%s'", sub, w->string);
				}
				if (dst->when == NULL ||
				    dst->when_equals[0] == NULL)
					return errf(err, len, "%s.when: needs "
					    "\"path\" and \"equals\"", sub);
				if (!path_ok(dst->when) ||
				    strchr(dst->when, '[') != NULL)
					return errf(err, len, "%s.when.path: "
					    "expected keys joined by dots", sub);
			} else
				return errf(err, len, "%s: unknown key or bad "
				    "value '%s'%s", sub, m->string,
				    strcmp(m->string, "equals") == 0 ? " (only "
				    "is_error takes equals)" : "");
		}
	}
	if (dst->path == NULL || !path_ok(dst->path))
		return errf(err, len, "%s: expected a JSON path (keys joined by "
		    "dots; a[].b, a[k=v].b), or {\"path\", \"when\"}", sub);
	return 0;
}

/* The paths of an object member of a description: keys[i] into dst[i]. */
static int
desc_paths(const cJSON *o, const char *const *keys,
    struct agent_desc_path *const *dst, const char *where, char *err,
    size_t len)
{
	const cJSON *k;
	char sub[160];
	size_t i;

	snprintf(sub, sizeof(sub), "%s.%s", where, o->string);
	if (!cJSON_IsObject(o))
		return errf(err, len, "%s: expected an object", sub);
	cJSON_ArrayForEach(k, o) {
		for (i = 0; keys[i] != NULL && strcmp(keys[i], k->string) != 0;
		    i++)
			;
		if (keys[i] == NULL)
			return errf(err, len, "%s: unknown key '%s'", sub,
			    k->string);
		/* a tool result's is_error may be a string flag too */
		if (desc_path(k, dst[i], strcmp(k->string, "is_error") == 0,
		    sub, err, len) == -1)
			return -1;
	}
	return 0;
}

static int
desc_rules(const cJSON *rules, struct agent_desc_rule **out, size_t *n,
    const char *where, char *err, size_t len)
{
	const cJSON *r, *k;
	struct agent_desc_rule *d;
	size_t i = 0;

	if (!cJSON_IsArray(rules))
		return errf(err, len, "%s.rules: expected an array", where);
	if ((d = calloc((size_t)cJSON_GetArraySize(rules) + 1,
	    sizeof(*d))) == NULL)
		return errf(err, len, "out of memory");
	*out = d;
	cJSON_ArrayForEach(r, rules) {
		d[i].cls = CB_CLASS_RECOVERABLE;
		if (!cJSON_IsObject(r))
			return errf(err, len, "%s.rules[%zu]: expected an "
			    "object", where, i);
		cJSON_ArrayForEach(k, r) {
			if (strcmp(k->string, "match") == 0 &&
			    cJSON_IsString(k))
				d[i].match = k->valuestring;
			else if (strcmp(k->string, "type") == 0 &&
			    cJSON_IsString(k))
				d[i].type = k->valuestring;
			else if (strcmp(k->string, "class") == 0 &&
			    cJSON_IsString(k) &&
			    class_from_name(k->valuestring, &d[i].cls) == 0 &&
			    (d[i].cls == CB_CLASS_RECOVERABLE ||
			    d[i].cls == CB_CLASS_TRANSIENT ||
			    d[i].cls == CB_CLASS_FATAL))
				;
			else
				return errf(err, len, "%s.rules[%zu]: unknown "
				    "key or bad value '%s'", where, i,
				    k->string);
		}
		/* without a type, the row says only that the run failed */
		if (d[i].match == NULL || (d[i].type != NULL &&
		    *d[i].type == '\0'))
			return errf(err, len, "%s.rules[%zu]: needs \"match\" "
			    "(and a \"type\", when given, not empty)", where, i);
		i++;
	}
	*n = i;
	return 0;
}

/*
 * "agents": clients the operator describes (SPEC §10), each
 * {"name", "commands", "format", "result", "is_error", "error",
 * "status", "session", "usage": {...}, "tool": {...}, "rules": [...]};
 * a fact's place is a path or {"path", "when"} (desc_path).
 */
static int
load_agent(const cJSON *def, int i, const char *path, char *err, size_t len)
{
	static const char *const usage_keys[] = { "input", "output",
	    "cache_read", "cache_write", "cost", "turns", NULL };
	static const char *const tool_keys[] = { "name", "input", "id",
	    "result", "result_id", "is_error", NULL };
	struct agent_desc d;
	struct agent_desc_rule *rules = NULL;
	const char **cmds = NULL;
	struct agent_desc_path *const usage[] = { &d.usage.input,
	    &d.usage.output, &d.usage.cache_read, &d.usage.cache_write,
	    &d.usage.cost, &d.usage.turns };
	struct agent_desc_path *const tool[] = { &d.tool.name, &d.tool.input,
	    &d.tool.id, &d.tool.result, &d.tool.result_id, &d.tool.is_error };
	const cJSON *k, *c;
	char where[96], sub[512];
	const char *p;
	size_t n = 0;
	int rc = -1;

	memset(&d, 0, sizeof(d));
	d.format = AGENT_JSONL;
	snprintf(where, sizeof(where), "%s: agents[%d]", path, i);
	if (!cJSON_IsObject(def))
		return errf(err, len, "%s: expected an object", where);
	cJSON_ArrayForEach(k, def) {
		if (strcmp(k->string, "name") == 0 && cJSON_IsString(k))
			d.name = k->valuestring;
		else if (strcmp(k->string, "commands") == 0 &&
		    cJSON_IsArray(k)) {
			free(cmds);
			if ((cmds = calloc((size_t)cJSON_GetArraySize(k) + 1,
			    sizeof(*cmds))) == NULL) {
				errf(err, len, "out of memory");
				goto out;
			}
			n = 0;
			cJSON_ArrayForEach(c, k) {
				if (!cJSON_IsString(c) || *c->valuestring ==
				    '\0' || strchr(c->valuestring, '/') != NULL) {
					errf(err, len, "%s.commands: expected "
					    "command names (no '/')", where);
					goto out;
				}
				cmds[n++] = c->valuestring;
			}
		} else if (strcmp(k->string, "format") == 0 &&
		    cJSON_IsString(k)) {
			if (strcmp(k->valuestring, "jsonl") == 0)
				d.format = AGENT_JSONL;
			else if (strcmp(k->valuestring, "json") == 0)
				d.format = AGENT_JSON;
			else if (strcmp(k->valuestring, "text") == 0)
				d.format = AGENT_TEXT;
			else {
				errf(err, len, "%s.format: expected jsonl, json "
				    "or text", where);
				goto out;
			}
		} else if (strcmp(k->string, "result") == 0) {
			if (desc_path(k, &d.result, 0, where, err, len) == -1)
				goto out;
		} else if (strcmp(k->string, "is_error") == 0) {
			if (desc_path(k, &d.is_error, 1, where, err, len) == -1)
				goto out;
		} else if (strcmp(k->string, "error") == 0) {
			if (desc_path(k, &d.error, 0, where, err, len) == -1)
				goto out;
		} else if (strcmp(k->string, "status") == 0) {
			if (desc_path(k, &d.status, 0, where, err, len) == -1)
				goto out;
		} else if (strcmp(k->string, "session") == 0) {
			if (desc_path(k, &d.session, 0, where, err, len) == -1)
				goto out;
		} else if (strcmp(k->string, "usage") == 0) {
			if (desc_paths(k, usage_keys, usage, where, err,
			    len) == -1)
				goto out;
		} else if (strcmp(k->string, "tool") == 0) {
			if (desc_paths(k, tool_keys, tool, where, err,
			    len) == -1)
				goto out;
		} else if (strcmp(k->string, "rules") == 0) {
			free(rules);
			rules = NULL;
			if (desc_rules(k, &rules, &d.n_rules, where, err,
			    len) == -1)
				goto out;
		} else {
			errf(err, len, "%s: unknown key or bad value '%s'",
			    where, k->string);
			goto out;
		}
	}
	if (d.name == NULL || (p = d.name, *p == '\0') ||
	    strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(p)) {
		errf(err, len, "%s: needs a \"name\" of [a-z0-9_-]", where);
		goto out;
	}
	if (cmds == NULL || n == 0) {
		errf(err, len, "%s: needs \"commands\", the command names "
		    "that run it", where);
		goto out;
	}
	d.commands = cmds;
	d.n_commands = n;
	d.rules = rules;
	if (agent_describe(&d, sub, sizeof(sub)) == -1) {
		errf(err, len, "%s: %s", where, sub);
		goto out;
	}
	rc = 0;
out:
	free(cmds);
	free(rules);
	return rc;
}

static int
load_agents(const cJSON *agents, const char *path, char *err, size_t len)
{
	const cJSON *def;
	int i = 0;

	if (!cJSON_IsArray(agents))
		return errf(err, len, "%s: 'agents': expected an array", path);
	cJSON_ArrayForEach(def, agents)
		if (load_agent(def, i++, path, err, len) == -1)
			return -1;
	return 0;
}

int
config_load(struct options *o, const char *path, int required, char *err,
    size_t len)
{
	char *text;
	size_t n;
	int missing, rc;

	if ((text = config_read(path, 1, &n, &missing, err, len)) == NULL)
		return missing && !required ? 0 : -1;
	rc = config_parse(o, path, text, n, err, len);
	free(text);
	return rc;
}

int
config_parse(struct options *o, const char *path, const char *text,
    size_t n, char *err, size_t len)
{
	cJSON *root = NULL;
	const cJSON *item;
	const char *where, *bad;
	int rc = -1;

	if (memchr(text, '\0', n) != NULL) {
		errf(err, len, "%s: NUL byte at byte %ld", path,
		    (long)((const char *)memchr(text, '\0', n) - text));
		goto out;
	}
	/* JSON is UTF-8 (RFC 8259); names and types from here end up in the
	 * state file and the log, which must be too. */
	if ((bad = utf8_invalid(text, n)) != NULL) {
		errf(err, len, "%s: not valid UTF-8 at byte %ld", path,
		    (long)(bad - text));
		goto out;
	}
	root = cJSON_ParseWithOpts(text, &where, 1);
	if (root == NULL) {
		errf(err, len, "%s: invalid JSON near byte %ld", path,
		    where != NULL && where >= text ? (long)(where - text) : 0L);
		goto out;
	}
	if (!cJSON_IsObject(root)) {
		errf(err, len, "%s: expected a JSON object", path);
		goto out;
	}
	cJSON_ArrayForEach(item, root) {
		const cJSON *prev;

		/* Which of two counts is not JSON's to say (RFC 8259). */
		for (prev = root->child; prev != item; prev = prev->next)
			if (strcmp(prev->string, item->string) == 0) {
				errf(err, len, "%s: key '%s' given twice",
				    path, item->string);
				goto out;
			}
		if (strcmp(item->string, "phases") == 0) {
			if (load_phases(o, item, path, err, len) == -1)
				goto out;
		} else if (strcmp(item->string, "rules") == 0) {
			if (load_rules(o, item, path, err, len) == -1)
				goto out;
		} else if (strcmp(item->string, "agents") == 0) {
			if (load_agents(item, path, err, len) == -1)
				goto out;
		} else if (option_key(o, item, path, err, len) == -1)
			goto out;
	}
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}
