/* SPDX-License-Identifier: ISC */
/*
 * User rules (SPEC §6) for the classifier.  Pure: no I/O.
 *
 * A rule is compiled once, when the config is read, with REG_EXTENDED |
 * REG_ICASE | REG_NEWLINE like the case-insensitive built-in rows, and
 * keeps its pattern and type as owned copies; classify() in classify.c
 * tries the rules in order before any built-in row.  A rule that failed
 * to compile has no pattern, so rule_free is safe to call on it too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "text.h"

/*
 * A bound on the size of the automaton glibc's regcomp builds: it copies a
 * repeated subexpression once per repetition (a{0,255} is 255 copies, a+
 * is aa*), so nested or stacked repeats multiply, and a pattern such as
 * "(x++++++++++++++++++++)" or "((a{0,255}){0,255}){0,255}" exhausts
 * memory before regcomp returns.  cost() walks the ERE like that: an
 * atom costs 1 (a group the sum of its contents), times the repetitions
 * of each quantifier after it.  Saturates at RULE_COST_MAX.
 */
#define RULE_COST_MAX 20000.0
#define STACKED_MAX 3		/* quantifiers on one atom, "a+?" is 2 */

static double
cost(const char **pp, int depth)
{
	const char *p = *pp;
	double total = 0, atom, rep;
	long lo, hi;
	int stacked;
	char *end;

	while (*p != '\0' && !(*p == ')' && depth > 0)) {
		if (*p == '(') {
			p++;
			atom = cost(&p, depth + 1);
			if (*p == ')')
				p++;
		} else if (*p == '[') {
			/* A bracket expression: "[]x]" and "[^]x]" hold ']'. */
			p++;
			if (*p == '^')
				p++;
			if (*p == ']')
				p++;
			while (*p != '\0' && *p != ']')
				p++;
			if (*p == ']')
				p++;
			atom = 1;
		} else {
			if (*p == '\\' && p[1] != '\0')
				p++;
			p++;
			atom = 1;
		}
		for (stacked = 0;; stacked++) {
			if (*p == '*' || *p == '+')
				rep = 2;
			else if (*p == '?')
				rep = 1;
			else if (*p == '{') {
				lo = strtol(p + 1, &end, 10);
				hi = lo;
				if (*end == ',')
					hi = end[1] == '}' ? lo + 1 :
					    strtol(end + 1, &end, 10);
				if (hi < lo)
					hi = lo;
				rep = hi > 0 ? (double)hi : 1;
				while (*p != '\0' && *p != '}')
					p++;
				if (*p == '\0')
					break;
			} else
				break;
			p++;
			atom *= rep;
			/* a quantifier on a quantifier on a quantifier...:
			 * glibc's automaton doubles with each ('z*' and twelve
			 * '+' take seconds), whatever the counts say */
			if (atom > RULE_COST_MAX || stacked >= STACKED_MAX)
				atom = RULE_COST_MAX;
		}
		total += atom;
		if (total > RULE_COST_MAX)
			total = RULE_COST_MAX;
	}
	*pp = p;
	return total;
}

int
rule_init(struct rule *r, const char *pattern, int streams,
    const int *exit_codes, size_t n_exit_codes, enum cb_class cls,
    const char *type, char *err, size_t errlen)
{
	char why[CB_WHYLEN];
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
	{
		const char *p = pattern;

		if (cost(&p, 0) >= RULE_COST_MAX) {
			snprintf(err, err ? errlen : 0, "rule \"%s\": too many "
			    "nested or stacked repetitions", pattern);
			return -1;
		}
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
