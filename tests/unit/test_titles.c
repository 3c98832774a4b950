// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Process titles: which command lines are titles, and the table of them
 * by thread. Their way through a recording: test_recfile.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "titles.h"
#include "unit.h"

/* title_parse() of a NUL-separated command line given with its length */
static const char *parsed(const char *comm, const char *cmdline, size_t n)
{
	static char out[ILOCK_TITLE_MAX];

	if (!title_parse(comm, cmdline, n, out, sizeof(out)))
		return NULL;
	return out;
}

#define P(comm, lit) parsed(comm, lit, sizeof(lit) - 1)

static void test_parse(void)
{
	char small[12];

	/* PostgreSQL's, NUL-padded; a trailing space goes */
	CHECK_STR(P("postgres", "postgres: checkpointer \0\0\0\0"), "postgres: checkpointer");
	CHECK_STR(P("postgres", "postgres: bob shop [local] UPDATE\0\0"),
		  "postgres: bob shop [local] UPDATE");
	CHECK_STR(P("postgres", "postgres: main: walwriter   "), "postgres: main: walwriter");
	CHECK_STR(P("sshd", "sshd: root@pts/0\0"), "sshd: root@pts/0");
	/* ordinary command lines have none */
	CHECK(!P("postgres", "/usr/lib/postgresql/15/bin/postgres\0-D\0/data\0"));
	CHECK(!P("fio", "fio\0--name=x: y\0"));
	CHECK(!P("sh", "sh\0-c\0echo a: b\0"));
	CHECK(!P("python3", "python3: \0"));           /* nothing after the colon */
	CHECK(!P("python3", "python3:x\0"));           /* no space after it */
	/* the name must be the comm: not another program's title, not a shorter one */
	CHECK(!P("postgres", "nginx: worker process\0"));
	CHECK(!P("postgres", "postgresql: x\0"));
	CHECK(!P("postgres", "postgre: x\0"));
	CHECK(!P("", "a: b\0"));
	/* a comm cut at 15 bytes: a longer name that starts with it */
	CHECK_STR(P("logical_replica", "logical_replication: worker\0"),
		  "logical_replication: worker");
	/* 16 bytes without a NUL, as kernel comms can be */
	CHECK_STR(parsed("exactly16chars!!", "exactly16chars!!x: y", 20), "exactly16chars!!x: y");
	/* no NUL at all, and control bytes made harmless */
	CHECK_STR(P("pg", "pg: a\033[2Jb"), "pg: a?[2Jb");
	/* cut to the room, not inside a UTF-8 character */
	CHECK(title_parse("pg", "pg: ab\xc3\xa9" "cd", 10, small, 8));
	CHECK_STR(small, "pg: ab");
	CHECK(title_parse("pg", "pg: abc\xc3\xa9", 10, small, 10));
	CHECK_STR(small, "pg: abc\xc3\xa9");
	CHECK(!title_parse("pg", "pg: x", 5, small, 0));
}

static const char *role(const char *title)
{
	static char out[ILOCK_TITLE_MAX];

	title_role(title, out, sizeof(out));
	return out;
}

static void test_role(void)
{
	/* background processes keep their titles */
	CHECK_STR(role("postgres: checkpointer"), "postgres: checkpointer");
	CHECK_STR(role("postgres: background writer"), "postgres: background writer");
	CHECK_STR(role("postgres: autovacuum worker"), "postgres: autovacuum worker");
	/* client backends: user and database, not host, port or what they do now */
	CHECK_STR(role("postgres: bob shop [local] UPDATE"), "postgres: bob shop");
	CHECK_STR(role("postgres: bob shop [local] idle in transaction"), "postgres: bob shop");
	CHECK_STR(role("postgres: bob shop [local]"), "postgres: bob shop");
	CHECK_STR(role("postgres: bob shop 10.1.2.3(51234) idle"), "postgres: bob shop");
	CHECK_STR(role("postgres: bob shop ::1(40000) SELECT"), "postgres: bob shop");
	CHECK_STR(role("postgres: bob shop app1.example.com(5432) COMMIT"), "postgres: bob shop");
	/* with cluster_name */
	CHECK_STR(role("postgres: main: bob shop [local] idle"), "postgres: main: bob shop");
	CHECK_STR(role("postgres: main: walwriter"), "postgres: main: walwriter");
	/* numbered workers are one role */
	CHECK_STR(role("postgres: parallel worker for PID 1234"), "postgres: parallel worker for PID");
	CHECK_STR(role("postgres: io worker 2"), "postgres: io worker");
	CHECK_STR(role("postgres: 17"), "postgres: 17");
	/* not a host: kept whole */
	CHECK_STR(role("nginx: worker process"), "nginx: worker process");
	CHECK_STR(role("sshd: root@pts/0"), "sshd: root@pts/0");
	CHECK_STR(role("x: a b c(d) e"), "x: a b c(d) e");
	CHECK_STR(role("x: a b c() e"), "x: a b c() e");
	CHECK_STR(role("no colon"), "no colon");
}

static void test_table(void)
{
	struct titles t;
	char name[16];

	titles_init(&t);
	CHECK(!titles_get(&t, 12, "postgres"));
	CHECK(!titles_known(&t, 12, "postgres"));
	CHECK(!titles_put(&t, 12, "postgres", "postgres: checkpointer"));
	CHECK(!titles_put(&t, 13, "postgres", ""));
	CHECK_STR(titles_get(&t, 12, "postgres"), "postgres: checkpointer");
	CHECK_STR(titles_role(&t, 12, "postgres"), "postgres: checkpointer");
	CHECK(!titles_role(&t, 12, "fio"));
	/* known with no title: not read again, nothing to show */
	CHECK(titles_known(&t, 13, "postgres"));
	CHECK(!titles_get(&t, 13, "postgres"));
	CHECK(!titles_role(&t, 13, "postgres"));
	CHECK(!titles_put(&t, 14, "postgres", "postgres: bob shop [local] idle"));
	CHECK_STR(titles_role(&t, 14, "postgres"), "postgres: bob shop");
	CHECK(!titles_put(&t, 14, "postgres", ""));
	CHECK(!titles_get(&t, 14, "postgres") && !titles_role(&t, 14, "postgres"));
	/* the pid with another comm is another thread */
	CHECK(!titles_get(&t, 12, "fio"));
	CHECK(!titles_known(&t, 12, "fio"));
	CHECK(!titles_put(&t, 12, "fio", ""));
	CHECK(!titles_get(&t, 12, "postgres"));
	CHECK_EQ_U(t.n, 3);
	/* pid 0 is nobody */
	CHECK(!titles_put(&t, 0, "x", "x: y"));
	CHECK(!titles_get(&t, 0, "x"));
	/* growth keeps every entry */
	for (uint32_t pid = 100; pid < 5100; pid++) {
		snprintf(name, sizeof(name), "x: %u", pid);
		CHECK(!titles_put(&t, pid, "x", name));
	}
	CHECK_EQ_U(t.n, 5003);
	CHECK_STR(titles_get(&t, 4321, "x"), "x: 4321");
	CHECK_STR(titles_get(&t, 100, "x"), "x: 100");
	CHECK(!titles_get(NULL, 100, "x"));
	titles_free(&t);

	/* bounded: past TITLES_MAX_THREADS, put says so and counts it */
	titles_init(&t);
	for (uint32_t pid = 1; pid <= TITLES_MAX_THREADS; pid++)
		if (titles_put(&t, pid, "x", ""))
			break;
	CHECK_EQ_U(t.n, TITLES_MAX_THREADS);
	CHECK_EQ_U(titles_put(&t, TITLES_MAX_THREADS + 1, "x", "x: y"), (uint64_t)-ENOSPC);
	CHECK_EQ_U(t.left_out, 1);
	/* one already there is still updated */
	CHECK(!titles_put(&t, 7, "x", "x: seven"));
	CHECK_STR(titles_get(&t, 7, "x"), "x: seven");
	titles_free(&t);
}

/* This process has no title; a thread id that cannot exist has none either. */
static void test_read_proc(void)
{
	char out[ILOCK_TITLE_MAX] = "junk";
	char comm[32] = "";
	FILE *f = fopen("/proc/self/comm", "r");

	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	CHECK_EQ_U(titles_read_proc((uint32_t)getpid(), 0, comm, out, sizeof(out)), 0);
	CHECK_STR(out, "");
	CHECK_EQ_U(titles_read_proc(0x7ffffff0u, 0, comm, out, sizeof(out)), 0);
	CHECK_EQ_U(titles_read_proc(0, 0, comm, out, sizeof(out)), 0);
}

int main(void)
{
	test_parse();
	test_role();
	test_table();
	test_read_proc();
	UNIT_DONE();
}
