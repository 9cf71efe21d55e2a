/* SPDX-License-Identifier: ISC */
/* mcpd/upgrade: exec a new binary in place, keeping servers and clients. */
#include "mcpd.h"

static void
cmd_upgrade_exec(struct request *req, json_t *params)
{
	upgrade_start(req,
	    json_string_value(json_object_get(params, "binary")));
}

static const struct cmd_param cmd_upgrade_params[] = {
	{ "binary", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_upgrade_entry = {
	"mcpd/upgrade",
	cmd_upgrade_exec,
	cmd_upgrade_params,
	0,
};
