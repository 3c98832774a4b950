// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Process titles (titles.h): parsed from /proc/PID/cmdline, kept per thread. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "titles.h"
#include "util.h"

bool title_parse(const char *comm, const char *cmdline, size_t n, char *out, size_t outlen)
{
	char c[ILOCK_COMM_LEN + 1];
	const char *colon;
	size_t len = 0, clen, name;

	if (!outlen)
		return false;
	out[0] = 0;
	str_copy(c, sizeof(c), comm, ILOCK_COMM_LEN);
	clen = strlen(c);
	/* the first argument: a rewritten title fills it, padded with NULs or spaces */
	while (len < n && cmdline[len])
		len++;
	while (len && cmdline[len - 1] == ' ')
		len--;
	colon = memchr(cmdline, ':', len);
	if (!clen || !colon)
		return false;
	name = (size_t)(colon - cmdline);
	/* "name: " and something after it; name the comm, or longer when comm was cut */
	if (name + 2 >= len || colon[1] != ' ' || name < clen || memcmp(cmdline, c, clen) ||
	    (name > clen && clen < ILOCK_COMM_LEN - 1))
		return false;
	if (len > outlen - 1) {
		len = outlen - 1;
		/* not in the middle of a UTF-8 character: back to its first byte */
		while (len && ((unsigned char)cmdline[len] & 0xc0) == 0x80)
			len--;
	}
	memcpy(out, cmdline, len);
	out[len] = 0;
	label_clean(out);
	return true;
}

/* A PostgreSQL client's host: "[local]", or an address or name with "(port)". */
static bool pg_host(const char *tok, size_t n)
{
	const char *open = memchr(tok, '(', n);

	if (n == 7 && !memcmp(tok, "[local]", 7))
		return true;
	if (!open || tok[n - 1] != ')' || open + 2 > tok + n - 1)
		return false;
	for (const char *c = open + 1; c < tok + n - 1; c++)
		if (*c < '0' || *c > '9')
			return false;
	return true;
}

static bool all_digits(const char *tok, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (tok[i] < '0' || tok[i] > '9')
			return false;
	return n > 0;
}

void title_role(const char *title, char *out, size_t outlen)
{
	const char *rest = strstr(title, ": "), *tok[4] = {};
	size_t len = strlen(title), ntok = 0, tlen[4] = {};

	if (!outlen)
		return;
	if (!rest) {
		str_copy(out, outlen, title, len);
		return;
	}
	rest += 2;
	/* PostgreSQL with cluster_name: "postgres: main: bob shop [local] idle" */
	if (strstr(rest, ": ") && !memchr(rest, ' ', (size_t)(strstr(rest, ": ") - rest)))
		rest = strstr(rest, ": ") + 2;
	for (const char *p = rest; *p && ntok < 4; ) {
		size_t n = strcspn(p, " ");

		if (n) {
			tok[ntok] = p;
			tlen[ntok++] = n;
		}
		p += n;
		p += *p == ' ';
	}
	/* a client backend: user, database, host, then what it does now */
	if (ntok >= 3 && pg_host(tok[2], tlen[2])) {
		len = (size_t)(tok[1] + tlen[1] - title);
	} else {
		/* ids at the end: "io worker 2", "parallel worker for PID 1234" */
		while (len > (size_t)(rest - title)) {
			size_t start = len;

			while (start > (size_t)(rest - title) && title[start - 1] != ' ')
				start--;
			if (start == (size_t)(rest - title) || !all_digits(title + start, len - start))
				break;
			len = start;
			while (len && title[len - 1] == ' ')
				len--;
		}
	}
	str_copy(out, outlen, title, len);
}

void titles_init(struct titles *t)
{
	memset(t, 0, sizeof(*t));
	idmap_init(&t->by_pid, sizeof(uint32_t));
}

void titles_free(struct titles *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->e[i].title);
		free(t->e[i].role);
	}
	free(t->e);
	idmap_free(&t->by_pid);
	titles_init(t);
}

static struct title_entry *find(const struct titles *t, uint32_t pid)
{
	uint32_t i;

	return t && pid && idmap_get(&t->by_pid, &pid, &i) ? &t->e[i] : NULL;
}

static bool same_comm(const struct title_entry *e, const char *comm)
{
	return !strncmp(e->comm, comm, ILOCK_COMM_LEN);
}

int titles_put(struct titles *t, uint32_t pid, const char *comm, const char *title)
{
	struct title_entry *e = find(t, pid);
	int err;

	if (!pid)
		return 0;
	if (!e) {
		/* a table zeroed, not titles_init'ed (a calloc'ed owner): keyed by pid */
		if (!t->by_pid.ksz)
			idmap_init(&t->by_pid, sizeof(uint32_t));
		if (t->n >= TITLES_MAX_THREADS) {
			t->left_out++;
			return -ENOSPC;
		}
		if (!grow_array((void **)&t->e, &t->cap, t->n, sizeof(*t->e)))
			return -ENOMEM;
		if ((err = idmap_put(&t->by_pid, &pid, (uint32_t)t->n)))
			return err;
		e = &t->e[t->n++];
		memset(e, 0, sizeof(*e));
		e->pid = pid;
	}
	/* a pid taken by another thread since: this one's, in place */
	memset(e->comm, 0, sizeof(e->comm));
	str_copy(e->comm, sizeof(e->comm), comm, ILOCK_COMM_LEN);
	free(e->title);
	free(e->role);
	e->title = e->role = NULL;
	if (title && title[0]) {
		char role[ILOCK_TITLE_MAX];

		title_role(title, role, sizeof(role));
		e->title = strndup(title, ILOCK_TITLE_MAX - 1);
		e->role = strdup(role);
		if (!e->title || !e->role) {
			free(e->title);
			free(e->role);
			e->title = e->role = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

bool titles_known(const struct titles *t, uint32_t pid, const char *comm)
{
	const struct title_entry *e = find(t, pid);

	return e && same_comm(e, comm);
}

const char *titles_get(const struct titles *t, uint32_t pid, const char *comm)
{
	const struct title_entry *e = find(t, pid);

	return e && same_comm(e, comm) ? e->title : NULL;
}

const char *titles_role(const struct titles *t, uint32_t pid, const char *comm)
{
	const struct title_entry *e = find(t, pid);

	return e && same_comm(e, comm) ? e->role : NULL;
}

/* Up to len - 1 bytes of a /proc file, NUL-terminated; bytes read or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* 1: /proc/ID is there and its comm is c; 0: another comm; -1: no such thread now */
static int comm_is(uint32_t id, const char *c)
{
	char path[64], now[ILOCK_COMM_LEN + 2];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/comm", id);
	n = read_small(path, now, sizeof(now));
	if (n <= 0)
		return -1;
	if (now[n - 1] == '\n')
		now[n - 1] = 0;
	return !strcmp(now, c);
}

int titles_read_proc(uint32_t pid, uint32_t tgid, const char *comm, char *out, size_t outlen)
{
	char path[64], c[ILOCK_COMM_LEN + 1], cmd[1024];
	uint32_t id = pid;
	ssize_t n;
	int is;

	if (outlen)
		out[0] = 0;
	if (!pid)
		return 0;
	str_copy(c, sizeof(c), comm, ILOCK_COMM_LEN);
	/* /proc/TID works for any thread; a thread's cmdline is its process's */
	is = comm_is(pid, c);
	/* a thread that has ended: its process's title, if it runs the same command */
	if (is < 0 && tgid && tgid != pid) {
		id = tgid;
		is = comm_is(tgid, c);
	}
	if (is <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/cmdline", id);
	n = read_small(path, cmd, sizeof(cmd));
	return n > 0 && title_parse(comm, cmd, (size_t)n, out, outlen);
}

void titles_note(struct titles *t, uint32_t pid, uint32_t tgid, const char *comm)
{
	char title[ILOCK_TITLE_MAX];

	if (!pid || pid == ILOCK_PID_FOLDED || titles_known(t, pid, comm))
		return;
	if (t->n >= TITLES_MAX_THREADS) {
		t->left_out++;
		return;
	}
	titles_read_proc(pid, tgid, comm, title, sizeof(title));
	titles_put(t, pid, comm, title);
}

int titles_note_edge(void *ctx, const void *key, const void *val)
{
	const struct ilock_edge_key *k = key;

	(void)val;
	titles_note(ctx, k->holder_pid, k->holder_tgid, k->holder_comm);
	titles_note(ctx, k->waiter_pid, k->waiter_tgid, k->waiter_comm);
	return 0;
}

void titles_note_snapshot(struct titles *t, const struct snapshot *s)
{
	for (size_t i = 0; i < s->nedges; i++) {
		const struct ilock_edge_key *k = &s->edges[i].k;

		titles_note(t, k->holder_pid, k->holder_tgid, k->holder_comm);
		titles_note(t, k->waiter_pid, k->waiter_tgid, k->waiter_comm);
	}
	for (size_t i = 0; i < s->waiting.n; i++) {
		const struct ilock_waiting *w = &s->waiting.w[i];

		titles_note(t, w->tid, w->tgid, w->comm);
		titles_note(t, w->holder_pid, w->holder_tgid, w->holder_comm);
		titles_note(t, w->owner_pid, w->owner_tgid, w->owner_comm);
	}
}

void titled_add(struct titled *l, const struct titles *ti, uint32_t pid, const char *comm)
{
	if (!titles_get(ti, pid, comm))
		return;
	for (size_t i = 0; i < l->n; i++)
		if (l->t[i].pid == pid && !strncmp(l->t[i].comm, comm, ILOCK_COMM_LEN))
			return;
	if (!grow_array((void **)&l->t, &l->cap, l->n, sizeof(*l->t)))
		return;
	l->t[l->n].pid = pid;
	memcpy(l->t[l->n++].comm, comm, ILOCK_COMM_LEN);
}

void titled_free(struct titled *l)
{
	free(l->t);
	memset(l, 0, sizeof(*l));
}
