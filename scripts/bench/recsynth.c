// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * recsynth: stretch a real recording to any length for benchmarks, by
 * replaying its intervals in a loop through the real writer (the same
 * encoding, compression and framing `ilock record` uses).
 *
 *   recsynth IN.ilrec OUT.ilrec SECONDS
 *
 * Built and run by scripts/bench/report_speed.sh.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recfile.h"
#include "recview.h"

static int put(int fd, struct rec_buf *framed, uint8_t type, struct rec_buf *raw)
{
	int err;

	framed->len = 0;
	err = rec_frame_block(framed, type, raw->p, raw->len);
	raw->len = 0;
	return err ? err : rec_file_append(fd, framed);
}

int main(int argc, char **argv)
{
	struct recording in;
	struct rec_writer w;
	struct rec_buf raw = {}, framed = {};
	struct snapshot delta, inodes;
	uint64_t want_ns, t = 0, n = 0;
	int fd, err;

	if (argc != 4) {
		fprintf(stderr, "usage: recsynth IN.ilrec OUT.ilrec SECONDS\n");
		return 2;
	}
	want_ns = (uint64_t)(strtod(argv[3], NULL) * 1e9);
	rec_init(&in);
	if ((err = rec_file_load(argv[1], &in)) || in.status != REC_OK || !in.niv) {
		fprintf(stderr, "recsynth: %s: %s\n", argv[1],
			err ? strerror(-err) : in.niv ? in.msg : "no intervals");
		return 1;
	}
	fd = rec_file_create(argv[2], true);
	if (fd < 0) {
		fprintf(stderr, "recsynth: %s: %s\n", argv[2], strerror(-fd));
		return 1;
	}
	rec_writer_init(&w);
	w.ksyms = &in.syms;  /* frames named as the recording names them */
	snap_init(&delta);
	snap_init(&inodes);
	for (size_t i = 0; i < in.ninodes; i++)
		if (in.inodes[i].has_meta)
			snap_add_inode(&inodes, &in.inodes[i].meta);
	if ((err = rec_encode_meta(&raw, in.meta, in.nmeta)) ||
	    (err = put(fd, &framed, REC_BLK_META, &raw)))
		goto fail;
	while (t < want_ns) {
		size_t i = (size_t)(n % in.niv);

		snap_reset(&delta);
		if ((err = rec_add_interval(&in, i, NULL, &delta)) ||
		    (err = rec_encode_interval(&w, &raw, &delta, &inodes, &in.mounts, t,
					       in.iv[i].dur_ns)) ||
		    (err = put(fd, &framed, REC_BLK_INTERVAL, &raw)))
			goto fail;
		t += in.iv[i].dur_ns;
		n++;
	}
	if ((err = rec_encode_end(&raw, n, in.start_realtime_ns + t, "synthetic")) ||
	    (err = put(fd, &framed, REC_BLK_END, &raw)))
		goto fail;
	close(fd);
	printf("%" PRIu64 " intervals, %.1f s\n", n, (double)t / 1e9);
	return 0;
fail:
	fprintf(stderr, "recsynth: %s\n", strerror(-err));
	close(fd);
	return 1;
}
