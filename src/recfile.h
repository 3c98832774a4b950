/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recording file format of `ilock record` (docs/file-format.md):
 * a 16-byte header, then append-only blocks, each with a type, a length,
 * a CRC32 and a zlib-compressed payload.
 *
 * Encoding and decoding work on memory buffers and are pure, so the unit
 * tests and the fuzz target drive them directly. The only I/O lives in the
 * rec_file_* wrappers at the end.
 */
#ifndef ILOCK_RECFILE_H
#define ILOCK_RECFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "ilock.h"
#include "ksyms.h"
#include "model.h"
#include "mounts.h"
#include "titles.h"

#define REC_MAGIC "\x89ILOCKR\n"
#define REC_MAGIC_LEN 8
#define REC_MAJOR 1
#define REC_MINOR 8
#define REC_HDR_LEN 16
#define REC_BLOCK_HDR_LEN 16
/* Reader limits: a damaged or hostile length must not make us allocate. */
#define REC_MAX_BLOCK (16U << 20)   /* stored (compressed) payload */
#define REC_MAX_RAW (64U << 20)     /* decompressed payload */
#define REC_CODEC_ZLIB 1
/*
 * Decoded records may take at most this much memory: 64 MiB plus 1000
 * bytes per byte of file. Real recordings use under 50 bytes per byte.
 */
#define REC_MIN_BUDGET (64ULL << 20)
#define REC_BUDGET_PER_BYTE 1000ULL

enum rec_block_type {
	REC_BLK_META = 1,      /* key/value metadata; always the first block */
	REC_BLK_INTERVAL = 2,  /* one interval's deltas, new inodes/tasks/mounts */
	REC_BLK_END = 3,       /* written on a clean stop */
};

/* What decoding a file found. Each has its own one-line message. */
enum rec_status {
	REC_OK = 0,
	/* fatal: nothing to report */
	REC_EMPTY,
	REC_NOT_RECORDING,
	REC_BAD_MAGIC,
	REC_SHORT_HEADER,
	REC_NEWER_MAJOR,
	REC_BAD_VERSION,
	REC_HEADER_CRC,
	REC_NO_META,
	REC_NOMEM,
	/* damage after the metadata: what came before is kept */
	REC_TRUNCATED,
	REC_BAD_CRC,
	REC_TOO_BIG,
	REC_BOMB,
	REC_MALFORMED,
	REC_STATUS_MAX,
};

/* Stable short name of a status, for tests and JSON. */
const char *rec_status_name(enum rec_status st);
/* True when the status leaves the blocks before the damage usable. */
static inline bool rec_status_partial(enum rec_status st)
{
	return st >= REC_TRUNCATED;
}

/* A growable byte buffer; oom latches so callers check once at the end. */
struct rec_buf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

void rec_buf_free(struct rec_buf *b);
void rec_buf_put(struct rec_buf *b, const void *p, size_t n);
void rec_buf_varint(struct rec_buf *b, uint64_t v);
void rec_buf_str(struct rec_buf *b, const char *s);

/* ---- framing ---- */

/* The 16-byte file header for this version. */
void rec_header(uint8_t out[REC_HDR_LEN]);
/* Compress raw and append one framed block to out. 0 or -errno. */
int rec_frame_block(struct rec_buf *out, uint8_t type, const void *raw, size_t rawlen);

/* ---- decoded recording ---- */

struct rec_inode {
	uint32_t dev;
	uint64_t ino;
	uint32_t gen;          /* i_generation (1.5); 0 in older files */
	bool has_meta;
	uint32_t magic;        /* meta's magic, else the recorded mount's fs, else 0 */
	struct inode_meta meta;
};

struct rec_task {
	uint32_t pid, tgid;
	char comm[ILOCK_COMM_LEN];
	char *title;           /* (1.7) its process title when first seen; NULL: none */
};

struct rec_lock {
	uint32_t inode;        /* index into inodes */
	uint8_t class;
	bool has_hold;
	struct ilock_stats wait[2], hold[2];
};

struct rec_edge {
	uint32_t inode;
	uint8_t class, holder_mode, waiter_mode;
	/* what each side did and how their ranges met (1.1; 0 = unknown before) */
	uint8_t holder_op, holder_op_flags, waiter_op, waiter_op_flags, range;
	uint32_t holder, waiter;  /* indexes into tasks */
	struct ilock_edge_stats s;
};

/*
 * Kernel stacks (1.2): frames are recorded as symbol names, resolved at
 * record time, since addresses mean nothing after a reboot (KASLR). The
 * reader gives frame i the address REC_FRAME_ADDR(i) and a symbol table
 * (recording.syms) naming it, so the live renderers show them unchanged.
 */
#define REC_FRAME_ADDR(i) (0xffff800000000000ULL + ((uint64_t)(i) << 4))
#define REC_FRAME_NAME_MAX 255

struct rec_stack {
	uint8_t kind;          /* enum ilock_stack_kind */
	uint8_t nr;            /* frames, innermost first */
	uint32_t frame0;       /* index into frame_ids */
};

/* Wait time behind one edge record on one stack. */
struct rec_stack_row {
	uint32_t edge;         /* index into recording.edges */
	uint32_t stack;        /* index into stacks */
	uint64_t count, total_ns;
};

/*
 * A wait still in progress when an interval was read, 100 ms or more
 * (1.3; waiting.h): a stall, recorded while it lasted. The same wait shows
 * again in each later interval it lasts into, older each time.
 */
struct rec_stall {
	uint64_t start_ns;     /* when it began, from the recording's start */
	uint64_t waited_ns;    /* so far, at the interval's read */
	uint32_t inode;        /* index into inodes */
	/*
	 * holder_mode of an fsync's journal wait (JBD2_WAIT), which has no
	 * holder: EXCL, a journal commit ran at the read; SHARED, none ran;
	 * UNKNOWN, not known (no journal seen, or an older recording).
	 */
	uint8_t class, waiter_mode, holder_mode, owner_mode;
	uint8_t waiter_op, holder_op;
	uint8_t range;         /* enum ilock_range of the two ops' byte ranges */
	char owner_state;      /* the owner's state letter (waiting_state_char); 0: none */
	uint32_t waiter, holder, owner;  /* indexes into tasks; pid 0: nobody */
};

struct rec_interval {
	uint64_t seq;
	uint64_t t_start_ns;   /* from the recording's start (monotonic) */
	uint64_t dur_ns;
	uint64_t counters[ILOCK_COUNTER_MAX];
	uint64_t in_flight;
	size_t lock0, nlocks;  /* slice of recording.locks */
	size_t edge0, nedges;
	size_t srow0, nsrows;  /* slice of recording.srows */
	size_t stall0, nstalls; /* slice of recording.stalls (1.3) */
	bool stalls_read;      /* the read looked for stalls (1.3, and the walk worked) */
	bool tables_end;       /* its tables' last: the recorder moved to fresh ones (1.8) */
};

/* Interval flags (1.8), a byte at the end of an INTERVAL block. */
#define REC_IVF_TABLES_END 0x01

struct rec_kv {
	char *key, *val;
};

struct recording {
	uint16_t major, minor;
	struct rec_kv *meta;
	size_t nmeta;
	/* parsed from meta; 0 / "" when absent */
	uint64_t start_realtime_ns, interval_ns;
	struct mount_table mounts;   /* as recorded, for the devices seen */
	struct rec_inode *inodes;
	size_t ninodes, cap_inodes;
	struct rec_task *tasks;
	size_t ntasks, cap_tasks;
	struct rec_lock *locks;
	size_t nlocks, cap_locks;
	struct rec_edge *edges;
	size_t nedges, cap_edges;
	/* stacks (1.2): frame names, stacks as runs of frame ids, rows */
	char **frames;
	size_t nframes, cap_frames, frame_bytes;
	size_t title_bytes;    /* of the tasks' titles */
	uint32_t *frame_ids;
	size_t nframe_ids, cap_frame_ids;
	struct rec_stack *stacks;
	size_t nstacks, cap_stacks;
	struct rec_stack_row *srows;
	size_t nsrows, cap_srows;
	struct ksyms syms;        /* REC_FRAME_ADDR(i) -> frames[i]; built by rec_finish */
	/* (1.7) the tasks' process titles by pid, for the renderers: made by rec_finish */
	struct titles titles;
	struct rec_stall *stalls; /* 1.3 */
	size_t nstalls, cap_stalls;
	struct rec_interval *iv;
	size_t niv, cap_iv;
	/* file counter index -> ours, -1 when we do not know the name */
	int counter_map[64];
	int ncounters_file;
	bool has_end;
	char end_reason[64];
	/* what decoding found */
	enum rec_status status;
	char msg[256];            /* one line, no file name; "" when REC_OK */
	uint64_t file_size;
	uint64_t good_bytes;      /* bytes up to the last good block */
	uint64_t nblocks;
	uint64_t mem_budget;      /* bytes the decoded records may take */
};

/* How many intervals of r's [i0, i1) ended with a move to fresh tables (1.8). */
size_t rec_renewals(const struct recording *r, size_t i0, size_t i1);

void rec_init(struct recording *r);
void rec_free(struct recording *r);
/*
 * Decode a whole file held in memory. Returns r->status. On partial
 * damage the blocks before it stay in r (r->niv intervals).
 */
enum rec_status rec_decode(struct recording *r, const uint8_t *buf, size_t len);
/*
 * One block's payload (after decompression) into r; a payload that does
 * not decode leaves r as it was. 0, -EINVAL or -ENOMEM. rec_decode calls
 * it per block and rec_finish once at the end (derived fields).
 */
int rec_decode_payload(struct recording *r, uint8_t type, const uint8_t *raw, size_t len);
void rec_finish(struct recording *r);
/* Value of a metadata key, or NULL. */
const char *rec_meta(const struct recording *r, const char *key);

/* ---- writer ---- */

struct rec_writer {
	/* names stack frames; NULL writes them as addresses. Not owned. */
	struct ksyms *ksyms;
	/* process titles of the tasks as they are defined (1.7); NULL: none. Not owned. */
	const struct titles *titles;
	struct idmap frame_ids;  /* frame name (zero-padded) -> frame id */
	struct idmap frame_addrs; /* kernel address -> frame id */
	struct idmap stack_ids;  /* (kind, kernel stack id) -> stack id */
	struct idmap stack_defs; /* (kind, frame ids) -> stack id: one id per stack written */
	uint32_t nframes, nstacks;
	/* the next interval is its tables' last (--renew): flagged in it, then cleared */
	bool tables_end;
	struct idmap inode_ids;
	/*
	 * Per inode id, what was written of its meta: none, no path, a path
	 * (rank 0, 1, 2), and a checksum of its path and flags, so that a
	 * better or another one (a file renamed since) is written again.
	 */
	struct inode_written {
		uint8_t rank;
		uint32_t sum;
	} *inode_written;
	size_t cap_inode_written;
	struct idmap task_ids;
	struct idmap devs_done;  /* devices whose mounts were written */
	uint32_t *pending_devs;
	size_t npending, cap_pending;
	uint64_t seq;
	struct rec_buf raw;
};

void rec_writer_init(struct rec_writer *w);
void rec_writer_free(struct rec_writer *w);
/*
 * Kernel stack ids seen so far mean nothing from now on (a fresh stack
 * map, --renew): the next interval defines its stacks again, under new
 * file ids, frames and everything else written staying as they are.
 */
void rec_writer_forget_stacks(struct rec_writer *w);

/* META payload from key/value pairs. */
int rec_encode_meta(struct rec_buf *raw, const struct rec_kv *kv, size_t n);
/*
 * One interval's payload: delta holds the interval's data, inodes the
 * cumulative inode metadata (new or improved ones are written), mt the
 * current mount table (entries for newly seen devices are written).
 * delta's kernel stacks go in too, each new frame named once through
 * w->ksyms.
 */
int rec_encode_interval(struct rec_writer *w, struct rec_buf *raw, const struct snapshot *delta,
			const struct snapshot *inodes, const struct mount_table *mt,
			uint64_t t_start_ns, uint64_t dur_ns);
int rec_encode_end(struct rec_buf *raw, uint64_t nintervals, uint64_t end_realtime_ns,
		   const char *reason);

/* ---- file I/O ---- */

/* Create for writing (O_EXCL unless force); writes the header. fd or -errno. */
int rec_file_create(const char *path, bool force);
/* file_create_beside() (util.h) for a recording: fd with the header written, or -errno. */
int rec_file_create_beside(const char *path, char *tmp, size_t len, char *target,
			   size_t target_len);
/*
 * Append one framed block with one write() so a kill leaves whole blocks;
 * on a short write (disk full) cut the file back to its last good block.
 */
int rec_file_append(int fd, const struct rec_buf *framed);
/* Read a whole file. 0 or -errno. */
#define REC_STREAM_MAX (4ULL << 30)  /* most bytes read from a pipe */
/*
 * The whole of a recording: a regular file, or "-", standard input read
 * to its end (a pipe), at most REC_STREAM_MAX bytes. -errno: -EINVAL for
 * anything else (a device, a named FIFO), -ENOTTY for a terminal on
 * standard input, -EFBIG.
 */
int rec_file_read(const char *path, uint8_t **buf, size_t *len);
/* The reason for a rec_file_read/rec_file_load error, for people. */
const char *rec_file_strerror(int err);
/* rec_file_read + rec_decode: -errno when the file cannot be read, else 0 and r->status. */
int rec_file_load(const char *path, struct recording *r);

#endif
