/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Which ilock this is, for --version, probe and bug reports. */
#ifndef ILOCK_VERSION_H
#define ILOCK_VERSION_H

/* "0.1.0 (git 5675624, libbpf v1.1)": the release, the commit built, the libbpf linked. */
const char *ilock_version(void);

#endif
