// SPDX-License-Identifier: GPL-2.0
/*
 * lookup_cost: what ilock's two userspace lookups cost a read, measured on
 * this machine's own processes and files.
 *
 *   lookup_cost DIR [ROUNDS]
 *
 * titles: titles_read_proc() of every thread in /proc (two small /proc
 * reads each), as stat, record and ilocktop do once per new thread.
 * paths: path_look() of every file in DIR (an lstat and the generation
 * each; the files left where they are), then of each file after it was
 * renamed in DIR (lstat, then DIR's entries read until its inode number),
 * as a read does for each inode it shows. Prints the median over ROUNDS (default 9)
 * of the time per lookup.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "pathcheck.h"
#include "sigtest.h"
#include "titles.h"
#include "util.h"

#define MAX_FILES 100000

static double now_s(void)
{
	return (double)now_monotonic_ns() / 1e9;
}

/* every thread in /proc: tid, tgid and comm */
static size_t threads(uint32_t *tid, uint32_t *tgid, char (*comm)[16], size_t max)
{
	DIR *p = opendir("/proc");
	struct dirent *de;
	size_t n = 0;

	while (p && (de = readdir(p)) && n < max) {
		char path[300];
		DIR *t;
		struct dirent *te;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", de->d_name);
		t = opendir(path);
		while (t && (te = readdir(t)) && n < max) {
			FILE *f;
			char cpath[600];

			if (te->d_name[0] < '0' || te->d_name[0] > '9')
				continue;
			snprintf(cpath, sizeof(cpath), "/proc/%s/task/%s/comm", de->d_name, te->d_name);
			f = fopen(cpath, "r");
			if (!f)
				continue;
			memset(comm[n], 0, 16);
			if (fgets(comm[n], 16, f)) {
				comm[n][strcspn(comm[n], "\n")] = 0;
				tid[n] = (uint32_t)atoi(te->d_name);
				tgid[n] = (uint32_t)atoi(de->d_name);
				n++;
			}
			fclose(f);
		}
		if (t)
			closedir(t);
	}
	if (p)
		closedir(p);
	return n;
}

int main(int argc, char **argv)
{
	static uint32_t tid[65536], tgid[65536];
	static char comm[65536][16];
	static struct inode_meta m[1000];
	int rounds = argc > 2 ? atoi(argv[2]) : 9;
	double t_titles[64], t_same[64], t_renamed[64];
	struct mount_table mt = {};
	char info[600], out[ILOCK_TITLE_MAX];
	struct stat st;
	size_t nt, nf = 0, titled = 0;
	uint32_t kdev;

	if (argc < 2 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: lookup_cost DIR [ROUNDS]\n");
		return 2;
	}
	if (stat(argv[1], &st)) {
		perror(argv[1]);
		return 1;
	}
	kdev = (uint32_t)(major(st.st_dev) << 20 | minor(st.st_dev));
	snprintf(info, sizeof(info), "36 35 %u:%u / %s rw - xfs /dev/x rw\n", major(st.st_dev),
		 minor(st.st_dev), argv[1]);
	if (mounts_parse(&mt, info))
		return 1;
	nt = threads(tid, tgid, comm, 65536);
	/* 1,000 files in DIR */
	for (size_t i = 0; i < 1000; i++) {
		char p[600];
		FILE *f;

		snprintf(p, sizeof(p), "%s/f%04zu", argv[1], i);
		f = fopen(p, "w");
		if (!f || stat(p, &st)) {
			perror(p);
			return 1;
		}
		fclose(f);
		m[nf] = (struct inode_meta){ .ino = st.st_ino, .dev = kdev };
		/* its generation, as the walker records it: the look checks it too */
		{
			int fd = open(p, O_RDONLY), v = 0;

			if (fd >= 0 && !ioctl(fd, FS_IOC_GETVERSION, &v))
				m[nf].gen = (uint32_t)v;
			if (fd >= 0)
				close(fd);
		}
		snprintf(m[nf].path, sizeof(m[nf].path), "/f%04zu", i);
		nf++;
	}
	for (int r = 0; r < rounds; r++) {
		double t0 = now_s();

		for (size_t i = 0; i < nt; i++)
			titled += titles_read_proc(tid[i], tgid[i], comm[i], out, sizeof(out)) == 1;
		t_titles[r] = (now_s() - t0) / (double)nt;
		t0 = now_s();
		for (size_t i = 0; i < nf; i++)
			path_look(&mt, &m[i], out, sizeof(out));
		t_same[r] = (now_s() - t0) / (double)nf;
	}
	/* each file renamed: the walker's path is gone, its entry is in DIR */
	for (size_t i = 0; i < nf; i++) {
		char a[600], b[600];

		snprintf(a, sizeof(a), "%s/f%04zu", argv[1], i);
		snprintf(b, sizeof(b), "%s/g%04zu", argv[1], i);
		rename(a, b);
	}
	for (int r = 0; r < rounds; r++) {
		double t0 = now_s();

		for (size_t i = 0; i < 100; i++)
			path_look(&mt, &m[i * 10], out, sizeof(out));
		t_renamed[r] = (now_s() - t0) / 100;
	}
	for (size_t i = 0; i < nf; i++) {
		char b[600];

		snprintf(b, sizeof(b), "%s/g%04zu", argv[1], i);
		remove(b);
	}
	sort_doubles(t_titles, (size_t)rounds);
	sort_doubles(t_same, (size_t)rounds);
	sort_doubles(t_renamed, (size_t)rounds);
	printf("titles: %zu threads (%zu titled per round), %.1f us per thread (median of %d, "
	       "%.1f-%.1f)\n", nt, titled / (size_t)rounds, t_titles[rounds / 2] * 1e6, rounds,
	       t_titles[0] * 1e6, t_titles[rounds - 1] * 1e6);
	printf("paths, in place: %.2f us per file (%.2f-%.2f)\n", t_same[rounds / 2] * 1e6,
	       t_same[0] * 1e6, t_same[rounds - 1] * 1e6);
	printf("paths, renamed in a directory of %zu: %.1f us per file (%.1f-%.1f)\n", nf,
	       t_renamed[rounds / 2] * 1e6, t_renamed[0] * 1e6, t_renamed[rounds - 1] * 1e6);
	mounts_free(&mt);
	return 0;
}
