/* SPDX-License-Identifier: ISC */
/* The gateway: MCP answered on a control connection, over every server. */
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"

#define GATEWAY_PAGE	 500 /* tools per tools/list page */
#define GATEWAY_OFFERED	 "2025-11-25"
#define GATEWAY_MODERN	 "2026-07-28"
#define GATEWAY_LOG_NONE 8 /* above emergency: no log message passes */

struct gateway {
	struct client *client;
	char *version;	     /* agreed at initialize, or the modern era */
	bool is_listening;   /* initialized: it takes list_changed */
	bool is_due;	     /* a list_changed waits for the next loop turn */
	int log_level;	     /* the lowest level it takes (logging/setLevel) */
	json_t *client_caps; /* what it declared at initialize, or NULL */
	struct gateway_listen *listen; /* 2026-07-28 subscriptions/listen */
	/* What it was shown: exposed name -> {id, tool, def}. */
	json_t *listed;
	json_t *by_name;      /* the catalog by exposed name, made at ... */
	uint64_t by_name_key; /* ... this server_gateway_key */
	json_t *prompts;      /* exposed name -> {server, name} */
	json_t *resources;    /* uri -> server */
	json_t *templates;    /* uriTemplate -> server */
	TAILQ_ENTRY(gateway) entry;
};

static TAILQ_HEAD(,
    gateway) gateway_list = TAILQ_HEAD_INITIALIZER(gateway_list);
static struct event *gateway_notify_event;

static bool gateway_is_modern(const struct gateway *);

/* RFC 5424 severities as MCP names them, lowest first. */
static const char *const gateway_levels[] = { "debug", "info", "notice",
	"warning", "error", "critical", "alert", "emergency", NULL };

static const char *const gateway_versions[] = { GATEWAY_OFFERED, "2025-06-18",
	"2025-03-26", "2024-11-05", NULL };

/* What 2026-07-28 removed: its requests are -32601 there. */
static const char *const gateway_removed[] = { "initialize", "ping",
	"logging/setLevel", "resources/subscribe", "resources/unsubscribe",
	NULL };

/* Results that say how long they may be cached (2026-07-28). */
static const char *const gateway_cacheable[] = { "server/discover",
	"tools/list", "prompts/list", "resources/list",
	"resources/templates/list", "resources/read", NULL };

static bool
gateway_is_one_of(const char *s, const char *const *list)
{
	for (size_t i = 0; s != NULL && list[i] != NULL; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

static int
gateway_level(const char *name)
{
	for (int i = 0; name != NULL && gateway_levels[i] != NULL; i++)
		if (strcmp(name, gateway_levels[i]) == 0)
			return i;
	return -1;
}

struct gateway *
gateway_new(struct client *c)
{
	struct gateway *gw = xcalloc(1, sizeof *gw);

	gw->listed = xjson(json_object());
	gw->prompts = xjson(json_object());
	gw->resources = xjson(json_object());
	gw->templates = xjson(json_object());
	gw->client = c;
	gw->log_level = 0; /* what the server sends: nothing is held back */
	TAILQ_INSERT_TAIL(&gateway_list, gw, entry);
	return gw;
}

void
gateway_free(struct gateway *gw)
{
	bool had_roots;

	if (gw == NULL)
		return;
	had_roots = gateway_takes_roots(gw);
	gateway_subs_drop(gw->client);
	gateway_listen_end(&gw->listen);
	TAILQ_REMOVE(&gateway_list, gw, entry);
	/* Its roots no longer count: the servers that keep theirs ask again. */
	if (had_roots && !mcpd_is_stopping())
		server_roots_changed(control_client_agent(gw->client),
		    control_client_scope(gw->client));
	json_decref(gw->listed);
	json_decref(gw->by_name);
	json_decref(gw->prompts);
	json_decref(gw->resources);
	json_decref(gw->templates);
	json_decref(gw->client_caps);
	free(gw->version);
	free(gw);
}

bool
gateway_wants_log(const struct gateway *gw, const char *level)
{
	int n = gateway_level(level);

	return gw != NULL && (n < 0 || n >= gw->log_level);
}

const json_t *
gateway_client_caps_peek(const struct gateway *gw)
{
	return gw != NULL ? gw->client_caps : NULL;
}

struct gateway *
gateway_next(const struct gateway *gw)
{
	return gw == NULL ? TAILQ_FIRST(&gateway_list) : TAILQ_NEXT(gw, entry);
}

struct client *
gateway_client(const struct gateway *gw)
{
	return gw->client;
}

bool
gateway_takes_roots(const struct gateway *gw)
{
	return gw->is_listening && !gateway_is_modern(gw) &&
	    gateway_caps_take(gw->client_caps, "roots/list", NULL);
}

/*
 * Whether caps declare what a server's request needs: sampling, roots,
 * or elicitation in the mode asked (an empty elicitation object is form
 * mode, as before modes existed).
 */
bool
gateway_caps_take(const json_t *caps, const char *method, const json_t *params)
{
	const char *mode = json_string_value(json_object_get(params, "mode"));
	const json_t *e;

	if (strcmp(method, "sampling/createMessage") == 0)
		return json_is_object(json_object_get(caps, "sampling"));
	if (strcmp(method, "roots/list") == 0)
		return json_is_object(json_object_get(caps, "roots"));
	if (strcmp(method, "elicitation/create") != 0 ||
	    !json_is_object(e = json_object_get(caps, "elicitation")))
		return false;
	if (mode != NULL && strcmp(mode, "url") == 0)
		return json_is_object(json_object_get(e, "url"));
	return json_object_size(e) == 0 ||
	    json_is_object(json_object_get(e, "form"));
}

/* The scope's tools, each with the name this session sees (new array). */
static json_t *
gateway_catalog(const char *agent, const json_t *scope)
{
	json_t *all = server_gateway_catalog(agent, scope);

	gateway_names(all, json_array_size(scope) != 1);
	return all;
}

/* The Tool a client sees: verbatim but its name, _meta saying whose. */
static json_t *
gateway_tool_view(const json_t *e)
{
	json_t *tool = json_deep_copy(json_object_get(e, "tool")), *meta;

	meta = json_object_get(tool, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(tool, "_meta", meta);
	}
	json_object_set(meta, "io.mcpd/server", json_object_get(e, "server"));
	json_object_set(meta, "io.mcpd/tool",
	    json_object_get(json_object_get(e, "tool"), "name"));
	json_object_set(tool, "name", json_object_get(e, "name"));
	return tool;
}

/* ---- methods ---- */

static void
gateway_fail(struct request *req, int code, const char *fmt, const char *arg)
{
	control_fail_code(req, code, NULL, fmt, arg);
}

static json_t *
gateway_capabilities(void)
{
	return json_pack("{s:{s:b}, s:{s:b}, s:{s:b, s:b}, s:{}, s:{}}",
	    "tools", "listChanged", 1, "prompts", "listChanged", 1, "resources",
	    "listChanged", 1, "subscribe", 1, "completions", "logging");
}

/*
 * 2026-07-28 delivers list changes on a subscriptions/listen stream
 * (gateway-listen.c); resource updates there are not offered: no
 * subscribe.
 */
static json_t *
gateway_modern_capabilities(void)
{
	return json_pack("{s:{s:b}, s:{s:b}, s:{s:b}, s:{}, s:{}}", "tools",
	    "listChanged", 1, "prompts", "listChanged", 1, "resources",
	    "listChanged", 1, "completions", "logging");
}

static bool
gateway_is_modern(const struct gateway *gw)
{
	return gw != NULL && gw->version != NULL &&
	    strcmp(gw->version, GATEWAY_MODERN) == 0;
}

/* A request that says it is of the 2026-07-28 era (its _meta). */
static bool
gateway_is_modern_request(const json_t *params)
{
	const char *v =
	    json_string_value(json_object_get(json_object_get(params, "_meta"),
		"io.modelcontextprotocol/protocolVersion"));

	return v != NULL && strcmp(v, GATEWAY_MODERN) == 0;
}

void
gateway_answer(struct request *req, const char *method, json_t *result)
{
	struct gateway *gw = control_gateway_of(req);
	json_t *copy;

	/* 2026-07-28: every result has a resultType, lists a cache hint. */
	if (gateway_is_modern(gw) && json_is_object(result)) {
		copy = json_deep_copy(result); /* it may be a server's */
		json_decref(result);
		result = copy;
		if (json_object_get(result, "resultType") == NULL)
			json_object_set_new(result, "resultType",
			    json_string("complete"));
		if (gateway_is_one_of(method, gateway_cacheable) &&
		    json_object_get(result, "ttlMs") == NULL)
			json_object_set_new(result, "ttlMs", json_integer(0));
		/* The agent's own view: never shared across tokens. */
		if (gateway_is_one_of(method, gateway_cacheable) &&
		    json_object_get(result, "cacheScope") == NULL)
			json_object_set_new(result, "cacheScope",
			    json_string("private"));
	}
	control_reply(req, result);
}

void
gateway_remember(struct gateway *gw, const char *key, const json_t *e)
{
	const json_t *item = json_object_get(e, "tool");
	const json_t *server = json_object_get(e, "server");
	const char *uri;

	if (gw == NULL)
		return;
	if (strcmp(key, "prompts") == 0)
		json_object_set_new(gw->prompts,
		    json_string_value(json_object_get(e, "name")),
		    json_pack("{s:O, s:O}", "server", server, "name",
			json_object_get(item, "name")));
	else if (strcmp(key, "resources") == 0 &&
	    (uri = json_string_value(json_object_get(item, "uri"))) != NULL)
		json_object_set(gw->resources, uri,
		    (json_t *)(uintptr_t)server);
	else if ((uri = json_string_value(json_object_get(item,
		      "uriTemplate"))) != NULL)
		json_object_set(gw->templates, uri,
		    (json_t *)(uintptr_t)server);
}

/* The server of a URI: listed as it is, else the longest template prefix. */
static const char *
gateway_uri_server(const struct gateway *gw, const char *uri)
{
	const char *server = json_string_value(json_object_get(gw->resources,
		       uri)),
		   *tmpl, *best = NULL;
	size_t len, best_len = 0;
	json_t *v;

	if (server != NULL)
		return server;
	json_object_foreach(gw->templates, tmpl, v) {
		len = strcspn(tmpl, "{");
		if (len > best_len && strncmp(uri, tmpl, len) == 0) {
			best = json_string_value(v);
			best_len = len;
		}
	}
	return best;
}

/*
 * A name or URI this session was not shown is looked up by listing first
 * (once), since a client may ask without listing; then it is unknown.
 */
typedef void gateway_handler(struct gateway *, struct request *, json_t *,
    bool may_learn);

static gateway_handler gateway_prompts_get, gateway_resources_read,
    gateway_complete, gateway_subscribe;

static void
gateway_learned(struct request *req, json_t *params, void *arg)
{
	struct gateway *gw = control_gateway_of(req);
	gateway_handler *fn = (gateway_handler *)(uintptr_t)arg;

	if (gw == NULL)
		control_reply(req, json_object()); /* its client has gone */
	else
		fn(gw, req, params, false);
	json_decref(params);
}

static void
gateway_learn_first(struct request *req, const char *what, gateway_handler *fn,
    json_t *params)
{
	gateway_learn(req, what, gateway_learned, (void *)(uintptr_t)fn,
	    json_incref(params));
}

static void
gateway_prompts_get(struct gateway *gw, struct request *req, json_t *params,
    bool may_learn)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *seen = name != NULL ? json_object_get(gw->prompts, name) : NULL;
	json_t *up;

	if (seen == NULL && may_learn && name != NULL) {
		gateway_learn_first(req, "prompts", gateway_prompts_get,
		    params);
		return;
	}
	if (seen == NULL) {
		audit_refused(req, "prompts/get", NULL, name,
		    JSONRPC_INVALID_PARAMS, ERRORS_KIND_COUNT);
		gateway_fail(req, JSONRPC_INVALID_PARAMS,
		    "unknown prompt %s: none of this scope's servers lists it (prompts/list)",
		    name != NULL ? name : "(none)");
		return;
	}
	up = json_deep_copy(params);
	json_object_set(up, "name", json_object_get(seen, "name"));
	gateway_forward(req, json_string_value(json_object_get(seen, "server")),
	    "prompts/get", up);
}

/* The server of a resource's URI, or NULL after failing the request. */
static const char *
gateway_resource_route(struct gateway *gw, struct request *req, json_t *params,
    bool may_learn, gateway_handler *fn)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	const char *server = uri != NULL ? gateway_uri_server(gw, uri) : NULL;

	if (server != NULL)
		return server;
	if (may_learn && uri != NULL)
		gateway_learn_first(req, "resources", fn, params);
	else { /* SEP-2164: -32602, with the URI in data */
		audit_refused(req, "resources/read", NULL, uri,
		    JSONRPC_INVALID_PARAMS, ERRORS_KIND_COUNT);
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s?}", "uri", uri),
		    "resource not found: %s (no server of this scope lists it or a template it fits)",
		    uri != NULL ? uri : "(none)");
	}
	return NULL;
}

static void
gateway_resources_read(struct gateway *gw, struct request *req, json_t *params,
    bool may_learn)
{
	const char *server = gateway_resource_route(gw, req, params, may_learn,
	    gateway_resources_read);

	if (server != NULL)
		gateway_forward(req, server, "resources/read",
		    json_deep_copy(params));
}

/* completion/complete goes to the server of its ref, named as it knows it. */
static void
gateway_complete(struct gateway *gw, struct request *req, json_t *params,
    bool may_learn)
{
	json_t *ref = json_object_get(params, "ref"), *up, *seen = NULL;
	const char *type = json_string_value(json_object_get(ref, "type"));
	const char *name = json_string_value(json_object_get(ref, "name"));
	const char *uri = json_string_value(json_object_get(ref, "uri"));
	const char *server = NULL;
	bool is_prompt = type != NULL && strcmp(type, "ref/prompt") == 0;
	bool is_resource = type != NULL && strcmp(type, "ref/resource") == 0;

	if (is_prompt && name != NULL &&
	    (seen = json_object_get(gw->prompts, name)) != NULL)
		server = json_string_value(json_object_get(seen, "server"));
	else if (is_resource && uri != NULL)
		server = gateway_uri_server(gw, uri);
	if (server == NULL && may_learn &&
	    ((is_prompt && name != NULL) || (is_resource && uri != NULL))) {
		gateway_learn_first(req, is_prompt ? "prompts" : "resources",
		    gateway_complete, params);
		return;
	}
	if (server == NULL) {
		gateway_fail(req, JSONRPC_INVALID_PARAMS, "%s",
		    "completion/complete: the ref names no prompt or resource of this scope's servers");
		return;
	}
	up = json_deep_copy(params);
	if (seen != NULL)
		json_object_set(json_object_get(up, "ref"), "name",
		    json_object_get(seen, "name"));
	gateway_forward(req, server, "completion/complete", up);
}

/* resources/subscribe goes to the server of the URI (gateway-subs.c). */
static void
gateway_subscribe(struct gateway *gw, struct request *req, json_t *params,
    bool may_learn)
{
	const char *server = gateway_resource_route(gw, req, params, may_learn,
	    gateway_subscribe);

	if (server != NULL)
		gateway_subs_subscribe(gw->client, req, server, params);
}

static json_t *
gateway_server_info(void)
{
	return json_pack("{s:s, s:s, s:s}", "name", "mcpd", "title",
	    "mcpd: every MCP server of this user", "version", MCPD_VERSION);
}

static void
gateway_initialize(struct gateway *gw, struct request *req, json_t *params)
{
	const char *want = json_string_value(json_object_get(params,
	    "protocolVersion"));
	const char *version = GATEWAY_OFFERED;
	json_t *result;
	char *text;

	for (size_t i = 0; want != NULL && gateway_versions[i] != NULL; i++)
		if (strcmp(want, gateway_versions[i]) == 0)
			version = gateway_versions[i];
	free(gw->version);
	gw->version = xstrdup(version);
	json_decref(gw->client_caps);
	gw->client_caps = json_incref(json_object_get(params, "capabilities"));
	result = json_pack("{s:s, s:o, s:o}", "protocolVersion", version,
	    "capabilities", gateway_capabilities(), "serverInfo",
	    gateway_server_info());
	if ((text = gateway_instructions(control_agent(req),
		 control_scope(req))) != NULL)
		json_object_set_new(result, "instructions", json_string(text));
	free(text);
	control_reply(req, result);
}

/* 2026-07-28: no handshake; every request carries its version. */
static void
gateway_discover(struct gateway *gw, struct request *req)
{
	free(gw->version);
	gw->version = xstrdup(GATEWAY_MODERN);
	/* Its changes come on subscriptions/listen only. */
	gw->is_listening = false;
	/* serverInfo in _meta (spec PR #3002), and where it was before. */
	gateway_answer(req, "server/discover",
	    json_pack("{s:[s], s:o, s:o, s:{s:o}}", "supportedVersions",
		GATEWAY_MODERN, "capabilities", gateway_modern_capabilities(),
		"serverInfo", gateway_server_info(), "_meta",
		"io.modelcontextprotocol/serverInfo", gateway_server_info()));
}

/* The offset an opaque cursor stands for; -1 when it is not one of ours. */
static long
gateway_cursor(const json_t *params)
{
	const json_t *v = json_object_get(params, "cursor");
	const char *s = json_string_value(v);
	char *end;
	long n;

	if (v == NULL || json_is_null(v))
		return 0;
	if (s == NULL || strncmp(s, "mcpd:", 5) != 0)
		return -1;
	n = strtol(s + 5, &end, 10);
	return *end == '\0' && n > 0 ? n : -1;
}

static void
gateway_tools_list(struct gateway *gw, struct request *req, json_t *params)
{
	json_t *all = gateway_catalog(control_agent(req), control_scope(req));
	json_t *tools = json_array(), *e, *result;
	long from = gateway_cursor(params);
	char cursor[32];
	size_t i;

	if (from < 0 || (size_t)from > json_array_size(all)) {
		json_decref(all);
		json_decref(tools);
		gateway_fail(req, JSONRPC_INVALID_PARAMS, "%s",
		    "invalid cursor: list again without one");
		return;
	}
	json_array_foreach(all, i, e) {
		if (i < (size_t)from)
			continue;
		if (json_array_size(tools) == GATEWAY_PAGE)
			break;
		json_array_append_new(tools, gateway_tool_view(e));
		json_object_set_new(gw->listed,
		    json_string_value(json_object_get(e, "name")),
		    json_pack("{s:O, s:O}", "id", json_object_get(e, "id"),
			"def", json_object_get(e, "tool")));
	}
	result = json_pack("{s:o}", "tools", tools);
	if (i < json_array_size(all)) {
		snprintf(cursor, sizeof cursor, "mcpd:%zu", i);
		json_object_set_new(result, "nextCursor", json_string(cursor));
	}
	json_decref(all);
	gateway_answer(req, "tools/list", result);
}

/*
 * The scope's catalog by exposed name (borrowed). It is made again only
 * when what it is made of changed: a call does not name every tool of
 * every server again.
 */
static json_t *
gateway_by_name(struct gateway *gw, struct request *req)
{
	uint64_t key = server_gateway_key(control_agent(req),
	    control_scope(req));
	json_t *all, *e;
	size_t i;

	if (gw->by_name != NULL && key == gw->by_name_key)
		return gw->by_name;
	all = gateway_catalog(control_agent(req), control_scope(req));
	json_decref(gw->by_name);
	gw->by_name = xjson(json_object());
	json_array_foreach(all, i, e)
		json_object_set(gw->by_name,
		    json_string_value(json_object_get(e, "name")), e);
	json_decref(all);
	gw->by_name_key = key;
	return gw->by_name;
}

/*
 * The server and tool a session's call by name goes to; NULL (req failed)
 * for a name it does not know or a tool that changed since it listed it.
 */
static struct server *
gateway_call_target(struct gateway *gw, struct request *req, const char *name,
    const char **ret_tool)
{
	json_t *e = json_object_get(gateway_by_name(gw, req), name), *seen;
	struct server *s;

	if (e == NULL ||
	    (s = server_find(control_agent(req),
		 json_string_value(json_object_get(e, "id")))) == NULL) {
		audit_refused(req, "tools/call", NULL, name,
		    JSONRPC_INVALID_PARAMS, ERRORS_KIND_COUNT);
		gateway_fail(req, JSONRPC_INVALID_PARAMS,
		    "unknown tool %s: list the tools again (tools/list)", name);
		return NULL;
	}
	/* A contract it did not see is not called (DESIGN 11). */
	seen = json_object_get(gw->listed, name);
	if (seen != NULL &&
	    (!json_equal(json_object_get(seen, "id"),
		 json_object_get(e, "id")) ||
		!json_equal(json_object_get(seen, "def"),
		    json_object_get(e, "tool")))) {
		audit_refused(req, "tools/call", server_name(s), name, 0,
		    ERRORS_STALE_HANDLE);
		control_fail(req, ERRORS_STALE_HANDLE,
		    json_pack("{s:s}", "tool", name),
		    "the tool %s changed since this session listed the tools; list them again (tools/list) before calling it",
		    name);
		return NULL;
	}
	*ret_tool = json_string_value(json_object_get(json_object_get(e,
							  "tool"),
	    "name"));
	return s;
}

static void
gateway_tools_call(struct gateway *gw, struct request *req, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	const char *tool;
	struct server *s;

	if (name == NULL || (args != NULL && !json_is_object(args))) {
		gateway_fail(req, JSONRPC_INVALID_PARAMS, "%s",
		    "tools/call needs a name and an arguments object");
		return;
	}
	if ((s = gateway_call_target(gw, req, name, &tool)) == NULL)
		return;
	args = args != NULL ? json_incref(args) : json_object();
	server_call_mcp(s, 0, tool, args, mcpd_opts.call_timeout_ms, req,
	    params);
	json_decref(args);
}

bool
gateway_takes_text(const struct gateway *gw)
{
	return gw != NULL && !gateway_is_modern(gw) && !mcpd_is_stopping();
}

void
gateway_tools_call_text(struct gateway *gw, struct request *req,
    const char *name, const char *args, size_t len)
{
	static json_t *plain; /* the params of a call with no _meta */
	const char *tool;
	struct server *s;

	if (plain == NULL)
		plain = xjson(json_object());
	if ((s = gateway_call_target(gw, req, name, &tool)) != NULL)
		server_call_text(s, tool, args, len, mcpd_opts.call_timeout_ms,
		    req, plain);
}

static void
gateway_set_level(struct gateway *gw, struct request *req, json_t *params)
{
	const char *level = json_string_value(json_object_get(params, "level"));
	int n = gateway_level(level);

	if (n < 0) {
		gateway_fail(req, JSONRPC_INVALID_PARAMS,
		    "unknown log level %s: debug, info, notice, warning, error, critical, alert or emergency",
		    level != NULL ? level : "(none)");
		return;
	}
	gw->log_level = n;
	control_reply(req, json_object());
}

/*
 * A 2026-07-28 request: the session is of that era from now on, and the
 * request's _meta logLevel is the level of the log messages it gets
 * (none without one).
 */
static void
gateway_modern_request(struct gateway *gw, const json_t *params)
{
	const char *level =
	    json_string_value(json_object_get(json_object_get(params, "_meta"),
		"io.modelcontextprotocol/logLevel"));
	int n = gateway_level(level);

	if (!gateway_is_modern(gw)) {
		free(gw->version);
		gw->version = xstrdup(GATEWAY_MODERN);
	}
	gw->log_level = n >= 0 ? n : GATEWAY_LOG_NONE;
}

void
gateway_dispatch(struct request *req, const char *method, json_t *params)
{
	struct gateway *gw = control_gateway(req);
	json_t *empty = NULL;

	if (gw == NULL) {
		control_reply(req, json_object()); /* its client has gone */
		return;
	}
	if (params == NULL)
		params = empty = json_object();
	if (gateway_is_modern_request(params))
		gateway_modern_request(gw, params);
	if (gateway_is_modern_request(params) &&
	    gateway_is_one_of(method, gateway_removed))
		gateway_fail(req, JSONRPC_METHOD_NOT_FOUND,
		    "%s is not part of MCP 2026-07-28", method);
	else if (strcmp(method, "initialize") == 0)
		gateway_initialize(gw, req, params);
	else if (strcmp(method, "server/discover") == 0)
		gateway_discover(gw, req);
	else if (strcmp(method, "ping") == 0)
		control_reply(req, json_object());
	else if (mcpd_is_stopping())
		control_fail(req, ERRORS_UNAVAILABLE, NULL,
		    "mcpd is shutting down");
	else if (strcmp(method, "tools/list") == 0)
		gateway_tools_list(gw, req, params);
	else if (strcmp(method, "tools/call") == 0)
		gateway_tools_call(gw, req, params);
	else if (strcmp(method, "logging/setLevel") == 0)
		gateway_set_level(gw, req, params);
	else if (strcmp(method, "prompts/list") == 0 ||
	    strcmp(method, "resources/list") == 0 ||
	    strcmp(method, "resources/templates/list") == 0)
		gateway_fan_out(req, method);
	else if (strcmp(method, "prompts/get") == 0)
		gateway_prompts_get(gw, req, params, true);
	else if (strcmp(method, "resources/read") == 0)
		gateway_resources_read(gw, req, params, true);
	else if (strcmp(method, "completion/complete") == 0)
		gateway_complete(gw, req, params, true);
	else if (strcmp(method, "resources/subscribe") == 0)
		gateway_subscribe(gw, req, params, true);
	else if (strcmp(method, "resources/unsubscribe") == 0)
		gateway_subs_unsubscribe(gw->client, req, params);
	else if (strcmp(method, "subscriptions/listen") == 0)
		gateway_listen_start(&gw->listen, req, params);
	else
		gateway_fail(req, JSONRPC_METHOD_NOT_FOUND,
		    "mcpd does not offer %s (its capabilities say what it does)",
		    method);
	json_decref(empty);
}

void
gateway_notification(struct gateway *gw, const char *method,
    const json_t *params)
{
	(void)params;
	if (strcmp(method, "notifications/initialized") == 0)
		gw->is_listening = true;
	/* Servers that keep the roots they got ask again (gateway-roots.c). */
	if ((strcmp(method, "notifications/initialized") == 0 ||
		strcmp(method, "notifications/roots/list_changed") == 0) &&
	    gateway_takes_roots(gw))
		server_roots_changed(control_client_agent(gw->client),
		    control_client_scope(gw->client));
}

/* ---- list_changed: one per session and loop turn ---- */

static void
gateway_notify_due(evutil_socket_t fd, short events, void *arg)
{
	struct gateway *gw;

	(void)fd, (void)events, (void)arg;
	TAILQ_FOREACH(gw, &gateway_list, entry) {
		if (!gw->is_due)
			continue;
		gw->is_due = false;
		if (gw->listen != NULL) {
			gateway_listen_changed(gw->listen);
			continue;
		}
		control_client_notify(gw->client,
		    "notifications/tools/list_changed", NULL);
		control_client_notify(gw->client,
		    "notifications/prompts/list_changed", NULL);
		control_client_notify(gw->client,
		    "notifications/resources/list_changed", NULL);
	}
}

void
gateway_tools_changed(const char *agent)
{
	struct gateway *gw;
	bool any = false;

	TAILQ_FOREACH(gw, &gateway_list, entry)
		if ((gw->is_listening || gw->listen != NULL) &&
		    strcmp(control_client_agent(gw->client), agent) == 0)
			any = gw->is_due = true;
	if (!any)
		return;
	if (gateway_notify_event == NULL &&
	    (gateway_notify_event = event_new(mcpd_base, -1, 0,
		 gateway_notify_due, NULL)) == NULL)
		fatalx("cannot make an event");
	event_active(gateway_notify_event, EV_TIMEOUT, 0);
}
