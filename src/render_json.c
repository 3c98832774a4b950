// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The `--json` document; schema in docs/json-schema.md. Keys are stable. */
#include <inttypes.h>

#include "counters.h"
#include "hist.h"
#include "json.h"
#include "render.h"
#include "render_json_ops.h"
#include "util.h"

#define JSON_SCHEMA_VERSION 1

static void stats_json(struct json *j, const char *key, const struct ilock_stats *s, bool waits)
{
	json_obj_begin(j, key);
	json_u64(j, waits ? "waits" : "count", s->count);
	json_u64(j, waits ? "wait_ns" : "total_ns", s->total_ns);
	json_u64(j, "max_ns", s->max_ns);
	json_u64(j, "p50_ns", stats_percentile(s, 0.50));
	json_u64(j, "p99_ns", stats_percentile(s, 0.99));
	json_arr_begin(j, "hist");
	for (unsigned i = 0; i < ILOCK_HIST_SLOTS; i++) {
		if (!s->hist[i])
			continue;
		json_arr_begin(j, NULL);
		json_u64(j, NULL, hist_slot_lo(i));
		json_u64(j, NULL, hist_slot_hi(i));
		json_u64(j, NULL, s->hist[i]);
		json_arr_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

void render_json_ino(struct json *j, uint64_t ino)
{
	if (ino == ILOCK_INO_FOLDED)
		json_null(j, "ino");  /* waits kept without their inode (wait_inodes_folded) */
	else
		json_u64(j, "ino", ino);
}

static void lock_json(struct json *j, const struct snapshot *s, const struct report_meta *m,
		      const struct lock_row *r)
{
	struct inode_view v;
	char d[24];

	describe_inode(s, m->mounts, r->dev, r->ino, r->gen, r->has_hold, &v);
	json_obj_begin(j, NULL);
	json_str(j, "dev", fmt_kdev(d, sizeof(d), r->dev));
	render_json_ino(j, r->ino);
	json_u64(j, "gen", r->gen);
	json_str(j, "path", v.path[0] ? v.path : NULL);
	json_str(j, "path_fs", v.rel[0] ? v.rel : NULL);
	json_str(j, "path_note", v.note);
	json_bool(j, "directory", v.dir);
	json_str(j, "fs", v.fs);
	json_str(j, "class", class_name(r->class));
	json_str(j, "class_fs_name", class_display_name(r->class, v.magic));
	stats_json(j, "shared", &r->wait[ILOCK_MODE_SHARED], true);
	stats_json(j, "exclusive", &r->wait[ILOCK_MODE_EXCL], true);
	render_json_lock_ranges(j, r);
	if (r->has_hold) {
		json_obj_begin(j, "acquisitions");
		json_u64(j, "shared", r->hold[ILOCK_MODE_SHARED].count);
		json_u64(j, "exclusive", r->hold[ILOCK_MODE_EXCL].count);
		json_obj_end(j);
		json_obj_begin(j, "hold");
		stats_json(j, "shared", &r->hold[ILOCK_MODE_SHARED], false);
		stats_json(j, "exclusive", &r->hold[ILOCK_MODE_EXCL], false);
		json_obj_end(j);
	} else {
		json_null(j, "acquisitions");
		json_null(j, "hold");
	}
	json_obj_end(j);
}

/* Tasks waiting on average (snap_wait_load), inode locks and journal apart. */
static void summary_json(struct json *j, const struct snapshot *s, const struct report_meta *m)
{
	struct wait_load w;
	char d[24];
	uint64_t left = snap_lost_sum(s, counter_drops_waits);

	snap_wait_load(s, m->duration_s, &w);
	json_obj_begin(j, "summary");
	json_u64(j, "waits", w.waits);
	json_u64(j, "wait_ns", w.wait_ns);
	json_double(j, "tasks_waiting", w.tasks);
	/* waits seen and kept in no row (counter_drops_waits): the totals are low */
	json_u64(j, "waits_left_out", left);
	json_bool(j, "few_waiting", w.tasks < ILOCK_FEW_WAITING && !left &&
		  m->duration_s >= ILOCK_SHORT_TRACE_S);
	/* --wait-sample: the counts and times are estimates (attach.wait_sampling) */
	json_bool(j, "estimated", meta_wait_sampling(m) != NULL);
	if (w.top) {
		json_obj_begin(j, "top");
		json_str(j, "dev", fmt_kdev(d, sizeof(d), w.top->dev));
		render_json_ino(j, w.top->ino);
		json_u64(j, "gen", w.top->gen);
		json_str(j, "class", class_name(w.top->class));
		json_double(j, "tasks_waiting", w.top_tasks);
		json_obj_end(j);
	} else {
		json_null(j, "top");
	}
	json_u64(j, "journal_waits", w.journal_waits);
	json_u64(j, "journal_wait_ns", w.journal_ns);
	json_double(j, "journal_tasks_waiting", w.journal_tasks);
	json_obj_end(j);
}

void render_json(FILE *f, const struct snapshot *s, const struct report_meta *m,
		 const struct render_opts *o)
{
	struct json j;

	json_init(&j, f);
	json_obj_begin(&j, NULL);
	json_u64(&j, "version", JSON_SCHEMA_VERSION);
	json_str(&j, "tool_version", ILOCK_VERSION_STR);
	json_double(&j, "duration_s", m->duration_s);
	if (o->interval_no) {
		/* only in -i's documents: the final one, of the whole run, has none */
		json_obj_begin(&j, "interval");
		json_u64(&j, "index", (uint64_t)o->interval_no);
		json_double(&j, "from_s", o->interval_from_s);
		json_double(&j, "to_s", o->interval_to_s);
		json_obj_end(&j);
	}
	json_str(&j, "kernel", m->kernel);
	json_str(&j, "hostname", m->hostname);
	json_str(&j, "filters", m->filters ? m->filters : "none");
	json_obj_begin(&j, "attach");
	for (int i = 0; i < m->nattach; i++)
		json_str(&j, m->attach[i].probe, m->attach[i].mode);
	json_obj_end(&j);
	json_obj_begin(&j, "lost");
	for (int c = ILOCK_FIRST_LOST; c < ILOCK_COUNTER_MAX; c++)
		json_u64(&j, counter_name(c), s->counters[c]);
	json_obj_end(&j);
	json_obj_begin(&j, "events");
	for (int c = 0; c < ILOCK_FIRST_LOST; c++)
		json_u64(&j, counter_name(c), s->counters[c]);
	json_u64(&j, "in_flight", s->in_flight);
	json_obj_end(&j);
	/* the slot tables' fill as read; capacities are not known from a recording */
	json_obj_begin(&j, "tables");
	for (int t = 0; t < TABLE_MAX; t++) {
		json_obj_begin(&j, table_name(t));
		if (s->tables[t].cap) {
			json_u64(&j, "entries", s->tables[t].used);
			json_u64(&j, "capacity", s->tables[t].cap);
		} else {
			json_null(&j, "entries");
			json_null(&j, "capacity");
		}
		json_obj_end(&j);
	}
	json_obj_end(&j);
	summary_json(&j, s, m);
	render_waiting_json(&j, s, m);

	json_arr_begin(&j, "locks");
	for (size_t i = 0; i < s->nlocks; i++)
		lock_json(&j, s, m, &s->locks[i]);
	json_arr_end(&j);

	render_json_edges(&j, s, m, o);
	render_json_roles(&j, s, m);
	render_json_dio(&j, s);
	if (o && o->json_extra)
		o->json_extra(&j, o->json_extra_ctx);
	json_obj_end(&j);
}
