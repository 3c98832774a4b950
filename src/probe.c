// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What this kernel offers, asked of the kernel itself: BTF types, fields and
 * functions; tracepoint existence; and, for each attach type, a trivial
 * program really loaded and attached (then detached at once). Asking libbpf
 * whether a program type exists is not enough: on this project's host it
 * says KPROBE yes (a kprobe loads, but there is no CONFIG_KPROBES to attach
 * it to) and TRACING no (tp_btf works; fentry loads fail with EPERM).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <zlib.h>

#include "mounts.h"
#include "probe.h"
#include "version.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool cap_effective(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

static bool have_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	if (syscall(SYS_capget, &h, d))
		return geteuid() == 0;
	if (cap_effective(d, CAP_SYS_ADMIN))
		return true;
	return cap_effective(d, CAP_BPF) && cap_effective(d, CAP_PERFMON);
}

static bool tracefs_event_exists(const char *sys, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256];

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/%s/%s", roots[i], sys, name);
		if (!access(path, F_OK))
			return true;
	}
	return false;
}

static bool has_member(const struct btf *btf, const char *type, const char *member)
{
	int id = btf ? btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, btf_members(t)[i].name_off), member))
			return true;
	return false;
}

static int find_func(const struct btf *btf, const char *name)
{
	return btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
}

/* The kernel's own fd for a module's BTF (needed to load against it), or -1. */
static int module_btf_fd(const char *module)
{
	__u32 id = 0;

	while (!bpf_btf_get_next_id(id, &id)) {
		struct bpf_btf_info info = {};
		__u32 len = sizeof(info);
		char name[64] = "";
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue;
		info.name = (uintptr_t)name;
		info.name_len = sizeof(name);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.kernel_btf &&
		    !strcmp(name, module))
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * kallsyms names of the rwsem slow paths: exact, or with a compiler suffix
 * (".constprop.0", ".isra.0") that kprobes must use as is. Reading
 * kallsyms takes ~0.3 s, so only when a kprobe on the BTF name failed.
 */
static void kallsyms_slowpaths(struct probe_result *r)
{
	static const char *const want[2] = { "rwsem_down_read_slowpath",
					     "rwsem_down_write_slowpath" };
	char *dst[2] = { r->ksym_read, r->ksym_write };
	bool exact[2] = { false, false };
	char line[512];
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && !(exact[0] && exact[1])) {
		char *name = strchr(line, ' ');

		/* "addr type name [module]" */
		if (!name || !(name = strchr(name + 1, ' ')))
			continue;
		name++;
		if (strncmp(name, "rwsem_down_", 11))
			continue;
		name[strcspn(name, " \t\n")] = 0;
		for (int i = 0; i < 2; i++) {
			size_t n = strlen(want[i]);

			if (exact[i] || strncmp(name, want[i], n))
				continue;
			if (!name[n]) {
				exact[i] = true;
				snprintf(dst[i], PROBE_SYM_LEN, "%s", name);
			} else if (name[n] == '.' && strcmp(name + n, ".cold") && !dst[i][0]) {
				/* ".cold" is a split-off fragment, not an entry point */
				snprintf(dst[i], PROBE_SYM_LEN, "%s", name);
			}
		}
	}
	fclose(f);
}

/* r0 = 0; exit */
static const struct bpf_insn noop_prog[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

static void trial_fail(struct attach_trial *t, const char *step, int err)
{
	t->ok = false;
	t->err = err;
	snprintf(t->step, sizeof(t->step), "%s", step);
}

static int trial_load(struct attach_trial *t, enum bpf_prog_type type,
		      enum bpf_attach_type expected, int btf_id, int btf_obj_fd)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = expected,
		    .attach_btf_id = btf_id > 0 ? (__u32)btf_id : 0,
		    .attach_btf_obj_fd = btf_obj_fd > 0 ? (__u32)btf_obj_fd : 0);
	int fd;

	t->tried = true;
	fd = bpf_prog_load(type, "ilock_probe", "GPL", noop_prog,
			   sizeof(noop_prog) / sizeof(noop_prog[0]), &o);
	if (fd < 0)
		trial_fail(t, "load", errno);
	return fd;
}

/* Attach a loaded program for a moment: raw tracepoints, tp_btf and fentry. */
static void trial_raw_attach(struct attach_trial *t, int prog_fd, const char *tp_name)
{
	int link = bpf_raw_tracepoint_open(tp_name, prog_fd);

	if (link < 0) {
		trial_fail(t, "attach", errno);
		return;
	}
	close(link);
	t->ok = true;
}

/* tp_btf or fentry on a BTF id (of a btf_trace_* typedef or a FUNC). */
static void try_btf_prog(struct attach_trial *t, enum bpf_attach_type type, const char *target,
			 int btf_id, int btf_obj_fd)
{
	int fd;

	snprintf(t->target, sizeof(t->target), "%s", target);
	fd = trial_load(t, BPF_PROG_TYPE_TRACING, type, btf_id, btf_obj_fd);
	if (fd < 0)
		return;
	trial_raw_attach(t, fd, NULL);
	close(fd);
}

static void try_raw_tp(struct attach_trial *t, const char *tp)
{
	int fd;

	snprintf(t->target, sizeof(t->target), "%s", tp);
	fd = trial_load(t, BPF_PROG_TYPE_RAW_TRACEPOINT, 0, 0, 0);
	if (fd < 0)
		return;
	trial_raw_attach(t, fd, tp);
	close(fd);
}

static int read_int_file(const char *path, int *v)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

static int kprobe_pmu_type(void)
{
	int type;

	return read_int_file("/sys/bus/event_source/devices/kprobe/type", &type) ? -1 : type;
}

/* A kprobe through the perf kprobe PMU, as libbpf attaches it. */
static void try_kprobe(struct attach_trial *t, int pmu_type, const char *func)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	int fd, pfd;

	memset(t, 0, sizeof(*t));
	snprintf(t->target, sizeof(t->target), "%s", func);
	fd = trial_load(t, BPF_PROG_TYPE_KPROBE, 0, 0, 0);
	if (fd < 0)
		return;
	attr.type = (__u32)pmu_type;
	attr.config1 = (uintptr_t)func;
	attr.config2 = 0;
	pfd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0) {
		trial_fail(t, "attach", errno);
	} else {
		if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, fd))
			trial_fail(t, "attach", errno);
		else
			t->ok = true;
		close(pfd);
	}
	close(fd);
}

/*
 * kprobes: on the slow paths' BTF names first; if the kernel does not know
 * them by those names, on what kallsyms calls them; else on down_read just
 * to report whether kprobes work at all.
 */
static void probe_kprobes(struct probe_result *r)
{
	struct attach_trial *t = &r->trial[PROBE_KPROBE];
	int pmu = kprobe_pmu_type();

	if (pmu < 0) {
		t->tried = true;
		trial_fail(t, "find", ENOENT);
		t->note = "no kprobe PMU: kernel built without CONFIG_KPROBES";
		return;
	}
	if (r->slow_in_btf) {
		try_kprobe(t, pmu, r->slow_read);
		if (t->ok) {
			snprintf(r->ksym_read, sizeof(r->ksym_read), "%s", r->slow_read);
			snprintf(r->ksym_write, sizeof(r->ksym_write), "%s", r->slow_write);
			r->slow_in_kallsyms = true;
			return;
		}
		if (t->err != ENOENT && t->err != EINVAL)
			return;  /* refused, not missing */
	}
	kallsyms_slowpaths(r);
	r->slow_in_kallsyms = r->ksym_read[0] && r->ksym_write[0];
	try_kprobe(t, pmu, r->slow_in_kallsyms ? r->ksym_read : "down_read");
}

static void probe_btf(struct probe_result *r, const struct btf *vm, const struct btf *xfs)
{
	const struct btf *xb = xfs ? xfs : vm;

	r->tp_contention_btf =
		btf__find_by_name_kind(vm, "btf_trace_contention_begin", BTF_KIND_TYPEDEF) > 0 &&
		btf__find_by_name_kind(vm, "btf_trace_contention_end", BTF_KIND_TYPEDEF) > 0;
	r->invalidate_lock = has_member(vm, "address_space", "invalidate_lock");
	r->task_blocker = has_member(vm, "task_struct", "blocker");
	r->blocker_rwsem = r->task_blocker && probe_blocker_rwsem(r->kernel);
	r->cgroup_kfuncs = find_func(vm, "bpf_cgroup_from_id") > 0 &&
			   find_func(vm, "bpf_task_under_cgroup") > 0 &&
			   find_func(vm, "bpf_cgroup_release") > 0;
	if (btf__find_by_name_kind(xb, "xfs_inode", BTF_KIND_STRUCT) > 0) {
		r->xfs_btf = true;
		r->xfs_module = xfs != NULL;
		r->tp_xfs_btf = btf__find_by_name_kind(xb, "btf_trace_xfs_ilock", BTF_KIND_TYPEDEF) > 0;
		r->xfs_mmaplock = has_member(xb, "xfs_inode", "i_mmaplock");
	}

	r->slow_in_btf = find_func(vm, "rwsem_down_read_slowpath") > 0 &&
			 find_func(vm, "rwsem_down_write_slowpath") > 0;
	if (r->slow_in_btf) {
		snprintf(r->slow_read, sizeof(r->slow_read), "rwsem_down_read_slowpath");
		snprintf(r->slow_write, sizeof(r->slow_write), "rwsem_down_write_slowpath");
	}
	r->hold_funcs_btf = true;
	for (int i = 0; probe_hold_funcs[i]; i++) {
		if (find_func(vm, probe_hold_funcs[i]) <= 0) {
			r->hold_funcs_btf = false;
			snprintf(r->hold_funcs_missing, sizeof(r->hold_funcs_missing), "%s",
				 probe_hold_funcs[i]);
			break;
		}
	}
}

static void probe_attach_types(struct probe_result *r, const struct btf *vm, const struct btf *xfs)
{
	struct attach_trial *t;
	int id;

	/* raw_tp: attaching by name is also the surest test that the tracepoint exists */
	try_raw_tp(&r->trial[PROBE_RAW_TP], "contention_begin");
	t = &r->trial[PROBE_RAW_TP];
	if (t->ok) {
		r->tp_contention = true;
	} else if (t->err == ENOENT) {
		memset(t, 0, sizeof(*t));
		try_raw_tp(t, "sched_switch");
	}

	if (vm) {
		const char *tp = r->tp_contention_btf ? "contention_begin" : "sched_switch";
		char name[64];

		snprintf(name, sizeof(name), "btf_trace_%s", tp);
		id = btf__find_by_name_kind(vm, name, BTF_KIND_TYPEDEF);
		if (id > 0)
			try_btf_prog(&r->trial[PROBE_TP_BTF], BPF_TRACE_RAW_TP, tp, id, 0);

		/* fentry on the slow path we would use, else on down_read */
		tp = r->slow_in_btf ? r->slow_read : "down_read";
		id = find_func(vm, tp);
		if (id > 0)
			try_btf_prog(&r->trial[PROBE_FENTRY], BPF_TRACE_FENTRY, tp, id, 0);
	}
	probe_kprobes(r);

	if (r->xfs_btf && r->tp_xfs_btf) {
		int obj_fd = xfs ? module_btf_fd("xfs") : 0;

		id = btf__find_by_name_kind(xfs ? xfs : vm, "btf_trace_xfs_ilock", BTF_KIND_TYPEDEF);
		if (xfs && obj_fd < 0) {
			r->xfs_trial.tried = true;
			snprintf(r->xfs_trial.target, sizeof(r->xfs_trial.target), "xfs_ilock");
			trial_fail(&r->xfs_trial, "find", ENOENT);
		} else {
			try_btf_prog(&r->xfs_trial, BPF_TRACE_RAW_TP, "xfs_ilock", id, obj_fd);
		}
		if (obj_fd > 0)
			close(obj_fd);
	}
	if (r->xfs_btf && !r->tp_xfs) {
		struct attach_trial x = {};

		try_raw_tp(&x, "xfs_ilock");
		r->tp_xfs = x.ok;
	}
}

unsigned probe_filter_scope(uint32_t fs_magic, uint32_t kdev, char *why, size_t len)
{
	char fstype[32] = "";

	if (kdev)
		mounts_fstype(kdev, fstype, sizeof(fstype));
	return filter_scope(fs_magic, kdev, fstype, why, len);
}

/* jiffies and the monotonic time in one read of /proc/timer_list (root only) */
static bool timer_list_now(uint64_t *now_ns, uint64_t *jiffies)
{
	FILE *f = fopen("/proc/timer_list", "re");
	char line[256];
	int found = 0;

	if (!f)
		return false;
	*now_ns = *jiffies = 0;
	/* "now at" is the third line, the first CPU's "jiffies:" a few dozen on */
	for (int n = 0; n < 400 && found < 2 && fgets(line, sizeof(line), f); n++)
		found += probe_timer_list_line(line, now_ns, jiffies);
	fclose(f);
	return *now_ns && *jiffies;
}

/* the first jiffy to start after now, and when it started (within a read) */
static bool next_tick(uint64_t *now_ns, uint64_t *jiffies)
{
	uint64_t t0, j0;

	if (!timer_list_now(&t0, &j0))
		return false;
	/* a tick is at most 1/24 s away; give up after 0.1 s of reads */
	for (int i = 0; i < 4000; i++) {
		if (!timer_list_now(now_ns, jiffies))
			return false;
		if (*jiffies != j0)
			return true;
		if (*now_ns - t0 > 100000000ULL)
			return false;
	}
	return false;
}

/*
 * Where no config tells (a container without /boot): time 50 ms of
 * jiffies, from tick to tick, in about 70 ms at start.
 */
static unsigned measure_hz(void)
{
	uint64_t t1, j1, t2, j2;
	struct timespec nap = { 0, 50000000L };

	if (!next_tick(&t1, &j1))
		return 0;
	nanosleep(&nap, NULL);
	if (!next_tick(&t2, &j2) || j2 <= j1 || t2 <= t1)
		return 0;
	return probe_hz_of_ticks(j2 - j1, t2 - t1);
}

/*
 * CONFIG_HZ from the running kernel's config (/proc/config.gz, else
 * /boot/config-RELEASE), else measured; Debian's 250 when none tells. Only the
 * samplers' exact-rate budgets depend on it.
 */
static void probe_hz(struct probe_result *r)
{
	static char boot[128];
	static char text[1 << 18];
	const char *files[] = { "/proc/config.gz", boot };
	int n;

	snprintf(boot, sizeof(boot), "/boot/config-%s", r->kernel);
	/* ILOCK_NO_KCONFIG=1: as in a container without /boot (tests) */
	for (size_t i = 0; i < 2 && !probe_env_on("ILOCK_NO_KCONFIG"); i++) {
		gzFile g = gzopen(files[i], "rb");  /* reads plain files too */

		if (!g)
			continue;
		n = 0;
		for (int got; n < (int)sizeof(text) - 1; n += got) {
			got = gzread(g, text + n, sizeof(text) - 1 - n);
			if (got <= 0)
				break;
		}
		gzclose(g);
		text[n] = 0;
		r->hz = probe_parse_hz(text);
		if (r->hz) {
			r->hz_from = files[i];
			return;
		}
	}
	r->hz = measure_hz();
	if (r->hz) {
		r->hz_from = "measured: no kernel config found";
		return;
	}
	r->hz = 250;
	r->hz_from = "assumed: no kernel config found";
}

int probe_kernel(struct probe_result *r)
{
	struct btf *vm, *xfs = NULL;
	struct utsname u;

	memset(r, 0, sizeof(*r));
	r->tool = ilock_version();
	if (!uname(&u))
		snprintf(r->kernel, sizeof(r->kernel), "%s", u.release);
	r->has_caps = have_caps();
	r->forced_raw_tp = probe_env_on("ILOCK_FORCE_RAW_TP");
	r->forced_no_xfs = probe_env_on("ILOCK_NO_XFS");
	r->forced_no_contention = probe_env_on("ILOCK_NO_CONTENTION_TP");
	r->forced_no_fentry = probe_env_on("ILOCK_NO_FENTRY");
	probe_hz(r);

	vm = btf__load_vmlinux_btf();
	if (vm) {
		r->vmlinux_btf = true;
		/* XFS built in has its types in vmlinux; as a module, in its own BTF */
		if (btf__find_by_name_kind(vm, "xfs_inode", BTF_KIND_STRUCT) <= 0 &&
		    !access("/sys/kernel/btf/xfs", R_OK))
			xfs = btf__load_module_btf("xfs", vm);
		probe_btf(r, vm, xfs);
	}
	r->tp_contention = r->tp_contention_btf || tracefs_event_exists("lock", "contention_begin");
	r->tp_xfs = r->tp_xfs_btf || tracefs_event_exists("xfs", "xfs_ilock");

	if (r->has_caps) {
		r->task_storage = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1;
		probe_attach_types(r, vm, xfs);
	}
	btf__free(xfs);
	btf__free(vm);
	return 0;
}
