// SPDX-License-Identifier: GPL-2.0-only
/*
 * What one piece of work costs inside a tracepoint program on this machine:
 * programs on xfs_iunlock, each doing one thing ilock's programs do, all
 * attached at once so they see the same events and the same load. Run by
 * scripts/bench/anatomy.sh; read run_time_ns / run_cnt of each.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

struct key { u64 ino; u32 dev; u8 class, mode; u16 pad; };
struct val { u64 count, total, max, hist[32]; };

struct tstate { u64 words[80]; };  /* about ilock's task_state */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct key);
	__type(value, struct val);
} shared SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct key);
	__type(value, struct val);
} percpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tstate);
} tstore SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, u32);
	__type(value, u64);
} pcounter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1024);
	__uint(key_size, sizeof(u32));
	__uint(value_size, 32 * sizeof(u64));
} stacks SEC(".maps");

static const struct val zero;

static __always_inline void fill(struct key *k, struct xfs_inode *ip, unsigned int flags)
{
	k->ino = ip->i_vnode.i_ino;
	k->dev = ip->i_vnode.i_sb->s_dev;
	k->class = flags & 0xf;
	k->mode = 0;
	k->pad = 0;
}

static __always_inline struct val *get(void *map, struct key *k)
{
	struct val *v = bpf_map_lookup_elem(map, k);

	if (v)
		return v;
	bpf_map_update_elem(map, k, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, k);
}

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_empty, struct xfs_inode *ip, unsigned int flags)
{
	return 0;
}

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_ktime, struct xfs_inode *ip, unsigned int flags)
{
	return bpf_ktime_get_ns() == 1;
}

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_counter, struct xfs_inode *ip, unsigned int flags)
{
	u32 k = 0;
	u64 *v = bpf_map_lookup_elem(&pcounter, &k);

	if (v)
		(*v)++;
	return 0;
}

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_tstorage, struct xfs_inode *ip, unsigned int flags)
{
	struct tstate *t = bpf_task_storage_get(&tstore, bpf_get_current_task_btf(), 0,
						BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (t)
		t->words[0]++;
	return 0;
}

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_btfkey, struct xfs_inode *ip, unsigned int flags)
{
	struct key k;

	if (!ip)
		return 0;
	fill(&k, ip, flags);
	return k.ino == 1;
}

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_hash_lookup, struct xfs_inode *ip, unsigned int flags)
{
	struct key k;

	if (!ip)
		return 0;
	fill(&k, ip, flags);
	return get(&shared, &k) != 0;
}

/* A lookup in map, then three adds to the entry: atomic, or plain. */
static __always_inline int add3(void *map, struct xfs_inode *ip, unsigned int flags, bool atomic)
{
	struct key k;
	struct val *v;

	if (!ip)
		return 0;
	fill(&k, ip, flags);
	v = get(map, &k);
	if (!v)
		return 0;
	if (atomic) {
		__sync_fetch_and_add(&v->count, 1);
		__sync_fetch_and_add(&v->total, 1000);
		__sync_fetch_and_add(&v->hist[10], 1);
	} else {
		v->count++;
		v->total += 1000;
		v->hist[11]++;
	}
	return 0;
}

/* one entry per inode, written by every CPU: ilock's lock_holds today */
SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_hash_atomic, struct xfs_inode *ip, unsigned int flags)
{
	return add3(&shared, ip, flags, true);
}

/* the same in a per-CPU hash: atomics on a line no other CPU writes */
SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_pcpu_atomic, struct xfs_inode *ip, unsigned int flags)
{
	return add3(&percpu, ip, flags, true);
}

/* per-CPU and plain adds (no lock prefix) */
SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_pcpu_plain, struct xfs_inode *ip, unsigned int flags)
{
	return add3(&percpu, ip, flags, false);
}

/* two clock reads: is the clock's price real, or where its program runs? */
SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_ktime2, struct xfs_inode *ip, unsigned int flags)
{
	return bpf_ktime_get_ns() == bpf_ktime_get_ns();
}

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_stackid, struct xfs_inode *ip, unsigned int flags)
{
	return bpf_get_stackid(ctx, &stacks, 0) == -1;
}

/*
 * Reading through a bare address (a lock's owner, a lock's inode): four
 * loads the way classify_lock and read_holder do them, by helper call...
 */
static __always_inline u64 bare(struct xfs_inode *ip)
{
	return (u64)ip + bpf_core_field_offset(struct xfs_inode, i_vnode);
}

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_probe_read4, struct xfs_inode *ip, unsigned int flags)
{
	struct inode *inode = (void *)bare(ip);
	void *mapping = NULL;
	struct super_block *sb = NULL;
	u64 ino = 0;
	u32 dev = 0;

	bpf_probe_read_kernel(&mapping, sizeof(mapping), &inode->i_mapping);
	bpf_probe_read_kernel(&sb, sizeof(sb), &inode->i_sb);
	bpf_probe_read_kernel(&dev, sizeof(dev), &sb->s_dev);
	bpf_probe_read_kernel(&ino, sizeof(ino), &inode->i_ino);
	return mapping == (void *)ino + dev;
}

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* ...and by loads the JIT guards itself (bpf_rdonly_cast: no call at all) */
SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_cast_read4, struct xfs_inode *ip, unsigned int flags)
{
	struct inode *inode = bpf_rdonly_cast((void *)bare(ip), bpf_core_type_id_kernel(struct inode));
	void *mapping = inode->i_mapping;
	u64 ino = inode->i_ino;
	u32 dev = inode->i_sb->s_dev;

	return mapping == (void *)ino + dev;
}

/* a trusted pointer to another task, as the holder lookup takes one */
SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_task_from_pid, struct xfs_inode *ip, unsigned int flags)
{
	struct task_struct *t = bpf_task_from_pid(bpf_get_current_pid_tgid() >> 32);

	if (t)
		bpf_task_release(t);
	return 0;
}

/* the current task's syscall number from its saved registers, as ops.bpf.c's fault sources read it */
u64 sink;

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_regs_helper, struct xfs_inode *ip, unsigned int flags)
{
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	sink = r->orig_ax;
	return 0;
}

/* ...and from the registers' offset from the stack page, kept after the first event */
u64 regs_off;

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_regs_offset, struct xfs_inode *ip, unsigned int flags)
{
	struct task_struct *me = bpf_get_current_task_btf();
	u64 off = regs_off;
	struct pt_regs *r;

	if (!off) {
		off = (u64)bpf_task_pt_regs(me) - (u64)me->stack;
		regs_off = off;
	}
	r = bpf_rdonly_cast((void *)((u64)me->stack + off), bpf_core_type_id_kernel(struct pt_regs));
	sink = r->orig_ax;
	return 0;
}

/* the cheapest helpers ilock calls many times per event, each once */
SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_cur_task, struct xfs_inode *ip, unsigned int flags)
{
	sink = bpf_get_current_task();
	return 0;
}

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_cur_task_btf, struct xfs_inode *ip, unsigned int flags)
{
	sink = bpf_get_current_task_btf()->pid;
	return 0;
}

SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_pid_tgid, struct xfs_inode *ip, unsigned int flags)
{
	sink = bpf_get_current_pid_tgid();
	return 0;
}

/* ...and one of them three times, as contention_begin calls it */
SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_cur_task3, struct xfs_inode *ip, unsigned int flags)
{
	u64 a = bpf_get_current_task();

	barrier_var(a);
	a += bpf_get_current_task();
	barrier_var(a);
	sink = a + bpf_get_current_task();
	return 0;
}

/* last in the chain: an empty program after all the others */
SEC("tp_btf/xfs_iunlock")
int BPF_PROG(an_empty_last, struct xfs_inode *ip, unsigned int flags)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
