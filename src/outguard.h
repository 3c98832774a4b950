/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Standard output with the bytes that would drive a terminal made harmless. */
#ifndef ILOCK_OUTGUARD_H
#define ILOCK_OUTGUARD_H

#include <stdbool.h>

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
/*
 * fn(ctx) runs once, from the guarded stream's write, when a stop has been
 * asked for (signals.h): a write blocked on a reader that does not read
 * returns early on the signal, and fn can let go of what must not wait for
 * the reader (the tracer's probes). NULL: none.
 */
void outguard_on_stop(void (*fn)(void *ctx), void *ctx);
/*
 * After a failed write: has standard output's reader gone (a pipe or
 * socket closed, as `| head` does)? Then what it did not read is dropped
 * and stdout's error cleared, and the caller ends quietly with the status
 * it would have had: the reader asked for no more. Any other failure (a
 * full disk) returns false and is the caller's to report.
 */
bool outguard_reader_left(void);

#endif
