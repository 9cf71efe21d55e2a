/* SPDX-License-Identifier: ISC */
/* mcpd/token: the bearer token of an agent (or of one of its profiles) for the HTTP front. */
#include <stdlib.h>

#include "mcpd.h"
#include "names.h"

static void
cmd_token_exec(struct request *req, json_t *params)
{
	const char *agent = cmd_string(params, "agent");
	const char *profile = cmd_string(params, "profile");
	const char *token;
	char *cause = NULL, *near;
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
	/* A token's view must be there: a revoke of a removed one is fine. */
	if (profile != NULL && profile_find(agent, profile) == NULL &&
	    !json_is_true(json_object_get(params, "revoke"))) {
		near = profile_did_you_mean(agent, profile);
		control_fail(req, ERRORS_NOT_FOUND,
		    json_pack("{s:s, s:s}", "what", "profile", "profile",
			profile),
		    "no profile %s for agent %s%s (mcpctl profile list shows them)",
		    profile, agent, near);
		free(near);
		return;
	}
	if (json_is_true(json_object_get(params, "revoke")))
		r = tokens_revoke(agent, profile, &revoked, &cause);
	else
		r = tokens_get(agent, profile, &token, &cause);
	if (r < 0)
		control_fail(req, ERRORS_STORAGE, NULL,
		    "cannot save the tokens: %s",
		    cause != NULL ? cause : "unknown error");
	else if (json_is_true(json_object_get(params, "revoke")))
		control_reply(req,
		    json_pack("{s:s, s:s*, s:b}", "agent", agent, "profile",
			profile, "revoked", revoked));
	else
		control_reply(req,
		    json_pack("{s:s, s:s*, s:s, s:b, s:s?}", "agent", agent,
			"profile", profile, "token", token, "created", r == 1,
			"listen", mcpd_opts.listen_http));
	free(cause);
}

static const struct cmd_param cmd_token_params[] = {
	{ "agent", JSON_STRING, false },
	{ "profile", JSON_STRING, false },
	{ "revoke", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_token_entry = {
	"mcpd/token",
	cmd_token_exec,
	cmd_token_params,
	0,
};
