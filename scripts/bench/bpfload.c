// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpfload OBJ SECONDS [TRACEPOINT...]: load a BPF object, attach its
 * programs, hold them for SECONDS (or until SIGINT/SIGTERM), print
 * "attached" when ready. Used by the benchmarks for the empty-program floor.
 *
 * With BPFLOAD_TOGGLE=1 in the environment it also reads "off" and "on"
 * lines on stdin, detaches or attaches every program for each, and answers
 * "ok" (scripts/bench/paired: attached against not, under one workload).
 * End of input ends it like SIGTERM.
 *
 * With BPFLOAD_REVERSE=1 it attaches the programs in the reverse of their
 * order in the object. Programs on one tracepoint run in the order they
 * were attached, and the first to touch a cache line pays for it, so the
 * anatomy benchmark runs both orders (bpf_cost.sh --anatomy).
 *
 * Without TRACEPOINTs: the programs the object loads by default. With them:
 * exactly the programs whose section names one of them (tp_btf/NAME,
 * ?tp_btf/NAME, ...), and a program for each must exist.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

/* "?tp_btf/xfs_ilock" -> "xfs_ilock" */
static const char *prog_tracepoint(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);
	const char *slash = strrchr(sec, '/');

	return slash ? slash + 1 : sec;
}

/* Autoload exactly the programs on the named tracepoints. */
static int select_tracepoints(struct bpf_object *obj, int ntp, char **tps)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		bool want = false;

		for (int i = 0; i < ntp && !want; i++)
			want = !strcmp(prog_tracepoint(prog), tps[i]);
		bpf_program__set_autoload(prog, want);
	}
	for (int i = 0; i < ntp; i++) {
		bool found = false;

		bpf_object__for_each_program(prog, obj)
			found = found || !strcmp(prog_tracepoint(prog), tps[i]);
		if (!found) {
			fprintf(stderr, "bpfload: no program for tracepoint %s\n", tps[i]);
			return -1;
		}
	}
	return 0;
}

static volatile sig_atomic_t stop;

static void on_sig(int sig)
{
	(void)sig;
	stop = 1;
}

#define MAX_LINKS 64

static struct bpf_link *links[MAX_LINKS];
static int nlinks;

static void detach_all(void)
{
	while (nlinks > 0)
		bpf_link__destroy(links[--nlinks]);
}

static bool reverse;

static struct bpf_program *first_prog(struct bpf_object *obj)
{
	return reverse ? bpf_object__prev_program(obj, NULL) : bpf_object__next_program(obj, NULL);
}

static struct bpf_program *next_prog(struct bpf_object *obj, struct bpf_program *prog)
{
	return reverse ? bpf_object__prev_program(obj, prog) : bpf_object__next_program(obj, prog);
}

/* Attach every loaded program; on failure nothing stays attached. */
static int attach_all(struct bpf_object *obj)
{
	struct bpf_program *prog;

	for (prog = first_prog(obj); prog; prog = next_prog(obj, prog)) {
		if (!bpf_program__autoload(prog))
			continue;  /* optional and not asked for: not loaded */
		if (nlinks == MAX_LINKS) {
			fprintf(stderr, "bpfload: more than %d programs\n", MAX_LINKS);
			detach_all();
			return -1;
		}
		links[nlinks] = bpf_program__attach(prog);
		if (!links[nlinks]) {
			fprintf(stderr, "bpfload: cannot attach %s: %s\n", bpf_program__name(prog),
				strerror(errno));
			detach_all();
			return -1;
		}
		nlinks++;
	}
	return 0;
}

/* Obey "on"/"off" lines until end of input, a bad line or a signal. */
static int toggle_loop(struct bpf_object *obj)
{
	char line[32];

	while (!stop && fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		if (!strcmp(line, "off")) {
			detach_all();
		} else if (!strcmp(line, "on")) {
			if (!nlinks && attach_all(obj))
				return 1;
		} else {
			fprintf(stderr, "bpfload: unknown command '%s' (on, off)\n", line);
			return 1;
		}
		printf("ok\n");
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *toggle = getenv("BPFLOAD_TOGGLE");
	const char *rev = getenv("BPFLOAD_REVERSE");
	struct sigaction sa = { .sa_handler = on_sig };
	struct bpf_object *obj;
	int secs, err, rc = 0;

	if (argc < 3 || (secs = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: bpfload OBJ SECONDS [TRACEPOINT...]\n");
		return 2;
	}
	reverse = rev && !strcmp(rev, "1");
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "bpfload: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (argc > 3 && select_tracepoints(obj, argc - 3, argv + 3)) {
		bpf_object__close(obj);
		return 1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "bpfload: cannot load: %s\n", strerror(-err));
		bpf_object__close(obj);
		return 1;
	}
	if (attach_all(obj)) {
		bpf_object__close(obj);
		return 1;
	}
	/* no SA_RESTART: a signal must end a blocked read of stdin */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	printf("attached\n");
	fflush(stdout);
	if (toggle && !strcmp(toggle, "1")) {
		alarm(secs);  /* the same time limit: it must not outlive a dead script */
		rc = toggle_loop(obj);
	} else {
		for (int i = 0; i < secs * 10 && !stop; i++)
			usleep(100000);
	}
	detach_all();
	bpf_object__close(obj);
	return rc;
}
