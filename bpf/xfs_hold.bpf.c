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

/* IOLOCK is inode->i_rwsem, MMAPLOCK the mapping's invalidate_lock. */
static const u32 xfs_excl_bit[ILOCK_CLASS_MAX] = {
	[ILOCK_CLASS_I_RWSEM] = ILOCK_XFS_IOLOCK_EXCL,
	[ILOCK_CLASS_INVALIDATE] = ILOCK_XFS_MMAPLOCK_EXCL,
	[ILOCK_CLASS_XFS_ILOCK] = ILOCK_XFS_ILOCK_EXCL,
};
static const u32 xfs_shared_bit[ILOCK_CLASS_MAX] = {
	[ILOCK_CLASS_I_RWSEM] = ILOCK_XFS_IOLOCK_SHARED,
	[ILOCK_CLASS_INVALIDATE] = ILOCK_XFS_MMAPLOCK_SHARED,
	[ILOCK_CLASS_XFS_ILOCK] = ILOCK_XFS_ILOCK_SHARED,
};

static __always_inline int on_lock(struct xfs_inode *ip, u32 flags, bool nowait)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	struct holding_key hk = { .ip = (u64)ip, .tid = (u32)pid_tgid };
	struct holding h = { .nowait = nowait };
	struct holding *old;

	count(ILOCK_EV_XFS_LOCK);
	if (!task_selected(pid_tgid))
		return 0;
	h.start_ns = bpf_ktime_get_ns();
	for (u32 c = 0; c < ILOCK_CLASS_MAX; c++) {
		if (!(flags & (xfs_excl_bit[c] | xfs_shared_bit[c])))
			continue;
		if (cfg_class_mask && !(cfg_class_mask & (1U << c)))
			continue;
		hk.class = c;
		h.mode = (flags & xfs_excl_bit[c]) ? ILOCK_MODE_EXCL : ILOCK_MODE_SHARED;
		if (!bpf_map_update_elem(&holdings, &hk, &h, BPF_NOEXIST))
			continue;
		/* a start already there: a failed trylock, or a lost unlock */
		old = bpf_map_lookup_elem(&holdings, &hk);
		if (old && !old->nowait)
			count(ILOCK_LOST_HOLD_REPLACED);
		if (bpf_map_update_elem(&holdings, &hk, &h, BPF_ANY))
			count(ILOCK_LOST_HOLD_START_FULL);
	}
	return 0;
}

static __always_inline void hold_done(struct xfs_inode *ip, u32 class, u8 mode, u64 ns)
{
	struct inode *inode = &ip->i_vnode;
	struct ilock_key k;
	struct ilock_stats *s;

	fill_key(&k, inode, class, mode);
	if (!inode_selected(&k, inode))
		return;
	s = lookup_or_init(&lock_holds, &k, &zero_stats, ILOCK_LOST_HOLD_MAP_FULL);
	if (s)
		stats_add(s, ns);
}

/* Release (demote == false) or demote exclusive to shared (demote == true). */
static __always_inline int on_unlock(struct xfs_inode *ip, u32 flags, bool demote)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	struct holding_key hk = { .ip = (u64)ip, .tid = (u32)pid_tgid };
	struct holding *h;
	u64 now;

	if (!demote)
		count(ILOCK_EV_XFS_UNLOCK);
	if (!task_selected(pid_tgid))
		return 0;
	now = bpf_ktime_get_ns();
	for (u32 c = 0; c < ILOCK_CLASS_MAX; c++) {
		if (!(flags & (xfs_excl_bit[c] | xfs_shared_bit[c])))
			continue;
		if (cfg_class_mask && !(cfg_class_mask & (1U << c)))
			continue;
		hk.class = c;
		h = bpf_map_lookup_elem(&holdings, &hk);
		if (!h) {
			count(ILOCK_LOST_HOLD_NO_START);
			continue;
		}
		hold_done(ip, c, h->mode, now > h->start_ns ? now - h->start_ns : 0);
		if (demote) {
			/* the exclusive hold ends here; a shared one begins */
			h->start_ns = now;
			h->mode = ILOCK_MODE_SHARED;
		} else {
			bpf_map_delete_elem(&holdings, &hk);
		}
	}
	return 0;
}

SEC("tp_btf/xfs_ilock")
int BPF_PROG(xfs_ilock_btf, struct xfs_inode *ip, unsigned int flags)
{
	return on_lock(ip, flags, false);
}

SEC("raw_tp/xfs_ilock")
int BPF_PROG(xfs_ilock_raw, struct xfs_inode *ip, unsigned int flags)
{
	return on_lock(ip, flags, false);
}

SEC("tp_btf/xfs_ilock_nowait")
int BPF_PROG(xfs_ilock_nowait_btf, struct xfs_inode *ip, unsigned int flags)
{
	return on_lock(ip, flags, true);
}

SEC("raw_tp/xfs_ilock_nowait")
int BPF_PROG(xfs_ilock_nowait_raw, struct xfs_inode *ip, unsigned int flags)
{
	return on_lock(ip, flags, true);
}

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(xfs_iunlock_btf, struct xfs_inode *ip, unsigned int flags)
{
	return on_unlock(ip, flags, false);
}

SEC("raw_tp/xfs_iunlock")
int BPF_PROG(xfs_iunlock_raw, struct xfs_inode *ip, unsigned int flags)
{
	return on_unlock(ip, flags, false);
}

SEC("tp_btf/xfs_ilock_demote")
int BPF_PROG(xfs_ilock_demote_btf, struct xfs_inode *ip, unsigned int flags)
{
	return on_unlock(ip, flags, true);
}

SEC("raw_tp/xfs_ilock_demote")
int BPF_PROG(xfs_ilock_demote_raw, struct xfs_inode *ip, unsigned int flags)
{
	return on_unlock(ip, flags, true);
}
