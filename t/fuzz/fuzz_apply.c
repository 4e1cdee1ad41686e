/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for what a run, a reset or a trip makes of a state
 * (SPEC §4 rule 7, §6): the input's first bytes pick the act and the run's
 * result, the rest is a state file.  A state that loads gets the act
 * applied -- with every counter first pushed to its top when the input
 * says so -- and what cbexec would then write must load again through
 * state_load(), with no counter gone negative: a state written and then
 * refused would hold the circuit at 125 for good.
 *
 * Layout: byte 0 the act (low 2 bits: run, reset, trip, skip; bit 2:
 * saturate the counters first), byte 1 the run (low 3 bits the class, bit
 * 3 progress, bit 4 ignored, bit 5 a task, bit 6 the same fingerprint as
 * the state's, bit 7 a provider's usage limit, its reset an hour off or,
 * with bit 3, none given), byte 2 the history size (0 = 1), then the
 * state's bytes.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "breaker.h"
#include "core.h"
#include "store.h"
#include "../../src/store/backend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static void
saturate(struct cb_state *s)
{
	size_t i;

	s->no_progress_count = s->same_error_count = INT_MAX;
	s->consecutive_errors = s->same_task_failures = INT_MAX;
	s->iteration = s->total_opens = CB_LONG_MAX;
	for (i = 0; i < CB_CLASS_COUNT; i++)
		s->errors_total[i] = CB_LONG_MAX;
}

static void
apply(struct cb_state *s, uint8_t act, uint8_t how, uint8_t hist)
{
	static const char hash[] = "0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	struct cb_limits l;
	struct cb_result res;
	struct cb_run run;
	char again[DIGEST_HEX_LEN + 1];

	breaker_default_limits(&l);
	l.history_size = hist > 0 ? hist : 1;
	if (act & 4)
		saturate(s);
	switch (act & 3) {
	case 0:
		memset(&run, 0, sizeof(run));
		run.cls = (enum cb_class)((how & 7) % CB_CLASS_COUNT);
		run.progress = (how >> 3) & 1;
		run.ignored = (how >> 4) & 1;
		run.task = (how & 32) ? "task-1" : NULL;
		run.type = run.cls == CB_CLASS_SUCCESS ? "" : "unknown";
		run.message = run.cls == CB_CLASS_SUCCESS ? NULL : "boom";
		/* The same error again: a copy of the state's hash, as the
		 * driver hands a run's own string, never the state's. */
		if ((how & 64) && s->last_error_hash != NULL)
			snprintf(again, sizeof(again), "%s", s->last_error_hash);
		else
			snprintf(again, sizeof(again), "%s", hash);
		run.hash = run.cls == CB_CLASS_SUCCESS ? "" : again;
		run.exit_code = run.cls == CB_CLASS_SUCCESS ? 0 : 1;
		if (how & 128) {
			run.cls = CB_CLASS_TRANSIENT;
			run.type = "usage_limit";
			run.message = "You've hit your limit";
			run.hash = hash;
			run.exit_code = 1;
			run.usage_limit = 1;
			run.retry_at = (how & 8) ? 0 : 1795003600;
		}
		breaker_admit(s, &l, 1795000000, &res);
		breaker_record(s, &l, &run, 1795000001, &res);
		break;
	case 1:
		breaker_reset(s, &l, "fuzz", "fuzzer", 1795000001, &res);
		break;
	case 2:
		breaker_trip(s, &l, "fuzz", "fuzzer", 1795000001, &res);
		break;
	default:
		breaker_skip(s, &l, SKIP_PHASE, "GREEN", "fuzz", "fuzzer",
		    1795000001, &res);
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_state s, again;
	char err[512], *text, *out;
	cJSON *j;
	size_t i;
	int fd;

	if (size < 3)
		return 0;
	if ((text = malloc(size - 2)) == NULL)
		return 0;
	memcpy(text, data + 3, size - 3);
	text[size - 3] = '\0';
	if (utf8_invalid(text, size - 3) != NULL ||
	    (j = cJSON_Parse(text)) == NULL) {
		free(text);
		return 0;
	}
	free(text);
	if (state_from_json(j, &s, err, sizeof(err)) != 0) {
		cJSON_Delete(j);
		return 0;
	}
	cJSON_Delete(j);
	apply(&s, data[0], data[1], data[2]);
	if (s.no_progress_count < 0 || s.same_error_count < 0 ||
	    s.consecutive_errors < 0 || s.same_task_failures < 0 ||
	    s.iteration < 0 || s.total_opens < 0)
		abort();
	for (i = 0; i < CB_CLASS_COUNT; i++)
		if (s.errors_total[i] < 0)
			abort();

	/* Written the way a save writes it, read the way a run reads it. */
	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/fuzz_apply.%ld.json",
		    (long)getpid());
	unlink(path);
	if (state_save(path, 0, &s, err, sizeof(err)) != 0) {
		fprintf(stderr, "save failed: %s\n", err);
		abort();
	}
	if (state_load(path, 0, NULL, &again, err, sizeof(err)) != 0) {
		out = state_text(&s);
		fprintf(stderr, "a state cbexec wrote does not load: %s\n%s\n",
		    err, out != NULL ? out : "");
		abort();
	}
	breaker_free(&again);
	breaker_free(&s);
	if ((fd = open(path, O_RDONLY)) != -1)
		close(fd);
	unlink(path);
	return 0;
}
