// SPDX-License-Identifier: GPL-2.0-only
/*
 * XFS lock hold times from xfs:xfs_ilock, xfs_ilock_nowait, xfs_ilock_demote
 * and xfs_iunlock. xfs_ilock fires before the lock is taken and xfs_iunlock
 * after it is released; when the taker had to wait, lockwait.bpf.c moves the
 * start to the end of the wait, so a hold is acquire-to-release.
 *
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

/* The slot holding (ip, class), or else a free one in *free (-1 if none). */
static __always_inline int find_slot(struct task_state *ts, u64 ip, u32 class, int *free)
{
	int found = -1;

	*free = -1;
	for (int i = 0; i < ILOCK_HOLD_SLOTS; i++) {
		struct hold_slot *h = &ts->holds[i];

		if (h->ip == ip && h->class == class)
			found = i;
		else if (!h->ip && *free < 0)
			*free = i;
	}
	return found;
}

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

static __always_inline int on_lock(struct xfs_inode *ip, bool btf, u32 flags, bool nowait)
{
	struct task_state *ts;
	u64 now;

	count(ILOCK_EV_XFS_LOCK);
	/* maybe-NULL to 6.12's verifier, as in on_unlock */
	if (!ip || !hold_wanted(ip, btf, flags))
		return 0;
	/* the hottest path in ilock: no helper call unless a filter needs it */
	if ((cfg_tgid || cfg_comm_on) && !task_selected(bpf_get_current_pid_tgid()))
		return 0;
	ts = my_state();
	if (!ts) {
		count(ILOCK_LOST_HOLD_START_FULL);
		return 0;
	}
	now = bpf_ktime_get_ns();
	for (u32 c = 0; c < XFS_CLASSES; c++) {
		int i, free;

		if (!(flags & (xfs_excl_bit[c] | xfs_shared_bit[c])))
			continue;
		if (cfg_class_mask && !(cfg_class_mask & (1U << c)))
			continue;
		i = find_slot(ts, (u64)ip, c, &free);
		if (i >= 0) {
			/* a start already there: a failed trylock, or a lost unlock */
			if (!ts->holds[i & (ILOCK_HOLD_SLOTS - 1)].nowait)
				count(ILOCK_LOST_HOLD_REPLACED);
		} else if (free >= 0) {
			i = free;
		} else {
			count(ILOCK_LOST_HOLD_START_FULL);
			continue;
		}
		struct hold_slot *h = &ts->holds[i & (ILOCK_HOLD_SLOTS - 1)];

		h->ip = (u64)ip;
		h->start_ns = now;
		h->class = c;
		h->mode = (flags & xfs_excl_bit[c]) ? ILOCK_MODE_EXCL : ILOCK_MODE_SHARED;
		h->nowait = nowait;
	}
	return 0;
}

static __always_inline void hold_done(struct xfs_inode *ip, bool btf, u32 class, u8 mode, u64 ns)
{
	struct ilock_key k = { .class = class, .mode = mode };
	struct ilock_stats *s;

	xfs_inode_id(ip, btf, &k.dev, &k.ino);
	/* on_unlock has applied the filters (hold_wanted) */
	s = lookup_or_init(&lock_holds, &k, &zero_stats, ILOCK_LOST_HOLD_MAP_FULL);
	if (s)
		stats_add(s, ns);
}

/* Release (demote == false) or demote exclusive to shared (demote == true). */
static __always_inline int on_unlock(struct xfs_inode *ip, bool btf, u32 flags, bool demote)
{
	struct task_state *ts;
	u64 now;

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
	if ((cfg_tgid || cfg_comm_on) && !task_selected(bpf_get_current_pid_tgid()))
		return 0;
	ts = bpf_task_storage_get(&task_states, bpf_get_current_task_btf(), 0, 0);
	if (!ts) {
		/* this thread took none of its locks while we watched */
		count(ILOCK_LOST_HOLD_NO_START);
		return 0;
	}
	now = bpf_ktime_get_ns();
	for (u32 c = 0; c < XFS_CLASSES; c++) {
		struct hold_slot *h;
		int i, free;

		if (!(flags & (xfs_excl_bit[c] | xfs_shared_bit[c])))
			continue;
		if (cfg_class_mask && !(cfg_class_mask & (1U << c)))
			continue;
		i = find_slot(ts, (u64)ip, c, &free);
		if (i < 0) {
			count(ILOCK_LOST_HOLD_NO_START);
			continue;
		}
		h = &ts->holds[i & (ILOCK_HOLD_SLOTS - 1)];
		hold_done(ip, btf, c, h->mode, now > h->start_ns ? now - h->start_ns : 0);
		if (demote) {
			/* the exclusive hold ends here; a shared one begins */
			h->start_ns = now;
			h->mode = ILOCK_MODE_SHARED;
		} else {
			h->ip = 0;
		}
	}
	return 0;
}

SEC("tp_btf/xfs_ilock")
int BPF_PROG(xfs_ilock_btf, struct xfs_inode *ip, unsigned int flags)
{
	return on_lock(ip, true, flags, false);
}

SEC("raw_tp/xfs_ilock")
int BPF_PROG(xfs_ilock_raw, struct xfs_inode *ip, unsigned int flags)
{
	return on_lock(ip, false, flags, false);
}

SEC("tp_btf/xfs_ilock_nowait")
int BPF_PROG(xfs_ilock_nowait_btf, struct xfs_inode *ip, unsigned int flags)
{
	return on_lock(ip, true, flags, true);
}

SEC("raw_tp/xfs_ilock_nowait")
int BPF_PROG(xfs_ilock_nowait_raw, struct xfs_inode *ip, unsigned int flags)
{
	return on_lock(ip, false, flags, true);
}

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(xfs_iunlock_btf, struct xfs_inode *ip, unsigned int flags)
{
	return on_unlock(ip, true, flags, false);
}

SEC("raw_tp/xfs_iunlock")
int BPF_PROG(xfs_iunlock_raw, struct xfs_inode *ip, unsigned int flags)
{
	return on_unlock(ip, false, flags, false);
}

SEC("tp_btf/xfs_ilock_demote")
int BPF_PROG(xfs_ilock_demote_btf, struct xfs_inode *ip, unsigned int flags)
{
	return on_unlock(ip, true, flags, true);
}

SEC("raw_tp/xfs_ilock_demote")
int BPF_PROG(xfs_ilock_demote_raw, struct xfs_inode *ip, unsigned int flags)
{
	return on_unlock(ip, false, flags, true);
}
