// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exact hold times of every inode rw_semaphore on any filesystem, for
 * --holds=all: fexit on the down_* functions (the lock is ours when they
 * return) and fentry on up_* (it is about to be released). These hook every
 * rw_semaphore in the kernel, mmap_lock included, hence opt-in: the cost is
 * measured in docs/PERFORMANCE.md. Needs fentry; optional programs,
 * turned on by userspace from the feature probes.
 *
 * Per-thread hold slots in task storage, keyed by the semaphore's address.
 * Every hold is timed here: fentry is the costly path anyway.
 */
#include "ilock.bpf.h"
#include "inode.bpf.h"

/* XFS hold programs are on: leave XFS inodes to them (they see ILOCK too). */
const volatile __u32 cfg_rwsem_holds_skip_xfs = 0;

static __always_inline int hold_begin(struct rw_semaphore *sem, u8 mode)
{
	struct task_state *ts;
	struct inode *inode;
	struct ilock_key k;
	int slot = -1;
	u8 class = 0;

	if (task_filters_on() && !task_selected(bpf_get_current_pid_tgid()))
		return 0;
	inode = classify_lock(sem, &class, false);
	if (!inode)
		return 0;
	if (cfg_rwsem_holds_skip_xfs &&
	    inode_magic(inode, false) == ILOCK_XFS_SB_MAGIC)
		return 0;
	fill_key(&k, inode, class, mode, false);
	if (!inode_selected(&k, inode, false))
		return 0;
	ts = my_state(bpf_get_current_task_btf());
	if (!ts) {
		count(ILOCK_LOST_HOLD_START_FULL);
		return 0;
	}
	for (int i = 0; i < ILOCK_HOLD_SLOTS; i++) {
		struct hold_slot *h = &ts->holds[i];

		if (h->ip == (u64)sem) {
			/* the previous hold's release went unseen (up_read_non_owner) */
			count(ILOCK_LOST_HOLD_REPLACED);
			slot = i;
			break;
		}
		if (!h->ip && slot < 0)
			slot = i;
	}
	if (slot < 0) {
		count(ILOCK_LOST_HOLD_START_FULL);
		return 0;
	}
	struct hold_slot *h = &ts->holds[slot & (ILOCK_HOLD_SLOTS - 1)];

	h->ip = (u64)sem;
	h->class = class;
	h->mode = mode;
	h->nowait = 0;
	h->start_ns = bpf_ktime_get_ns();
	note_inode(inode, &k, ts);
	return 0;
}

/* Release, or with demote the end of an exclusive hold and start of a shared one. */
static __always_inline int hold_end(struct rw_semaphore *sem, bool demote)
{
	struct task_state *ts;
	struct ilock_stats *s;
	struct inode *inode;
	struct ilock_key k;
	u64 now;
	u8 class = 0;

	/* the common case by far: a thread holding no inode lock we track */
	ts = bpf_task_storage_get(&task_states, bpf_get_current_task_btf(), 0, 0);
	if (!ts)
		return 0;
	for (int i = 0; i < ILOCK_HOLD_SLOTS; i++) {
		struct hold_slot *h = &ts->holds[i];

		if (h->ip != (u64)sem)
			continue;
		now = bpf_ktime_get_ns();
		inode = classify_lock(sem, &class, false);
		if (inode) {
			fill_key(&k, inode, h->class, h->mode, false);
			s = lookup_or_init(&lock_holds, &k, &zero_stats, ILOCK_LOST_HOLD_MAP_FULL);
			if (s)
				stats_add(s, now > h->start_ns ? now - h->start_ns : 0);
		}
		if (demote) {
			h->start_ns = now;
			h->mode = ILOCK_MODE_SHARED;
		} else {
			h->ip = 0;
		}
		break;
	}
	return 0;
}

SEC("?fexit/down_read")
int BPF_PROG(hold_down_read, struct rw_semaphore *sem)
{
	BENCH_IDLE_RETURN();
	return hold_begin(sem, ILOCK_MODE_SHARED);
}

SEC("?fexit/down_read_killable")
int BPF_PROG(hold_down_read_killable, struct rw_semaphore *sem, int ret)
{
	BENCH_IDLE_RETURN();
	return ret ? 0 : hold_begin(sem, ILOCK_MODE_SHARED);
}

SEC("?fexit/down_read_trylock")
int BPF_PROG(hold_down_read_trylock, struct rw_semaphore *sem, int ret)
{
	BENCH_IDLE_RETURN();
	return ret == 1 ? hold_begin(sem, ILOCK_MODE_SHARED) : 0;
}

SEC("?fexit/down_write")
int BPF_PROG(hold_down_write, struct rw_semaphore *sem)
{
	BENCH_IDLE_RETURN();
	return hold_begin(sem, ILOCK_MODE_EXCL);
}

SEC("?fexit/down_write_killable")
int BPF_PROG(hold_down_write_killable, struct rw_semaphore *sem, int ret)
{
	BENCH_IDLE_RETURN();
	return ret ? 0 : hold_begin(sem, ILOCK_MODE_EXCL);
}

SEC("?fexit/down_write_trylock")
int BPF_PROG(hold_down_write_trylock, struct rw_semaphore *sem, int ret)
{
	BENCH_IDLE_RETURN();
	return ret == 1 ? hold_begin(sem, ILOCK_MODE_EXCL) : 0;
}

SEC("?fentry/up_read")
int BPF_PROG(hold_up_read, struct rw_semaphore *sem)
{
	BENCH_IDLE_RETURN();
	return hold_end(sem, false);
}

SEC("?fentry/up_write")
int BPF_PROG(hold_up_write, struct rw_semaphore *sem)
{
	BENCH_IDLE_RETURN();
	return hold_end(sem, false);
}

SEC("?fentry/downgrade_write")
int BPF_PROG(hold_downgrade_write, struct rw_semaphore *sem)
{
	BENCH_IDLE_RETURN();
	return hold_end(sem, true);
}
