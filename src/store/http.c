/* SPDX-License-Identifier: ISC */
/*
 * HTTP POSTs for a store that speaks JSON over HTTP (etcd's gateway), to
 * one of several endpoints, each by a deadline, through libcurl.
 *
 * libcurl is loaded with dlopen the first time a handle is made, by its
 * soname, and named in an ELF ".note.dlopen" for packagers as libcrypto
 * is (core/digest.c): only an etcd store needs it, and mapping it with
 * its dependencies (libssl, libnghttp2, libssh2, libldap, ...) at start-up
 * would cost every invocation that never talks to etcd.  Its functions
 * are reached through a table of pointers filled by dlsym; the header
 * gives the types and constants.  Base64 comes from libcrypto, which
 * libcurl has loaded: dlsym on libcurl's handle finds it among the
 * libraries that came with it.
 *
 * A request is one transfer of libcurl's multi interface driven by its
 * socket API: libcurl says which sockets to watch for what and when to
 * call it back (on_socket, on_timer), and the wait is ours -- poll(2)
 * through the caller's poll function, so that an operator signal ends it
 * at once, and so that the run engine's event loop can take a pending
 * request on instead of waiting (http_step with wait 0, http_fd).  Every
 * request is bounded as a whole by its deadline: name resolution
 * (libcurl's threaded resolver, given up at the deadline), connect, TLS
 * handshake, the request and the whole answer however it trickles.
 *
 * Endpoints are tried in turn: the one that answered last first; one that
 * cannot be reached, resets, or does not answer within its share of what
 * is left of the deadline (half of it while another endpoint remains to
 * be tried, all of it for the last) is given up for the next.  An answer
 * of any HTTP status ends the request: what it means is the caller's.
 * Refusals that another try cannot change (a certificate not trusted, a
 * server that speaks TLS to a plain request or the other way round) end
 * it at once.
 *
 * Every socket libcurl opens is made close-on-exec, so the command never
 * inherits one; no proxy from the environment is used, no redirect
 * followed, no protocol but HTTP and HTTPS spoken.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "core.h"
#include "http.h"
#include "tls.h"

/* libcurl's soname: the same since 7.16 (CURL_SONAME overrides). */
#ifndef CURL_SONAME
#define CURL_SONAME "libcurl.so.4"
#endif

/* The ELF dlopen note (CB_DLOPEN_NOTE): a JSON array. */
#define DLOPEN_JSON "[{\"feature\":\"etcd\",\"description\":" \
	"\"the etcd store (--store etcd://, etcds://)\"," \
	"\"priority\":\"recommended\",\"soname\":[\"" CURL_SONAME "\"]}]"

CB_DLOPEN_NOTE(DLOPEN_JSON);

static struct {
	int state;		/* 0 not tried, 1 loaded, -1 failed */
	char why[CB_WHYLEN];
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
	CURLMcode (*multi_add_handle)(CURLM *, CURL *);
	CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
	CURLMcode (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
	CURLMsg *(*multi_info_read)(CURLM *, int *);
	CURLMcode (*multi_cleanup)(CURLM *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	time_t (*getdate)(const char *, const time_t *);
	int (*b64enc)(unsigned char *, const unsigned char *, int);
	int (*b64dec)(unsigned char *, const unsigned char *, int);
} cl;

/* Casting dlsym's void * to a function pointer is what POSIX intends. */
#define SYM(field, name) (*(void **)&cl.field = dlsym(lib, name))

/* The descriptors open now, as a bitmap of the first 4096 (those are all
 * a cbexec has), so that the ones a library opens can be told. */
#define FDMAP_BITS 4096
struct fdmap {
	unsigned char bit[FDMAP_BITS / 8];
};

static void
fds_open(struct fdmap *m)
{
	struct dirent *d;
	DIR *dir;
	long fd;

	memset(m, 0, sizeof(*m));
	if ((dir = opendir("/proc/self/fd")) == NULL)
		return;
	while ((d = readdir(dir)) != NULL) {
		fd = strtol(d->d_name, NULL, 10);
		/* not the listing's own descriptor, which is closed after */
		if (fd >= 0 && fd < FDMAP_BITS && fd != dirfd(dir))
			m->bit[fd / 8] |= (unsigned char)(1 << (fd % 8));
	}
	closedir(dir);
}

/* Each descriptor opened since m was taken made close-on-exec: what a
 * library opened for itself (libcurl's wake-up socket pair) must never
 * reach the command. */
static void
fds_cloexec(const struct fdmap *m)
{
	struct fdmap now;
	int fd, fl;

	fds_open(&now);
	for (fd = 3; fd < FDMAP_BITS; fd++)
		if ((now.bit[fd / 8] & (1 << (fd % 8))) &&
		    !(m->bit[fd / 8] & (1 << (fd % 8))) &&
		    (fl = fcntl(fd, F_GETFD)) != -1 && !(fl & FD_CLOEXEC))
			fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

static int
load(void)
{
	struct fdmap before;
	const char *e;
	void *lib;

	if (cl.state != 0)
		return cl.state == 1 ? 0 : -1;
	cl.state = -1;
	fds_open(&before);
	if ((lib = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		e = dlerror();
		snprintf(cl.why, sizeof(cl.why), "cannot load libcurl (%s) "
		    "for the etcd store: %s", CURL_SONAME, e != NULL ? e :
		    "not found");
		return -1;
	}
	if (!SYM(global_init, "curl_global_init") ||
	    !SYM(easy_init, "curl_easy_init") ||
	    !SYM(easy_setopt, "curl_easy_setopt") ||
	    !SYM(easy_getinfo, "curl_easy_getinfo") ||
	    !SYM(easy_cleanup, "curl_easy_cleanup") ||
	    !SYM(easy_strerror, "curl_easy_strerror") ||
	    !SYM(multi_init, "curl_multi_init") ||
	    !SYM(multi_setopt, "curl_multi_setopt") ||
	    !SYM(multi_add_handle, "curl_multi_add_handle") ||
	    !SYM(multi_remove_handle, "curl_multi_remove_handle") ||
	    !SYM(multi_socket_action, "curl_multi_socket_action") ||
	    !SYM(multi_info_read, "curl_multi_info_read") ||
	    !SYM(multi_cleanup, "curl_multi_cleanup") ||
	    !SYM(slist_append, "curl_slist_append") ||
	    !SYM(slist_free_all, "curl_slist_free_all") ||
	    !SYM(getdate, "curl_getdate")) {
		snprintf(cl.why, sizeof(cl.why), "%s lacks functions of the "
		    "libcurl cbexec was built with", CURL_SONAME);
		return -1;
	}
	/* libcurl's TLS library brought libcrypto along (Debian's libcurl4
	 * is built with OpenSSL). */
	if (!SYM(b64enc, "EVP_EncodeBlock") ||
	    !SYM(b64dec, "EVP_DecodeBlock")) {
		snprintf(cl.why, sizeof(cl.why), "%s is not built with "
		    "OpenSSL (no libcrypto came with it)", CURL_SONAME);
		return -1;
	}
	if (cl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(cl.why, sizeof(cl.why), "libcurl (%s) failed to "
		    "initialise", CURL_SONAME);
		return -1;
	}
	fds_cloexec(&before);
	cl.state = 1;
	return 0;
}

/* ---- base64 ---- */

char *
http_b64(const void *p, size_t n)
{
	char *out;

	if (load() == -1 || n > INT_MAX / 2 ||
	    (out = malloc((n + 2) / 3 * 4 + 1)) == NULL)
		return NULL;
	cl.b64enc((unsigned char *)out, p, (int)n);
	return out;
}

char *
http_unb64(const char *s, size_t len, size_t *outlen)
{
	unsigned char *out;
	size_t i, pad = 0;
	int n;

	if (load() == -1 || len % 4 != 0 || len > INT_MAX / 2)
		return NULL;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '+' &&
		    s[i] != '/' && !(s[i] == '=' && i >= len - 2))
			return NULL;
	if (len > 0 && s[len - 1] == '=')
		pad = len > 1 && s[len - 2] == '=' ? 2 : 1;
	if ((out = malloc(len / 4 * 3 + 1)) == NULL)
		return NULL;
	/* EVP_DecodeBlock counts the padding's bytes as zeros. */
	if ((n = cl.b64dec(out, (const unsigned char *)s, (int)len)) < 0 ||
	    (size_t)n < pad) {
		free(out);
		return NULL;
	}
	*outlen = (size_t)n - pad;
	out[*outlen] = '\0';
	return (char *)out;
}

/* ---- the handle ---- */

#define MAXSOCK 4

struct http {
	struct http_cfg cfg;
	char **ep;		/* "host:port" */
	size_t n, fav;		/* endpoints; the one that answered last */
	CURLM *m;
	CURL *e;
	char errbuf[CURL_ERROR_SIZE];
	struct {
		curl_socket_t fd;
		int what;
	} sock[MAXSOCK];
	int nsock;
	double timer_at;	/* libcurl wants a call then (mono), 0: no */
	/* the request going on */
	int busy;		/* a request: 1; its transfer added: 2 */
	char *body;
	char path[256];
	struct curl_slist *hdrs;
	size_t max;
	double deadline;
	size_t tried, cur;	/* endpoints tried; this attempt's */
	char url[600];
	char why[CB_ERRLEN];		/* the last attempt's failure */
	/* its answer */
	char *buf;
	size_t len, cap;
	int too_big;
	double date, wall_sent, sent;
	int reached;		/* an attempt of this request may have
				 * reached the server (it was sent) */
};

static int
on_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct http *h = userp;
	int i;

	for (i = 0; i < h->nsock; i++)
		if (h->sock[i].fd == s)
			break;
	if (what == CURL_POLL_REMOVE) {
		if (i < h->nsock)
			h->sock[i] = h->sock[--h->nsock];
		return 0;
	}
	if (i == h->nsock) {
		if (h->nsock == MAXSOCK)
			return -1;
		h->nsock++;
	}
	h->sock[i].fd = s;
	h->sock[i].what = what;
	return 0;
}

static int
on_timer(CURLM *m, long ms, void *userp)
{
	struct http *h = userp;

	h->timer_at = ms < 0 ? 0 : mono_now() + ms / 1000.0;
	return 0;
}

/* A socket of libcurl's, made close-on-exec before it connects. */
static int
on_sockopt(void *clientp, curl_socket_t fd, curlsocktype purpose)
{
	fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
	return CURL_SOCKOPT_OK;
}

static size_t
on_body(char *p, size_t size, size_t nmemb, void *userp)
{
	struct http *h = userp;
	size_t n = size * nmemb;
	char *nb;

	if (h->len + n > h->max) {
		h->too_big = 1;
		return 0;	/* libcurl ends the transfer */
	}
	if (h->len + n + 1 > h->cap) {
		size_t cap = h->cap ? h->cap : 4096;

		while (cap < h->len + n + 1)
			cap *= 2;
		if ((nb = realloc(h->buf, cap)) == NULL)
			return 0;
		h->buf = nb;
		h->cap = cap;
	}
	memcpy(h->buf + h->len, p, n);
	h->len += n;
	h->buf[h->len] = '\0';
	return n;
}

static size_t
on_header(char *p, size_t size, size_t nmemb, void *userp)
{
	struct http *h = userp;
	size_t n = size * nmemb;
	char line[128];
	time_t t;

	if (n > 5 && n < sizeof(line) && strncasecmp(p, "date:", 5) == 0) {
		memcpy(line, p + 5, n - 5);
		line[n - 5] = '\0';
		if ((t = cl.getdate(line, NULL)) != (time_t)-1)
			h->date = (double)t;
	}
	return n;
}

int
http_new(struct http **hp, const char *const *endpoints, size_t n,
    const struct http_cfg *cfg, char *err, size_t errlen)
{
	struct fdmap before;
	struct sigaction sa;
	struct http *h;
	size_t i;

	*hp = NULL;
	if (cfg->key != NULL || cfg->cert != NULL) {
		const char *key = cfg->key != NULL ? cfg->key : cfg->cert;

		if (tls_key_private(cfg->key != NULL ? "--store-key" :
		    "--store-cert", key, err, errlen) == -1)
			return -1;
	}
	if (load() == -1) {
		snprintf(err, errlen, "%s", cl.why);
		return -1;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL ||
	    (h->ep = calloc(n, sizeof(*h->ep))) == NULL)
		goto nomem;
	h->cfg = *cfg;
	h->n = n;
	for (i = 0; i < n; i++)
		if ((h->ep[i] = strdup(endpoints[i])) == NULL)
			goto nomem;
	fds_open(&before);
	if ((h->m = cl.multi_init()) == NULL || (h->e = cl.easy_init()) ==
	    NULL)
		goto nomem;
	fds_cloexec(&before);
	cl.multi_setopt(h->m, CURLMOPT_SOCKETFUNCTION, on_socket);
	cl.multi_setopt(h->m, CURLMOPT_SOCKETDATA, h);
	cl.multi_setopt(h->m, CURLMOPT_TIMERFUNCTION, on_timer);
	cl.multi_setopt(h->m, CURLMOPT_TIMERDATA, h);
	/* A store that hangs up must give an error, not kill us (the run
	 * engine ignores SIGPIPE already; an operator verb does not). */
	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
		sa.sa_handler = SIG_IGN;
		sigaction(SIGPIPE, &sa, NULL);
	}
	*hp = h;
	return 0;
nomem:
	snprintf(err, errlen, "store %s: out of memory", cfg->label);
	http_free(h);
	return -1;
}

/* The transfer taken off the multi handle (its connection kept for the
 * next request when it ended well, else closed). */
static void
detach(struct http *h)
{
	if (h->busy == 2)
		cl.multi_remove_handle(h->m, h->e);
	h->busy = h->busy ? 1 : 0;
}

static void
finish(struct http *h)
{
	detach(h);
	h->busy = 0;
	free(h->body);
	h->body = NULL;
	if (h->hdrs != NULL)
		cl.slist_free_all(h->hdrs);
	h->hdrs = NULL;
}

void
http_free(struct http *h)
{
	size_t i;

	if (h == NULL)
		return;
	if (h->m != NULL)
		finish(h);
	if (h->e != NULL)
		cl.easy_cleanup(h->e);
	if (h->m != NULL)
		cl.multi_cleanup(h->m);
	for (i = 0; h->ep != NULL && i < h->n; i++)
		free(h->ep[i]);
	free(h->ep);
	free(h->buf);
	free(h);
}

void
http_reply_free(struct http_reply *rep)
{
	free(rep->body);
	rep->body = NULL;
}

/* Start an attempt on the next endpoint not tried: 1, or HTTP_FAIL with
 * err when none is left or no time is. */
static int
attempt(struct http *h, char *err, size_t errlen)
{
	double left = h->deadline - mono_now(), share;
	const char *ep;
	int running;

	if (h->tried >= h->n || left <= 0) {
		snprintf(err, errlen, "store %s: %s", h->cfg.label,
		    h->why[0] != '\0' ? h->why : "no answer within "
		    "--store-timeout");
		finish(h);
		return HTTP_FAIL;
	}
	h->cur = (h->fav + h->tried) % h->n;
	h->tried++;
	ep = h->ep[h->cur];
	/* Half of what is left while another endpoint may be asked. */
	share = h->tried < h->n ? left / 2 : left;
	snprintf(h->url, sizeof(h->url), "%s://%s%s", h->cfg.tls ? "https" :
	    "http", ep, h->path);
	h->len = 0;
	h->too_big = 0;
	h->date = -1;
	h->errbuf[0] = '\0';
	cl.easy_setopt(h->e, CURLOPT_URL, h->url);
	cl.easy_setopt(h->e, CURLOPT_TIMEOUT_MS, (long)(share * 1000) + 1);
	cl.easy_setopt(h->e, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)(share * 1000) + 1);
	h->wall_sent = wall_now();
	h->sent = mono_now();
	if (cl.multi_add_handle(h->m, h->e) != CURLM_OK) {
		snprintf(err, errlen, "store %s: cannot start a request",
		    h->cfg.label);
		finish(h);
		return HTTP_FAIL;
	}
	h->busy = 2;
	cl.multi_socket_action(h->m, CURL_SOCKET_TIMEOUT, 0, &running);
	return 1;
}

/* The options of one request, set once for all its attempts. */
static void
setup(struct http *h)
{
	CURL *e = h->e;

	cl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075700
	/* A name lookup given up at the deadline is left to its thread,
	 * not waited for (libcurl would wait for it when the transfer is
	 * taken off). */
	cl.easy_setopt(e, CURLOPT_QUICK_EXIT, 1L);
#endif
	cl.easy_setopt(e, CURLOPT_PROXY, "");
	cl.easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	cl.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	cl.easy_setopt(e, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP |
	    CURLPROTO_HTTPS));
#endif
	cl.easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	cl.easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	cl.easy_setopt(e, CURLOPT_USERAGENT, "cbexec");
	cl.easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, on_sockopt);
	cl.easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	cl.easy_setopt(e, CURLOPT_WRITEDATA, h);
	cl.easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	cl.easy_setopt(e, CURLOPT_HEADERDATA, h);
	cl.easy_setopt(e, CURLOPT_ERRORBUFFER, h->errbuf);
	cl.easy_setopt(e, CURLOPT_POST, 1L);
	cl.easy_setopt(e, CURLOPT_POSTFIELDS, h->body);
	cl.easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(h->body));
	cl.easy_setopt(e, CURLOPT_HTTPHEADER, h->hdrs);
	if (h->cfg.tls) {
		if (h->cfg.ca != NULL) {
			cl.easy_setopt(e, CURLOPT_CAINFO, h->cfg.ca);
			/* the file's CAs, not the system's too */
			cl.easy_setopt(e, CURLOPT_CAPATH, (char *)NULL);
		}
		if (h->cfg.cert != NULL) {
			cl.easy_setopt(e, CURLOPT_SSLCERT, h->cfg.cert);
			cl.easy_setopt(e, CURLOPT_SSLKEY, h->cfg.key != NULL ?
			    h->cfg.key : h->cfg.cert);
		}
	}
}

int
http_start(struct http *h, const char *path, const char *body,
    const char *auth, size_t max, double deadline, char *err,
    size_t errlen)
{
	struct curl_slist *l;

	if (h->busy) {
		snprintf(err, errlen, "internal error: a request is pending");
		return HTTP_FAIL;
	}
	if (strlen(path) >= sizeof(h->path) || (h->body = strdup(body)) ==
	    NULL)
		goto nomem;
	snprintf(h->path, sizeof(h->path), "%s", path);
	/* No "Expect: 100-continue" wait for a larger body. */
	if ((l = cl.slist_append(NULL, "Content-Type: application/json")) ==
	    NULL)
		goto nomem;
	h->hdrs = l;
	if ((l = cl.slist_append(h->hdrs, "Expect:")) == NULL)
		goto nomem;
	if (auth != NULL && (l = cl.slist_append(h->hdrs, auth)) == NULL)
		goto nomem;
	h->busy = 1;
	h->max = max;
	h->deadline = deadline;
	h->tried = 0;
	h->reached = 0;
	h->why[0] = '\0';
	setup(h);
	return attempt(h, err, errlen);
nomem:
	finish(h);
	snprintf(err, errlen, "store %s: out of memory", h->cfg.label);
	return HTTP_FAIL;
}

/* The endpoint of an attempt for messages: "host:port". */
static int
refused(struct http *h, const char *why, char *err, size_t errlen)
{
	snprintf(err, errlen, "store %s: %s: %s", h->cfg.label,
	    h->ep[h->cur], why);
	finish(h);
	return HTTP_REFUSED;
}

/* The transfer ended with code: 0 with *rep, 1 when another endpoint is
 * being tried, or an error. */
static int
ended(struct http *h, CURLcode code, struct http_reply *rep, char *err,
    size_t errlen)
{
	const char *what = h->errbuf[0] != '\0' ? h->errbuf :
	    cl.easy_strerror(code);
	long status = 0;

	if (code != CURLE_OK && code != CURLE_COULDNT_CONNECT &&
	    code != CURLE_COULDNT_RESOLVE_HOST) {
		long sent = 0;

		if (cl.easy_getinfo(h->e, CURLINFO_REQUEST_SIZE, &sent) !=
		    CURLE_OK || sent > 0)
			h->reached = 1;
	}
	detach(h);
	if (code == CURLE_OK) {
		cl.easy_getinfo(h->e, CURLINFO_RESPONSE_CODE, &status);
		/* Go's TLS server answers a plain request with this. */
		if (!h->cfg.tls && status == 400 && h->buf != NULL &&
		    strstr(h->buf, "HTTP request to an HTTPS server") != NULL)
			return refused(h, "it speaks TLS: use etcds://", err,
			    errlen);
		rep->status = status;
		rep->body = h->buf != NULL ? h->buf : strdup("");
		rep->len = h->len;
		h->buf = NULL;
		h->len = h->cap = 0;
		rep->date = h->date;
		rep->wall_sent = h->wall_sent;
		rep->wall_got = wall_now();
		rep->sent = h->sent;
		rep->endpoint = h->ep[h->cur];
		h->fav = h->cur;
		finish(h);
		if (rep->body == NULL) {
			snprintf(err, errlen, "store %s: out of memory",
			    h->cfg.label);
			return HTTP_FAIL;
		}
		return 0;
	}
	if (h->too_big) {
		char why[CB_WHYLEN];

		snprintf(why, sizeof(why), "a reply of more than %zu bytes: "
		    "refused", h->max);
		return refused(h, why, err, errlen);
	}
	switch (code) {
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_CRL_BADFILE:
		return refused(h, what, err, errlen);
	case CURLE_SSL_CONNECT_ERROR:
		/* A plain server answers the handshake with HTTP. */
		if (strstr(what, "wrong version number") != NULL ||
		    strstr(what, "packet length too long") != NULL) {
			char why[CB_ERRLEN];

			snprintf(why, sizeof(why), "the TLS handshake failed "
			    "(%s): it does not speak TLS; use etcd://", what);
			return refused(h, why, err, errlen);
		}
		if (strstr(what, "alert") != NULL ||
		    strstr(what, "certificate") != NULL)
			return refused(h, what, err, errlen);
		break;
	default:
		break;
	}
	/* etcd's TLS port closes on a plain request without a word. */
	snprintf(h->why, sizeof(h->why), "%s: %s%s", h->ep[h->cur],
	    code == CURLE_OPERATION_TIMEDOUT ? "no answer within "
	    "--store-timeout" : what, code == CURLE_GOT_NOTHING &&
	    !h->cfg.tls ? " (a TLS port? use etcds://)" : "");
	return attempt(h, err, errlen);
}

/* What libcurl has to say now: 1 still pending, else as ended(). */
static int
progress(struct http *h, struct http_reply *rep, char *err, size_t errlen)
{
	CURLMsg *msg;
	int left;

	while ((msg = cl.multi_info_read(h->m, &left)) != NULL)
		if (msg->msg == CURLMSG_DONE && msg->easy_handle == h->e)
			return ended(h, msg->data.result, rep, err, errlen);
	return 1;
}

int
http_step(struct http *h, int wait, struct http_reply *rep, char *err,
    size_t errlen)
{
	struct pollfd pfd[MAXSOCK];
	int i, n, rc, running, ev;
	long ms;

	if (!h->busy) {
		snprintf(err, errlen, "internal error: no request pending");
		return HTTP_FAIL;
	}
	for (;;) {
		if ((rc = progress(h, rep, err, errlen)) != 1)
			return rc;
		if (mono_now() >= h->deadline) {
			if (h->why[0] == '\0' || h->tried <= 1)
				snprintf(err, errlen, "store %s: no answer "
				    "within --store-timeout", h->cfg.label);
			else
				snprintf(err, errlen, "store %s: no answer "
				    "within --store-timeout (%s)",
				    h->cfg.label, h->why);
			finish(h);
			return HTTP_FAIL;
		}
		ms = wait ? mono_ms_left(h->deadline) : 0;
		if (h->timer_at > 0 && mono_ms_left(h->timer_at) < ms)
			ms = mono_ms_left(h->timer_at);
		for (i = 0; i < h->nsock; i++) {
			pfd[i].fd = h->sock[i].fd;
			pfd[i].events = (h->sock[i].what & CURL_POLL_IN ?
			    POLLIN : 0) | (h->sock[i].what & CURL_POLL_OUT ?
			    POLLOUT : 0);
			pfd[i].revents = 0;
		}
		n = h->nsock;
		/* A look that never waits (the run engine's loop asking)
		 * has nothing for a signal to end. */
		rc = wait && h->cfg.poll != NULL ? h->cfg.poll(pfd, n,
		    (int)ms) : poll(pfd, (nfds_t)n, (int)ms);
		if (rc == -2) {
			snprintf(err, errlen, "store %s: interrupted",
			    h->cfg.label);
			finish(h);
			return HTTP_INTR;
		}
		if (rc == -1 && errno != EINTR) {
			snprintf(err, errlen, "store %s: poll: %s",
			    h->cfg.label, strerror(errno));
			finish(h);
			return HTTP_FAIL;
		}
		for (i = 0; rc > 0 && i < n; i++) {
			if (pfd[i].revents == 0)
				continue;
			ev = (pfd[i].revents & (POLLIN | POLLHUP) ?
			    CURL_CSELECT_IN : 0) |
			    (pfd[i].revents & POLLOUT ? CURL_CSELECT_OUT : 0) |
			    (pfd[i].revents & (POLLERR | POLLNVAL) ?
			    CURL_CSELECT_ERR : 0);
			cl.multi_socket_action(h->m, pfd[i].fd, ev, &running);
		}
		if (h->timer_at > 0 && mono_now() >= h->timer_at) {
			h->timer_at = 0;
			cl.multi_socket_action(h->m, CURL_SOCKET_TIMEOUT, 0,
			    &running);
		}
		if (!wait) {
			rc = progress(h, rep, err, errlen);
			if (rc == 1 && mono_now() >= h->deadline)
				continue;	/* said above, at once */
			return rc;
		}
	}
}

int
http_post(struct http *h, const char *path, const char *body,
    const char *auth, size_t max, double deadline, struct http_reply *rep,
    char *err, size_t errlen)
{
	int rc;

	if ((rc = http_start(h, path, body, auth, max, deadline, err,
	    errlen)) != 1)
		return rc;
	return http_step(h, 1, rep, err, errlen);
}

int
http_reached(const struct http *h)
{
	return h->reached;
}

void
http_next(struct http *h)
{
	h->fav = (h->fav + 1) % h->n;
}

int
http_pending(const struct http *h)
{
	return h != NULL && h->busy;
}

int
http_fd(const struct http *h)
{
	int i;

	if (h == NULL || !h->busy)
		return -1;
	for (i = 0; i < h->nsock; i++)
		if (h->sock[i].what & CURL_POLL_IN)
			return h->sock[i].fd;
	return h->nsock > 0 ? h->sock[0].fd : -1;
}
