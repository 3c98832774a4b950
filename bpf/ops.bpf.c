// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every tracepoint argument is checked for NULL before use: 6.12's
 * verifier marks tp_btf pointer arguments maybe-NULL (narrowed in 6.14).
 *
 * What each thread is doing, from the XFS, ext4, iomap and filemap I/O
 * tracepoints: one struct cur_op per thread in op_table, read when the
 * thread waits for or holds a contended inode lock (opview.bpf.h).
 *
 * These fire on every I/O, not only on contention, so each body is a
 * handful of loads and stores into an array slot; nothing is aggregated
 * here except ext4/XFS direct writes by lock mode. Userspace turns off
 * each program whose tracepoint this kernel lacks, and all of them
 * with --ops=off; the page-cache ones (filemap) only run with --ops=all.
 */
#include "ilock.bpf.h"
#include "opview.bpf.h"

#define ILOCK_IOCB_APPEND 0x10        /* = RWF_APPEND since 5.x */
#define ILOCK_PAGE_SHIFT 12

static __always_inline struct cur_op *set_op(struct inode *inode, u8 op, u8 flags, u64 pos,
					    u64 len, s64 isize)
{
	return set_op_r(inode, op, flags, pos, len, isize, true, SYSNR_NONE);
}

/*
 * xfs_file_buffered_{read,write}: after the IOLOCK is taken. (Direct I/O
 * comes from iomap_dio_rw_begin, which XFS and ext4 both go through; the
 * xfs_file_direct_* events would only say the same again, at a cost.)
 */
static __always_inline int on_kiocb(struct kiocb *iocb, struct iov_iter *iter, u8 op)
{
	struct inode *inode;
	u64 pos, len;
	u8 flags = 0;

	if (!iocb || !iter)
		return 0;
	inode = iocb->ki_filp->f_inode;
	pos = iocb->ki_pos;
	len = iter->count;

	if (op == ILOCK_OP_DIRECT_READ || op == ILOCK_OP_DIRECT_WRITE) {
		if ((pos | len) & ((1U << (inode->i_blkbits & 31)) - 1))
			flags |= ILOCK_OPF_UNALIGNED;
	}
	if ((op == ILOCK_OP_BUFFERED_WRITE || op == ILOCK_OP_DIRECT_WRITE) &&
	    (iocb->ki_flags & ILOCK_IOCB_APPEND))
		flags |= ILOCK_OPF_APPEND;
	/* a read never moves EOF: spare it the load */
	set_op(inode, op, flags, pos, len,
	       op == ILOCK_OP_BUFFERED_WRITE || op == ILOCK_OP_DIRECT_WRITE ? inode->i_size : -1);
	return 0;
}

SEC("tp_btf/xfs_file_buffered_read")
int BPF_PROG(op_xfs_buffered_read, struct kiocb *iocb, struct iov_iter *iter)
{
	BENCH_IDLE_RETURN();
	return on_kiocb(iocb, iter, ILOCK_OP_BUFFERED_READ);
}

SEC("tp_btf/xfs_file_buffered_write")
int BPF_PROG(op_xfs_buffered_write, struct kiocb *iocb, struct iov_iter *iter)
{
	BENCH_IDLE_RETURN();
	return on_kiocb(iocb, iter, ILOCK_OP_BUFFERED_WRITE);
}

/*
 * iomap_dio_rw_begin: every iomap direct I/O (ext4 and XFS), with the
 * inode lock already taken. Here we learn how the filesystem took it: the
 * owner field names us only if we hold i_rwsem exclusive.
 *
 * By default (--ops syscalls) this only counts the direct writes that took
 * it exclusive, the ext4 story of docs/ranges.md: a syscall's op and range
 * come from its registers at contention time, and an op set here, after
 * the lock, could only serve io_uring's and kernel threads' waits later
 * (--ops io). So a direct read returns at once, a shared write after one
 * load; this program runs on every direct I/O of the host.
 */
SEC("tp_btf/iomap_dio_rw_begin")
int BPF_PROG(op_dio_begin, struct kiocb *iocb, struct iov_iter *iter, unsigned int dio_flags)
{
	struct ilock_dio_key k;
	struct inode *inode;
	u64 pos, len, owner;
	s64 isize;
	bool write;
	u8 flags = 0;
	u64 *n;

	BENCH_IDLE_RETURN();
	if (!iocb || !iter)
		return 0;
	write = bpf_core_field_exists(iter->data_source) ? iter->data_source : 0;
	if (!write && !cfg_ops_io)
		return 0;
	inode = iocb->ki_filp->f_inode;
	if (write) {
		owner = inode->i_rwsem.owner.counter;
		if (!(owner & RWSEM_READER_OWNED) &&
		    (owner & ~RWSEM_OWNER_FLAGS_MASK) == (u64)bpf_get_current_task_btf())
			flags |= ILOCK_OPF_EXCL_LOCK;
		/*
		 * How direct writes took the lock, per inode: exclusive takes
		 * and why, always; shared ones only with --ops=all, as a hash
		 * update on every direct write would double this program's cost.
		 */
		if (!(flags & ILOCK_OPF_EXCL_LOCK) && !cfg_dio_shared && !cfg_ops_io)
			return 0;
	}
	pos = iocb->ki_pos;
	len = iter->count;
	if ((pos | len) & ((1U << (inode->i_blkbits & 31)) - 1))
		flags |= ILOCK_OPF_UNALIGNED;
	if (!write) {
		set_op(inode, ILOCK_OP_DIRECT_READ, flags, pos, len, -1);
		return 0;
	}
	isize = inode->i_size;
	if (pos + len > (u64)isize)
		flags |= ILOCK_OPF_EXTENDING;
	if (cfg_ops_io) {
		if (!set_op(inode, ILOCK_OP_DIRECT_WRITE, flags, pos, len, isize))
			return 0;
	} else if (op_dev_dropped(inode)) {
		return 0;   /* the count obeys -D as set_op does */
	}
	if (!(flags & ILOCK_OPF_EXCL_LOCK) && !cfg_dio_shared)
		return 0;
	k.ino = inode->i_ino;
	k.dev = inode->i_sb->s_dev;
	k.gen = inode->i_generation;
	k.flags = flags & (ILOCK_OPF_UNALIGNED | ILOCK_OPF_EXTENDING | ILOCK_OPF_EXCL_LOCK);
	__builtin_memset(k.pad, 0, sizeof(k.pad));
	n = bpf_map_lookup_elem(&dio_writes, &k);
	if (!n) {
		u64 one = 1;

		if (!bpf_map_update_elem(&dio_writes, &k, &one, BPF_NOEXIST))
			return 0;
		n = bpf_map_lookup_elem(&dio_writes, &k);
		if (!n) {
			count(ILOCK_LOST_DIO_MAP_FULL);
			return 0;
		}
	}
	__sync_fetch_and_add(n, 1);
	return 0;
}

/*
 * ext4 buffered writes: one event per folio, after i_rwsem is taken. Only
 * this folio's bytes are known, so the range is partial (docs/ranges.md).
 */
static __always_inline int on_write_begin(struct inode *inode, s64 pos, u32 len)
{
	if (!inode)
		return 0;
	/*
	 * No i_size load: a partial range only proves overlap, and whether
	 * the write extends the file comes from its syscall, at contention.
	 */
	set_op(inode, ILOCK_OP_BUFFERED_WRITE, ILOCK_OPF_PARTIAL, pos, len, -1);
	return 0;
}

SEC("tp_btf/ext4_write_begin")
int BPF_PROG(op_ext4_write_begin, struct inode *inode, s64 pos, unsigned int len)
{
	BENCH_IDLE_RETURN();
	return on_write_begin(inode, pos, len);
}

SEC("tp_btf/ext4_da_write_begin")
int BPF_PROG(op_ext4_da_write_begin, struct inode *inode, s64 pos, unsigned int len)
{
	BENCH_IDLE_RETURN();
	return on_write_begin(inode, pos, len);
}

/* fallocate family: enter fires before the lock, the mode says which op. */
static __always_inline u8 falloc_op(int mode)
{
	if (mode & ILOCK_FALLOC_PUNCH_HOLE)
		return ILOCK_OP_PUNCH_HOLE;
	if (mode & ILOCK_FALLOC_ZERO_RANGE)
		return ILOCK_OP_ZERO_RANGE;
	if (mode & (ILOCK_FALLOC_COLLAPSE_RANGE | ILOCK_FALLOC_INSERT_RANGE))
		return ILOCK_OP_SHIFT_RANGE;
	return ILOCK_OP_FALLOCATE;
}

static __always_inline int on_falloc(struct inode *inode, s64 off, s64 len, int mode)
{
	if (!inode)
		return 0;
	set_op(inode, falloc_op(mode), 0, off, len,
	       mode & ILOCK_FALLOC_KEEP_SIZE ? -1 : inode->i_size);
	return 0;
}

SEC("tp_btf/ext4_fallocate_enter")
int BPF_PROG(op_ext4_fallocate, struct inode *inode, s64 off, s64 len, int mode)
{
	BENCH_IDLE_RETURN();
	return on_falloc(inode, off, len, mode);
}

SEC("tp_btf/ext4_truncate_enter")
int BPF_PROG(op_ext4_truncate, struct inode *inode)
{
	BENCH_IDLE_RETURN();
	if (!inode)
		return 0;
	set_op(inode, ILOCK_OP_TRUNCATE, 0, 0, 0, -1);
	return 0;
}

/*
 * (XFS faults: op_xfs_read_fault and op_xfs_write_fault, in lockwait.bpf.c.
 * XFS fsync and space ops, and ext4 punch and zero range, come from their
 * syscalls and the fallocate tracepoint: fewer programs, faster start.)
 */

/* Page cache events (--ops=all): every buffered read and file fault. */
SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(op_filemap_get_pages, struct address_space *mapping, unsigned long index,
	     unsigned long last_index)
{
	struct inode *inode = mapping ? mapping->host : NULL;

	BENCH_IDLE_RETURN();
	if (!inode)
		return 0;
	set_op(inode, ILOCK_OP_BUFFERED_READ, ILOCK_OPF_PARTIAL, (u64)index << ILOCK_PAGE_SHIFT,
	       (u64)(last_index + 1 - index) << ILOCK_PAGE_SHIFT, inode->i_size);
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(op_filemap_fault, struct address_space *mapping, unsigned long index)
{
	struct inode *inode = mapping ? mapping->host : NULL;

	BENCH_IDLE_RETURN();
	if (!inode)
		return 0;
	set_op_r(inode, ILOCK_OP_FAULT, 0, (u64)index << ILOCK_PAGE_SHIFT, 1U << ILOCK_PAGE_SHIFT,
		 inode->i_size, true, SYSNR_HELPER);
	return 0;
}

/*
 * A thread that exits with a wait still unpaired: pair it as unknown. Its
 * op slot is freed, so a later thread given the same id reads no stale op.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(op_task_exit)
{
	struct task_struct *me = bpf_get_current_task_btf();
	struct cur_op *o = op_of(me->pid);
	struct task_state *ts;

	BENCH_IDLE_RETURN();
	ts = bpf_task_storage_get(&task_states, me, 0, 0);
	if (ts)
		finish_deferred(ts, o, &zero_op);
	if (o)
		o->tid = 0;
	return 0;
}
