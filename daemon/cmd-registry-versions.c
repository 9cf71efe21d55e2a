/* SPDX-License-Identifier: ISC */
/* mcpd/registry-versions: every version the registry lists of a server. */
#include <string.h>

#include "mcpd.h"

static void
cmd_registry_versions_exec(struct request *req, json_t *params)
{
	struct registry_query q = { 0 };

	q.name = cmd_string(params, "name");
	if (q.name[0] == '\0' || strlen(q.name) > 200) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "name"), "%s",
		    q.name[0] == '\0' ?
			"name is empty" :
			"name is longer than the registry allows (200 characters)");
		return;
	}
	q.source = REGISTRY_OFFICIAL;
	registry_versions(req, &q);
}

static const struct cmd_param cmd_registry_versions_params[] = {
	{ "name", JSON_STRING, true },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_registry_versions_entry = {
	"mcpd/registry-versions",
	cmd_registry_versions_exec,
	cmd_registry_versions_params,
	0,
};
