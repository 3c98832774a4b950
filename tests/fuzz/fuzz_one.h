/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the fuzz target does with one input, shared by the fuzzer
 * (fuzz_recfile.c) and the unit test that replays the corpus and the
 * crashers under ASan and UBSan (tests/unit/test_recfile.c): any bytes
 * through the recording reader, then through what report and diff do with
 * a decoded recording: window sums, filters, and every view they print
 * (text, JSON, CSV, folded, HTML, the timeline, stalls, and a diff of the
 * recording against itself). Those views index the decoded arrays by what
 * the file says. Input starting with the magic's first byte is a whole
 * file; any other is one block payload (first byte: block type), fed to
 * the payload decoder directly, twice: past the CRC and zlib layers a
 * mutation would rarely pass.
 */
#ifndef ILOCK_FUZZ_ONE_H
#define ILOCK_FUZZ_ONE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diff.h"
#include "recfile.h"
#include "recview.h"
#include "render.h"
#include "render_ops.h"
#include "report.h"

/* What `ilock report` prints of the whole recording, one view after another. */
static void fuzz_views(FILE *out, struct recording *r, struct snapshot *s)
{
	struct report_ctx c = { .file = "fuzz", .r = r, .i0 = 0, .i1 = r->niv, .merged = s,
				.top_n = 5, .ksyms = &r->syms };
	struct render_opts ro = { .top_n = 5, .ksyms = &r->syms };
	struct report_meta m;

	rec_fill_meta(r, &m, 0);
	c.meta = &m;
	snap_sort_stacks(s);
	if (!report_build(&c)) {
		m.duration_s = report_window_s(&c);
		render_text(out, s, &m, &ro);
		report_timeline_text(out, &c);
		report_stalls_text(out, &c);
		report_csv(out, &c);
		render_folded(out, s, &r->syms);
		report_html(out, &c);
		ro.json_extra = report_json_extra;
		ro.json_extra_ctx = &c;
		render_json(out, s, &m, &ro);
	}
	report_free(&c);
}

/* `ilock diff` of the recording against itself: both sides' indexes walked. */
static void fuzz_self_diff(FILE *out, const struct recording *r)
{
	struct diff_result d = {};
	struct diff_opts o;

	diff_opts_default(&o);
	o.top_n = 5;
	if (!diff_compute(r, r, &o, &d)) {
		diff_render_text(out, &d, "a", "b", r, r);
		diff_render_json(out, &d, "a", "b", r, r);
	}
	diff_free(&d);
}

/* out: where the views go (/dev/null). Returns -1 when out of memory. */
static int fuzz_one(const uint8_t *data, size_t size, FILE *out)
{
	struct filters f = { .class_mask = 1U << ILOCK_CLASS_I_RWSEM };
	struct recording r;
	struct snapshot s;
	char err[128];
	size_t i0, i1;
	uint64_t t;
	int ret = 0;

	rec_init(&r);
	snap_init(&s);
	if (size && data[0] == (uint8_t)REC_MAGIC[0]) {
		rec_decode(&r, data, size);
	} else if (size) {
		rec_decode_payload(&r, data[0] & 3, data + 1, size - 1);
		rec_decode_payload(&r, REC_BLK_INTERVAL, data + 1, size - 1);
		rec_finish(&r);
	}
	/* whatever decoded must be safe to use */
	if (rec_merge_window(&r, 0, r.niv, &f, &s))
		ret = -1;
	snap_free(&s);
	snap_init(&s);
	if (rec_merge_window(&r, 0, r.niv, NULL, &s)) {
		ret = -1;
	} else if (r.niv) {  /* report and diff refuse a recording without intervals */
		snap_sort_locks(&s, SORT_WAIT_TIME);
		snap_sort_edges(&s);
		fuzz_views(out, &r, &s);
		fuzz_self_diff(out, &r);
	}
	rec_select(&r, 0, UINT64_MAX, &i0, &i1);
	rec_parse_time(&r, "12:00", &t, err, sizeof(err));
	(void)rec_meta(&r, "kernel");
	snap_free(&s);
	rec_free(&r);
	return ret;
}

#endif
