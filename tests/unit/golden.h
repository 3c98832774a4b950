/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Golden-file checks for renderer tests: compare output with
 * tests/unit/golden/NAME; UPDATE_GOLDEN=1 rewrites the file instead
 * (review the diff before committing it).
 */
#ifndef ILOCK_GOLDEN_H
#define ILOCK_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#ifndef GOLDEN_DIR
#define GOLDEN_DIR "tests/unit/golden"
#endif

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void check_golden(const char *name, const char *got)
{
	char path[256];
	char *want;

	snprintf(path, sizeof(path), "%s/%s", GOLDEN_DIR, name);
	if (getenv("UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");

		CHECK(f != NULL);
		if (f) {
			fputs(got, f);
			fclose(f);
		}
		return;
	}
	want = slurp(path);
	CHECK(want != NULL);
	if (want && strcmp(want, got)) {
		fprintf(stderr, "golden %s differs; got:\n%s\n", name, got);
		CHECK(!"golden mismatch");
	} else if (want) {
		CHECK(1);
	}
	free(want);
}

#endif
