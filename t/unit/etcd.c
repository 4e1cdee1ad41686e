/* SPDX-License-Identifier: ISC */
/*
 * The etcd client's pure parts (store/etcdapi.c): the etcd:// URL and its
 * label (never the password), the JSON of a transaction as etcd's gateway
 * takes it (keys and values in base64, numbers as strings), its answers
 * as the gateway gives them (members with a zero value left out), an
 * error answer, base64 through libcurl's libcrypto, and the clock taken
 * from answers' Date headers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "../../src/store/etcd.h"
#include "../../src/store/http.h"
#include "tap.h"

static const char *
label(const char *url)
{
	static char l[1024];
	struct etcd_url u;
	const char *why;

	if (etcd_url_parse(url, &u, &why) == -1)
		return NULL;
	etcd_url_label(&u, l, sizeof(l));
	return l;
}

/* The member name's value in the JSON text, as compact JSON. */
static char *
member(const char *text, const char *path)
{
	cJSON *j = cJSON_Parse(text), *v = j;
	char buf[256], *p, *tok, *save = NULL, *out;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf; (tok = strtok_r(p, ".", &save)) != NULL; p = NULL) {
		if (v == NULL)
			break;
		v = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, atoi(tok)) :
		    cJSON_GetObjectItemCaseSensitive(v, tok);
	}
	out = v == NULL ? strdup("(none)") : cJSON_IsString(v) ?
	    strdup(v->valuestring) : cJSON_PrintUnformatted(v);
	cJSON_Delete(j);
	return out;
}

#define is_member(text, path, want, desc) do {				\
	char *m_ = member((text), (path));				\
	is_str(m_, (want), (desc));					\
	free(m_);							\
} while (0)

int
main(void)
{
	static const char *bad[] = {
		"", "etcd", "etcd://", "http://h:2379", "etcd://h:0",
		"etcd://h:65536", "etcd://h:2x", "etcd://h/x", "etcd://h,",
		"etcd://,h", "etcd://h,,k", "etcd://[::1", "etcd://h h",
		"etcd://@h", "etcd://u:p%zz@h", "etcd://h:", NULL
	};
	struct etcd_url u;
	struct etcd_txn_res r;
	struct etcd_resp rr;
	struct etcd_cmp cmp[2];
	struct etcd_op ok_ops[2], fail_ops[1];
	const char *why;
	char *text, *b, *d, msg[256], err[256];
	size_t i, n, off, len;
	double lo = 0, hi = 0, o;
	int have = 0;

	for (i = 0; bad[i] != NULL; i++) {
		char desc[128];

		snprintf(desc, sizeof(desc), "'%s' is refused", bad[i]);
		ok(etcd_url_parse(bad[i], &u, &why) == -1, desc);
	}
	is_str(label("etcd://h1:2379,h2:2379,h3:2379"),
	    "etcd://h1:2379,h2:2379,h3:2379", "three members");
	is_str(label("etcd://h1,10.0.0.2,[::1]:32379/"),
	    "etcd://h1:2379,10.0.0.2:2379,[::1]:32379",
	    "the default port 2379, IPv6 in brackets, a trailing /");
	is_str(label("etcds://cb:s3cret@h1:2379,h2:2379"),
	    "etcds://cb@h1:2379,h2:2379", "the label has the user, never "
	    "the password");
	ok(etcd_url_parse("etcds://cb%40x:p%3Aw@h", &u, &why) == 0 &&
	    strcmp(u.user, "cb@x") == 0 && strcmp(u.pass, "p:w") == 0 &&
	    u.has_pass && u.tls, "user and password %XX-decoded, etcds is TLS");
	ok(etcd_url_parse("etcd://cb@h", &u, &why) == 0 && !u.has_pass &&
	    strcmp(u.user, "cb") == 0, "a user without a password");
	ok(etcd_url_password("etcd://cb:s3cret@h1,h2", &off, &len) == 1 &&
	    off == 10 && len == 6, "where the URL's password is");
	ok(etcd_url_password("etcd://cb@h1,h2", &off, &len) == 0,
	    "no password: none");
	{
		char many[2048] = "etcd://h0";

		for (i = 1; i <= 16; i++)
			snprintf(many + strlen(many), sizeof(many) -
			    strlen(many), ",h%zu", i);
		ok(etcd_url_parse(many, &u, &why) == -1 &&
		    strstr(why, "16") != NULL, "at most 16 endpoints");
	}

	/* base64, through the libcrypto libcurl brings */
	b = http_b64("cbexec:circuit:a", 16);
	is_str(b, "Y2JleGVjOmNpcmN1aXQ6YQ==", "base64 with padding");
	d = b != NULL ? http_unb64(b, strlen(b), &n) : NULL;
	ok(d != NULL && n == 16 && memcmp(d, "cbexec:circuit:a", 16) == 0,
	    "and back, the padding not counted");
	free(b);
	free(d);
	d = http_unb64("YQ", 2, &n);
	ok(d == NULL, "base64 of a wrong length is refused");
	d = http_unb64("Y*==", 4, &n);
	ok(d == NULL, "a byte outside the alphabet is refused");
	d = http_unb64("", 0, &n);
	ok(d != NULL && n == 0, "empty is empty");
	free(d);
	b = http_b64("\0\377x", 3);
	d = b != NULL ? http_unb64(b, strlen(b), &n) : NULL;
	ok(d != NULL && n == 3 && memcmp(d, "\0\377x", 3) == 0,
	    "binary bytes round-trip");
	free(b);
	free(d);

	/* a save's transaction */
	cmp[0] = (struct etcd_cmp){ .key = "cbexec:circuit:a",
	    .target = ETCD_MOD, .v = 41 };
	cmp[1] = (struct etcd_cmp){ .key = "cbexec:lock:a",
	    .target = ETCD_LEASE, .v = 7587870021893410000LL };
	ok_ops[0] = (struct etcd_op){ .kind = ETCD_PUT,
	    .key = "cbexec:circuit:a", .value = "{}", .vlen = 2 };
	ok_ops[1] = (struct etcd_op){ .kind = ETCD_DELETE,
	    .key = "cbexec:run:a" };
	fail_ops[0] = (struct etcd_op){ .kind = ETCD_RANGE,
	    .key = "cbexec:circuit:", .end = "cbexec:circuit;", .endlen = 15,
	    .keys_only = 1 };
	text = etcd_txn_json(cmp, 2, ok_ops, 2, fail_ops, 1);
	ok(text != NULL, "a transaction's JSON");
	is_member(text, "compare.0.key", "Y2JleGVjOmNpcmN1aXQ6YQ==",
	    "the key in base64");
	is_member(text, "compare.0.target", "MOD", "target MOD");
	is_member(text, "compare.0.result", "EQUAL", "result EQUAL");
	is_member(text, "compare.0.mod_revision", "41",
	    "the revision as a string");
	is_member(text, "compare.1.target", "LEASE", "target LEASE");
	is_member(text, "compare.1.lease", "7587870021893410000",
	    "a 64-bit lease id exactly (a string, not a double)");
	is_member(text, "success.0.request_put.value", "e30=",
	    "the value in base64");
	is_member(text, "success.0.request_put.lease", "(none)",
	    "no lease on a put without one");
	is_member(text, "success.1.request_delete_range.key",
	    "Y2JleGVjOnJ1bjph", "a delete");
	is_member(text, "failure.0.request_range.range_end",
	    "Y2JleGVjOmNpcmN1aXQ7", "a range's end");
	is_member(text, "failure.0.request_range.keys_only", "true",
	    "keys only");
	free(text);
	cmp[0] = (struct etcd_cmp){ .key = "k", .target = ETCD_CREATE, .v = 0 };
	ok_ops[0] = (struct etcd_op){ .kind = ETCD_PUT, .key = "k",
	    .value = "", .vlen = 0, .lease = 12 };
	text = etcd_txn_json(cmp, 1, ok_ops, 1, NULL, 0);
	is_member(text, "compare.0.create_revision", "0", "CREATE 0: absent");
	is_member(text, "success.0.request_put.lease", "12",
	    "a put with a lease");
	is_member(text, "failure", "(none)", "no failure branch");
	free(text);

	/* answers as the gateway gives them */
	ok(etcd_txn_parse("{\"header\":{\"cluster_id\":\"1\",\"member_id\":"
	    "\"2\",\"revision\":\"9\",\"raft_term\":\"2\"},\"succeeded\":true,"
	    "\"responses\":[{\"response_put\":{\"header\":{\"revision\":\"9\""
	    "}}},{\"response_range\":{\"header\":{\"revision\":\"9\"},\"kvs\":"
	    "[{\"key\":\"YQ==\",\"create_revision\":\"3\",\"mod_revision\":"
	    "\"8\",\"version\":\"4\",\"value\":\"e30=\"}],\"count\":\"1\"}}]}",
	    &r, err, sizeof(err)) == 0, "a transaction that succeeded");
	ok(r.succeeded && r.revision == 9 && r.nresp == 2 &&
	    r.resp[0].kind == ETCD_PUT && r.resp[1].kind == ETCD_RANGE &&
	    r.resp[1].nkvs == 1 && r.resp[1].count == 1,
	    "succeeded, its revision, a put and a range");
	ok(r.resp[1].nkvs == 1 && strcmp(r.resp[1].kvs[0].key, "a") == 0 &&
	    strcmp(r.resp[1].kvs[0].value, "{}") == 0 &&
	    r.resp[1].kvs[0].create == 3 && r.resp[1].kvs[0].mod == 8 &&
	    r.resp[1].kvs[0].version == 4 && r.resp[1].kvs[0].lease == 0,
	    "the key, its value and revisions; no lease: 0");
	etcd_txn_res_free(&r);
	ok(etcd_txn_parse("{\"header\":{\"revision\":\"10\"},\"responses\":"
	    "[{\"response_range\":{\"header\":{\"revision\":\"10\"}}}]}", &r,
	    err, sizeof(err)) == 0 && !r.succeeded && r.nresp == 1 &&
	    r.resp[0].nkvs == 0 && r.resp[0].count == 0,
	    "a failed transaction has no 'succeeded'; an empty range no kvs");
	etcd_txn_res_free(&r);
	ok(etcd_txn_parse("{\"header\":{\"revision\":\"10\"},\"responses\":"
	    "[{\"response_range\":{\"kvs\":[{\"key\":\"YQ==\",\"value\":"
	    "\"not base64!\"}]}}]}", &r, err, sizeof(err)) == -1,
	    "a value that is not base64: not etcd's answer");
	ok(etcd_txn_parse("[]", &r, err, sizeof(err)) == -1,
	    "an array: not etcd's answer");
	ok(etcd_txn_parse("{\"responses\":[{\"response_x\":{}}]}", &r, err,
	    sizeof(err)) == -1, "an unknown response: not etcd's answer");
	ok(etcd_range_parse("{\"header\":{},\"kvs\":[{\"key\":\"YQ==\","
	    "\"create_revision\":\"2\",\"mod_revision\":\"2\",\"version\":"
	    "\"1\",\"lease\":\"77\"}],\"count\":\"1\"}", &rr, err,
	    sizeof(err)) == 0 && rr.nkvs == 1 && rr.kvs[0].lease == 77 &&
	    strcmp(rr.kvs[0].value, "") == 0,
	    "a range: a value left out is empty; its lease");
	etcd_resp_free(&rr);
	is_int(etcd_error_parse("{\"error\":\"etcdserver: no leader\","
	    "\"message\":\"etcdserver: no leader\",\"code\":14}", msg,
	    sizeof(msg)), 14, "an error answer: its code");
	is_str(msg, "etcdserver: no leader", "and its message");
	is_int(etcd_error_parse("Client sent an HTTP request", msg,
	    sizeof(msg)), -1, "not JSON: no error of etcd's");

	/* the clock from Date headers */
	o = etcd_clock_fold(&have, &lo, &hi, 1000, 1000.2, 1000.3);
	ok(o == 0, "a clock that agrees with the store's is kept (offset 0)");
	have = 0;
	o = etcd_clock_fold(&have, &lo, &hi, 1000, 8200.2, 8200.3);
	ok(o > -7200.31 && o < -7199.19, "two hours fast: set right to "
	    "within a second");
	o = etcd_clock_fold(&have, &lo, &hi, 1001, 8200.9, 8201.0);
	ok(fabs(hi - lo) < 1.0 && o >= lo && o <= hi,
	    "a second answer narrows the interval");
	o = etcd_clock_fold(&have, &lo, &hi, 5000, 8201.1, 8201.2);
	ok(o > -3201.3 && o < -3200.0,
	    "a store clock that stepped: the new answer alone");

	return done_testing();
}
