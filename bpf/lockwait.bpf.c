// SPDX-License-Identifier: GPL-2.0-only
/*
 * Inode lock waits from lock:contention_begin/end.
 *
 * Both tracepoints fire only on the slow path, for every lock type. We keep
 * rw_semaphore waits (flags exactly READ or WRITE), prove the semaphore is
 * one of an inode's locks, note who owns it, and aggregate the wait in the
 * kernel when it ends. Each body has two thin entry points: tp_btf where the
 * kernel has BTF for the tracepoint, raw_tp otherwise.
 */
#include "ilock.bpf.h"
#include "inode.bpf.h"
#include "opview.bpf.h"
#include "opdecode.bpf.h"

/*
 * The spinlock this CPU is waiting for, so that its contention_end can leave
 * at once. Spinlock waits are most contention events (three in four under the
 * seed workload, many on the rwsem's own wait_lock) and contention_end has no
 * flags to tell them by; without this each would pay a task-storage lookup.
 * A spinning waiter cannot sleep or migrate, so its end comes on this CPU
 * before any other spin begins here, except from an interrupt: then the
 * outer end does not match and takes the slow path, which is still right.
 * (A mutex's optimistic spin, flagged SPIN too, may go on to sleep and end
 * elsewhere: that end takes the slow path, and the note left here can only
 * match the same mutex.) No rw_semaphore can be at the address of a lock
 * noted here, so a match never drops one of our waits.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} spinning SEC(".maps");

static __always_inline u64 *this_cpu_spinning(void)
{
	u32 k = 0;

	return bpf_map_lookup_elem(&spinning, &k);
}

/*
 * No owner: the lock is being handed over (up_write cleared owner, the woken
 * waiter has not taken it yet). A newcomer then queues behind the head of
 * wait_list, which is who it really waits for. Read without wait_lock: a
 * racy but safe snapshot, like the owner itself.
 */
static __always_inline struct task_struct *queue_head(void *lock, void *me, u8 *mode, bool fast)
{
	void *head = lock + bpf_core_field_offset(struct rw_semaphore, wait_list);
	void *first, *waiter, *task;
	int type = 0;

	if (!bpf_core_type_exists(struct rwsem_waiter))
		return NULL;
	first = fast ? kcast(lock, struct rw_semaphore)->wait_list.next : read_ptr(head);
	if (!first || first == head)
		return NULL;
	waiter = first - bpf_core_field_offset(struct rwsem_waiter, list);
	if (fast) {
		struct rwsem_waiter *w = kcast(waiter, struct rwsem_waiter);

		task = w->task;
		type = w->type;
	} else {
		task = read_ptr(waiter + bpf_core_field_offset(struct rwsem_waiter, task));
		bpf_probe_read_kernel(&type, sizeof(type),
				      waiter + bpf_core_field_offset(struct rwsem_waiter, type));
	}
	/*
	 * The slow paths queue the waiter before contention_begin fires: at
	 * the head we may find ourselves, and then nobody is ahead of us.
	 */
	if (task == me)
		return NULL;
	*mode = type == RWSEM_WAITING_FOR_WRITE ? ILOCK_MODE_QUEUED_EXCL : ILOCK_MODE_QUEUED_SHARED;
	return task;
}

/*
 * rw_semaphore.owner: the writer's task_struct, or with READER_OWNED set a
 * hint of the last reader. Read at wait start, it names the holder.
 */
static __always_inline void read_holder(void *lock, void *me, struct pending_wait *p, bool fast)
{
	unsigned long owner = 0;
	struct task_struct *task;
	u8 mode;

	if (fast)
		owner = kcast(lock, struct rw_semaphore)->owner.counter;
	else
		bpf_probe_read_kernel(&owner, sizeof(owner),
				      lock + bpf_core_field_offset(struct rw_semaphore, owner));
	task = (void *)(owner & ~RWSEM_OWNER_FLAGS_MASK);
	/*
	 * READER_OWNED with no task: readers, none named. Kernels with
	 * CONFIG_DETECT_HUNG_TASK_BLOCKER (6.17+) or DEBUG_RWSEMS clear the
	 * hint when the reader it names lets go (rwsem_clear_reader_owned);
	 * it is not a handover, which clears the whole word.
	 */
	mode = (owner & RWSEM_READER_OWNED) ? ILOCK_MODE_READERS
	       : task ? ILOCK_MODE_EXCL : ILOCK_MODE_UNKNOWN;
	/*
	 * The last reader may be this waiter (it read, let go, and waits
	 * again): a stale hint. Other readers hold the lock, none named.
	 */
	if (task == me)
		task = NULL;
	/*
	 * The head of the queue, when it is whom this waiter waits for: with
	 * no owner, whoever is at the head (the lock is being handed over);
	 * for a reader on a reader-owned lock, a writer at the head (readers
	 * do not pass a queued writer; with the queue empty it would have
	 * taken the lock), whose byte range is the one a range lock would
	 * have compared, not the last reader's. One call site: the program
	 * stays small.
	 */
	if (mode == ILOCK_MODE_UNKNOWN ||
	    (mode == ILOCK_MODE_READERS && p->key.mode == ILOCK_MODE_SHARED)) {
		struct task_struct *q;
		u8 qmode = 0;

		q = queue_head(lock, me, &qmode, fast);
		if (q && (mode == ILOCK_MODE_UNKNOWN || qmode == ILOCK_MODE_QUEUED_EXCL)) {
			task = q;
			mode = qmode;
		}
	}
	p->holder_mode = mode;
	if (!task) {
		/* nobody to name: no leftovers of the last wait in the edge key */
		p->holder_task = 0;
		p->holder_pid = p->holder_tgid = 0;
		__builtin_memset(p->holder_comm, 0, sizeof(p->holder_comm));
		return;
	}
	p->holder_task = (u64)task;
	if (fast) {
		struct task_struct *t = kcast(task, struct task_struct);

		p->holder_pid = t->pid;
		p->holder_tgid = t->tgid;
		/* comm is NUL-padded (strscpy_pad): all 16 bytes are the name */
		__builtin_memcpy(p->holder_comm, t->comm, sizeof(p->holder_comm));
	} else {
		p->holder_pid = BPF_CORE_READ(task, pid);
		p->holder_tgid = BPF_CORE_READ(task, tgid);
		bpf_probe_read_kernel_str(p->holder_comm, sizeof(p->holder_comm), task->comm);
	}
}

/*
 * Under --wait-sample, the timed waits in flight per lock (by rate_slot),
 * for all CPUs: the end of a wait whose lock has none leaves before its
 * task-storage lookup, which is most of what such an end costs (its
 * waiter has just woken, its storage not in cache). A count left by a
 * wait whose end never came only sends that lock's ends the long way.
 */
__u32 timed_in_flight[ILOCK_HOLD_RATE_SLOTS];

static __always_inline void timed_begins(u64 lock)
{
	if (cfg_wait_one_in > 1 && lock)
		__sync_fetch_and_add(&timed_in_flight[rate_slot(lock)], 1);
}

static __always_inline void timed_ends(u64 lock)
{
	if (cfg_wait_one_in > 1 && lock)
		__sync_fetch_and_sub(&timed_in_flight[rate_slot(lock)], 1);
}

/*
 * Is this rw_semaphore wait timed, and for how many does it stand (0: not
 * timed)? Every one under --wait-sample 1, the default; otherwise the
 * sampler's bucket for this CPU and lock address decides (sample_weight),
 * before any of the lock is read: a wait left out costs two array loads.
 */
static __always_inline u32 wait_weight(void *lock)
{
	return sample_weight(&wait_rates, (u64)lock, cfg_wait_one_in, cfg_wait_tokens_per_jiffy,
			     cfg_wait_burst);
}

/*
 * ctx: the program's context, for stacks (NULL: none); btf: task kfuncs
 * may be called, so the holder's op and stack can be read (tp_btf only).
 */
static __always_inline int on_begin_ctx(void *ctx, void *lock, unsigned int flags, bool btf)
{
	bool fast = KFAST(btf);
	struct task_struct *me;
	struct task_state *ts;
	struct pending_wait *p;
	struct inode *inode;
	u8 class = 0;
	u32 weight;

	count(ILOCK_EV_BEGIN);
	/* rwsem waits only: excludes spin, mutex, percpu-rwsem and RT locks */
	if (flags != ILOCK_LCB_F_READ && flags != ILOCK_LCB_F_WRITE) {
		u64 *spin;

		if ((flags & ILOCK_LCB_F_SPIN) && (spin = this_cpu_spinning()))
			*spin = (u64)lock;
		return 0;
	}
	count(ILOCK_EV_BEGIN_RWSEM);

	/* the current task is asked for once, and passed down */
	me = bpf_get_current_task_btf();
	if (!task_selected(pid_tgid_of(me)))
		return 0;
	weight = wait_weight(lock);
	if (!weight) {
		count(ILOCK_EV_WAIT_SAMPLED_OUT);
		return 0;
	}
	inode = classify_lock(lock, &class, fast);
	if (!inode)
		return 0;
	ts = my_state(me);
	if (!ts) {
		count(ILOCK_LOST_PENDING_FULL);
		return 0;
	}
	p = &ts->wait;
	if (p->lock) {
		count(ILOCK_LOST_BEGIN_NO_END);
		timed_ends(p->lock);
	}
	p->lock = 0;
	fill_key(&p->key, inode, class,
		 flags == ILOCK_LCB_F_READ ? ILOCK_MODE_SHARED : ILOCK_MODE_EXCL, fast);
	if (!inode_selected(&p->key, inode, fast))
		return 0;

	p->xfs_ip = 0;
	if (bpf_core_type_exists(struct xfs_inode) && inode_magic(inode, fast) == ILOCK_XFS_SB_MAGIC)
		p->xfs_ip = (u64)((void *)inode - bpf_core_field_offset(struct xfs_inode, i_vnode));
	/*
	 * One clock read for the wait's start and the stack rate limits: the
	 * waiter is held up by what follows as much as by the lock.
	 */
	p->weight = weight;
	p->start_ns = bpf_ktime_get_ns();
	read_holder(lock, me, p, fast);
	ops_wait_begin(ctx, btf, ts, p, inode, me, lock, p->start_ns);
	note_inode(inode, &p->key, ts);
	pair_find(p, me);
	/*
	 * Both slots are found here, not at the end: the end runs with the
	 * lock taken (and a writer's end with it held exclusive), a reader's
	 * begin on its way to sleep (wait_slot_of()).
	 */
	p->wait_slot = wait_slot_of(&p->key);
	count(ILOCK_EV_WAIT_BEGUN);
	p->lock = (u64)lock;
	timed_begins(p->lock);
	return 0;
}

/* Entry points without a context of their own (fallbacks): no ops, no stacks. */
static __always_inline __attribute__((unused)) int on_begin(void *lock, unsigned int flags)
{
	return on_begin_ctx(NULL, lock, flags, false);
}

/* An XFS hold starts when the lock is acquired, not when xfs_ilock fired. */
static __always_inline void hold_starts_now(const struct pending_wait *p, u64 now)
{
	struct hold_entry *e;
	u64 task;

	if (!cfg_xfs_holds || !p->xfs_ip || !holds_any_timed())
		return;
	task = bpf_get_current_task();
	if (!hold_maybe_timing(task))
		return;
	e = hold_lookup(task, p->key.dev, p->key.ino, p->key.class);
	if (e && e->start_ns < now)
		e->start_ns = now;
}

static __always_inline int on_end(void *lock, bool btf)
{
	struct task_struct *me;
	struct task_state *ts;
	struct pending_wait *p;
	struct ilock_stats *s;
	u64 now, ns, *spin;
	u8 class;

	spin = this_cpu_spinning();
	if (spin && *spin == (u64)lock) {
		*spin = 0;
		return 0;
	}
	if (cfg_wait_one_in > 1 && !*(volatile u32 *)&timed_in_flight[rate_slot((u64)lock)])
		return 0;
	me = bpf_get_current_task_btf();
	ts = bpf_task_storage_get(&task_states, me, 0, 0);
	/*
	 * With storage and no wait kept, begin saw this wait and let it go
	 * (another lock type, or an inode the filters drop): every storage is
	 * made by the thread itself while it runs, and userspace attaches
	 * contention_begin before any program that makes storage, so a
	 * thread with storage began its current wait under our begin. Only
	 * a thread without storage may have begun before we attached: only
	 * its end pays for classifying the lock again, to count that loss.
	 */
	if (!ts) {
		struct inode *inode;
		struct ilock_key k;

		/* a wait the sampler left out looks the same: not counted then */
		if (cfg_wait_one_in > 1 || !task_selected(pid_tgid_of(me)))
			return 0;
		inode = classify_lock(lock, &class, KFAST(btf));
		if (!inode)
			return 0;
		fill_key(&k, inode, class, ILOCK_MODE_SHARED, KFAST(btf));
		if (inode_selected(&k, inode, KFAST(btf)))
			count(ILOCK_LOST_END_NO_BEGIN);
		return 0;
	}
	p = &ts->wait;
	/* nothing kept, or a nested wait on another lock (the rwsem's wait_lock) */
	if (p->lock != (u64)lock)
		return 0;

	now = bpf_ktime_get_ns();
	ns = now - p->start_ns;
	count(ILOCK_EV_WAIT);
	s = slot_after_key(slot_at(&wait_slots, p->wait_slot), sizeof(p->key));
	if (s)
		stats_add_w(s, ns, p->weight);
	ops_wait_end(ts, p, me, ns);
	hold_starts_now(p, now);
	timed_ends(p->lock);
	p->lock = 0;
	return 0;
}

SEC("tp_btf/contention_begin")
int BPF_PROG(contention_begin_btf, void *lock, unsigned int flags)
{
	BENCH_IDLE_RETURN();
	return on_begin_ctx(ctx, lock, flags, true);
}

SEC("raw_tp/contention_begin")
int BPF_PROG(contention_begin_raw, void *lock, unsigned int flags)
{
	BENCH_IDLE_RETURN();
	return on_begin_ctx(ctx, lock, flags, false);
}

SEC("tp_btf/contention_end")
int BPF_PROG(contention_end_btf, void *lock, int ret)
{
	BENCH_IDLE_RETURN();
	return on_end(lock, true);
}

SEC("raw_tp/contention_end")
int BPF_PROG(contention_end_raw, void *lock, int ret)
{
	BENCH_IDLE_RETURN();
	return on_end(lock, false);
}

/*
 * Kernels without lock:contention_* (they came in 5.19 with "locking/rwsem:
 * Add lock contention tracepoints"): the rw_semaphore slow paths, same
 * bodies. fentry/fexit where BPF trampolines work, kprobes otherwise;
 * userspace picks one and names the function as this kernel spells it.
 * Entering a slow path is not always a sleep (a reader may steal the lock
 * first), so a few sub-microsecond "waits" may be counted that the
 * tracepoints would not see.
 */
SEC("?fentry/rwsem_down_read_slowpath")
int BPF_PROG(slow_read_begin_fentry, struct rw_semaphore *sem)
{
	BENCH_IDLE_RETURN();
	return on_begin(sem, ILOCK_LCB_F_READ);
}

SEC("?fexit/rwsem_down_read_slowpath")
int BPF_PROG(slow_read_end_fexit, struct rw_semaphore *sem)
{
	BENCH_IDLE_RETURN();
	return on_end(sem, false);
}

SEC("?fentry/rwsem_down_write_slowpath")
int BPF_PROG(slow_write_begin_fentry, struct rw_semaphore *sem)
{
	BENCH_IDLE_RETURN();
	return on_begin(sem, ILOCK_LCB_F_WRITE);
}

SEC("?fexit/rwsem_down_write_slowpath")
int BPF_PROG(slow_write_end_fexit, struct rw_semaphore *sem)
{
	BENCH_IDLE_RETURN();
	return on_end(sem, false);
}

/*
 * A kretprobe sees only the return value: the semaphore on success, an
 * ERR_PTR when a killable wait was interrupted; then the lock this thread
 * began waiting for is the one that ended.
 */
static __always_inline int on_end_ret(void *ret)
{
	struct task_state *ts;

	if ((unsigned long)ret >= (unsigned long)-4095L) {
		ts = bpf_task_storage_get(&task_states, bpf_get_current_task_btf(), 0, 0);
		ret = ts ? (void *)ts->wait.lock : NULL;
		if (!ret)
			return 0;
	}
	return on_end(ret, false);
}

SEC("?kprobe/rwsem_down_read_slowpath")
int BPF_KPROBE(slow_read_begin_kprobe, struct rw_semaphore *sem)
{
	BENCH_IDLE_RETURN();
	return on_begin(sem, ILOCK_LCB_F_READ);
}

SEC("?kretprobe/rwsem_down_read_slowpath")
int BPF_KRETPROBE(slow_read_end_kretprobe, void *ret)
{
	BENCH_IDLE_RETURN();
	return on_end_ret(ret);
}

SEC("?kprobe/rwsem_down_write_slowpath")
int BPF_KPROBE(slow_write_begin_kprobe, struct rw_semaphore *sem)
{
	BENCH_IDLE_RETURN();
	return on_begin(sem, ILOCK_LCB_F_WRITE);
}

SEC("?kretprobe/rwsem_down_write_slowpath")
int BPF_KRETPROBE(slow_write_end_kretprobe, void *ret)
{
	BENCH_IDLE_RETURN();
	return on_end_ret(ret);
}

/*
 * The XFS fault sources; the other op sources are in ops.bpf.c. Faults
 * cannot be read from a syscall. These fire before the MMAPLOCK is taken,
 * so a waiting faulter is known at once; the offset is not given. They are
 * here because they read the thread's registers through bpf_rdonly_cast
 * (fault_sysnr), and the linker of bpftool 7.1 / libbpf 1.1 takes that
 * kfunc in one object only ("failed to resolve size of underlying type").
 */
/* A page fault: no byte range, but the "syscall" (the fault) is recorded. */
static __always_inline int on_xfs_fault(struct xfs_inode *ip, u8 op)
{
	if (ip)  /* maybe-NULL tp_btf argument on 6.12 */
		set_op_r(&ip->i_vnode, op, 0, 0, 0, -1, false, SYSNR_FAST);
	return 0;
}

SEC("tp_btf/xfs_read_fault")
int BPF_PROG(op_xfs_read_fault, struct xfs_inode *ip)
{
	BENCH_IDLE_RETURN();
	return on_xfs_fault(ip, ILOCK_OP_FAULT);
}

SEC("tp_btf/xfs_write_fault")
int BPF_PROG(op_xfs_write_fault, struct xfs_inode *ip)
{
	BENCH_IDLE_RETURN();
	return on_xfs_fault(ip, ILOCK_OP_PAGE_MKWRITE);
}
