// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Fixed-size keys to ids (idmap.h): open addressing, at most half full. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"

static uint64_t hash_bytes(const void *k, size_t n)
{
	const uint8_t *p = k;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h ^ (h >> 29);
}

void idmap_init(struct idmap *m, size_t ksz)
{
	memset(m, 0, sizeof(*m));
	m->ksz = ksz;
}

void idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	idmap_init(m, m->ksz);
}

int idmap_get(const struct idmap *m, const void *key, uint32_t *id)
{
	size_t h;

	if (!m->cap)
		return 0;
	h = hash_bytes(key, m->ksz) & (m->cap - 1);
	while (m->vals[h]) {
		if (!memcmp(m->keys + h * m->ksz, key, m->ksz)) {
			*id = m->vals[h] - 1;
			return 1;
		}
		h = (h + 1) & (m->cap - 1);
	}
	return 0;
}

int idmap_put(struct idmap *m, const void *key, uint32_t id)
{
	size_t h;

	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		struct idmap nm = { .ksz = m->ksz, .cap = ncap };

		nm.keys = calloc(ncap, m->ksz);
		nm.vals = calloc(ncap, sizeof(*nm.vals));
		if (!nm.keys || !nm.vals) {
			free(nm.keys);
			free(nm.vals);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->vals[i])
				idmap_put(&nm, m->keys + i * m->ksz, m->vals[i] - 1);
		free(m->keys);
		free(m->vals);
		*m = nm;
	}
	h = hash_bytes(key, m->ksz) & (m->cap - 1);
	while (m->vals[h])
		h = (h + 1) & (m->cap - 1);
	memcpy(m->keys + h * m->ksz, key, m->ksz);
	m->vals[h] = id + 1;
	m->n++;
	return 0;
}
