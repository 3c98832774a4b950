// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include <bpf/libbpf.h>

#include "fallback.h"
#include "ilock.h"
#include "ilock.skel.h"
#include "tracer.h"

static void configure_slowpath(struct tracer *t)
{
	struct ilock_bpf *k = t->skel;
	enum attach_mode m = t->strat.lock_waits;
	struct bpf_program *fentry[4] = { k->progs.slow_read_begin_fentry, k->progs.slow_read_end_fexit,
					  k->progs.slow_write_begin_fentry,
					  k->progs.slow_write_end_fexit };
	struct bpf_program *kprobe[4] = { k->progs.slow_read_begin_kprobe,
					  k->progs.slow_read_end_kretprobe,
					  k->progs.slow_write_begin_kprobe,
					  k->progs.slow_write_end_kretprobe };

	for (int i = 0; i < 4; i++) {
		bpf_program__set_autoload(fentry[i], m == ATTACH_FENTRY);
		bpf_program__set_autoload(kprobe[i], m == ATTACH_KPROBE);
		/* fentry targets are BTF names; the probe found them there */
		if (m == ATTACH_FENTRY)
			bpf_program__set_attach_target(fentry[i], 0,
						       i < 2 ? t->probe.slow_read : t->probe.slow_write);
	}
	if (m != ATTACH_FENTRY && m != ATTACH_KPROBE)
		m = ATTACH_OFF;
	tracer_note_attach(t, "rwsem_down_read_slowpath", attach_mode_name(m));
	tracer_note_attach(t, "rwsem_down_write_slowpath", attach_mode_name(m));
}

static void configure_rwsem_holds(struct tracer *t)
{
	struct ilock_bpf *k = t->skel;
	bool on = t->strat.rwsem_holds == ATTACH_FENTRY;
	struct bpf_program *progs[] = {
		k->progs.hold_down_read, k->progs.hold_down_read_killable,
		k->progs.hold_down_read_trylock, k->progs.hold_down_write,
		k->progs.hold_down_write_killable, k->progs.hold_down_write_trylock,
		k->progs.hold_up_read, k->progs.hold_up_write, k->progs.hold_downgrade_write,
	};

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		bpf_program__set_autoload(progs[i], on);
	k->rodata->cfg_rwsem_holds_skip_xfs = t->strat.xfs_holds != ATTACH_OFF;
	tracer_note_attach(t, "rwsem_holds", attach_mode_name(t->strat.rwsem_holds));
}

void fallback_configure(struct tracer *t)
{
	configure_slowpath(t);
	configure_rwsem_holds(t);
}

struct bpf_link *fallback_attach(struct tracer *t, struct bpf_program *prog)
{
	struct ilock_bpf *k = t->skel;

	if (prog == k->progs.slow_read_begin_kprobe || prog == k->progs.slow_read_end_kretprobe)
		return bpf_program__attach_kprobe(prog, prog == k->progs.slow_read_end_kretprobe,
						  t->probe.ksym_read);
	if (prog == k->progs.slow_write_begin_kprobe || prog == k->progs.slow_write_end_kretprobe)
		return bpf_program__attach_kprobe(prog, prog == k->progs.slow_write_end_kretprobe,
						  t->probe.ksym_write);
	return bpf_program__attach(prog);
}
