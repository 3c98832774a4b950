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

/*
 * ilock's other tracepoints (I/O ranges, journal, task exit). Optional: off
 * unless `bpfload OBJ SECONDS TRACEPOINT...` names them, so the overhead
 * benchmark can mirror exactly the set ilock attached on this kernel.
 */
#define FLOOR_OPT(tp) SEC("?tp_btf/" #tp) int BPF_PROG(floor_##tp) { return 0; }
FLOOR_OPT(xfs_file_buffered_read)
FLOOR_OPT(xfs_file_buffered_write)
FLOOR_OPT(xfs_file_direct_read)
FLOOR_OPT(xfs_file_direct_write)
FLOOR_OPT(xfs_file_fsync)
FLOOR_OPT(xfs_read_fault)
FLOOR_OPT(xfs_write_fault)
FLOOR_OPT(ext4_write_begin)
FLOOR_OPT(ext4_da_write_begin)
FLOOR_OPT(ext4_sync_file_enter)
FLOOR_OPT(ext4_sync_file_exit)
FLOOR_OPT(ext4_fallocate_enter)
FLOOR_OPT(ext4_punch_hole)
FLOOR_OPT(ext4_zero_range)
FLOOR_OPT(ext4_truncate_enter)
FLOOR_OPT(iomap_dio_rw_begin)
FLOOR_OPT(jbd2_start_commit)
FLOOR_OPT(jbd2_end_commit)
FLOOR_OPT(mm_filemap_get_pages)
FLOOR_OPT(mm_filemap_fault)
FLOOR_OPT(sched_process_exit)

char LICENSE[] SEC("license") = "GPL";
