/* SPDX-License-Identifier: ISC */
/*
 * Shared by the files of store/ that read and write a persisted JSON
 * document (the state file, its history events, an account's gate): the
 * document as one table of fields that the reader and the writer both
 * walk (schema.c), and the text writer they write with.
 */
#ifndef CBEXEC_STORE_SCHEMA_H
#define CBEXEC_STORE_SCHEMA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct cJSON;

/* ---- JSON text, appended to one growing buffer ---- */

struct jbuf {
	char *p;
	size_t len, cap;
	int bad;		/* an allocation failed */
};

/* Room for n more bytes and the final NUL; 0, or -1 once out of memory. */
int jb_grow(struct jbuf *b, size_t n);

/* Inline, so the many short literal pieces become plain stores. */
static inline void
jb_put(struct jbuf *b, const char *s, size_t n)
{
	if (b->cap - b->len <= n && jb_grow(b, n) == -1)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static inline void
jb_puts(struct jbuf *b, const char *s)
{
	jb_put(b, s, strlen(s));
}

void jb_long(struct jbuf *b, long long v);
/* A number as cJSON prints one (integral values without a fraction). */
void jb_num(struct jbuf *b, double v);
/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
void jb_str(struct jbuf *b, const char *s);
void jb_str_or_null(struct jbuf *b, const char *s);
void jb_time_or_null(struct jbuf *b, double t);
/* A compact object's key: ", \"key\": ", or "{\"key\": " for the first. */
void jb_ckey(struct jbuf *b, const char *k, int first);
/* A newline, the NUL, and the text (the caller frees), or NULL when an
 * allocation failed. */
char *jb_finish(struct jbuf *b);

/* ---- a document's fields ---- */

/* How a field is kept in its struct and spelled in JSON. */
enum ftype {
	FT_INT,		/* int: a non-negative integer */
	FT_LONG,	/* long: an integer from 0 to 2^53 */
	FT_NUM,		/* double: a non-negative number */
	FT_BOOL,	/* int: true or false */
	FT_TRI,		/* int: true, false, or null (-1) */
	FT_CODE,	/* int: a non-negative integer, or null (-1) */
	FT_SECONDS,	/* double: seconds, kept to the millisecond, or null
			 * (< 0) */
	FT_STR,		/* char *: a string, or null (NULL) */
	FT_TEXT,	/* char[size]: a string; null reads as "" */
	FT_TIME,	/* double: epoch seconds as ISO-8601, or null (< 0) */
	FT_STAMP,	/* double: epoch seconds as ISO-8601, never null */
	FT_CIRCUIT,	/* enum cb_circuit: "CLOSED", "HALF_OPEN", "OPEN" */
	FT_CIRCUIT_OR_NULL,	/* int: an enum cb_circuit, or null (-1) */
	FT_OUTCOME,	/* enum cb_outcome: "OK", "OPEN", ... */
	FT_CAUSE,	/* enum cb_cause: "no_progress", "errors", "limit",
			 * or null (CAUSE_NONE) */
	FT_CUSTOM	/* the row's own read and write */
};

/* A row's flags. */
#define FR_REQUIRED	1	/* absent: the document is corrupt */
#define FR_OPTIONAL	2	/* written only when set (not null, not "",
				 * not -1) */
#define FR_NULL		4	/* FT_CIRCUIT: null reads as the default */
#define FR_NULL_EMPTY	8	/* FT_TEXT: "" is written as null */

struct schema_ctx;

/*
 * One field of a document: its member's name, its type, where it lives in
 * the struct, what an absent member reads as, and the version of the
 * document that first had it.  A member renamed keeps its earlier name in
 * was: read when the new one is absent, never written.  FT_CUSTOM rows
 * read and write themselves; read is called with m NULL when the member
 * is absent (after the other members), and may be NULL when another
 * row's read takes the member too.
 */
struct field {
	const char *name;
	const char *key;	/* as written: "\"name\": " (FNAME()) */
	size_t keylen;
	enum ftype type;
	size_t off;		/* offsetof() in the document's struct */
	size_t size;		/* FT_TEXT: the buffer's size */
	double dflt;		/* absent: numbers and times take this; a
				 * string is NULL or "" */
	int since;		/* the version that added it */
	unsigned flags;		/* FR_* */
	const char *was;	/* its name before a rename, or NULL */
	int (*read)(const struct schema_ctx *c, const struct cJSON *m,
	    void *dst, char *err, size_t errlen);
	void (*write)(struct jbuf *b, const void *src);
};

/* A row's name and its key, made at compile time: { FNAME("iteration"),
 * FT_LONG, ... }. */
#define FNAME(n)	n, "\"" n "\": ", sizeof(n) + 3

/* The most fields a document may have (the reader's bitmap of them). */
#define SCHEMA_MAX	128

/* A document: its fields in the order they are written. */
struct schema {
	const struct field *f;
	size_t n;
	/* Where the members no row knows are kept, as JSON text
	 * (char *, offsetof() in the struct). */
	size_t unknown_off;
	/* How a missing FR_REQUIRED member is said ("corrupt state file: no
	 * '%s'"), or NULL: "field 'NAME': expected WHAT". */
	const char *missing;
	/* Written: the object's opening, the text between two members
	 * (SEP()), and its end ("{\n  ", SEP(",\n  "), "\n}"). */
	const char *open, *sep;
	size_t seplen;
	const char *close;
};
#define SEP(s)	s, sizeof(s) - 1

/*
 * What a row's read may need besides its member: the whole object (a row
 * that reads several members), the object's text (the members it does
 * not know are kept as written there; NULL: as cJSON prints them), the
 * member's index in the object, and the caller's own arg.
 */
struct schema_ctx {
	const struct cJSON *obj;
	const char *text;
	size_t index;
	void *arg;
};

/*
 * obj (a JSON object) into dst, row by row, every absent member its
 * default; the members no row knows into dst's unknown text (replacing
 * it), as text gives them (the object's own text, from its '{' or blanks
 * before it; NULL: printed by cJSON).  0, or -1 with "field 'NAME':
 * expected WHAT" (or schema->missing) in err.
 */
int schema_read(const struct schema *sc, const struct cJSON *obj,
    const char *text, void *arg, void *dst, char *err, size_t errlen);

/* src as a JSON object: lead (or NULL) first, then the rows, then the
 * unknown members as they were read. */
void schema_write(struct jbuf *b, const struct schema *sc, const void *src,
    const char *lead);

/* The row of sc named name (or, with was, renamed from it), or NULL. */
const struct field *schema_field(const struct schema *sc, const char *name);

/*
 * The text of a JSON value that cJSON accepted, walked without parsing
 * it: jraw_open() at an object or an array (blanks and a UTF-8 BOM before
 * it skipped), then jraw_next() for each member or element: its whole
 * text (a member's from its key's quote) from *start to *end, its value
 * from *value.  1, or 0 after the last.
 */
struct jraw {
	const char *p;
	int obj;
};
int jraw_open(struct jraw *r, const char *text);
int jraw_next(struct jraw *r, const char **start, const char **value,
    const char **end);

#endif
