/* SPDX-License-Identifier: ISC */
/* mcpctl info: everything the registry says of one version of a server. */
#include <string.h>

#include "mcpctl.h"

static const struct option ctl_info_options[] = {
	{ "source", required_argument, NULL, 'S' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int
ctl_info_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params = json_object(), *result;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":h", ctl_info_options)) != -1) {
		if (c == 'h') {
			json_decref(params);
			return mcpctl_help(cmd);
		}
		if (c != 'S') {
			json_decref(params);
			return mcpctl_bad_option(cmd, c, argv);
		}
		if (strcmp(optarg, "official") != 0 &&
		    strcmp(optarg, "local") != 0 &&
		    strcmp(optarg, "any") != 0) {
			json_decref(params);
			return mcpctl_usage(cmd,
			    "--source is official, local or any, not '%s'",
			    optarg);
		}
		json_object_set_new(params, "source", json_string(optarg));
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 1, 2,
		 "NAME (a registry name, such as io.github.owner/server)")) !=
	    0) {
		json_decref(params);
		return r;
	}
	json_object_set_new(params, "name", json_string(argv[optind]));
	if (optind + 1 < argc)
		json_object_set_new(params, "version",
		    json_string(argv[optind + 1]));
	if ((r = mcpctl_request(m, "mcpd/registry-info", params, &result)) != 0)
		return r;
	if (m->is_json)
		print_json(result);
	else
		discovery_print_record(result);
	/* A record that does not conform was not shown: nothing to use. */
	r = json_is_object(json_object_get(result, "record")) ?
	    MCPCTL_EXIT_OK :
	    MCPCTL_EXIT_ERROR;
	if (r != MCPCTL_EXIT_OK && !m->is_json)
		print_err(
		    "the record does not conform to the registry's contract; --json has it");
	json_decref(result);
	return r;
}

const struct mcpctl_cmd ctl_info_cmd = {
	.name = "info",
	.synopsis = "NAME [VERSION|latest] [--source official|local|any]",
	.summary =
	    "show one server of the MCP Registry: its packages, remotes, and what they ask for",
	.help =
	    "  --source SOURCE    official (the registry, the default), local\n"
	    "                     (the catalog bundled with mcpd), or any (the\n"
	    "                     registry's, else the local one when the\n"
	    "                     registry answers that it has no such server)\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "Exit status 1 when the record does not conform to the registry's\n"
	    "contract (its problems are printed instead).\n",
	.options = ctl_info_options,
	.exec = ctl_info_exec,
};
