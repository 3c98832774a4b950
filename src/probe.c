// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/capability.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "probe.h"

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

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

int probe_kernel(struct probe_result *r)
{
	struct btf *vm, *xfs = NULL;
	struct utsname u;

	memset(r, 0, sizeof(*r));
	if (!uname(&u))
		snprintf(r->kernel, sizeof(r->kernel), "%s", u.release);
	r->has_caps = have_caps();
	r->forced_raw_tp = env_on("ILOCK_FORCE_RAW_TP");
	r->forced_no_xfs = env_on("ILOCK_NO_XFS");

	vm = btf__load_vmlinux_btf();
	if (!vm) {
		/* without BTF only the tracefs can tell us what exists */
		r->tp_contention = tracefs_event_exists("lock", "contention_begin");
		r->tp_xfs = tracefs_event_exists("xfs", "xfs_ilock");
		return 0;
	}
	r->vmlinux_btf = true;
	r->tp_contention_btf =
		btf__find_by_name_kind(vm, "btf_trace_contention_begin", BTF_KIND_TYPEDEF) > 0 &&
		btf__find_by_name_kind(vm, "btf_trace_contention_end", BTF_KIND_TYPEDEF) > 0;
	r->tp_contention = r->tp_contention_btf || tracefs_event_exists("lock", "contention_begin");

	if (btf__find_by_name_kind(vm, "xfs_inode", BTF_KIND_STRUCT) > 0) {
		r->xfs_btf = true;
		r->tp_xfs_btf = btf__find_by_name_kind(vm, "btf_trace_xfs_ilock", BTF_KIND_TYPEDEF) > 0;
	} else if (!access("/sys/kernel/btf/xfs", R_OK)) {
		xfs = btf__load_module_btf("xfs", vm);
		if (xfs) {
			r->xfs_module = true;
			r->xfs_btf = btf__find_by_name_kind(xfs, "xfs_inode", BTF_KIND_STRUCT) > 0;
			r->tp_xfs_btf = btf__find_by_name_kind(xfs, "btf_trace_xfs_ilock",
								BTF_KIND_TYPEDEF) > 0;
		}
	}
	r->tp_xfs = r->tp_xfs_btf || tracefs_event_exists("xfs", "xfs_ilock");

	{
		int id = btf__find_by_name_kind(vm, "address_space", BTF_KIND_STRUCT);
		const struct btf_type *t = id > 0 ? btf__type_by_id(vm, id) : NULL;

		for (int i = 0; t && i < btf_vlen(t); i++) {
			const struct btf_member *m = btf_members(t) + i;

			if (!strcmp(btf__name_by_offset(vm, m->name_off), "invalidate_lock"))
				r->invalidate_lock = true;
		}
	}
	btf__free(xfs);
	btf__free(vm);
	return 0;
}

void choose_strategy(const struct probe_result *r, struct strategy *s)
{
	memset(s, 0, sizeof(*s));
	if (!r->tp_contention) {
		s->lock_waits = ATTACH_OFF;
		s->lock_waits_why = "no lock:contention_begin/end tracepoints (Linux 5.19+)";
	} else if (r->tp_contention_btf && !r->forced_raw_tp) {
		s->lock_waits = ATTACH_TP_BTF;
		s->lock_waits_why = "tp_btf on lock:contention_begin/end";
	} else {
		s->lock_waits = ATTACH_RAW_TP;
		s->lock_waits_why = r->forced_raw_tp ? "raw_tp (forced by ILOCK_FORCE_RAW_TP)"
						     : "raw_tp: no BTF for the tracepoints";
	}

	if (r->forced_no_xfs) {
		s->xfs_holds = ATTACH_OFF;
		s->xfs_holds_why = "off (ILOCK_NO_XFS)";
	} else if (!r->tp_xfs || !r->xfs_btf) {
		s->xfs_holds = ATTACH_OFF;
		s->xfs_holds_why = r->xfs_btf ? "off: no xfs:xfs_ilock tracepoint"
					      : "off: XFS not built in or loaded";
	} else if (r->tp_xfs_btf && !r->forced_raw_tp) {
		s->xfs_holds = ATTACH_TP_BTF;
		s->xfs_holds_why = r->xfs_module ? "tp_btf, using xfs module BTF" : "tp_btf";
	} else {
		s->xfs_holds = ATTACH_RAW_TP;
		s->xfs_holds_why = r->forced_raw_tp ? "raw_tp (forced by ILOCK_FORCE_RAW_TP)"
						    : "raw_tp: no BTF for the xfs tracepoints";
	}
}

const char *attach_mode_name(enum attach_mode m)
{
	switch (m) {
	case ATTACH_TP_BTF: return "tp_btf";
	case ATTACH_RAW_TP: return "raw_tp";
	default: return "off";
	}
}

void probe_print(FILE *f, const struct probe_result *r, const struct strategy *s)
{
	fprintf(f, "kernel %s: BTF %s, lock contention tracepoints %s, XFS %s, invalidate_lock %s\n",
		r->kernel, r->vmlinux_btf ? "yes" : "no",
		r->tp_contention_btf ? "yes (BTF)" : r->tp_contention ? "yes" : "no",
		r->xfs_btf ? (r->xfs_module ? "module" : "built in") : "no",
		r->invalidate_lock ? "yes" : "no");
	fprintf(f, "  lock waits: %s\n  XFS holds:  %s\n", s->lock_waits_why, s->xfs_holds_why);
}
