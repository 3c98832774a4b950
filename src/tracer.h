/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF side's lifecycle: open, configure, load, attach, read, destroy.
 * Every subcommand that traces goes through here.
 */
#ifndef ILOCK_TRACER_H
#define ILOCK_TRACER_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "model.h"
#include "probe.h"
#include "render.h"
#include "slots.h"

struct ilock_bpf;

struct tracer {
	struct ilock_bpf *skel;
	struct probe_result probe;
	struct strategy strat;
	struct attach_info attach[RENDER_MAX_ATTACH];
	int nattach;
	uint64_t start_mono_ns;
	int ncpus;
	int stats_fd;            /* BPF_ENABLE_STATS run-time stats, or -1 */
	int cgroup_fd;           /* --cgroup's directory until the programs have it, or -1 */
	/* what the filters rule out, so programs only they would need stay off */
	unsigned fs_drop;        /* FS_* bits */
	char scope_why[96];
	char hold_sampling[32];        /* attach["hold_sampling"] */
	char wait_sampling[32];        /* attach["wait_sampling"] */
	bool walk_always;        /* ILOCK_WALK_ALWAYS: walk even with no wait in flight */
	/*
	 * The kernel notes rw_semaphore waiters in task_struct.blocker, and
	 * the last walk found a wait begun before tracing (or none was made
	 * yet): walk even with none in flight, until one finds none (no such
	 * wait can begin later).
	 */
	bool walk_for_older;
	/* ... and it can show every such uninterruptible wait (waiting_set.sees_older) */
	bool sees_older;
	bool walk_warned;        /* a failed walk was reported once */
	/* the wait and pair slots, mapped read-only after load */
	struct slot_region waits, edges;
	/* batch-read buffers, reused across reads */
	void *keys, *vals;
	size_t buf_cap;
};

/*
 * Probe, open, configure from opts, load and attach. On failure prints one
 * line saying why, cleans up, and returns a negative errno.
 */
int tracer_start(struct tracer *t, const struct ilock_opts *o);
/*
 * The same, with every program attached but idle (returning at once, as an
 * empty one would) until tracer_set_idle(t, false): a fresh tracer that is
 * to take over from another without a gap or an overlap (ilocktop --renew).
 */
int tracer_start_idle(struct tracer *t, const struct ilock_opts *o);
void tracer_set_idle(struct tracer *t, bool idle);
/*
 * --renew: a fresh tracer started idle, beside a running one, without the
 * loader's lines: whatever it would print goes to msg (len bytes; empty if
 * nothing), for the caller's one line on failure.
 */
int tracer_start_fresh(struct tracer *t, const struct ilock_opts *o, char *msg, size_t len);
/*
 * The handover to it: from's programs stop, then to's start, a few stores
 * apart, so no event is counted by both. A wait in progress across it ends
 * in to's tables without its begin (end_without_begin).
 */
void tracer_hand_over(struct tracer *from, struct tracer *to);
/*
 * Move a started tracer to dst (dst stopped or never started), leaving src
 * empty: a plain copy would leave dst's notes pointing into src.
 */
void tracer_move(struct tracer *dst, struct tracer *src);
/* Note an attach decision (probe=mode) for the "probes:" line and recordings; t->attach. */
void tracer_note_attach(struct tracer *t, const char *probe, const char *mode);
/* Read every map into s (reset first). */
int tracer_read(struct tracer *t, struct snapshot *s);
/*
 * Turn on the kernel's per-program run-time accounting (BPF_ENABLE_STATS)
 * for as long as the tracer lives. Costs two clock reads per program run.
 */
int tracer_enable_stats(struct tracer *t);
/* BPF run time (ns) and run count summed over our programs; needs stats. */
int tracer_prog_stats(struct tracer *t, uint64_t *run_ns, uint64_t *run_cnt);
/*
 * Detach every tracing program, the maps kept: a read after it sees a
 * state that no longer moves, so its counters and its slots agree.
 */
void tracer_detach_probes(struct tracer *t);
void tracer_stop(struct tracer *t);
/*
 * The waits in progress now, oldest first (waiting.h), from one pass of the
 * task iterator; none without a walk when in_flight (begun, not ended) is
 * 0. Without the iterator: an empty set, not available.
 */
int tracer_read_waiting(struct tracer *t, uint64_t in_flight, struct waiting_set *ws);

struct bpf_map;
/* Called for each entry; a negative return stops the scan and is returned. */
typedef slot_fn tracer_entry_fn;
/*
 * Every entry of a hash map, in batches where the kernel can (one syscall
 * per chunk), else by get_next_key. The key and value are valid only
 * during the call.
 */
int tracer_scan_map(struct tracer *t, struct bpf_map *map, tracer_entry_fn fn, void *ctx);
/*
 * Every wait (struct ilock_key, ilock_stats) or pair (ilock_edge_key,
 * ilock_edge_stats) recorded so far, read from the mapped slots: no
 * syscall. The stats are live (see slots_scan()).
 */
int tracer_scan_waits(struct tracer *t, tracer_entry_fn fn, void *ctx);
/* How full the slot tables are now (struct table_use, model.h): two loads. */
void tracer_tables(struct tracer *t, struct table_use *out);
int tracer_scan_edges(struct tracer *t, tracer_entry_fn fn, void *ctx);

#endif
