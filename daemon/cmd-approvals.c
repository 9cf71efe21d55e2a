/* SPDX-License-Identifier: ISC */
/* mcpd/approvals: the calls an ask rule holds, waiting for an answer. */
#include "mcpd.h"
#include "names.h"

static void
cmd_approvals_exec(struct request *req, json_t *params)
{
	const char *agent = cmd_string(params, "agent");

	if (agent != NULL && !names_valid(agent)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "agent"),
		    "agent must match [A-Za-z0-9][A-Za-z0-9_-]{0,62}");
		return;
	}
	control_reply(req,
	    json_pack("{s:o, s:i}", "approvals", policy_ask_list(agent),
		"timeout_s", mcpd_opts.approval_timeout_s));
}

static const struct cmd_param cmd_approvals_params[] = {
	{ "agent", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_approvals_entry = {
	"mcpd/approvals",
	cmd_approvals_exec,
	cmd_approvals_params,
	0,
};
