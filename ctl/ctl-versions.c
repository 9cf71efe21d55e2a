/* SPDX-License-Identifier: ISC */
/* mcpctl versions: every version the registry lists of one server. */
#include "mcpctl.h"

static int
ctl_versions_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	int r;

	if ((r = mcpctl_parse_plain(cmd, argc, argv)) >= 0 ||
	    (r = mcpctl_positional(cmd, argc, argv, 1, 1,
		 "NAME (a registry name, such as io.github.owner/server)")) !=
		0)
		return r;
	return mcpctl_run(m, "mcpd/registry-versions",
	    json_pack("{s:s}", "name", argv[optind]), discovery_print_versions);
}

const struct mcpctl_cmd ctl_versions_cmd = {
	.name = "versions",
	.synopsis = "NAME",
	.summary = "list the versions the MCP Registry has of one server",
	.help = "  -h, --help         this text\n",
	.exec = ctl_versions_exec,
};
