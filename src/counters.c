// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "counters.h"

static const struct { const char *name, *help; } counters[ILOCK_COUNTER_MAX] = {
	[ILOCK_EV_BEGIN] = { "contention_begin", "lock contention events, all lock types" },
	[ILOCK_EV_BEGIN_RWSEM] = { "rwsem_waits", "rw_semaphore waits examined" },
	[ILOCK_EV_WAIT] = { "inode_lock_waits", "inode lock waits recorded" },
	[ILOCK_EV_WAIT_BEGUN] = { "inode_lock_waits_begun", "inode lock waits begun" },
	[ILOCK_EV_XFS_LOCK] = { "xfs_ilock", "xfs_ilock calls seen" },
	[ILOCK_EV_XFS_UNLOCK] = { "xfs_iunlock", "xfs_iunlock calls seen" },
	[ILOCK_EV_HOLD_TIMED] = { "xfs_ilock_timed",
				  "xfs_ilock calls timed: all up to the exact rate, then 1 in N" },
	[ILOCK_EV_OP_DEFERRED] = { "waiter_op_late", "waits whose waiter op came after the wait" },
	[ILOCK_EV_OP_DEFER_DONE] = { "waiter_op_late_paired", "... of which paired with it since" },
	[ILOCK_EV_OP_NEVER] = { "waiter_op_never", "... of which never got one: counted as unknown" },
	[ILOCK_EV_HOLDER_STACK] = { "holder_stacks", "sleeping holders' stacks sampled" },
	[ILOCK_EV_HOLDER_RUNNING] = { "holder_running", "holders on a CPU at wait start: no stack" },
	[ILOCK_EV_HOLDER_STACK_SKIPPED] = { "holder_stacks_skipped",
					    "holder stacks not taken: 200 per CPU and second spent" },
	[ILOCK_EV_JBD2_WAIT] = { "jbd2_waits", "fsync waits for a journal commit recorded" },
	[ILOCK_EV_STACK_REUSED] = { "waiter_stacks_reused",
				    "waits given the stack their thread took on that path within 1 s" },
	[ILOCK_EV_WAIT_SAMPLED_OUT] = { "rwsem_waits_sampled_out",
					"rw_semaphore waits not timed: over the exact rate, 1 in N is "
					"(--wait-sample)" },
	[ILOCK_EV_FSYNC_BEGUN] = { "fsyncs_begun", "ext4 fsyncs begun (--class jbd2_wait)" },
	[ILOCK_EV_FSYNC_ENDED] = { "fsyncs_ended", "ext4 fsyncs ended; begun - ended are in progress" },
	[ILOCK_LOST_WAIT_MAP_FULL] = { "wait_map_full", "waits dropped: wait map full" },
	[ILOCK_LOST_EDGE_MAP_FULL] = { "edge_map_full", "holder/waiter pairs dropped: edge map full" },
	[ILOCK_LOST_INODE_MAP_FULL] = { "inode_map_full", "inodes without path: inode map full" },
	[ILOCK_LOST_HOLD_MAP_FULL] = { "hold_map_full", "holds dropped: hold map full" },
	[ILOCK_LOST_PENDING_FULL] = { "pending_map_full", "waits dropped: no task storage" },
	[ILOCK_LOST_HOLD_START_FULL] = { "holding_map_full",
					 "holds not timed: hold table bucket full (or, with --holds=all, "
					 "a thread held more than 8)" },
	[ILOCK_LOST_BEGIN_NO_END] = { "begin_without_end", "waits whose end was never seen" },
	[ILOCK_LOST_END_NO_BEGIN] = { "end_without_begin", "waits that began before tracing" },
	[ILOCK_LOST_HOLD_NO_START] = { "unlock_without_lock",
				       "XFS unlocks whose lock was not seen (--hold-sample=1 only)" },
	[ILOCK_LOST_HOLD_REPLACED] = { "lock_without_unlock", "XFS locks whose unlock was not seen" },
	[ILOCK_LOST_PATH] = { "path_unresolved", "inodes whose path could not be resolved in full" },
	[ILOCK_LOST_MAX_RACE] = { "max_update_race", "max updates abandoned under contention" },
	[ILOCK_LOST_STACK] = { "stack_failed", "waiter stacks not taken (stack map full or collision)" },
	[ILOCK_LOST_HOLDER_STACK] = { "holder_stack_failed", "sleeping holders' stacks not taken" },
	[ILOCK_LOST_STACK_MAP_FULL] = { "stack_map_full", "stack samples dropped: stack map full" },
	[ILOCK_LOST_DIO_MAP_FULL] = { "dio_map_full", "direct writes not counted: map full" },
	[ILOCK_LOST_HOLDER_GONE] = { "holder_gone", "holders that exited before their op was read" },
	[ILOCK_LOST_OP_SLOT_SHARED] = { "op_slot_shared",
					"ops overwritten by a thread whose id equals the owner's "
					"modulo 16384" },
	[ILOCK_LOST_HOLDER_MOVED_ON] = { "holder_moved_on",
					 "writers that let go of the lock before their op or stack "
					 "was read: op unknown, no stack" },
	[ILOCK_LOST_EDGE_THREADS] = { "edge_threads_folded",
				      "waits whose pair was kept by command, without its threads: "
				      "no room left for thread pairs (--max-inodes)" },
	[ILOCK_LOST_WAIT_INODES] = { "wait_inodes_folded",
				     "waits kept by device, lock and mode, without their inode: "
				     "no room left for another inode (--max-inodes)" },
};

const char *counter_name(int c)
{
	return c >= 0 && c < ILOCK_COUNTER_MAX && counters[c].name ? counters[c].name : "?";
}

const char *counter_help(int c)
{
	return c >= 0 && c < ILOCK_COUNTER_MAX && counters[c].help ? counters[c].help : "?";
}

bool counter_undercounts(int c)
{
	switch (c) {
	case ILOCK_LOST_WAIT_MAP_FULL:
	case ILOCK_LOST_EDGE_MAP_FULL:
	case ILOCK_LOST_HOLD_MAP_FULL:
	case ILOCK_LOST_PENDING_FULL:
	case ILOCK_LOST_HOLD_START_FULL:
	case ILOCK_LOST_BEGIN_NO_END:
	case ILOCK_LOST_HOLD_NO_START:
	case ILOCK_LOST_HOLD_REPLACED:
	case ILOCK_LOST_DIO_MAP_FULL:
		return true;
	default:
		return false;
	}
}

bool counter_drops_waits(int c)
{
	return c == ILOCK_LOST_WAIT_MAP_FULL || c == ILOCK_LOST_PENDING_FULL ||
	       c == ILOCK_LOST_BEGIN_NO_END;
}
