/* SPDX-License-Identifier: ISC */
/* mcpctl deny: refuse a call an ask rule holds. */
#include "mcpctl.h"

static int
ctl_deny_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	return ctl_approve_deny(m, cmd, argc, argv);
}

const struct mcpctl_cmd ctl_deny_cmd = {
	.name = "deny",
	.synopsis = "ID",
	.summary = "refuse a call an ask rule holds",
	.help = "  -h, --help         this text\n"
		"\n"
		"ID is what mcpctl approvals says. The call fails with denied\n"
		"(-32003) and nothing is sent.\n",
	.exec = ctl_deny_exec,
};
