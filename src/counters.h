/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Names and meanings of the BPF counters (enum ilock_counter). */
#ifndef ILOCK_COUNTERS_H
#define ILOCK_COUNTERS_H

#include "ilock.h"

/* Stable machine name, used as the JSON key. */
const char *counter_name(int c);
/* One line for people. */
const char *counter_help(int c);
static inline int counter_is_loss(int c)
{
	return c >= ILOCK_FIRST_LOST && c < ILOCK_COUNTER_MAX;
}

#endif
