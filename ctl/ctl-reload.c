/* SPDX-License-Identifier: ISC */
/* mcpctl reload: restart a server's connection without dropping it. */
#include "mcpctl.h"

static void
ctl_reload_print(const json_t *result)
{
	ctl_load_print_result("reloaded", result);
}

static int
ctl_reload_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params = NULL;
	int r = mcpctl_parse_target(cmd, argc, argv, true, &params);

	if (r != -1)
		return r;
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
	.options = mcpctl_target_options,
};
