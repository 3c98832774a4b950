// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "ilock.h"
#include "ilock.skel.h"
#include "log.h"
#include "tracer.h"
#include "tracer_ops.h"

/*
 * Which op source runs in which --ops mode. The sources that fire on every
 * buffered I/O (--ops io) only refine what the syscall already says, for
 * syscalls; they are what names io_uring's and kernel threads' buffered
 * I/O. They run inside the XFS IOLOCK, so they are not the default.
 */
enum op_level { OPS_SYSCALLS = 1, OPS_IO = 2, OPS_ALL = 3 };

struct op_prog {
	const char *tp;        /* tracepoint name, for the BTF check */
	const char *arg0;      /* struct its first argument points to; NULL: not used */
	size_t off;            /* offset of the program in the skeleton's progs */
	enum op_level level;
	bool journal;          /* part of jbd2_wait rather than of ops */
	unsigned fs;           /* FS_* whose inodes it sees */
};

#define P(tp, arg0, prog, lvl, j, fs) \
	{ tp, arg0, offsetof(struct ilock_bpf, progs.prog), lvl, j, fs }

static const struct op_prog op_progs[] = {
	P("xfs_file_buffered_read", "kiocb", op_xfs_buffered_read, OPS_IO, false, FS_XFS),
	P("xfs_file_buffered_write", "kiocb", op_xfs_buffered_write, OPS_IO, false, FS_XFS),
	P("iomap_dio_rw_begin", "kiocb", op_dio_begin, OPS_SYSCALLS, false, FS_ALL),
	P("ext4_write_begin", "inode", op_ext4_write_begin, OPS_IO, false, FS_EXT4),
	P("ext4_da_write_begin", "inode", op_ext4_da_write_begin, OPS_IO, false, FS_EXT4),
	P("ext4_fallocate_enter", "inode", op_ext4_fallocate, OPS_SYSCALLS, false, FS_EXT4),
	P("ext4_truncate_enter", "inode", op_ext4_truncate, OPS_SYSCALLS, false, FS_EXT4),
	P("xfs_read_fault", "xfs_inode", op_xfs_read_fault, OPS_SYSCALLS, false, FS_XFS),
	P("xfs_write_fault", "xfs_inode", op_xfs_write_fault, OPS_SYSCALLS, false, FS_XFS),
	P("sched_process_exit", NULL, op_task_exit, OPS_SYSCALLS, false, FS_ALL),
	/* every buffered read and file fault on every filesystem: --ops=all */
	P("mm_filemap_get_pages", "address_space", op_filemap_get_pages, OPS_ALL, false, FS_ALL),
	P("mm_filemap_fault", "address_space", op_filemap_fault, OPS_ALL, false, FS_ALL),
	/* journal waits of fsync: ext4 + jbd2, rare events; the jbd2_wait class */
	P("jbd2_start_commit", "journal_s", jbd2_commit_start, OPS_SYSCALLS, true, FS_EXT4),
	P("jbd2_end_commit", "journal_s", jbd2_commit_end, OPS_SYSCALLS, true, FS_EXT4),
	P("ext4_sync_file_enter", "file", jbd2_fsync_enter, OPS_SYSCALLS, true, FS_EXT4),
	P("ext4_sync_file_exit", "inode", jbd2_fsync_exit, OPS_SYSCALLS, true, FS_EXT4),
};

static struct bpf_program *prog_of(struct tracer *t, const struct op_prog *p)
{
	return *(struct bpf_program **)((char *)t->skel + p->off);
}

/* BTF of vmlinux and of the modules whose tracepoints we use. */
struct btfs {
	struct btf *vm, *mod[3];
};

static void btfs_load(struct btfs *b)
{
	static const char *const mods[] = { "xfs", "ext4", "jbd2" };

	memset(b, 0, sizeof(*b));
	b->vm = btf__load_vmlinux_btf();
	for (size_t i = 0; b->vm && i < sizeof(mods) / sizeof(mods[0]); i++) {
		char path[64];

		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", mods[i]);
		if (!access(path, R_OK))
			b->mod[i] = btf__load_module_btf(mods[i], b->vm);
	}
}

static void btfs_free(struct btfs *b)
{
	for (size_t i = 0; i < 3; i++)
		btf__free(b->mod[i]);
	btf__free(b->vm);
}

/*
 * Does btf_trace_<tp>'s first argument point to struct arg0? Tracepoints
 * keep their names across versions but not always their arguments (the
 * xfs_file_* ones took an xfs_inode before 5.12): a program written for
 * other arguments would not load, and take every other program with it.
 */
static bool first_arg_is(const struct btf *btf, int typedef_id, const char *arg0)
{
	const struct btf_type *t = btf__type_by_id(btf, typedef_id);
	const struct btf_param *p;
	int id;

	if (!arg0)
		return true;
	/* typedef -> pointer -> func_proto(void *__data, arg0 *, ...) */
	t = t ? btf__type_by_id(btf, t->type) : NULL;
	if (!t || !btf_is_ptr(t))
		return false;
	t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 2)
		return false;
	p = btf_params(t) + 1;
	id = btf__resolve_type(btf, p->type);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	if (!t || !btf_is_ptr(t))
		return false;
	id = btf__resolve_type(btf, t->type);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	return t && btf_is_struct(t) && !strcmp(btf__name_by_offset(btf, t->name_off), arg0);
}

/* tp_btf needs the tracepoint's btf_trace_<name> typedef, with our arguments. */
static bool tp_in_btf(const struct btfs *b, const char *tp, const char *arg0)
{
	const struct btf *all[4] = { b->vm, b->mod[0], b->mod[1], b->mod[2] };
	char name[96];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	for (size_t i = 0; i < 4; i++) {
		int id = all[i] ? btf__find_by_name_kind(all[i], name, BTF_KIND_TYPEDEF) : -1;

		if (id > 0)
			return first_arg_is(all[i], id, arg0);
	}
	return false;
}

void tracer_ops_configure(struct tracer *t, const struct ilock_opts *o)
{
	struct ilock_bpf *s = t->skel;
	int want = o->ops_mode == ILOCK_OPS_OFF ? 0
		 : o->ops_mode == ILOCK_OPS_ALL ? OPS_ALL
		 : o->ops_mode == ILOCK_OPS_IO  ? OPS_IO
		 :                                OPS_SYSCALLS;
	int n_ops = 0, on_ops = 0, n_j = 0, on_j = 0;
	struct btfs b;

	btfs_load(&b);
	for (size_t i = 0; i < sizeof(op_progs) / sizeof(op_progs[0]); i++) {
		const struct op_prog *p = &op_progs[i];
		bool asked = want && (int)p->level <= want;
		/* a source for inodes or a class the filters rule out would only cost */
		bool filtered = !(p->fs & ~t->fs_drop) ||
				(p->journal && o->f.class_mask &&
				 !(o->f.class_mask & (1U << ILOCK_CLASS_JBD2_WAIT)));
		bool on = asked && !filtered && tp_in_btf(&b, p->tp, p->arg0);

		bpf_program__set_autoload(prog_of(t, p), on);
		if (asked && filtered && o->verbose)
			log_info("op source %s: left out, the filters rule out what it sees", p->tp);
		else if (asked && !on && o->verbose)
			log_info("op source %s: not in BTF with the arguments we read, left out", p->tp);
		if (filtered)
			continue;   /* neither missing nor partial: not wanted */
		if (p->journal) {
			n_j++;
			on_j += on;
		} else if ((int)p->level <= want) {
			n_ops++;
			on_ops += on;
		}
	}
	btfs_free(&b);

	s->rodata->cfg_ops = want != 0;
	s->rodata->cfg_ops_io = want >= OPS_IO;
	s->rodata->cfg_dio_shared = want == OPS_ALL;
	s->rodata->cfg_waiter_stacks = !o->no_stacks;
	s->rodata->cfg_holder_stacks = !o->no_stacks;
	/* one holder stack per pair per interval (or second) keeps the cost bounded */
	s->rodata->cfg_holder_stack_ns = (uint64_t)((o->interval_s > 0 ? o->interval_s : 1.0) * 1e9);
	if (!want)
		bpf_map__set_max_entries(s->maps.stack_traces, 1);
	/* recordings keep this, so ilock diff can tell two captures apart */
	tracer_note_attach(t, "ops", !want || !on_ops       ? "off"
				     : on_ops < n_ops        ? "tp_btf (partial)"
				     : want == OPS_SYSCALLS  ? "tp_btf (syscalls)"
				     :                         "tp_btf");
	tracer_note_attach(t, "jbd2_wait", want && n_j && on_j == n_j ? "tp_btf" : "off");
}

/* ---- reading ---- */

static int stack_entry(void *ctx, const void *k, const void *v)
{
	return snap_add_stack(ctx, k, v);
}

static int dio_entry(void *ctx, const void *k, const void *v)
{
	return snap_add_dio(ctx, k, *(const uint64_t *)v);
}

int tracer_read_frames(struct tracer *t, struct snapshot *s)
{
	int hfd = bpf_map__fd(t->skel->maps.holder_frames);
	int wfd = bpf_map__fd(t->skel->maps.stack_traces);

	for (size_t i = 0; i < s->nstacks; i++) {
		const struct ilock_stack_key *sk = &s->stacks[i].k;
		struct ilock_stack_frames f;
		int err;

		if (snap_find_frames(s, sk->kind, sk->stack))
			continue;
		memset(&f, 0, sizeof(f));
		if (sk->kind == ILOCK_STACK_HOLDER) {
			if (bpf_map_lookup_elem(hfd, &sk->stack, &f))
				continue;
		} else {
			__u32 id = (__u32)sk->stack;

			/* a stack trace map value is the ips alone, zero-padded */
			if (bpf_map_lookup_elem(wfd, &id, f.ip))
				continue;
			while (f.nr < ILOCK_STACK_DEPTH && f.ip[f.nr])
				f.nr++;
		}
		err = snap_add_frames(s, sk->kind, sk->stack, &f);
		if (err)
			return err;
	}
	return 0;
}

int tracer_ops_read(struct tracer *t, struct snapshot *s)
{
	struct ilock_bpf *k = t->skel;
	int err;

	if ((err = snap_ranges_from_edges(s)) ||
	    (err = tracer_scan_map(t, k->maps.stack_waits, stack_entry, s)) ||
	    (err = tracer_scan_map(t, k->maps.dio_writes, dio_entry, s)) ||
	    (err = tracer_read_frames(t, s)))
		return err;
	return 0;
}
