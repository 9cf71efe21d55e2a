/* SPDX-License-Identifier: ISC */
/* mcpctl shutdown: stop every server, then mcpd itself. */
#include "mcpctl.h"

static void
ctl_shutdown_print(const json_t *result)
{
	(void)result;
	printf("mcpd stopped\n");
}

static int
ctl_shutdown_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	int r;

	if ((r = mcpctl_parse_plain(cmd, argc, argv)) >= 0 ||
	    (r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0)
		return r;
	return mcpctl_run(m, "mcpd/shutdown", json_object(),
	    ctl_shutdown_print);
}

const struct mcpctl_cmd ctl_shutdown_cmd = {
	.name = "shutdown",
	.synopsis = "",
	.summary = "stop every server, release every resource, and stop mcpd",
	.help = "  -h, --help         this text\n",
	.exec = ctl_shutdown_exec,
};
