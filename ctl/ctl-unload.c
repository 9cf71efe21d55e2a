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

static int
ctl_unload_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	int r;

	if ((r = mcpctl_parse_plain(cmd, argc, argv)) >= 0 ||
	    (r = mcpctl_positional(cmd, argc, argv, 1, 1, MCPCTL_TARGET)) != 0)
		return r;
	return mcpctl_run(m, "mcpd/unload",
	    json_pack("{s:s}", "target", argv[optind]), ctl_unload_print);
}

const struct mcpctl_cmd ctl_unload_cmd = {
	.name = "unload",
	.synopsis = "TARGET",
	.summary =
	    "stop a server (by name, id, endpoint or container) and forget it",
	.help = "  -h, --help         this text\n",
	.exec = ctl_unload_exec,
};
