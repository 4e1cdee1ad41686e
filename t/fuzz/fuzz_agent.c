/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target for the agent adapters (agent/): a 4-byte seed picks
 * the adapter and the chunk sizes, the rest is fed as a run's stdout in
 * those chunks and also as its stderr, then the run is finished and
 * classified with the adapter's verdict.  Fed in one piece, the same
 * bytes must come to the same verdict (the tokenizer is incremental).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = { "claude", "codex", "gemini", "qwen",
    "opencode" };

static uint32_t
next(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* Read p[0..n) with the adapter a in chunks from seed (0: one piece);
 * the verdict's failed flag and type into *failed and type. */
static void
run(const struct agent *a, const char *p, size_t n, uint32_t seed,
    int *failed, char *type, size_t typelen)
{
	struct agent_run *r;
	struct agent_end e;
	struct agent_result res;
	struct run_facts f;
	struct classification c;
	size_t off = 0, k;

	if ((r = agent_run_new(a, NULL)) == NULL)
		abort();
	while (off < n) {
		k = seed == 0 ? n - off : 1 + next(&seed) % 257;
		if (k > n - off)
			k = n - off;
		agent_feed(r, p + off, k);
		off += k;
	}
	memset(&e, 0, sizeof(e));
	e.exit_code = 1;
	e.err = p;
	e.err_len = n;
	e.now = 1795381200;
	if (agent_finish(r, &e, &res) == -1)
		abort();
	memset(&f, 0, sizeof(f));
	f.command = "agent";
	f.exit_code = 1;
	f.err = p;
	f.err_len = n;
	f.out = p;
	f.out_len = n;
	f.agent = &res.v;
	if (classify(NULL, 0, &f, &c) == -1)
		abort();
	*failed = res.v.failed;
	strncpy(type, c.type, typelen - 1);
	type[typelen - 1] = '\0';
	classification_free(&c);
	status_free(&res.status);
	agent_run_free(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct agent *a;
	char *p, t1[64], t2[64];
	uint32_t seed;
	int f1, f2;

	if (size < 4)
		return 0;
	memcpy(&seed, data, 4);
	a = agent_by_name(names[seed % 5]);
	/* NUL-terminated, as the tails cbexec hands over are */
	if ((p = malloc(size - 4 + 1)) == NULL)
		abort();
	memcpy(p, data + 4, size - 4);
	p[size - 4] = '\0';
	run(a, p, size - 4, seed | 1, &f1, t1, sizeof(t1));
	run(a, p, size - 4, 0, &f2, t2, sizeof(t2));
	if (f1 != f2 || strcmp(t1, t2) != 0)
		abort();
	free(p);
	return 0;
}
