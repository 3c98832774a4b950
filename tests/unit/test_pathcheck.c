// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Paths looked at again (pathcheck.h), on real files in a directory of
 * our own: a file still there, renamed in its directory, moved away,
 * deleted; how often one is looked at; what the views' metadata becomes.
 */
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
#include "render.h"
#include "unit.h"

static char root[64];
static struct mount_table mt;
static uint32_t kdev;

/* A file under our directory, as the walker would have named it ("/a/f"). */
static uint64_t make(const char *rel)
{
	char full[256];
	struct stat st;
	int fd;

	snprintf(full, sizeof(full), "%s%s", root, rel);
	fd = open(full, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(!stat(full, &st));
	return st.st_ino;
}

static void mv(const char *from, const char *to)
{
	char a[256], b[256];

	snprintf(a, sizeof(a), "%s%s", root, from);
	snprintf(b, sizeof(b), "%s%s", root, to);
	CHECK(!rename(a, b));
}

/* The file's i_generation, 0 when the filesystem does not say. */
static uint32_t gen_of(const char *rel)
{
	char full[256];
	int fd, v = 0;

	snprintf(full, sizeof(full), "%s%s", root, rel);
	fd = open(full, O_RDONLY);
	if (fd >= 0) {
		if (ioctl(fd, FS_IOC_GETVERSION, &v))
			v = 0;
		close(fd);
	}
	return (uint32_t)v;
}

static struct inode_meta meta(uint64_t ino, const char *rel)
{
	struct inode_meta m = { .ino = ino, .dev = kdev };

	snprintf(m.path, sizeof(m.path), "%s", rel);
	return m;
}

static void setup(void)
{
	char info[256], sub[128];
	struct stat st;

	snprintf(root, sizeof(root), "/tmp/ilock-pathcheck-%d", (int)getpid());
	CHECK(!mkdir(root, 0755));
	snprintf(sub, sizeof(sub), "%s/wal", root);
	CHECK(!mkdir(sub, 0755));
	snprintf(sub, sizeof(sub), "%s/other", root);
	CHECK(!mkdir(sub, 0755));
	CHECK(!stat(root, &st));
	kdev = (uint32_t)(major(st.st_dev) << 20 | minor(st.st_dev));
	/* our directory as the root of a mount of its device */
	snprintf(info, sizeof(info), "36 35 %u:%u / %s rw - ext4 /dev/x rw\n", major(st.st_dev),
		 minor(st.st_dev), root);
	CHECK(!mounts_parse(&mt, info));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(!system(cmd));
	mounts_free(&mt);
}

static void test_look(void)
{
	uint64_t a = make("/wal/000000010000000000000003"), b = make("/wal/keep");
	uint64_t c = make("/wal/goes"), d = make("/wal/deleted");
	struct inode_meta m;
	char path[ILOCK_PATH_MAX];

	m = meta(b, "/wal/keep");
	CHECK_EQ_U(path_look(&mt, &m, path, sizeof(path)), 0);
	/* recycled: renamed in its directory, found there by inode number */
	mv("/wal/000000010000000000000003", "/wal/000000010000000000000012");
	m = meta(a, "/wal/000000010000000000000003");
	CHECK_EQ_U(path_look(&mt, &m, path, sizeof(path)), INODE_META_RENAMED);
	CHECK_STR(path, "/wal/000000010000000000000012");
	/* another file took the old name: still this inode's new one */
	make("/wal/000000010000000000000003");
	CHECK_EQ_U(path_look(&mt, &m, path, sizeof(path)), INODE_META_RENAMED);
	CHECK_STR(path, "/wal/000000010000000000000012");
	/* moved to another directory, or deleted: gone from here */
	mv("/wal/goes", "/other/goes");
	m = meta(c, "/wal/goes");
	CHECK_EQ_U(path_look(&mt, &m, path, sizeof(path)), INODE_META_GONE);
	CHECK_STR(path, "");
	{
		char full[256];

		snprintf(full, sizeof(full), "%s/wal/deleted", root);
		CHECK(!unlink(full));
	}
	m = meta(d, "/wal/deleted");
	CHECK_EQ_U(path_look(&mt, &m, path, sizeof(path)), INODE_META_GONE);
	/* what cannot be looked at: no path, the walker's own notes, not mounted */
	m = meta(b, "");
	CHECK_EQ_U(path_look(&mt, &m, path, sizeof(path)), (uint64_t)-1);
	m = meta(b, "/wal/keep");
	m.flags = ILOCK_INODE_TRUNCATED;
	CHECK_EQ_U(path_look(&mt, &m, path, sizeof(path)), (uint64_t)-1);
	m.flags = ILOCK_INODE_UNLINKED;
	CHECK_EQ_U(path_look(&mt, &m, path, sizeof(path)), (uint64_t)-1);
	m = meta(b, "/wal/keep");
	m.dev = kdev + 1;
	CHECK_EQ_U(path_look(&mt, &m, path, sizeof(path)), (uint64_t)-1);

	/*
	 * Its generation too, where the filesystem gives one: a file made
	 * in a freed inode number is another file, found in place or in the
	 * directory (ext4 hands the number out again at once).
	 */
	m = meta(b, "/wal/keep");
	m.gen = gen_of("/wal/keep");
	if (m.gen) {
		CHECK_EQ_U(path_look(&mt, &m, path, sizeof(path)), 0);
		m.gen ^= 1;
		CHECK_EQ_U(path_look(&mt, &m, path, sizeof(path)), INODE_META_GONE);
		m = meta(a, "/wal/000000010000000000000003");
		m.gen = gen_of("/wal/000000010000000000000012") ^ 1;
		CHECK_EQ_U(path_look(&mt, &m, path, sizeof(path)), INODE_META_GONE);
		m.gen ^= 1;
		CHECK_EQ_U(path_look(&mt, &m, path, sizeof(path)), INODE_META_RENAMED);
	} else {
		fprintf(stderr, "test_pathcheck: %s gives no generations: not checked\n", root);
	}
}

/* A snapshot with one lock row with waits per inode, and each inode's walked path. */
static void add(struct snapshot *s, uint64_t ino, const char *rel)
{
	struct inode_meta m = meta(ino, rel);
	struct lock_row *r = snap_lock(s, kdev, ino, 0, ILOCK_CLASS_I_RWSEM);

	CHECK(r != NULL);
	if (r)
		r->wait[ILOCK_MODE_EXCL].count = 1;
	CHECK(!snap_add_inode(s, &m));
}

static void test_apply(void)
{
	uint64_t a = make("/wal/seg1"), b = make("/wal/seg2");
	struct path_fixes pf;
	struct snapshot s;
	const struct inode_meta *m;
	struct inode_view v;
	char label[512];

	path_fixes_init(&pf, 1000);
	snap_init(&s);
	add(&s, a, "/wal/seg1");
	add(&s, b, "/wal/seg2");
	path_fixes_apply(&pf, &s, &mt, 10, 5000);
	CHECK_EQ_U(pf.looks, 2);
	m = snap_find_inode(&s, kdev, a, 0);
	CHECK(m && !(m->flags & (INODE_META_RENAMED | INODE_META_GONE)));

	/* renamed: not looked at again before every_ns, then found */
	mv("/wal/seg1", "/wal/seg9");
	path_fixes_apply(&pf, &s, &mt, 10, 5500);
	CHECK_EQ_U(pf.looks, 2);
	CHECK(m && !(m->flags & INODE_META_RENAMED));
	path_fixes_apply(&pf, &s, &mt, 10, 6000);
	CHECK_EQ_U(pf.looks, 4);
	CHECK(m && (m->flags & INODE_META_RENAMED) && !strcmp(m->path, "/wal/seg9"));
	/* as the views say it */
	describe_inode(&s, &mt, kdev, a, 0, false, &v);
	inode_label(label, sizeof(label), &v, kdev, a);
	CHECK(strstr(label, "/wal/seg9 (renamed)") != NULL);

	/* a view that keeps its metadata (ilocktop): renamed again, found again */
	mv("/wal/seg9", "/wal/seg10");
	path_fixes_apply(&pf, &s, &mt, 10, 8000);
	CHECK(m && (m->flags & INODE_META_RENAMED) && !strcmp(m->path, "/wal/seg10"));
	/* a fresh read has the walker's path: given the name found */
	{
		struct snapshot fresh;

		snap_init(&fresh);
		add(&fresh, a, "/wal/seg1");
		path_fixes_fix(&pf, &fresh);
		m = snap_find_inode(&fresh, kdev, a, 0);
		CHECK(m && (m->flags & INODE_META_RENAMED) && !strcmp(m->path, "/wal/seg10"));
		snap_free(&fresh);
	}
	/* gone: the walker's path kept, said so */
	mv("/wal/seg2", "/other/seg2");
	path_fixes_apply_one(&pf, &s, &mt, kdev, b, 0, 20000);
	m = snap_find_inode(&s, kdev, b, 0);
	CHECK(m && (m->flags & INODE_META_GONE) && !strcmp(m->path, "/wal/seg2"));
	describe_inode(&s, &mt, kdev, b, 0, false, &v);
	inode_label(label, sizeof(label), &v, kdev, b);
	CHECK(strstr(label, "/wal/seg2 (moved or deleted)") != NULL);
	/* back where it was: a gone one is looked at again only after PATHCHECK_GONE_NS */
	mv("/other/seg2", "/wal/seg2");
	path_fixes_apply_one(&pf, &s, &mt, kdev, b, 0, 40000);
	CHECK(m && (m->flags & INODE_META_GONE));
	path_fixes_apply_one(&pf, &s, &mt, kdev, b, 0, 20000 + PATHCHECK_GONE_NS);
	CHECK(m && !(m->flags & (INODE_META_GONE | INODE_META_RENAMED)));

	/* at most max rows, and only rows with waits */
	pf.looks = 0;
	path_fixes_apply(&pf, &s, &mt, 1, 2 * PATHCHECK_GONE_NS);
	CHECK_EQ_U(pf.looks, 1);
	snap_free(&s);
	path_fixes_free(&pf);
}

int main(void)
{
	setup();
	test_look();
	test_apply();
	teardown();
	UNIT_DONE();
}
