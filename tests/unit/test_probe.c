// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Strategy selection fed with hand-made probe results: the kernels we boot
 * (6.18 host, 6.1 and 6.12 guests) and those we cannot (before 5.19, no
 * kprobes, no BTF, no task storage).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ilock.h"
#include "json.h"
#include "probe.h"
#include "unit.h"

static void ok_trial(struct attach_trial *t, const char *target)
{
	memset(t, 0, sizeof(*t));
	t->tried = t->ok = true;
	snprintf(t->target, sizeof(t->target), "%s", target);
}

static void bad_trial(struct attach_trial *t, const char *step, int err, const char *target)
{
	memset(t, 0, sizeof(*t));
	t->tried = true;
	t->err = err;
	snprintf(t->step, sizeof(t->step), "%s", step);
	snprintf(t->target, sizeof(t->target), "%s", target);
}

/* This project's host: 6.18, XFS built in, tracepoints only. */
static struct probe_result host_618(void)
{
	struct probe_result r = { .has_caps = true, .vmlinux_btf = true, .task_storage = true,
				  .tp_contention_btf = true, .tp_contention = true, .xfs_btf = true,
				  .tp_xfs_btf = true, .tp_xfs = true, .invalidate_lock = true,
				  .slow_in_btf = true, .hold_funcs_btf = true };

	snprintf(r.kernel, sizeof(r.kernel), "6.18.44");
	snprintf(r.slow_read, sizeof(r.slow_read), "rwsem_down_read_slowpath");
	snprintf(r.slow_write, sizeof(r.slow_write), "rwsem_down_write_slowpath");
	ok_trial(&r.trial[PROBE_TP_BTF], "contention_begin");
	ok_trial(&r.trial[PROBE_RAW_TP], "contention_begin");
	bad_trial(&r.trial[PROBE_KPROBE], "find", ENOENT, "rwsem_down_read_slowpath");
	r.trial[PROBE_KPROBE].note = "no kprobe PMU: kernel built without CONFIG_KPROBES";
	bad_trial(&r.trial[PROBE_FENTRY], "load", EPERM, "rwsem_down_read_slowpath");
	ok_trial(&r.xfs_trial, "xfs_ilock");
	return r;
}

/* Debian's 6.1 cloud kernel: XFS a module with its own BTF, kprobes, fentry. */
static struct probe_result debian_61(void)
{
	struct probe_result r = host_618();

	snprintf(r.kernel, sizeof(r.kernel), "6.1.0-56-cloud-amd64");
	r.xfs_module = true;
	ok_trial(&r.trial[PROBE_FENTRY], "rwsem_down_read_slowpath");
	ok_trial(&r.trial[PROBE_KPROBE], "rwsem_down_read_slowpath");
	r.slow_in_kallsyms = true;
	snprintf(r.ksym_read, sizeof(r.ksym_read), "%s", r.slow_read);
	snprintf(r.ksym_write, sizeof(r.ksym_write), "%s", r.slow_write);
	return r;
}

/* A 5.15 kernel: no contention tracepoints, fentry works. */
static struct probe_result kernel_515(void)
{
	struct probe_result r = debian_61();

	r.tp_contention = r.tp_contention_btf = false;
	ok_trial(&r.trial[PROBE_TP_BTF], "sched_switch");
	ok_trial(&r.trial[PROBE_RAW_TP], "sched_switch");
	return r;
}

static bool has(const char *s, const char *part)
{
	if (!strstr(s, part)) {
		fprintf(stderr, "  \"%s\" lacks \"%s\"\n", s, part);
		return false;
	}
	return true;
}

static void test_host(void)
{
	struct probe_result r = host_618();
	struct strategy_req all = { .holds = ILOCK_HOLDS_ALL }, off = {};
	struct strategy s;

	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_TP_BTF);
	CHECK_STR(s.lock_waits_why, "tp_btf on lock:contention_begin/end");
	CHECK_EQ_U(s.xfs_holds, ATTACH_TP_BTF);
	CHECK_STR(s.xfs_holds_why, "tp_btf on xfs:xfs_ilock/xfs_iunlock");
	CHECK_EQ_U(s.rwsem_holds, ATTACH_OFF);

	/* --holds=all needs fentry, which this host refuses */
	choose_strategy(&r, &all, &s);
	CHECK_EQ_U(s.rwsem_holds, ATTACH_OFF);
	CHECK(has(s.rwsem_holds_why, "unavailable: fentry refused at load on "
				     "rwsem_down_read_slowpath: Operation not permitted"));
	CHECK_EQ_U(s.lock_waits, ATTACH_TP_BTF);

	/* the default, --holds=off: no hold programs, waits as ever; what
	 * --holds=xfs would attach is still said */
	choose_strategy(&r, &off, &s);
	CHECK_EQ_U(s.xfs_holds, ATTACH_OFF);
	CHECK_STR(s.xfs_holds_why,
		  "off (the default; --holds=xfs: tp_btf on xfs:xfs_ilock/xfs_iunlock)");
	CHECK_EQ_U(s.rwsem_holds, ATTACH_OFF);
	CHECK_STR(s.rwsem_holds_why, "off (--holds=all turns it on where fentry works)");
	CHECK_EQ_U(s.lock_waits, ATTACH_TP_BTF);
}

/* Filters that rule XFS out keep the hold programs off; others do not. */
static void test_filter_scope(void)
{
	struct probe_result r = host_618();
	struct strategy_req req = { .holds = ILOCK_HOLDS_XFS };
	struct strategy s;
	char why[96];
	uint32_t d73 = ILOCK_KDEV(7, 3);

	CHECK_EQ_U(filter_scope(0, 0, NULL, why, sizeof(why)), 0);
	CHECK_STR(why, "");
	/* -D with an unknown (unmounted) device rules nothing out */
	CHECK_EQ_U(filter_scope(0, d73, NULL, why, sizeof(why)), 0);
	CHECK_EQ_U(filter_scope(0, d73, "", why, sizeof(why)), 0);
	CHECK_EQ_U(filter_scope(ILOCK_EXT4_SB_MAGIC, 0, NULL, why, sizeof(why)), FS_XFS | FS_OTHER);
	CHECK_STR(why, "--fs ext4");
	CHECK_EQ_U(filter_scope(ILOCK_XFS_SB_MAGIC, 0, NULL, why, sizeof(why)), FS_EXT4 | FS_OTHER);
	CHECK_STR(why, "--fs xfs");
	CHECK_EQ_U(filter_scope(0x9123683EU, 0, NULL, why, sizeof(why)), FS_XFS | FS_EXT4);
	CHECK_STR(why, "--fs btrfs");
	CHECK_EQ_U(filter_scope(0, d73, "ext3", why, sizeof(why)), FS_XFS | FS_OTHER);
	CHECK_STR(why, "-D 7:3 is ext3");
	CHECK_EQ_U(filter_scope(0, d73, "btrfs", why, sizeof(why)), FS_XFS | FS_EXT4);
	CHECK_STR(why, "-D 7:3 is btrfs");
	CHECK_EQ_U(filter_scope(ILOCK_EXT4_SB_MAGIC, d73, "ext4", why, sizeof(why)),
		   FS_XFS | FS_OTHER);
	CHECK_STR(why, "-D 7:3 is ext4");
	/* contradictory filters: nothing is left, and both are named */
	CHECK_EQ_U(filter_scope(ILOCK_XFS_SB_MAGIC, d73, "ext4", why, sizeof(why)), FS_ALL);
	CHECK_STR(why, "--fs xfs, -D 7:3 is ext4");
	CHECK_EQ_U(filter_scope(0, d73, "xfs", why, sizeof(why)), FS_EXT4 | FS_OTHER);

	req.fs_drop = filter_scope(0, d73, "ext4", why, sizeof(why));
	req.scope_why = why;
	choose_strategy(&r, &req, &s);
	CHECK_EQ_U(s.xfs_holds, ATTACH_OFF);
	CHECK_STR(s.xfs_holds_why, "off: the filters leave no XFS inode (-D 7:3 is ext4)");
	CHECK_EQ_U(s.lock_waits, ATTACH_TP_BTF);

	req.fs_drop = filter_scope(0, d73, "xfs", why, sizeof(why));
	choose_strategy(&r, &req, &s);
	CHECK_EQ_U(s.xfs_holds, ATTACH_TP_BTF);

	/* --class jbd2_wait alone needs no XFS hold; --class xfs_ilock does */
	req.class_mask = 1U << ILOCK_CLASS_JBD2_WAIT;
	choose_strategy(&r, &req, &s);
	CHECK_EQ_U(s.xfs_holds, ATTACH_OFF);
	CHECK_STR(s.xfs_holds_why, "off: the --class filter leaves no XFS lock");
	req.class_mask |= 1U << ILOCK_CLASS_XFS_ILOCK;
	choose_strategy(&r, &req, &s);
	CHECK_EQ_U(s.xfs_holds, ATTACH_TP_BTF);

	/* not asked for (the default): off first, then why --holds=xfs would not help */
	req.holds = ILOCK_HOLDS_OFF;
	req.fs_drop = FS_XFS;
	choose_strategy(&r, &req, &s);
	CHECK_STR(s.xfs_holds_why, "off (the default; --holds=xfs: off: the filters leave no "
				   "XFS inode (-D 7:3 is xfs))");
}

static void test_forced(void)
{
	struct probe_result r = host_618();
	struct strategy s;

	r.forced_raw_tp = r.forced_no_xfs = true;
	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_RAW_TP);
	CHECK(has(s.lock_waits_why, "forced by ILOCK_FORCE_RAW_TP"));
	CHECK_EQ_U(s.xfs_holds, ATTACH_OFF);
	CHECK_STR(s.xfs_holds_why, "off (ILOCK_NO_XFS)");

	/* raw_tp forced, XFS left on: XFS goes raw too */
	r.forced_no_xfs = false;
	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.xfs_holds, ATTACH_RAW_TP);

	/* contention tracepoints ignored on the host: nothing left, say why */
	r = host_618();
	r.forced_no_contention = true;
	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_OFF);
	CHECK(has(s.lock_waits_why, "ILOCK_NO_CONTENTION_TP"));
	CHECK(has(s.lock_waits_why, "fentry refused at load"));
	CHECK(has(s.lock_waits_why, "kprobe unavailable: no kprobe PMU"));
}

static void test_debian_61(void)
{
	struct probe_result r = debian_61();
	struct strategy_req all = { .holds = ILOCK_HOLDS_ALL };
	struct strategy s;

	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_TP_BTF);
	CHECK_EQ_U(s.xfs_holds, ATTACH_TP_BTF);
	CHECK_STR(s.xfs_holds_why, "tp_btf on xfs:xfs_ilock/xfs_iunlock, using xfs module BTF");

	choose_strategy(&r, &all, &s);
	CHECK_EQ_U(s.rwsem_holds, ATTACH_FENTRY);
	CHECK(has(s.rwsem_holds_why, "XFS inodes from the xfs tracepoints"));

	/* XFS module not loaded: hold programs off, no failure */
	r.xfs_btf = r.xfs_module = r.tp_xfs = r.tp_xfs_btf = false;
	memset(&r.xfs_trial, 0, sizeof(r.xfs_trial));
	choose_strategy(&r, &all, &s);
	CHECK_EQ_U(s.xfs_holds, ATTACH_OFF);
	CHECK(has(s.xfs_holds_why, "XFS not built in or loaded"));
	CHECK_EQ_U(s.lock_waits, ATTACH_TP_BTF);
	CHECK_EQ_U(s.rwsem_holds, ATTACH_FENTRY);
	CHECK(!strstr(s.rwsem_holds_why, "XFS"));

	/* test switch: act as before 5.19 */
	r = debian_61();
	r.forced_no_contention = true;
	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_FENTRY);
	r.forced_no_fentry = true;
	choose_strategy(&r, &all, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_KPROBE);
	CHECK(has(s.lock_waits_why, "fentry disabled by ILOCK_NO_FENTRY"));
	CHECK_EQ_U(s.rwsem_holds, ATTACH_OFF);
}

static void test_before_519(void)
{
	struct probe_result r = kernel_515();
	struct strategy s;

	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_FENTRY);
	CHECK_STR(s.lock_waits_why, "fentry/fexit on rwsem_down_read_slowpath, "
				    "rwsem_down_write_slowpath: no lock:contention_* tracepoints "
				    "(Linux 5.19+)");
	/* XFS holds have their own tracepoints, there since long before */
	CHECK_EQ_U(s.xfs_holds, ATTACH_TP_BTF);

	/* fentry refused (lockdown, no trampolines): kprobes, as kallsyms names them */
	bad_trial(&r.trial[PROBE_FENTRY], "attach", EOPNOTSUPP, "rwsem_down_read_slowpath");
	snprintf(r.ksym_read, sizeof(r.ksym_read), "rwsem_down_read_slowpath.constprop.0");
	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_KPROBE);
	CHECK(has(s.lock_waits_why, "kprobe/kretprobe on rwsem_down_read_slowpath.constprop.0, "
				    "rwsem_down_write_slowpath"));
	CHECK(has(s.lock_waits_why, "fentry refused at attach"));

	/* slow paths not in BTF at all (inlined or renamed): kprobes only */
	r = kernel_515();
	r.slow_in_btf = false;
	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_KPROBE);
	CHECK(has(s.lock_waits_why, "fentry no target in BTF"));

	/* neither: off, and the reason names both */
	r = kernel_515();
	bad_trial(&r.trial[PROBE_FENTRY], "load", EPERM, "rwsem_down_read_slowpath");
	bad_trial(&r.trial[PROBE_KPROBE], "attach", EPERM, "rwsem_down_read_slowpath");
	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_OFF);
	CHECK(has(s.lock_waits_why, "off: no lock:contention_* tracepoints (Linux 5.19+)"));
	CHECK(has(s.lock_waits_why, "fentry refused at load"));
	CHECK(has(s.lock_waits_why, "kprobe refused at attach"));

	/* kprobes exist but the kernel has no slow path by that name */
	r.slow_in_kallsyms = false;
	choose_strategy(&r, NULL, &s);
	CHECK(has(s.lock_waits_why, "kprobe has no rwsem slow path to attach to"));
}

static void test_degraded(void)
{
	struct probe_result r = host_618();
	struct strategy s;

	/* unprivileged: nothing was tried; the reason is the privilege */
	r.has_caps = false;
	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_OFF);
	CHECK_STR(s.lock_waits_why, "off: needs root, or CAP_BPF and CAP_PERFMON");
	CHECK_STR(s.xfs_holds_why, "off: needs root, or CAP_BPF and CAP_PERFMON");

	/* no task storage (before 5.11): nothing can run, whatever else works */
	r = host_618();
	r.task_storage = false;
	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_OFF);
	CHECK(has(s.lock_waits_why, "task storage"));

	/* no BTF for the tracepoints: raw_tp for both */
	r = host_618();
	r.tp_contention_btf = r.tp_xfs_btf = false;
	memset(&r.trial[PROBE_TP_BTF], 0, sizeof(r.trial[PROBE_TP_BTF]));
	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_RAW_TP);
	CHECK(has(s.lock_waits_why, "no BTF for the tracepoints"));
	CHECK_EQ_U(s.xfs_holds, ATTACH_RAW_TP);

	/* tp_btf there but refused: raw_tp, with the refusal */
	r = host_618();
	bad_trial(&r.trial[PROBE_TP_BTF], "load", EINVAL, "contention_begin");
	bad_trial(&r.xfs_trial, "attach", EBUSY, "xfs_ilock");
	choose_strategy(&r, NULL, &s);
	CHECK_EQ_U(s.lock_waits, ATTACH_RAW_TP);
	CHECK(has(s.lock_waits_why, "tp_btf refused at load on contention_begin"));
	CHECK_EQ_U(s.xfs_holds, ATTACH_RAW_TP);
	CHECK(has(s.xfs_holds_why, "tp_btf refused at attach on xfs_ilock"));

	/* --holds=all where a lock function is missing from BTF */
	r = debian_61();
	r.hold_funcs_btf = false;
	snprintf(r.hold_funcs_missing, sizeof(r.hold_funcs_missing), "down_read_killable");
	choose_strategy(&r, &(struct strategy_req){ .holds = ILOCK_HOLDS_ALL }, &s);
	CHECK_EQ_U(s.rwsem_holds, ATTACH_OFF);
	CHECK_STR(s.rwsem_holds_why, "unavailable: down_read_killable not in BTF");
}

static void test_names(void)
{
	struct attach_trial t = {};
	char buf[200];

	CHECK_STR(attach_mode_name(ATTACH_TP_BTF), "tp_btf");
	CHECK_STR(attach_mode_name(ATTACH_RAW_TP), "raw_tp");
	CHECK_STR(attach_mode_name(ATTACH_FENTRY), "fentry");
	CHECK_STR(attach_mode_name(ATTACH_KPROBE), "kprobe");
	CHECK_STR(attach_mode_name(ATTACH_OFF), "off");
	CHECK_STR(probe_kind_name(PROBE_FENTRY), "fentry");
	CHECK_STR(fmt_trial(buf, sizeof(buf), &t), "not tried");
	ok_trial(&t, "contention_begin");
	CHECK_STR(fmt_trial(buf, sizeof(buf), &t), "ok on contention_begin");
	bad_trial(&t, "load", EPERM, "down_read");
	CHECK_STR(fmt_trial(buf, sizeof(buf), &t), "refused at load on down_read: Operation not permitted");
	CHECK(probe_hold_funcs[0] && !strcmp(probe_hold_funcs[0], "down_read"));
}

static char *capture(void (*fn)(FILE *, const struct probe_result *, const struct strategy *),
		     const struct probe_result *r, const struct strategy *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, r, s);
	fclose(f);
	return buf;
}

static void json_print(FILE *f, const struct probe_result *r, const struct strategy *s)
{
	struct json j;

	json_init(&j, f);
	probe_json(&j, r, s);
}

static void test_printers(void)
{
	struct probe_result r = debian_61();
	struct strategy s;
	char *txt, *js;

	r.forced_raw_tp = true;
	choose_strategy(&r, NULL, &s);
	txt = capture(probe_print, &r, &s);
	CHECK(has(txt, "kernel 6.1.0-56-cloud-amd64: privileged yes, BTF yes"));
	CHECK(has(txt, "XFS: module, BTF from /sys/kernel/btf/xfs"));
	CHECK(has(txt, "    fentry  ok on rwsem_down_read_slowpath\n"));
	CHECK(has(txt, "forced by the environment: ILOCK_FORCE_RAW_TP\n"));
	CHECK(has(txt, "  lock waits:  raw_tp on lock:contention_begin/end (forced"));
	free(txt);

	r = host_618();
	choose_strategy(&r, NULL, &s);
	js = capture(json_print, &r, &s);
	CHECK(has(js, "\"xfs\":\"builtin\""));
	CHECK(has(js, "\"kprobe\":{\"tried\":true,\"ok\":false,\"target\":\"rwsem_down_read_slowpath\","
		      "\"step\":\"find\",\"error\":\"no kprobe PMU: kernel built without CONFIG_KPROBES\"}"));
	CHECK(has(js, "\"lock_waits\":{\"attach\":\"tp_btf\""));
	CHECK(has(js, "\"forced\":[]"));
	free(js);
}

static void test_hz(void)
{
	CHECK(probe_parse_hz("# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n") == 250);
	CHECK(probe_parse_hz("CONFIG_HZ=1000") == 1000);
	CHECK(probe_parse_hz("CONFIG_HZ_PERIODIC=y\n# CONFIG_HZ is not set\n") == 0);
	CHECK(probe_parse_hz("CONFIG_HZ=7\n") == 0);
	CHECK(probe_parse_hz("") == 0);
	CHECK(probe_parse_hz(NULL) == 0);
}

/* HZ measured where no config tells: /proc/timer_list's lines, and the ticks' rate */
static void test_hz_measured(void)
{
	uint64_t now = 0, j = 0;

	CHECK(probe_timer_list_line("now at 31867697654058 nsecs\n", &now, &j));
	CHECK(now == 31867697654058ULL && j == 0);
	CHECK(probe_timer_list_line("jiffies: 4302859483\n", &now, &j));
	CHECK(j == 4302859483ULL);
	CHECK(!probe_timer_list_line("  .idle_jiffies   : 4302859122\n", &now, &j));
	CHECK(!probe_timer_list_line("Timer List Version: v0.10\n", &now, &j));
	CHECK(j == 4302859483ULL && now == 31867697654058ULL);
	/* tick to tick over 50 ms: each of the kernel's choices, and off by a tick */
	CHECK(probe_hz_of_ticks(12, 48000000) == 250);
	CHECK(probe_hz_of_ticks(13, 50100000) == 250);
	CHECK(probe_hz_of_ticks(15, 50000000) == 300);
	CHECK(probe_hz_of_ticks(5, 50000000) == 100);
	CHECK(probe_hz_of_ticks(50, 50000000) == 1000);
	CHECK(probe_hz_of_ticks(49, 50000000) == 1000);
	/* none of them: the rate itself (an arch's 1024, 24) */
	CHECK(probe_hz_of_ticks(1024, 1000000000) == 1000);  /* within 10% of 1000 */
	CHECK(probe_hz_of_ticks(3, 125000000) == 24);
	CHECK(probe_hz_of_ticks(40, 50000000) == 800);
	/* nothing to tell by */
	CHECK(probe_hz_of_ticks(0, 50000000) == 0);
	CHECK(probe_hz_of_ticks(5, 0) == 0);
	CHECK(probe_hz_of_ticks(5, 999) == 0);
	CHECK(probe_hz_of_ticks(1000000, 50000000) == 0);  /* 20 MHz: not a tick */
}

/* Filters that leave nothing to trace: refused at start, with both sides named. */
static void test_filters_match_nothing(void)
{
	char why[160], buf[256];
	uint32_t d73 = ILOCK_KDEV(7, 3);
	unsigned drop;

	CHECK(!filters_match_nothing(0, 0, "", buf, sizeof(buf)));
	drop = filter_scope(ILOCK_XFS_SB_MAGIC, d73, "ext4", why, sizeof(why));
	CHECK(filters_match_nothing(drop, 0, why, buf, sizeof(buf)));
	CHECK_STR(buf, "--fs xfs, -D 7:3 is ext4");
	/* an XFS-only class on ext4, an ext4-only one on XFS */
	drop = filter_scope(ILOCK_EXT4_SB_MAGIC, 0, NULL, why, sizeof(why));
	CHECK(filters_match_nothing(drop, 1U << ILOCK_CLASS_XFS_ILOCK, why, buf, sizeof(buf)));
	CHECK_STR(buf, "--class xfs_ilock (XFS only); --fs ext4");
	CHECK(!filters_match_nothing(drop, 1U << ILOCK_CLASS_JBD2_WAIT, why, buf, sizeof(buf)));
	CHECK(!filters_match_nothing(drop, 1U << ILOCK_CLASS_I_RWSEM, why, buf, sizeof(buf)));
	drop = filter_scope(0, d73, "xfs", why, sizeof(why));
	CHECK(filters_match_nothing(drop, 1U << ILOCK_CLASS_JBD2_WAIT, why, buf, sizeof(buf)));
	CHECK_STR(buf, "--class jbd2_wait (ext4 only); -D 7:3 is xfs");
	/* one class that can match is enough */
	CHECK(!filters_match_nothing(drop, 1U << ILOCK_CLASS_JBD2_WAIT | 1U << ILOCK_CLASS_XFS_ILOCK,
				     why, buf, sizeof(buf)));
	drop = filter_scope(0x9123683EU, 0, NULL, why, sizeof(why));  /* btrfs */
	CHECK(filters_match_nothing(drop, 1U << ILOCK_CLASS_JBD2_WAIT | 1U << ILOCK_CLASS_XFS_ILOCK,
				    why, buf, sizeof(buf)));
	CHECK_STR(buf, "--class xfs_ilock (XFS only), --class jbd2_wait (ext4 only); --fs btrfs");
	CHECK(!filters_match_nothing(drop, 1U << ILOCK_CLASS_INVALIDATE, why, buf, sizeof(buf)));
}

int main(void)
{
	test_hz();
	test_filters_match_nothing();
	CHECK(probe_blocker_rwsem("6.18.44-fc-v669"));
	CHECK(probe_blocker_rwsem("6.17.0"));
	CHECK(probe_blocker_rwsem("7.0.1"));
	CHECK(!probe_blocker_rwsem("6.16.9-arch1"));
	CHECK(!probe_blocker_rwsem("6.1.0-56-cloud-amd64"));
	CHECK(!probe_blocker_rwsem("garbage"));
	CHECK(!probe_blocker_rwsem(NULL));
	test_hz_measured();
	test_host();
	test_filter_scope();
	test_forced();
	test_debian_61();
	test_before_519();
	test_degraded();
	test_names();
	test_printers();
	UNIT_DONE();
}
