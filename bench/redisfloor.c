/* SPDX-License-Identifier: ISC */
/*
 * redisfloor: the floor under cbexec --store, the same Redis round trips
 * made by plain commands (what redis-cli would send), around N runs of a
 * command, and nothing else.
 *
 *   redisfloor.bin SOCKET N SIZE KEY -- COMMAND [ARG...]
 *
 * Connects to the unix socket SOCKET; TIME; takes a lease (SET lock token
 * NX PX 30000 and GET KEY, pipelined: one round trip, as cbexec's lock
 * script is); then N times: fork, exec COMMAND, wait, and one SET of KEY
 * to SIZE bytes with PEXPIRE of the lease pipelined (one round trip, as
 * cbexec's save is); finally DEL of the lease.  No fencing, no parsing, no
 * JSON: the least a shared-store supervisor pays per invocation and per
 * run.  Exits with the last run's status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis.h>

static void
reply(redisContext *c)
{
	void *r;

	if (redisGetReply(c, &r) != REDIS_OK) {
		fprintf(stderr, "redisfloor: %s\n", c->errstr);
		exit(125);
	}
	freeReplyObject(r);
}

int
main(int argc, char **argv)
{
	struct timeval tv = { 2, 0 };
	redisContext *c;
	char *state, lock[256];
	long n, i;
	size_t size;
	int status = 0;
	pid_t pid;

	if (argc < 7 || strcmp(argv[5], "--") != 0) {
		fprintf(stderr, "usage: redisfloor.bin SOCKET N SIZE KEY -- "
		    "COMMAND [ARG...]\n");
		return 125;
	}
	n = atol(argv[2]);
	size = (size_t)atol(argv[3]);
	if ((state = malloc(size + 1)) == NULL)
		return 125;
	memset(state, 'x', size);
	state[size] = '\0';
	snprintf(lock, sizeof(lock), "%s:lock", argv[4]);
	c = redisConnectUnixWithTimeout(argv[1], tv);
	if (c == NULL || c->err) {
		fprintf(stderr, "redisfloor: cannot connect\n");
		return 125;
	}
	redisAppendCommand(c, "TIME");
	reply(c);
	redisAppendCommand(c, "SET %s tok NX PX 30000", lock);
	redisAppendCommand(c, "GET %s", argv[4]);
	reply(c);
	reply(c);
	for (i = 0; i < n; i++) {
		if ((pid = fork()) == -1)
			return 125;
		if (pid == 0) {
			execvp(argv[6], argv + 6);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		redisAppendCommand(c, "SET %s %b", argv[4], state, size);
		redisAppendCommand(c, "PEXPIRE %s 30000", lock);
		reply(c);
		reply(c);
	}
	redisAppendCommand(c, "DEL %s", lock);
	reply(c);
	redisFree(c);
	free(state);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 125;
}
