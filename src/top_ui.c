// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ilocktop's curses screen: draws the view model the pure code built and
 * turns keys into state changes. Every frame is erase() + wnoutrefresh() +
 * doupdate(), never clear(): curses then sends only what changed, so the
 * screen does not flicker.
 */
#include <ctype.h>
#include <curses.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>

#include "top_app.h"

#define PAIR_ALERT 1
#define PAIR_HEAD 2

static SCREEN *screen;
static volatile sig_atomic_t active;
static struct termios saved_tio;
static bool have_tio;
/* written by the signal-safe restore: the terminal's own reset strings */
static char restore_seq[128];
static size_t restore_len;

static void add_seq(const char *cap)
{
	char *s = tigetstr((char *)cap);
	size_t n;

	if (!s || s == (char *)-1)
		return;
	n = strlen(s);
	if (restore_len + n < sizeof(restore_seq)) {
		memcpy(restore_seq + restore_len, s, n);
		restore_len += n;
	}
}

int ui_open(void)
{
	have_tio = tcgetattr(STDIN_FILENO, &saved_tio) == 0;
	screen = newterm(NULL, stdout, stdin);
	if (!screen)
		return -1;
	set_term(screen);
	/*
	 * ncurses (6.4 at least) flushes its output after every cursor move
	 * until the screen has once been left and resumed: a frame went out
	 * in hundreds of small writes, each waking the terminal, which cost
	 * more CPU than reading 10,000 locks. Leaving and resuming once, before
	 * anything is drawn, makes every frame one write.
	 */
	endwin();
	doupdate();
	active = 1;
	add_seq("sgr0");
	add_seq("rmcup");
	add_seq("cnorm");
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	if (has_colors()) {
		start_color();
		use_default_colors();
		init_pair(PAIR_ALERT, COLOR_WHITE, COLOR_RED);
		init_pair(PAIR_HEAD, COLOR_BLACK, COLOR_CYAN);
	}
	return 0;
}

bool ui_active(void)
{
	return active;
}

void ui_close(void)
{
	if (!active)
		return;
	active = 0;
	curs_set(1);
	endwin();
	delscreen(screen);
	screen = NULL;
}

void ui_emergency_restore(void)
{
	if (!active)
		return;
	/* only write(2) and tcsetattr(3) here: we are in a signal handler */
	if (restore_len && write(STDOUT_FILENO, restore_seq, restore_len) < 0)
		return;
	if (write(STDOUT_FILENO, "\r\n", 2) < 0)
		return;
	if (have_tio)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

void ui_resize(void)
{
	struct winsize ws;

	if (!active)
		return;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col)
		resizeterm(ws.ws_row, ws.ws_col);
}

/* ------------------------------------------------------------ drawing */

struct draw_ctx {
	int y;
	int maxy;
};

static void put_line(int y, const char *s, attr_t attr)
{
	if (y < 0 || y >= LINES)
		return;
	if (attr)
		attron(attr);
	mvaddnstr(y, 0, s, COLS);
	if (attr & (A_REVERSE | A_COLOR)) {
		/* fill the bar to the edge */
		for (int x = (int)strlen(s); x < COLS; x++)
			mvaddch(y, x, ' ');
	}
	if (attr)
		attroff(attr);
}

static void emit_status(void *ctx, enum top_line_kind kind, const char *line)
{
	struct draw_ctx *d = ctx;
	attr_t attr = 0;

	if (kind == TOP_LINE_ALERT)
		attr = A_BOLD | (has_colors() ? COLOR_PAIR(PAIR_ALERT) : A_REVERSE);
	if (d->y < d->maxy)
		put_line(d->y, line, attr);
	d->y++;
}

static int page_rows(void)
{
	/* status (6) + column header + help line */
	int n = LINES - 8;

	return n > 1 ? n : 1;
}

static void keep_visible(struct top_app *a)
{
	long page = page_rows();

	if (a->sel >= (long)a->view.nrows)
		a->sel = (long)a->view.nrows - 1;
	if (a->sel < 0)
		a->sel = 0;
	if (a->top > a->sel)
		a->top = a->sel;
	if (a->sel >= a->top + page)
		a->top = a->sel - page + 1;
	if (a->top < 0)
		a->top = 0;
}

static void draw_table(struct top_app *a, int y0, int y1)
{
	const struct snapshot *meta = sampler_latest(&a->smp);
	attr_t head = A_BOLD | (has_colors() ? COLOR_PAIR(PAIR_HEAD) : A_REVERSE);
	struct top_layout l;
	char line[2048];

	top_layout_compute(&l, COLS, a->cumulative);
	top_format_header(line, sizeof(line), &l, a->sort);
	put_line(y0++, line, head);
	if (!a->view.nrows) {
		put_line(y0, a->filter.text[0] ? "  (no lock matches the filter)"
			 : a->smp.samples ? "  (no inode lock waits in this window)"
					  : "  (waiting for the first interval)", 0);
		return;
	}
	keep_visible(a);
	top_app_prepare_rows(a, (size_t)a->top, (size_t)(a->top + (y1 - y0)));
	for (long i = a->top; i < (long)a->view.nrows && y0 < y1; i++, y0++) {
		const struct top_row *r = &a->view.rows[i];
		char label[2 * ILOCK_PATH_MAX + 64];
		struct inode_view v;

		top_inode_label(label, sizeof(label), &v, meta, &a->mt, r->dev, r->ino, r->gen,
				r->has_hold);
		top_format_row(line, sizeof(line), &l, r, label, &v, &a->titles);
		put_line(y0, line, i == a->sel ? A_REVERSE | A_BOLD : 0);
	}
}

static void draw_detail(struct top_app *a, int y0, int y1)
{
	const struct snapshot *win, *edges;
	double secs;
	char *text = NULL, *p;
	size_t size = 0;
	FILE *f;
	long nlines = 0, line_no = 0;

	if (top_app_window(a, &win, &edges, &secs) || !(f = open_memstream(&text, &size))) {
		put_line(y0, "  (out of memory)", 0);
		return;
	}
	if (!a->ksyms_tried) {
		/* once: frames are named when /proc/kallsyms shows addresses */
		a->ksyms_tried = true;
		a->have_ksyms = ksyms_load(&a->ksyms, NULL) == 0 && a->ksyms.n;
	}
	if (!a->stacks_read) {
		a->stacks_read = true;
		a->stacks_ok = sampler_read_stacks(&a->smp, a->detail_id.dev, a->detail_id.ino,
						   a->detail_id.gen, &a->stacks) == 0 &&
			       kept_stacks_put(&a->kept_stacks, &a->stacks, a->detail_id.dev,
					       a->detail_id.ino, a->detail_id.gen) == 0;
	}
	top_format_detail(f, win, edges, sampler_latest(&a->smp), a->stacks_ok ? &a->stacks : NULL,
			  a->have_ksyms ? &a->ksyms : NULL, &a->titles, &a->mt, a->detail_id.dev,
			  a->detail_id.ino, a->detail_id.gen, a->detail_id.class, secs, a->cumulative,
			  a->t.hold_sampling[0] && strcmp(a->t.hold_sampling, "every hold") &&
				  strcmp(a->t.hold_sampling, "off"));
	fclose(f);
	for (p = text; p && *p; p++)
		nlines += *p == '\n';
	if (a->detail_top > nlines - (y1 - y0))
		a->detail_top = nlines - (y1 - y0);
	if (a->detail_top < 0)
		a->detail_top = 0;
	for (p = text; p && *p && y0 < y1; line_no++) {
		char *nl = strchr(p, '\n');

		if (nl)
			*nl = 0;
		if (line_no >= a->detail_top)
			put_line(y0++, p, line_no == 0 ? A_BOLD : 0);
		if (!nl)
			break;
		p = nl + 1;
	}
	free(text);
}

/* The help from line a->help_top; true when it does not all fit. */
static bool draw_help(struct top_app *a, int y0, int y1)
{
	const char *const *text;  /* not "lines": curses has a macro of that name */
	size_t n = top_help_screen(&text);
	int rows = y1 - y0;

	if (a->help_top > (int)n - rows)
		a->help_top = (int)n - rows;
	if (a->help_top < 0)
		a->help_top = 0;
	for (size_t i = (size_t)a->help_top; i < n && y0 < y1; i++, y0++)
		put_line(y0, text[i], i == 0 ? A_BOLD : 0);
	return rows < (int)n;
}

void ui_draw(struct top_app *a)
{
	struct top_status st;
	struct draw_ctx d = { .y = 0, .maxy = LINES - 1 };
	bool help_scrolls = false;

	if (!active)
		return;
	erase();
	top_app_status(a, &st);
	top_format_status(&st, COLS, emit_status, &d);
	if (a->help)
		help_scrolls = draw_help(a, d.y, LINES - 1);
	else if (a->detail)
		draw_detail(a, d.y, LINES - 1);
	else
		draw_table(a, d.y, LINES - 1);
	if (a->help) {
		put_line(LINES - 1, help_scrolls ? "arrows/PgUp/PgDn scroll  any other key: back  q quit"
						 : "any key: back  q quit", A_REVERSE);
	} else if (a->prompting) {
		char line[256];

		snprintf(line, sizeof(line), "filter (path, comm or title; Enter apply, Esc cancel): %s_",
			 a->prompt);
		put_line(LINES - 1, line, A_BOLD);
	} else if (a->detail) {
		put_line(LINES - 1, top_help_line(true), A_REVERSE);
	} else {
		char line[512];

		put_line(LINES - 1, top_format_help(line, sizeof(line), COLS, a->sel,
						    (long)a->view.nrows, page_rows()), A_REVERSE);
	}
	wnoutrefresh(stdscr);
	doupdate();
}

/* --------------------------------------------------------------- keys */

static void select_row(struct top_app *a, long i)
{
	a->sel = i;
	keep_visible(a);
	if (a->view.nrows) {
		/* rows past the sorted part are in no order yet: sort up to here */
		top_view_prepare(&a->view, (size_t)a->sel + 1);
		const struct top_row *r = &a->view.rows[a->sel];

		a->sel_id = (struct lock_id){ true, r->dev, r->ino, r->gen, r->class };
	}
}

static void key_prompt(struct top_app *a, int ch)
{
	size_t n = strlen(a->prompt);

	switch (ch) {
	case 27:
		a->prompting = false;
		break;
	case '\r':
	case '\n':
	case KEY_ENTER:
		a->prompting = false;
		snprintf(a->filter.text, sizeof(a->filter.text), "%s", a->prompt);
		top_app_rebuild(a);
		select_row(a, 0);
		break;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		if (n)
			a->prompt[n - 1] = 0;
		break;
	case 21: /* ^U */
		a->prompt[0] = 0;
		break;
	default:
		if (ch >= 32 && ch < 127 && n + 1 < sizeof(a->prompt)) {
			a->prompt[n] = (char)ch;
			a->prompt[n + 1] = 0;
		}
	}
}

static void key_common(struct top_app *a, int ch)
{
	switch (ch) {
	case 'q':
	case 'Q':
		a->quit = true;
		break;
	case 'c':
		a->cumulative = !a->cumulative;
		top_app_rebuild(a);
		break;
	case 'p':
		a->paused = !a->paused;
		break;
	case '?':
	case 'h':
		a->help = true;
		a->help_top = 0;
		break;
	case KEY_RESIZE:
		break;
	}
}

static void key_detail(struct top_app *a, int ch)
{
	long page = LINES - 8 > 1 ? LINES - 8 : 1;

	switch (ch) {
	case 27:
	case '\r':
	case '\n':
	case KEY_ENTER:
	case KEY_BACKSPACE:
	case KEY_LEFT:
		a->detail = false;
		break;
	case KEY_UP:
	case 'k':
		a->detail_top--;
		break;
	case KEY_DOWN:
	case 'j':
		a->detail_top++;
		break;
	case KEY_PPAGE:
		a->detail_top -= page;
		break;
	case KEY_NPAGE:
	case ' ':
		a->detail_top += page;
		break;
	case KEY_HOME:
	case 'g':
		a->detail_top = 0;
		break;
	case KEY_END:
	case 'G':
		a->detail_top = 1L << 30;  /* the draw clamps it to the last page */
		break;
	default:
		key_common(a, ch);
	}
	if (a->detail_top < 0)
		a->detail_top = 0;
}

static void open_detail(struct top_app *a, uint32_t dev, uint64_t ino, uint32_t gen,
			uint8_t class)
{
	a->detail = true;
	a->detail_top = 0;
	a->detail_id = (struct lock_id){ true, dev, ino, gen, class };
	sampler_follow_holds(&a->smp, dev, ino, gen, class);
	a->stacks_read = false;
	sampler_ensure_inode(&a->smp, dev, ino, gen);
}

static void key_list(struct top_app *a, int ch)
{
	long page = page_rows();

	switch (ch) {
	case KEY_UP:
	case 'k':
		select_row(a, a->sel - 1);
		break;
	case KEY_DOWN:
	case 'j':
		select_row(a, a->sel + 1);
		break;
	case KEY_PPAGE:
		select_row(a, a->sel - page);
		break;
	case KEY_NPAGE:
	case ' ':
		select_row(a, a->sel + page);
		break;
	case KEY_HOME:
	case 'g':
		select_row(a, 0);
		break;
	case KEY_END:
	case 'G':
		select_row(a, (long)a->view.nrows - 1);
		break;
	case 's':
	case 'S':
		a->sort = top_sort_next(a->sort, ch == 's' ? 1 : -1);
		top_app_resort(a);
		break;
	case 'f':
	case '/':
		a->prompting = true;
		snprintf(a->prompt, sizeof(a->prompt), "%s", a->filter.text);
		break;
	case 27: /* Esc clears the filter */
		if (a->filter.text[0]) {
			a->filter.text[0] = 0;
			top_app_rebuild(a);
		}
		break;
	case '\r':
	case '\n':
	case KEY_ENTER:
	case KEY_RIGHT:
		if (a->view.nrows) {
			const struct top_row *r = &a->view.rows[a->sel];

			open_detail(a, r->dev, r->ino, r->gen, r->class);
		}
		break;
	case 'w': {
		/* the stall's lock, which has no row until one of its waits ends */
		const struct waiting_set *ws = &sampler_latest(&a->smp)->waiting;

		if (waiting_over(ws, WAITING_ALARM_NS))
			open_detail(a, ws->w[0].key.dev, ws->w[0].key.ino, ws->w[0].key.gen,
				    ws->w[0].key.class);
		break;
	}
	default:
		key_common(a, ch);
	}
}

void ui_keys(struct top_app *a)
{
	int ch;

	while (active && (ch = getch()) != ERR) {
		if (ch == KEY_RESIZE)
			continue;  /* the caller redraws at the new size */
		if (a->help) {
			/* scroll keys move it (a small screen); any other closes it */
			int step = ch == KEY_DOWN || ch == 'j' ? 1 : ch == KEY_UP || ch == 'k' ? -1
				 : ch == KEY_NPAGE || ch == ' ' ? LINES / 2
				 : ch == KEY_PPAGE ? -LINES / 2 : 0;

			if (step) {
				a->help_top += step;
			} else {
				a->help = false;
				a->quit = ch == 'q' || ch == 'Q';
			}
		} else if (a->prompting)
			key_prompt(a, ch);
		else if (a->detail)
			key_detail(a, ch);
		else
			key_list(a, ch);
		if (a->quit)
			break;
	}
}
