/* SPDX-License-Identifier: ISC */
/* The command table and the one place where params shapes are checked. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"

static const struct cmd_entry *const cmd_table[] = {
	&cmd_hello_entry,
	&cmd_attach_entry,
	&cmd_load_entry,
	&cmd_unload_entry,
	&cmd_reload_entry,
	&cmd_changes_entry,
	&cmd_accept_entry,
	&cmd_disable_entry,
	&cmd_enable_entry,
	&cmd_rename_entry,
	&cmd_set_entry,
	&cmd_list_entry,
	&cmd_inspect_entry,
	&cmd_tools_entry,
	&cmd_call_entry,
	&cmd_logs_entry,
	&cmd_clients_entry,
	&cmd_status_entry,
	&cmd_shutdown_entry,
	&cmd_upgrade_entry,
	&cmd_secret_set_entry,
	&cmd_secret_list_entry,
	&cmd_secret_rm_entry,
	&cmd_token_entry,
	&cmd_profile_entry,
	&cmd_policy_entry,
	&cmd_approvals_entry,
	&cmd_approve_entry,
	&cmd_deny_entry,
	&cmd_project_entry,
	&cmd_registry_search_entry,
	&cmd_registry_catalog_entry,
	&cmd_registry_info_entry,
	&cmd_registry_versions_entry,
	&cmd_docker_catalog_entry,
	&cmd_gateway_start_entry,
	&cmd_gateway_stop_entry,
	&cmd_auth_login_entry,
	&cmd_auth_status_entry,
	&cmd_auth_logout_entry,
	NULL,
};

static const char *
cmd_type_name(int type)
{
	switch (type) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_TRUE:
		return "a boolean";
	default:
		return "a value";
	}
}

static bool
cmd_type_ok(int want, const json_t *v)
{
	if (want == CMD_ANY)
		return true;
	if (want == JSON_TRUE)
		return json_is_boolean(v);
	return (int)json_typeof(v) == want;
}

static const struct cmd_param *
cmd_param_find(const struct cmd_entry *e, const char *key)
{
	for (const struct cmd_param *p = e->params; p->name != NULL; p++)
		if (strcmp(p->name, key) == 0)
			return p;
	return NULL;
}

static void
cmd_bad_param(struct request *req, const char *field, const char *fmt,
    const char *method, const char *what)
{
	control_fail_code(req, JSONRPC_INVALID_PARAMS,
	    json_pack("{s:s}", "field", field), fmt, method, field, what);
}

/* Checks keys, types and required params; answers and returns false. */
static bool
cmd_check(struct request *req, const struct cmd_entry *e, json_t *params)
{
	const struct cmd_param *p;
	const char *key;
	json_t *v;

	json_object_foreach(params, key, v) {
		if ((p = cmd_param_find(e, key)) == NULL) {
			cmd_bad_param(req, key, "%s: unknown param %s%s",
			    e->name, "");
			return false;
		}
		if (!cmd_type_ok(p->type, v)) {
			cmd_bad_param(req, key, "%s: param %s must be %s",
			    e->name, cmd_type_name(p->type));
			return false;
		}
	}
	for (p = e->params; p->name != NULL; p++)
		if (p->is_required &&
		    json_object_get(params, p->name) == NULL) {
			cmd_bad_param(req, p->name,
			    "%s: param %s is required%s", e->name, "");
			return false;
		}
	return true;
}

void
cmd_dispatch(struct request *req, const char *method, json_t *params)
{
	const struct cmd_entry *e = NULL;
	json_t *empty = NULL;

	for (size_t i = 0; cmd_table[i] != NULL && e == NULL; i++)
		if (strcmp(cmd_table[i]->name, method) == 0)
			e = cmd_table[i];
	if (e == NULL) {
		control_fail_code(req, JSONRPC_METHOD_NOT_FOUND, NULL,
		    "unknown method %s; see mcpd-protocol(7)", method);
		return;
	}
	if (mcpd_is_stopping() && !(e->flags & CMD_STOPPING)) {
		control_fail(req, ERRORS_UNAVAILABLE, NULL,
		    "mcpd is shutting down");
		return;
	}
	if (params == NULL)
		params = empty = json_object();
	if (cmd_check(req, e, params))
		e->exec(req, params);
	json_decref(empty);
}

const char *
cmd_string(json_t *params, const char *key)
{
	return json_string_value(json_object_get(params, key));
}

/* Fails req: target names several servers (names: stolen). */
static void
cmd_ambiguous(struct request *req, const char *target, json_t *names)
{
	char *list = json_dumps(names, JSON_COMPACT);

	control_fail(req, ERRORS_CONFLICT,
	    json_pack("{s:s, s:o}", "what", "server", "names", names),
	    "%s is the target of %zu servers, %s; name one of them", target,
	    json_array_size(names), list != NULL ? list : "");
	free(list);
}

struct server *
cmd_server_or_none(struct request *req, const char *target, bool *ret_failed)
{
	json_t *names;
	struct server *s = server_find_target(control_agent(req), target,
	    &names);

	*ret_failed = names != NULL;
	if (names != NULL)
		cmd_ambiguous(req, target, names);
	return s;
}

struct server *
cmd_server(struct request *req, const char *target)
{
	bool failed;
	struct server *s = cmd_server_or_none(req, target, &failed);

	if (s == NULL && !failed &&
	    enable_row_is_disabled(enable_row_find(control_agent(req),
		target))) {
		control_fail(req, ERRORS_UNAVAILABLE,
		    json_pack("{s:s, s:s}", "what", "server", "state",
			"disabled"),
		    "server %s is disabled; mcpctl enable %s starts it", target,
		    target);
	} else if (s == NULL && !failed) {
		char *near = server_did_you_mean(control_agent(req), target);

		control_fail(req, ERRORS_NOT_FOUND,
		    json_pack("{s:s}", "what", "server"),
		    "no server %s for agent %s%s", target, control_agent(req),
		    near);
		free(near);
	}
	return s;
}

bool
cmd_server_room(struct request *req)
{
	if (server_count(NULL) < mcpd_opts.max_servers)
		return true;
	control_fail(req, ERRORS_UNAVAILABLE,
	    json_pack("{s:I}", "limit", (json_int_t)mcpd_opts.max_servers),
	    "mcpd already has %zu servers, its limit; unload one, or start mcpd with a higher --max-servers",
	    mcpd_opts.max_servers);
	return false;
}

bool
cmd_timeout(struct request *req, json_t *params, int dflt, int *ret)
{
	json_t *v = json_object_get(params, "timeout_ms");
	json_int_t ms;

	if (v == NULL) {
		*ret = dflt;
		return true;
	}
	ms = json_integer_value(v);
	if (ms < 1 || ms > 86400000) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "timeout_ms"),
		    "timeout_ms must be between 1 and 86400000");
		return false;
	}
	*ret = (int)ms;
	return true;
}
