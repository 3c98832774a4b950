// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `ilocktop` / `ilock top`: the live view. Start the tracer (every error
 * is printed before the screen is taken), then every interval read the
 * maps, rebuild the view model and draw it: on a curses screen, or as one
 * plain table per interval with -b or when stdout is not a terminal.
 */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "log.h"
#include "outguard.h"
#include "signals.h"
#include "top_app.h"
#include "util.h"

#define NS_PER_S 1000000000ULL
/* Batch mode is for logs: wide enough that paths are rarely cut. */
#define BATCH_WIDTH 200

/* ------------------------------------------------------- app state */

static void follow_selection(struct top_app *a)
{
	long i;

	if (a->batch)
		return;
	/* while its lock stays among the sorted rows, the cursor stays on it */
	i = a->sel_id.set ? top_view_find(&a->view, a->sel_id.dev, a->sel_id.ino, a->sel_id.gen,
					  a->sel_id.class) : -1;
	if (i >= 0 && i < (long)a->view.sorted)
		a->sel = i;
	if (a->sel >= (long)a->view.nrows)
		a->sel = (long)a->view.nrows - 1;
	if (a->sel < 0)
		a->sel = 0;
	if (a->view.nrows) {
		const struct top_row *r = &a->view.rows[a->sel];

		a->sel_id = (struct lock_id){ true, r->dev, r->ino, r->gen, r->class };
	}
}

/* Rows a screen or a batch table may show: the rest need not be in order. */
static size_t rows_wanted(const struct top_app *a)
{
	if (a->batch)
		return a->o.top_n > 0 ? (size_t)a->o.top_n : 0;
	return (size_t)(a->top > a->sel ? a->top : a->sel) + 256;
}

int top_app_window(struct top_app *a, const struct snapshot **win, const struct snapshot **edges,
		   double *secs)
{
	const struct snapshot *latest = sampler_latest(&a->smp);

	if (!a->cumulative) {
		*win = *edges = &a->smp.delta;
		*secs = a->smp.window_s;
		return 0;
	}
	if (a->have_retired) {
		/* as merged at the last rebuild: the view's rows point into it */
		*win = *edges = &a->cum_view;
		*secs = (double)(latest->mono_ns - a->start_mono_ns) / 1e9;
		return 0;
	}
	*win = latest;
	*edges = top_store_edges(&a->smp.store);
	*secs = (double)(latest->mono_ns - a->t.start_mono_ns) / 1e9;
	return *edges ? 0 : -ENOMEM;
}

/*
 * The totals since start into dst: the current tables' waits and pairs,
 * copied whole (a memcpy each), the small retired part laid under them.
 */
static int cum_totals(struct top_app *a, struct snapshot *dst)
{
	const struct snapshot *edges = top_store_edges(&a->smp.store);
	int err;

	if (!edges)
		return -ENOMEM;
	if ((err = snap_copy(dst, sampler_latest(&a->smp))) || (err = snap_copy_edges(dst, edges)))
		return err;
	return a->have_retired ? snap_merge_under(dst, &a->retired) : 0;
}

int top_app_rebuild(struct top_app *a)
{
	const struct snapshot *latest = sampler_latest(&a->smp), *win, *edges;
	double secs;
	int err;

	if (a->cumulative && a->have_retired && (err = cum_totals(a, &a->cum_view)))
		return err;
	if (!a->cumulative && a->cum_view.cap_locks)
		snap_free(&a->cum_view);  /* a copy of the totals: held only while shown */
	err = top_app_window(a, &win, &edges, &secs);
	if (err)
		return err;

	/* a path filter needs every candidate's path: look up the missing ones once */
	if (a->filter.text[0])
		for (size_t i = 0; i < win->nlocks; i++)
			sampler_ensure_inode(&a->smp, win->locks[i].dev, win->locks[i].ino,
					     win->locks[i].gen);
	err = top_view_build(&a->view, win, edges, latest, &a->mt, secs, a->cumulative, &a->filter);
	if (err)
		return err;
	top_view_sort(&a->view, a->sort, rows_wanted(a));
	follow_selection(a);
	/* the view no longer points into the last tracer's snapshots */
	if (a->have_old_smp && !a->old_pending) {
		sampler_free(&a->old_smp);
		a->have_old_smp = false;
	}
	return 0;
}

void top_app_resort(struct top_app *a)
{
	top_view_sort(&a->view, a->sort, rows_wanted(a));
	follow_selection(a);
}

/*
 * One read of the maps; the titles of the threads new in it, read while
 * they run (the detail view shows them).
 */
static int top_app_sample(struct top_app *a)
{
	struct top_sampler *s = &a->smp;
	int err = sampler_sample(s);

	if (err)
		return err;
	/*
	 * The first interval after fresh tables: the old tracer's last read
	 * (from the tick before to the handover) joins the fresh one's, so the
	 * interval is whole.
	 */
	if (a->have_old_smp && a->old_pending) {
		err = sampler_prepend(s, &a->old_smp.delta);
		if (err)
			return err;
		a->old_pending = false;
	}
	titles_note_snapshot(&a->titles, &s->delta);
	for (int i = 0; i < ILOCK_COUNTER_MAX; i++)
		a->counters[i] = a->lost_carry[i] + sampler_latest(s)->counters[i];
	return 0;
}

/* A path the old tracer's maps gave, into the fresh sampler's (they never saw the inode yet). */
static void carry_meta(struct top_app *a, const struct inode_meta *m)
{
	if (m && !snap_find_inode(&a->smp.store.cum, m->dev, m->ino, m->gen))
		snap_add_inode(&a->smp.store.cum, m);  /* out of memory: shown by number */
}

static void carry_inode(struct top_app *a, uint32_t dev, uint64_t ino, uint32_t gen)
{
	carry_meta(a, snap_find_inode(&a->old_smp.store.cum, dev, ino, gen));
}

/*
 * The old tracer's totals, with those retired before, compacted for the
 * cumulative view. Out of memory, that view counts from the renewal on
 * (and says so).
 */
static void retire_cum(struct top_app *a)
{
	struct snapshot all, kept;
	int err;

	snap_init(&all);
	snap_init(&kept);
	err = cum_totals(a, &all);
	if (!err)
		err = top_retire(&kept, &all, TOP_RETIRE_KEEP);
	snap_free(&all);
	if (err) {
		snap_free(&kept);
		snap_reset(&a->retired);
		a->have_retired = false;
		return;
	}
	snap_free(&a->retired);
	a->retired = kept;
	a->have_retired = true;
}

/*
 * The old tracer's stacks, for the detail view, of the locks the cumulative
 * view keeps whole. Should they not fit, the view shows them from the
 * renewal on, as before.
 */
static void keep_stacks(struct top_app *a)
{
	struct snapshot all;

	if (!a->have_retired)
		return;
	snap_init(&all);
	if (sampler_read_all_stacks(&a->smp, &all) == 0)
		kept_stacks_add(&a->kept_stacks, &all, &a->retired);
	snap_free(&all);
}

/* --renew allows a renewal now, and a table is full enough for one: the fullest, or -1 */
static int renew_due(const struct top_app *a, uint64_t now)
{
	return table_renew_due(sampler_latest(&a->smp)->tables, a->o.renew_s, now,
			       a->renew_not_before);
}

int top_app_maybe_renew(struct top_app *a)
{
	uint64_t every = (uint64_t)(a->o.renew_s * 1e9), tick, cpu;
	struct tracer fresh;
	char msg[sizeof(a->renew_note)], why[200];
	int t = renew_due(a, now_monotonic_ns()), err;

	if (t < 0)
		return 0;
	table_alarm_text(why, sizeof(why), sampler_latest(&a->smp)->tables, t);
	/*
	 * Loading takes a second or two, while the old tracer traces on; the
	 * screen waits, and the messages go to the status line, not over it.
	 */
	err = tracer_start_fresh(&fresh, &a->o, msg, sizeof(msg));
	a->renewed_mono_ns = now_monotonic_ns();
	a->renew_not_before = a->renewed_mono_ns + every;
	if (err) {
		a->renew_failed = true;
		snprintf(a->renew_note, sizeof(a->renew_note), "%s", msg[0] ? msg : strerror(-err));
		return 0;
	}
	/*
	 * The handover, then the old tracer's last read, from the tick before
	 * to now; top_app_sample() adds it to the next interval.
	 */
	tracer_hand_over(&a->t, &fresh);
	tick = a->smp.store.cum.mono_ns;
	cpu = a->smp.cpu_ns;
	err = top_app_sample(a);
	if (err) {
		/* the old tables' last moments are lost: only the rates of one interval */
		snap_reset(&a->smp.delta);
	}
	/* the view is of the old tracer's last read until the next interval's */
	err = top_app_rebuild(a);
	if (err)
		return err;
	memcpy(a->lost_carry, a->counters, sizeof(a->lost_carry));
	retire_cum(a);
	keep_stacks(a);
	tracer_stop(&a->t);
	tracer_move(&a->t, &fresh);
	if (a->have_old_smp)  /* not after a sample and a rebuild: cannot be, but never leak */
		sampler_free(&a->old_smp);
	a->old_smp = a->smp;
	a->have_old_smp = true;
	a->old_pending = true;
	if (sampler_init(&a->smp, &a->t))
		return -ENOMEM;
	/* the next interval runs from the tick before, through the handover and the load */
	a->smp.store.cum.mono_ns = a->smp.delta.mono_ns = tick;
	a->smp.cpu_ns = cpu;
	/*
	 * The paths of the locks on screen and in the detail view: the next
	 * interval shows the old tables' last read too, and an inode keeps
	 * its path until it waits again.
	 */
	for (size_t i = 0; i < a->view.nrows; i++)
		carry_inode(a, a->view.rows[i].dev, a->view.rows[i].ino, a->view.rows[i].gen);
	if (a->detail)
		carry_inode(a, a->detail_id.dev, a->detail_id.ino, a->detail_id.gen);
	/* ... and those of the cumulative view's retired rows */
	for (size_t i = 0; a->have_retired && i < a->retired.ninodes; i++)
		carry_meta(a, &a->retired.inodes[i]);
	a->renewals++;
	a->renew_failed = false;
	snprintf(a->renew_note, sizeof(a->renew_note), "the %s", why);
	a->stacks_read = false;  /* stack ids are the old tracer's */
	if (a->detail)  /* the detail view's hold times, from the fresh tables */
		sampler_follow_holds(&a->smp, a->detail_id.dev, a->detail_id.ino, a->detail_id.gen,
				     a->detail_id.class);
	return 0;
}

void top_app_prepare_rows(struct top_app *a, size_t from, size_t to)
{
	top_view_prepare(&a->view, to);
	for (size_t i = from; i < to && i < a->view.nrows; i++) {
		const struct top_row *r = &a->view.rows[i];

		/* and its path looked at again now and then: renamed or gone since */
		if (sampler_ensure_inode(&a->smp, r->dev, r->ino, r->gen))
			path_fixes_apply_one(&a->fixes, &a->smp.store.cum, &a->mt, r->dev, r->ino,
					     r->gen, now_monotonic_ns());
	}
}

void top_app_status(const struct top_app *a, struct top_status *st)
{
	const struct snapshot *latest = sampler_latest(&a->smp);

	memset(st, 0, sizeof(*st));
	st->host = a->host;
	st->kernel = a->t.probe.kernel;
	st->uptime_s = (double)(now_monotonic_ns() - a->start_mono_ns) / 1e9;
	st->interval_s = a->o.interval_s;
	st->window_s = a->view.secs;
	st->attach = a->t.attach;
	st->nattach = a->t.nattach;
	st->events_ps = a->smp.events_ps;
	st->waits_ps = a->smp.waits_ps;
	st->tasks_waiting = top_view_tasks_waiting(&a->view);
	st->in_flight = latest->in_flight;
	/* in the cumulative view, the locks of the tables before too */
	st->tracked = a->cumulative && a->have_retired ? a->cum_view.nlocks : latest->nlocks;
	st->active = a->view.total;
	st->shown = a->view.nrows;
	st->lost = a->counters;
	st->lost_window = a->smp.lost_window;
	st->undercount_window = a->smp.undercount_window;
	st->tables = latest->tables;
	st->renew_s = a->o.renew_s;
	st->renewing = a->renewing;
	st->renewals = a->renewals;
	st->renew_failed = a->renew_failed;
	st->renew_note = a->renew_note;
	st->cum_from_renewal = a->renewals && !a->have_retired;
	st->since_renewal_s = a->renewed_mono_ns ?
		(double)(now_monotonic_ns() - a->renewed_mono_ns) / 1e9 : -1;
	st->renew_in_s = (double)(int64_t)(a->renew_not_before - now_monotonic_ns()) / 1e9;
	st->bpf_stats = a->smp.bpf_stats;
	st->bpf_ns_ps = a->smp.bpf_ns_ps;
	st->cpu_pct = a->smp.cpu_pct;
	st->cumulative = a->cumulative;
	st->paused = a->paused;
	st->sort = a->sort;
	st->filter = a->filter.text;
	st->traced = a->traced;
	st->stalled = waiting_over(&latest->waiting, WAITING_ALARM_NS);
	if (st->stalled) {
		const struct ilock_waiting *w = &latest->waiting.w[0];
		char label[2 * ILOCK_PATH_MAX + 64], path[48];
		struct inode_view v;

		st->stall = w;
		top_inode_label(label, sizeof(label), &v, latest, &a->mt, w->key.dev, w->key.ino,
				w->key.gen, false);
		/* short from the left, so that the line still has room for the holder */
		snprintf(st->stall_lock, sizeof(st->stall_lock), "%s %s",
			 fmt_path_left(path, sizeof(path), label, 40),
			 top_class_name(w->key.class, v.magic));
	}
}

static int load_mounts(struct top_app *a)
{
	mounts_free(&a->mt);
	return mounts_load(&a->mt);
}

void top_app_check_mounts(struct top_app *a)
{
	struct pollfd p = { .fd = a->mount_fd, .events = POLLPRI };

	/* mountinfo raises POLLPRI|POLLERR once per change in the mount table */
	if (a->mount_fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLPRI | POLLERR)))
		load_mounts(a);
}

/* ------------------------------------------------------------ batch */

static void emit_plain(void *ctx, enum top_line_kind kind, const char *line)
{
	FILE *f = ctx;

	/* no colours in a log: the alert gets a marker that grep finds */
	fprintf(f, "%s%s\n", kind == TOP_LINE_ALERT ? "!! " : "", line);
}

static void print_batch(struct top_app *a, FILE *f, long iteration)
{
	const struct snapshot *meta = sampler_latest(&a->smp);
	struct top_status st;
	struct top_layout l;
	char line[2048];
	size_t rows = a->view.nrows;

	if (a->o.top_n > 0 && rows > (size_t)a->o.top_n)
		rows = (size_t)a->o.top_n;
	top_app_prepare_rows(a, 0, rows);
	fprintf(f, "--- interval %ld ---\n", iteration);
	top_app_status(a, &st);
	top_format_status(&st, 0, emit_plain, f);
	top_layout_compute(&l, BATCH_WIDTH, a->cumulative);
	top_format_header(line, sizeof(line), &l, a->sort);
	fprintf(f, "%s\n", line);
	for (size_t i = 0; i < rows; i++) {
		const struct top_row *r = &a->view.rows[i];
		char label[2 * ILOCK_PATH_MAX + 64];
		struct inode_view v;

		top_inode_label(label, sizeof(label), &v, meta, &a->mt, r->dev, r->ino, r->gen,
				r->has_hold);
		top_format_row(line, sizeof(line), &l, r, label, &v, &a->titles);
		fprintf(f, "%s\n", line);
	}
	if (!a->view.nrows)
		fprintf(f, "(no inode lock waits in this interval)\n");
	else if (rows < a->view.nrows)
		fprintf(f, "(%zu more row%s; --rows 0 shows all)\n", a->view.nrows - rows,
			plural(a->view.nrows - rows));
	fputc('\n', f);
	fflush(f);
}

static void sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(deadline_ns / NS_PER_S),
			       .tv_nsec = (long)(deadline_ns % NS_PER_S) };

	while (!stop_requested && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* A stop came while batch output waited for its reader: no probes meanwhile. */
static void batch_detach(void *ctx)
{
	tracer_stop(&((struct top_app *)ctx)->t);
}

static int run_batch(struct top_app *a)
{
	uint64_t interval_ns = (uint64_t)(a->o.interval_s * 1e9);
	uint64_t tick = a->t.start_mono_ns + interval_ns;
	int err;

	outguard_stdout();
	/* the loop reads the tracer again only if no stop was asked for */
	outguard_on_stop(batch_detach, a);
	for (long i = 1; !stop_requested && (!a->o.iterations || i <= a->o.iterations); i++) {
		sleep_until(tick);
		if (stop_requested)
			break;
		err = top_app_sample(a);
		if (err) {
			log_error("reading the BPF maps failed: %s", strerror(-err));
			return err;
		}
		top_app_check_mounts(a);
		err = top_app_rebuild(a);
		if (err) {
			log_error("out of memory");
			return err;
		}
		errno = 0;
		print_batch(a, stdout, i);
		if (ferror(stdout)) {
			int e = errno;

			/*
			 * A closed pipe (head -n) is a normal end for batch
			 * output; any other write error (a full disk) is not.
			 * Either way the output is dropped and cleared, so
			 * that main() does not say it again.
			 */
			if (outguard_reader_left())
				return 0;
			__fpurge(stdout);
			clearerr(stdout);
			log_error("writing the output failed: %s", strerror(e ? e : EIO));
			return -EIO;
		}
		if (top_app_maybe_renew(a)) {
			log_error("out of memory");
			return -ENOMEM;
		}
		tick = top_next_deadline(tick, interval_ns, now_monotonic_ns());
	}
	return 0;
}

/* ------------------------------------------------------ interactive */

static int run_screen(struct top_app *a)
{
	uint64_t interval_ns = (uint64_t)(a->o.interval_s * 1e9);
	uint64_t tick = a->t.start_mono_ns + interval_ns;
	bool dirty = true;
	int err = 0;

	while (!a->quit && !stop_requested) {
		struct pollfd pfd[2] = {
			{ .fd = STDIN_FILENO, .events = POLLIN },
			{ .fd = a->mount_fd, .events = POLLPRI },
		};
		uint64_t now;
		struct timespec ts;
		int r;

		if (resize_pending) {
			resize_pending = 0;
			ui_resize();
			dirty = true;
		}
		now = now_monotonic_ns();
		if (now >= tick) {
			if (!a->paused) {
				err = top_app_sample(a);
				if (err) {
					snprintf(a->failbuf, sizeof(a->failbuf),
						 "reading the BPF maps failed: %s", strerror(-err));
					a->fail = a->failbuf;
					break;
				}
				err = top_app_rebuild(a);
				if (err)
					break;
				a->stacks_read = false;  /* the detail view reads them again */
				dirty = true;
				/* a full table: the status line says so while the new tracer loads */
				if (renew_due(a, now) >= 0) {
					a->renewing = true;
					ui_draw(a);
					err = top_app_maybe_renew(a);
					a->renewing = false;
					if (err)
						break;
				}
			}
			tick = top_next_deadline(tick, interval_ns, now);
			continue;
		}
		if (dirty) {
			ui_draw(a);
			dirty = false;
		}
		ts.tv_sec = (time_t)((tick - now) / NS_PER_S);
		ts.tv_nsec = (long)((tick - now) % NS_PER_S);
		r = ppoll(pfd, a->mount_fd >= 0 ? 2 : 1, &ts, NULL);
		if (r < 0) {
			if (errno == EINTR)
				continue;  /* a signal: stop or resize, checked above */
			err = -errno;
			break;
		}
		if (r == 0)
			continue;
		if (pfd[1].revents & (POLLPRI | POLLERR)) {
			load_mounts(a);
			dirty = true;
		}
		if (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
			/* the terminal went away: nobody to draw for */
			break;
		}
		if (pfd[0].revents & POLLIN) {
			ui_keys(a);
			dirty = true;
		}
	}
	return err;
}

/* -------------------------------------------------------------- main */

static void at_exit_restore(void)
{
	ui_close();
}

static bool terminal_usable(void)
{
	int e = 0;
	char *cup;

	if (setupterm(NULL, STDOUT_FILENO, &e) != OK)
		return false;
	/* a terminal that cannot move its cursor (TERM=dumb) cannot show a screen */
	cup = tigetstr("cup");
	del_curterm(cur_term);
	return cup && cup != (char *)-1;
}

int cmd_top(int argc, char **argv)
{
	struct top_app *a;
	char err[256];
	bool batch;
	int r, ret = 1;

	/* `ilock top` too: the shared code's messages name the view the user sees */
	log_set_prog("ilocktop");
	a = calloc(1, sizeof(*a));
	if (!a) {
		fprintf(stderr, "ilocktop: out of memory\n");
		return 1;
	}
	a->mount_fd = -1;
	snap_init(&a->stacks);
	kept_stacks_init(&a->kept_stacks);
	snap_init(&a->retired);
	snap_init(&a->cum_view);
	path_fixes_init(&a->fixes, PATHCHECK_EVERY_NS);
	r = cli_parse(CLI_TOP, argc, argv, &a->o, err, sizeof(err));
	if (r == 1) {
		cli_usage(CLI_TOP, stdout);
		free(a);
		return 0;
	}
	/* shared flags that mean nothing here: say so rather than ignore them */
	if (!r && a->o.json) {
		snprintf(err, sizeof(err), "-j: no JSON here; use `ilock stat -j` or `ilock export`");
		r = -1;
	} else if (!r && a->o.duration_s) {
		snprintf(err, sizeof(err), "-d: ilocktop runs until q; use -n ITERATIONS with -b");
		r = -1;
	}
	if (r < 0) {
		fprintf(stderr, "ilocktop: %s\n", err);
		cli_usage_brief(CLI_TOP, stderr);
		free(a);
		return 2;
	}
	batch = a->o.batch || !isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO);
	a->batch = batch;
	if (!batch && a->o.iterations) {
		fprintf(stderr, "ilocktop: -n: the screen runs until q; -n counts intervals of batch "
				"output (-b)\n");
		cli_usage_brief(CLI_TOP, stderr);
		free(a);
		return 2;
	}
	if (!batch && !terminal_usable()) {
		fprintf(stderr, "ilocktop: cannot use terminal type '%s'; set TERM or use -b for "
				"batch output\n", getenv("TERM") ? getenv("TERM") : "(unset)");
		free(a);
		return 1;
	}
	a->sort = a->o.sort;
	if (gethostname(a->host, sizeof(a->host)))
		snprintf(a->host, sizeof(a->host), "?");
	a->host[sizeof(a->host) - 1] = 0;
	cli_filters_text(&a->o.f, a->traced, sizeof(a->traced));
	top_view_init(&a->view);
	/* a titles table zeroed by calloc works as is (titles.c); the filter reads it */
	a->filter.titles = &a->titles;

	signals_setup(ui_emergency_restore);
	/* loading and attaching take seconds: a blank terminal meanwhile looks hung */
	if (!batch && isatty(STDERR_FILENO))
		fprintf(stderr, "ilocktop: loading and attaching the probes (a few seconds)...\n");
	/* every error that can stop us comes here, before the screen is ours */
	if (tracer_start(&a->t, &a->o)) {
		free(a);
		return 1;
	}
	if (sampler_init(&a->smp, &a->t)) {
		log_error("out of memory");
		goto out;
	}
	a->start_mono_ns = a->t.start_mono_ns;
	a->renew_not_before = a->start_mono_ns + (uint64_t)(a->o.renew_s * 1e9);
	/* open before the first load: a change in between is then not missed */
	a->mount_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (load_mounts(a))
		log_warn("cannot read /proc/self/mountinfo: paths are shown relative to their filesystem");

	if (batch) {
		ret = run_batch(a) ? 1 : 0;
		outguard_on_stop(NULL, NULL);
		goto out;
	}
	atexit(at_exit_restore);
	if (ui_open()) {
		log_error("cannot start the screen (TERM=%s); use -b for batch output",
			  getenv("TERM") ? getenv("TERM") : "(unset)");
		goto out;
	}
	r = run_screen(a);
	/*
	 * Detach, then give the terminal back: restoring it writes to it, which
	 * blocks while its output is paused (Ctrl-S), with nothing attached then.
	 * The screen goes before the reason, so it is printed on a sane terminal.
	 */
	tracer_stop(&a->t);
	ui_close();
	if (r) {
		log_error("stopped: %s", a->fail ? a->fail : strerror(-r));
		goto out;
	}
	ret = 0;
out:
	ui_close();
	tracer_stop(&a->t);
	sampler_free(&a->smp);
	if (a->have_old_smp)
		sampler_free(&a->old_smp);
	top_view_free(&a->view);
	snap_free(&a->stacks);
	kept_stacks_free(&a->kept_stacks);
	snap_free(&a->retired);
	snap_free(&a->cum_view);
	ksyms_free(&a->ksyms);
	titles_free(&a->titles);
	path_fixes_free(&a->fixes);
	mounts_free(&a->mt);
	if (a->mount_fd >= 0)
		close(a->mount_fd);
	free(a);
	return ret;
}
