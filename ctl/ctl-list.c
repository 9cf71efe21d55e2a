/* SPDX-License-Identifier: ISC */
/* mcpctl list: the servers mcpd runs, one table row each. */
#define _GNU_SOURCE 1 /* asprintf */
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"
#include "xalloc.h"

#define CTL_LIST_NCOLS 11 /* AGENT, then what every listing shows */

static const struct option ctl_list_options[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "wide", no_argument, NULL, 'w' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* "container" is the row's container name, filled in by ctl_list_row. */
static const char *const ctl_list_keys[CTL_LIST_NCOLS] = { "agent", "name",
	"state", "transport", "tools", "tool_tokens", "generation", "restarts",
	"id", "container", "endpoint" };

static const char *const ctl_list_headers[CTL_LIST_NCOLS] = { "AGENT", "NAME",
	"STATE", "TRANSPORT", "TOOLS", "TOKENS", "GEN", "RESTARTS", "ID",
	"CONTAINER", "ENDPOINT" };

/* Set by the --all flag: whether the AGENT column is shown. */
static bool ctl_list_is_all;
/* Set by --wide: nothing is cut to fit the terminal. */
static bool ctl_list_is_wide;

/* An on-demand server that runs says when it stops: "ready, stops in 9m". */
static char *
ctl_list_state(const json_t *row, char *state)
{
	const json_t *in = json_object_get(row, "stops_in_ms");
	long long s = (long long)(json_integer_value(in) + 999) / 1000;
	char *text;

	if (!json_is_integer(in))
		return state;
	if (s < 60)
		xasprintf(&text, "%s, stops in %llds", state, s);
	else if (s < 3600)
		xasprintf(&text, "%s, stops in %lldm", state, (s + 59) / 60);
	else
		xasprintf(&text, "%s, stops in %lldh", state,
		    (s + 3599) / 3600);
	free(state);
	return text;
}

static void
ctl_list_row(struct print_table *t, const json_t *row, size_t first)
{
	const json_t *ct = json_object_get(row, "container");
	char *cells[CTL_LIST_NCOLS], *note = NULL, *ago;
	const char *at, *err = print_row_error(row, &at);

	const char *state = json_string_value(json_object_get(row, "state"));
	const char *auth = json_string_value(json_object_get(row, "auth"));

	for (size_t i = first; i < CTL_LIST_NCOLS; i++)
		cells[i] = print_value(strcmp(ctl_list_keys[i], "container") ?
			json_object_get(row, ctl_list_keys[i]) :
			json_object_get(ct, "name"));
	/* A remote server that failed for want of an OAuth login says so. */
	if (state != NULL && strcmp(state, "failed") == 0 && auth != NULL &&
	    (strcmp(auth, "needs-login") == 0 ||
		strcmp(auth, "pending") == 0)) {
		free(cells[2]);
		cells[2] = strdup("needs-login");
	}
	cells[2] = ctl_list_state(row, cells[2]);
	ago = at != NULL ? print_ago(at) : NULL;
	if (err != NULL &&
	    asprintf(&note, "error%s%s%s: %s", ago != NULL ? " (" : "",
		ago != NULL ? ago : "", ago != NULL ? ")" : "", err) < 0)
		note = NULL;
	free(ago);
	print_table_add(t, (const char *const *)cells + first, note);
	for (size_t i = first; i < CTL_LIST_NCOLS; i++)
		free(cells[i]);
	free(note);
}

static void
ctl_list_print(const json_t *result)
{
	const json_t *servers = json_object_get(result, "servers"), *row;
	size_t first = ctl_list_is_all ? 0 : 1, i;
	struct print_table *t;

	if (json_array_size(servers) == 0) {
		printf(
		    "no servers loaded; add one with: mcpctl load -- CMD [ARGS...]\n");
		return;
	}
	t = print_table_new(CTL_LIST_NCOLS - first, ctl_list_headers + first);
	if (t == NULL)
		return;
	if (!ctl_list_is_wide)
		print_table_set_width(t, print_tty_width());
	json_array_foreach(servers, i, row)
		ctl_list_row(t, row, first);
	print_table_write(t, stdout);
	print_table_free(t);
}

static int
ctl_list_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":hw", ctl_list_options)) != -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c == 'w')
			ctl_list_is_wide = true;
		else if (c == 'a')
			ctl_list_is_all = true;
		else
			return mcpctl_bad_option(cmd, c, argv);
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0)
		return r;
	params = json_object();
	if (ctl_list_is_all)
		json_object_set_new(params, "all", json_true());
	return mcpctl_run(m, "mcpd/list", params, ctl_list_print);
}

const struct mcpctl_cmd ctl_list_cmd = {
	.name = "list",
	.synopsis = "[--all] [-w]",
	.summary = "list the servers, their state, tools and last error",
	.help =
	    "  --all              every agent's servers, with an AGENT column\n"
	    "  -w, --wide         cut nothing (on a terminal, columns are cut\n"
	    "                     with ... to fit its width)\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "A server's last error is shown under its row, with when it\n"
	    "happened (\"error (2m ago): ...\"): the error's own time when\n"
	    "mcpd gives it, else, for a server that is not ready, when it\n"
	    "entered its state. An error of an older generation than the\n"
	    "current one is left out when mcpd says which it belongs to.\n"
	    "\n"
	    "STATE idle is a server loaded --on-demand that is stopped on\n"
	    "purpose: its tools are kept and listed, and the first call starts\n"
	    "it. A running on-demand server says when it stops if no call\n"
	    "comes (\"ready, stops in 9m\"); --json gives on_demand,\n"
	    "idle_stop_ms, stops_at and stops_in_ms.\n",
	.exec = ctl_list_exec,
	.alias = "ls",
	.options = ctl_list_options,
};
