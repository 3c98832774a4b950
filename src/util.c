// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ilock.h"
#include "util.h"

char *fmt_ns(char *buf, size_t len, uint64_t ns)
{
	static const struct { uint64_t div; const char *unit; } units[] = {
		{ 1000000000ULL, "s" }, { 1000000ULL, "ms" }, { 1000ULL, "us" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		double v;

		if (ns < units[i].div)
			continue;
		v = (double)ns / (double)units[i].div;
		if (v >= 100.0)
			snprintf(buf, len, "%.0f %s", v, units[i].unit);
		else if (v >= 10.0)
			snprintf(buf, len, "%.1f %s", v, units[i].unit);
		else
			snprintf(buf, len, "%.2f %s", v, units[i].unit);
		return buf;
	}
	snprintf(buf, len, "%" PRIu64 " ns", ns);
	return buf;
}

char *fmt_share(char *buf, size_t len, double share)
{
	if (share < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.0f%%", share * 100.0);
	return buf;
}

char *fmt_count(char *buf, size_t len, uint64_t n)
{
	char tmp[32];
	int digits = snprintf(tmp, sizeof(tmp), "%" PRIu64, n);
	size_t o = 0;

	for (int i = 0; i < digits && o + 1 < len; i++) {
		if (i && (digits - i) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	if (len)
		buf[o < len ? o : len - 1] = 0;
	return buf;
}

char *fmt_kdev(char *buf, size_t len, uint32_t kdev)
{
	snprintf(buf, len, "%u:%u", ILOCK_KDEV_MAJOR(kdev), ILOCK_KDEV_MINOR(kdev));
	return buf;
}

bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

bool parse_kdev(const char *s, uint32_t *kdev)
{
	const char *colon = s ? strchr(s, ':') : NULL;
	char major[16];
	uint64_t maj, min;

	if (!colon || (size_t)(colon - s) >= sizeof(major) || colon == s)
		return false;
	memcpy(major, s, colon - s);
	major[colon - s] = 0;
	if (!parse_u64(major, 4095, &maj) || !parse_u64(colon + 1, (1U << ILOCK_KDEV_MINORBITS) - 1, &min))
		return false;
	*kdev = ILOCK_KDEV(maj, min);
	return true;
}

size_t parse_decimal(const char *s, double *v)
{
	char num[64];
	size_t n = 0, digits = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++, digits++;
	if (s[n] == '.')
		for (n++; s[n] >= '0' && s[n] <= '9'; n++)
			digits++;
	/* strtod on a copy of just those: it would take 0x10, 1e1, inf */
	if (!digits || n >= sizeof(num))
		return 0;
	memcpy(num, s, n);
	num[n] = 0;
	*v = strtod(num, NULL);
	return n;
}

bool parse_seconds(const char *s, double max, double *out)
{
	size_t n = s ? parse_decimal(s, out) : 0;

	return n && !s[n] && *out > 0.0 && *out <= max;
}

bool grow_array(void **arr, size_t *cap, size_t n, size_t esz)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 64;
	p = realloc(*arr, ncap * esz);
	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

void str_copy(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	size_t n = 0;

	if (!dstlen)
		return;
	while (n < srclen && n + 1 < dstlen && src[n])
		n++;
	memcpy(dst, src, n);
	dst[n] = 0;
}

void display_clean(char *s, size_t n, bool keep_lines)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 || c == 0x7f) && !(keep_lines && (c == '\n' || c == '\t')))
			s[i] = '?';
	}
}

char *label_clean(char *s)
{
	display_clean(s, strlen(s), false);
	return s;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t now_monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t now_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

uint64_t now_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

char *fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (!u)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, v < 10 ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

void shares_to_percents(const double *share, int *pct, int n)
{
	double sum = 0;
	int left = 100;

	for (int i = 0; i < n; i++) {
		double p = share[i] > 0 ? share[i] * 100 : 0;

		pct[i] = p < 100 ? (int)p : 100;
		sum += p;
		left -= pct[i];
	}
	if (sum < 0.5)
		return;  /* nothing to share out */
	while (left-- > 0) {
		int best = -1;
		double rem = -1;

		for (int i = 0; i < n; i++) {
			double r = (share[i] > 0 ? share[i] * 100 : 0) - pct[i];

			if (r > rem) {
				rem = r;
				best = i;
			}
		}
		if (best < 0 || rem <= 0)
			break;
		pct[best]++;
	}
}

char *fmt_offset(char *buf, size_t len, uint64_t bytes)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	char n[32];
	int u = -1;

	while (u < 3 && bytes && !(bytes & ((1ULL << (10 * (u + 2))) - 1)))
		u++;
	if (u >= 0)
		snprintf(buf, len, "%s %s", fmt_count(n, sizeof(n), bytes >> (10 * (u + 1))), unit[u]);
	else
		snprintf(buf, len, "%s B", fmt_count(n, sizeof(n), bytes));
	return buf;
}

int file_create_beside(const char *path, char *tmp, size_t len, char *target, size_t target_len)
{
	char *real = realpath(path, NULL);
	mode_t mask;
	int fd;

	if (!real)
		return -errno;
	if ((size_t)snprintf(target, target_len, "%s", real) >= target_len ||
	    (size_t)snprintf(tmp, len, "%s.XXXXXX", real) >= len) {
		free(real);
		return -ENAMETOOLONG;
	}
	free(real);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* as open(..., 0644) would have made it: mkostemp gives 0600 */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0644 & ~mask)) {
		int err = -errno;

		close(fd);
		unlink(tmp);
		return err;
	}
	return fd;
}

/* prefix followed by nothing but digits, at least one, to the end of comm's n bytes */
static bool pool_name(const char *comm, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	if (n <= k || strncmp(comm, prefix, k))
		return false;
	for (size_t i = k; i < n; i++)
		if (comm[i] < '0' || comm[i] > '9')
			return false;
	return true;
}

void comm_role(char *out, const char *comm)
{
	size_t n = strnlen(comm, ILOCK_COMM_LEN - 1);

	if (pool_name(comm, n, "iou-wrk-"))
		n = strlen("iou-wrk");
	else if (pool_name(comm, n, "iou-sqp-"))
		n = strlen("iou-sqp");
	else if (n >= 8 && !strncmp(comm, "kworker/", 8))
		n = strlen("kworker");
	/* NUL-padded: keys holding it are compared whole (memcmp) */
	memmove(out, comm, n);
	memset(out + n, 0, ILOCK_COMM_LEN - n);
}
