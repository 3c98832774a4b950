/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by the BPF programs and userspace. Defined exactly once here;
 * both sides rebuild when this file changes (-MMD dependency files).
 *
 * Only fixed-width types: the BPF side gets them from vmlinux.h, userspace
 * from <linux/types.h>.
 */
#ifndef ILOCK_H
#define ILOCK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define ILOCK_VERSION_STR "0.1.0"

/*
 * log2 histogram of nanoseconds: slot 0 holds [0, 2) ns, slot i (i >= 1)
 * holds [2^i, 2^(i+1)) ns, the last slot is open-ended (>= 2^39 ns, ~9 min).
 */
#define ILOCK_HIST_SLOTS 40

/*
 * The slot for a value, shared by BPF and userspace so both agree exactly.
 * Branch-free binary search for floor(log2(v)); the verifier accepts it.
 */
static __always_inline __u32 ilock_hist_slot(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xFFFFFFFFULL) << 5; v >>= s; r |= s;
	s = (v > 0xFFFFULL) << 4; v >>= s; r |= s;
	s = (v > 0xFFULL) << 3; v >>= s; r |= s;
	s = (v > 0xFULL) << 2; v >>= s; r |= s;
	s = (v > 0x3ULL) << 1; v >>= s; r |= s;
	r |= (__u32)(v >> 1);
	return r < ILOCK_HIST_SLOTS ? r : ILOCK_HIST_SLOTS - 1;
}

#define ILOCK_COMM_LEN 16
/* Path kept in BPF, relative to the filesystem root, filled from the end. */
#define ILOCK_PATH_MAX 256
/* Directory levels walked in BPF before the path is marked truncated. */
#define ILOCK_PATH_DEPTH 24

/* Which inode lock a contended rw_semaphore is. */
enum ilock_class {
	ILOCK_CLASS_I_RWSEM = 0,     /* inode->i_rwsem; the XFS IOLOCK */
	ILOCK_CLASS_INVALIDATE = 1,  /* mapping->invalidate_lock; XFS MMAPLOCK */
	ILOCK_CLASS_XFS_ILOCK = 2,   /* xfs_inode->i_lock; the XFS ILOCK */
	/*
	 * Not a lock: the part of an ext4 fsync spent while jbd2 committed the
	 * transaction it needed (docs/ranges.md). Recorded in the exclusive slot.
	 */
	ILOCK_CLASS_JBD2_WAIT = 3,
	ILOCK_CLASS_MAX,
};

/* The classes that are XFS locks on an XFS inode (IOLOCK, MMAPLOCK, ILOCK). */
#define ILOCK_XFS_CLASS_MASK                                                   \
	((1U << ILOCK_CLASS_I_RWSEM) | (1U << ILOCK_CLASS_INVALIDATE) |         \
	 (1U << ILOCK_CLASS_XFS_ILOCK))

enum ilock_mode {
	ILOCK_MODE_SHARED = 0,
	ILOCK_MODE_EXCL = 1,
	ILOCK_MODE_READERS = 2,  /* holder only: reader-owned, pid is a hint */
	ILOCK_MODE_UNKNOWN = 3,  /* holder only: no owner, nobody queued */
	/*
	 * holder only: the lock was between owners with waiters queued; the
	 * "holder" is the head waiter, who takes it next, and its wanted mode.
	 */
	ILOCK_MODE_QUEUED_EXCL = 4,
	ILOCK_MODE_QUEUED_SHARED = 5,
	ILOCK_MODE_MAX,
};

/*
 * What a thread was doing when it waited or held: the operation and the
 * byte range it claims. The rules are in docs/ranges.md.
 */
enum ilock_op {
	ILOCK_OP_UNKNOWN = 0,      /* no source told us */
	ILOCK_OP_BUFFERED_READ,
	ILOCK_OP_BUFFERED_WRITE,
	ILOCK_OP_DIRECT_READ,
	ILOCK_OP_DIRECT_WRITE,
	ILOCK_OP_FSYNC,
	ILOCK_OP_FDATASYNC,
	ILOCK_OP_FALLOCATE,
	ILOCK_OP_PUNCH_HOLE,
	ILOCK_OP_ZERO_RANGE,
	ILOCK_OP_SHIFT_RANGE,      /* fallocate collapse or insert range */
	ILOCK_OP_TRUNCATE,
	ILOCK_OP_SETATTR,          /* chmod, chown, utimes, xattrs: no size change */
	ILOCK_OP_FAULT,            /* mmap page fault */
	ILOCK_OP_PAGE_MKWRITE,     /* first write to a shared mapped page */
	ILOCK_OP_JOURNAL_COMMIT,   /* the jbd2 thread: the holder of jbd2_wait */
	ILOCK_OP_OTHER,            /* a syscall on the file that is none of these (ioctl, ...) */
	/*
	 * Namespace ops (recordings 1.4): what a syscall does to a directory
	 * (or, for unlink, rename and link, to the file it names). No range.
	 */
	ILOCK_OP_CREATE,           /* open or openat with O_CREAT, creat, mknod */
	ILOCK_OP_MKDIR,
	ILOCK_OP_UNLINK,
	ILOCK_OP_RMDIR,            /* also unlinkat with AT_REMOVEDIR */
	ILOCK_OP_RENAME,
	ILOCK_OP_LINK,             /* link and symlink */
	ILOCK_OP_LOOKUP,           /* a path lookup missing the dcache: open, stat, access, ... */
	ILOCK_OP_READDIR,          /* getdents */
	/*
	 * Recordings 1.6: sync_file_range, a flush of a byte range (a
	 * database's background writeback: PostgreSQL's *_flush_after), not
	 * a durability sync; before, it read as fdatasync.
	 */
	ILOCK_OP_SYNC_FILE_RANGE,
	ILOCK_OP_MAX,
};

/* Flags that go into edge keys (ILOCK_OPF_KEY_MASK) ... */
#define ILOCK_OPF_UNALIGNED (1U << 0)  /* direct I/O not aligned to the fs block */
#define ILOCK_OPF_EXTENDING (1U << 1)  /* ends past EOF: the file size changes */
#define ILOCK_OPF_EXCL_LOCK (1U << 2)  /* took i_rwsem exclusive (ext4 direct write) */
#define ILOCK_OPF_APPEND    (1U << 3)  /* O_APPEND write */
#define ILOCK_OPF_KEY_MASK  0x0fU
/* ... and flags that do not. */
#define ILOCK_OPF_LATE      (1U << 5)  /* waiter's op known only after its wait */
#define ILOCK_OPF_PARTIAL   (1U << 6)  /* [start, end) is only part of the range */
#define ILOCK_OPF_RANGE     (1U << 7)  /* start and end are set */

#define ILOCK_RANGE_EOF ((__u64)-1)    /* end of a range "from here onwards" */

struct ilock_op_info {
	__u64 start;
	__u64 end;     /* exclusive; ILOCK_RANGE_EOF: to the end of the file and beyond */
	__u8 op;       /* enum ilock_op */
	__u8 flags;    /* ILOCK_OPF_* */
	__u8 pad[6];
};

/*
 * How the waiter's range met the holder's. Zero is "both unknown", so an
 * edge key built without ranges (older recordings, zeroed keys) says so.
 */
enum ilock_range {
	ILOCK_RANGE_NO_BOTH = 0,   /* unknown: both are missing */
	ILOCK_RANGE_OVERLAP,
	ILOCK_RANGE_DISJOINT,      /* a perfect range lock would not have blocked */
	ILOCK_RANGE_NO_WAITER,     /* unknown: the waiter's range is missing */
	ILOCK_RANGE_NO_HOLDER,     /* unknown: the holder's range is missing */
	ILOCK_RANGE_MAX,
};

/* A namespace op: it works on names in a directory, not on bytes. */
static __always_inline int ilock_op_is_namespace(__u8 op)
{
	return op >= ILOCK_OP_CREATE && op <= ILOCK_OP_READDIR;
}

static __always_inline int ilock_op_is_write(__u8 op)
{
	return op != ILOCK_OP_BUFFERED_READ && op != ILOCK_OP_DIRECT_READ && op != ILOCK_OP_FAULT &&
	       op != ILOCK_OP_LOOKUP && op != ILOCK_OP_READDIR && op != ILOCK_OP_UNKNOWN;
}

/*
 * Set o->start/end for an operation at [pos, pos + len) on a file of
 * isize bytes (ILOCK_RANGE_EOF: size unknown). o->op and o->flags are set.
 * Whole-file operations ignore pos and len; size-changing ones claim from
 * the old EOF (or pos, if lower) onwards, because they move EOF. A
 * truncate (pos: the new size) claims from the lower of the new and the
 * old size onwards: below both, page cache and bytes stay as they were
 * (the whole file when the old size is unknown).
 */
static __always_inline void ilock_op_set_range(struct ilock_op_info *o, __u64 pos, __u64 len,
					       __u64 isize)
{
	__u64 end = pos + len < pos ? ILOCK_RANGE_EOF : pos + len;
	__u64 from = pos < isize ? pos : isize;

	o->flags |= ILOCK_OPF_RANGE;
	switch (o->op) {
	case ILOCK_OP_BUFFERED_WRITE:
	case ILOCK_OP_DIRECT_WRITE:
		if (o->flags & ILOCK_OPF_APPEND) {
			o->flags |= ILOCK_OPF_EXTENDING;
			o->start = isize == ILOCK_RANGE_EOF ? 0 : isize;
			o->end = ILOCK_RANGE_EOF;
			return;
		}
		/* fall through */
	case ILOCK_OP_FALLOCATE:
	case ILOCK_OP_ZERO_RANGE:
		if (isize != ILOCK_RANGE_EOF && end > isize) {
			o->flags |= ILOCK_OPF_EXTENDING;
			o->start = from;
			o->end = ILOCK_RANGE_EOF;
			return;
		}
		break;
	case ILOCK_OP_SHIFT_RANGE:
		end = ILOCK_RANGE_EOF;
		break;
	case ILOCK_OP_TRUNCATE:
		pos = isize == ILOCK_RANGE_EOF ? 0 : from;
		end = ILOCK_RANGE_EOF;
		break;
	case ILOCK_OP_FSYNC:
	case ILOCK_OP_SETATTR:
		pos = 0;
		end = ILOCK_RANGE_EOF;
		break;
	case ILOCK_OP_FDATASYNC:
	case ILOCK_OP_SYNC_FILE_RANGE:
		if (!len)
			end = ILOCK_RANGE_EOF;
		break;
	case ILOCK_OP_BUFFERED_READ:
	case ILOCK_OP_DIRECT_READ:
	case ILOCK_OP_PUNCH_HOLE:
	case ILOCK_OP_FAULT:
	case ILOCK_OP_PAGE_MKWRITE:
		break;
	default:
		/* no range: journal commits, other, unknown */
		o->flags &= ~ILOCK_OPF_RANGE;
		return;
	}
	o->start = pos;
	o->end = end;
}

/*
 * Classify one wait. Overlap needs both ranges; a partial range (only part
 * of it known) can prove overlap but never disjointness.
 */
static __always_inline __u8 ilock_range_class(const struct ilock_op_info *h,
					      const struct ilock_op_info *w)
{
	int hk = (h->flags & ILOCK_OPF_RANGE) != 0, wk = (w->flags & ILOCK_OPF_RANGE) != 0;
	__u64 hs = h->start, ws = w->start;

	/*
	 * A truncate writes back data not yet on disk, which can lie below
	 * both sizes: readers pass that, another writer not (docs/ranges.md).
	 */
	if (h->op == ILOCK_OP_TRUNCATE && ilock_op_is_write(w->op))
		hs = 0;
	if (w->op == ILOCK_OP_TRUNCATE && ilock_op_is_write(h->op))
		ws = 0;
	if (hk && wk && ws < h->end && hs < w->end)
		return ILOCK_RANGE_OVERLAP;
	if (h->flags & ILOCK_OPF_PARTIAL)
		hk = 0;
	if (w->flags & ILOCK_OPF_PARTIAL)
		wk = 0;
	if (!hk && !wk)
		return ILOCK_RANGE_NO_BOTH;
	if (!wk)
		return ILOCK_RANGE_NO_WAITER;
	if (!hk)
		return ILOCK_RANGE_NO_HOLDER;
	return ILOCK_RANGE_DISJOINT;
}

/*
 * The range class of a pair, its modes known. Two readers never conflict,
 * so a reader behind readers (or behind a reader first in the queue)
 * waits for something the owner word does not name, most often a writer
 * queued between them: their ranges say nothing of it, and the holder's
 * side is unknown.
 */
static __always_inline __u8 ilock_pair_range(const struct ilock_op_info *h,
					     const struct ilock_op_info *w, __u8 holder_mode,
					     __u8 waiter_mode)
{
	if (waiter_mode == ILOCK_MODE_SHARED &&
	    (holder_mode == ILOCK_MODE_READERS || holder_mode == ILOCK_MODE_QUEUED_SHARED ||
	     holder_mode == ILOCK_MODE_SHARED))
		return ILOCK_RANGE_NO_HOLDER;
	return ilock_range_class(h, w);
}

/* Waits and their time in one range class (a lock's sums come from its pairs). */
struct ilock_range_stats {
	__u64 waits;
	__u64 wait_ns;
};

/*
 * Kernel stacks per edge, weighted by wait time. Waiter stacks are ids in
 * the stack trace map; holder stacks (taken from another task) are hashes
 * of their frames, which live in a map of their own.
 */
#define ILOCK_STACK_DEPTH 32

enum ilock_stack_kind {
	ILOCK_STACK_WAITER = 0,
	ILOCK_STACK_HOLDER = 1,
};

struct ilock_stack_frames {
	__u32 nr;
	__u32 pad;
	__u64 ip[ILOCK_STACK_DEPTH];
};

/* ext4 direct writes per inode, by how they took i_rwsem and why. */
struct ilock_dio_key {
	__u64 ino;
	__u32 dev;
	__u32 gen;      /* i_generation: see struct ilock_key */
	__u8 flags;     /* ILOCK_OPF_UNALIGNED | _EXTENDING | _EXCL_LOCK */
	__u8 pad[7];
};

/*
 * Per (dev, ino, gen, class, mode): wait or hold statistics. gen is the
 * inode's i_generation: a file deleted and another created in its inode
 * number (XFS and ext4 hand freed numbers out again soon) gets rows of its
 * own, not the old file's rows and path. Same cache line as i_ino.
 */
struct ilock_key {
	__u64 ino;
	__u32 dev;      /* kernel encoding: major << 20 | minor */
	__u32 gen;
	__u8 class;     /* enum ilock_class */
	__u8 mode;      /* enum ilock_mode: SHARED or EXCL */
	__u8 pad[6];
};

struct ilock_stats {
	__u64 count;
	__u64 total_ns;
	__u64 max_ns;
	__u64 hist[ILOCK_HIST_SLOTS];
};

/* One holder-to-waiter pair on one inode lock. */
struct ilock_edge_key {
	__u64 ino;
	__u32 dev;
	__u8 class;
	__u8 holder_mode;  /* EXCL, READERS or UNKNOWN */
	__u8 waiter_mode;  /* SHARED or EXCL */
	__u8 range;        /* enum ilock_range: how the two byte ranges met */
	__u32 holder_pid;  /* thread id; 0 when unknown */
	__u32 holder_tgid;
	__u32 waiter_pid;
	__u32 waiter_tgid;
	char holder_comm[ILOCK_COMM_LEN];
	char waiter_comm[ILOCK_COMM_LEN];
	/* what each side was doing: enum ilock_op, ILOCK_OPF_KEY_MASK flags */
	__u8 holder_op;
	__u8 waiter_op;
	__u8 holder_op_flags;
	__u8 waiter_op_flags;
	__u32 gen;         /* the inode's i_generation (struct ilock_key) */
};

/*
 * holder_pid/_tgid and waiter_pid/_tgid of a pair kept without its threads:
 * the pairs table had no room left for thread pairs (ILOCK_EDGE_FOLD_ROOM),
 * so the wait counts on its commands, modes, ops and range alone. Never a
 * thread id (pid_max is at most 2^22).
 */
#define ILOCK_PID_FOLDED 0xffffffffu

/* The share of the pairs table (1/N) kept for pairs folded that way. */
#define ILOCK_EDGE_FOLD_SHARE 8

/*
 * ino (and gen 0) of a wait row kept without its inode: the locks table
 * had no room left for another inode (the last 1/ILOCK_EDGE_FOLD_SHARE
 * of it is kept for these), so the wait counts under its device, lock
 * class and mode alone. No filesystem hands out this inode number.
 */
#define ILOCK_INO_FOLDED 0xffffffffffffffffULL

struct ilock_edge_stats {
	__u64 count;
	__u64 total_ns;
	__u64 max_ns;
};

/*
 * Waits and pairs are kept in slots of mmapable arrays, the key beside its
 * stats, so userspace reads them from memory without a syscall per entry.
 * A hash maps each key to its slot (docs/design.md, "Slots"). The stats
 * start with count: a slot whose count is 0 holds nothing yet.
 */
struct ilock_wait_slot {
	struct ilock_key k;
	struct ilock_stats s;
};

/* The BPF side hashes and compares keys a 64-bit word at a time (slot_find). */
_Static_assert(sizeof(struct ilock_key) % 8 == 0, "ilock_key: whole 64-bit words");
_Static_assert(sizeof(struct ilock_edge_key) % 8 == 0, "ilock_edge_key: whole 64-bit words");

/*
 * The first waiter stack a pair saw, counted in the pair's own slot: a
 * waiter on one pair nearly always waits from the same place, and its own
 * stack_waits entry was one more cold hash entry per wait (~250 ns here,
 * docs/PERFORMANCE.md). Other stacks of the pair go to stack_waits. The BPF
 * side claims stack1 before it counts, so a count means a stack.
 */
struct ilock_edge_wstack {
	__u64 stack1;      /* the waiter stack map id + 1; 0: none claimed yet */
	__u64 count;
	__u64 total_ns;
};

struct ilock_edge_slot {
	struct ilock_edge_key k;
	struct ilock_edge_stats s;
	struct ilock_edge_wstack w;
};

/* From a slot's stats, as wait_stats()/edge_stats() and slots_scan() hand them out, to its w. */
#define ILOCK_EDGE_WSTACK_FROM_STATS \
	(offsetof(struct ilock_edge_slot, w) - offsetof(struct ilock_edge_slot, s))

struct ilock_stack_key {
	struct ilock_edge_key edge;
	__u64 stack;    /* waiter: stack map id; holder: hash of the frames */
	__u8 kind;      /* enum ilock_stack_kind */
	__u8 pad[7];
};

struct ilock_stack_stats {
	__u64 count;
	__u64 total_ns;
};

/* Per inode, filled once on first sight. */
enum ilock_inode_flags {
	ILOCK_INODE_UNLINKED = 1 << 0,   /* i_nlink == 0 when first seen */
	ILOCK_INODE_NO_DENTRY = 1 << 1,  /* no alias to walk */
	ILOCK_INODE_TRUNCATED = 1 << 2,  /* deeper or longer than we walk */
	ILOCK_INODE_READ_FAIL = 1 << 3,  /* a kernel read failed mid-walk */
	ILOCK_INODE_DIR = 1 << 4,        /* a directory: its i_rwsem guards names, not bytes */
};

struct ilock_inode_key {
	__u64 ino;
	__u32 dev;
	__u32 gen;
};

struct ilock_inode_info {
	__u32 magic;      /* super_block->s_magic */
	__u16 flags;      /* enum ilock_inode_flags */
	__u16 path_off;   /* path lives in path[path_off .. ILOCK_PATH_MAX) */
	/*
	 * "/a/b" relative to the fs root, NUL-ended, at most ILOCK_PATH_MAX
	 * bytes. Twice that is allocated so that the BPF writer's masked
	 * offsets provably stay in bounds.
	 */
	char path[2 * ILOCK_PATH_MAX];
};

/*
 * A wait in progress, as the task iterator (bpf/waiting.bpf.c) finds it in
 * a thread's task storage when userspace reads: a stall shows while it
 * lasts, not only once it ends. Nothing on the hot path writes this.
 */
#define ILOCK_STATE_UNKNOWN 0xffffffffu

struct ilock_waiting {
	__u64 start_ns;            /* bpf_ktime_get_ns() at contention_begin */
	__u64 now_ns;              /* ... when the iterator read it */
	__u64 lock;                /* the rw_semaphore's address */
	struct ilock_key key;      /* key.mode: the waiter's, SHARED or EXCL */
	struct ilock_op_info wop;  /* the waiter's op; op UNKNOWN: not known (yet) */
	struct ilock_op_info hop;  /* the holder's at wait start */
	__u32 tid, tgid;
	__u32 holder_pid, holder_tgid;  /* named at wait start; 0: nobody */
	__u32 owner_pid, owner_tgid;    /* the lock's owner now; 0: none, or readers */
	__u32 weight;              /* waits it stands for (--wait-sample) */
	__u32 owner_state;         /* the owner's task state now (TASK_*); ILOCK_STATE_UNKNOWN */
	__u32 waiter_state;        /* the waiter's: running means woken, or an end missed */
	__u8 holder_mode;          /* enum ilock_mode, at wait start */
	__u8 owner_mode;           /* now: EXCL, READERS (pid a hint) or UNKNOWN */
	/*
	 * 1: a wait begun before tracing, found by the lock the kernel notes
	 * in task_struct.blocker (hung-task blocker tracking): start_ns 0 from
	 * BPF, when tracing began once read (the age a lower bound), and the
	 * holder at its start unknown.
	 */
	__u8 before_trace;
	__u8 pad;
	char comm[ILOCK_COMM_LEN];
	char holder_comm[ILOCK_COMM_LEN];
	char owner_comm[ILOCK_COMM_LEN];
	/*
	 * key.class JBD2_WAIT: an ext4 fsync in progress (lock 0). The owner
	 * is the journal's commit thread; need_tid the transaction the fsync
	 * must see on disk; commit_start_ns when the running commit of it (or
	 * of one before it) began, 0 when none is running: the fsync is then
	 * writing its data back, or the commit has not started.
	 */
	__u64 commit_start_ns;
	__u32 need_tid, commit_tid;
};

/*
 * Per-CPU counters: events seen and every way an event can be lost.
 * Userspace sums the CPUs. Keep names in src/counters.c in the same order.
 */
enum ilock_counter {
	ILOCK_EV_BEGIN = 0,        /* contention_begin, any lock */
	ILOCK_EV_BEGIN_RWSEM,      /* ... with READ or WRITE flags */
	ILOCK_EV_WAIT,             /* a classified inode-lock wait recorded */
	ILOCK_EV_WAIT_BEGUN,       /* ... begun; begun - recorded - replaced = in flight */
	ILOCK_EV_XFS_LOCK,         /* xfs_ilock / _nowait calls seen */
	ILOCK_EV_XFS_UNLOCK,       /* xfs_iunlock calls seen */
	ILOCK_EV_HOLD_TIMED,       /* xfs_ilock calls whose holds were timed (the rest: sampled out) */
	ILOCK_EV_OP_DEFERRED,      /* waits whose waiter op was known only after the wait */
	ILOCK_EV_OP_DEFER_DONE,    /* ... of which paired up since; the rest are pending */
	ILOCK_EV_OP_NEVER,         /* ... of which the op never came: counted as unknown */
	ILOCK_EV_HOLDER_STACK,     /* holder stacks sampled */
	ILOCK_EV_HOLDER_RUNNING,   /* holder on a CPU at wait start: no stack to take */
	ILOCK_EV_HOLDER_STACK_SKIPPED, /* holder stacks not taken: per-CPU budget spent */
	ILOCK_EV_JBD2_WAIT,        /* fsync waits for a journal commit recorded */
	ILOCK_EV_STACK_REUSED,     /* waits given their thread's last stack on that path */
	ILOCK_EV_WAIT_SAMPLED_OUT, /* rw_semaphore waits the wait sampler left out (--wait-sample) */
	ILOCK_EV_FSYNC_BEGUN,      /* ext4 fsyncs begun (jbd2_wait); begun - ended = in progress */
	ILOCK_EV_FSYNC_ENDED,      /* ... ended */
	ILOCK_LOST_WAIT_MAP_FULL,  /* wait stats map full */
	ILOCK_LOST_EDGE_MAP_FULL,  /* edge map full */
	ILOCK_LOST_INODE_MAP_FULL, /* inode/path map full */
	ILOCK_LOST_HOLD_MAP_FULL,  /* hold stats map full */
	ILOCK_LOST_PENDING_FULL,   /* no task storage for a wait */
	ILOCK_LOST_HOLD_START_FULL,/* a thread held more XFS locks than we track */
	ILOCK_LOST_BEGIN_NO_END,   /* a begin replaced a wait that never ended */
	ILOCK_LOST_END_NO_BEGIN,   /* an inode-lock wait ended we never saw begin */
	ILOCK_LOST_HOLD_NO_START,  /* xfs_iunlock without a matching xfs_ilock */
	ILOCK_LOST_HOLD_REPLACED,  /* xfs_ilock replaced a hold never released */
	ILOCK_LOST_PATH,           /* path could not be resolved in full */
	ILOCK_LOST_MAX_RACE,       /* max update gave up after retries */
	ILOCK_LOST_STACK,          /* a waiter stack could not be taken */
	ILOCK_LOST_HOLDER_STACK,   /* a sleeping holder's stack could not be taken */
	ILOCK_LOST_STACK_MAP_FULL, /* stack aggregation map full */
	ILOCK_LOST_DIO_MAP_FULL,   /* ext4 direct-write map full */
	ILOCK_LOST_HOLDER_GONE,    /* holder exited before its op could be read */
	ILOCK_LOST_OP_SLOT_SHARED, /* an op overwritten by a thread sharing its slot */
	ILOCK_LOST_HOLDER_MOVED_ON,/* a writer let go before its op or stack was read */
	ILOCK_LOST_EDGE_THREADS,   /* waits whose pair was kept without its threads (ILOCK_PID_FOLDED) */
	ILOCK_LOST_WAIT_INODES,    /* waits kept without their inode (ILOCK_INO_FOLDED) */
	ILOCK_COUNTER_MAX,
};

#define ILOCK_FIRST_LOST ILOCK_LOST_WAIT_MAP_FULL

/* Lock contention tracepoint flags (include/trace/events/lock.h). */
#define ILOCK_LCB_F_SPIN   (1U << 0)
#define ILOCK_LCB_F_READ   (1U << 1)
#define ILOCK_LCB_F_WRITE  (1U << 2)
#define ILOCK_LCB_F_RT     (1U << 3)
#define ILOCK_LCB_F_PERCPU (1U << 4)
#define ILOCK_LCB_F_MUTEX  (1U << 5)

/* XFS lock_flags bits (fs/xfs/xfs_inode.h); higher bits are lockdep subclasses. */
#define ILOCK_XFS_IOLOCK_EXCL     (1U << 0)
#define ILOCK_XFS_IOLOCK_SHARED   (1U << 1)
#define ILOCK_XFS_ILOCK_EXCL      (1U << 2)
#define ILOCK_XFS_ILOCK_SHARED    (1U << 3)
#define ILOCK_XFS_MMAPLOCK_EXCL   (1U << 4)
#define ILOCK_XFS_MMAPLOCK_SHARED (1U << 5)

#define ILOCK_XFS_SB_MAGIC  0x58465342U
#define ILOCK_EXT4_SB_MAGIC 0xEF53U

/* Kernel dev_t encoding used in super_block->s_dev. */
#define ILOCK_KDEV_MINORBITS 20
#define ILOCK_KDEV(maj, min) (((__u32)(maj) << ILOCK_KDEV_MINORBITS) | (__u32)(min))
#define ILOCK_KDEV_MAJOR(d) ((__u32)(d) >> ILOCK_KDEV_MINORBITS)
#define ILOCK_KDEV_MINOR(d) ((__u32)(d) & ((1U << ILOCK_KDEV_MINORBITS) - 1))

#endif /* ILOCK_H */
