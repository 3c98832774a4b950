// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Reading wait and pair slots from (here: plain) memory. */
#include <stdlib.h>

#include "ilock.h"
#include "slots.h"
#include "unit.h"

struct seen {
	int n;
	uint64_t ino[8];
	uint64_t count[8];
	int stop_at;  /* return -1 on this call (1-based); 0: never */
};

static int take(void *ctx, const void *key, const void *stats)
{
	struct seen *s = ctx;
	const struct ilock_key *k = key;
	const struct ilock_stats *st = stats;

	if (s->n < 8) {
		s->ino[s->n] = k->ino;
		s->count[s->n] = st->count;
	}
	s->n++;
	return s->stop_at && s->n == s->stop_at ? -7 : 0;
}

static struct slot_region region(struct ilock_wait_slot *w, uint32_t max)
{
	return (struct slot_region){ .base = w, .stride = sizeof(*w),
				     .key_size = sizeof(struct ilock_key), .max = max };
}

static void test_skips_empty_and_keeps_order(void)
{
	struct ilock_wait_slot w[6];
	struct slot_region r = region(w, 6);
	struct seen s = { 0 };

	memset(w, 0, sizeof(w));
	for (int i = 0; i < 6; i++)
		w[i].k.ino = 100 + i;
	w[0].s.count = 3;
	/* slot 1: claimed, key written, never counted (a lost insert race) */
	w[2].s.count = 1;
	w[3].s.count = 9;
	w[5].s.count = 4;  /* beyond "used": not yet handed out as far as we know */
	CHECK_EQ_U(slots_scan(&r, 4, take, &s), 0);
	CHECK_EQ_U(s.n, 3);
	CHECK_EQ_U(s.ino[0], 100);
	CHECK_EQ_U(s.ino[1], 102);
	CHECK_EQ_U(s.ino[2], 103);
	CHECK_EQ_U(s.count[2], 9);
}

static void test_used_past_max_is_clamped(void)
{
	struct ilock_wait_slot w[3];
	struct slot_region r = region(w, 3);
	struct seen s = { 0 };

	memset(w, 0, sizeof(w));
	for (int i = 0; i < 3; i++)
		w[i].s.count = 1;
	/* claims that found the array full still moved the counter */
	CHECK_EQ_U(slots_scan(&r, 5, take, &s), 0);
	CHECK_EQ_U(s.n, 3);
}

static void test_stop_and_unmapped(void)
{
	struct ilock_wait_slot w[4];
	struct slot_region r = region(w, 4), none = { 0 };
	struct seen s = { .stop_at = 2 };

	memset(w, 0, sizeof(w));
	for (int i = 0; i < 4; i++)
		w[i].s.count = 1;
	CHECK(slots_scan(&r, 4, take, &s) == -7);
	CHECK_EQ_U(s.n, 2);
	s = (struct seen){ 0 };
	CHECK_EQ_U(slots_scan(&none, 4, take, &s), 0);
	CHECK_EQ_U(s.n, 0);
}

static void test_edge_slots(void)
{
	struct ilock_edge_slot e[2];
	struct slot_region r = { .base = e, .stride = sizeof(e[0]),
				 .key_size = sizeof(struct ilock_edge_key), .max = 2 };
	struct seen s = { 0 };

	memset(e, 0, sizeof(e));
	e[1].k.ino = 77;
	e[1].s.count = 5;
	CHECK_EQ_U(slots_scan(&r, 2, take, &s), 0);
	CHECK_EQ_U(s.n, 1);
	CHECK_EQ_U(s.ino[0], 77);  /* the edge key starts with ino too */
	CHECK_EQ_U(s.count[0], 5);
	/* the BPF side's array stride: value sizes are multiples of 8 */
	CHECK_EQ_U(sizeof(struct ilock_wait_slot) % 8, 0);
	CHECK_EQ_U(sizeof(struct ilock_edge_slot) % 8, 0);
}

int main(void)
{
	test_skips_empty_and_keeps_order();
	test_used_past_max_is_clamped();
	test_stop_and_unmapped();
	test_edge_slots();
	UNIT_DONE();
}
