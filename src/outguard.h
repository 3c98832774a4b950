/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Standard output with the bytes that would drive a terminal made harmless. */
#ifndef ILOCK_OUTGUARD_H
#define ILOCK_OUTGUARD_H

/*
 * Route stdout through a stream that writes C0 controls other than newline
 * and tab, and DEL, as '?' (display_clean()). Text output carries paths
 * and command names that anyone on the host can choose, escape sequences
 * included; JSON escapes them already, so it passes unchanged. Not for
 * ilocktop's screen, which draws with its own escapes (curses shows a
 * control in a name as ^X). Keeps stdout as it was if the stream cannot
 * be made.
 */
void outguard_stdout(void);

#endif
