/* SPDX-License-Identifier: ISC */
/* mcpd/status: what the daemon is, where it lives, and its limits. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "httpd.h"
#include "log.h"
#include "mcpd.h"

/* The answer, with what is known of docker (stolen). */
static void
cmd_status_reply(struct request *req, json_t *docker)
{
	size_t ready, total = server_count(&ready);
	json_t *status;

	status = xjson(json_pack(
	    "{s:s, s:I, s:s, s:I, s:s, s:s, s:o, s:{s:I, s:I}, s:I, s:b, s:{s:I, s:i, s:i, s:I, s:I, s:I, s:I}}",
	    "version", MCPD_VERSION, "pid", (json_int_t)getpid(), "did",
	    identity_did(), "uptime_s",
	    (json_int_t)((mcpd_now_ms() - mcpd_started_ms) / 1000), "socket",
	    mcpd_opts.socket_path, "state_dir", mcpd_opts.state_dir, "docker",
	    docker, "servers", "total", (json_int_t)total, "ready",
	    (json_int_t)ready, "clients", (json_int_t)control_client_count(),
	    "stopping", mcpd_is_stopping(), "limits", "max_message",
	    (json_int_t)mcpd_opts.max_message, "call_timeout_ms",
	    mcpd_opts.call_timeout_ms, "load_timeout_ms",
	    mcpd_opts.load_timeout_ms, "max_clients",
	    (json_int_t)mcpd_opts.max_clients, "max_client_requests",
	    (json_int_t)mcpd_opts.max_client_requests, "max_client_output",
	    (json_int_t)mcpd_opts.max_client_output, "log_lines",
	    (json_int_t)mcpd_opts.log_lines));
	/* Idle on-demand servers: stopped on purpose, not lost. */
	json_object_set_new(json_object_get(status, "servers"), "idle",
	    json_integer((json_int_t)server_count_idle()));
	/* Tools held since their definitions changed (mcpctl changes). */
	json_object_set_new(json_object_get(status, "servers"), "held_tools",
	    json_integer((json_int_t)server_pins_held_count()));
	json_object_set_new(status, "options", options_status());
	json_object_set_new(status, "config",
	    options_conf() != NULL ? json_string(options_conf()) : json_null());
	json_object_set_new(status, "audit", audit_status());
	/*
	 * The HTTP front, when there is one: its URL (the token: mcpd/token),
	 * its sessions (apart from the socket's clients) and their limits.
	 */
	if (mcpd_opts.listen_http != NULL) {
		json_object_set_new(status, "http",
		    json_sprintf("http://%s/mcp", mcpd_opts.listen_http));
		json_object_set_new(status, "http_sessions",
		    json_integer((json_int_t)httpd_session_count()));
		json_object_update_new(json_object_get(status, "limits"),
		    xjson(json_pack("{s:I, s:I, s:i, s:i}", "max_http_sessions",
			(json_int_t)mcpd_opts.max_http_sessions,
			"max_http_sessions_per_token",
			(json_int_t)mcpd_opts.max_http_sessions_per_token,
			"http_session_idle_ms", mcpd_opts.http_session_idle_ms,
			"http_header_timeout_ms",
			mcpd_opts.http_header_timeout_ms)));
	}
	control_reply(req, status);
}

/* docker's part: cli NULL when it cannot be run, version when it answers. */
static json_t *
cmd_status_docker(const char *cli, const char *version, const char *error)
{
	return json_pack("{s:s, s:s?, s:b, s:b, s:s, s:s?, s:s?}", "program",
	    docker_program(), "cli", cli, "available", cli != NULL, "checked",
	    1, "engine", version != NULL ? "answers" : "not answering",
	    "version", version, "error", error);
}

struct cmd_status_check {
	struct request *req;
	char *cli;
};

static void
cmd_status_checked(void *arg, int status, const char *out, const char *err)
{
	struct cmd_status_check *c = arg;
	size_t len = strcspn(out, "\r\n");
	char *version = NULL, *why = NULL;

	if (status == 0 && len > 0)
		version = xstrndup(out, len);
	else if (status == 0)
		why = xstrdup("docker version printed no server version");
	else
		why = docker_describe_failure(status, err);
	cmd_status_reply(c->req, cmd_status_docker(c->cli, version, why));
	free(version);
	free(why);
	free(c->cli);
	free(c);
}

/* The answer waits for `docker version`: does the engine answer? */
static void
cmd_status_exec(struct request *req, json_t *params)
{
	const char *args[] = { docker_program(), "version", "--format",
		"{{.Server.Version}}", NULL };
	struct cmd_status_check *c;
	char *cause = NULL, *cli = docker_cli_path(&cause);

	(void)params;
	if (cli == NULL) {
		cmd_status_reply(req, cmd_status_docker(NULL, NULL, cause));
		free(cause);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->req = req;
	c->cli = cli;
	docker_cmd_start(args, NULL, mcpd_opts.docker_timeout_ms, NULL,
	    cmd_status_checked, c);
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
