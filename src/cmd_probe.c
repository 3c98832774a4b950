// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `ilock probe`: what this kernel offers and the strategy ilock will use. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "json.h"
#include "probe.h"

#define PROBE_USAGE \
	"usage: ilock probe [-j] [--holds=off|xfs|all] [-D DEV|MOUNTPOINT] [--fs TYPE] [--class C]\n"

static void usage(FILE *f)
{
	fprintf(f,
PROBE_USAGE
"\n"
"Show what this kernel offers (BTF, tracepoints, XFS, struct layouts, and\n"
"which attach types really load and attach: tp_btf, raw_tp, kprobe, fentry)\n"
"and the strategy ilock uses for each capture, with the reason. Every other\n"
"subcommand runs the same probes once at start; -v prints them there.\n"
"\n"
"  -j, --json          JSON instead of text\n"
"      --holds=xfs|all show the strategy as if --holds=xfs (or all) were given\n"
"  -D, --fs, --class   ... or these filters, as the other subcommands take them:\n"
"                      what they rule out is not attached (-D on an ext4 mount\n"
"                      leaves the XFS hold programs off)\n"
"\n"
"Environment (tests, troubleshooting): ILOCK_FORCE_RAW_TP=1 (raw_tp, not\n"
"tp_btf), ILOCK_NO_XFS=1 (no XFS hold programs), ILOCK_NO_CONTENTION_TP=1\n"
"(act as on a kernel before 5.19: rwsem slow paths), ILOCK_NO_FENTRY=1\n"
"(kprobes rather than fentry), ILOCK_NO_WALK=1 (no list of waits in\n"
"progress), ILOCK_WALK_ALWAYS=1, ILOCK_NO_KCONFIG=1 (HZ measured); each set\n"
"is listed under \"forced by the environment\" (docs/kernels.md).\n"
"\n"
"examples:\n"
"  ilock probe\n"
"  ilock probe -j | jq .strategy\n"
"  ilock probe -D /var/lib/mysql     # what a filtered run would attach\n");
}

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "holds", required_argument, NULL, OPT_HOLDS },
		{ "help", no_argument, NULL, 'h' },
		CLI_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct strategy_req req = {};
	struct filters f = {};
	char err[256], scope_why[96];
	struct probe_result r;
	struct strategy s;
	bool json = false;
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jh" CLI_FILTER_SHORTOPTS, opts, NULL)) != -1) {
		/* only the filters that change what is attached mean something here */
		if (c == 'p' || c == 'c' || c == OPT_INO || c == OPT_CGROUP) {
			fprintf(stderr, "ilock probe: %s changes nothing probe shows: it takes -D, "
				"--fs and --class (what they rule out is not attached)\n",
				c == 'p' ? "-p" : c == 'c' ? "-c" : c == OPT_INO ? "--ino" : "--cgroup");
			goto bad;
		}
		rc = cli_filter_option(c, optarg, &f, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "ilock probe: %s\n", err);
			goto bad;
		}
		if (rc > 0)
			continue;
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_HOLDS:
			if (!cli_holds_value(optarg, &req.holds)) {
				fprintf(stderr, "ilock probe: bad value for --holds: %s (off, xfs or all)\n",
					optarg);
				goto bad;
			}
			break;
		case ':':
			fprintf(stderr, "ilock probe: option %s needs a value\n", argv[optind - 1]);
			goto bad;
		default:
			fprintf(stderr, "ilock probe: unknown option %s\n", argv[optind - 1]);
			goto bad;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ilock probe: unexpected argument %s\n", argv[optind]);
		goto bad;
	}
	req.fs_drop = probe_filter_scope(f.fs_magic, f.kdev, scope_why, sizeof(scope_why));
	req.class_mask = f.class_mask;
	req.scope_why = scope_why;
	probe_kernel(&r);
	choose_strategy(&r, &req, &s);
	if (json) {
		struct json j;

		json_init(&j, stdout);
		probe_json(&j, &r, &s);
		fputc('\n', stdout);
	} else {
		probe_print(stdout, &r, &s);
	}
	return 0;

bad:
	fprintf(stderr, PROBE_USAGE);
	return 2;
}
