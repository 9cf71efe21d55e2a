/* SPDX-License-Identifier: ISC */
/* mcpctl tools: the tools every server offers, by handle. */
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"

#define CTL_TOOLS_WIDTH 100 /* columns a row may take, not on a terminal */

static const struct option ctl_tools_options[] = {
	{ "no-trunc", no_argument, NULL, 'W' },
	{ "cost", no_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Set by --no-trunc: descriptions are not cut. */
static bool ctl_tools_is_wide;

/*
 * The first line of a tool's description, a new string; a held tool's
 * (changed or new since pinned) is not shown: where to look is.
 */
static char *
ctl_tools_summary(const json_t *tool)
{
	const char *d = json_string_value(json_object_get(tool, "description"));
	char *held;

	if (json_is_true(json_object_get(tool, "held"))) {
		if (asprintf(&held, "(held: see mcpctl changes %s)",
			json_string_value(json_object_get(tool, "server"))) < 0)
			return NULL;
		return held;
	}
	if (d == NULL)
		return strdup("");
	d += strspn(d, " \t\r\n");
	return strndup(d, strcspn(d, "\r\n"));
}

static void
ctl_tools_print(const json_t *result)
{
	static const char *const headers[] = { "HANDLE", "DESCRIPTION" };
	const json_t *tools = json_object_get(result, "tools"), *tool;
	struct print_table *t;
	const char *cells[2];
	char *summary;
	size_t i;

	if (json_array_size(tools) == 0) {
		printf(
		    "no tools; see 'mcpctl list' for the servers and their state\n");
		return;
	}
	if ((t = print_table_new(2, headers)) == NULL)
		return;
	if (!ctl_tools_is_wide)
		print_table_set_width(t,
		    print_tty_width() > 0 ? print_tty_width() :
					    CTL_TOOLS_WIDTH);
	json_array_foreach(tools, i, tool) {
		summary = ctl_tools_summary(tool);
		cells[0] = json_string_value(json_object_get(tool, "handle"));
		cells[1] = summary;
		print_table_add(t, cells, NULL);
		free(summary);
	}
	print_table_write(t, stdout);
	print_table_free(t);
}

/* One row of the cost table: tools, bytes, tokens of what a view lists. */
static void
ctl_tools_cost_row(struct print_table *t, const char *what, const json_t *row)
{
	char *cells[4] = { strdup(what),
		print_value(json_object_get(row, "tools")),
		print_value(json_object_get(row, "bytes")),
		print_value(json_object_get(row, "tokens")) };

	print_table_add(t, (const char *const *)cells, NULL);
	for (size_t i = 0; i < 4; i++)
		free(cells[i]);
}

/* What the agent's view lists, per server and in all, and its budget. */
static void
ctl_tools_cost_print(const json_t *result)
{
	static const char *const headers[] = { "SERVER", "TOOLS", "BYTES",
		"TOKENS" };
	const json_t *row, *search = json_object_get(result, "search");
	json_int_t budget = json_integer_value(json_object_get(result,
	    "budget"));
	struct print_table *t;
	size_t i;

	if ((t = print_table_new(4, headers)) == NULL)
		return;
	json_array_foreach(json_object_get(result, "servers"), i, row)
		ctl_tools_cost_row(t,
		    json_string_value(json_object_get(row, "server")), row);
	ctl_tools_cost_row(t, "total", result);
	if (search != NULL)
		ctl_tools_cost_row(t, "listed", search);
	print_table_write(t, stdout);
	print_table_free(t);
	if (budget == 0)
		printf(
		    "budget: none (mcpd --tool-budget 0): every tool is listed\n");
	else if (search == NULL)
		printf("budget: %lld tokens: every tool is listed\n",
		    (long long)budget);
	else
		printf(
		    "budget: %lld tokens, exceeded: the view lists its pinned tools, mcpd__find_tools and mcpd__call_tool (the 'listed' row); tools an agent finds are added to its list\n",
		    (long long)budget);
}

static int
ctl_tools_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params;
	bool is_cost = false;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":h", ctl_tools_options)) != -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c == 'c')
			is_cost = true;
		else if (c == 'W')
			ctl_tools_is_wide = true;
		else
			return mcpctl_bad_option(cmd, c, argv);
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 0, is_cost ? 0 : 1, "")) !=
	    0)
		return r;
	if (is_cost)
		return mcpctl_run(m, "mcpd/tools",
		    json_pack("{s:b}", "cost", 1), ctl_tools_cost_print);
	params = json_object();
	if (optind < argc)
		json_object_set_new(params, "server",
		    json_string(argv[optind]));
	return mcpctl_run(m, "mcpd/tools", params, ctl_tools_print);
}

const struct mcpctl_cmd ctl_tools_cmd = {
	.name = "tools",
	.synopsis = "[SERVER] [--no-trunc] | --cost",
	.summary =
	    "list the tools of every server, or of one, by handle (--cost: their cost)",
	.help =
	    "  --no-trunc         the first line of each description, whole\n"
	    "                     (else cut with ... to the terminal's width,\n"
	    "                     or to 100 columns when not on a terminal)\n"
	    "  --cost             what the agent's view lists costs: tools,\n"
	    "                     bytes and estimated tokens (bytes/4) per\n"
	    "                     server and in all, against mcpd's\n"
	    "                     --tool-budget\n"
	    "  -h, --help         this text\n",
	.options = ctl_tools_options,
	.exec = ctl_tools_exec,
};
