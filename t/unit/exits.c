/* SPDX-License-Identifier: ISC */
/*
 * The exit statuses are one table (CB_EXIT_TABLE, core.h): the man
 * page's EXIT STATUS and README's "Exit status" list its rows in its
 * order, with its names; --exit-codes takes exactly its keys, documented
 * in --help and the man page; and what main() exits with is the table's
 * unless remapped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core.h"
#include "tap.h"

#define MAN "man/cbexec.1"
#define README "README.md"

/* The whole of file path, NUL-terminated; NULL when unreadable. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (f == NULL)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) == -1) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* The text from the line "start" to the next line that begins with
 * "end" (a copy; NULL when there is no such line). */
static char *
section(const char *text, const char *start, const char *end)
{
	const char *a = text, *b;

	while ((a = strstr(a, start)) != NULL && a != text && a[-1] != '\n')
		a++;
	if (a == NULL)
		return NULL;
	a += strlen(start);
	for (b = a; (b = strstr(b, end)) != NULL && b[-1] != '\n'; b++)
		;
	return strndup(a, b != NULL ? (size_t)(b - a) : strlen(a));
}

/* A label as the man page writes it: "1\(en119", "128+ Ns Ar N". */
static void
man_label(const char *label, char *buf, size_t len)
{
	const char *dash = strchr(label, '-');
	size_t n = strlen(label);

	if (dash != NULL)
		snprintf(buf, len, "%.*s\\(en%s", (int)(dash - label), label,
		    dash + 1);
	else if (n >= 2 && strcmp(label + n - 2, "+N") == 0)
		snprintf(buf, len, "%.*s+ Ns Ar N", (int)strlen(label) - 2,
		    label);
	else
		snprintf(buf, len, "%s", label);
}

static void
man_page(void)
{
	char *text = slurp(MAN), *s, *p, want[64], desc[160];
	const struct cb_exit_row *r;
	size_t i;

	s = text != NULL ? section(text, ".Sh EXIT STATUS\n", ".Sh ") : NULL;
	if (!ok(s != NULL, "man page: EXIT STATUS found")) {
		free(text);
		return;
	}
	p = s;
	for (i = 0; i < CB_EXIT_ROWS; i++) {
		r = &cb_exits[i];
		if (r->label == NULL)
			continue;
		man_label(r->label, want, sizeof(want));
		/* the next item of the list is this row's */
		p = strstr(p, "\n.It ");
		snprintf(desc, sizeof(desc), "man page: EXIT STATUS's next "
		    "item is %s", r->label);
		if (!ok(p != NULL && strncmp(p + 5, want, strlen(want)) == 0 &&
		    p[5 + strlen(want)] == '\n', desc)) {
			printf("#   want \".It %s\"\n", want);
			break;
		}
		p += 5 + strlen(want) + 1;
		if (r->name == NULL || r->code == CB_EXIT_OK)
			continue;
		snprintf(desc, sizeof(desc), "man page: %s is %s", r->label,
		    r->name);
		ok(strncmp(p, r->name, strlen(r->name)) == 0 &&
		    p[strlen(r->name)] == ':', desc);
	}
	ok(p != NULL && strstr(p, "\n.It ") == NULL,
	    "man page: EXIT STATUS has no item the table has not");
	free(s);
	/* --exit-codes's item names every key */
	s = section(text, ".It Fl \\-exit-codes", ".It ");
	for (i = 0; i < CB_EXIT_ROWS; i++) {
		if (cb_exits[i].key == NULL)
			continue;
		snprintf(want, sizeof(want), "%s=N", cb_exits[i].key);
		snprintf(desc, sizeof(desc), "man page: --exit-codes names %s",
		    want);
		ok(s != NULL && strstr(s, want) != NULL, desc);
	}
	free(s);
	free(text);
}

static void
readme(void)
{
	char *text = slurp(README), *s, *p, want[64], desc[160];
	const struct cb_exit_row *r;
	const char *dash;
	size_t i;

	s = text != NULL ? section(text, "## Exit status\n", "## ") : NULL;
	if (!ok(s != NULL, "README: \"Exit status\" found")) {
		free(text);
		return;
	}
	p = strstr(s, "|---|");
	for (i = 0; p != NULL && i < CB_EXIT_ROWS; i++) {
		r = &cb_exits[i];
		if (r->label == NULL)
			continue;
		/* README writes ranges with an en dash, and "—" for none */
		dash = strchr(r->label, '-');
		if (dash != NULL)
			snprintf(want, sizeof(want), "\n| %.*s\u2013%s | %s |",
			    (int)(dash - r->label), r->label, dash + 1,
			    r->name != NULL ? r->name : "\u2014");
		else
			snprintf(want, sizeof(want), "\n| %s | %s |", r->label,
			    r->name != NULL ? r->name : "\u2014");
		p = strchr(p, '\n');
		snprintf(desc, sizeof(desc), "README: the table's next row is "
		    "%s", r->label);
		if (!ok(p != NULL && strncmp(p, want, strlen(want)) == 0,
		    desc)) {
			printf("#   want \"%s\"\n", want + 1);
			break;
		}
		p++;
	}
	ok(p != NULL && (p = strchr(p, '\n')) != NULL &&
	    strncmp(p, "\n|", 2) != 0,
	    "README: the table has no row the table has not");
	for (i = 0; i < CB_EXIT_ROWS; i++) {
		if (cb_exits[i].key == NULL)
			continue;
		snprintf(want, sizeof(want), "%s=", cb_exits[i].key);
		snprintf(desc, sizeof(desc), "README: --exit-codes's example "
		    "remaps %s", cb_exits[i].key);
		ok(strstr(s, want) != NULL, desc);
	}
	free(s);
	free(text);
}

/* --exit-codes KEY=7 as cbexec's argv: 0 and what each row exits as, or
 * -1 with the message in err. */
static int
parse(struct options *o, const char *list, char *err, size_t len)
{
	char *argv[] = { "cbexec", "--exit-codes", (char *)list, "--", "true",
	    NULL };

	options_init(o);
	return cli_parse(o, 5, argv, err, len);
}

static void
remapping(void)
{
	struct options o;
	char list[64], desc[160], err[256], *help = NULL;
	size_t i, j, n = 0;
	FILE *f;

	/* Unless remapped, every code exits as itself, completion as 0. */
	options_init(&o);
	for (i = 0; i < CB_EXIT_ROWS; i++) {
		snprintf(desc, sizeof(desc), "%s exits as %d by default",
		    cb_exits[i].label != NULL ? cb_exits[i].label : "complete",
		    cb_exits[i].as);
		is_int(exit_remap(o.exit_as, cb_exits[i].code), cb_exits[i].as,
		    desc);
	}
	is_int(exit_remap(o.exit_as, CB_EXIT_COMPLETE), 0,
	    "completion exits 0 by default");
	is_int(exit_remap(o.exit_as, 42), 42, "the command's own 42 is 42");
	options_free(&o);

	if ((f = open_memstream(&help, &n)) != NULL) {
		cli_help(f, "all");
		fclose(f);
	}
	for (i = 0; i < CB_EXIT_ROWS; i++) {
		/* every key remaps its row, and only its row */
		if (cb_exits[i].key != NULL) {
			snprintf(list, sizeof(list), "%s=7", cb_exits[i].key);
			snprintf(desc, sizeof(desc), "--exit-codes %s", list);
			is_int(parse(&o, list, err, sizeof(err)), 0, desc);
			for (j = 0; j < CB_EXIT_ROWS; j++)
				if (exit_remap(o.exit_as, cb_exits[j].code) !=
				    (j == i ? 7 : cb_exits[j].as))
					break;
			snprintf(desc, sizeof(desc), "--exit-codes %s: %s "
			    "exits 7, nothing else moves", list,
			    cb_exits[i].key);
			is_int(j, CB_EXIT_ROWS, desc);
			options_free(&o);
			snprintf(desc, sizeof(desc), "--help names %s=N",
			    cb_exits[i].key);
			snprintf(list, sizeof(list), "%s=N", cb_exits[i].key);
			ok(help != NULL && strstr(help, list) != NULL, desc);
			continue;
		}
		/* a row without a key is refused by its name */
		if (cb_exits[i].name == NULL)
			continue;
		snprintf(list, sizeof(list), "%s=7", cb_exits[i].name);
		for (j = 0; list[j] != '='; j++)
			list[j] = (char)(list[j] - 'A' + 'a');
		snprintf(desc, sizeof(desc), "--exit-codes %s is refused",
		    list);
		is_int(parse(&o, list, err, sizeof(err)), -1, desc);
		options_free(&o);
	}
	free(help);
}

int
main(void)
{
	man_page();
	readme();
	remapping();
	return done_testing();
}
