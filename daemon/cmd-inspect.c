/* SPDX-License-Identifier: ISC */
/* mcpd/inspect: everything about one server, its values masked. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcpd.h"
#include "server-int.h" /* read only: the spec of a live server */
#include "vars.h"

#define CMD_INSPECT_MASK "***"

/*
 * A value as the client may see it: kept when it holds a $(...) reference
 * (a literal of a saved load was made one, $(secret.mcpd.ID.env.K)), else
 * "***". A secret's value never leaves mcpd.
 */
static json_t *
cmd_inspect_mask(const char *value)
{
	if (value != NULL && vars_has_refs(value))
		return json_string(value);
	return json_string(CMD_INSPECT_MASK);
}

/* An object of name -> value, each value masked. */
static json_t *
cmd_inspect_mask_object(const json_t *obj)
{
	json_t *out = json_object();
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)(uintptr_t)obj, k, v)
		json_object_set_new(out, k,
		    cmd_inspect_mask(json_string_value(v)));
	return out;
}

/* A NULL-ended string vector as an array, or null. */
static json_t *
cmd_inspect_strv(char *const *v)
{
	json_t *a;

	if (v == NULL)
		return json_null();
	a = json_array();
	for (; *v != NULL; v++)
		json_array_append_new(a, json_string(*v));
	return a;
}

/*
 * The live spec: what the server runs with, values masked; with show_env,
 * environment values as given (a $(secret.x) reference stays one, so a
 * secret's value never leaves mcpd).
 */
static json_t *
cmd_inspect_spec(const struct server *s, bool show_env)
{
	const struct server_spec *sp = &s->spec;
	json_t *out = json_object(), *env = json_object();
	const char *eq;
	char *k;

	for (char **e = sp->env; e != NULL && *e != NULL; e++) {
		if ((eq = strchr(*e, '=')) == NULL)
			continue;
		k = xstrndup(*e, eq - *e);
		json_object_set_new(env, k,
		    show_env ? json_string(eq + 1) : cmd_inspect_mask(eq + 1));
		free(k);
	}
	json_object_set_new(out, "command", cmd_inspect_strv(sp->argv));
	json_object_set_new(out, "cwd",
	    sp->cwd != NULL ? json_string(sp->cwd) : json_null());
	json_object_set_new(out, "env", env);
	json_object_set_new(out, "image",
	    sp->image != NULL ? json_string(sp->image) : json_null());
	json_object_set_new(out, "args", cmd_inspect_strv(sp->args));
	json_object_set_new(out, "volumes", cmd_inspect_strv(sp->volumes));
	json_object_set_new(out, "network",
	    sp->network != NULL ? json_string(sp->network) : json_null());
	json_object_set_new(out, "url",
	    sp->remote.url != NULL ? json_string(sp->remote.url) : json_null());
	json_object_set_new(out, "headers",
	    sp->remote.headers != NULL ?
		cmd_inspect_mask_object(sp->remote.headers) :
		json_object());
	return out;
}

/* The saved row with its env and header values masked, or null. */
static json_t *
cmd_inspect_saved(const json_t *row)
{
	json_t *copy, *params;
	const json_t *v;

	if (row == NULL)
		return json_null();
	copy = json_deep_copy(row);
	params = json_object_get(copy, "params");
	if ((v = json_object_get(params, "env")) != NULL)
		json_object_set_new(params, "env", cmd_inspect_mask_object(v));
	if ((v = json_object_get(params, "headers")) != NULL)
		json_object_set_new(params, "headers",
		    cmd_inspect_mask_object(v));
	return copy;
}

static void
cmd_inspect_exec(struct request *req, json_t *params)
{
	const char *target = cmd_string(params, "target");
	const char *agent = control_agent(req);
	bool failed;
	struct server *s = cmd_server_or_none(req, target, &failed);
	const json_t *row;
	const char *text;
	json_t *out;

	if (failed)
		return; /* an endpoint of several servers */
	row = enable_row_find(agent, s != NULL ? s->id : target);
	if (s == NULL && row == NULL) {
		cmd_server(req, target); /* fails req: not found */
		return;
	}
	if (s != NULL) {
		out = server_describe(s);
		json_object_set_new(out, "spec",
		    cmd_inspect_spec(s,
			json_is_true(json_object_get(params, "show_env"))));
		text = server_instructions_peek(s);
		json_object_set_new(out, "instructions",
		    text != NULL ? json_string(text) : json_null());
	} else {
		/* A saved row whose restore failed before a server existed. */
		out = json_pack("{s:O, s:O, s:s, s:s, s:b}", "id",
		    json_object_get(row, "id"), "name",
		    json_object_get(row, "name"), "agent", agent, "state",
		    "not-loaded", "persistent", 1);
	}
	json_object_set_new(out, "saved", cmd_inspect_saved(row));
	control_reply(req, out);
}

static const struct cmd_param cmd_inspect_params[] = {
	{ "target", JSON_STRING, true },
	{ "show_env", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_inspect_entry = {
	"mcpd/inspect",
	cmd_inspect_exec,
	cmd_inspect_params,
	CMD_STOPPING,
};
