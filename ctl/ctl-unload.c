/* SPDX-License-Identifier: ISC */
/* mcpctl unload: stop a server and forget it. */
#include <stdlib.h>

#include "mcpctl.h"

static bool
ctl_unload_flag(const json_t *result, const char *key)
{
	return json_is_true(json_object_get(result, key));
}

static void
ctl_unload_print(const json_t *result)
{
	char *name = print_value(json_object_get(result, "name"));
	char *id = print_value(json_object_get(result, "id"));

	printf("unloaded %s (id %s)", name, id);
	if (!ctl_unload_flag(result, "stopped_live"))
		printf(", it was not running");
	if (ctl_unload_flag(result, "removed_saved"))
		printf(", removed from the saved servers");
	if (ctl_unload_flag(result, "container_removed"))
		printf(", container removed");
	printf("\n");
	free(name);
	free(id);
}

static const struct option ctl_unload_options[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Unloads one target; its exit status (said on stderr when not 0). */
static int
ctl_unload_one(struct mcpctl *m, const char *target)
{
	return mcpctl_run(m, "mcpd/unload",
	    json_pack("{s:s}", "target", target), ctl_unload_print);
}

/* Every server of the agent, by id; the worst exit status. */
static int
ctl_unload_all(struct mcpctl *m)
{
	json_t *result, *ids = json_array();
	const json_t *row;
	size_t i;
	int r, worst = 0;

	if ((r = mcpctl_request(m, "mcpd/list", json_object(), &result)) != 0) {
		json_decref(ids);
		return r;
	}
	json_array_foreach(json_object_get(result, "servers"), i, row)
		json_array_append(ids, json_object_get(row, "id"));
	json_decref(result);
	if (json_array_size(ids) == 0 && !m->is_json)
		printf("no servers to unload\n");
	json_array_foreach(ids, i, row) {
		r = ctl_unload_one(m, json_string_value(row));
		if (r > worst)
			worst = r;
		if (r == MCPCTL_EXIT_UNREACHABLE)
			break; /* the others would fail the same way */
	}
	json_decref(ids);
	return worst;
}

static int
ctl_unload_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	bool is_all = false;
	int c, r, worst = 0;

	while ((c = mcpctl_getopt(argc, argv, ":h", ctl_unload_options)) !=
	    -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c != 'a')
			return mcpctl_bad_option(cmd, c, argv);
		is_all = true;
	}
	if (is_all)
		return optind < argc ?
		    mcpctl_usage(cmd, "--all takes no TARGET, not '%s'",
			argv[optind]) :
		    ctl_unload_all(m);
	if ((r = mcpctl_positional(cmd, argc, argv, 1, argc, MCPCTL_TARGET)) !=
	    0)
		return r;
	for (int i = optind; i < argc; i++) {
		r = ctl_unload_one(m, argv[i]);
		if (r > worst)
			worst = r;
		if (r == MCPCTL_EXIT_UNREACHABLE)
			break;
	}
	return worst;
}

const struct mcpctl_cmd ctl_unload_cmd = {
	.name = "unload",
	.synopsis = "TARGET... | --all",
	.summary =
	    "stop servers (by name, id, endpoint or container) and forget them",
	.help =
	    "  --all              every server of the agent\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "Each TARGET is unloaded in turn, one line each; the exit status\n"
	    "is the worst of them.\n",
	.exec = ctl_unload_exec,
	.alias = "rm",
	.options = ctl_unload_options,
};
