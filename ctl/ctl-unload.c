/* SPDX-License-Identifier: ISC */
/* mcpctl unload: stop a server and forget it. */
#include <stdlib.h>
#include <string.h>

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
	{ "failed", no_argument, NULL, 'f' },
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

/*
 * Every server of the agent, or only its failed ones, by id; the worst
 * exit status.
 */
static int
ctl_unload_all(struct mcpctl *m, bool is_failed_only)
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
		if (!is_failed_only ||
		    strcmp(json_string_value(json_object_get(row, "state")) ?:
									      "",
			"failed") == 0)
			json_array_append(ids, json_object_get(row, "id"));
	json_decref(result);
	if (json_array_size(ids) == 0 && !m->is_json)
		printf(is_failed_only ? "no failed servers to unload\n" :
					"no servers to unload\n");
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
	bool is_all = false, is_failed = false;
	int c, r, worst = 0;

	while ((c = mcpctl_getopt(argc, argv, ":h", ctl_unload_options)) !=
	    -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c == 'a')
			is_all = true;
		else if (c == 'f')
			is_failed = true;
		else
			return mcpctl_bad_option(cmd, c, argv);
	}
	if (is_all && is_failed)
		return mcpctl_usage(cmd,
		    "--failed and --all are two choices; give one");
	if ((is_all || is_failed) && optind < argc)
		return mcpctl_usage(cmd, "%s takes no TARGET, not '%s'",
		    is_all ? "--all" : "--failed", argv[optind]);
	if (is_all || is_failed)
		return ctl_unload_all(m, is_failed);
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
	.synopsis = "TARGET... | --all | --failed",
	.summary =
	    "stop servers (by name, id, endpoint or container) and forget them",
	.help =
	    "  --all              every server of the agent\n"
	    "  --failed           every failed server of the agent (saved ones\n"
	    "                     whose start failed, and their rows)\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "Each TARGET is unloaded in turn, one line each; the exit status\n"
	    "is the worst of them.\n",
	.exec = ctl_unload_exec,
	.alias = "rm",
	.options = ctl_unload_options,
};
