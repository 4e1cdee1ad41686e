/* SPDX-License-Identifier: ISC */
/*
 * The state file's JSON, outward (SPEC §6, §11): struct cb_state and its
 * history events as JSON text, written by the rows of statefields.c,
 * which stateparse.c reads by too.
 *
 * Every state field is always written (null, or an empty object, when
 * unset), so a file shows the whole schema; an event's optional fields
 * (user, progress, exit_code, class, type, task, error_hash) appear only
 * when set.  The skips are written twice over: as the names SPEC §6 lists
 * (skipped_phases, and skipped_tasks beside it) and as records with when,
 * why and who ("skips"); the loader takes the names as the truth.  The
 * members a newer cbexec wrote, which this one does not know, follow the
 * others as they were read.  Top-level members go one per line, history
 * events one per line.
 */
#include <stdlib.h>

#include <cJSON.h>

#include "core.h"
#include "store.h"
#include "schema.h"
#include "jsonfield.h"

void
state_events(struct jbuf *b, const struct cb_event *e, size_t n,
    const char *indent, const char *close, const char *lead)
{
	size_t i;

	if (n == 0) {
		jb_puts(b, "[]");
		return;
	}
	jb_puts(b, "[");
	for (i = 0; i < n; i++) {
		jb_puts(b, i > 0 ? ",\n" : "\n");
		jb_puts(b, indent);
		schema_write(b, &event_schema, &e[i], lead);
	}
	jb_puts(b, "\n");
	jb_puts(b, close);
}

char *
state_text(const struct cb_state *s)
{
	struct jbuf b = { NULL, 0, 0, 0 };

	schema_write(&b, &state_schema, s, NULL);
	return jb_finish(&b);
}

cJSON *
state_to_json(const struct cb_state *s)
{
	char *text = state_text(s);
	cJSON *j = text != NULL ? cJSON_Parse(text) : NULL;

	free(text);
	return j;
}
