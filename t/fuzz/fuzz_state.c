/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for the state file (SPEC §6): the input is parsed with
 * cJSON and handed to state_from_json(), and the same bytes are loaded
 * from a file with state_load(), the way a run reads its circuit.  Any
 * state that loads must survive state_to_json() and load again: a file
 * cbexec wrote and then refuses would leave the circuit stuck on 125.
 * Its history then goes through the OPEN block's stuck analysis, which
 * reads whatever the events' messages hold.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "judge.h"
#include "report.h"
#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

/*
 * What cbexec writes for s must load again and print the same: a file it
 * wrote and then refused would stop the circuit at 125, and one that loads
 * differently would move a counter on a mere load (SPEC §4 rule 7).
 */
static void
roundtrip(const struct cb_state *s)
{
	struct stuck_analysis a;
	struct cb_state again;
	char err[512], *t1, *t2;
	cJSON *j, *k;

	if ((j = state_to_json(s)) == NULL || (t1 = cJSON_Print(j)) == NULL)
		abort();
	cJSON_Delete(j);
	if ((k = cJSON_Parse(t1)) == NULL) {
		fprintf(stderr, "state written by cbexec is not JSON:\n%s\n", t1);
		abort();
	}
	if (state_from_json(k, &again, err, sizeof(err)) != 0) {
		fprintf(stderr, "state written by cbexec does not load: %s\n%s\n",
		    err, t1);
		abort();
	}
	cJSON_Delete(k);
	if ((j = state_to_json(&again)) == NULL ||
	    (t2 = cJSON_Print(j)) == NULL)
		abort();
	cJSON_Delete(j);
	if (strcmp(t1, t2) != 0) {
		fprintf(stderr, "state changes on save and load:\n%s\n---\n%s\n",
		    t1, t2);
		abort();
	}
	free(t1);
	free(t2);
	breaker_free(&again);
	if (stuck_analyse(s, &a) == 1 && (a.failures < 1 ||
	    a.failures > STUCK_WINDOW || a.error_count > a.failures ||
	    a.file_count > a.failures || a.task_count > a.failures))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_state s;
	char err[512], *text;
	cJSON *j;
	int fd, rc;

	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* state_from_json() takes what state_load() lets through: UTF-8. */
	if (utf8_invalid(text, size) == NULL && (j = cJSON_Parse(text)) != NULL) {
		if (state_from_json(j, &s, err, sizeof(err)) == 0) {
			roundtrip(&s);
			breaker_free(&s);
		}
		cJSON_Delete(j);
	}
	free(text);

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/fuzz_state.%ld.json",
		    (long)getpid());
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	close(fd);
	rc = state_load(path, 0, "fuzz", &s, err, sizeof(err));
	if (rc >= 0) {
		roundtrip(&s);
		breaker_free(&s);
	}
	unlink(path);
	return 0;
}
