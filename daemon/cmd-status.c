/* SPDX-License-Identifier: ISC */
/* mcpd/status: what the daemon is, where it lives, and its limits. */
#include <stdlib.h>
#include <unistd.h>

#include "mcpd.h"

static void
cmd_status_exec(struct request *req, json_t *params)
{
	size_t ready, total = server_count(&ready);
	char *cause = NULL;
	bool has_docker = docker_available(&cause) == 0;
	json_t *docker = json_pack("{s:s, s:b, s:b, s:o}", "program",
	    docker_program(), "available", has_docker, "checked", 1, "error",
	    cause != NULL ? json_string(cause) : json_null());

	(void)params;
	free(cause);
	control_reply(req,
	    json_pack(
		"{s:s, s:I, s:s, s:I, s:s, s:s, "
		"s:o, s:{s:I, s:I}, s:I, s:b, s:{s:I, s:i, s:i, s:I, s:I, "
		"s:I, s:I}}",
		"version", MCPD_VERSION, "pid", (json_int_t)getpid(), "did",
		identity_did(), "uptime_s",
		(json_int_t)((mcpd_now_ms() - mcpd_started_ms) / 1000),
		"socket", mcpd_opts.socket_path, "state_dir",
		mcpd_opts.state_dir, "docker", docker, "servers", "total",
		(json_int_t)total, "ready", (json_int_t)ready, "clients",
		(json_int_t)control_client_count(), "stopping",
		mcpd_is_stopping(), "limits", "max_message",
		(json_int_t)mcpd_opts.max_message, "call_timeout_ms",
		mcpd_opts.call_timeout_ms, "load_timeout_ms",
		mcpd_opts.load_timeout_ms, "max_clients",
		(json_int_t)mcpd_opts.max_clients, "max_client_requests",
		(json_int_t)mcpd_opts.max_client_requests, "max_client_output",
		(json_int_t)mcpd_opts.max_client_output, "log_lines",
		(json_int_t)mcpd_opts.log_lines));
}

static const struct cmd_param cmd_status_params[] = {
	{ NULL, 0, false },
};

const struct cmd_entry cmd_status_entry = {
	"mcpd/status",
	cmd_status_exec,
	cmd_status_params,
	CMD_STOPPING,
};
