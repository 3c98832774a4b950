// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cost floor: empty programs on exactly the tracepoints ilock attaches
 * to. Whatever ilock costs above this is its own work, not attachment.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("tp_btf/contention_begin") int BPF_PROG(floor_contention_begin) { return 0; }
SEC("tp_btf/contention_end") int BPF_PROG(floor_contention_end) { return 0; }
SEC("tp_btf/xfs_ilock") int BPF_PROG(floor_xfs_ilock) { return 0; }
SEC("tp_btf/xfs_ilock_nowait") int BPF_PROG(floor_xfs_ilock_nowait) { return 0; }
SEC("tp_btf/xfs_iunlock") int BPF_PROG(floor_xfs_iunlock) { return 0; }
SEC("tp_btf/xfs_ilock_demote") int BPF_PROG(floor_xfs_ilock_demote) { return 0; }

char LICENSE[] SEC("license") = "GPL";
