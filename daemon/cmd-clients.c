/* SPDX-License-Identifier: ISC */
/*
 * mcpd/clients: the MCP sessions of agents connected to mcpd: mcpctl
 * bridges, HTTP sessions and MCP clients on the socket. The connections
 * of mcpctl commands (this one too) are counted, not listed: each lasts
 * one command and serves no agent's MCP session.
 */
#include <stdlib.h>

#include "gateway.h"
#include "control-int.h"
#include "isotime.h"
#include "paths.h"

/* An agent's MCP session, rather than a connection of mcpctl commands. */
static bool
cmd_clients_is_session(const struct client *c)
{
	return c->gateway != NULL || c->is_bridge;
}

static const char *
cmd_clients_kind(const struct client *c)
{
	if (c->peer != NULL)
		return "http";
	return c->is_bridge ? "bridge" : "socket";
}

/* The program pid runs, as /proc tells it, or NULL. */
static json_t *
cmd_clients_exe(pid_t pid)
{
	char *exe = paths_proc_exe((int)pid);
	json_t *s = exe != NULL ? json_string(exe) : NULL; /* not UTF-8: NULL */

	free(exe);
	return s;
}

static json_t *
cmd_clients_describe(const struct client *c, int64_t now)
{
	const char *name = gateway_client_name(c->gateway);
	char since[ISOTIME_LEN];
	json_t *o;

	isotime_format(since, c->since_ms);
	o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:O?}", "agent", c->agent,
	    "kind", cmd_clients_kind(c), "since", since, "age_s",
	    (json_int_t)(now > c->since_ms ? (now - c->since_ms) / 1000 : 0),
	    "calls", (json_int_t)gateway_calls(c->gateway), "view", c->scope);
	if (name != NULL)
		json_object_set_new(o, "client", json_string(name));
	/* The peer of the socket: a bridge's own process, or the client. */
	if (c->pid > 0)
		json_object_set_new(o, "pid", json_integer(c->pid));
	if (c->pid > 0 && !c->is_bridge && c->peer == NULL)
		json_object_set_new(o, "exe", cmd_clients_exe(c->pid));
	/* What the bridge said of the client process that started it. */
	if (c->bridge_pid > 0)
		json_object_set_new(o, "client_pid",
		    json_integer(c->bridge_pid));
	if (c->bridge_exe != NULL)
		json_object_set_new(o, "client_exe",
		    json_string(c->bridge_exe));
	if (c->peer != NULL && c->peer->describe != NULL)
		c->peer->describe(c->peer_arg, o);
	return o;
}

static void
cmd_clients_exec(struct request *req, json_t *params)
{
	int64_t now = isotime_now_ms();
	json_t *list = json_array();
	const struct client *c = NULL;
	json_int_t control = 0;

	(void)params;
	while ((c = control_client_next(c)) != NULL) {
		/* A bridge that handed its stdio over: that one is listed. */
		if (c->has_attached)
			continue;
		if (cmd_clients_is_session(c))
			json_array_append_new(list,
			    cmd_clients_describe(c, now));
		else
			control++;
	}
	control_reply(req,
	    json_pack("{s:o, s:I}", "clients", list, "control", control));
}

static const struct cmd_param cmd_clients_params[] = {
	{ NULL, 0, false },
};

const struct cmd_entry cmd_clients_entry = {
	"mcpd/clients",
	cmd_clients_exec,
	cmd_clients_params,
	CMD_STOPPING,
};
