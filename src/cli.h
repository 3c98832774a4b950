/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Command-line options shared by the subcommands, so each flag means the
 * same everywhere. Parsing is pure but for -D, which may stat a path.
 */
#ifndef ILOCK_CLI_H
#define ILOCK_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ilock.h"
#include "model.h"

struct filters {
	uint32_t tgid;                 /* -p */
	char comm[ILOCK_COMM_LEN];     /* -c */
	bool comm_on;
	uint32_t kdev;                 /* -D, kernel encoding; 0: any */
	uint64_t ino;                  /* --ino */
	uint32_t fs_magic;             /* --fs */
	uint32_t class_mask;           /* --class, may repeat */
	const char *cgroup;            /* --cgroup: a cgroup v2 directory; NULL: any */
};

struct ilock_opts {
	double duration_s;             /* -d; 0: until interrupted */
	double interval_s;             /* -i; 0: no interval output */
	struct filters f;
	int top_n;                     /* -n; ilocktop: --rows (0: all) */
	bool json;                     /* -j */
	int verbose;                   /* -v */
	/* live view */
	bool batch;                    /* -b */
	long iterations;               /* -n for top; 0: forever */
	enum sort_key sort;            /* -o */
	double renew_s;                /* --renew: fresh tables at most this often; 0: never */
	/* capacity */
	uint32_t max_locks;            /* --max-inodes */
	uint8_t holds;                 /* --holds: enum ilock_holds, off by default */
	uint32_t hold_sample;          /* --hold-sample N: 1 in N XFS holds over the rate; 0: default */
	uint32_t hold_exact_rate;      /* --hold-exact-rate R: all holds up to R/s, inode, CPU */
	bool hold_exact_rate_set;
	uint32_t wait_sample;          /* --wait-sample N: 1 in N waits over the rate; 0: every wait */
	uint32_t wait_exact_rate;      /* --wait-exact-rate R: all waits up to R/s, lock, CPU */
	bool wait_exact_rate_set;
	/* operations, ranges and stacks (docs/ranges.md) */
	uint8_t ops_mode;              /* --ops: enum ilock_ops_mode */
	bool no_stacks;                /* --no-stacks */
	bool folded;                   /* --folded: waiter stacks for flame graphs */
};

/*
 * --ops (docs/ranges.md). SYSCALLS, the default, runs no tracepoint that
 * fires on every buffered I/O; IO adds those, to name io_uring's and
 * kernel threads' buffered I/O.
 */
enum ilock_ops_mode { ILOCK_OPS_SYSCALLS = 0, ILOCK_OPS_OFF, ILOCK_OPS_ALL, ILOCK_OPS_IO };
/* Long-only options of the ops feature; numbered clear of the shared enum. */
enum {
	OPT_OPS = 280, OPT_NO_STACKS, OPT_FOLDED, OPT_HOLD_SAMPLE, OPT_HOLD_EXACT_RATE,
	OPT_WAIT_SAMPLE, OPT_WAIT_EXACT_RATE
};
#define CLI_OPS_LONGOPTS                                                   \
	{ "ops", required_argument, NULL, OPT_OPS },                       \
	{ "no-stacks", no_argument, NULL, OPT_NO_STACKS },                 \
	{ "holds", required_argument, NULL, OPT_HOLDS },                   \
	{ "hold-sample", required_argument, NULL, OPT_HOLD_SAMPLE },       \
	{ "hold-exact-rate", required_argument, NULL, OPT_HOLD_EXACT_RATE }, \
	{ "wait-sample", required_argument, NULL, OPT_WAIT_SAMPLE },       \
	{ "wait-exact-rate", required_argument, NULL, OPT_WAIT_EXACT_RATE }
/*
 * XFS hold sampling: every hold is timed up to the exact rate per CPU, then
 * 1 in N, weighted by N (docs/output.md, "Hold times").
 */
#define CLI_HOLD_SAMPLE_DEFAULT 64
#define CLI_HOLD_EXACT_RATE_DEFAULT 250
/*
 * ilocktop --renew: a load of the programs costs a second or two of CPU,
 * so a host that fills a table in seconds does not reload every interval.
 */
#define CLI_RENEW_DEFAULT_S 600
#define CLI_RENEW_HINT "seconds, 0 (never) or 10 to 86400"
/* --renew's value (ilocktop, ilock export) into *renew_s; false: not one (CLI_RENEW_HINT). */
bool cli_renew_arg(const char *arg, double *renew_s);
#define CLI_HOLD_SAMPLE_MAX 1024
/* --holds in every tracing command's help: the largest cost knob on XFS. */
#define CLI_CLASS_HELP                                                               \
	"      --class C           only this lock: i_rwsem, invalidate_lock, xfs_ilock\n" \
	"                          (or IOLOCK, MMAPLOCK, ILOCK), or jbd2_wait (ext4\n"    \
	"                          fsync waiting for the journal); may repeat\n"

/* --cgroup in every tracing command's help. */
#define CLI_CGROUP_HELP                                                               \
	"      --cgroup DIR        only tasks in this cgroup v2 directory or below it\n" \
	"                          (/sys/fs/cgroup/system.slice/mysql.service)\n"

#define CLI_HOLDS_HELP                                                                  \
	"      --holds=off|xfs|all hold times: none (default; waits and pairs alone),\n"  \
	"                          from the XFS tracepoints (2-3 events per XFS I/O,\n"    \
	"                          inside the IOLOCK: docs/PERFORMANCE.md), or also of\n" \
	"                          every inode rwsem on any filesystem via fentry on\n"  \
	"                          down_*/up_* (costly; docs/kernels.md)\n"             \
	"      --hold-sample N     above the exact rate, time 1 in N XFS holds and count\n"  \
	"                          each for N (power of 2, default 64; 1: every hold)\n"  \
	"      --hold-exact-rate R time every hold of an inode up to R per second and\n"   \
	"                          CPU, and bursts of up to R after a quieter second\n"   \
	"                          (default 250)\n"
/* The hold sampling in effect: 1 in *one_in above *rate per second, inode and CPU. */
static inline void cli_hold_sampling(const struct ilock_opts *o, uint32_t *one_in, uint32_t *rate)
{
	*one_in = o->hold_sample ? o->hold_sample : CLI_HOLD_SAMPLE_DEFAULT;
	*rate = o->hold_exact_rate_set ? o->hold_exact_rate : CLI_HOLD_EXACT_RATE_DEFAULT;
}
/* "1/64 > 250/s/inode/cpu" or "every hold": attach["hold_sampling"], diff's notes. */
void cli_hold_sampling_name(const struct ilock_opts *o, char *buf, size_t len);
/*
 * Wait sampling, off by default: with --wait-sample N every wait of a lock
 * is timed up to the exact rate per CPU, then 1 in N, weighted by N
 * (docs/output.md, "Wait sampling").
 */
#define CLI_WAIT_EXACT_RATE_DEFAULT 250
#define CLI_WAIT_SAMPLE_HELP                                                            \
	"      --wait-sample N     above the exact rate, time 1 in N waits and count\n"   \
	"                          each for N: cheaper on a hot lock, and every count\n" \
	"                          an estimate (power of 2 up to 1024; default 1:\n"    \
	"                          every wait)\n"                                        \
	"      --wait-exact-rate R with --wait-sample, time every wait of a lock up to\n" \
	"                          R per second and CPU (default 250)\n"
/* The wait sampling in effect: 1 in *one_in (1: every wait) above *rate per second, lock and CPU. */
static inline void cli_wait_sampling(const struct ilock_opts *o, uint32_t *one_in, uint32_t *rate)
{
	*one_in = o->wait_sample ? o->wait_sample : 1;
	*rate = o->wait_exact_rate_set ? o->wait_exact_rate : CLI_WAIT_EXACT_RATE_DEFAULT;
}
/* "1/16 > 250/s/lock/cpu" or "off": attach["wait_sampling"]. */
void cli_wait_sampling_name(const struct ilock_opts *o, char *buf, size_t len);
/* Are kernel stacks taken? --no-stacks, and --ops off, turn them off. */
static inline bool cli_stacks_on(const struct ilock_opts *o)
{
	return !o->no_stacks && o->ops_mode != ILOCK_OPS_OFF;
}
/*
 * The cost knobs --ops, --no-stacks and --holds, as cli_filter_option: 1
 * handled, 0 not ours, -1 bad value.
 */
int cli_ops_option(int c, const char *optarg, struct ilock_opts *o, char *err, size_t errlen);
/* --holds off|xfs|all into enum ilock_holds (the last one given wins); false if none. */
bool cli_holds_value(const char *arg, uint8_t *holds);

enum cli_cmd { CLI_STAT, CLI_TOP };

/*
 * The filter flags every tracing or reading subcommand accepts:
 * -p PID, -c COMM, -D DEV|PATH, --ino N, --fs FS, --class C, --cgroup DIR
 * (which the subcommands that read a recording refuse: cli_offline_filter_option()).
 * Put CLI_FILTER_LONGOPTS in a getopt_long table and CLI_FILTER_SHORTOPTS
 * in the short-option string, then pass each option to cli_filter_option().
 */
enum { OPT_INO = 256, OPT_FS, OPT_CLASS, OPT_MAX_INODES, OPT_ROWS, OPT_HOLDS, OPT_CGROUP,
       OPT_RENEW,
       OPT_CLI_FIRST_FREE = 300 };
#define CLI_FILTER_SHORTOPTS "p:c:D:"
/* --max-inodes in every tracing command's help: what it sizes, what it costs. */
#define CLI_MAX_INODES_HELP                                                          \
	"      --max-inodes N      size of the per-inode maps (default 16384;\n"       \
	"                          waits and pairs reserve 488 bytes each at start;\n" \
	"                          refused if all maps, full, could take more than\n"  \
	"                          half the available memory; -v shows the sizes)\n"
#define CLI_FILTER_LONGOPTS                                     \
	{ "pid", required_argument, NULL, 'p' },                \
	{ "comm", required_argument, NULL, 'c' },               \
	{ "dev", required_argument, NULL, 'D' },                \
	{ "ino", required_argument, NULL, OPT_INO },            \
	{ "fs", required_argument, NULL, OPT_FS },              \
	{ "class", required_argument, NULL, OPT_CLASS },        \
	{ "cgroup", required_argument, NULL, OPT_CGROUP }
/*
 * The one-line message for what getopt_long returned on a bad flag: ':'
 * (its value is missing; needs a ':'-prefixed optstring) or '?' (unknown).
 */
void cli_getopt_error(int c, char **argv, char *err, size_t errlen);
/* The filters as options ("-p 12 --fs xfs"), or "none". */
void cli_filters_text(const struct filters *f, char *buf, size_t len);
/* Options that do nothing without another (--wait-exact-rate, --hold-*): -1 and err. */
int cli_ops_check(const struct ilock_opts *o, char *err, size_t errlen);

struct option;

/*
 * "invalid value 'V' for -x" (or --long, named from long_opts by c), then
 * ": hint" when given: the allowed values or range.
 */
void cli_bad_value(int c, const char *value, const struct option *long_opts, const char *hint,
		   char *err, size_t errlen);
/* 1: handled; 0: not a filter option; -1: bad value, reason in err. */
int cli_filter_option(int c, const char *optarg, struct filters *f, char *err, size_t errlen);
/* The same for a subcommand reading a recording: --cgroup is refused (-1, err). */
int cli_offline_filter_option(int c, const char *optarg, struct filters *f, char *err,
			      size_t errlen);
/* Does an inode lock row / an edge pass the filters (for recorded data)? */
bool filters_match_lock(const struct filters *f, uint32_t dev, uint64_t ino, uint8_t class,
			uint32_t magic);
bool filters_match_edge(const struct filters *f, const struct ilock_edge_key *k, uint32_t magic);

/*
 * Parse argv (argv[0] is the subcommand name). Returns 0, or -1 with a
 * one-line reason in err (the caller prints usage and exits 2), or 1 when
 * --help was asked for.
 */
int cli_parse(enum cli_cmd cmd, int argc, char **argv, struct ilock_opts *o, char *err,
	      size_t errlen);
/* "MAJ:MIN", a block device node, or any path on the filesystem. */
bool parse_dev_arg(const char *arg, uint32_t *kdev, char *err, size_t errlen);
void cli_usage(enum cli_cmd cmd, FILE *f);
/* The synopsis line only, for errors. */
void cli_usage_brief(enum cli_cmd cmd, FILE *f);

#endif
