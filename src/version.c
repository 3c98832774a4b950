// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>

#include <bpf/libbpf.h>

#include "git_version.h"  /* generated: ILOCK_GIT, the commit built */
#include "ilock.h"
#include "version.h"

const char *ilock_version(void)
{
	static char v[96];

	if (!v[0])
		snprintf(v, sizeof(v), "%s (git %s, libbpf %s)", ILOCK_VERSION_STR, ILOCK_GIT,
			 libbpf_version_string());
	return v;
}
