/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the waiter and the holder of a contended inode lock were doing
 * (docs/ranges.md), worked out at contention_begin, on the slow path only,
 * and the aggregation of a finished wait by operation, range class and
 * kernel stack.
 *
 * Two sources per task, merged:
 *  - its syscall and arguments, from the user registers saved at kernel
 *    entry (bpf_task_pt_regs), the fd resolved through the task's fd table
 *    and kept only if it is the lock's inode;
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
#define ILOCK_O_DIRECT 040000U          /* x86 and most others */
#define ILOCK_O_APPEND 02000U
#define ILOCK_O_TRUNC 01000U
#define ILOCK_O_CREAT 0100U
#define ILOCK_AT_REMOVEDIR 0x200U
#define ILOCK_SYSNR_KERNEL (-2)         /* kernel and io_uring worker threads */
#define ILOCK_SYSNR_UNSET (-3)          /* an I/O event: check by position, not number */

/* fallocate modes (include/uapi/linux/falloc.h) */
#define ILOCK_FALLOC_KEEP_SIZE 0x01
#define ILOCK_FALLOC_PUNCH_HOLE 0x02
#define ILOCK_FALLOC_COLLAPSE_RANGE 0x08
#define ILOCK_FALLOC_ZERO_RANGE 0x10
#define ILOCK_FALLOC_INSERT_RANGE 0x20

#define ILOCK_IOCB_MAX 4    /* io_submit iocbs looked at */
#define ILOCK_IOV_MAX 8     /* readv/writev segments summed */

#define RESOLVE_CUR 1U   /* task is current: its user memory is readable */
#define RESOLVE_FAST 2U  /* KFAST: kernel objects load through kcast */

/* The syscall a task is in, from its saved user registers. */
struct sysargs {
	s64 nr;          /* raw orig_ax; compared with cur_op.sysnr */
	bool in_syscall; /* entered through `syscall`, so nr and args are real */
	u64 a[6];
};

/* An op decoded from a syscall, with the raw position and length it names. */
struct opdec {
	struct ilock_op_info i;
	u64 pos, len;
};

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

/*
 * `task` is the current task (trusted) or the holder (kcast), so its
 * fields, its registers and its fd table load directly: these run inside
 * the rwsem's wait_lock for writers (contention_begin fires there), where
 * every probe read is felt. how: RESOLVE_*; with RESOLVE_FAST, regs is the
 * task's registers' address (my_regs_addr(), other_regs(); 0: unknown),
 * else the current task's are found through the helper.
 */
static __always_inline void read_sysargs(struct task_struct *task, u32 how, u64 regs,
					 struct sysargs *sa)
{
	struct pt_regs___ilock *r;

	sa->in_syscall = false;
	sa->nr = ILOCK_SYSNR_KERNEL;
	if (task->flags & (ILOCK_PF_KTHREAD | ILOCK_PF_IO_WORKER))
		return;
	/* without RESOLVE_FAST only the current task is read */
	if (!(how & RESOLVE_FAST))
		r = task_regs(task);
	else if (regs)
		r = regs_at(regs);
	else
		return;
	sa->nr = (s64)r->orig_ax;
#if defined(__TARGET_ARCH_x86)
	/*
	 * `syscall` saves the user rip in rcx and rflags in r11, and the entry
	 * code stores both twice. A fault or interrupt has no such pair, and
	 * its orig_ax is an error code, not a syscall number.
	 */
	if (r->cx != r->ip || r->r11 != r->flags)
		return;
	sa->in_syscall = true;
	sa->a[0] = r->di;
	sa->a[1] = r->si;
	sa->a[2] = r->dx;
	sa->a[3] = r->r10;
	sa->a[4] = r->r8;
#endif
}

/* fd -> struct file of another task: racy but safe reads, like /proc does. */
static __always_inline struct file *task_file(struct task_struct *task, s64 fd, bool fast)
{
	struct files_struct *files = task->files;
	struct fdtable *fdt;
	struct file *f = NULL;
	u64 slot;

	if (!files || fd < 0 || fd > 0x7fffffff)
		return NULL;
	fdt = files->fdt;
	if (!fdt || (u64)fd >= fdt->max_fds)
		return NULL;
	slot = (u64)fdt->fd + fd * sizeof(f);
	/*
	 * A variable index into a kernel array. bpf_rdonly_cast wants a
	 * struct, so the slot is read as the first word of a list_head: one
	 * load, where a probe read is a helper call (~35 ns here).
	 */
	if (fast)
		return (struct file *)kcast(slot, struct list_head)->next;
	bpf_probe_read_kernel(&f, sizeof(f), (void *)slot);
	return f;
}

/*
 * One file descriptor a syscall names, and what it does through it: a
 * read or write (rw: buffered or direct as the file was opened) at pos
 * (-1: the file position) for len bytes (partial: at least len), or a
 * fixed op on [pos, pos + len).
 */
struct fd_try {
	s64 fd;
	s64 pos;
	u64 len;
	u8 op;          /* the op when !rw */
	u8 rw;
	u8 write;
	u8 partial;
	u8 keep_size;   /* fallocate that never moves EOF */
};

/* The op through t->fd, if that fd is the lock's inode. */
static __always_inline bool try_fd(struct task_struct *task, const struct fd_try *t, u64 inode,
				   struct opdec *d, bool fast)
{
	struct ilock_op_info *o = &d->i;
	struct file *f = task_file(task, t->fd, fast);
	struct inode *ino;
	u32 fl = 0, blkbits;
	s64 isize, fpos, pos = t->pos;

	if (!f)
		return false;
	if (fast) {
		struct file *ff = kcast(f, struct file);

		ino = ff->f_inode;
		if ((u64)ino != inode)
			return false;
		isize = ino->i_size;
		blkbits = ino->i_blkbits;
		fl = ff->f_flags;
		fpos = ff->f_pos;
	} else {
		ino = BPF_CORE_READ(f, f_inode);
		if ((u64)ino != inode)
			return false;
		isize = BPF_CORE_READ(ino, i_size);
		blkbits = BPF_CORE_READ(ino, i_blkbits);
		fl = BPF_CORE_READ(f, f_flags);
		fpos = BPF_CORE_READ(f, f_pos);
	}
	o->flags = t->partial ? ILOCK_OPF_PARTIAL : 0;
	o->op = t->op;
	if (t->rw) {
		u32 blkmask = (1U << (blkbits & 31)) - 1;

		if (pos < 0)
			pos = fpos;
		if (fl & ILOCK_O_DIRECT) {
			o->op = t->write ? ILOCK_OP_DIRECT_WRITE : ILOCK_OP_DIRECT_READ;
			if (((u64)pos | t->len) & blkmask)
				o->flags |= ILOCK_OPF_UNALIGNED;
		} else {
			o->op = t->write ? ILOCK_OP_BUFFERED_WRITE : ILOCK_OP_BUFFERED_READ;
		}
		if (t->write && (fl & ILOCK_O_APPEND))
			o->flags |= ILOCK_OPF_APPEND;
	}
	d->pos = pos;
	d->len = t->len;
	/* a keep-size fallocate never moves EOF: leave the size out */
	ilock_op_set_range(o, (u64)pos, t->len,
			   t->keep_size || isize < 0 ? ILOCK_RANGE_EOF : (u64)isize);
	return true;
}

/* Sum a user iovec array of the current task; false if it had to stop. */
static __always_inline bool iov_len(u64 uiov, u64 cnt, u64 *len)
{
	struct { u64 base, len; } v;

	*len = 0;
	for (int i = 0; i < ILOCK_IOV_MAX; i++) {
		if ((u64)i >= cnt)
			return true;
		if (bpf_probe_read_user(&v, sizeof(v), (void *)(uiov + i * sizeof(v))))
			return false;
		*len += v.len;
	}
	return cnt <= ILOCK_IOV_MAX;
}

/* io_submit: the first iocb on the lock's inode (current task only). */
static __always_inline bool decode_io_submit(struct task_struct *task, const struct sysargs *sa,
					     u64 inode, struct opdec *o, bool fast)
{
	u64 nr = sa->a[1];

#pragma clang loop unroll(disable)
	for (int i = 0; i < ILOCK_IOCB_MAX; i++) {
		/* struct iocb (include/uapi/linux/aio_abi.h) */
		struct { u64 data; u32 key, rw_flags; u16 opcode; s16 prio; u32 fd;
			 u64 buf, nbytes; s64 offset; } cb;
		struct fd_try t = {};
		u64 ptr;

		if ((u64)i >= nr)
			break;
		if (bpf_probe_read_user(&ptr, sizeof(ptr), (void *)(sa->a[2] + i * sizeof(ptr))) ||
		    bpf_probe_read_user(&cb, sizeof(cb), (void *)ptr))
			continue;
		t.fd = cb.fd;
		t.pos = cb.offset;
		switch (cb.opcode) {
		case 0: /* IOCB_CMD_PREAD */
		case 1: /* IOCB_CMD_PWRITE */
			t.rw = 1;
			t.write = cb.opcode == 1;
			t.len = cb.nbytes;
			break;
		case 7: /* IOCB_CMD_PREADV: nbytes counts segments */
		case 8: /* IOCB_CMD_PWRITEV */
			t.rw = 1;
			t.write = cb.opcode == 8;
			t.partial = 1;
			break;
		case 2: /* IOCB_CMD_FSYNC */
		case 3: /* IOCB_CMD_FDSYNC */
			t.op = cb.opcode == 2 ? ILOCK_OP_FSYNC : ILOCK_OP_FDATASYNC;
			t.pos = 0;
			break;
		default:
			continue;
		}
		if (try_fd(task, &t, inode, o, fast))
			return true;
	}
	return false;
}

/* Syscall numbers (x86-64). Other architectures rely on the tracepoints. */
enum {
	NR_read = 0, NR_write = 1, NR_open = 2, NR_stat = 4, NR_lstat = 6, NR_ioctl = 16,
	NR_pread64 = 17, NR_pwrite64 = 18, NR_readv = 19, NR_writev = 20, NR_access = 21,
	NR_sendfile = 40, NR_execve = 59, NR_fsync = 74, NR_fdatasync = 75, NR_truncate = 76,
	NR_ftruncate = 77, NR_getdents = 78, NR_chdir = 80, NR_rename = 82, NR_mkdir = 83,
	NR_rmdir = 84, NR_creat = 85, NR_link = 86, NR_unlink = 87, NR_symlink = 88,
	NR_readlink = 89, NR_mknod = 133, NR_getdents64 = 217, NR_io_submit = 209,
	NR_openat = 257, NR_mkdirat = 258, NR_mknodat = 259, NR_newfstatat = 262,
	NR_unlinkat = 263, NR_renameat = 264, NR_linkat = 265, NR_symlinkat = 266,
	NR_readlinkat = 267, NR_faccessat = 269, NR_splice = 275, NR_sync_file_range = 277,
	NR_fallocate = 285, NR_preadv = 295, NR_pwritev = 296, NR_renameat2 = 316,
	NR_execveat = 322, NR_copy_file_range = 326, NR_preadv2 = 327, NR_pwritev2 = 328,
	NR_statx = 332, NR_faccessat2 = 439,
};

/*
 * A namespace op on the lock's inode: what the syscall does to the
 * directory, or to the file unlink, rename or link names (they lock it
 * too). By path, so the inode cannot be checked against an fd; these
 * syscalls lock no other inodes. No byte range.
 */
static __always_inline bool namespace_op(u64 nr, const u64 *a, u64 inode, bool fast,
					 struct opdec *o)
{
	u8 op;

	switch (nr) {
	case NR_unlink:
		op = ILOCK_OP_UNLINK;
		break;
	case NR_unlinkat:
		op = a[2] & ILOCK_AT_REMOVEDIR ? ILOCK_OP_RMDIR : ILOCK_OP_UNLINK;
		break;
	case NR_rmdir:
		op = ILOCK_OP_RMDIR;
		break;
	case NR_rename:
	case NR_renameat:
	case NR_renameat2:
		op = ILOCK_OP_RENAME;
		break;
	case NR_link:
	case NR_linkat:
	case NR_symlink:
	case NR_symlinkat:
		op = ILOCK_OP_LINK;
		break;
	default:
		/* the rest lock only directories: a file's lock is not theirs to name */
		if (!inode_is_dir(inode, fast))
			return false;
		switch (nr) {
		case NR_open:
		case NR_openat:
			op = (nr == NR_open ? a[1] : a[2]) & ILOCK_O_CREAT ? ILOCK_OP_CREATE
									   : ILOCK_OP_LOOKUP;
			break;
		case NR_creat:
		case NR_mknod:
		case NR_mknodat:
			op = ILOCK_OP_CREATE;
			break;
		case NR_mkdir:
		case NR_mkdirat:
			op = ILOCK_OP_MKDIR;
			break;
		case NR_getdents:
		case NR_getdents64:
			op = ILOCK_OP_READDIR;
			break;
		case NR_stat:
		case NR_lstat:
		case NR_newfstatat:
		case NR_statx:
		case NR_access:
		case NR_faccessat:
		case NR_faccessat2:
		case NR_readlink:
		case NR_readlinkat:
		case NR_execve:
		case NR_execveat:
		case NR_chdir:
			op = ILOCK_OP_LOOKUP;
			break;
		default:
			return false;
		}
	}
	o->i.op = op;
	o->i.flags = 0;
	o->pos = o->len = 0;
	ilock_op_set_range(&o->i, 0, 0, ILOCK_RANGE_EOF);  /* clears RANGE: none */
	return true;
}

/* A user offset pointer of the current task, or -1 (the file position). */
static __always_inline s64 user_off(bool cur, u64 uptr)
{
	s64 off = -1;

	if (cur && uptr && bpf_probe_read_user(&off, sizeof(off), (void *)uptr))
		off = -1;
	return off;
}

/*
 * The op a task's syscall implies on `inode`. User memory (iovecs, iocbs,
 * offset pointers) is readable only for the current task. The switch only
 * says which fds to look at and how; one try_fd loop does the rest, so the
 * program stays small.
 */
static __always_inline bool decode_syscall(struct task_struct *task, bool cur, bool fast,
					   const struct sysargs *sa, u64 inode, struct opdec *o)
{
#if defined(__TARGET_ARCH_x86)
	struct fd_try t[2] = {};
	const u64 *a = sa->a;
	u64 len = 0;
	int n = 1;

	if (!sa->in_syscall)
		return false;
	t[0].fd = a[0];
	t[0].pos = -1;
	t[0].rw = 1;
	switch (sa->nr) {
	case NR_read:
	case NR_write:
		t[0].write = sa->nr == NR_write;
		t[0].len = a[2];
		break;
	case NR_pread64:
	case NR_pwrite64:
		t[0].write = sa->nr == NR_pwrite64;
		t[0].pos = a[3];
		t[0].len = a[2];
		break;
	case NR_readv:
	case NR_writev:
	case NR_preadv:
	case NR_pwritev:
	case NR_preadv2:
	case NR_pwritev2:
		t[0].write = sa->nr == NR_writev || sa->nr == NR_pwritev || sa->nr == NR_pwritev2;
		if (sa->nr != NR_readv && sa->nr != NR_writev)
			t[0].pos = a[3];  /* preadv2's -1 means the file position too */
		t[0].partial = !(cur && iov_len(a[1], a[2], &len));
		t[0].len = len;
		break;
	case NR_fsync:
	case NR_fdatasync:
		t[0].rw = 0;
		t[0].op = sa->nr == NR_fsync ? ILOCK_OP_FSYNC : ILOCK_OP_FDATASYNC;
		t[0].pos = 0;
		break;
	case NR_sync_file_range:
		t[0].rw = 0;
		t[0].op = ILOCK_OP_FDATASYNC;
		t[0].pos = a[1];
		t[0].len = a[2];
		break;
	case NR_ftruncate:
		t[0].rw = 0;
		t[0].op = ILOCK_OP_TRUNCATE;
		t[0].pos = 0;
		break;
	case NR_fallocate: {
		u32 mode = a[1];

		t[0].rw = 0;
		t[0].op = mode & ILOCK_FALLOC_PUNCH_HOLE ? ILOCK_OP_PUNCH_HOLE :
			  mode & ILOCK_FALLOC_ZERO_RANGE ? ILOCK_OP_ZERO_RANGE :
			  mode & (ILOCK_FALLOC_COLLAPSE_RANGE | ILOCK_FALLOC_INSERT_RANGE) ?
			  ILOCK_OP_SHIFT_RANGE : ILOCK_OP_FALLOCATE;
		t[0].pos = a[2];
		t[0].len = a[3];
		t[0].keep_size = !!(mode & ILOCK_FALLOC_KEEP_SIZE);
		break;
	}
	case NR_ioctl:
		t[0].rw = 0;
		t[0].op = ILOCK_OP_OTHER;
		t[0].pos = 0;
		break;
	case NR_io_submit:
		return cur && decode_io_submit(task, sa, inode, o, fast);
	case NR_open:
	case NR_openat:
	case NR_creat:
		/* on the directory: a create or a lookup; on the file: O_TRUNC */
		if (inode_is_dir(inode, fast))
			return namespace_op(sa->nr, a, inode, fast, o);
		if (sa->nr != NR_creat && !((sa->nr == NR_open ? a[1] : a[2]) & ILOCK_O_TRUNC))
			return false;
		/* fall through */
	case NR_truncate:
		/* by path: the inode cannot be checked, but these lock no other inode's data */
		o->i.op = ILOCK_OP_TRUNCATE;
		o->i.flags = 0;
		o->pos = o->len = 0;
		ilock_op_set_range(&o->i, 0, 0, ILOCK_RANGE_EOF);
		return true;
	case NR_copy_file_range:
	case NR_splice:
		/* (fd_in, off_in *, fd_out, off_out *, len): the writing end first */
		t[0].fd = a[2];
		t[0].write = 1;
		t[0].pos = user_off(cur, a[3]);
		t[0].partial = !cur && a[3];
		t[0].len = a[4];
		t[1] = t[0];
		t[1].fd = a[0];
		t[1].write = 0;
		t[1].pos = user_off(cur, a[1]);
		t[1].partial = !cur && a[1];
		n = 2;
		break;
	case NR_sendfile:
		/* (out_fd, in_fd, off_t *offset, count) */
		t[0].fd = a[1];
		t[0].pos = user_off(cur, a[2]);
		t[0].partial = !cur && a[2];
		t[0].len = a[3];
		t[1] = t[0];
		t[1].fd = a[0];
		t[1].write = 1;
		t[1].pos = -1;
		t[1].partial = 0;
		n = 2;
		break;
	default:
		return namespace_op(sa->nr, a, inode, fast, o);
	}
#pragma clang loop unroll(disable)
	for (int i = 0; i < 2; i++)
		if (i < n && try_fd(task, &t[i], inode, o, fast))
			return true;
#endif
	return false;
}

/*
 * Does the tracepoint's op belong to the syscall we decoded? Same
 * direction, and the position the tracepoint saw is the one the syscall
 * names (or, for a per-folio event, inside its range). A previous call
 * through the same syscall on the same file fails this unless it did the
 * very same I/O, which then tells the same.
 */
static __always_inline bool same_call(const struct cur_op *st, const struct opdec *d)
{
	if (ilock_op_is_write(st->info.op) != ilock_op_is_write(d->i.op))
		return false;
	if (!(st->info.flags & ILOCK_OPF_PARTIAL))
		return st->pos == d->pos;
	if (st->pos < d->pos)
		return false;
	return (d->i.flags & ILOCK_OPF_PARTIAL) || st->pos < d->pos + (d->len ? d->len : 1);
}

/*
 * Merge the two sources for one side of wait p on its inode: the waiter
 * (RESOLVE_CUR: task is current) into p->wop, the holder into p->hop; regs
 * as read_sysargs() takes it. The syscall's range is exact for the call;
 * the tracepoint knows what the filesystem really did (a direct write gone
 * buffered, how ext4 took the lock). Without a syscall to check it against
 * (kernel threads, io_uring workers, faults), the tracepoint's op is taken
 * as it is.
 */
static __noinline void resolve_op(struct task_struct *task, u32 how, u64 regs,
				  const struct cur_op *st, struct pending_wait *p)
{
	struct ilock_op_info *o = how & RESOLVE_CUR ? &p->wop : &p->hop;
	struct opdec dec = {};
	struct sysargs sa;
	bool have_dec, have_st;
	u64 inode = p->inode;

	o->op = ILOCK_OP_UNKNOWN;
	o->flags = 0;
	read_sysargs(task, how, regs, &sa);
	have_dec = decode_syscall(task, how & RESOLVE_CUR, how & RESOLVE_FAST, &sa, inode, &dec);
	have_st = st && st->inode == inode && st->info.op != ILOCK_OP_UNKNOWN &&
		  (st->sysnr == sa.nr || (have_dec && st->sysnr == ILOCK_SYSNR_UNSET));
	if (have_dec) {
		*o = dec.i;
		if (have_st && same_call(st, &dec)) {
			o->op = st->info.op;
			o->flags |= st->info.flags & ILOCK_OPF_EXCL_LOCK;
		}
	} else if (have_st) {
		/* same syscall number (a fault), or both kernel threads */
		*o = st->info;
	}
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

/*
 * At contention_begin, after read_holder(): the waiter's op and stack, and
 * through a counted reference to the owner, the holder's op and stack.
 * ctx is the program's context (NULL where stacks cannot be taken); btf
 * says whether task kfuncs may be called (tp_btf, not raw_tp). now is the
 * wait's start, read once: a clock read costs ~67 ns on this VM. me is
 * the current task, asked for once by the caller.
 */
static __always_inline void ops_wait_begin(void *ctx, bool btf, struct task_state *ts,
					   struct pending_wait *p, struct inode *inode,
					   struct task_struct *me, u64 now)
{
	u32 fast = KFAST(btf) ? RESOLVE_FAST : 0;
	u64 regs;

	p->inode = (u64)inode;
	p->wop.op = p->hop.op = ILOCK_OP_UNKNOWN;
	p->wop.flags = p->hop.flags = 0;
	p->holder_stack = 0;
	p->waiter_stack = -1;
	if (!cfg_ops)
		return;
	/* both sides' registers are found from mine, kept in my task storage */
	regs = fast ? my_regs_addr(me, &ts->regs) : 0;
	resolve_op(me, RESOLVE_CUR | fast, regs, op_of(me->pid), p);
	if (ctx && cfg_waiter_stacks)
		waiter_stack(ctx, ts, p, now);
	/* bpf_rdonly_cast came in 6.2: without it, no holder op or stack */
	if (fast && p->holder_task && p->holder_pid) {
		struct task_struct *h = kcast(p->holder_task, struct task_struct);
		struct cur_op st;

		if (h->flags & ILOCK_PF_EXITING) {
			count(ILOCK_LOST_HOLDER_GONE);
			return;
		}
		resolve_op(h, fast, other_regs(h, me, regs),
			   op_snapshot(p->holder_pid, &st) ? &st : NULL, p);
		if (cfg_holder_stacks)
			sample_holder_stack(h, ts, p, now);
	}
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

/*
 * Everything keyed by what the waiter did: edge, range class, stacks. The
 * per-lock range classes are not kept apart: userspace adds them up from
 * the edges, whose keys carry the class (snap_ranges_from_edges), so a
 * wait costs one hash update less while the winner holds the lock.
 */
static __always_inline void account_wait(struct ilock_edge_key *ek, const struct ilock_op_info *hop,
					 const struct ilock_op_info *wop, u64 ns, u64 holder_stack,
					 s64 waiter_stack, u32 w)
{
	u8 range = ilock_range_class(hop, wop);
	struct ilock_edge_stats *es;

	ek->holder_op = hop->op;
	ek->holder_op_flags = hop->flags & ILOCK_OPF_KEY_MASK;
	ek->waiter_op = wop->op;
	ek->waiter_op_flags = wop->flags & ILOCK_OPF_KEY_MASK;
	ek->range = range;
	es = edge_add(ek, ns, w);
	if (!cfg_ops)
		return;
	if (waiter_stack >= 0 && !(es && edge_wstack_add(es, (u64)waiter_stack, ns, w)))
		add_stack(ek, (u64)waiter_stack, ILOCK_STACK_WAITER, ns, w);
	if (holder_stack)
		add_stack(ek, holder_stack, ILOCK_STACK_HOLDER, ns, w);
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

/* At contention_end, instead of a bare edge: an edge with ops and ranges. */
static __always_inline void ops_wait_end(struct task_state *ts, const struct pending_wait *p,
					 struct task_struct *me, u64 ns)
{
	struct cur_op *o;
	struct ilock_edge_key ek = {
		.ino = p->key.ino,
		.dev = p->key.dev,
		.gen = p->key.gen,
		.class = p->key.class,
		.holder_mode = p->holder_mode,
		.waiter_mode = p->key.mode,
		.holder_pid = p->holder_pid,
		.holder_tgid = p->holder_tgid,
		.waiter_pid = me->pid,
		.waiter_tgid = me->tgid,
	};

	__builtin_memcpy(ek.holder_comm, p->holder_comm, sizeof(ek.holder_comm));
	/* NUL-padded (strscpy_pad), so two loads, not a helper call that copies */
	__builtin_memcpy(ek.waiter_comm, me->comm, sizeof(ek.waiter_comm));
	/*
	 * Only the I/O events of --ops io fire after the lock is taken; without
	 * them no op would come to a deferred wait, which would then sit in
	 * task storage, unreported, until the thread's next one.
	 */
	if (!cfg_ops || !cfg_ops_io || p->wop.op != ILOCK_OP_UNKNOWN) {
		account_wait(&ek, &p->hop, &p->wop, ns, p->holder_stack, p->waiter_stack, p->weight);
		return;
	}
	/* one deferred wait per thread: an older one never got its op */
	o = op_claim(me->pid);
	finish_deferred(ts, o, &zero_op);
	count(ILOCK_EV_OP_DEFERRED);
	ts->deferred.ek = ek;
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
