// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include <unistd.h>

#include "signals.h"

volatile sig_atomic_t stop_requested;
volatile sig_atomic_t resize_pending;
static void (*forced_cleanup)(void);

static void on_stop(int sig)
{
	(void)sig;
	if (stop_requested) {
		/* second signal: leave now; the kernel detaches our links on exit */
		if (forced_cleanup)
			forced_cleanup();
		_exit(130);
	}
	stop_requested = 1;
}

static void on_winch(int sig)
{
	(void)sig;
	resize_pending = 1;
}

void signals_setup(void (*cleanup)(void))
{
	struct sigaction sa;

	forced_cleanup = cleanup;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;  /* no SA_RESTART: sleeps return early */
	sigemptyset(&sa.sa_mask);
	/*
	 * A closed terminal (HUP) or Ctrl-\ (QUIT) stops us as Ctrl-C does:
	 * by default they end the process with the terminal in raw mode and a
	 * recording without its last interval.
	 */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}
