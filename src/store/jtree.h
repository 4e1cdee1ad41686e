/* SPDX-License-Identifier: ISC */
/*
 * jtree.c: JSON text into a cJSON tree, as cJSON reads it, in one pass.
 */
#ifndef CBEXEC_STORE_JTREE_H
#define CBEXEC_STORE_JTREE_H

#include <stddef.h>

struct cJSON;

/*
 * The elements of one array, the member key of the top object, handed to
 * fn one by one instead of kept in the tree (which has the array, empty):
 * each is built from scratch, given to fn with its text (its first byte
 * in buf), and dropped with reset().  fn
 * returns 0, or -1 to stop the parse (jtree_parse then returns NULL with
 * stopped set).  called is set once such an array was read.
 */
struct jtree_each {
	const char *key;
	int (*fn)(void *arg, const struct cJSON *elem, const char *text);
	void *arg;
	void *(*scratch)(size_t);
	void (*reset)(void);
	int called, stopped;
};

/*
 * buf: len bytes and a NUL after them.  The tree
 * cJSON_ParseWithLengthOpts(buf, len + 1, end, 1) would build, every node
 * and string from alloc (never freed here: an arena's), or NULL with *end
 * where the error was found.  each may be NULL.
 */
struct cJSON *jtree_parse(const char *buf, size_t len,
    void *(*alloc)(size_t), struct jtree_each *each, const char **end);

#endif
