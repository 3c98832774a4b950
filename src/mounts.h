/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The mount table: device to mount point, for full paths and filters. */
#ifndef ILOCK_MOUNTS_H
#define ILOCK_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mount_entry {
	uint32_t kdev;       /* kernel encoding */
	char *root;          /* the fs directory mounted here ("/" usually) */
	char *mnt;           /* where */
	char *fstype;
	char *source;
};

struct mount_table {
	struct mount_entry *e;
	size_t n;
};

/* Parse /proc/PID/mountinfo text. Lines that do not parse are skipped. */
int mounts_parse(struct mount_table *t, const char *text);
int mounts_load(struct mount_table *t);
void mounts_free(struct mount_table *t);
/* The filesystem type kdev is mounted as ("" when it is not), from this process's mounts. */
void mounts_fstype(uint32_t kdev, char *out, size_t len);
/* The mount of kdev that shows the most of it (root "/" first). */
const struct mount_entry *mounts_find_dev(const struct mount_table *t, uint32_t kdev);
/*
 * The full path of fsrel (a path from the filesystem root) through the best
 * mount of kdev. False when the device is not mounted or the file is
 * outside every mount's root.
 */
bool mounts_full_path(const struct mount_table *t, uint32_t kdev, const char *fsrel,
		      char *out, size_t len);

#endif
