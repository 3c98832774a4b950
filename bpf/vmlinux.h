/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Minimal kernel types for ilock's CO-RE programs.
 *
 * Checked in on purpose instead of a full `bpftool btf dump` of the build
 * host: the build then does not depend on the kernel it runs on (it builds in
 * containers and on hosts without BTF), the diff is reviewable, and this file
 * lists every kernel field ilock relies on. Only the fields we read are
 * declared; CO-RE relocates each access against the running kernel's BTF,
 * so order, padding and sizes here do not matter, only names and kinds.
 */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

#include <linux/types.h>
#include <linux/bpf.h>

typedef __u8 u8;
typedef __s8 s8;
typedef __u16 u16;
typedef __s16 s16;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s64 s64;
typedef _Bool bool;
enum { false = 0, true = 1 };

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

typedef struct { s64 counter; } atomic_long_t;

/*
 * owner became atomic_long_t in 5.3 (94a9717b3c40); before it was a
 * struct task_struct *. Both are 8 bytes at the same field name, and the
 * low bits carry flags in both, so one 8-byte read at the relocated offset
 * serves every kernel ilock runs on (5.11+, for BPF task storage).
 */
struct list_head {
	struct list_head *next;
	struct list_head *prev;
};

struct rw_semaphore {
	atomic_long_t count;
	atomic_long_t owner;
	struct list_head wait_list;
};

struct task_struct;

enum rwsem_waiter_type {
	RWSEM_WAITING_FOR_WRITE = 0,
	RWSEM_WAITING_FOR_READ = 1,
};

/* kernel/locking/rwsem.c; probed with bpf_core_type_exists() */
struct rwsem_waiter {
	struct list_head list;
	struct task_struct *task;
	enum rwsem_waiter_type type;
};

struct files_struct;

struct task_struct {
	unsigned int __state;        /* 0: TASK_RUNNING */
	unsigned int flags;          /* PF_KTHREAD, PF_IO_WORKER, PF_EXITING */
	void *stack;                 /* its pt_regs sit at a fixed offset from here */
	int pid;
	int tgid;
	char comm[16];
	struct files_struct *files;
	unsigned long blocker;       /* CONFIG_DETECT_HUNG_TASK_BLOCKER: lock | BLOCKER_TYPE_* */
};

/* x86-64 registers as kprobes see them (BPF_KPROBE/BPF_KRETPROBE read these). */
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

/* name/len sit in anonymous unions in the kernel; CO-RE descends into them. */
struct qstr {
	u32 len;
	const unsigned char *name;
};

struct hlist_node {
	struct hlist_node *next;
	struct hlist_node **pprev;
};

struct hlist_head {
	struct hlist_node *first;
};

struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;  /* union { __d_name; d_name; } since 6.14 */
	union {
		struct hlist_node d_alias;
	} d_u;
};

struct super_block {
	u32 s_dev;
	unsigned long s_magic;
	void *s_fs_info;             /* struct ext4_sb_info * on ext4 */
};

struct inode;

/* invalidate_lock arrived in 5.15 (730633f0b7f9); probed before use. */
struct address_space {
	struct inode *host;
	struct rw_semaphore invalidate_lock;
};

struct inode {
	unsigned short i_mode;
	unsigned long i_ino;
	u32 i_generation;
	unsigned int i_nlink;
	s64 i_size;
	u8 i_blkbits;
	struct super_block *i_sb;
	struct address_space *i_mapping;
	struct rw_semaphore i_rwsem;
	struct hlist_head i_dentry;
	struct address_space i_data;
};

/*
 * CO-RE flavour of struct xfs_inode before 5.15: the XFS MMAPLOCK was its
 * own semaphore, i_mmaplock (an mrlock_t, the rw_semaphore its first
 * member, in older kernels), until "xfs: Convert to use invalidate_lock"
 * (5.15) moved it to the mapping's invalidate_lock. Probed with
 * bpf_core_field_exists(); absent, and compiled out at load, on 5.15+.
 */
struct xfs_inode___pre515 {
	struct rw_semaphore i_mmaplock;
	struct inode i_vnode;
};

/*
 * i_lock was an mrlock_t wrapping the rw_semaphore as its first member
 * until 5.18 (xfs: "replace mrlock_t with rw_semaphores"); the offset of
 * the semaphore is the offset of i_lock either way.
 */
struct xfs_inode {
	u64 i_ino;
	struct rw_semaphore i_lock;
	struct inode i_vnode;
};

/*
 * Operations and byte ranges (ops.bpf.c, opview.bpf.h): the I/O
 * tracepoints' arguments and what a syscall's file descriptor points at.
 */
struct file {
	struct inode *f_inode;
	struct address_space *f_mapping;
	unsigned int f_flags;
	s64 f_pos;
};

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
};

struct files_struct {
	struct fdtable *fdt;
};

struct kiocb {
	struct file *ki_filp;
	s64 ki_pos;
	int ki_flags;
};

/* count sits in anonymous unions since 6.0; CO-RE descends into them. */
struct iov_iter {
	bool data_source;    /* 6.1+: ITER_SOURCE, the iterator feeds a write */
	unsigned long count;
};

/*
 * x86-64 user registers at kernel entry. A flavour of struct pt_regs so it
 * cannot clash with another object's declaration of the plain type.
 */
struct pt_regs___ilock {
	unsigned long r11, r10, r8, cx, dx, si, di, orig_ax, ip, flags;
};

/* ext4 and jbd2, for the journal waits of fsync; probed before use. */
struct block_device {
	u32 bd_dev;
};

struct journal_s;

struct transaction_s {
	struct journal_s *t_journal;
	u32 t_tid;
};

struct journal_s {
	struct block_device *j_fs_dev;
	struct task_struct *j_task;
};

struct ext4_sb_info {
	struct journal_s *s_journal;
};

struct ext4_inode_info {
	u32 i_sync_tid;
	u32 i_datasync_tid;
	struct inode vfs_inode;
};

/* The task iterator's context (kernel/bpf/task_iter.c): waits in progress. */
struct seq_file;
struct cgroup {
	int level;                   /* (only named: the cgroup kfuncs take pointers) */
};

struct bpf_iter_meta {
	struct seq_file *seq;
	u64 session_id;
	u64 seq_num;
};

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
};

#pragma clang attribute pop

#endif /* __VMLINUX_H__ */
