/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the waiter and the holder of a contended inode lock were doing
 * (docs/ranges.md), worked out at contention_begin, on the slow path only,
 * and the aggregation of a finished wait by operation, range class and
 * kernel stack.
 *
 * Two sources per task, merged:
 *  - its syscall and arguments, from the user registers saved at kernel
 *    entry, the fd resolved through the task's fd table and kept only if
 *    it is the lock's inode (opdecode.bpf.h);
 *  - the last I/O tracepoint it hit (struct cur_op, set by ops.bpf.c),
 *    trusted only for the same inode under the same syscall number.
 * A waiter whose op neither tells is paired up later, when its next I/O
 * tracepoint fires (most fire right after the lock is taken).
 */
#ifndef ILOCK_OPVIEW_BPF_H
#define ILOCK_OPVIEW_BPF_H

#include "ilock.bpf.h"
#include "inode.bpf.h"

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

#define ILOCK_PF_EXITING 0x00000004U    /* include/linux/sched.h */
#define ILOCK_PF_IO_WORKER 0x00000010U
#define ILOCK_PF_KTHREAD 0x00200000U
#define ILOCK_SYSNR_KERNEL (-2)         /* kernel and io_uring worker threads */
#define ILOCK_SYSNR_UNSET (-3)          /* an I/O event: check by position, not number */

/* fallocate modes (include/uapi/linux/falloc.h) */
#define ILOCK_FALLOC_KEEP_SIZE 0x01
#define ILOCK_FALLOC_PUNCH_HOLE 0x02
#define ILOCK_FALLOC_COLLAPSE_RANGE 0x08
#define ILOCK_FALLOC_ZERO_RANGE 0x10
#define ILOCK_FALLOC_INSERT_RANGE 0x20

#define RESOLVE_CUR 1U   /* the current task: its user memory is readable */
#define RESOLVE_FAST 2U  /* KFAST: kernel objects load through kcast */

static __always_inline struct pt_regs___ilock *task_regs(struct task_struct *task)
{
	return (struct pt_regs___ilock *)bpf_task_pt_regs(task);
}

/*
 * The current thread's saved user registers' address, as a number. It is
 * the thread's own for its life, so it is found through bpf_task_pt_regs()
 * once (a helper call, ~30 ns more than a load here, docs/PERFORMANCE.md)
 * and kept in *cache, a slot of this thread's (0: not found yet). After
 * that the registers cost one load through bpf_rdonly_cast (regs_at()),
 * and no helper call at all.
 */
static __always_inline u64 my_regs_addr(struct task_struct *me, u64 *cache)
{
	u64 addr = *cache;

	if (!addr) {
		/* a pointer becomes a number only as a difference of two */
		u64 off = (u64)bpf_task_pt_regs(me) - (u64)me;

		barrier_var(off);
		addr = bpf_get_current_task() + off;
		*cache = addr;
	}
	return addr;
}

/* Registers at a plain address (KFAST only). */
static __always_inline struct pt_regs___ilock *regs_at(u64 addr)
{
	return kcast(addr, struct pt_regs___ilock);
}

/*
 * Another task's user registers' address, from mine (my_regs: the current
 * task's, as a number). bpf_task_pt_regs() wants a trusted task, which
 * costs a counted reference (bpf_task_from_pid, ~170 ns here). The
 * registers sit at the same offset from every task's stack page
 * (task_pt_regs()), so the current task's tell where.
 */
static __always_inline u64 other_regs(struct task_struct *task, struct task_struct *me,
				      u64 my_regs)
{
	u64 stack_from_mine;

	if (!task->stack)
		return 0;
	/*
	 * The verifier turns pointers into numbers only as differences:
	 * `stack` loads as a pointer on recent kernels and as a number on
	 * older ones such as 6.12, and the difference is a number either way.
	 */
	stack_from_mine = (u64)task->stack - (u64)me->stack;
	barrier_var(stack_from_mine);
	return my_regs + stack_from_mine;
}

/* A snapshot of thread tid's op (it may be changing it now). False: none. */
static __always_inline bool op_snapshot(u32 tid, struct cur_op *st)
{
	struct cur_op *o = op_of(tid);

	if (!o)
		return false;
	__builtin_memcpy(st, o, sizeof(*st));
	return st->tid == tid;
}

/* FNV-1a over the frames: the key of a holder stack. */
static __always_inline u64 frames_hash(const struct ilock_stack_frames *f)
{
	u64 h = 1469598103934665603ULL;

	for (int i = 0; i < ILOCK_STACK_DEPTH; i++) {
		if ((u32)i >= f->nr)
			break;
		h = (h ^ f->ip[i]) * 1099511628211ULL;
	}
	return h ? h : 1;
}

/*
 * A sleeping holder's stack, at most once per (lock, holder) per
 * cfg_holder_stack_ns. `task` is the holder through kcast; only an unwind
 * takes the counted reference bpf_get_task_stack() needs.
 */
static __always_inline void sample_holder_stack(struct task_struct *task, struct task_state *ts,
						struct pending_wait *p, u64 now)
{
	struct ilock_stack_frames *f;
	struct holder_sample *hs;
	struct task_struct *t;
	u32 zero = 0, slot;
	long n;
	u64 h;

	for (int i = 0; i < ILOCK_SAMPLE_SLOTS; i++) {
		hs = &ts->samples[i];
		if (hs->inode == p->inode && hs->class == p->key.class &&
		    hs->holder_pid == p->holder_pid && now - hs->ns < cfg_holder_stack_ns)
			return;
	}
	slot = ts->next_sample++ & (ILOCK_SAMPLE_SLOTS - 1);
	hs = &ts->samples[slot];
	hs->inode = p->inode;
	hs->class = p->key.class;
	hs->holder_pid = p->holder_pid;
	hs->ns = now;
	if (task->__state == 0) {
		/* on a CPU (or about to be): its stack is not ours to take */
		count(ILOCK_EV_HOLDER_RUNNING);
		return;
	}
	/*
	 * Unwinding another task costs microseconds, inside the rwsem's
	 * wait_lock for a waiting writer: past the per-CPU budget, skip.
	 */
	{
		struct stack_budget *b = bpf_map_lookup_elem(&stack_budget, &zero);

		if (!b)
			return;
		if (now - b->window_ns >= 1000000000ULL) {
			b->window_ns = now;
			b->taken = 0;
		}
		if (b->taken >= cfg_holder_stacks_cpu_sec) {
			count(ILOCK_EV_HOLDER_STACK_SKIPPED);
			return;
		}
		b->taken++;
	}
	f = bpf_map_lookup_elem(&frames_scratch, &zero);
	if (!f || !bpf_task_from_pid)
		return;
	t = bpf_task_from_pid(p->holder_pid);
	if (!t) {
		count(ILOCK_LOST_HOLDER_GONE);
		return;
	}
	if ((u64)t != p->holder_task) {
		/* the holder exited and its pid was reused */
		count(ILOCK_LOST_HOLDER_GONE);
		bpf_task_release(t);
		return;
	}
	n = bpf_get_task_stack(t, f->ip, sizeof(f->ip), 0);
	bpf_task_release(t);
	if (n <= 0) {
		count(ILOCK_LOST_HOLDER_STACK);
		return;
	}
	f->nr = (u32)n / sizeof(u64);
	f->pad = 0;
	h = frames_hash(f);
	if (bpf_map_update_elem(&holder_frames, &h, f, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&holder_frames, &h)) {
		count(ILOCK_LOST_HOLDER_STACK);
		return;
	}
	count(ILOCK_EV_HOLDER_STACK);
	p->holder_stack = h;
}

/*
 * The waiter's stack. Unwinding costs about a microsecond, and a thread
 * that waits again on the same lock, in the same mode, for the same kind
 * of operation almost always comes down the same path: within
 * cfg_stack_reuse_ns it reuses the stack it took then.
 */
static __always_inline void waiter_stack(void *ctx, struct task_state *ts, struct pending_wait *p,
					 u64 now)
{
	struct last_stack *ls;
	int old = 0;

	for (int i = 0; i < ILOCK_STACK_SLOTS; i++) {
		ls = &ts->stacks[i];
		if (ls->id >= 0 && ls->ns && ls->inode == p->inode && ls->class == p->key.class &&
		    ls->mode == p->key.mode && ls->op == p->wop.op &&
		    now - ls->ns < cfg_stack_reuse_ns) {
			p->waiter_stack = ls->id;
			count(ILOCK_EV_STACK_REUSED);
			return;
		}
		if (ls->ns < ts->stacks[old & (ILOCK_STACK_SLOTS - 1)].ns)
			old = i;
	}
	p->waiter_stack = bpf_get_stackid(ctx, &stack_traces, 0);
	if (p->waiter_stack < 0)
		count(ILOCK_LOST_STACK);
	ls = &ts->stacks[old & (ILOCK_STACK_SLOTS - 1)];
	ls->inode = p->inode;
	ls->class = p->key.class;
	ls->mode = p->key.mode;
	ls->op = p->wop.op;
	ls->ns = now;
	ls->id = p->waiter_stack;
}

/* opdecode.bpf.h (lockwait.bpf.c only): one side's op from its syscall */
int resolve_op(u64 task, u32 how, u64 regs, const struct cur_op *st, struct pending_wait *p);

/*
 * Does the writer named at the wait's start still own the lock? Reading what
 * it does takes time (its registers, its fd table, a stack unwind), and a
 * writer may let go meanwhile and go on to its next call: a writer whose
 * next call is a read would read as "buffered-read, exclusive", and one
 * whose vCPU the host stops, as whatever it does milliseconds later. The
 * owner word is on the line the slow path has just used: one load.
 */
static __always_inline bool holder_moved_on(void *lock, const struct pending_wait *p)
{
	unsigned long owner;

	if (p->holder_mode != ILOCK_MODE_EXCL)
		return false;  /* a reader's hint or the queue's head: nothing to check */
	owner = kcast(lock, struct rw_semaphore)->owner.counter;
	/* READER_OWNED too: a writer that let go and read names itself as the last reader */
	return (owner & RWSEM_READER_OWNED) || (owner & ~RWSEM_OWNER_FLAGS_MASK) != p->holder_task;
}

/*
 * At contention_begin, after read_holder(): the holder's op and stack (a
 * counted reference to it only for an unwind), then the waiter's op and
 * stack. The holder first: it is the one that moves on. ctx is the program's
 * context (NULL where stacks cannot be taken); btf says whether task
 * kfuncs may be called (tp_btf, not raw_tp). now is the wait's start, read
 * once: a clock read costs ~67 ns on this VM. me is the current task,
 * asked for once by the caller; lock, the rw_semaphore.
 */
static __always_inline void ops_wait_begin(void *ctx, bool btf, struct task_state *ts,
					   struct pending_wait *p, struct inode *inode,
					   struct task_struct *me, void *lock, u64 now)
{
	u32 fast = KFAST(btf) ? RESOLVE_FAST : 0;
	u64 regs = 0;

	p->inode = (u64)inode;
	p->wop.op = p->hop.op = ILOCK_OP_UNKNOWN;
	p->wop.flags = p->hop.flags = 0;
	p->holder_stack = 0;
	p->waiter_stack = -1;
	if (!cfg_ops)
		return;
	if (fast) {
		/* both sides' registers are found from mine, kept in my task storage */
		regs = my_regs_addr(me, &ts->regs);
		/* resolve_op() takes numbers: my address, kept too, spares it a helper call */
		if (!ts->self)
			ts->self = bpf_get_current_task();
	}
	/* bpf_rdonly_cast came in 6.2: without it, no holder op or stack */
	if (fast && p->holder_task && p->holder_pid) {
		struct task_struct *h = kcast(p->holder_task, struct task_struct);
		struct cur_op st;

		if (h->flags & ILOCK_PF_EXITING) {
			count(ILOCK_LOST_HOLDER_GONE);
		} else {
			resolve_op(p->holder_task, fast, other_regs(h, me, regs),
				   op_snapshot(p->holder_pid, &st) ? &st : NULL, p);
			if (holder_moved_on(lock, p)) {
				count(ILOCK_LOST_HOLDER_MOVED_ON);
				p->hop.op = ILOCK_OP_UNKNOWN;
				p->hop.flags = 0;
			} else if (cfg_holder_stacks) {
				sample_holder_stack(h, ts, p, now);
				/* an unwind takes microseconds: the stack may be of its next call */
				if (p->holder_stack && holder_moved_on(lock, p)) {
					count(ILOCK_LOST_HOLDER_MOVED_ON);
					p->holder_stack = 0;
				}
			}
		}
	}
	resolve_op(fast ? ts->self : 0, RESOLVE_CUR | fast, regs, op_of(me->pid), p);
	if (ctx && cfg_waiter_stacks)
		waiter_stack(ctx, ts, p, now);
}

static __always_inline void add_stack(const struct ilock_edge_key *ek, u64 stack, u8 kind, u64 ns,
				      u64 w)
{
	struct ilock_stack_key sk = { .edge = *ek, .stack = stack, .kind = kind };
	struct ilock_stack_stats *st;

	st = lookup_or_init(&stack_waits, &sk, &zero_stack, ILOCK_LOST_STACK_MAP_FULL);
	if (!st)
		return;
	__sync_fetch_and_add(&st->count, w);
	__sync_fetch_and_add(&st->total_ns, ns * w);
}

/* The pair key of wait p, whose waiter is me, without ops (edge_key_ops). */
static __always_inline void edge_key_of(struct ilock_edge_key *ek, const struct pending_wait *p,
					struct task_struct *me)
{
	__builtin_memset(ek, 0, sizeof(*ek));
	ek->ino = p->key.ino;
	ek->dev = p->key.dev;
	ek->gen = p->key.gen;
	ek->class = p->key.class;
	ek->holder_mode = p->holder_mode;
	ek->waiter_mode = p->key.mode;
	ek->holder_pid = p->holder_pid;
	ek->holder_tgid = p->holder_tgid;
	ek->waiter_pid = me->pid;
	ek->waiter_tgid = me->tgid;
	__builtin_memcpy(ek->holder_comm, p->holder_comm, sizeof(ek->holder_comm));
	/* NUL-padded (strscpy_pad), so two loads, not a helper call that copies */
	__builtin_memcpy(ek->waiter_comm, me->comm, sizeof(ek->waiter_comm));
}

/*
 * What each side did, and how their byte ranges met, in the pair key. The
 * per-lock range classes are not kept apart: userspace adds them up from
 * the pairs, whose keys carry the class (snap_ranges_from_edges).
 */
static __always_inline void edge_key_ops(struct ilock_edge_key *ek, const struct ilock_op_info *hop,
					 const struct ilock_op_info *wop)
{
	ek->holder_op = hop->op;
	ek->holder_op_flags = hop->flags & ILOCK_OPF_KEY_MASK;
	ek->waiter_op = wop->op;
	ek->waiter_op_flags = wop->flags & ILOCK_OPF_KEY_MASK;
	ek->range = ilock_pair_range(hop, wop, ek->holder_mode, ek->waiter_mode);
}

/* A wait's stacks, on pair ek (es: its stats; NULL when the pair map was full). */
static __always_inline void pair_stacks(const struct ilock_edge_key *ek, struct ilock_edge_stats *es,
					u64 ns, u64 holder_stack, s64 waiter_stack, u32 w)
{
	if (!cfg_ops)
		return;
	if (waiter_stack >= 0 && !(es && edge_wstack_add(es, (u64)waiter_stack, ns, w)))
		add_stack(ek, (u64)waiter_stack, ILOCK_STACK_WAITER, ns, w);
	if (holder_stack)
		add_stack(ek, holder_stack, ILOCK_STACK_HOLDER, ns, w);
}

/* Everything keyed by what the waiter did: the pair with its ops and range class, stacks. */
static __always_inline void account_wait(struct ilock_edge_key *ek, const struct ilock_op_info *hop,
					 const struct ilock_op_info *wop, u64 ns, u64 holder_stack,
					 s64 waiter_stack, u32 w)
{
	edge_key_ops(ek, hop, wop);
	pair_stacks(ek, edge_add(ek, ns, w), ns, holder_stack, waiter_stack, w);
}

/*
 * At contention_begin, once both sides' ops are known: the pair's slot,
 * found now and kept by number (wait_slot_of(): why). Under --ops io a
 * waiter whose op is not known yet is paired at its next I/O event instead.
 */
static __always_inline void pair_find(struct pending_wait *p, struct task_struct *me)
{
	edge_key_of(&p->ek, p, me);
	p->edge_found = 0;
	p->edge_slot = 0;
	if (cfg_ops && cfg_ops_io && p->wop.op == ILOCK_OP_UNKNOWN)
		return;
	edge_key_ops(&p->ek, &p->hop, &p->wop);
	p->edge_slot = edge_slot_of(&p->ek);
	p->edge_found = 1;
}

/* Pair up a deferred wait with the op its waiter (whose op slot is o) turned out to do. */
static __always_inline void finish_deferred(struct task_state *ts, struct cur_op *o,
					    const struct ilock_op_info *wop)
{
	struct deferred_wait *d = &ts->deferred;

	if (o)
		o->late = 0;
	if (!d->active)
		return;
	d->active = 0;
	count(wop->op == ILOCK_OP_UNKNOWN ? ILOCK_EV_OP_NEVER : ILOCK_EV_OP_DEFER_DONE);
	account_wait(&d->ek, &d->hop, wop, d->ns, d->holder_stack, d->waiter_stack, d->weight);
}

/* The op of the deferred waiter from an I/O tracepoint on `inode`, now in o. */
static __always_inline void op_seen(struct task_state *ts, struct cur_op *o, u64 inode)
{
	struct ilock_op_info w = o->info;

	w.flags |= ILOCK_OPF_LATE;
	finish_deferred(ts, o, ts->deferred.inode == inode ? &w : &zero_op);
}

/*
 * At contention_end: the pair, with ops and ranges, in the slot found at
 * begin; its key, for the stacks, from the pending wait, not the slot's
 * line. A pair map found full at begin (counted then) still counts stacks.
 */
static __always_inline void ops_wait_end(struct task_state *ts, const struct pending_wait *p,
					 struct task_struct *me, u64 ns)
{
	struct ilock_edge_stats *es;
	struct cur_op *o;

	if (p->edge_found) {
		es = slot_after_key(slot_at(&edge_slots, p->edge_slot), sizeof(p->ek));
		if (es)
			edge_stats_add(es, ns, p->weight);
		pair_stacks(&p->ek, es, ns, p->holder_stack, p->waiter_stack, p->weight);
		return;
	}
	/*
	 * The waiter's op is not known yet (--ops io): one deferred wait per
	 * thread, an older one never got its op. Only the I/O events of
	 * --ops io fire after the lock is taken; without them no op would come
	 * to a deferred wait, which would sit in task storage, unreported,
	 * until the thread's next one.
	 */
	o = op_claim(me->pid);
	finish_deferred(ts, o, &zero_op);
	count(ILOCK_EV_OP_DEFERRED);
	ts->deferred.ek = p->ek;
	ts->deferred.hop = p->hop;
	ts->deferred.inode = p->inode;
	ts->deferred.ns = ns;
	ts->deferred.holder_stack = p->holder_stack;
	ts->deferred.waiter_stack = p->waiter_stack;
	ts->deferred.weight = p->weight;
	ts->deferred.active = 1;
	if (o)
		o->late = 1;
}

/*
 * The current thread's syscall number, for a fault source (set_op_r), with
 * the registers' address kept in its op slot (op_claim() forgets it when
 * another thread takes the slot). 6.1 has no bpf_rdonly_cast: the helper.
 */
static __always_inline s64 fault_sysnr(struct task_struct *me, struct cur_op *o)
{
	if (!KFAST(true))
		return task_regs(me)->orig_ax;
	return regs_at(my_regs_addr(me, &o->regs))->orig_ax;
}

/* -D: an op source's inode on another device is none of ours. */
static __always_inline bool op_dev_dropped(struct inode *inode)
{
	return cfg_dev && inode->i_sb->s_dev != cfg_dev;
}

/* How an op source records the syscall number (cur_op.sysnr). */
enum sysnr_read {
	SYSNR_NONE,    /* I/O events: readers check the position instead */
	SYSNR_HELPER,  /* bpf_task_pt_regs() */
	SYSNR_FAST,    /* fault_sysnr(): only where bpf_rdonly_cast links (lockwait.bpf.c) */
};

static __always_inline struct cur_op *set_op_r(struct inode *inode, u8 op, u8 flags, u64 pos,
					      u64 len, s64 isize, bool ranged,
					      enum sysnr_read with_sysnr)
{
	struct task_struct *me = bpf_get_current_task_btf();
	struct task_state *ts;
	struct cur_op *o;

	/* no event counter here: bpf_stats' run_cnt counts these, for free */
	if (op_dev_dropped(inode))
		return NULL;
	o = op_claim(me->pid);
	if (!o)
		return NULL;
	o->inode = (u64)inode;
	/*
	 * Which syscall this op belongs to, for readers to compare with the
	 * live one. Reading the user registers costs a load here once a
	 * thread's offset is known (fault_sysnr), 35 ns through the helper
	 * (docs/PERFORMANCE.md), so the I/O events leave it unset and readers
	 * check them against the decoded syscall's position instead; only
	 * the fault events, which no syscall explains, pay for it.
	 */
	if (me->flags & (ILOCK_PF_KTHREAD | ILOCK_PF_IO_WORKER))
		o->sysnr = ILOCK_SYSNR_KERNEL;
	else if (with_sysnr == SYSNR_FAST)
		o->sysnr = fault_sysnr(me, o);
	else if (with_sysnr == SYSNR_HELPER)
		o->sysnr = task_regs(me)->orig_ax;
	else
		o->sysnr = ILOCK_SYSNR_UNSET;
	o->pos = pos;
	o->info.op = op;
	o->info.flags = flags;
	if (ranged)
		ilock_op_set_range(&o->info, pos, len, isize < 0 ? ILOCK_RANGE_EOF : (u64)isize);
	if (o->late) {
		/* a deferred wait (in task storage) waits for this op */
		ts = bpf_task_storage_get(&task_states, me, 0, 0);
		if (ts)
			op_seen(ts, o, (u64)inode);
		else
			o->late = 0;
	}
	return o;
}

#endif /* ILOCK_OPVIEW_BPF_H */
