/* SPDX-License-Identifier: ISC */
/* mcpctl accept: a server's held tool definitions become its pins. */
#include <stdio.h>

#include "mcpctl.h"

static void
ctl_accept_print(const json_t *result)
{
	const char *server = json_string_value(json_object_get(result,
	    "server"));
	const json_t *accepted = json_object_get(result, "accepted"), *t;
	size_t i;

	if (json_array_size(accepted) == 0) {
		printf("%s holds no tools: nothing to accept\n", server);
		return;
	}
	json_array_foreach(accepted, i, t)
		printf("accepted %s %s\n", server, json_string_value(t));
}

static int
ctl_accept_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	int r;

	if ((r = mcpctl_parse_plain(cmd, argc, argv)) >= 0)
		return r;
	if ((r = mcpctl_positional(cmd, argc, argv, 1, 2,
		 "SERVER and, optionally, one TOOL")) != 0)
		return r;
	return mcpctl_run(m, "mcpd/accept",
	    json_pack("{s:s, s:s*}", "server", argv[optind], "tool",
		optind + 1 < argc ? argv[optind + 1] : NULL),
	    ctl_accept_print);
}

const struct mcpctl_cmd ctl_accept_cmd = {
	.name = "accept",
	.synopsis = "SERVER [TOOL]",
	.summary = "take the changed or new definitions of held tools",
	.help =
	    "  -h, --help         this text\n"
	    "\n"
	    "The definitions SERVER lists now of its held tools (TOOL, or every\n"
	    "held one; see mcpctl changes) become their pins, written to\n"
	    "pins.json and read back before this says so; agents' sessions then\n"
	    "list them again (notifications/tools/list_changed). If the state\n"
	    "directory cannot be written, nothing is accepted (storage).\n",
	.exec = ctl_accept_exec,
};
