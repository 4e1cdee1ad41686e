/* SPDX-License-Identifier: ISC */
/*
 * The shared store (SPEC §9, §11, --store): circuits kept in one Redis
 * master, so that many hosts share one breaker.
 *
 * Keys, one circuit NAME:
 *   cbexec:circuit:NAME   the state, the same JSON as a state file (so
 *                         `redis-cli GET` shows what --status --json does)
 *   cbexec:lock:NAME      the lease: a random token, its holder's host
 *                         and pid after it ("TOKEN HOST PID", for
 *                         --status), with an expiry
 *   cbexec:run:NAME       the start record of the run going on (SPEC
 *                         §11), one line of JSON, written fenced before
 *                         the command starts and deleted by its save
 *   cbexec:corrupt:NAME:TIMESTAMP  a corrupt state a reset moved aside
 *   cbexec:account:NAME   an account's gate (--account), the same JSON as
 *                         the file store's NAME.account; changed by a
 *                         compare-and-set on its generation, no lease
 *
 * The lock is a lease: SET lock token NX PX lease.  Its holder renews it
 * (store_keepalive, from the run's event loop) and deletes it at the end
 * only while it still holds that token.  A holder that stops (SIGSTOP, a
 * partition, a machine that hangs) loses the lease when it expires, and
 * another host may take the circuit.  What keeps the stopped holder from
 * then writing over the newer state is the fence: every write is one Lua
 * script that checks, atomically in Redis, that the lease is still this
 * holder's token (or is free, and the state is unchanged since it was
 * loaded: nobody else ran) and that the state still has the generation
 * this holder loaded; only then is the new state (generation + 1)
 * written.  Otherwise nothing is written and the caller exits 125.
 *
 * Time comes from Redis (TIME, read with the lock and with each renewal
 * and advanced by our monotonic clock in between), so opened_at,
 * cooldowns and retry_at mean the same on every host whatever its clock
 * says; leases expire on Redis's clock too.
 *
 * Every store command is bounded by --store-timeout as a whole: name
 * resolution (getaddrinfo_a, given up at the deadline), the connect, the
 * request and the whole reply, however it trickles (the reply is read as
 * it comes, with poll(2) on what is left of the deadline, and refused
 * past MAX_STATE_SIZE without being buffered whole).  A renewal's
 * deadline is also the lease's own: the time the last successful one was
 * sent plus the lease, less a margin (store_lease_until()).  An operator
 * signal ends a wait for the store at once (store_poll).  While the command
 * runs, a renewal is sent and its reply read as it comes, on the run
 * engine's loop (redis_keepalive_async()): a slow store never stalls the
 * relay or the timers.  A connection found closed (an idle timeout of the
 * server) is opened again within the same deadline, and a command that
 * may be repeated (TIME, GET, the lock, a renewal) is sent again once.
 * The socket is non-blocking and close-on-exec, so the command never
 * inherits it.
 *
 * Every request that sets the lease (the lock, a renewal, a save) carries
 * the holder's token and the latest store time it may act at (the
 * store's clock as last read plus the timeout): a request that a
 * partition delivers late does nothing, so it can never take a lease
 * again for a holder that has gone.
 *
 * Each step that needs more than one command is one script (EVAL), so a
 * step is one round trip: taking the lock also reads the state, the start
 * record and the time; a renewal also reads the time; putting a run on
 * record also renews the lease.
 *
 * The connection is a socket of our own, written and read without
 * blocking (flush(), take()); hiredis formats the requests and its reader
 * parses the replies.  rediss:// puts a TLS session of tls.c on that
 * socket: its steps say whether they want the socket readable or
 * writable, and are polled for by the same deadlines, the handshake
 * included.  A new connection's first round trip is HELLO (with AUTH:
 * logging in, and the node's role, which ROLE would need @admin to say),
 * SELECT and TIME; a node that is not the master is refused, and so is a
 * READONLY reply later (a master demoted under us).  With
 * --store-replicas N, a WAIT N goes in the same round trip as each script
 * that sets the lease or saves: a lease the replicas did not confirm is
 * not taken (or, renewed, does not move the local deadline), a save they
 * did not confirm "may or may not have been saved".
 *
 * The handle reaches this file through struct store_backend (store_redis,
 * at the end), for the schemes redis://, rediss:// and unix://.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>
#include <hiredis.h>

#include "core.h"
#include "store.h"
#include "backend.h"
#include "guard.h"
#include "tls.h"

struct url {
	int unix_sock;
	int tls;		/* rediss:// */
	char host[256];
	int port;
	char path[PATH_MAX];
	char user[256], pass[256];
	int has_pass;
	long db;
	size_t pass_off, pass_len;	/* the password as written in the
					 * URL's text (pass_len 0: none) */
};

struct store_redis {
	int fd;			/* the connection, -1: none */
	struct tls *tls;	/* rediss://: the session over fd */
	redisReader *rd;	/* its replies as they come */
	char *out;		/* requests not yet written, from outoff */
	size_t outlen, outoff;
	struct tls_ctx *tctx;	/* rediss://: made on the first connect */
	struct tls_cfg tcfg;
	int replicas;		/* --store-replicas: WAIT for that many */
	int wait;		/* the next command waits for them */
	long long acked;	/* how many its WAIT counted */
	char unconfirmed[160];	/* a renewal the replicas did not confirm */
	double until;		/* the next command's deadline, 0: the
				 * timeout's from now */
	int again;		/* the next command may be asked twice */
	int ever;		/* it was connected once */
	struct url u;		/* to connect again (wiped at the close) */
	char node[PATH_MAX + 16];	/* host:port or the socket's path */
	double sent;		/* mono_now() when the last command was sent */
	double got;		/* and when the reply to it came */
	int pending;		/* a renewal sent, its reply not yet read */
	double pend_until;	/* its deadline */
	redisReply *pend_rep;	/* its reply, while its WAIT's is awaited */
	double pend_got;	/* when that came */
	char *key, *lock;	/* cbexec:circuit:NAME, cbexec:lock:NAME */
	char *run;		/* cbexec:run:NAME */
	char token[128];	/* this holder's lease: hex, host, pid */
	char *fetched;		/* the state the lock step read, or NULL */
	size_t fetched_len;
	char *fetched_run;	/* the start record it read, or NULL */
	int have_fetched;	/* fetched holds what the lock step read
				 * (NULL: there was no state) */
};

/* ---- the URL ---- */

/* A database number: digits only, at most 1000000. */
static int
parse_db(const char *s, size_t n, long *db)
{
	size_t i;
	long v = 0;

	if (n == 0 || n > 7)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v > 1000000)
		return -1;
	*db = v;
	return 0;
}

/*
 * The one reader of a --store URL: redis://, rediss:// (TLS) or unix://.
 *   redis[s]://[USER[:PASSWORD]@]HOST[:PORT][/DB]
 *   unix:///PATH[?db=N]
 * USER@ alone names the user whose password comes from
 * --store-password-file or CBEXEC_STORE_PASSWORD; :PASSWORD@ alone is
 * the default user's.  The credentials end at the last '@' before the
 * path (a password may hold an '@'), the user at the first ':'.  Where
 * the password is in the text is kept (pass_off, pass_len), so that what
 * overwrites it in cbexec's arguments reads the URL as this does.
 */
static int
url_parse(const char *url, struct url *u, const char **why)
{
	const char *p, *at, *colon, *host, *hend, *q;
	size_t i, n;

	memset(u, 0, sizeof(*u));
	u->port = 6379;
	if (strncmp(url, "unix://", 7) == 0) {
		p = url + 7;
		u->unix_sock = 1;
		if (*p != '/') {
			*why = "a unix:// URL names an absolute path "
			    "(unix:///path.sock)";
			return -1;
		}
		q = strchr(p, '?');
		n = q != NULL ? (size_t)(q - p) : strlen(p);
		if (n <= 1 ||
		    pct_decode(p, n, u->path, sizeof(u->path)) == -1) {
			*why = "bad socket path";
			return -1;
		}
		if (q != NULL && (strncmp(q, "?db=", 4) != 0 ||
		    parse_db(q + 4, strlen(q + 4), &u->db) == -1)) {
			*why = "after the path only ?db=N (a database number)";
			return -1;
		}
		return 0;
	}
	if (strncmp(url, "redis://", 8) == 0)
		p = url + 8;
	else if (strncmp(url, "rediss://", 9) == 0) {
		p = url + 9;
		u->tls = 1;
	} else {
		*why = "the scheme is redis://, rediss:// (TLS) or unix://";
		return -1;
	}
	n = strcspn(p, "/");
	at = memrchr(p, '@', n);
	if (at != NULL) {
		colon = memchr(p, ':', (size_t)(at - p));
		if (at == p) {
			*why = "nothing before '@' (user@, user:password@ or "
			    ":password@)";
			return -1;
		}
		if (pct_decode(p, (size_t)((colon != NULL ? colon : at) - p),
		    u->user, sizeof(u->user)) == -1 || (colon != NULL &&
		    pct_decode(colon + 1, (size_t)(at - colon - 1), u->pass,
		    sizeof(u->pass)) == -1)) {
			*why = "bad user or password";
			return -1;
		}
		if (colon != NULL && at > colon + 1) {
			u->has_pass = 1;
			u->pass_off = (size_t)(colon + 1 - url);
			u->pass_len = (size_t)(at - colon - 1);
		}
		p = at + 1;
	}
	host = p;
	if (*host == '[') {
		if ((hend = strchr(host, ']')) == NULL) {
			*why = "an IPv6 address without its ']'";
			return -1;
		}
		host++;
		p = hend + 1;
	} else {
		for (hend = host; *hend != '\0' && *hend != ':' &&
		    *hend != '/'; hend++)
			;
		p = hend;
	}
	if (hend == host || (size_t)(hend - host) >= sizeof(u->host)) {
		*why = "no host";
		return -1;
	}
	for (i = 0; host + i < hend; i++) {
		char c = host[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '-' ||
		    c == ':' || c == '_')) {
			*why = "bad host name";
			return -1;
		}
		u->host[i] = c;
	}
	u->host[i] = '\0';
	if (*p == ':') {
		long port = 0;

		p++;
		for (i = 0; p[i] >= '0' && p[i] <= '9' && i < 6; i++)
			port = port * 10 + (p[i] - '0');
		if (i == 0 || port < 1 || port > 65535 ||
		    (p[i] != '\0' && p[i] != '/')) {
			*why = "the port is a number from 1 to 65535";
			return -1;
		}
		u->port = (int)port;
		p += i;
	}
	if (*p == '/' && p[1] != '\0' &&
	    parse_db(p + 1, strlen(p + 1), &u->db) == -1) {
		*why = "after the host only /DB (a database number)";
		return -1;
	}
	if (*p != '\0' && *p != '/') {
		*why = "bad host";
		return -1;
	}
	return 0;
}

static void
url_label(const struct url *u, char *label, size_t len)
{
	if (u->unix_sock)
		snprintf(label, len, "unix://%s%s%.0ld", u->path,
		    u->db != 0 ? "?db=" : "", u->db);
	else
		snprintf(label, len, "%s://%s%s%s%s%s:%d/%ld", u->tls ?
		    "rediss" : "redis", u->user, u->user[0] != '\0' ? "@" : "",
		    strchr(u->host, ':') ? "[" : "", u->host,
		    strchr(u->host, ':') ? "]" : "", u->port, u->db);
}

/* The node as people name it: host:port, or the socket's path. */
static void
url_node(const struct url *u, char *node, size_t len)
{
	if (u->unix_sock)
		snprintf(node, len, "%s", u->path);
	else
		snprintf(node, len, "%s%s%s:%d", strchr(u->host, ':') ? "[" :
		    "", u->host, strchr(u->host, ':') ? "]" : "", u->port);
}

static int
redis_check(const char *url, char *label, size_t labellen, char *err,
    size_t errlen)
{
	const char *why = "";
	struct url u;

	/* The URL is not repeated: it may hold a password. */
	if (url_parse(url, &u, &why) == -1) {
		memset(&u, 0, sizeof(u));
		snprintf(err, errlen, "invalid --store URL: %s (use "
		    "redis[s]://[user[:password]@]host[:port][/db] or "
		    "unix:///path.sock[?db=N])", why);
		return -1;
	}
	if (label != NULL)
		url_label(&u, label, labellen);
	memset(&u, 0, sizeof(u));
	return 0;
}

static int
redis_password(const char *url, size_t *off, size_t *len)
{
	const char *why;
	struct url u;
	int has;

	*off = *len = 0;
	if (url_parse(url, &u, &why) == -1)
		return 0;
	has = u.pass_len > 0;
	*off = u.pass_off;
	*len = u.pass_len;
	memset(&u, 0, sizeof(u));
	return has;
}

/* ---- the connection: every step by a deadline (mono_now() clock) ---- */

/* Forget the connection: after a timeout or an interrupt its next bytes
 * would be the answer to a question nobody asks any more.  What it held
 * to write (an AUTH, a state) is wiped. */
static void
drop(struct store_redis *r)
{
	if (r->tls != NULL)
		tls_free(r->tls);
	r->tls = NULL;
	if (r->fd != -1)
		close(r->fd);
	r->fd = -1;
	if (r->rd != NULL)
		redisReaderFree(r->rd);
	r->rd = NULL;
	if (r->out != NULL)
		explicit_bzero(r->out, r->outlen);
	free(r->out);
	r->out = NULL;
	r->outlen = r->outoff = 0;
	if (r->pend_rep != NULL)
		freeReplyObject(r->pend_rep);
	r->pend_rep = NULL;
}

/* A resolution getaddrinfo_a may still be using when it is given up:
 * then it is left to it, not freed under it. */
struct lookup {
	struct gaicb req;
	struct addrinfo hints;
	char host[256], port[16];
};

/* host:port into *res by the deadline (an address needs no resolver);
 * 0, -1 with err, -3 interrupted. */
static int
resolve(struct store *st, const struct url *u, double deadline,
    struct addrinfo **res, char *err, size_t errlen)
{
	struct addrinfo hints;
	struct lookup *l;
	struct gaicb *list[1];
	struct timespec ts;
	char port[16];
	int rc, ms;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST;
	snprintf(port, sizeof(port), "%d", u->port);
	if (getaddrinfo(u->host, port, &hints, res) == 0)
		return 0;
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		snprintf(err, errlen, "store %s: out of memory", st->label);
		return -1;
	}
	l->hints.ai_family = AF_UNSPEC;
	l->hints.ai_socktype = SOCK_STREAM;
	snprintf(l->host, sizeof(l->host), "%s", u->host);
	memcpy(l->port, port, sizeof(port));
	l->req.ar_name = l->host;
	l->req.ar_service = l->port;
	l->req.ar_request = &l->hints;
	list[0] = &l->req;
	if ((rc = getaddrinfo_a(GAI_NOWAIT, list, 1, NULL)) != 0) {
		snprintf(err, errlen, "store %s: cannot resolve %s: %s",
		    st->label, u->host, gai_strerror(rc));
		free(l);
		return -1;
	}
	/* In slices, so that a held operator signal is seen. */
	while ((rc = gai_error(&l->req)) == EAI_INPROGRESS &&
	    (ms = mono_ms_left(deadline)) > 0) {
		if (ms > 100)
			ms = 100;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)ms * 1000000;
		gai_suspend((const struct gaicb *const *)list, 1, &ts);
		if (store_poll(NULL, 0, 0) == -2) {
			rc = -3;
			break;
		}
	}
	if (rc == EAI_INPROGRESS || rc == -3) {
		switch (gai_cancel(&l->req)) {
		case EAI_ALLDONE:	/* it answered meanwhile */
			if (l->req.ar_result != NULL)
				freeaddrinfo(l->req.ar_result);
			/* FALLTHROUGH */
		case EAI_CANCELED:
			free(l);
			break;
		default:		/* still glibc's: left to it */
			break;
		}
		if (rc == -3)
			return -3;
		snprintf(err, errlen, "store %s: cannot resolve %s within "
		    "--store-timeout", st->label, u->host);
		return -1;
	}
	if (rc != 0) {
		snprintf(err, errlen, "store %s: cannot resolve %s: %s",
		    st->label, u->host, gai_strerror(rc));
		free(l);
		return -1;
	}
	*res = l->req.ar_result;
	free(l);
	return 0;
}

/* A non-blocking connect to addr by the deadline: the socket (it stays
 * non-blocking), -1 with errno (ETIMEDOUT at the deadline), -3
 * interrupted. */
static int
dial_one(int family, const struct sockaddr *addr, socklen_t len,
    double deadline)
{
	struct pollfd pfd;
	socklen_t sl = sizeof(int);
	int fd, soerr = 0, n, one = 1;

	if ((fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	if (connect(fd, addr, len) == -1) {
		if (errno != EINPROGRESS && errno != EAGAIN)
			goto fail;
		pfd.fd = fd;
		pfd.events = POLLOUT;
		for (;;) {
			pfd.revents = 0;
			if ((n = mono_ms_left(deadline)) == 0) {
				errno = ETIMEDOUT;
				goto fail;
			}
			if ((n = store_poll(&pfd, 1, n)) == -2) {
				close(fd);
				return -3;
			}
			if (n > 0)
				break;
			if (n == -1 && errno != EINTR)
				goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == -1 ||
		    soerr != 0) {
			errno = soerr != 0 ? soerr : errno;
			goto fail;
		}
	}
	if (family != AF_UNIX)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
fail:
	n = errno;
	close(fd);
	errno = n;
	return -1;
}

static int session(struct store *st, double deadline, char *err,
    size_t errlen);
static int take_time(struct store *st, redisReply **e);

/* The TLS handshake on the new connection by the deadline: 0, -1 with
 * err (st->refused when the server's certificate or the TLS settings
 * are the trouble, not the network), -3 interrupted. */
static int
handshake(struct store *st, double deadline, char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	struct pollfd pfd;
	char why[CB_ERRLEN];
	int rc, n;

	if ((r->tls = tls_new(r->tctx, r->fd, r->u.host, why,
	    sizeof(why))) == NULL) {
		snprintf(err, errlen, "store %s: %s", st->label, why);
		return -1;
	}
	while ((rc = tls_handshake(r->tls, why, sizeof(why))) != 0) {
		if (rc == TLS_EOF) {
			snprintf(err, errlen, "store %s: the server closed the "
			    "connection in the TLS handshake (not a TLS port? "
			    "a plain one is redis://)", st->label);
			return -1;
		}
		if (rc == TLS_FAIL) {
			snprintf(err, errlen, "store %s: %s", st->label, why);
			st->refused = 1;
			return -1;
		}
		if ((n = mono_ms_left(deadline)) == 0) {
			snprintf(err, errlen, "store %s: no TLS handshake within "
			    "--store-timeout (not a TLS port?)", st->label);
			return -1;
		}
		pfd.fd = r->fd;
		pfd.events = rc == TLS_WANT_READ ? POLLIN : POLLOUT;
		pfd.revents = 0;
		if (store_poll(&pfd, 1, n) == -2)
			return -3;
	}
	return 0;
}

/* Connect (again) by the deadline: name, socket, TLS, then the session
 * (HELLO with AUTH, SELECT, TIME).  0, -1 with err, -3 interrupted. */
static int
dial(struct store *st, double deadline, char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	const struct url *u = &r->u;
	struct addrinfo *res = NULL, *ai;
	struct sockaddr_un sun;
	int fd = -1, rc, e = ECONNREFUSED;

	drop(r);
	if (u->unix_sock) {
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		if (strlen(u->path) >= sizeof(sun.sun_path)) {
			snprintf(err, errlen, "store %s: the socket's path is "
			    "longer than %zu bytes", st->label,
			    sizeof(sun.sun_path) - 1);
			return -1;
		}
		memcpy(sun.sun_path, u->path, strlen(u->path));
		fd = dial_one(AF_UNIX, (struct sockaddr *)&sun, sizeof(sun),
		    deadline);
		e = errno;
	} else {
		if ((rc = resolve(st, u, deadline, &res, err, errlen)) != 0)
			return rc;
		for (ai = res; ai != NULL; ai = ai->ai_next) {
			fd = dial_one(ai->ai_family, ai->ai_addr,
			    ai->ai_addrlen, deadline);
			e = errno;
			if (fd >= 0 || fd == -3 || e == ETIMEDOUT)
				break;
		}
		freeaddrinfo(res);
	}
	if (fd == -3)
		return -3;
	if (fd == -1) {
		snprintf(err, errlen, "store %s: cannot connect: %s",
		    st->label, e == ETIMEDOUT ? "no connection within "
		    "--store-timeout" : strerror(e));
		return -1;
	}
	/* Its reads and writes never wait: the handshake, flush() and take()
	 * poll, by the deadline, for what they need. */
	r->fd = fd;
	if (u->tls && (rc = handshake(st, deadline, err, errlen)) != 0) {
		drop(r);
		return rc;
	}
	if ((r->rd = redisReaderCreate()) == NULL) {
		snprintf(err, errlen, "store %s: out of memory", st->label);
		drop(r);
		return -1;
	}
	if ((rc = session(st, deadline, err, errlen)) != 0)
		drop(r);
	return rc;
}

/*
 * The transport, plain or TLS (xread, xwrite; io_plain and io_tls say
 * what one call came to): what was read or written (> 0), or 0 when
 * nothing more can be for now (*want: what to poll for), or -1 with err
 * (*broken when the other end went away: a new connection may be tried).
 */
static ssize_t
io_plain(struct store *st, ssize_t k, int *broken, char *err, size_t errlen)
{
	if (k > 0)
		return k;
	if (k == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return 0;
	*broken = 1;
	snprintf(err, errlen, "store %s: connection lost: %s",
	    st->label, k == 0 ? "closed" : strerror(errno));
	return -1;
}

static ssize_t
io_tls(struct store *st, ssize_t k, const char *why, short *want,
    int *broken, char *err, size_t errlen)
{
	if (k > 0)
		return k;
	if (k == TLS_WANT_READ || k == TLS_WANT_WRITE) {
		*want = k == TLS_WANT_READ ? POLLIN : POLLOUT;
		return 0;
	}
	*broken = k == TLS_EOF;
	/* An alert (no client certificate, a refused one) is the server
	 * saying no, not a network that failed. */
	st->refused = k != TLS_EOF;
	if (k == TLS_EOF)
		snprintf(err, errlen, "store %s: connection lost: %s",
		    st->label, errno == ECONNRESET ? strerror(errno) :
		    "closed");
	else
		snprintf(err, errlen, "store %s: %s", st->label, why);
	return -1;
}

static ssize_t
xread(struct store *st, char *buf, size_t n, short *want, int *broken,
    char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	char why[CB_ERRLEN];

	*want = POLLIN;
	if (r->tls == NULL)
		return io_plain(st, read(r->fd, buf, n), broken, err, errlen);
	return io_tls(st, tls_read(r->tls, buf, n, why, sizeof(why)), why,
	    want, broken, err, errlen);
}

static ssize_t
xwrite(struct store *st, const char *buf, size_t n, short *want,
    int *broken, char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	char why[CB_ERRLEN];

	*want = POLLOUT;
	if (r->tls == NULL)
		return io_plain(st, write(r->fd, buf, n), broken, err, errlen);
	return io_tls(st, tls_write(r->tls, buf, n, why, sizeof(why)), why,
	    want, broken, err, errlen);
}

/* argv added to what is to be written (several are one round trip):
 * 0, or -1 with err. */
static int
queue(struct store *st, int argc, const char **argv, const size_t *lens,
    char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	char *cmd, *o;
	int n;

	if ((n = redisFormatCommandArgv(&cmd, argc, argv, lens)) < 0) {
		snprintf(err, errlen, "store %s: out of memory", st->label);
		return -1;
	}
	if ((o = realloc(r->out, r->outlen + (size_t)n)) == NULL) {
		explicit_bzero(cmd, (size_t)n);
		redisFreeCommand(cmd);
		snprintf(err, errlen, "store %s: out of memory", st->label);
		return -1;
	}
	memcpy(o + r->outlen, cmd, (size_t)n);
	r->out = o;
	r->outlen += (size_t)n;
	/* It may be an AUTH. */
	explicit_bzero(cmd, (size_t)n);
	redisFreeCommand(cmd);
	return 0;
}

/* A WAIT for --store-replicas replicas, queued after the command whose
 * writes it is to confirm: Redis waits for them at most three quarters
 * of what is left of the deadline less 110 ms (it sees a blocked
 * command's timeout only on its next turn, up to 1/hz = 100 ms late),
 * the rest is for its answer to come back; never 0, which would be for
 * ever. */
static int
queue_wait(struct store *st, double deadline, char *err, size_t errlen)
{
	const char *argv[3];
	size_t lens[3];
	char n[16], ms[32];
	long long w = (long long)((deadline - mono_now()) * 750 - 110);

	snprintf(n, sizeof(n), "%d", st->r->replicas);
	snprintf(ms, sizeof(ms), "%lld", w > 0 ? w : 1);
	argv[0] = "WAIT";
	argv[1] = n;
	argv[2] = ms;
	lens[0] = 4;
	lens[1] = strlen(n);
	lens[2] = strlen(ms);
	return queue(st, 3, argv, lens, err, errlen);
}

/* What queue() gathered, written by the deadline: 0, or -1 with err (the
 * connection dropped).  r->sent says when it was sent. */
static int
flush(struct store *st, double deadline, int *broken, char *err,
    size_t errlen)
{
	struct store_redis *r = st->r;
	struct pollfd pfd;
	ssize_t k;
	short want;
	int n;

	*broken = 0;
	r->sent = mono_now();
	while (r->outoff < r->outlen) {
		if ((k = xwrite(st, r->out + r->outoff, r->outlen - r->outoff,
		    &want, broken, err, errlen)) > 0) {
			r->outoff += (size_t)k;
			continue;
		}
		if (k < 0) {
			drop(r);
			return -1;
		}
		/* the socket's buffer is full: wait till it drains */
		if ((n = mono_ms_left(deadline)) == 0) {
			snprintf(err, errlen, "store %s: no answer within "
			    "--store-timeout", st->label);
			drop(r);
			return -1;
		}
		pfd.fd = r->fd;
		pfd.events = want;
		pfd.revents = 0;
		if (store_poll(&pfd, 1, n) == -2) {
			st->interrupted = 1;
			snprintf(err, errlen, "store %s: interrupted",
			    st->label);
			drop(r);
			return -1;
		}
	}
	explicit_bzero(r->out, r->outlen);
	free(r->out);
	r->out = NULL;
	r->outlen = r->outoff = 0;
	return 0;
}

/* err: the node is not the master (a READONLY reply, or its role). */
static void
replica(struct store *st, char *err, size_t errlen)
{
	st->refused = 1;
	snprintf(err, errlen, "store %s is a replica (failover?): point "
	    "--store at the master", st->r->node);
}

/*
 * The reply to what was sent, by the deadline.  NULL with err when it is
 * not there in time (the connection is dropped), when the store said no,
 * or when the connection broke (*broken set: it may be asked again on a
 * new one).  With wait 0 only what has come is read: NULL with *pending
 * set when the reply is not whole yet and the deadline not come (the
 * caller's event loop waits for the descriptor).  The socket is read
 * before it is polled: over TLS, bytes already decrypted (SSL_pending)
 * never make it readable again.
 */
static redisReply *
take(struct store *st, double deadline, int wait, int *broken,
    int *pending, char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	struct pollfd pfd;
	char buf[16384];
	void *reply = NULL;
	redisReply *rep;
	ssize_t k;
	short want;
	int n;

	*broken = *pending = 0;
	for (;;) {
		if (redisReaderGetReply(r->rd, &reply) == REDIS_ERR) {
			snprintf(err, errlen, "store %s: not a Redis reply: "
			    "%s", st->label, r->rd->errstr);
			drop(r);
			return NULL;
		}
		if (reply != NULL)
			break;
		/* A reply past any state's size is not taken in whole. */
		if (r->rd->len > (size_t)MAX_STATE_SIZE + 65536) {
			snprintf(err, errlen, "store %s: a reply of more than "
			    "%ld bytes: refused", st->label,
			    (long)MAX_STATE_SIZE);
			drop(r);
			return NULL;
		}
		if ((k = xread(st, buf, sizeof(buf), &want, broken, err,
		    errlen)) > 0) {
			if (redisReaderFeed(r->rd, buf, (size_t)k) !=
			    REDIS_OK) {
				snprintf(err, errlen, "store %s: out of memory",
				    st->label);
				drop(r);
				return NULL;
			}
			continue;
		}
		if (k < 0) {
			drop(r);
			return NULL;
		}
		if ((n = mono_ms_left(deadline)) == 0)
			goto late;
		if (!wait) {
			*pending = 1;
			return NULL;
		}
		pfd.fd = r->fd;
		pfd.events = want;
		pfd.revents = 0;
		if ((n = store_poll(&pfd, 1, n)) == -2) {
			st->interrupted = 1;
			snprintf(err, errlen, "store %s: interrupted",
			    st->label);
			drop(r);
			return NULL;
		}
		if (n == -1 && errno != EINTR) {
			snprintf(err, errlen, "store %s: %s", st->label,
			    strerror(errno));
			drop(r);
			return NULL;
		}
	}
	rep = reply;
	r->got = mono_now();
	if (rep->type == REDIS_REPLY_ERROR) {
		/* A node demoted under us: said plainly, never as the raw
		 * "READONLY ... script: <sha>, on @user_script:7". */
		if (strncmp(rep->str, "READONLY", 8) == 0)
			replica(st, err, errlen);
		else
			snprintf(err, errlen, "store %s: %s", st->label,
			    rep->str);
		freeReplyObject(rep);
		return NULL;
	}
	return rep;
late:
	snprintf(err, errlen, "store %s: no answer within --store-timeout",
	    st->label);
	drop(r);
	return NULL;
}

/* WAIT's count of replicas into r->acked: 0, or -1 with err. */
static int
take_acked(struct store *st, double deadline, int *broken, char *err,
    size_t errlen)
{
	double got = st->r->got;	/* the command's reply's */
	redisReply *w;
	int pending;

	if ((w = take(st, deadline, 1, broken, &pending, err, errlen)) ==
	    NULL)
		return -1;
	st->r->got = got;
	st->r->acked = w->type == REDIS_REPLY_INTEGER ? w->integer : -1;
	freeReplyObject(w);
	return 0;
}

/* One command and its whole reply by the deadline (put, then take); with
 * wait, a WAIT for --store-replicas goes in the same round trip, and its
 * count is in r->acked. */
static redisReply *
exchange(struct store *st, double deadline, int wait, int argc,
    const char **argv, const size_t *lens, int *broken, char *err,
    size_t errlen)
{
	struct store_redis *r = st->r;
	redisReply *rep;
	int pending;

	*broken = 0;
	r->acked = 0;
	if (queue(st, argc, argv, lens, err, errlen) == -1 ||
	    (wait && queue_wait(st, deadline, err, errlen) == -1)) {
		drop(r);
		return NULL;
	}
	if (flush(st, deadline, broken, err, errlen) == -1)
		return NULL;
	rep = take(st, deadline, 1, broken, &pending, err, errlen);
	if (!wait)
		return rep;
	/* WAIT's reply follows whatever the command's was. */
	if (rep == NULL || take_acked(st, deadline, broken, err,
	    errlen) == -1) {
		if (rep != NULL)
			freeReplyObject(rep);
		drop(r);
		return NULL;
	}
	return rep;
}

/* Whether the idle connection was closed by the other end (a server's
 * idle timeout), or has anything to say that was not asked: then it is
 * opened again before a command that may not be asked twice.  Over TLS,
 * records that came meanwhile (a session ticket) are read first: they
 * say nothing. */
static int
closed(struct store_redis *r)
{
	struct pollfd pfd;

	if (r->rd->pos < r->rd->len ||
	    (r->tls != NULL && tls_pending(r->tls) > 0))
		return 1;
	pfd.fd = r->fd;
	pfd.events = POLLIN | POLLRDHUP;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) == 0)
		return 0;
	return r->tls == NULL || (pfd.revents & ~POLLIN) != 0 ||
	    !tls_idle(r->tls);
}

/* err, a failure to connect again, said as the loss it follows. */
static void
lost(const struct store *st, char *err, size_t errlen)
{
	char why[CB_ERRLEN];
	size_t skip = strlen(st->label) + 8;	/* "store LABEL: " */

	snprintf(why, sizeof(why), "%s", strlen(err) > skip ? err + skip :
	    err);
	snprintf(err, errlen, "store %s: connection lost, and not opened "
	    "again: %s", st->label, why);
}

static int renewed(struct store *st, redisReply *rep, int strict,
    char *err, size_t errlen);

/* A connection to ask on by the deadline: the one there, else a new
 * one.  0, -1 with err, -3 interrupted (st->interrupted set). */
static int
ready(struct store *st, double deadline, char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	int rc;

	if (r->fd != -1 && !closed(r))
		return 0;
	st->refused = 0;
	if ((rc = dial(st, deadline, err, errlen)) == 0)
		return 0;
	st->interrupted = rc == -3;
	if (rc == -3)
		snprintf(err, errlen, "store %s: interrupted", st->label);
	else if (r->ever && !st->refused)
		lost(st, err, errlen);
	return rc;
}

/* The reply to a renewal the run engine sent, and to its WAIT, by its own
 * deadline: 1 with *out (r->acked set), 0 not whole yet (wait 0), -1 with
 * err (*broken as take()). */
static int
pend_take(struct store *st, int wait, redisReply **out, int *broken,
    char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	redisReply *w;
	int pending;

	*out = NULL;
	*broken = 0;
	if (r->pend_rep == NULL) {
		if ((r->pend_rep = take(st, r->pend_until, wait, broken,
		    &pending, err, errlen)) == NULL)
			return pending ? 0 : -1;
		r->pend_got = r->got;
	}
	if (r->replicas > 0) {
		if ((w = take(st, r->pend_until, wait, broken, &pending, err,
		    errlen)) == NULL) {
			if (pending)
				return 0;
			drop(r);
			return -1;
		}
		r->acked = w->type == REDIS_REPLY_INTEGER ? w->integer : -1;
		freeReplyObject(w);
	}
	r->got = r->pend_got;
	*out = r->pend_rep;
	r->pend_rep = NULL;
	return 1;
}

/* The reply to argv, or NULL with err naming the store.  Bounded by
 * r->until when set (a renewal: the lease's own deadline), else by
 * --store-timeout from now; a connection found broken is opened again,
 * and a command marked r->again asked once more on it.  r->wait: a WAIT
 * for the replicas goes with it (r->acked). */
static redisReply *
call(struct store *st, int argc, const char **argv, const size_t *lens,
    char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	double deadline = mono_now() + st->timeout;
	redisReply *rep = NULL;
	int again = r->again, wait = r->wait && r->replicas > 0, broken;
	int tries, rc;

	if (r->until > 0 && r->until < deadline)
		deadline = r->until;
	r->again = r->wait = 0;
	r->until = 0;
	r->sent = r->got = 0;
	st->interrupted = 0;
	/* A renewal the run engine left unanswered: its reply first (by
	 * its own deadline), not to be taken for this command's. */
	if (r->pending) {
		char why[CB_WHYLEN];

		r->pending = 0;
		if (pend_take(st, 1, &rep, &broken, why, sizeof(why)) == 1)
			(void)renewed(st, rep, 0, why, sizeof(why));
		if (st->interrupted) {
			snprintf(err, errlen, "%s", why);
			return NULL;
		}
	}
	for (tries = 0; tries < 2; tries++) {
		if ((rc = ready(st, deadline, err, errlen)) != 0)
			return NULL;
		rep = exchange(st, deadline, wait, argc, argv, lens, &broken,
		    err, errlen);
		if (rep != NULL || !broken || !again ||
		    mono_ms_left(deadline) == 0)
			return rep;
	}
	return rep;
}


/* A command of plain words (no binary argument). */
static redisReply *
callv(struct store *st, char *err, size_t errlen, int argc, ...)
{
	const char *argv[8];
	size_t lens[8];
	va_list ap;
	int i;

	va_start(ap, argc);
	for (i = 0; i < argc && i < 8; i++) {
		argv[i] = va_arg(ap, const char *);
		lens[i] = strlen(argv[i]);
	}
	va_end(ap);
	return call(st, argc, argv, lens, err, errlen);
}

/* The words of one command into argv/lens at *n. */
static void
word(const char **argv, size_t *lens, int *n, const char *w)
{
	argv[*n] = w;
	lens[*n] = strlen(w);
	(*n)++;
}

/* Whether a role (HELLO's "role", ROLE's first word) is a master's; else
 * err says what the node is. */
static int
master(struct store *st, const redisReply *role, char *err, size_t errlen)
{
	if (role != NULL && (role->type == REDIS_REPLY_STRING ||
	    role->type == REDIS_REPLY_STATUS) &&
	    strcmp(role->str, "master") == 0)
		return 1;
	if (role != NULL && (role->type == REDIS_REPLY_STRING ||
	    role->type == REDIS_REPLY_STATUS) &&
	    strcmp(role->str, "sentinel") == 0) {
		st->refused = 1;
		snprintf(err, errlen, "store %s is a Sentinel, not Redis: "
		    "point --store at the master", st->r->node);
	} else if (role == NULL)
		snprintf(err, errlen, "store %s: no role in the reply to "
		    "HELLO", st->label);
	else
		replica(st, err, errlen);
	return 0;
}

/* HELLO's value of key, or NULL. */
static const redisReply *
hello_field(const redisReply *rep, const char *key)
{
	size_t i;

	if (rep->type != REDIS_REPLY_ARRAY)
		return NULL;
	for (i = 0; i + 1 < rep->elements; i += 2)
		if (rep->element[i]->type == REDIS_REPLY_STRING &&
		    strcmp(rep->element[i]->str, key) == 0)
			return rep->element[i + 1];
	return NULL;
}

/* The replies after the first of a session sent in one go, by the
 * deadline: SELECT's, then TIME's.  0, -1 with err, -3 interrupted. */
static int
session_rest(struct store *st, double deadline, char *err, size_t errlen)
{
	redisReply *rep;
	int broken, pending;

	if (st->r->u.db != 0) {
		if ((rep = take(st, deadline, 1, &broken, &pending, err,
		    errlen)) == NULL)
			return st->interrupted ? -3 : -1;
		freeReplyObject(rep);
	}
	if ((rep = take(st, deadline, 1, &broken, &pending, err, errlen)) ==
	    NULL)
		return st->interrupted ? -3 : -1;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
	    take_time(st, rep->element) == -1) {
		snprintf(err, errlen, "store %s: TIME: unexpected reply",
		    st->label);
		freeReplyObject(rep);
		return -1;
	}
	freeReplyObject(rep);
	return 0;
}

/*
 * A new connection's first words, in one round trip: HELLO (with AUTH
 * when there is a password: it authenticates, and says the node's role,
 * which any user may ask, where ROLE needs @admin), SELECT, TIME (the
 * store answers, and its time).  A node that is not the master is
 * refused.  A Redis older than 6 has no HELLO: then AUTH, ROLE, SELECT,
 * TIME, one round trip more.  0, -1 with err, -3 interrupted.
 */
static int
session(struct store *st, double deadline, char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	const struct url *u = &r->u;
	const char *argv[6];
	size_t lens[6];
	redisReply *rep;
	char db[16];
	int broken, pending, n, old, i, rc;

	snprintf(db, sizeof(db), "%ld", u->db);
	for (old = 0; old < 2; old++) {
		n = 0;
		if (!old) {
			word(argv, lens, &n, "HELLO");
			word(argv, lens, &n, "2");
			if (u->has_pass) {
				word(argv, lens, &n, "AUTH");
				word(argv, lens, &n, u->user[0] != '\0' ?
				    u->user : "default");
				word(argv, lens, &n, u->pass);
			}
			if (queue(st, n, argv, lens, err, errlen) == -1)
				return -1;
		} else {
			if (u->has_pass) {
				word(argv, lens, &n, "AUTH");
				if (u->user[0] != '\0')
					word(argv, lens, &n, u->user);
				word(argv, lens, &n, u->pass);
				if (queue(st, n, argv, lens, err, errlen) == -1)
					return -1;
				n = 0;
			}
			word(argv, lens, &n, "ROLE");
			if (queue(st, n, argv, lens, err, errlen) == -1)
				return -1;
		}
		n = 0;
		word(argv, lens, &n, "SELECT");
		word(argv, lens, &n, db);
		if (u->db != 0 && queue(st, n, argv, lens, err, errlen) == -1)
			return -1;
		n = 0;
		word(argv, lens, &n, "TIME");
		if (queue(st, n, argv, lens, err, errlen) == -1)
			return -1;
		if (flush(st, deadline, &broken, err, errlen) == -1)
			goto refused;
		if (old && u->has_pass) {
			if ((rep = take(st, deadline, 1, &broken, &pending,
			    err, errlen)) == NULL)
				goto refused;
			freeReplyObject(rep);
		}
		if ((rep = take(st, deadline, 1, &broken, &pending, err,
		    errlen)) == NULL) {
			/* HELLO unknown: a Redis before 6.  Its other
			 * replies are read, then asked the old way. */
			if (!old && r->fd != -1 && strstr(err, "unknown "
			    "command") != NULL) {
				for (i = 0; i < 1 + (u->db != 0); i++) {
					if ((rep = take(st, deadline, 1,
					    &broken, &pending, err, errlen)) !=
					    NULL)
						freeReplyObject(rep);
					else if (r->fd == -1)
						return st->interrupted ? -3 :
						    -1;
				}
				continue;
			}
			goto refused;
		}
		rc = master(st, old ? (rep->type == REDIS_REPLY_ARRAY &&
		    rep->elements > 0 ? rep->element[0] : NULL) :
		    hello_field(rep, "role"), err, errlen);
		freeReplyObject(rep);
		if (!rc)
			return -1;
		return session_rest(st, deadline, err, errlen);
	}
	snprintf(err, errlen, "store %s: unexpected replies to HELLO",
	    st->label);
	return -1;
refused:
	if (st->interrupted)
		return -3;
	/* Closed before a word: what a TLS port does with plain text, and
	 * a TLS server that refuses the client's certificate, or its lack
	 * of one, when its alert is lost in the reset. */
	if (broken && !u->tls)
		snprintf(err, errlen, "store %s: the server closed the "
		    "connection before answering (a TLS port? use rediss://)",
		    st->label);
	else if (broken)
		snprintf(err, errlen, "store %s: the server closed the TLS "
		    "connection before answering (%s)", st->label,
		    r->tcfg.cert == NULL ? "does it want a client certificate? "
		    "--store-cert FILE, --store-key FILE" : "does it refuse "
		    "the client certificate?");
	else if (r->fd != -1)
		st->refused = 1;	/* it answered, and said no */
	return -1;
}

/* The generation of the state at KEYS[n]: 0 when there is none, -1 when
 * it does not parse. */
#define LUA_GEN \
"local function gen(k)\n" \
"  local cur = redis.call('GET', k)\n" \
"  if not cur then return 0 end\n" \
"  local ok, d = pcall(cjson.decode, cur)\n" \
"  if not ok or type(d) ~= 'table' then return -1 end\n" \
"  return tonumber(d['generation']) or 0\n" \
"end\n"

/* Whether the request came later than ARGV[n], the latest store time
 * (ms) its sender waits for an answer (0: no bound): then it does
 * nothing, as its sender has given up. */
#define LUA_LATE \
"local function late(t, n)\n" \
"  local by = tonumber(ARGV[n]) or 0\n" \
"  return by > 0 and tonumber(t[1]) * 1000 + " \
"math.floor(tonumber(t[2]) / 1000) > by\n" \
"end\n"

/* KEYS lock, state, start record; ARGV token, lease ms, latest.  {taken,
 * state or nil, time, start record or nil}; taken again when it is this
 * token's (a request asked twice). */
static const char lua_lock[] = LUA_LATE
"local t = redis.call('TIME')\n"
"if late(t, 3) then return {0, false, t[1], t[2], false} end\n"
"local ok = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])\n"
"if not ok and redis.call('GET', KEYS[1]) == ARGV[1] then\n"
"  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
"  ok = true\n"
"end\n"
"if not ok then return {0, false, t[1], t[2], false} end\n"
"return {1, redis.call('GET', KEYS[2]), t[1], t[2], "
"redis.call('GET', KEYS[3])}\n";

/* KEYS lock, state; ARGV token, lease ms, generation loaded, latest.
 * The lease renewed while it is ours; taken again when it has expired and
 * nobody saved since -- never by a request that came late.  {renewed,
 * time}. */
static const char lua_renew[] = LUA_GEN LUA_LATE
"local t = redis.call('TIME')\n"
"if late(t, 4) then return {0, t[1], t[2]} end\n"
"local v = redis.call('GET', KEYS[1])\n"
"if v == ARGV[1] then\n"
"  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
"  return {1, t[1], t[2]}\n"
"end\n"
"if v or gen(KEYS[2]) ~= tonumber(ARGV[3]) then return {0, t[1], t[2]} end\n"
"redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
"return {1, t[1], t[2]}\n";

/* KEYS lock, state, start record; ARGV token, generation loaded, state,
 * lease ms, latest.  1 written (and the start record of the run it saves
 * gone with it); -1 another holder has the lease; -2 the state changed;
 * -3 it came too late (its sender gave up on it: a save, which sets the
 * lease too, must not take the circuit for a holder gone). */
static const char lua_save[] = LUA_GEN LUA_LATE
"if late(redis.call('TIME'), 5) then return -3 end\n"
"local v = redis.call('GET', KEYS[1])\n"
"if v and v ~= ARGV[1] then return -1 end\n"
"if gen(KEYS[2]) ~= tonumber(ARGV[2]) then return -2 end\n"
"redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])\n"
"redis.call('SET', KEYS[2], ARGV[3])\n"
"redis.call('DEL', KEYS[3])\n"
"return 1\n";

/* KEYS lock, state, start record; ARGV token, generation loaded, the
 * record, lease ms, latest: the start record, fenced as a save is (and
 * the lease renewed with it).  Returns as lua_save. */
static const char lua_begin[] = LUA_GEN LUA_LATE
"if late(redis.call('TIME'), 5) then return -3 end\n"
"local v = redis.call('GET', KEYS[1])\n"
"if v and v ~= ARGV[1] then return -1 end\n"
"if gen(KEYS[2]) ~= tonumber(ARGV[2]) then return -2 end\n"
"redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])\n"
"redis.call('SET', KEYS[3], ARGV[3])\n"
"return 1\n";

/* KEYS lock, state, start record; ARGV token: the record goes while the
 * lease is ours. */
static const char lua_unbegin[] =
"if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
"  redis.call('DEL', KEYS[3])\n"
"end\n"
"return 0\n";

/* KEYS lock; ARGV token. */
static const char lua_release[] =
"if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
"  return redis.call('DEL', KEYS[1])\n"
"end\n"
"return 0\n";

/* EVAL script over nkeys keys and nargs arguments (lens[i] 0 or lens
 * NULL: a string); the reply, or NULL with err. */
struct evalcmd {
	const char *argv[12];
	size_t alen[12];
	char nk[8];
	int n;
};

/* The words of EVAL script over nkeys keys and nargs arguments (lens[i]
 * 0 or lens NULL: a string) into e; -1 when there are too many. */
static int
eval_words(struct evalcmd *e, const char *script, int nkeys,
    const char **keys, int nargs, const char **args, const size_t *lens)
{
	int i;

	if (nkeys + nargs > 9)
		return -1;
	e->n = 0;
	snprintf(e->nk, sizeof(e->nk), "%d", nkeys);
	e->argv[e->n++] = "EVAL";
	e->argv[e->n++] = script;
	e->argv[e->n++] = e->nk;
	for (i = 0; i < nkeys; i++)
		e->argv[e->n++] = keys[i];
	for (i = 0; i < e->n; i++)
		e->alen[i] = strlen(e->argv[i]);
	for (i = 0; i < nargs; i++, e->n++) {
		e->argv[e->n] = args[i];
		e->alen[e->n] = lens != NULL && lens[i] != 0 ? lens[i] :
		    strlen(args[i]);
	}
	return 0;
}

static redisReply *
eval_keys(struct store *st, const char *script, int nkeys,
    const char **keys, int nargs, const char **args, const size_t *lens,
    char *err, size_t errlen)
{
	struct evalcmd e;

	if (eval_words(&e, script, nkeys, keys, nargs, args, lens) == -1) {
		snprintf(err, errlen, "internal error: too many arguments");
		return NULL;
	}
	return call(st, e.n, e.argv, e.alen, err, errlen);
}

/* A script over the circuit's lease, state and start record (KEYS[1],
 * KEYS[2], KEYS[3]). */
static redisReply *
eval(struct store *st, const char *script, int nargs, const char **args,
    const size_t *lens, char *err, size_t errlen)
{
	const char *keys[3];

	keys[0] = st->r->lock;
	keys[1] = st->r->key;
	keys[2] = st->r->run;
	return eval_keys(st, script, 3, keys, nargs, args, lens, err, errlen);
}

static void
lease_ms(const struct store *st, char *buf, size_t len)
{
	long long ms = (long long)(st->lease * 1000);

	snprintf(buf, len, "%lld", ms > 0 ? ms : 1);
}

/* The latest store time (ms) a request sent now may act at: the store's
 * clock as we know it plus what we wait for the answer; "0" (no bound)
 * before the clock was ever read. */
static void
latest_ms(const struct store *st, double wait, char *buf, size_t len)
{
	if (st->clock_at < 0)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "%.0f", (store_now(st) + wait) * 1000);
}

/* Redis's TIME as two strings (seconds, microseconds) in e[0], e[1]. */
static int
take_time(struct store *st, redisReply **e)
{
	if (e[0]->type != REDIS_REPLY_STRING ||
	    e[1]->type != REDIS_REPLY_STRING)
		return -1;
	st->clock_at = strtod(e[0]->str, NULL) + strtod(e[1]->str, NULL) /
	    1e6;
	/* When its reply came, not when it is read: a WAIT's after it
	 * may have taken a while. */
	st->clock_mono = st->r->got > 0 ? st->r->got : mono_now();
	return 0;
}

/* ---- the handle ---- */

static int
redis_open(struct store *st, const char *url, char *err, size_t errlen)
{
	struct store_redis *r;
	struct sigaction sa;
	unsigned char rnd[16];
	char host[HOSTNAME_KEPT + 1];
	const char *why = "";
	char why_tls[CB_ERRLEN];
	struct url u;
	size_t i;
	int rc;

	if (url_parse(url, &u, &why) == -1) {
		memset(&u, 0, sizeof(u));
		snprintf(err, errlen, "invalid --store URL: %s", why);
		return -1;
	}
	url_label(&u, st->label, sizeof(st->label));
	if ((r = st->r = calloc(1, sizeof(*r))) == NULL)
		goto nomem;
	r->fd = -1;
	url_node(&u, r->node, sizeof(r->node));
	r->replicas = st->replicas;
	r->tcfg.ca = st->ca;
	r->tcfg.cert = st->cert;
	r->tcfg.key = st->key;
	/* What cannot work is said before anything is sent: a secret would
	 * go in clear to a redis:// meant as rediss://. */
	if (!u.tls && (st->ca != NULL || st->cert != NULL ||
	    st->key != NULL)) {
		snprintf(err, errlen, "store %s: --store-ca, --store-cert and "
		    "--store-key are for a rediss:// (TLS) store", st->label);
		goto refuse;
	}
	if (st->key != NULL && st->cert == NULL) {
		snprintf(err, errlen, "store %s: --store-key without "
		    "--store-cert", st->label);
		goto refuse;
	}
	if (st->name != NULL && (asprintf(&r->key, "cbexec:circuit:%s",
	    st->name) == -1 || asprintf(&r->lock, "cbexec:lock:%s",
	    st->name) == -1 || asprintf(&r->run, "cbexec:run:%s",
	    st->name) == -1)) {
		r->key = r->lock = r->run = NULL;
		goto nomem;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		snprintf(err, errlen, "store %s: no random token: %s",
		    st->label, strerror(errno));
		memset(&u, 0, sizeof(u));
		return -1;
	}
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(r->token + 2 * i, 3, "%02x", rnd[i]);
	/* Who holds the lease, for --status on any host; the whole value
	 * is the token the scripts compare. */
	store_hostname(host, sizeof(host));
	snprintf(r->token + 2 * sizeof(rnd), sizeof(r->token) -
	    2 * sizeof(rnd), " %s %ld", host, (long)getpid());
	/* A store that hangs up must give an error, not kill us (the run
	 * engine ignores SIGPIPE already; an operator verb does not). */
	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
		sa.sa_handler = SIG_IGN;
		sigaction(SIGPIPE, &sa, NULL);
	}
	/* The URL is kept to connect again; a password from
	 * CBEXEC_STORE_PASSWORD or --store-password-file comes first. */
	if (st->password != NULL) {
		if (strlen(st->password) >= sizeof(u.pass)) {
			snprintf(err, errlen, "store %s: the password is "
			    "longer than %zu bytes", st->label,
			    sizeof(u.pass) - 1);
			goto refuse;
		}
		snprintf(u.pass, sizeof(u.pass), "%s", st->password);
		u.has_pass = 1;
	}
	if (u.user[0] != '\0' && !u.has_pass) {
		snprintf(err, errlen, "store %s: no password for user %s: give "
		    "it with --store-password-file F or CBEXEC_STORE_PASSWORD",
		    st->label, u.user);
		goto refuse;
	}
	/* libssl, the CA and the client's certificate, before anything is
	 * sent: what is wrong with them is wrong whether or not the store
	 * can be reached. */
	if (u.tls && tls_ctx_new(&r->tctx, &r->tcfg, why_tls,
	    sizeof(why_tls)) == -1) {
		snprintf(err, errlen, "store %s: %s", st->label, why_tls);
		goto refuse;
	}
	r->u = u;
	memset(&u, 0, sizeof(u));	/* the password */
	if ((rc = dial(st, mono_now() + st->timeout, err, errlen)) != 0) {
		if (rc == -3) {
			st->interrupted = 1;
			snprintf(err, errlen, "store %s: interrupted",
			    st->label);
		}
		return -1;
	}
	r->ever = 1;
	return 0;
refuse:
	st->refused = 1;
	memset(&u, 0, sizeof(u));
	return -1;
nomem:
	memset(&u, 0, sizeof(u));
	snprintf(err, errlen, "store %s: out of memory", st->label);
	return -1;
}

static void
redis_close(struct store *st)
{
	struct store_redis *r = st->r;

	if (r == NULL)
		return;
	drop(r);
	tls_ctx_free(r->tctx);
	memset(&r->u, 0, sizeof(r->u));	/* the password */
	free(r->key);
	free(r->lock);
	free(r->run);
	free(r->fetched);
	free(r->fetched_run);
	free(r);
	st->r = NULL;
}

static void
redis_where(const struct store *st, const char *name, int in, char *buf,
    size_t len)
{
	if (name != NULL)
		snprintf(buf, len, "cbexec:circuit:%s%s%s", name, in ? " in " :
		    "", in ? st->label : "");
	else
		snprintf(buf, len, "%s%s%s", st->r != NULL && st->r->key !=
		    NULL ? st->r->key : "?", in ? " in " : "", in ? st->label :
		    "");
}

static void
redis_lock_where(const struct store *st, char *buf, size_t len)
{
	snprintf(buf, len, "its lease in %s", st->label);
}

static const char *
redis_place(const struct store *st)
{
	return st->label;
}

static int
redis_fd(const struct store *st)
{
	return st->r != NULL ? st->r->fd : -1;
}

/* A copy of a string reply into *out (NULL for nil): 0, -1 out of
 * memory. */
static int
keep_reply(const redisReply *v, char **out, size_t *len)
{
	free(*out);
	*out = NULL;
	if (v->type != REDIS_REPLY_STRING)
		return 0;
	if ((*out = malloc(v->len + 1)) == NULL)
		return -1;
	memcpy(*out, v->str, v->len);
	(*out)[v->len] = '\0';
	if (len != NULL)
		*len = v->len;
	return 0;
}

static void redis_unlock(struct store *st);

static int
redis_lock(struct store *st, double wait, int (*nap)(double), char *err,
    size_t errlen)
{
	struct store_redis *r = st->r;
	double deadline = wait > 0 ? mono_now() + wait : 0, delay = 0.01;
	const char *args[3];
	char ms[32], by[32];
	redisReply *rep, **e;
	int taken, rc;

	lease_ms(st, ms, sizeof(ms));
	args[0] = r->token;
	args[1] = ms;
	args[2] = by;
	for (;;) {
		latest_ms(st, st->timeout, by, sizeof(by));
		r->again = 1;
		r->wait = 1;
		if ((rep = eval(st, lua_lock, 3, args, NULL, err,
		    errlen)) == NULL)
			return st->interrupted ? -3 : -1;
		/* {0|1, state or nil, seconds, microseconds, start record
		 * or nil}: anything else is not a store we can trust with
		 * the lock (never "no state", which would run on a fresh
		 * circuit). */
		e = rep->element;
		if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 5 ||
		    e[0]->type != REDIS_REPLY_INTEGER ||
		    (e[0]->integer != 0 && e[0]->integer != 1) ||
		    (e[1]->type != REDIS_REPLY_STRING &&
		    e[1]->type != REDIS_REPLY_NIL) ||
		    take_time(st, rep->element + 2) == -1) {
			snprintf(err, errlen, "store %s: unexpected reply to "
			    "the lock", st->label);
			freeReplyObject(rep);
			return -1;
		}
		taken = e[0]->integer == 1;
		if (taken) {
			r->have_fetched = 1;
			if (keep_reply(e[1], &r->fetched, &r->fetched_len) ==
			    -1 || keep_reply(e[4], &r->fetched_run, NULL) ==
			    -1) {
				freeReplyObject(rep);
				st->held = 1;
				snprintf(err, errlen, "out of memory");
				return -1;
			}
		}
		freeReplyObject(rep);
		if (taken && r->replicas > 0 && r->acked < r->replicas) {
			/* Not on the replicas, the lease would not outlive
			 * a failover: given back, and nothing runs. */
			snprintf(err, errlen, "store %s: the lease on circuit %s "
			    "was confirmed by %lld of %d replicas within "
			    "--store-timeout (--store-replicas %d)", st->label,
			    st->name, r->acked < 0 ? 0 : r->acked, r->replicas,
			    r->replicas);
			st->held = 1;
			redis_unlock(st);
			st->held = 0;
			return -1;
		}
		if (taken) {
			st->held = 1;
			/* the lease counts from when it was asked for */
			st->renewed = r->sent;
			return 0;
		}
		if ((rc = lock_nap(wait, deadline, &delay, nap)) != 0)
			return rc;
	}
}

static void
redis_unlock(struct store *st)
{
	const char *keys[1], *args[1];
	char err[CB_ERRLEN];
	redisReply *rep;

	if (st->r == NULL || st->r->fd == -1)
		return;
	keys[0] = st->r->lock;
	args[0] = st->r->token;
	/* Gone with the store, the lease simply expires. */
	if ((rep = eval_keys(st, lua_release, 1, keys, 1, args, NULL, err,
	    sizeof(err))) != NULL)
		freeReplyObject(rep);
}

/* A renewal's words, made now (the lease, the generation, the latest
 * store time it may act at), and how long it may take: never past the
 * lease's own deadline, since a renewal after it would be for a run that
 * has to be over.  0, or -1 with err when that deadline has come. */
struct renewal {
	struct evalcmd e;
	const char *args[4];
	char ms[32], gen[32], by[32];
	double wait;
};

static int
renewal(struct store *st, struct renewal *w, char *err, size_t errlen)
{
	double until = store_lease_until(st);

	if (st->held && until <= mono_now()) {
		snprintf(err, errlen, "store %s: the lease on circuit %s ran "
		    "out before it could be renewed%s%s", st->label, st->name,
		    st->r->unconfirmed[0] != '\0' ? ": " : "",
		    st->r->unconfirmed);
		return -1;
	}
	w->wait = st->timeout;
	if (st->held && until - mono_now() < w->wait)
		w->wait = until - mono_now();
	lease_ms(st, w->ms, sizeof(w->ms));
	snprintf(w->gen, sizeof(w->gen), "%ld", st->generation);
	latest_ms(st, w->wait, w->by, sizeof(w->by));
	w->args[0] = st->r->token;
	w->args[1] = w->ms;
	w->args[2] = w->gen;
	w->args[3] = w->by;
	return eval_words(&w->e, lua_renew, 2, (const char *[]){ st->r->lock,
	    st->r->key }, 4, w->args, NULL);
}

/* What the renewal's reply says: 0 renewed (dated from when it was
 * sent), or -1 with err.  A renewal the replicas did not confirm
 * (--store-replicas) does not move the lease's local deadline: strict,
 * it is an error; else the next renewal may still come in time. */
static int
renewed(struct store *st, redisReply *rep, int strict, char *err,
    size_t errlen)
{
	struct store_redis *r = st->r;
	redisReply **e = rep->element;
	int ok;

	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 3 ||
	    e[0]->type != REDIS_REPLY_INTEGER ||
	    take_time(st, rep->element + 1) == -1) {
		snprintf(err, errlen, "store %s: unexpected reply to the "
		    "renewal", st->label);
		freeReplyObject(rep);
		return -1;
	}
	ok = e[0]->integer == 1;
	freeReplyObject(rep);
	if (!ok) {
		st->held = 0;
		snprintf(err, errlen, "store %s: the lease on circuit %s "
		    "expired and another holder took the circuit", st->label,
		    st->name);
		return -1;
	}
	st->held = 1;
	if (r->replicas > 0 && r->acked < r->replicas) {
		snprintf(r->unconfirmed, sizeof(r->unconfirmed), "its renewal "
		    "was confirmed by %lld of %d replicas within "
		    "--store-timeout", r->acked < 0 ? 0 : r->acked,
		    r->replicas);
		if (!strict)
			return 0;
		snprintf(err, errlen, "store %s: the lease on circuit %s: %s",
		    st->label, st->name, r->unconfirmed);
		return -1;
	}
	r->unconfirmed[0] = '\0';
	st->renewed = r->sent;
	return 0;
}

static int
redis_keepalive(struct store *st, char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	struct renewal w;
	redisReply *rep;

	if (renewal(st, &w, err, errlen) == -1)
		return -1;
	r->until = mono_now() + w.wait;
	r->again = 1;
	r->wait = 1;
	if ((rep = call(st, w.e.n, w.e.argv, w.e.alen, err, errlen)) == NULL)
		return -1;
	return renewed(st, rep, 1, err, errlen);
}

/* A renewal sent, not waited for: 1, or -1 with err.  again: a broken
 * connection may be opened anew and the renewal sent once more. */
static int
renew_start(struct store *st, int again, char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	struct renewal w;
	double deadline;
	int broken;

	if (renewal(st, &w, err, errlen) == -1)
		return -1;
	deadline = mono_now() + w.wait;
	st->interrupted = 0;
	if (ready(st, deadline, err, errlen) != 0)
		return -1;
	r->acked = 0;
	if (queue(st, w.e.n, w.e.argv, w.e.alen, err, errlen) == -1 ||
	    (r->replicas > 0 && queue_wait(st, deadline, err, errlen) == -1)) {
		drop(r);
		return -1;
	}
	if (flush(st, deadline, &broken, err, errlen) == -1)
		return broken && again && mono_ms_left(deadline) > 0 ?
		    renew_start(st, 0, err, errlen) : -1;
	r->pending = again ? 2 : 1;
	r->pend_until = deadline;
	return 1;
}

static int
redis_keepalive_async(struct store *st, char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	redisReply *rep;
	int broken, rc, again;

	if (!r->pending)
		return renew_start(st, 1, err, errlen);
	if ((rc = pend_take(st, 0, &rep, &broken, err, errlen)) == 0)
		return 1;
	again = r->pending == 2;
	r->pending = 0;
	if (rc == -1)
		return broken && again && mono_ms_left(r->pend_until) > 0 ?
		    renew_start(st, 0, err, errlen) : -1;
	return renewed(st, rep, 0, err, errlen);
}

static int
redis_load(struct store *st, struct cb_state *s, struct store_run *run,
    char *err, size_t errlen)
{
	struct store_redis *r = st->r;
	redisReply *rep;
	int rc;

	/* Read with the lock, in the same round trip. */
	if (r->have_fetched) {
		rc = shared_parse_state(st, st->name, r->key, r->fetched,
		    r->fetched_len, r->fetched != NULL, s, err, errlen);
		if (r->fetched_run != NULL && run != NULL)
			store_run_parse(r->fetched_run, strlen(r->fetched_run),
			    run);
		free(r->fetched);
		free(r->fetched_run);
		r->fetched = r->fetched_run = NULL;
		r->have_fetched = 0;
		return rc;
	}
	if ((rep = callv(st, err, errlen, 3, "MGET", r->key, r->run)) == NULL)
		return -1;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
		snprintf(err, errlen, "store %s: unexpected reply to MGET",
		    st->label);
		freeReplyObject(rep);
		return -1;
	}
	rc = shared_parse_state(st, st->name, r->key, rep->element[0]->str,
	    rep->element[0]->len, rep->element[0]->type == REDIS_REPLY_STRING,
	    s, err, errlen);
	if (rep->element[1]->type == REDIS_REPLY_STRING && run != NULL)
		store_run_parse(rep->element[1]->str, rep->element[1]->len,
		    run);
	freeReplyObject(rep);
	return rc;
}

/* A fenced write (lua_save or lua_begin) of text: 0; -1 with err; -4
 * with err when another holder has the circuit.  what: what it writes,
 * for messages ("state", "start record of run N"). */
static int
fenced(struct store *st, const char *script, const char *text,
    const char *what, char *err, size_t errlen)
{
	const char *args[5];
	size_t lens[5] = { 0, 0, 0, 0, 0 };
	char ms[32], gen[32], by[32];
	redisReply *rep;
	long long rc;

	lease_ms(st, ms, sizeof(ms));
	snprintf(gen, sizeof(gen), "%ld", st->generation);
	latest_ms(st, st->timeout, by, sizeof(by));
	args[0] = st->r->token;
	args[1] = gen;
	args[2] = text;
	args[3] = ms;
	args[4] = by;
	lens[2] = strlen(text);
	st->r->wait = 1;
	if ((rep = eval(st, script, 5, args, lens, err, errlen)) == NULL) {
		/* Sent and not answered: it may have landed all the same. */
		if (st->r->sent > 0 && strstr(err, "interrupted") == NULL) {
			size_t n = strlen(err);

			snprintf(err + n, errlen - n, "; the %s may or may "
			    "not have been saved", what);
		}
		return -1;
	}
	rc = rep->type == REDIS_REPLY_INTEGER ? rep->integer : 0;
	freeReplyObject(rep);
	if (rc == 1 && st->r->replicas > 0 &&
	    st->r->acked < st->r->replicas) {
		/* In the master, not confirmed where a failover would look
		 * for it. */
		snprintf(err, errlen, "store %s: circuit %s: the save was "
		    "confirmed by %lld of %d replicas within --store-timeout; "
		    "the state may or may not have been saved", st->label,
		    st->name, st->r->acked < 0 ? 0 : st->r->acked,
		    st->r->replicas);
		return -1;
	}
	if (rc == 1) {
		st->renewed = st->r->sent;	/* the script set the lease */
		return 0;
	}
	if (rc == -1 || rc == -2) {
		st->held = 0;
		snprintf(err, errlen, "store %s: circuit %s: %s; this "
		    "holder's %s not saved (the newer one is kept)",
		    st->label, st->name, rc == -1 ? "the lease expired and "
		    "another holder has it now" : "the lease expired and "
		    "another holder saved a newer state", what);
		return -4;
	}
	if (rc == -3) {
		snprintf(err, errlen, "store %s: circuit %s: the %s reached "
		    "the store after --store-timeout; not saved", st->label,
		    st->name, strcmp(what, "state") == 0 ? "save" : what);
		return -1;
	}
	snprintf(err, errlen, "store %s: unexpected reply to the save",
	    st->label);
	return -1;
}

static int
redis_save(struct store *st, const struct cb_state *s, char *err,
    size_t errlen)
{
	char *text;
	int rc;

	if ((text = state_text(s)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", st->label);
		return -1;
	}
	rc = fenced(st, lua_save, text, "state", err, errlen);
	free(text);
	return rc;
}

static int
redis_begin(struct store *st, const struct store_run *run, char *err,
    size_t errlen)
{
	char text[STORE_RUN_TEXT_MAX + 1], what[64];

	if (store_run_text(run, text, sizeof(text)) == -1) {
		snprintf(err, errlen, "internal error: no run to put on record");
		return -1;
	}
	text[strcspn(text, "\n")] = '\0';
	snprintf(what, sizeof(what), "start record of run %ld", run->run);
	return fenced(st, lua_begin, text, what, err, errlen);
}

static void
redis_unbegin(struct store *st)
{
	const char *args[1];
	char err[CB_ERRLEN];
	redisReply *rep;

	if (st->r == NULL || st->r->fd == -1)
		return;
	args[0] = st->r->token;
	if ((rep = eval(st, lua_unbegin, 1, args, NULL, err,
	    sizeof(err))) != NULL)
		freeReplyObject(rep);
}

static int
redis_exists(struct store *st, char *err, size_t errlen)
{
	redisReply *rep;
	int rc;

	/* A circuit whose first run is going on, or was: its lease, or
	 * only the start record of that run. */
	if ((rep = callv(st, err, errlen, 4, "EXISTS", st->r->key,
	    st->r->lock, st->r->run)) == NULL)
		return -1;
	rc = rep->type == REDIS_REPLY_INTEGER && rep->integer > 0;
	freeReplyObject(rep);
	return rc;
}

/* RENAMENX key to PREFIX NAME:TIMESTAMP (".N" added when taken), named
 * in newname: a corrupt document kept for the operator. */
static int
move_aside(struct store *st, const char *key, const char *prefix,
    const char *name, char *newname, size_t newlen, char *err,
    size_t errlen)
{
	char stamp[32];
	redisReply *rep;
	int i, moved;

	if (shared_aside_stamp(st, stamp, sizeof(stamp), err, errlen) == -1)
		return -1;
	for (i = 0; i < 1000; i++) {
		shared_aside_name(newname, newlen, prefix, name, stamp, i);
		/* NX: two resets in one second keep both pieces of
		 * evidence. */
		if ((rep = callv(st, err, errlen, 3, "RENAMENX", key,
		    newname)) == NULL)
			return -1;
		moved = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
		freeReplyObject(rep);
		if (moved)
			return 0;
	}
	snprintf(err, errlen, "store %s: cannot move %s aside", st->label,
	    key);
	return -1;
}

static int
redis_move_aside(struct store *st, char *newname, size_t newlen, char *err,
    size_t errlen)
{
	return move_aside(st, st->r->key, "cbexec:corrupt:", st->name,
	    newname, newlen, err, errlen);
}

/* The names after prefix of the keys that start with it, sorted. */
static int
list_keys(struct store *st, const char *prefix, char ***names, size_t *n,
    char *err, size_t errlen)
{
	const size_t plen = strlen(prefix);
	char cursor[32] = "0", match[64], **v = NULL, **nv;
	redisReply *rep, *keys;
	size_t i;

	*names = NULL;
	*n = 0;
	snprintf(match, sizeof(match), "%s*", prefix);
	do {
		if ((rep = callv(st, err, errlen, 6, "SCAN", cursor, "MATCH",
		    match, "COUNT", "1000")) == NULL)
			goto fail;
		if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
		    rep->element[0]->type != REDIS_REPLY_STRING ||
		    rep->element[1]->type != REDIS_REPLY_ARRAY) {
			freeReplyObject(rep);
			snprintf(err, errlen, "store %s: unexpected reply to "
			    "SCAN", st->label);
			goto fail;
		}
		snprintf(cursor, sizeof(cursor), "%s", rep->element[0]->str);
		keys = rep->element[1];
		for (i = 0; i < keys->elements; i++) {
			if (keys->element[i]->type != REDIS_REPLY_STRING ||
			    keys->element[i]->len <= plen)
				continue;
			if ((nv = realloc(v, (*n + 1) * sizeof(*v))) == NULL) {
				freeReplyObject(rep);
				goto nomem;
			}
			v = nv;
			if ((v[*n] = strdup(keys->element[i]->str + plen)) ==
			    NULL) {
				freeReplyObject(rep);
				goto nomem;
			}
			(*n)++;
		}
		freeReplyObject(rep);
	} while (strcmp(cursor, "0") != 0);
	if (*n > 0)
		qsort(v, *n, sizeof(*v), shared_by_name);
	*names = v;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	for (i = 0; i < *n; i++)
		free(v[i]);
	free(v);
	*n = 0;
	return -1;
}

/* The circuits: every state, and a lease without one -- a circuit whose
 * first run is going on (a lease expires with its holder). */
static int
redis_list(struct store *st, char ***names, size_t *n, char *err,
    size_t errlen)
{
	char **locks = NULL, **nv;
	size_t nl = 0, i, k, m;

	if (list_keys(st, "cbexec:circuit:", names, n, err, errlen) == -1)
		return -1;
	if (list_keys(st, "cbexec:lock:", &locks, &nl, err, errlen) == -1) {
		for (i = 0; i < *n; i++)
			free((*names)[i]);
		free(*names);
		*names = NULL;
		*n = 0;
		return -1;
	}
	for (i = 0, m = *n; i < nl; i++) {
		for (k = 0; k < m && strcmp((*names)[k], locks[i]) != 0; k++)
			;
		if (k < m || (nv = realloc(*names, (*n + 1) *
		    sizeof(*nv))) == NULL) {
			free(locks[i]);
			continue;
		}
		*names = nv;
		nv[(*n)++] = locks[i];
	}
	free(locks);
	if (*n > m)
		qsort(*names, *n, sizeof(**names), shared_by_name);
	return 0;
}

static int
redis_get_json(struct store *st, const char *name, struct cb_state *s,
    cJSON **j, char *err, size_t errlen)
{
	char *key = NULL, *lock = NULL, where[512];
	redisReply *rep;
	int rc;

	*j = NULL;
	if (asprintf(&key, "cbexec:circuit:%s", name) == -1 ||
	    asprintf(&lock, "cbexec:lock:%s", name) == -1) {
		free(key);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(where, sizeof(where), "%s in %s", key, st->label);
	rep = callv(st, err, errlen, 3, "MGET", key, lock);
	free(key);
	free(lock);
	if (rep == NULL)
		return -1;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
		snprintf(err, errlen, "store %s: unexpected reply to MGET",
		    st->label);
		freeReplyObject(rep);
		return -1;
	}
	if (rep->element[0]->type != REDIS_REPLY_STRING) {
		/* Its first run is going on: no state yet, a fresh one. */
		if (rep->element[1]->type == REDIS_REPLY_STRING) {
			freeReplyObject(rep);
			if (breaker_init(s, name) == -1 ||
			    (*j = cJSON_CreateObject()) == NULL) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			return 1;
		}
		snprintf(err, errlen, "%s: gone", where);
		freeReplyObject(rep);
		return -1;
	}
	if (state_text_check(where, rep->element[0]->str,
	    rep->element[0]->len, err, errlen) == -1) {
		freeReplyObject(rep);
		return -1;
	}
	rc = state_parse_json(where, rep->element[0]->str,
	    rep->element[0]->len, s, j, err, errlen);
	freeReplyObject(rep);
	return rc;
}

/* The lease's holder (its value: "TOKEN HOST PID"; an older cbexec's is
 * the token alone, whose holder the start record may name) and the start
 * record, in one MGET. */
static int
redis_holder(struct store *st, const char *name, struct store_holder *h,
    char *err, size_t errlen)
{
	char *lock = NULL, *run = NULL, host[256];
	redisReply *rep, *l;
	long pid;

	if (asprintf(&lock, "cbexec:lock:%s", name != NULL ? name :
	    st->name) == -1 || asprintf(&run, "cbexec:run:%s", name != NULL ?
	    name : st->name) == -1) {
		free(lock);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rep = callv(st, err, errlen, 3, "MGET", lock, run);
	free(lock);
	free(run);
	if (rep == NULL)
		return -1;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
		snprintf(err, errlen, "store %s: unexpected reply to MGET",
		    st->label);
		freeReplyObject(rep);
		return -1;
	}
	if (rep->element[1]->type == REDIS_REPLY_STRING)
		store_run_parse(rep->element[1]->str, rep->element[1]->len,
		    &h->run);
	l = rep->element[0];
	if (l->type == REDIS_REPLY_STRING) {
		if (l->len < 200 && sscanf(l->str, "%*s %255s %ld", host,
		    &pid) == 2 && pid > 0) {
			snprintf(h->host, sizeof(h->host), "%s", host);
			h->pid = pid;
		} else if (h->run.run > 0) {
			snprintf(h->host, sizeof(h->host), "%s", h->run.host);
			h->pid = h->run.pid;
		}
	}
	freeReplyObject(rep);
	return 0;
}

/* ---- accounts (SPEC §9, --account) ---- */

/* KEYS account; ARGV generation read, the document.  1 written; -2 it
 * changed since it was read (the caller reads it again). */
static const char lua_account_cas[] = LUA_GEN
"if gen(KEYS[1]) ~= tonumber(ARGV[1]) then return -2 end\n"
"redis.call('SET', KEYS[1], ARGV[2])\n"
"return 1\n";

/* The account document at key into *a: 0, 1 when there is none (a CLOSED
 * gate), -1/-2 with err when corrupt. */
static int
account_get(struct store *st, const char *key, const char *name,
    struct cb_account *a, char *err, size_t errlen)
{
	char why[CB_WHYLEN];
	redisReply *rep;
	int rc;

	if ((rep = callv(st, err, errlen, 2, "GET", key)) == NULL) {
		breaker_account_init(a, name);
		return -1;
	}
	if (rep->type != REDIS_REPLY_STRING) {
		freeReplyObject(rep);
		if (breaker_account_init(a, name) == -1) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		return 1;
	}
	rc = account_from_text(rep->str, rep->len, name, a, why, sizeof(why));
	freeReplyObject(rep);
	if (rc < 0)
		snprintf(err, errlen, rc == -2 ? "%s in %s: %s" :
		    "%s in %s: corrupt account: %s", key, st->label, why);
	return rc;
}

static int
redis_account_load(struct store *st, const char *name, struct cb_account *a,
    char *err, size_t errlen)
{
	char *key = shared_account_key(name);
	int rc;

	if (key == NULL) {
		breaker_account_init(a, name);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = account_get(st, key, name, a, err, errlen);
	free(key);
	return rc;
}

/*
 * Read, change, compare-and-set: the document is written only if its
 * generation is still the one read, else read again and fn asked again
 * (another host changed it meanwhile); no lock is held across.
 */
static int
redis_account_update(struct store *st, const char *name, double wait,
    int create, int (*fn)(struct cb_account *, void *), void *arg,
    char *aside, size_t asidelen, char *err, size_t errlen)
{
	struct cb_account a;
	char *key, *text = NULL, gen[32], why[CB_ERRLEN];
	const char *keys[1], *args[2];
	redisReply *rep;
	int rc, ld, tries;
	long long w;

	if ((key = shared_account_key(name)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return ACCOUNT_ERROR;
	}
	keys[0] = key;
	for (tries = 0; tries < 100; tries++) {
		ld = account_get(st, key, name, &a, err, errlen);
		if (ld == 1 && !create) {
			snprintf(err, errlen, "%s in %s", key, st->label);
			rc = ACCOUNT_NONE;
			goto out;
		}
		if (ld < 0) {
			/* The store out of reach is no corrupt document. */
			if (aside == NULL || ld == -2 || redis_fd(st) == -1) {
				rc = ld == -2 || redis_fd(st) == -1 ?
				    ACCOUNT_ERROR : ACCOUNT_BAD;
				goto out;
			}
			snprintf(why, sizeof(why), "%s", err);
			if (move_aside(st, key, "cbexec:corrupt-account:", name,
			    aside, asidelen, err, errlen) == -1) {
				rc = ACCOUNT_ERROR;
				goto out;
			}
			snprintf(err, errlen, "%s", why);
			breaker_account_free(&a);
			breaker_account_init(&a, name);
		} else if (aside != NULL)
			aside[0] = '\0';
		snprintf(gen, sizeof(gen), "%ld", a.generation);
		if ((rc = fn(&a, arg)) != 1)
			goto out;
		a.generation += a.generation < CB_LONG_MAX;
		if ((text = account_text(&a)) == NULL) {
			snprintf(err, errlen, "out of memory");
			rc = ACCOUNT_ERROR;
			goto out;
		}
		args[0] = gen;
		args[1] = text;
		st->r->wait = 1;
		rep = eval_keys(st, lua_account_cas, 1, keys, 2, args, NULL,
		    err, errlen);
		free(text);
		text = NULL;
		if (rep == NULL) {
			rc = ACCOUNT_ERROR;
			goto out;
		}
		w = rep->type == REDIS_REPLY_INTEGER ? rep->integer : 0;
		freeReplyObject(rep);
		if (w == 1 && st->r->replicas > 0 &&
		    st->r->acked < st->r->replicas) {
			snprintf(err, errlen, "%s in %s: the change was confirmed "
			    "by %lld of %d replicas within --store-timeout; it "
			    "may or may not have been saved", key, st->label,
			    st->r->acked < 0 ? 0 : st->r->acked,
			    st->r->replicas);
			rc = ACCOUNT_ERROR;
			goto out;
		}
		if (w == 1) {
			rc = 1;
			goto out;
		}
		breaker_account_free(&a);
	}
	snprintf(err, errlen, "%s in %s: changed by others 100 times in a row",
	    key, st->label);
	free(key);
	return ACCOUNT_BUSY;
out:
	free(text);
	breaker_account_free(&a);
	free(key);
	return rc;
}

static int
redis_account_list(struct store *st, char ***names, size_t *n, char *err,
    size_t errlen)
{
	return list_keys(st, "cbexec:account:", names, n, err, errlen);
}

const struct store_backend store_redis = {
	.name = "redis",
	.check = redis_check,
	.password = redis_password,
	.open = redis_open,
	.close = redis_close,
	.lock = redis_lock,
	.unlock = redis_unlock,
	.lock_where = redis_lock_where,
	.keepalive = redis_keepalive,
	.keepalive_async = redis_keepalive_async,
	.fd = redis_fd,
	.load = redis_load,
	.begin = redis_begin,
	.unbegin = redis_unbegin,
	.save = redis_save,
	.exists = redis_exists,
	.move_aside = redis_move_aside,
	.where = redis_where,
	.place = redis_place,
	.list = redis_list,
	.get_json = redis_get_json,
	.holder = redis_holder,
	.account_load = redis_account_load,
	.account_update = redis_account_update,
	.account_list = redis_account_list,
};
