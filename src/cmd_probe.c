// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `ilock probe`: what this kernel offers and the strategy ilock will use. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "json.h"
#include "probe.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: ilock probe [-j] [--holds=xfs|all|off]\n"
"\n"
"Show what this kernel offers (BTF, tracepoints, XFS, struct layouts, and\n"
"which attach types really load and attach: tp_btf, raw_tp, kprobe, fentry)\n"
"and the strategy ilock uses for each capture, with the reason. Every other\n"
"subcommand runs the same probes once at start; -v prints them there.\n"
"\n"
"  -j, --json          JSON instead of text\n"
"      --holds=all|off show the strategy as if --holds=all (or off) were given\n"
"\n"
"Environment (tests, troubleshooting): ILOCK_FORCE_RAW_TP=1 (raw_tp, not\n"
"tp_btf), ILOCK_NO_XFS=1 (no XFS hold programs), ILOCK_NO_CONTENTION_TP=1\n"
"(act as on a kernel before 5.19: rwsem slow paths), ILOCK_NO_FENTRY=1\n"
"(kprobes rather than fentry).\n"
"\n"
"examples:\n"
"  ilock probe\n"
"  ilock probe -j | jq .strategy\n");
}

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "holds", required_argument, NULL, OPT_HOLDS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct strategy_req req = {};
	struct probe_result r;
	struct strategy s;
	bool json = false;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_HOLDS:
			if (!cli_holds_value(optarg, &req.holds_all, &req.holds_off)) {
				fprintf(stderr, "ilock probe: bad value for --holds: %s (xfs, all or off)\n",
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
	fprintf(stderr, "usage: ilock probe [-j] [--holds=xfs|all|off]\n");
	return 2;
}
