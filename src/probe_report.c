// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Probe results and the chosen strategy as text (`ilock probe`, -v) or JSON. */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "probe.h"

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

static const char *xfs_state(const struct probe_result *r)
{
	return r->xfs_btf ? (r->xfs_module ? "module" : "builtin") : NULL;
}

bool probe_env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

/* The switches read elsewhere (tracer.c, probe.c), listed when set (docs/kernels.md). */
static const char *const probe_other_switches[] = {
	"ILOCK_NO_WALK", "ILOCK_WALK_ALWAYS", "ILOCK_NO_KCONFIG",
};

#define PROBE_MAX_FORCED 8

/* The switches in effect, in one order for the text and the JSON; how many. */
static size_t forced_names(const struct probe_result *r, const char *out[PROBE_MAX_FORCED])
{
	size_t n = 0;

	if (r->forced_raw_tp)
		out[n++] = "ILOCK_FORCE_RAW_TP";
	if (r->forced_no_xfs)
		out[n++] = "ILOCK_NO_XFS";
	if (r->forced_no_contention)
		out[n++] = "ILOCK_NO_CONTENTION_TP";
	if (r->forced_no_fentry)
		out[n++] = "ILOCK_NO_FENTRY";
	for (size_t i = 0; i < sizeof(probe_other_switches) / sizeof(probe_other_switches[0]); i++)
		if (probe_env_on(probe_other_switches[i]))
			out[n++] = probe_other_switches[i];
	return n;
}

void probe_print(FILE *f, const struct probe_result *r, const struct strategy *s)
{
	const char *forced[PROBE_MAX_FORCED];
	size_t nforced;
	char t[200];

	if (r->tool)
		fprintf(f, "ilock %s\n", r->tool);
	/* task storage is probed by making a map: without privileges it is not known */
	fprintf(f, "kernel %s: privileged %s, BTF %s, BPF task storage %s\n", r->kernel,
		yes_no(r->has_caps), yes_no(r->vmlinux_btf),
		r->has_caps ? yes_no(r->task_storage) : "not tried (needs root)");
	fprintf(f, "  tracepoints: lock:contention_* %s, xfs:xfs_ilock %s\n",
		r->tp_contention_btf ? "yes (BTF)" : yes_no(r->tp_contention),
		r->tp_xfs_btf ? "yes (BTF)" : yes_no(r->tp_xfs));
	fprintf(f, "  XFS: %s\n",
		!r->xfs_btf ? "not built in or loaded"
		: r->xfs_module ? "module, BTF from /sys/kernel/btf/xfs" : "built in");
	if (r->hz)
		fprintf(f, "  HZ: %u (%s)\n", r->hz, r->hz_from ? r->hz_from : "?");
	fprintf(f, "  layout: address_space.invalidate_lock %s, xfs_inode.i_mmaplock %s, "
		   "task_struct.blocker %s\n",
		yes_no(r->invalidate_lock), r->xfs_btf ? yes_no(r->xfs_mmaplock) : "-",
		!r->task_blocker ? "no" : r->blocker_rwsem ? "yes" : "yes (no rw_semaphores before 6.17)");
	if (r->slow_in_btf)
		fprintf(f, "  rwsem slow paths in BTF (fentry targets): %s, %s\n", r->slow_read,
			r->slow_write);
	else
		fprintf(f, "  rwsem slow paths in BTF (fentry targets): none\n");
	if (r->slow_in_kallsyms)
		fprintf(f, "  rwsem slow paths for kprobes: %s, %s\n", r->ksym_read, r->ksym_write);
	else
		fprintf(f, "  rwsem slow paths for kprobes: %s\n",
			r->trial[PROBE_KPROBE].note ? "-" : "not found");
	fprintf(f, "  rwsem lock functions in BTF (--holds=all): %s\n",
		r->hold_funcs_btf ? "yes" : r->hold_funcs_missing[0] ? r->hold_funcs_missing : "no");
	fprintf(f, "  attach types (a trivial program loaded and attached):\n");
	for (int k = 0; k < PROBE_KIND_MAX; k++)
		fprintf(f, "    %-7s %s\n", probe_kind_name(k), fmt_trial(t, sizeof(t), &r->trial[k]));
	if (r->xfs_trial.tried)
		fprintf(f, "    %-7s %s (xfs)\n", "tp_btf", fmt_trial(t, sizeof(t), &r->xfs_trial));
	nforced = forced_names(r, forced);
	if (nforced) {
		fprintf(f, "  forced by the environment:");
		for (size_t i = 0; i < nforced; i++)
			fprintf(f, " %s", forced[i]);
		fputc('\n', f);
	}
	fprintf(f, "strategy:\n  lock waits:  %s\n  XFS holds:   %s\n  rwsem holds: %s\n",
		s->lock_waits_why, s->xfs_holds_why, s->rwsem_holds_why);
}

static void trial_json(struct json *j, const char *key, const struct attach_trial *t)
{
	json_obj_begin(j, key);
	json_bool(j, "tried", t->tried);
	json_bool(j, "ok", t->tried && t->ok);
	json_str(j, "target", t->target[0] ? t->target : NULL);
	if (t->tried && !t->ok) {
		json_str(j, "step", t->step);
		json_str(j, "error", t->note ? t->note : strerror(t->err));
	}
	json_obj_end(j);
}

static void capture_json(struct json *j, const char *key, enum attach_mode m, const char *why)
{
	json_obj_begin(j, key);
	json_str(j, "attach", attach_mode_name(m));
	json_str(j, "why", why);
	json_obj_end(j);
}

void probe_json(struct json *j, const struct probe_result *r, const struct strategy *s)
{
	const char *forced[PROBE_MAX_FORCED];

	json_obj_begin(j, NULL);
	json_str(j, "ilock", r->tool);
	json_str(j, "kernel", r->kernel);
	json_bool(j, "privileged", r->has_caps);
	json_bool(j, "vmlinux_btf", r->vmlinux_btf);
	if (r->has_caps)
		json_bool(j, "task_storage", r->task_storage);
	else
		json_null(j, "task_storage");  /* not probed: it takes privileges */
	json_bool(j, "lock_contention_tracepoints", r->tp_contention);
	json_bool(j, "lock_contention_btf", r->tp_contention_btf);
	json_str(j, "xfs", xfs_state(r));
	json_bool(j, "xfs_tracepoints", r->tp_xfs);
	json_bool(j, "xfs_tracepoints_btf", r->tp_xfs_btf);
	json_obj_begin(j, "layout");
	json_bool(j, "invalidate_lock", r->invalidate_lock);
	json_bool(j, "xfs_mmaplock", r->xfs_mmaplock);
	json_bool(j, "task_blocker", r->task_blocker);
	json_bool(j, "blocker_rwsem", r->blocker_rwsem);
	json_bool(j, "cgroup_kfuncs", r->cgroup_kfuncs);
	json_obj_end(j);
	json_obj_begin(j, "rwsem_slowpath");
	json_str(j, "read", r->slow_read[0] ? r->slow_read : NULL);
	json_str(j, "write", r->slow_write[0] ? r->slow_write : NULL);
	json_bool(j, "btf", r->slow_in_btf);
	json_str(j, "kprobe_read", r->slow_in_kallsyms ? r->ksym_read : NULL);
	json_str(j, "kprobe_write", r->slow_in_kallsyms ? r->ksym_write : NULL);
	json_obj_end(j);
	json_bool(j, "hold_functions_btf", r->hold_funcs_btf);
	json_obj_begin(j, "attach_types");
	for (int k = 0; k < PROBE_KIND_MAX; k++)
		trial_json(j, probe_kind_name(k), &r->trial[k]);
	trial_json(j, "tp_btf_xfs", &r->xfs_trial);
	json_obj_end(j);
	json_u64(j, "hz", r->hz);
	json_str(j, "hz_from", r->hz_from ? r->hz_from : "");
	json_arr_begin(j, "forced");
	for (size_t i = 0, n = forced_names(r, forced); i < n; i++)
		json_str(j, NULL, forced[i]);
	json_arr_end(j);
	json_obj_begin(j, "strategy");
	capture_json(j, "lock_waits", s->lock_waits, s->lock_waits_why);
	capture_json(j, "xfs_holds", s->xfs_holds, s->xfs_holds_why);
	capture_json(j, "rwsem_holds", s->rwsem_holds, s->rwsem_holds_why);
	json_obj_end(j);
	json_obj_end(j);
}

bool probe_blocker_rwsem(const char *release)
{
	unsigned major = 0, minor = 0;

	if (!release || sscanf(release, "%u.%u", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 17);
}

bool probe_timer_list_line(const char *line, uint64_t *now_ns, uint64_t *jiffies)
{
	unsigned long long v;

	if (sscanf(line, "now at %llu nsecs", &v) == 1) {
		*now_ns = v;
		return true;
	}
	if (sscanf(line, "jiffies: %llu", &v) == 1) {
		*jiffies = v;
		return true;
	}
	return false;
}

unsigned probe_hz_of_ticks(uint64_t jiffies, uint64_t ns)
{
	static const unsigned choices[] = { 100, 250, 300, 1000 };
	double hz;

	if (!jiffies || ns < 1000000)
		return 0;
	hz = (double)jiffies * 1e9 / (double)ns;
	for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++)
		if (hz > choices[i] * 0.9 && hz < choices[i] * 1.1)
			return choices[i];
	return hz >= 24 && hz <= 10000 ? (unsigned)(hz + 0.5) : 0;
}

unsigned probe_parse_hz(const char *config)
{
	const char *p = config;

	while (p && *p) {
		if (!strncmp(p, "CONFIG_HZ=", 10)) {
			unsigned long v = strtoul(p + 10, NULL, 10);

			return v >= 24 && v <= 10000 ? (unsigned)v : 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}
