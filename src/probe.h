/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Feature probes, all in one place: what this kernel offers and which
 * attach strategy each capture uses. Decided from BTF types and fields,
 * tracepoint existence and trial loads (and attaches) of a trivial program
 * of each attach type; never from the kernel version.
 *
 * probe_kernel() talks to the kernel (probe.c). choose_strategy() and the
 * printers are pure (strategy.c, probe_report.c) and unit-tested with
 * hand-made probe results.
 */
#ifndef ILOCK_PROBE_H
#define ILOCK_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json;

enum attach_mode {
	ATTACH_OFF = 0,
	ATTACH_TP_BTF,   /* BTF-typed tracepoint */
	ATTACH_RAW_TP,   /* raw tracepoint */
	ATTACH_FENTRY,   /* fentry/fexit (BPF trampolines) */
	ATTACH_KPROBE,   /* kprobe/kretprobe */
};

/* The attach types tried for real, each with a trivial program. */
enum probe_kind { PROBE_TP_BTF, PROBE_RAW_TP, PROBE_KPROBE, PROBE_FENTRY, PROBE_KIND_MAX };

struct attach_trial {
	bool tried;
	bool ok;
	int err;             /* errno of the step that failed */
	char step[16];       /* "load", "attach", "find"; "" when ok */
	char target[64];     /* tracepoint or function it was tried on */
	const char *note;    /* why it could not even be tried, or NULL */
};

#define PROBE_SYM_LEN 64

struct probe_result {
	const char *tool;           /* ilock_version(); NULL when not filled */
	char kernel[65];
	bool has_caps;              /* root, or CAP_BPF + CAP_PERFMON */
	bool vmlinux_btf;
	bool task_storage;          /* BPF task storage (5.11+): ilock needs it */
	bool tp_contention_btf;     /* btf_trace_contention_begin/end in BTF */
	bool tp_contention;         /* lock:contention_begin exists at all (5.19+) */
	bool xfs_btf;               /* struct xfs_inode known (vmlinux or module) */
	bool xfs_module;            /* XFS BTF comes from /sys/kernel/btf/xfs */
	bool tp_xfs_btf;            /* btf_trace_xfs_ilock in BTF */
	bool tp_xfs;                /* xfs:xfs_ilock exists */
	bool invalidate_lock;       /* address_space.invalidate_lock (5.15+) */
	bool xfs_mmaplock;          /* xfs_inode.i_mmaplock (before 5.15) */
	bool task_blocker;          /* task_struct.blocker: waits begun before tracing are seen */
	bool blocker_rwsem;         /* ... for rw_semaphores too (probe_blocker_rwsem()) */
	bool cgroup_kfuncs;         /* bpf_cgroup_from_id, bpf_task_under_cgroup: --cgroup for any task */
	/*
	 * The rwsem slow paths, for the fallback when the contention
	 * tracepoints are missing. slow_*: BTF FUNC names (fentry targets);
	 * ksym_*: kprobe targets as kallsyms spells them (a compiler suffix
	 * such as ".constprop.0" included), looked up only when kprobes exist.
	 */
	char slow_read[PROBE_SYM_LEN], slow_write[PROBE_SYM_LEN];
	char ksym_read[PROBE_SYM_LEN], ksym_write[PROBE_SYM_LEN];
	bool slow_in_btf, slow_in_kallsyms;
	/* down_read, down_write, up_read, up_write, ... in BTF (--holds=all) */
	bool hold_funcs_btf;
	char hold_funcs_missing[PROBE_SYM_LEN];
	struct attach_trial trial[PROBE_KIND_MAX];
	struct attach_trial xfs_trial;   /* tp_btf on xfs_ilock (module BTF) */
	/* test and troubleshooting switches, from the environment */
	bool forced_raw_tp;         /* ILOCK_FORCE_RAW_TP=1 */
	bool forced_no_xfs;         /* ILOCK_NO_XFS=1 */
	bool forced_no_contention;  /* ILOCK_NO_CONTENTION_TP=1: act as before 5.19 */
	bool forced_no_fentry;      /* ILOCK_NO_FENTRY=1: prefer kprobes */
	/* CONFIG_HZ, for the XFS hold sampler's per-jiffy budget; never 0 */
	unsigned hz;
	const char *hz_from;        /* the config file read, or the assumption made */
};

/* A test and troubleshooting switch (ILOCK_...) is on: set, not empty, not "0". */
bool probe_env_on(const char *name);
/*
 * Does a kernel with task_struct.blocker note rw_semaphore waiters there?
 * BTF cannot tell (the types are macros): mutexes and semaphores came in
 * 6.15, rw_semaphores in 6.17. Only IN SHORT's wording rests on it; the
 * walk looks at blocker whatever it says. Pure, from uname's release.
 */
bool probe_blocker_rwsem(const char *release);
/* CONFIG_HZ=... in a kernel config's text; 0 if absent. Pure. */
unsigned probe_parse_hz(const char *config);
/*
 * One line of /proc/timer_list: fills *now_ns from "now at N nsecs" and
 * *jiffies from "jiffies: N"; true when the line was one of them. Pure.
 */
bool probe_timer_list_line(const char *line, uint64_t *now_ns, uint64_t *jiffies);
/*
 * HZ from jiffies ticked over ns of CLOCK_MONOTONIC: the nearest of the
 * kernel's choices (100, 250, 300, 1000) within 10%, else the rate
 * itself; 0 when it cannot tell (no time or no tick). Pure.
 */
unsigned probe_hz_of_ticks(uint64_t jiffies, uint64_t ns);

#define STRATEGY_WHY_LEN 320

struct strategy {
	enum attach_mode lock_waits;
	enum attach_mode xfs_holds;
	enum attach_mode rwsem_holds;    /* --holds=all */
	char lock_waits_why[STRATEGY_WHY_LEN];
	char xfs_holds_why[STRATEGY_WHY_LEN];
	char rwsem_holds_why[STRATEGY_WHY_LEN];
};

/*
 * --holds. Off by default: the XFS hold programs run two to three times per
 * I/O, inside the IOLOCK, and cost the seed workload more than anything
 * else ilock does (docs/PERFORMANCE.md).
 */
enum ilock_holds { ILOCK_HOLDS_OFF = 0, ILOCK_HOLDS_XFS, ILOCK_HOLDS_ALL };

/*
 * What the user asked for that changes the strategy. Zero-initialised is
 * the defaults; a NULL request asks for XFS holds, to show what the
 * kernel allows.
 */
struct strategy_req {
	uint8_t holds;    /* enum ilock_holds */
	/*
	 * What the filters leave (filter_scope()): a program that could only
	 * see what they drop is not attached, so it costs nothing per event.
	 * Zero-initialised means no filter.
	 */
	unsigned fs_drop;          /* FS_* bits the filters rule out */
	uint32_t class_mask;       /* --class bits; 0: every class */
	const char *scope_why;     /* "--fs ext4", "-D 7:3 is ext4" */
};

/* Filesystem families, for which programs a filter leaves any use. */
enum { FS_XFS = 1, FS_EXT4 = 2, FS_OTHER = 4, FS_ALL = 7 };

/*
 * Pure: which filesystem families --fs and -D rule out. dev_fstype is the
 * mount type of the -D device (NULL when there is no -D, or the device is
 * not mounted, so nothing can be ruled out by it). Writes the reason, such
 * as "-D 7:3 is ext4", into why.
 */
unsigned filter_scope(uint32_t fs_magic, uint32_t kdev, const char *dev_fstype, char *why,
		      size_t len);
/*
 * Pure: do the filters leave nothing that could match (fs_drop from
 * filter_scope(), its reason scope_why, the --class bits)? Then the
 * one-line reason ("--fs xfs, -D 7:3 is ext4", "--class xfs_ilock is
 * XFS's; --fs ext4") in buf, and true.
 */
bool filters_match_nothing(unsigned fs_drop, uint32_t class_mask, const char *scope_why,
			   char *buf, size_t len);
/* filter_scope() with the -D device's type looked up in this process's mounts. */
unsigned probe_filter_scope(uint32_t fs_magic, uint32_t kdev, char *why, size_t len);

/* The kernel functions --holds=all hooks, NULL-terminated. */
extern const char *const probe_hold_funcs[];

/* Probe once; fills r. Never fails: what cannot be probed is "absent". */
int probe_kernel(struct probe_result *r);

/* Pure: the strategy for a set of probe results and a request. */
void choose_strategy(const struct probe_result *r, const struct strategy_req *req,
		     struct strategy *s);
const char *attach_mode_name(enum attach_mode m);
const char *probe_kind_name(enum probe_kind k);
/* "ok on contention_begin", "refused at load on down_read: Operation not permitted" */
char *fmt_trial(char *buf, size_t len, const struct attach_trial *t);

/* Pure printers of a probe result and its strategy (probe_report.c). */
void probe_print(FILE *f, const struct probe_result *r, const struct strategy *s);
void probe_json(struct json *j, const struct probe_result *r, const struct strategy *s);

#endif
