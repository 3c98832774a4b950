// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ilock diff on recordings built through the real writer: same condition,
 * changed condition, one wild interval, inode matching, summary wording.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "hist.h"
#include "recsynth.h"
#include "sigtest.h"
#include "unit.h"

#define DEV_A ILOCK_KDEV(7, 1)
#define DEV_B ILOCK_KDEV(7, 2)
#define MNT_A "36 35 7:1 / /mnt/a rw - xfs /dev/loop1 rw\n"
#define MNT_B "37 35 7:2 / /mnt/b rw - ext4 /dev/loop2 rw\n"

struct cond {
	uint32_t dev;
	uint64_t ino;
	const char *path;        /* NULL: never resolved */
	uint32_t magic;
	double shared_ms;        /* mean shared wait per interval, per wait */
	uint64_t shared_n;       /* shared waits per interval */
	double excl_ms;
	uint64_t excl_n;
	int wild;                /* interval index given a huge wait, or -1 */
	int steady;              /* 1: no jitter */
};

/* n intervals of 1 s; waits jitter +-20% around the condition's means. */
static void record(struct recording *r, const struct cond *c, const char *mountinfo, int n)
{
	struct synth s;
	struct snapshot d;

	synth_begin(&s, 1000000000ULL, mountinfo);
	snap_init(&d);
	for (int i = 0; i < n; i++) {
		double j1 = c->steady ? 0.5 : synth_rand01(), j2 = c->steady ? 0.5 : synth_rand01();
		uint64_t sh = (uint64_t)(c->shared_ms * 1e6 * (0.8 + 0.4 * j1));
		uint64_t ex = (uint64_t)(c->excl_ms * 1e6 * (0.8 + 0.4 * j2));

		snap_reset(&d);
		if (c->path && i == 0)
			synth_inode(&d, c->dev, c->ino, c->magic, c->path);
		if (c->shared_n)
			synth_wait(&d, c->dev, c->ino, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED,
				   c->shared_n, i == c->wild ? 50000000000ULL : sh);
		if (c->excl_n)
			synth_wait(&d, c->dev, c->ino, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, c->excl_n, ex);
		synth_interval(&s, &d);
	}
	synth_finish(&s, &d, r);
}

static const struct diff_subject *find(const struct diff_result *d, bool inode, uint8_t kind)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->s[i].is_inode == inode && d->s[i].class == ILOCK_CLASS_I_RWSEM &&
		    d->s[i].kind == kind)
			return &d->s[i];
	return NULL;
}

static void run(const struct recording *a, const struct recording *b, struct diff_result *d)
{
	struct diff_opts o;

	diff_opts_default(&o);
	CHECK(!diff_compute(a, b, &o, d));
}

/* A meta entry of a decoded recording, as the recorder writes its attach modes. */
static void add_meta(struct recording *r, const char *key, const char *val)
{
	struct rec_kv *m = realloc(r->meta, (r->nmeta + 1) * sizeof(*m));

	CHECK(m != NULL);
	if (!m)
		return;
	r->meta = m;
	r->meta[r->nmeta].key = strdup(key);
	r->meta[r->nmeta].val = strdup(val);
	r->nmeta++;
}

/* The diff as text, or as JSON; the caller frees it. */
static char *diff_out(const struct diff_result *d, const struct recording *a,
		      const struct recording *b, bool json)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	CHECK(f != NULL);
	if (!f)
		return strdup("");
	if (json)
		diff_render_json(f, d, "a", "b", a, b);
	else
		diff_render_text(f, d, "a.ilrec", "b.ilrec", a, b);
	fclose(f);
	return out;
}

/* A recording of waits and exclusive IOLOCK holds, with these attach modes. */
static void record_holds(struct recording *r, bool holds, const char *xfs_mode)
{
	struct synth s;
	struct snapshot d;
	struct ilock_key hk = { .ino = 131, .dev = 0x700000, .class = ILOCK_CLASS_I_RWSEM,
				.mode = ILOCK_MODE_EXCL };

	synth_begin(&s, 1000000000ULL, NULL);
	snap_init(&d);
	for (int i = 0; i < 6; i++) {
		struct ilock_stats st = {};

		snap_reset(&d);
		synth_wait(&d, 0x700000, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 50, 1000000);
		if (holds) {
			synth_add(&st, 100, 20000);
			CHECK(snap_add_hold(&d, &hk, &st) == 0);
		}
		synth_interval(&s, &d);
	}
	synth_finish(&s, &d, r);
	/* what the tracer would have written for its XFS hold programs */
	add_meta(r, "attach.xfs_ilock", xfs_mode);
}

/* Holds recorded before but not after, because after had them off: n/a, not "gone". */
static void test_holds_off_is_not_gone(void)
{
	struct recording a, b, c;
	struct diff_result d;
	const struct diff_subject *h;
	char *text;

	record_holds(&a, true, "tp_btf");
	record_holds(&b, false, "off");
	record_holds(&c, false, "tp_btf");
	run(&a, &b, &d);
	CHECK_EQ_U(d.nprobes, 1);
	CHECK_STR(d.probes[0].probe, "xfs_ilock");
	CHECK_STR(d.probes[0].before, "tp_btf");
	CHECK_STR(d.probes[0].after, "off");
	h = find(&d, false, DK_HOLD);
	CHECK(h && h->m[DM_HOLD_P99].uncaptured && !h->m[DM_HOLD_P99].tested);
	CHECK(h && h->m[DM_HOLD_P99].why && strstr(h->m[DM_HOLD_P99].why, "not captured after"));
	text = diff_out(&d, &a, &b, false);
	CHECK(strstr(text, "note: captured differently: xfs_ilock tp_btf -> off;") != NULL);
	CHECK(strstr(text, " n/a ") != NULL && !strstr(text, " gone "));
	free(text);
	diff_free(&d);

	/* the same probes on both sides, no holds after: they really are gone */
	run(&a, &c, &d);
	CHECK_EQ_U(d.nprobes, 0);
	h = find(&d, false, DK_HOLD);
	CHECK(h && !h->m[DM_HOLD_P99].uncaptured);
	diff_free(&d);
	rec_free(&c);

	/* the longest attach values ("tp_btf (syscalls)") come through whole */
	record_holds(&c, true, "tp_btf (syscalls)");
	run(&a, &c, &d);
	CHECK_EQ_U(d.nprobes, 1);
	CHECK_STR(d.probes[0].after, "tp_btf (syscalls)");
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
	rec_free(&c);
}

/*
 * i_rwsem waits in every interval and, with journal, ext4 fsyncs waiting
 * for the journal on one file; jbd2_mode is what the recorder wrote for
 * its jbd2_wait probes (NULL: no such meta, an older build).
 */
static void record_journal(struct recording *r, bool journal, const char *jbd2_mode)
{
	struct synth s;
	struct snapshot d;

	synth_begin(&s, 1000000000ULL, MNT_B);
	snap_init(&d);
	for (int i = 0; i < 12; i++) {
		snap_reset(&d);
		if (i == 0)
			synth_inode(&d, DEV_B, 12, ILOCK_EXT4_SB_MAGIC, "/mnt/b/wal");
		synth_wait(&d, DEV_B, 12, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, 50, 1000000);
		if (journal)
			synth_wait(&d, DEV_B, 12, ILOCK_CLASS_JBD2_WAIT, ILOCK_MODE_EXCL, 5,
				   20000000);
		synth_interval(&s, &d);
	}
	synth_finish(&s, &d, r);
	add_meta(r, "attach.contention_begin", "tp_btf");
	if (jbd2_mode)
		add_meta(r, "attach.jbd2_wait", jbd2_mode);
}

static const struct diff_subject *find_journal(const struct diff_result *d, bool inode)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->s[i].is_inode == inode && d->s[i].class == ILOCK_CLASS_JBD2_WAIT &&
		    d->s[i].kind == DK_EXCL)
			return &d->s[i];
	return NULL;
}

/*
 * Journal waits after, on a before recorded without the jbd2_wait probes
 * (an XFS mount's -D, say): n/a and untested, not "new" (PostgreSQL audit:
 * an XFS recording diffed against an ext4 one).
 */
static void test_journal_off_is_not_new(void)
{
	struct recording a, b, c, e;
	struct diff_result d;
	const struct diff_subject *j;
	char *text;

	record_journal(&a, false, "off");
	record_journal(&b, true, "tp_btf");
	run(&a, &b, &d);
	CHECK_EQ_U(d.nprobes, 1);
	CHECK_STR(d.probes[0].probe, "jbd2_wait");
	for (int inode = 0; inode < 2; inode++) {
		j = find_journal(&d, inode);
		CHECK(j && j->m[DM_WAITS_PER_S].uncaptured && !j->m[DM_WAITS_PER_S].tested);
		CHECK(j && j->m[DM_WAIT_PER_S].verdict == DV_UNTESTED);
		CHECK(j && j->m[DM_WAIT_PER_S].why &&
		      !strcmp(j->m[DM_WAIT_PER_S].why, "not captured before (jbd2_wait off)"));
	}
	for (size_t i = 0; i < d.n; i++)
		if (d.s[i].kind == DK_ROLE && d.s[i].class == ILOCK_CLASS_JBD2_WAIT)
			CHECK(!d.s[i].m[DM_WAIT_PER_S].tested);
	/* the i_rwsem waits, seen by both, are still compared */
	CHECK(find(&d, false, DK_EXCL) && find(&d, false, DK_EXCL)->m[DM_WAITS_PER_S].tested);
	text = diff_out(&d, &a, &b, false);
	CHECK(strstr(text, "jbd2_wait exclusive wait: 0 ns/s -> ") != NULL);
	CHECK(strstr(text, "(n/a, untested: not captured before (jbd2_wait off))") != NULL);
	CHECK(!strstr(text, " new "));
	free(text);
	diff_free(&d);

	/* the other way round: not captured after */
	run(&b, &a, &d);
	j = find_journal(&d, false);
	CHECK(j && j->m[DM_WAIT_PER_S].why &&
	      !strcmp(j->m[DM_WAIT_PER_S].why, "not captured after (jbd2_wait off)"));
	diff_free(&d);

	/* both sides with the probes, none before: they really are new, and tested */
	record_journal(&c, false, "tp_btf");
	run(&c, &b, &d);
	CHECK_EQ_U(d.nprobes, 0);
	j = find_journal(&d, false);
	CHECK(j && !j->m[DM_WAITS_PER_S].uncaptured && j->m[DM_WAITS_PER_S].tested);
	CHECK(j && j->m[DM_WAITS_PER_S].verdict == DV_HIGHER);
	diff_free(&d);

	/* an older build's recording, with attach meta but none for jbd2_wait: off */
	record_journal(&e, false, NULL);
	run(&e, &b, &d);
	j = find_journal(&d, false);
	CHECK(j && j->m[DM_WAITS_PER_S].uncaptured);
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
	rec_free(&c);
	rec_free(&e);
}

/*
 * Recordings made with different filters saw different waits: said in a
 * note and in JSON, from the "filters" meta; not when either predates it.
 */
static void test_filters_differ(void)
{
	struct recording a, b;
	struct diff_result d;
	char *out, *json;

	record_holds(&a, true, "tp_btf");
	record_holds(&b, true, "tp_btf");
	run(&a, &b, &d);
	CHECK(!d.filters_differ);
	out = diff_out(&d, &a, &b, false);
	CHECK(strstr(out, "different filters") == NULL);
	free(out);
	diff_free(&d);
	/* one side's meta only: nothing to compare */
	add_meta(&b, "filters", "-c nobodyxyz");
	run(&a, &b, &d);
	CHECK(!d.filters_differ);
	diff_free(&d);
	add_meta(&a, "filters", "");
	run(&a, &b, &d);
	CHECK(d.filters_differ);
	CHECK_STR(d.filters_before, "");
	CHECK_STR(d.filters_after, "-c nobodyxyz");
	out = diff_out(&d, &a, &b, false);
	CHECK(strstr(out, "note: recorded with different filters: none -> -c nobodyxyz; ") != NULL);
	free(out);
	json = diff_out(&d, &a, &b, true);
	CHECK(strstr(json, "\"filter_change\":{\"before\":\"\",\"after\":\"-c nobodyxyz\"}") != NULL);
	free(json);
	diff_free(&d);
	/* the same filters: no note */
	rec_free(&a);
	record_holds(&a, true, "tp_btf");
	add_meta(&a, "filters", "-c nobodyxyz");
	run(&a, &b, &d);
	CHECK(!d.filters_differ);
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
}

/*
 * A probe the older build did not have is "off" there: no probe change
 * unless the newer side has it on; with no attach meta at all, unknown.
 */
static void test_probe_missing_on_one_side(void)
{
	struct recording a, b, c;
	struct diff_result d;

	record_holds(&a, true, "tp_btf");
	record_holds(&b, true, "tp_btf");
	add_meta(&b, "attach.wait_sampling", "off");
	run(&a, &b, &d);
	CHECK_EQ_U(d.nprobes, 0);
	diff_free(&d);
	run(&b, &a, &d);
	CHECK_EQ_U(d.nprobes, 0);
	diff_free(&d);
	rec_free(&b);

	record_holds(&b, true, "tp_btf");
	add_meta(&b, "attach.wait_sampling", "1/16 > 250/s/lock/cpu");
	run(&a, &b, &d);
	CHECK_EQ_U(d.nprobes, 1);
	CHECK_STR(d.probes[0].probe, "wait_sampling");
	CHECK_STR(d.probes[0].before, "-");
	CHECK_STR(d.probes[0].after, "1/16 > 250/s/lock/cpu");
	diff_free(&d);
	run(&b, &a, &d);
	CHECK_EQ_U(d.nprobes, 1);
	CHECK_STR(d.probes[0].before, "1/16 > 250/s/lock/cpu");
	CHECK_STR(d.probes[0].after, "-");
	diff_free(&d);

	/* a side with no attach meta says nothing: even "off" is listed */
	record_holds(&c, false, "off");
	for (size_t i = 0; i < c.nmeta; i++)
		if (!strncmp(c.meta[i].key, "attach.", 7))
			c.meta[i].key[0] = 'x';
	add_meta(&c, "attach.wait_sampling", "off");
	c.meta[c.nmeta - 1].key[0] = 'x';
	add_meta(&a, "attach.wait_sampling", "off");
	run(&c, &a, &d);
	CHECK_EQ_U(d.nprobes, 3);  /* contention_begin, xfs_ilock, wait_sampling */
	for (size_t i = 0; i < d.nprobes && i < 3; i++)
		CHECK_STR(d.probes[i].before, "-");
	CHECK_STR(d.probes[d.nprobes - 1].after, "off");
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
	rec_free(&c);
}

static void test_same_condition(void)
{
	struct cond c = { DEV_A, 131, "/data", ILOCK_XFS_SB_MAGIC, 100, 8, 2, 3, -1, 0 };
	struct recording a, b;
	struct diff_result d;
	const struct diff_subject *s;
	char *out;

	record(&a, &c, MNT_A, 30);
	record(&b, &c, MNT_A, 30);
	run(&a, &b, &d);
	CHECK_EQ_U(d.nsig, 0);
	CHECK(d.ntests > 0);
	s = find(&d, false, DK_SHARED);
	CHECK(s && s->m[DM_WAIT_PER_S].tested && s->m[DM_WAIT_PER_S].verdict == DV_SAME);
	s = find(&d, true, DK_SHARED);
	CHECK(s && s->match == DMATCH_PATH && !strcmp(s->label, "/mnt/a/data"));
	out = diff_out(&d, &a, &b, false);
	CHECK(strstr(out, "verdict: no significant change") != NULL);
	CHECK(strstr(out, "i_rwsem shared wait: ") != NULL);
	free(out);
	diff_free(&d);

	/* one interval a hundred times worse does not make a change */
	rec_free(&b);
	c.wild = 17;
	record(&b, &c, MNT_A, 30);
	run(&a, &b, &d);
	s = find(&d, false, DK_SHARED);
	CHECK(s && s->m[DM_WAIT_PER_S].after > 3 * s->m[DM_WAIT_PER_S].before);
	CHECK(s && s->m[DM_WAIT_PER_S].verdict == DV_SAME);
	CHECK(s && s->m[DM_MAX].verdict == DV_SAME);
	CHECK_EQ_U(d.nsig, 0);
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
}

/*
 * A clear change in short recordings: with 10 intervals a side the exact
 * p of two samples that do not overlap (1.1e-5) survives the adjustment
 * over every test; with 6 (4.3e-4 at best) it cannot, and the verdict says
 * so with how many intervals would do, not "no significant change".
 */
static void test_short_recordings(void)
{
	struct cond before = { DEV_A, 131, "/data", ILOCK_XFS_SB_MAGIC, 100, 8, 2, 3, -1, 0 };
	struct cond after = before;
	struct recording a, b;
	struct diff_result d;
	const struct diff_subject *s;
	char *out, *json, want[128];

	after.shared_ms = 1;  /* 812 ms/s -> ~8 ms/s */
	record(&a, &before, MNT_A, 10);
	record(&b, &after, MNT_A, 10);
	run(&a, &b, &d);
	s = find(&d, false, DK_SHARED);
	CHECK(s && s->m[DM_WAIT_PER_S].verdict == DV_LOWER);
	CHECK(s && s->m[DM_WAIT_PER_S].p < 2e-5);
	CHECK(!d.unreachable && d.nsig > 0);
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);

	/* gone: every interval after at 0, tied, is as clear as no ties at 8 a side */
	after.shared_n = 0;
	record(&a, &before, MNT_A, 8);
	record(&b, &after, MNT_A, 8);
	run(&a, &b, &d);
	s = find(&d, false, DK_SHARED);
	CHECK(s && s->m[DM_WAIT_PER_S].after == 0 && s->m[DM_WAIT_PER_S].verdict == DV_LOWER);
	CHECK(s && fabs(s->m[DM_WAIT_PER_S].p - 2.0 / 12870.0) < 1e-12);
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
	after.shared_n = before.shared_n;

	record(&a, &before, MNT_A, 6);
	record(&b, &after, MNT_A, 6);
	run(&a, &b, &d);
	s = find(&d, false, DK_SHARED);
	CHECK(s && s->m[DM_WAIT_PER_S].tested && s->m[DM_WAIT_PER_S].verdict == DV_SAME);
	CHECK(d.ntests > 2 && d.nsig == 0 && d.unreachable);
	/* the least n with 2 / C(2n, n) * tests < 0.01 */
	CHECK(d.intervals_needed >= 7 && d.intervals_needed <= 10);
	CHECK(mw_min_p(d.intervals_needed, d.intervals_needed) * (double)d.ntests < 0.01);
	CHECK(mw_min_p(d.intervals_needed - 1, d.intervals_needed - 1) * (double)d.ntests >= 0.01);
	out = diff_out(&d, &a, &b, false);
	CHECK(strstr(out, "verdict: cannot tell: with 6 and 6 intervals no change could be "
			  "significant") != NULL);
	CHECK(strstr(out, "verdict: no significant change") == NULL);
	free(out);
	json = diff_out(&d, &a, &b, true);
	CHECK(strstr(json, "\"verdict\":\"too few intervals\"") != NULL);
	CHECK(strstr(json, "\"intervals_needed\":") != NULL);
	free(json);
	{
		size_t needed6 = d.intervals_needed;

		diff_free(&d);
		rec_free(&a);
		rec_free(&b);
		/*
		 * 3 a side: no test at all. The intervals asked for are the
		 * ones the comparisons would need once tested (as many as at 6
		 * a side), not the test's own minimum of 5, which could not
		 * give a verdict either.
		 */
		record(&a, &before, MNT_A, 3);
		record(&b, &after, MNT_A, 3);
		run(&a, &b, &d);
		CHECK(d.ntests == 0 && d.n > 0);
		CHECK_EQ_U(d.intervals_needed, needed6);
		CHECK(d.intervals_needed > d.o.min_samples);
		out = diff_out(&d, &a, &b, false);
		snprintf(want, sizeof(want), "verdict: cannot tell: too few intervals to test (need "
			 "about %zu per recording", needed6);
		CHECK(strstr(out, want) != NULL);
		CHECK(strstr(out, "over 0 tests") == NULL && strstr(out, "no test here") != NULL);
		free(out);
		json = diff_out(&d, &a, &b, true);
		snprintf(want, sizeof(want), "\"intervals_needed\":%zu", needed6);
		CHECK(strstr(json, want) != NULL);
		free(json);
	}
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
}

/*
 * Shared waits in 5 intervals of 20, exclusive ones in all: the shared
 * latencies have a sample only where there were waits, 5 a side, which no
 * result could make significant over every test. Those say "cannot tell",
 * and so does the verdict, where it counts them apart, instead of a plain
 * "no significant change" (a tenfold cut went unremarked so).
 */
static void record_bursty(struct recording *r, double shared_ms)
{
	struct synth s;
	struct snapshot d;

	synth_begin(&s, 1000000000ULL, MNT_A);
	snap_init(&d);
	for (int i = 0; i < 20; i++) {
		snap_reset(&d);
		if (i == 0)
			synth_inode(&d, DEV_A, 131, ILOCK_XFS_SB_MAGIC, "/data");
		if (i % 4 == 0)
			synth_wait(&d, DEV_A, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 3,
				   (uint64_t)(shared_ms * 1e6 * (0.8 + 0.4 * synth_rand01())));
		synth_wait(&d, DEV_A, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, 10,
			   (uint64_t)(2e6 * (0.8 + 0.4 * synth_rand01())));
		synth_interval(&s, &d);
	}
	synth_finish(&s, &d, r);
}

static void test_samples_out_of_reach(void)
{
	struct recording a, b;
	struct diff_result d;
	const struct diff_subject *s;
	char *out, *json;

	record_bursty(&a, 50);
	record_bursty(&b, 5);
	run(&a, &b, &d);
	s = find(&d, false, DK_SHARED);
	CHECK(s && s->m[DM_P50].tested && s->m[DM_P50].na == 5 && s->m[DM_P50].nb == 5);
	CHECK(s && s->m[DM_P50].out_of_reach && s->m[DM_P50].verdict == DV_SAME);
	CHECK(s && !s->m[DM_WAIT_PER_S].out_of_reach && s->m[DM_WAIT_PER_S].na == 20);
	CHECK(!d.unreachable && d.nsig == 0 && d.nout_of_reach > 0 && d.nout_of_reach < d.ntests);
	out = diff_out(&d, &a, &b, false);
	CHECK(strstr(out, "cannot tell: too few samples, p=") != NULL);
	CHECK(strstr(out, "more had too few samples to tell: record longer, or with a shorter "
			  "-i)\n") != NULL);
	free(out);
	json = diff_out(&d, &a, &b, true);
	CHECK(strstr(json, "\"verdict\":\"cannot_tell\"") != NULL);
	CHECK(strstr(json, "\"tests_out_of_reach\":0") == NULL);
	free(json);
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
}

/*
 * As the recorder writes them: each interval the delta of the kernel's
 * running stats (stats_delta), whose max is the run's maximum so far when
 * it did not rise. first_ms: one wait of that length in the first interval.
 */
static void record_running(struct recording *r, double first_ms)
{
	struct ilock_key k = { .ino = 131, .dev = DEV_A, .class = ILOCK_CLASS_I_RWSEM,
			       .mode = ILOCK_MODE_SHARED };
	struct ilock_stats cum = {}, prev = {}, delta;
	struct synth s;
	struct snapshot d;

	synth_begin(&s, 1000000000ULL, MNT_A);
	snap_init(&d);
	for (int i = 0; i < 30; i++) {
		snap_reset(&d);
		if (i == 0)
			synth_inode(&d, DEV_A, 131, ILOCK_XFS_SB_MAGIC, "/data");
		if (i == 0 && first_ms > 0)
			synth_add(&cum, 1, (uint64_t)(first_ms * 1e6));
		for (int w = 0; w < 3; w++)
			synth_add(&cum, 1, (uint64_t)((45 + 4 * synth_rand01()) * 1e6));
		stats_delta(&delta, &cum, i ? &prev : NULL);
		prev = cum;
		snap_add_wait(&d, &k, &delta);
		synth_interval(&s, &d);
	}
	synth_finish(&s, &d, r);
}

/*
 * One 61 ms wait in the first interval of 90: every later interval's max
 * carried it (the kernel keeps one running max), and so did the p99 it
 * capped, so diff called p99 and max "+25%, significant" for one wait.
 */
static void test_one_early_wait_is_no_change(void)
{
	struct recording a, b;
	struct diff_result d;
	const struct diff_subject *s;

	record_running(&a, 0);
	record_running(&b, 61);
	run(&a, &b, &d);
	s = find(&d, false, DK_SHARED);
	CHECK(s != NULL);
	if (s) {
		CHECK(s->m[DM_MAX].after > 60e6);  /* the whole run's max: exact */
		CHECK(s->m[DM_MAX].verdict == DV_SAME);
		CHECK(s->m[DM_P99].verdict == DV_SAME);
		CHECK(s->m[DM_P50].verdict == DV_SAME);
	}
	CHECK(d.nsig == 0);
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
}

static void test_changed_condition(void)
{
	struct cond before = { DEV_A, 131, "/data", ILOCK_XFS_SB_MAGIC, 100, 8, 2, 3, -1, 0 };
	struct cond after = before;
	struct recording a, b;
	struct diff_result d;
	const struct diff_subject *s;
	char line[512], *out = NULL;
	size_t len = 0;
	FILE *f;

	after.shared_ms = 12;  /* 812 ms/s -> ~96 ms/s */
	record(&a, &before, MNT_A, 20);
	record(&b, &after, MNT_A, 20);
	run(&a, &b, &d);
	s = find(&d, false, DK_SHARED);
	CHECK(s != NULL);
	if (s) {
		CHECK(s->m[DM_WAIT_PER_S].verdict == DV_LOWER);
		CHECK(s->m[DM_WAIT_PER_S].p_adj < 0.001);
		CHECK(s->m[DM_P50].verdict == DV_LOWER);
		CHECK(s->m[DM_WAITS_PER_S].verdict == DV_SAME);  /* as many waits, shorter */
		CHECK(fabs(s->m[DM_WAIT_PER_S].change + 0.88) < 0.05);
		diff_summary_line(line, sizeof(line), s, DM_WAIT_PER_S);
		CHECK(!strncmp(line, "i_rwsem shared wait: ", 21));
		CHECK(strstr(line, "ms/s -> ") != NULL);
		CHECK(strstr(line, ", significant, p<0.001)") != NULL);
		/* near alpha, enough digits to tell which side of it */
		{
			struct diff_subject t = *s;

			t.m[DM_WAIT_PER_S].p_adj = 0.00995;
			diff_summary_line(line, sizeof(line), &t, DM_WAIT_PER_S);
			CHECK(strstr(line, ", significant, p=0.00995)") != NULL);
			t.m[DM_WAIT_PER_S].p_adj = 0.0123;
			t.m[DM_WAIT_PER_S].verdict = DV_SAME;
			diff_summary_line(line, sizeof(line), &t, DM_WAIT_PER_S);
			CHECK(strstr(line, ", not significant, p=0.012)") != NULL);
		}
	}
	s = find(&d, false, DK_EXCL);
	CHECK(s && s->m[DM_WAIT_PER_S].verdict == DV_SAME);
	out = diff_out(&d, &a, &b, false);
	CHECK(strstr(out, "verdict: significant change") != NULL);
	free(out);
	f = open_memstream(&out, &len);
	diff_render_json(f, &d, "a", "b", &a, &b);
	fclose(f);
	CHECK(strstr(out, "\"verdict\": \"lower\"") != NULL || strstr(out, "\"verdict\":\"lower\"") != NULL);
	CHECK(strstr(out, "\"significant\": true") != NULL || strstr(out, "\"significant\":true") != NULL);
	free(out);
	diff_free(&d);

	/* and the other way round it is higher */
	run(&b, &a, &d);
	s = find(&d, false, DK_SHARED);
	CHECK(s && s->m[DM_WAIT_PER_S].verdict == DV_HIGHER);
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
}

/*
 * A steady 15 % change: significant for a rate, under the floor for a
 * latency. The latencies cross a histogram slot edge (67.1 ms): inside one
 * slot an interval's percentiles cannot tell 70 from 60 (own_percentile).
 */
static void test_effect_floors(void)
{
	struct cond before = { DEV_A, 131, "/data", ILOCK_XFS_SB_MAGIC, 70, 20, 0, 0, -1, 1 };
	struct cond after = before;
	struct recording a, b;
	struct diff_result d;
	const struct diff_subject *s;

	after.shared_ms = 60;  /* waits 14 % shorter */
	after.shared_n = 23;   /* and 15 % more of them */
	record(&a, &before, MNT_A, 20);
	record(&b, &after, MNT_A, 20);
	run(&a, &b, &d);
	s = find(&d, false, DK_SHARED);
	CHECK(s != NULL);
	if (s) {
		CHECK(s->m[DM_WAITS_PER_S].p_adj < 0.01);
		CHECK(s->m[DM_WAITS_PER_S].verdict == DV_HIGHER);
		/* the max, exact over the whole run: 70 -> 60 ms */
		CHECK(s->m[DM_MAX].p_adj < 0.01);
		CHECK(fabs(s->m[DM_MAX].change) < 0.20);
		CHECK(s->m[DM_MAX].verdict == DV_SAME);
		CHECK(s->m[DM_MAX].why_not == DWN_FLOOR);
	}
	{
		/* said why, not "not significant, p<0.001", which reads as a bug */
		char *out = diff_out(&d, &a, &b, false);

		CHECK(strstr(out, "not significant: -14% is under the 20% floor, p") != NULL);
		free(out);
	}
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
}

static void test_matching(void)
{
	struct cond xfs = { DEV_A, 131, "/data", ILOCK_XFS_SB_MAGIC, 50, 4, 0, 0, -1, 0 };
	struct cond ext4 = { DEV_B, 12, "/data", ILOCK_EXT4_SB_MAGIC, 50, 4, 0, 0, -1, 0 };
	struct cond nopath = { DEV_A, 131, NULL, 0, 50, 4, 0, 0, -1, 0 };
	struct recording a, b;
	struct diff_result d;
	const struct diff_subject *s;

	/* the same file on another mount: matched by its path inside the fs */
	record(&a, &xfs, MNT_A MNT_B, 6);
	record(&b, &ext4, MNT_A MNT_B, 6);
	run(&a, &b, &d);
	s = find(&d, true, DK_SHARED);
	CHECK(s && s->match == DMATCH_FSPATH);
	CHECK(s && !strcmp(s->label, "/mnt/a/data | /mnt/b/data"));
	/* its lock by both names: the XFS IOLOCK is ext4's i_rwsem */
	{
		char *out = diff_out(&d, &a, &b, false);

		CHECK(strstr(out, "  /mnt/a/data | /mnt/b/data  IOLOCK | i_rwsem shared  [") != NULL);
		free(out);
	}
	diff_free(&d);
	rec_free(&b);
	/* no path on one side: dev:ino */
	record(&b, &nopath, MNT_A, 6);
	run(&a, &b, &d);
	s = find(&d, true, DK_SHARED);
	CHECK(s && s->match == DMATCH_DEVINO);
	CHECK(s && !strcmp(s->ident_a, "7:1:131") && !strcmp(s->ident_b, "7:1:131"));
	diff_free(&d);
	rec_free(&a);
	/* nothing in common: before only and after only */
	record(&a, &ext4, MNT_B, 6);
	run(&a, &b, &d);
	{
		int before_only = 0, after_only = 0;

		for (size_t i = 0; i < d.n; i++) {
			before_only += d.s[i].match == DMATCH_BEFORE_ONLY;
			after_only += d.s[i].match == DMATCH_AFTER_ONLY;
		}
		CHECK(before_only == 1 && after_only == 1);
	}
	/* few intervals: no test */
	s = find(&d, false, DK_SHARED);
	CHECK(s && s->m[DM_WAIT_PER_S].tested);
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);

	record(&a, &xfs, MNT_A, 3);
	record(&b, &xfs, MNT_A, 3);
	run(&a, &b, &d);
	s = find(&d, false, DK_SHARED);
	CHECK(s && !s->m[DM_WAIT_PER_S].tested && !strcmp(s->m[DM_WAIT_PER_S].why, "too few intervals"));
	CHECK_EQ_U(d.ntests, 0);
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
}

/*
 * 12 intervals of 4 shared waits of 50 ms on ino 131: at interval `at` (and
 * never if -1) the file is deleted and created again under its name with
 * the same inode number (another generation); `other`, when set, is a
 * third file that had the number first, under another name, with a wait.
 */
static void record_gens(struct recording *r, int at, const char *other)
{
	struct synth s;
	struct snapshot d;

	synth_begin(&s, 1000000000ULL, MNT_A);
	snap_init(&d);
	for (int i = 0; i < 12; i++) {
		uint32_t gen = at >= 0 && i >= at ? 2 : 1;

		snap_reset(&d);
		CHECK(synth_inode_gen(&d, DEV_A, 131, gen, ILOCK_XFS_SB_MAGIC, "/data") == 0);
		CHECK(synth_wait_gen(&d, DEV_A, 131, gen, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED,
				     4, 200000000) == 0);
		if (other && i == 0) {
			CHECK(synth_inode_gen(&d, DEV_A, 131, 3, ILOCK_XFS_SB_MAGIC, other) == 0);
			CHECK(synth_wait_gen(&d, DEV_A, 131, 3, ILOCK_CLASS_I_RWSEM,
					     ILOCK_MODE_SHARED, 4, 200000000) == 0);
		}
		synth_interval(&s, &d);
	}
	synth_finish(&s, &d, r);
}

/*
 * A benchmark that lays its file out again mid-run: the two generations
 * under one name are one file to compare, matched by path, with all their
 * waits; a file that had the number under another name is another subject.
 */
static void test_generations(void)
{
	struct recording a, b;
	struct diff_result d;
	const struct diff_subject *s;
	size_t inode_subjects = 0, before_only = 0;

	record_gens(&a, 6, "/old");
	record_gens(&b, -1, NULL);
	run(&a, &b, &d);
	for (size_t i = 0; i < d.n; i++) {
		if (!d.s[i].is_inode || d.s[i].kind != DK_SHARED)
			continue;
		inode_subjects++;
		before_only += d.s[i].match == DMATCH_BEFORE_ONLY;
	}
	CHECK_EQ_U(inode_subjects, 2);
	CHECK_EQ_U(before_only, 1);
	for (size_t i = 0; i < d.n; i++) {
		s = &d.s[i];
		if (!s->is_inode || s->kind != DK_SHARED || s->match == DMATCH_BEFORE_ONLY)
			continue;
		CHECK(s->match == DMATCH_PATH);
		CHECK_STR(s->label, "/mnt/a/data");
		/* all 12 intervals' waits on each side, not half of them */
		CHECK(s->m[DM_WAIT_PER_S].has_before && s->m[DM_WAIT_PER_S].has_after);
		CHECK(fabs(s->m[DM_WAIT_PER_S].before - s->m[DM_WAIT_PER_S].after) < 1e-9);
		CHECK(s->m[DM_WAIT_PER_S].verdict != DV_HIGHER && s->m[DM_WAIT_PER_S].verdict != DV_LOWER);
	}
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
}

/* Readers behind a writer, per 1 s interval: disjoint and overlapping pairs (jittered). */
static void record_ranges(struct recording *r, uint64_t disjoint_n, uint64_t overlap_n,
			  const char *ops_mode)
{
	struct synth s;
	struct snapshot d;

	synth_begin(&s, 1000000000ULL, MNT_A);
	snap_init(&d);
	for (int i = 0; i < 12; i++) {
		uint64_t n[2] = { disjoint_n, overlap_n };
		uint8_t range[2] = { ILOCK_RANGE_DISJOINT, ILOCK_RANGE_OVERLAP };

		snap_reset(&d);
		if (i == 0)
			synth_inode(&d, DEV_A, 131, ILOCK_XFS_SB_MAGIC, "/data");
		for (int k = 0; k < 2; k++) {
			struct ilock_edge_key ek = { .ino = 131, .dev = DEV_A, .class = ILOCK_CLASS_I_RWSEM,
						     .holder_mode = ILOCK_MODE_EXCL,
						     .waiter_mode = ILOCK_MODE_SHARED, .holder_pid = 7,
						     .holder_tgid = 7, .waiter_pid = 8, .waiter_tgid = 8,
						     .holder_op = ILOCK_OP_BUFFERED_WRITE,
						     .waiter_op = ILOCK_OP_BUFFERED_READ, .range = range[k] };
			uint64_t cnt = n[k] ? n[k] + (uint64_t)(synth_rand01() * (double)n[k] / 5) : 0;
			struct ilock_edge_stats es = { .count = cnt, .total_ns = cnt * 1000000,
						       .max_ns = 1000000 };

			if (!cnt)
				continue;
			memcpy(ek.holder_comm, "writer", 7);
			memcpy(ek.waiter_comm, "reader", 7);
			synth_wait(&d, DEV_A, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, cnt, 1000000);
			CHECK(snap_add_edge(&d, &ek, &es) == 0);
		}
		synth_interval(&s, &d);
	}
	synth_finish(&s, &d, r);
	add_meta(r, "attach.ops", ops_mode);
}

/*
 * A range lock's before and after: the disjoint waits go, the overlapping
 * ones stay. Per lock class and per inode, rates only; a side recorded
 * with --ops off saw no ranges, and is not compared.
 */
static void test_ranges(void)
{
	struct recording a, b, c;
	struct diff_result d;
	const struct diff_subject *dis, *ov;
	char *out;

	record_ranges(&a, 400, 20, "tp_btf (syscalls)");
	record_ranges(&b, 4, 20, "tp_btf (syscalls)");
	run(&a, &b, &d);
	dis = find(&d, false, DK_DISJOINT);
	ov = find(&d, false, DK_OVERLAP);
	CHECK(dis && dis->m[DM_WAITS_PER_S].tested && dis->m[DM_WAITS_PER_S].verdict == DV_LOWER);
	CHECK(dis && dis->m[DM_WAIT_PER_S].verdict == DV_LOWER);
	CHECK(dis && dis->m[DM_WAITS_PER_S].before > 400 && dis->m[DM_WAITS_PER_S].after < 5);
	CHECK(dis && !dis->m[DM_P99].present && !dis->m[DM_HOLD_P99].present);
	CHECK(ov && ov->m[DM_WAITS_PER_S].tested && ov->m[DM_WAITS_PER_S].verdict == DV_SAME);
	CHECK(ov && ov->m[DM_WAITS_PER_S].before >= 20 && ov->m[DM_WAITS_PER_S].before <= 24);
	/* and per inode, the file matched by path */
	dis = find(&d, true, DK_DISJOINT);
	CHECK(dis && dis->match == DMATCH_PATH && !strcmp(dis->label, "/mnt/a/data"));
	CHECK(dis && dis->m[DM_WAITS_PER_S].verdict == DV_LOWER && !dis->m[DM_P50].present);
	CHECK(find(&d, true, DK_OVERLAP) != NULL);
	out = diff_out(&d, &a, &b, false);
	CHECK(strstr(out, "\n  i_rwsem disjoint ranges\n") != NULL);
	CHECK(strstr(out, "  i_rwsem disjoint ranges wait: ") != NULL);
	CHECK(strstr(out, "  i_rwsem overlapping ranges wait: ") != NULL);
	CHECK(strstr(out, "\n  /mnt/a/data  IOLOCK disjoint ranges  [path; 7:1:131]\n") != NULL);
	CHECK(strstr(out, "  /mnt/a/data IOLOCK disjoint ranges wait: ") != NULL);
	free(out);
	diff_free(&d);

	/* after with --ops off: its zero disjoint rate is not a measurement */
	record_ranges(&c, 400, 20, "off");
	run(&a, &c, &d);
	dis = find(&d, false, DK_DISJOINT);
	CHECK(dis && !dis->m[DM_WAITS_PER_S].tested && dis->m[DM_WAITS_PER_S].uncaptured);
	CHECK(dis && dis->m[DM_WAITS_PER_S].why &&
	      strstr(dis->m[DM_WAITS_PER_S].why, "after (--ops off)"));
	CHECK_EQ_U(d.nsig, 0);
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
	rec_free(&c);
}

/*
 * Writers blocking readers (rr per second) and writers (ww), each split
 * over two threads whose ids start at tid; ops zero when ops is false,
 * as a recording made with --ops off has them.
 */
static void record_roles(struct recording *r, uint64_t rr, uint64_t ww, uint32_t tid, bool ops)
{
	struct synth s;
	struct snapshot d;

	synth_begin(&s, 1000000000ULL, MNT_A);
	snap_init(&d);
	for (int i = 0; i < 12; i++) {
		snap_reset(&d);
		if (i == 0)
			synth_inode(&d, DEV_A, 131, ILOCK_XFS_SB_MAGIC, "/data");
		for (int k = 0; k < 4; k++) {
			bool reader = k < 2;
			uint64_t n = (reader ? rr : ww) / 2;
			uint64_t cnt = n + (uint64_t)(synth_rand01() * (double)n / 5);
			struct ilock_edge_key ek = {
				.ino = 131, .dev = DEV_A, .class = ILOCK_CLASS_I_RWSEM,
				.holder_mode = ILOCK_MODE_EXCL,
				.waiter_mode = reader ? ILOCK_MODE_SHARED : ILOCK_MODE_EXCL,
				.holder_pid = tid + (uint32_t)k, .holder_tgid = tid,
				.waiter_pid = tid + 10 + (uint32_t)k, .waiter_tgid = tid,
				.holder_op = ops ? ILOCK_OP_BUFFERED_WRITE : 0,
				.waiter_op = !ops ? 0 : reader ? ILOCK_OP_BUFFERED_READ
							       : ILOCK_OP_BUFFERED_WRITE,
				.range = ops ? ILOCK_RANGE_DISJOINT : ILOCK_RANGE_NO_BOTH };
			struct ilock_edge_stats es = { .count = cnt, .total_ns = cnt * 1000000,
						       .max_ns = 1000000 };

			if (!cnt)
				continue;
			memcpy(ek.holder_comm, "writer", 7);
			memcpy(ek.waiter_comm, reader ? "reader" : "writer", 7);
			synth_wait(&d, DEV_A, 131, ILOCK_CLASS_I_RWSEM, ek.waiter_mode, cnt, 1000000);
			CHECK(snap_add_edge(&d, &ek, &es) == 0);
		}
		synth_interval(&s, &d);
	}
	synth_finish(&s, &d, r);
	add_meta(r, "attach.ops", ops ? "tp_btf (syscalls)" : "off");
}

/*
 * holder (a buffered writer, thread hpid) kept waiter thread wpid ("reader",
 * a buffered read) waiting n times, each_ns each, in one interval's delta d.
 */
static void reader_behind(struct snapshot *d, const char *holder, uint32_t hpid, uint32_t wpid,
			  uint32_t tgid, uint64_t n, uint64_t each_ns)
{
	struct ilock_edge_key ek = { .ino = 131, .dev = DEV_A, .class = ILOCK_CLASS_I_RWSEM,
				     .holder_mode = ILOCK_MODE_EXCL, .waiter_mode = ILOCK_MODE_SHARED,
				     .holder_pid = hpid, .holder_tgid = tgid,
				     .waiter_pid = wpid, .waiter_tgid = tgid,
				     .holder_op = ILOCK_OP_BUFFERED_WRITE,
				     .waiter_op = ILOCK_OP_BUFFERED_READ,
				     .range = ILOCK_RANGE_DISJOINT };
	struct ilock_edge_stats es = { n, n * each_ns, each_ns };

	snprintf(ek.holder_comm, sizeof(ek.holder_comm), "%s", holder);
	memcpy(ek.waiter_comm, "reader", 7);
	synth_wait(d, DEV_A, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, n, each_ns);
	CHECK(snap_add_edge(d, &ek, &es) == 0);
}

/*
 * io_uring workers blocking "reader", 100 waits a second: four workers,
 * named after the threads they serve ("iou-wrk-<tid>"), ids from tid.
 * extra: also "tiny" blocking "reader" once an interval for 30 us, a role
 * of 30 us/s.
 */
static void record_pool_roles(struct recording *r, uint32_t tid, bool extra)
{
	struct synth s;
	struct snapshot d;
	char name[ILOCK_COMM_LEN];

	synth_begin(&s, 1000000000ULL, MNT_A);
	snap_init(&d);
	for (int i = 0; i < 12; i++) {
		snap_reset(&d);
		if (i == 0)
			synth_inode(&d, DEV_A, 131, ILOCK_XFS_SB_MAGIC, "/data");
		for (uint32_t k = 0; k < 4; k++) {
			snprintf(name, sizeof(name), "iou-wrk-%u", tid + 100 + k);
			reader_behind(&d, name, tid + k, tid + 10 + k, tid, 25, 1000000);
		}
		if (extra)
			reader_behind(&d, "tiny", tid + 50, tid + 10, tid, 1, 30000);
		synth_interval(&s, &d);
	}
	synth_finish(&s, &d, r);
	add_meta(r, "attach.ops", "tp_btf (syscalls)");
}

/*
 * 300 holder commands h000..h299 each blocking "reader", role i waiting
 * 300 - i ms an interval: the costliest roles are the first ones seen.
 */
static void record_many_roles(struct recording *r, uint32_t tid)
{
	struct synth s;
	struct snapshot d;

	synth_begin(&s, 1000000000ULL, MNT_A);
	snap_init(&d);
	for (int i = 0; i < 6; i++) {
		snap_reset(&d);
		for (uint32_t k = 0; k < 300; k++) {
			struct ilock_edge_key ek = { .ino = 131, .dev = DEV_A, .class = ILOCK_CLASS_I_RWSEM,
						     .holder_mode = ILOCK_MODE_EXCL,
						     .waiter_mode = ILOCK_MODE_SHARED,
						     .holder_pid = tid + k, .holder_tgid = tid,
						     .waiter_pid = tid + 1000, .waiter_tgid = tid,
						     .holder_op = ILOCK_OP_BUFFERED_WRITE,
						     .waiter_op = ILOCK_OP_BUFFERED_READ };
			struct ilock_edge_stats es = { 1, (300 - k) * 1000000ULL, (300 - k) * 1000000ULL };

			snprintf(ek.holder_comm, sizeof(ek.holder_comm), "h%03u", k);
			memcpy(ek.waiter_comm, "reader", 7);
			CHECK(snap_add_edge(&d, &ek, &es) == 0);
		}
		synth_wait(&d, DEV_A, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 300, 150000000);
		synth_interval(&s, &d);
	}
	synth_finish(&s, &d, r);
	add_meta(r, "attach.ops", "tp_btf (syscalls)");
}

static const struct diff_subject *find_role(const struct diff_result *d, const char *label)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->s[i].kind == DK_ROLE && !strcmp(d->s[i].label, label))
			return &d->s[i];
	return NULL;
}

/*
 * The same io_uring load twice: its workers' names carry other thread
 * ids each run, and are still one role that did not change.
 */
static void test_pool_roles(void)
{
	const char *label = "iou-wrk buffered-write EXCL -> reader buffered-read SHARED";
	struct recording a, b;
	const struct diff_subject *x;
	struct diff_result d;
	size_t roles = 0;

	record_pool_roles(&a, 11255, false);
	record_pool_roles(&b, 20417, false);
	run(&a, &b, &d);
	for (size_t i = 0; i < d.n; i++)
		roles += d.s[i].kind == DK_ROLE;
	CHECK_EQ_U(roles, 1);
	x = find_role(&d, label);
	CHECK(x && x->m[DM_WAITS_PER_S].tested && x->m[DM_WAITS_PER_S].verdict == DV_SAME);
	CHECK(x && x->threads[0][0] == 4 && x->threads[1][0] == 4);
	CHECK_EQ_U(d.nsig, 0);
	diff_free(&d);
	rec_free(&b);

	/* a role new at 30 us/s is significant, and detail: its table, not the SUMMARY */
	record_pool_roles(&b, 20417, true);
	run(&a, &b, &d);
	x = find_role(&d, "tiny buffered-write EXCL -> reader buffered-read SHARED");
	CHECK(x && x->m[DM_WAIT_PER_S].verdict == DV_HIGHER);
	{
		char *out = diff_out(&d, &a, &b, false), *sum = out ? strstr(out, "\nSUMMARY\n") : NULL;

		CHECK(sum && !strstr(sum, "tiny"));
		CHECK(sum && strstr(sum, "  (and 1 significant change of inodes or roles under 1% of "
					 "the largest wait above: in their tables)\n"));
		CHECK(out && strstr(out, "tiny buffered-write EXCL -> reader buffered-read SHARED"));
		free(out);
	}
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
}

/*
 * PostgreSQL both times, all "postgres": the checkpointer's and the
 * clients' roles by their titles, matched across the recordings whatever
 * the pids, the checkpointer's hold on the clients doubled after.
 */
static void record_titled(struct recording *r, uint32_t base, uint64_t ckpt_ms)
{
	struct titles ti;
	struct synth s;
	struct snapshot d;

	titles_init(&ti);
	CHECK(!titles_put(&ti, base, "postgres", "postgres: checkpointer"));
	/* the waiters' comm as reader_behind names them */
	CHECK(!titles_put(&ti, base + 1, "reader", "postgres: bob shop [local] UPDATE"));
	CHECK(!titles_put(&ti, base + 2, "reader", "postgres: bob shop [local] idle"));
	CHECK(!titles_put(&ti, base + 3, "postgres", "postgres: background writer"));
	synth_begin(&s, 1000000000ULL, MNT_A);
	s.w.titles = &ti;
	snap_init(&d);
	for (int i = 0; i < 12; i++) {
		snap_reset(&d);
		if (i == 0)
			synth_inode(&d, DEV_A, 131, ILOCK_XFS_SB_MAGIC, "/base/5/16396");
		reader_behind(&d, "postgres", base, base + 1, base, 5, ckpt_ms * 200000);
		reader_behind(&d, "postgres", base, base + 2, base, 5, ckpt_ms * 200000);
		reader_behind(&d, "postgres", base + 3, base + 1, base, 10, 1000000);
		synth_interval(&s, &d);
	}
	synth_finish(&s, &d, r);
	add_meta(r, "attach.ops", "tp_btf (syscalls)");
	titles_free(&ti);
}

static void test_title_roles(void)
{
	const char *ckpt = "postgres: checkpointer buffered-write EXCL -> postgres: bob shop "
			   "buffered-read SHARED";
	const char *bgw = "postgres: background writer buffered-write EXCL -> postgres: bob shop "
			  "buffered-read SHARED";
	struct recording a, b;
	const struct diff_subject *x;
	struct diff_result d;
	char *out = NULL;
	size_t len = 0, roles = 0;
	FILE *f;

	record_titled(&a, 4100, 10);
	record_titled(&b, 7300, 20);
	run(&a, &b, &d);
	for (size_t i = 0; i < d.n; i++)
		roles += d.s[i].kind == DK_ROLE;
	CHECK_EQ_U(roles, 2);
	x = find_role(&d, ckpt);
	CHECK(x && x->m[DM_WAIT_PER_S].verdict == DV_HIGHER);
	CHECK(x && x->threads[0][0] == 1 && x->threads[0][1] == 2);
	x = find_role(&d, bgw);
	CHECK(x && x->m[DM_WAIT_PER_S].tested && x->m[DM_WAIT_PER_S].verdict == DV_SAME);
	f = open_memstream(&out, &len);
	diff_render_json(f, &d, "a", "b", &a, &b);
	fclose(f);
	CHECK(out && strstr(out, "\"holder\":{\"comm\":\"postgres\",\"role\":\"postgres: checkpointer\","));
	CHECK(out && strstr(out, "\"waiter\":{\"comm\":\"reader\",\"role\":\"postgres: bob shop\","));
	free(out);
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
}

/*
 * Roles, matched by command, op and mode whatever the threads' ids: the
 * writers' hold on readers drops, their hold on each other stays.
 */
static void test_roles(void)
{
	const char *wr = "writer buffered-write EXCL -> reader buffered-read SHARED";
	const char *ww = "writer buffered-write EXCL -> writer buffered-write EXCL";
	struct recording a, b, c;
	const struct diff_subject *x, *y;
	struct diff_result d;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	record_roles(&a, 400, 50, 100, true);
	record_roles(&b, 4, 50, 5000, true);
	run(&a, &b, &d);
	x = find_role(&d, wr);
	y = find_role(&d, ww);
	CHECK(x && x->class == ILOCK_CLASS_I_RWSEM && !x->is_inode);
	CHECK(x && x->m[DM_WAITS_PER_S].tested && x->m[DM_WAITS_PER_S].verdict == DV_LOWER);
	CHECK(x && x->m[DM_WAIT_PER_S].verdict == DV_LOWER);
	/* both threads of each side summed: about 400 a second before, 4 after */
	CHECK(x && x->m[DM_WAITS_PER_S].before >= 400 && x->m[DM_WAITS_PER_S].before <= 440);
	CHECK(x && x->m[DM_WAITS_PER_S].after >= 4 && x->m[DM_WAITS_PER_S].after <= 5);
	CHECK(x && !x->m[DM_P99].present && !x->m[DM_HOLD_P99].present);
	CHECK(y && y->m[DM_WAITS_PER_S].tested && y->m[DM_WAITS_PER_S].verdict == DV_SAME);
	CHECK(!d.roles_without_ops);
	/* roles are neither class nor inode rows */
	CHECK(find(&d, false, DK_SHARED) && find(&d, false, DK_SHARED)->kind == DK_SHARED);
	out = diff_out(&d, &a, &b, false);
	CHECK(strstr(out, "\nBY COMMAND (holder -> waiter, the threads of a command summed; top 10 by "
			  "wait time)\n  i_rwsem  writer buffered-write EXCL -> reader buffered-read "
			  "SHARED  (threads 2 -> 2 before, 2 -> 2 after)\n    waits/s") != NULL);
	/* two writer threads blocked two reader threads on each side */
	CHECK(x && x->threads[0][0] == 2 && x->threads[0][1] == 2);
	CHECK(x && x->threads[1][0] == 2 && x->threads[1][1] == 2);
	CHECK(strstr(out, "\n  i_rwsem writer buffered-write EXCL -> reader buffered-read SHARED "
			  "wait: ") != NULL);
	/* a role is not a lock class: no "role" heading among the classes */
	CHECK(strstr(out, " role\n") == NULL);
	free(out);
	f = open_memstream(&out, &len);
	diff_render_json(f, &d, "a", "b", &a, &b);
	fclose(f);
	CHECK(strstr(out, "\"roles_by_op\":true,\"roles\":[{\"class\":\"i_rwsem\",\"kind\":\"role\","
			  "\"label\":\"writer buffered-write EXCL -> reader buffered-read SHARED\","
			  "\"threads\":{\"before\":{\"holders\":2,\"waiters\":2},\"after\":"
			  "{\"holders\":2,\"waiters\":2}},"
			  "\"holder\":{\"comm\":\"writer\",\"role\":null,\"mode\":\"exclusive\","
			  "\"op\":\"buffered-write\",\"op_flags\":[]},\"waiter\":{\"comm\":\"reader\"") != NULL);
	CHECK(strstr(out, "\"classes\":[{\"class\":\"i_rwsem\",\"kind\":\"shared\"") != NULL);
	free(out);
	diff_free(&d);

	/* the readers gone after: the role's threads "none after" */
	record_roles(&c, 0, 50, 9000, true);
	run(&a, &c, &d);
	x = find_role(&d, wr);
	CHECK(x && x->threads[0][0] == 2 && x->threads[1][0] == 0 && x->threads[1][1] == 0);
	out = diff_out(&d, &a, &c, false);
	CHECK(strstr(out, "SHARED  (threads 2 -> 2 before, none after)\n") != NULL);
	free(out);
	diff_free(&d);
	rec_free(&c);

	/* after recorded with --ops off: roles by command and mode only, and they still match */
	record_roles(&c, 4, 50, 9000, false);
	run(&a, &c, &d);
	CHECK(d.roles_without_ops);
	x = find_role(&d, "writer EXCL -> reader SHARED");
	CHECK(x && x->m[DM_WAITS_PER_S].tested && x->m[DM_WAITS_PER_S].verdict == DV_LOWER);
	CHECK(find_role(&d, wr) == NULL);
	out = diff_out(&d, &a, &c, false);
	CHECK(strstr(out, "(ops not compared: a recording was made with --ops off)") != NULL);
	free(out);
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
	rec_free(&c);

	/* many roles: the ten with most wait time, each matched on both sides */
	record_many_roles(&a, 100);
	record_many_roles(&b, 7000);
	run(&a, &b, &d);
	{
		size_t nroles = 0;

		for (size_t i = 0; i < d.n; i++) {
			char want[96];

			if (d.s[i].kind != DK_ROLE)
				continue;
			snprintf(want, sizeof(want),
				 "h%03zu buffered-write EXCL -> reader buffered-read SHARED", nroles);
			CHECK_STR(d.s[i].label, want);
			CHECK(d.s[i].m[DM_WAITS_PER_S].before == d.s[i].m[DM_WAITS_PER_S].after);
			/* all six intervals' waits of the role, in one subject */
			CHECK(fabs(d.s[i].m[DM_WAIT_PER_S].before - (300.0 - (double)nroles) * 1e6) < 1e3);
			nroles++;
		}
		CHECK_EQ_U(nroles, 10);
	}
	diff_free(&d);
	rec_free(&a);
	rec_free(&b);
}

/*
 * One process, one slow wait (8 ms) every 5 s among 100 waits of 1 ms a
 * second, recorded with -i 1 and with -i 5: the same rates, but every 5 s
 * interval holds a slow wait and four 1 s intervals in five do not. Their
 * maxima differ by the interval alone, so max and p99 go untested.
 */
static void record_interval(struct recording *r, uint64_t secs, int n)
{
	struct synth s;
	struct snapshot d;

	synth_begin(&s, secs * 1000000000ULL, MNT_A);
	snap_init(&d);
	for (int i = 0; i < n; i++) {
		snap_reset(&d);
		if (i == 0)
			synth_inode(&d, DEV_A, 131, ILOCK_XFS_SB_MAGIC, "/data");
		synth_wait(&d, DEV_A, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 100 * secs,
			   1000000);
		if (secs > 1 || i % 5 == 2)
			synth_wait(&d, DEV_A, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1, 8000000);
		synth_interval(&s, &d);
	}
	synth_finish(&s, &d, r);
}

static void test_unlike_intervals(void)
{
	struct recording a, b;
	struct diff_result d;
	const struct diff_subject *s;
	char *out;

	/* the same -i: the max of the 1 s intervals against themselves is no change */
	record_interval(&a, 1, 40);
	record_interval(&b, 1, 40);
	run(&a, &b, &d);
	CHECK(!d.unlike_intervals);
	s = find(&d, false, DK_SHARED);
	CHECK(s && s->m[DM_MAX].tested && s->m[DM_MAX].verdict == DV_SAME);
	diff_free(&d);
	rec_free(&b);

	record_interval(&b, 5, 8);
	run(&a, &b, &d);
	CHECK(d.unlike_intervals);
	s = find(&d, false, DK_SHARED);
	CHECK(s && s->m[DM_WAIT_PER_S].tested && s->m[DM_WAIT_PER_S].verdict == DV_SAME);
	CHECK(s && !s->m[DM_MAX].tested && s->m[DM_MAX].verdict == DV_UNTESTED &&
	      !strcmp(s->m[DM_MAX].why, "intervals differ (1 s -> 5 s)"));
	CHECK(s && !s->m[DM_P99].tested);
	CHECK_EQ_U(d.nsig, 0);
	out = diff_out(&d, &a, &b, false);
	CHECK(strstr(out, "note: intervals differ (1 s -> 5 s): ") != NULL);
	CHECK(strstr(out, "untested: intervals differ (1 s -> 5 s)") != NULL);
	free(out);
	diff_free(&d);

	/*
	 * What it guards against: tested, the intervals' maxima differ past
	 * any doubt (only the whole runs' equal maxima keep the verdict).
	 */
	{
		struct diff_opts o;

		diff_opts_default(&o);
		b.interval_ns = a.interval_ns;
		CHECK(!diff_compute(&a, &b, &o, &d));
		s = find(&d, false, DK_SHARED);
		CHECK(s && s->m[DM_MAX].tested && s->m[DM_MAX].p_adj < 0.01);
		diff_free(&d);
	}
	rec_free(&a);
	rec_free(&b);
}

int main(void)
{
	test_holds_off_is_not_gone();
	test_probe_missing_on_one_side();
	test_filters_differ();
	test_journal_off_is_not_new();
	test_same_condition();
	test_changed_condition();
	test_effect_floors();
	test_matching();
	test_ranges();
	test_roles();
	test_pool_roles();
	test_title_roles();
	test_generations();
	/* last: the synthetic jitter is one sequence, which the tests above were written against */
	test_short_recordings();
	test_samples_out_of_reach();
	test_one_early_wait_is_no_change();
	test_unlike_intervals();
	UNIT_DONE();
}
