// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpfload OBJ SECONDS [TRACEPOINT...]: load a BPF object, attach its
 * programs, hold them for SECONDS (or until SIGINT/SIGTERM), print
 * "attached" when ready. Used by the benchmarks for the empty-program floor.
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

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	int secs, err;

	if (argc < 3 || (secs = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: bpfload OBJ SECONDS [TRACEPOINT...]\n");
		return 2;
	}
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
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog))
			continue;  /* optional and not asked for: not loaded */
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "bpfload: cannot attach %s: %s\n", bpf_program__name(prog),
				strerror(errno));
			bpf_object__close(obj);
			return 1;
		}
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	printf("attached\n");
	fflush(stdout);
	for (int i = 0; i < secs * 10 && !stop; i++)
		usleep(100000);
	bpf_object__close(obj);  /* links are closed with the process anyway */
	return 0;
}
