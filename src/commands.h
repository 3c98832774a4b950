/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Each subcommand's entry point: argv[0] is the subcommand name. Returns the exit code. */
#ifndef ILOCK_COMMANDS_H
#define ILOCK_COMMANDS_H

int cmd_stat(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif
