/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Process titles: what a server calls each of its processes. PostgreSQL
 * runs one process per connection and per background task, all with the
 * comm "postgres"; each rewrites its command line to say what it is
 * ("postgres: checkpointer", "postgres: bob shop [local] UPDATE"), as
 * sshd, nginx and postfix do. ilock reads that title from
 * /proc/PID/cmdline when it first sees a thread, so that "postgres[4257]"
 * can be told apart from the others. The table is pure; titles_read_proc()
 * is its only I/O.
 */
#ifndef ILOCK_TITLES_H
#define ILOCK_TITLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "ilock.h"

#define ILOCK_TITLE_MAX 96          /* bytes kept, the NUL included */
#define TITLES_MAX_THREADS 65536    /* threads looked up per run, then no more */

struct title_entry {
	uint32_t pid;                  /* thread id */
	char comm[ILOCK_COMM_LEN];     /* NUL-padded: the thread it was read for */
	char *title;                   /* malloc'ed; NULL when the process has none */
	char *role;                    /* title_role() of it, malloc'ed; NULL with title */
};

struct titles {
	struct title_entry *e;         /* one per thread looked up */
	size_t n, cap;
	struct idmap by_pid;           /* pid -> index into e */
	uint64_t left_out;             /* threads not looked up: the table was full */
};

/*
 * The title in n bytes of a /proc/PID/cmdline, into out: only when the
 * process rewrote its first argument to "name: what it does", with name
 * its comm (or, comm being cut at 15 bytes, starting with it). An
 * ordinary command line ("/usr/bin/fio --name=x") has no title. Trailing
 * padding goes, control bytes become '?', and a cut title ends on a whole
 * UTF-8 character. False (out "") when there is none.
 */
bool title_parse(const char *comm, const char *cmdline, size_t n, char *out, size_t outlen);

/*
 * A title as a role for the tables by command: what stays the same from
 * one connection or worker to the next. A PostgreSQL client backend's
 * ("postgres: bob shop [local] UPDATE", "postgres: bob shop 10.1.2.3(5123)
 * idle") is "postgres: bob shop", its user and database; numbers at the
 * end ("postgres: parallel worker for PID 1234", "postgres: io worker 2")
 * go. Other titles are kept ("postgres: checkpointer").
 */
void title_role(const char *title, char *out, size_t outlen);

void titles_init(struct titles *t);
void titles_free(struct titles *t);
/* Keep pid's title ("" for none) as read for the thread named comm. 0, -ENOMEM or -ENOSPC. */
int titles_put(struct titles *t, uint32_t pid, const char *comm, const char *title);
/* Whether pid has been looked up for this comm (a title or none). */
bool titles_known(const struct titles *t, uint32_t pid, const char *comm);
/* pid's title when it was read for this comm, else NULL (none, or not read). */
const char *titles_get(const struct titles *t, uint32_t pid, const char *comm);
/*
 * pid's title_role() likewise, else NULL. Valid until the table next
 * changes (titles_put, titles_note, titles_free).
 */
const char *titles_role(const struct titles *t, uint32_t pid, const char *comm);

/*
 * Read thread pid's title from /proc, if the thread there is still the one
 * named comm (a pid taken again by another command has another comm); of
 * a thread that has ended, its process tgid's, if that runs comm. 1 and
 * out set: a title; 0: none, or both are gone; out is "" then.
 */
int titles_read_proc(uint32_t pid, uint32_t tgid, const char *comm, char *out, size_t outlen);

/* The threads a view names that have titles, each once, in the order named: its legend. */
struct titled {
	struct {
		uint32_t pid;
		char comm[ILOCK_COMM_LEN];
	} *t;
	size_t n, cap;
};

/* Add pid if it has a title in ti and is not listed yet (on no memory: left out). */
void titled_add(struct titled *l, const struct titles *ti, uint32_t pid, const char *comm);
void titled_free(struct titled *l);

/* Look thread pid up if the table has not seen it with that comm (titles_read_proc). */
void titles_note(struct titles *t, uint32_t pid, uint32_t tgid, const char *comm);

/*
 * titles_note() both threads of a pair's key (struct ilock_edge_key), as a
 * tracer_scan_edges() callback: ctx is the table, val unused. Returns 0.
 */
int titles_note_edge(void *ctx, const void *key, const void *val);

struct snapshot;
/*
 * Look up every thread the snapshot names (both sides of its pairs, the
 * waits in progress and their holders) that the table has not seen with
 * that comm: the title it has now. Threads already known are not read
 * again, so a title is the one of when ilock first saw the thread.
 */
void titles_note_snapshot(struct titles *t, const struct snapshot *s);

#endif
