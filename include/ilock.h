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
	ILOCK_CLASS_MAX,
};

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

/* Per (dev, ino, class, mode): wait or hold statistics. */
struct ilock_key {
	__u64 ino;
	__u32 dev;      /* kernel encoding: major << 20 | minor */
	__u8 class;     /* enum ilock_class */
	__u8 mode;      /* enum ilock_mode: SHARED or EXCL */
	__u16 pad;
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
	__u8 pad;
	__u32 holder_pid;  /* thread id; 0 when unknown */
	__u32 holder_tgid;
	__u32 waiter_pid;
	__u32 waiter_tgid;
	char holder_comm[ILOCK_COMM_LEN];
	char waiter_comm[ILOCK_COMM_LEN];
};

struct ilock_edge_stats {
	__u64 count;
	__u64 total_ns;
	__u64 max_ns;
};

/* Per inode, filled once on first sight. */
enum ilock_inode_flags {
	ILOCK_INODE_UNLINKED = 1 << 0,   /* i_nlink == 0 when first seen */
	ILOCK_INODE_NO_DENTRY = 1 << 1,  /* no alias to walk */
	ILOCK_INODE_TRUNCATED = 1 << 2,  /* deeper or longer than we walk */
	ILOCK_INODE_READ_FAIL = 1 << 3,  /* a kernel read failed mid-walk */
};

struct ilock_inode_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
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
