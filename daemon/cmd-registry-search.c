/* SPDX-License-Identifier: ISC */
/* mcpd/registry-search: one page of servers whose name holds the words. */
#include "mcpd.h"

static void
cmd_registry_search_exec(struct request *req, json_t *params)
{
	struct registry_query q = { 0 };

	q.search = cmd_string(params, "search");
	if (q.search[0] == '\0') {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "search"),
		    "search is empty; mcpd/registry-catalog lists every server");
		return;
	}
	if (!registry_source_parse(req, params, false, &q.source) ||
	    !registry_page_parse(req, params, q.source, &q.limit, &q.cursor))
		return;
	registry_list(req, &q);
}

static const struct cmd_param cmd_registry_search_params[] = {
	{ "search", JSON_STRING, true },
	{ "source", JSON_STRING, false },
	{ "limit", JSON_INTEGER, false },
	{ "cursor", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_registry_search_entry = {
	"mcpd/registry-search",
	cmd_registry_search_exec,
	cmd_registry_search_params,
	0,
};
