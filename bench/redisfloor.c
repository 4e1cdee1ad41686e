/* SPDX-License-Identifier: ISC */
/*
 * redisfloor: the floor under cbexec --store, the same Redis round trips
 * made by plain commands (what redis-cli would send), around N runs of a
 * command, and nothing else.
 *
 *   redisfloor.bin ADDR N SIZE KEY -- COMMAND [ARG...]
 *
 * ADDR is a unix socket's path, tcp:HOST:PORT, or tls:HOST:PORT:CAFILE
 * (TLS with OpenSSL, the server's certificate verified against CAFILE and
 * HOST, as cbexec's rediss:// does; only when built with -DFLOOR_TLS and
 * libssl, which the other floors must not load: cbexec does not).  TCP
 * without Nagle's delay, as cbexec's.  Connects; TIME; takes a lease (SET
 * lock token NX PX 30000 and GET KEY, pipelined: one round trip, as
 * cbexec's lock script is); then N times: fork, exec COMMAND, wait, and
 * one SET of KEY to SIZE bytes with PEXPIRE of the lease pipelined (one
 * round trip, as cbexec's save is); finally DEL of the lease.  No
 * fencing, no parsing, no JSON, blocking I/O: the least a shared-store
 * supervisor pays per invocation and per run.  Exits with the last run's
 * status.
 */
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis.h>
#ifdef FLOOR_TLS
#include <openssl/ssl.h>
#define TLS_WRITE(b, n) SSL_write(ssl, b, n)
#define TLS_READ(b, n) SSL_read(ssl, b, n)
static SSL *ssl;
#else
#define TLS_WRITE(b, n) -1
#define TLS_READ(b, n) -1
static void *ssl;
#endif

static int fd = -1;
static redisReader *rd;
static char *out;
static size_t outlen;

static void
die(const char *what)
{
	fprintf(stderr, "redisfloor: %s\n", what);
	exit(125);
}

/* A command appended to what the next flush writes. */
static void
cmd(const char *fmt, ...)
{
	va_list ap;
	char *c;
	int n;

	va_start(ap, fmt);
	n = redisvFormatCommand(&c, fmt, ap);
	va_end(ap);
	if (n < 0 || (out = realloc(out, outlen + n)) == NULL)
		die("out of memory");
	memcpy(out + outlen, c, n);
	outlen += n;
	free(c);
}

static void
flush(void)
{
	size_t off = 0;
	ssize_t k;

	while (off < outlen) {
		k = ssl != NULL ? TLS_WRITE(out + off, outlen - off) :
		    write(fd, out + off, outlen - off);
		if (k <= 0)
			die("write failed");
		off += k;
	}
	outlen = 0;
}

static void
reply(void)
{
	char buf[16384];
	void *r = NULL;
	ssize_t k;

	for (;;) {
		if (redisReaderGetReply(rd, &r) != REDIS_OK)
			die("protocol error");
		if (r != NULL)
			break;
		k = ssl != NULL ? TLS_READ(buf, sizeof(buf)) :
		    read(fd, buf, sizeof(buf));
		if (k <= 0)
			die("connection lost");
		redisReaderFeed(rd, buf, k);
	}
	if (((redisReply *)r)->type == REDIS_REPLY_ERROR)
		die(((redisReply *)r)->str);
	freeReplyObject(r);
}

static void
dial(char *addr)
{
	struct addrinfo hints, *res;
	struct sockaddr_un sun;
	char *host, *port, *ca = NULL;
	int tls, one = 1;

	if (addr[0] == '/') {
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", addr);
		if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
		    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
			die("cannot connect");
		return;
	}
	tls = strncmp(addr, "tls:", 4) == 0;
	if (!tls && strncmp(addr, "tcp:", 4) != 0)
		die("ADDR: /path, tcp:HOST:PORT or tls:HOST:PORT:CAFILE");
	host = addr + 4;
	if ((port = strchr(host, ':')) == NULL)
		die("no port");
	*port++ = '\0';
	if (tls) {
		if ((ca = strchr(port, ':')) == NULL)
			die("no CA file");
		*ca++ = '\0';
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &res) != 0)
		die("cannot resolve");
	if ((fd = socket(res->ai_family, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, res->ai_addr, res->ai_addrlen) == -1)
		die("cannot connect");
	freeaddrinfo(res);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!tls)
		return;
#ifndef FLOOR_TLS
	die("built without TLS (-DFLOOR_TLS)");
#else
	SSL_CTX *ctx;

	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)
		die("TLS: cannot load the CA");
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if ((ssl = SSL_new(ctx)) == NULL || SSL_set_fd(ssl, fd) != 1 ||
	    SSL_set1_host(ssl, host) != 1 ||
	    SSL_set_tlsext_host_name(ssl, host) != 1 || SSL_connect(ssl) != 1)
		die("TLS handshake failed");
#endif
}

int
main(int argc, char **argv)
{
	char *state, lock[256];
	long n, i;
	size_t size;
	int status = 0;
	pid_t pid;

	if (argc < 7 || strcmp(argv[5], "--") != 0) {
		fprintf(stderr, "usage: redisfloor.bin ADDR N SIZE KEY -- "
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
	dial(argv[1]);
	if ((rd = redisReaderCreate()) == NULL)
		die("out of memory");
	cmd("TIME");
	flush();
	reply();
	cmd("SET %s tok NX PX 30000", lock);
	cmd("GET %s", argv[4]);
	flush();
	reply();
	reply();
	for (i = 0; i < n; i++) {
		if ((pid = fork()) == -1)
			return 125;
		if (pid == 0) {
			execvp(argv[6], argv + 6);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		cmd("SET %s %b", argv[4], state, size);
		cmd("PEXPIRE %s 30000", lock);
		flush();
		reply();
		reply();
	}
	cmd("DEL %s", lock);
	flush();
	reply();
#ifdef FLOOR_TLS
	if (ssl != NULL)
		SSL_shutdown(ssl);
#endif
	close(fd);
	free(state);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 125;
}
