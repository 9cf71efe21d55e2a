/* SPDX-License-Identifier: ISC */
/* mcpctl search: servers of the registry (or the local catalog) by name. */
#include "mcpctl.h"

static const struct option ctl_search_options[] = {
	{ "limit", required_argument, NULL, 'n' },
	{ "cursor", required_argument, NULL, 'c' },
	{ "source", required_argument, NULL, 'S' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int
ctl_search_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params = json_object();
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":h", ctl_search_options)) !=
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
	if ((r = mcpctl_positional(cmd, argc, argv, 1, 1,
		 "QUERY (words of a server's name)")) != 0) {
		json_decref(params);
		return r;
	}
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
	.options = ctl_search_options,
	.exec = ctl_search_exec,
};
