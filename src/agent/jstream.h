/* SPDX-License-Identifier: ISC */
/*
 * An incremental JSON tokenizer over an agent's stdout (jstream.c), shared
 * by the files of agent/.  Bytes are fed as they arrive, split anywhere;
 * memory is bounded whatever the length of a line or a string.
 *
 * The stream is a sequence of events: JSON objects that start a line
 * (JSON Lines, or one object), or the objects of an array that starts a
 * line (Qwen's --output-format json).  Lines that start with anything else
 * are text.  Inside an event each value has a path, the keys that lead to
 * it joined by dots ("message.content.type"; arrays add nothing).  What
 * the reader wants of a value it says when the value starts.
 */
#ifndef CBEXEC_AGENT_JSTREAM_H
#define CBEXEC_AGENT_JSTREAM_H

#include <stddef.h>

#define JS_DEPTH	24	/* containers tracked; deeper ones are skipped */
#define JS_PATH		256	/* bytes of a path kept */
#define JS_SCALAR	64	/* bytes of a number or literal kept */
#define JS_RAW_MAX	4096	/* bytes of a raw value kept */

/* Paths are hashed as they are built, so a reader can look one up without
 * reading it again: each key adds its length and its first, middle and
 * last bytes (FNV-1a steps), a constant cost per key; a lookup compares
 * the path itself anyway. */
#define JS_HASH0	2166136261u

static inline unsigned
js_hash(unsigned h, unsigned char c)
{
	return (h ^ c) * 16777619u;
}

static inline unsigned
js_hash_key(unsigned h, const char *k, size_t n)
{
	h = js_hash(h, (unsigned char)n);
	if (n > 0)
		h = js_hash(js_hash(js_hash(h, (unsigned char)k[0]),
		    (unsigned char)k[n / 2]), (unsigned char)k[n - 1]);
	return h;
}

/* What the reader wants of a value. */
enum js_want {
	JS_SKIP,	/* nothing (a string is skipped without a copy) */
	JS_CHUNKS,	/* a string's unescaped bytes, in pieces, then its end */
	JS_ESCAPED,	/* a string's bytes as written (escapes and all, no
			 * quotes), in pieces, then its end: nothing copied */
	JS_RAW		/* the value's JSON text as written, up to JS_RAW_MAX */
};

struct jstream_ops {
	/* A value starts at path (hash: js_hash over its bytes) inside an
	 * event; str: it is a string.  Numbers and literals come to
	 * scalar() unless JS_RAW. */
	enum js_want (*want)(void *arg, const char *path, unsigned hash,
	    int str);
	void (*chunk)(void *arg, const char *path, const char *p, size_t n);
	void (*string_end)(void *arg, const char *path);
	/* A number, true, false or null, as written. */
	void (*scalar)(void *arg, const char *path, const char *v, size_t n);
	/* A JS_RAW value, cut at JS_RAW_MAX bytes (truncated: 1); digest is
	 * js_digest() over the whole value as written, however long. */
	void (*raw)(void *arg, const char *path, const char *p, size_t n,
	    int truncated, unsigned long long digest);
	/* An object inside an event closed (path: where it was). */
	void (*object_end)(void *arg, const char *path);
	void (*event_begin)(void *arg);
	/* The event closed (complete 1), or the JSON broke off (0). */
	void (*event_end)(void *arg, int complete);
	/* Bytes of a line that is not JSON, its newline included. */
	void (*text)(void *arg, const char *p, size_t n);
};

struct jstream {
	const struct jstream_ops *ops;
	void *arg;
	int state;
	int depth;			/* open containers */
	int deep;			/* containers past JS_DEPTH */
	int event_depth;		/* depth of the event object, 0: none */
	unsigned char array[JS_DEPTH + 1];	/* container at depth is one */
	unsigned short base[JS_DEPTH + 1];	/* path length of its members */
	unsigned bhash[JS_DEPTH + 1];	/* and that path's hash */
	char path[JS_PATH + 1];
	size_t plen;
	unsigned phash;
	size_t kstart;			/* where the key being read starts */
	int kcut;			/* it did not fit */
	char scalar[JS_SCALAR + 1];
	size_t slen;
	enum js_want want;		/* of the string being read */
	int esc;			/* 0, 1 after '\\', 2-5 in \uXXXX */
	int nl;				/* a newline since the last token */
	size_t bs;			/* backslashes a skipped piece ended with */
	char out[4096];			/* a wanted string's bytes, gathered */
	size_t olen;
	unsigned u, hi;			/* \u value, pending high surrogate */
	char raw[JS_RAW_MAX];
	size_t rawlen;
	unsigned long long raw_digest;	/* of all of the raw value */
	int raw_on, raw_depth, raw_cut;
	char raw_path[JS_PATH + 1];
};

/* A 64-bit digest (FNV-1a) of n bytes, continuing from h; JS_DIGEST0 to
 * start.  Not cryptographic: it tells two tool results apart. */
#define JS_DIGEST0	14695981039346656037ULL

static inline unsigned long long
js_digest(unsigned long long h, const char *p, size_t n)
{
	while (n-- > 0)
		h = (h ^ (unsigned char)*p++) * 1099511628211ULL;
	return h;
}

void jstream_init(struct jstream *j, const struct jstream_ops *ops,
    void *arg);
void jstream_feed(struct jstream *j, const char *p, size_t n);
/* The stream ended: an event still open broke off. */
void jstream_end(struct jstream *j);

#endif
