/*
 * Failure classification (SPEC §4): what a run did -> class, type, message
 * and the message's fingerprint.  Pure: no I/O, no clock.
 *
 * The tails are first made safe to match: NULs dropped and bad UTF-8
 * replaced (utf8_sanitize), every CR turned into a newline so a progress
 * bar's last frame and a CRLF line end read as lines of their own.  A
 * second copy with ANSI escapes stripped is what the regexes see; stripping
 * never removes a newline, so line i of one copy is line i of the other and
 * the message can be taken raw.  Each pattern runs once over the whole tail
 * (REG_NEWLINE makes ^, $ and . work per line) and the first match is mapped
 * to its line by binary search over the line offsets, so a 64 KiB tail costs
 * one regexec per pattern, not one per line.
 *
 * Decision order: exec failure, user rules, success, timeout, the built-in
 * rows on stderr (first row that matches anywhere wins), the test_failure
 * and build_error summary patterns on stdout of a run that exited non-ok,
 * a signal cbexec did not send, and finally "unknown".
 *
 * normalize_message runs one pass per SPEC step over the message, each
 * pass a left-to-right scan with a matcher that says how many bytes at this
 * position to replace with the step's placeholder.  Character classes are
 * ASCII and written out here, so the fingerprint never depends on locale.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "classify.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MSG_MAX 4096	/* bytes of a message kept, cut at a UTF-8 boundary */

static const char *const class_names[] = {
	"success", "recoverable", "transient", "timeout", "fatal"
};

/*
 * The built-in table, in SPEC order.  Per row: a case-insensitive and a
 * case-sensitive pattern for stderr, an HTTP status to find as a number of
 * its own, and the line-anchored patterns tried on stdout of a failed run.
 * "FAILED" is case-sensitive: folded, it would match "build failed" and
 * every other "failed", leaving the build_error row unreachable.
 */
enum { P_ERR, P_ERR_EXACT, P_OUT, P_OUT_EXACT, P_N };

static const struct builtin {
	const char *type;
	enum cb_class cls;
	int exit_code;		/* exit status that selects the row, or -1 */
	const char *status;	/* "429", "503" or NULL */
	const char *re[P_N];
} builtins[] = {
	{ "command_not_found", CB_CLASS_FATAL, 127, NULL,
	    { "command not found" } },
	{ "permission_denied", CB_CLASS_FATAL, 126, NULL,
	    { "permission denied|EACCES|operation not permitted" } },
	{ "missing_dependency", CB_CLASS_FATAL, -1, NULL,
	    { "ModuleNotFoundError|Cannot find module|"
	      "error while loading shared libraries|No module named|"
	      "package .{0,200} not found" } },
	{ "rate_limited", CB_CLASS_TRANSIENT, -1, "429",
	    { "rate[ _-]?limit|too many requests|usage limit|quota exceeded|"
	      "overloaded" } },
	{ "network", CB_CLASS_TRANSIENT, -1, "503",
	    { "ECONNRESET|ECONNREFUSED|ETIMEDOUT|connection refused|"
	      "connection reset|temporary failure in name resolution|"
	      "could not resolve host|network is unreachable" } },
	{ "syntax_error", CB_CLASS_RECOVERABLE, -1, NULL,
	    { "SyntaxError|syntax error|parse error|unexpected token" } },
	{ "test_failure", CB_CLASS_RECOVERABLE, -1, NULL,
	    { "AssertionError|tests? failed|^not ok|^Result: FAIL|"
	      "^=+ .*[0-9]+ failed|^Tests: +[0-9]+ failed",
	      "(^|[^A-Za-z0-9_])FAILED([^A-Za-z0-9_]|$)",
	      "^Result: FAIL|^=+ .*[0-9]+ failed|^Tests: +[0-9]+ failed|"
	      "^not ok",
	      "^FAILED" } },
	{ "build_error", CB_CLASS_RECOVERABLE, -1, NULL,
	    { "error(\\[[A-Z0-9]+\\])?:|undefined reference|"
	      "make(\\[[0-9]+\\])?: \\*\\*\\*|compilation failed|build failed",
	      NULL,
	      "^make(\\[[0-9]+\\])?: \\*\\*\\*|"
	      "^[^ :]+:[0-9]+(:[0-9]+)?: (fatal )?error:|"
	      "^error(\\[[A-Z0-9]+\\])?:" } },
};

static regex_t builtin_re[NELEM(builtins)][P_N];
static int builtin_ready;

/* A tail made matchable: raw for messages, clean (no ANSI) for regexes. */
struct text {
	char *raw, *clean;
	size_t *raw_off, *clean_off;	/* line starts, n + 1 entries */
	size_t n;
};

/* A growable string; an allocation failure sticks and is seen at the end. */
struct sbuf {
	char *p;
	size_t len, cap;
	int oom;
};

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int
is_alnum(int c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

static int
is_xdigit(int c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static int
is_space(int c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static void
sb_add(struct sbuf *b, const char *s, size_t n)
{
	size_t ncap;
	char *np;

	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		for (ncap = b->cap ? b->cap : 64; ncap < b->len + n + 1;)
			ncap *= 2;
		if ((np = realloc(b->p, ncap)) == NULL) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* The string, or NULL (everything freed) if any append failed. */
static char *
sb_take(struct sbuf *b)
{
	if (b->oom) {
		free(b->p);
		return NULL;
	}
	return b->p != NULL ? b->p : strdup("");
}

const char *
class_name(enum cb_class c)
{
	return (unsigned)c < NELEM(class_names) ? class_names[c] : "?";
}

int
class_from_name(const char *name, enum cb_class *c)
{
	size_t i;

	for (i = 0; name != NULL && i < NELEM(class_names); i++)
		if (strcmp(class_names[i], name) == 0) {
			*c = (enum cb_class)i;
			return 0;
		}
	return -1;
}

int
rule_init(struct rule *r, const char *pattern, int streams,
    const int *exit_codes, size_t n_exit_codes, enum cb_class cls,
    const char *type, char *err, size_t errlen)
{
	char why[256];
	int rc;

	memset(r, 0, sizeof(*r));
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (pattern == NULL || (streams & ~(RULE_STDERR | RULE_STDOUT)) != 0 ||
	    (unsigned)cls >= CB_CLASS_COUNT) {
		snprintf(err, err ? errlen : 0, "rule \"%s\": bad stream or class",
		    pattern ? pattern : "");
		return -1;
	}
	if (type == NULL || *type == '\0' ||
	    strlen(type) >= sizeof(((struct classification *)0)->type)) {
		snprintf(err, err ? errlen : 0,
		    "rule \"%s\": type missing or longer than 63 bytes", pattern);
		return -1;
	}
	if ((rc = regcomp(&r->re, pattern,
	    REG_EXTENDED | REG_ICASE | REG_NEWLINE)) != 0) {
		regerror(rc, &r->re, why, sizeof(why));
		snprintf(err, err ? errlen : 0, "rule \"%s\": %s", pattern, why);
		return -1;
	}
	r->streams = streams ? streams : RULE_STDERR;
	r->cls = cls;
	if ((r->pattern = strdup(pattern)) == NULL ||
	    (r->type = strdup(type)) == NULL)
		goto nomem;
	/* an empty list is read like no list: any failed run */
	if (exit_codes != NULL && n_exit_codes > 0) {
		if ((r->exit_codes = calloc(n_exit_codes, sizeof(int))) == NULL)
			goto nomem;
		memcpy(r->exit_codes, exit_codes, n_exit_codes * sizeof(int));
		r->n_exit_codes = n_exit_codes;
	}
	return 0;
nomem:
	snprintf(err, err ? errlen : 0, "rule \"%s\": %s", pattern,
	    strerror(ENOMEM));
	regfree(&r->re);
	free(r->pattern);
	free(r->type);
	memset(r, 0, sizeof(*r));
	return -1;
}

void
rule_free(struct rule *r)
{
	/* pattern is set only once re compiled, so it says whether to regfree */
	if (r->pattern != NULL)
		regfree(&r->re);
	free(r->pattern);
	free(r->exit_codes);
	free(r->type);
	memset(r, 0, sizeof(*r));
}

char *
utf8_sanitize(const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;
	unsigned char c, lo, hi;
	size_t i, k, need;
	char *out, *o;

	/* the worst case is every byte becoming a 3-byte U+FFFD */
	if (n > (((size_t)-1) - 1) / 3) {
		errno = ENOMEM;
		return NULL;
	}
	if ((out = malloc(n * 3 + 1)) == NULL)
		return NULL;
	for (o = out, i = 0; i < n; i += k) {
		c = s[i];
		k = 1;
		if (c < 0x80) {
			if (c != '\0')
				*o++ = (char)c;
			continue;
		}
		/* Unicode's table of well-formed sequences: no overlongs,
		 * no surrogates, nothing past U+10FFFF */
		lo = 0x80;
		hi = 0xBF;
		need = 0;
		if (c >= 0xC2 && c <= 0xDF)
			need = 1;
		else if (c >= 0xE0 && c <= 0xEF) {
			need = 2;
			if (c == 0xE0)
				lo = 0xA0;
			else if (c == 0xED)
				hi = 0x9F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			need = 3;
			if (c == 0xF0)
				lo = 0x90;
			else if (c == 0xF4)
				hi = 0x8F;
		}
		for (; k <= need && i + k < n; k++) {
			if (s[i + k] < lo || s[i + k] > hi)
				break;
			lo = 0x80;
			hi = 0xBF;
		}
		if (need > 0 && k == need + 1) {
			memcpy(o, s + i, k);
			o += k;
		} else {
			/* one U+FFFD per maximal ill-formed subpart */
			memcpy(o, "\xEF\xBF\xBD", 3);
			o += 3;
		}
	}
	*o = '\0';
	return out;
}

/*
 * Length of the escape sequence at s (s[0] is ESC): CSI, OSC (ended by BEL
 * or ESC \), the nF sequences like ESC ( B, and two-byte ESC x.  A
 * malformed sequence ends before the offending byte and never swallows a
 * newline.
 */
static size_t
esc_len(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i;

	if (n < 2)
		return 1;
	if (u[1] == '[') {
		for (i = 2; i < n && u[i] >= 0x30 && u[i] <= 0x3F; i++)
			;
		for (; i < n && u[i] >= 0x20 && u[i] <= 0x2F; i++)
			;
		return i < n && u[i] >= 0x40 && u[i] <= 0x7E ? i + 1 : i;
	}
	if (u[1] == ']') {
		for (i = 2; i < n && u[i] != '\a' && u[i] != '\n' &&
		    u[i] != 033; i++)
			;
		if (i < n && u[i] == '\a')
			return i + 1;
		if (i + 1 < n && u[i] == 033 && u[i + 1] == '\\')
			return i + 2;
		return i;
	}
	if (u[1] >= 0x20 && u[1] <= 0x2F) {
		for (i = 2; i < n && u[i] >= 0x20 && u[i] <= 0x2F; i++)
			;
		return i < n && u[i] >= 0x30 && u[i] <= 0x7E ? i + 1 : i;
	}
	return u[1] >= 0x30 && u[1] <= 0x7E ? 2 : 1;
}

static void
strip_ansi(struct sbuf *b, const char *s, size_t n)
{
	const char *e;
	size_t i = 0;

	while (i < n) {
		if ((e = memchr(s + i, 033, n - i)) == NULL) {
			sb_add(b, s + i, n - i);
			break;
		}
		sb_add(b, s + i, (size_t)(e - (s + i)));
		i = (size_t)(e - s);
		i += esc_len(s + i, n - i);
	}
}

static size_t *
line_offsets(const char *s, size_t len, size_t n)
{
	size_t *off, i, k = 1;

	if ((off = calloc(n + 1, sizeof(*off))) == NULL)
		return NULL;
	for (i = 0; i < len; i++)
		if (s[i] == '\n')
			off[k++] = i + 1;
	off[n] = len + 1;	/* so every line's length is off[i+1]-off[i]-1 */
	return off;
}

static void
text_free(struct text *t)
{
	free(t->raw);
	free(t->clean);
	free(t->raw_off);
	free(t->clean_off);
	memset(t, 0, sizeof(*t));
}

static int
text_init(struct text *t, const char *p, size_t len)
{
	struct sbuf b = { 0 };
	size_t i, rlen;

	memset(t, 0, sizeof(*t));
	if ((t->raw = utf8_sanitize(p, p != NULL ? len : 0)) == NULL)
		return -1;
	rlen = strlen(t->raw);
	t->n = 1;
	for (i = 0; i < rlen; i++) {
		if (t->raw[i] == '\r')
			t->raw[i] = '\n';
		if (t->raw[i] == '\n')
			t->n++;
	}
	strip_ansi(&b, t->raw, rlen);
	if ((t->clean = sb_take(&b)) == NULL ||
	    (t->raw_off = line_offsets(t->raw, rlen, t->n)) == NULL ||
	    (t->clean_off = line_offsets(t->clean, strlen(t->clean),
	    t->n)) == NULL) {
		text_free(t);
		return -1;
	}
	return 0;
}

static size_t
line_of(const struct text *t, size_t off)
{
	size_t lo = 0, hi = t->n - 1, mid;

	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (t->clean_off[mid] <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static int
blank(const struct text *t, size_t i)
{
	size_t j;

	for (j = t->clean_off[i]; j + 1 < t->clean_off[i + 1]; j++)
		if (!is_space((unsigned char)t->clean[j]))
			return 0;
	return 1;
}

/* First non-blank line where re matches, or -1. */
static long
re_first(const regex_t *re, const struct text *t)
{
	regmatch_t m;
	size_t i, line;

	/* every search starts at a line start, so ^ needs no REG_NOTBOL */
	for (i = 0; i < t->n; i = line + 1) {
		if (regexec(re, t->clean + t->clean_off[i], 1, &m, 0) != 0)
			return -1;
		line = line_of(t, t->clean_off[i] + (size_t)m.rm_so);
		if (!blank(t, line))
			return (long)line;
	}
	return -1;
}

/*
 * Is the "429" at s[at] an HTTP status rather than part of something
 * else?  Not inside a longer number, word, version, path, "file:line",
 * "1,429", "#429" or after "line"; but "HTTP/1.1 429", "(429)",
 * "status=429", "\"code\":429" and "429: Too Many Requests" all are.
 */
static int
status_at(const char *s, size_t at, size_t n)
{
	unsigned char b = at > 0 ? (unsigned char)s[at - 1] : ' ';
	unsigned char a = (unsigned char)s[at + n];
	size_t i;

	if (is_alnum(a) || (a != '\0' && strchr("._/-", a) != NULL) ||
	    (a == ',' && is_digit(s[at + n + 1])))
		return 0;
	if (b == ':') {
		if (at < 2 || (s[at - 2] != '"' && s[at - 2] != '\''))
			return 0;
	} else if (is_alnum(b) || strchr("._/-#@$%+~", b) != NULL ||
	    (b == ',' && at >= 2 && is_digit(s[at - 2])))
		return 0;
	for (i = at; i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'); i--)
		;
	if (i >= 4 && strncasecmp(s + i - 4, "line", 4) == 0 &&
	    (i == 4 || !is_alnum(s[i - 5])))
		return 0;
	return 1;
}

static long
status_first(const char *code, const struct text *t)
{
	const char *p = t->clean;
	size_t n = strlen(code);

	while ((p = strstr(p, code)) != NULL) {
		if (status_at(t->clean, (size_t)(p - t->clean), n))
			return (long)line_of(t, (size_t)(p - t->clean));
		p++;
	}
	return -1;
}

static long
earlier(long a, long b)
{
	return a < 0 || (b >= 0 && b < a) ? b : a;
}

/* First line of t matching row i's stderr (out=0) or stdout (out=1) side. */
static long
row_first(size_t i, int out, const struct text *t)
{
	long line = -1;
	int p;

	for (p = out ? P_OUT : P_ERR; p <= (out ? P_OUT_EXACT : P_ERR_EXACT);
	    p++)
		if (builtins[i].re[p] != NULL)
			line = earlier(line, re_first(&builtin_re[i][p], t));
	if (!out && builtins[i].status != NULL)
		line = earlier(line, status_first(builtins[i].status, t));
	return line;
}

static int
builtins_init(void)
{
	static unsigned char done[NELEM(builtins)][P_N];
	size_t i;
	int p, flags;

	if (builtin_ready)
		return 0;
	for (i = 0; i < NELEM(builtins); i++)
		for (p = 0; p < P_N; p++) {
			if (builtins[i].re[p] == NULL)
				continue;
			flags = REG_EXTENDED | REG_NEWLINE;
			if (p == P_ERR || p == P_OUT)
				flags |= REG_ICASE;
			if (regcomp(&builtin_re[i][p], builtins[i].re[p],
			    flags) != 0)
				goto fail;
			done[i][p] = 1;
		}
	builtin_ready = 1;
	return 0;
fail:
	for (i = 0; i < NELEM(builtins); i++)
		for (p = 0; p < P_N; p++)
			if (done[i][p]) {
				regfree(&builtin_re[i][p]);
				done[i][p] = 0;
			}
	return -1;
}

/* Line i of t, trimmed and capped, as a malloc'd string. */
static char *
line_dup(const struct text *t, size_t i)
{
	const char *s = t->raw + t->raw_off[i];
	size_t n = t->raw_off[i + 1] - t->raw_off[i] - 1;

	while (n > 0 && is_space((unsigned char)s[n - 1]))
		n--;
	while (n > 0 && is_space((unsigned char)*s)) {
		s++;
		n--;
	}
	if (n > MSG_MAX)
		for (n = MSG_MAX; n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80;)
			n--;
	return strndup(s, n);
}

/* The last non-blank line of t, else a copy of fallback. */
static char *
last_line(const struct text *t, const char *fallback)
{
	size_t i;

	for (i = t->n; i-- > 0;)
		if (!blank(t, i))
			return line_dup(t, i);
	return strdup(fallback);
}

static const char *
sig_abbrev(int signo, char *buf, size_t len)
{
	static const struct {
		int no;
		const char *name;
	} sigs[] = {
		{ SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" },
		{ SIGQUIT, "SIGQUIT" }, { SIGILL, "SIGILL" },
		{ SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
		{ SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" },
		{ SIGKILL, "SIGKILL" }, { SIGUSR1, "SIGUSR1" },
		{ SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
		{ SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" },
		{ SIGTERM, "SIGTERM" }, { SIGCHLD, "SIGCHLD" },
		{ SIGCONT, "SIGCONT" }, { SIGSTOP, "SIGSTOP" },
		{ SIGTSTP, "SIGTSTP" }, { SIGTTIN, "SIGTTIN" },
		{ SIGTTOU, "SIGTTOU" }, { SIGURG, "SIGURG" },
		{ SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" },
		{ SIGVTALRM, "SIGVTALRM" }, { SIGPROF, "SIGPROF" },
		{ SIGSYS, "SIGSYS" },
#ifdef SIGWINCH
		{ SIGWINCH, "SIGWINCH" },
#endif
#ifdef SIGIO
		{ SIGIO, "SIGIO" },
#endif
#ifdef SIGPWR
		{ SIGPWR, "SIGPWR" },
#endif
#ifdef SIGSTKFLT
		{ SIGSTKFLT, "SIGSTKFLT" },
#endif
	};
	size_t i;

	for (i = 0; i < NELEM(sigs); i++)
		if (sigs[i].no == signo)
			return sigs[i].name;
#ifdef SIGRTMIN
	if (signo >= SIGRTMIN && signo <= SIGRTMAX) {
		snprintf(buf, len, "SIGRTMIN+%d", signo - SIGRTMIN);
		return buf;
	}
#endif
	snprintf(buf, len, "signal %d", signo);
	return buf;
}

static int
run_ok(const struct run_facts *f)
{
	static const int zero = 0;
	const int *codes = f->ok_codes;
	size_t i, n = f->n_ok_codes;

	if (f->exec_errno != 0 || f->signo != 0 || f->timed_out)
		return 0;
	if (codes == NULL || n == 0) {
		codes = &zero;
		n = 1;
	}
	for (i = 0; i < n; i++)
		if (codes[i] == f->exit_code)
			return 1;
	return 0;
}

/* Does r look at this run at all (before any pattern)? */
static int
rule_applies(const struct rule *r, const struct run_facts *f, int ok)
{
	size_t i;

	if (r->exit_codes == NULL)
		return !ok;
	if (f->signo != 0 || f->exit_code < 0)
		return 0;
	for (i = 0; i < r->n_exit_codes; i++)
		if (r->exit_codes[i] == f->exit_code)
			return 1;
	return 0;
}

/* "COMMAND: No such file or directory", as the shell would say it */
static char *
exec_message(const char *cmd, int errnum)
{
	const char *why = strerror(errnum);
	size_t n = strlen(cmd) + strlen(why) + 3;
	char *s;

	if ((s = malloc(n)) != NULL)
		snprintf(s, n, "%s: %s", cmd, why);
	return s;
}

int
classify(const struct rule *rules, size_t n_rules,
    const struct run_facts *f, struct classification *out)
{
	struct text err = { 0 }, so = { 0 };
	const struct text *src;
	const char *type = NULL;
	enum cb_class cls = CB_CLASS_RECOVERABLE;
	char *msg = NULL, fallback[64], sigbuf[32];
	int ok, have_out = 0, rc = -1;
	size_t i;
	long line;

	memset(out, 0, sizeof(*out));
	out->cls = CB_CLASS_SUCCESS;
	if (builtins_init() == -1)
		return -1;

	if (f->exec_errno != 0) {
		type = f->exec_errno == ENOENT ? "command_not_found" :
		    "permission_denied";
		cls = CB_CLASS_FATAL;
		msg = exec_message(f->command != NULL ? f->command : "command",
		    f->exec_errno);
		goto found;
	}
	ok = run_ok(f);
	if (text_init(&err, f->err, f->err_len) == -1)
		goto fail;
	/* stdout matters only to user rules and to a failed run */
	if (f->out != NULL && (n_rules > 0 || !ok)) {
		if (text_init(&so, f->out, f->out_len) == -1)
			goto fail;
		have_out = 1;
	}

	for (i = 0; i < n_rules; i++) {
		if (!rule_applies(&rules[i], f, ok))
			continue;
		line = -1;
		src = &err;
		if (rules[i].streams & RULE_STDERR)
			line = re_first(&rules[i].re, &err);
		if (line < 0 && (rules[i].streams & RULE_STDOUT) && have_out) {
			line = re_first(&rules[i].re, &so);
			src = &so;
		}
		if (line < 0)
			continue;
		if (rules[i].cls == CB_CLASS_SUCCESS)
			goto success;
		type = rules[i].type;
		cls = rules[i].cls;
		msg = line_dup(src, (size_t)line);
		goto found;
	}
	if (ok)
		goto success;

	if (f->signo != 0)
		snprintf(fallback, sizeof(fallback), "killed by signal %s",
		    sig_abbrev(f->signo, sigbuf, sizeof(sigbuf)));
	else
		snprintf(fallback, sizeof(fallback), "exited with status %d",
		    f->exit_code);
	if (f->timed_out) {
		type = "timeout";
		cls = CB_CLASS_TIMEOUT;
		msg = last_line(&err, "timed out");
		goto found;
	}
	for (i = 0; i < NELEM(builtins); i++) {
		line = row_first(i, 0, &err);
		if (line < 0 && !(f->signo == 0 && builtins[i].exit_code >= 0 &&
		    f->exit_code == builtins[i].exit_code))
			continue;
		type = builtins[i].type;
		cls = builtins[i].cls;
		msg = line >= 0 ? line_dup(&err, (size_t)line) :
		    last_line(&err, fallback);
		goto found;
	}
	/* stdout only refines a run that exited and already failed */
	for (i = 0; have_out && f->signo == 0 && i < NELEM(builtins); i++) {
		if (builtins[i].re[P_OUT] == NULL &&
		    builtins[i].re[P_OUT_EXACT] == NULL)
			continue;
		if ((line = row_first(i, 1, &so)) < 0)
			continue;
		type = builtins[i].type;
		cls = builtins[i].cls;
		msg = line_dup(&so, (size_t)line);
		goto found;
	}
	cls = CB_CLASS_RECOVERABLE;
	if (f->signo != 0 && !f->signalled_by_us) {
		type = "killed";
		msg = strdup(fallback);
	} else {
		type = "unknown";
		msg = last_line(&err, fallback);
	}

found:
	if (msg == NULL)
		goto fail;
	out->cls = cls;
	snprintf(out->type, sizeof(out->type), "%s", type);
	out->message = msg;
	if (error_fingerprint(out->type, msg, f->tmpdir, out->hash) == -1)
		goto fail;
success:
	rc = 0;
fail:
	text_free(&err);
	text_free(&so);
	if (rc == -1) {
		classification_free(out);
		memset(out, 0, sizeof(*out));
	}
	return rc;
}

void
classification_free(struct classification *c)
{
	free(c->message);
	c->message = NULL;
}

/*
 * normalize_message, one pass per step.  A matcher returns how many bytes
 * at s[at] its placeholder replaces, 0 for none; s is the whole string so
 * it can look at the byte before.
 */
typedef size_t (*matcher)(const char *s, size_t at, const void *arg);

static char *
subst(const char *s, matcher m, const char *repl, const void *arg)
{
	struct sbuf b = { 0 };
	size_t i = 0, start = 0, n;

	while (s[i] != '\0') {
		if ((n = m(s, i, arg)) == 0) {
			i++;
			continue;
		}
		sb_add(&b, s + start, i - start);
		sb_add(&b, repl, strlen(repl));
		i += n;
		start = i;
	}
	sb_add(&b, s + start, i - start);
	return sb_take(&b);
}

static int
ndigits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return 0;
	return 1;
}

/* 2026-11-22T01:02[:03[.456]][Z|+01[:00]], T or a space in the middle */
static size_t
m_ts(const char *s, size_t at, const void *arg)
{
	const char *p = s + at;
	size_t i = 16;

	if ((at > 0 && is_alnum(s[at - 1])) || !ndigits(p, 4) ||
	    p[4] != '-' || !ndigits(p + 5, 2) || p[7] != '-' ||
	    !ndigits(p + 8, 2) || (p[10] != 'T' && p[10] != 't' &&
	    p[10] != ' ') || !ndigits(p + 11, 2) || p[13] != ':' ||
	    !ndigits(p + 14, 2))
		return 0;
	if (p[i] == ':' && ndigits(p + i + 1, 2)) {
		i += 3;
		if ((p[i] == '.' || p[i] == ',') && is_digit(p[i + 1]))
			for (i++; is_digit(p[i]); i++)
				;
	}
	if (p[i] == 'Z' || p[i] == 'z')
		i++;
	else if ((p[i] == '+' || p[i] == '-') && ndigits(p + i + 1, 2)) {
		i += 3;
		if (p[i] == ':' && ndigits(p + i + 1, 2))
			i += 3;
		else if (ndigits(p + i, 2))
			i += 2;
	}
	return i;
}

static size_t
m_uuid(const char *s, size_t at, const void *arg)
{
	static const size_t seg[] = { 8, 4, 4, 4, 12 };
	const char *p = s + at;
	size_t i, j;

	if (at > 0 && is_alnum(s[at - 1]))
		return 0;
	for (i = 0; i < NELEM(seg); i++) {
		for (j = 0; j < seg[i]; j++, p++)
			if (!is_xdigit(*p))
				return 0;
		if (i + 1 < NELEM(seg) && *p++ != '-')
			return 0;
	}
	return is_alnum(*p) ? 0 : (size_t)(p - (s + at));
}

/* 0x1f, or a whole word of 8+ hex digits with at least one digit */
static size_t
m_hex(const char *s, size_t at, const void *arg)
{
	const char *p = s + at;
	size_t n;
	int digit = 0;

	if (at > 0 && is_alnum(s[at - 1]))
		return 0;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && is_xdigit(p[2])) {
		for (n = 2; is_xdigit(p[n]); n++)
			;
		return is_alnum(p[n]) ? 0 : n;
	}
	for (n = 0; is_xdigit(p[n]); n++)
		digit |= is_digit(p[n]);
	return n >= 8 && digit && !is_alnum(p[n]) ? n : 0;
}

struct tmpdir {
	const char *dir;	/* normalised $TMPDIR without trailing '/' */
	size_t len;
};

/*
 * A path under /tmp/, /var/tmp/ or $TMPDIR/ up to whitespace, a quote or
 * one of :,;)]} -- the usual ends of a path in a message ("file:line",
 * lists, parentheses).  The prefix must start a path, not end a longer
 * one like /home/u/tmp/.
 */
static size_t
m_tmp(const char *s, size_t at, const void *arg)
{
	const struct tmpdir *td = arg;
	const char *p = s + at;
	size_t n;

	if (*p != '/' || (at > 0 && (is_alnum(s[at - 1]) ||
	    strchr("._-~", s[at - 1]) != NULL)))
		return 0;
	if (strncmp(p, "/tmp/", 5) == 0)
		n = 5;
	else if (strncmp(p, "/var/tmp/", 9) == 0)
		n = 9;
	else if (td->len > 0 && strncmp(p, td->dir, td->len) == 0 &&
	    p[td->len] == '/')
		n = td->len + 1;
	else
		return 0;
	for (; p[n] != '\0' && !is_space((unsigned char)p[n]) &&
	    strchr("'\"`:,;)]}", p[n]) == NULL; n++)
		;
	return n;
}

static size_t
m_digits(const char *s, size_t at, const void *arg)
{
	size_t n;

	for (n = 0; is_digit(s[at + n]); n++)
		;
	return n;
}

/* Steps 1-4 (ANSI, timestamps, UUIDs, hex); NULL on ENOMEM. */
static char *
normalize_ids(const char *msg)
{
	struct sbuf b = { 0 };
	static const struct {
		matcher m;
		const char *repl;
	} steps[] = {
		{ m_ts, "<TS>" }, { m_uuid, "<UUID>" }, { m_hex, "<HEX>" },
	};
	char *s, *t;
	size_t i;

	strip_ansi(&b, msg, strlen(msg));
	if ((s = sb_take(&b)) == NULL)
		return NULL;
	for (i = 0; i < NELEM(steps); i++) {
		t = subst(s, steps[i].m, steps[i].repl, NULL);
		free(s);
		if ((s = t) == NULL)
			return NULL;
	}
	return s;
}

char *
normalize_message(const char *msg, const char *tmpdir)
{
	struct tmpdir td = { NULL, 0 };
	struct sbuf b = { 0 };
	char *s, *t, *dir = NULL;
	size_t i;
	int gap = 0;

	if ((s = normalize_ids(msg != NULL ? msg : "")) == NULL)
		return NULL;
	/* $TMPDIR went through the same steps so it still matches */
	if (tmpdir != NULL && tmpdir[0] == '/') {
		if ((dir = normalize_ids(tmpdir)) == NULL)
			goto fail;
		for (td.len = strlen(dir); td.len > 0 && dir[td.len - 1] == '/';)
			td.len--;
		td.dir = dir;
	}
	t = subst(s, m_tmp, "<TMP>", &td);
	free(s);
	if ((s = t) == NULL)
		goto fail;
	t = subst(s, m_digits, "N", NULL);
	free(s);
	if ((s = t) == NULL)
		goto fail;
	for (i = 0; s[i] != '\0'; i++) {
		if (is_space((unsigned char)s[i])) {
			gap = 1;
			continue;
		}
		if (gap && b.len > 0)
			sb_add(&b, " ", 1);
		gap = 0;
		sb_add(&b, s + i, 1);
	}
	free(s);
	free(dir);
	return sb_take(&b);
fail:
	free(dir);
	return NULL;
}

int
error_fingerprint(const char *type, const char *msg, const char *tmpdir,
    char hex[DIGEST_HEX_LEN + 1])
{
	struct digest *d;
	char *norm;

	if (type == NULL)
		type = "";
	if ((norm = normalize_message(msg, tmpdir)) == NULL)
		return -1;
	if ((d = digest_new()) == NULL)
		goto fail;
	/* the NUL keeps ("ab", "c") and ("a", "bc") apart */
	if (digest_update(d, type, strlen(type) + 1) == -1 ||
	    digest_update(d, norm, strlen(norm)) == -1) {
		digest_abort(d);
		goto fail;
	}
	free(norm);
	return digest_final(d, hex);
fail:
	free(norm);
	return -1;
}
