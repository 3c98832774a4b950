// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <inttypes.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "cli.h"
#include "probe.h"
#include "util.h"

static const struct option long_opts[] = {
	{ "duration", required_argument, NULL, 'd' },
	{ "interval", required_argument, NULL, 'i' },
	CLI_FILTER_LONGOPTS,
	{ "top", required_argument, NULL, 'n' },
	{ "iterations", required_argument, NULL, 'n' },
	{ "json", no_argument, NULL, 'j' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "batch", no_argument, NULL, 'b' },
	{ "sort", required_argument, NULL, 'o' },
	{ "max-inodes", required_argument, NULL, OPT_MAX_INODES },
	{ "rows", required_argument, NULL, OPT_ROWS },
	{ "renew", required_argument, NULL, OPT_RENEW },
	CLI_OPS_LONGOPTS,
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void cli_usage_brief(enum cli_cmd cmd, FILE *f)
{
	if (cmd == CLI_TOP)
		fprintf(f, "usage: ilocktop [-i SECONDS] [filters] [-b] [-n ITERATIONS] [-o SORTKEY]   "
			   "(-h for help)\n");
	else
		fprintf(f, "usage: ilock stat [-d SECONDS] [-i INTERVAL] [filters] [-n TOP] [-j] [-v]   "
			   "(-h for help)\n");
}

void cli_usage(enum cli_cmd cmd, FILE *f)
{
	if (cmd == CLI_TOP) {
		fprintf(f,
"usage: ilocktop [-i SECONDS] [-p PID] [-c COMM] [-D DEV|MOUNT] [--ino N] [--fs TYPE]\n"
"                [--class C] [--cgroup DIR] [-b] [-n ITERATIONS] [--rows N] [-o SORTKEY]\n"
"                [--max-inodes N] [--renew SECONDS]\n"
"       ilock top [same options]\n"
"\n"
"Live view of inode lock contention: one row per (inode, lock) with shared and\n"
"exclusive waits per second, wait time per second (1.0 s/s = one thread always\n"
"blocked), p99 and max wait, and the holder that cost the most.\n"
"\n"
"  -i, --interval SECONDS  refresh every SECONDS (default 1)\n"
"  -p, --pid PID           only waits of this process (tgid)\n"
"  -c, --comm COMM         only waits of tasks with this command name\n"
"  -D, --dev DEV|PATH      only this device: MAJ:MIN, /dev/NODE or a path on it\n"
"      --ino N             only this inode number\n"
"      --fs TYPE           only this filesystem type: xfs, ext4 (ext2, ext3 too),\n"
"                          btrfs, tmpfs, zfs, f2fs, nfs, fuse, overlay\n"
CLI_CLASS_HELP
CLI_CGROUP_HELP
"  -o, --sort KEY          wait (default), waits, max, p99, shared, exclusive\n"
"  -b, --batch             plain text, one table per interval (automatic when\n"
"                          stdout is not a terminal)\n"
"  -n, --iterations N      stop after N intervals (batch output only)\n"
"      --rows N            rows per table in batch mode (default 20, 0: all)\n"
"      --ops MODE          syscalls (default), io, all or off, as for ilock stat;\n"
"                          --no-stacks too\n"
CLI_HOLDS_HELP
CLI_WAIT_SAMPLE_HELP
CLI_MAX_INODES_HELP
"      --renew SECONDS     when a table is 80%% full, trace on into fresh ones,\n"
"                          at most once every SECONDS (default 600; 0: never,\n"
"                          and new entries are kept without their inode or\n"
"                          threads once a table is seven eighths full)\n"
"  -v, --verbose           show probes, attach decisions and libbpf messages\n"
"\n"
"keys: q quit, s/S sort key, c cumulative totals, f filter (path, comm or title),\n"
"      p pause, Enter detail (histograms, holders), Esc back, arrows/PgUp/PgDn,\n"
"      w the stalled lock's detail (during a STALLED line), ? or h help\n"
"\n"
"examples:\n"
"  ilocktop                          # every filesystem, refresh each second\n"
"  ilocktop -D /mnt/data -o p99      # one mount, worst p99 first\n"
"  ilocktop -b -i 5 -n 12 > log.txt  # one minute of tables for a log\n");
		return;
	}
	fprintf(f,
"usage: ilock stat [-d SECONDS] [-i INTERVAL] [-p PID] [-c COMM] [-D DEV|MOUNTPOINT] [--ino N]\n"
"                  [--fs TYPE] [--class C] [--cgroup DIR] [-n TOP] [--holds=off|xfs|all]\n"
"                  [-j|--json|--folded] [--ops syscalls|io|all|off] [--no-stacks]\n"
"                  [--max-inodes N] [--hold-sample N] [--hold-exact-rate R] [--wait-sample N]\n"
"                  [--wait-exact-rate R] [-v]\n"
"\n"
"Trace inode lock waits and show, per inode: which lock, shared and exclusive\n"
"wait histograms, and which holder made which waiters wait.\n"
"\n"
"  -d, --duration SECONDS  stop after SECONDS (default: until Ctrl-C)\n"
"  -i, --interval SECONDS  also print what changed every SECONDS\n"
"  -p, --pid PID           only waits by this process (tgid), whoever held the lock\n"
"  -c, --comm COMM         only tasks with this command name\n"
"  -D, --dev DEV|PATH      only this device: MAJ:MIN, /dev/NODE or a path on it\n"
"      --ino N             only this inode number\n"
"      --fs TYPE           only this filesystem type: xfs, ext4 (ext2, ext3 too),\n"
"                          btrfs, tmpfs, zfs, f2fs, nfs, fuse, overlay\n"
CLI_CLASS_HELP
CLI_CGROUP_HELP
"  -n, --top N             rows in the tables (default 10; the pairs by command\n"
"                          2N, by thread 3N, with stacks for the first N/2)\n"
"  -j, --json              one JSON document (docs/json-schema.md); with -i,\n"
"                          one per interval, a line each, then the whole run's\n"
"      --folded            waiter stacks weighted by wait time, folded for\n"
"                          flamegraph.pl or speedscope, instead of the report;\n"
"                          with -i, each interval under '# --- interval N',\n"
"                          then the whole run's under '# --- whole run'\n"
"      --ops MODE          what holders and waiters were doing (docs/ranges.md):\n"
"                          syscalls (default): from each side's syscall, with\n"
"                          no tracepoint on every buffered I/O (io_uring and\n"
"                          kernel-thread buffered I/O show unknown);\n"
"                          io: also the XFS/ext4 buffered I/O tracepoints;\n"
"                          all: also every page-cache read and fault; off: none\n"
"      --no-stacks         take no kernel stacks\n"
CLI_MAX_INODES_HELP
CLI_HOLDS_HELP
CLI_WAIT_SAMPLE_HELP
"  -v, --verbose           show probes, attach decisions and libbpf messages\n"
"\n"
"examples:\n"
"  ilock stat -d 10                  # ten seconds, every filesystem\n"
"  ilock stat -d 10 --folded | flamegraph.pl > waits.svg\n"
"  ilock stat -D /mnt/data --fs xfs  # one XFS mount until Ctrl-C\n"
"  ilock stat -d 30 -i 5 -j > out.json\n");
}

bool parse_dev_arg(const char *arg, uint32_t *kdev, char *err, size_t errlen)
{
	struct stat st;

	if (parse_kdev(arg, kdev))
		return true;
	if (stat(arg, &st)) {
		snprintf(err, errlen, "-D %s: not MAJ:MIN and not an existing path", arg);
		return false;
	}
	/* a device node other than a disk would name the /dev filesystem: surely a slip */
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "-D %s: a %s, not a block device or a path in a filesystem", arg,
			 S_ISCHR(st.st_mode) ? "character device" : S_ISFIFO(st.st_mode) ? "FIFO"
											  : "socket");
		return false;
	}
	if (S_ISBLK(st.st_mode))
		*kdev = ILOCK_KDEV(major(st.st_rdev), minor(st.st_rdev));
	else
		*kdev = ILOCK_KDEV(major(st.st_dev), minor(st.st_dev));
	return true;
}

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Where a cgroup2 filesystem is mounted, for the error message. */
static bool cgroup2_mount(char *buf, size_t len)
{
	char line[1024], dir[512], type[64];
	bool found = false;
	FILE *m = fopen("/proc/self/mounts", "re");

	if (!m)
		return false;
	while (!found && fgets(line, sizeof(line), m))
		if (sscanf(line, "%*s %511s %63s", dir, type) == 2 && !strcmp(type, "cgroup2")) {
			snprintf(buf, len, "%s", dir);
			found = true;
		}
	fclose(m);
	return found;
}

/*
 * --cgroup: a directory of a cgroup2 filesystem. The BPF side asks whether
 * the current task is in it or below (bpf_current_task_under_cgroup), which
 * works on the v2 hierarchy only; on a hybrid host that is the one mounted
 * at /sys/fs/cgroup/unified.
 */
static int parse_cgroup_arg(const char *arg, struct filters *f, char *err, size_t errlen)
{
	struct statfs sfs;
	struct stat st;

	if (stat(arg, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "--cgroup %s: not a directory", arg);
		return -1;
	}
	if (statfs(arg, &sfs) || (unsigned long)sfs.f_type != CGROUP2_SUPER_MAGIC) {
		char mnt[256];

		if (cgroup2_mount(mnt, sizeof(mnt)))
			snprintf(err, errlen, "--cgroup %s: not a cgroup v2 directory (cgroup2 is "
				 "mounted at %s)", arg, mnt);
		else
			snprintf(err, errlen, "--cgroup %s: not a cgroup v2 directory (no cgroup2 "
				 "filesystem is mounted)", arg);
		return -1;
	}
	f->cgroup = arg;
	return 1;
}

static bool parse_sort(const char *s, enum sort_key *k)
{
	for (int i = 0; i < SORT_KEY_MAX; i++) {
		if (!strcmp(s, sort_key_name(i))) {
			*k = i;
			return true;
		}
	}
	/* the screen's help and column say "excl" */
	if (!strcmp(s, "excl")) {
		*k = SORT_EXCL;
		return true;
	}
	return false;
}

void cli_getopt_error(int c, char **argv, char *err, size_t errlen)
{
	if (c == ':')
		snprintf(err, errlen, "option %s needs a value", argv[optind - 1]);
	else if (optopt && optopt < 256)
		snprintf(err, errlen, "unknown option -%c", optopt);
	else
		snprintf(err, errlen, "unknown option %s", argv[optind - 1]);
}

void cli_filters_text(const struct filters *f, char *buf, size_t len)
{
	size_t o = 0;
	char d[24];

	buf[0] = 0;
#define ADD(...) (o += (size_t)snprintf(buf + o, o < len ? len - o : 0, __VA_ARGS__))
	if (f->tgid)
		ADD(" -p %u", f->tgid);
	if (f->comm_on)
		ADD(" -c %s", f->comm);
	if (f->kdev)
		ADD(" -D %s", fmt_kdev(d, sizeof(d), f->kdev));
	if (f->ino)
		ADD(" --ino %" PRIu64, f->ino);
	if (f->fs_magic)
		ADD(" --fs %s", fs_name(f->fs_magic));
	for (uint8_t c = 0; c < ILOCK_CLASS_MAX; c++)
		if (f->class_mask & (1U << c))
			ADD(" --class %s", class_name(c));
	if (f->cgroup)
		ADD(" --cgroup %s", f->cgroup);
#undef ADD
	if (o >= len)
		buf[len - 1] = 0;
	if (!buf[0])
		snprintf(buf, len, "none");
	else
		memmove(buf, buf + 1, strlen(buf));
}

void cli_bad_value(int c, const char *value, const struct option *long_opts, const char *hint,
		   char *err, size_t errlen)
{
	const char *sep = hint ? ": " : "", *h = hint ? hint : "";

	/* not argv[optind - 1]: with "-i 0" that is the value, not the option */
	if (c > 0 && c < 256) {
		snprintf(err, errlen, "invalid value '%s' for -%c%s%s", value, c, sep, h);
		return;
	}
	for (const struct option *lo = long_opts; lo->name; lo++) {
		if (lo->val == c) {
			snprintf(err, errlen, "invalid value '%s' for --%s%s%s", value, lo->name, sep, h);
			return;
		}
	}
	snprintf(err, errlen, "invalid value '%s'%s%s", value, sep, h);
}

/*
 * A filter that takes one value, given again: refused, not last-one-wins,
 * which would trace only the last process or device without a word.
 */
static bool given_twice(int c, const struct filters *f, const char *optarg, char *err,
			size_t errlen)
{
	bool set = (c == 'p' && f->tgid) || (c == 'c' && f->comm_on) || (c == 'D' && f->kdev) ||
		   (c == OPT_INO && f->ino) || (c == OPT_FS && f->fs_magic) ||
		   (c == OPT_CGROUP && f->cgroup);

	if (!set)
		return false;
	for (const struct option *lo = long_opts; lo->name; lo++) {
		if (lo->val != c)
			continue;
		if (c < 128)
			snprintf(err, errlen, "-%c %s: -%c given twice; it takes one value (only "
				 "--class repeats)", c, optarg, c);
		else
			snprintf(err, errlen, "--%s %s: --%s given twice; it takes one value (only "
				 "--class repeats)", lo->name, optarg, lo->name);
		return true;
	}
	snprintf(err, errlen, "%s: a filter given twice; it takes one value", optarg);
	return true;
}

int cli_filter_option(int c, const char *optarg, struct filters *f, char *err, size_t errlen)
{
	uint64_t v;
	uint8_t class;

	if (given_twice(c, f, optarg, err, errlen))
		return -1;
	switch (c) {
	case 'p':
		if (!parse_u64(optarg, 0x7fffffff, &v) || !v) {
			snprintf(err, errlen, "invalid value '%s' for -p: a process id", optarg);
			return -1;
		}
		f->tgid = (uint32_t)v;
		return 1;
	case 'c':
		if (!*optarg || strlen(optarg) >= ILOCK_COMM_LEN) {
			snprintf(err, errlen, "-c %s: a command name is 1 to 15 characters", optarg);
			return -1;
		}
		strcpy(f->comm, optarg);
		f->comm_on = true;
		return 1;
	case 'D':
		return parse_dev_arg(optarg, &f->kdev, err, errlen) ? 1 : -1;
	case OPT_INO:
		if (!parse_u64(optarg, UINT64_MAX, &v) || !v) {
			snprintf(err, errlen, "invalid value '%s' for --ino: an inode number", optarg);
			return -1;
		}
		f->ino = v;
		return 1;
	case OPT_FS:
		if (!fs_magic_from_name(optarg, &f->fs_magic)) {
			char names[128];

			fs_name_list(names, sizeof(names));
			snprintf(err, errlen, "--fs %s: unknown filesystem (one of %s)", optarg, names);
			return -1;
		}
		return 1;
	case OPT_CGROUP:
		return parse_cgroup_arg(optarg, f, err, errlen);
	case OPT_CLASS:
		if (!class_from_name(optarg, &class)) {
			snprintf(err, errlen, "--class %s: not one of i_rwsem, invalidate_lock, xfs_ilock, "
				 "jbd2_wait", optarg);
			return -1;
		}
		f->class_mask |= 1U << class;
		return 1;
	default:
		return 0;
	}
}

int cli_offline_filter_option(int c, const char *optarg, struct filters *f, char *err,
			      size_t errlen)
{
	if (c == OPT_CGROUP) {
		snprintf(err, errlen, "--cgroup selects tasks while tracing; a recording keeps no "
			 "cgroups (record with --cgroup instead)");
		return -1;
	}
	return cli_filter_option(c, optarg, f, err, errlen);
}

bool filters_match_lock(const struct filters *f, uint32_t dev, uint64_t ino, uint8_t class,
			uint32_t magic)
{
	if (f->kdev && dev != f->kdev)
		return false;
	if (f->ino && ino != f->ino)
		return false;
	if (f->class_mask && !(f->class_mask & (1U << class)))
		return false;
	if (f->fs_magic && magic != f->fs_magic)
		return false;
	return true;
}

bool filters_match_edge(const struct filters *f, const struct ilock_edge_key *k, uint32_t magic)
{
	if (!filters_match_lock(f, k->dev, k->ino, k->class, magic))
		return false;
	/* -p and -c select the waiting task, as they do in BPF */
	if (f->tgid && k->waiter_tgid != f->tgid)
		return false;
	if (f->comm_on && strncmp(k->waiter_comm, f->comm, ILOCK_COMM_LEN))
		return false;
	return true;
}

bool cli_holds_value(const char *arg, uint8_t *holds)
{
	if (!strcmp(arg, "off"))
		*holds = ILOCK_HOLDS_OFF;
	else if (!strcmp(arg, "xfs"))
		*holds = ILOCK_HOLDS_XFS;
	else if (!strcmp(arg, "all"))
		*holds = ILOCK_HOLDS_ALL;
	else
		return false;
	return true;
}

/* A sampler's 1-in-N (--hold-sample, --wait-sample): 1 set, -1 bad. */
static int sample_option(const char *flag, const char *optarg, uint32_t *out, char *err,
			 size_t errlen)
{
	uint64_t v;

	if (!parse_u64(optarg, CLI_HOLD_SAMPLE_MAX, &v) || !v || (v & (v - 1))) {
		snprintf(err, errlen, "%s %s: a power of 2 from 1 to %d", flag, optarg,
			 CLI_HOLD_SAMPLE_MAX);
		return -1;
	}
	*out = (uint32_t)v;
	return 1;
}

/* A sampler's exact rate (--hold-exact-rate, --wait-exact-rate): 1 set, -1 bad. */
static int rate_option(const char *flag, const char *what, const char *optarg, uint32_t *out,
		       char *err, size_t errlen)
{
	uint64_t v;

	if (!parse_u64(optarg, 1000000, &v)) {
		snprintf(err, errlen, "%s %s: %s, 0 to 1000000", flag, optarg, what);
		return -1;
	}
	*out = (uint32_t)v;
	return 1;
}

int cli_ops_option(int c, const char *optarg, struct ilock_opts *o, char *err, size_t errlen)
{
	switch (c) {
	case OPT_OPS:
		if (!strcmp(optarg, "syscalls"))
			o->ops_mode = ILOCK_OPS_SYSCALLS;
		else if (!strcmp(optarg, "io"))
			o->ops_mode = ILOCK_OPS_IO;
		else if (!strcmp(optarg, "all"))
			o->ops_mode = ILOCK_OPS_ALL;
		else if (!strcmp(optarg, "off"))
			o->ops_mode = ILOCK_OPS_OFF;
		else {
			snprintf(err, errlen, "--ops %s: one of syscalls, io, all, off", optarg);
			return -1;
		}
		return 1;
	case OPT_NO_STACKS:
		o->no_stacks = true;
		return 1;
	case OPT_HOLDS:
		if (!cli_holds_value(optarg, &o->holds)) {
			/* "--holds -d 1": the next option was taken for the value */
			if (optarg[0] == '-')
				snprintf(err, errlen, "--holds needs a value, off, xfs or all "
					 "(--holds=xfs), not the option %s", optarg);
			else
				snprintf(err, errlen, "--holds %s: off, xfs or all", optarg);
			return -1;
		}
		return 1;
	case OPT_HOLD_SAMPLE:
		return sample_option("--hold-sample", optarg, &o->hold_sample, err, errlen);
	case OPT_HOLD_EXACT_RATE:
		o->hold_exact_rate_set = rate_option("--hold-exact-rate", "holds per second, inode and CPU",
						   optarg, &o->hold_exact_rate, err, errlen) > 0;
		return o->hold_exact_rate_set ? 1 : -1;
	case OPT_WAIT_SAMPLE:
		return sample_option("--wait-sample", optarg, &o->wait_sample, err, errlen);
	case OPT_WAIT_EXACT_RATE:
		o->wait_exact_rate_set = rate_option("--wait-exact-rate", "waits per second, lock and CPU",
						   optarg, &o->wait_exact_rate, err, errlen) > 0;
		return o->wait_exact_rate_set ? 1 : -1;
	}
	return 0;
}

int cli_ops_check(const struct ilock_opts *o, char *err, size_t errlen)
{
	if (o->wait_exact_rate_set && o->wait_sample <= 1) {
		snprintf(err, errlen, "--wait-exact-rate needs --wait-sample N (N > 1): without it "
			 "every wait is timed");
		return -1;
	}
	if ((o->hold_sample || o->hold_exact_rate_set) && o->holds == ILOCK_HOLDS_OFF) {
		snprintf(err, errlen, "%s needs --holds=xfs or --holds=all: holds are not timed "
			 "without it", o->hold_sample ? "--hold-sample" : "--hold-exact-rate");
		return -1;
	}
	return 0;
}

/* A sampler's setting: "1/64 > 250/s/<per>/cpu", or unsampled when one_in <= 1. */
static void sampling_name(char *buf, size_t len, uint32_t one_in, uint32_t rate,
			  const char *unsampled, const char *per)
{
	if (one_in <= 1)
		snprintf(buf, len, "%s", unsampled);
	else
		snprintf(buf, len, "1/%u > %u/s/%s/cpu", one_in, rate, per);
}

void cli_wait_sampling_name(const struct ilock_opts *o, char *buf, size_t len)
{
	uint32_t one_in, rate;

	cli_wait_sampling(o, &one_in, &rate);
	sampling_name(buf, len, one_in, rate, "off", "lock");
}

void cli_hold_sampling_name(const struct ilock_opts *o, char *buf, size_t len)
{
	uint32_t one_in, rate;

	cli_hold_sampling(o, &one_in, &rate);
	sampling_name(buf, len, one_in, rate, "every hold", "inode");
}

bool cli_renew_arg(const char *arg, double *renew_s)
{
	if (!strcmp(arg, "0")) {
		*renew_s = 0;
		return true;
	}
	return parse_seconds(arg, 86400, renew_s) && *renew_s >= 10;
}

int cli_parse(enum cli_cmd cmd, int argc, char **argv, struct ilock_opts *o, char *err,
	      size_t errlen)
{
	const char *shortopts = cmd == CLI_TOP ? ":d:i:p:c:D:n:jvbo:h" : ":d:i:p:c:D:n:jvh";
	const char *hint = NULL;  /* what a value may be, for the error */
	uint64_t v;
	size_t n;
	int c, r;

	memset(o, 0, sizeof(*o));
	o->top_n = cmd == CLI_TOP ? 20 : 10;
	o->interval_s = cmd == CLI_TOP ? 1.0 : 0.0;
	o->sort = SORT_WAIT_TIME;
	o->renew_s = cmd == CLI_TOP ? CLI_RENEW_DEFAULT_S : 0;
	err[0] = 0;
	optind = 0;  /* full reset: parse may run more than once */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, long_opts, NULL)) != -1) {
		r = cli_filter_option(c, optarg, &o->f, err, errlen);
		if (!r)
			r = cli_ops_option(c, optarg, o, err, errlen);
		if (r < 0)
			return -1;
		if (r > 0)
			continue;
		switch (c) {
		case 'd':
			hint = "seconds, 0 (until stopped) to 10000000";
			/* 0 is what no -d means: a script can pass its own setting through */
			n = parse_decimal(optarg, &o->duration_s);
			if (!n || optarg[n] || o->duration_s > 1e7)
				goto bad_value;
			break;
		case 'i':
			hint = "seconds, 0.05 to 86400";
			if (!parse_seconds(optarg, 86400, &o->interval_s) || o->interval_s < 0.05)
				goto bad_value;
			break;
		case 'n':
			hint = cmd == CLI_TOP ? "intervals, 1 to 1000000" : "1 to 1000000";
			if (!parse_u64(optarg, 1000000, &v) || !v)
				goto bad_value;
			if (cmd == CLI_TOP)
				o->iterations = (long)v;
			else
				o->top_n = (int)v;
			break;
		case OPT_ROWS:
			if (cmd != CLI_TOP) {
				snprintf(err, errlen, "unknown option --rows");
				return -1;
			}
			hint = "rows, 0 (all) to 1000000";
			if (!parse_u64(optarg, 1000000, &v))
				goto bad_value;
			o->top_n = (int)v;
			break;
		case OPT_RENEW:
			if (cmd != CLI_TOP) {
				snprintf(err, errlen, "unknown option --renew");
				return -1;
			}
			hint = CLI_RENEW_HINT;
			if (!cli_renew_arg(optarg, &o->renew_s))
				goto bad_value;
			break;
		case OPT_MAX_INODES:
			if (!parse_u64(optarg, 1U << 22, &v) || v < 64) {
				cli_bad_value(c, optarg, long_opts, "64 to 4194304", err, errlen);
				return -1;
			}
			o->max_locks = (uint32_t)v;
			break;
		case 'j':
			o->json = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'b':
			o->batch = true;
			break;
		case 'o':
			if (!parse_sort(optarg, &o->sort)) {
				snprintf(err, errlen, "-o %s: sort by wait, waits, max, p99, shared or exclusive",
					 optarg);
				return -1;
			}
			break;
		case OPT_FOLDED:
			if (cmd != CLI_STAT) {
				snprintf(err, errlen, "unknown option --folded");
				return -1;
			}
			o->folded = true;
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
	if (cli_ops_check(o, err, errlen))
		return -1;
	if (o->folded && (o->json || o->no_stacks || o->ops_mode == ILOCK_OPS_OFF)) {
		snprintf(err, errlen, "--folded prints stacks: not with %s",
			 o->json ? "--json" : o->no_stacks ? "--no-stacks" : "--ops off");
		return -1;
	}
	return 0;

bad_value:
	cli_bad_value(c, optarg, long_opts, hint, err, errlen);
	return -1;
}
