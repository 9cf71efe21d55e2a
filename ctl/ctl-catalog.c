/* SPDX-License-Identifier: ISC */
/* mcpctl catalog: every server of the registry, or of the local catalog. */
#include "mcpctl.h"

static const struct option ctl_catalog_options[] = {
	{ "limit", required_argument, NULL, 'n' },
	{ "cursor", required_argument, NULL, 'c' },
	{ "source", required_argument, NULL, 'S' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int
ctl_catalog_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params = json_object();
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":h", ctl_catalog_options)) !=
	    -1) {
		if (c == 'h') {
			json_decref(params);
			return mcpctl_help(cmd);
		}
		if ((r = discovery_page_option(cmd, c, optarg, params)) < 0)
			r = mcpctl_bad_option(cmd, c, argv);
		if (r != 0) {
			json_decref(params);
			return r;
		}
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0) {
		json_decref(params);
		return r;
	}
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
	.options = ctl_catalog_options,
	.exec = ctl_catalog_exec,
};
