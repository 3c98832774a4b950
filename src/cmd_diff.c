// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `ilock diff`: did it change, where, by how much, and is it significant? */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "diff.h"
#include "outguard.h"
#include "recfile.h"
#include "recview.h"
#include "util.h"

#define EXIT_DAMAGED 3

enum { OPT_FROM = OPT_CLI_FIRST_FREE, OPT_TO };

static const struct option long_opts[] = {
	CLI_FILTER_LONGOPTS,
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "top", required_argument, NULL, 'n' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage_brief(FILE *f)
{
	fprintf(f, "usage: ilock diff BEFORE AFTER [--from T] [--to T] [filters] [-n TOP] [-j]   "
		   "(-h for help)\n");
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: ilock diff BEFORE AFTER [--from T] [--to T] [-p PID] [-c COMM] [-D DEV|PATH]\n"
"                  [--ino N] [--fs TYPE] [--class C] [-n TOP] [-j|--json]\n"
"\n"
"Compare two recordings of `ilock record`, per lock class and mode and per\n"
"inode (matched by path, else by dev:ino): waits/s, wait time/s, p50, p99,\n"
"max and exclusive-hold p99; and the waits between disjoint and overlapping\n"
"byte ranges, and per role (holder command, op and mode -> waiter's, threads\n"
"summed), as waits/s and wait time/s. Each change gets a verdict from a\n"
"Mann-Whitney U test over the per-interval values, Holm-adjusted\n"
"(docs/diff-method.md).\n"
"The output ends with a summary and a one-line verdict. Either recording may\n"
"be '-', standard input.\n"
"\n"
"  --from T, --to T        compare only this window of each recording (as for\n"
"                          `ilock report`; 5 or 1m: from each one's start): leaves\n"
"                          out a warm-up, or idle intervals that dilute a change\n"
"  filters                 as for `ilock report`, applied to both recordings\n"
"  -n, --top N             inodes and roles compared (default 10 each, by wait time)\n"
"  -j, --json              one JSON document\n"
"\n"
"exit status: 0 ok; 1 error; 2 bad arguments; 3 compared, but a recording is damaged\n"
"\n"
"examples:\n"
"  ilock diff before.ilrec after.ilrec\n"
"  ilock diff before.ilrec after.ilrec --class i_rwsem -j\n");
}

/*
 * Keep the intervals of [from, to] (rec_select), as a view: the decoded
 * tables stay, iv and niv move. restore() puts them back for rec_free.
 */
struct window {
	struct rec_interval *iv;
	size_t niv;
};

static int apply_window(const char *path, struct recording *r, const char *from_s,
			const char *to_s, struct window *saved)
{
	char err[256];
	size_t i0, i1;
	int e;

	saved->iv = r->iv;
	saved->niv = r->niv;
	if (!from_s && !to_s)
		return 0;
	e = rec_window(r, from_s, to_s, &i0, &i1, err, sizeof(err));
	if (e) {
		if (e == -EINVAL)
			fprintf(stderr, "ilock diff: %s\n", err);
		else
			fprintf(stderr, "ilock diff: %s: %s\n", path, err);
		return -1;
	}
	r->iv += i0;
	r->niv = i1 - i0;
	return 0;
}

static void restore(struct recording *r, const struct window *saved)
{
	if (saved->iv) {
		r->iv = saved->iv;
		r->niv = saved->niv;
	}
}

static int load(const char *path, struct recording *r)
{
	int err = rec_file_load(path, r);

	if (err) {
		fprintf(stderr, "ilock diff: %s: %s\n", path, rec_file_strerror(err));
		return -1;
	}
	if (r->status != REC_OK && (!rec_status_partial(r->status) || !r->niv)) {
		fprintf(stderr, "ilock diff: %s: %s%s\n", path, r->msg,
			rec_status_partial(r->status) ? " (no complete interval before it)" : "");
		return -1;
	}
	if (!r->niv) {
		fprintf(stderr, "ilock diff: %s: the recording holds no intervals\n", path);
		return -1;
	}
	if (r->status != REC_OK)
		fprintf(stderr, "ilock diff: %s: %s; comparing the %zu interval%s before it\n", path,
			r->msg, r->niv, plural(r->niv));
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	struct recording a, b;
	struct diff_result d = {};
	struct diff_opts o;
	struct filters f = {};
	const char *pa, *pb, *from_s = NULL, *to_s = NULL;
	struct window wa = {}, wb = {};
	char err[256], window[160];
	bool json = false;
	uint64_t v;
	int c, r, ret = 1;

	diff_opts_default(&o);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":" CLI_FILTER_SHORTOPTS "n:jh", long_opts, NULL)) != -1) {
		r = cli_offline_filter_option(c, optarg, &f, err, sizeof(err));
		if (r < 0)
			goto bad;
		if (r > 0)
			continue;
		switch (c) {
		case 'n':
			if (!parse_u64(optarg, 100000, &v) || !v) {
				cli_bad_value(c, optarg, long_opts, "1 to 100000", err, sizeof(err));
				goto bad;
			}
			o.top_n = (int)v;
			break;
		case 'j':
			json = true;
			break;
		case OPT_FROM:
			from_s = optarg;
			break;
		case OPT_TO:
			to_s = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:  /* ':' (a value missing) or '?' (unknown) */
			cli_getopt_error(c, argv, err, sizeof(err));
			goto bad;
		}
	}
	if (argc - optind != 2) {
		snprintf(err, sizeof(err), argc - optind < 2 ? "give two recordings: BEFORE AFTER"
							     : "unexpected argument '%s'",
			 argv[argc - 1]);
		goto bad;
	}
	pa = argv[optind];
	pb = argv[optind + 1];
	if (!strcmp(pa, "-") && !strcmp(pb, "-")) {
		snprintf(err, sizeof(err), "BEFORE and AFTER cannot both be standard input ('-')");
		goto bad;
	}
	o.f = &f;
	rec_init(&a);
	rec_init(&b);
	if (load(pa, &a) || load(pb, &b) || apply_window(pa, &a, from_s, to_s, &wa) ||
	    apply_window(pb, &b, from_s, to_s, &wb))
		goto out;
	if (f.tgid || f.comm_on)
		fprintf(stderr, "ilock diff: note: -p/-c select holder->waiter pairs (the roles); "
			"class and inode totals are per inode\n");
	if (from_s || to_s) {
		snprintf(window, sizeof(window), "%s%s%s%s%s", from_s ? "--from " : "",
			 from_s ? from_s : "", from_s && to_s ? " " : "", to_s ? "--to " : "",
			 to_s ? to_s : "");
		o.window = window;
	}
	if (diff_compute(&a, &b, &o, &d)) {
		fprintf(stderr, "ilock diff: out of memory\n");
		goto out;
	}
	if (json)
		diff_render_json(stdout, &d, pa, pb, &a, &b);
	else
		diff_render_text(stdout, &d, pa, pb, &a, &b);
	/* a reader that has gone (| head) asked for no more: not a failure */
	if ((fflush(stdout) || ferror(stdout)) && !outguard_reader_left()) {
		/* errno: the flush's, or the last failed write's */
		fprintf(stderr, "ilock diff: writing the output failed%s%s\n", errno ? ": " : "",
			errno ? strerror(errno) : "");
		goto out;
	}
	ret = a.status == REC_OK && b.status == REC_OK ? 0 : EXIT_DAMAGED;
out:
	diff_free(&d);
	restore(&a, &wa);
	restore(&b, &wb);
	rec_free(&a);
	rec_free(&b);
	return ret;
bad:
	fprintf(stderr, "ilock diff: %s\n", err);
	usage_brief(stderr);
	return 2;
}
