// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Recording format: framing (header, blocks, CRC32, zlib), payload
 * encoding (LEB128 varints, length-prefixed strings) and decoding.
 * Layout and rationale: docs/file-format.md. Everything but the
 * rec_file_* wrappers works on memory only.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "counters.h"
#include "idmap.h"
#include "recfile.h"
#include "titles.h"
#include "util.h"

/* Longest string the decoder accepts for each field. */
#define MAX_KEY 256
#define MAX_VAL 65536
#define MAX_MNT_STR 4096

static const char *const status_names[REC_STATUS_MAX] = {
	[REC_OK] = "ok",
	[REC_EMPTY] = "empty",
	[REC_NOT_RECORDING] = "not_recording",
	[REC_BAD_MAGIC] = "bad_magic",
	[REC_SHORT_HEADER] = "short_header",
	[REC_NEWER_MAJOR] = "newer_major",
	[REC_BAD_VERSION] = "bad_version",
	[REC_HEADER_CRC] = "header_crc",
	[REC_NO_META] = "no_meta",
	[REC_NOMEM] = "nomem",
	[REC_TRUNCATED] = "truncated",
	[REC_BAD_CRC] = "bad_crc",
	[REC_TOO_BIG] = "too_big",
	[REC_BOMB] = "bomb",
	[REC_MALFORMED] = "malformed",
};

const char *rec_status_name(enum rec_status st)
{
	return st < REC_STATUS_MAX ? status_names[st] : "?";
}

/* ---------------------------------------------------------------- bytes */

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t crc_of(uint32_t crc, const void *p, size_t n)
{
	/* zlib's crc32 takes uInt lengths; blocks are far below 4 GiB */
	return (uint32_t)crc32(crc, p, (uInt)n);
}

void rec_buf_free(struct rec_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static bool buf_reserve(struct rec_buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->oom)
		return false;
	if (b->len + n <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void rec_buf_put(struct rec_buf *b, const void *p, size_t n)
{
	if (!n || !buf_reserve(b, n))
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void rec_buf_varint(struct rec_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	rec_buf_put(b, tmp, n);
}

void rec_buf_str(struct rec_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	rec_buf_varint(b, n);
	rec_buf_put(b, s, n);
}

static void buf_u8(struct rec_buf *b, uint8_t v)
{
	rec_buf_put(b, &v, 1);
}

/* Bounds-checked reader over one payload; any overrun latches bad. */
struct rd {
	const uint8_t *p;
	size_t n, off;
	bool bad;
};

static uint64_t rd_varint(struct rd *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (r->off >= r->n)
			break;
		b = r->p[r->off++];
		if (shift == 63 && b > 1)
			break;  /* would overflow 64 bits */
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

static uint8_t rd_u8(struct rd *r)
{
	if (r->off >= r->n) {
		r->bad = true;
		return 0;
	}
	return r->p[r->off++];
}

static size_t rd_left(const struct rd *r)
{
	return r->n - r->off;
}

/* A count of entries, each at least min_bytes long: bounded by what is left. */
static uint64_t rd_count(struct rd *r, size_t min_bytes)
{
	uint64_t n = rd_varint(r);

	if (!r->bad && n > rd_left(r) / min_bytes)
		r->bad = true;
	return r->bad ? 0 : n;
}

/* A string into dst (cap bytes, NUL added); longer than cap - 1 is bad. */
static void rd_str(struct rd *r, char *dst, size_t cap)
{
	uint64_t n = rd_varint(r);

	dst[0] = 0;
	if (r->bad || n >= cap || n > rd_left(r)) {
		r->bad = true;
		return;
	}
	memcpy(dst, r->p + r->off, n);
	dst[n] = 0;
	r->off += n;
}

static char *rd_strdup(struct rd *r, size_t max)
{
	uint64_t n = rd_varint(r);
	char *s;

	if (r->bad || n > max || n > rd_left(r)) {
		r->bad = true;
		return NULL;
	}
	s = malloc(n + 1);
	if (!s)
		return NULL;
	memcpy(s, r->p + r->off, n);
	s[n] = 0;
	r->off += n;
	return s;
}

/* ------------------------------------------------------------- framing */

void rec_header(uint8_t out[REC_HDR_LEN])
{
	memcpy(out, REC_MAGIC, REC_MAGIC_LEN);
	put_le16(out + 8, REC_MAJOR);
	put_le16(out + 10, REC_MINOR);
	put_le32(out + 12, crc_of(crc32(0, Z_NULL, 0), out, 12));
}

int rec_frame_block(struct rec_buf *out, uint8_t type, const void *raw, size_t rawlen)
{
	uLongf clen;
	uint8_t *h;
	uint32_t crc;
	int zr;

	if (rawlen > REC_MAX_RAW)
		return -E2BIG;
	clen = compressBound((uLong)rawlen);
	if (!buf_reserve(out, REC_BLOCK_HDR_LEN + clen))
		return -ENOMEM;
	h = out->p + out->len;
	zr = compress2(h + REC_BLOCK_HDR_LEN, &clen, raw, (uLong)rawlen, Z_DEFAULT_COMPRESSION);
	if (zr != Z_OK)
		return zr == Z_MEM_ERROR ? -ENOMEM : -EIO;
	if (clen > REC_MAX_BLOCK)
		return -E2BIG;
	h[0] = type;
	h[1] = REC_CODEC_ZLIB;
	put_le16(h + 2, 0);
	put_le32(h + 4, (uint32_t)clen);
	put_le32(h + 8, (uint32_t)rawlen);
	crc = crc_of(crc32(0, Z_NULL, 0), h, 12);
	crc = crc_of(crc, h + REC_BLOCK_HDR_LEN, clen);
	put_le32(h + 12, crc);
	out->len += REC_BLOCK_HDR_LEN + clen;
	return 0;
}

/* ------------------------------------------------------------- recording */

void rec_init(struct recording *r)
{
	memset(r, 0, sizeof(*r));
	r->mem_budget = REC_MIN_BUDGET;
	for (size_t i = 0; i < ARRAY_SIZE(r->counter_map); i++)
		r->counter_map[i] = i < ILOCK_COUNTER_MAX ? (int)i : -1;
	r->ncounters_file = ILOCK_COUNTER_MAX;
}

void rec_free(struct recording *r)
{
	for (size_t i = 0; i < r->nmeta; i++) {
		free(r->meta[i].key);
		free(r->meta[i].val);
	}
	free(r->meta);
	mounts_free(&r->mounts);
	free(r->inodes);
	for (size_t i = 0; i < r->ntasks; i++)
		free(r->tasks[i].title);
	free(r->tasks);
	free(r->locks);
	free(r->edges);
	for (size_t i = 0; i < r->nframes; i++)
		free(r->frames[i]);
	free(r->frames);
	free(r->frame_ids);
	free(r->stacks);
	free(r->srows);
	free(r->stalls);
	ksyms_free(&r->syms);
	titles_free(&r->titles);
	free(r->iv);
	rec_init(r);
}

const char *rec_meta(const struct recording *r, const char *key)
{
	for (size_t i = 0; i < r->nmeta; i++)
		if (!strcmp(r->meta[i].key, key))
			return r->meta[i].val;
	return NULL;
}

/*
 * Memory the decoded records take (allocated capacity). A hostile payload
 * can pack a record into 3 bytes that takes a kilobyte decoded, so it is
 * bounded by the file's size, not only by the per-block limits.
 */
static uint64_t rec_mem(const struct recording *r)
{
	return r->cap_inodes * sizeof(*r->inodes) + r->cap_tasks * sizeof(*r->tasks) +
	       r->cap_locks * sizeof(*r->locks) + r->cap_edges * sizeof(*r->edges) +
	       r->cap_frames * sizeof(*r->frames) + r->frame_bytes + r->title_bytes +
	       r->cap_frame_ids * sizeof(*r->frame_ids) + r->cap_stacks * sizeof(*r->stacks) +
	       r->cap_srows * sizeof(*r->srows) + r->cap_stalls * sizeof(*r->stalls) +
	       r->cap_iv * sizeof(*r->iv);
}

/* grow() within the budget: 0, -ENOMEM, or -E2BIG over budget. */
static int rgrow(struct recording *r, void **arr, size_t *cap, size_t n, size_t esz)
{
	if (n < *cap)
		return 0;
	if (rec_mem(r) + (*cap ? *cap : 64) * esz > r->mem_budget)
		return -E2BIG;
	return grow_array(arr, cap, n, esz) ? 0 : -ENOMEM;
}

static enum rec_status fail(struct recording *r, enum rec_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum rec_status fail(struct recording *r, enum rec_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->status = st;
	return st;
}

static uint64_t meta_u64(const struct recording *r, const char *key)
{
	const char *v = rec_meta(r, key);
	uint64_t x;

	return v && parse_u64(v, UINT64_MAX, &x) ? x : 0;
}

/* The file lists its counters by name: map them onto ours. */
static void map_counters(struct recording *r, const char *names)
{
	const char *p = names;
	int i = 0;

	for (size_t k = 0; k < ARRAY_SIZE(r->counter_map); k++)
		r->counter_map[k] = -1;
	while (p && *p && i < (int)ARRAY_SIZE(r->counter_map)) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		for (int c = 0; c < ILOCK_COUNTER_MAX; c++) {
			const char *n = counter_name(c);

			if (strlen(n) == len && !strncmp(n, p, len)) {
				r->counter_map[i] = c;
				break;
			}
		}
		i++;
		p = comma ? comma + 1 : NULL;
	}
	r->ncounters_file = i;
}

static int decode_meta(struct recording *r, struct rd *d)
{
	uint64_t n = rd_count(d, 2);
	const char *counters;

	if (d->bad)
		return -EINVAL;
	if (r->meta)
		return 0;  /* a second META is ignored */
	r->meta = calloc(n ? n : 1, sizeof(*r->meta));
	if (!r->meta)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		char *k = rd_strdup(d, MAX_KEY);
		char *v = k ? rd_strdup(d, MAX_VAL) : NULL;

		if (!k || !v) {
			free(k);
			free(v);
			return d->bad ? -EINVAL : -ENOMEM;
		}
		r->meta[r->nmeta].key = k;
		r->meta[r->nmeta].val = v;
		r->nmeta++;
	}
	r->start_realtime_ns = meta_u64(r, "start_realtime_ns");
	r->interval_ns = meta_u64(r, "interval_ns");
	counters = rec_meta(r, "counters");
	if (counters)
		map_counters(r, counters);
	return 0;
}

static void decode_stats(struct rd *d, struct ilock_stats *s)
{
	uint64_t nslots;
	int slot = -1;

	s->count = rd_varint(d);
	s->total_ns = rd_varint(d);
	s->max_ns = rd_varint(d);
	nslots = rd_varint(d);
	if (nslots > ILOCK_HIST_SLOTS) {
		d->bad = true;
		return;
	}
	for (uint64_t i = 0; i < nslots && !d->bad; i++) {
		uint64_t gap = rd_varint(d);

		if (gap >= ILOCK_HIST_SLOTS || slot + 1 + (int)gap >= ILOCK_HIST_SLOTS) {
			d->bad = true;
			return;
		}
		slot += 1 + (int)gap;
		s->hist[slot] = rd_varint(d);
	}
}

static int decode_mounts(struct recording *r, struct rd *d)
{
	uint64_t n = rd_count(d, 5);

	for (uint64_t i = 0; i < n && !d->bad; i++) {
		struct mount_entry e = {};
		uint64_t kdev = rd_varint(d);
		struct mount_entry *arr;

		e.root = rd_strdup(d, MAX_MNT_STR);
		e.mnt = e.root ? rd_strdup(d, MAX_MNT_STR) : NULL;
		e.fstype = e.mnt ? rd_strdup(d, MAX_MNT_STR) : NULL;
		e.source = e.fstype ? rd_strdup(d, MAX_MNT_STR) : NULL;
		if (kdev > UINT32_MAX)
			d->bad = true;
		e.kdev = (uint32_t)kdev;
		arr = e.source ? realloc(r->mounts.e, (r->mounts.n + 1) * sizeof(*arr)) : NULL;
		if (!arr) {
			free(e.root);
			free(e.mnt);
			free(e.fstype);
			free(e.source);
			return d->bad ? -EINVAL : -ENOMEM;
		}
		r->mounts.e = arr;
		r->mounts.e[r->mounts.n++] = e;
	}
	return d->bad ? -EINVAL : 0;
}

static int decode_inodes(struct recording *r, struct rd *d)
{
	uint64_t n = rd_count(d, 2);
	int err;

	for (uint64_t i = 0; i < n && !d->bad; i++) {
		uint64_t id = rd_varint(d);
		struct rec_inode *in;

		if (d->bad || id > r->ninodes) {
			d->bad = true;
			break;
		}
		if (id == r->ninodes) {
			uint64_t dev = rd_varint(d), ino = rd_varint(d);

			if (dev > UINT32_MAX)
				d->bad = true;
			if ((err = rgrow(r, (void **)&r->inodes, &r->cap_inodes, r->ninodes, sizeof(*r->inodes))))
				return err;
			in = &r->inodes[r->ninodes++];
			memset(in, 0, sizeof(*in));
			in->dev = (uint32_t)dev;
			in->ino = ino;
		} else {
			in = &r->inodes[id];
		}
		if (rd_u8(d)) {
			uint64_t magic = rd_varint(d), flags = rd_varint(d);

			if (magic > UINT32_MAX || flags > UINT16_MAX)
				d->bad = true;
			in->has_meta = true;
			in->meta.dev = in->dev;
			in->meta.ino = in->ino;
			in->meta.gen = in->gen;  /* a new inode's: set again by decode_gens */
			in->meta.magic = (uint32_t)magic;
			in->meta.flags = (uint16_t)flags;
			rd_str(d, in->meta.path, sizeof(in->meta.path));
		}
	}
	return d->bad ? -EINVAL : 0;
}

static int decode_tasks(struct recording *r, struct rd *d)
{
	uint64_t n = rd_count(d, 3);
	int err;

	for (uint64_t i = 0; i < n && !d->bad; i++) {
		uint64_t pid = rd_varint(d), tgid = rd_varint(d);
		struct rec_task *t;

		if (pid > UINT32_MAX || tgid > UINT32_MAX)
			d->bad = true;
		if ((err = rgrow(r, (void **)&r->tasks, &r->cap_tasks, r->ntasks, sizeof(*r->tasks))))
			return err;
		t = &r->tasks[r->ntasks];
		memset(t, 0, sizeof(*t));
		t->pid = (uint32_t)pid;
		t->tgid = (uint32_t)tgid;
		{
			/* zeroed: keys built from comm are compared whole, padding included */
			char c[ILOCK_COMM_LEN + 1] = { 0 };

			rd_str(d, c, sizeof(c));
			memcpy(t->comm, c, ILOCK_COMM_LEN);  /* a 16-byte comm has no NUL */
		}
		if (!d->bad)
			r->ntasks++;
	}
	return d->bad ? -EINVAL : 0;
}

static int decode_locks(struct recording *r, struct rd *d, struct rec_interval *iv)
{
	uint64_t n = rd_count(d, 3);
	int err;

	iv->lock0 = r->nlocks;
	for (uint64_t i = 0; i < n && !d->bad; i++) {
		uint64_t inode = rd_varint(d);
		uint8_t class = rd_u8(d), present = rd_u8(d);
		struct rec_lock *l;

		if (d->bad || inode >= r->ninodes || class >= ILOCK_CLASS_MAX || present > 0x1f) {
			d->bad = true;
			break;
		}
		if ((err = rgrow(r, (void **)&r->locks, &r->cap_locks, r->nlocks, sizeof(*r->locks))))
			return err;
		l = &r->locks[r->nlocks++];
		memset(l, 0, sizeof(*l));
		l->inode = (uint32_t)inode;
		l->class = class;
		l->has_hold = present & 0x10;
		for (int k = 0; k < 4; k++) {
			struct ilock_stats *s = k < 2 ? &l->wait[k] : &l->hold[k - 2];

			if (present & (1 << k))
				decode_stats(d, s);
		}
	}
	iv->nlocks = r->nlocks - iv->lock0;
	return d->bad ? -EINVAL : 0;
}

static int decode_edges(struct recording *r, struct rd *d, struct rec_interval *iv)
{
	uint64_t n = rd_count(d, 7);
	int err;

	iv->edge0 = r->nedges;
	for (uint64_t i = 0; i < n && !d->bad; i++) {
		uint64_t inode = rd_varint(d);
		uint8_t class = rd_u8(d), modes = rd_u8(d);
		uint64_t holder = rd_varint(d), waiter = rd_varint(d);
		struct rec_edge *e;

		if (d->bad || inode >= r->ninodes || class >= ILOCK_CLASS_MAX ||
		    (modes & 0xf) >= ILOCK_MODE_MAX || (modes >> 4) > ILOCK_MODE_EXCL ||
		    holder >= r->ntasks || waiter >= r->ntasks) {
			d->bad = true;
			break;
		}
		if ((err = rgrow(r, (void **)&r->edges, &r->cap_edges, r->nedges, sizeof(*r->edges))))
			return err;
		e = &r->edges[r->nedges++];
		memset(e, 0, sizeof(*e));
		e->inode = (uint32_t)inode;
		e->class = class;
		e->holder_mode = modes & 0xf;
		e->waiter_mode = modes >> 4;
		e->holder = (uint32_t)holder;
		e->waiter = (uint32_t)waiter;
		e->s.count = rd_varint(d);
		e->s.total_ns = rd_varint(d);
		e->s.max_ns = rd_varint(d);
	}
	iv->nedges = r->nedges - iv->edge0;
	return d->bad ? -EINVAL : 0;
}

/*
 * Format 1.1: after the edges, what each side did and how their byte
 * ranges met, five bytes per edge in the same order. A 1.0 file ends
 * before it (its edges stay unknown); a 1.0 reader stops before it.
 */
static int decode_edge_ops(struct recording *r, struct rd *d, const struct rec_interval *iv)
{
	uint64_t n;

	if (!rd_left(d))
		return 0;
	n = rd_count(d, 5);
	if (d->bad || n != iv->nedges)
		return -EINVAL;
	for (uint64_t i = 0; i < n && !d->bad; i++) {
		struct rec_edge *e = &r->edges[iv->edge0 + i];

		e->holder_op = rd_u8(d);
		e->holder_op_flags = rd_u8(d);
		e->waiter_op = rd_u8(d);
		e->waiter_op_flags = rd_u8(d);
		e->range = rd_u8(d);
		if (e->holder_op >= ILOCK_OP_MAX || e->waiter_op >= ILOCK_OP_MAX ||
		    (e->holder_op_flags | e->waiter_op_flags) & ~ILOCK_OPF_KEY_MASK ||
		    e->range >= ILOCK_RANGE_MAX)
			d->bad = true;
	}
	return d->bad ? -EINVAL : 0;
}

/*
 * Format 1.2: after the edge ops, kernel stacks. New frame names and new
 * stacks (ids continue from the file's earlier blocks), then wait time per
 * (edge of this block, stack). A 1.1 file ends before it.
 */
static int decode_stacks(struct recording *r, struct rd *d, struct rec_interval *iv)
{
	uint64_t n;
	int err;

	iv->srow0 = r->nsrows;
	if (!rd_left(d))
		return 0;
	n = rd_count(d, 1);
	for (uint64_t i = 0; i < n && !d->bad; i++) {
		char *name;

		if ((err = rgrow(r, (void **)&r->frames, &r->cap_frames, r->nframes,
				 sizeof(*r->frames))))
			return err;
		name = rd_strdup(d, REC_FRAME_NAME_MAX);
		if (!name)
			return d->bad ? -EINVAL : -ENOMEM;
		/* counted before the check, so rollback subtracts what it frees */
		r->frame_bytes += strlen(name) + 1;
		r->frames[r->nframes++] = name;
		if (!name[0])
			return -EINVAL;
		if (rec_mem(r) > r->mem_budget)
			return -E2BIG;
	}
	n = rd_count(d, 2);
	for (uint64_t i = 0; i < n && !d->bad; i++) {
		uint8_t kind = rd_u8(d), nr = rd_u8(d);
		struct rec_stack *st;

		if (d->bad || kind > ILOCK_STACK_HOLDER || nr > ILOCK_STACK_DEPTH)
			return -EINVAL;
		if ((err = rgrow(r, (void **)&r->stacks, &r->cap_stacks, r->nstacks,
				 sizeof(*r->stacks))) ||
		    (err = rgrow(r, (void **)&r->frame_ids, &r->cap_frame_ids,
				 r->nframe_ids + nr, sizeof(*r->frame_ids))))
			return err;
		st = &r->stacks[r->nstacks++];
		st->kind = kind;
		st->nr = nr;
		st->frame0 = (uint32_t)r->nframe_ids;
		for (unsigned f = 0; f < nr; f++) {
			uint64_t id = rd_varint(d);

			if (d->bad || id >= r->nframes)
				return -EINVAL;
			r->frame_ids[r->nframe_ids++] = (uint32_t)id;
		}
	}
	n = rd_count(d, 2);
	for (uint64_t i = 0, edge = 0; i < n && !d->bad; i++) {
		uint64_t gap = rd_varint(d), sref = rd_varint(d);
		struct rec_stack_row *row;

		if (d->bad || gap >= iv->nedges || edge + gap >= iv->nedges ||
		    (sref >> 1) >= r->nstacks)
			return -EINVAL;
		edge += gap;
		if ((err = rgrow(r, (void **)&r->srows, &r->cap_srows, r->nsrows,
				 sizeof(*r->srows))))
			return err;
		row = &r->srows[r->nsrows++];
		row->edge = (uint32_t)(iv->edge0 + edge);
		row->stack = (uint32_t)(sref >> 1);
		if (sref & 1) {
			/* the whole of its edge's waits */
			row->count = r->edges[row->edge].s.count;
			row->total_ns = r->edges[row->edge].s.total_ns;
		} else {
			row->count = rd_varint(d);
			row->total_ns = rd_varint(d);
		}
	}
	iv->nsrows = r->nsrows - iv->srow0;
	return d->bad ? -EINVAL : 0;
}

/*
 * Format 1.3: after the stacks, the waits in progress at the read that
 * had lasted 100 ms or more. A 1.2 block ends before them.
 */
static int decode_stalls(struct recording *r, struct rd *d, struct rec_interval *iv)
{
	uint64_t n;
	int err;

	iv->stall0 = r->nstalls;
	if (!rd_left(d))
		return 0;
	{
		uint8_t read = rd_u8(d);

		if (d->bad || read > 1)
			return -EINVAL;
		iv->stalls_read = read;
	}
	n = rd_count(d, 13);
	for (uint64_t i = 0; i < n && !d->bad; i++) {
		struct rec_stall s = {};
		uint64_t inode, modes, waiter, holder, owner;

		s.start_ns = rd_varint(d);
		s.waited_ns = rd_varint(d);
		inode = rd_varint(d);
		s.class = rd_u8(d);
		modes = rd_u8(d);
		s.owner_mode = rd_u8(d);
		s.owner_state = (char)rd_u8(d);
		s.waiter_op = rd_u8(d);
		s.holder_op = rd_u8(d);
		s.range = rd_u8(d);
		waiter = rd_varint(d);
		holder = rd_varint(d);
		owner = rd_varint(d);
		s.holder_mode = modes & 0xf;
		s.waiter_mode = (uint8_t)(modes >> 4);
		if (d->bad || inode >= r->ninodes || s.class >= ILOCK_CLASS_MAX ||
		    s.holder_mode >= ILOCK_MODE_MAX || s.waiter_mode > ILOCK_MODE_EXCL ||
		    s.owner_mode >= ILOCK_MODE_MAX || s.waiter_op >= ILOCK_OP_MAX ||
		    s.holder_op >= ILOCK_OP_MAX || s.range >= ILOCK_RANGE_MAX ||
		    waiter >= r->ntasks || holder >= r->ntasks || owner >= r->ntasks ||
		    (s.owner_state && !strchr(WAITING_STATE_LETTERS, s.owner_state)))
			return -EINVAL;
		s.inode = (uint32_t)inode;
		s.waiter = (uint32_t)waiter;
		s.holder = (uint32_t)holder;
		s.owner = (uint32_t)owner;
		if ((err = rgrow(r, (void **)&r->stalls, &r->cap_stalls, r->nstalls,
				 sizeof(*r->stalls))))
			return err;
		r->stalls[r->nstalls++] = s;
	}
	iv->nstalls = r->nstalls - iv->stall0;
	return d->bad ? -EINVAL : 0;
}

/*
 * (1.5) The generation of each inode this block defined, in order: a
 * count that is not theirs is damage. Older blocks end before it: 0.
 */
static int decode_gens(struct recording *r, struct rd *d, size_t first_new)
{
	uint64_t n;

	if (!rd_left(d))
		return 0;
	n = rd_count(d, 1);
	if (d->bad || n != r->ninodes - first_new)
		return -EINVAL;
	for (size_t i = first_new; i < r->ninodes; i++) {
		uint64_t gen = rd_varint(d);

		if (gen > UINT32_MAX)
			d->bad = true;
		r->inodes[i].gen = r->inodes[i].meta.gen = (uint32_t)gen;
	}
	return d->bad ? -EINVAL : 0;
}

/*
 * (1.7) The process titles of tasks this block defined, each at most once:
 * a task of another block, or a title twice, is damage. Older blocks end
 * before it: none.
 */
static int decode_titles(struct recording *r, struct rd *d, size_t first_task)
{
	uint64_t n;

	if (!rd_left(d))
		return 0;
	n = rd_count(d, 2);
	for (uint64_t i = 0; i < n && !d->bad; i++) {
		uint64_t id = rd_varint(d);
		char *title;

		if (d->bad || id < first_task || id >= r->ntasks || r->tasks[id].title)
			return -EINVAL;
		title = rd_strdup(d, ILOCK_TITLE_MAX - 1);
		if (!title)
			return d->bad ? -EINVAL : -ENOMEM;
		r->tasks[id].title = title;
		/* counted before the checks, so rollback subtracts what it frees */
		r->title_bytes += strlen(title) + 1;
		if (!title[0])
			return -EINVAL;
		if (rec_mem(r) > r->mem_budget)
			return -E2BIG;
	}
	return d->bad ? -EINVAL : 0;
}

/* 1.8: the interval's flags; unknown bits are a later version's, and ignored */
static int decode_iv_flags(struct rd *d, struct rec_interval *iv)
{
	uint8_t f;

	if (!rd_left(d))
		return 0;
	f = rd_u8(d);
	iv->tables_end = f & REC_IVF_TABLES_END;
	return d->bad ? -EINVAL : 0;
}

size_t rec_renewals(const struct recording *r, size_t i0, size_t i1)
{
	size_t n = 0;

	for (size_t i = i0; i < i1 && i < r->niv; i++)
		n += r->iv[i].tables_end;
	return n;
}

static int decode_interval(struct recording *r, struct rd *d)
{
	struct rec_interval iv = {};
	size_t first_new = r->ninodes, first_task = r->ntasks;
	uint64_t nc;
	int err;

	iv.seq = rd_varint(d);
	iv.t_start_ns = rd_varint(d);
	iv.dur_ns = rd_varint(d);
	iv.in_flight = rd_varint(d);
	nc = rd_count(d, 1);
	for (uint64_t i = 0; i < nc; i++) {
		uint64_t v = rd_varint(d);

		if (i < ARRAY_SIZE(r->counter_map) && r->counter_map[i] >= 0)
			iv.counters[r->counter_map[i]] = v;
	}
	if (d->bad)
		return -EINVAL;
	if ((err = decode_mounts(r, d)) || (err = decode_inodes(r, d)) ||
	    (err = decode_tasks(r, d)) || (err = decode_locks(r, d, &iv)) ||
	    (err = decode_edges(r, d, &iv)) || (err = decode_edge_ops(r, d, &iv)) ||
	    (err = decode_stacks(r, d, &iv)) || (err = decode_stalls(r, d, &iv)) ||
	    (err = decode_gens(r, d, first_new)) || (err = decode_titles(r, d, first_task)) ||
	    (err = decode_iv_flags(d, &iv)))
		return err;
	if ((err = rgrow(r, (void **)&r->iv, &r->cap_iv, r->niv, sizeof(*r->iv))))
		return err;
	r->iv[r->niv++] = iv;
	return 0;
}

static int decode_end(struct recording *r, struct rd *d)
{
	rd_varint(d);  /* intervals written: the blocks themselves are the truth */
	rd_varint(d);  /* end_realtime_ns */
	rd_str(d, r->end_reason, sizeof(r->end_reason));
	if (d->bad)
		return -EINVAL;
	r->has_end = true;
	return 0;
}

/* Undo a block that failed halfway, so r only holds whole blocks. */
struct rec_mark {
	size_t ninodes, ntasks, nlocks, nedges, niv, nmounts;
	size_t nframes, nframe_ids, nstacks, nsrows, nstalls;
};

static void mark(const struct recording *r, struct rec_mark *m)
{
	*m = (struct rec_mark){ .ninodes = r->ninodes, .ntasks = r->ntasks, .nlocks = r->nlocks,
				.nedges = r->nedges, .niv = r->niv, .nmounts = r->mounts.n,
				.nframes = r->nframes, .nframe_ids = r->nframe_ids,
				.nstacks = r->nstacks, .nsrows = r->nsrows, .nstalls = r->nstalls };
}

static void rollback(struct recording *r, const struct rec_mark *m)
{
	r->ninodes = m->ninodes;
	while (r->ntasks > m->ntasks) {
		struct rec_task *t = &r->tasks[--r->ntasks];

		if (t->title)
			r->title_bytes -= strlen(t->title) + 1;
		free(t->title);
		t->title = NULL;
	}
	r->nlocks = m->nlocks;
	r->nedges = m->nedges;
	r->niv = m->niv;
	while (r->nframes > m->nframes) {
		char *name = r->frames[--r->nframes];

		r->frame_bytes -= strlen(name) + 1;
		free(name);
	}
	r->nframe_ids = m->nframe_ids;
	r->nstacks = m->nstacks;
	r->nsrows = m->nsrows;
	r->nstalls = m->nstalls;
	while (r->mounts.n > m->nmounts) {
		struct mount_entry *e = &r->mounts.e[--r->mounts.n];

		free(e->root);
		free(e->mnt);
		free(e->fstype);
		free(e->source);
	}
}

static enum rec_status check_header(struct recording *r, const uint8_t *buf, size_t len)
{
	size_t n = len < REC_MAGIC_LEN ? len : REC_MAGIC_LEN;
	int same = 0;

	if (!len)
		return fail(r, REC_EMPTY, "empty file (0 bytes): not an ilock recording");
	for (size_t i = 0; i < n; i++)
		same += buf[i] == (uint8_t)REC_MAGIC[i];
	if (same == (int)n && len < REC_HDR_LEN)
		return fail(r, REC_SHORT_HEADER, "truncated header (%zu of %d bytes)", len,
			    REC_HDR_LEN);
	/* most of the magic there: a damaged header, not some other file */
	if (n == REC_MAGIC_LEN && same >= 5 && same < REC_MAGIC_LEN)
		return fail(r, REC_BAD_MAGIC,
			    "bad magic number (%d of %d bytes match): damaged recording header", same,
			    REC_MAGIC_LEN);
	if (same < (int)n || len < REC_HDR_LEN)
		return fail(r, REC_NOT_RECORDING, "not an ilock recording (no ilock magic at the start)");
	r->major = get_le16(buf + 8);
	r->minor = get_le16(buf + 10);
	/* the checksum first: a flipped version byte is damage, not a newer format */
	if (get_le32(buf + 12) != crc_of(crc32(0, Z_NULL, 0), buf, 12))
		return fail(r, REC_HEADER_CRC, "header checksum mismatch: damaged recording header");
	if (r->major > REC_MAJOR)
		return fail(r, REC_NEWER_MAJOR,
			    "format version %u.%u is newer than this ilock reads (%u.x): use a newer ilock",
			    r->major, r->minor, REC_MAJOR);
	if (r->major < 1)
		return fail(r, REC_BAD_VERSION, "unknown format version %u.%u", r->major, r->minor);
	return REC_OK;
}

/*
 * Inflate exactly raw_len bytes. One spare output byte tells "more than
 * declared" (a bomb) from "exactly right".
 */
static enum rec_status inflate_block(struct recording *r, const uint8_t *src, uint32_t len,
				     uint32_t raw_len, uint64_t off, uint8_t **out)
{
	z_stream zs = {};
	uint8_t *dst = malloc((size_t)raw_len + 1);
	int zr;

	*out = NULL;
	if (!dst)
		return fail(r, REC_NOMEM, "out of memory");
	if (inflateInit(&zs) != Z_OK) {
		free(dst);
		return fail(r, REC_NOMEM, "out of memory (zlib)");
	}
	zs.next_in = (Bytef *)src;
	zs.avail_in = len;
	zs.next_out = dst;
	zs.avail_out = raw_len + 1;
	zr = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	if (zs.total_out > raw_len) {
		free(dst);
		return fail(r, REC_BOMB,
			    "block %" PRIu64 " at offset %" PRIu64 " inflates past its declared %u bytes: "
			    "rejected as a zlib bomb", r->nblocks + 1, off, raw_len);
	}
	if (zr != Z_STREAM_END || zs.total_out != raw_len) {
		free(dst);
		return fail(r, REC_MALFORMED,
			    "block %" PRIu64 " at offset %" PRIu64 ": bad compressed data (%s)",
			    r->nblocks + 1, off, zr == Z_STREAM_END ? "shorter than declared"
						 : zs.msg ? zs.msg : "incomplete stream");
	}
	*out = dst;
	return REC_OK;
}

int rec_decode_payload(struct recording *r, uint8_t type, const uint8_t *raw, size_t len)
{
	struct rd d = { .p = raw, .n = len };
	struct rec_mark m;
	int err = 0;

	mark(r, &m);
	switch (type) {
	case REC_BLK_META:
		err = decode_meta(r, &d);
		break;
	case REC_BLK_INTERVAL:
		err = decode_interval(r, &d);
		break;
	case REC_BLK_END:
		err = decode_end(r, &d);
		break;
	default:
		break;  /* a newer minor version's block: skip it */
	}
	if (err)
		rollback(r, &m);
	return err;
}

void rec_finish(struct recording *r)
{
	/* the fs of inodes without their own magic: from the recorded mounts */
	for (size_t i = 0; i < r->ninodes; i++) {
		struct rec_inode *in = &r->inodes[i];
		const struct mount_entry *me = mounts_find_dev(&r->mounts, in->dev);

		in->magic = in->has_meta ? in->meta.magic : 0;
		if (!in->magic && me)
			fs_magic_from_name(me->fstype, &in->magic);
	}
	/* the frames' stand-in addresses, named; on no memory they print as addresses */
	ksyms_free(&r->syms);
	for (size_t i = 0; i < r->nframes; i++)
		if (ksyms_add(&r->syms, REC_FRAME_ADDR(i), r->frames[i]))
			break;
	/* on no memory, or past TITLES_MAX_THREADS, the rest print without titles */
	titles_free(&r->titles);
	for (size_t i = 0; i < r->ntasks; i++)
		if (r->tasks[i].title &&
		    titles_put(&r->titles, r->tasks[i].pid, r->tasks[i].comm, r->tasks[i].title))
			break;
}

enum rec_status rec_decode(struct recording *r, const uint8_t *buf, size_t len)
{
	size_t off = REC_HDR_LEN;
	enum rec_status st;

	r->file_size = len;
	r->mem_budget = REC_MIN_BUDGET + (uint64_t)len * REC_BUDGET_PER_BYTE;
	r->status = REC_OK;
	r->msg[0] = 0;
	st = check_header(r, buf, len);
	if (st)
		return st;
	r->good_bytes = REC_HDR_LEN;

	while (off < len) {
		size_t left = len - off;
		const uint8_t *h = buf + off;
		uint32_t blen, raw_len, crc;
		uint8_t *raw = NULL;
		int err = 0;

		if (left < REC_BLOCK_HDR_LEN) {
			st = fail(r, REC_TRUNCATED,
				  "truncated block header at offset %zu (%zu of %d bytes)", off, left,
				  REC_BLOCK_HDR_LEN);
			break;
		}
		blen = get_le32(h + 4);
		raw_len = get_le32(h + 8);
		/* the length is checked before the CRC: it decides what the CRC covers */
		if (blen > REC_MAX_BLOCK) {
			st = fail(r, REC_TOO_BIG,
				  "block %" PRIu64 " at offset %zu claims %u bytes, over the %u-byte limit: "
				  "damaged or not from ilock", r->nblocks + 1, off, blen, REC_MAX_BLOCK);
			break;
		}
		if (blen > left - REC_BLOCK_HDR_LEN) {
			st = fail(r, REC_TRUNCATED,
				  "truncated block %" PRIu64 " at offset %zu (%zu of %u bytes)",
				  r->nblocks + 1, off, left, blen + REC_BLOCK_HDR_LEN);
			break;
		}
		crc = crc_of(crc32(0, Z_NULL, 0), h, 12);
		crc = crc_of(crc, h + REC_BLOCK_HDR_LEN, blen);
		if (crc != get_le32(h + 12)) {
			st = fail(r, REC_BAD_CRC,
				  "checksum mismatch in block %" PRIu64 " at offset %zu: damaged data",
				  r->nblocks + 1, off);
			break;
		}
		if (h[1] != REC_CODEC_ZLIB) {
			st = fail(r, REC_MALFORMED,
				  "block %" PRIu64 " at offset %zu: unknown compression %u",
				  r->nblocks + 1, off, h[1]);
			break;
		}
		if (raw_len > REC_MAX_RAW) {
			st = fail(r, REC_BOMB,
				  "block %" PRIu64 " at offset %zu would inflate to %u bytes, over the "
				  "%u-byte limit: rejected as a zlib bomb", r->nblocks + 1, off, raw_len,
				  REC_MAX_RAW);
			break;
		}
		st = inflate_block(r, h + REC_BLOCK_HDR_LEN, blen, raw_len, off, &raw);
		if (st)
			break;
		if (!r->nblocks && h[0] != REC_BLK_META) {
			free(raw);
			st = fail(r, REC_NO_META, "first block is not the metadata block: not a usable "
				  "recording");
			break;
		}
		err = rec_decode_payload(r, h[0], raw, raw_len);
		free(raw);
		if (err) {
			if (err == -E2BIG) {
				st = fail(r, REC_BOMB,
					  "block %" PRIu64 " at offset %zu decodes to more records than "
					  "a %zu-byte file can hold (over %" PRIu64 " MiB): rejected as a "
					  "bomb", r->nblocks + 1, off, len, r->mem_budget >> 20);
				break;
			}
			st = err == -ENOMEM ? fail(r, REC_NOMEM, "out of memory")
					    : fail(r, REC_MALFORMED,
						   "block %" PRIu64 " at offset %zu passes its checksum but "
						   "does not decode (type %u): not written by this format",
						   r->nblocks + 1, off, h[0]);
			break;
		}
		r->nblocks++;
		off += REC_BLOCK_HDR_LEN + blen;
		r->good_bytes = off;
	}
	if (st == REC_OK && !r->nblocks)
		st = fail(r, REC_NO_META, "no metadata block: the recording stops after its header");
	rec_finish(r);
	return st;
}

/* ---------------------------------------------------------------- writer */

struct inode_k {
	uint64_t ino;
	uint32_t dev;
	uint32_t gen;
};

struct task_k {
	uint32_t pid, tgid;
	char comm[ILOCK_COMM_LEN];
};

struct stack_k {
	uint64_t id;
	uint8_t kind;
	uint8_t zero[7];
};

/* A stack as written: its kind and frame ids (zero-padded past nr). */
struct stack_content {
	uint8_t kind, nr;
	uint8_t zero[2];
	uint32_t fid[ILOCK_STACK_DEPTH];
};

void rec_writer_init(struct rec_writer *w)
{
	memset(w, 0, sizeof(*w));
	idmap_init(&w->inode_ids, sizeof(struct inode_k));
	idmap_init(&w->task_ids, sizeof(struct task_k));
	idmap_init(&w->devs_done, sizeof(uint32_t));
	idmap_init(&w->frame_addrs, sizeof(uint64_t));
	idmap_init(&w->frame_ids, REC_FRAME_NAME_MAX + 1);
	idmap_init(&w->stack_ids, sizeof(struct stack_k));
	idmap_init(&w->stack_defs, sizeof(struct stack_content));
}

void rec_writer_free(struct rec_writer *w)
{
	idmap_free(&w->inode_ids);
	idmap_free(&w->task_ids);
	idmap_free(&w->devs_done);
	idmap_free(&w->frame_addrs);
	idmap_free(&w->frame_ids);
	idmap_free(&w->stack_ids);
	idmap_free(&w->stack_defs);
	free(w->inode_written);
	free(w->pending_devs);
	rec_buf_free(&w->raw);
	rec_writer_init(w);  /* ksyms is the caller's: set it again to reuse w */
}

void rec_writer_forget_stacks(struct rec_writer *w)
{
	/* the stacks keep their file ids; only the kernel's ids stop naming them */
	idmap_free(&w->stack_ids);
	idmap_init(&w->stack_ids, sizeof(struct stack_k));
}

int rec_encode_meta(struct rec_buf *raw, const struct rec_kv *kv, size_t n)
{
	rec_buf_varint(raw, n);
	for (size_t i = 0; i < n; i++) {
		rec_buf_str(raw, kv[i].key);
		rec_buf_str(raw, kv[i].val);
	}
	return raw->oom ? -ENOMEM : 0;
}

int rec_encode_end(struct rec_buf *raw, uint64_t nintervals, uint64_t end_realtime_ns,
		   const char *reason)
{
	rec_buf_varint(raw, nintervals);
	rec_buf_varint(raw, end_realtime_ns);
	rec_buf_str(raw, reason);
	return raw->oom ? -ENOMEM : 0;
}

/* meta quality: 0 none written, 1 without a path, 2 with one */
static uint8_t meta_rank(const struct inode_meta *m)
{
	return !m ? 0 : m->path[0] ? 2 : 1;
}

/* What a reader would see changed: the path and the flags it keeps. */
static uint32_t meta_sum(const struct inode_meta *m)
{
	uint16_t flags = m ? m->flags & ~INODE_META_NUMBER_REUSED : 0;
	uint32_t c = (uint32_t)crc32(0, (const Bytef *)&flags, sizeof(flags));

	return m ? (uint32_t)crc32(c, (const Bytef *)m->path, (uInt)strlen(m->path)) : 0;
}

struct enc {
	struct rec_writer *w;
	const struct snapshot *inodes;
	struct rec_buf defs;   /* inode defs */
	uint64_t ndefs;
	struct rec_buf gens;   /* (1.5) the generation of each new inode def, in order */
};

static void enc_inode_def(struct enc *e, uint32_t id, bool is_new, const struct inode_meta *m,
			  uint32_t dev, uint64_t ino)
{
	rec_buf_varint(&e->defs, id);
	if (is_new) {
		rec_buf_varint(&e->defs, dev);
		rec_buf_varint(&e->defs, ino);
	}
	buf_u8(&e->defs, m != NULL);
	if (m) {
		rec_buf_varint(&e->defs, m->magic);
		rec_buf_varint(&e->defs, m->flags & ~INODE_META_NUMBER_REUSED);
		rec_buf_str(&e->defs, m->path);
	}
	e->ndefs++;
}

static int add_pending_dev(struct rec_writer *w, uint32_t dev)
{
	uint32_t id;

	if (idmap_get(&w->devs_done, &dev, &id))
		return 0;
	for (size_t i = 0; i < w->npending; i++)
		if (w->pending_devs[i] == dev)
			return 0;
	if (!grow_array((void **)&w->pending_devs, &w->cap_pending, w->npending, sizeof(uint32_t)))
		return -ENOMEM;
	w->pending_devs[w->npending++] = dev;
	return 0;
}

/* The inode's id, writing its definition (or better metadata) first. */
static int enc_inode(struct enc *e, uint32_t dev, uint64_t ino, uint32_t gen, uint32_t *id)
{
	struct rec_writer *w = e->w;
	struct inode_k k = { .ino = ino, .dev = dev, .gen = gen };
	const struct inode_meta *m = snap_find_inode(e->inodes, dev, ino, gen);
	uint8_t rank = meta_rank(m);
	uint32_t sum = meta_sum(m);

	if (idmap_get(&w->inode_ids, &k, id)) {
		struct inode_written *iw = &w->inode_written[*id];

		/* a better one, or a path looked at again that changed (pathcheck.h) */
		if (rank > iw->rank || (rank == 2 && sum != iw->sum)) {
			enc_inode_def(e, *id, false, m, dev, ino);
			*iw = (struct inode_written){ rank, sum };
		}
		return 0;
	}
	*id = (uint32_t)w->inode_ids.n;
	if (!grow_array((void **)&w->inode_written, &w->cap_inode_written, *id,
		  sizeof(*w->inode_written)))
		return -ENOMEM;
	if (idmap_put(&w->inode_ids, &k, *id))
		return -ENOMEM;
	w->inode_written[*id] = (struct inode_written){ rank, sum };
	enc_inode_def(e, *id, true, m, dev, ino);
	rec_buf_varint(&e->gens, gen);
	return add_pending_dev(w, dev);
}

static void enc_stats(struct rec_buf *b, const struct ilock_stats *s)
{
	int prev = -1;
	uint64_t n = 0;

	rec_buf_varint(b, s->count);
	rec_buf_varint(b, s->total_ns);
	rec_buf_varint(b, s->max_ns);
	for (int i = 0; i < ILOCK_HIST_SLOTS; i++)
		n += s->hist[i] != 0;
	rec_buf_varint(b, n);
	for (int i = 0; i < ILOCK_HIST_SLOTS; i++) {
		if (!s->hist[i])
			continue;
		rec_buf_varint(b, (uint64_t)(i - prev - 1));
		rec_buf_varint(b, s->hist[i]);
		prev = i;
	}
}

/* tasks: their definitions; titles: (1.7) the titles of those that have one */
struct enc_tasks {
	struct rec_buf defs, titles;
	uint64_t n, ntitles;
};

static int enc_task(struct rec_writer *w, struct enc_tasks *et, uint32_t pid, uint32_t tgid,
		    const char *comm, uint32_t *id)
{
	const char *title = titles_get(w->titles, pid, comm);
	struct task_k k = { .pid = pid, .tgid = tgid };
	char c[ILOCK_COMM_LEN + 1];

	str_copy(c, sizeof(c), comm, ILOCK_COMM_LEN);
	memcpy(k.comm, c, strlen(c));  /* NUL-padded: equal comms, equal keys */
	if (idmap_get(&w->task_ids, &k, id))
		return 0;
	*id = (uint32_t)w->task_ids.n;
	if (idmap_put(&w->task_ids, &k, *id))
		return -ENOMEM;
	rec_buf_varint(&et->defs, pid);
	rec_buf_varint(&et->defs, tgid);
	rec_buf_str(&et->defs, c);
	et->n++;
	if (title) {
		rec_buf_varint(&et->titles, *id);
		rec_buf_str(&et->titles, title);
		et->ntitles++;
	}
	return 0;
}

static void enc_mounts(struct rec_writer *w, struct rec_buf *b, uint64_t *n,
		       const struct mount_table *mt)
{
	size_t keep = 0;

	for (size_t i = 0; i < w->npending; i++) {
		uint32_t dev = w->pending_devs[i];
		bool found = false;

		for (size_t j = 0; mt && j < mt->n; j++) {
			const struct mount_entry *me = &mt->e[j];

			if (me->kdev != dev)
				continue;
			rec_buf_varint(b, dev);
			rec_buf_str(b, me->root);
			rec_buf_str(b, me->mnt);
			rec_buf_str(b, me->fstype);
			rec_buf_str(b, me->source);
			(*n)++;
			found = true;
		}
		/* not mounted (yet): try again with the next interval's table */
		if (!found || idmap_put(&w->devs_done, &dev, 0))
			w->pending_devs[keep++] = dev;
	}
	w->npending = keep;
}

/*
 * A frame's id, naming it in *b (and counting it in *n) the first time.
 * Frames are named by function: two addresses in one function are one
 * frame, as the views show them.
 */
static int enc_frame(struct rec_writer *w, struct rec_buf *b, uint64_t *n, uint64_t ip,
		     uint32_t *id)
{
	const char *name = w->ksyms ? ksyms_find(w->ksyms, ip, NULL) : NULL;
	char key[REC_FRAME_NAME_MAX + 1] = "";
	int err;

	if (idmap_get(&w->frame_addrs, &ip, id))
		return 0;
	if (name && name[0] && strlen(name) <= REC_FRAME_NAME_MAX)
		memcpy(key, name, strlen(name));
	else
		snprintf(key, sizeof(key), "0x%" PRIx64, ip);
	if (!idmap_get(&w->frame_ids, key, id)) {
		if ((err = idmap_put(&w->frame_ids, key, w->nframes)))
			return err;
		rec_buf_str(b, key);
		(*n)++;
		*id = w->nframes++;
	}
	return idmap_put(&w->frame_addrs, &ip, *id);
}

/* A stack's id, defining it (and its new frames) the first time. */
static int enc_stack(struct rec_writer *w, const struct snapshot *delta, uint8_t kind,
		     uint64_t kid, struct rec_buf *frames, uint64_t *nframes, struct rec_buf *defs,
		     uint64_t *ndefs, uint32_t *id)
{
	struct stack_k k = { .id = kid, .kind = kind };
	struct stack_content c = { .kind = kind };
	const struct ilock_stack_frames *fr;
	uint32_t top = 0, nr;
	int err;

	if (idmap_get(&w->stack_ids, &k, id))
		return 0;
	fr = snap_find_frames(delta, kind, kid);
	nr = fr ? (fr->nr < ILOCK_STACK_DEPTH ? fr->nr : ILOCK_STACK_DEPTH) : 0;
	/* the tracing machinery on top is never shown: not worth the bytes */
	if (fr)
		top = ksyms_first_shown(w->ksyms, fr);
	for (uint32_t i = top; i < nr; i++)
		if ((err = enc_frame(w, frames, nframes, fr->ip[i], &c.fid[c.nr++])))
			return err;
	/*
	 * A stack written before under another kernel id (a fresh stack map
	 * after rec_writer_forget_stacks) keeps its file id: a pair's waits
	 * on one stack stay one row in the report.
	 */
	if (idmap_get(&w->stack_defs, &c, id))
		return idmap_put(&w->stack_ids, &k, *id);
	buf_u8(defs, kind);
	buf_u8(defs, c.nr);
	for (uint32_t i = 0; i < c.nr; i++)
		rec_buf_varint(defs, c.fid[i]);
	if ((err = idmap_put(&w->stack_ids, &k, w->nstacks)) ||
	    (err = idmap_put(&w->stack_defs, &c, w->nstacks)))
		return err;
	(*ndefs)++;
	*id = w->nstacks++;
	return 0;
}

/*
 * The edge (index among the block's edges) of each of delta's stack rows,
 * found through delta's own edge index. A row whose edge has no wait this
 * interval (the maps are read one after the other) gets its edge appended
 * with zero counts: *extra, *nextra.
 */
static int stack_edges(const struct snapshot *delta, uint32_t *row_edge,
		       const struct ilock_edge_key ***extra, size_t *nextra)
{
	struct idmap ids;   /* the appended ones */
	int err = 0;

	idmap_init(&ids, sizeof(struct ilock_edge_key));
	*extra = NULL;
	*nextra = 0;
	for (size_t i = 0; i < delta->nstacks && !err; i++) {
		const struct ilock_edge_key *k = &delta->stacks[i].k.edge;
		const struct edge_row *e = snap_find_edge(delta, k);
		const struct ilock_edge_key **p;

		if (e) {
			row_edge[i] = (uint32_t)(e - delta->edges);
			continue;
		}
		if (idmap_get(&ids, k, &row_edge[i]))
			continue;
		p = realloc(*extra, (*nextra + 1) * sizeof(**extra));
		if (!p) {
			err = -ENOMEM;
			break;
		}
		*extra = p;
		row_edge[i] = (uint32_t)(delta->nedges + *nextra);
		(*extra)[(*nextra)++] = k;
		err = idmap_put(&ids, k, row_edge[i]);
	}
	idmap_free(&ids);
	return err;
}

struct srow_enc {
	uint32_t edge, stack;
	uint64_t count, total_ns;
};

static int cmp_srow(const void *pa, const void *pb)
{
	const struct srow_enc *a = pa, *b = pb;

	if (a->edge != b->edge)
		return a->edge < b->edge ? -1 : 1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/*
 * The stacks section (1.2): new frames, new stacks, then the rows, by
 * edge. Most edges have one waiter stack that carries all their waits:
 * such a row says "whole" instead of repeating the edge's count and time.
 */
static int enc_stacks(struct rec_writer *w, struct rec_buf *raw, const struct snapshot *delta,
		      const uint32_t *row_edge)
{
	struct rec_buf frames = {}, defs = {}, rows = {};
	struct srow_enc *v = delta->nstacks ? calloc(delta->nstacks, sizeof(*v)) : NULL;
	uint64_t nframes = 0, ndefs = 0;
	size_t n = 0;
	uint32_t prev = 0;
	int err = 0;

	if (delta->nstacks && !v)
		return -ENOMEM;
	for (size_t i = 0; i < delta->nstacks; i++) {
		const struct stack_row *r = &delta->stacks[i];

		if (!r->s.count && !r->s.total_ns)
			continue;
		if ((err = enc_stack(w, delta, r->k.kind, r->k.stack, &frames, &nframes, &defs,
				     &ndefs, &v[n].stack)))
			goto out;
		v[n].edge = row_edge[i];
		v[n].count = r->s.count;
		v[n++].total_ns = r->s.total_ns;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_srow);
	for (size_t i = 0; i < n; i++) {
		const struct ilock_edge_stats *e =
			v[i].edge < delta->nedges ? &delta->edges[v[i].edge].s : NULL;
		bool whole = e && e->count == v[i].count && e->total_ns == v[i].total_ns;

		rec_buf_varint(&rows, v[i].edge - prev);
		prev = v[i].edge;
		rec_buf_varint(&rows, (uint64_t)v[i].stack << 1 | whole);
		if (!whole) {
			rec_buf_varint(&rows, v[i].count);
			rec_buf_varint(&rows, v[i].total_ns);
		}
	}
	rec_buf_varint(raw, nframes);
	rec_buf_put(raw, frames.p, frames.len);
	rec_buf_varint(raw, ndefs);
	rec_buf_put(raw, defs.p, defs.len);
	rec_buf_varint(raw, n);
	rec_buf_put(raw, rows.p, rows.len);
	if (frames.oom || defs.oom || rows.oom)
		err = -ENOMEM;
out:
	free(v);
	rec_buf_free(&frames);
	rec_buf_free(&defs);
	rec_buf_free(&rows);
	return err;
}

/* An fsync's journal wait has no holder: its holder mode says whether a commit ran (rec_stall). */
static uint8_t stall_holder_mode(const struct ilock_waiting *x)
{
	if (x->key.class != ILOCK_CLASS_JBD2_WAIT)
		return x->holder_mode;
	if (x->owner_mode != ILOCK_MODE_EXCL)
		return ILOCK_MODE_UNKNOWN;  /* no journal seen: nothing to tell */
	return waiting_commit_ns(x) ? ILOCK_MODE_EXCL : ILOCK_MODE_SHARED;
}

/*
 * The stalls of this read (1.3): waits in progress for WAITING_STALL_NS or
 * more, their inode and tasks defined in this block like an edge's.
 */
static int enc_stalls(struct rec_writer *w, struct enc *e, struct enc_tasks *tasks,
		      struct rec_buf *out, const struct waiting_set *ws, uint64_t start_mono_ns)
{
	size_t n = waiting_over(ws, WAITING_STALL_NS);
	int err;

	buf_u8(out, ws->available);
	rec_buf_varint(out, n);
	for (size_t i = 0; i < n; i++) {
		const struct ilock_waiting *x = &ws->w[i];
		uint32_t id, waiter, holder, owner;

		if ((err = enc_inode(e, x->key.dev, x->key.ino, x->key.gen, &id)) ||
		    (err = enc_task(w, tasks, x->tid, x->tgid, x->comm, &waiter)) ||
		    (err = enc_task(w, tasks, x->holder_pid, x->holder_tgid, x->holder_comm,
				    &holder)) ||
		    (err = enc_task(w, tasks, x->owner_pid, x->owner_tgid, x->owner_comm, &owner)))
			return err;
		/* both CLOCK_MONOTONIC: the start exactly, the same at every read */
		rec_buf_varint(out, x->start_ns > start_mono_ns ? x->start_ns - start_mono_ns : 0);
		rec_buf_varint(out, waiting_age_ns(x));
		rec_buf_varint(out, id);
		buf_u8(out, x->key.class);
		buf_u8(out, (uint8_t)((stall_holder_mode(x) & 0xf) | (x->key.mode << 4)));
		buf_u8(out, x->owner_mode);
		buf_u8(out, (uint8_t)waiting_owner_state(x));
		buf_u8(out, x->wop.op < ILOCK_OP_MAX ? x->wop.op : ILOCK_OP_UNKNOWN);
		buf_u8(out, x->hop.op < ILOCK_OP_MAX ? x->hop.op : ILOCK_OP_UNKNOWN);
		buf_u8(out, ilock_pair_range(&x->hop, &x->wop, x->holder_mode, x->key.mode));
		rec_buf_varint(out, waiter);
		rec_buf_varint(out, holder);
		rec_buf_varint(out, owner);
	}
	return 0;
}

int rec_encode_interval(struct rec_writer *w, struct rec_buf *raw, const struct snapshot *delta,
			const struct snapshot *inodes, const struct mount_table *mt,
			uint64_t t_start_ns, uint64_t dur_ns)
{
	static const struct ilock_edge_stats no_waits;
	struct enc e = { .w = w, .inodes = inodes };
	size_t first_new = w->inode_ids.n;  /* the ids this block defines follow */
	struct rec_buf mounts = {}, locks = {}, edges = {}, ops = {}, stalls = {};
	struct enc_tasks tasks = {};
	uint64_t nmounts = 0;
	const struct ilock_edge_key **extra = NULL;
	uint32_t *row_edge = NULL;
	size_t nextra = 0, nedges;
	int err = 0;

	if (delta->nstacks) {
		row_edge = calloc(delta->nstacks, sizeof(*row_edge));
		if (!row_edge)
			return -ENOMEM;
		if ((err = stack_edges(delta, row_edge, &extra, &nextra)))
			goto out;
	}
	nedges = delta->nedges + nextra;

	/* locks: every row of the interval, defining its inode first */
	rec_buf_varint(&locks, delta->nlocks);
	for (size_t i = 0; i < delta->nlocks; i++) {
		const struct lock_row *r = &delta->locks[i];
		uint8_t present = r->has_hold ? 0x10 : 0;
		uint32_t id;

		if ((err = enc_inode(&e, r->dev, r->ino, r->gen, &id)))
			goto out;
		for (int k = 0; k < 2; k++) {
			if (r->wait[k].count || r->wait[k].total_ns)
				present |= 1 << k;
			if (r->hold[k].count || r->hold[k].total_ns)
				present |= 1 << (k + 2);
		}
		rec_buf_varint(&locks, id);
		buf_u8(&locks, r->class);
		buf_u8(&locks, present);
		for (int k = 0; k < 4; k++)
			if (present & (1 << k))
				enc_stats(&locks, k < 2 ? &r->wait[k] : &r->hold[k - 2]);
	}
	rec_buf_varint(&edges, nedges);
	rec_buf_varint(&ops, nedges);
	for (size_t i = 0; i < nedges; i++) {
		const struct ilock_edge_key *k =
			i < delta->nedges ? &delta->edges[i].k : extra[i - delta->nedges];
		const struct ilock_edge_stats *st =
			i < delta->nedges ? &delta->edges[i].s : &no_waits;
		uint32_t id, holder, waiter;

		if ((err = enc_inode(&e, k->dev, k->ino, k->gen, &id)) ||
		    (err = enc_task(w, &tasks, k->holder_pid, k->holder_tgid, k->holder_comm,
				    &holder)) ||
		    (err = enc_task(w, &tasks, k->waiter_pid, k->waiter_tgid, k->waiter_comm,
				    &waiter)))
			goto out;
		rec_buf_varint(&edges, id);
		buf_u8(&edges, k->class);
		buf_u8(&edges, (uint8_t)((k->holder_mode & 0xf) | (k->waiter_mode << 4)));
		rec_buf_varint(&edges, holder);
		rec_buf_varint(&edges, waiter);
		rec_buf_varint(&edges, st->count);
		rec_buf_varint(&edges, st->total_ns);
		rec_buf_varint(&edges, st->max_ns);
		buf_u8(&ops, k->holder_op);
		buf_u8(&ops, k->holder_op_flags);
		buf_u8(&ops, k->waiter_op);
		buf_u8(&ops, k->waiter_op_flags);
		buf_u8(&ops, k->range);
	}
	/* the read was at t_start + dur from the start, and at delta->mono_ns */
	if ((err = enc_stalls(w, &e, &tasks, &stalls, &delta->waiting,
			      delta->mono_ns > t_start_ns + dur_ns ?
			      delta->mono_ns - (t_start_ns + dur_ns) : 0)))
		goto out;
	/* inodes seen since the last interval, or with a better path now */
	for (size_t i = 0; inodes && i < inodes->ninodes; i++) {
		uint32_t id;

		const struct inode_meta *m = &inodes->inodes[i];

		if ((err = enc_inode(&e, m->dev, m->ino, m->gen, &id)))
			goto out;
	}
	enc_mounts(w, &mounts, &nmounts, mt);

	rec_buf_varint(raw, w->seq++);
	rec_buf_varint(raw, t_start_ns);
	rec_buf_varint(raw, dur_ns);
	rec_buf_varint(raw, delta->in_flight);
	rec_buf_varint(raw, ILOCK_COUNTER_MAX);
	for (int c = 0; c < ILOCK_COUNTER_MAX; c++)
		rec_buf_varint(raw, delta->counters[c]);
	rec_buf_varint(raw, nmounts);
	rec_buf_put(raw, mounts.p, mounts.len);
	rec_buf_varint(raw, e.ndefs);
	rec_buf_put(raw, e.defs.p, e.defs.len);
	rec_buf_varint(raw, tasks.n);
	rec_buf_put(raw, tasks.defs.p, tasks.defs.len);
	rec_buf_put(raw, locks.p, locks.len);
	rec_buf_put(raw, edges.p, edges.len);
	rec_buf_put(raw, ops.p, ops.len);
	if ((err = enc_stacks(w, raw, delta, row_edge)))
		goto out;
	rec_buf_put(raw, stalls.p, stalls.len);
	rec_buf_varint(raw, w->inode_ids.n - first_new);
	rec_buf_put(raw, e.gens.p, e.gens.len);
	rec_buf_varint(raw, tasks.ntitles);
	rec_buf_put(raw, tasks.titles.p, tasks.titles.len);
	buf_u8(raw, w->tables_end ? REC_IVF_TABLES_END : 0);
	w->tables_end = false;
	if (raw->oom || e.defs.oom || e.gens.oom || mounts.oom || tasks.defs.oom ||
	    tasks.titles.oom || locks.oom || edges.oom || ops.oom || stalls.oom)
		err = -ENOMEM;
out:
	rec_buf_free(&e.defs);
	rec_buf_free(&e.gens);
	rec_buf_free(&mounts);
	rec_buf_free(&tasks.defs);
	rec_buf_free(&tasks.titles);
	rec_buf_free(&locks);
	rec_buf_free(&edges);
	rec_buf_free(&ops);
	rec_buf_free(&stalls);
	free(extra);
	free(row_edge);
	return err;
}

/* ---------------------------------------------------------------- file I/O */

static int write_header(int fd)
{
	uint8_t hdr[REC_HDR_LEN];
	struct rec_buf b = { .p = hdr, .len = sizeof(hdr), .cap = sizeof(hdr) };
	int err;

	rec_header(hdr);
	err = rec_file_append(fd, &b);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int rec_file_create(const char *path, bool force)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0644);

	return fd < 0 ? -errno : write_header(fd);
}

int rec_file_create_beside(const char *path, char *tmp, size_t len, char *target,
			   size_t target_len)
{
	int fd = file_create_beside(path, tmp, len, target, target_len);

	if (fd < 0)
		return fd;
	fd = write_header(fd);
	if (fd < 0)
		unlink(tmp);
	return fd;
}

int rec_file_append(int fd, const struct rec_buf *framed)
{
	off_t start = lseek(fd, 0, SEEK_CUR);
	size_t done = 0;

	while (done < framed->len) {
		ssize_t n = write(fd, framed->p + done, framed->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? -errno : -ENOSPC;

			/* leave no partial block behind: the file stays clean to here */
			if (start >= 0 && !ftruncate(fd, start))
				lseek(fd, start, SEEK_SET);
			return err;
		}
		done += (size_t)n;
	}
	return 0;
}

int rec_file_read(const char *path, uint8_t **buf, size_t *len)
{
	/*
	 * "-": standard input, a pipe (`zstdcat r.ilrec.zst | ilock report -`).
	 * O_NONBLOCK: opening a named FIFO must not wait for a writer.
	 */
	bool std_in = !strcmp(path, "-");
	int fd = std_in ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3)
			: open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	size_t cap, n = 0, most = SIZE_MAX;
	struct stat st;
	uint8_t *p;
	int err = 0;

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto out;
	}
	if (std_in && !S_ISREG(st.st_mode)) {
		/*
		 * A stream: read to its end, blocking, up to a bound; a terminal is
		 * no recording. Only as standard input: a named FIFO would wait
		 * for a writer that may never come, so it is refused below.
		 */
		int fl = fcntl(fd, F_GETFL);

		if (isatty(fd)) {
			err = -ENOTTY;
			goto out;
		}
		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
			err = -errno;
			goto out;
		}
		most = REC_STREAM_MAX;
		st.st_size = 0;
	} else if (!S_ISREG(st.st_mode)) {
		/* a device could stream forever: recordings are files, or standard input */
		err = -EINVAL;
		goto out;
	}
	/* a recording still being written may grow while we read */
	cap = (size_t)st.st_size + 4096;
	p = malloc(cap);
	if (!p) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (n >= most) {
			free(p);
			err = -EFBIG;
			goto out;
		}
		if (n == cap) {
			uint8_t *q = realloc(p, cap * 2);

			if (!q) {
				free(p);
				err = -ENOMEM;
				goto out;
			}
			p = q;
			cap *= 2;
		}
		r = read(fd, p + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			free(p);
			goto out;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	*buf = p;
	*len = n;
out:
	close(fd);
	return err;
}

const char *rec_file_strerror(int err)
{
	if (err == -EINVAL)
		return "not a regular file (a pipe goes in as standard input: ... | ilock report -)";
	if (err == -ENOTTY)
		return "standard input is a terminal, not a recording (pipe one in: ... | ilock report -)";
	if (err == -EFBIG)
		return "a stream of over 4 GiB: not a recording (save it to a file)";
	return strerror(-err);
}

int rec_file_load(const char *path, struct recording *r)
{
	uint8_t *buf;
	size_t len;
	int err = rec_file_read(path, &buf, &len);

	if (err)
		return err;
	rec_decode(r, buf, len);
	free(buf);
	return 0;
}
