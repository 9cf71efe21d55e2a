/* SPDX-License-Identifier: ISC */
/* mcpd/hello: names the agent a control connection speaks for. */
#include <stdlib.h>
#include <unistd.h>

#include "mcpd.h"
#include "names.h"

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
 * The profile of the connection's MCP session: one agent has. A view of a
 * profile that is not there is refused, with the names nearest.
 */
static bool
cmd_hello_profile_ok(struct request *req, const char *agent,
    const char *profile)
{
	char *near;

	if (profile_find(agent, profile) != NULL)
		return true;
	near = profile_did_you_mean(agent, profile);
	control_fail(req, ERRORS_NOT_FOUND,
	    json_pack("{s:s, s:s}", "what", "profile", "profile", profile),
	    "no profile %s for agent %s%s (mcpctl profile list shows them)",
	    profile, agent, near);
	free(near);
	return false;
}

static void
cmd_hello_exec(struct request *req, json_t *params)
{
	const char *agent = cmd_string(params, "agent");
	const char *profile = cmd_string(params, "profile");
	json_t *servers = json_object_get(params, "servers");
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
	if (profile != NULL &&
	    !cmd_hello_profile_ok(req,
		agent != NULL ? agent : control_agent(req), profile))
		return;
	if (agent != NULL)
		control_set_agent(req, agent);
	if (servers != NULL)
		control_set_scope(req, servers);
	if (profile != NULL)
		control_set_profile(req, profile);
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
	{ NULL, 0, false },
};

const struct cmd_entry cmd_hello_entry = {
	"mcpd/hello",
	cmd_hello_exec,
	cmd_hello_params,
	CMD_STOPPING,
};
