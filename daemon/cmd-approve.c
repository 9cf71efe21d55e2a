/* SPDX-License-Identifier: ISC */
/* mcpd/approve and mcpd/deny: answer a call an ask rule holds. */
#include <stdbool.h>

#include "mcpd.h"

/* Answers params.id; not-found when no call waits under it. */
static void
cmd_approve_answer(struct request *req, json_t *params, bool is_approved)
{
	json_int_t id = json_integer_value(json_object_get(params, "id"));
	json_t *done = policy_ask_answer(id, is_approved);

	if (done == NULL) {
		control_fail(req, ERRORS_NOT_FOUND,
		    json_pack("{s:s, s:I}", "what", "approval", "id", id),
		    "no call waits for approval %lld: it was answered, timed out or its caller went (mcpctl approvals lists those that wait)",
		    (long long)id);
		return;
	}
	control_reply(req, done);
}

static void
cmd_approve_exec(struct request *req, json_t *params)
{
	cmd_approve_answer(req, params, true);
}

static void
cmd_deny_exec(struct request *req, json_t *params)
{
	cmd_approve_answer(req, params, false);
}

static const struct cmd_param cmd_approve_params[] = {
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
	cmd_approve_params,
	0,
};
