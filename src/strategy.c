// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The attach strategy, chosen from probe results alone: pure, so every
 * kernel we cannot boot is still covered by a unit test of its probe
 * results (tests/unit/test_probe.c).
 */
#include <stdarg.h>
#include <string.h>

#include "ilock.h"
#include "model.h"
#include "probe.h"

const char *const probe_hold_funcs[] = {
	"down_read", "down_read_killable", "down_read_trylock",
	"down_write", "down_write_killable", "down_write_trylock",
	"up_read", "up_write", "downgrade_write", NULL,
};

const char *attach_mode_name(enum attach_mode m)
{
	switch (m) {
	case ATTACH_TP_BTF: return "tp_btf";
	case ATTACH_RAW_TP: return "raw_tp";
	case ATTACH_FENTRY: return "fentry";
	case ATTACH_KPROBE: return "kprobe";
	default: return "off";
	}
}

const char *probe_kind_name(enum probe_kind k)
{
	static const char *const names[PROBE_KIND_MAX] = {
		[PROBE_TP_BTF] = "tp_btf", [PROBE_RAW_TP] = "raw_tp",
		[PROBE_KPROBE] = "kprobe", [PROBE_FENTRY] = "fentry",
	};

	return k < PROBE_KIND_MAX ? names[k] : "?";
}

char *fmt_trial(char *buf, size_t len, const struct attach_trial *t)
{
	if (!t->tried)
		snprintf(buf, len, "not tried");
	else if (t->note)
		snprintf(buf, len, "unavailable: %s", t->note);
	else if (t->ok)
		snprintf(buf, len, "ok on %s", t->target);
	else if (t->target[0])
		snprintf(buf, len, "refused at %s on %s: %s", t->step, t->target, strerror(t->err));
	else
		snprintf(buf, len, "refused at %s: %s", t->step, strerror(t->err));
	return buf;
}

static bool trial_ok(const struct probe_result *r, enum probe_kind k)
{
	return r->trial[k].tried && r->trial[k].ok;
}

static void why(char *dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why(char *dst, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, STRATEGY_WHY_LEN, fmt, ap);
	va_end(ap);
}

/* Why fentry or kprobes cannot serve, for the "off" explanations. */
static void fentry_problem(const struct probe_result *r, const char *target_known, char *buf,
			   size_t len)
{
	char t[160];

	if (r->forced_no_fentry)
		snprintf(buf, len, "disabled by ILOCK_NO_FENTRY");
	else if (!target_known)
		snprintf(buf, len, "no target in BTF");
	else
		snprintf(buf, len, "%s", fmt_trial(t, sizeof(t), &r->trial[PROBE_FENTRY]));
}

static void choose_lock_waits(const struct probe_result *r, struct strategy *s)
{
	const char *base;
	char fe[160], kp[160];

	if (!r->has_caps) {
		/* unprivileged, nothing could be tried: say that, not what is "missing" */
		s->lock_waits = ATTACH_OFF;
		why(s->lock_waits_why, "off: needs root, or CAP_BPF and CAP_PERFMON");
		return;
	}
	if (!r->task_storage) {
		s->lock_waits = ATTACH_OFF;
		why(s->lock_waits_why, "off: no BPF task storage (Linux 5.11+), where ilock keeps "
				       "each thread's wait");
		return;
	}
	if (r->tp_contention && !r->forced_no_contention) {
		if (r->tp_contention_btf && trial_ok(r, PROBE_TP_BTF) && !r->forced_raw_tp) {
			s->lock_waits = ATTACH_TP_BTF;
			why(s->lock_waits_why, "tp_btf on lock:contention_begin/end");
			return;
		}
		if (trial_ok(r, PROBE_RAW_TP)) {
			char t[160];

			s->lock_waits = ATTACH_RAW_TP;
			if (r->forced_raw_tp)
				why(s->lock_waits_why, "raw_tp on lock:contention_begin/end "
						       "(forced by ILOCK_FORCE_RAW_TP)");
			else if (!r->tp_contention_btf)
				why(s->lock_waits_why, "raw_tp on lock:contention_begin/end: "
						       "no BTF for the tracepoints");
			else
				why(s->lock_waits_why, "raw_tp on lock:contention_begin/end: tp_btf %s",
				    fmt_trial(t, sizeof(t), &r->trial[PROBE_TP_BTF]));
			return;
		}
		/* tracepoints there but neither way to attach: try the slow paths */
	}

	base = r->forced_no_contention ? "lock:contention_* ignored (ILOCK_NO_CONTENTION_TP)"
	       : r->tp_contention	 ? "lock:contention_* cannot be attached"
					 : "no lock:contention_* tracepoints (Linux 5.19+)";
	if (r->slow_in_btf && trial_ok(r, PROBE_FENTRY) && !r->forced_no_fentry) {
		s->lock_waits = ATTACH_FENTRY;
		why(s->lock_waits_why, "fentry/fexit on %s, %s: %s", r->slow_read, r->slow_write, base);
		return;
	}
	fentry_problem(r, r->slow_in_btf ? r->slow_read : NULL, fe, sizeof(fe));
	if (r->slow_in_kallsyms && trial_ok(r, PROBE_KPROBE)) {
		s->lock_waits = ATTACH_KPROBE;
		why(s->lock_waits_why, "kprobe/kretprobe on %s, %s: %s; fentry %s", r->ksym_read,
		    r->ksym_write, base, fe);
		return;
	}
	if (r->slow_in_kallsyms || r->trial[PROBE_KPROBE].note)
		fmt_trial(kp, sizeof(kp), &r->trial[PROBE_KPROBE]);
	else
		snprintf(kp, sizeof(kp), "has no rwsem slow path to attach to");
	s->lock_waits = ATTACH_OFF;
	why(s->lock_waits_why, "off: %s; fentry %s; kprobe %s", base, fe, kp);
}

static void choose_xfs_holds(const struct probe_result *r, const struct strategy_req *req,
			     struct strategy *s)
{
	s->xfs_holds = ATTACH_OFF;
	if (req && (req->fs_drop & FS_XFS)) {
		why(s->xfs_holds_why, "off: the filters leave no XFS inode (%s)",
		    req->scope_why ? req->scope_why : "--fs");
	} else if (req && req->class_mask && !(req->class_mask & ILOCK_XFS_CLASS_MASK)) {
		why(s->xfs_holds_why, "off: the --class filter leaves no XFS lock");
	} else if (r->forced_no_xfs) {
		why(s->xfs_holds_why, "off (ILOCK_NO_XFS)");
	} else if (!r->has_caps) {
		why(s->xfs_holds_why, "off: needs root, or CAP_BPF and CAP_PERFMON");
	} else if (!r->xfs_btf) {
		why(s->xfs_holds_why, "off: XFS not built in or loaded (no xfs BTF)");
	} else if (!r->tp_xfs) {
		why(s->xfs_holds_why, "off: no xfs:xfs_ilock tracepoint");
	} else if (r->tp_xfs_btf && r->xfs_trial.tried && r->xfs_trial.ok && !r->forced_raw_tp) {
		s->xfs_holds = ATTACH_TP_BTF;
		why(s->xfs_holds_why, "tp_btf on xfs:xfs_ilock/xfs_iunlock%s",
		    r->xfs_module ? ", using xfs module BTF" : "");
	} else if (trial_ok(r, PROBE_RAW_TP)) {
		char t[160];

		s->xfs_holds = ATTACH_RAW_TP;
		if (r->forced_raw_tp)
			why(s->xfs_holds_why, "raw_tp on xfs:xfs_ilock/xfs_iunlock "
					      "(forced by ILOCK_FORCE_RAW_TP)");
		else if (!r->tp_xfs_btf)
			why(s->xfs_holds_why, "raw_tp on xfs:xfs_ilock/xfs_iunlock: "
					      "no BTF for the tracepoints");
		else
			why(s->xfs_holds_why, "raw_tp on xfs:xfs_ilock/xfs_iunlock: tp_btf %s",
			    fmt_trial(t, sizeof(t), &r->xfs_trial));
	} else {
		why(s->xfs_holds_why, "off: neither tp_btf nor raw_tp can attach");
	}
	/* not asked for: say what --holds=xfs would do, for `ilock probe` */
	if (req && req->holds == ILOCK_HOLDS_OFF) {
		char would[STRATEGY_WHY_LEN];

		snprintf(would, sizeof(would), "%s", s->xfs_holds_why);
		s->xfs_holds = ATTACH_OFF;
		why(s->xfs_holds_why, "off (the default; --holds=xfs: %s)", would);
	}
}

static void choose_rwsem_holds(const struct probe_result *r, const struct strategy_req *req,
			       struct strategy *s)
{
	char t[160];

	s->rwsem_holds = ATTACH_OFF;
	if (!req || req->holds != ILOCK_HOLDS_ALL) {
		why(s->rwsem_holds_why, "off (--holds=all turns it on where fentry works)");
	} else if (r->forced_no_fentry) {
		why(s->rwsem_holds_why, "unavailable: fentry disabled by ILOCK_NO_FENTRY");
	} else if (!r->hold_funcs_btf) {
		why(s->rwsem_holds_why, "unavailable: %s not in BTF",
		    r->hold_funcs_missing[0] ? r->hold_funcs_missing : "down_read");
	} else if (!trial_ok(r, PROBE_FENTRY)) {
		why(s->rwsem_holds_why, "unavailable: fentry %s",
		    fmt_trial(t, sizeof(t), &r->trial[PROBE_FENTRY]));
	} else {
		s->rwsem_holds = ATTACH_FENTRY;
		why(s->rwsem_holds_why, "fentry/fexit on down_read/down_write/up_read/up_write%s",
		    s->xfs_holds != ATTACH_OFF ? "; XFS inodes from the xfs tracepoints" : "");
	}
}

/* ext2 and ext3 mount through the ext4 driver, with its tracepoints */
static unsigned fs_family(const char *fstype)
{
	if (!strcmp(fstype, "xfs"))
		return FS_XFS;
	if (!strcmp(fstype, "ext4") || !strcmp(fstype, "ext3") || !strcmp(fstype, "ext2"))
		return FS_EXT4;
	return FS_OTHER;
}

unsigned filter_scope(uint32_t fs_magic, uint32_t kdev, const char *dev_fstype, char *why,
		      size_t len)
{
	unsigned keep = FS_ALL;

	if (len)
		why[0] = '\0';
	if (fs_magic == ILOCK_XFS_SB_MAGIC)
		keep = FS_XFS;
	else if (fs_magic == ILOCK_EXT4_SB_MAGIC)
		keep = FS_EXT4;
	else if (fs_magic)
		keep = FS_OTHER;   /* --fs btrfs, tmpfs, ... */
	if (fs_magic && len)
		snprintf(why, len, "--fs %s", fs_name(fs_magic));
	if (kdev && dev_fstype && *dev_fstype) {
		unsigned dev_keep = fs_family(dev_fstype);
		/* the -D device alone explains it when --fs adds nothing */
		size_t at = len && (keep & dev_keep) != dev_keep ? strlen(why) : 0;

		if (at < len)
			snprintf(why + at, len - at, "%s-D %u:%u is %s", at ? ", " : "",
				 ILOCK_KDEV_MAJOR(kdev), ILOCK_KDEV_MINOR(kdev), dev_fstype);
		keep &= dev_keep;
	}
	return FS_ALL & ~keep;
}

bool filters_match_nothing(unsigned fs_drop, uint32_t class_mask, const char *scope_why,
			   char *buf, size_t len)
{
	unsigned keep = FS_ALL & ~fs_drop;
	/* the filesystems each class can be on */
	static const unsigned class_fs[ILOCK_CLASS_MAX] = {
		[ILOCK_CLASS_I_RWSEM] = FS_ALL, [ILOCK_CLASS_INVALIDATE] = FS_ALL,
		[ILOCK_CLASS_XFS_ILOCK] = FS_XFS, [ILOCK_CLASS_JBD2_WAIT] = FS_EXT4,
	};
	unsigned classes_keep = 0;
	size_t n = 0;

	if (!keep) {
		snprintf(buf, len, "%s", scope_why && *scope_why ? scope_why : "--fs and -D disagree");
		return true;
	}
	if (!class_mask)
		return false;
	for (unsigned c = 0; c < ILOCK_CLASS_MAX; c++)
		if (class_mask & (1U << c))
			classes_keep |= class_fs[c];
	if (classes_keep & keep)
		return false;
	buf[0] = 0;
	for (unsigned c = 0; c < ILOCK_CLASS_MAX && n < len; c++)
		if (class_mask & (1U << c))
			n += (size_t)snprintf(buf + n, len - n, "%s--class %s%s", n ? ", " : "",
					      class_name((uint8_t)c),
					      class_fs[c] == FS_XFS	 ? " (XFS only)"
					      : class_fs[c] == FS_EXT4 ? " (ext4 only)"
								 : "");
	if (n < len && scope_why && *scope_why)
		snprintf(buf + n, len - n, "; %s", scope_why);
	return true;
}

void choose_strategy(const struct probe_result *r, const struct strategy_req *req,
		     struct strategy *s)
{
	memset(s, 0, sizeof(*s));
	choose_lock_waits(r, s);
	choose_xfs_holds(r, req, s);
	choose_rwsem_holds(r, req, s);
}
