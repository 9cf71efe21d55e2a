/* SPDX-License-Identifier: ISC */
/* mcpctl logs: the last stderr lines of one server. */

#include "mcpctl.h"

static const struct option ctl_logs_options[] = {
	{ "lines", required_argument, NULL, 'n' },
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

static int
ctl_logs_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_int_t lines = 0;
	json_t *params;
	int c, r = 0;

	while (r == 0 &&
	    (c = mcpctl_getopt(argc, argv, ":n:h", ctl_logs_options)) != -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c != 'n')
			return mcpctl_bad_option(cmd, c, argv);
		r = mcpctl_parse_positive(cmd, "-n", optarg, "lines", &lines);
	}
	if (r != 0 ||
	    (r = mcpctl_positional(cmd, argc, argv, 1, 1, "SERVER")) != 0)
		return r;
	params = json_pack("{s:s}", "server", argv[optind]);
	if (lines > 0)
		json_object_set_new(params, "lines", json_integer(lines));
	return mcpctl_run(m, "mcpd/logs", params, ctl_logs_print);
}

const struct mcpctl_cmd ctl_logs_cmd = {
	.name = "logs",
	.synopsis = "SERVER [-n LINES]",
	.summary = "print the last lines the server wrote to its stderr",
	.help = "  -n, --lines LINES  how many lines (default 100)\n"
		"  -h, --help         this text\n",
	.exec = ctl_logs_exec,
};
