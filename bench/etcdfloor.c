/* SPDX-License-Identifier: ISC */
/*
 * etcdfloor: the floor under cbexec --store etcd://, the same HTTP calls
 * to etcd's JSON gateway made by libcurl's easy interface on one kept-alive
 * connection, around N runs of a command, and nothing else.
 *
 *   etcdfloor.bin HOST:PORT N SIZE NAME -- COMMAND [ARG...]
 *
 * A range of the lock key (cbexec's first word to the cluster, which says
 * it answers); a lease grant; the lock transaction (the lock key created
 * if absent, attached to the lease, and the state and the start record
 * read, as cbexec's); then N times: a transaction that writes the start
 * record, fork, exec COMMAND, wait, and a transaction that writes SIZE
 * bytes of state and deletes the record; finally the lease revoked.  No
 * comparison but the lock's, no parsing beyond the lease's id, no JSON
 * library: the least an etcd-backed supervisor pays per invocation and per
 * run.  Exits with the last run's status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/evp.h>

static CURL *c;
static char base[300], answer[1 << 16];
static size_t alen;

static size_t
take(char *p, size_t size, size_t n, void *u)
{
	size_t len = size * n, room = sizeof(answer) - 1 - alen;

	memcpy(answer + alen, p, len < room ? len : room);
	alen += len < room ? len : room;
	answer[alen] = '\0';
	return len;
}

static void
post(const char *path, const char *body)
{
	char url[400];
	long status = 0;

	snprintf(url, sizeof(url), "%s%s", base, path);
	alen = 0;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	if (curl_easy_perform(c) != CURLE_OK ||
	    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status) !=
	    CURLE_OK || status != 200) {
		fprintf(stderr, "etcdfloor: %s: HTTP %ld %s\n", path, status,
		    answer);
		exit(125);
	}
}

static char *
b64(const char *s, size_t n)
{
	char *out = malloc((n + 2) / 3 * 4 + 1);

	if (out == NULL)
		exit(125);
	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s,
	    (int)n);
	return out;
}

int
main(int argc, char **argv)
{
	struct curl_slist *h = NULL;
	char *state, *key, *lock, *run, *val, *rec, *body, id[32] = "0", *p;
	const char *recs = "{\"run\":1,\"generation\":1,\"pid\":1,"
	    "\"host\":\"h\",\"started\":\"2026-01-01T00:00:00.000Z\"}";
	char k[300];
	size_t size;
	long n, i;
	int status = 0;
	pid_t pid;

	if (argc < 7 || strcmp(argv[5], "--") != 0) {
		fprintf(stderr, "usage: etcdfloor.bin HOST:PORT N SIZE NAME -- "
		    "COMMAND [ARG...]\n");
		return 125;
	}
	snprintf(base, sizeof(base), "http://%s", argv[1]);
	n = atol(argv[2]);
	size = (size_t)atol(argv[3]);
	if ((state = malloc(size + 1)) == NULL ||
	    (body = malloc(size * 2 + 4096)) == NULL)
		return 125;
	memset(state, 'x', size);
	snprintf(k, sizeof(k), "floor:circuit:%s", argv[4]);
	key = b64(k, strlen(k));
	snprintf(k, sizeof(k), "floor:lock:%s", argv[4]);
	lock = b64(k, strlen(k));
	snprintf(k, sizeof(k), "floor:run:%s", argv[4]);
	run = b64(k, strlen(k));
	val = b64(state, size);
	rec = b64(recs, strlen(recs));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	c = curl_easy_init();
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, take);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 2000L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");

	sprintf(body, "{\"key\":\"%s\",\"keys_only\":true}", lock);
	post("/v3/kv/range", body);
	post("/v3/lease/grant", "{\"TTL\":\"30\",\"ID\":\"0\"}");
	if ((p = strstr(answer, "\"ID\":\"")) != NULL)
		snprintf(id, sizeof(id), "%.*s", (int)strcspn(p + 6, "\""),
		    p + 6);
	sprintf(body, "{\"compare\":[{\"key\":\"%s\",\"target\":\"CREATE\","
	    "\"result\":\"EQUAL\",\"create_revision\":\"0\"}],\"success\":["
	    "{\"request_put\":{\"key\":\"%s\",\"value\":\"eA==\",\"lease\":"
	    "\"%s\"}},{\"request_range\":{\"key\":\"%s\"}},{\"request_range\":"
	    "{\"key\":\"%s\"}}],\"failure\":[{\"request_range\":{\"key\":"
	    "\"%s\"}}]}", lock, lock, id, key, run, lock);
	post("/v3/kv/txn", body);
	for (i = 0; i < n; i++) {
		sprintf(body, "{\"success\":[{\"request_put\":{\"key\":\"%s\","
		    "\"value\":\"%s\"}}]}", run, rec);
		post("/v3/kv/txn", body);
		if ((pid = fork()) == -1)
			return 125;
		if (pid == 0) {
			execvp(argv[6], argv + 6);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		sprintf(body, "{\"success\":[{\"request_put\":{\"key\":\"%s\","
		    "\"value\":\"%s\"}},{\"request_delete_range\":{\"key\":"
		    "\"%s\"}}]}", key, val, run);
		post("/v3/kv/txn", body);
	}
	sprintf(body, "{\"ID\":\"%s\"}", id);
	post("/v3/lease/revoke", body);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 125;
}
