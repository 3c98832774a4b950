// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Waits in progress (waiting.h) as text and JSON: the stalls that the
 * histograms cannot show until they end.
 */
#include <string.h>

#include "json.h"
#include "ops.h"
#include "render.h"
#include "render_json_ops.h"
#include "titles.h"
#include "util.h"

/* "write 16 KiB at 4 MiB", "read 2 B at 4,095 B", "fsync", "" when the op is unknown */
static char *op_text(char *buf, size_t len, const struct ilock_op_info *o)
{
	char l[48], a[24], b[24];

	if (o->op == ILOCK_OP_UNKNOWN) {
		snprintf(buf, len, "%s", "");
		return buf;
	}
	op_label(l, sizeof(l), o->op, o->flags & ILOCK_OPF_KEY_MASK);
	if (!(o->flags & ILOCK_OPF_RANGE))
		snprintf(buf, len, "%s", l);
	else if (o->end == ILOCK_RANGE_EOF)
		snprintf(buf, len, "%s from %s to EOF", l, fmt_offset(a, sizeof(a), o->start));
	else
		snprintf(buf, len, "%s %s at %s", l,
			 fmt_offset(a, sizeof(a), o->end > o->start ? o->end - o->start : 0),
			 fmt_offset(b, sizeof(b), o->start));
	return buf;
}

/* "1.50 s", or ">1.50 s" for a wait begun before tracing (its age a lower bound) */
static char *fmt_age(char *buf, size_t len, const struct ilock_waiting *w)
{
	char a[24];

	fmt_ns(a, sizeof(a), waiting_age_ns(w));
	snprintf(buf, len, "%s%s", w->before_trace ? ">" : "", a);
	return buf;
}

/*
 * Who holds it now. A writer's state says what it is doing (D: itself
 * waiting, most often on I/O); a reader's pid is only a hint, its state
 * not worth showing.
 */
static char *fmt_owner_now(char *buf, size_t len, const struct ilock_waiting *w)
{
	char s[80];

	if (w->owner_mode == ILOCK_MODE_EXCL && w->owner_pid == w->holder_pid &&
	    w->holder_mode == ILOCK_MODE_EXCL)
		snprintf(s, sizeof(s), "the same thread");
	else
		fmt_holder_task(s, sizeof(s), w->owner_comm, w->owner_pid, w->owner_mode);
	if (waiting_owner_state(w))
		snprintf(buf, len, "%s, state %c", s, waiting_owner_state(w));
	else
		snprintf(buf, len, "%s", s);
	return buf;
}

/* Would a range lock have let it through? Said only when both ranges are known. */
static const char *range_note(const struct ilock_waiting *w)
{
	switch (ilock_pair_range(&w->hop, &w->wop, w->holder_mode, w->key.mode)) {
	case ILOCK_RANGE_DISJOINT: return "; ranges disjoint: a range lock would not block it";
	case ILOCK_RANGE_OVERLAP: return "; ranges overlap";
	default: return "";
	}
}

static void lock_label(char *buf, size_t len, const struct snapshot *s,
		       const struct report_meta *m, const struct ilock_waiting *w)
{
	struct inode_view v;
	char l[2 * ILOCK_PATH_MAX + 64];

	describe_inode(s, m->mounts, w->key.dev, w->key.ino, w->key.gen, false, &v);
	inode_label(l, sizeof(l), &v, w->key.dev, w->key.ino);
	snprintf(buf, len, "%s %s", l, class_display_name(w->key.class, v.magic));
}

/* An fsync's file: its path, without a lock class. */
static void file_label(char *buf, size_t len, const struct snapshot *s,
		       const struct report_meta *m, const struct ilock_waiting *w)
{
	struct inode_view v;

	describe_inode(s, m->mounts, w->key.dev, w->key.ino, w->key.gen, false, &v);
	inode_label(buf, len, &v, w->key.dev, w->key.ino);
}

char *fmt_fsync_journal(char *buf, size_t len, const struct ilock_waiting *w)
{
	char who[80], age[24];
	char st = waiting_owner_state(w);

	if (w->owner_mode != ILOCK_MODE_EXCL) {
		snprintf(buf, len, "no journal commit seen since tracing began: it writes its data "
				   "back, or the fs has no journal");
		return buf;
	}
	fmt_task(who, sizeof(who), w->owner_comm, w->owner_pid);
	if (st)
		snprintf(who + strlen(who), sizeof(who) - strlen(who), ", state %c", st);
	if (waiting_commit_ns(w))
		snprintf(buf, len, "journal commit of transaction %u running for %s, by %s",
			 w->commit_tid, fmt_ns(age, sizeof(age), waiting_commit_ns(w)), who);
	else
		snprintf(buf, len, "no commit of transaction %u running: it writes its data back, "
				   "or waits for the commit to start (journal %s)", w->need_tid, who);
	return buf;
}

void render_waiting_in_short(FILE *f, const struct snapshot *s, const struct report_meta *m)
{
	const struct waiting_set *ws = &s->waiting;
	const struct ilock_waiting *w;
	char age[24], who[40], lock[2 * ILOCK_PATH_MAX + 32], h[96], now[120], jn[200], op[80];

	if (!waiting_over(ws, WAITING_ALARM_NS))
		return;
	w = &ws->w[0];
	if (waiting_is_fsync(w)) {
		file_label(lock, sizeof(lock), s, m, w);
		fprintf(f, "  STALLED: %s has been in %s of %s for %s so far; %s (WAITING NOW below)\n",
			fmt_task(who, sizeof(who), w->comm, w->tid), op_text(op, sizeof(op), &w->wop),
			lock, fmt_ns(age, sizeof(age), waiting_age_ns(w)),
			fmt_fsync_journal(jn, sizeof(jn), w));
		return;
	}
	lock_label(lock, sizeof(lock), s, m, w);
	fmt_owner_now(now, sizeof(now), w);
	if (w->before_trace) {
		fprintf(f, "  STALLED: %s has waited more than %s, since before tracing began, %s, "
			   "for %s; held now by %s (WAITING NOW below)\n",
			fmt_task(who, sizeof(who), w->comm, w->tid),
			fmt_ns(age, sizeof(age), waiting_age_ns(w)), mode_name(w->key.mode), lock, now);
		return;
	}
	fmt_holder_task(h, sizeof(h), w->holder_comm, w->holder_pid, w->holder_mode);
	fprintf(f, "  STALLED: %s has waited %s so far, %s, for %s, held at the start by %s; held "
		   "now by %s (WAITING NOW below)\n",
		fmt_task(who, sizeof(who), w->comm, w->tid), fmt_ns(age, sizeof(age), waiting_age_ns(w)),
		mode_name(w->key.mode), lock, h, now);
}

/* The second line of a wait: its holders, the range verdict; an fsync's journal. */
static void holders_line(FILE *f, const struct ilock_waiting *w)
{
	char h[96], hop[80], now[120];

	if (waiting_is_fsync(w)) {
		char jn[200];

		fprintf(f, "  %-9s %s\n", "", fmt_fsync_journal(jn, sizeof(jn), w));
		return;
	}

	if (w->before_trace) {
		fprintf(f, "  %-9s began before tracing, its holder then not seen; now held by %s\n",
			"", fmt_owner_now(now, sizeof(now), w));
		return;
	}
	op_text(hop, sizeof(hop), &w->hop);
	fmt_holder_task(h, sizeof(h), w->holder_comm, w->holder_pid, w->holder_mode);
	fprintf(f, "  %-9s held at the start by %s%s%s; now by %s%s\n", "", h, hop[0] ? ", " : "",
		hop, fmt_owner_now(now, sizeof(now), w), range_note(w));
}

/*
 * Two lines a wait: the waiter and its lock, then its holders. Ops with
 * byte ranges are too long for columns, and a stall list is short.
 */
void render_waiting_text(FILE *f, const struct snapshot *s, const struct report_meta *m)
{
	const struct waiting_set *ws = &s->waiting;
	size_t n = waiting_over(ws, WAITING_STALL_NS);
	char lim[24], tot[24];

	if (!n)
		return;
	fprintf(f, "\nWAITING NOW (in progress for %s or more, oldest first; %s in progress in all)\n",
		fmt_ns(lim, sizeof(lim), WAITING_STALL_NS), fmt_count(tot, sizeof(tot), ws->total));
	for (size_t i = 0; i < n; i++) {
		const struct ilock_waiting *w = &ws->w[i];
		char age[24], t[40], op[80], lock[2 * ILOCK_PATH_MAX + 32];

		fmt_task(t, sizeof(t), w->comm, w->tid);
		op_text(op, sizeof(op), &w->wop);
		if (waiting_is_fsync(w)) {
			file_label(lock, sizeof(lock), s, m, w);
			fprintf(f, "  %-9s %s %s of %s\n", fmt_ns(age, sizeof(age), waiting_age_ns(w)),
				t, op, lock);
		} else {
			lock_label(lock, sizeof(lock), s, m, w);
			fprintf(f, "  %-9s %s %s%s%s on %s\n", fmt_age(age, sizeof(age), w), t,
				mode_name(w->key.mode), op[0] ? ", " : "", op, lock);
		}
		holders_line(f, w);
	}
	if (ws->total > ws->n && n == ws->n)
		fprintf(f, "  ... and more: only the %d oldest are kept\n", WAITING_KEEP);
}

void render_waiting_lock(FILE *f, const struct waiting_set *ws, uint32_t dev, uint64_t ino,
			 uint32_t gen, uint8_t class)
{
	bool any = false;

	for (size_t i = 0; i < ws->n; i++) {
		const struct ilock_waiting *w = &ws->w[i];
		char age[24], t[40], op[80];

		/* stalls only: a hot lock always has short waits in progress */
		if (waiting_age_ns(w) < WAITING_STALL_NS)
			break;
		if (w->key.dev != dev || w->key.ino != ino || w->key.gen != gen || w->key.class != class)
			continue;
		if (!any)
			fprintf(f, "\nWAITING NOW on this lock (in progress for 100 ms or more when last "
				   "read, oldest first)\n");
		any = true;
		fmt_task(t, sizeof(t), w->comm, w->tid);
		op_text(op, sizeof(op), &w->wop);
		if (waiting_is_fsync(w))
			fprintf(f, "  %-9s %s %s\n", fmt_ns(age, sizeof(age), waiting_age_ns(w)), t, op);
		else
			fprintf(f, "  %-9s %s %s%s%s\n", fmt_age(age, sizeof(age), w), t,
				mode_name(w->key.mode), op[0] ? ", " : "", op);
		holders_line(f, w);
	}
}

static void side_json(struct json *j, const char *key, const struct titles *t, uint32_t pid,
		      uint32_t tgid, const char *comm, uint8_t mode, const struct ilock_op_info *op)
{
	char c[ILOCK_COMM_LEN + 1];

	str_copy(c, sizeof(c), comm, ILOCK_COMM_LEN);
	json_obj_begin(j, key);
	json_u64(j, "pid", pid);
	json_u64(j, "tgid", tgid);
	json_str(j, "comm", c[0] ? c : NULL);
	json_str(j, "title", titles_get(t, pid, comm));
	json_str(j, "mode", mode_name(mode));
	if (op) {
		json_str(j, "op", op_name(op->op));
		/* as the pairs have them: "extending", "append", ... */
		render_json_op_flags(j, op->flags & ILOCK_OPF_KEY_MASK);
		if (op->flags & ILOCK_OPF_RANGE) {
			json_u64(j, "offset", op->start);
			if (op->end == ILOCK_RANGE_EOF)
				json_null(j, "end");
			else
				json_u64(j, "end", op->end);
		}
	}
	json_obj_end(j);
}

void render_waiting_json(struct json *j, const struct snapshot *s, const struct report_meta *m)
{
	const struct waiting_set *ws = &s->waiting;

	json_obj_begin(j, "waiting_now");
	json_bool(j, "available", ws->available);
	json_u64(j, "in_progress", ws->total);
	json_u64(j, "running_left_out", ws->running);
	json_u64(j, "stall_ns", WAITING_STALL_NS);
	json_arr_begin(j, "waits");
	for (size_t i = 0; i < ws->n; i++) {
		const struct ilock_waiting *w = &ws->w[i];
		struct inode_view v;
		char d[24];

		describe_inode(s, m->mounts, w->key.dev, w->key.ino, w->key.gen, false, &v);
		json_obj_begin(j, NULL);
		json_str(j, "kind", waiting_is_fsync(w) ? "fsync" : "lock_wait");
		json_u64(j, "waited_ns", waiting_age_ns(w));
		/* true: waited_ns is since tracing began, a lower bound; no holder at the start */
		json_bool(j, "began_before_tracing", w->before_trace);
		json_str(j, "dev", fmt_kdev(d, sizeof(d), w->key.dev));
		json_u64(j, "ino", w->key.ino);
		json_u64(j, "gen", w->key.gen);
		json_str(j, "path", v.path[0] ? v.path : NULL);
		json_str(j, "fs", v.fs);
		json_str(j, "class", class_name(w->key.class));
		json_str(j, "class_fs_name", class_display_name(w->key.class, v.magic));
		json_u64(j, "weight", w->weight);
		json_str(j, "range", range_group_name(ilock_pair_range(&w->hop, &w->wop,
									w->holder_mode, w->key.mode)));
		side_json(j, "waiter", m->titles, w->tid, w->tgid, w->comm, w->key.mode, &w->wop);
		side_json(j, "holder", m->titles, w->holder_pid, w->holder_tgid, w->holder_comm,
			  w->holder_mode, &w->hop);
		side_json(j, "owner_now", m->titles, w->owner_pid, w->owner_tgid, w->owner_comm,
			  w->owner_mode, NULL);
		{
			char st[2] = { waiting_owner_state(w), 0 };

			json_str(j, "owner_state", st[0] ? st : NULL);
		}
		if (waiting_is_fsync(w)) {
			/* the owner is the journal's commit thread */
			json_obj_begin(j, "journal");
			json_u64(j, "need_tid", w->need_tid);
			if (waiting_commit_ns(w)) {
				json_u64(j, "commit_tid", w->commit_tid);
				json_u64(j, "commit_running_ns", waiting_commit_ns(w));
			} else {
				json_null(j, "commit_tid");
				json_null(j, "commit_running_ns");
			}
			json_obj_end(j);
		}
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}
