/* SPDX-License-Identifier: ISC */
/* mcpctl upgrade: mcpd execs a new binary, keeping servers and clients. */
#include <limits.h>
#include <stdlib.h>

#include "mcpctl.h"

static const struct option ctl_upgrade_options[] = {
	{ "binary", required_argument, NULL, 'b' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void
ctl_upgrade_print(const json_t *result)
{
	const json_t *not_ready = json_object_get(result, "not_ready"), *e;
	size_t i;

	printf(
	    "mcpd upgraded from %s to %s in place (pid %lld, %lld servers kept, clients paused %lld ms, servers ready after %lld ms)\n",
	    json_string_value(json_object_get(result, "from")),
	    json_string_value(json_object_get(result, "to")),
	    (long long)json_integer_value(json_object_get(result, "pid")),
	    (long long)json_integer_value(json_object_get(result, "servers")),
	    (long long)json_integer_value(json_object_get(result, "pause_ms")),
	    (long long)json_integer_value(json_object_get(result, "ready_ms")));
	json_array_foreach(not_ready, i, e)
		printf("not ready again: %s (mcpctl list says why)\n",
		    json_string_value(e));
}

static int
ctl_upgrade_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	char path[PATH_MAX];
	const char *binary = NULL;
	json_t *params;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":b:h", ctl_upgrade_options)) !=
	    -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c != 'b')
			return mcpctl_bad_option(cmd, c, argv);
		binary = optarg;
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0)
		return r;
	/* mcpd runs the path as it is: a relative one is made whole here. */
	if (binary != NULL && binary[0] != '/' &&
	    realpath(binary, path) != NULL)
		binary = path;
	params = binary != NULL ? json_pack("{s:s}", "binary", binary) :
				  json_object();
	return mcpctl_run(m, "mcpd/upgrade", params, ctl_upgrade_print);
}

const struct mcpctl_cmd ctl_upgrade_cmd = {
	.name = "upgrade",
	.synopsis = "[--binary PATH]",
	.summary =
	    "replace the running mcpd with a new binary, keeping servers and clients",
	.help =
	    "  -b, --binary PATH  the new mcpd (default: the running one's\n"
	    "                     path, as it is on disk now)\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "mcpd checks that the new binary starts and reads its state,\n"
	    "stops reading clients, waits for what is in flight to end\n"
	    "(--upgrade-drain, 10 s), then execs it with its listening\n"
	    "sockets, its clients' connections, its HTTP sessions and its\n"
	    "process servers' pipes: no server restarts, no client\n"
	    "reconnects. Any failure leaves the running mcpd as it was.\n",
	.exec = ctl_upgrade_exec,
	.options = ctl_upgrade_options,
};
