/* SPDX-License-Identifier: ISC */
/*
 * The stuck analysis the OPEN block adds (SPEC §9; seed 004's Pattern 3):
 * what the last failures have in common, read from the history alone.
 *
 * The window is the last STUCK_WINDOW error events since the last reset
 * or skip (older failures were dealt with).  Over it: the most common
 * error (events with the same error fingerprint; an older file without
 * fingerprints groups by type and message), the file most often named in
 * the messages, and the task that failed most, these two only when at
 * least two failures share them (or there is one).  A file is a word of path
 * characters ending in ".EXT" that has a '/' in it, is followed by
 * ":LINE", or has a source-like extension; each message counts a file
 * once.  The hint picks one cause, most specific first: transient
 * failures, one task, one error, many tasks failing in many ways (the
 * environment, not the task), one file.
 *
 * Everything is in fixed arrays of the window's size: the analysis costs
 * the same whatever the history holds, and its text is cut short.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core.h"
#include "report.h"

#define FILES_PER_MSG	8
#define MAX_FILES	(STUCK_WINDOW * FILES_PER_MSG)
#define FILE_MAX	160

struct tally {
	const struct cb_event *e;	/* errors, tasks: the first event */
	char word[FILE_MAX];		/* files: the name */
	int n;
};

/* Copy src into dst[n], cut at a character boundary so it stays UTF-8. */
static void
cut(char *dst, size_t n, const char *src)
{
	size_t len = strlen(src);

	if (len >= n) {
		len = n - 1;
		while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
			len--;
	}
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static int
same_error(const struct cb_event *a, const struct cb_event *b)
{
	if (a->hash[0] != '\0' || b->hash[0] != '\0')
		return strcmp(a->hash, b->hash) == 0;
	return strcmp(a->type, b->type) == 0 && a->reason != NULL &&
	    b->reason != NULL && strcmp(a->reason, b->reason) == 0;
}

static int
path_char(char c)
{
	/* strchr() finds the NUL too: it ends a word, never part of one. */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') ||
	    (c != '\0' && strchr("_.~/+-", c) != NULL);
}

static int
source_ext(const char *ext)
{
	static const char *const exts[] = {
		"c", "h", "cc", "cpp", "cxx", "hpp", "hh", "go", "rs", "py",
		"js", "mjs", "cjs", "ts", "tsx", "jsx", "rb", "java", "kt",
		"swift", "sh", "bash", "md", "json", "yaml", "yml", "toml",
		"txt", "html", "css", "scss", "php", "cs", "lua", "pl", "pm",
		"ex", "exs", "erl", "hs", "ml", "scala", "sql", "vue",
		"svelte", "xml", "gradle", "cmake", "proto", "ini", "cfg",
		"conf", "tf", "mk", "lock",
	};
	size_t i;

	for (i = 0; i < NELEM(exts); i++)
		if (strcasecmp(ext, exts[i]) == 0)
			return 1;
	return 0;
}

/* Whether w (len bytes; next is the byte after it) names a file. */
static int
file_word(const char *w, size_t len, char next_colon_digit)
{
	const char *dot = NULL, *p;
	size_t i;

	for (i = 0; i < len; i++)
		if (w[i] == '.')
			dot = w + i;
	/* "NAME.EXT": a name ending in a word character, an extension of
	 * 1-8 characters that starts with a letter. */
	if (dot == NULL || dot == w || len - (size_t)(dot - w) - 1 < 1 ||
	    len - (size_t)(dot - w) - 1 > 8 || !path_char(dot[-1]) ||
	    dot[-1] == '.' || dot[-1] == '/' ||
	    !((dot[1] >= 'a' && dot[1] <= 'z') ||
	    (dot[1] >= 'A' && dot[1] <= 'Z')))
		return 0;
	for (p = dot + 1; p < w + len; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9')))
			return 0;
	if (len >= 2 && w[0] == '/' && w[1] == '/')	/* a URL's host */
		return 0;
	if (memchr(w, '/', len) != NULL || next_colon_digit)
		return 1;
	{
		char ext[9];
		size_t el = len - (size_t)(dot - w) - 1;

		memcpy(ext, dot + 1, el);
		ext[el] = '\0';
		return source_ext(ext);
	}
}

/* Count each file msg names once in files[*n] (at most MAX_FILES). */
static void
count_files(const char *msg, struct tally *files, int *n)
{
	char seen[FILES_PER_MSG][FILE_MAX], word[FILE_MAX];
	const char *p = msg, *w;
	int nseen = 0, i, k;
	size_t len;

	while (*p != '\0' && nseen < FILES_PER_MSG) {
		if (!path_char(*p)) {
			p++;
			continue;
		}
		for (w = p; path_char(*p); p++)
			;
		len = (size_t)(p - w);
		/* A sentence's full stop is no part of the name. */
		while (len > 0 && w[len - 1] == '.')
			len--;
		if (len >= 2 && w[0] == '.' && w[1] == '/') {
			w += 2;
			len -= 2;
		}
		if (len == 0 || len >= FILE_MAX || !file_word(w, len,
		    p[0] == ':' && p[1] >= '0' && p[1] <= '9'))
			continue;
		memcpy(word, w, len);
		word[len] = '\0';
		for (i = 0; i < nseen; i++)
			if (strcmp(seen[i], word) == 0)
				break;
		if (i < nseen)
			continue;
		memcpy(seen[nseen++], word, len + 1);
		for (k = 0; k < *n; k++)
			if (strcmp(files[k].word, word) == 0)
				break;
		if (k == *n) {
			if (*n == MAX_FILES)
				continue;
			memcpy(files[k].word, word, len + 1);
			files[k].n = 0;
			(*n)++;
		}
		files[k].n++;
	}
}

/* The tally with the highest count; the earliest wins a tie. */
static const struct tally *
top(const struct tally *t, int n)
{
	const struct tally *best = NULL;
	int i;

	for (i = 0; i < n; i++)
		if (best == NULL || t[i].n > best->n)
			best = &t[i];
	return best;
}

static void
hint(struct stuck_analysis *a)
{
	size_t n = sizeof(a->hint);

	if (a->transient * 2 > a->failures)
		snprintf(a->hint, n, "mostly transient (rate limits, overload, "
		    "network): wait, or use --backoff");
	else if (a->task_count >= 2 && a->task_count * 2 > a->failures)
		snprintf(a->hint, n, "task %s keeps failing: split it, or "
		    "--skip --task it", a->task);
	else if (a->failures >= 2 && a->error_count == a->failures)
		snprintf(a->hint, n, "the same error every time: fix its "
		    "cause first%s%s", a->file[0] != '\0' ? ", in " : "",
		    a->file);
	else if (a->tasks >= 2 && a->errors >= 2)
		snprintf(a->hint, n, "different tasks fail in different ways: "
		    "suspect the environment");
	else if (a->file_count >= 2 && a->file_count * 2 > a->failures)
		snprintf(a->hint, n, "most failures name %s: look there first",
		    a->file);
	else
		snprintf(a->hint, n, "no common cause stands out: review "
		    "recent changes and the environment");
}

int
stuck_analyse(const struct cb_state *s, struct stuck_analysis *a)
{
	const struct cb_event *win[STUCK_WINDOW];
	struct tally errs[STUCK_WINDOW], tasks[STUCK_WINDOW], files[MAX_FILES];
	const struct tally *t;
	int n = 0, nerr = 0, ntask = 0, nfile = 0, i, k;
	size_t j;

	memset(a, 0, sizeof(*a));
	/* Newest first, back to the last operator act. */
	for (j = s->n_history; j-- > 0 && n < STUCK_WINDOW; ) {
		const struct cb_event *e = &s->history[j];

		if (e->kind == EV_RESET || e->kind == EV_SKIP)
			break;
		if (e->kind == EV_ERROR)
			win[n++] = e;
	}
	if (n == 0)
		return 0;
	a->failures = n;
	a->first_run = win[n - 1]->iteration;
	a->last_run = win[0]->iteration;
	for (i = n; i-- > 0; ) {	/* oldest first: ties go to it */
		const struct cb_event *e = win[i];

		if (strcmp(e->cls, "transient") == 0)
			a->transient++;
		for (k = 0; k < nerr && !same_error(errs[k].e, e); k++)
			;
		if (k == nerr)
			errs[nerr++] = (struct tally){ .e = e, .n = 0 };
		errs[k].n++;
		if (e->task != NULL && e->task[0] != '\0') {
			for (k = 0; k < ntask &&
			    strcmp(tasks[k].e->task, e->task) != 0; k++)
				;
			if (k == ntask)
				tasks[ntask++] = (struct tally){ .e = e, .n = 0 };
			tasks[k].n++;
		}
		if (e->reason != NULL)
			count_files(e->reason, files, &nfile);
	}
	a->errors = nerr;
	a->tasks = ntask;
	t = top(errs, nerr);
	a->error_count = t->n;
	cut(a->error, sizeof(a->error), t->e->type);
	if (t->e->reason != NULL && strlen(a->error) + 3 < sizeof(a->error)) {
		strcat(a->error, ": ");
		j = strlen(a->error);
		cut(a->error + j, sizeof(a->error) - j, t->e->reason);
	}
	/* A file or task stands out when two failures share it (or there
	 * is only one failure); the first of many named once is noise. */
	if ((t = top(files, nfile)) != NULL && (t->n >= 2 || n == 1)) {
		a->file_count = t->n;
		cut(a->file, sizeof(a->file), t->word);
	}
	if ((t = top(tasks, ntask)) != NULL && (t->n >= 2 || n == 1)) {
		a->task_count = t->n;
		cut(a->task, sizeof(a->task), t->e->task);
	}
	hint(a);
	return 1;
}
