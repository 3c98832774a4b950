/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Feature probes, all in one place: what this kernel offers and which
 * attach strategy each capture uses. Decided from BTF and tracepoint
 * existence, never from the kernel version.
 */
#ifndef ILOCK_PROBE_H
#define ILOCK_PROBE_H

#include <stdbool.h>
#include <stdio.h>

enum attach_mode { ATTACH_OFF = 0, ATTACH_TP_BTF, ATTACH_RAW_TP };

struct probe_result {
	char kernel[65];
	bool has_caps;              /* root, or CAP_BPF + CAP_PERFMON */
	bool vmlinux_btf;
	bool tp_contention_btf;     /* btf_trace_contention_begin in BTF */
	bool tp_contention;         /* the tracepoint exists at all */
	bool xfs_btf;               /* struct xfs_inode known (vmlinux or module) */
	bool xfs_module;            /* XFS BTF comes from /sys/kernel/btf/xfs */
	bool tp_xfs_btf;            /* btf_trace_xfs_ilock in BTF */
	bool tp_xfs;                /* xfs:xfs_ilock exists */
	bool invalidate_lock;       /* address_space.invalidate_lock (5.15+) */
	bool forced_raw_tp;         /* ILOCK_FORCE_RAW_TP=1 */
	bool forced_no_xfs;         /* ILOCK_NO_XFS=1 */
};

struct strategy {
	enum attach_mode lock_waits;
	enum attach_mode xfs_holds;
	const char *lock_waits_why;
	const char *xfs_holds_why;
};

int probe_kernel(struct probe_result *r);
/* Pure: the strategy for a set of probe results. */
void choose_strategy(const struct probe_result *r, struct strategy *s);
const char *attach_mode_name(enum attach_mode m);
void probe_print(FILE *f, const struct probe_result *r, const struct strategy *s);

#endif
