/* SPDX-License-Identifier: ISC */
/* mcpd/hello: names the agent a control connection speaks for. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "mcpd.h"
#include "names.h"

#define CMD_HELLO_EXE_MAX 4096 /* PATH_MAX: the bridge's readlink */

/*
 * The servers an MCP session of this connection sees: names of servers
 * agent has. A view of a server that is not there would be silently
 * empty: it is refused, with the names nearest the one given.
 */
static bool
cmd_hello_servers_ok(struct request *req, const char *agent,
    const json_t *servers)
{
	const char *name;
	json_t *v;
	char *near;
	size_t i;

	json_array_foreach(servers, i, v) {
		name = json_string_value(v);
		if (name == NULL || !names_valid(name)) {
			control_fail_code(req, JSONRPC_INVALID_PARAMS,
			    json_pack("{s:s}", "field", "servers"),
			    "servers must be server names ([A-Za-z0-9][A-Za-z0-9_-]{0,62})");
			return false;
		}
		if (server_find_name(agent, name) == NULL) {
			near = server_did_you_mean(agent, name);
			control_fail(req, ERRORS_NOT_FOUND,
			    json_pack("{s:s, s:s}", "what", "server", "server",
				name),
			    "no server %s for agent %s%s (mcpctl list shows them; load it first)",
			    name, agent, near);
			free(near);
			return false;
		}
	}
	return true;
}

/*
 * client.parent, which mcpctl bridge sends (inside "client", which mcpd
 * has always taken as it is, so that a bridge can say it to an older
 * mcpd too): {"pid": its parent, "exe": that one's program}, each left
 * out when the bridge could not tell. False, answered, when it is not
 * that shape.
 */
static bool
cmd_hello_parent_ok(struct request *req, const json_t *parent)
{
	const json_t *pid = json_object_get(parent, "pid");
	const json_t *exe = json_object_get(parent, "exe");

	if (!json_is_object(parent) ||
	    (pid != NULL &&
		(!json_is_integer(pid) || json_integer_value(pid) < 1 ||
		    json_integer_value(pid) > INT32_MAX)) ||
	    (exe != NULL &&
		(!json_is_string(exe) || json_string_length(exe) == 0 ||
		    json_string_length(exe) > CMD_HELLO_EXE_MAX))) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "client.parent"),
		    "client.parent must be {\"pid\": a pid, \"exe\": a path of at most 4096 bytes}, each optional");
		return false;
	}
	return true;
}

static void
cmd_hello_exec(struct request *req, json_t *params)
{
	const char *agent = cmd_string(params, "agent");
	const char *profile = cmd_string(params, "profile");
	json_t *servers = json_object_get(params, "servers");
	json_t *parent = json_object_get(json_object_get(params, "client"),
	    "parent");
	char *did;

	if (agent != NULL && !names_valid(agent)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "agent"),
		    "agent must match [A-Za-z0-9][A-Za-z0-9_-]{0,62}");
		return;
	}
	if (servers != NULL &&
	    !cmd_hello_servers_ok(req,
		agent != NULL ? agent : control_agent(req), servers))
		return;
	if (parent != NULL && !cmd_hello_parent_ok(req, parent))
		return;
	/* The view of a profile that is not there is refused. */
	if (profile != NULL &&
	    cmd_profile_row(req, agent != NULL ? agent : control_agent(req),
		profile) == NULL)
		return;
	/* Only mcpctl bridge says who started it: the connection is one. */
	if (parent != NULL)
		control_set_bridge(req,
		    (pid_t)json_integer_value(json_object_get(parent, "pid")),
		    json_string_value(json_object_get(parent, "exe")));
	if (agent != NULL)
		control_set_agent(req, agent);
	if (servers != NULL)
		control_set_scope(req, servers);
	if (profile != NULL)
		control_set_profile(req, profile);
	/* The bridge's project file is broken or not trusted: say it there. */
	if (cmd_string(params, "view_error") != NULL)
		control_set_view_error(req, cmd_string(params, "view_error"));
	/* It found none from its directory: its client's roots may name one. */
	if (json_is_true(json_object_get(params, "roots_project")))
		control_set_roots_project(req);
	agent = control_agent(req);
	did = identity_agent_did(agent);
	control_reply(req,
	    json_pack("{s:{s:s, s:I, s:s}, s:{s:s, s:s}, s:i}", "daemon",
		"version", MCPD_VERSION, "pid", (json_int_t)getpid(), "did",
		identity_did(), "agent", "name", agent, "did", did, "protocol",
		1));
	free(did);
}

static const struct cmd_param cmd_hello_params[] = {
	{ "agent", JSON_STRING, false },
	{ "client", JSON_OBJECT, false },
	{ "servers", JSON_ARRAY, false },
	{ "profile", JSON_STRING, false },
	{ "view_error", JSON_STRING, false },
	{ "roots_project", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_hello_entry = {
	"mcpd/hello",
	cmd_hello_exec,
	cmd_hello_params,
	CMD_STOPPING,
};
