/* SPDX-License-Identifier: ISC */
/* mcpd/approve and mcpd/deny: answer a call an ask rule holds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mcpd.h"

/* Answers params.id as scope; not-found when no call waits under it. */
static void
cmd_approve_answer(struct request *req, json_t *params,
    enum policy_ask_scope scope)
{
	json_int_t id = json_integer_value(json_object_get(params, "id"));
	json_t *done;
	char *cause = NULL;
	int r = policy_ask_answer(id, scope, &done, &cause);

	if (r == -ENOENT)
		control_fail(req, ERRORS_NOT_FOUND,
		    json_pack("{s:s, s:I}", "what", "approval", "id", id), "%s",
		    cause);
	else if (r == -EINVAL)
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "scope"), "%s", cause);
	else if (r < 0)
		control_fail(req, ERRORS_STORAGE, NULL,
		    "cannot save the approval: %s; approval %lld still waits",
		    cause != NULL ? cause : "unknown error", (long long)id);
	else
		control_reply(req, done);
	free(cause);
}

static void
cmd_approve_exec(struct request *req, json_t *params)
{
	const char *scope = cmd_string(params, "scope");

	if (scope == NULL || strcmp(scope, "once") == 0)
		cmd_approve_answer(req, params, POLICY_ASK_ONCE);
	else if (strcmp(scope, "session") == 0)
		cmd_approve_answer(req, params, POLICY_ASK_SESSION);
	else if (strcmp(scope, "always") == 0)
		cmd_approve_answer(req, params, POLICY_ASK_ALWAYS);
	else
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "scope"),
		    "scope is once, session or always");
}

static void
cmd_deny_exec(struct request *req, json_t *params)
{
	cmd_approve_answer(req, params, POLICY_ASK_DENY);
}

static const struct cmd_param cmd_approve_params[] = {
	{ "id", JSON_INTEGER, true },
	{ "scope", JSON_STRING, false },
	{ NULL, 0, false },
};

static const struct cmd_param cmd_deny_params[] = {
	{ "id", JSON_INTEGER, true },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_approve_entry = {
	"mcpd/approve",
	cmd_approve_exec,
	cmd_approve_params,
	0,
};

const struct cmd_entry cmd_deny_entry = {
	"mcpd/deny",
	cmd_deny_exec,
	cmd_deny_params,
	0,
};
