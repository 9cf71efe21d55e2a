/* SPDX-License-Identifier: ISC */
/* mcpd/gateway-start and mcpd/gateway-stop: the Docker MCP Gateway. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"

struct cmd_gateway {
	struct request *req;
	char *agent; /* its client's, which may go meanwhile */
	json_t *params;
	int timeout;
};

static void
cmd_gateway_free(struct cmd_gateway *g)
{
	free(g->agent);
	json_decref(g->params);
	free(g);
}

/* The load params of a start: the servers as a gateway load. */
static json_t *
cmd_gateway_params(const json_t *params)
{
	json_t *load = json_pack("{s:O}", "gateway",
	    json_object_get(params, "servers"));
	const char *keys[] = { "name", "persist", "timeout_ms", NULL };

	for (size_t i = 0; keys[i] != NULL; i++)
		if (json_object_get(params, keys[i]) != NULL)
			json_object_set(load, keys[i],
			    json_object_get(params, keys[i]));
	return load;
}

/* `docker mcp version` answered: the plugin is there, or it is not. */
static void
cmd_gateway_checked(void *arg, int status, const char *out, const char *err)
{
	struct cmd_gateway *g = arg;
	struct loadspec_error lerr = { 0 };
	struct loadspec ls;
	char *why;

	(void)out;
	if (status != 0) {
		why = docker_describe_failure(status, err);
		control_fail(g->req, ERRORS_UNAVAILABLE,
		    json_pack("{s:s}", "what", "docker-mcp-plugin"),
		    "the Docker MCP Gateway needs the docker CLI plugin docker-mcp (the 'docker mcp' command), and `%s mcp version` failed: %s; install the plugin as ~/.docker/cli-plugins/docker-mcp (https://github.com/docker/mcp-gateway)",
		    docker_program(), why);
		free(why);
		cmd_gateway_free(g);
		return;
	}
	/* Checked before the plugin was: it parses. */
	if (!loadspec_parse(g->params, &ls, &lerr))
		cmd_load_bad(g->req, lerr.field, lerr.why);
	else
		cmd_load_start(g->req, g->agent, g->params, &ls, g->timeout);
	loadspec_error_clear(&lerr);
	loadspec_clear(&ls);
	cmd_gateway_free(g);
}

static void
cmd_gateway_start_exec(struct request *req, json_t *params)
{
	const char *args[] = { docker_program(), "mcp", "version", NULL };
	struct loadspec_error err = { 0 };
	struct cmd_gateway *g;
	struct loadspec ls;
	char *cause = NULL;
	json_t *load;
	int timeout;

	if (json_is_true(json_object_get(params, "progress")))
		control_want_progress(req);
	if (!cmd_timeout(req, params, mcpd_opts.load_timeout_ms, &timeout))
		return;
	load = cmd_gateway_params(params);
	if (!loadspec_parse(load, &ls, &err)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field",
			strcmp(err.field, "gateway") == 0 ? "servers" :
							    err.field),
		    "mcpd/gateway-start: %s", err.why);
		loadspec_error_clear(&err);
		json_decref(load);
		return;
	}
	loadspec_clear(&ls);
	if (docker_available(&cause) < 0) {
		control_fail(req, ERRORS_UNAVAILABLE, NULL, "%s", cause);
		free(cause);
		json_decref(load);
		return;
	}
	g = xcalloc(1, sizeof *g);
	g->req = req;
	g->agent = xstrdup(control_agent(req));
	g->params = load;
	g->timeout = timeout;
	docker_cmd_start(args, NULL, mcpd_opts.docker_timeout_ms, NULL,
	    cmd_gateway_checked, g);
}

static const struct cmd_param cmd_gateway_start_params[] = {
	{ "servers", JSON_ARRAY, true },
	{ "name", JSON_STRING, false },
	{ "persist", JSON_TRUE, false },
	{ "timeout_ms", JSON_INTEGER, false },
	{ "progress", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_gateway_start_entry = {
	"mcpd/gateway-start",
	cmd_gateway_start_exec,
	cmd_gateway_start_params,
	0,
};

/* Stops the gateway and forgets it: its process, port, token and row. */
static void
cmd_gateway_stop_exec(struct request *req, json_t *params)
{
	const char *name = cmd_string(params, "name");
	const char *agent = control_agent(req), *mode;
	const json_t *row;
	struct server *s;
	json_t *unload;

	if (name == NULL)
		name = LOADSPEC_GATEWAY_NAME;
	s = server_find_name(agent, name);
	row = enable_row_find(agent, name);
	mode = s != NULL ? server_mode_name(server_get_mode(s)) :
			   json_string_value(json_object_get(row, "mode"));
	if (mode == NULL) {
		control_fail(req, ERRORS_NOT_FOUND,
		    json_pack("{s:s, s:s}", "what", "gateway", "name", name),
		    "no Docker MCP Gateway called %s runs or is saved; start one with: mcpctl gateway start SERVER...",
		    name);
		return;
	}
	if (strcmp(mode, "gateway") != 0) {
		control_fail(req, ERRORS_CONFLICT,
		    json_pack("{s:s, s:s}", "name", name, "mode", mode),
		    "%s is a %s server, not a Docker MCP Gateway; mcpctl unload %s stops it",
		    name, mode, name);
		return;
	}
	unload = json_pack("{s:s}", "target", name);
	cmd_unload_entry.exec(req, unload);
	json_decref(unload);
}

static const struct cmd_param cmd_gateway_stop_params[] = {
	{ "name", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_gateway_stop_entry = {
	"mcpd/gateway-stop",
	cmd_gateway_stop_exec,
	cmd_gateway_stop_params,
	0,
};
