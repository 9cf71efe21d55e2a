/* SPDX-License-Identifier: ISC */
/* The view of a gateway session: its profile's servers and tool globs. */
#include <stdint.h>
#include <stdlib.h>

#include "gateway.h"
#include "fnv.h"
#include "mcpd.h"

/* The profile of req's view (NULL: everything) and its row (NULL: gone). */
static const char *
gateway_view_profile(const struct request *req, const json_t **ret_row)
{
	const char *name = profile_effective(control_agent(req),
	    control_profile(req));

	*ret_row = profile_find(control_agent(req), name);
	return name;
}

bool
gateway_in_view(const struct request *req, const json_t *e)
{
	const json_t *row;

	if (gateway_view_profile(req, &row) == NULL)
		return true;
	return profile_allows(row,
	    json_string_value(json_object_get(e, "server")),
	    json_string_value(json_object_get(json_object_get(e, "tool"),
		"name")),
	    json_array_size(control_scope(req)) == 1);
}

json_t *
gateway_view_scope(const struct request *req)
{
	const json_t *scope = control_scope(req), *row, *v;
	const char *name = gateway_view_profile(req, &row);
	json_t *out;
	size_t i;

	if (name == NULL ||
	    (row != NULL &&
		json_array_size(json_object_get(row, "servers")) == 0))
		return json_incref((json_t *)(uintptr_t)scope);
	out = xjson(json_array());
	json_array_foreach(json_object_get(row, "servers"), i, v)
		if (server_scope_has(scope, json_string_value(v)))
			json_array_append(out, (json_t *)(uintptr_t)v);
	return out;
}

void
gateway_fail_outside(struct request *req, const char *name, const json_t *e)
{
	const json_t *row;
	const char *profile = gateway_view_profile(req, &row);
	char *hint;

	if (row == NULL) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s, s:s}", "tool", name, "profile", profile),
		    "tool %s is not in this session's view: its profile %s no longer exists (mcpctl profile list shows the profiles)",
		    name, profile);
		return;
	}
	hint = profile_hint(control_agent(req), profile, row,
	    json_string_value(json_object_get(e, "server")),
	    json_string_value(json_object_get(json_object_get(e, "tool"),
		"name")));
	control_fail_code(req, JSONRPC_INVALID_PARAMS,
	    json_pack("{s:s, s:s}", "tool", name, "profile", profile),
	    "tool %s is not in the view of profile %s; to add it: %s", name,
	    profile, hint);
	free(hint);
}

bool
gateway_view_call_ok(struct request *req, const struct server *s,
    const char *tool)
{
	const char *profile = control_profile(req);
	json_t *e;
	char *name;
	bool is_ok;

	/* mcpctl call of the user's own is not in a view: only a chosen one. */
	if (profile == NULL)
		return true;
	e = xjson(json_pack("{s:s, s:{s:s}}", "server", server_name(s), "tool",
	    "name", tool));
	if ((is_ok = gateway_in_view(req, e)))
		goto out;
	xasprintf(&name, "%s__%s", server_name(s), tool);
	gateway_fail_outside(req, name, e);
	free(name);
out:
	json_decref(e);
	return is_ok;
}

uint64_t
gateway_view_key(const struct request *req)
{
	uint64_t h = server_gateway_key(control_agent(req), control_scope(req));
	const char *p = profile_effective(control_agent(req),
	    control_profile(req));

	/* A profile's name and every change to profiles are part of it. */
	h ^= profile_generation() * 0x9e3779b97f4a7c15ULL;
	/* So is every change to the policy: denied tools are not listed. */
	h ^= policy_generation() * 0xc2b2ae3d27d4eb4fULL;
	return p != NULL ? fnv64_add(h, p, strlen(p)) : h;
}
