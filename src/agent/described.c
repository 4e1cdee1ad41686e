/* SPDX-License-Identifier: ISC */
/*
 * Clients an operator describes in the config file (SPEC §10, "agents"):
 * where in the client's JSON its result, error, HTTP status, session,
 * usage and tool calls are, and its own classifier rows -- knowledge, not
 * code.  Each description becomes an adapter row like the built-in ones
 * (agents.c), whose fields are the described paths, each into the slot of
 * its role, and whose event function reads the roles:
 *
 *   session              the session id, from any event
 *   tool.name/.input     a tool call (tool.id names it for its result)
 *   tool.result          a tool's result (tool.result_id, tool.is_error)
 *   error                an error event's message (status: its HTTP
 *                        status); the run failed unless a later result
 *                        says otherwise
 *   result / is_error    an event with either is the client's result:
 *                        is_error set fails the run (its error, else its
 *                        result the message), else the result text is the answer,
 *                        where the status block is read; a result with
 *                        tool calls is a step, the last one without is
 *                        the final
 *   usage.*              the figures of the event: the run's totals in
 *                        the result event, else a step's
 *
 * A place may be picked more finely than by a path:
 *
 *   {"path", "when": {"path", "equals"}}   the role counts only in an
 *        event whose string at when is one of equals (Grok CLI prints its
 *        user's, assistant's and tools' messages alike; only the
 *        assistant's content is its result)
 *   "a[k=v].b"  b of the element of a whose k is v, the last one, checked
 *        as each element ends; "[k=v].b" is the event itself, as when
 *   "a[].b"     b of each element of a: each tool call of a message
 *        (tool_calls[].function.name) goes to the hooks as its element
 *        ends
 *   is_error: {"path", "equals"}   a string flag: set when the value is
 *        one of equals (Cline's finishReason "error")
 *
 * The description's own rows are tried on the client's own values -- the
 * result's first KiB and each error -- whatever the exit status: a client
 * that answers "Sorry, I encountered an error: 401 ..." and exits 0 failed.
 * A row with no type says only that; the built-in rows then type the
 * message.  "jsonl" is one event a line, "json" one object; "text" reads
 * no JSON: the rows decide over its stderr and its stdout, as for any
 * known agent.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "judge.h"

enum role { D_IS_ERROR, D_ERROR, D_STATUS, D_SESSION, D_IN, D_OUT, D_CREAD,
	D_CWRITE, D_COST, D_TURNS, D_TOOL_NAME, D_TOOL_INPUT, D_TOOL_ID,
	D_TOOL_RESULT, D_TOOL_RESULT_ID, D_TOOL_IS_ERROR, D_ROLES };

#define D_RESULT	D_ROLES		/* the K_TEXT role: no slot */
#define DESCRIBED_MAX	16		/* clients a config may describe */
#define COND_SLOT0	(D_ROLES + 1)	/* slots past the roles' own (and
					 * D_RESULT, the one that has none) */

/* How one role is picked beyond its path. */
struct pick {
	int when;		/* slot of the when path's value, or -1 */
	const char *const *when_eq;	/* NULL-terminated */
	char *elem;		/* a[...]: the array a's path, or NULL */
	int sel;		/* a[k=v]: slot of a.k, or -1 */
	char *sel_value;	/* v */
	int pend;		/* slot the element's value is read into
				 * (the role's own kept for the pick) */
	const char *const *flag_eq;	/* is_error's equals, or NULL */
};

/* What described.c keeps beside a described client's struct agent. */
struct extra {
	struct pick pick[D_ROLES + 1];
	char **strings;			/* the equals lists' copies */
	size_t n_strings;
	const char **eq_lists;		/* NULL-terminated lists, in one
					 * block */
	regex_t *detect;		/* rows with no type */
	size_t n_detect;
	char **detect_re;
};

static struct agent *described[DESCRIBED_MAX];
static struct extra extras[DESCRIBED_MAX];
static const char *const no_packages[] = { NULL };
static size_t n_described;

static struct extra *
extra_of(const struct agent *a)
{
	size_t i;

	for (i = 0; i < n_described; i++)
		if (described[i] == a)
			return &extras[i];
	return NULL;
}

static int
in_list(const char *s, const char *const *list)
{
	for (; s != NULL && list != NULL && *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

/* Whether role counts in this event (its when condition holds). */
static int
when_ok(const struct agent_run *r, const struct pick *p)
{
	return p->when < 0 || in_list(sv(r, p->when), p->when_eq);
}

/* The role's value when it counts, else NULL. */
static const char *
role_sv(const struct agent_run *r, const struct extra *x, int role)
{
	return when_ok(r, &x->pick[role]) ? sv(r, role) : NULL;
}

static int
role_set(const struct agent_run *r, const struct extra *x, int role)
{
	return when_ok(r, &x->pick[role]) && r->slot[role].set;
}

/* is_error: 1 set, 0 not, -1 not in this event.  A boolean, or a string
 * flag (is_error: {"path", "equals"}). */
static int
flag(const struct agent_run *r, const struct extra *x, int role)
{
	if (!role_set(r, x, role))
		return -1;
	if (x->pick[role].flag_eq != NULL)
		return in_list(sv(r, role), x->pick[role].flag_eq);
	return sb(r, role);
}

static void
usage(struct agent_run *r, int total)
{
	struct agent_usage u;

	usage_unknown(&u);
	u.input_tokens = sn_count(r, D_IN);
	u.output_tokens = sn_count(r, D_OUT);
	u.cache_read_tokens = sn_count(r, D_CREAD);
	u.cache_write_tokens = sn_count(r, D_CWRITE);
	u.cost_usd = sn_cost(r, D_COST);
	u.turns = sn_count(r, D_TURNS);
	if (u.input_tokens < 0 && u.output_tokens < 0 && u.cost_usd < 0 &&
	    u.turns < 0)
		return;
	if (total)
		run_total_usage(r, &u);
	else
		run_step_usage(r, NULL, &u);
}

/* The first line of p[0..n) one of the description's own rows matches
 * (typed, or a detection row), into line; 1 if any. */
static int
own_row(struct agent_run *r, const struct extra *x, const char *p, size_t n,
    char *line, size_t len)
{
	const char *e, *end = p + n, *type;
	enum cb_class cls;
	size_t i, k;

	for (; p < end; p = e + 1) {
		if ((e = memchr(p, '\n', (size_t)(end - p))) == NULL)
			e = end;
		k = (size_t)(e - p) < len - 1 ? (size_t)(e - p) : len - 1;
		memcpy(line, p, k);
		line[k] = '\0';
		if (k == 0)
			continue;
		for (i = 0; x != NULL && i < x->n_detect; i++)
			if (regexec(&x->detect[i], line, 0, NULL, 0) == 0)
				return 1;
		if (message_type(r->rules, r->n_rules, line, &cls, &type) != 1)
			continue;
		for (i = 0; i < r->n_rules; i++)
			if (type == r->rules[i].type)
				return 1;
	}
	return 0;
}

/* A tool call whose slots are filled: to the hooks, and the slots cleared
 * for the next. */
static int
tool_call(struct agent_run *r, const struct extra *x)
{
	if (role_sv(r, x, D_TOOL_NAME) == NULL)
		return 0;
	run_progress(r);
	run_tool(r, role_sv(r, x, D_TOOL_ID), sv(r, D_TOOL_NAME),
	    D_TOOL_INPUT);
	slot_clear(r, D_TOOL_NAME);
	slot_clear(r, D_TOOL_INPUT);
	return 1;
}

static int
tool_result(struct agent_run *r, const struct extra *x)
{
	if (!role_set(r, x, D_TOOL_RESULT))
		return 0;
	run_tool_result(r, role_sv(r, x, D_TOOL_RESULT_ID) != NULL ?
	    sv(r, D_TOOL_RESULT_ID) : role_sv(r, x, D_TOOL_ID), D_TOOL_RESULT,
	    flag(r, x, D_TOOL_IS_ERROR) == 1);
	slot_clear(r, D_TOOL_RESULT);
	return 1;
}

static int
event(struct agent_run *r)
{
	const struct extra *x = extra_of(r->a);
	const char *text, *err;
	char line[1024];
	int is_err, result, any, tools = (int)(r->aux & 1);
	size_t picked = (size_t)r->aux >> 1;

	/* the event is over: its picks start again with the next */
	r->aux = 0;
	if (x == NULL)
		return 0;
	err = role_sv(r, x, D_ERROR);
	is_err = flag(r, x, D_IS_ERROR);
	/* a result picked from elements is one only when one matched */
	result = is_err >= 0 || (r->text_seen &&
	    (x->pick[D_RESULT].sel >= 0 ? picked > 0 :
	    when_ok(r, &x->pick[D_RESULT])));
	any = result || tools;
	if (role_sv(r, x, D_SESSION) != NULL) {
		run_session(r, sv(r, D_SESSION));
		any = 1;
	}
	if (tool_call(r, x)) {
		tools = 1;
		any = 1;
	}
	any |= tool_result(r, x);
	usage(r, result);
	if (err != NULL) {
		run_error(r, err, sn_status(r, D_STATUS));
		if (own_row(r, x, err, strlen(err), line, sizeof(line)))
			run_error(r, line, sn_status(r, D_STATUS));
		any = 1;
	}
	if (!result)
		return any;
	text = event_text(r);
	if (is_err == 1) {
		/* a result that only says it failed keeps the error that
		 * came before it; one that carries its error keeps that (set
		 * above, typed by the rows): the text is what the answer got
		 * to, the error what failed */
		if (err == NULL && (*text != '\0' || !r->failed))
			run_error(r, *text != '\0' ? text : "is_error",
			    sn_status(r, D_STATUS));
	}
	else if (err == NULL) {
		/* the client's own words in its result: its rows say */
		if (own_row(r, x, text, strlen(text), line, sizeof(line)))
			run_error(r, line, sn_status(r, D_STATUS));
		else {
			run_ok(r);
			run_event_text(r);
		}
	}
	/* a message with tool calls is a step of the session, not its end */
	if (!tools)
		run_final(r);
	return 1;
}

/*
 * An object ended inside an event: the element of an array a role picks
 * from (a[k=v].b keeps b when k is v; a[].b hands each tool call on).
 * r->aux holds, in bit 0, that the event had tool calls, and above it
 * how much of the event's text is the result picked so far: the text
 * past that is the element's own, kept when it matches, else dropped.
 */
static void
object(struct agent_run *r, const char *path)
{
	const struct extra *x = extra_of(r->a);
	const struct pick *p;
	size_t kept;
	int i, match;

	if (x == NULL)
		return;
	for (i = 0; i <= D_ROLES; i++) {
		p = &x->pick[i];
		if (p->elem == NULL || strcmp(p->elem, path) != 0)
			continue;
		if (p->sel < 0) {
			/* a[].b: each element of a is a tool call or result */
			if (i == D_TOOL_NAME && tool_call(r, x))
				r->aux |= 1;
			else if (i == D_TOOL_RESULT)
				tool_result(r, x);
			continue;
		}
		match = in_list(sv(r, p->sel), (const char *const[]){
		    p->sel_value, NULL });
		if (i == D_RESULT) {
			/* the element's text follows what was kept */
			kept = (size_t)(r->aux >> 1);
			if (kept > r->tlen)
				kept = 0;
			if (match) {
				memmove(r->text, r->text + kept, r->tlen - kept);
				r->tlen -= kept;
				kept = r->tlen;
			} else
				r->tlen = kept;
			r->aux = (long)((kept << 1) | (size_t)(r->aux & 1));
		} else if (match && r->slot[p->pend].set) {
			memcpy(r->slot[i].buf, r->slot[p->pend].buf,
			    r->slot[p->pend].len + 1);
			r->slot[i].len = r->slot[p->pend].len;
			r->slot[i].cut = r->slot[p->pend].cut;
			r->slot[i].num = r->slot[p->pend].num;
			r->slot[i].digest = r->slot[p->pend].digest;
			r->slot[i].kind = r->slot[p->pend].kind;
			r->slot[i].set = 1;
		}
		slot_clear(r, p->sel);
		if (p->pend != i)
			slot_clear(r, p->pend);
	}
}

/*
 * format text: a client that exits 0 after its own error (aider does,
 * with --message) failed all the same when one of the description's rows
 * matches a line of its stderr or of its stdout; the rows know the
 * client's words, the exit status does not.
 */
static void
finish(struct agent_run *r, const struct agent_end *e)
{
	const struct extra *x = extra_of(r->a);
	char line[1024];

	if (e->exit_code != 0 || r->failed ||
	    (r->n_rules == 0 && (x == NULL || x->n_detect == 0)))
		return;
	if ((e->err != NULL && own_row(r, x, e->err, e->err_len, line,
	    sizeof(line))) || (r->own != NULL && own_row(r, x, r->own,
	    r->own_len, line, sizeof(line))))
		run_error(r, line, 0);
}

/* The result text is the answer, streamed to the status scanner as it is
 * read when nothing is left to decide: no condition, or one the event
 * met before the text began. */
static int
answer(const struct agent_run *r)
{
	const struct extra *x = extra_of(r->a);

	if (x == NULL || x->pick[D_RESULT].sel >= 0)
		return 0;
	return x->pick[D_RESULT].when < 0 ||
	    in_list(sv(r, x->pick[D_RESULT].when),
	    x->pick[D_RESULT].when_eq);
}

static char *
dup_or_null(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

static void
extra_free(struct extra *x)
{
	size_t i;

	for (i = 0; i <= D_ROLES; i++) {
		free(x->pick[i].elem);
		free(x->pick[i].sel_value);
	}
	for (i = 0; i < x->n_strings; i++)
		free(x->strings[i]);
	free(x->strings);
	free(x->eq_lists);
	for (i = 0; i < x->n_detect; i++) {
		regfree(&x->detect[i]);
		free(x->detect_re[i]);
	}
	free(x->detect);
	free(x->detect_re);
	memset(x, 0, sizeof(*x));
}

static void
described_free(struct agent *a)
{
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->n_fields; i++)
		free((char *)a->fields[i].path);
	free((void *)a->fields);
	for (i = 0; a->commands != NULL && a->commands[i] != NULL; i++)
		free((char *)a->commands[i]);
	free((void *)a->commands);
	for (i = 0; i < a->n_rules; i++) {
		free((char *)a->rules[i].re);
		free((char *)a->rules[i].type);
	}
	free((void *)a->rules);
	free((char *)a->name);
	free(a);
}

/* The build of one description: its fields as they are added. */
struct build {
	struct field *f;
	size_t n, cap;
	int next_slot;		/* the next free slot past the roles' */
	struct extra *x;
	size_t n_lists;		/* lists used of x->eq_lists */
	char *err;
	size_t errlen;
	const char *name;
};

/* The slot of a field at path of kind (added when new; a path already
 * there is shared when the kind agrees, e.g. two roles' when). -1 with
 * the message when the slots run out or the kinds clash. */
static int
field(struct build *b, const char *path, enum slot_kind kind, int slot)
{
	size_t k;

	for (k = 0; k < b->n; k++)
		if (strcmp(b->f[k].path, path) == 0) {
			if (slot >= 0 || b->f[k].kind != kind ||
			    b->f[k].slot < COND_SLOT0) {
				snprintf(b->err, b->errlen, "agent '%s': the "
				    "path '%s' is given twice", b->name, path);
				return -1;
			}
			return b->f[k].slot;
		}
	if (slot < 0) {
		if (b->next_slot >= NSLOTS) {
			snprintf(b->err, b->errlen, "agent '%s': too many "
			    "conditions (at most %d)", b->name,
			    NSLOTS - COND_SLOT0);
			return -1;
		}
		slot = b->next_slot++;
	}
	if (b->n == b->cap) {
		snprintf(b->err, b->errlen, "agent '%s': too many paths",
		    b->name);
		return -1;
	}
	if ((b->f[b->n].path = strdup(path)) == NULL) {
		snprintf(b->err, b->errlen, "out of memory");
		return -1;
	}
	b->f[b->n].slot = slot == D_RESULT ? -1 : slot;
	b->f[b->n++].kind = kind;
	return slot;
}

/* A copy of a NULL-terminated list of strings, kept in x; NULL for an
 * empty list.  *oom on failure. */
static const char *const *
copy_list(struct build *b, const char *const *l, int *oom)
{
	const char **out;
	size_t n, i;

	for (n = 0; l[n] != NULL; n++)
		;
	if (n == 0)
		return NULL;
	out = &b->x->eq_lists[b->n_lists];
	b->n_lists += n + 1;
	for (i = 0; i < n; i++) {
		if ((b->x->strings[b->x->n_strings] = strdup(l[i])) == NULL) {
			*oom = 1;
			return NULL;
		}
		out[i] = b->x->strings[b->x->n_strings++];
	}
	out[n] = NULL;
	return out;
}

/*
 * One role: its path (brackets taken out: "a[k=v].b" is read at "a.b",
 * its element's k at "a.k"), its pick, its when.  0, or -1 with the
 * message.
 */
static int
add_role(struct build *b, int role, const struct agent_desc_path *d,
    enum slot_kind kind)
{
	struct pick *p = &b->x->pick[role];
	char path[512], sel[512], *o;
	const char *s, *bracket, *eq, *close;
	size_t n;
	int oom = 0;

	p->when = p->sel = -1;
	p->pend = role;
	if (d->path == NULL)
		return 0;
	if (strlen(d->path) >= sizeof(path)) {
		snprintf(b->err, b->errlen, "agent '%s': the path '%s' is too "
		    "long", b->name, d->path);
		return -1;
	}
	/* a[...]: the element path is what comes before the bracket */
	o = path;
	sel[0] = '\0';
	for (s = d->path; *s != '\0';) {
		if (*s != '[') {
			*o++ = *s++;
			continue;
		}
		bracket = s;
		close = strchr(s, ']');
		n = (size_t)(bracket - d->path);
		if (p->elem == NULL && (p->elem = strndup(path,
		    (size_t)(o - path))) == NULL)
			return -1;
		if (bracket[1] != ']') {
			eq = strchr(s, '=');
			snprintf(sel, sizeof(sel), "%.*s%s%.*s",
			    (int)(o - path), path, o > path ? "." : "",
			    (int)(eq - s - 1), s + 1);
			if ((p->sel_value = strndup(eq + 1,
			    (size_t)(close - eq - 1))) == NULL)
				return -1;
		}
		(void)n;
		s = close + 1;
		if (*s == '.' && o == path)
			s++;	/* "[k=v].b": the event itself */
	}
	*o = '\0';
	if (p->sel_value != NULL && p->elem[0] == '\0') {
		/* "[k=v].b": a condition on the event, as when */
		free(p->elem);
		p->elem = NULL;
		if ((p->when = field(b, sel, K_STR, -1)) < 0)
			return -1;
		p->when_eq = copy_list(b, (const char *const[]){ p->sel_value,
		    NULL }, &oom);
	} else if (p->sel_value != NULL) {
		if ((p->sel = field(b, sel, K_STR, -1)) < 0)
			return -1;
		/* the result's text is kept or dropped in the text buffer;
		 * any other value is read apart and kept when it matches */
		if (role != D_RESULT && (p->pend = field(b, path, kind,
		    -1)) < 0)
			return -1;
	}
	if (p->pend == role && field(b, path, kind, role) < 0)
		return -1;
	if (d->when != NULL) {
		if (p->when >= 0) {
			snprintf(b->err, b->errlen, "agent '%s': '%s' picks "
			    "by a value and has a when too", b->name, d->path);
			return -1;
		}
		if ((p->when = field(b, d->when, K_STR, -1)) < 0)
			return -1;
		p->when_eq = copy_list(b, d->when_equals, &oom);
	}
	if (d->equals[0] != NULL)
		p->flag_eq = copy_list(b, d->equals, &oom);
	if (oom) {
		snprintf(b->err, b->errlen, "out of memory");
		return -1;
	}
	return 0;
}

int
agent_describe(const struct agent_desc *d, char *err, size_t errlen)
{
	const struct agent_desc_path *path[D_ROLES + 1];
	static const enum slot_kind kind[D_ROLES + 1] = {
		K_BOOL, K_STR, K_NUM, K_STR, K_NUM, K_NUM, K_NUM, K_NUM, K_NUM,
		K_NUM, K_STR, K_RAW, K_STR, K_RAW, K_STR, K_BOOL, K_TEXT
	};
	struct agent *a = NULL;
	struct agent_rule *rules = NULL;
	struct extra x;
	struct build b;
	const char **cmds = NULL;
	char why[CB_WHYLEN];
	size_t i, k, slot, n_typed = 0, n_lists = 0;
	enum slot_kind kd;

	memset(&x, 0, sizeof(x));
	memset(&b, 0, sizeof(b));
	if (errlen > 0)
		err[0] = '\0';
	/* A later file's description of a name replaces the earlier (the
	 * work tree's after the user's); a client cbexec knows stays. */
	for (slot = 0; slot < n_described; slot++)
		if (strcmp(described[slot]->name, d->name) == 0)
			break;
	if (slot == n_described && agent_by_name(d->name) != NULL) {
		snprintf(err, errlen, "'%s' is a client cbexec knows: give "
		    "the description another name", d->name);
		return -1;
	}
	if (slot == DESCRIBED_MAX) {
		snprintf(err, errlen, "at most %d agents may be described",
		    DESCRIBED_MAX);
		return -1;
	}
	path[D_IS_ERROR] = &d->is_error;
	path[D_ERROR] = &d->error;
	path[D_STATUS] = &d->status;
	path[D_SESSION] = &d->session;
	path[D_IN] = &d->usage.input;
	path[D_OUT] = &d->usage.output;
	path[D_CREAD] = &d->usage.cache_read;
	path[D_CWRITE] = &d->usage.cache_write;
	path[D_COST] = &d->usage.cost;
	path[D_TURNS] = &d->usage.turns;
	path[D_TOOL_NAME] = &d->tool.name;
	path[D_TOOL_INPUT] = &d->tool.input;
	path[D_TOOL_ID] = &d->tool.id;
	path[D_TOOL_RESULT] = &d->tool.result;
	path[D_TOOL_RESULT_ID] = &d->tool.result_id;
	path[D_TOOL_IS_ERROR] = &d->tool.is_error;
	path[D_ROLES] = &d->result;
	for (i = 0; i <= D_ROLES; i++)
		n_lists += 2 * (AGENT_DESC_EQUALS + 1) + 1;
	b.cap = NSLOTS + D_ROLES + 1;
	b.err = err;
	b.errlen = errlen;
	b.name = d->name;
	b.x = &x;
	b.next_slot = COND_SLOT0;
	if ((a = calloc(1, sizeof(*a))) == NULL ||
	    (b.f = calloc(b.cap, sizeof(*b.f))) == NULL ||
	    (x.eq_lists = calloc(n_lists, sizeof(*x.eq_lists))) == NULL ||
	    (x.strings = calloc(n_lists, sizeof(*x.strings))) == NULL ||
	    (cmds = calloc(d->n_commands + 1, sizeof(*cmds))) == NULL ||
	    (d->n_rules > 0 && ((rules = calloc(d->n_rules,
	    sizeof(*rules))) == NULL || (x.detect = calloc(d->n_rules,
	    sizeof(*x.detect))) == NULL || (x.detect_re = calloc(d->n_rules,
	    sizeof(*x.detect_re))) == NULL)))
		goto oom;
	a->fields = b.f;
	a->commands = (const char *const *)cmds;
	a->rules = rules;
	/* text: no field, so no line is ever the client's JSON */
	for (i = 0; d->format != AGENT_TEXT && i <= D_ROLES; i++) {
		kd = kind[i];
		/* a string flag is read as a string */
		if (path[i]->equals[0] != NULL)
			kd = K_STR;
		if (add_role(&b, (int)i, path[i], kd) == -1) {
			if (err[0] == '\0')
				snprintf(err, errlen, "out of memory");
			goto fail;
		}
		a->n_fields = b.n;
	}
	for (i = 0; d->format == AGENT_TEXT && i <= D_ROLES; i++) {
		x.pick[i].when = x.pick[i].sel = -1;
		x.pick[i].pend = (int)i;
	}
	for (i = 0; i < d->n_commands; i++)
		if ((cmds[i] = strdup(d->commands[i])) == NULL)
			goto oom;
	for (i = 0; i < d->n_rules; i++) {
		/* a row that would not compile is refused here, named, not
		 * dropped at the run */
		if (d->rules[i].type == NULL) {
			if ((x.detect_re[x.n_detect] = strdup(
			    d->rules[i].match)) == NULL)
				goto oom;
			if (regcomp(&x.detect[x.n_detect], d->rules[i].match,
			    REG_EXTENDED | REG_ICASE | REG_NEWLINE |
			    REG_NOSUB) != 0) {
				free(x.detect_re[x.n_detect]);
				snprintf(err, errlen, "rules[%zu]: invalid "
				    "regular expression '%s'", i,
				    d->rules[i].match);
				goto fail;
			}
			x.n_detect++;
			continue;
		}
		{
			struct rule probe;

			if (rule_init(&probe, d->rules[i].match, RULE_STDERR,
			    NULL, 0, d->rules[i].cls, d->rules[i].type, why,
			    sizeof(why)) == -1) {
				snprintf(err, errlen, "rules[%zu]: %s", i, why);
				goto fail;
			}
			rule_free(&probe);
		}
		k = n_typed;
		rules[k].cls = d->rules[i].cls;
		if ((rules[k].re = dup_or_null(d->rules[i].match)) == NULL ||
		    (rules[k].type = dup_or_null(d->rules[i].type)) == NULL)
			goto oom;
		a->n_rules = ++n_typed;
	}
	if ((a->name = strdup(d->name)) == NULL)
		goto oom;
	a->packages = no_packages;
	a->event = event;
	a->object = object;
	a->answer = answer;
	if (d->format == AGENT_TEXT)
		a->finish = finish;
	if (slot < n_described) {
		described_free(described[slot]);
		extra_free(&extras[slot]);
	} else
		n_described++;
	described[slot] = a;
	extras[slot] = x;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	extra_free(&x);
	if (a != NULL && a->fields == NULL)
		free(b.f);	/* not yet the row's */
	else if (a != NULL)
		a->n_fields = b.n;	/* every path made so far is freed */
	else
		free(b.f);
	described_free(a);
	return -1;
}

const struct agent *
agent_described(size_t i)
{
	return i < n_described ? described[i] : NULL;
}

void
agent_forget(void)
{
	while (n_described > 0) {
		n_described--;
		described_free(described[n_described]);
		extra_free(&extras[n_described]);
	}
}
