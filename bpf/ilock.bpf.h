/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Declarations shared by ilock's BPF objects. Maps and configuration are
 * defined once in maps.bpf.c and linked into every object with
 * `bpftool gen object`; the other objects see them as externs.
 */
#ifndef ILOCK_BPF_H
#define ILOCK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "ilock.h"

/* Default sizes; userspace resizes with bpf_map__set_max_entries(). */
#define ILOCK_DEF_LOCKS   16384
#define ILOCK_DEF_EDGES   16384
#define ILOCK_DEF_INODES  16384
#define ILOCK_DEF_STACKS  16384

/*
 * Per-thread state lives in task-local storage: a thread waits for one lock
 * at a time and holds a handful, and the storage is found through the task
 * itself, far cheaper than a hash (or LRU) map keyed by thread id.
 */

/* The wait between contention_begin and contention_end; lock == 0: none. */
struct pending_wait {
	u64 lock;
	u64 start_ns;
	struct ilock_key key;
	u64 xfs_ip;          /* owning xfs_inode, 0 when not XFS */
	u32 holder_pid;
	u32 holder_tgid;
	u8 holder_mode;
	char holder_comm[ILOCK_COMM_LEN];
	/* operations and stacks (opview.bpf.h) */
	u64 inode;           /* struct inode * of the lock */
	u64 holder_task;     /* struct task_struct * from the owner field; 0: none */
	struct ilock_op_info wop, hop;
	u64 holder_stack;    /* hash of the holder's frames; 0: none */
	s64 waiter_stack;    /* stack map id; < 0: none */
	u32 weight;          /* waits this one stands for: 1, or the wait sampling rate */
	u32 wait_slot;       /* the wait's slot number + 1, found at begin; 0: none */
	u32 edge_slot;       /* the pair's, when edge_found */
	u8 edge_found;       /* the pair's slot was looked for at begin (ops known then) */
	/*
	 * The pair's key, when edge_found. Built here, not on the stack: 6.1
	 * counts contention_begin's stack with the decoder's it calls, and
	 * 72 more bytes took them past 512.
	 */
	struct ilock_edge_key ek;
};

/* Inode rwsems this thread holds (--holds=all: rwsem_hold.bpf.c). */
#define ILOCK_HOLD_SLOTS 8

struct hold_slot {
	u64 ip;              /* 0: free slot */
	u64 start_ns;
	u8 class;
	u8 mode;
	u8 nowait;           /* from xfs_ilock_nowait: may never have been taken */
};

/*
 * XFS holds being timed, from xfs_ilock to xfs_iunlock, in one table for
 * all threads: bucket = hash(task, inode, class), two 32-byte entries each.
 * Found from the task pointer and the inode alone, so the xfs_iunlock of a
 * hold that is not being timed (sampled out) costs a load and a compare,
 * not a task-storage lookup (xfs_hold.bpf.c). Keyed by dev and ino, not by
 * the xfs_inode pointer: a trusted tp_btf pointer cannot be hashed.
 */
#define ILOCK_HOLD_BUCKETS 4096
#define ILOCK_HOLD_WAYS 2

struct hold_entry {
	u64 task;            /* struct task_struct *; 0: free */
	u64 ino;
	u64 start_ns;
	u32 dev;
	u16 weight;          /* acquisitions this one stands for: 1, or the sampling rate */
	u8 class;
	u8 mode : 4;
	u8 nowait : 1;       /* from xfs_ilock_nowait: may never have been taken */
};

struct hold_bucket {
	struct hold_entry e[ILOCK_HOLD_WAYS];
};

/*
 * The hold sampler: a token bucket per CPU and inode (by hash), so one hot
 * file cannot use up another's: every acquisition is timed while its
 * bucket has tokens (cfg_hold_tokens_per_jiffy more each jiffy, kept up to
 * cfg_hold_burst), then one in cfg_hold_one_in, weighted by that rate.
 */
#define ILOCK_HOLD_RATE_SLOTS 1024

struct hold_rate {
	u32 jiffy;           /* of the last refill, low 32 bits */
	u32 tokens;
	u32 skip;
	u32 pad;
};

/* Per CPU: the sweep of stale hold entries (xfs_hold.bpf.c), and jiffies as last read (sample_weight). */
struct hold_sweeper {
	u32 next;            /* the next bucket to look in */
	u32 nowait_bucket;   /* + 1: the bucket of this CPU's last trylock; 0: none */
	u32 jiffy;           /* low 32 bits; 0: not read yet */
	u32 reads;           /* events out of tokens, for reading jiffies every 8th */
};

/*
 * What a thread is doing, from the last I/O tracepoint it hit. Never
 * cleared on the hot path: readers check it still describes the same
 * syscall (sysnr) on the same inode before they trust it. One slot per
 * thread id modulo ILOCK_OP_SLOTS in op_table, not task storage: the I/O
 * events that set it fire on every I/O, and an array slot costs them a
 * load where a task-storage lookup costs ~50 ns here. Threads whose ids
 * are equal modulo 16384 share a slot (op_slot_shared counts it).
 */
#define ILOCK_OP_SLOTS 16384

struct cur_op {
	u64 inode;           /* struct inode *; 0: none */
	s64 sysnr;           /* regs->orig_ax when set; -2 in kernel threads */
	u64 pos;             /* the position the tracepoint saw */
	struct ilock_op_info info;
	u32 tid;             /* whose op; 0: free */
	u8 late;             /* a deferred wait waits for this op (deferred.active) */
	u64 regs;            /* tid's saved user registers' address; 0: not found yet */
};

/* A finished wait whose waiter op comes with its next I/O tracepoint. */
struct deferred_wait {
	struct ilock_edge_key ek;
	struct ilock_op_info hop;
	u64 inode;
	u64 ns;
	u64 holder_stack;
	s64 waiter_stack;
	u32 weight;
	u8 active;
};

/*
 * The waiter stacks this thread took last, one per (lock, mode, op), each
 * reused for a while (opview.bpf.h): a thread that reads and writes the
 * same file keeps both paths.
 */
#define ILOCK_STACK_SLOTS 4

struct last_stack {
	u64 inode;
	u64 ns;
	s64 id;
	u8 class, mode, op;
};

/*
 * The holder stacks this thread sampled last, as the rate limit of one
 * sample per (lock, holder) per cfg_holder_stack_ns: looked up in the
 * waiter's own storage, not in a map, as contention_begin runs inside the
 * rwsem's wait_lock for writers.
 */
#define ILOCK_SAMPLE_SLOTS 16

struct holder_sample {
	u64 inode;
	u64 ns;
	u32 holder_pid;
	u32 class;
};

/*
 * The last commits of each ext4 journal, by device (jbd2.bpf.c), for the
 * fsyncs that wait on them; the walk of waits in progress reads them too.
 */
#define COMMIT_RING 8

struct commit {
	u32 tid;
	u32 pad;
	u64 start_ns;
	u64 end_ns;      /* 0: still committing */
};

struct journal_hist {
	u32 pid, tgid;   /* the jbd2 thread */
	u64 task;        /* ... its task_struct, for its state; read with probe reads */
	char comm[ILOCK_COMM_LEN];
	struct commit ring[COMMIT_RING];
};

/* tids wrap: a is at or before b */
static __always_inline bool tid_le(u32 a, u32 b)
{
	return (s32)(a - b) <= 0;
}

/*
 * The transaction an fsync must see on disk, read now: ext4_sync_file
 * reads it after writing the data back, which moves it on past the one
 * noted at ext4_sync_file_enter. The later of the two.
 */
static __always_inline u32 fsync_tid_now(struct inode *inode, u32 at_enter, bool datasync)
{
	void *ei;
	u32 tid = 0;
	long err;

	if (!bpf_core_type_exists(struct ext4_inode_info))
		return at_enter;
	ei = (void *)inode - bpf_core_field_offset(struct ext4_inode_info, vfs_inode);
	if (datasync)
		err = bpf_probe_read_kernel(&tid, sizeof(tid),
					    ei + bpf_core_field_offset(struct ext4_inode_info,
								       i_datasync_tid));
	else
		err = bpf_probe_read_kernel(&tid, sizeof(tid),
					    ei + bpf_core_field_offset(struct ext4_inode_info,
								       i_sync_tid));
	return !err && tid_le(at_enter, tid) ? tid : at_enter;
}

/* An ext4 fsync in progress, for its journal wait (jbd2.bpf.c). */
struct fsync_state {
	u64 inode;           /* 0: none */
	u64 start_ns;
	u32 tid;             /* the transaction it must see committed */
	u8 datasync;
};

struct task_state {
	struct pending_wait wait;
	struct hold_slot holds[ILOCK_HOLD_SLOTS];
	struct deferred_wait deferred;
	struct fsync_state fsync;
	struct last_stack stacks[ILOCK_STACK_SLOTS];
	struct holder_sample samples[ILOCK_SAMPLE_SLOTS];
	u32 next_sample;
	u32 noted_dev;       /* the inode note_inode() last found recorded */
	u64 noted_ino;
	u32 noted_gen;
	u64 regs;            /* my saved user registers' address; 0: not found yet (my_regs_addr) */
	u64 self;            /* my task_struct's address, as a number; 0: not asked yet */
};

/*
 * The aggregate maps allocate entries as they are first used: memory follows
 * the inodes actually seen, not --max-inodes. Only inserts pay for it.
 */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ILOCK_DEF_LOCKS);
	__type(key, struct ilock_key);
	__type(value, struct ilock_stats);
} stats_map_t;

/*
 * Waits and pairs: a hash from key to slot number, and the slots, which
 * userspace maps and reads directly. The slots are allocated whole at load
 * (an mmapable array cannot grow), the index as keys are first seen.
 */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ILOCK_DEF_LOCKS);
	__type(key, struct ilock_key);
	__type(value, u32);
} wait_index_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, ILOCK_DEF_LOCKS);
	__type(key, u32);
	__type(value, struct ilock_wait_slot);
} wait_slots_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ILOCK_DEF_EDGES);
	__type(key, struct ilock_edge_key);
	__type(value, u32);
} edge_index_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, ILOCK_DEF_EDGES);
	__type(key, u32);
	__type(value, struct ilock_edge_slot);
} edge_slots_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ILOCK_DEF_INODES);
	__type(key, struct ilock_inode_key);
	__type(value, struct ilock_inode_info);
} inode_map_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} task_state_map_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ILOCK_OP_SLOTS);
	__type(key, u32);
	__type(value, struct cur_op);
} op_table_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ILOCK_HOLD_BUCKETS);
	__type(key, u32);
	__type(value, struct hold_bucket);
} hold_table_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ILOCK_HOLD_RATE_SLOTS);
	__type(key, u32);
	__type(value, struct hold_rate);
} hold_rate_map_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct hold_sweeper);
} hold_sweeper_map_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ILOCK_COUNTER_MAX);
	__type(key, u32);
	__type(value, u64);
} counter_map_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, ILOCK_DEF_STACKS);
	__uint(key_size, sizeof(u32));
	__uint(value_size, ILOCK_STACK_DEPTH * sizeof(u64));
} stack_trace_map_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ILOCK_DEF_STACKS);
	__type(key, struct ilock_stack_key);
	__type(value, struct ilock_stack_stats);
} stack_waits_map_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ILOCK_DEF_STACKS);
	__type(key, u64);
	__type(value, struct ilock_stack_frames);
} frames_map_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ILOCK_DEF_INODES);
	__type(key, struct ilock_dio_key);
	__type(value, u64);
} dio_map_t;

/* A per-CPU cap on holder stacks: a second's start and how many so far. */
struct stack_budget {
	u64 window_ns;
	u64 taken;
};

typedef struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct stack_budget);
} budget_map_t;

/* Per-CPU room for one holder stack: 256 bytes would crowd the BPF stack. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct ilock_stack_frames);
} frames_scratch_t;

/* Scratch space for building a path: too big for the 512-byte stack. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct ilock_inode_info);
} scratch_map_t;

/* Each ext4 journal's last commits, by its device (jbd2.bpf.c). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, u32);
	__type(value, struct journal_hist);
} journal_map_t;

/* --cgroup: the one cgroup (v2) whose tasks, and its descendants', are traced. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} cgroup_filter_t;

extern wait_index_t wait_index SEC(".maps");
extern wait_slots_t wait_slots SEC(".maps");
extern stats_map_t lock_holds SEC(".maps");
extern edge_index_t edge_index SEC(".maps");
extern edge_slots_t edge_slots SEC(".maps");
extern inode_map_t inodes SEC(".maps");
extern task_state_map_t task_states SEC(".maps");
extern counter_map_t counters SEC(".maps");
extern scratch_map_t path_scratch SEC(".maps");
extern stack_trace_map_t stack_traces SEC(".maps");
extern stack_waits_map_t stack_waits SEC(".maps");
extern frames_map_t holder_frames SEC(".maps");
extern dio_map_t dio_writes SEC(".maps");
extern frames_scratch_t frames_scratch SEC(".maps");
extern budget_map_t stack_budget SEC(".maps");
extern hold_table_t hold_table SEC(".maps");
extern op_table_t op_table SEC(".maps");
extern hold_rate_map_t hold_rates SEC(".maps");
extern hold_sweeper_map_t hold_sweepers SEC(".maps");
/*
 * The wait sampler (--wait-sample): the same buckets, per CPU and lock
 * address by hash, so that it decides before the lock is classified.
 */
extern hold_rate_map_t wait_rates SEC(".maps");
extern journal_map_t journal_commits SEC(".maps");
extern cgroup_filter_t cgroup_filter SEC(".maps");

/* Filters and switches, set by userspace between open and load. */
extern const volatile __u32 cfg_tgid;          /* 0: any process */
extern const volatile __u32 cfg_comm_on;
extern const volatile __u32 cfg_cgroup_on;    /* cgroup_filter holds the --cgroup */
extern const volatile __u64 cfg_cgroup_id;    /* ... and its id, for tasks other than current */
extern const volatile char cfg_comm[ILOCK_COMM_LEN];
extern const volatile __u32 cfg_dev;           /* 0: any device */
extern const volatile __u64 cfg_ino;           /* 0: any inode */
extern const volatile __u32 cfg_fs_magic;      /* 0: any filesystem */
extern const volatile __u32 cfg_class_mask;    /* bit per class; 0: all */
extern const volatile __u32 cfg_resolve_paths;
extern const volatile __u32 cfg_ops;              /* resolve operations and ranges */
extern const volatile __u32 cfg_ops_io;           /* --ops io|all: ops from I/O events after the lock */
extern const volatile __u32 cfg_waiter_stacks;
extern const volatile __u32 cfg_holder_stacks;
extern const volatile __u64 cfg_holder_stack_ns;  /* one holder sample per pair per this */
extern const volatile __u32 cfg_dio_shared;       /* count shared direct writes too */
extern const volatile __u64 cfg_stack_reuse_ns;   /* a thread's waiter stack is reused this long */
extern const volatile __u32 cfg_holder_stacks_cpu_sec; /* cap on holder stacks per CPU and second */
extern const volatile __u32 cfg_wait_slots;       /* = wait_slots' max_entries */
extern const volatile __u32 cfg_edge_slots;       /* = edge_slots' max_entries */
extern const volatile __u32 cfg_xfs_holds;        /* the XFS hold programs are attached */
extern const volatile __u32 cfg_hold_one_in;      /* time 1 in this many holds over the budget */
extern const volatile __u32 cfg_hold_tokens_per_jiffy; /* hold tokens an inode gets a jiffy, per CPU */
extern const volatile __u32 cfg_hold_burst;       /* ... and keeps at most */
extern const volatile __u32 cfg_wait_one_in;      /* time 1 in this many waits over the budget */
extern const volatile __u32 cfg_wait_tokens_per_jiffy; /* wait tokens a lock gets a jiffy, per CPU */
extern const volatile __u32 cfg_wait_burst;       /* ... and keeps at most */

/* Slots handed out so far; userspace reads these to know how far to look. */
extern __u32 wait_slots_used;
extern __u32 edge_slots_used;
/* Slot number + 1 by hash of the key, in front of each index (slot_find). */
#define ILOCK_HINT_SLOTS 16384
extern __u32 wait_hints[ILOCK_HINT_SLOTS];
extern __u32 edge_hints[ILOCK_HINT_SLOTS];
/*
 * Entries in use in hold_table, in all and by hash of their task. While
 * the first is 0 no hold is being timed, and xfs_iunlock returns before it
 * reads the inode, the task or a bucket; while its task's count is 0 (a
 * trylock that failed elsewhere, say), before it reads a clock or a bucket.
 */
#define ILOCK_HOLD_TASK_SLOTS 1024
extern __u64 holds_timing;
extern __u32 holds_by_task[ILOCK_HOLD_TASK_SLOTS];

/*
 * When set, every program returns at once, as an empty one would. ilocktop
 * and the exporter attach a fresh tracer idle and hand over to it by
 * clearing this in it after setting it in the old one (tracer_set_idle(),
 * --renew).
 * scripts/bench/paired sets it through the map of its own section: under
 * one running workload and one attachment it can then switch ilock's work
 * off and on each second, and tell the cost of that work from the cost of
 * being attached at all.
 */
extern volatile __u32 bench_idle;
/* rw_semaphore.owner's low bits (kernel/locking/rwsem.c): the rest is a task */
#define RWSEM_READER_OWNED (1UL << 0)
#define RWSEM_OWNER_FLAGS_MASK 7UL

#define BENCH_IDLE_RETURN() do { if (bench_idle) return 0; } while (0)

extern const struct ilock_stats zero_stats;
extern const struct ilock_stack_stats zero_stack;
extern const struct ilock_op_info zero_op;

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/*
 * A bare kernel address (a lock's inode, the lock's owner, a file from an
 * fd table) as a typed, read-only pointer. Its loads are single
 * instructions the JIT guards (a bad address reads 0), where the same
 * loads through bpf_probe_read_kernel() are helper calls, about 34 ns each
 * on this project's VM (docs/PERFORMANCE.md). Kernel (vmlinux) types only.
 * KFAST: tp_btf programs on kernels with bpf_rdonly_cast (6.2); raw_tp and
 * 6.1 keep the probe reads. `btf` is a constant at each call site.
 */
#define kcast(ptr, type) ((type *)bpf_rdonly_cast((const void *)(ptr), bpf_core_type_id_kernel(type)))
#define KFAST(btf) ((btf) && bpf_rdonly_cast)

static __always_inline void count(enum ilock_counter c)
{
	u32 k = c;
	u64 *v = bpf_map_lookup_elem(&counters, &k);

	if (v)
		(*v)++;  /* per-CPU slot: no atomics needed */
}

/* me: the current task (bpf_get_current_task_btf()) */
static __always_inline struct task_state *my_state(struct task_struct *me)
{
	return bpf_task_storage_get(&task_states, me, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* The op slot of thread tid (shared with tids equal modulo ILOCK_OP_SLOTS). */
static __always_inline struct cur_op *op_slot(u32 tid)
{
	u32 k = tid & (ILOCK_OP_SLOTS - 1);

	return bpf_map_lookup_elem(&op_table, &k);
}

/* Thread tid's op, or NULL: none, or its slot holds another thread's. */
static __always_inline struct cur_op *op_of(u32 tid)
{
	struct cur_op *o = op_slot(tid);

	return o && o->tid == tid && tid ? o : NULL;
}

/* tid's slot for writing, taken over (and counted) from another thread's op. */
static __always_inline struct cur_op *op_claim(u32 tid)
{
	struct cur_op *o = op_slot(tid);

	if (o && o->tid != tid) {
		if (o->tid)
			count(ILOCK_LOST_OP_SLOT_SHARED);
		o->tid = tid;
		o->late = 0;
		o->regs = 0;
	}
	return o;
}

static __always_inline bool comm_matches(const char *comm)
{
	for (int i = 0; i < ILOCK_COMM_LEN; i++) {
		if (comm[i] != cfg_comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

/* bpf_get_current_pid_tgid()'s value from a task at hand: two loads, no helper call */
static __always_inline u64 pid_tgid_of(struct task_struct *t)
{
	return (u64)t->tgid << 32 | (u32)t->pid;
}

/*
 * Is any task filter set? Paths that would call a helper only to get
 * task_selected()'s argument ask this first.
 */
static __always_inline bool task_filters_on(void)
{
	return cfg_tgid || cfg_comm_on || cfg_cgroup_on;
}

/* Task filters first: they are the cheapest way to drop an event. */
static __always_inline bool task_selected(u64 pid_tgid)
{
	if (cfg_tgid && (u32)(pid_tgid >> 32) != cfg_tgid)
		return false;
	if (cfg_comm_on) {
		char comm[ILOCK_COMM_LEN];

		bpf_get_current_comm(comm, sizeof(comm));
		if (!comm_matches(comm))
			return false;
	}
	/* 1: under it; 0: not; < 0: no cgroup in the map, which userspace never leaves */
	if (cfg_cgroup_on && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	return true;
}

static __always_inline u32 inode_magic(struct inode *inode, bool fast)
{
	if (fast)
		return kcast(inode, struct inode)->i_sb->s_magic;
	return BPF_CORE_READ(inode, i_sb, s_magic);
}

static __always_inline bool inode_selected(const struct ilock_key *k, struct inode *inode,
					   bool fast)
{
	if (cfg_class_mask && !(cfg_class_mask & (1U << k->class)))
		return false;
	if (cfg_dev && k->dev != cfg_dev)
		return false;
	if (cfg_ino && k->ino != cfg_ino)
		return false;
	if (cfg_fs_magic && inode_magic(inode, fast) != cfg_fs_magic)
		return false;
	return true;
}

static __always_inline void fill_key(struct ilock_key *k, struct inode *inode, u8 class, u8 mode,
				     bool fast)
{
	if (fast) {
		struct inode *in = kcast(inode, struct inode);

		k->dev = in->i_sb->s_dev;
		k->ino = in->i_ino;
		k->gen = in->i_generation;
	} else {
		k->dev = BPF_CORE_READ(inode, i_sb, s_dev);
		k->ino = BPF_CORE_READ(inode, i_ino);
		k->gen = BPF_CORE_READ(inode, i_generation);
	}
	k->class = class;
	k->mode = mode;
	__builtin_memset(k->pad, 0, sizeof(k->pad));
}

/* Race-free creation: insert zeroes only if absent, then look up. */
static __always_inline void *lookup_or_init(void *map, const void *key, const void *zero,
					    enum ilock_counter lost)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(map, key);
	if (!v)
		count(lost);
	return v;
}

/* The stats in a slot; the barrier keeps clang from adding before the NULL check. */
static __always_inline void *slot_after_key(char *slot, u32 ksz)
{
	if (!slot)
		return NULL;
	barrier_var(slot);
	return slot + ksz;
}

/* Keys are whole 64-bit words (asserted in include/ilock.h) and padded with zeroes. */
static __always_inline u32 hint_of(const void *key, u32 ksz)
{
	const u64 *w = key;
	u64 h = 0;

	for (u32 i = 0; i < ksz / 8; i++)
		h = (h ^ w[i]) * 0x9E3779B97F4A7C15ULL;
	return (u32)(h >> 50) & (ILOCK_HINT_SLOTS - 1);
}

static __always_inline bool key_equal(const void *a, const void *b, u32 ksz)
{
	const u64 *x = a, *y = b;
	u64 d = 0;

	for (u32 i = 0; i < ksz / 8; i++)
		d |= x[i] ^ y[i];
	return !d;
}

/* key's slot number through the index, noted as its hint; false: not indexed */
static __always_inline bool index_find(void *index, const void *key, u32 *hint, u32 *n)
{
	u32 *idx = bpf_map_lookup_elem(index, key);

	if (!idx)
		return false;
	*n = *idx;
	*hint = *n + 1;
	return true;
}

/*
 * The slot of key in an index + slots pair (and its number, in *num),
 * made race-free when new: a slot number is claimed (fetch-add), the key
 * written into the slot, and only then does the index make the slot
 * findable, so a reader who sees a count in a slot also sees its key. A CPU that loses the insert race to
 * another one inserting the same key leaves its slot empty (count 0, which
 * readers skip) and uses the winner's. ksz is a constant after inlining;
 * the stats follow the key in both slot types.
 *
 * In front of the index, hints: by hash of the key, a slot number the
 * index gave out. A hint whose slot holds the key is a hit that touches
 * only the slot, whose lines the stats update needs anyway; the hash map
 * costs jhash over the key and its bucket's and element's lines besides
 * (for the 72-byte pair key, about 60 ns a wait's end under the seed
 * workload: docs/PERFORMANCE.md). Hints come from the index only, so they
 * never name a slot that lost an insert race, and a slot's key never
 * changes once written: a hint that matches is right, a stale or
 * overwritten one just sends us to the index.
 */
static __always_inline char *slot_find(void *index, void *slots, u32 *used, u32 limit,
				       const void *key, u32 ksz, enum ilock_counter lost,
				       u32 *hints, u32 *num)
{
	u32 *hint = &hints[hint_of(key, ksz)];
	u32 n = *hint;
	char *slot;

	if (n) {
		n--;
		slot = bpf_map_lookup_elem(slots, &n);
		if (slot && key_equal(slot, key, ksz))
			goto found;
	}
	if (index_find(index, key, hint, &n)) {
		slot = bpf_map_lookup_elem(slots, &n);
		goto found;
	}
	/* checked first so that a full map stops moving the counter */
	if (*(volatile u32 *)used >= limit)
		goto full;
	n = __sync_fetch_and_add(used, 1);
	/* a claim past limit is wasted, never reused: a slot's key never changes */
	if (n >= limit)
		goto full;
	slot = bpf_map_lookup_elem(slots, &n);  /* NULL when n >= max */
	if (!slot)
		goto full;
	__builtin_memcpy(slot, key, ksz);
	if (!bpf_map_update_elem(index, key, &n, BPF_NOEXIST)) {
		*hint = n + 1;
		goto found;
	}
	/* someone indexed it first, or the index is full */
	if (index_find(index, key, hint, &n) && (slot = bpf_map_lookup_elem(slots, &n)))
		goto found;
full:
	if (lost < ILOCK_COUNTER_MAX)  /* ILOCK_COUNTER_MAX: the caller tries again */
		count(lost);
	return NULL;
found:
	*num = n;
	return slot;
}

/*
 * A wait's slots are found at contention_begin and kept by number
 * (pending_wait.wait_slot, .edge_slot: the number + 1; 0: none, the loss
 * counted then), so that contention_end only adds to them. The end runs
 * with the lock taken: a key compared there reads a line the other CPUs
 * keep writing, inside the hold (docs/PERFORMANCE.md).
 */
static __always_inline u32 wait_slot_of(const struct ilock_key *k)
{
	struct ilock_key f;
	u32 n;

	/*
	 * As for pairs (edge_slot_of()): the last eighth of the table is for
	 * waits kept without their inode, so that a full table leaves every
	 * device's totals and histograms whole. A copy is folded: the wait
	 * itself (the walk of waits in progress reads it) keeps its inode.
	 */
	if (slot_find(&wait_index, &wait_slots, &wait_slots_used,
		      cfg_wait_slots - cfg_wait_slots / ILOCK_EDGE_FOLD_SHARE, k, sizeof(*k),
		      ILOCK_COUNTER_MAX, wait_hints, &n))
		return n + 1;
	f = *k;
	f.ino = ILOCK_INO_FOLDED;
	f.gen = 0;
	if (!slot_find(&wait_index, &wait_slots, &wait_slots_used, cfg_wait_slots, &f, sizeof(f),
		       ILOCK_LOST_WAIT_MAP_FULL, wait_hints, &n))
		return 0;
	count(ILOCK_LOST_WAIT_INODES);
	return n + 1;
}

/*
 * Pairs name threads, so their number grows with the square of the threads
 * that wait (64 fio threads on one file: 13,000 pairs in 20 s) and with
 * every thread started. The last 1/ILOCK_EDGE_FOLD_SHARE of the table is
 * kept for pairs without their threads: once the rest is taken, a new
 * thread pair counts there, under its commands, modes, ops and range, and
 * k says so from then on (its stacks go with it). Only when that part is
 * full too is the pair lost. Thread pairs already kept go on counting.
 */
static __always_inline u32 edge_slot_of(struct ilock_edge_key *k)
{
	bool folded = k->waiter_pid == ILOCK_PID_FOLDED;
	u32 n;

	if (!folded) {
		if (slot_find(&edge_index, &edge_slots, &edge_slots_used,
			      cfg_edge_slots - cfg_edge_slots / ILOCK_EDGE_FOLD_SHARE, k, sizeof(*k),
			      ILOCK_COUNTER_MAX, edge_hints, &n))
			return n + 1;
		if (k->holder_pid)
			k->holder_pid = k->holder_tgid = ILOCK_PID_FOLDED;
		k->waiter_pid = k->waiter_tgid = ILOCK_PID_FOLDED;
	}
	if (!slot_find(&edge_index, &edge_slots, &edge_slots_used, cfg_edge_slots, k, sizeof(*k),
		       ILOCK_LOST_EDGE_MAP_FULL, edge_hints, &n))
		return 0;
	if (!folded)
		count(ILOCK_LOST_EDGE_THREADS);
	return n + 1;
}

/* The slot of a number wait_slot_of() or edge_slot_of() gave; NULL for 0. */
static __always_inline char *slot_at(void *slots, u32 num1)
{
	u32 n = num1 - 1;

	return num1 ? bpf_map_lookup_elem(slots, &n) : NULL;
}

/* A key's stats, found (or made) now: for the waits whose end finds its own slot (jbd2). */
static __always_inline struct ilock_stats *wait_stats(const struct ilock_key *k)
{
	return slot_after_key(slot_at(&wait_slots, wait_slot_of(k)), sizeof(*k));
}

static __always_inline struct ilock_edge_stats *edge_stats(struct ilock_edge_key *k)
{
	return slot_after_key(slot_at(&edge_slots, edge_slot_of(k)), sizeof(*k));
}

/* Atomic max; bounded retries, and a counted give-up rather than a silent one. */
static __always_inline void atomic_max(u64 *p, u64 v)
{
	for (int i = 0; i < 16; i++) {
		u64 cur = *(volatile u64 *)p;

		if (v <= cur)
			return;
		if (__sync_val_compare_and_swap(p, cur, v) == cur)
			return;
	}
	count(ILOCK_LOST_MAX_RACE);
}

/* One event of ns standing for w events (w > 1: a sampled XFS hold or wait). */
static __always_inline void stats_add_w(struct ilock_stats *s, u64 ns, u64 w)
{
	/*
	 * 64-bit index with a compiler barrier: a u32 here became a 32-bit
	 * compare that the 6.1 verifier did not carry over to the 64-bit
	 * register ("math between map_value pointer and register with
	 * unbounded min value"); 6.18's did.
	 */
	u64 slot = ilock_hist_slot(ns);

	barrier_var(slot);
	__sync_fetch_and_add(&s->count, w);
	__sync_fetch_and_add(&s->total_ns, ns * w);
	if (slot < ILOCK_HIST_SLOTS)
		__sync_fetch_and_add(&s->hist[slot], w);
	atomic_max(&s->max_ns, ns);
}

static __always_inline void stats_add(struct ilock_stats *s, u64 ns)
{
	stats_add_w(s, ns, 1);
}

/* A slot of a table of nslots (a power of two, at most 1024) by Fibonacci hash of key. */
static __always_inline u32 fib_slot(u64 key, u32 nslots)
{
	return (u32)((key * 0x9E3779B97F4A7C15ULL) >> 54) & (nslots - 1);
}

/* A sampler's bucket for key (an inode, a lock address) in its hold_rate_map_t. */
static __always_inline u32 rate_slot(u64 key)
{
	return fib_slot(key, ILOCK_HOLD_RATE_SLOTS);
}

/*
 * A sampler's decision for one event of key, in this CPU's bucket of it
 * in rates (struct hold_rate): every one under one_in <= 1; else 1 while
 * the bucket has tokens (per_jiffy more each jiffy, kept up to burst),
 * then 1 in one_in (a power of two) with weight one_in, so counts and
 * histograms stay unbiased estimates; 0: not taken. Jiffies is a helper
 * call (~20 ns here), so a CPU reads it on every 8th event out of tokens,
 * into hold_sweepers, and buckets compare with that: a bucket last filled
 * before it is filled at once, one filled at it (a hot one) waits for the
 * next read. Both samplers share that per-CPU note; a program that nests
 * can only make it a read staler.
 */
static __always_inline u32 sample_weight(void *rates, u64 key, u32 one_in, u32 per_jiffy,
					 u32 burst)
{
	struct hold_sweeper *hs;
	struct hold_rate *r;
	u32 k, skip, zero = 0;
	u64 add;

	if (one_in <= 1)
		return 1;
	k = rate_slot(key);
	r = bpf_map_lookup_elem(rates, &k);
	if (!r)
		return 1;
	if (r->tokens) {
		r->tokens--;
		return 1;
	}
	hs = bpf_map_lookup_elem(&hold_sweepers, &zero);
	if (!per_jiffy || !hs)
		goto sample;
	if (!hs->jiffy || !(++hs->reads & 7))
		hs->jiffy = (u32)bpf_jiffies64() | 1;
	if (hs->jiffy != r->jiffy) {
		add = (u64)(hs->jiffy - r->jiffy) * per_jiffy;
		if (!r->jiffy)
			add = burst;  /* never filled: a full bucket */
		r->jiffy = hs->jiffy;
		r->tokens = (add < burst ? add : burst) - 1;
		return 1;
	}
sample:
	skip = ++r->skip;
	return (skip & (one_in - 1)) ? 0 : one_in;
}

static __always_inline u32 *hold_task_count(u64 task)
{
	u32 k = fib_slot(task, ILOCK_HOLD_TASK_SLOTS);

	return &holds_by_task[k];
}

/* Is any hold being timed? One load; 0 most of the time under sampling. */
static __always_inline bool holds_any_timed(void)
{
	return *(volatile u64 *)&holds_timing != 0;
}

/* May task be timing a hold? Two loads, most often of lines no CPU just wrote. */
static __always_inline bool hold_maybe_timing(u64 task)
{
	return *(volatile u32 *)hold_task_count(task) != 0;
}

static __always_inline u32 hold_bucket_index(u64 task, u32 dev, u64 ino, u32 class)
{
	u64 x = (task >> 6) ^ (ino * 0x9E3779B97F4A7C15ULL) ^ ((u64)dev << 40) ^ class;

	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ULL;
	return (u32)(x >> 40) & (ILOCK_HOLD_BUCKETS - 1);
}

/* The entry in bucket b timing task's hold of (dev:ino, class), or NULL. */
static __always_inline struct hold_entry *hold_find(struct hold_bucket *b, u64 task, u32 dev,
						    u64 ino, u32 class)
{
	for (int i = 0; i < ILOCK_HOLD_WAYS; i++) {
		struct hold_entry *e = &b->e[i];

		if (e->task == task && e->ino == ino && e->dev == dev && e->class == class)
			return e;
	}
	return NULL;
}

/* The entry timing task's hold of (dev:ino, class), or NULL: not timed, or not ours. */
static __always_inline struct hold_entry *hold_lookup(u64 task, u32 dev, u64 ino, u32 class)
{
	u32 k = hold_bucket_index(task, dev, ino, class);
	struct hold_bucket *b = bpf_map_lookup_elem(&hold_table, &k);

	return b ? hold_find(b, task, dev, ino, class) : NULL;
}

/* One wait of ns standing for w on a pair's stats. */
static __always_inline void edge_stats_add(struct ilock_edge_stats *es, u64 ns, u64 w)
{
	__sync_fetch_and_add(&es->count, w);
	__sync_fetch_and_add(&es->total_ns, ns * w);
	atomic_max(&es->max_ns, ns);
}

/* One wait of ns standing for w on the pair k; its stats, NULL when the map is full. */
static __always_inline struct ilock_edge_stats *edge_add(struct ilock_edge_key *k, u64 ns,
							 u64 w)
{
	struct ilock_edge_stats *es = edge_stats(k);

	if (es)
		edge_stats_add(es, ns, w);
	return es;
}

/*
 * Count the waiter's stack in the pair's slot (struct ilock_edge_wstack) if
 * it is the pair's first one, claiming the slot's stack if none is yet.
 * False: another stack has it; count this one in stack_waits.
 */
static __always_inline bool edge_wstack_add(struct ilock_edge_stats *es, u64 stack, u64 ns,
					    u64 w)
{
	struct ilock_edge_wstack *ws = (void *)es + ILOCK_EDGE_WSTACK_FROM_STATS;
	u64 mine = stack + 1, cur = *(volatile u64 *)&ws->stack1;

	if (!cur) {
		cur = __sync_val_compare_and_swap(&ws->stack1, 0, mine);
		if (!cur)
			cur = mine;
	}
	if (cur != mine)
		return false;
	__sync_fetch_and_add(&ws->count, w);
	__sync_fetch_and_add(&ws->total_ns, ns * w);
	return true;
}

#endif /* ILOCK_BPF_H */
