/* SPDX-License-Identifier: ISC */
/* mcpctl logs: the last stderr lines of one server, and with -f the new ones. */

#include <string.h>

#include "mcpctl.h"

static const struct option ctl_logs_options[] = {
	{ "lines", required_argument, NULL, 'n' },
	{ "follow", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void
ctl_logs_print(const json_t *result)
{
	const json_t *line;
	size_t i;

	json_array_foreach(json_object_get(result, "lines"), i, line)
		if (json_is_string(line))
			print_line(stdout, json_string_value(line));
}

/* An mcpd/log of request id: its line, as it comes (--json: as JSON). */
static void
ctl_logs_follow_print(void *arg, json_int_t id, const char *method,
    const json_t *params)
{
	const json_t *req = json_object_get(params, "request");
	const char *line = json_string_value(json_object_get(params, "line"));
	const bool *is_json = arg;

	if (strcmp(method, "mcpd/log") != 0 || !json_is_integer(req) ||
	    json_integer_value(req) != id || line == NULL)
		return;
	if (*is_json)
		print_json(params);
	else
		print_line(stdout, line);
	fflush(stdout);
}

/* Following ended (the server went, mcpd stops): say why, on stderr. */
static void
ctl_logs_follow_ended(const json_t *result)
{
	const char *why = json_string_value(json_object_get(result, "ended"));

	print_err("stopped following %s: %s",
	    json_string_value(json_object_get(result, "server")),
	    why != NULL ? why : "the daemon ended it");
}

static int
ctl_logs_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_int_t lines = 0;
	json_t *params;
	bool is_follow = false;
	int c, r = 0;

	while (r == 0 &&
	    (c = mcpctl_getopt(argc, argv, ":n:fh", ctl_logs_options)) != -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c == 'f')
			is_follow = true;
		else if (c != 'n')
			return mcpctl_bad_option(cmd, c, argv);
		else
			r = mcpctl_parse_positive(cmd, "-n", optarg, "lines",
			    &lines);
	}
	if (r != 0 ||
	    (r = mcpctl_positional(cmd, argc, argv, 1, 1, "SERVER")) != 0)
		return r;
	params = json_pack("{s:s}", "server", argv[optind]);
	if (lines > 0)
		json_object_set_new(params, "lines", json_integer(lines));
	if (!is_follow)
		return mcpctl_run(m, "mcpd/logs", params, ctl_logs_print);
	json_object_set_new(params, "follow", json_true());
	conn_set_notify(ctl_logs_follow_print, &m->is_json);
	return mcpctl_run(m, "mcpd/logs", params, ctl_logs_follow_ended);
}

const struct mcpctl_cmd ctl_logs_cmd = {
	.name = "logs",
	.synopsis = "SERVER [-n LINES] [-f]",
	.summary = "print the last lines the server wrote to its stderr",
	.help = "  -n, --lines LINES  how many lines (default 100)\n"
		"  -f, --follow       then print each new line as it comes,\n"
		"                     until the server is unloaded or mcpd\n"
		"                     stops (or Ctrl-C)\n"
		"  -h, --help         this text\n",
	.exec = ctl_logs_exec,
};
