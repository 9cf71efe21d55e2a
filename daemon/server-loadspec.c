/* SPDX-License-Identifier: ISC */
/* What a load's params ask for, checked into a spec without a request. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"
#include "names.h"
#include "url.h"

#define LOADSPEC_MAX_HEADERS 16 /* the transport sends up to 32 fields */
#define LOADSPEC_MAX_ORIGIN  4096
#define LOADSPEC_MAX_GATEWAY 256 /* servers of one Docker MCP Gateway */

/* Records the first refusal; always false, so that callers return it. */
static bool
loadspec_bad(struct loadspec_error *err, const char *field, const char *why)
{
	if (err->field == NULL) {
		err->field = field;
		err->why = xstrdup(why);
	}
	return false;
}

void
loadspec_error_clear(struct loadspec_error *err)
{
	free(err->why);
	err->why = NULL;
	err->field = NULL;
}

void
loadspec_clear(struct loadspec *ls)
{
	spec_clear(&ls->spec);
	free(ls->name);
	ls->name = NULL;
}

/* A string with no NUL inside: what argv and environ can carry. */
static bool
loadspec_is_cstring(const json_t *v)
{
	return json_is_string(v) &&
	    strlen(json_string_value(v)) == json_string_length(v);
}

static const char *
loadspec_string(const json_t *params, const char *key)
{
	return json_string_value(json_object_get(params, key));
}

static bool
loadspec_env_key_ok(const char *k)
{
	if (!isalpha((unsigned char)k[0]) && k[0] != '_')
		return false;
	for (; *k != '\0'; k++)
		if (!isalnum((unsigned char)*k) && *k != '_')
			return false;
	return true;
}

/* An optional array of C strings into *ret (new). */
static bool
loadspec_strv(struct loadspec_error *err, const char *field,
    const json_t *array, char ***ret)
{
	size_t i, n = json_array_size(array);
	json_t *v;

	if (array == NULL)
		return true;
	*ret = xcalloc(n + 1, sizeof **ret);
	json_array_foreach(array, i, v) {
		if (!loadspec_is_cstring(v))
			return loadspec_bad(err, field,
			    "must be an array of strings without NUL bytes");
		(*ret)[i] = xstrdup(json_string_value(v));
	}
	return true;
}

/* env {K: V} into spec->env as "K=V". */
static bool
loadspec_env(struct loadspec_error *err, const json_t *env,
    struct server_spec *spec)
{
	size_t n = json_object_size(env), i = 0;
	const char *k;
	json_t *v;

	spec->env = xcalloc(n + 1, sizeof *spec->env);
	json_object_foreach((json_t *)(uintptr_t)env, k, v) {
		if (!loadspec_env_key_ok(k))
			return loadspec_bad(err, "env",
			    "env names must match [A-Za-z_][A-Za-z0-9_]*");
		if (!loadspec_is_cstring(v))
			return loadspec_bad(err, "env",
			    "env values must be strings without NUL bytes");
		xasprintf(&spec->env[i++], "%s=%s", k, json_string_value(v));
	}
	return true;
}

/* The name params give (checked), else derived (stolen). */
static bool
loadspec_name(struct loadspec_error *err, const json_t *params, char *derived,
    const char *from, char **ret)
{
	const char *name = loadspec_string(params, "name");
	char why[160];

	if (name != NULL) {
		free(derived);
		if (!names_valid(name))
			return loadspec_bad(err, "name",
			    "name must match [A-Za-z0-9][A-Za-z0-9_-]{0,62}");
		if (names_reserved(name))
			return loadspec_bad(err, "name",
			    "the name mcpd is mcpd's own (its tools are mcpd__find_tools and mcpd__call_tool); choose another with --name");
		*ret = xstrdup(name);
		return true;
	}
	if (names_reserved(derived)) {
		free(derived);
		derived = NULL;
	}
	if (derived == NULL) {
		snprintf(why, sizeof why,
		    "no usable name can be derived from %s; give one with name (mcpctl load --name)",
		    from);
		return loadspec_bad(err, "name", why);
	}
	*ret = derived;
	return true;
}

/* ---- a command: a process server ---- */

static bool
loadspec_process(struct loadspec_error *err, const json_t *params,
    struct loadspec *ls)
{
	const char *cwd = loadspec_string(params, "cwd");
	const char *transport = loadspec_string(params, "transport");
	const json_t *command = json_object_get(params, "command");
	struct server_spec *spec = &ls->spec;

	if (json_object_get(params, "allow_local") != NULL ||
	    json_object_get(params, "headers") != NULL ||
	    json_object_get(params, "oauth") != NULL)
		return loadspec_bad(err, "allow_local",
		    "allow_local, headers and oauth go with a URL target");
	if (json_object_get(params, "args") != NULL ||
	    json_object_get(params, "volumes") != NULL ||
	    json_object_get(params, "network") != NULL)
		return loadspec_bad(err, "args",
		    "args, volumes and network go with an image target");
	if (command == NULL)
		return loadspec_bad(err, "command",
		    "command (an argv array) is required");
	if (transport != NULL && strcmp(transport, "stdio") != 0)
		return loadspec_bad(err, "transport",
		    "a command speaks transport stdio");
	if (cwd != NULL && cwd[0] != '/')
		return loadspec_bad(err, "cwd", "cwd must be an absolute path");
	if (cwd != NULL)
		spec->cwd = xstrdup(cwd);
	if (json_array_size(command) == 0)
		return loadspec_bad(err, "command",
		    "command needs at least the program to run");
	if (!loadspec_strv(err, "command", command, &spec->argv))
		return false;
	if (spec->argv[0][0] == '\0')
		return loadspec_bad(err, "command",
		    "command must start with a program");
	ls->mode = SERVER_PROCESS;
	return loadspec_env(err, json_object_get(params, "env"), spec) &&
	    loadspec_name(err, params,
		names_from_argv((const char *const *)spec->argv), "the command",
		&ls->name);
}

/* ---- an image: a container server ---- */

/* Volumes and a network go to docker as they are, one argument each. */
static bool
loadspec_docker_args(struct loadspec_error *err, const json_t *params,
    struct server_spec *spec)
{
	const char *network = loadspec_string(params, "network");

	if (!loadspec_strv(err, "args", json_object_get(params, "args"),
		&spec->args) ||
	    !loadspec_strv(err, "volumes", json_object_get(params, "volumes"),
		&spec->volumes))
		return false;
	for (size_t i = 0; spec->volumes != NULL && spec->volumes[i]; i++)
		if (spec->volumes[i][0] == '\0' || spec->volumes[i][0] == '-')
			return loadspec_bad(err, "volumes",
			    "a volume is SOURCE:TARGET[:OPTIONS], not empty and not an option");
	if (network != NULL &&
	    (network[0] == '\0' || network[0] == '-' ||
		strlen(network) !=
		    json_string_length(json_object_get(params, "network"))))
		return loadspec_bad(err, "network",
		    "network must name a docker network");
	if (network != NULL)
		spec->network = xstrdup(network);
	return true;
}

static bool
loadspec_image(struct loadspec_error *err, const json_t *params,
    const char *target, struct loadspec *ls)
{
	char *cause = NULL;
	bool ok;

	if (json_object_get(params, "allow_local") != NULL ||
	    json_object_get(params, "headers") != NULL ||
	    json_object_get(params, "oauth") != NULL ||
	    json_object_get(params, "cwd") != NULL)
		return loadspec_bad(err, "target",
		    "an image takes no allow_local, headers, oauth or cwd");
	if (json_object_get(params, "transport") != NULL)
		return loadspec_bad(err, "transport",
		    "a container's transport is detected: stdio first, streamable HTTP once it says it listens");
	if (xenomem(names_image_normalize(target, &ls->spec.image, &cause)) <
	    0) {
		ok = loadspec_bad(err, "target",
		    cause != NULL ? cause : "bad image");
		free(cause);
		return ok;
	}
	ls->mode = SERVER_CONTAINER;
	return loadspec_docker_args(err, params, &ls->spec) &&
	    loadspec_env(err, json_object_get(params, "env"), &ls->spec) &&
	    loadspec_name(err, params, names_from_image(ls->spec.image),
		"the image", &ls->name);
}

/* ---- a URL: a remote server ---- */

/* A header name is an HTTP token; a value has no CR, LF or NUL. */
static bool
loadspec_header_ok(const char *name, const json_t *value)
{
	if (name[0] == '\0' || !loadspec_is_cstring(value) ||
	    strpbrk(json_string_value(value), "\r\n") != NULL)
		return false;
	for (const char *c = name; *c != '\0'; c++)
		if (!isalnum((unsigned char)*c) &&
		    strchr("!#$%&'*+-.^_`|~", *c) == NULL)
			return false;
	return true;
}

/* The host, with dots as dashes: "mcp.example.com" -> "mcp-example-com". */
static char *
loadspec_remote_name(const struct url *u)
{
	char name[NAMES_MAX + 1];
	size_t n = 0;

	for (const char *c = u->host; *c != '\0' && n < NAMES_MAX; c++)
		if (isalnum((unsigned char)*c) || *c == '-')
			name[n++] = *c;
		else if (n > 0 && name[n - 1] != '-')
			name[n++] = '-';
	name[n] = '\0';
	return names_valid(name) ? xstrdup(name) : NULL;
}

/* A pre-registered OAuth client: {client_id, client_secret?, issuer?}. */
static bool
loadspec_oauth(struct loadspec_error *err, const json_t *oauth,
    struct server_spec *spec)
{
	const char *k;
	json_t *v;

	if (oauth == NULL)
		return true;
	if (!json_is_object(oauth) ||
	    !json_is_string(json_object_get(oauth, "client_id")))
		return loadspec_bad(err, "oauth",
		    "oauth must be an object with client_id (and client_secret, issuer)");
	json_object_foreach((json_t *)(uintptr_t)oauth, k, v) {
		if (strcmp(k, "client_id") != 0 &&
		    strcmp(k, "client_secret") != 0 && strcmp(k, "issuer") != 0)
			return loadspec_bad(err, "oauth",
			    "oauth takes client_id, client_secret and issuer only");
		if (!loadspec_is_cstring(v) || json_string_length(v) == 0 ||
		    json_string_length(v) > 4096 ||
		    strpbrk(json_string_value(v), "\r\n") != NULL)
			return loadspec_bad(err, "oauth",
			    "oauth values must be single-line strings of 1 to 4096 bytes");
	}
	spec->remote.oauth = json_deep_copy(oauth);
	return true;
}

static bool
loadspec_remote_spec(struct loadspec_error *err, const json_t *params,
    const struct url *u, struct server_spec *spec)
{
	const char *transport = loadspec_string(params, "transport");
	json_t *headers = json_object_get(params, "headers"), *v;
	const char *k;

	static const char *const local_only[] = { "command", "env", "cwd",
		"args", "volumes", "network", NULL };

	for (size_t i = 0; local_only[i] != NULL; i++)
		if (json_object_get(params, local_only[i]) != NULL)
			return loadspec_bad(err, local_only[i],
			    "a URL takes no command, env, cwd, args, volumes or network");
	if (transport != NULL && strcmp(transport, "streamable-http") != 0 &&
	    strcmp(transport, "sse") != 0)
		return loadspec_bad(err, "transport",
		    "transport must be streamable-http or sse");
	if (json_object_size(headers) > LOADSPEC_MAX_HEADERS)
		return loadspec_bad(err, "headers", "at most 16 headers");
	json_object_foreach(headers, k, v)
		if (!loadspec_header_ok(k, v))
			return loadspec_bad(err, "headers",
			    "headers must map HTTP token names to single-line strings");
	spec->remote.url = xnonnull(url_canonical(u));
	spec->remote.allow_local = json_is_true(json_object_get(params,
	    "allow_local"));
	spec->remote.headers = xjson(headers != NULL ? json_deep_copy(headers) :
						       json_object());
	/* Inferred: a path with /mcp is streamable HTTP; else try it first. */
	spec->remote.is_sse = transport != NULL &&
	    strcmp(transport, "sse") == 0;
	spec->remote.may_fall_back = transport == NULL &&
	    strstr(u->path, "/mcp") == NULL;
	spec->transport = xstrdup(transport != NULL ? transport :
						      "streamable-http");
	return loadspec_oauth(err, json_object_get(params, "oauth"), spec);
}

static bool
loadspec_remote(struct loadspec_error *err, const json_t *params,
    const char *target, struct loadspec *ls)
{
	char *cause = NULL;
	struct url u;
	bool ok;

	if (url_parse(target, &u, &cause) < 0) {
		ok = loadspec_bad(err, "target",
		    cause != NULL ? cause : "bad URL");
		free(cause);
		return ok;
	}
	ls->mode = SERVER_REMOTE;
	ok = loadspec_name(err, params, loadspec_remote_name(&u),
		 "the URL's host", &ls->name) &&
	    loadspec_remote_spec(err, params, &u, &ls->spec);
	url_free(&u);
	return ok;
}

/* ---- the Docker MCP Gateway: docker mcp gateway run ---- */

/* A name of Docker's catalog: [A-Za-z0-9][A-Za-z0-9._-]*, no comma. */
static bool
loadspec_gateway_server_ok(const json_t *v)
{
	const char *s = json_string_value(v);

	if (!loadspec_is_cstring(v) || s[0] == '\0' ||
	    !isalnum((unsigned char)s[0]) || strlen(s) > 255)
		return false;
	for (; *s != '\0'; s++)
		if (!isascii((unsigned char)*s) ||
		    !(isalnum((unsigned char)*s) || strchr("._-", *s) != NULL))
			return false;
	return true;
}

static bool
loadspec_gateway(struct loadspec_error *err, const json_t *params,
    struct loadspec *ls)
{
	static const char *const others[] = { "command", "target", "env", "cwd",
		"transport", "allow_local", "headers", "args", "volumes",
		"network", NULL };
	const json_t *servers = json_object_get(params, "gateway"), *v;
	char *list = NULL, *grown;
	size_t i, len = 0;

	for (i = 0; others[i] != NULL; i++)
		if (json_object_get(params, others[i]) != NULL)
			return loadspec_bad(err, others[i],
			    "a gateway takes only its servers, a name and a timeout");
	if (!json_is_array(servers) || json_array_size(servers) == 0 ||
	    json_array_size(servers) > LOADSPEC_MAX_GATEWAY)
		return loadspec_bad(err, "gateway",
		    "gateway must be an array of 1 to 256 server names of Docker's MCP catalog");
	json_array_foreach(servers, i, v) {
		if (!loadspec_gateway_server_ok(v)) {
			free(list);
			return loadspec_bad(err, "gateway",
			    "a gateway server is a name of Docker's MCP catalog: letters, digits, '.', '_' and '-'");
		}
		grown = xreallocarray(list, len + json_string_length(v) + 2, 1);
		list = grown;
		if (len > 0)
			list[len++] = ',';
		memcpy(list + len, json_string_value(v), json_string_length(v));
		len += json_string_length(v);
		list[len] = '\0';
	}
	ls->mode = SERVER_GATEWAY;
	ls->spec.argv = xcalloc(9, sizeof *ls->spec.argv);
	ls->spec.argv[0] = xstrdup(docker_program());
	ls->spec.argv[1] = xstrdup("mcp");
	ls->spec.argv[2] = xstrdup("gateway");
	ls->spec.argv[3] = xstrdup("run");
	ls->spec.argv[4] = xstrdup("--servers");
	ls->spec.argv[5] = list;
	ls->spec.argv[6] = xstrdup("--transport");
	ls->spec.argv[7] = xstrdup("streaming");
	/* mcpd reaches it over Streamable HTTP; --port comes at each start. */
	ls->spec.transport = xstrdup("streamable-http");
	return loadspec_name(err, params, xstrdup(LOADSPEC_GATEWAY_NAME),
	    "the gateway", &ls->name);
}

/* on_demand and idle_stop_ms: when it runs (server-idle.c). */
static bool
loadspec_on_demand(struct loadspec_error *err, const json_t *params,
    struct loadspec *ls)
{
	const json_t *on = json_object_get(params, "on_demand");
	const json_t *idle = json_object_get(params, "idle_stop_ms");

	ls->idle_stop_ms = -1;
	if (on != NULL && !json_is_boolean(on))
		return loadspec_bad(err, "on_demand", "on_demand is a boolean");
	ls->is_on_demand = json_is_true(on);
	if (idle == NULL)
		return true;
	if (!loadspec_idle_stop_ok(idle))
		return loadspec_bad(err, "idle_stop_ms",
		    LOADSPEC_IDLE_STOP_WHY);
	ls->idle_stop_ms = (int)json_integer_value(idle);
	return true;
}

bool
loadspec_idle_stop_ok(const json_t *v)
{
	return json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) <= LOADSPEC_IDLE_STOP_MAX_MS;
}

bool
loadspec_parse(const json_t *params, struct loadspec *ls,
    struct loadspec_error *err)
{
	const char *target = loadspec_string(params, "target");
	const json_t *origin = json_object_get(params, "origin");

	memset(ls, 0, sizeof *ls);
	if (!loadspec_on_demand(err, params, ls))
		return false;
	/* Kept in the saved row as given: where an import read the server. */
	if (origin != NULL &&
	    (!loadspec_is_cstring(origin) ||
		json_string_length(origin) > LOADSPEC_MAX_ORIGIN))
		return loadspec_bad(err, "origin",
		    "origin must be a string of at most 4096 bytes without NUL");
	if (target != NULL && json_object_get(params, "command") != NULL)
		return loadspec_bad(err, "target",
		    "give command or target, not both");
	if (json_object_get(params, "gateway") != NULL)
		return loadspec_gateway(err, params, ls);
	if (target != NULL && strstr(target, "://") != NULL)
		return loadspec_remote(err, params, target, ls);
	if (target != NULL)
		return loadspec_image(err, params, target, ls);
	return loadspec_process(err, params, ls);
}
