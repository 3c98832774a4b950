// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: any bytes through the recording reader, then through
 * what report and diff do with a decoded recording (window sums, filters).
 * Input starting with the magic's first byte is a whole file; any other is
 * one block payload (first byte: block type), fed to the payload decoder
 * directly, twice: past the CRC and zlib layers a mutation would rarely pass.
 * `make fuzz` runs it for a bounded time; crashers belong in
 * tests/fuzz/crashers/, which tests/unit/test_recfile.c replays.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "recfile.h"
#include "recview.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct recording r;
	struct snapshot s;
	struct filters f = { .class_mask = 1U << ILOCK_CLASS_I_RWSEM };
	uint64_t t;
	char err[128];
	size_t i0, i1;

	rec_init(&r);
	snap_init(&s);
	if (size && data[0] == (uint8_t)REC_MAGIC[0]) {
		rec_decode(&r, data, size);
	} else if (size) {
		rec_decode_payload(&r, data[0] & 3, data + 1, size - 1);
		rec_decode_payload(&r, REC_BLK_INTERVAL, data + 1, size - 1);
		rec_finish(&r);
	}
	/* whatever decoded must be safe to use */
	rec_merge_window(&r, 0, r.niv, NULL, &s);
	rec_merge_window(&r, 0, r.niv, &f, &s);
	snap_sort_locks(&s, SORT_WAIT_TIME);
	snap_sort_edges(&s);
	rec_select(&r, 0, UINT64_MAX, &i0, &i1);
	rec_parse_time(&r, "12:00", &t, err, sizeof(err));
	(void)rec_meta(&r, "kernel");
	snap_free(&s);
	rec_free(&r);
	return 0;
}
