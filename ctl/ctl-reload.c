/* SPDX-License-Identifier: ISC */
/* mcpctl reload: restart a server's connection without dropping it. */
#include "mcpctl.h"

static const struct option ctl_reload_options[] = {
	{ "timeout", required_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void
ctl_reload_print(const json_t *result)
{
	ctl_load_print_result("reloaded", result);
}

static int
ctl_reload_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_int_t ms = 0;
	json_t *params;
	int c, r = 0;

	while (r == 0 &&
	    (c = mcpctl_getopt(argc, argv, ":h", ctl_reload_options)) != -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c != 't')
			return mcpctl_bad_option(cmd, c, argv);
		r = mcpctl_parse_positive(cmd, "--timeout", optarg,
		    "milliseconds", &ms);
	}
	if (r != 0 ||
	    (r = mcpctl_positional(cmd, argc, argv, 1, 1, MCPCTL_TARGET)) != 0)
		return r;
	params = json_pack("{s:s}", "target", argv[optind]);
	if (ms > 0)
		json_object_set_new(params, "timeout_ms", json_integer(ms));
	ctl_load_progress(m, params, NULL);
	return mcpctl_run(m, "mcpd/reload", params, ctl_reload_print);
}

const struct mcpctl_cmd ctl_reload_cmd = {
	.name = "reload",
	.synopsis = "TARGET [--timeout MS]",
	.summary =
	    "restart a server (a process or remote one serves until the new one is ready)",
	.help =
	    "  --timeout MS       deadline of the restart and handshake\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "A process or remote server keeps serving calls on its old\n"
	    "generation until the new one is ready. A container server is\n"
	    "removed first (its container name is fixed), so its calls fail\n"
	    "until the new container is ready.\n",
	.exec = ctl_reload_exec,
	.options = ctl_reload_options,
};
