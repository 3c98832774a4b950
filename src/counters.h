/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Names and meanings of the BPF counters (enum ilock_counter). */
#ifndef ILOCK_COUNTERS_H
#define ILOCK_COUNTERS_H

#include <stdbool.h>

#include "ilock.h"

/* Stable machine name, used as the JSON key. */
const char *counter_name(int c);
/* One line for people. */
const char *counter_help(int c);
static inline int counter_is_loss(int c)
{
	return c >= ILOCK_FIRST_LOST && c < ILOCK_COUNTER_MAX;
}
/*
 * A loss that leaves waits, pairs or holds out of the counts while tracing
 * (a full map, a wait whose end never came), as against one that loses a
 * detail (a path, a stack, an op) or a wait that began before tracing
 * (end_without_begin, which comes at start).
 */
bool counter_undercounts(int c);
/*
 * ... of those, the ones that leave whole waits out of every wait total:
 * seen, but never added to a lock's row (the IN SHORT caveat).
 */
bool counter_drops_waits(int c);

#endif
