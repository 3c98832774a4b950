// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ilock: inode lock contention, from kernel tracepoints. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "ilock.h"
#include "log.h"
#include "outguard.h"
#include "version.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} commands[] = {
	{ "stat", cmd_stat, "trace, then show inode lock waits, histograms and who waited on whom" },
	{ "probe", cmd_probe, "show what this kernel offers and how ilock will attach" },
	{ "top", cmd_top, "live view of inode lock waits, like top (also installed as ilocktop)" },
	{ "record", cmd_record, "trace into a recording file, one block per interval" },
	{ "report", cmd_report, "show a recording (or a time window of it): text, JSON, CSV or HTML" },
	{ "diff", cmd_diff, "compare two recordings, with a significance verdict per change" },
	{ "export", cmd_export, "serve inode lock metrics to Prometheus (OpenMetrics) over HTTP" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ilock <command> [options]   (ilock <command> -h for its options)\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nexamples:\n  ilock stat -d 10\n  ilock stat -D /mnt/data -j > waits.json\n");
}

/*
 * A closed stdin, stdout or stderr would hand its number to the next file
 * or BPF object we open, and our output would go into it. Each gets
 * /dev/null, stdout opened read-only so that writing to it still fails
 * and is reported.
 */
static void guard_stdio(void)
{
	static const int modes[3] = { O_RDONLY, O_RDONLY, O_WRONLY };

	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", modes[fd]) != fd)
			_exit(2);
}

/* Output lost (a full disk) is a failure, not a success; a reader gone (| head) is neither. */
static int output_status(int ret)
{
	int e = fflush(stdout) ? errno : 0;

	/* a command that failed has said why (report and diff check their output) */
	if (ret || (!e && !ferror(stdout)) || outguard_reader_left())
		return ret;
	fprintf(stderr, "%s: writing the output failed%s%s\n", log_prog_name(), e ? ": " : "",
		e ? strerror(e) : "");
	return 1;
}

static int version(void)
{
	printf("ilock %s\n", ilock_version());
	return 0;
}

static bool is_version(const char *arg)
{
	return !strcmp(arg, "--version") || !strcmp(arg, "-V");
}

static int run(int argc, char **argv)
{
	/* installed as a link named ilocktop: that name means `ilock top` */
	if (argc > 0 && !strcmp(basename(argv[0]), "ilocktop")) {
		if (argc == 2 && is_version(argv[1]))
			return version();
		return cmd_top(argc, argv);
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (is_version(argv[1]) || !strcmp(argv[1], "version"))
		return version();
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		/* top guards its batch output itself: its screen needs the real stdout */
		if (commands[i].fn != cmd_top)
			outguard_stdout();
		return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "ilock: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	guard_stdio();
	/*
	 * A reader gone (`| head`) is an error every command reports, as it
	 * does a full disk, not a silent death by SIGPIPE in report and diff.
	 */
	signal(SIGPIPE, SIG_IGN);
	return output_status(run(argc, argv));
}
