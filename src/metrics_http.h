/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The exporter's HTTP side, on libmicrohttpd: serves the latest published
 * exposition on GET/HEAD /metrics and a small index on /. The collector
 * publishes a new rendering every interval; a scrape only takes a reference
 * to the current one, so scrapes are cheap, consistent, and never wait for
 * a collection (nor a collection for a slow client).
 */
#ifndef ILOCK_METRICS_HTTP_H
#define ILOCK_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "prom.h"

/* Defaults; docs/exporter.md explains them. */
#define HTTP_CONN_LIMIT 512
#define HTTP_PER_IP_LIMIT 32
#define HTTP_TIMEOUT_S 10
#define HTTP_CONN_MEMORY (16 * 1024)

struct http_opts {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	unsigned conn_limit;
	unsigned per_ip_limit;
	unsigned timeout_s;
	size_t conn_memory;
	bool verbose;              /* libmicrohttpd's own error messages */
};

struct http_stats {
	uint64_t scrapes[PROM_FMT_MAX];
	uint64_t scrape_ns;
	uint64_t errors;           /* 404 and 405 answers */
};

struct metrics_http;

/*
 * Parse "HOST:PORT", "[V6]:PORT" or ":PORT" (all addresses). HOST may be a
 * name. On success fills addr/addrlen and says whether it is loopback.
 */
bool http_parse_listen(const char *s, struct http_opts *o, bool *loopback, char *err,
		       size_t errlen);
/* Bind and start serving (503 until the first publish). */
int http_start(struct metrics_http **out, const struct http_opts *o, char *err, size_t errlen);
/* The port bound (useful with port 0). */
int http_port(const struct metrics_http *h);
/* Hand over one rendering per format (malloc'd; freed when no scrape uses it). */
void http_publish(struct metrics_http *h, char *data[PROM_FMT_MAX], size_t len[PROM_FMT_MAX]);
void http_get_stats(struct metrics_http *h, struct http_stats *st);
void http_stop(struct metrics_http *h);

#endif
