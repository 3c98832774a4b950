/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Fixed-size keys to ids: the recorder's "written once" tables, and the
 * lookups that keep an entry per thread or inode beside a dense array.
 * Pure; keys are compared as bytes, so pad them with zeros.
 */
#ifndef ILOCK_IDMAP_H
#define ILOCK_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap {
	uint8_t *keys;           /* cap * ksz */
	uint32_t *vals;          /* id + 1; 0 is empty */
	size_t cap, n, ksz;
};

void idmap_init(struct idmap *m, size_t ksz);
void idmap_free(struct idmap *m);
/* 1 and *id when key is known, 0 when not. */
int idmap_get(const struct idmap *m, const void *key, uint32_t *id);
/* Give key the id (a key given twice has two entries: get first). 0 or -ENOMEM. */
int idmap_put(struct idmap *m, const void *key, uint32_t id);

#endif
