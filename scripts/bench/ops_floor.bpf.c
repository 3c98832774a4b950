// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cost floor of the op sources: empty programs on exactly the I/O
 * tracepoints bpf/ops.bpf.c attaches to by default. What ilock's op
 * programs cost above this is their own work, not attachment.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("tp_btf/xfs_file_buffered_read") int BPF_PROG(opfloor_xfs_buffered_read) { return 0; }
SEC("tp_btf/xfs_file_buffered_write") int BPF_PROG(opfloor_xfs_buffered_write) { return 0; }
SEC("tp_btf/iomap_dio_rw_begin") int BPF_PROG(opfloor_dio_begin) { return 0; }
SEC("tp_btf/ext4_write_begin") int BPF_PROG(opfloor_ext4_write_begin) { return 0; }
SEC("tp_btf/ext4_da_write_begin") int BPF_PROG(opfloor_ext4_da_write_begin) { return 0; }
SEC("tp_btf/mm_filemap_get_pages") int BPF_PROG(opfloor_filemap_get_pages) { return 0; }
SEC("tp_btf/xfs_read_fault") int BPF_PROG(opfloor_xfs_read_fault) { return 0; }
SEC("tp_btf/xfs_write_fault") int BPF_PROG(opfloor_xfs_write_fault) { return 0; }

char LICENSE[] SEC("license") = "GPL";
