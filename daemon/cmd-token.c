/* SPDX-License-Identifier: ISC */
/* mcpd/token: the bearer token of an agent for the HTTP front. */
#include <stdlib.h>

#include "mcpd.h"
#include "names.h"

static void
cmd_token_exec(struct request *req, json_t *params)
{
	const char *agent = cmd_string(params, "agent");
	const char *token;
	char *cause = NULL;
	bool revoked;
	int r;

	if (agent != NULL && !names_valid(agent)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "agent"),
		    "agent must match [A-Za-z0-9][A-Za-z0-9_-]{0,62}");
		return;
	}
	if (agent == NULL)
		agent = control_agent(req);
	if (json_is_true(json_object_get(params, "revoke")))
		r = tokens_revoke(agent, &revoked, &cause);
	else
		r = tokens_get(agent, &token, &cause);
	if (r < 0)
		control_fail(req, ERRORS_STORAGE, NULL,
		    "cannot save the tokens: %s",
		    cause != NULL ? cause : "unknown error");
	else if (json_is_true(json_object_get(params, "revoke")))
		control_reply(req,
		    json_pack("{s:s, s:b}", "agent", agent, "revoked",
			revoked));
	else
		control_reply(req,
		    json_pack("{s:s, s:s, s:b, s:s?}", "agent", agent, "token",
			token, "created", r == 1, "listen",
			mcpd_opts.listen_http));
	free(cause);
}

static const struct cmd_param cmd_token_params[] = {
	{ "agent", JSON_STRING, false },
	{ "revoke", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_token_entry = {
	"mcpd/token",
	cmd_token_exec,
	cmd_token_params,
	0,
};
