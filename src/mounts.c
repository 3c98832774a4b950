// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ilock.h"
#include "mounts.h"
#include "util.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *unescape(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n &&
		    s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			*o++ = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		} else {
			*o++ = s[i];
		}
	}
	*o = 0;
	return out;
}

/* Split one line into space-separated fields; returns the count. */
static int split(const char *line, size_t len, const char **f, size_t *flen, int max)
{
	int n = 0;
	size_t i = 0;

	while (i < len && n < max) {
		while (i < len && line[i] == ' ')
			i++;
		if (i >= len)
			break;
		f[n] = line + i;
		while (i < len && line[i] != ' ')
			i++;
		flen[n] = (size_t)(line + i - f[n]);
		n++;
	}
	return n;
}

static int parse_line(struct mount_entry *e, const char *line, size_t len)
{
	const char *f[64];
	size_t fl[64];
	char majmin[32];
	int n = split(line, len, f, fl, 64), sep = -1;

	for (int i = 6; i < n; i++) {
		if (fl[i] == 1 && f[i][0] == '-') {
			sep = i;
			break;
		}
	}
	if (n < 10 || sep < 0 || sep + 2 >= n || fl[2] >= sizeof(majmin))
		return -EINVAL;
	memcpy(majmin, f[2], fl[2]);
	majmin[fl[2]] = 0;
	if (!parse_kdev(majmin, &e->kdev))
		return -EINVAL;
	e->root = unescape(f[3], fl[3]);
	e->mnt = unescape(f[4], fl[4]);
	e->fstype = unescape(f[sep + 1], fl[sep + 1]);
	e->source = unescape(f[sep + 2], fl[sep + 2]);
	if (!e->root || !e->mnt || !e->fstype || !e->source)
		return -ENOMEM;
	return 0;
}

static void entry_free(struct mount_entry *e)
{
	free(e->root);
	free(e->mnt);
	free(e->fstype);
	free(e->source);
}

int mounts_parse(struct mount_table *t, const char *text)
{
	size_t cap = 0;

	t->e = NULL;
	t->n = 0;
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);
		struct mount_entry e = {};
		int err;

		if (t->n == cap) {
			struct mount_entry *p = realloc(t->e, (cap ? cap * 2 : 32) * sizeof(*p));

			if (!p) {
				mounts_free(t);
				return -ENOMEM;
			}
			t->e = p;
			cap = cap ? cap * 2 : 32;
		}
		err = parse_line(&e, text, len);
		if (!err)
			t->e[t->n++] = e;
		else
			entry_free(&e);
		if (err == -ENOMEM) {
			mounts_free(t);
			return err;
		}
		text += len + (nl ? 1 : 0);
	}
	return 0;
}

int mounts_load(struct mount_table *t)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;
	int err;

	if (!f)
		return -errno;
	do {
		if (cap - n < 4096) {
			char *p = realloc(buf, cap + 65536);

			if (!p) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = p;
			cap += 65536;
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = 0;
	err = mounts_parse(t, buf);
	free(buf);
	return err;
}

void mounts_free(struct mount_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		entry_free(&t->e[i]);
	free(t->e);
	t->e = NULL;
	t->n = 0;
}

void mounts_fstype(uint32_t kdev, char *out, size_t len)
{
	struct mount_table mt = {};
	const struct mount_entry *m;

	if (len)
		out[0] = '\0';
	if (mounts_load(&mt))
		return;
	m = mounts_find_dev(&mt, kdev);
	if (m && m->fstype && len)
		snprintf(out, len, "%s", m->fstype);
	mounts_free(&mt);
}

const struct mount_entry *mounts_find_dev(const struct mount_table *t, uint32_t kdev)
{
	const struct mount_entry *best = NULL;

	for (size_t i = 0; i < t->n; i++) {
		const struct mount_entry *e = &t->e[i];

		if (e->kdev != kdev)
			continue;
		/* the shortest root shows the most of the filesystem */
		if (!best || strlen(e->root) < strlen(best->root))
			best = e;
	}
	return best;
}

bool mounts_full_path(const struct mount_table *t, uint32_t kdev, const char *fsrel,
		      char *out, size_t len)
{
	bool found = false;
	size_t best_root = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct mount_entry *e = &t->e[i];
		size_t rl = strlen(e->root);
		const char *rest;

		if (e->kdev != kdev)
			continue;
		if (rl == 1 && e->root[0] == '/')
			rl = 0;
		if (strncmp(fsrel, e->root, rl) || (fsrel[rl] && fsrel[rl] != '/'))
			continue;
		if (found && rl >= best_root)
			continue;
		rest = fsrel + rl;
		if (!strcmp(e->mnt, "/"))
			snprintf(out, len, "%s", *rest ? rest : "/");
		else
			snprintf(out, len, "%s%s", e->mnt, rest);
		found = true;
		best_root = rl;
	}
	return found;
}
