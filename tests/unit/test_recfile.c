// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The recording format: round trip through the real writer and reader,
 * every kind of damage, time windows and time arguments, and a replay of
 * the fuzz corpus and crashers.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "recfile.h"
#include "recsynth.h"
#include "recview.h"
#include "report.h"
#include "ops.h"
#include "render_ops.h"
#include "unit.h"
#include "../fuzz/fuzz_one.h"

#define DEV_X ILOCK_KDEV(7, 1)
#define MOUNTINFO "36 35 7:1 / /mnt/x rw,relatime shared:1 - xfs /dev/loop1 rw\n" \
		  "37 35 8:2 / /mnt/e rw,relatime shared:2 - ext4 /dev/sda2 rw\n"

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Re-seal a block after editing its header or payload, as a forger would. */
static void reseal(uint8_t *blk)
{
	uint32_t len = get32(blk + 4);
	uint32_t c = (uint32_t)crc32(0, blk, 12);

	c = (uint32_t)crc32(c, blk + REC_BLOCK_HDR_LEN, len);
	put32(blk + 12, c);
}

/* Offsets of each block in a file. */
static size_t block_offsets(const uint8_t *p, size_t len, size_t *offs, size_t max)
{
	size_t off = REC_HDR_LEN, n = 0;

	while (off + REC_BLOCK_HDR_LEN <= len && n < max) {
		offs[n++] = off;
		off += REC_BLOCK_HDR_LEN + get32(p + off + 4);
	}
	return n;
}

/*
 * Three intervals on one XFS inode: shared waits behind a writer, then
 * exclusive waits, then nothing; a second inode appears in interval 2.
 */
static void build(struct synth *s)
{
	struct snapshot d;
	struct ilock_edge_key ek = { .ino = 131, .dev = DEV_X, .class = ILOCK_CLASS_I_RWSEM,
				     .holder_mode = ILOCK_MODE_EXCL, .waiter_mode = ILOCK_MODE_SHARED,
				     .holder_pid = 100, .holder_tgid = 100, .waiter_pid = 201,
				     .waiter_tgid = 200, .holder_op = ILOCK_OP_BUFFERED_WRITE,
				     .waiter_op = ILOCK_OP_BUFFERED_READ, .range = ILOCK_RANGE_DISJOINT };
	struct ilock_edge_stats es = { .count = 3, .total_ns = 900000000, .max_ns = 300000000 };
	struct ilock_key hk = { .ino = 131, .dev = DEV_X, .class = ILOCK_CLASS_I_RWSEM,
				.mode = ILOCK_MODE_EXCL };
	struct ilock_stats hold = {};

	memcpy(ek.holder_comm, "lockhold", 9);
	memcpy(ek.waiter_comm, "exactly16chars!!", 16);  /* a comm without a NUL */
	synth_begin(s, 1000000000ULL, MOUNTINFO);
	snap_init(&d);
	synth_inode(&d, DEV_X, 131, ILOCK_XFS_SB_MAGIC, "/data");
	synth_wait(&d, DEV_X, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 3, 300000000);
	synth_add(&hold, 1, 500000000);
	snap_add_hold(&d, &hk, &hold);
	snap_add_edge(&d, &ek, &es);
	d.counters[ILOCK_EV_WAIT] = 3;
	d.counters[ILOCK_LOST_PATH] = 1;
	synth_interval(s, &d);

	snap_reset(&d);
	synth_wait(&d, DEV_X, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, 2, 1000000);
	/* a second inode: first seen without a path, which arrives later */
	synth_wait(&d, DEV_X, 999, ILOCK_CLASS_XFS_ILOCK, ILOCK_MODE_SHARED, 1, 5000);
	snap_add_edge(&d, &ek, &es);
	synth_interval(s, &d);

	snap_reset(&d);
	synth_inode(&d, DEV_X, 999, ILOCK_XFS_SB_MAGIC, "/dir/late");
	synth_interval(s, &d);
	synth_end(s);
	snap_free(&d);
}

static void test_round_trip(void)
{
	struct synth s;
	struct recording r;
	struct snapshot m;
	const struct lock_row *row;
	const struct inode_meta *im;
	char buf[64];

	build(&s);
	CHECK(s.ok);
	rec_init(&r);
	CHECK_EQ_U(rec_decode(&r, s.file.p, s.file.len), REC_OK);
	CHECK_STR(r.msg, "");
	CHECK_EQ_U(r.niv, 3);
	CHECK(r.has_end);
	CHECK_STR(r.end_reason, "test");
	CHECK_EQ_U(r.interval_ns, 1000000000ULL);
	CHECK_EQ_U(r.start_realtime_ns, SYNTH_START_NS);
	CHECK_STR(rec_meta(&r, "hostname"), "unit");
	CHECK_EQ_U(r.good_bytes, s.file.len);
	/* the mount table, only for the device seen */
	CHECK_EQ_U(r.mounts.n, 1);
	if (r.mounts.n)
		CHECK_STR(r.mounts.e[0].mnt, "/mnt/x");
	/* inodes written once; the late path arrives as an update */
	CHECK_EQ_U(r.ninodes, 2);
	CHECK_EQ_U(r.iv[1].t_start_ns, 1000000000ULL);
	CHECK_EQ_U(r.iv[0].counters[ILOCK_EV_WAIT], 3);
	CHECK_EQ_U(r.iv[0].counters[ILOCK_LOST_PATH], 1);
	/* a task's comm is NUL-padded: keys built from it compare whole */
	CHECK(r.ntasks > 0);
	for (size_t t = 0; t < r.ntasks; t++)
		for (size_t i = strnlen(r.tasks[t].comm, ILOCK_COMM_LEN); i < ILOCK_COMM_LEN; i++)
			CHECK_EQ_U(r.tasks[t].comm[i], 0);

	snap_init(&m);
	CHECK(!rec_merge_window(&r, 0, r.niv, NULL, &m));
	row = snap_find_lock(&m, DEV_X, 131, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(row != NULL);
	if (row) {
		CHECK_EQ_U(row->wait[ILOCK_MODE_SHARED].count, 3);
		CHECK_EQ_U(row->wait[ILOCK_MODE_SHARED].total_ns, 900000000);
		CHECK_EQ_U(row->wait[ILOCK_MODE_SHARED].max_ns, 300000000);
		CHECK_EQ_U(row->wait[ILOCK_MODE_SHARED].hist[ilock_hist_slot(300000000)], 3);
		CHECK_EQ_U(row->wait[ILOCK_MODE_EXCL].count, 2);
		CHECK(row->has_hold);
		CHECK_EQ_U(row->hold[ILOCK_MODE_EXCL].max_ns, 500000000);
	}
	CHECK_EQ_U(m.nedges, 1);
	if (m.nedges) {
		CHECK_EQ_U(m.edges[0].s.count, 6);
		CHECK_EQ_U(m.edges[0].k.waiter_pid, 201);
		CHECK(!memcmp(m.edges[0].k.waiter_comm, "exactly16chars!!", 16));
		CHECK_STR(m.edges[0].k.holder_comm, "lockhold");
		/* format 1.1: the ops and the range class come back */
		CHECK_EQ_U(m.edges[0].k.holder_op, ILOCK_OP_BUFFERED_WRITE);
		CHECK_EQ_U(m.edges[0].k.waiter_op, ILOCK_OP_BUFFERED_READ);
		CHECK_EQ_U(m.edges[0].k.range, ILOCK_RANGE_DISJOINT);
	}
	/* and the lock's range sums are rebuilt from them, as live */
	if (row) {
		CHECK_EQ_U(row->range[ILOCK_RANGE_DISJOINT].waits, 6);
		CHECK_EQ_U(row->range[ILOCK_RANGE_DISJOINT].wait_ns, 1800000000);
		CHECK_EQ_U(row->range[ILOCK_RANGE_OVERLAP].waits, 0);
	}
	CHECK_EQ_U(m.counters[ILOCK_EV_WAIT], 3);
	im = snap_find_inode(&m, DEV_X, 999, 0);
	CHECK(im && !strcmp(im->path, "/dir/late"));
	im = snap_find_inode(&m, DEV_X, 131, 0);
	CHECK(im && !strcmp(im->path, "/data"));

	/* a window of the second interval alone */
	CHECK(!rec_merge_window(&r, 1, 2, NULL, &m));
	row = snap_find_lock(&m, DEV_X, 131, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(row && row->wait[ILOCK_MODE_SHARED].count == 0 && row->wait[ILOCK_MODE_EXCL].count == 2);

	/* filters as report applies them */
	{
		struct filters f = { .class_mask = 1U << ILOCK_CLASS_XFS_ILOCK };

		CHECK(!rec_merge_window(&r, 0, r.niv, &f, &m));
		CHECK_EQ_U(m.nlocks, 1);
		CHECK_EQ_U(m.nedges, 0);
		f = (struct filters){ .fs_magic = ILOCK_EXT4_SB_MAGIC };
		CHECK(!rec_merge_window(&r, 0, r.niv, &f, &m));
		CHECK_EQ_U(m.nlocks, 0);
		f = (struct filters){ .tgid = 200 };
		CHECK(!rec_merge_window(&r, 0, r.niv, &f, &m));
		CHECK_EQ_U(m.nedges, 1);
		f = (struct filters){ .tgid = 201 };
		CHECK(!rec_merge_window(&r, 0, r.niv, &f, &m));
		CHECK_EQ_U(m.nedges, 0);
	}
	snprintf(buf, sizeof(buf), "%s", rec_status_name(r.status));
	CHECK_STR(buf, "ok");
	snap_free(&m);
	rec_free(&r);
	synth_free(&s);
}

/* The second interval repeats a known inode: no inode definition again. */
static void test_written_once(void)
{
	struct rec_writer w;
	struct rec_buf a = {}, b = {};
	struct snapshot d;

	rec_writer_init(&w);
	snap_init(&d);
	synth_inode(&d, DEV_X, 5, ILOCK_XFS_SB_MAGIC, "/a/very/long/path/name/to/notice");
	synth_wait(&d, DEV_X, 5, 0, 0, 1, 1000);
	CHECK(!rec_encode_interval(&w, &a, &d, &d, NULL, 0, 1));
	CHECK(!rec_encode_interval(&w, &b, &d, &d, NULL, 1, 1));
	CHECK(memmem(a.p, a.len, "notice", 6) != NULL);
	CHECK(memmem(b.p, b.len, "notice", 6) == NULL);
	CHECK(b.len + 30 < a.len);
	rec_buf_free(&a);
	rec_buf_free(&b);
	snap_free(&d);
	rec_writer_free(&w);
}

static enum rec_status decode_status(const uint8_t *p, size_t len, struct recording *r)
{
	rec_free(r);
	rec_init(r);
	return rec_decode(r, p, len);
}

static void test_damage(void)
{
	struct synth s;
	struct recording r;
	uint8_t *p;
	size_t len, offs[16], nb;
	const char *msgs[REC_STATUS_MAX] = { 0 };
	int seen = 0;

	build(&s);
	len = s.file.len;
	p = malloc(len + 64);
	rec_init(&r);
	nb = block_offsets(s.file.p, len, offs, 16);
	CHECK_EQ_U(nb, 5);  /* META, 3 intervals, END */

#define EXPECT(st_, ...)                                                                \
	do {                                                                            \
		CHECK_EQ_U(decode_status(__VA_ARGS__, &r), st_);                        \
		CHECK(r.msg[0] && !strchr(r.msg, '\n'));                                \
		if (!msgs[st_]) {                                                       \
			msgs[st_] = strdup(r.msg);                                      \
			seen++;                                                         \
		}                                                                       \
	} while (0)

	EXPECT(REC_EMPTY, s.file.p, 0);
	EXPECT(REC_NOT_RECORDING, (const uint8_t *)"hello, world: not a recording\n", 30);
	EXPECT(REC_NOT_RECORDING, (const uint8_t *)"ab", 2);
	EXPECT(REC_SHORT_HEADER, s.file.p, 10);

	memcpy(p, s.file.p, len);
	p[3] ^= 0x20;  /* "ILoCK" */
	EXPECT(REC_BAD_MAGIC, p, len);

	memcpy(p, s.file.p, len);
	p[8] = 2;  /* major 2, minor 0, its header CRC right */
	p[10] = p[11] = 0;
	{
		uint32_t c = (uint32_t)crc32(crc32(0, Z_NULL, 0), p, 12);

		for (int i = 0; i < 4; i++)
			p[12 + i] = (uint8_t)(c >> (8 * i));
	}
	EXPECT(REC_NEWER_MAJOR, p, len);
	CHECK(strstr(r.msg, "2.0") != NULL);
	/* the same byte flipped by damage: the checksum says so, not "newer" */
	memcpy(p, s.file.p, len);
	p[9] ^= 0x5a;
	EXPECT(REC_HEADER_CRC, p, len);

	memcpy(p, s.file.p, len);
	p[10] ^= 1;  /* minor changed without fixing the header CRC */
	EXPECT(REC_HEADER_CRC, p, len);

	/* cut inside the last interval: the two before it survive */
	EXPECT(REC_TRUNCATED, s.file.p, offs[3] + 20);
	CHECK_EQ_U(r.niv, 2);
	CHECK_EQ_U(r.good_bytes, offs[3]);
	CHECK(!r.has_end);
	CHECK(rec_status_partial(r.status));
	/* cut inside a block header */
	CHECK_EQ_U(decode_status(s.file.p, offs[4] + 5, &r), REC_TRUNCATED);
	CHECK_EQ_U(r.niv, 3);
	/* cut exactly between blocks: no damage, but no end block either */
	CHECK_EQ_U(decode_status(s.file.p, offs[4], &r), REC_OK);
	CHECK_EQ_U(r.niv, 3);
	CHECK(!r.has_end);

	memcpy(p, s.file.p, len);
	p[offs[2] + REC_BLOCK_HDR_LEN + 3] ^= 0x01;  /* one bit in interval 2's payload */
	EXPECT(REC_BAD_CRC, p, len);
	CHECK_EQ_U(r.niv, 1);
	CHECK_EQ_U(r.good_bytes, offs[2]);

	memcpy(p, s.file.p, len);
	put32(p + offs[2] + 4, 0xFFFFFFFFU);  /* claims 4 GiB */
	EXPECT(REC_TOO_BIG, p, len);
	CHECK(strstr(r.msg, "4294967295") != NULL);
	CHECK_EQ_U(r.niv, 1);

	/* a zlib bomb declared honestly: 128 MiB of zeros, over the 64 MiB limit */
	{
		size_t big = 128U << 20, chunk = 1 << 20;
		uint8_t *zeros = calloc(1, chunk), *out = malloc(compressBound(big) / 64 + 65536);
		z_stream zs = { 0 };
		struct rec_buf f = { 0 };
		size_t clen;

		deflateInit(&zs, 9);
		zs.next_out = out;
		zs.avail_out = (uInt)(compressBound(big) / 64 + 65536);
		for (size_t done = 0; done < big; done += chunk) {
			zs.next_in = zeros;
			zs.avail_in = (uInt)chunk;
			deflate(&zs, done + chunk >= big ? Z_FINISH : Z_NO_FLUSH);
		}
		clen = zs.total_out;
		deflateEnd(&zs);
		rec_buf_put(&f, s.file.p, offs[1]);  /* header + META */
		{
			uint8_t h[REC_BLOCK_HDR_LEN] = { REC_BLK_INTERVAL, REC_CODEC_ZLIB };

			put32(h + 4, (uint32_t)clen);
			put32(h + 8, (uint32_t)big);
			rec_buf_put(&f, h, sizeof(h));
			rec_buf_put(&f, out, clen);
			reseal(f.p + offs[1]);
		}
		EXPECT(REC_BOMB, f.p, f.len);
		CHECK(strstr(r.msg, "zlib bomb") != NULL);
		/* the same bytes declaring 100 bytes: stops at 101 */
		put32(f.p + offs[1] + 8, 100);
		reseal(f.p + offs[1]);
		CHECK_EQ_U(decode_status(f.p, f.len, &r), REC_BOMB);
		CHECK(strstr(r.msg, "zlib bomb") != NULL);
		rec_buf_free(&f);
		free(zeros);
		free(out);
	}

	/*
	 * A bomb one level up: a small, valid block of 300,000 three-byte
	 * lock records, each a kilobyte decoded, is refused by the memory
	 * budget (64 MiB + 1000 x file size), not allocated.
	 */
	{
		struct rec_buf f = { 0 }, raw = { 0 };

		rec_buf_put(&f, s.file.p, offs[1]);  /* header + META */
		rec_buf_varint(&raw, 0);
		rec_buf_varint(&raw, 0);
		rec_buf_varint(&raw, 1);
		rec_buf_varint(&raw, 0);
		rec_buf_varint(&raw, 0);             /* counters */
		rec_buf_varint(&raw, 0);             /* mounts */
		rec_buf_varint(&raw, 1);             /* one inode, new */
		rec_buf_put(&raw, "\0\1\1\0", 4);    /* id 0, dev 1, ino 1, no meta */
		rec_buf_varint(&raw, 0);             /* tasks */
		rec_buf_varint(&raw, 300000);
		for (int i = 0; i < 300000; i++)
			rec_buf_put(&raw, "\0\0\0", 3);  /* inode 0, class 0, nothing present */
		rec_buf_varint(&raw, 0);             /* edges */
		CHECK(!rec_frame_block(&f, REC_BLK_INTERVAL, raw.p, raw.len));
		CHECK(f.len < 16384);
		CHECK_EQ_U(decode_status(f.p, f.len, &r), REC_BOMB);
		CHECK(strstr(r.msg, "decodes to more records") != NULL);
		CHECK_EQ_U(r.nlocks, 0);
		CHECK(r.cap_locks * sizeof(struct rec_lock) <= r.mem_budget);
		rec_buf_free(&f);
		rec_buf_free(&raw);
	}

	/* checksum right, content wrong: an interval naming inode 77 of 1 */
	{
		struct rec_buf f = { 0 }, raw = { 0 };

		rec_buf_put(&f, s.file.p, offs[2]);  /* header, META, interval 1 */
		rec_buf_varint(&raw, 9);             /* seq */
		rec_buf_varint(&raw, 0);
		rec_buf_varint(&raw, 1);
		rec_buf_varint(&raw, 0);
		rec_buf_varint(&raw, 0);             /* counters */
		rec_buf_varint(&raw, 0);             /* mounts */
		rec_buf_varint(&raw, 0);             /* inode defs */
		rec_buf_varint(&raw, 0);             /* tasks */
		rec_buf_varint(&raw, 1);             /* one lock ... */
		rec_buf_varint(&raw, 77);            /* ... on an inode never defined */
		rec_buf_put(&raw, "\0\1", 2);
		rec_buf_put(&raw, "\1\1\1\0\0", 5);
		CHECK(!rec_frame_block(&f, REC_BLK_INTERVAL, raw.p, raw.len));
		EXPECT(REC_MALFORMED, f.p, f.len);
		CHECK_EQ_U(r.niv, 1);
		CHECK_EQ_U(r.nlocks, 1);  /* the bad block left nothing behind */
		/* an ops section (1.1) that does not match the edges before it */
		f.len = offs[2];
		raw.len = 0;
		rec_buf_varint(&raw, 9);
		rec_buf_put(&raw, "\0\1\0\0\0\0\0\0\0", 9); /* ... no locks, no edges */
		rec_buf_varint(&raw, 1);             /* ops for one edge */
		rec_buf_put(&raw, "\1\0\2\0\2", 5);
		CHECK(!rec_frame_block(&f, REC_BLK_INTERVAL, raw.p, raw.len));
		CHECK_EQ_U(decode_status(f.p, f.len, &r), REC_MALFORMED);
		CHECK_EQ_U(r.niv, 1);
		/* the same without the ops section reads as a 1.0 block */
		f.len = offs[2];
		raw.len -= 6;
		CHECK(!rec_frame_block(&f, REC_BLK_INTERVAL, raw.p, raw.len));
		CHECK_EQ_U(decode_status(f.p, f.len, &r), REC_OK);
		CHECK_EQ_U(r.niv, 2);
		/* an unknown block type from a newer minor version is skipped */
		f.len = offs[2];
		CHECK(!rec_frame_block(&f, 99, "future", 6));
		rec_buf_put(&f, s.file.p + offs[2], len - offs[2]);
		CHECK_EQ_U(decode_status(f.p, f.len, &r), REC_OK);
		CHECK_EQ_U(r.niv, 3);
		/* a first block that is not the metadata */
		f.len = REC_HDR_LEN;
		rec_buf_put(&f, s.file.p + offs[1], len - offs[1]);
		EXPECT(REC_NO_META, f.p, f.len);
		/* the header alone */
		CHECK_EQ_U(decode_status(s.file.p, REC_HDR_LEN, &r), REC_NO_META);
		rec_buf_free(&f);
		rec_buf_free(&raw);
	}
	/* metadata and no interval: valid, empty */
	CHECK_EQ_U(decode_status(s.file.p, offs[1], &r), REC_OK);
	CHECK_EQ_U(r.niv, 0);

	/* every kind of damage has its own message */
	CHECK_EQ_U(seen, 12);
	for (int a = 0; a < REC_STATUS_MAX; a++)
		for (int b = a + 1; b < REC_STATUS_MAX; b++)
			if (msgs[a] && msgs[b])
				CHECK(strcmp(msgs[a], msgs[b]) != 0);
	for (int a = 0; a < REC_STATUS_MAX; a++)
		free((void *)msgs[a]);
#undef EXPECT
	rec_free(&r);
	free(p);
	synth_free(&s);
}

/*
 * Format 1.2 stacks: frames written once, as names; the tracing frames on
 * top left out; a stack row whose edge had no wait in its interval; the
 * frames come back through the recording's own symbol table.
 */
#define KADDR(x) (0xffffffff81000000ULL + (x))

static void stack_edge(struct ilock_edge_key *k, uint32_t waiter)
{
	*k = (struct ilock_edge_key){ .ino = 131, .dev = DEV_X, .class = ILOCK_CLASS_I_RWSEM,
				      .holder_mode = ILOCK_MODE_EXCL, .waiter_mode = ILOCK_MODE_SHARED,
				      .holder_pid = 100, .holder_tgid = 100, .waiter_pid = waiter,
				      .waiter_tgid = waiter, .holder_op = ILOCK_OP_BUFFERED_WRITE,
				      .waiter_op = ILOCK_OP_BUFFERED_READ, .range = ILOCK_RANGE_DISJOINT };
	memcpy(k->holder_comm, "writer", 7);
	memcpy(k->waiter_comm, "reader", 7);
}

static void add_stack_row(struct snapshot *d, const struct ilock_edge_key *e, uint8_t kind,
			  uint64_t id, uint64_t n, uint64_t ns)
{
	struct ilock_stack_key k = { .edge = *e, .stack = id, .kind = kind };
	struct ilock_stack_stats st = { .count = n, .total_ns = ns };

	CHECK(!snap_add_stack(d, &k, &st));
}

static char *stack_text(const struct snapshot *m, uint8_t kind, uint64_t id, struct ksyms *ks)
{
	const struct ilock_stack_frames *fr = snap_find_frames(m, kind, id);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (fr)
		render_stack_line(f, fr, ks, 200);
	fclose(f);
	return buf;
}

static void test_stacks(void)
{
	struct synth s;
	struct recording r;
	struct snapshot d, m;
	struct ksyms ks = {};
	struct ilock_edge_key e1, e2;
	struct ilock_edge_stats es = { .count = 2, .total_ns = 600, .max_ns = 400 };
	struct ilock_stack_frames wf = { .nr = 4, .ip = { KADDR(0x10), KADDR(0x1020), KADDR(0x2030),
							  0x1234 } };
	struct ilock_stack_frames hf = { .nr = 2, .ip = { KADDR(0x3010), KADDR(0x2040) } };
	char *txt, *folded = NULL;
	size_t flen = 0;
	FILE *ff;

	CHECK(!ksyms_add(&ks, KADDR(0), "bpf_trace_run2"));
	CHECK(!ksyms_add(&ks, KADDR(0x1000), "rwsem_down_read_slowpath"));
	CHECK(!ksyms_add(&ks, KADDR(0x2000), "xfs_file_buffered_read"));
	CHECK(!ksyms_add(&ks, KADDR(0x3000), "handle_userfault"));
	stack_edge(&e1, 201);
	stack_edge(&e2, 202);
	synth_begin(&s, 1000000000ULL, MOUNTINFO);
	s.w.ksyms = &ks;
	snap_init(&d);
	synth_inode(&d, DEV_X, 131, ILOCK_XFS_SB_MAGIC, "/data");
	synth_wait(&d, DEV_X, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 2, 300);
	snap_add_edge(&d, &e1, &es);
	add_stack_row(&d, &e1, ILOCK_STACK_WAITER, 7, 2, 600);
	add_stack_row(&d, &e1, ILOCK_STACK_HOLDER, 0xabcdef, 1, 600);
	CHECK(!snap_add_frames(&d, ILOCK_STACK_WAITER, 7, &wf));
	CHECK(!snap_add_frames(&d, ILOCK_STACK_HOLDER, 0xabcdef, &hf));
	synth_interval(&s, &d);
	/* 3 frames named (the bpf_ one on top left out), 1 more for the holder: by function */
	CHECK_EQ_U(s.w.nframes, 4);
	CHECK_EQ_U(s.w.nstacks, 2);

	/* interval 2: the same waiter stack behind e2, whose edge row came a read later */
	snap_reset(&d);
	add_stack_row(&d, &e2, ILOCK_STACK_WAITER, 7, 1, 5000);
	CHECK(!snap_add_frames(&d, ILOCK_STACK_WAITER, 7, &wf));
	synth_interval(&s, &d);
	CHECK_EQ_U(s.w.nframes, 4);   /* nothing defined twice */
	CHECK_EQ_U(s.w.nstacks, 2);
	snap_reset(&d);
	snap_add_edge(&d, &e2, &(struct ilock_edge_stats){ .count = 1, .total_ns = 5000,
							   .max_ns = 5000 });
	synth_interval(&s, &d);
	synth_end(&s);
	CHECK(s.ok);

	rec_init(&r);
	CHECK_EQ_U(rec_decode(&r, s.file.p, s.file.len), REC_OK);
	CHECK_EQ_U(r.nframes, 4);
	CHECK_EQ_U(r.nstacks, 2);
	CHECK_EQ_U(r.nsrows, 3);
	CHECK_EQ_U(r.iv[1].nedges, 1);   /* e2, written for its stack, without waits */
	CHECK_EQ_U(r.edges[r.iv[1].edge0].s.count, 0);

	snap_init(&m);
	CHECK(!rec_merge_window(&r, 0, r.niv, NULL, &m));
	CHECK_EQ_U(m.nedges, 2);
	CHECK_EQ_U(m.nstacks, 3);
	txt = stack_text(&m, ILOCK_STACK_WAITER, 0, &r.syms);
	CHECK_STR(txt, "rwsem_down_read_slowpath < xfs_file_buffered_read < 0x1234\n");
	free(txt);
	txt = stack_text(&m, ILOCK_STACK_HOLDER, 1, &r.syms);
	CHECK_STR(txt, "handle_userfault < xfs_file_buffered_read\n");
	free(txt);
	/* the folded view adds the two readers' time on the one stack */
	ff = open_memstream(&folded, &flen);
	CHECK(!render_folded(ff, &m, &r.syms));
	fclose(ff);
	CHECK_STR(folded, "IOLOCK;shared;0x1234;xfs_file_buffered_read;rwsem_down_read_slowpath 5600\n");
	free(folded);

	/* interval 2 alone: e2's stack row, with e2 from the next block absent */
	CHECK(!rec_merge_window(&r, 1, 2, NULL, &m));
	CHECK_EQ_U(m.nedges, 0);
	CHECK_EQ_U(m.nstacks, 1);
	/* the filters apply to a stack row through its edge */
	{
		struct filters f = { .tgid = 201 };

		CHECK(!rec_merge_window(&r, 0, r.niv, &f, &m));
		CHECK_EQ_U(m.nstacks, 2);
		for (size_t i = 0; i < m.nstacks; i++)
			CHECK_EQ_U(m.stacks[i].k.edge.waiter_tgid, 201);
	}
	/* one block at a time as rec_add_interval sums them: the same rows */
	snap_reset(&m);
	for (size_t i = 0; i < r.niv; i++)
		CHECK(!rec_add_interval(&r, i, NULL, &m));
	CHECK_EQ_U(m.nstacks, 3);
	CHECK_EQ_U(m.nedges, 2);

	snap_free(&m);
	snap_free(&d);
	rec_free(&r);
	synth_free(&s);
	ksyms_free(&ks);
}

/* One interval: one wait of e, on kernel waiter stack id with frames fr. */
static void stack_interval(struct synth *s, struct snapshot *d, const struct ilock_edge_key *e,
			   uint64_t id, const struct ilock_stack_frames *fr)
{
	snap_reset(d);
	synth_inode(d, DEV_X, 131, ILOCK_XFS_SB_MAGIC, "/data");
	snap_add_edge(d, e, &(struct ilock_edge_stats){ .count = 1, .total_ns = 100, .max_ns = 100 });
	add_stack_row(d, e, ILOCK_STACK_WAITER, id, 1, 100);
	CHECK(!snap_add_frames(d, ILOCK_STACK_WAITER, id, fr));
	synth_interval(s, d);
}

/*
 * --renew: a fresh stack map gives out the old one's kernel ids again, for
 * other stacks. After rec_writer_forget_stacks the same kernel id is
 * defined anew, with its new frames; the old rows keep theirs.
 */
static void test_stacks_forgotten(void)
{
	struct synth s;
	struct recording r;
	struct snapshot d, m;
	struct ksyms ks = {};
	struct ilock_edge_key e;
	struct ilock_stack_frames before = { .nr = 2, .ip = { KADDR(0x1010), KADDR(0x2010) } };
	struct ilock_stack_frames after = { .nr = 2, .ip = { KADDR(0x3010), KADDR(0x2010) } };
	char *txt;

	CHECK(!ksyms_add(&ks, KADDR(0x1000), "rwsem_down_read_slowpath"));
	CHECK(!ksyms_add(&ks, KADDR(0x2000), "xfs_file_buffered_read"));
	CHECK(!ksyms_add(&ks, KADDR(0x3000), "rwsem_down_write_slowpath"));
	stack_edge(&e, 201);
	synth_begin(&s, 1000000000ULL, MOUNTINFO);
	s.w.ksyms = &ks;
	snap_init(&d);
	stack_interval(&s, &d, &e, 7, &before);
	rec_writer_forget_stacks(&s.w);
	stack_interval(&s, &d, &e, 7, &after);
	CHECK_EQ_U(s.w.nstacks, 2);    /* kernel id 7 twice: two stacks */
	CHECK_EQ_U(s.w.nframes, 3);    /* the frame they share is named once */
	/* the first stack again, under a new kernel id: its file id, not a third */
	rec_writer_forget_stacks(&s.w);
	stack_interval(&s, &d, &e, 9, &before);
	CHECK_EQ_U(s.w.nstacks, 2);
	synth_finish(&s, &d, &r);
	snap_init(&m);
	for (size_t i = 0; i < 3; i++) {
		CHECK(!rec_merge_window(&r, i, i + 1, NULL, &m));
		CHECK_EQ_U(m.nstacks, 1);
		txt = stack_text(&m, ILOCK_STACK_WAITER, m.stacks[0].k.stack, &r.syms);
		CHECK_STR(txt, i == 1 ? "rwsem_down_write_slowpath < xfs_file_buffered_read\n"
				      : "rwsem_down_read_slowpath < xfs_file_buffered_read\n");
		free(txt);
	}
	/* the pair's waits on the first stack, before and after: one row */
	CHECK(!rec_merge_window(&r, 0, 3, NULL, &m));
	CHECK_EQ_U(m.nstacks, 2);
	snap_free(&m);
	rec_free(&r);
	ksyms_free(&ks);
}

/* (1.8) The interval at which the recorder moved to fresh tables says so. */
static void test_tables_end_flag(void)
{
	struct synth s;
	struct recording r;
	struct snapshot d;

	synth_begin(&s, 1000000000ULL, MOUNTINFO);
	snap_init(&d);
	for (int i = 0; i < 3; i++) {
		snap_reset(&d);
		synth_wait(&d, DEV_X, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1, 300);
		s.w.tables_end = i == 1;
		synth_interval(&s, &d);
		CHECK(!s.w.tables_end);  /* one interval's, cleared once written */
	}
	synth_finish(&s, &d, &r);
	CHECK_EQ_U(r.minor, 8);
	CHECK_EQ_U(r.niv, 3);
	for (size_t i = 0; i < r.niv; i++)
		CHECK_EQ_U(r.iv[i].tables_end, i == 1);
	CHECK_EQ_U(rec_renewals(&r, 0, r.niv), 1);
	CHECK_EQ_U(rec_renewals(&r, 2, r.niv), 0);
	rec_free(&r);
}

/* A stacks section whose ids point nowhere does not decode. */
static void test_stacks_malformed(void)
{
	struct synth s;
	struct recording r;
	struct snapshot d;
	struct ilock_edge_key e1;
	size_t offs[8], n;
	static const struct {
		const char *what;
		const char *bytes;
		size_t len;
	} bad[] = {
		/* new frames, new stacks, rows */
		{ "row on an edge the block lacks", "\0\0\1\1\0\1\1", 7 },
		{ "row on a stack never defined", "\0\0\1\0\5\1\1", 7 },
		{ "stack with a frame never named", "\0\1\0\1\3\0", 6 },
		{ "stack deeper than 32 frames", "\1\1f\1\0\41\0", 7 },
		{ "stack of an unknown kind", "\0\1\2\0\0", 5 },
		{ "empty frame name", "\1\0\0\0", 4 },
	};

	/* a first interval defines the inode (0) and the tasks (holder 0, waiter 1) */
	stack_edge(&e1, 201);
	synth_begin(&s, 1000000000ULL, NULL);
	snap_init(&d);
	snap_add_edge(&d, &e1, &(struct ilock_edge_stats){ .count = 1, .total_ns = 1, .max_ns = 1 });
	synth_interval(&s, &d);
	synth_end(&s);
	n = block_offsets(s.file.p, s.file.len, offs, 8);
	CHECK_EQ_U(n, 3);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rec_buf f = {}, raw = {};

		rec_buf_put(&f, s.file.p, offs[2]);
		rec_buf_varint(&raw, 1);
		rec_buf_put(&raw, "\0\1\0\0\0\0\0\0", 8); /* nothing new, no locks */
		rec_buf_put(&raw, "\1\0\0\1\0\1\1\1\1", 9); /* one edge: inode 0, tasks 0 -> 1 */
		rec_buf_put(&raw, "\1\1\0\2\0\2", 6);       /* its ops */
		rec_buf_put(&raw, bad[i].bytes, bad[i].len);
		CHECK(!rec_frame_block(&f, REC_BLK_INTERVAL, raw.p, raw.len));
		rec_init(&r);
		if (rec_decode(&r, f.p, f.len) != REC_MALFORMED)
			fprintf(stderr, "  not malformed: %s\n", bad[i].what);
		CHECK_EQ_U(r.status, REC_MALFORMED);
		CHECK_EQ_U(r.niv, 1);
		CHECK_EQ_U(r.nframes + r.nstacks + r.nsrows, 0);  /* rolled back */
		CHECK_EQ_U(r.nedges, 1);
		rec_free(&r);
		/* the same block with an empty stacks section is fine */
		f.len = offs[2];
		raw.len -= bad[i].len;
		rec_buf_put(&raw, "\0\0\0", 3);
		CHECK(!rec_frame_block(&f, REC_BLK_INTERVAL, raw.p, raw.len));
		rec_init(&r);
		CHECK_EQ_U(rec_decode(&r, f.p, f.len), REC_OK);
		CHECK_EQ_U(r.niv, 2);
		CHECK_EQ_U(r.nedges, 2);
		rec_free(&r);
		rec_buf_free(&f);
		rec_buf_free(&raw);
	}
	snap_free(&d);
	synth_free(&s);
}

static struct ilock_waiting stall_rec(uint32_t tid, uint64_t start_ns, uint64_t now_ns)
{
	struct ilock_waiting w = { .start_ns = start_ns, .now_ns = now_ns, .lock = 0xffff1,
				   .tid = tid, .tgid = 300, .holder_pid = 100, .holder_tgid = 100,
				   .owner_pid = 100, .owner_tgid = 100, .weight = 1,
				   .owner_state = 0x2, .waiter_state = 0x2,
				   .holder_mode = ILOCK_MODE_EXCL,
				   .owner_mode = ILOCK_MODE_EXCL };

	w.key = (struct ilock_key){ .ino = 131, .dev = DEV_X, .class = ILOCK_CLASS_I_RWSEM,
				    .mode = ILOCK_MODE_SHARED };
	w.wop = (struct ilock_op_info){ .op = ILOCK_OP_BUFFERED_READ, .flags = ILOCK_OPF_RANGE,
					.start = 8192, .end = 12288 };
	w.hop = (struct ilock_op_info){ .op = ILOCK_OP_BUFFERED_WRITE, .flags = ILOCK_OPF_RANGE,
					.start = 0, .end = 4096 };
	memcpy(w.comm, "pg", 3);
	memcpy(w.holder_comm, "fio", 4);
	memcpy(w.owner_comm, "fio", 4);
	return w;
}

/* A read at mono_ns that found the waits w[0..n) in progress: d's interval written to s. */
static void stalls_read(struct synth *s, struct snapshot *d, const struct ilock_waiting *w,
			size_t n, uint64_t mono_ns)
{
	for (size_t i = 0; i < n; i++)
		CHECK(!waiting_add_raw(&d->waiting, &w[i], sizeof(w[i]), 0));
	d->waiting.available = true;
	waiting_finish(&d->waiting);
	d->mono_ns = mono_ns;
	synth_interval(s, d);
}

/*
 * Stalls (1.3): a wait in progress at two reads is one stall, at its
 * longest; one under 100 ms is not written; a damaged stall is malformed
 * and rolled back.
 */
static void test_stalls(void)
{
	const uint64_t s0 = 5000000000ULL;  /* the monotonic clock: only differences count */
	struct synth s;
	struct recording r;
	struct snapshot d;
	struct ilock_waiting a = stall_rec(201, s0 + 200000000, s0 + 1000000000);
	struct ilock_waiting young = stall_rec(202, s0 + 950000000, s0 + 1000000000);
	struct report_ctx c = {};
	struct report_stall *v;
	size_t n, offs[8];

	synth_begin(&s, 1000000000ULL, MOUNTINFO);
	snap_init(&d);
	synth_inode(&d, DEV_X, 131, ILOCK_XFS_SB_MAGIC, "/data");
	/* the read, 1 s after the start */
	stalls_read(&s, &d, (struct ilock_waiting[]){ a, young }, 2, s0 + 1000000000);
	/* the next read: the same wait, a second older */
	snap_reset(&d);
	a.now_ns += 1000000000;
	stalls_read(&s, &d, &a, 1, s0 + 2000000000);
	snap_reset(&d);
	d.waiting.available = true;
	d.mono_ns = s0 + 3000000000ULL;
	synth_interval(&s, &d);  /* over by the third read */
	synth_end(&s);
	CHECK(s.ok);

	rec_init(&r);
	CHECK_EQ_U(rec_decode(&r, s.file.p, s.file.len), REC_OK);
	CHECK_EQ_U(r.minor, REC_MINOR);
	CHECK_EQ_U(r.niv, 3);
	CHECK_EQ_U(r.nstalls, 2);
	CHECK_EQ_U(r.iv[0].nstalls, 1);
	CHECK_EQ_U(r.iv[1].nstalls, 1);
	CHECK_EQ_U(r.iv[2].nstalls, 0);
	CHECK_EQ_U(r.stalls[0].waited_ns, 800000000);
	CHECK_EQ_U(r.stalls[1].waited_ns, 1800000000);
	/* the start as recorded, the same at both reads */
	CHECK_EQ_U(r.stalls[0].start_ns, 200000000);
	CHECK_EQ_U(r.stalls[1].start_ns, 200000000);
	CHECK(r.iv[0].stalls_read && r.iv[1].stalls_read && r.iv[2].stalls_read);
	CHECK_EQ_U(r.tasks[r.stalls[1].waiter].pid, 201);
	CHECK_EQ_U(r.tasks[r.stalls[1].holder].pid, 100);
	CHECK(r.stalls[1].owner_state == 'D');
	CHECK_EQ_U(r.stalls[1].range, ILOCK_RANGE_DISJOINT);
	CHECK_EQ_U(r.stalls[1].waiter_op, ILOCK_OP_BUFFERED_READ);
	CHECK_EQ_U(r.stalls[1].holder_mode, ILOCK_MODE_EXCL);
	CHECK_EQ_U(r.stalls[1].waiter_mode, ILOCK_MODE_SHARED);

	c.r = &r;
	c.i0 = 0;
	c.i1 = r.niv;
	CHECK(!report_stalls(&c, &v, &n));
	CHECK_EQ_U(n, 1);
	if (n == 1) {
		CHECK_EQ_U(v[0].s->waited_ns, 1800000000);
		CHECK_EQ_U(v[0].first_iv, 0);
		CHECK_EQ_U(v[0].last_iv, 1);
		CHECK_EQ_U(v[0].s->start_ns, 200000000);
	}
	free(v);
	/* a window of the first interval alone sees it too, at its first sighting */
	c.i1 = 1;
	CHECK(!report_stalls(&c, &v, &n));
	CHECK_EQ_U(n, 1);
	if (n == 1)
		CHECK_EQ_U(v[0].s->waited_ns, 800000000);
	free(v);
	/* the text: when it began, how long at least, and how it ended */
	{
		struct snapshot merged;
		struct report_meta meta = { .mounts = &r.mounts };
		char *text = NULL;
		size_t len = 0;
		FILE *f;

		snap_init(&merged);
		c.merged = &merged;
		c.meta = &meta;
		for (int w = 0; w < 2; w++) {
			c.i1 = w ? 1 : r.niv;
			f = open_memstream(&text, &len);
			report_stalls_text(f, &c);
			fclose(f);
			if (getenv("SHOW"))
				fputs(text, stderr);
			CHECK(strstr(text, "\nSTALLS (waits still in progress, 100 ms or more, when an "
					   "interval was read; longest first)\n") != NULL);
			CHECK(strstr(text, w ? "pg[201] waited at least 800 ms, shared, buffered-read, for "
					     "/mnt/x/data IOLOCK\n"
					   : "pg[201] waited at least 1.80 s, shared, buffered-read, for "
					     "/mnt/x/data IOLOCK\n") != NULL);
			CHECK(strstr(text, "      held at the start by fio[100] exclusive, buffered-write; "
					   "at the last read by fio[100] exclusive, state D; ranges "
					   "disjoint; ") != NULL);
			CHECK(strstr(text, w ? "; still waiting when the window ended\n"
					   : "; it ended before the next read\n") != NULL);
			CHECK(!strstr(text, "pg[202]"));  /* under 100 ms: never written */
			free(text);
			text = NULL;
		}
		c.merged = NULL;
		c.meta = NULL;
		snap_free(&merged);
	}
	/* -p of another process: not this waiter's */
	{
		struct filters f = { .tgid = 999 };

		c.i1 = r.niv;
		c.f = &f;
		CHECK(!report_stalls(&c, &v, &n));
		CHECK_EQ_U(n, 0);
		free(v);
		c.f = NULL;
	}
	rec_free(&r);

	/*
	 * Two stalls, the second naming a task the file never defined: the
	 * block is malformed and the first stall, already added, rolled back.
	 */
	CHECK_EQ_U(block_offsets(s.file.p, s.file.len, offs, 8), 5);
	{
		struct rec_buf f = {}, raw = {};
		/* start 1, waited 1, inode 0, i_rwsem, modes, owner excl, 'D', ops, range, tasks */
		static const char ok[] = "\1\1\0\0\x01\1D\1\2\2\0\0\0";

		rec_buf_put(&f, s.file.p, offs[3]);
		rec_buf_varint(&raw, 3);
		rec_buf_put(&raw, "\0\1\0\0\0\0\0\0", 8);  /* nothing new, no locks */
		rec_buf_put(&raw, "\0\0\0\0\0", 5);          /* no edges, ops, frames, stacks, rows */
		rec_buf_put(&raw, "\1\2", 2);                  /* read, two stalls */
		rec_buf_put(&raw, ok, 13);
		rec_buf_put(&raw, ok, 12);
		rec_buf_put(&raw, "\x09", 1);                   /* owner: task 9 */
		CHECK(!rec_frame_block(&f, REC_BLK_INTERVAL, raw.p, raw.len));
		rec_init(&r);
		CHECK_EQ_U(rec_decode(&r, f.p, f.len), REC_MALFORMED);
		CHECK_EQ_U(r.niv, 2);
		CHECK_EQ_U(r.nstalls, 2);
		rec_free(&r);
		/* the same with a task that exists reads */
		raw.len--;
		rec_buf_put(&raw, "\0", 1);
		f.len = offs[3];
		CHECK(!rec_frame_block(&f, REC_BLK_INTERVAL, raw.p, raw.len));
		rec_init(&r);
		CHECK_EQ_U(rec_decode(&r, f.p, f.len), REC_OK);
		CHECK_EQ_U(r.nstalls, 4);
		rec_free(&r);
		/* a read flag other than 0 or 1 */
		f.len = offs[3];
		raw.p[8 + 5 + 1] = 2;
		CHECK(!rec_frame_block(&f, REC_BLK_INTERVAL, raw.p, raw.len));
		rec_init(&r);
		CHECK_EQ_U(rec_decode(&r, f.p, f.len), REC_MALFORMED);
		rec_free(&r);
		rec_buf_free(&f);
		rec_buf_free(&raw);
	}
	snap_free(&d);
	synth_free(&s);
}

/*
 * An fsync's journal stalls: whether a commit ran at the read is kept in
 * the holder mode such a wait has no use for, and said in text and JSON.
 */
static void test_fsync_stalls(void)
{
	const uint64_t s0 = 5000000000ULL;
	static const struct {
		uint8_t owner_mode;
		uint64_t commit_start;   /* from s0; 0: no commit running */
		uint8_t holder_mode;     /* as recorded */
		const char *text, *json;
	} cases[] = {
		{ ILOCK_MODE_EXCL, 100000000, ILOCK_MODE_EXCL,
		  "      a journal commit running at the last read, by jbd2/sdb1-8[321], state D; ",
		  "\"journal_commit_running\":true" },
		{ ILOCK_MODE_EXCL, 0, ILOCK_MODE_SHARED,
		  "      no journal commit running at the last read (the fsync writes its data "
		  "back, or waits for one to start); journal jbd2/sdb1-8[321], state D; ",
		  "\"journal_commit_running\":false" },
		{ ILOCK_MODE_UNKNOWN, 0, ILOCK_MODE_UNKNOWN, "      no journal commit seen",
		  "\"journal_commit_running\":null" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ilock_waiting w = stall_rec(201, s0 + 200000000, s0 + 1000000000);
		struct report_meta meta = {};
		struct report_ctx c = {};
		struct snapshot d, merged;
		struct recording r;
		struct synth s;
		struct json j;
		char *text = NULL;
		size_t len = 0;
		FILE *f;

		w.key.class = ILOCK_CLASS_JBD2_WAIT;
		w.key.mode = ILOCK_MODE_EXCL;
		w.wop = (struct ilock_op_info){ .op = ILOCK_OP_FSYNC };
		w.hop = (struct ilock_op_info){ .op = ILOCK_OP_UNKNOWN };
		w.holder_mode = ILOCK_MODE_UNKNOWN;
		w.holder_pid = w.holder_tgid = 0;
		memset(w.holder_comm, 0, sizeof(w.holder_comm));
		w.owner_mode = cases[i].owner_mode;
		w.owner_pid = w.owner_tgid = 321;
		memcpy(w.owner_comm, "jbd2/sdb1-8", 12);
		w.commit_start_ns = cases[i].commit_start ? s0 + cases[i].commit_start : 0;
		synth_begin(&s, 1000000000ULL, MOUNTINFO);
		snap_init(&d);
		synth_inode(&d, DEV_X, 131, 0xEF53, "/log");
		stalls_read(&s, &d, &w, 1, s0 + 1000000000);
		synth_end(&s);
		CHECK(s.ok);
		rec_init(&r);
		CHECK_EQ_U(rec_decode(&r, s.file.p, s.file.len), REC_OK);
		CHECK_EQ_U(r.nstalls, 1);
		if (r.nstalls != 1)
			goto next;
		CHECK_EQ_U(r.stalls[0].holder_mode, cases[i].holder_mode);
		snap_init(&merged);
		meta.mounts = &r.mounts;
		c = (struct report_ctx){ .r = &r, .i1 = r.niv, .merged = &merged, .meta = &meta };
		f = open_memstream(&text, &len);
		report_stalls_text(f, &c);
		json_init(&j, f);
		json_obj_begin(&j, NULL);
		report_json_extra(&j, &c);
		json_obj_end(&j);
		fclose(f);
		if (getenv("SHOW"))
			fputs(text, stderr);
		CHECK(strstr(text, "pg[201] was in fsync of /mnt/x/log for at least 800 ms\n") != NULL);
		CHECK(strstr(text, cases[i].text) != NULL);
		CHECK(strstr(text, cases[i].json) != NULL);
		/* the journal wait has no holder, whatever its mode carries */
		CHECK(strstr(text, "\"holder\":{\"pid\":0") != NULL);
		CHECK(strstr(text, "\"mode\":\"unknown\"") != NULL);
		free(text);
		snap_free(&merged);
next:
		rec_free(&r);
		snap_free(&d);
		synth_free(&s);
	}
}

/* Every truncation point and every single-bit flip: no crash, sane state. */
static void test_every_cut_and_flip(void)
{
	struct synth s;
	struct recording r;
	uint8_t *p;
	size_t offs[16], nb;

	build(&s);
	p = malloc(s.file.len);
	rec_init(&r);
	nb = block_offsets(s.file.p, s.file.len, offs, 16);
	offs[nb] = s.file.len;
	for (size_t cut = 0; cut < s.file.len; cut++) {
		enum rec_status st = decode_status(s.file.p, cut, &r);
		size_t whole = 0;

		/* every interval block that ends before the cut, and no more */
		for (size_t b = 1; b <= 3; b++)
			whole += offs[b + 1] <= cut;
		CHECK_EQ_U(r.niv, whole);
		CHECK(r.good_bytes <= cut);
		CHECK(st == REC_OK || r.msg[0]);
	}
	for (size_t i = 0; i < s.file.len; i++) {
		memcpy(p, s.file.p, s.file.len);
		p[i] ^= (uint8_t)(1 << (i % 8));
		/* every byte is under a checksum or the magic: no flip goes unnoticed */
		CHECK(decode_status(p, s.file.len, &r) != REC_OK);
	}
	rec_free(&r);
	free(p);
	synth_free(&s);
}

static void test_select_and_time(void)
{
	struct recording r;
	struct rec_interval iv[4] = {
		{ .t_start_ns = 0, .dur_ns = 1000000000 },
		{ .t_start_ns = 1000000000, .dur_ns = 1000000000 },
		{ .t_start_ns = 2000000000, .dur_ns = 1000000000 },
		{ .t_start_ns = 3000000000ULL, .dur_ns = 200000000 },
	};
	uint64_t ns;
	size_t a, b;
	char err[200];

	rec_init(&r);
	r.iv = iv;
	r.niv = 4;
	r.start_realtime_ns = SYNTH_START_NS;
	rec_select(&r, 0, UINT64_MAX, &a, &b);
	CHECK(a == 0 && b == 4);
	rec_select(&r, 1000000000, 2000000000, &a, &b);
	CHECK(a == 1 && b == 2);
	/* midpoint rule: 0.9 s to 2.1 s holds intervals 1 only... and not 0 or 2 */
	rec_select(&r, 900000000, 2100000000, &a, &b);
	CHECK(a == 1 && b == 2);
	rec_select(&r, 5000000000ULL, 6000000000ULL, &a, &b);
	CHECK(a == b);
	CHECK_EQ_U(rec_end_ns(&r), 3200000000ULL);

	setenv("TZ", "UTC", 1);
	tzset();
	CHECK(rec_parse_time(&r, "90", &ns, err, sizeof(err)) && ns == 90000000000ULL);
	CHECK(rec_parse_time(&r, "1.5", &ns, err, sizeof(err)) && ns == 1500000000ULL);
	CHECK(rec_parse_time(&r, "2m", &ns, err, sizeof(err)) && ns == 120000000000ULL);
	CHECK(rec_parse_time(&r, "1h", &ns, err, sizeof(err)) && ns == 3600000000000ULL);
	CHECK(rec_parse_time(&r, "10s", &ns, err, sizeof(err)) && ns == 10000000000ULL);
	/* over 1e9 s once the unit is applied: refused, not wrapped past 2^64 ns */
	CHECK(!rec_parse_time(&r, "99999999h", &ns, err, sizeof(err)) && strstr(err, "bad time"));
	CHECK(rec_parse_time(&r, "277777h", &ns, err, sizeof(err)) &&
	      ns == 277777ULL * 3600 * 1000000000ULL);
	/* the start is 2023-11-14 22:13:20 UTC */
	CHECK(rec_parse_time(&r, "@1700000010", &ns, err, sizeof(err)) && ns == 10000000000ULL);
	CHECK(rec_parse_time(&r, "22:13:25", &ns, err, sizeof(err)) && ns == 5000000000ULL);
	CHECK(rec_parse_time(&r, "22:15", &ns, err, sizeof(err)) && ns == 100000000000ULL);
	CHECK(rec_parse_time(&r, "2023-11-14 22:14:20", &ns, err, sizeof(err)) &&
	      ns == 60000000000ULL);
	CHECK(rec_parse_time(&r, "2023-11-14T22:14:20", &ns, err, sizeof(err)) &&
	      ns == 60000000000ULL);
	/* before the start clamps to it; a time of day far before it means the next day */
	CHECK(rec_parse_time(&r, "@1600000000", &ns, err, sizeof(err)) && ns == 0);
	CHECK(rec_parse_time(&r, "01:00", &ns, err, sizeof(err)) &&
	      ns == (uint64_t)(2 * 3600 + 46 * 60 + 40) * 1000000000ULL);
	/* the minute it started in (and up to 12 hours before) is the start, not tomorrow */
	CHECK(rec_parse_time(&r, "22:13", &ns, err, sizeof(err)) && ns == 0);
	CHECK(rec_parse_time(&r, "10:14", &ns, err, sizeof(err)) && ns == 0);
	CHECK(rec_parse_time(&r, "10:13", &ns, err, sizeof(err)) &&
	      ns == (uint64_t)(12 * 3600 - 20) * 1000000000ULL);
	CHECK(!rec_parse_time(&r, "soon", &ns, err, sizeof(err)));
	CHECK(strstr(err, "bad time 'soon'") != NULL);
	CHECK(!rec_parse_time(&r, "-5", &ns, err, sizeof(err)));
	CHECK(!rec_parse_time(&r, "", &ns, err, sizeof(err)));
	CHECK(!rec_parse_time(&r, "5x", &ns, err, sizeof(err)));
	r.iv = NULL;
	r.niv = 0;
	rec_free(&r);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;

	*len = 0;
	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
		p = malloc((size_t)n + 1);
		if (p && fread(p, 1, (size_t)n, f) == (size_t)n)
			*len = (size_t)n;
	}
	fclose(f);
	return p;
}

/* The fuzz target's work on each file of dir, so crashers replay here under ASan and UBSan. */
static int replay_dir(const char *dir, FILE *out, int *files)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[512];
		size_t len;
		uint8_t *p;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		p = slurp(path, &len);
		if (!p)
			continue;
		CHECK(fuzz_one(p, len, out) == 0);
		free(p);
		(*files)++;
	}
	closedir(d);
	return 0;
}

static void test_fuzz_regressions(void)
{
	FILE *out = fopen("/dev/null", "w");
	int files = 0;

	CHECK(out != NULL);
	/* run from the repository root, as `make unit` does */
	CHECK(replay_dir("tests/fuzz/corpus", out, &files) == 0);
	CHECK(replay_dir("tests/fuzz/crashers", out, &files) == 0);
	CHECK(files > 10);
	fclose(out);
}

/*
 * The namespace ops (1.4) on a directory's lock come back as written; an
 * op past the last one this build knows is damage, not a name to guess.
 */
static void test_namespace_ops(void)
{
	static const uint8_t ops[][2] = { { ILOCK_OP_UNLINK, ILOCK_OP_CREATE },
					  { ILOCK_OP_RENAME, ILOCK_OP_LOOKUP },
					  { ILOCK_OP_MKDIR, ILOCK_OP_READDIR },
					  { ILOCK_OP_LINK, ILOCK_OP_RMDIR },
					  /* 1.6: not a namespace op, but the last one */
					  { ILOCK_OP_BUFFERED_WRITE, ILOCK_OP_SYNC_FILE_RANGE } };
	const size_t nops = sizeof(ops) / sizeof(ops[0]);
	struct synth s;
	struct snapshot d;
	struct recording r;

	for (int bad = 0; bad < 2; bad++) {
		synth_begin(&s, 1000000000ULL, MOUNTINFO);
		snap_init(&d);
		synth_wait(&d, DEV_X, 128, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, 4, 1000);
		for (size_t i = 0; i < nops; i++) {
			struct ilock_edge_key ek = { .ino = 128, .dev = DEV_X,
						     .class = ILOCK_CLASS_I_RWSEM,
						     .holder_mode = ILOCK_MODE_EXCL,
						     .waiter_mode = ILOCK_MODE_EXCL,
						     .holder_pid = 10, .waiter_pid = (uint32_t)(11 + i),
						     .holder_op = ops[i][0], .waiter_op = ops[i][1] };
			struct ilock_edge_stats es = { .count = 1, .total_ns = 1000, .max_ns = 1000 };

			if (bad && i == 3)
				ek.waiter_op = ILOCK_OP_MAX;
			snap_add_edge(&d, &ek, &es);
		}
		synth_interval(&s, &d);
		synth_end(&s);
		CHECK(s.ok);
		rec_init(&r);
		if (!bad) {
			CHECK_EQ_U(rec_decode(&r, s.file.p, s.file.len), REC_OK);
			CHECK_EQ_U(r.nedges, nops);
			for (size_t i = 0; i < r.nedges && i < nops; i++) {
				bool found = false;

				for (size_t j = 0; j < nops; j++)
					found |= r.edges[i].holder_op == ops[j][0] &&
						 r.edges[i].waiter_op == ops[j][1];
				CHECK(found);
			}
			CHECK_STR(op_name(ILOCK_OP_UNLINK), "unlink");
			CHECK_STR(op_name(ILOCK_OP_READDIR), "readdir");
		} else {
			CHECK_EQ_U(rec_decode(&r, s.file.p, s.file.len), REC_MALFORMED);
		}
		rec_free(&r);
		snap_free(&d);
		synth_free(&s);
	}
}

/*
 * Generations (1.5): a file created in an inode number another file had
 * is an inode of its own, with its own path and rows, in the recording
 * and in the window read back. A block that ends before the gens (1.4)
 * reads them as 0; a count that is not the block's new inodes is damage.
 */
static void test_generations(void)
{
	struct synth s;
	struct snapshot d, m;
	struct recording r;
	const struct lock_row *row;
	const struct inode_meta *got;
	size_t offs[8], n;

	synth_begin(&s, 1000000000ULL, MOUNTINFO);
	snap_init(&d);
	CHECK(synth_inode_gen(&d, DEV_X, 131, 7, ILOCK_XFS_SB_MAGIC, "/old") == 0);
	CHECK(synth_wait_gen(&d, DEV_X, 131, 7, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, 2, 4000) == 0);
	synth_interval(&s, &d);
	snap_reset(&d);
	CHECK(synth_inode_gen(&d, DEV_X, 131, 9, ILOCK_XFS_SB_MAGIC, "/new") == 0);
	CHECK(synth_wait_gen(&d, DEV_X, 131, 9, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, 4, 4000) == 0);
	synth_interval(&s, &d);
	synth_end(&s);
	CHECK(s.ok);

	rec_init(&r);
	CHECK_EQ_U(rec_decode(&r, s.file.p, s.file.len), REC_OK);
	CHECK_EQ_U(r.ninodes, 2);
	if (r.ninodes == 2) {
		CHECK_EQ_U(r.inodes[0].gen, 7);
		CHECK_EQ_U(r.inodes[1].gen, 9);
		CHECK_EQ_U(r.inodes[1].meta.gen, 9);
		CHECK_STR(r.inodes[0].meta.path, "/old");
		CHECK_STR(r.inodes[1].meta.path, "/new");
	}
	snap_init(&m);
	CHECK(rec_merge_window(&r, 0, r.niv, NULL, &m) == 0);
	CHECK_EQ_U(m.nlocks, 2);
	row = snap_find_lock(&m, DEV_X, 131, 9, ILOCK_CLASS_I_RWSEM);
	CHECK(row && row->wait[ILOCK_MODE_EXCL].count == 4);
	row = snap_find_lock(&m, DEV_X, 131, 7, ILOCK_CLASS_I_RWSEM);
	CHECK(row && row->wait[ILOCK_MODE_EXCL].count == 2);
	got = snap_find_inode(&m, DEV_X, 131, 9);
	CHECK(got && !strcmp(got->path, "/new"));
	got = snap_find_inode(&m, DEV_X, 131, 7);
	CHECK(got && !strcmp(got->path, "/old"));
	snap_free(&m);
	rec_free(&r);

	/* the second interval again, by hand: a new inode, then the gens section */
	n = block_offsets(s.file.p, s.file.len, offs, 8);
	CHECK_EQ_U(n, 4);
	for (int tail = 0; tail < 3 && n == 4; tail++) {
		struct rec_buf f = {}, raw = {};
		/* 1.4 (no gens), a count of 2 for one new inode, gen 5 */
		static const char *const tails[] = { "", "\2\5\5", "\1\5" };
		static const size_t tail_len[] = { 0, 3, 2 };

		rec_buf_put(&f, s.file.p, offs[2]);
		rec_buf_varint(&raw, 1);
		rec_buf_put(&raw, "\0\1\0\0\0", 5);   /* seq 1 ... no counters, no mounts */
		rec_buf_put(&raw, "\1\1\3\0\0", 5);   /* new inode 1: dev 3, ino 0, no meta */
		rec_buf_put(&raw, "\0\0\0\0\0\0\0\0\0", 9); /* no tasks ... no stalls */
		rec_buf_put(&raw, tails[tail], tail_len[tail]);
		CHECK(!rec_frame_block(&f, REC_BLK_INTERVAL, raw.p, raw.len));
		rec_init(&r);
		CHECK_EQ_U(rec_decode(&r, f.p, f.len), tail == 1 ? REC_MALFORMED : REC_OK);
		CHECK_EQ_U(r.ninodes, tail == 1 ? 1 : 2);
		if (r.ninodes == 2)
			CHECK_EQ_U(r.inodes[1].gen, tail == 2 ? 5 : 0);
		rec_free(&r);
		rec_buf_free(&f);
		rec_buf_free(&raw);
	}
	snap_free(&d);
	synth_free(&s);
}

/* An edge of one lock between holder and waiter, for test_titles. */
static void title_edge(struct snapshot *d, uint32_t holder, const char *hcomm, uint32_t waiter,
		 const char *wcomm)
{
	struct ilock_edge_key k = { .ino = 131, .dev = DEV_X, .class = ILOCK_CLASS_I_RWSEM,
				    .holder_mode = ILOCK_MODE_EXCL, .waiter_mode = ILOCK_MODE_SHARED,
				    .holder_pid = holder, .holder_tgid = holder, .waiter_pid = waiter,
				    .waiter_tgid = waiter };
	struct ilock_edge_stats es = { .count = 1, .total_ns = 1000, .max_ns = 1000 };

	memcpy(k.holder_comm, hcomm, strlen(hcomm));
	memcpy(k.waiter_comm, wcomm, strlen(wcomm));
	snap_add_edge(d, &k, &es);
}

/* (1.7) Process titles: written with a task's definition, read back, damage refused. */
static void test_titles(void)
{
	struct titles t;
	struct synth s;
	struct snapshot d;
	struct recording r;
	size_t offs[8], n;

	titles_init(&t);
	CHECK(!titles_put(&t, 10, "postgres", "postgres: checkpointer"));
	CHECK(!titles_put(&t, 11, "postgres", "postgres: bob shop [local] UPDATE"));
	CHECK(!titles_put(&t, 12, "fio", ""));
	synth_begin(&s, 1000000000ULL, MOUNTINFO);
	s.w.titles = &t;
	snap_init(&d);
	synth_inode(&d, DEV_X, 131, ILOCK_XFS_SB_MAGIC, "/base/1/16384");
	synth_wait(&d, DEV_X, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1, 1000);
	title_edge(&d, 10, "postgres", 12, "fio");
	synth_interval(&s, &d);
	snap_reset(&d);
	/* the known task again, and a new one, in the second block */
	title_edge(&d, 10, "postgres", 11, "postgres");
	synth_interval(&s, &d);
	synth_end(&s);
	CHECK(s.ok);

	rec_init(&r);
	CHECK_EQ_U(rec_decode(&r, s.file.p, s.file.len), REC_OK);
	rec_finish(&r);
	CHECK_EQ_U(r.ntasks, 3);
	for (size_t i = 0; i < r.ntasks; i++) {
		const struct rec_task *k = &r.tasks[i];

		if (k->pid == 12)
			CHECK(!k->title);
		else
			CHECK(k->title && !strcmp(k->title, k->pid == 10 ? "postgres: checkpointer"
								   : "postgres: bob shop [local] UPDATE"));
	}
	/* the renderers' table, from the recording */
	CHECK_STR(titles_get(&r.titles, 11, "postgres"), "postgres: bob shop [local] UPDATE");
	CHECK(!titles_get(&r.titles, 12, "fio"));
	rec_free(&r);

	/* damage in the titles section of the second block: refused, the first kept */
	n = block_offsets(s.file.p, s.file.len, offs, 8);
	CHECK_EQ_U(n, 4);
	for (int bad = 0; bad < 4 && n == 4; bad++) {
		struct rec_buf f = {}, raw = {};

		rec_buf_put(&f, s.file.p, offs[2]);
		rec_buf_put(&raw, "\1\0\1\0\0\0\0", 7);  /* seq 1 ... no counters, mounts, inodes */
		rec_buf_put(&raw, "\1\x15\x15\2pg", 6);  /* task 2: pid 21, tgid 21, "pg" */
		rec_buf_put(&raw, "\0\0\0\0\0\0\0\0\0", 9);  /* no locks ... no stalls, no gens */
		switch (bad) {
		case 0:  /* fine: task 2 is this block's */
			rec_buf_put(&raw, "\1\2\5pg: x", 8);
			break;
		case 1:  /* task 0 was defined by another block */
			rec_buf_put(&raw, "\1\0\5pg: x", 8);
			break;
		case 2:  /* twice */
			rec_buf_put(&raw, "\2\2\5pg: x\2\5pg: y", 15);
			break;
		case 3:  /* empty */
			rec_buf_put(&raw, "\1\2\0", 3);
			break;
		}
		CHECK(!rec_frame_block(&f, REC_BLK_INTERVAL, raw.p, raw.len));
		rec_init(&r);
		CHECK_EQ_U(rec_decode(&r, f.p, f.len), bad ? REC_MALFORMED : REC_OK);
		/* a refused block leaves nothing of itself: its task, its title */
		CHECK_EQ_U(r.ntasks, bad ? 2 : 3);
		CHECK_EQ_U(r.title_bytes, bad ? strlen("postgres: checkpointer") + 1
					       : strlen("postgres: checkpointer") + 1 + 6);
		if (!bad && r.ntasks == 3)
			CHECK(r.tasks[2].title && !strcmp(r.tasks[2].title, "pg: x"));
		rec_free(&r);
		rec_buf_free(&f);
		rec_buf_free(&raw);
	}
	snap_free(&d);
	synth_free(&s);
	titles_free(&t);
}

int main(void)
{
	test_round_trip();
	test_written_once();
	test_damage();
	test_every_cut_and_flip();
	test_stacks();
	test_stacks_forgotten();
	test_tables_end_flag();
	test_stacks_malformed();
	test_stalls();
	test_fsync_stalls();
	test_select_and_time();
	test_fuzz_regressions();
	test_namespace_ops();
	test_generations();
	test_titles();
	UNIT_DONE();
}
