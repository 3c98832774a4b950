// SPDX-License-Identifier: GPL-2.0-only
/*
 * Journal waits of ext4 fsync, reported as their own class, jbd2_wait,
 * rather than blamed on an inode lock.
 *
 * jbd2's tracepoints fire in the commit thread and name no inode and no
 * waiting task; ext4_sync_file_enter/exit name both. So jbd2_start_commit
 * and jbd2_end_commit keep a short history of commits per device, and at
 * ext4_sync_file_exit the fsync's time is intersected with the commits of
 * every transaction up to the one it had to see on disk (i_sync_tid, or
 * i_datasync_tid for fdatasync: the later of its values at enter and at
 * exit, since writing the data back moves it on). The holder is the jbd2
 * thread.
 */
#include "ilock.bpf.h"
#include "inode.bpf.h"


static __always_inline struct commit *commit_slot(struct journal_s *journal, u32 tid, bool create)
{
	u32 dev = journal->j_fs_dev->bd_dev;
	struct journal_hist *jh = bpf_map_lookup_elem(&journal_commits, &dev);

	if (!jh && create) {
		struct journal_hist zero = {};

		bpf_map_update_elem(&journal_commits, &dev, &zero, BPF_NOEXIST);
		jh = bpf_map_lookup_elem(&journal_commits, &dev);
	}
	if (!jh)
		return NULL;
	if (create) {
		u64 pid_tgid = bpf_get_current_pid_tgid();

		jh->pid = (u32)pid_tgid;
		jh->tgid = pid_tgid >> 32;
		jh->task = (u64)bpf_get_current_task();
		bpf_get_current_comm(jh->comm, sizeof(jh->comm));
	}
	return &jh->ring[tid & (COMMIT_RING - 1)];
}

SEC("tp_btf/jbd2_start_commit")
int BPF_PROG(jbd2_commit_start, struct journal_s *journal, struct transaction_s *t)
{
	struct commit *c;

	BENCH_IDLE_RETURN();
	if (!journal || !t)  /* maybe-NULL tp_btf arguments on 6.12 */
		return 0;
	c = commit_slot(journal, t->t_tid, true);

	if (c) {
		c->tid = t->t_tid;
		c->start_ns = bpf_ktime_get_ns();
		c->end_ns = 0;
	}
	return 0;
}

SEC("tp_btf/jbd2_end_commit")
int BPF_PROG(jbd2_commit_end, struct journal_s *journal, struct transaction_s *t)
{
	struct commit *c;

	BENCH_IDLE_RETURN();
	if (!journal || !t)
		return 0;
	c = commit_slot(journal, t->t_tid, false);

	if (c && c->tid == t->t_tid)
		c->end_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/ext4_sync_file_enter")
int BPF_PROG(jbd2_fsync_enter, struct file *file, int datasync)
{
	struct task_struct *me = bpf_get_current_task_btf();
	struct task_state *ts;
	struct ilock_key k;
	struct cur_op *o;
	struct inode *inode;
	u32 tid = 0;
	void *ei;

	BENCH_IDLE_RETURN();
	if (!file)
		return 0;
	inode = file->f_inode;
	ei = (void *)inode - bpf_core_field_offset(struct ext4_inode_info, vfs_inode);

	ts = bpf_task_storage_get(&task_states, me, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ts)
		return 0;
	/* the op, for lock waits (whole-file, docs/ranges.md) */
	o = op_claim(me->pid);
	if (o) {
		o->inode = (u64)inode;
		o->sysnr = me->flags & (0x00200000U | 0x10U) ? -2 :
			   ((struct pt_regs___ilock *)bpf_task_pt_regs(me))->orig_ax;
		o->pos = 0;
		o->info.op = datasync ? ILOCK_OP_FDATASYNC : ILOCK_OP_FSYNC;
		o->info.flags = 0;
		ilock_op_set_range(&o->info, 0, 0, ILOCK_RANGE_EOF);
	}

	if (datasync)
		bpf_probe_read_kernel(&tid, sizeof(tid),
				      ei + bpf_core_field_offset(struct ext4_inode_info, i_datasync_tid));
	else
		bpf_probe_read_kernel(&tid, sizeof(tid),
				      ei + bpf_core_field_offset(struct ext4_inode_info, i_sync_tid));
	if (ts->fsync.inode)
		count(ILOCK_EV_FSYNC_ENDED);  /* an exit never seen: not in progress */
	ts->fsync.inode = 0;
	/* the filters here, once: exit, the walk and the recording follow ts->fsync */
	fill_key(&k, inode, ILOCK_CLASS_JBD2_WAIT, ILOCK_MODE_EXCL, false);
	if (!task_selected(pid_tgid_of(me)) || !inode_selected(&k, inode, false))
		return 0;
	/* its path now: a stalled fsync is listed while it lasts (waiting.bpf.c) */
	note_inode(inode, &k, ts);
	/*
	 * inode last: the walk of waits in progress takes a record whose
	 * inode and start read the same before and after.
	 */
	ts->fsync.start_ns = bpf_ktime_get_ns();
	ts->fsync.tid = tid;
	ts->fsync.datasync = datasync != 0;
	barrier();
	ts->fsync.inode = (u64)inode;
	count(ILOCK_EV_FSYNC_BEGUN);
	return 0;
}

static __always_inline void record_jbd2_wait(struct inode *inode, const struct journal_hist *jh,
					     bool datasync, u64 ns)
{
	struct ilock_edge_key ek = {};
	struct ilock_stats *s;
	struct ilock_key k;
	u64 pid_tgid = bpf_get_current_pid_tgid();

	/* the filters passed at ext4_sync_file_enter, and the inode is noted */
	fill_key(&k, inode, ILOCK_CLASS_JBD2_WAIT, ILOCK_MODE_EXCL, false);
	count(ILOCK_EV_JBD2_WAIT);
	s = wait_stats(&k);
	if (s)
		stats_add(s, ns);

	ek.ino = k.ino;
	ek.dev = k.dev;
	ek.gen = k.gen;
	ek.class = ILOCK_CLASS_JBD2_WAIT;
	ek.holder_mode = ILOCK_MODE_EXCL;
	ek.waiter_mode = ILOCK_MODE_EXCL;
	ek.holder_pid = jh->pid;
	ek.holder_tgid = jh->tgid;
	ek.waiter_pid = (u32)pid_tgid;
	ek.waiter_tgid = pid_tgid >> 32;
	__builtin_memcpy(ek.holder_comm, jh->comm, sizeof(ek.holder_comm));
	bpf_get_current_comm(ek.waiter_comm, sizeof(ek.waiter_comm));
	ek.holder_op = ILOCK_OP_JOURNAL_COMMIT;
	ek.waiter_op = datasync ? ILOCK_OP_FDATASYNC : ILOCK_OP_FSYNC;
	ek.range = ILOCK_RANGE_NO_BOTH;  /* a journal commit has no byte range */
	edge_add(&ek, ns, 1);
}

SEC("tp_btf/ext4_sync_file_exit")
int BPF_PROG(jbd2_fsync_exit, struct inode *inode, int ret)
{
	struct task_state *ts;
	struct cur_op *o;
	struct journal_hist *jh;
	struct journal_s *journal;
	u64 now, start, ns = 0;
	u32 dev, need;

	BENCH_IDLE_RETURN();
	if (!inode)
		return 0;
	o = op_of(bpf_get_current_task_btf()->pid);
	if (o && o->inode == (u64)inode)
		o->inode = 0;  /* the fsync is over */
	ts = bpf_task_storage_get(&task_states, bpf_get_current_task_btf(), 0, 0);
	if (!ts || ts->fsync.inode != (u64)inode)
		return 0;  /* begun before tracing, or not selected */
	ts->fsync.inode = 0;
	count(ILOCK_EV_FSYNC_ENDED);
	journal = BPF_CORE_READ((struct ext4_sb_info *)inode->i_sb->s_fs_info, s_journal);
	if (!journal)
		return 0;  /* no journal, no journal wait */
	dev = BPF_CORE_READ(journal, j_fs_dev, bd_dev);
	jh = bpf_map_lookup_elem(&journal_commits, &dev);
	if (!jh)
		return 0;
	now = bpf_ktime_get_ns();
	start = ts->fsync.start_ns;
	need = fsync_tid_now(inode, ts->fsync.tid, ts->fsync.datasync);
	for (int i = 0; i < COMMIT_RING; i++) {
		const struct commit *c = &jh->ring[i];
		u64 b, e;

		if (!c->start_ns || !tid_le(c->tid, need))
			continue;
		b = c->start_ns > start ? c->start_ns : start;
		e = c->end_ns && c->end_ns < now ? c->end_ns : now;
		if (e > b)
			ns += e - b;
	}
	if (ns)
		record_jbd2_wait(inode, jh, ts->fsync.datasync, ns);
	return 0;
}
