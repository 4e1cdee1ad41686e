/* SPDX-License-Identifier: ISC */
/*
 * The store as a seam (store/store.c): a --store URL's scheme picks a
 * backend from the table, an unknown one is refused naming those there
 * are; and the start record (SPEC §11): its line, read back, and when it
 * is pending (a run that began from this very state and was never saved)
 * or stale.
 */
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "../../src/store/backend.h"
#include "tap.h"

int
main(void)
{
	struct store_run r, back;
	struct cb_state s;
	char err[256], label[256], text[STORE_RUN_TEXT_MAX + 1];

	/* ---- the table of schemes ---- */
	is_int(store_url_check("redis://h", label, sizeof(label), err,
	    sizeof(err)), 0, "redis:// is a backend's");
	is_int(store_url_check("unix:///s.sock", label, sizeof(label), err,
	    sizeof(err)), 0, "unix:// is a backend's");
	is_int(store_url_check("ftp://u:pw@h", label, sizeof(label), err,
	    sizeof(err)), -1, "ftp:// is none");
	is_str(err, "invalid --store URL: the scheme is one of redis://, "
	    "rediss://, unix://, etcd:// or etcds://", "the message lists the "
	    "schemes of the table");
	is_int(store_url_check("etcd://h1,h2", label, sizeof(label), err,
	    sizeof(err)), 0, "etcd:// is a backend's");
	is_str(label, "etcd://h1:2379,h2:2379", "... its label");
	is_int(store_url_check("redis", label, sizeof(label), err,
	    sizeof(err)), -1, "no scheme at all");

	/* ---- the start record ---- */
	memset(&r, 0, sizeof(r));
	r.run = 7;
	r.generation = 6;
	r.pid = 4242;
	snprintf(r.host, sizeof(r.host), "build-01.example");
	r.started = 1795000000.5;
	is_int(store_run_text(&r, text, sizeof(text)), 0, "a record's text");
	is_str(text, "{\"run\":7,\"generation\":6,\"pid\":4242,\"host\":"
	    "\"build-01.example\",\"started\":\"2026-11-18T11:06:40.500Z\"}\n",
	    "one line of JSON");
	is_int(store_run_parse(text, strlen(text), &back), 0, "read back");
	ok(back.run == 7 && back.generation == 6 && back.pid == 4242 &&
	    strcmp(back.host, "build-01.example") == 0 &&
	    back.started == 1795000000.5, "the same record");
	/* what follows the first line is left from a longer one */
	memcpy(text + strlen(text), "junk, \"run\":9}", 15);
	is_int(store_run_parse(text, sizeof(text), &back), 0,
	    "a tail after the line is not read");
	is_int(back.run, 7, "the first line counts");
	snprintf(r.host, sizeof(r.host), "h\"x\\y");
	is_int(store_run_text(&r, text, sizeof(text)), 0, "an odd host name");
	is_int(store_run_parse(text, strlen(text), &back), 0, "still JSON");
	is_str(back.host, "h?x?y", "kept to a host name's characters");
	is_int(store_run_parse("        \n", 9, &back), -1,
	    "a blanked record is none");
	is_int(back.run, 0, "run 0");
	is_int(store_run_parse("{\"run\":0,\"generation\":0,\"pid\":1}", 33,
	    &back), -1, "run 0 is none");
	is_int(store_run_parse("{\"run\":\"x\"}", 11, &back), -1,
	    "a record of the wrong shape is none");

	breaker_init(&s, "p");
	s.generation = 6;
	s.iteration = 6;
	r.run = 7;
	r.generation = 6;
	ok(store_run_pending(&r, &s), "run 7 from generation 6: pending");
	s.generation = 7;
	s.iteration = 7;
	ok(!store_run_pending(&r, &s), "its save moved the generation on: "
	    "stale");
	s.generation = 6;
	s.iteration = 0;
	ok(!store_run_pending(&r, &s), "a state of another iteration: stale");
	r.run = 0;
	ok(!store_run_pending(&r, &s), "no record: nothing pending");
	breaker_free(&s);
	return done_testing();
}
