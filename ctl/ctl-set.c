/* SPDX-License-Identifier: ISC */
/* mcpctl set: whether a server runs always or on demand. */
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"

enum {
	CTL_SET_IDLE_STOP = 256,
};

static const struct option ctl_set_options[] = {
	{ "idle-stop", required_argument, NULL, CTL_SET_IDLE_STOP },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void
ctl_set_print(const json_t *result)
{
	char *name = print_value(json_object_get(result, "name"));
	json_int_t ms = json_integer_value(json_object_get(result,
	    "idle_stop_ms"));
	char *idle = print_duration(ms);

	if (json_is_true(json_object_get(result, "on_demand")) && ms > 0)
		printf("%s runs on demand: it stops after %s without a call\n",
		    name, idle);
	else if (json_is_true(json_object_get(result, "on_demand")))
		printf(
		    "%s runs on demand: it starts at its first call and never stops by itself\n",
		    name);
	else
		printf("%s runs always\n", name);
	if (json_is_false(json_object_get(result, "persistent")))
		printf("(not saved: it was loaded with --no-persist)\n");
	free(name);
	free(idle);
}

static int
ctl_set_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_int_t ms = -1;
	json_t *params;
	const char *how;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":h", ctl_set_options)) != -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c != CTL_SET_IDLE_STOP)
			return mcpctl_bad_option(cmd, c, argv);
		if ((r = mcpctl_parse_duration(cmd, "--idle-stop", optarg,
			 &ms)) != 0)
			return r;
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 2, 2,
		 "SERVER (a name or id; see 'mcpctl list') and on-demand or always")) !=
	    0)
		return r;
	how = argv[optind + 1];
	if (strcmp(how, "on-demand") != 0 && strcmp(how, "always") != 0)
		return mcpctl_usage(cmd,
		    "a server runs on-demand or always, not '%s'", how);
	if (ms >= 0 && strcmp(how, "always") == 0)
		return mcpctl_usage(cmd,
		    "--idle-stop goes with on-demand: a server that runs always does not stop");
	params = json_pack("{s:s, s:b}", "target", argv[optind], "on_demand",
	    strcmp(how, "on-demand") == 0);
	if (ms >= 0)
		json_object_set_new(params, "idle_stop_ms", json_integer(ms));
	return mcpctl_run(m, "mcpd/set", params, ctl_set_print);
}

const struct mcpctl_cmd ctl_set_cmd = {
	.name = "set",
	.synopsis = "SERVER on-demand [--idle-stop DURATION] | SERVER always",
	.summary = "run a server always or on demand (saved)",
	.help =
	    "  --idle-stop DURATION\n"
	    "                     stop it after DURATION without a call (500ms,\n"
	    "                     30s, 10m, 2h; 0 or never: never); default 10m\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "on-demand: the server is stopped when idle (state idle, its tools,\n"
	    "prompts and resources kept and still listed) and started again by\n"
	    "the first call that needs it. always: it runs all the time; an idle\n"
	    "server starts now. The saved row changes first (written and read\n"
	    "back); if it cannot, nothing changes.\n",
	.exec = ctl_set_exec,
	.options = ctl_set_options,
};
