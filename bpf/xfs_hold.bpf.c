// SPDX-License-Identifier: GPL-2.0-only
/*
 * XFS lock hold times from xfs:xfs_ilock, xfs_ilock_nowait, xfs_ilock_demote
 * and xfs_iunlock. xfs_ilock fires before the lock is taken and xfs_iunlock
 * after it is released; when the taker had to wait, lockwait.bpf.c moves the
 * start to the end of the wait, so a hold is acquire-to-release.
 *
 * Above a per-CPU rate only a sample of the holds is timed (hold_weight).
 * Optional: userspace turns these programs off when XFS is absent.
 */
#include "ilock.bpf.h"

/*
 * IOLOCK is inode->i_rwsem, MMAPLOCK the mapping's invalidate_lock. The
 * classes after ILOCK (jbd2_wait) are no XFS locks.
 */
#define XFS_CLASSES (ILOCK_CLASS_XFS_ILOCK + 1)

static const u32 xfs_excl_bit[XFS_CLASSES] = {
	[ILOCK_CLASS_I_RWSEM] = ILOCK_XFS_IOLOCK_EXCL,
	[ILOCK_CLASS_INVALIDATE] = ILOCK_XFS_MMAPLOCK_EXCL,
	[ILOCK_CLASS_XFS_ILOCK] = ILOCK_XFS_ILOCK_EXCL,
};
static const u32 xfs_shared_bit[XFS_CLASSES] = {
	[ILOCK_CLASS_I_RWSEM] = ILOCK_XFS_IOLOCK_SHARED,
	[ILOCK_CLASS_INVALIDATE] = ILOCK_XFS_MMAPLOCK_SHARED,
	[ILOCK_CLASS_XFS_ILOCK] = ILOCK_XFS_ILOCK_SHARED,
};

/*
 * tp_btf hands us a trusted xfs_inode pointer: plain (CO-RE relocated)
 * loads. raw_tp gives a bare address: probe reads. `btf` is a constant at
 * each call site, so each program keeps only its own branch.
 */
static __always_inline void xfs_inode_id(struct xfs_inode *ip, bool btf, u32 *dev, u64 *ino)
{
	if (btf) {
		*dev = ip->i_vnode.i_sb->s_dev;
		*ino = ip->i_vnode.i_ino;
	} else {
		*dev = BPF_CORE_READ(ip, i_vnode.i_sb, s_dev);
		*ino = BPF_CORE_READ(ip, i_vnode.i_ino);
	}
}

/*
 * The filters an event alone decides (class, -D, --ino), before any task
 * state or clock read, so the locks a filter drops cost little more than
 * the empty program: on a host with several XFS filesystems, -D leaves the
 * others near the floor. (--fs and a --class with no XFS lock keep these
 * programs from being attached at all; see the strategy.)
 */
static __always_inline bool hold_wanted(struct xfs_inode *ip, bool btf, u32 flags)
{
	u32 bits = 0;
	u64 ino;
	u32 dev;

	if (cfg_class_mask) {
		for (u32 c = 0; c < XFS_CLASSES; c++)
			if (cfg_class_mask & (1U << c))
				bits |= xfs_excl_bit[c] | xfs_shared_bit[c];
		if (!(flags & bits))
			return false;
	}
	if (!cfg_dev && !cfg_ino)
		return true;
	xfs_inode_id(ip, btf, &dev, &ino);
	return (!cfg_dev || dev == cfg_dev) && (!cfg_ino || ino == cfg_ino);
}

/*
 * Is this acquisition of dev:ino timed, and for how many does it stand?
 * Every one while its bucket (this CPU's, this inode's by hash) has
 * tokens: cfg_hold_tokens_per_jiffy more each jiffy, up to cfg_hold_burst. Then
 * 1 in cfg_hold_one_in (a power of two), weighted by that rate, so counts
 * and histograms stay unbiased estimates. 0: not timed. A light load is
 * timed whole, and a rare long hold on one file is not lost to another
 * file's traffic; on a heavy load most events cost the floor plus a few
 * loads (docs/PERFORMANCE.md). Per-CPU state: these programs do not nest.
 */
static __always_inline u32 hold_weight(u32 dev, u64 ino)
{
	return sample_weight(&hold_rates, ino ^ ((u64)dev << 32), cfg_hold_one_in,
			     cfg_hold_tokens_per_jiffy, cfg_hold_burst);
}

/* A timed entry older than this may be taken over by another hold. */
#define HOLD_STALE_NS (10ULL * 1000000000ULL)
/* ... and a trylock's (which may have failed, leaving no unlock) after this. */
#define HOLD_NOWAIT_STALE_NS 1000000ULL

static __always_inline bool hold_reclaimable(const struct hold_entry *e, u64 now)
{
	u64 age = now > e->start_ns ? now - e->start_ns : 0;

	return age > (e->nowait ? HOLD_NOWAIT_STALE_NS : HOLD_STALE_NS);
}

/* An entry taken (task) or given up (old) by a CAS of its task field: the gates. */
static __always_inline void hold_counted(u64 task, u64 old)
{
	if (task)
		__sync_fetch_and_add(hold_task_count(task), 1);
	if (old)
		__sync_fetch_and_add(hold_task_count(old), -1);
	if (!old)
		__sync_fetch_and_add(&holds_timing, 1);
	else if (!task)
		__sync_fetch_and_add(&holds_timing, -1);
}

/* Release task's entry, its task field last. */
static __always_inline void hold_free(struct hold_entry *e, u64 task)
{
	e->task = 0;
	hold_counted(0, task);
}

/*
 * Free the stale entries of bucket k: a failed trylock never unlocks, and
 * its entry would hold the gates open. Each timed unlock looks at the
 * bucket of this CPU's last trylock, until that entry is gone, and at one
 * more in turn. True: a trylock's entry is still there, too young to free.
 */
static __always_inline bool hold_sweep(u32 k, u64 now, bool nowait)
{
	struct hold_bucket *b = bpf_map_lookup_elem(&hold_table, &k);
	bool young = false;

	if (!b)
		return false;
	for (int i = 0; i < ILOCK_HOLD_WAYS; i++) {
		struct hold_entry *e = &b->e[i];
		u64 cur = *(volatile u64 *)&e->task;

		if (!cur)
			continue;
		if (!hold_reclaimable(e, now)) {
			young |= nowait && e->nowait;
			continue;
		}
		if (__sync_val_compare_and_swap(&e->task, cur, 0) != cur)
			continue;
		hold_counted(0, cur);
		if (!e->nowait)
			count(ILOCK_LOST_HOLD_REPLACED);
	}
	return young;
}

static __always_inline void hold_fill(struct hold_entry *e, u32 dev, u64 ino, u64 now, u32 w,
				      u32 c, u8 mode, bool nowait)
{
	e->ino = ino;
	e->dev = dev;
	e->start_ns = now;
	e->weight = w;
	e->class = c;
	e->mode = mode;
	e->nowait = nowait;
}


/*
 * Start timing task's hold of (dev:ino, class) in the entry returned (NULL:
 * none free); bucket *k. Entries are claimed by a CAS of their task field,
 * the first field other threads compare; the rest is then written by the
 * claiming thread alone, which alone reads it back.
 */
static __always_inline struct hold_entry *hold_put(u64 task, u32 dev, u64 ino, u32 c, u8 mode,
						   bool nowait, u64 now, u32 w, u32 *k)
{
	struct hold_bucket *b;
	struct hold_entry *e;

	*k = hold_bucket_index(task, dev, ino, c);
	b = bpf_map_lookup_elem(&hold_table, k);
	if (!b)
		return NULL;
	e = hold_find(b, task, dev, ino, c);
	if (e) {
		/* a start already there: a failed trylock, or a lost unlock */
		if (!e->nowait)
			count(ILOCK_LOST_HOLD_REPLACED);
		hold_fill(e, dev, ino, now, w, c, mode, nowait);
		return e;
	}
	for (int i = 0; i < ILOCK_HOLD_WAYS; i++) {
		u64 cur;

		e = &b->e[i];
		cur = *(volatile u64 *)&e->task;
		if (cur && !hold_reclaimable(e, now))
			continue;
		if (__sync_val_compare_and_swap(&e->task, cur, task) != cur)
			continue;
		hold_counted(task, cur);
		if (cur && !e->nowait)
			count(ILOCK_LOST_HOLD_REPLACED);
		hold_fill(e, dev, ino, now, w, c, mode, nowait);
		return e;
	}
	count(ILOCK_LOST_HOLD_START_FULL);
	return NULL;
}

static __always_inline int on_lock(struct xfs_inode *ip, bool btf, u32 flags, bool nowait)
{
	struct hold_entry *put[XFS_CLASSES] = {};
	struct hold_sweeper *hs;
	u64 task, now, ino;
	u32 w, dev, k, zero = 0;

	count(ILOCK_EV_XFS_LOCK);
	/* maybe-NULL to 6.12's verifier, as in on_unlock */
	if (!ip || !hold_wanted(ip, btf, flags))
		return 0;
	/* the hottest path in ilock: no helper call unless a filter needs it */
	if (task_filters_on() && !task_selected(bpf_get_current_pid_tgid()))
		return 0;
	xfs_inode_id(ip, btf, &dev, &ino);
	w = hold_weight(dev, ino);
	if (!w)
		return 0;
	count(ILOCK_EV_HOLD_TIMED);
	hs = bpf_map_lookup_elem(&hold_sweepers, &zero);
	task = bpf_get_current_task();
	now = bpf_ktime_get_ns();
	for (u32 c = 0; c < XFS_CLASSES; c++) {
		if (!(flags & (xfs_excl_bit[c] | xfs_shared_bit[c])))
			continue;
		if (cfg_class_mask && !(cfg_class_mask & (1U << c)))
			continue;
		put[c] = hold_put(task, dev, ino, c,
				  (flags & xfs_excl_bit[c]) ? ILOCK_MODE_EXCL : ILOCK_MODE_SHARED,
				  nowait, now, w, &k);
		if (nowait && hs && put[c])
			hs->nowait_bucket = k + 1;
	}
	/* the hold starts when we are done: our own work is not the holder's */
	now = bpf_ktime_get_ns();
	for (u32 c = 0; c < XFS_CLASSES; c++)
		if (put[c])
			put[c]->start_ns = now;
	return 0;
}

static __always_inline void hold_done(u32 dev, u64 ino, u32 gen, u32 class, u8 mode, u64 ns,
				      u32 w)
{
	struct ilock_key k = { .dev = dev, .ino = ino, .gen = gen, .class = class, .mode = mode };
	struct ilock_stats *s;

	/* on_unlock has applied the filters (hold_wanted) */
	s = lookup_or_init(&lock_holds, &k, &zero_stats, ILOCK_LOST_HOLD_MAP_FULL);
	if (s)
		stats_add_w(s, ns, w);
}

/* Release (demote == false) or demote exclusive to shared (demote == true). */
static __always_inline int on_unlock(struct xfs_inode *ip, bool btf, u32 flags, bool demote)
{
	u64 task, ino, now;
	bool timed = false;
	u32 dev, gen, zero = 0;

	if (!demote)
		count(ILOCK_EV_XFS_UNLOCK);
	/*
	 * Never NULL in practice, but 6.12's verifier marks every tp_btf
	 * pointer argument maybe-NULL ("bpf: Mark raw_tp arguments with
	 * PTR_MAYBE_NULL", later narrowed to known cases in 6.14) and refuses
	 * &ip->i_vnode without this check.
	 */
	if (!ip || !hold_wanted(ip, btf, flags))
		return 0;
	/* nothing timed anywhere, or by this task: the common case under sampling */
	if (!holds_any_timed() || !hold_maybe_timing(task = bpf_get_current_task())) {
		if (cfg_hold_one_in <= 1)
			count(ILOCK_LOST_HOLD_NO_START);
		return 0;
	}
	if (task_filters_on() && !task_selected(bpf_get_current_pid_tgid()))
		return 0;
	/* first of the rest, so that the hold ends before our own work */
	now = bpf_ktime_get_ns();
	xfs_inode_id(ip, btf, &dev, &ino);
	/* the rows' key only: while held, dev:ino names one inode */
	gen = btf ? ip->i_vnode.i_generation : BPF_CORE_READ(ip, i_vnode.i_generation);
	for (u32 c = 0; c < XFS_CLASSES; c++) {
		struct hold_entry *e;
		u32 w;
		u8 mode;

		if (!(flags & (xfs_excl_bit[c] | xfs_shared_bit[c])))
			continue;
		if (cfg_class_mask && !(cfg_class_mask & (1U << c)))
			continue;
		e = hold_lookup(task, dev, ino, c);
		if (!e) {
			/* sampled out, unless every hold is timed */
			if (cfg_hold_one_in <= 1)
				count(ILOCK_LOST_HOLD_NO_START);
			continue;
		}
		timed = true;
		w = e->weight;
		mode = e->mode;
		hold_done(dev, ino, gen, c, mode, now > e->start_ns ? now - e->start_ns : 0, w);
		if (demote) {
			/* the exclusive hold ends here; a shared one begins */
			e->start_ns = now;
			e->mode = ILOCK_MODE_SHARED;
			e->nowait = 0;
		} else {
			hold_free(e, task);
		}
	}
	if (timed) {
		struct hold_sweeper *hs = bpf_map_lookup_elem(&hold_sweepers, &zero);

		if (hs) {
			if (hs->nowait_bucket && !hold_sweep(hs->nowait_bucket - 1, now, true))
				hs->nowait_bucket = 0;
			hold_sweep(hs->next++ & (ILOCK_HOLD_BUCKETS - 1), now, false);
		}
	}
	return 0;
}

SEC("tp_btf/xfs_ilock")
int BPF_PROG(xfs_ilock_btf, struct xfs_inode *ip, unsigned int flags)
{
	BENCH_IDLE_RETURN();
	return on_lock(ip, true, flags, false);
}

SEC("raw_tp/xfs_ilock")
int BPF_PROG(xfs_ilock_raw, struct xfs_inode *ip, unsigned int flags)
{
	BENCH_IDLE_RETURN();
	return on_lock(ip, false, flags, false);
}

SEC("tp_btf/xfs_ilock_nowait")
int BPF_PROG(xfs_ilock_nowait_btf, struct xfs_inode *ip, unsigned int flags)
{
	BENCH_IDLE_RETURN();
	return on_lock(ip, true, flags, true);
}

SEC("raw_tp/xfs_ilock_nowait")
int BPF_PROG(xfs_ilock_nowait_raw, struct xfs_inode *ip, unsigned int flags)
{
	BENCH_IDLE_RETURN();
	return on_lock(ip, false, flags, true);
}

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(xfs_iunlock_btf, struct xfs_inode *ip, unsigned int flags)
{
	BENCH_IDLE_RETURN();
	return on_unlock(ip, true, flags, false);
}

SEC("raw_tp/xfs_iunlock")
int BPF_PROG(xfs_iunlock_raw, struct xfs_inode *ip, unsigned int flags)
{
	BENCH_IDLE_RETURN();
	return on_unlock(ip, false, flags, false);
}

SEC("tp_btf/xfs_ilock_demote")
int BPF_PROG(xfs_ilock_demote_btf, struct xfs_inode *ip, unsigned int flags)
{
	BENCH_IDLE_RETURN();
	return on_unlock(ip, true, flags, true);
}

SEC("raw_tp/xfs_ilock_demote")
int BPF_PROG(xfs_ilock_demote_raw, struct xfs_inode *ip, unsigned int flags)
{
	BENCH_IDLE_RETURN();
	return on_unlock(ip, false, flags, true);
}
