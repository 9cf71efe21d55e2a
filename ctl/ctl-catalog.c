/* SPDX-License-Identifier: ISC */
/* mcpctl catalog: every server of the registry, or of the local catalog. */
#include "mcpctl.h"

static int
ctl_catalog_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params;
	int r;

	if (!discovery_page_params(cmd, argc, argv, 0, "", &params, &r))
		return r;
	return mcpctl_run(m, "mcpd/registry-catalog", params,
	    discovery_print_page);
}

const struct mcpctl_cmd ctl_catalog_cmd = {
	.name = "catalog",
	.synopsis = "[--limit N] [--cursor CURSOR] [--source official|local]",
	.summary =
	    "list the servers of the MCP Registry a page at a time, or the local catalog",
	.help = "  --limit N          records per page, 1 to 100 (default 20)\n"
		"  --cursor CURSOR    the page after the one that printed it\n"
		"  --source SOURCE    official (the registry, the default) or\n"
		"                     local (the catalog bundled with mcpd,\n"
		"                     whole: no --limit or --cursor)\n"
		"  -h, --help         this text\n",
	.options = discovery_page_options,
	.exec = ctl_catalog_exec,
};
