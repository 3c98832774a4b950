/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Paths looked at again. The BPF side walks an inode's path once, at its
 * first wait. A file renamed since keeps the old name there: PostgreSQL
 * recycles WAL segments by renaming them, and "write a temporary file,
 * rename it over the old" saves do the same. A file deleted or moved away
 * since leaves a path that names another file or none. So userspace looks
 * at the paths of the inodes it shows, now and then: the same inode still
 * there; renamed within its directory (found by inode number in that
 * directory, and then shown by its name now); or gone from there. A file
 * is the same when its device, inode number and generation are (the
 * generation from FS_IOC_GETVERSION: a freed number is soon another
 * file's).
 */
#ifndef ILOCK_PATHCHECK_H
#define ILOCK_PATHCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "model.h"
#include "mounts.h"

/* What a look found goes in inode_meta flags: INODE_META_RENAMED, INODE_META_GONE (model.h). */
#define PATHCHECK_MAX_PER_READ 256  /* inodes looked at per read, at most */
#define PATHCHECK_DIR_MAX 100000    /* directory entries read per look, at most */
#define PATHCHECK_EVERY_NS 1000000000ULL  /* one inode looked at again after 1 s */
/* ... but a gone one after 30 s: each look reads its directory */
#define PATHCHECK_GONE_NS 30000000000ULL

struct path_fix {
	uint64_t ino;
	uint32_t dev, gen;
	uint16_t flags;             /* 0 (the same), INODE_META_RENAMED or _GONE */
	uint64_t checked_ns;        /* when it was last looked at */
	char walked[ILOCK_PATH_MAX];  /* the walker's path it was looked at for */
	char path[ILOCK_PATH_MAX];    /* RENAMED: the name now, from the fs root */
};

struct path_fixes {
	struct path_fix *e;         /* one per inode looked at */
	size_t n, cap;
	struct idmap ids;           /* (ino, dev, gen) -> index into e */
	uint64_t every_ns;          /* look at one inode again after this long */
	uint64_t looks;             /* paths looked at, in all */
};

void path_fixes_init(struct path_fixes *pf, uint64_t every_ns);
void path_fixes_free(struct path_fixes *pf);

/*
 * Where inode m (dev, ino, its walked path) is now, under mount table mt:
 * 0 (the same), INODE_META_RENAMED with its path from the fs root in
 * path, or INODE_META_GONE. -1: not looked at (no path, not mounted).
 */
int path_look(const struct mount_table *mt, const struct inode_meta *m, char *path, size_t len);

/*
 * Look again at the paths of s's lock rows with waits, in s's order, at
 * most max of them and PATHCHECK_MAX_PER_READ, each no more than once per
 * every_ns (now_ns: CLOCK_MONOTONIC); then give every inode of s that has
 * been looked at what was found: a renamed one its name now and
 * INODE_META_RENAMED, a gone one INODE_META_GONE.
 */
void path_fixes_apply(struct path_fixes *pf, struct snapshot *s, const struct mount_table *mt,
		      size_t max, uint64_t now_ns);
/* Only the second half: every inode of s given what was found of it. */
void path_fixes_fix(const struct path_fixes *pf, struct snapshot *s);
/* The same for one inode: looked at (if due), then its meta in s fixed. */
void path_fixes_apply_one(struct path_fixes *pf, struct snapshot *s,
			  const struct mount_table *mt, uint32_t dev, uint64_t ino, uint32_t gen,
			  uint64_t now_ns);

#endif
