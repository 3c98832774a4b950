/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Small formatting and parsing helpers, pure. */
#ifndef ILOCK_UTIL_H
#define ILOCK_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* "812 ms", "16.2 ms", "3.40 s", "950 ns": 3 significant digits. */
char *fmt_ns(char *buf, size_t len, uint64_t ns);
/* "512 B", "7.1 MiB", "20 KiB", "1.9 GiB": binary units, 2 significant digits. */
char *fmt_bytes(char *buf, size_t len, uint64_t bytes);
/*
 * A byte offset or length, exact: "64 MiB" when a whole number of a unit,
 * else every byte ("4,095 B", "67,104,768 B"), so that two ranges that
 * meet or miss by a byte do not read alike.
 */
char *fmt_offset(char *buf, size_t len, uint64_t bytes);
/*
 * n shares (each 0..1, together 1, or 0 when all are) as whole percents
 * that add up to 100: each rounded down, the points left given to the
 * largest remainders, so that 59.4/20.3/20.3 reads 60/20/20, not 59/20/20
 * nor, rounded each, 59/21/21 = 101.
 */
void shares_to_percents(const double *share, int *pct, int n);
/* "2,113" */
char *fmt_count(char *buf, size_t len, uint64_t n);
/* A share (0..1) as "97%"; "-" when negative (nothing to share: range_headroom's -1). */
char *fmt_share(char *buf, size_t len, double share);
/* "MAJ:MIN" from the kernel's dev encoding. */
char *fmt_kdev(char *buf, size_t len, uint32_t kdev);
/* Parse "MAJ:MIN" into the kernel encoding; false on bad input. */
bool parse_kdev(const char *s, uint32_t *kdev);
/* Parse a non-negative decimal (or 0x hex) integer that fits in max. */
bool parse_u64(const char *s, uint64_t max, uint64_t *out);
/*
 * A thread's command as a role (tables "by command", diff's roles, the
 * exporter's labels): kernel thread pools whose names carry an id that
 * changes from run to run are one role each, "iou-wrk-1234" (io_uring's
 * workers, named after the thread they serve) "iou-wrk", "iou-sqp-1234"
 * "iou-sqp", "kworker/u8:7" "kworker". Other names are kept. comm may
 * fill its ILOCK_COMM_LEN bytes without a NUL; out (as long, may be comm)
 * is NUL-padded, so that keys holding it compare whole.
 */
void comm_role(char *out, const char *comm);
/*
 * The plain decimal at the start of s ("12", "1.5", ".5"; no sign,
 * exponent or hex) into *v; its length, 0 when there is none.
 */
size_t parse_decimal(const char *s, double *v);
/* Parse seconds, a plain decimal ("0.5"), > 0 and <= max. */
bool parse_seconds(const char *s, double max, double *out);
/*
 * Room for element n of *arr (esz bytes each, *cap of them): doubled (64
 * at first) when full. False on no memory, *arr and *cap then unchanged.
 */
bool grow_array(void **arr, size_t *cap, size_t n, size_t esz);
/* Copy with truncation, always NUL-terminated; comm fields may lack a NUL. */
void str_copy(char *dst, size_t dstlen, const char *src, size_t srclen);
uint64_t now_monotonic_ns(void);
uint64_t now_realtime_ns(void);
/* The calling thread's CPU time, user and system. */
uint64_t now_thread_cpu_ns(void);

/*
 * A double as a u64, saturating: a rate or a mean computed from a damaged
 * recording can exceed 2^64 (or be NaN), where a cast is undefined.
 */
static inline uint64_t u64_of(double v)
{
	if (!(v > 0))
		return 0;
	return v >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)v;
}

/*
 * Bytes that would drive a terminal, C0 controls and DEL, as '?': a file
 * name or a command name (prctl) can hold an escape sequence, and ilock
 * prints them as root to an admin's terminal. keep_lines keeps newline
 * and tab (ilock's own layout, in an output stream); a label keeps none.
 */
void display_clean(char *s, size_t n, bool keep_lines);
/* A NUL-terminated label for people, cleaned in place. */
char *label_clean(char *s);

/* "s" unless one: "1 wait", "2 waits". */
static inline const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/*
 * A new file to replace the existing one at path, made beside it as tmp
 * (len bytes, "PATH.XXXXXX"; PATH a symlink's target, into target), mode
 * 0644 less the umask: rename(tmp, target) puts it in place, so until then
 * the old one stays. fd or -errno.
 */
int file_create_beside(const char *path, char *tmp, size_t len, char *target, size_t target_len);

#endif
