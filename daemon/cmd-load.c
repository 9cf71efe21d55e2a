/* SPDX-License-Identifier: ISC */
/* mcpd/load: checks a target, then starts it through its server's gate. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonwipe.h"
#include "log.h"
#include "mcpd.h"
#include "names.h"
#include "vars.h"

bool
cmd_load_bad(struct request *req, const char *field, const char *why)
{
	control_fail_code(req, JSONRPC_INVALID_PARAMS,
	    json_pack("{s:s}", "field", field), "mcpd/load: %s", why);
	return false;
}

/* A process server's program can be run (checked on the resolved spec). */
static int
cmd_load_program_ok(struct request *req, const struct server_spec *resolved)
{
	struct child_spec child = { resolved->argv, NULL, resolved->cwd };
	char **env = child_env_build(resolved->env);
	char *cause = NULL;
	int r;

	child.env = env;
	if ((r = child_find_program(&child, &cause)) < 0)
		control_fail(req, ERRORS_NOT_FOUND,
		    json_pack("{s:s}", "what", "command"),
		    "%s; nothing was saved or started",
		    cause != NULL ? cause : "cannot run the command");
	child_strv_wipe_free(env);
	free(cause);
	return r;
}

/*
 * What can only fail for a reason known now fails now, before anything
 * is saved or started: every $(...) resolves, and a command can be run.
 */
static bool
cmd_load_can_start(struct request *req, enum server_mode mode,
    const struct server_spec *spec)
{
	struct server_spec resolved;
	char *cause = NULL;
	int r = spec_resolve(spec, &resolved, &cause);

	if (r == -EINVAL)
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "variables"),
		    "%s; the namespaces are env and secret", cause);
	else if (r == -ENOENT)
		control_fail(req, ERRORS_NOT_FOUND,
		    json_pack("{s:s}", "what", "variable"),
		    "%s; nothing was saved or started (%s)", cause,
		    strstr(cause, "$(secret.") != NULL ?
			"a secret is set with: mcpctl secret set NAME" :
			"$(env.NAME) comes from mcpd's own environment");
	else if (r < 0)
		control_fail(req, ERRORS_STORAGE, NULL, "%s",
		    cause != NULL ? cause : "cannot resolve variables");
	else {
		if (mode == SERVER_PROCESS || mode == SERVER_GATEWAY)
			r = cmd_load_program_ok(req, &resolved);
		spec_clear(&resolved);
	}
	free(cause);
	return r == 0;
}

/* A copy of *spec on the heap; *spec is left empty. */
static struct server_spec *
cmd_load_spec_move(struct server_spec *spec)
{
	struct server_spec *moved = xmalloc(sizeof *moved);

	*moved = *spec;
	memset(spec, 0, sizeof *spec);
	return moved;
}

/*
 * A server is its name: the same name and target again is answered by the
 * running server (which starts again first when its values changed); the
 * name of a server that runs another target is a conflict.
 */
void
cmd_load_start(struct request *req, const char *agent, const json_t *params,
    struct loadspec *ls, int timeout)
{
	struct server *s = server_find_name(agent, ls->name), *same;
	bool is_listed;
	bool is_saved = !json_is_false(json_object_get(params, "persist"));
	struct server_spec *asked = NULL;
	char *id = NULL;

	/*
	 * share: a server that runs the same already is the answer, whatever
	 * its name (a project's servers: one process for every project that
	 * defines the same).
	 */
	if (json_is_true(json_object_get(params, "share")) &&
	    (s == NULL || !server_runs(s, ls->mode, &ls->spec)) &&
	    (same = server_find_runs(agent, ls->mode, &ls->spec)) != NULL)
		s = same;
	is_listed = s != NULL;
	if (!cmd_load_can_start(req, ls->mode, &ls->spec)) {
		/* Failed: a variable has no value, or no such program. */
	} else if (s != NULL && !server_runs(s, ls->mode, &ls->spec)) {
		control_fail(req, ERRORS_CONFLICT,
		    json_pack("{s:s, s:s}", "name", ls->name, "endpoint",
			server_endpoint(s)),
		    "the name %s is taken by a server that runs %s; choose another name with --name, or unload %s first",
		    ls->name, server_endpoint(s), ls->name);
	} else if (s == NULL && !cmd_server_room(req)) {
		/* Failed: mcpd has --max-servers servers. */
	} else {
		json_t *secrets = is_saved ? json_object() : NULL;
		json_t *row = NULL;

		if (s == NULL) {
			id = server_id_new(agent, ls->name);
			server_new(agent, id, ls->name, ls->mode, &ls->spec,
			    &s);
		}
		if (is_saved)
			row = enable_row_new(server_id(s), server_name(s),
			    ls->mode, params, secrets);

		/* A new server took spec; a listed one gets it with the job. */
		if (is_listed)
			asked = cmd_load_spec_move(&ls->spec);
		server_idle_configure(s, ls->is_on_demand, ls->idle_stop_ms);
		server_load(s, control_server_reply(req, NULL), timeout, row,
		    secrets, asked);
	}
	free(id);
}

void
cmd_load_wipe(json_t *params)
{
	jsonwipe_strings(json_object_get(params, "env"));
	jsonwipe_strings(json_object_get(params, "headers"));
	jsonwipe_strings(json_object_get(params, "oauth"));
}

static void
cmd_load_exec(struct request *req, json_t *params)
{
	struct loadspec ls;
	struct loadspec_error err = { 0 };
	char *cause = NULL;
	int timeout;

	if (json_is_true(json_object_get(params, "progress")))
		control_want_progress(req);
	if (!cmd_timeout(req, params, mcpd_opts.load_timeout_ms, &timeout))
		return;
	if (json_is_true(json_object_get(params, "trust_updates")) &&
	    json_is_false(json_object_get(params, "persist"))) {
		cmd_load_bad(req, "trust_updates",
		    "trust_updates is kept in the server's saved row, so it cannot go with persist: false (--no-persist)");
		cmd_load_wipe(params);
		return;
	}
	if (!loadspec_parse(params, &ls, &err))
		cmd_load_bad(req, err.field, err.why);
	else if ((ls.mode == SERVER_CONTAINER || ls.mode == SERVER_GATEWAY) &&
	    docker_available(&cause) < 0)
		control_fail(req, ERRORS_UNAVAILABLE, NULL, "%s", cause);
	else if (ls.mode == SERVER_REMOTE)
		cmd_load_remote(req, params, &ls, timeout);
	else
		cmd_load_start(req, control_agent(req), params, &ls, timeout);
	loadspec_error_clear(&err);
	loadspec_clear(&ls);
	free(cause);
	cmd_load_wipe(params);
}

static const struct cmd_param cmd_load_params[] = {
	{ "command", JSON_ARRAY, false },
	{ "target", JSON_STRING, false },
	{ "env", JSON_OBJECT, false },
	{ "name", JSON_STRING, false },
	{ "cwd", JSON_STRING, false },
	{ "transport", JSON_STRING, false },
	{ "persist", JSON_TRUE, false },
	{ "timeout_ms", JSON_INTEGER, false },
	{ "allow_local", JSON_TRUE, false },
	{ "headers", JSON_OBJECT, false },
	{ "oauth", JSON_OBJECT, false },
	{ "args", JSON_ARRAY, false },
	{ "volumes", JSON_ARRAY, false },
	{ "network", JSON_STRING, false },
	{ "progress", JSON_TRUE, false },
	{ "origin", JSON_STRING, false },
	{ "gateway", JSON_ARRAY, false },
	{ "share", JSON_TRUE, false },
	{ "trust_updates", JSON_TRUE, false },
	{ "on_demand", JSON_TRUE, false },
	{ "idle_stop_ms", JSON_INTEGER, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_load_entry = {
	"mcpd/load",
	cmd_load_exec,
	cmd_load_params,
	0,
};
