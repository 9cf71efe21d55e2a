/* SPDX-License-Identifier: ISC */
/* mcpd/shutdown: stops every server, answers, and exits. */
#include "mcpd.h"

static void
cmd_shutdown_exec(struct request *req, json_t *params)
{
	(void)params;
	mcpd_shutdown(req);
}

static const struct cmd_param cmd_shutdown_params[] = {
	{ NULL, 0, false },
};

const struct cmd_entry cmd_shutdown_entry = {
	"mcpd/shutdown",
	cmd_shutdown_exec,
	cmd_shutdown_params,
	CMD_STOPPING,
};
