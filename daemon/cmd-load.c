/* SPDX-License-Identifier: ISC */
/* mcpd/load: checks a target, then starts it through its server's gate. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* A string with no NUL inside: what argv and environ can carry. */
bool
cmd_load_is_cstring(const json_t *v)
{
	return json_is_string(v) &&
	    strlen(json_string_value(v)) == json_string_length(v);
}

static bool
cmd_load_env_key_ok(const char *k)
{
	if (!isalpha((unsigned char)k[0]) && k[0] != '_')
		return false;
	for (; *k != '\0'; k++)
		if (!isalnum((unsigned char)*k) && *k != '_')
			return false;
	return true;
}

bool
cmd_load_strv(struct request *req, const char *field, const json_t *array,
    char ***ret)
{
	size_t i, n = json_array_size(array);
	json_t *v;

	if (array == NULL)
		return true;
	if ((*ret = calloc(n + 1, sizeof **ret)) == NULL)
		fatal("calloc");
	json_array_foreach(array, i, v) {
		if (!cmd_load_is_cstring(v))
			return cmd_load_bad(req, field,
			    "must be an array of strings without NUL bytes");
		if (((*ret)[i] = strdup(json_string_value(v))) == NULL)
			fatal("strdup");
	}
	return true;
}

static bool
cmd_load_argv(struct request *req, json_t *command, struct server_spec *spec)
{
	if (json_array_size(command) == 0)
		return cmd_load_bad(req, "command",
		    "command needs at least "
		    "the program to run");
	if (!cmd_load_strv(req, "command", command, &spec->argv))
		return false;
	if (spec->argv[0][0] == '\0')
		return cmd_load_bad(req, "command",
		    "command must start with a program");
	return true;
}

bool
cmd_load_env(struct request *req, json_t *env, struct server_spec *spec)
{
	size_t n = json_object_size(env), i = 0;
	const char *k;
	json_t *v;

	if ((spec->env = calloc(n + 1, sizeof *spec->env)) == NULL)
		fatal("calloc");
	json_object_foreach(env, k, v) {
		if (!cmd_load_env_key_ok(k))
			return cmd_load_bad(req, "env",
			    "env names must match "
			    "[A-Za-z_][A-Za-z0-9_]*");
		if (!cmd_load_is_cstring(v))
			return cmd_load_bad(req, "env",
			    "env values must be "
			    "strings without NUL bytes");
		if (asprintf(&spec->env[i++], "%s=%s", k,
			json_string_value(v)) < 0)
			fatal("asprintf");
	}
	return true;
}

static bool
cmd_load_spec(struct request *req, json_t *params, struct server_spec *spec)
{
	const char *cwd = cmd_string(params, "cwd");
	const char *transport = cmd_string(params, "transport");

	if (transport != NULL && strcmp(transport, "stdio") != 0)
		return cmd_load_bad(req, "transport",
		    "a command speaks "
		    "transport stdio");
	if (cwd != NULL && cwd[0] != '/')
		return cmd_load_bad(req, "cwd", "cwd must be an absolute path");
	if (cwd != NULL)
		spec->cwd = strdup(cwd);
	if (!cmd_load_argv(req, json_object_get(params, "command"), spec))
		return false;
	return cmd_load_env(req, json_object_get(params, "env"), spec);
}

char *
cmd_load_name(struct request *req, const json_t *params, char *derived,
    const char *from)
{
	const char *name = json_string_value(json_object_get(params, "name"));

	if (name != NULL) {
		free(derived);
		if (names_valid(name))
			return strdup(name);
		cmd_load_bad(req, "name",
		    "name must match "
		    "[A-Za-z0-9][A-Za-z0-9_-]{0,62}");
		return NULL;
	}
	if (derived == NULL) {
		char why[160];

		snprintf(why, sizeof why,
		    "no usable name can be derived from %s; give one with "
		    "name (mcpctl load --name)",
		    from);
		cmd_load_bad(req, "name", why);
	}
	return derived;
}

/*
 * The row a persistent load saves: what restores it (the load's params,
 * as given, so that variable references stay references) and what names it.
 */
/* FNV-1a: a short stable tag that tells apart keys that read alike. */
static uint32_t
cmd_load_key_hash(const char *k)
{
	uint32_t h = 2166136261u;

	for (; *k != '\0'; k++)
		h = (h ^ (unsigned char)*k) * 16777619u;
	return h;
}

/*
 * mcpd.<id>.<kind>.<key> with the key's other characters as '_'; a key
 * that is too long, or reads like one already taken ("X-Key", "X_Key"),
 * gets its hash too.
 */
static char *
cmd_load_secret_name(const char *id, const char *kind, const char *k,
    const json_t *taken)
{
	char *name;

	if (asprintf(&name, "mcpd.%s.%s.%.64s", id, kind, k) < 0)
		fatal("asprintf");
	for (char *c = name + strlen(id) + 6; *c != '\0'; c++)
		if (!isalnum((unsigned char)*c) && *c != '.')
			*c = '_';
	if (strlen(k) > 64 || json_object_get(taken, name) != NULL) {
		free(name);
		if (asprintf(&name, "mcpd.%s.%s.%08x", id, kind,
			cmd_load_key_hash(k)) < 0)
			fatal("asprintf");
	}
	return name;
}

/*
 * Literal values of env and headers move to the secret store: the row
 * keeps $(secret.mcpd.<id>.<kind>.<key>) and *secrets gets name -> value.
 */
static void
cmd_load_row_hide(json_t *obj, const char *id, const char *kind,
    json_t *secrets)
{
	const char *k;
	json_t *v;
	char *name, *ref;

	json_object_foreach(obj, k, v) {
		if (!json_is_string(v) || vars_has_refs(json_string_value(v)))
			continue;
		name = cmd_load_secret_name(id, kind, k, secrets);
		if (asprintf(&ref, "$(secret.%s)", name) < 0)
			fatal("asprintf");
		json_object_set(secrets, name, v);
		json_object_set_new(obj, k, json_string(ref));
		free(name);
		free(ref);
	}
}

static json_t *
cmd_load_row(const char *id, const char *name, enum server_mode mode,
    const json_t *params, json_t *secrets)
{
	json_t *copy = json_deep_copy(params);
	char saved[32];
	time_t now = time(NULL);
	struct tm tm;

	json_object_del(copy, "persist");
	json_object_del(copy, "timeout_ms");
	json_object_del(copy, "progress");
	cmd_load_row_hide(json_object_get(copy, "env"), id, "env", secrets);
	cmd_load_row_hide(json_object_get(copy, "headers"), id, "header",
	    secrets);
	json_object_set_new(copy, "name", json_string(name));
	gmtime_r(&now, &tm);
	strftime(saved, sizeof saved, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_pack("{s:s, s:s, s:s, s:o, s:s}", "id", id, "name", name,
	    "mode", server_mode_name(mode), "params", copy, "saved", saved);
}

/* Every $(...) resolves now: nothing is saved or started that cannot. */
static bool
cmd_load_vars_ok(struct request *req, const struct server_spec *spec)
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
	else
		spec_clear(&resolved);
	free(cause);
	return r == 0;
}

/* A copy of *spec on the heap; *spec is left empty. */
static struct server_spec *
cmd_load_spec_move(struct server_spec *spec)
{
	struct server_spec *moved = malloc(sizeof *moved);

	if (moved == NULL)
		fatal("malloc");
	*moved = *spec;
	memset(spec, 0, sizeof *spec);
	return moved;
}

/*
 * Same id: the same target again, answered by the running server, which
 * starts again first when its values (env, headers, secrets) changed.
 */
void
cmd_load_start(struct request *req, const json_t *params, const char *name,
    enum server_mode mode, struct server_spec *spec, int timeout)
{
	const char *agent = control_agent(req);
	char *id = spec_id(agent, mode, spec);
	struct server *s = server_find(agent, id), *other;
	bool is_listed = s != NULL;
	bool is_saved = !json_is_false(json_object_get(params, "persist")) &&
	    !control_is_internal(req);
	struct server_spec *asked = NULL;

	if (!control_is_internal(req) && !cmd_load_vars_ok(req, spec)) {
		/* Failed: a variable has no value now. */
	} else if (s == NULL && server_count(NULL) >= mcpd_opts.max_servers) {
		control_fail(req, ERRORS_UNAVAILABLE,
		    json_pack("{s:I}", "limit",
			(json_int_t)mcpd_opts.max_servers),
		    "mcpd already has %zu servers, its limit; unload one, or "
		    "start mcpd with a higher --max-servers",
		    mcpd_opts.max_servers);
	} else if (s == NULL && (other = server_find(agent, name)) != NULL) {
		control_fail(req, ERRORS_CONFLICT,
		    json_pack("{s:s}", "name", name),
		    "the name %s is taken by another server; choose "
		    "another with --name, or unload it first",
		    name);
	} else if (s == NULL &&
	    server_new(agent, name, mode, spec, &s, NULL) < 0) {
		control_fail(req, ERRORS_UNAVAILABLE, NULL, "out of memory");
	} else {
		json_t *secrets = is_saved ? json_object() : NULL;
		/* The same target again keeps the name it runs under. */
		json_t *row = is_saved ?
		    cmd_load_row(id, server_name(s), mode, params, secrets) :
		    NULL;

		/* A new server took spec; a listed one gets it with the job. */
		if (is_listed)
			asked = cmd_load_spec_move(spec);
		server_load(s, req, timeout, row, secrets, asked);
	}
	free(id);
}

static void
cmd_load_exec(struct request *req, json_t *params)
{
	struct server_spec spec = { 0 };
	const char *target = cmd_string(params, "target");
	char *name = NULL;
	int timeout;

	if (json_is_true(json_object_get(params, "progress")))
		control_want_progress(req);
	if (target != NULL && json_object_get(params, "command") != NULL) {
		cmd_load_bad(req, "target", "give command or target, not both");
		return;
	}
	if (target != NULL && strstr(target, "://") != NULL) {
		if (cmd_timeout(req, params, mcpd_opts.load_timeout_ms,
			&timeout))
			cmd_load_remote(req, params, timeout);
		return;
	}
	if (target != NULL) {
		if (cmd_timeout(req, params, mcpd_opts.load_timeout_ms,
			&timeout))
			cmd_load_image(req, params, target, timeout);
		return;
	}
	if (json_object_get(params, "allow_local") != NULL ||
	    json_object_get(params, "headers") != NULL) {
		cmd_load_bad(req, "allow_local",
		    "allow_local and headers go with a URL target");
		return;
	}
	if (json_object_get(params, "args") != NULL ||
	    json_object_get(params, "volumes") != NULL ||
	    json_object_get(params, "network") != NULL) {
		cmd_load_bad(req, "args",
		    "args, volumes and network go with an image target");
		return;
	}
	if (json_object_get(params, "command") == NULL) {
		cmd_load_bad(req, "command",
		    "command (an argv array) is "
		    "required");
		return;
	}
	if (cmd_timeout(req, params, mcpd_opts.load_timeout_ms, &timeout) &&
	    cmd_load_spec(req, params, &spec) &&
	    (name = cmd_load_name(req, params,
		 names_from_argv((const char *const *)spec.argv),
		 "the command")) != NULL)
		cmd_load_start(req, params, name, SERVER_PROCESS, &spec,
		    timeout);
	free(name);
	spec_clear(&spec);
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
	{ "args", JSON_ARRAY, false },
	{ "volumes", JSON_ARRAY, false },
	{ "network", JSON_STRING, false },
	{ "progress", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_load_entry = {
	"mcpd/load",
	cmd_load_exec,
	cmd_load_params,
	0,
};
