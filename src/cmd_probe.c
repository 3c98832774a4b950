// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `ilock probe`: what this kernel offers and the strategy ilock will use. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "json.h"
#include "probe.h"

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct probe_result r;
	struct strategy s;
	bool json = false;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		if (c == 'j') {
			json = true;
		} else if (c == 'h') {
			printf("usage: ilock probe [-j|--json]\n");
			return 0;
		} else {
			fprintf(stderr, "ilock probe: unknown option %s\nusage: ilock probe [-j|--json]\n",
				argv[optind - 1]);
			return 2;
		}
	}
	probe_kernel(&r);
	choose_strategy(&r, &s);
	if (!json) {
		probe_print(stdout, &r, &s);
		return 0;
	}
	{
		struct json j;

		json_init(&j, stdout);
		json_obj_begin(&j, NULL);
		json_str(&j, "kernel", r.kernel);
		json_bool(&j, "privileged", r.has_caps);
		json_bool(&j, "vmlinux_btf", r.vmlinux_btf);
		json_bool(&j, "lock_contention_tracepoints", r.tp_contention);
		json_bool(&j, "lock_contention_btf", r.tp_contention_btf);
		json_str(&j, "xfs", r.xfs_btf ? (r.xfs_module ? "module" : "builtin") : NULL);
		json_bool(&j, "xfs_tracepoints", r.tp_xfs);
		json_bool(&j, "invalidate_lock", r.invalidate_lock);
		json_obj_begin(&j, "strategy");
		json_obj_begin(&j, "lock_waits");
		json_str(&j, "attach", attach_mode_name(s.lock_waits));
		json_str(&j, "why", s.lock_waits_why);
		json_obj_end(&j);
		json_obj_begin(&j, "xfs_holds");
		json_str(&j, "attach", attach_mode_name(s.xfs_holds));
		json_str(&j, "why", s.xfs_holds_why);
		json_obj_end(&j);
		json_obj_end(&j);
		json_obj_end(&j);
	}
	return 0;
}
