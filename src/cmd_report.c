// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `ilock report`: the views of `ilock stat` over any window of a recording,
 * plus its per-interval timeline; text, JSON, CSV or one HTML page.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "log.h"
#include "outguard.h"
#include "recfile.h"
#include "recview.h"
#include "render.h"
#include "render_ops.h"
#include "report.h"
#include "util.h"

/* Data was reported, but the recording was damaged: the message says how. */
#define EXIT_DAMAGED 3

enum { OPT_FROM = OPT_CLI_FIRST_FREE, OPT_TO, OPT_CSV, OPT_HTML };

static const struct option long_opts[] = {
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	CLI_FILTER_LONGOPTS,
	{ "top", required_argument, NULL, 'n' },
	{ "json", no_argument, NULL, 'j' },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage_brief(FILE *f)
{
	fprintf(f, "usage: ilock report FILE [--from T] [--to T] [filters] [-n TOP] [-j|--json] "
		   "[--csv] [--folded] [--html OUT.html]   (-h for help)\n");
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: ilock report FILE [--from T] [--to T] [-p PID] [-c COMM] [-D DEV|PATH] [--ino N]\n"
"                    [--fs TYPE] [--class C] [-n TOP] [-j|--json] [--csv] [--folded]\n"
"                    [--html OUT.html]\n"
"\n"
"Show what `ilock record` wrote: the views of `ilock stat` (top inodes,\n"
"histograms, who serialises whom, losses) over a time window, and each top\n"
"inode's wait time interval by interval. FILE '-' reads the recording from\n"
"standard input (zstdcat r.ilrec.zst | ilock report -).\n"
"\n"
"      --from T, --to T    the window; an interval counts when its middle is in it.\n"
"                          T is seconds from the start (90, 1.5, 2m, 1h), a time of\n"
"                          day (14:05, 14:05:30), a local date and time\n"
"                          (2026-11-05 14:05:30) or Unix seconds (@1793887530)\n"
"  -p, --pid PID, -c, --comm COMM\n"
"                          only holder->waiter pairs whose waiter matches (lock\n"
"                          totals are per inode: record with -p for per-process totals)\n"
"  -D, --dev DEV|PATH      only this device: MAJ:MIN, /dev/NODE or a path on it\n"
"      --ino N             only this inode number\n"
"      --fs TYPE           only this filesystem type: xfs, ext4, btrfs, tmpfs, ...\n"
CLI_CLASS_HELP
"  -n, --top N             rows in the tables and timelines (default 10)\n"
"  -j, --json              the `ilock stat --json` document plus recording, window\n"
"                          and intervals keys (docs/record-report.md)\n"
"      --csv               one row per interval per lock\n"
"      --folded            the window's waiter stacks weighted by wait time, folded\n"
"                          for flamegraph.pl or speedscope (class and mode as roots)\n"
"      --html OUT.html     write one self-contained HTML page with charts to OUT.html\n"
"                          (alone, nothing else is printed)\n"
"\n"
"exit status: 0 ok; 1 error; 2 bad arguments; 3 reported, but the recording is\n"
"damaged or cut off (the message says where and how much was lost)\n"
"\n"
"examples:\n"
"  ilock report night.ilrec\n"
"  ilock report night.ilrec --from 02:10 --to 02:20 -D /srv/data\n"
"  ilock report night.ilrec --html night.html\n"
"  ilock report night.ilrec --from 02:10 --to 02:20 --folded | flamegraph.pl > waits.svg\n");
}

struct report_args {
	const char *file;
	const char *from, *to;
	struct filters f;
	int top_n;
	bool json, csv, folded;
	const char *html;
};

static int parse(int argc, char **argv, struct report_args *a, char *err, size_t errlen)
{
	uint64_t v;
	int c, r;

	memset(a, 0, sizeof(*a));
	a->top_n = 10;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":" CLI_FILTER_SHORTOPTS "n:jh", long_opts, NULL)) != -1) {
		r = cli_offline_filter_option(c, optarg, &a->f, err, errlen);
		if (r < 0)
			return -1;
		if (r > 0)
			continue;
		switch (c) {
		case OPT_FROM:
			a->from = optarg;
			break;
		case OPT_TO:
			a->to = optarg;
			break;
		case 'n':
			if (!parse_u64(optarg, 1000000, &v) || !v) {
				cli_bad_value(c, optarg, long_opts, "1 to 1000000", err, errlen);
				return -1;
			}
			a->top_n = (int)v;
			break;
		case 'j':
			a->json = true;
			break;
		case OPT_CSV:
			a->csv = true;
			break;
		case OPT_HTML:
			a->html = optarg;
			break;
		case OPT_FOLDED:
			a->folded = true;
			break;
		case 'h':
			return 1;
		default:  /* ':' (a value missing) or '?' (unknown) */
			cli_getopt_error(c, argv, err, errlen);
			return -1;
		}
	}
	if (optind >= argc) {
		snprintf(err, errlen, "which recording? give FILE");
		return -1;
	}
	a->file = argv[optind++];
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (a->json + a->csv + a->folded > 1) {
		snprintf(err, errlen, "%s: choose one", a->json && a->csv ? "--json and --csv"
							: a->json ? "--json and --folded"
								  : "--csv and --folded");
		return -1;
	}
	return 0;
}

static void text_title(char *buf, size_t len, const struct report_ctx *c)
{
	const struct recording *r = c->r;
	uint64_t from = r->iv[c->i0].t_start_ns;
	uint64_t to = r->iv[c->i1 - 1].t_start_ns + r->iv[c->i1 - 1].dur_ns;
	char t0[32], t1[32], t2[32];
	const char *host = rec_meta(r, "hostname"), *kernel = rec_meta(r, "kernel");
	const char *boot = rec_meta(r, "boot_id"), *filt = rec_meta(r, "filters");
	char moved[96];

	snprintf(buf, len,
		 "ilock report: %s (%s, %s)\n"
		 "recorded: %s, %zu interval%s of %g s%s, %.1f s; boot %s; filters when recorded: %s\n"
		 "window: %s to %s (%.1f s to %.1f s from the start, %zu interval%s, %.1f s)",
		 c->file, host ? host : "?", kernel ? kernel : "?",
		 report_fmt_time(t0, sizeof(t0), r->start_realtime_ns), r->niv, plural(r->niv),
		 (double)r->interval_ns / 1e9, report_renewal_note(moved, sizeof(moved), r, 0, r->niv),
		 (double)rec_end_ns(r) / 1e9, boot ? boot : "?",
		 filt ? filt : "?", report_fmt_time_tenths(t1, sizeof(t1), r->start_realtime_ns + from),
		 report_fmt_time_tenths(t2, sizeof(t2), r->start_realtime_ns + to), (double)from / 1e9,
		 (double)to / 1e9, c->i1 - c->i0, plural(c->i1 - c->i0), report_window_s(c));
}

/* All of buf to fd; 0 or an errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t w = write(fd, buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w ? errno : EIO;
		off += (size_t)w;
	}
	return 0;
}

/*
 * A hard-linked page (a new file would split the links), or one in a
 * directory we may not write in: overwritten in place, not truncated
 * first, and on a failure (a full disk) the old page written back, which
 * fits in the blocks it had. 0 or an errno.
 */
static int write_in_place(const char *path, const char *page, size_t len)
{
	uint8_t *old = NULL;
	size_t old_len = 0;
	int fd, e;

	rec_file_read(path, &old, &old_len);  /* NULL: nothing to write back */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		free(old);
		return errno;
	}
	e = write_all(fd, page, len);
	if (!e && ftruncate(fd, (off_t)len))
		e = errno;
	if (!e && fsync(fd))
		e = errno;
	if (e && old && !lseek(fd, 0, SEEK_SET) && !write_all(fd, (const char *)old, old_len) &&
	    !ftruncate(fd, (off_t)old_len))
		log_warn("%s left as it was", path);
	if (close(fd) && !e)
		e = errno;
	free(old);
	return e;
}

/*
 * Where a page goes that is not a regular file already there: a new file
 * (removed if the write fails: a page cut short would load as if whole), a
 * device or a pipe. A FIFO nobody reads would block the open for ever. 0,
 * an errno, or -1 once it has said why it could not open.
 */
static int write_new_or_stream(const char *path, const struct stat *st, bool exists,
			       const char *page, size_t len)
{
	int fd, e;

	if (exists && S_ISFIFO(st->st_mode)) {
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && errno == ENXIO) {
			fprintf(stderr, "ilock report: --html %s: a FIFO with no reader\n", path);
			return -1;
		}
		if (fd >= 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
			e = errno;
			close(fd);
			fd = -1;
			errno = e;
		}
	} else {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	}
	if (fd < 0) {
		fprintf(stderr, "ilock report: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	e = write_all(fd, page, len);
	if (close(fd) && !e)
		e = errno;
	if (e && !exists) {
		/* the file written, a link's target too; never a device */
		char *real = realpath(path, NULL);
		struct stat now;

		if (real && !stat(real, &now) && S_ISREG(now.st_mode))
			unlink(real);
		free(real);
	}
	return e;
}

/*
 * The page for --html, made whole in memory first. An existing file is
 * replaced only once the page is whole (made beside it, then renamed; a
 * hard-linked one overwritten in place, the old page kept in memory until
 * then), so a failed write leaves it as it was; a recording is never
 * replaced, the one being read least of all. The signals that stop us wait
 * while a file is replaced. A device or pipe is written as it is. 0, or
 * the exit status after saying why.
 */
static int write_html(const char *path, const char *recording, struct report_ctx *ctx)
{
	char tmp[PATH_MAX + 8], target[PATH_MAX], magic[REC_MAGIC_LEN];
	struct stat st, rs;
	bool exists = !stat(path, &st), regular = exists && S_ISREG(st.st_mode);
	sigset_t stops, was;
	char *page = NULL;
	size_t len = 0;
	FILE *hf;
	int fd = -1, e = 0;

	tmp[0] = 0;
	if (regular && !stat(recording, &rs) && rs.st_dev == st.st_dev && rs.st_ino == st.st_ino) {
		fprintf(stderr, "ilock report: --html %s is the recording being read: not "
			"overwritten\n", path);
		return 2;
	}
	if (regular) {
		FILE *old = fopen(path, "rb");
		bool rec = old && fread(magic, 1, sizeof(magic), old) == sizeof(magic) &&
			   !memcmp(magic, REC_MAGIC, REC_MAGIC_LEN);

		if (old)
			fclose(old);
		if (rec) {
			fprintf(stderr, "ilock report: --html %s is an ilock recording: not "
				"overwritten\n", path);
			return 2;
		}
	}
	/* the whole page first: nothing is touched until it is made */
	hf = open_memstream(&page, &len);
	if (!hf) {
		fprintf(stderr, "ilock report: out of memory\n");
		return 1;
	}
	report_html(hf, ctx);
	if (fclose(hf) || !page) {
		free(page);
		fprintf(stderr, "ilock report: out of memory\n");
		return 1;
	}
	if (!regular) {
		e = write_new_or_stream(path, &st, exists, page, len);
	} else {
		sigemptyset(&stops);
		sigaddset(&stops, SIGINT);
		sigaddset(&stops, SIGTERM);
		sigaddset(&stops, SIGHUP);
		sigaddset(&stops, SIGQUIT);
		sigprocmask(SIG_BLOCK, &stops, &was);
		if (st.st_nlink == 1)
			fd = file_create_beside(path, tmp, sizeof(tmp), target, sizeof(target));
		if (fd >= 0) {
			/* the old page's mode and, as root, its owner: a served page stays served */
			if (fchmod(fd, st.st_mode & 07777) ||
			    (!geteuid() && fchown(fd, st.st_uid, st.st_gid)))
				log_warn("%s keeps neither mode nor owner: %s", path, strerror(errno));
			e = write_all(fd, page, len);
			if (close(fd) && !e)
				e = errno;
			if (!e && rename(tmp, target))
				e = errno;
			if (e)
				unlink(tmp);
		} else {
			e = write_in_place(path, page, len);
		}
		sigprocmask(SIG_SETMASK, &was, NULL);
	}
	free(page);
	if (e > 0)
		fprintf(stderr, "ilock report: writing %s failed: %s\n", path, strerror(e));
	return e ? 1 : 0;
}

int cmd_report(int argc, char **argv)
{
	struct recording rec;
	struct report_args a;
	struct report_ctx ctx = {};
	struct report_meta meta;
	struct snapshot merged;
	char err[256], title[1024], filt[256], all_filt[512];
	int r, ret = 1;

	r = parse(argc, argv, &a, err, sizeof(err));
	if (r == 1) {
		usage(stdout);
		return 0;
	}
	if (r < 0) {
		fprintf(stderr, "ilock report: %s\n", err);
		usage_brief(stderr);
		return 2;
	}
	rec_init(&rec);
	snap_init(&merged);
	r = rec_file_load(a.file, &rec);
	if (r) {
		fprintf(stderr, "ilock report: %s: %s\n", a.file, rec_file_strerror(r));
		goto out;
	}
	if (rec.status != REC_OK && (!rec_status_partial(rec.status) || !rec.niv)) {
		fprintf(stderr, "ilock report: %s: %s%s\n", a.file, rec.msg,
			rec_status_partial(rec.status) ? " (no complete interval before it)" : "");
		goto out;
	}
	if (!rec.niv) {
		fprintf(stderr, "ilock report: %s: the recording holds no intervals (it stopped "
			"before its first interval ended)\n", a.file);
		goto out;
	}
	r = rec_window(&rec, a.from, a.to, &ctx.i0, &ctx.i1, err, sizeof(err));
	if (r == -EINVAL) {
		fprintf(stderr, "ilock report: %s\n", err);
		usage_brief(stderr);
		ret = 2;
		goto out;
	}
	if (r) {
		fprintf(stderr, "ilock report: %s: %s\n", a.file, err);
		goto out;
	}
	if (rec.status != REC_OK)
		fprintf(stderr, "ilock report: %s: %s; reporting the %zu interval%s before it "
			"(%.1f s); %" PRIu64 " byte%s from it on lost\n", a.file, rec.msg, rec.niv,
			plural(rec.niv), (double)rec_end_ns(&rec) / 1e9, rec.file_size - rec.good_bytes,
			plural(rec.file_size - rec.good_bytes));
	else if (!rec.has_end)
		fprintf(stderr, "ilock report: note: %s has no end block (the recorder was killed, "
			"ran out of space, or is still running); read all %zu complete interval%s\n", a.file, rec.niv,
			plural(rec.niv));
	if (a.f.tgid || a.f.comm_on)
		fprintf(stderr, "ilock report: note: -p/-c select holder->waiter pairs; lock totals "
			"are per inode\n");

	if (rec_merge_window(&rec, ctx.i0, ctx.i1, &a.f, &merged)) {
		fprintf(stderr, "ilock report: out of memory\n");
		goto out;
	}
	snap_sort_locks(&merged, SORT_WAIT_TIME);
	snap_sort_edges(&merged);
	snap_sort_stacks(&merged);
	ctx.file = a.file;
	ctx.r = &rec;
	ctx.f = &a.f;
	ctx.merged = &merged;
	ctx.top_n = a.top_n;
	ctx.ksyms = &rec.syms;
	ctx.meta = &meta;
	rec_fill_meta(&rec, &meta, 0);
	cli_filters_text(&a.f, filt, sizeof(filt));
	/* every filter the data passed: those recorded with, then the report's */
	if (strcmp(filt, "none")) {
		if (meta.filters && *meta.filters && strcmp(meta.filters, "none"))
			snprintf(all_filt, sizeof(all_filt), "%s %s", meta.filters, filt);
		else
			snprintf(all_filt, sizeof(all_filt), "%s", filt);
		meta.filters = all_filt;
	}
	if (report_build(&ctx)) {
		fprintf(stderr, "ilock report: out of memory\n");
		goto out;
	}
	meta.duration_s = report_window_s(&ctx);
	{
		struct report_stall *v = NULL;
		size_t n = 0;

		/* IN SHORT must not say "no wait" of a window a stall ran through */
		if (!report_stalls(&ctx, &v, &n) && n) {
			meta.window_stalls = n;
			meta.window_stall_ns = v[0].s->waited_ns;
		}
		free(v);
	}

	if (a.html) {
		int hr = write_html(a.html, a.file, &ctx);

		if (hr) {
			ret = hr;
			goto out;
		}
		fprintf(stderr, "ilock report: wrote %s\n", a.html);
	}
	if (a.json) {
		struct render_opts ro = { .top_n = a.top_n, .json_extra = report_json_extra,
					  .json_extra_ctx = &ctx, .ksyms = &rec.syms };

		render_json(stdout, &merged, &meta, &ro);
	} else if (a.csv) {
		report_csv(stdout, &ctx);
	} else if (a.folded) {
		if (!rec.nstacks)
			fprintf(stderr, "ilock report: note: %s holds no kernel stacks (recorded with "
				"--no-stacks or --ops off, or by ilock before 1.2)\n", a.file);
		else if (!merged.nstacks && !merged.nedges)
			fprintf(stderr, "ilock report: note: no waits with stacks in this window%s\n",
				strcmp(filt, "none") ? " match the filters" : "");
		if (render_folded(stdout, &merged, &rec.syms)) {
			fprintf(stderr, "ilock report: out of memory\n");
			goto out;
		}
	} else if (!a.html) {
		struct render_opts ro = { .top_n = a.top_n, .title = title, .ksyms = &rec.syms };

		text_title(title, sizeof(title), &ctx);
		render_text(stdout, &merged, &meta, &ro);
		report_timeline_text(stdout, &ctx);
		report_stalls_text(stdout, &ctx);
	}
	/* a reader that has gone (| head) asked for no more: not a failure */
	if ((fflush(stdout) || ferror(stdout)) && !outguard_reader_left()) {
		/* errno: the flush's, or the last failed write's */
		fprintf(stderr, "ilock report: writing the output failed%s%s\n", errno ? ": " : "",
			errno ? strerror(errno) : "");
		goto out;
	}
	ret = rec.status == REC_OK ? 0 : EXIT_DAMAGED;
out:
	report_free(&ctx);
	snap_free(&merged);
	rec_free(&rec);
	return ret;
}
