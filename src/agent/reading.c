/* SPDX-License-Identifier: ISC */
/*
 * One run's reading (agent.h): the tokenizer (jstream.c) over stdout, the
 * adapter's fields filled into slots of the current event, the status
 * scanner over the assistant's own text, and the findings the adapters
 * report with the helpers of adapter.h, turned into an agent_result at the
 * end.
 *
 * A field is looked up by its path when its value starts, so a value no
 * adapter wants is passed over by the tokenizer without a copy.  The
 * status scanner here sees only what an adapter hands it (answers, not
 * prompts or tool output), which is what makes a structured format's
 * status block the assistant's own.  An answer whose event says so before
 * it goes to the scanner as it is written, escapes and all (the scanner
 * reads a block inside a JSON string); Gemini's arrives in deltas split
 * anywhere, and the scanner, fed the deltas in order, sees the block
 * whole.  Other text (a result, which says what it is only after it) is
 * unescaped and kept, its last 64 KiB, until its event ends.  Everything
 * a run keeps is fixed in size: the slots, that tail, the scanner's
 * 64 KiB block.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"

static void usage_live(struct agent_run *r, int total);

/* The adapters' rows and an index of their fields by path, made once per
 * process: every value of the stream looks its path up. */
#define FIELD_HASH	128	/* more than twice the fields of any adapter */

static struct {
	const struct agent *a;
	struct rule *r;
	size_t n;
	short index[FIELD_HASH];	/* field + 1, 0 for none */
} compiled[32];	/* the nine, and the clients a config describes */

/* The tokenizer's hash of a path, key by key. */
static unsigned
path_hash(const char *s)
{
	unsigned h = JS_HASH0;
	size_t n;

	for (;;) {
		n = strcspn(s, ".");
		h = js_hash_key(h, s, n);
		if (s[n] == '\0')
			return h;
		s += n + 1;
	}
}

/* The field at path, whose hash the tokenizer made as it read it. */
static const struct field *
field_at(const struct agent_run *r, const char *path, unsigned hash)
{
	unsigned h;
	int i;

	for (h = hash & (FIELD_HASH - 1); (i = r->index[h]) != 0;
	    h = (h + 1) & (FIELD_HASH - 1))
		if (strcmp(r->a->fields[i - 1].path, path) == 0)
			return &r->a->fields[i - 1];
	return NULL;
}

static enum js_want
on_want(void *arg, const char *path, unsigned hash, int str)
{
	struct agent_run *r = arg;
	const struct field *f = field_at(r, path, hash);

	r->cur = f;
	if (f == NULL)
		return JS_SKIP;
	if (f->kind == K_RAW)
		return JS_RAW;
	if (!str)
		return JS_SKIP;
	if (f->kind == K_TEXT) {
		r->text_seen = 1;
		/* The answer, by what its event said before it, goes to the
		 * status scanner as it is written: the scanner reads blocks
		 * inside JSON strings, and nothing is unescaped or copied. */
		r->streamed = r->a->answer != NULL && r->a->answer(r);
		return r->streamed ? JS_ESCAPED : JS_CHUNKS;
	}
	r->slot[f->slot].len = 0;
	r->slot[f->slot].cut = 0;
	return JS_CHUNKS;
}

/* Keep the tail of the event's text: when full, the older half goes. */
static void
text_add(struct agent_run *r, const char *p, size_t n)
{
	if (n >= TEXT_MAX) {
		memcpy(r->text, p + n - TEXT_MAX, TEXT_MAX);
		r->tlen = TEXT_MAX;
		return;
	}
	if (r->tlen + n > TEXT_MAX) {
		memmove(r->text, r->text + TEXT_MAX / 2, r->tlen - TEXT_MAX / 2);
		r->tlen -= TEXT_MAX / 2;
		if (r->tlen + n > TEXT_MAX)
			r->tlen = 0;
	}
	memcpy(r->text + r->tlen, p, n);
	r->tlen += n;
}

static void
on_chunk(void *arg, const char *path, const char *p, size_t n)
{
	struct agent_run *r = arg;
	struct slot *s;
	size_t room;

	if (r->cur == NULL)
		return;
	if (r->cur->kind == K_TEXT) {
		if (r->streamed) {
			/* only its head is kept (escaped), for an error that
			 * comes as an answer */
			status_scanner_feed(r->sc, p, n);
			if (r->tlen < HEAD_MAX)
				text_add(r, p, n < HEAD_MAX - r->tlen ? n :
				    HEAD_MAX - r->tlen);
			return;
		}
		text_add(r, p, n);
		return;
	}
	s = &r->slot[r->cur->slot];
	room = SLOT_MAX - s->len;
	if (n > room) {
		n = room;
		s->cut = 1;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

static void
on_string_end(void *arg, const char *path)
{
	struct agent_run *r = arg;
	struct slot *s;

	if (r->cur == NULL || r->cur->kind == K_TEXT)
		return;
	s = &r->slot[r->cur->slot];
	s->buf[s->len] = '\0';
	s->kind = r->cur->kind;
	s->set = 1;
	/* a number written as a string ("code": "429") */
	if (s->kind == K_NUM)
		s->num = strtod(s->buf, NULL);
}

static void
on_scalar(void *arg, const char *path, const char *v, size_t n)
{
	struct agent_run *r = arg;
	const struct field *f = r->cur;	/* looked up as the value began */
	struct slot *s;
	char *end;

	/* a number where text or an object was expected fills nothing */
	if (f == NULL || f->kind == K_TEXT || f->kind == K_RAW ||
	    n > SLOT_MAX || strcmp(v, "null") == 0)
		return;
	s = &r->slot[f->slot];
	switch (f->kind) {
	case K_NUM:
		s->num = strtod(v, &end);
		if (end == v)
			return;
		break;
	case K_BOOL:
		if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
			return;
		s->num = v[0] == 't';
		break;
	case K_STR:
		break;
	default:
		return;
	}
	memcpy(s->buf, v, n);
	s->buf[n] = '\0';
	s->len = n;
	s->cut = 0;
	s->kind = f->kind;
	s->set = 1;
}

static void
on_raw(void *arg, const char *path, const char *p, size_t n, int truncated,
    unsigned long long digest)
{
	struct agent_run *r = arg;
	const struct field *f = field_at(r, path, path_hash(path));
	struct slot *s;

	if (f == NULL || f->kind != K_RAW)
		return;
	s = &r->slot[f->slot];
	if (n > SLOT_MAX) {
		n = SLOT_MAX;
		truncated = 1;
	}
	memcpy(s->buf, p, n);
	s->buf[n] = '\0';
	s->len = n;
	s->cut = truncated;
	s->digest = digest;
	s->kind = K_RAW;
	s->set = 1;
}

static void
on_object_end(void *arg, const char *path)
{
	struct agent_run *r = arg;

	if (r->a->object != NULL)
		r->a->object(r, path);
}

static void
on_event_begin(void *arg)
{
	struct agent_run *r = arg;
	int i;

	for (i = 0; i < NSLOTS; i++)
		r->slot[i].set = 0;
	r->tlen = 0;
	r->streamed = 0;
	r->text_seen = 0;
	if (r->hooks.event != NULL)
		r->hooks.event(r->hooks.arg);
}

static void
on_event_end(void *arg, int complete)
{
	struct agent_run *r = arg;

	if (complete && r->a->event(r))
		r->json = 1;
}

/* Keep the tail of the lines that were not JSON: when full, the older
 * half goes. */
static void
own_add(struct agent_run *r, const char *p, size_t n)
{
	if (n >= OWN_MAX) {
		p += n - OWN_MAX;
		n = OWN_MAX;
		r->own_len = 0;
	} else if (r->own_len + n > OWN_MAX) {
		memmove(r->own, r->own + OWN_MAX / 2, r->own_len - OWN_MAX / 2);
		r->own_len -= OWN_MAX / 2;
		if (r->own_len + n > OWN_MAX)
			r->own_len = 0;
	}
	memcpy(r->own + r->own_len, p, n);
	r->own_len += n;
}

static void
on_text(void *arg, const char *p, size_t n)
{
	struct agent_run *r = arg;

	if (!r->reading_err)
		own_add(r, p, n);
	if (r->hooks.event != NULL)
		r->hooks.event(r->hooks.arg);
}

static const struct jstream_ops ops = {
	on_want, on_chunk, on_string_end, on_scalar, on_raw, on_object_end,
	on_event_begin, on_event_end, on_text
};

/* The adapter's own rows and its field index, made at its first run. */
static int
compile_rules(struct agent_run *r)
{
	const struct agent *a = r->a;
	char err[CB_ERRLEN];
	size_t i, k;
	unsigned h;

	for (k = 0; k < NELEM(compiled) && compiled[k].a != NULL; k++)
		if (compiled[k].a == a)
			goto done;
	if (k == NELEM(compiled) || 2 * a->n_fields > FIELD_HASH)
		return -1;
	for (i = 0; i < a->n_fields; i++) {
		for (h = path_hash(a->fields[i].path) & (FIELD_HASH - 1);
		    compiled[k].index[h];
		    h = (h + 1) & (FIELD_HASH - 1))
			;
		compiled[k].index[h] = (short)(i + 1);
	}
	if (a->n_rules > 0 &&
	    (compiled[k].r = calloc(a->n_rules, sizeof(struct rule))) == NULL)
		return -1;
	for (i = 0; i < a->n_rules; i++)
		if (rule_init(&compiled[k].r[i], a->rules[i].re, RULE_STDERR |
		    RULE_STDOUT, NULL, 0, a->rules[i].cls, a->rules[i].type,
		    err, sizeof(err)) == -1) {
			while (i-- > 0)
				rule_free(&compiled[k].r[i]);
			free(compiled[k].r);
			compiled[k].r = NULL;
			return -1;
		}
	compiled[k].n = a->n_rules;
	compiled[k].a = a;
done:
	r->rules = compiled[k].r;
	r->n_rules = compiled[k].n;
	r->index = compiled[k].index;
	return 0;
}

struct agent_run *
agent_run_new(const struct agent *a, const struct agent_hooks *hooks)
{
	struct agent_run *r;
	int i;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	/* not calloc: a page is touched only by a slot that fills it */
	if ((r->bufs = malloc(NSLOTS * (SLOT_MAX + 1))) == NULL) {
		free(r);
		return NULL;
	}
	for (i = 0; i < NSLOTS; i++)
		r->slot[i].buf = r->bufs + i * (SLOT_MAX + 1);
	r->a = a;
	if (hooks != NULL)
		r->hooks = *hooks;
	usage_unknown(&r->usage);
	usage_unknown(&r->done);
	usage_unknown(&r->step);
	usage_unknown(&r->final);
	if ((r->text = malloc(TEXT_MAX + 1)) == NULL ||
	    (r->own = malloc(OWN_MAX)) == NULL ||
	    (r->sc = status_scanner_new()) == NULL || compile_rules(r) == -1) {
		agent_run_free(r);
		return NULL;
	}
	jstream_init(&r->js, &ops, r);
	return r;
}

void
agent_feed(struct agent_run *r, const char *p, size_t n)
{
	jstream_feed(&r->js, p, n);
}

void
run_read(struct agent_run *r, const char *p, size_t n)
{
	struct jstream js;
	int json = r->json;

	jstream_init(&js, &ops, r);
	r->reading_err = 1;
	jstream_feed(&js, p, n);
	jstream_end(&js);
	r->reading_err = 0;
	/* stderr says nothing of where the status block is */
	r->json = json;
}

int
agent_finish(struct agent_run *r, const struct agent_end *e,
    struct agent_result *res)
{
	memset(res, 0, sizeof(*res));
	status_init(&res->status);
	jstream_end(&r->js);
	if (r->a->finish != NULL)
		r->a->finish(r, e);
	/* The run ended on a question nobody could answer: blocked. */
	if (r->asked[0] != '\0' && !r->failed && !e->timed_out) {
		snprintf(r->retry_msg, sizeof(r->retry_msg), "the run ended "
		    "on a question (%s) that nobody can answer in a headless "
		    "run", r->asked);
		run_client_stop(r, "blocked", CB_CLASS_RECOVERABLE,
		    r->retry_msg);
		r->retry_msg[0] = '\0';
	}
	/* A structured stream that stopped with no final result and exit 0
	 * did not finish its work (SPEC §10): not a success. */
	if (r->json && !r->finished && !r->failed && !e->timed_out &&
	    e->exit_code == 0) {
		run_error(r, "the client exited without its final result", 0);
		if (!r->client_stop) {
			r->type = "unknown";
			r->cls = CB_CLASS_RECOVERABLE;
		}
	}
	res->v.failed = r->failed;
	res->v.message = r->failed && r->msg[0] != '\0' ? r->msg : NULL;
	res->v.http_status = r->http;
	res->v.type = r->type;
	res->v.cls = r->cls;
	res->v.retrying = r->retrying;
	res->v.retry_type = r->retry_type;
	res->v.retry_message = r->retry_msg[0] != '\0' ? r->retry_msg : NULL;
	res->v.rules = r->rules;
	res->v.n_rules = r->n_rules;
	res->v.structured = r->json;
	res->v.own = r->own;
	res->v.own_len = r->own_len;
	res->hint = r->hint;
	res->session_id = r->session[0] != '\0' ? r->session : NULL;
	res->status_own = r->json;
	status_scanner_result(r->sc, &res->status);
	res->usage = r->usage;
	res->note = r->note[0] != '\0' ? r->note : NULL;
	return 0;
}

void
agent_run_free(struct agent_run *r)
{
	if (r == NULL)
		return;
	status_scanner_free(r->sc);
	free(r->own);
	free(r->text);
	free(r->bufs);
	free(r);
}

/* The helpers of adapter.h. */

const char *
sv(const struct agent_run *r, int slot)
{
	return r->slot[slot].set ? r->slot[slot].buf : NULL;
}

int
sb(const struct agent_run *r, int slot)
{
	return r->slot[slot].set && r->slot[slot].kind == K_BOOL ?
	    (int)r->slot[slot].num : -1;
}

double
sn(const struct agent_run *r, int slot, double dflt)
{
	return r->slot[slot].set && r->slot[slot].kind == K_NUM ?
	    r->slot[slot].num : dflt;
}

/* A figure of the stream within [0, max]: -1 when not a finite number
 * >= 0, max (noted) above it. */
static double
bounded(struct agent_run *r, int slot, double max)
{
	double v = sn(r, slot, -1);

	if (!(v >= 0 && v <= DBL_MAX))	/* NaN, infinite, negative */
		return -1;
	if (v > max) {
		if (r->note[0] == '\0')
			snprintf(r->note, sizeof(r->note), "a figure of %g "
			    "(%s) is past what a state holds: counted as %g",
			    v, r->slot[slot].buf, max);
		return max;
	}
	return v;
}

long
sn_count(struct agent_run *r, int slot)
{
	return (long)bounded(r, slot, (double)CB_LONG_MAX);
}

double
sn_cost(struct agent_run *r, int slot)
{
	return bounded(r, slot, CB_COST_MAX);
}

int
sn_status(const struct agent_run *r, int slot)
{
	double v = sn(r, slot, 0);

	return v >= 100 && v <= 599 && v == (int)v ? (int)v : 0;
}

int
is(const struct agent_run *r, int slot, const char *s)
{
	return r->slot[slot].set && strcmp(r->slot[slot].buf, s) == 0;
}

void
slot_clear(struct agent_run *r, int slot)
{
	r->slot[slot].set = 0;
}

/* msg into dst[MSG_LEN] on one line: whitespace runs folded, trimmed, cut
 * at a character boundary. */
static void
one_line(char *dst, const char *msg)
{
	size_t o = 0;
	int space = 0;

	for (; *msg != '\0' && o < MSG_LEN - 2; msg++) {
		if (*msg == ' ' || (*msg >= '\t' && *msg <= '\r')) {
			space = o > 0;
			continue;
		}
		if (space)
			dst[o++] = ' ';
		space = 0;
		dst[o++] = *msg;
	}
	while (o > 0 && *msg != '\0' && ((unsigned char)dst[o] & 0xC0) == 0x80)
		o--;
	dst[o] = '\0';
}

void
run_error(struct agent_run *r, const char *msg, int http)
{
	if (r->client_stop)
		return;
	r->failed = 1;
	one_line(r->msg, msg != NULL ? msg : "");
	if (http > 0)
		r->http = http;
	r->retrying = 0;
}

void
run_ok(struct agent_run *r)
{
	if (r->client_stop)
		return;
	r->failed = 0;
	r->msg[0] = '\0';
	r->http = 0;
	r->type = NULL;
	r->retrying = 0;
}

void
run_final(struct agent_run *r)
{
	if (r->reading_err)
		return;
	r->finished = 1;
	if (r->hooks.final != NULL)
		r->hooks.final(r->hooks.arg);
}

void
run_model_call(struct agent_run *r)
{
	r->model_calls++;
	usage_live(r, 0);
}

void
run_client_stop(struct agent_run *r, const char *type, enum cb_class cls,
    const char *msg)
{
	if (r->client_stop)
		return;
	r->failed = 1;
	one_line(r->msg, msg != NULL ? msg : type);
	r->type = type;
	r->cls = cls;
	r->retrying = 0;
	r->client_stop = 1;
}

void
run_retrying(struct agent_run *r, const char *msg, const char *type)
{
	enum cb_class cls = CB_CLASS_TRANSIENT;

	one_line(r->retry_msg, msg);
	if (type == NULL && message_type(r->rules, r->n_rules, r->retry_msg,
	    &cls, &type) != 1)
		type = NULL;
	r->retrying = type != NULL && cls == CB_CLASS_TRANSIENT;
	r->retry_type = r->retrying ? type : NULL;
}

void
run_progress(struct agent_run *r)
{
	r->retrying = 0;
}

void
run_session(struct agent_run *r, const char *id)
{
	if (id == NULL || *id == '\0')
		return;
	/* Handed to the next run: an id, never an option or words. */
	if (!opaque_id(id)) {
		if (r->note[0] == '\0')
			snprintf(r->note, sizeof(r->note), "a session id that "
			    "is not an opaque id ([A-Za-z0-9._:-], at most %d "
			    "bytes, not starting with '-') was dropped",
			    OPAQUE_ID_MAX);
		return;
	}
	snprintf(r->session, sizeof(r->session), "%s", id);
}

const char *
event_text(struct agent_run *r)
{
	/* a head kept as written is unescaped once, when first asked for */
	if (r->streamed == 1) {
		r->tlen = json_unescape(r->text, r->tlen);
		r->streamed = 2;
	}
	r->text[r->tlen] = '\0';
	return r->text;
}

void
run_event_delta(struct agent_run *r)
{
	if (!r->streamed)
		status_scanner_feed(r->sc, r->text, r->tlen);
}

void
run_event_text(struct agent_run *r)
{
	if (r->tlen == 0)
		return;
	run_event_delta(r);
	status_scanner_feed(r->sc, "\n", 1);
}

/* Tools that ask a person, whom a headless run has not got. */
static int
question(const char *name)
{
	static const char *const asks[] = {
		"AskUserQuestion", "ask_user_question", "request_user_input",
		"request_permissions", "question", "ask_user",
	};
	size_t i;

	for (i = 0; i < NELEM(asks); i++)
		if (strcmp(name, asks[i]) == 0)
			return 1;
	return 0;
}

void
run_tool(struct agent_run *r, const char *id, const char *name,
    int input_slot)
{
	const struct slot *in = &r->slot[input_slot];

	if (name == NULL)
		return;
	snprintf(r->tool, sizeof(r->tool), "%s", name);
	snprintf(r->asked, sizeof(r->asked), "%s", question(name) ? name : "");
	if (r->hooks.tool_call == NULL)
		return;
	if (in->set)
		r->hooks.tool_call(r->hooks.arg, id, name, in->buf, in->len,
		    in->cut, in->digest);
	else
		r->hooks.tool_call(r->hooks.arg, id, name, "", 0, 0,
		    JS_DIGEST0);
}

void
run_tool_result(struct agent_run *r, const char *id, int result_slot,
    int is_error)
{
	const struct slot *res = &r->slot[result_slot];

	if (r->hooks.tool_result != NULL)
		r->hooks.tool_result(r->hooks.arg, id, res->set ? res->digest :
		    JS_DIGEST0, is_error);
}

void
run_tool_digest(struct agent_run *r, const char *id, unsigned long long digest,
    int is_error)
{
	if (r->hooks.tool_result != NULL)
		r->hooks.tool_result(r->hooks.arg, id, digest, is_error);
}

void
run_block(struct agent_run *r, const char *path, const struct block_slots *b)
{
	if (strcmp(path, "message.content") != 0)
		return;
	if (is(r, b->type, "tool_use"))
		run_tool(r, sv(r, b->id), sv(r, b->name), b->input);
	else if (is(r, b->type, "tool_result"))
		run_tool_result(r, sv(r, b->result_id), b->result,
		    sb(r, b->is_error) == 1);
	slot_clear(r, b->type);
	slot_clear(r, b->id);
	slot_clear(r, b->name);
	slot_clear(r, b->input);
	slot_clear(r, b->result_id);
	slot_clear(r, b->result);
	slot_clear(r, b->is_error);
}

void
usage_unknown(struct agent_usage *u)
{
	u->input_tokens = u->output_tokens = -1;
	u->cache_read_tokens = u->cache_write_tokens = -1;
	u->cost_usd = -1;
	u->turns = -1;
}

/* a += b, figure by figure, saturating at the state's bounds; a figure b
 * does not give leaves a's. */
static void
usage_add(struct agent_usage *a, const struct agent_usage *b)
{
#define ADD(f) if (b->f >= 0) a->f = (a->f > 0 ? a->f : 0) > \
    CB_LONG_MAX - b->f ? CB_LONG_MAX : (a->f > 0 ? a->f : 0) + b->f
	ADD(input_tokens);
	ADD(output_tokens);
	ADD(cache_read_tokens);
	ADD(cache_write_tokens);
	ADD(turns);
#undef ADD
	if (b->cost_usd >= 0)
		a->cost_usd = (a->cost_usd > 0 ? a->cost_usd : 0) + b->cost_usd >
		    CB_COST_MAX ? CB_COST_MAX : (a->cost_usd > 0 ?
		    a->cost_usd : 0) + b->cost_usd;
}

/* The running totals: the steps before the current one, plus it. */
static void
usage_live(struct agent_run *r, int total)
{
	r->usage = r->done;
	usage_add(&r->usage, &r->step);
	if (r->steps > 0 && r->usage.turns < r->steps)
		r->usage.turns = r->steps;
	if (r->model_calls > 0 && r->usage.turns < r->model_calls)
		r->usage.turns = r->model_calls;
	if (r->final.turns >= 0)
		r->usage.turns = r->final.turns;
#define SET(f) if (r->final.f >= 0) r->usage.f = r->final.f
	SET(input_tokens);
	SET(output_tokens);
	SET(cache_read_tokens);
	SET(cache_write_tokens);
	SET(cost_usd);
#undef SET
	if (r->hooks.usage != NULL)
		r->hooks.usage(r->hooks.arg, &r->usage, total);
}

void
run_step_usage(struct agent_run *r, const char *id, const struct agent_usage *u)
{
	/* A step already counted (Claude Code repeats a message's usage on
	 * each of its content blocks) is replaced, not added again. */
	if (id == NULL || strcmp(id, r->step_id) != 0) {
		usage_add(&r->done, &r->step);
		r->steps++;
		snprintf(r->step_id, sizeof(r->step_id), "%s",
		    id != NULL ? id : "");
	}
	r->step = *u;
	r->step.turns = -1;
	usage_live(r, 0);
}

void
run_total_usage(struct agent_run *r, const struct agent_usage *u)
{
	r->final = *u;
	usage_live(r, 1);
}

long
agent_tokens(const struct agent_usage *u)
{
	long n = -1;

	if (u->input_tokens >= 0)
		n = u->input_tokens;
	if (u->output_tokens >= 0)
		n = (n > 0 ? n : 0) + u->output_tokens;
	if (u->cache_read_tokens >= 0)
		n = (n > 0 ? n : 0) + u->cache_read_tokens;
	if (u->cache_write_tokens >= 0)
		n = (n > 0 ? n : 0) + u->cache_write_tokens;
	return n;
}

int
api_error(struct agent_run *r, const char *s)
{
	const char *p, *q, *end, *rest;
	char buf[MSG_LEN];
	size_t n;
	int http = 0;

	if (s == NULL || (p = strstr(s, "[API Error: ")) == NULL)
		return 0;
	/* Answers may quote one: only a result that is the error, or that
	 * ends with it (after a stream that broke off), counts. */
	for (q = s; q < p && (*q == ' ' || *q == '\n'); q++)
		;
	if ((end = strrchr(p, ']')) == NULL)
		return 0;
	for (rest = end + 1; *rest == ' ' || *rest == '\n'; rest++)
		;
	if (q != p && *rest != '\0' && strncmp(rest, "Possible quota", 14) != 0 &&
	    strncmp(rest, "Please wait", 11) != 0)
		return 0;
	n = (size_t)(end - (p + 1));
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, p + 1, n);
	buf[n] = '\0';
	q = p + 12;
	if (q[0] >= '1' && q[0] <= '5' && q[1] >= '0' && q[1] <= '9' &&
	    q[2] >= '0' && q[2] <= '9' && q[3] == ' ')
		http = (q[0] - '0') * 100 + (q[1] - '0') * 10 + (q[2] - '0');
	run_error(r, buf, http);
	return 1;
}

size_t
last_line_of(const char *s, const char **line)
{
	const char *p, *end, *best = NULL;
	size_t n = 0, k;

	for (p = s; p != NULL && *p != '\0'; p = *end != '\0' ? end + 1 : NULL) {
		if ((end = strchr(p, '\n')) == NULL)
			end = p + strlen(p);
		for (k = 0; p + k < end && (p[k] == ' ' || p[k] == '\t' ||
		    p[k] == '\r'); k++)
			;
		if (p + k < end) {
			best = p;
			n = (size_t)(end - p);
		}
	}
	while (n > 0 && (best[n - 1] == '\r' || best[n - 1] == ' '))
		n--;
	*line = best;
	return n;
}

void
fatal_exit(struct agent_run *r, int code)
{
	static const struct {
		int code;
		const char *type;
		enum cb_class cls;
	} codes[] = {
		{ 41, "auth", CB_CLASS_FATAL },
		{ 42, "input_error", CB_CLASS_FATAL },
		{ 44, "sandbox_error", CB_CLASS_FATAL },
		{ 52, "config_error", CB_CLASS_FATAL },
		{ 53, "turn_limit", CB_CLASS_RECOVERABLE },
		{ 54, "tool_error", CB_CLASS_RECOVERABLE },
		{ 55, "config_error", CB_CLASS_FATAL },
	};
	size_t i;

	for (i = 0; i < NELEM(codes); i++)
		if (codes[i].code == code) {
			r->type = codes[i].type;
			r->cls = codes[i].cls;
		}
}
