/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Build recordings in memory for the unit tests, through the real writer
 * (rec_encode_* and rec_frame_block), so tests read what record writes.
 */
#ifndef ILOCK_RECSYNTH_H
#define ILOCK_RECSYNTH_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "recfile.h"
#include "unit.h"  /* synth_finish checks */

#define SYNTH_START_NS 1700000000000000000ULL  /* 2023-11-14 22:13:20 UTC */

struct synth {
	struct rec_writer w;
	struct rec_buf file;
	struct mount_table mt;
	struct snapshot inodes;   /* cumulative inode metadata, as tracer_read has it */
	uint64_t t_ns, interval_ns;
	int ok;
};

static inline void synth_block(struct synth *s, uint8_t type, struct rec_buf *raw)
{
	if (raw->oom || rec_frame_block(&s->file, type, raw->p, raw->len))
		s->ok = 0;
	raw->len = 0;
}

/* mountinfo: the mount table the recorder would see (may be NULL). */
static inline void synth_begin(struct synth *s, uint64_t interval_ns, const char *mountinfo)
{
	uint8_t hdr[REC_HDR_LEN];
	char names[1024] = "", start[32], iv[32];
	size_t o = 0;
	struct rec_kv kv[8];
	struct rec_buf raw = {};

	memset(s, 0, sizeof(*s));
	s->ok = 1;
	s->interval_ns = interval_ns;
	rec_writer_init(&s->w);
	snap_init(&s->inodes);
	if (mountinfo && mounts_parse(&s->mt, mountinfo))
		s->ok = 0;
	rec_header(hdr);
	rec_buf_put(&s->file, hdr, sizeof(hdr));
	for (int c = 0; c < ILOCK_COUNTER_MAX; c++)
		o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", c ? "," : "",
				      counter_name(c));
	snprintf(start, sizeof(start), "%llu", (unsigned long long)SYNTH_START_NS);
	snprintf(iv, sizeof(iv), "%llu", (unsigned long long)interval_ns);
	kv[0] = (struct rec_kv){ "tool_version", "test" };
	kv[1] = (struct rec_kv){ "hostname", "unit" };
	kv[2] = (struct rec_kv){ "kernel", "6.18-test" };
	kv[3] = (struct rec_kv){ "start_realtime_ns", start };
	kv[4] = (struct rec_kv){ "interval_ns", iv };
	kv[5] = (struct rec_kv){ "counters", names };
	kv[6] = (struct rec_kv){ "attach.contention_begin", "tp_btf" };
	kv[7] = (struct rec_kv){ "boot_id", "00000000-boot" };
	if (rec_encode_meta(&raw, kv, 8))
		s->ok = 0;
	synth_block(s, REC_BLK_META, &raw);
	rec_buf_free(&raw);
}

static inline void synth_interval_dur(struct synth *s, const struct snapshot *delta, uint64_t dur_ns)
{
	if (snap_merge(&s->inodes, delta))
		s->ok = 0;
	if (rec_encode_interval(&s->w, &s->w.raw, delta, &s->inodes, &s->mt, s->t_ns, dur_ns))
		s->ok = 0;
	synth_block(s, REC_BLK_INTERVAL, &s->w.raw);
	s->t_ns += dur_ns;
}

static inline void synth_interval(struct synth *s, const struct snapshot *delta)
{
	synth_interval_dur(s, delta, s->interval_ns);
}

static inline void synth_end(struct synth *s)
{
	struct rec_buf raw = {};

	if (rec_encode_end(&raw, s->w.seq, SYNTH_START_NS + s->t_ns, "test"))
		s->ok = 0;
	synth_block(s, REC_BLK_END, &raw);
	rec_buf_free(&raw);
}

static inline void synth_free(struct synth *s)
{
	rec_writer_free(&s->w);
	rec_buf_free(&s->file);
	mounts_free(&s->mt);
	snap_free(&s->inodes);
}

/* n waits of ns each into a stats block. */
/* End the synthetic file, decode it into r, free the builders (s and d). */
static inline void synth_finish(struct synth *s, struct snapshot *d, struct recording *r)
{
	synth_end(s);
	CHECK(s->ok);
	rec_init(r);
	CHECK_EQ_U(rec_decode(r, s->file.p, s->file.len), REC_OK);
	snap_free(d);
	synth_free(s);
}

static inline void synth_add(struct ilock_stats *st, uint64_t n, uint64_t ns)
{
	st->count += n;
	st->total_ns += n * ns;
	st->hist[ilock_hist_slot(ns)] += n;
	if (n && ns > st->max_ns)
		st->max_ns = ns;
}

/* n waits of ns each on one file: its dev, ino and generation; snap_add_wait's result */
static inline int synth_wait_gen(struct snapshot *s, uint32_t dev, uint64_t ino, uint32_t gen,
				  uint8_t class, uint8_t mode, uint64_t n, uint64_t ns)
{
	struct ilock_key k = { .ino = ino, .dev = dev, .gen = gen, .class = class, .mode = mode };
	struct ilock_stats st = {};

	synth_add(&st, n, ns);
	return snap_add_wait(s, &k, &st);
}

static inline void synth_wait(struct snapshot *s, uint32_t dev, uint64_t ino, uint8_t class, uint8_t mode,
		       uint64_t n, uint64_t ns)
{
	synth_wait_gen(s, dev, ino, 0, class, mode, n, ns);
}

static inline void synth_hold(struct snapshot *s, uint32_t dev, uint64_t ino, uint8_t class, uint8_t mode,
		       uint64_t n, uint64_t ns)
{
	struct ilock_key k = { .ino = ino, .dev = dev, .class = class, .mode = mode };
	struct ilock_stats st = {};

	synth_add(&st, n, ns);
	snap_add_hold(s, &k, &st);
}

/* snap_add_inode's result */
static inline int synth_inode_gen(struct snapshot *s, uint32_t dev, uint64_t ino, uint32_t gen,
				   uint32_t magic, const char *path)
{
	struct inode_meta m = { .ino = ino, .dev = dev, .gen = gen, .magic = magic };

	snprintf(m.path, sizeof(m.path), "%s", path);
	return snap_add_inode(s, &m);
}

static inline void synth_inode(struct snapshot *s, uint32_t dev, uint64_t ino, uint32_t magic,
			const char *path)
{
	synth_inode_gen(s, dev, ino, 0, magic, path);
}

/* xorshift: deterministic noise for the statistics tests */
static uint64_t __attribute__((unused)) synth_rand_state = 88172645463325252ULL;

static inline double synth_rand01(void)
{
	uint64_t x = synth_rand_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	synth_rand_state = x;
	return (double)(x >> 11) / (double)(1ULL << 53);
}

#endif
