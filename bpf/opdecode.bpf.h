/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a thread's syscall does to a contended inode, decoded at
 * contention_begin from the user registers saved at kernel entry, with
 * the fd resolved through the task's fd table (opview.bpf.h merges it
 * with the task's last I/O tracepoint).
 *
 * Included by lockwait.bpf.c only: resolve_op() and try_fd() are global
 * functions, defined once, and their kcast loads need bpf_rdonly_cast,
 * which the linker of bpftool 7.1 / libbpf 1.1 takes in one object only.
 */
#ifndef ILOCK_OPDECODE_BPF_H
#define ILOCK_OPDECODE_BPF_H

#include "opview.bpf.h"

#define ILOCK_O_DIRECT 040000U          /* x86 and most others */
#define ILOCK_O_APPEND 02000U
#define ILOCK_O_TRUNC 01000U
#define ILOCK_O_CREAT 0100U
#define ILOCK_AT_REMOVEDIR 0x200U
#define ILOCK_IOCB_MAX 4    /* io_submit iocbs looked at */
#define ILOCK_IOV_MAX 8     /* readv/writev segments summed */


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

/*
 * `task` loads directly (the current task, trusted, or through kcast), as
 * do its registers and fd table: these run inside the rwsem's wait_lock
 * for writers (contention_begin fires there), where every probe read is
 * felt. how: RESOLVE_*; with RESOLVE_FAST, regs is the task's registers'
 * address (my_regs_addr(), other_regs(); 0: unknown), else the task is
 * the current one, whose registers the helper finds.
 */
static __always_inline void read_sysargs(struct task_struct *task, u32 how, u64 regs,
					 struct sysargs *sa)
{
	struct pt_regs___ilock *r;

	sa->in_syscall = false;
	sa->nr = ILOCK_SYSNR_KERNEL;
	if (task->flags & (ILOCK_PF_KTHREAD | ILOCK_PF_IO_WORKER))
		return;
	/*
	 * Without RESOLVE_FAST only the current task is read. The helper wants
	 * a trusted task, asked for here: in a global function the verifier
	 * does not know which of the caller's tasks `task` is.
	 */
	if (!(how & RESOLVE_FAST))
		r = task_regs(bpf_get_current_task_btf());
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

/*
 * The task a decoder reads: at address task through kcast, or (0, or
 * without bpf_rdonly_cast) the current one, trusted. Global functions get
 * numbers, not the caller's typed pointers.
 */
static __always_inline struct task_struct *decoded_task(u64 task, bool fast)
{
	return fast && task ? kcast(task, struct task_struct) : bpf_get_current_task_btf();
}

/* The op through t->fd, if that fd is the lock's inode. */
static __always_inline bool fd_op(struct task_struct *task, const struct fd_try *t, u64 inode,
				  struct opdec *d, bool fast)
{
	struct ilock_op_info *o;
	struct inode *ino;
	struct file *f;
	u32 fl = 0, blkbits;
	s64 isize, fpos, pos;

	f = task_file(task, t->fd, fast);
	if (!f)
		return false;
	o = &d->i;
	pos = t->pos;
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

/*
 * fd_op() for the syscalls other than read, write, pread64 and pwrite64
 * (task: as decoded_task() takes it). Global, so verified once: inlined,
 * it was verified again for each syscall's settings of *t. The four
 * commonest (read, write, pread64, pwrite64) keep fd_op() inline: the
 * seed workload's waits are spared a call, for four more verifications.
 */
__noinline int try_fd(u64 task, const struct fd_try *t, u64 inode, struct opdec *d, u32 fast)
{
	if (!t || !d)
		return false;
	fast = fast && bpf_rdonly_cast;
	return fd_op(decoded_task(task, fast), t, inode, d, fast);
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

/* struct iocb (include/uapi/linux/aio_abi.h) */
struct iocb___ilock {
	u64 data;
	u32 key, rw_flags;
	u16 opcode;
	s16 prio;
	u32 fd;
	u64 buf, nbytes;
	s64 offset;
};

/*
 * The decoder's working memory, per CPU: the syscall's arguments, the op
 * it decodes, the fds it tries and an iocb. Off the stack: 6.1 and 6.12
 * add contention_begin's stack to resolve_op()'s and try_fd()'s, and the
 * three came to the 512 bytes allowed, so that a change of a few bytes
 * failed there. Only contention_begin calls the decoder, and a program
 * never runs nested in itself on one CPU.
 */
struct decode_scratch {
	struct sysargs sa;
	struct opdec dec;
	struct fd_try t[2];
	struct iocb___ilock cb;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct decode_scratch);
} decode_scratch SEC(".maps");

/* io_submit: the first iocb on the lock's inode (current task only). */
static __always_inline bool decode_io_submit(u64 task, struct decode_scratch *sc, u64 inode,
					     bool fast)
{
	struct iocb___ilock *cb = &sc->cb;
	struct fd_try *t = &sc->t[0];
	u64 nr = sc->sa.a[1];

#pragma clang loop unroll(disable)
	for (int i = 0; i < ILOCK_IOCB_MAX; i++) {
		u64 ptr;

		if ((u64)i >= nr)
			break;
		if (bpf_probe_read_user(&ptr, sizeof(ptr), (void *)(sc->sa.a[2] + i * sizeof(ptr))) ||
		    bpf_probe_read_user(cb, sizeof(*cb), (void *)ptr))
			continue;
		__builtin_memset(t, 0, sizeof(*t));
		t->fd = cb->fd;
		t->pos = cb->offset;
		switch (cb->opcode) {
		case 0: /* IOCB_CMD_PREAD */
		case 1: /* IOCB_CMD_PWRITE */
			t->rw = 1;
			t->write = cb->opcode == 1;
			t->len = cb->nbytes;
			break;
		case 7: /* IOCB_CMD_PREADV: nbytes counts segments */
		case 8: /* IOCB_CMD_PWRITEV */
			t->rw = 1;
			t->write = cb->opcode == 8;
			t->partial = 1;
			break;
		case 2: /* IOCB_CMD_FSYNC */
		case 3: /* IOCB_CMD_FDSYNC */
			t->op = cb->opcode == 2 ? ILOCK_OP_FSYNC : ILOCK_OP_FDATASYNC;
			t->pos = 0;
			break;
		default:
			continue;
		}
		if (try_fd(task, t, inode, &sc->dec, fast))
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
 * One end of a copy between two fds: len bytes at the offset the user
 * pointer uoff names (0: the file's position). Another task's pointer
 * cannot be read: its position is then known only to be somewhere.
 */
static __always_inline void copy_end(struct fd_try *t, bool cur, s64 fd, bool write, u64 uoff,
				     u64 len)
{
	t->fd = fd;
	t->rw = 1;
	t->write = write;
	t->pos = user_off(cur, uoff);
	t->partial = !cur && uoff;
	t->len = len;
}

/* A syscall that does one fixed op through its fd, on [pos, pos + len). */
static __always_inline void fixed_op(struct fd_try *t, u8 op, s64 pos, u64 len)
{
	t->rw = 0;
	t->op = op;
	t->pos = pos;
	t->len = len;
}

/*
 * The op a task's syscall implies on `inode`. User memory (iovecs, iocbs,
 * offset pointers) is readable only for the current task. The switch only
 * says which fds to look at and how; one try_fd loop does the rest, so the
 * program stays small.
 */
static __always_inline bool decode_syscall(u64 task, bool cur, bool fast,
					   struct decode_scratch *sc, u64 inode)
{
#if defined(__TARGET_ARCH_x86)
	const struct sysargs *sa = &sc->sa;
	struct opdec *o = &sc->dec;
	struct fd_try *t = sc->t;
	const u64 *a = sa->a;
	u64 len = 0;
	int n = 1;

	if (!sa->in_syscall)
		return false;
	__builtin_memset(sc->t, 0, sizeof(sc->t));
	t[0].fd = a[0];
	t[0].pos = -1;
	t[0].rw = 1;
	switch (sa->nr) {
	case NR_read:
	case NR_write:
		t[0].write = sa->nr == NR_write;
		t[0].len = a[2];
		return fd_op(decoded_task(task, fast), &t[0], inode, o, fast);
	case NR_pread64:
	case NR_pwrite64:
		t[0].write = sa->nr == NR_pwrite64;
		t[0].pos = a[3];
		t[0].len = a[2];
		return fd_op(decoded_task(task, fast), &t[0], inode, o, fast);
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
		fixed_op(&t[0], sa->nr == NR_fsync ? ILOCK_OP_FSYNC : ILOCK_OP_FDATASYNC, 0, 0);
		break;
	case NR_sync_file_range:
		fixed_op(&t[0], ILOCK_OP_SYNC_FILE_RANGE, a[1], a[2]);
		break;
	case NR_ftruncate:
		/* (fd, length): the new size; the range runs from the lower of it and the old */
		fixed_op(&t[0], ILOCK_OP_TRUNCATE, a[1], 0);
		break;
	case NR_fallocate: {
		u32 mode = a[1];

		fixed_op(&t[0], mode & ILOCK_FALLOC_PUNCH_HOLE ? ILOCK_OP_PUNCH_HOLE :
				mode & ILOCK_FALLOC_ZERO_RANGE ? ILOCK_OP_ZERO_RANGE :
				mode & (ILOCK_FALLOC_COLLAPSE_RANGE | ILOCK_FALLOC_INSERT_RANGE) ?
				ILOCK_OP_SHIFT_RANGE : ILOCK_OP_FALLOCATE, a[2], a[3]);
		t[0].keep_size = !!(mode & ILOCK_FALLOC_KEEP_SIZE);
		break;
	}
	case NR_ioctl:
		fixed_op(&t[0], ILOCK_OP_OTHER, 0, 0);
		break;
	case NR_io_submit:
		return cur && decode_io_submit(task, sc, inode, fast);
	case NR_open:
	case NR_openat:
	case NR_creat:
		/* on the directory: a create or a lookup; on the file: O_TRUNC */
		if (inode_is_dir(inode, fast))
			return namespace_op(sa->nr, a, inode, fast, o);
		if (sa->nr != NR_creat && !((sa->nr == NR_open ? a[1] : a[2]) & ILOCK_O_TRUNC))
			return false;
		/* fall through */
	case NR_truncate: {
		/*
		 * By path: the inode cannot be checked, but these lock no other
		 * inode's data, so its size is the old one. O_TRUNC: size 0.
		 */
		s64 isize = fast ? kcast((void *)inode, struct inode)->i_size
				 : BPF_CORE_READ((struct inode *)inode, i_size);

		o->i.op = ILOCK_OP_TRUNCATE;
		o->i.flags = 0;
		o->pos = sa->nr == NR_truncate ? a[1] : 0;
		o->len = 0;
		ilock_op_set_range(&o->i, o->pos, 0, isize < 0 ? ILOCK_RANGE_EOF : (u64)isize);
		return true;
	}
	case NR_copy_file_range:
	case NR_splice:
		/* (fd_in, off_in *, fd_out, off_out *, len): the writing end first */
		copy_end(&t[0], cur, a[2], true, a[3], a[4]);
		copy_end(&t[1], cur, a[0], false, a[1], a[4]);
		n = 2;
		break;
	case NR_sendfile:
		/* (out_fd, in_fd, off_t *offset, count): in_fd's offset, out_fd's position */
		copy_end(&t[0], cur, a[1], false, a[2], a[3]);
		copy_end(&t[1], cur, a[0], true, 0, a[3]);
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
 * (RESOLVE_CUR: the current task) into p->wop, the holder into p->hop.
 * task: the task's address (0 for the current one: the helper finds it);
 * the holder only with RESOLVE_FAST. regs as read_sysargs() takes it. The
 * syscall's range is exact for the call; the tracepoint knows what the
 * filesystem really did (a direct write gone buffered, how ext4 took the
 * lock). Without a syscall to check it against (kernel threads, io_uring
 * workers, faults), the tracepoint's op is taken as it is.
 *
 * A global function: the verifier checks it once, on its own, not again
 * for every state its callers reach it in. As a static one it was most of
 * contention_begin's verification (820,000 of the 1,000,000 instructions
 * the verifier allows, 2.7 s of every start; docs/PERFORMANCE.md). So it
 * takes numbers and plain memory only, and st may be NULL.
 */
__noinline int resolve_op(u64 task, u32 how, u64 regs, const struct cur_op *st,
			  struct pending_wait *p)
{
	bool fast = (how & RESOLVE_FAST) && bpf_rdonly_cast;
	bool cur = how & RESOLVE_CUR;
	struct decode_scratch *sc;
	struct ilock_op_info *o;
	bool have_dec, have_st;
	u32 zero = 0;
	u64 inode;

	if (!p || (!cur && !(fast && task)))
		return 0;
	o = cur ? &p->wop : &p->hop;
	inode = p->inode;
	o->op = ILOCK_OP_UNKNOWN;
	o->flags = 0;
	sc = bpf_map_lookup_elem(&decode_scratch, &zero);
	if (!sc)
		return 0;
	__builtin_memset(&sc->dec, 0, sizeof(sc->dec));
	read_sysargs(decoded_task(task, fast), fast ? RESOLVE_FAST : 0, regs, &sc->sa);
	have_dec = decode_syscall(task, cur, fast, sc, inode);
	have_st = st && st->inode == inode && st->info.op != ILOCK_OP_UNKNOWN &&
		  (st->sysnr == sc->sa.nr || (have_dec && st->sysnr == ILOCK_SYSNR_UNSET));
	if (have_dec) {
		*o = sc->dec.i;
		if (have_st && same_call(st, &sc->dec)) {
			o->op = st->info.op;
			o->flags |= st->info.flags & ILOCK_OPF_EXCL_LOCK;
		}
	} else if (have_st) {
		/* same syscall number (a fault), or both kernel threads */
		*o = st->info;
	}
	return 0;
}

#endif /* ILOCK_OPDECODE_BPF_H */
