// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

#include "metrics_http.h"
#include "util.h"

/* One published rendering; scrapes in progress hold references. */
struct page {
	int refs;
	char *data;
	size_t len;
};

struct metrics_http {
	struct MHD_Daemon *d;
	int port;
	pthread_mutex_t lock;      /* guards cur[] only: held for a pointer swap */
	struct page *cur[PROM_FMT_MAX];
	uint64_t scrapes[PROM_FMT_MAX], scrape_ns, errors;  /* __atomic */
};

/* Per request, from the URI-log callback to the completion callback. */
struct req {
	uint64_t start_ns;
	int fmt;                   /* -1: not a scrape */
	bool called;               /* the handler saw this request's headers */
};

static const char index_html[] =
	"<!DOCTYPE html>\n<html><head><title>ilock exporter</title></head><body>\n"
	"<h1>ilock exporter</h1>\n"
	"<p>Inode lock contention, from kernel tracepoints.</p>\n"
	"<p><a href=\"/metrics\">/metrics</a></p>\n"
	"</body></html>\n";

static void page_unref(void *cls)
{
	struct page *p = cls;

	if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		free(p->data);
		free(p);
	}
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct req *r = malloc(sizeof(*r));

	(void)cls;
	(void)uri;
	(void)c;
	if (r) {
		r->start_ns = now_monotonic_ns();
		r->fmt = -1;
		r->called = false;
	}
	return r;  /* NULL only costs this request's timing */
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
		    enum MHD_RequestTerminationCode toe)
{
	struct metrics_http *h = cls;
	struct req *r = *con_cls;

	(void)c;
	if (!r)
		return;
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && r->fmt >= 0) {
		__atomic_add_fetch(&h->scrapes[r->fmt], 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&h->scrape_ns, now_monotonic_ns() - r->start_ns, __ATOMIC_RELAXED);
	}
	free(r);
	*con_cls = NULL;
}

static enum MHD_Result reply_static(struct MHD_Connection *c, unsigned status, const char *body,
				    const char *type, const char *allow)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct metrics_http *h = cls;
	struct req *r = *con_cls;
	bool metrics = !strcmp(url, "/metrics"), index = !strcmp(url, "/");
	struct MHD_Response *resp;
	enum MHD_Result ret;
	enum prom_format fmt;
	struct page *p;

	(void)version;
	(void)upload_data;
	/* errors are answered at once; libmicrohttpd then closes the connection */
	if (!metrics && !index) {
		__atomic_add_fetch(&h->errors, 1, __ATOMIC_RELAXED);
		return reply_static(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n",
				    "text/plain; charset=utf-8", NULL);
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		__atomic_add_fetch(&h->errors, 1, __ATOMIC_RELAXED);
		return reply_static(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n",
				    "text/plain; charset=utf-8", "GET, HEAD");
	}
	/*
	 * libmicrohttpd 0.9.7x closes the connection after a response queued
	 * on the first call for a request: answer on the second one, so that
	 * Prometheus keeps its connection alive between scrapes.
	 */
	if (r && !r->called) {
		r->called = true;
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;  /* a GET with a body: ignore it */
		return MHD_YES;
	}
	if (index)
		return reply_static(c, MHD_HTTP_OK, index_html, "text/html; charset=utf-8", NULL);

	fmt = prom_negotiate(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							  MHD_HTTP_HEADER_ACCEPT));
	pthread_mutex_lock(&h->lock);
	p = h->cur[fmt];
	if (p)
		__atomic_add_fetch(&p->refs, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&h->lock);
	if (!p)
		return reply_static(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no collection yet\n",
				    "text/plain; charset=utf-8", NULL);
	/* HEAD: MHD sends the headers (with Content-Length) and no body */
	resp = MHD_create_response_from_buffer_with_free_callback_cls(p->len, p->data, page_unref, p);
	if (!resp) {
		page_unref(p);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, prom_content_type(fmt));
	if (r)
		r->fmt = (int)fmt;
	ret = MHD_queue_response(c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_LOOPBACK(a))
			return true;
		return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
	}
	return false;
}

bool http_parse_listen(const char *s, struct http_opts *o, bool *loopback, char *err,
		       size_t errlen)
{
	char host[256];
	const char *colon, *port;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	uint64_t portnum;
	int rc;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':') {
			snprintf(err, errlen, "--listen %s: expected [ADDRESS]:PORT", s);
			return false;
		}
		snprintf(host, sizeof(host), "%.*s", (int)(close - s - 1), s + 1);
		port = close + 2;
		hints.ai_family = AF_INET6;
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon) {
			snprintf(err, errlen, "--listen %s: expected HOST:PORT (IPv6 as [ADDRESS]:PORT)", s);
			return false;
		}
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
		port = colon + 1;
	}
	if (!parse_u64(port, 65535, &portnum) || !*port) {
		snprintf(err, errlen, "--listen %s: '%s' is not a port number", s, port);
		return false;
	}
	if (!host[0]) {
		hints.ai_flags |= AI_PASSIVE;  /* ":PORT": every address */
		hints.ai_family = AF_INET;
	}
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (rc || !res) {
		snprintf(err, errlen, "--listen %s: %s", s, rc ? gai_strerror(rc) : "no address");
		return false;
	}
	memcpy(&o->addr, res->ai_addr, res->ai_addrlen);
	o->addrlen = res->ai_addrlen;
	*loopback = is_loopback(res->ai_addr);
	freeaddrinfo(res);
	return true;
}

/* Our own listening socket, so a bind failure says exactly why. */
static int open_listener(const struct http_opts *o, int *port, char *err, size_t errlen)
{
	int fd = socket(o->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, e;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (o->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&o->addr, o->addrlen) || listen(fd, 128)) {
		e = errno;
		close(fd);
		snprintf(err, errlen, "cannot listen: %s", strerror(e));
		return -1;
	}
	/* libmicrohttpd wants a non-blocking listener with epoll */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	*port = 0;
	if (!getsockname(fd, (struct sockaddr *)&ss, &sl))
		*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						       : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

int http_start(struct metrics_http **out, const struct http_opts *o, char *err, size_t errlen)
{
	struct metrics_http *h = calloc(1, sizeof(*h));
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
	int fd;

	*out = NULL;
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&h->lock, NULL);
	fd = open_listener(o, &h->port, err, errlen);
	if (fd < 0) {
		pthread_mutex_destroy(&h->lock);
		free(h);
		return -EADDRNOTAVAIL;
	}
	if (o->addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (o->verbose)
		flags |= MHD_USE_ERROR_LOG;
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
				MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->conn_limit,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)o->per_ip_limit,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->timeout_s,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)o->conn_memory,
				MHD_OPTION_URI_LOG_CALLBACK, on_uri, h,
				MHD_OPTION_NOTIFY_COMPLETED, on_done, h,
				/* refuse sloppy HTTP rather than guess at it */
				MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
				MHD_OPTION_END);
	if (!h->d) {
		close(fd);
		pthread_mutex_destroy(&h->lock);
		free(h);
		snprintf(err, errlen, "cannot start the HTTP server (libmicrohttpd)");
		return -EIO;
	}
	*out = h;
	return 0;
}

int http_port(const struct metrics_http *h)
{
	return h->port;
}

void http_publish(struct metrics_http *h, char *data[PROM_FMT_MAX], size_t len[PROM_FMT_MAX])
{
	struct page *fresh[PROM_FMT_MAX], *old[PROM_FMT_MAX];

	for (int f = 0; f < PROM_FMT_MAX; f++) {
		fresh[f] = malloc(sizeof(*fresh[f]));
		if (!fresh[f]) {
			free(data[f]);  /* keep serving the previous one */
			continue;
		}
		fresh[f]->refs = 1;
		fresh[f]->data = data[f];
		fresh[f]->len = len[f];
	}
	pthread_mutex_lock(&h->lock);
	for (int f = 0; f < PROM_FMT_MAX; f++) {
		old[f] = fresh[f] ? h->cur[f] : NULL;
		if (fresh[f])
			h->cur[f] = fresh[f];
	}
	pthread_mutex_unlock(&h->lock);
	for (int f = 0; f < PROM_FMT_MAX; f++)
		page_unref(old[f]);
}

void http_get_stats(struct metrics_http *h, struct http_stats *st)
{
	for (int f = 0; f < PROM_FMT_MAX; f++)
		st->scrapes[f] = __atomic_load_n(&h->scrapes[f], __ATOMIC_RELAXED);
	st->scrape_ns = __atomic_load_n(&h->scrape_ns, __ATOMIC_RELAXED);
	st->errors = __atomic_load_n(&h->errors, __ATOMIC_RELAXED);
}

void http_stop(struct metrics_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);  /* closes the listener and every connection */
	for (int f = 0; f < PROM_FMT_MAX; f++)
		page_unref(h->cur[f]);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
