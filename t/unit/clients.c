/* SPDX-License-Identifier: ISC */
/*
 * The nine clients' knowledge side by side (t/agents/docs/clients.md),
 * printed from the adapters' own tables -- command and package names, the
 * JSON paths each reads, its error rows -- so that the review document
 * cannot drift from the code: this test fails when they differ, and
 * `t/unit/clients.t --write` writes it anew.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/agent/adapter.h"
#include "breaker.h"
#include "tap.h"

#define DOC "t/agents/docs/clients.md"

static const char *const kinds[] = { "string", "number", "boolean",
	"assistant text", "JSON value" };

/* s with '|' escaped for a Markdown cell. */
static void
cell(FILE *f, const char *s)
{
	for (; *s != '\0'; s++)
		fprintf(f, *s == '|' ? "\\|" : "%c", *s);
}

static void
list(FILE *f, const char *const *v)
{
	size_t i;

	for (i = 0; v[i] != NULL; i++)
		fprintf(f, "%s`%s`", i > 0 ? ", " : "", v[i]);
	if (i == 0)
		fprintf(f, "none");
}

static void
doc(FILE *f)
{
	const struct agent *a;
	size_t i, k;

	fprintf(f, "# The nine clients side by side\n\n"
	    "Printed from the adapters' tables (`src/agent/*.c`) by "
	    "`t/unit/clients.t --write`;\n`make test` fails when this "
	    "file and the code differ. What an event *means*\nis each "
	    "adapter's `event()`; everything a reviewer checks against "
	    "a client's\nreal output is here.\n\n"
	    "| client | commands | npm packages | JSON paths | own rows |\n"
	    "|---|---|---|---|---|\n");
	for (i = 0; (a = agent_nth(i)) != NULL; i++) {
		fprintf(f, "| %s | ", a->name);
		list(f, a->commands);
		fprintf(f, " | ");
		list(f, a->packages);
		fprintf(f, " | %zu | %zu |\n", a->n_fields, a->n_rules);
	}
	for (i = 0; (a = agent_nth(i)) != NULL; i++) {
		fprintf(f, "\n## %s\n\n| JSON path | read as |\n|---|---|\n",
		    a->name);
		for (k = 0; k < a->n_fields; k++)
			fprintf(f, "| `%s` | %s |\n", a->fields[k].path,
			    kinds[a->fields[k].kind]);
		if (a->n_rules == 0)
			continue;
		fprintf(f, "\n| its own row (ERE, case-insensitive) | class "
		    "| type |\n|---|---|---|\n");
		for (k = 0; k < a->n_rules; k++) {
			fprintf(f, "| `");
			cell(f, a->rules[k].re);
			fprintf(f, "` | %s | %s |\n", class_name(a->rules[k].cls),
			    a->rules[k].type);
		}
	}
}

int
main(int argc, char **argv)
{
	char *want = NULL, *got = NULL;
	size_t wn = 0, gn = 0;
	FILE *f;

	if (argc > 1 && strcmp(argv[1], "--write") == 0) {
		if ((f = fopen(DOC, "w")) == NULL) {
			perror(DOC);
			return 1;
		}
		doc(f);
		return fclose(f) == 0 ? 0 : 1;
	}
	if ((f = open_memstream(&got, &gn)) == NULL)
		return 1;
	doc(f);
	fclose(f);
	if ((f = fopen(DOC, "r")) != NULL) {
		want = malloc(gn + 2);
		wn = want != NULL ? fread(want, 1, gn + 1, f) : 0;
		fclose(f);
	}
	ok(want != NULL && wn == gn && memcmp(want, got, gn) == 0,
	    DOC " is the adapters' tables (else: t/unit/clients.t --write)");
	free(want);
	free(got);
	return done_testing();
}
