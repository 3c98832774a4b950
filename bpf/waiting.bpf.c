// SPDX-License-Identifier: GPL-2.0-only
/*
 * Waits in progress, read on demand by a task iterator.
 *
 * contention_begin leaves each timed wait in its thread's task storage
 * until contention_end clears it. A wait that never ends (a holder stuck
 * in D state, a writer behind a hung device) therefore never reaches the
 * histograms: this walk finds it while it lasts. It runs only when
 * userspace reads the iterator, once per display interval or scrape, so
 * it adds nothing to the lock paths. Besides what begin kept, it reads
 * who owns the lock now, which after a handover is not who owned it at
 * the start.
 */
#include "ilock.bpf.h"
#include "inode.bpf.h"

/* The lock's owner now: racy, like every owner read, and safe. */
static __always_inline void owner_now(struct ilock_waiting *w)
{
	unsigned long owner = 0;
	struct task_struct *task;

	bpf_probe_read_kernel(&owner, sizeof(owner),
			      (void *)w->lock + bpf_core_field_offset(struct rw_semaphore, owner));
	task = (void *)(owner & ~RWSEM_OWNER_FLAGS_MASK);
	w->owner_state = ILOCK_STATE_UNKNOWN;
	/* readers with the hint cleared (as in read_holder()) stay readers */
	w->owner_mode = owner & RWSEM_READER_OWNED ? ILOCK_MODE_READERS
			: task ? ILOCK_MODE_EXCL : ILOCK_MODE_UNKNOWN;
	if (!task)
		return;
	w->owner_pid = BPF_CORE_READ(task, pid);
	w->owner_tgid = BPF_CORE_READ(task, tgid);
	bpf_probe_read_kernel_str(w->owner_comm, sizeof(w->owner_comm), task->comm);
	if (bpf_core_field_exists(task->__state))
		w->owner_state = BPF_CORE_READ(task, __state);
}

/* The waiter's own part of a record: who it is, its state, when read. */
static __always_inline void waiter_now(struct ilock_waiting *w, struct task_struct *task)
{
	w->waiter_state = bpf_core_field_exists(task->__state) ? task->__state : ILOCK_STATE_UNKNOWN;
	w->tid = task->pid;
	w->tgid = task->tgid;
	__builtin_memcpy(w->comm, task->comm, sizeof(w->comm));
	w->now_ns = bpf_ktime_get_ns();
}

/* An inode lock wait in progress: what contention_begin kept, and the owner now. */
static __always_inline void lock_wait_now(struct seq_file *seq, struct task_struct *task,
					  struct task_state *ts, struct ilock_waiting *w)
{
	struct pending_wait *p = &ts->wait;
	u64 lock, start;

	/*
	 * start before lock: a wait that begins on the same lock while we
	 * copy changes start, which the check below sees.
	 */
	start = *(volatile u64 *)&p->start_ns;
	barrier();
	lock = *(volatile u64 *)&p->lock;
	if (!lock)
		return;
	barrier();  /* the copy below stays after these two loads */
	w->lock = lock;
	w->start_ns = start;
	w->key = p->key;
	w->wop = p->wop;
	w->hop = p->hop;
	w->holder_pid = p->holder_pid;
	w->holder_tgid = p->holder_tgid;
	w->holder_mode = p->holder_mode;
	w->weight = p->weight;
	__builtin_memcpy(w->holder_comm, p->holder_comm, sizeof(w->holder_comm));
	/*
	 * The waiter runs on another CPU and may have ended this wait and
	 * begun another while we copied: then the copy is a mix of two, and
	 * the wait it was is over anyway. contention_begin clears lock, fills
	 * the rest, and sets lock last; x86 keeps stores and loads in order,
	 * so a copy that sees the same lock and start before and after is
	 * whole. Weaker orderings (arm64) may rarely let a mixed one through.
	 */
	barrier();
	if (*(volatile u64 *)&p->lock != lock || *(volatile u64 *)&p->start_ns != start)
		return;
	owner_now(w);
	waiter_now(w, task);
	bpf_seq_write(seq, w, sizeof(*w));
}

/*
 * The journal an fsync of inode waits on: its commit thread now (from
 * journal_commits, which jbd2_start_commit fills) and the commit running
 * for the transaction the fsync needs, or one before it.
 */
static __always_inline void journal_now(struct ilock_waiting *w, struct inode *inode)
{
	struct ext4_sb_info *sbi;
	struct journal_hist *jh;
	struct task_struct *jt;
	struct journal_s *journal;
	u32 dev;

	w->owner_mode = ILOCK_MODE_UNKNOWN;
	w->owner_state = ILOCK_STATE_UNKNOWN;
	if (!bpf_core_type_exists(struct ext4_sb_info))
		return;
	sbi = BPF_CORE_READ(inode, i_sb, s_fs_info);
	journal = BPF_CORE_READ(sbi, s_journal);
	if (!journal)
		return;  /* no journal: the fsync waits on its data alone */
	dev = BPF_CORE_READ(journal, j_fs_dev, bd_dev);
	jh = bpf_map_lookup_elem(&journal_commits, &dev);
	if (!jh)
		return;  /* no commit seen since ilock started */
	w->owner_mode = ILOCK_MODE_EXCL;
	w->owner_pid = jh->pid;
	w->owner_tgid = jh->tgid;
	__builtin_memcpy(w->owner_comm, jh->comm, sizeof(w->owner_comm));
	/* the pointer was the thread's when it last committed: check it still is */
	jt = (struct task_struct *)jh->task;
	if (jt && (u32)BPF_CORE_READ(jt, pid) == jh->pid && bpf_core_field_exists(jt->__state))
		w->owner_state = BPF_CORE_READ(jt, __state);
	/*
	 * jbd2 commits one transaction at a time; a slot whose end was missed
	 * looks running until reused, so the latest that can be the one wins.
	 */
	for (int i = 0; i < COMMIT_RING; i++) {
		const struct commit *c = &jh->ring[i];

		if (c->start_ns && !c->end_ns && tid_le(c->tid, w->need_tid) &&
		    (!w->commit_start_ns || tid_le(w->commit_tid, c->tid))) {
			w->commit_start_ns = c->start_ns;
			w->commit_tid = c->tid;
		}
	}
}

/*
 * An ext4 fsync in progress (--class jbd2_wait): one record, class
 * JBD2_WAIT, lock 0. Checked as a lock wait is, against the fsync ending
 * and another beginning while it was copied.
 */
static __always_inline void fsync_now(struct seq_file *seq, struct task_struct *task,
				      struct task_state *ts, struct ilock_waiting *w)
{
	struct fsync_state *f = &ts->fsync;
	u64 inode, start;
	u32 need;
	u8 datasync;

	/* start first, as in lock_wait_now: a new fsync of the same file changes it */
	start = *(volatile u64 *)&f->start_ns;
	barrier();
	inode = *(volatile u64 *)&f->inode;
	if (!inode)
		return;
	barrier();
	need = f->tid;
	datasync = f->datasync;
	barrier();
	if (*(volatile u64 *)&f->inode != inode || *(volatile u64 *)&f->start_ns != start)
		return;
	__builtin_memset(w, 0, sizeof(*w));
	w->start_ns = start;
	w->need_tid = fsync_tid_now((struct inode *)inode, need, datasync);
	w->weight = 1;
	fill_key(&w->key, (struct inode *)inode, ILOCK_CLASS_JBD2_WAIT, ILOCK_MODE_EXCL, false);
	w->wop.op = datasync ? ILOCK_OP_FDATASYNC : ILOCK_OP_FSYNC;
	w->hop.op = ILOCK_OP_JOURNAL_COMMIT;
	w->holder_mode = ILOCK_MODE_UNKNOWN;
	journal_now(w, (struct inode *)inode);
	waiter_now(w, task);
	bpf_seq_write(seq, w, sizeof(*w));
}

/* include/linux/hung_task.h: the low two bits of task_struct.blocker */
#define BLOCKER_TYPE_MASK 3UL
#define BLOCKER_TYPE_RWSEM_READER 2UL
#define BLOCKER_TYPE_RWSEM_WRITER 3UL

/* cgroup kfuncs (6.5+); where missing, no waits begun before tracing under --cgroup */
extern struct cgroup *bpf_cgroup_from_id(u64 cgid) __ksym __weak;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym __weak;
extern long bpf_task_under_cgroup(struct task_struct *task, struct cgroup *ancestor) __ksym __weak;

static __always_inline bool task_in_cgroup(struct task_struct *task)
{
	struct cgroup *cg;
	long in;

	if (!bpf_cgroup_from_id || !bpf_cgroup_release || !bpf_task_under_cgroup || !cfg_cgroup_id)
		return false;
	cg = bpf_cgroup_from_id(cfg_cgroup_id);
	if (!cg)
		return false;
	in = bpf_task_under_cgroup(task, cg);
	bpf_cgroup_release(cg);
	return in;
}

/* The task filters for a task that is not current (task_selected() asks current). */
static __always_inline bool task_selected_other(struct task_struct *task)
{
	char comm[ILOCK_COMM_LEN];

	if (cfg_tgid && (u32)task->tgid != cfg_tgid)
		return false;
	if (cfg_comm_on) {
		__builtin_memcpy(comm, task->comm, sizeof(comm));
		if (!comm_matches(comm))
			return false;
	}
	return !cfg_cgroup_on || task_in_cgroup(task);
}

/*
 * A wait begun before tracing, which contention_begin never saw: a thread
 * asleep uninterruptibly on an rw_semaphore has it in task_struct.blocker
 * (CONFIG_DETECT_HUNG_TASK_BLOCKER, kernels since rw_semaphores were added
 * to it). Only threads without task storage are asked: every thread with
 * storage ran under our contention_begin, which kept or let go its wait.
 * The holder at its start is not known; the owner now is.
 */
static __always_inline void blocker_wait_now(struct seq_file *seq, struct task_struct *task,
					     unsigned long blocker, struct ilock_waiting *w)
{
	unsigned long b, type;
	struct inode *inode;
	u8 class = 0;
	void *lock;

	/*
	 * Under --wait-sample a wait left out makes no storage either: it
	 * would look begun before tracing. Not listed then.
	 */
	if (!bpf_core_field_exists(task->blocker) || cfg_wait_one_in > 1)
		return;
	b = blocker;
	type = b & BLOCKER_TYPE_MASK;
	if (type != BLOCKER_TYPE_RWSEM_READER && type != BLOCKER_TYPE_RWSEM_WRITER)
		return;
	lock = (void *)(b & ~BLOCKER_TYPE_MASK);
	if (!lock || !task_selected_other(task))
		return;
	inode = classify_lock(lock, &class, false);
	if (!inode)
		return;
	__builtin_memset(w, 0, sizeof(*w));
	fill_key(&w->key, inode, class,
		 type == BLOCKER_TYPE_RWSEM_WRITER ? ILOCK_MODE_EXCL : ILOCK_MODE_SHARED, false);
	if (!inode_selected(&w->key, inode, false))
		return;
	note_inode(inode, &w->key, NULL);
	w->lock = (u64)lock;
	w->weight = 1;
	w->holder_mode = ILOCK_MODE_UNKNOWN;
	w->before_trace = 1;
	owner_now(w);
	waiter_now(w, task);
	/* the wait ended (or another began) while we read: what we have is not it */
	if (*(volatile unsigned long *)&task->blocker != b)
		return;
	bpf_seq_write(seq, w, sizeof(*w));
}

SEC("iter/task")
int waiting_now(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct ilock_waiting w = {};
	struct task_state *ts;
	unsigned long blocker = 0;

	if (!task)
		return 0;
	/*
	 * blocker before the storage: a waiter makes its storage (at
	 * contention_begin) before the kernel sets blocker, so a blocker seen
	 * here with no storage after it is a wait begun before tracing.
	 */
	if (bpf_core_field_exists(task->blocker))
		blocker = *(volatile unsigned long *)&task->blocker;
	barrier();
	ts = bpf_task_storage_get(&task_states, task, 0, 0);
	if (!ts) {
		blocker_wait_now(seq, task, blocker, &w);
		return 0;
	}
	lock_wait_now(seq, task, ts, &w);
	fsync_now(seq, task, ts, &w);
	return 0;
}
