// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `ilock export`: a Prometheus / OpenMetrics exporter. The main thread
 * collects every --interval (read the maps, fold into series, render both
 * formats) and publishes; libmicrohttpd's thread serves the latest
 * rendering. docs/exporter.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "log.h"
#include "metrics_http.h"
#include "mounts.h"
#include "prom.h"
#include "render.h"
#include "signals.h"
#include "tracer.h"
#include "util.h"

#define EXPORT_DEFAULT_LISTEN "127.0.0.1:9435"
#define EXPORT_DEFAULT_INTERVAL_S 5.0
#define TITLES_EVERY_NS 1000000000ULL  /* as ilock stat looks them up */

enum {
	OPT_LISTEN = OPT_CLI_FIRST_FREE + 20,
	OPT_TOP_INODES,
	OPT_MAX_PAIRS,
	OPT_NO_BPF_STATS,
	OPT_HTTP_TIMEOUT,
	OPT_SERIES_IDLE,
};

struct export_opts {
	struct ilock_opts o;           /* filters, -v, --max-inodes */
	const char *listen;
	unsigned top_k;
	uint64_t series_idle_s;        /* --series-idle; 0: never */
	size_t max_pairs;
	double interval_s;
	unsigned http_timeout_s;
	bool bpf_stats;
};

static const struct option long_opts[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "top-inodes", required_argument, NULL, OPT_TOP_INODES },
	{ "interval", required_argument, NULL, 'i' },
	{ "max-pairs", required_argument, NULL, OPT_MAX_PAIRS },
	{ "no-bpf-stats", no_argument, NULL, OPT_NO_BPF_STATS },
	{ "http-timeout", required_argument, NULL, OPT_HTTP_TIMEOUT },
	{ "renew", required_argument, NULL, OPT_RENEW },
	{ "series-idle", required_argument, NULL, OPT_SERIES_IDLE },
	CLI_FILTER_LONGOPTS,
	{ "max-inodes", required_argument, NULL, OPT_MAX_INODES },
	CLI_OPS_LONGOPTS,
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage_brief(FILE *f)
{
	fprintf(f, "usage: ilock export [--listen ADDR:PORT] [--top-inodes K] [-i SECONDS] [filters] "
		   "[-v]   (-h for help)\n");
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: ilock export [--listen ADDR:PORT] [--top-inodes K] [-i|--interval SECONDS]\n"
"                    [--max-pairs N] [--http-timeout SECONDS] [--no-bpf-stats]\n"
"                    [--series-idle SECONDS] [--renew SECONDS]\n"
"                    [-p PID] [-c COMM] [-D DEV|PATH] [--ino N] [--fs TYPE]\n"
"                    [--class C] [--cgroup DIR] [--max-inodes N] [--ops syscalls|io|all|off]\n"
"                    [--holds=off|xfs|all] [--hold-sample N]\n"
"                    [--hold-exact-rate R] [--wait-sample N] [--wait-exact-rate R]\n"
"                    [-v]\n"
"\n"
"Serve inode lock contention as Prometheus metrics on /metrics (text format\n"
"0.0.4, or OpenMetrics 1.0.0 when the Accept header asks for it).\n"
"\n"
"      --listen ADDR:PORT  where to listen (default " EXPORT_DEFAULT_LISTEN ");\n"
"                          anything but loopback prints a warning\n"
"      --top-inodes K      per-inode series for the K inodes with the most wait\n"
"                          time per interval (default %d; 0: none); at most 2*K\n"
"                          inodes have a series at once, the rest is inode=\"other\"\n"
"  -i, --interval SECONDS  read the BPF maps this often (default %.0f)\n"
"      --max-pairs N       most holder/waiter command pairs with their own\n"
"                          series at once (default %d); the rest fold into \"other\"\n"
"      --series-idle SECONDS  an inode or pair whose series saw no wait this\n"
"                          long gives its place up to the ones waiting now\n"
"                          (default %d; 0: keep them while the exporter runs)\n"
"      --http-timeout SECONDS  close a connection idle this long (default %d)\n"
"      --no-bpf-stats      do not turn on the kernel's BPF run-time stats\n"
"                          (ilock_bpf_run_seconds_total is then not exported)\n"
"      --renew SECONDS     when an in-kernel table is 80%% full, trace on into\n"
"                          fresh ones, at most this often (default %d; 0: never);\n"
"                          every series keeps what the old ones counted\n"
"  -p, -c, -D, --ino, --fs, --class, --cgroup   filters, as for ilock stat\n"
CLI_MAX_INODES_HELP
"      --ops MODE          what each side was doing, as for ilock stat: the byte\n"
"                          ranges of ilock_range_wait_* (off: all unknown); no\n"
"                          stacks are taken (--no-stacks is accepted)\n"
CLI_HOLDS_HELP
CLI_WAIT_SAMPLE_HELP
"  -v, --verbose           probes, attach decisions, HTTP server errors\n"
"\n"
"examples:\n"
"  ilock export                                  # 127.0.0.1:9435/metrics\n"
"  ilock export --listen 127.0.0.1:9435 --fs xfs -i 15\n"
"  curl -s localhost:9435/metrics | grep ilock_lock_wait_seconds_count\n",
		PROM_DEFAULT_TOP_INODES, EXPORT_DEFAULT_INTERVAL_S, PROM_DEFAULT_MAX_PAIRS,
		PROM_DEFAULT_SERIES_IDLE_S,
		HTTP_TIMEOUT_S, CLI_RENEW_DEFAULT_S);
}

/* 0 ok, 1 help, -1 bad arguments (reason in err). */
static int parse_args(int argc, char **argv, struct export_opts *e, char *err, size_t errlen)
{
	uint64_t v;
	int c, r;

	memset(e, 0, sizeof(*e));
	e->listen = EXPORT_DEFAULT_LISTEN;
	e->top_k = PROM_DEFAULT_TOP_INODES;
	e->series_idle_s = PROM_DEFAULT_SERIES_IDLE_S;
	e->max_pairs = PROM_DEFAULT_MAX_PAIRS;
	e->interval_s = EXPORT_DEFAULT_INTERVAL_S;
	e->bpf_stats = true;
	/* no metric shows a stack: unwinding costs ~1-3 us a wait for nothing */
	e->o.no_stacks = true;
	e->http_timeout_s = HTTP_TIMEOUT_S;
	e->o.renew_s = CLI_RENEW_DEFAULT_S;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:" CLI_FILTER_SHORTOPTS "vh", long_opts, NULL)) != -1) {
		r = cli_filter_option(c, optarg, &e->o.f, err, errlen);
		if (!r)
			r = cli_ops_option(c, optarg, &e->o, err, errlen);
		if (r < 0)
			return -1;
		if (r > 0)
			continue;
		switch (c) {
		case OPT_LISTEN:
			e->listen = optarg;
			break;
		case OPT_TOP_INODES:
			if (!parse_u64(optarg, PROM_MAX_TOP_INODES, &v)) {
				snprintf(err, errlen, "--top-inodes %s: a number from 0 to %d", optarg,
					 PROM_MAX_TOP_INODES);
				return -1;
			}
			e->top_k = (unsigned)v;
			break;
		case OPT_SERIES_IDLE:
			if (!parse_u64(optarg, PROM_MAX_SERIES_IDLE_S, &v) || (v && v < 10)) {
				snprintf(err, errlen, "--series-idle %s: seconds, 0 (never) or 10 to %d",
					 optarg, PROM_MAX_SERIES_IDLE_S);
				return -1;
			}
			e->series_idle_s = v;
			break;
		case OPT_MAX_PAIRS:
			if (!parse_u64(optarg, PROM_MAX_PAIRS_LIMIT, &v)) {
				snprintf(err, errlen, "--max-pairs %s: a number from 0 to %d", optarg,
					 PROM_MAX_PAIRS_LIMIT);
				return -1;
			}
			e->max_pairs = (size_t)v;
			break;
		case 'i':
			if (!parse_seconds(optarg, 3600, &e->interval_s) || e->interval_s < 0.1) {
				snprintf(err, errlen, "-i %s: seconds from 0.1 to 3600", optarg);
				return -1;
			}
			break;
		case OPT_HTTP_TIMEOUT:
			if (!parse_u64(optarg, 3600, &v) || !v) {
				snprintf(err, errlen, "--http-timeout %s: seconds from 1 to 3600", optarg);
				return -1;
			}
			e->http_timeout_s = (unsigned)v;
			break;
		case OPT_RENEW:
			if (!cli_renew_arg(optarg, &e->o.renew_s)) {
				snprintf(err, errlen, "--renew %s: " CLI_RENEW_HINT, optarg);
				return -1;
			}
			break;
		case OPT_NO_BPF_STATS:
			e->bpf_stats = false;
			break;
		case OPT_MAX_INODES:
			if (!parse_u64(optarg, 1U << 22, &v) || v < 64) {
				snprintf(err, errlen, "--max-inodes %s: a number from 64 to %u", optarg, 1U << 22);
				return -1;
			}
			e->o.max_locks = (uint32_t)v;
			break;
		case 'v':
			e->o.verbose++;
			break;
		case 'h':
			return 1;
		default:  /* ':' (a value missing) or '?' (unknown) */
			cli_getopt_error(c, argv, err, errlen);
			return -1;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	return cli_ops_check(&e->o, err, errlen);
}

/*
 * Every connection costs a descriptor: keep the limit inside RLIMIT_NOFILE,
 * raising the soft limit toward the hard one when that is allowed.
 */
static unsigned fit_conn_limit(unsigned want)
{
	struct rlimit rl;
	const rlim_t reserve = 64;  /* BPF maps, programs, links, stdio */

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return want;
	if (rl.rlim_cur < want + reserve && rl.rlim_max != rl.rlim_cur) {
		rlim_t old = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want + reserve
			      ? want + reserve : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			rl.rlim_cur = old;
	}
	if (rl.rlim_cur >= want + reserve)
		return want;
	return rl.rlim_cur > reserve + 16 ? (unsigned)(rl.rlim_cur - reserve) : 16;
}

static void sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(deadline_ns / 1000000000ULL),
			       .tv_nsec = (long)(deadline_ns % 1000000000ULL) };

	while (!stop_requested && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static uint64_t rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

struct exporter {
	struct export_opts e;
	struct tracer t;
	bool have_tracer;
	struct metrics_http *http;
	struct prom_series ps;
	struct snapshot snap, prev;    /* this collection's and the last good one */
	bool have_prev;
	/*
	 * --renew: what the tracers before the current one counted, compacted
	 * (prom_series_retire); it lies under every read of the current one,
	 * so the series go on as if there had been one tracer all along.
	 */
	struct snapshot retired;
	bool have_retired;
	uint64_t renew_not_before;
	uint64_t bpf_base_ns, bpf_base_cnt;  /* the retired tracers' BPF run time */
	struct titles titles;          /* the pairs' threads', as first seen: their roles */
	struct prom_meta meta;
};

/* The totals now, into x->snap: the current tracer's read, the retired tables' under it. */
static int read_totals(struct exporter *x)
{
	int err = tracer_read(&x->t, &x->snap);

	if (!err && x->have_retired)
		err = snap_merge_under(&x->snap, &x->retired);
	return err;
}

/* One collection: read, fold, render both formats, publish. */
static void collect(struct exporter *x)
{
	uint64_t t0 = now_monotonic_ns();
	struct mount_table mt = {};
	struct prom_buf out[PROM_FMT_MAX];
	struct http_stats hs;
	struct rusage ru;
	char *data[PROM_FMT_MAX];
	size_t len[PROM_FMT_MAX];
	int err;

	err = read_totals(x);
	if (!err) {
		/* every thread of the read looked up before its first update: its role stays */
		titles_note_snapshot(&x->titles, &x->snap);
		/* fresh mounts name the paths of newly admitted inodes */
		if (mounts_load(&mt))
			mounts_free(&mt);
		err = prom_series_update(&x->ps, &x->snap, x->have_prev ? &x->prev : NULL,
					 mt.n ? &mt : NULL);
		mounts_free(&mt);
		if (err)
			log_error("cannot update the series: %s", strerror(-err));
	}
	if (err) {
		x->meta.collect_errors++;
		return;  /* the previous exposition stays up */
	}
	/* swap, not copy: the next read reuses the old buffers */
	{
		struct snapshot tmp = x->prev;

		x->prev = x->snap;
		x->snap = tmp;
		x->have_prev = true;
	}

	if (x->e.bpf_stats && x->meta.have_bpf_stats) {
		uint64_t ns, cnt;

		if (tracer_prog_stats(&x->t, &ns, &cnt)) {
			x->meta.have_bpf_stats = false;
		} else {
			x->meta.bpf_run_ns = x->bpf_base_ns + ns;
			x->meta.bpf_run_cnt = x->bpf_base_cnt + cnt;
		}
	}
	http_get_stats(x->http, &hs);
	memcpy(x->meta.scrapes, hs.scrapes, sizeof(hs.scrapes));
	x->meta.scrape_ns_total = hs.scrape_ns;
	x->meta.http_errors = hs.errors;
	if (!getrusage(RUSAGE_SELF, &ru)) {
		x->meta.cpu_user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
		x->meta.cpu_system_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	}
	x->meta.rss_bytes = rss_bytes();
	x->meta.last_collect_unix = (double)now_realtime_ns() / 1e9;
	x->meta.collections++;

	for (int f = 0; f < PROM_FMT_MAX; f++) {
		pbuf_init(&out[f]);
		prom_render(&out[f], (enum prom_format)f, &x->ps, &x->meta);
	}
	if (out[0].oom || out[1].oom) {
		log_error("out of memory rendering the metrics");
		x->meta.collect_errors++;
		for (int f = 0; f < PROM_FMT_MAX; f++)
			pbuf_free(&out[f]);
		return;
	}
	for (int f = 0; f < PROM_FMT_MAX; f++) {
		data[f] = out[f].data;
		len[f] = out[f].len;
	}
	http_publish(x->http, data, len);
	/* the time this took shows in the next exposition */
	x->meta.last_collect_ns = now_monotonic_ns() - t0;
	x->meta.collect_ns_total += x->meta.last_collect_ns;
}

/* --renew allows a renewal now, and a table is full enough for one: the fullest, or -1 */
static int renew_due(const struct exporter *x, uint64_t now)
{
	return x->have_prev ? table_renew_due(x->prev.tables, x->e.o.renew_s, now,
					      x->renew_not_before) : -1;
}

/*
 * After a collection: when a table is TABLE_ALARM_PCT full, trace on into
 * fresh tables, the old ones' counts kept under every later read. The
 * exposition in place stays up meanwhile; the next one goes on from it.
 */
static void maybe_renew(struct exporter *x)
{
	struct tracer fresh;
	struct snapshot kept;
	struct titles rt;
	char msg[256], why[200];
	uint64_t ns, cnt;
	uint64_t t0 = now_monotonic_ns(), cpu0;
	int t = renew_due(x, t0), err;

	if (t < 0)
		return;
	cpu0 = now_thread_cpu_ns();  /* a load is mostly the verifier's, in the kernel */
	table_alarm_text(why, sizeof(why), x->prev.tables, t);
	x->renew_not_before = t0 + (uint64_t)(x->e.o.renew_s * 1e9);
	/* one line in the log for a failure, not the loader's every message */
	err = tracer_start_fresh(&fresh, &x->e.o, msg, sizeof(msg));
	if (err) {
		x->meta.renew_failures++;
		log_warn("the %s; cannot start fresh tables (%s): the old ones trace on, next try "
			 "in %g s", why, msg[0] ? msg : strerror(-err), x->e.o.renew_s);
		return;
	}
	if (x->e.bpf_stats && x->meta.have_bpf_stats)
		tracer_enable_stats(&fresh);
	/*
	 * The handover, then the old tables' last read, from the last
	 * collection to now, with what was retired before.
	 */
	tracer_hand_over(&x->t, &fresh);
	err = read_totals(x);
	if (err) {
		/* the old tables' last seconds are lost; what was exported stays */
		log_warn("cannot read the old tables a last time: %s", strerror(-err));
		x->meta.collect_errors++;
		err = snap_copy(&x->snap, &x->prev);
	}
	titles_init(&rt);
	snap_init(&kept);
	if (!err) {
		titles_note_snapshot(&x->titles, &x->snap);
		err = prom_series_retire(&x->ps, &kept, &rt, &x->snap);
	}
	if (err) {
		/* out of memory: the old tables trace on; the fresh ones' moments are lost */
		tracer_set_idle(&x->t, false);
		tracer_stop(&fresh);
		titles_free(&rt);
		snap_free(&kept);
		x->meta.renew_failures++;
		log_warn("the %s; cannot keep the old tables' counts (%s): they trace on, next try "
			 "in %g s", why, strerror(-err), x->e.o.renew_s);
		return;
	}
	if (!tracer_prog_stats(&x->t, &ns, &cnt)) {
		x->bpf_base_ns += ns;
		x->bpf_base_cnt += cnt;
	}
	tracer_stop(&x->t);
	tracer_move(&x->t, &fresh);
	/* the compacted counts lie under every read from now on; prev is what they are now */
	snap_free(&x->retired);
	x->retired = kept;
	x->have_retired = true;
	x->have_prev = snap_copy(&x->prev, &x->retired) == 0;
	/* the retired pairs' roles; live threads are looked up again in the fresh tables */
	rt.left_out = x->titles.left_out;
	titles_free(&x->titles);
	x->titles = rt;
	x->meta.renewals++;
	fprintf(stderr, "ilock export: the %s: tracing on into fresh tables (renewal %" PRIu64
		", %.2f s, %.2f s of CPU); every series keeps what the old ones counted\n", why,
		x->meta.renewals, (double)(now_monotonic_ns() - t0) / 1e9,
		(double)(now_thread_cpu_ns() - cpu0) / 1e9);
}

int cmd_export(int argc, char **argv)
{
	struct exporter x = {};
	struct http_opts ho = {};
	sigset_t block, old;
	char err[256], host[NI_MAXHOST];
	bool loopback;
	int r, ret = 1;

	r = parse_args(argc, argv, &x.e, err, sizeof(err));
	if (r == 1) {
		usage(stdout);
		return 0;
	}
	if (r == 0 && !http_parse_listen(x.e.listen, &ho, &loopback, err, sizeof(err)))
		r = -1;
	if (r < 0) {
		fprintf(stderr, "ilock export: %s\n", err);
		usage_brief(stderr);
		return 2;
	}
	if (!loopback)
		log_warn("--listen %s is not a loopback address: anyone who can reach it can read "
			 "the metrics (file paths and command names)", x.e.listen);

	ho.conn_limit = fit_conn_limit(HTTP_CONN_LIMIT);
	ho.per_ip_limit = HTTP_PER_IP_LIMIT < ho.conn_limit ? HTTP_PER_IP_LIMIT : ho.conn_limit;
	ho.timeout_s = x.e.http_timeout_s;
	ho.conn_memory = HTTP_CONN_MEMORY;
	ho.verbose = x.e.o.verbose > 0;

	signals_setup(NULL);
	snap_init(&x.snap);
	snap_init(&x.prev);
	snap_init(&x.retired);
	prom_series_init(&x.ps, x.e.top_k, x.e.max_pairs);
	x.ps.idle_ns = x.e.series_idle_s * 1000000000ULL;
	titles_init(&x.titles);
	x.ps.titles = &x.titles;
	x.meta.version = ILOCK_VERSION_STR;
	x.meta.start_unix = (double)now_realtime_ns() / 1e9;
	x.renew_not_before = now_monotonic_ns() + (uint64_t)(x.e.o.renew_s * 1e9);

	/* the server thread inherits this mask: signals go to the collector */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	r = http_start(&x.http, &ho, err, sizeof(err));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		log_error("--listen %s: %s", x.e.listen, err);
		goto out;
	}
	if (getnameinfo((struct sockaddr *)&ho.addr, ho.addrlen, host, sizeof(host), NULL, 0,
			NI_NUMERICHOST))
		snprintf(host, sizeof(host), "?");

	if (tracer_start(&x.t, &x.e.o))
		goto out;
	x.have_tracer = true;
	x.meta.kernel = x.t.probe.kernel;
	x.meta.wait_sampling = x.t.wait_sampling;
	if (x.e.bpf_stats)
		x.meta.have_bpf_stats = tracer_enable_stats(&x.t) == 0;

	fprintf(stderr, "ilock export: serving http://%s%s%s:%d/metrics, collecting every %g s\n",
		strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", http_port(x.http),
		x.e.interval_s);
	{
		uint64_t step = (uint64_t)(x.e.interval_s * 1e9), next = now_monotonic_ns();

		while (!stop_requested) {
			collect(&x);
			maybe_renew(&x);
			/* keep to the schedule; skip ticks a slow collection overran */
			next += step;
			while (next <= now_monotonic_ns())
				next += step;
			/*
			 * Meanwhile, each second, the pairs' threads looked up
			 * while they run: a connection shorter than the interval
			 * still gets its role (the slots are mapped: no syscall).
			 */
			for (uint64_t t = now_monotonic_ns() + TITLES_EVERY_NS;
			     t < next && !stop_requested; t += TITLES_EVERY_NS) {
				sleep_until(t);
				tracer_scan_edges(&x.t, titles_note_edge, &x.titles);
			}
			sleep_until(next);
		}
	}
	ret = 0;
out:
	http_stop(x.http);  /* stop serving before the data goes away */
	if (x.have_tracer)
		tracer_stop(&x.t);
	prom_series_free(&x.ps);
	titles_free(&x.titles);
	snap_free(&x.snap);
	snap_free(&x.prev);
	snap_free(&x.retired);
	return ret;
}
