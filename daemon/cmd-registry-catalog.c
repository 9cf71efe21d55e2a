/* SPDX-License-Identifier: ISC */
/* mcpd/registry-catalog: one page of every server, latest versions only. */
#include "mcpd.h"

static void
cmd_registry_catalog_exec(struct request *req, json_t *params)
{
	struct registry_query q = { 0 };

	if (!registry_source_parse(req, params, false, &q.source) ||
	    !registry_page_parse(req, params, q.source, &q.limit, &q.cursor))
		return;
	registry_list(req, &q);
}

static const struct cmd_param cmd_registry_catalog_params[] = {
	{ "source", JSON_STRING, false },
	{ "limit", JSON_INTEGER, false },
	{ "cursor", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_registry_catalog_entry = {
	"mcpd/registry-catalog",
	cmd_registry_catalog_exec,
	cmd_registry_catalog_params,
	0,
};
