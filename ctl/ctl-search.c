/* SPDX-License-Identifier: ISC */
/* mcpctl search: servers of the registry (or the local catalog) by name. */
#include "mcpctl.h"

static int
ctl_search_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params;
	int r;

	if (!discovery_page_params(cmd, argc, argv, 1,
		"QUERY (words of a server's name)", &params, &r))
		return r;
	if (argv[optind][0] == '\0') {
		json_decref(params);
		return mcpctl_usage(cmd,
		    "QUERY is empty; 'mcpctl catalog' lists every server");
	}
	json_object_set_new(params, "search", json_string(argv[optind]));
	return mcpctl_run(m, "mcpd/registry-search", params,
	    discovery_print_page);
}

const struct mcpctl_cmd ctl_search_cmd = {
	.name = "search",
	.synopsis =
	    "QUERY [--limit N] [--cursor CURSOR] [--source official|local]",
	.summary =
	    "find servers in the MCP Registry (latest versions), or in the local catalog",
	.help =
	    "  --limit N          records per page, 1 to 100 (default 20)\n"
	    "  --cursor CURSOR    the page after the one that printed it\n"
	    "  --source SOURCE    official (the registry, the default) or\n"
	    "                     local (the catalog bundled with mcpd, by\n"
	    "                     name, category or capability, whole: no\n"
	    "                     --limit or --cursor)\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "Records that do not conform to the registry's contract are\n"
	    "listed as rejected with their problems; --json prints mcpd's\n"
	    "answer with the registry's whole page (response).\n",
	.options = discovery_page_options,
	.exec = ctl_search_exec,
};
