/* SPDX-License-Identifier: ISC */
/* mcpd/registry-info: the record of one version of one server. */
#include <string.h>

#include "mcpd.h"

static void
cmd_registry_info_exec(struct request *req, json_t *params)
{
	struct registry_query q = { 0 };

	q.name = cmd_string(params, "name");
	q.version = cmd_string(params, "version");
	if (q.version == NULL)
		q.version = "latest";
	if (q.name[0] == '\0' || q.version[0] == '\0') {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field",
			q.name[0] == '\0' ? "name" : "version"),
		    "%s is empty", q.name[0] == '\0' ? "name" : "version");
		return;
	}
	/* The contract's bounds: nothing longer can be a record's. */
	if (strlen(q.name) > 200 || strlen(q.version) > 255) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field",
			strlen(q.name) > 200 ? "name" : "version"),
		    "%s is longer than the registry allows (%d characters)",
		    strlen(q.name) > 200 ? "name" : "version",
		    strlen(q.name) > 200 ? 200 : 255);
		return;
	}
	if (!registry_source_parse(req, params, true, &q.source))
		return;
	registry_info(req, &q);
}

static const struct cmd_param cmd_registry_info_params[] = {
	{ "name", JSON_STRING, true },
	{ "version", JSON_STRING, false },
	{ "source", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_registry_info_entry = {
	"mcpd/registry-info",
	cmd_registry_info_exec,
	cmd_registry_info_params,
	0,
};
