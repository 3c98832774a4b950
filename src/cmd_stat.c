// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `ilock stat`: trace for a while, then print what waited on which inode lock. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "ksyms.h"
#include "log.h"
#include "mounts.h"
#include "outguard.h"
#include "pathcheck.h"
#include "render.h"
#include "render_ops.h"
#include "signals.h"
#include "titles.h"
#include "tracer.h"
#include "util.h"

static void fill_meta(struct report_meta *m, const struct tracer *t, char *host, size_t hostlen,
		      const struct mount_table *mt, double duration_s, const char *filters)
{
	memset(m, 0, sizeof(*m));
	m->filters = filters;
	if (gethostname(host, hostlen))
		snprintf(host, hostlen, "?");
	host[hostlen - 1] = 0;
	m->hostname = host;
	m->kernel = t->probe.kernel;
	m->duration_s = duration_s;
	m->mounts = mt;
	for (int i = 0; i < t->nattach; i++)
		m->attach[m->nattach++] = t->attach[i];
}

/* Sleep until an absolute CLOCK_MONOTONIC time, or until a signal. */
static void sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(deadline_ns / 1000000000ULL),
			       .tv_nsec = (long)(deadline_ns % 1000000000ULL) };

	while (!stop_requested && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * Kernel symbols for stack frames, read at the first render: parsing
 * /proc/kallsyms takes a while, and tracing should start at once.
 */
static void load_ksyms(const struct ilock_opts *o, struct ksyms *ks)
{
	static bool tried;
	int e;

	if (tried || !cli_stacks_on(o))
		return;
	tried = true;
	e = ksyms_load(ks, NULL);
	if (e)
		log_warn("cannot read /proc/kallsyms (%s): stack frames stay addresses", strerror(-e));
	else if (!ks->n)
		log_warn("/proc/kallsyms shows no addresses (kptr_restrict): stack frames stay "
			 "addresses");
}

/* An interval of -i: its number (0: the whole run) and span from the start. */
struct span {
	int no;
	double from_s, to_s;
};

/*
 * -1 when the output could not be written (a full disk): said, stop then;
 * 1 when its reader has gone (`| head`): stop quietly, as asked.
 */
static int render(const struct ilock_opts *o, struct snapshot *s, const struct report_meta *m,
		  const struct span *iv, struct ksyms *ks, struct path_fixes *pf)
{
	char title[128];
	struct render_opts ro = { .top_n = o->top_n, .no_hist = iv->no > 0, .ksyms = ks,
				  .interval_no = iv->no, .interval_from_s = iv->from_s,
				  .interval_to_s = iv->to_s };

	if (iv->no) {
		snprintf(title, sizeof(title), "--- interval %d: %.1f s to %.1f s ---", iv->no,
			 iv->from_s, iv->to_s);
		ro.title = title;
	} else if (o->folded && o->interval_s) {
		/* after the intervals, the whole run's stacks: not read as the last interval's */
		snprintf(title, sizeof(title), "--- whole run: %.1f s ---", m->duration_s);
		printf("# %s\n", title);
	}

	load_ksyms(o, ks);
	snap_sort_locks(s, SORT_WAIT_TIME);
	snap_sort_edges(s);
	snap_sort_stacks(s);
	/* the paths shown, looked at again: renamed or gone since their first wait */
	path_fixes_apply(pf, s, m->mounts, (size_t)o->top_n * 3, now_monotonic_ns());
	if (o->folded) {
		if (ro.title)
			printf("# %s\n", ro.title);
		if (render_folded(stdout, s, ks))
			log_error("out of memory folding stacks");
	} else if (o->json)
		render_json(stdout, s, m, &ro);
	else
		render_text(stdout, s, m, &ro);
	if (fflush(stdout) || ferror(stdout)) {
		if (outguard_reader_left())
			return 1;
		log_error("writing the output failed: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* What one run of stat keeps between its reads and renders. */
struct stat_run {
	struct ilock_opts o;
	struct tracer t;
	struct snapshot cur, prev, delta;
	struct mount_table mt;
	struct ksyms ks;
	struct titles titles;     /* of the threads seen, as first seen */
	struct path_fixes fixes;  /* the paths shown, looked at again */
	struct report_meta meta;
	char host[256], filt[256];
	int interval_no;          /* intervals written so far */
	bool mounts_warned;
	bool detached;            /* the tracer let go while output blocked (outguard) */
};

/* A stop came while our output waited for its reader: no probes meanwhile. */
static void stat_detach(void *ctx)
{
	struct stat_run *r = ctx;

	tracer_stop(&r->t);
	r->detached = true;
}

/* The mounts now (paths are resolved against them), the run's header data with them. */
static void refresh_meta(struct stat_run *r, double duration_s)
{
	mounts_free(&r->mt);
	if (mounts_load(&r->mt) && !r->mounts_warned) {
		log_warn("cannot read /proc/self/mountinfo: paths are shown relative to their filesystem");
		r->mounts_warned = true;
	}
	fill_meta(&r->meta, &r->t, r->host, sizeof(r->host), &r->mt, duration_s, r->filt);
	r->meta.titles = &r->titles;
}

/* Each second: the pairs' threads looked up while they run (a short connection's too). */
#define TITLES_EVERY_NS 1000000000ULL

/* Read the maps; the titles of threads new in them while they still run. */
static int stat_read(struct stat_run *r)
{
	if (tracer_read(&r->t, &r->cur))
		return -1;
	titles_note_snapshot(&r->titles, &r->cur);
	return 0;
}

/*
 * One interval of -i, from the read in cur: what changed since prev (the
 * last interval's read; the start for the first), then cur becomes prev.
 */
static int emit_interval(struct stat_run *r)
{
	uint64_t start = r->t.start_mono_ns;
	uint64_t from = r->interval_no ? r->prev.mono_ns : start;
	struct span iv = { r->interval_no + 1, (double)(from - start) / 1e9,
			   (double)(r->cur.mono_ns - start) / 1e9 };
	int rc;

	if (snap_delta(&r->delta, &r->cur, r->interval_no ? &r->prev : NULL))
		return -1;
	refresh_meta(r, (double)(r->cur.mono_ns - from) / 1e9);
	r->interval_no++;
	rc = render(&r->o, &r->delta, &r->meta, &iv, &r->ks, &r->fixes);
	if (rc)
		return rc;
	return snap_copy(&r->prev, &r->cur) ? -1 : 0;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_run run = {};
	struct stat_run *r = &run;
	char err[256];
	uint64_t start, deadline = 0, next_tick = 0, next_titles;
	int rc, ret = 1;

	rc = cli_parse(CLI_STAT, argc, argv, &r->o, err, sizeof(err));
	if (rc == 1) {
		cli_usage(CLI_STAT, stdout);
		return 0;
	}
	if (rc < 0) {
		fprintf(stderr, "ilock stat: %s\n", err);
		cli_usage_brief(CLI_STAT, stderr);
		return 2;
	}
	cli_filters_text(&r->o.f, r->filt, sizeof(r->filt));
	signals_setup(NULL);
	snap_init(&r->cur);
	snap_init(&r->prev);
	snap_init(&r->delta);
	titles_init(&r->titles);
	path_fixes_init(&r->fixes, PATHCHECK_EVERY_NS);
	if (tracer_start(&r->t, &r->o))
		return 1;
	outguard_on_stop(stat_detach, r);

	/* on stderr even with --json: scripts wait for it to know we are attached */
	fprintf(stderr, "ilock: tracing inode lock waits%s... Ctrl-C to stop\n",
		r->o.duration_s ? " for the given duration" : "");

	start = r->t.start_mono_ns;
	if (r->o.duration_s)
		deadline = start + (uint64_t)(r->o.duration_s * 1e9);
	if (r->o.interval_s)
		next_tick = start + (uint64_t)(r->o.interval_s * 1e9);
	next_titles = start + TITLES_EVERY_NS;

	while (!stop_requested) {
		uint64_t wake = deadline;

		if (next_tick && (!wake || next_tick < wake))
			wake = next_tick;
		if (!wake || next_titles < wake)
			wake = next_titles;
		sleep_until(wake);
		/* at the end the last interval is written below, whole, with the run's */
		if (stop_requested || (deadline && now_monotonic_ns() >= deadline))
			break;
		if (!r->detached && now_monotonic_ns() >= next_titles) {
			/* the pairs' slots are mapped: a pass over them, no syscall */
			tracer_scan_edges(&r->t, titles_note_edge, &r->titles);
			next_titles = now_monotonic_ns() + TITLES_EVERY_NS;
		}
		if (next_tick && now_monotonic_ns() >= next_tick) {
			rc = stat_read(r) ? -1 : emit_interval(r);
			if (rc)
				goto out_rc;
			/* the next tick follows the schedule, not the time we woke */
			while (next_tick <= now_monotonic_ns())
				next_tick += (uint64_t)(r->o.interval_s * 1e9);
		}
	}

	/*
	 * detached while an interval's output blocked: the run ends at the
	 * last read. Otherwise the probes go first: a wait ending during the
	 * read would be in the tables but not in the counters read before them.
	 */
	if (!r->detached) {
		tracer_detach_probes(&r->t);
		if (stat_read(r))
			goto out;
	}
	/*
	 * Everything is read: detach before writing, which can block (a pipe
	 * nobody reads yet), so that no program stays attached meanwhile. The
	 * symbols first: the programs' own go with them, and stacks taken
	 * inside them are cut at those frames.
	 */
	load_ksyms(&r->o, &r->ks);
	tracer_stop(&r->t);
	/* the last interval, cut short by -d or Ctrl-C: the intervals add up to the whole */
	rc = 0;
	if (r->o.interval_s &&
	    r->cur.mono_ns > (r->interval_no ? r->prev.mono_ns : start) + 1000000)
		rc = emit_interval(r);
	if (!rc) {
		refresh_meta(r, (double)(r->cur.mono_ns - start) / 1e9);
		rc = render(&r->o, &r->cur, &r->meta, &(struct span){ 0 }, &r->ks, &r->fixes);
	}
out_rc:
	/* 1: the reader has gone, what it asked for is done */
	ret = rc < 0 ? 1 : 0;
out:
	outguard_on_stop(NULL, NULL);
	tracer_stop(&r->t);
	ksyms_free(&r->ks);
	titles_free(&r->titles);
	path_fixes_free(&r->fixes);
	mounts_free(&r->mt);
	snap_free(&r->cur);
	snap_free(&r->prev);
	snap_free(&r->delta);
	return ret;
}
