/* SPDX-License-Identifier: GPL-2.0-only */
/* Turning a lock address into an inode, and an inode into a path. */
#ifndef ILOCK_INODE_BPF_H
#define ILOCK_INODE_BPF_H

#include "ilock.bpf.h"

static __always_inline void *read_ptr(const void *addr)
{
	void *v = NULL;

	bpf_probe_read_kernel(&v, sizeof(v), addr);
	return v;
}

#define ILOCK_S_IFMT 0170000U
#define ILOCK_S_IFDIR 0040000U

/* Is this inode a directory? Its i_rwsem then guards names, not bytes. */
static __always_inline bool inode_is_dir(u64 inode, bool fast)
{
	u16 mode = fast ? kcast((void *)inode, struct inode)->i_mode
			: BPF_CORE_READ((struct inode *)inode, i_mode);

	return (mode & ILOCK_S_IFMT) == ILOCK_S_IFDIR;
}

/*
 * A regular inode's i_mapping points at its own embedded i_data. Random
 * memory essentially never points at itself plus that offset, so this
 * proves `inode` really is an inode without trusting the lock's type.
 */
static __always_inline void *inode_mapping(struct inode *inode, bool fast)
{
	if (fast)
		return kcast(inode, struct inode)->i_mapping;
	return read_ptr((void *)inode + bpf_core_field_offset(struct inode, i_mapping));
}

static __always_inline bool is_inode(struct inode *inode, bool fast)
{
	void *mapping = inode_mapping(inode, fast);

	return mapping && mapping == (void *)inode + bpf_core_field_offset(struct inode, i_data);
}

/*
 * Classify a contended rw_semaphore as one of the inode locks, or reject it
 * (mmap_lock, namespace sems, ...). Each test is a self-pointer check.
 */
static __always_inline struct inode *classify_lock(void *lock, u8 *class, bool fast)
{
	struct inode *inode;

	inode = lock - bpf_core_field_offset(struct inode, i_rwsem);
	if (is_inode(inode, fast)) {
		*class = ILOCK_CLASS_I_RWSEM;
		return inode;
	}

	if (bpf_core_field_exists(struct address_space, invalidate_lock)) {
		void *mapping = lock - bpf_core_field_offset(struct address_space, invalidate_lock);
		struct inode *host = fast ? kcast(mapping, struct address_space)->host :
				     read_ptr(mapping + bpf_core_field_offset(struct address_space, host));

		if (host && inode_mapping(host, fast) == mapping) {
			*class = ILOCK_CLASS_INVALIDATE;
			return host;
		}
	}

	/* before 5.15 the XFS MMAPLOCK was the xfs_inode's own i_mmaplock */
	if (bpf_core_field_exists(struct xfs_inode___pre515, i_mmaplock)) {
		void *xip = lock - bpf_core_field_offset(struct xfs_inode___pre515, i_mmaplock);

		inode = xip + bpf_core_field_offset(struct xfs_inode___pre515, i_vnode);
		if (is_inode(inode, fast)) {
			*class = ILOCK_CLASS_INVALIDATE;
			return inode;
		}
	}

	if (bpf_core_type_exists(struct xfs_inode)) {
		void *xip = lock - bpf_core_field_offset(struct xfs_inode, i_lock);

		inode = xip + bpf_core_field_offset(struct xfs_inode, i_vnode);
		if (is_inode(inode, fast)) {
			*class = ILOCK_CLASS_XFS_ILOCK;
			return inode;
		}
	}
	return NULL;
}

/*
 * Walk the first dentry alias up to the filesystem root, writing names
 * from the end of the buffer backwards. The buffer is twice ILOCK_PATH_MAX
 * so masked offsets always stay inside it for the verifier; the logical
 * path never goes past ILOCK_PATH_MAX.
 */
static __always_inline void fill_path(struct ilock_inode_info *info, struct inode *inode)
{
	struct hlist_node *first = BPF_CORE_READ(inode, i_dentry.first);
	struct dentry *d, *parent;
	u32 off = ILOCK_PATH_MAX - 1;

	info->path[off] = 0;
	info->path_off = off;
	if (!first) {
		info->flags |= ILOCK_INODE_NO_DENTRY;
		return;
	}
	d = (void *)first - bpf_core_field_offset(struct dentry, d_u.d_alias);

	for (int i = 0; i < ILOCK_PATH_DEPTH; i++) {
		const unsigned char *name;
		u32 len;

		parent = BPF_CORE_READ(d, d_parent);
		if (!parent || parent == d) {
			info->path_off = off;
			return;
		}
		len = BPF_CORE_READ(d, d_name.len);
		name = BPF_CORE_READ(d, d_name.name);
		if (len + 1 > off) {
			info->flags |= ILOCK_INODE_TRUNCATED;
			info->path_off = off;
			return;
		}
		off -= len;
		if (bpf_probe_read_kernel(&info->path[off & (ILOCK_PATH_MAX - 1)],
					  len & (ILOCK_PATH_MAX - 1), name)) {
			info->flags |= ILOCK_INODE_READ_FAIL;
			return;
		}
		off--;
		info->path[off & (ILOCK_PATH_MAX - 1)] = '/';
		info->path_off = off;
		d = parent;
	}
	info->flags |= ILOCK_INODE_TRUNCATED;
}

/*
 * Record an inode (filesystem and path) the first time it is seen. ts, when
 * given, remembers the inode this thread last saw recorded: a thread that
 * keeps waiting on one file then skips the map lookup (entries are never
 * deleted while tracing).
 */
static __always_inline void note_inode(struct inode *inode, const struct ilock_key *k,
				       struct task_state *ts)
{
	struct ilock_inode_key ik = { .ino = k->ino, .dev = k->dev, .gen = k->gen };
	struct ilock_inode_info *info;
	u32 zero = 0;

	if (ts && ts->noted_ino == k->ino && ts->noted_dev == k->dev && ts->noted_gen == k->gen)
		return;
	if (bpf_map_lookup_elem(&inodes, &ik)) {
		if (ts) {
			ts->noted_ino = k->ino;
			ts->noted_dev = k->dev;
			ts->noted_gen = k->gen;
		}
		return;
	}
	info = bpf_map_lookup_elem(&path_scratch, &zero);
	if (!info)
		return;
	info->magic = (u32)BPF_CORE_READ(inode, i_sb, s_magic);
	info->flags = BPF_CORE_READ(inode, i_nlink) ? 0 : ILOCK_INODE_UNLINKED;
	if (inode_is_dir((u64)inode, false))
		info->flags |= ILOCK_INODE_DIR;
	info->path_off = ILOCK_PATH_MAX - 1;
	info->path[ILOCK_PATH_MAX - 1] = 0;
	if (cfg_resolve_paths)
		fill_path(info, inode);
	if (info->flags & (ILOCK_INODE_NO_DENTRY | ILOCK_INODE_TRUNCATED | ILOCK_INODE_READ_FAIL))
		count(ILOCK_LOST_PATH);
	if (bpf_map_update_elem(&inodes, &ik, info, BPF_NOEXIST) == -7 /* -E2BIG: full */)
		count(ILOCK_LOST_INODE_MAP_FULL);
}

#endif /* ILOCK_INODE_BPF_H */
