// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpfload OBJ SECONDS: load a BPF object, attach every program, hold them
 * for SECONDS (or until SIGINT/SIGTERM), print "attached" when ready.
 * Used by the benchmarks for the empty-program floor.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

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

	if (argc != 3 || (secs = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: bpfload OBJ SECONDS\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "bpfload: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "bpfload: cannot load: %s\n", strerror(-err));
		bpf_object__close(obj);
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
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
