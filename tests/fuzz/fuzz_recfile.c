// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the recording reader, and every view of report and
 * diff, on any bytes (fuzz_one.h). `make fuzz` runs it for a bounded time;
 * crashers belong in tests/fuzz/crashers/, which tests/unit/test_recfile.c
 * replays.
 */
#include <stdlib.h>

#include "fuzz_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *out;

	if (!out && !(out = fopen("/dev/null", "w")))
		abort();
	fuzz_one(data, size, out);
	return 0;
}
