// SPDX-License-Identifier: GPL-2.0-only
/* The one definition of every map and setting the other objects share. */
#include "ilock.bpf.h"

wait_index_t wait_index SEC(".maps");
wait_slots_t wait_slots SEC(".maps");
stats_map_t lock_holds SEC(".maps");
edge_index_t edge_index SEC(".maps");
edge_slots_t edge_slots SEC(".maps");
inode_map_t inodes SEC(".maps");
task_state_map_t task_states SEC(".maps");
counter_map_t counters SEC(".maps");
scratch_map_t path_scratch SEC(".maps");
stack_trace_map_t stack_traces SEC(".maps");
stack_waits_map_t stack_waits SEC(".maps");
frames_map_t holder_frames SEC(".maps");
dio_map_t dio_writes SEC(".maps");
frames_scratch_t frames_scratch SEC(".maps");
budget_map_t stack_budget SEC(".maps");
hold_table_t hold_table SEC(".maps");
op_table_t op_table SEC(".maps");
hold_rate_map_t hold_rates SEC(".maps");
hold_sweeper_map_t hold_sweepers SEC(".maps");
hold_rate_map_t wait_rates SEC(".maps");
journal_map_t journal_commits SEC(".maps");
cgroup_filter_t cgroup_filter SEC(".maps");

const volatile __u32 cfg_tgid = 0;
const volatile __u32 cfg_comm_on = 0;
const volatile __u32 cfg_cgroup_on = 0;
const volatile __u64 cfg_cgroup_id = 0;   /* --cgroup's id (its directory's inode) */
const volatile char cfg_comm[ILOCK_COMM_LEN] = {};
const volatile __u32 cfg_dev = 0;
const volatile __u64 cfg_ino = 0;
const volatile __u32 cfg_fs_magic = 0;
const volatile __u32 cfg_class_mask = 0;
const volatile __u32 cfg_resolve_paths = 1;
const volatile __u32 cfg_ops = 1;
const volatile __u32 cfg_ops_io = 0;
const volatile __u32 cfg_waiter_stacks = 1;
const volatile __u32 cfg_holder_stacks = 1;
const volatile __u64 cfg_holder_stack_ns = 1000000000ULL;
const volatile __u32 cfg_dio_shared = 0;
const volatile __u64 cfg_stack_reuse_ns = 1000000000ULL;
const volatile __u32 cfg_holder_stacks_cpu_sec = 200;
const volatile __u32 cfg_wait_slots = ILOCK_DEF_LOCKS;
const volatile __u32 cfg_edge_slots = ILOCK_DEF_EDGES;
const volatile __u32 cfg_xfs_holds = 0;
const volatile __u32 cfg_hold_one_in = 1;
const volatile __u32 cfg_hold_tokens_per_jiffy = 0;
const volatile __u32 cfg_hold_burst = 0;
const volatile __u32 cfg_wait_one_in = 1;
const volatile __u32 cfg_wait_tokens_per_jiffy = 0;
const volatile __u32 cfg_wait_burst = 0;

__u32 wait_slots_used = 0;
__u32 edge_slots_used = 0;
__u32 wait_hints[ILOCK_HINT_SLOTS] = {};
__u32 edge_hints[ILOCK_HINT_SLOTS] = {};
__u64 holds_timing = 0;
__u32 holds_by_task[ILOCK_HOLD_TASK_SLOTS] = {};

/* its own section: a benchmark, or ilocktop handing over, writes it without touching .bss */
volatile __u32 bench_idle SEC(".data.bench") = 0;

const struct ilock_stats zero_stats = {};
const struct ilock_stack_stats zero_stack = {};
const struct ilock_op_info zero_op = {};

char LICENSE[] SEC("license") = "GPL";
