// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Paths looked at again (pathcheck.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "pathcheck.h"
#include "util.h"

/* an inode's key in ids: padded with zeros, compared as bytes */
struct fix_k {
	uint64_t ino;
	uint32_t dev, gen;
};

void path_fixes_init(struct path_fixes *pf, uint64_t every_ns)
{
	memset(pf, 0, sizeof(*pf));
	pf->every_ns = every_ns;
	idmap_init(&pf->ids, sizeof(struct fix_k));
}

void path_fixes_free(struct path_fixes *pf)
{
	free(pf->e);
	idmap_free(&pf->ids);
	path_fixes_init(pf, pf->every_ns);
}

/* st is the inode (dev, ino) in the kernel's dev encoding */
static bool same_inode(const struct stat *st, uint32_t dev, uint64_t ino)
{
	return st->st_ino == ino && major(st->st_dev) == dev >> 20 &&
	       minor(st->st_dev) == (dev & 0xfffff);
}

/*
 * Is the file at full (st from lstat) the one of generation gen? Its
 * number alone is not enough: ext4 gives a freed inode number to the next
 * file made, XFS soon too. Asked of regular files and directories only
 * (opening a device can do something); true when the generation cannot be
 * had (gen 0 unknown, a filesystem without FS_IOC_GETVERSION).
 */
static bool same_generation(const char *full, const struct stat *st, uint32_t gen)
{
	int fd, v = 0;
	bool same = true;

	if (!gen || !(S_ISREG(st->st_mode) || S_ISDIR(st->st_mode)))
		return true;
	fd = open(full, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return true;
	if (!ioctl(fd, FS_IOC_GETVERSION, &v))
		same = (uint32_t)v == gen;
	close(fd);
	return same;
}

int path_look(const struct mount_table *mt, const struct inode_meta *m, char *path, size_t len)
{
	char full[2 * ILOCK_PATH_MAX], dir[2 * ILOCK_PATH_MAX];
	const char *slash, *rel_slash = strrchr(m->path, '/');
	struct dirent *de;
	struct stat st;
	size_t seen = 0;
	int found = INODE_META_GONE;
	DIR *d;

	if (len)
		path[0] = 0;
	/* nothing to look at: no path, or one the walker could not finish */
	if (!rel_slash || !strcmp(m->path, "/") ||
	    m->flags & (ILOCK_INODE_NO_DENTRY | ILOCK_INODE_TRUNCATED | ILOCK_INODE_READ_FAIL |
			ILOCK_INODE_UNLINKED) ||
	    !mounts_full_path(mt, m->dev, m->path, full, sizeof(full)))
		return -1;
	if (!lstat(full, &st) && same_inode(&st, m->dev, m->ino) &&
	    same_generation(full, &st, m->gen))
		return 0;
	/* renamed within its directory: the entry with its inode number */
	slash = strrchr(full, '/');
	if (!slash || slash == full)
		return -1;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - full), full);
	d = opendir(dir);
	if (!d)
		return INODE_META_GONE;
	while ((de = readdir(d)) && seen++ < PATHCHECK_DIR_MAX) {
		char cand[2 * ILOCK_PATH_MAX + 256];

		if (de->d_ino != m->ino || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(cand, sizeof(cand), "%s/%s", dir, de->d_name);
		/* the same number on the same device and generation: a hard link or the file renamed */
		if (lstat(cand, &st) || !same_inode(&st, m->dev, m->ino) ||
		    !same_generation(cand, &st, m->gen))
			continue;
		if ((size_t)snprintf(path, len, "%.*s/%s", (int)(rel_slash - m->path), m->path,
				     de->d_name) >= len)
			continue;  /* too long to keep: gone, as far as we can say */
		found = INODE_META_RENAMED;
		break;
	}
	closedir(d);
	if (found != INODE_META_RENAMED && len)
		path[0] = 0;
	return found;
}

static struct path_fix *find(const struct path_fixes *pf, uint32_t dev, uint64_t ino, uint32_t gen)
{
	struct fix_k k = { .ino = ino, .dev = dev, .gen = gen };
	uint32_t i;

	return idmap_get(&pf->ids, &k, &i) ? &pf->e[i] : NULL;
}

static struct path_fix *add(struct path_fixes *pf, uint32_t dev, uint64_t ino, uint32_t gen)
{
	struct fix_k k = { .ino = ino, .dev = dev, .gen = gen };
	struct path_fix *f;

	if (!grow_array((void **)&pf->e, &pf->cap, pf->n, sizeof(*pf->e)) ||
	    idmap_put(&pf->ids, &k, (uint32_t)pf->n))
		return NULL;
	f = &pf->e[pf->n++];
	memset(f, 0, sizeof(*f));
	f->dev = dev;
	f->ino = ino;
	f->gen = gen;
	return f;
}

/*
 * m's path as the walker found it: a meta fixed before (a view that keeps
 * its metadata between reads) holds the name found then, and says so.
 */
static const char *walked_path(const struct path_fix *f, const struct inode_meta *m)
{
	return f && (m->flags & INODE_META_RENAMED) ? f->walked : m->path;
}

/* A renamed inode still at the name found: 0 and no directory read. */
static bool still_there(const struct mount_table *mt, const struct path_fix *f)
{
	char full[2 * ILOCK_PATH_MAX];
	struct stat st;

	return mounts_full_path(mt, f->dev, f->path, full, sizeof(full)) && !lstat(full, &st) &&
	       same_inode(&st, f->dev, f->ino);
}

/* Look at m's path if it is due (and *budget left). */
static void look(struct path_fixes *pf, const struct mount_table *mt, const struct inode_meta *m,
		 uint64_t now_ns, size_t *budget)
{
	struct path_fix *f = find(pf, m->dev, m->ino, m->gen);
	struct inode_meta as_walked;
	char path[ILOCK_PATH_MAX];
	uint64_t every = pf->every_ns;
	int r;

	/* a directory is read only when the file is not where it was last seen: rarely */
	if (f && f->flags == INODE_META_GONE && every < PATHCHECK_GONE_NS)
		every = PATHCHECK_GONE_NS;
	/* the same walked path, looked at lately: nothing new to learn */
	if (f && now_ns - f->checked_ns < every && !strcmp(f->walked, walked_path(f, m)))
		return;
	if (!*budget)
		return;
	(*budget)--;
	pf->looks++;
	if (f && f->flags == INODE_META_RENAMED && !strcmp(f->walked, walked_path(f, m)) &&
	    still_there(mt, f)) {
		f->checked_ns = now_ns;
		return;
	}
	as_walked = *m;
	str_copy(as_walked.path, sizeof(as_walked.path), walked_path(f, m), ILOCK_PATH_MAX);
	r = path_look(mt, &as_walked, path, sizeof(path));
	if (r < 0)
		return;
	if (!f && !(f = add(pf, m->dev, m->ino, m->gen)))
		return;
	f->flags = (uint16_t)r;
	f->checked_ns = now_ns;
	str_copy(f->walked, sizeof(f->walked), as_walked.path, ILOCK_PATH_MAX);
	str_copy(f->path, sizeof(f->path), path, ILOCK_PATH_MAX);
}

/* What was found, onto the meta of the same walked path. */
static void fix(const struct path_fixes *pf, struct inode_meta *m)
{
	const struct path_fix *f = find(pf, m->dev, m->ino, m->gen);

	if (!f || strcmp(f->walked, walked_path(f, m)))
		return;
	m->flags &= (uint16_t)~(INODE_META_RENAMED | INODE_META_GONE);
	m->flags |= f->flags;
	str_copy(m->path, sizeof(m->path), f->flags == INODE_META_RENAMED ? f->path : f->walked,
		 ILOCK_PATH_MAX);
}

void path_fixes_apply(struct path_fixes *pf, struct snapshot *s, const struct mount_table *mt,
		      size_t max, uint64_t now_ns)
{
	size_t budget = PATHCHECK_MAX_PER_READ;

	for (size_t i = 0; i < s->nlocks && i < max; i++) {
		const struct lock_row *r = &s->locks[i];
		const struct inode_meta *m;

		if (!row_waits(r) || !(m = snap_find_inode(s, r->dev, r->ino, r->gen)))
			continue;
		look(pf, mt, m, now_ns, &budget);
	}
	path_fixes_fix(pf, s);
}

void path_fixes_fix(const struct path_fixes *pf, struct snapshot *s)
{
	for (size_t i = 0; i < s->ninodes; i++)
		fix(pf, &s->inodes[i]);
}

void path_fixes_apply_one(struct path_fixes *pf, struct snapshot *s,
			  const struct mount_table *mt, uint32_t dev, uint64_t ino, uint32_t gen,
			  uint64_t now_ns)
{
	/* s is ours to change: its meta found through the index, not by a pass over all */
	struct inode_meta *m = (struct inode_meta *)snap_find_inode(s, dev, ino, gen);
	size_t budget = 1;

	if (!m)
		return;
	look(pf, mt, m, now_ns, &budget);
	fix(pf, m);
}
