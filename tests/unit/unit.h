/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A minimal unit-test harness: CHECK records a failure and goes on, so one
 * run shows every broken expectation. Each binary ends with the line
 * "N passed, N failed" that tests/run_unit.sh adds up.
 */
#ifndef ILOCK_UNIT_H
#define ILOCK_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_passed, unit_failed;

#define CHECK(cond)                                                              \
	do {                                                                     \
		if (cond) {                                                      \
			unit_passed++;                                           \
		} else {                                                         \
			unit_failed++;                                           \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                \
	} while (0)

#define CHECK_EQ_U(a, b)                                                         \
	do {                                                                     \
		unsigned long long _a = (a), _b = (b);                           \
		if (_a == _b) {                                                  \
			unit_passed++;                                           \
		} else {                                                         \
			unit_failed++;                                           \
			fprintf(stderr, "%s:%d: %s == %llu, expected %s == %llu\n", __FILE__, \
				__LINE__, #a, _a, #b, _b);                       \
		}                                                                \
	} while (0)

#define CHECK_STR(a, b)                                                          \
	do {                                                                     \
		const char *_a = (a), *_b = (b);                                 \
		if (_a && _b && !strcmp(_a, _b)) {                               \
			unit_passed++;                                           \
		} else {                                                         \
			unit_failed++;                                           \
			fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, \
				__LINE__, #a, _a ? _a : "(null)", _b ? _b : "(null)"); \
		}                                                                \
	} while (0)

/*
 * The column of `arrow` in the lines of text from `from` up to a blank line
 * or the end, in those that have it: one column for all, or -1 when two
 * lines put it apart (or none has it). For tables whose columns must line up.
 */
static inline long arrows_column(const char *from, const char *arrow)
{
	long col = -1;

	for (const char *line = from; line && *line && *line != '\n';) {
		const char *end = strchr(line, '\n'), *a = strstr(line, arrow);

		if (a && (!end || a < end)) {
			if (col >= 0 && a - line != col)
				return -1;
			col = a - line;
		}
		line = end ? end + 1 : NULL;
	}
	return col;
}

#define UNIT_DONE()                                                              \
	do {                                                                     \
		printf("%d passed, %d failed\n", unit_passed, unit_failed);      \
		return unit_failed ? 1 : 0;                                      \
	} while (0)

#endif
