// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ilocktop's sampler: every interval, read the counters; when waits were
 * recorded, stream the wait and edge slots (mapped memory, no syscalls)
 * through the incremental store, which leaves the interval's changes in a
 * delta snapshot. Inode paths and hold times are looked up one key at a
 * time, only for what is on screen. Also measures what tracing costs: BPF
 * run time from bpf_stats and our own CPU from getrusage.
 *
 * It reads the maps itself rather than through tracer_read(): that one
 * rebuilds a full snapshot per read, which at 10,000 inodes costs more CPU
 * than ilocktop may use (docs/PERFORMANCE.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ilock.h"
#include "counters.h"
#include "ilock.skel.h"
#include "top_app.h"
#include "tracer_ops.h"
#include "util.h"


static uint64_t self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

int sampler_init(struct top_sampler *s, struct tracer *t)
{
	memset(s, 0, sizeof(*s));
	s->t = t;
	top_store_init(&s->store);
	snap_init(&s->delta);
	s->ncpus = t->ncpus > 0 ? t->ncpus : 1;
	s->percpu = calloc((size_t)s->ncpus, sizeof(*s->percpu));
	if (!s->percpu)
		return -ENOMEM;
	/* the "previous read" of the first interval is the empty maps at start */
	s->store.cum.mono_ns = s->delta.mono_ns = t->start_mono_ns;
	s->bpf_stats = tracer_enable_stats(t) == 0 &&
		       tracer_prog_stats(t, &s->bpf_ns, &s->bpf_cnt) == 0;
	s->cpu_ns = self_cpu_ns();
	if (getenv("ILOCK_TEST_FAIL_READ_AFTER"))
		s->fail_after = strtoull(getenv("ILOCK_TEST_FAIL_READ_AFTER"), NULL, 10);
	return 0;
}

const struct snapshot *sampler_latest(const struct top_sampler *s)
{
	return &s->store.cum;
}

static int take_wait(void *ctx, const void *k, const void *v)
{
	struct top_sampler *s = ctx;

	return top_store_wait(&s->store, &s->delta, k, v);
}

static int take_edge(void *ctx, const void *k, const void *v)
{
	struct top_sampler *s = ctx;

	return top_store_edge(&s->store, &s->delta, k, v);
}

static int read_counters(struct top_sampler *s, uint64_t *out)
{
	int fd = bpf_map__fd(s->t->skel->maps.counters);

	for (uint32_t c = 0; c < ILOCK_COUNTER_MAX; c++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(fd, &c, s->percpu))
			return -errno;
		for (int i = 0; i < s->ncpus; i++)
			sum += s->percpu[i];
		out[c] = sum;
	}
	return 0;
}

/* Hold times of the lock the detail view shows: two lookups, no scan. */
static int read_holds(struct top_sampler *s, struct snapshot *delta)
{
	int fd = bpf_map__fd(s->t->skel->maps.lock_holds);

	for (uint8_t m = ILOCK_MODE_SHARED; m <= ILOCK_MODE_EXCL; m++) {
		struct ilock_key k = { .ino = s->hold_id.ino, .dev = s->hold_id.dev,
				       .gen = s->hold_id.gen, .class = s->hold_id.class,
				       .mode = m };
		struct ilock_stats st;
		int err;

		if (bpf_map_lookup_elem(fd, &k, &st))
			continue;  /* never held in this mode */
		err = top_store_hold(&s->store, delta, &k, &st);
		if (err < 0)
			return err;
	}
	return 0;
}

void sampler_follow_holds(struct top_sampler *s, uint32_t dev, uint64_t ino, uint32_t gen,
			  uint8_t class)
{
	struct snapshot scratch;

	if (s->hold_id.set && s->hold_id.dev == dev && s->hold_id.ino == ino &&
	    s->hold_id.gen == gen && s->hold_id.class == class)
		return;
	s->hold_id = (struct lock_id){ true, dev, ino, gen, class };
	/*
	 * Catch up on the holds so far into a throw-away delta: the next
	 * interval then shows its own holds, not everything since start.
	 */
	snap_init(&scratch);
	read_holds(s, &scratch);
	snap_free(&scratch);
}

static int take_stack(void *ctx, const void *k, const void *v)
{
	struct top_sampler *s = ctx;
	const struct ilock_stack_key *sk = k;

	if (!s->stk_all &&
	    (sk->edge.dev != s->stk_dev || sk->edge.ino != s->stk_ino || sk->edge.gen != s->stk_gen))
		return 0;
	return snap_add_stack(s->stk_out, sk, v);
}

static int take_wstack(void *ctx, const void *k, const void *v)
{
	struct top_sampler *s = ctx;
	const struct ilock_edge_key *ek = k;

	if (!s->stk_all && (ek->dev != s->stk_dev || ek->ino != s->stk_ino || ek->gen != s->stk_gen))
		return 0;
	return snap_add_edge_wstack(s->stk_out, ek, v);
}

static int read_stacks(struct top_sampler *s, bool all, uint32_t dev, uint64_t ino, uint32_t gen,
		       struct snapshot *out)
{
	int err;

	snap_reset(out);
	s->stk_out = out;
	s->stk_dev = dev;
	s->stk_ino = ino;
	s->stk_gen = gen;
	s->stk_all = all;
	err = tracer_scan_map(s->t, s->t->skel->maps.stack_waits, take_stack, s);
	if (err >= 0)
		err = tracer_scan_edges(s->t, take_wstack, s);
	if (err < 0)
		return err;
	/* the frames of just these stacks, one lookup each */
	return tracer_read_frames(s->t, out);
}

int sampler_read_stacks(struct top_sampler *s, uint32_t dev, uint64_t ino, uint32_t gen,
			struct snapshot *out)
{
	return read_stacks(s, false, dev, ino, gen, out);
}

int sampler_read_all_stacks(struct top_sampler *s, struct snapshot *out)
{
	return read_stacks(s, true, 0, 0, 0, out);
}

bool sampler_ensure_inode(struct top_sampler *s, uint32_t dev, uint64_t ino, uint32_t gen)
{
	struct ilock_inode_key k = { .ino = ino, .dev = dev, .gen = gen };
	struct ilock_inode_info info;

	if (snap_find_inode(&s->store.cum, dev, ino, gen))
		return true;
	/* the path is written once, on first sight: a found entry never changes */
	if (bpf_map_lookup_elem(bpf_map__fd(s->t->skel->maps.inodes), &k, &info))
		return false;
	return snap_add_inode_info(&s->store.cum, &k, &info) == 0;
}

/* The interval's rates of what its delta holds, over window_s. */
static void window_rates(struct top_sampler *s)
{
	s->waits_ps = top_rate(s->delta.counters[ILOCK_EV_WAIT], s->window_s);
	s->lost_window = snap_lost_sum(&s->delta, NULL);
	s->undercount_window = snap_lost_sum(&s->delta, counter_undercounts);
}

int sampler_sample(struct top_sampler *s)
{
	uint64_t counters[ILOCK_COUNTER_MAX], now, bpf_ns = 0, bpf_cnt = 0, cpu, done;
	double secs;
	bool moved;
	int err;

	/*
	 * Fault injection for the tests of the error path (terminal restored,
	 * reason printed, exit 1): a read failing as a vanished map would.
	 */
	if (s->fail_after && s->samples >= s->fail_after)
		return -EIO;
	err = read_counters(s, counters);
	if (err)
		return err;
	now = now_monotonic_ns();
	snap_reset(&s->delta);
	/*
	 * contention_end bumps ILOCK_EV_WAIT, then updates the wait and edge
	 * maps. When it did not move since this read and the one before, no
	 * entry changed: idle inodes cost nothing to watch, however many.
	 */
	moved = counters[ILOCK_EV_WAIT] != s->store.cum.counters[ILOCK_EV_WAIT];
	top_store_counters(&s->store, &s->delta, counters);
	if (moved || s->moved_before || !s->samples) {
		top_store_scan_begin(&s->store);
		if ((err = tracer_scan_waits(s->t, take_wait, s)) < 0 ||
		    (err = tracer_scan_edges(s->t, take_edge, s)) < 0)
			return err;
		top_store_scan_end(&s->store);
	}
	if (s->hold_id.set && (err = read_holds(s, &s->delta)) < 0)
		return err;
	s->moved_before = moved;

	secs = (double)sub0(now, s->store.cum.mono_ns) / 1e9;
	s->store.cum.mono_ns = s->delta.mono_ns = now;
	/* begun, minus ended, minus those a later begin replaced */
	done = counters[ILOCK_EV_WAIT] + counters[ILOCK_LOST_BEGIN_NO_END];
	s->store.cum.in_flight = s->delta.in_flight = sub0(counters[ILOCK_EV_WAIT_BEGUN], done);
	tracer_tables(s->t, s->store.cum.tables);
	memcpy(s->delta.tables, s->store.cum.tables, sizeof(s->delta.tables));
	s->window_s = secs;
	s->samples++;
	/* a stall shows while it lasts; a failed walk only hides it this once */
	if (tracer_read_waiting(s->t, s->store.cum.in_flight + waiting_fsyncs_open(counters),
				&s->store.cum.waiting))
		waiting_reset(&s->store.cum.waiting);
	else if (waiting_over(&s->store.cum.waiting, WAITING_STALL_NS))
		sampler_ensure_inode(s, s->store.cum.waiting.w[0].key.dev,
				     s->store.cum.waiting.w[0].key.ino, s->store.cum.waiting.w[0].key.gen);

	window_rates(s);
	if (s->bpf_stats && !tracer_prog_stats(s->t, &bpf_ns, &bpf_cnt)) {
		s->bpf_ns_ps = secs > 0 ? (double)sub0(bpf_ns, s->bpf_ns) / secs : 0;
		s->events_ps = top_rate(sub0(bpf_cnt, s->bpf_cnt), secs);
		s->bpf_ns = bpf_ns;
		s->bpf_cnt = bpf_cnt;
	} else {
		/* no run counts: the tracepoint hits the programs count themselves */
		s->bpf_stats = false;
		s->events_ps = top_rate(s->delta.counters[ILOCK_EV_BEGIN] +
					s->delta.counters[ILOCK_EV_XFS_LOCK] +
					s->delta.counters[ILOCK_EV_XFS_UNLOCK], secs);
	}
	cpu = self_cpu_ns();
	s->cpu_pct = secs > 0 ? (double)sub0(cpu, s->cpu_ns) / 1e9 / secs * 100.0 : 0;
	s->cpu_ns = cpu;
	return 0;
}

int sampler_prepend(struct top_sampler *s, const struct snapshot *earlier)
{
	struct snapshot merged;
	int err;

	/* earlier first: the later read's state (tables, waits in progress) wins */
	snap_init(&merged);
	err = snap_copy(&merged, earlier);
	if (!err)
		err = snap_merge(&merged, &s->delta);
	if (err) {
		snap_free(&merged);
		return err;
	}
	snap_free(&s->delta);
	s->delta = merged;
	window_rates(s);
	return 0;
}

void sampler_free(struct top_sampler *s)
{
	top_store_free(&s->store);
	snap_free(&s->delta);
	free(s->percpu);
	s->percpu = NULL;
}
