// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `ilock record`: trace, and append one block of per-interval deltas to a
 * recording file each interval (docs/record-report.md, docs/file-format.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "counters.h"
#include "log.h"
#include "mounts.h"
#include "pathcheck.h"
#include "ksyms.h"
#include "recfile.h"
#include "render.h"
#include "signals.h"
#include "titles.h"
#include "tracer.h"
#include "util.h"

/* Power loss costs at most this much; a kill or a crash costs nothing. */
#define SYNC_EVERY_NS (10ULL * 1000000000ULL)
#define MAX_META 48

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "duration", required_argument, NULL, 'd' },
	{ "interval", required_argument, NULL, 'i' },
	CLI_FILTER_LONGOPTS,
	{ "max-inodes", required_argument, NULL, OPT_MAX_INODES },
	{ "renew", required_argument, NULL, OPT_RENEW },
	CLI_OPS_LONGOPTS,
	{ "force", no_argument, NULL, 'f' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage_brief(FILE *f)
{
	fprintf(f, "usage: ilock record -o FILE [-d SECONDS] [-i INTERVAL] [filters] [-f] [-v]   "
		   "(-h for help)\n");
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: ilock record -o FILE [-d SECONDS] [-i INTERVAL] [-p PID] [-c COMM] [-D DEV|PATH]\n"
"                    [--ino N] [--fs TYPE] [--class C] [--cgroup DIR] [--max-inodes N]\n"
"                    [--renew SECONDS] [--ops syscalls|io|all|off] [--no-stacks]\n"
"                    [--holds=off|xfs|all] [--hold-sample N] [--hold-exact-rate R]\n"
"                    [--wait-sample N] [--wait-exact-rate R] [-f] [-v]\n"
"\n"
"Trace inode lock waits and write them to FILE, one block per interval, for\n"
"`ilock report` and `ilock diff` later. Each block holds that interval's\n"
"changes only, so any time window can be reported on its own.\n"
"\n"
"  -o, --output FILE       the recording to write (refuses to overwrite without -f)\n"
"  -d, --duration SECONDS  stop after SECONDS (default: until Ctrl-C or SIGTERM)\n"
"  -i, --interval SECONDS  one block per SECONDS (default 1; 0.05 to 86400)\n"
"  -p, --pid PID           only waits by this process (tgid), whoever held the lock\n"
"  -c, --comm COMM         only tasks with this command name\n"
"  -D, --dev DEV|PATH      only this device: MAJ:MIN, /dev/NODE or a path on it\n"
"      --ino N             only this inode number\n"
"      --fs TYPE           only this filesystem type: xfs, ext4, btrfs, tmpfs, ...\n"
CLI_CLASS_HELP
CLI_CGROUP_HELP
CLI_MAX_INODES_HELP
"      --renew SECONDS     when a table is 80%% full, record on into fresh ones,\n"
"                          at most once every SECONDS (default 600; 0: never,\n"
"                          and new entries are kept without their inode or\n"
"                          threads once a table is seven eighths full)\n"
"      --ops MODE          what holders and waiters were doing (docs/ranges.md):\n"
"                          syscalls (default; no event on every buffered I/O),\n"
"                          io (adds the buffered I/O tracepoints), all (adds\n"
"                          page-cache events), off (cheapest)\n"
"      --no-stacks         keep ops and ranges but record no kernel stacks\n"
CLI_HOLDS_HELP
CLI_WAIT_SAMPLE_HELP
"  -f, --force             replace FILE if it exists (once tracing has started)\n"
"  -v, --verbose           show probes, attach decisions and libbpf messages\n"
"\n"
"SIGINT, SIGTERM, SIGHUP or SIGQUIT finish the current interval and close the\n"
"file cleanly; after SIGKILL or a crash the file stays readable up to its last\n"
"whole block.\n"
"\n"
"examples:\n"
"  ilock record -o night.ilrec -D /srv/data         # until Ctrl-C\n"
"  ilock record -o before.ilrec -d 60 --fs xfs\n"
"  ilock report night.ilrec --from 02:10 --to 02:20\n");
}

struct record_args {
	struct ilock_opts o;
	const char *path;
	bool force;
};

static int parse(int argc, char **argv, struct record_args *a, char *err, size_t errlen)
{
	const char *hint = NULL;
	uint64_t v;
	int c, r;

	memset(a, 0, sizeof(*a));
	a->o.interval_s = 1.0;
	a->o.top_n = 10;
	a->o.renew_s = CLI_RENEW_DEFAULT_S;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:d:i:" CLI_FILTER_SHORTOPTS "fvh", long_opts, NULL)) !=
	       -1) {
		r = cli_filter_option(c, optarg, &a->o.f, err, errlen);
		if (!r)
			r = cli_ops_option(c, optarg, &a->o, err, errlen);
		if (r < 0)
			return -1;
		if (r > 0)
			continue;
		switch (c) {
		case 'o':
			a->path = optarg;
			break;
		case 'd':
			hint = "seconds, more than 0 and up to 10000000";
			if (!parse_seconds(optarg, 1e7, &a->o.duration_s))
				goto bad_value;
			break;
		case 'i':
			hint = "seconds, 0.05 to 86400";
			if (!parse_seconds(optarg, 86400, &a->o.interval_s) || a->o.interval_s < 0.05)
				goto bad_value;
			break;
		case OPT_MAX_INODES:
			hint = "64 to 4194304";
			if (!parse_u64(optarg, 1U << 22, &v) || v < 64)
				goto bad_value;
			a->o.max_locks = (uint32_t)v;
			break;
		case OPT_RENEW:
			hint = CLI_RENEW_HINT;
			if (!cli_renew_arg(optarg, &a->o.renew_s))
				goto bad_value;
			break;
		case 'f':
			a->force = true;
			break;
		case 'v':
			a->o.verbose++;
			break;
		case 'h':
			return 1;
		default:  /* ':' (a value missing) or '?' (unknown) */
			cli_getopt_error(c, argv, err, errlen);
			return -1;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (!a->path) {
		snprintf(err, errlen, "-o FILE is required");
		return -1;
	}
	if (cli_ops_check(&a->o, err, errlen))
		return -1;
	return 0;
bad_value:
	cli_bad_value(c, optarg, long_opts, hint, err, errlen);
	return -1;
}

static void read_boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	buf[0] = 0;
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

/* Metadata strings live here until the META block is written. */
/* 2 KiB a value: the counters' names, all of them, take over 600 bytes */
struct meta_store {
	struct rec_kv kv[MAX_META];
	char val[MAX_META][2048];
	size_t n;
};
_Static_assert(ILOCK_COUNTER_MAX * 32 <= 2048, "meta_store: room for every counter's name");

static void meta_add(struct meta_store *m, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void meta_add(struct meta_store *m, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (m->n >= MAX_META)
		return;
	va_start(ap, fmt);
	vsnprintf(m->val[m->n], sizeof(m->val[m->n]), fmt, ap);
	va_end(ap);
	m->kv[m->n].key = (char *)key;
	m->kv[m->n].val = m->val[m->n];
	m->n++;
}

static void build_meta(struct meta_store *m, const struct record_args *a, const struct tracer *t,
		       const struct ksyms *ks, uint64_t start_real_ns, int argc, char **argv)
{
	static char attach_keys[RENDER_MAX_ATTACH][48];
	char host[256] = "?", boot[64], filt[256], names[ILOCK_COUNTER_MAX * 32] = "";
	char cmdline[512] = "";
	size_t o = 0;

	if (gethostname(host, sizeof(host)))
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = 0;
	read_boot_id(boot, sizeof(boot));
	cli_filters_text(&a->o.f, filt, sizeof(filt));
	for (int c = 0; c < ILOCK_COUNTER_MAX; c++)
		o += (size_t)snprintf(names + o, o < sizeof(names) ? sizeof(names) - o : 0, "%s%s",
				      c ? "," : "", counter_name(c));
	o = (size_t)snprintf(cmdline, sizeof(cmdline), "ilock");
	for (int i = 0; i < argc && o < sizeof(cmdline); i++)
		o += (size_t)snprintf(cmdline + o, sizeof(cmdline) - o, " %s", argv[i]);

	meta_add(m, "tool_version", "%s", ILOCK_VERSION_STR);
	meta_add(m, "hostname", "%s", host);
	meta_add(m, "kernel", "%s", t->probe.kernel);
	meta_add(m, "boot_id", "%s", boot);
	meta_add(m, "start_realtime_ns", "%" PRIu64, start_real_ns);
	meta_add(m, "start_mono_ns", "%" PRIu64, t->start_mono_ns);
	meta_add(m, "interval_ns", "%" PRIu64, (uint64_t)(a->o.interval_s * 1e9 + 0.5));
	meta_add(m, "filters", "%s", filt);
	meta_add(m, "filter_tgid", "%u", a->o.f.tgid);
	meta_add(m, "filter_comm", "%s", a->o.f.comm_on ? a->o.f.comm : "");
	meta_add(m, "filter_dev", "%u", a->o.f.kdev);
	meta_add(m, "filter_ino", "%" PRIu64, a->o.f.ino);
	meta_add(m, "filter_fs_magic", "%u", a->o.f.fs_magic);
	meta_add(m, "filter_class_mask", "%u", a->o.f.class_mask);
	meta_add(m, "counters", "%s", names);
	meta_add(m, "hist", "log2_ns:%d", ILOCK_HIST_SLOTS);
	meta_add(m, "command", "%s", cmdline);
	/* how stack frames are written: symbol names, or addresses when unreadable */
	meta_add(m, "stacks", "%s", !cli_stacks_on(&a->o) ? "off" : ks->n ? "names" : "addresses");
	for (int i = 0; i < t->nattach && i < RENDER_MAX_ATTACH; i++) {
		snprintf(attach_keys[i], sizeof(attach_keys[i]), "attach.%s", t->attach[i].probe);
		meta_add(m, attach_keys[i], "%s", t->attach[i].mode);
	}
}

/* Sleep until an absolute CLOCK_MONOTONIC time, or until a signal. */
static void sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(deadline_ns / 1000000000ULL),
			       .tv_nsec = (long)(deadline_ns % 1000000000ULL) };

	while (!stop_requested && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

struct recorder {
	int fd;
	const char *path;
	struct rec_writer w;
	struct titles titles;     /* of the threads seen, as first seen (w.titles) */
	struct path_fixes fixes;  /* the paths of the inodes written, looked at again */
	struct rec_buf framed;
	uint64_t bytes, last_sync_ns;
	uint64_t intervals;
	uint64_t start_mono_ns;   /* tracing's start: intervals' times count from it */
	/* --renew: not before this; how many so far; the tables are fresh since the last read */
	uint64_t renew_not_before, renewals;
	bool fresh_tables;
	bool write_failed;   /* already said why */
	/*
	 * The file made, while not yet in place (NULL once it is): until its
	 * first whole interval the recording is a new FILE or, under -f, a
	 * file beside the old one (replacing); a failure or a second Ctrl-C
	 * then removes it, so no recording without intervals is left, and an
	 * old one stays.
	 */
	const char *unplaced;
	bool replacing;
};

/* The file to remove if a second signal ends us before it is in place. */
static const char *volatile forced_unlink;

static void record_forced_exit(void)
{
	const char *p = forced_unlink;

	if (p)
		unlink(p);  /* async-signal-safe */
}

static int write_block(struct recorder *rc, uint8_t type, struct rec_buf *raw)
{
	int err;

	rc->framed.len = 0;
	if (raw->oom)
		return -ENOMEM;
	err = rec_frame_block(&rc->framed, type, raw->p, raw->len);
	if (!err)
		err = rec_file_append(rc->fd, &rc->framed);
	raw->len = 0;
	if (err) {
		rc->write_failed = true;
		if (rc->unplaced)
			log_error("writing %s: %s; nothing recorded%s", rc->path, strerror(-err),
				  rc->replacing ? ", the old recording left as it was" : "");
		else
			log_error("writing %s: %s; the recording ends at its last whole interval "
				  "(%" PRIu64 ")", rc->path, strerror(-err), rc->intervals);
		return err;
	}
	rc->bytes += rc->framed.len;
	if (now_monotonic_ns() - rc->last_sync_ns >= SYNC_EVERY_NS) {
		fdatasync(rc->fd);
		rc->last_sync_ns = now_monotonic_ns();
	}
	return 0;
}

/*
 * all_paths: the last interval of these tables (the recording's, or the
 * old tables' at a renewal): the paths of every inode in them are looked
 * at again, not only this interval's.
 */
static int write_interval(struct recorder *rc, struct tracer *t, struct snapshot *cur,
			  struct snapshot *prev, struct snapshot *delta, uint64_t prev_mono,
			  bool all_paths)
{
	struct mount_table mt = {};
	int err;

	if ((err = tracer_read(t, cur)))
		return err;
	/* fresh tables count from zero: their first read is all delta */
	if ((err = snap_delta(delta, cur, rc->intervals && !rc->fresh_tables ? prev : NULL)))
		return err;
	/* the threads of this interval's pairs and stalls, named while they still run */
	titles_note_snapshot(&rc->titles, delta);
	/* the table now, for devices first seen in this interval */
	if (mounts_load(&mt))
		log_warn("cannot read /proc/self/mountinfo: the recording will lack mount points");
	/*
	 * The paths of this interval's inodes looked at again, written again
	 * if they changed; at the end those of every inode recorded, so that a
	 * file renamed or deleted after its last wait is named as it is now
	 * (as `ilock stat` names it).
	 */
	if (all_paths)
		path_fixes_apply(&rc->fixes, cur, &mt, cur->nlocks, now_monotonic_ns());
	else
		path_fixes_apply(&rc->fixes, delta, &mt, delta->nlocks, now_monotonic_ns());
	path_fixes_fix(&rc->fixes, cur);
	err = rec_encode_interval(&rc->w, &rc->w.raw, delta, cur, &mt, prev_mono - rc->start_mono_ns,
				  cur->mono_ns - prev_mono);
	mounts_free(&mt);
	if (err)
		return err;
	if ((err = write_block(rc, REC_BLK_INTERVAL, &rc->w.raw)))
		return err;
	rc->intervals++;
	rc->fresh_tables = false;
	return 0;
}

/*
 * After an interval: when a table is TABLE_ALARM_PCT full, record on into
 * fresh tables (--renew). The old tables' last read, up to the handover,
 * goes out as an interval of its own, so that no interval mixes two
 * tracers' kernel stack ids; the next interval is the fresh tables' first
 * read. Returns a write error only: fresh tables that cannot start leave
 * the old ones recording, said in one line.
 */
static int maybe_renew(struct recorder *rc, struct tracer *t, const struct ilock_opts *o,
		       struct snapshot *cur, struct snapshot *prev, struct snapshot *delta,
		       uint64_t *prev_mono)
{
	struct tracer fresh;
	char msg[256], why[200];
	uint64_t t0 = now_monotonic_ns(), cpu0;
	int tbl = table_renew_due(prev->tables, o->renew_s, t0, rc->renew_not_before), err;

	if (tbl < 0)
		return 0;
	cpu0 = now_thread_cpu_ns();  /* a load is mostly the verifier's, in the kernel */
	table_alarm_text(why, sizeof(why), prev->tables, tbl);
	rc->renew_not_before = t0 + (uint64_t)(o->renew_s * 1e9);
	/* one line for a failure, not the loader's every message */
	err = tracer_start_fresh(&fresh, o, msg, sizeof(msg));
	if (err) {
		log_warn("the %s; cannot start fresh tables (%s): the old ones record on, next try "
			 "in %g s", why, msg[0] ? msg : strerror(-err), o->renew_s);
		return 0;
	}
	tracer_hand_over(t, &fresh);
	rc->w.tables_end = true;  /* the report says where the tables were renewed */
	err = write_interval(rc, t, cur, prev, delta, *prev_mono, true);
	if (err) {
		tracer_stop(&fresh);
		return err;
	}
	*prev_mono = cur->mono_ns;
	tracer_stop(t);
	tracer_move(t, &fresh);
	rc->fresh_tables = true;
	/* the fresh stack map gives out the old one's ids again, for other stacks */
	rec_writer_forget_stacks(&rc->w);
	rc->renewals++;
	fprintf(stderr, "ilock record: the %s: recording on into fresh tables (renewal %" PRIu64
		", %.2f s, %.2f s of CPU)\n", why, rc->renewals,
		(double)(now_monotonic_ns() - t0) / 1e9, (double)(now_thread_cpu_ns() - cpu0) / 1e9);
	return 0;
}

/*
 * The recording's file. A new one is created as FILE; with -f over an
 * existing recording it is made beside it (tmp) and renamed over it
 * (target) once tracing has started, so a run that cannot start (no such
 * process, no privileges, a missing tracepoint) leaves the old one alone.
 * Only regular files: a FIFO would block the open, and -f must not
 * replace a device node or a directory.
 */
static int open_output(const struct record_args *a, char *tmp, size_t len, char *target,
		       size_t target_len)
{
	struct stat st;

	tmp[0] = 0;
	if (stat(a->path, &st)) {
		if (errno != ENOENT)
			return -errno;
		return rec_file_create(a->path, false);
	}
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -ENOTSUP;
	if (!a->force)
		return -EEXIST;
	return rec_file_create_beside(a->path, tmp, len, target, target_len);
}

/*
 * The first whole interval is written: the recording takes its place
 * (under -f, over the old one).
 */
static int place(struct recorder *rc, const char *tmp_path, const char *target)
{
	if (tmp_path[0] && rename(tmp_path, target)) {
		int err = -errno;

		rc->write_failed = true;
		log_error("cannot replace %s: %s; nothing recorded, the old recording left as it "
			  "was", target, strerror(-err));
		return err;
	}
	forced_unlink = NULL;
	rc->unplaced = NULL;
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct snapshot cur, prev, delta, tmp;
	struct recorder rc = { .fd = -1 };
	struct record_args a;
	struct meta_store *meta = NULL;
	struct tracer t;
	struct ksyms ks = {};
	bool tracing = false;
	char err_msg[256];
	uint64_t deadline = 0, next_tick, interval_ns, prev_mono, start_real;
	const char *reason = "interrupted";
	char tmp_path[PATH_MAX + 8], target[PATH_MAX];
	int r, err = 0, ret = 1;

	r = parse(argc, argv, &a, err_msg, sizeof(err_msg));
	if (r == 1) {
		usage(stdout);
		return 0;
	}
	if (r < 0) {
		fprintf(stderr, "ilock record: %s\n", err_msg);
		usage_brief(stderr);
		return 2;
	}
	signals_setup(record_forced_exit);
	snap_init(&cur);
	snap_init(&prev);
	snap_init(&delta);
	rec_writer_init(&rc.w);
	titles_init(&rc.titles);
	/* each interval's: its inodes are the ones with waits, at most PATHCHECK_MAX_PER_READ */
	path_fixes_init(&rc.fixes, 0);
	rc.w.titles = &rc.titles;
	rc.path = a.path;

	rc.fd = open_output(&a, tmp_path, sizeof(tmp_path), target, sizeof(target));
	if (rc.fd < 0) {
		log_error("cannot create %s: %s%s", a.path,
			  rc.fd == -ENOTSUP ? "not a regular file" : strerror(-rc.fd),
			  rc.fd == -EEXIST ? " (use -f to overwrite)" : "");
		rc.fd = -1;
		goto out;
	}
	rc.bytes = REC_HDR_LEN;
	/* until it is in place, a failure leaves no file without intervals behind */
	rc.unplaced = tmp_path[0] ? tmp_path : a.path;
	forced_unlink = rc.unplaced;
	rc.replacing = tmp_path[0] != 0;
	if (tracer_start(&t, &a.o))
		goto out;
	tracing = true;
	rc.start_mono_ns = t.start_mono_ns;
	rc.renew_not_before = t.start_mono_ns + (uint64_t)(a.o.renew_s * 1e9);
	/* the wall clock at the tracer's start, for absolute times in reports */
	start_real = now_realtime_ns() - (now_monotonic_ns() - t.start_mono_ns);

	meta = calloc(1, sizeof(*meta));
	if (!meta) {
		log_error("out of memory");
		goto out;
	}
	/*
	 * Frames are written as names: addresses would mean nothing after a
	 * reboot. Read after the start, so modules loaded by then are named.
	 */
	if (cli_stacks_on(&a.o)) {
		err = ksyms_load(&ks, NULL);
		if (err || !ks.n)
			log_warn("cannot name stack frames (%s): the recording keeps their addresses",
				 err ? strerror(-err) : "/proc/kallsyms shows no addresses");
		err = 0;
		rc.w.ksyms = ks.n ? &ks : NULL;
	}
	build_meta(meta, &a, &t, &ks, start_real, argc, argv);
	if ((err = rec_encode_meta(&rc.w.raw, meta->kv, meta->n)) ||
	    (err = write_block(&rc, REC_BLK_META, &rc.w.raw)))
		goto out;
	/*
	 * Stopped while loading (Ctrl-C before the line below said it runs):
	 * the user called it off, so nothing was recorded and an old FILE
	 * under -f stays as it was, as when tracing cannot start.
	 */
	if (stop_requested) {
		log_error("stopped before recording began: nothing recorded%s%s",
			  tmp_path[0] ? ", left as it was: " : "", tmp_path[0] ? target : "");
		goto out;
	}
	rc.last_sync_ns = now_monotonic_ns();
	fprintf(stderr, "ilock: recording to %s every %g s%s... Ctrl-C to stop\n", a.path,
		a.o.interval_s, a.o.duration_s ? " for the given duration" : "");

	interval_ns = (uint64_t)(a.o.interval_s * 1e9 + 0.5);
	prev_mono = t.start_mono_ns;
	next_tick = prev_mono + interval_ns;
	if (a.o.duration_s)
		deadline = t.start_mono_ns + (uint64_t)(a.o.duration_s * 1e9);

	while (!stop_requested) {
		uint64_t wake = deadline && deadline < next_tick ? deadline : next_tick;

		sleep_until(wake);
		if (stop_requested)
			break;
		if (deadline && now_monotonic_ns() >= deadline) {
			reason = "duration reached";
			break;
		}
		if (now_monotonic_ns() < next_tick)
			continue;
		if ((err = write_interval(&rc, &t, &cur, &prev, &delta, prev_mono, false)) ||
		    (rc.unplaced && (err = place(&rc, tmp_path, target))))
			goto out;
		prev_mono = cur.mono_ns;
		tmp = prev;
		prev = cur;
		cur = tmp;
		if ((err = maybe_renew(&rc, &t, &a.o, &cur, &prev, &delta, &prev_mono)))
			goto out;
		/* the next tick follows the schedule, not the time we woke */
		while (next_tick <= now_monotonic_ns())
			next_tick += interval_ns;
	}

	/*
	 * The interval in progress, then the end marker. The probes go first:
	 * a wait ending during the read would be in the tables but not in the
	 * counters read before them.
	 */
	tracer_detach_probes(&t);
	if ((err = write_interval(&rc, &t, &cur, &prev, &delta, prev_mono, true)) ||
	    (rc.unplaced && (err = place(&rc, tmp_path, target))))
		goto out;
	if ((err = rec_encode_end(&rc.w.raw, rc.intervals, now_realtime_ns(), reason)) ||
	    (err = write_block(&rc, REC_BLK_END, &rc.w.raw)))
		goto out;
	if (fdatasync(rc.fd))
		log_warn("fdatasync %s: %s", a.path, strerror(errno));
	{
		struct stat mine, there;

		/* replaced under us (another record -f, an rm): not "wrote" what nobody can read */
		if (!fstat(rc.fd, &mine) && (stat(a.path, &there) || mine.st_dev != there.st_dev ||
					     mine.st_ino != there.st_ino)) {
			log_error("%s was replaced or removed while recording: these %" PRIu64
				  " interval%s are lost", a.path, rc.intervals, plural(rc.intervals));
			goto out;
		}
	}
	fprintf(stderr, "ilock: wrote %" PRIu64 " interval%s (%.1f KiB) to %s\n", rc.intervals,
		plural(rc.intervals), (double)rc.bytes / 1024.0, a.path);
	ret = 0;
out:
	if (err && !rc.write_failed)
		log_error("recording stopped: %s", strerror(-err));
	forced_unlink = NULL;
	if (rc.unplaced)
		unlink(rc.unplaced);
	if (tracing)
		tracer_stop(&t);
	if (rc.fd >= 0 && close(rc.fd) && !ret) {
		log_error("closing %s: %s", a.path, strerror(errno));
		ret = 1;
	}
	free(meta);
	rec_buf_free(&rc.framed);
	rec_writer_free(&rc.w);
	titles_free(&rc.titles);
	path_fixes_free(&rc.fixes);
	ksyms_free(&ks);
	snap_free(&cur);
	snap_free(&prev);
	snap_free(&delta);
	return ret;
}
