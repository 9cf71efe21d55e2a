/* SPDX-License-Identifier: ISC */
/* mcpctl clients: the MCP sessions connected to mcpd, one table row each. */
#define _GNU_SOURCE 1 /* asprintf */
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"

#define CTL_CLIENTS_NCOLS 8

static const struct option ctl_clients_options[] = {
	{ "wide", no_argument, NULL, 'w' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *const ctl_clients_headers[CTL_CLIENTS_NCOLS] = { "AGENT",
	"KIND", "CLIENT", "PEER", "SINCE", "AGE", "CALLS", "VIEW" };

/* Set by --wide: nothing is cut to fit the terminal. */
static bool ctl_clients_is_wide;

/* "pid N (exe)", "pid N" or NULL, from the row's keys for them. */
static char *
ctl_clients_process(const json_t *row, const char *pid_key, const char *exe_key)
{
	const json_t *pid = json_object_get(row, pid_key);
	const char *exe = json_string_value(json_object_get(row, exe_key));
	char *out;

	if (!json_is_integer(pid))
		return NULL;
	if (asprintf(&out, "pid %lld%s%s%s", (long long)json_integer_value(pid),
		exe != NULL ? " (" : "", exe != NULL ? exe : "",
		exe != NULL ? ")" : "") < 0)
		return NULL;
	return out;
}

/*
 * Who is at the other end: a bridge's client process, an HTTP session's
 * address and id, a socket client's process.
 */
static char *
ctl_clients_peer(const json_t *row)
{
	const char *kind = json_string_value(json_object_get(row, "kind"));
	const char *remote = json_string_value(json_object_get(row, "remote"));
	const char *sid = json_string_value(json_object_get(row, "session"));
	char *out;

	if (kind != NULL && strcmp(kind, "bridge") == 0)
		return ctl_clients_process(row, "client_pid", "client_exe");
	if (kind != NULL && strcmp(kind, "http") == 0) {
		if (asprintf(&out, "%s session %s...", remote ? remote : "?",
			sid ? sid : "?") < 0)
			return NULL;
		return out;
	}
	return ctl_clients_process(row, "pid", "exe");
}

/* The servers of its view, comma-separated, or "all". */
static char *
ctl_clients_view(const json_t *view)
{
	const json_t *v;
	size_t i, len = 1;
	char *out;

	if (!json_is_array(view))
		return strdup("all");
	json_array_foreach(view, i, v)
		len += strlen(json_string_value(v) ? json_string_value(v) :
						     "") +
		    1;
	if ((out = calloc(1, len)) == NULL)
		return NULL;
	json_array_foreach(view, i, v) {
		if (i > 0)
			strcat(out, ",");
		strcat(out, json_string_value(v) ? json_string_value(v) : "");
	}
	return out;
}

static void
ctl_clients_row(struct print_table *t, const json_t *row)
{
	const char *since = json_string_value(json_object_get(row, "since"));
	char *cells[CTL_CLIENTS_NCOLS];

	cells[0] = print_value(json_object_get(row, "agent"));
	cells[1] = print_value(json_object_get(row, "kind"));
	cells[2] = print_value(json_object_get(row, "client"));
	cells[3] = ctl_clients_peer(row);
	/* To the second: the milliseconds are for scripts (--json). */
	if (since == NULL || asprintf(&cells[4], "%.19sZ", since) < 0)
		cells[4] = NULL;
	cells[5] = since != NULL ? print_ago(since) : NULL;
	cells[6] = print_value(json_object_get(row, "calls"));
	cells[7] = ctl_clients_view(json_object_get(row, "view"));
	print_table_add(t, (const char *const *)cells, NULL);
	for (size_t i = 0; i < CTL_CLIENTS_NCOLS; i++)
		free(cells[i]);
}

static void
ctl_clients_print(const json_t *result)
{
	const json_t *clients = json_object_get(result, "clients"), *row;
	json_int_t control = json_integer_value(json_object_get(result,
	    "control"));
	struct print_table *t;
	size_t i;

	if (json_array_size(clients) == 0)
		printf("no MCP sessions are connected");
	else if ((t = print_table_new(CTL_CLIENTS_NCOLS,
		      ctl_clients_headers)) != NULL) {
		if (!ctl_clients_is_wide)
			print_table_set_width(t, print_tty_width());
		json_array_foreach(clients, i, row)
			ctl_clients_row(t, row);
		print_table_write(t, stdout);
		print_table_free(t);
	}
	printf("%s%lld connection%s of mcpctl commands (this one included)\n",
	    json_array_size(clients) == 0 ? "; " : "", (long long)control,
	    control == 1 ? "" : "s");
}

static int
ctl_clients_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":hw", ctl_clients_options)) !=
	    -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c == 'w')
			ctl_clients_is_wide = true;
		else
			return mcpctl_bad_option(cmd, c, argv);
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0)
		return r;
	return mcpctl_run(m, "mcpd/clients", json_object(), ctl_clients_print);
}

const struct mcpctl_cmd ctl_clients_cmd = {
	.name = "clients",
	.synopsis = "[-w]",
	.summary =
	    "list the MCP sessions connected to mcpd: bridges, HTTP, socket",
	.help =
	    "  -w, --wide         cut nothing (on a terminal, columns are cut\n"
	    "                     with ... to fit its width)\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "One row per MCP session of every agent: KIND bridge (mcpctl\n"
	    "bridge, PEER the client process that started it, as the kernel\n"
	    "names it), http (PEER its address and the start of its session\n"
	    "id) or socket (an MCP client on the socket, PEER its process);\n"
	    "CLIENT is the clientInfo of its initialize, SINCE when it\n"
	    "connected (UTC), CALLS the tools/call requests it sent, VIEW the\n"
	    "servers it sees. Connections of mcpctl commands are counted,\n"
	    "not listed. --json gives every field (see mcpd-protocol(7)).\n",
	.exec = ctl_clients_exec,
	.options = ctl_clients_options,
};
