/* SPDX-License-Identifier: ISC */
/* mcpctl rename: give a server a new name without stopping it. */
#include <stdlib.h>

#include "mcpctl.h"

static void
ctl_rename_print(const json_t *result)
{
	char *old = print_value(json_object_get(result, "old_name"));
	char *name = print_value(json_object_get(result, "name"));
	const json_t *container = json_object_get(result, "container");

	printf("renamed %s to %s", old, name);
	if (json_is_string(container))
		printf(" (container %s)", json_string_value(container));
	printf("\n");
	free(old);
	free(name);
}

static int
ctl_rename_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	int r;

	if ((r = mcpctl_parse_plain(cmd, argc, argv)) >= 0)
		return r;
	if ((r = mcpctl_positional(cmd, argc, argv, 2, 2,
		 "OLD (a name or id; see 'mcpctl list') and NEW")) != 0)
		return r;
	return mcpctl_run(m, "mcpd/rename",
	    json_pack("{s:s, s:s}", "target", argv[optind], "name",
		argv[optind + 1]),
	    ctl_rename_print);
}

const struct mcpctl_cmd ctl_rename_cmd = {
	.name = "rename",
	.synopsis = "OLD NEW",
	.summary = "rename a server (its saved row and its tools' prefix)",
	.help =
	    "  -h, --help         this text\n"
	    "\n"
	    "A running server keeps running: its saved row takes the new name\n"
	    "(written and read back), agents' sessions see its tools under the\n"
	    "new name (notifications/tools/list_changed), and a container is\n"
	    "renamed with docker rename. NEW must be free and match\n"
	    "[A-Za-z0-9][A-Za-z0-9_-]{0,62}.\n",
	.exec = ctl_rename_exec,
};
