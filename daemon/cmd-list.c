/* SPDX-License-Identifier: ISC */
/* mcpd/list: every server of the caller's agent (or of all agents). */
#include <string.h>

#include "gateway.h"
#include "mcpd.h"

/*
 * Each ready server's tools' estimated tokens in its agent's whole view
 * (gateway-cost.c), as "tool_tokens".
 */
static void
cmd_list_tokens(json_t *rows)
{
	json_t *costs = json_object(), *row, *cost, *one;
	const char *agent;
	size_t i, j;

	json_array_foreach(rows, i, row) {
		agent = json_string_value(json_object_get(row, "agent"));
		if (agent == NULL)
			continue;
		if ((cost = json_object_get(costs, agent)) == NULL) {
			cost = gateway_cost(agent, NULL);
			json_object_set_new(costs, agent, cost);
		}
		json_array_foreach(json_object_get(cost, "servers"), j, one)
			if (json_equal(json_object_get(one, "server"),
				json_object_get(row, "name")))
				json_object_set(row, "tool_tokens",
				    json_object_get(one, "tokens"));
	}
	json_decref(costs);
}

static void
cmd_list_exec(struct request *req, json_t *params)
{
	bool all = json_is_true(json_object_get(params, "all"));
	const char *agent = all ? NULL : control_agent(req);
	json_t *rows = server_list_rows(agent), *disabled;

	cmd_list_tokens(rows);
	/* Disabled servers are rows only: listed after the running ones. */
	disabled = enable_disabled_rows(agent);
	json_array_extend(rows, disabled);
	json_decref(disabled);
	control_reply(req, json_pack("{s:o}", "servers", rows));
}

static const struct cmd_param cmd_list_params[] = {
	{ "all", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_list_entry = {
	"mcpd/list",
	cmd_list_exec,
	cmd_list_params,
	CMD_STOPPING,
};
