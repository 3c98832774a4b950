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

/* The lock's owner now: racy, like every owner read, and safe. */
static __always_inline void owner_now(struct ilock_waiting *w)
{
	unsigned long owner = 0;
	struct task_struct *task;

	bpf_probe_read_kernel(&owner, sizeof(owner),
			      (void *)w->lock + bpf_core_field_offset(struct rw_semaphore, owner));
	task = (void *)(owner & ~RWSEM_OWNER_FLAGS_MASK);
	w->owner_state = ILOCK_STATE_UNKNOWN;
	if (!task) {
		w->owner_mode = ILOCK_MODE_UNKNOWN;
		return;
	}
	w->owner_mode = owner & RWSEM_READER_OWNED ? ILOCK_MODE_READERS : ILOCK_MODE_EXCL;
	w->owner_pid = BPF_CORE_READ(task, pid);
	w->owner_tgid = BPF_CORE_READ(task, tgid);
	bpf_probe_read_kernel_str(w->owner_comm, sizeof(w->owner_comm), task->comm);
	if (bpf_core_field_exists(task->__state))
		w->owner_state = BPF_CORE_READ(task, __state);
}

SEC("iter/task")
int waiting_now(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct ilock_waiting w = {};
	struct pending_wait *p;
	struct task_state *ts;
	u64 lock, start;

	if (!task)
		return 0;
	ts = bpf_task_storage_get(&task_states, task, 0, 0);
	if (!ts)
		return 0;
	p = &ts->wait;
	lock = *(volatile u64 *)&p->lock;
	if (!lock)
		return 0;
	start = *(volatile u64 *)&p->start_ns;
	barrier();  /* the copy below stays after these two loads */
	w.lock = lock;
	w.start_ns = start;
	w.key = p->key;
	w.wop = p->wop;
	w.hop = p->hop;
	w.holder_pid = p->holder_pid;
	w.holder_tgid = p->holder_tgid;
	w.holder_mode = p->holder_mode;
	w.weight = p->weight;
	__builtin_memcpy(w.holder_comm, p->holder_comm, sizeof(w.holder_comm));
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
		return 0;
	w.waiter_state = bpf_core_field_exists(task->__state) ? task->__state : ILOCK_STATE_UNKNOWN;
	w.tid = task->pid;
	w.tgid = task->tgid;
	__builtin_memcpy(w.comm, task->comm, sizeof(w.comm));
	owner_now(&w);
	w.now_ns = bpf_ktime_get_ns();
	bpf_seq_write(seq, &w, sizeof(w));
	return 0;
}
