/* SPDX-License-Identifier: ISC */
/* mcpctl approve: let a call an ask rule holds go, this once. */
#include <stdio.h>

#include "mcpctl.h"

static void
ctl_approve_print(const json_t *result)
{
	printf("%s approval %lld: agent %s's call of %s\n",
	    json_is_true(json_object_get(result, "approved")) ? "approved" :
								"denied",
	    (long long)json_integer_value(json_object_get(result, "id")),
	    json_string_value(json_object_get(result, "agent")),
	    json_string_value(json_object_get(result, "tool")));
}

int
ctl_approve_answer(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv, const char *method)
{
	json_int_t id;
	int r;

	if ((r = mcpctl_parse_plain(cmd, argc, argv)) >= 0 ||
	    (r = mcpctl_positional(cmd, argc, argv, 1, 1,
		 "ID (mcpctl approvals lists them)")) != 0 ||
	    (r = mcpctl_parse_positive(cmd, "ID", argv[optind], "an approval",
		 &id)) != 0)
		return r;
	return mcpctl_run(m, method, json_pack("{s:I}", "id", id),
	    ctl_approve_print);
}

static int
ctl_approve_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	return ctl_approve_answer(m, cmd, argc, argv, "mcpd/approve");
}

const struct mcpctl_cmd ctl_approve_cmd = {
	.name = "approve",
	.synopsis = "ID",
	.summary = "let a call an ask rule holds go, this once",
	.help = "  -h, --help         this text\n"
		"\n"
		"ID is what mcpctl approvals says. The call goes on as if a\n"
		"rule allowed it; the audit log says approval-once.\n",
	.exec = ctl_approve_exec,
};
