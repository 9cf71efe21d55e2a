/* SPDX-License-Identifier: ISC */
/* mcpctl approve: let a call an ask rule holds go (once, for its session, or always). */
#include <stdio.h>
#include <string.h>

#include "mcpctl.h"

static void
ctl_approve_print(const json_t *result)
{
	const char *scope = json_string_value(json_object_get(result, "scope"));

	printf("%s approval %lld: agent %s's call of %s%s\n",
	    json_is_true(json_object_get(result, "approved")) ? "approved" :
								"denied",
	    (long long)json_integer_value(json_object_get(result, "id")),
	    json_string_value(json_object_get(result, "agent")),
	    json_string_value(json_object_get(result, "tool")),
	    strcmp(scope, "session") == 0 ?
		", and its session's later ones" :
		strcmp(scope, "always") == 0 ?
		", and every later one while its definition stays the same" :
		"");
}

static const struct option ctl_approve_options[] = {
	{ "session", no_argument, NULL, 's' },
	{ "always", no_argument, NULL, 'a' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The ID of argv into params; 0 or the usage status. */
static int
ctl_approve_id(const struct mcpctl_cmd *cmd, int argc, char **argv,
    json_t *params)
{
	json_int_t id;
	int r;

	if ((r = mcpctl_positional(cmd, argc, argv, 1, 1,
		 "ID (mcpctl approvals lists them)")) != 0 ||
	    (r = mcpctl_parse_positive(cmd, "ID", argv[optind], "an approval",
		 &id)) != 0)
		return r;
	json_object_set_new(params, "id", json_integer(id));
	return 0;
}

int
ctl_approve_deny(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params = json_object();
	int r;

	if ((r = mcpctl_parse_plain(cmd, argc, argv)) >= 0 ||
	    (r = ctl_approve_id(cmd, argc, argv, params)) != 0) {
		json_decref(params);
		return r;
	}
	return mcpctl_run(m, "mcpd/deny", params, ctl_approve_print);
}

static int
ctl_approve_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	const char *scope = NULL;
	json_t *params;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":h", ctl_approve_options)) !=
	    -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c != 's' && c != 'a')
			return mcpctl_bad_option(cmd, c, argv);
		if (scope != NULL)
			return mcpctl_usage(cmd,
			    "--session and --always go one at a time");
		scope = c == 's' ? "session" : "always";
	}
	params = json_pack("{s:s}", "scope", scope != NULL ? scope : "once");
	if ((r = ctl_approve_id(cmd, argc, argv, params)) != 0) {
		json_decref(params);
		return r;
	}
	return mcpctl_run(m, "mcpd/approve", params, ctl_approve_print);
}

const struct mcpctl_cmd ctl_approve_cmd = {
	.name = "approve",
	.synopsis = "[--session | --always] ID",
	.summary = "let a call an ask rule holds go",
	.help =
	    "  --session          also the later calls of this tool by the same\n"
	    "                     gateway session\n"
	    "  --always           also every later call of this tool while its\n"
	    "                     definition stays the same (saved in policy.json)\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "ID is what mcpctl approvals says. Without an option, this once.\n"
	    "The call goes on as if a rule allowed it; the audit log says\n"
	    "approval-once, approval-session or approval-always. mcpctl policy\n"
	    "forget AGENT TOOL forgets approvals for always.\n",
	.exec = ctl_approve_exec,
	.options = ctl_approve_options,
};
