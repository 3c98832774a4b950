// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * jitdump ID LINES: where a loaded BPF program's JIT code lies, for
 * scripts/bench/bpf_profile, which needs no disassembler in bpftool
 * (Debian's has none). Prints one line per function of the program (the
 * program first, then each global function and subprogram, each JITed
 * at an address of its own): "func ADDR LEN NAME", NAME whole from BTF
 * (the kernel keeps 15 characters of a program's). Writes into LINES
 * "ADDR LINE SOURCE" for each line-info record: the code from ADDR on,
 * up to the next record, is that source line's.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what)
{
	fprintf(stderr, "jitdump: %s: %s\n", what, errno ? strerror(errno) : "not given");
	return 1;
}

int main(int argc, char **argv)
{
	__u32 len, nli, njli, lirs, nfi, firs, nks, btf_id;
	struct bpf_prog_info info = {};
	__u64 *jli = NULL, *ks = NULL;
	__u32 *flens = NULL;
	struct btf *btf = NULL;
	char *li = NULL, *fi = NULL;
	FILE *f = NULL;
	int fd, err = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: jitdump PROG_ID LINES\n");
		return 2;
	}
	fd = bpf_prog_get_fd_by_id(atoi(argv[1]));
	if (fd < 0)
		return fail("program id");
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = fail("program info");
		goto out;
	}
	nli = info.nr_line_info;
	njli = info.nr_jited_line_info;
	lirs = info.line_info_rec_size;
	nfi = info.nr_func_info;
	firs = info.func_info_rec_size;
	nks = info.nr_jited_ksyms;
	btf_id = info.btf_id;
	li = calloc(nli + 1, lirs + 1);
	fi = calloc(nfi + 1, firs + 1);
	jli = calloc(njli + 1, sizeof(*jli));
	ks = calloc(nks + 1, sizeof(*ks));
	flens = calloc(nks + 1, sizeof(*flens));
	if (!li || !fi || !jli || !ks || !flens) {
		err = fail("memory");
		goto out;
	}
	memset(&info, 0, sizeof(info));
	info.nr_line_info = nli;
	info.line_info_rec_size = lirs;
	info.line_info = (__u64)(unsigned long)li;
	info.nr_jited_line_info = njli;
	info.jited_line_info_rec_size = sizeof(*jli);
	info.jited_line_info = (__u64)(unsigned long)jli;
	info.nr_func_info = nfi;
	info.func_info_rec_size = firs;
	info.func_info = (__u64)(unsigned long)fi;
	info.nr_jited_ksyms = nks;
	info.jited_ksyms = (__u64)(unsigned long)ks;
	info.nr_jited_func_lens = nks;
	info.jited_func_lens = (__u64)(unsigned long)flens;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = fail("program layout");
		goto out;
	}
	btf = btf__load_from_kernel_by_id(btf_id);
	f = fopen(argv[2], "w");
	if (!f) {
		err = fail(argv[2]);
		goto out;
	}
	for (__u32 i = 0; i < nli && i < njli; i++) {
		struct bpf_line_info *l = (void *)(li + (size_t)i * lirs);
		const char *src = btf ? btf__name_by_offset(btf, l->line_off) : NULL;

		fprintf(f, "%llx %u %s\n", (unsigned long long)jli[i],
			BPF_LINE_INFO_LINE_NUM(l->line_col), src ? src : "");
	}
	if (fclose(f)) {
		f = NULL;
		err = fail(argv[2]);
		goto out;
	}
	f = NULL;
	for (__u32 i = 0; i < nks; i++) {
		const char *name = NULL;

		/* func_info records come in the order of the JITed functions */
		if (btf && i < nfi && firs >= sizeof(struct bpf_func_info)) {
			struct bpf_func_info *r = (void *)(fi + (size_t)i * firs);
			const struct btf_type *t = btf__type_by_id(btf, r->type_id);

			name = t ? btf__name_by_offset(btf, t->name_off) : NULL;
		}
		printf("func %llx %u %s\n", (unsigned long long)ks[i], flens[i],
		       name && *name ? name : i ? "?" : info.name);
	}
	err = 0;
out:
	if (f)
		fclose(f);
	btf__free(btf);
	free(li);
	free(fi);
	free(jli);
	free(ks);
	free(flens);
	close(fd);
	return err;
}
