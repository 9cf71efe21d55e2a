/* SPDX-License-Identifier: ISC */
/* The gateway: MCP answered on a control connection, over every server. */
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "log.h"
#include "mcpd.h"

#define GATEWAY_PAGE	 500 /* tools per tools/list page */
#define GATEWAY_OFFERED	 "2025-11-25"
#define GATEWAY_MODERN	 "2026-07-28"
#define GATEWAY_LOG_NONE 8   /* above emergency: no log message passes */
#define GATEWAY_NAME_MAX 128 /* bytes kept of clientInfo's name, version */

struct gateway {
	struct client *client;
	char *version;	     /* agreed at initialize, or the modern era */
	bool is_listening;   /* initialized: it takes list_changed */
	bool is_due;	     /* a list_changed waits for the next loop turn */
	bool is_tools_due;   /* only tools changed for it (what it found) */
	int log_level;	     /* the lowest level it takes (logging/setLevel) */
	json_t *client_caps; /* what it declared at initialize, or NULL */
	char *client_name;   /* its clientInfo "name version", or NULL */
	uint64_t calls;	     /* tools/call requests it sent */
	struct gateway_listen *listen; /* 2026-07-28 subscriptions/listen */
	/* What it was shown: exposed name -> {id, tool, def}. */
	json_t *listed;
	json_t *by_name;      /* the catalog by exposed name, made at ... */
	uint64_t by_name_key; /* ... this server_gateway_key */
	uint64_t by_name_gen; /* ... and this profile_generation */
	json_t *prompts;      /* exposed name -> {server, name} */
	json_t *resources;    /* uri -> server */
	json_t *templates;    /* uriTemplate -> server */
	struct gateway_search *search; /* its view over budget: what it found */
	struct gateway_rootview
	    *rootview;	   /* its view from its roots, or NULL */
	size_t cost_bytes; /* its whole view's tools/list, ... */
	uint64_t cost_key; /* ... at this server_gateway_key */
	bool has_cost;
	TAILQ_ENTRY(gateway) entry;
};

static TAILQ_HEAD(,
    gateway) gateway_list = TAILQ_HEAD_INITIALIZER(gateway_list);
static struct event *gateway_notify_event;

static void gateway_notify_soon(void);

/* RFC 5424 severities as MCP names them, lowest first. */
static const char *const gateway_levels[] = { "debug", "info", "notice",
	"warning", "error", "critical", "alert", "emergency", NULL };

static const char *const gateway_versions[] = { GATEWAY_OFFERED, "2025-06-18",
	"2025-03-26", "2024-11-05", NULL };

/* What the gateway_methods table says of a method. */
#define GATEWAY_M_LEGACY    0x1 /* 2026-07-28 removed it: -32601 there */
#define GATEWAY_M_CACHEABLE 0x2 /* 2026-07-28: its result has ttlMs */
#define GATEWAY_M_ALWAYS    0x4 /* answered while stopping, with no view */
#define GATEWAY_M_OWN	    0x8 /* mcpd's own: the view does not matter */

struct gateway_method {
	const char *name;
	void (*fn)(struct gateway *, struct request *, const char *method,
	    json_t *params);
	unsigned flags;
};

static const struct gateway_method *gateway_method(const char *name);

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
	gw->search = gateway_search_new();
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
	policy_ask_session_end(gw);
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
	free(gw->client_name);
	gateway_search_free(gw->search);
	gateway_rootview_free(gw->rootview);
	free(gw->version);
	free(gw);
}

bool
gateway_listens_see(const char *agent, const char *server)
{
	const struct gateway *gw;

	TAILQ_FOREACH(gw, &gateway_list, entry)
		if (gw->listen != NULL &&
		    strcmp(control_client_agent(gw->client), agent) == 0 &&
		    server_scope_has(control_client_scope(gw->client), server))
			return true;
	return false;
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
	    session_caps_take(gw->client_caps, "roots/list", NULL);
}

uint64_t
gateway_calls(const struct gateway *gw)
{
	return gw != NULL ? gw->calls : 0;
}

const char *
gateway_client_name(const struct gateway *gw)
{
	return gw != NULL ? gw->client_name : NULL;
}

/* initialize's clientInfo, as "name version", each cut to its limit. */
static void
gateway_note_client(struct gateway *gw, const json_t *params)
{
	const json_t *info = json_object_get(params, "clientInfo");
	const char *name = json_string_value(json_object_get(info, "name"));
	const char *version = json_string_value(json_object_get(info,
	    "version"));

	free(gw->client_name);
	gw->client_name = NULL;
	if (name != NULL)
		xasprintf(&gw->client_name, "%.*s%s%.*s", GATEWAY_NAME_MAX,
		    name, version != NULL ? " " : "", GATEWAY_NAME_MAX,
		    version != NULL ? version : "");
}

/* Every tool of the scope, named; held ones marked is_held. */
static json_t *
gateway_catalog_all(const char *agent, const json_t *scope)
{
	json_t *all = server_gateway_catalog(agent, scope);

	gateway_names(all, json_array_size(scope) != 1);
	return all;
}

json_t *
gateway_catalog(const char *agent, const json_t *scope)
{
	json_t *all = gateway_catalog_all(agent, scope);

	server_pins_drop_held(all); /* not listed, searched nor counted */
	return all;
}

/* Verbatim but its name, _meta saying whose. */
json_t *
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

/* The audit log's line of req's request refused before it was sent. */
static void
gateway_refused(const struct request *req, const char *method,
    const char *server, const char *what, int code, enum errors_kind kind)
{
	struct call_who who;

	control_call_who(req, &who);
	audit_refused(&who, method, server, what, code, kind);
}

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

bool
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

static bool
gateway_is_cacheable(const char *method)
{
	const struct gateway_method *m = gateway_method(method);

	return m != NULL && (m->flags & GATEWAY_M_CACHEABLE) != 0;
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
		if (gateway_is_cacheable(method) &&
		    json_object_get(result, "ttlMs") == NULL)
			json_object_set_new(result, "ttlMs", json_integer(0));
		/* The agent's own view: never shared across tokens. */
		if (gateway_is_cacheable(method) &&
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
		gateway_refused(req, "prompts/get", NULL, name,
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
		gateway_refused(req, "resources/read", NULL, uri,
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
gateway_initialize(struct gateway *gw, struct request *req, const char *method,
    json_t *params)
{
	(void)method;
	const char *want = json_string_value(json_object_get(params,
	    "protocolVersion"));
	const char *version = GATEWAY_OFFERED;
	json_t *result, *view;
	char *text;

	for (size_t i = 0; want != NULL && gateway_versions[i] != NULL; i++)
		if (strcmp(want, gateway_versions[i]) == 0)
			version = gateway_versions[i];
	free(gw->version);
	gw->version = xstrdup(version);
	json_decref(gw->client_caps);
	gw->client_caps = json_incref(json_object_get(params, "capabilities"));
	gateway_note_client(gw, params);
	/* Its view may come from its roots: lists and calls wait for it. */
	if (gw->rootview == NULL && control_client_roots_project(gw->client) &&
	    session_caps_take(gw->client_caps, "roots/list", NULL))
		gw->rootview = gateway_rootview_new(gw);
	result = json_pack("{s:s, s:o, s:o}", "protocolVersion", version,
	    "capabilities", gateway_capabilities(), "serverInfo",
	    gateway_server_info());
	/* Only the servers of its view tell it what they are for. */
	view = gateway_view_scope(req);
	if ((text = gateway_instructions(control_agent(req), view)) != NULL)
		json_object_set_new(result, "instructions", json_string(text));
	json_decref(view);
	free(text);
	control_reply(req, result);
}

/* 2026-07-28: no handshake; every request carries its version. */
static void
gateway_discover(struct gateway *gw, struct request *req, const char *method,
    json_t *params)
{
	(void)method, (void)params;
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

void
gateway_listed(struct gateway *gw, const json_t *e)
{
	json_object_set_new(gw->listed,
	    json_string_value(json_object_get(e, "name")),
	    json_pack("{s:O, s:O}", "id", json_object_get(e, "id"), "def",
		json_object_get(e, "tool")));
}

/* The session's catalog cut to its view: what it does not show is not
 * there, nor counted (new array). */
json_t *
gateway_view_catalog(struct request *req)
{
	json_t *all = gateway_catalog(control_agent(req), control_scope(req));
	struct call_who who;
	size_t i = 0;

	control_call_who(req, &who);
	while (i < json_array_size(all))
		if (!gateway_in_view(req, json_array_get(all, i)) ||
		    !policy_lists(&who, json_array_get(all, i)))
			json_array_remove(all, i);
		else
			i++;
	return all;
}

bool
gateway_is_searching(struct gateway *gw, struct request *req, const json_t *all)
{
	uint64_t key = gateway_view_key(req);
	json_t *made = NULL;

	if (gateway_view_budget(gw) <= 0)
		return false;
	if (!gw->has_cost || gw->cost_key != key) {
		if (all == NULL)
			all = made = gateway_view_catalog(req);
		gw->cost_bytes = gateway_cost_entries(all);
		gw->cost_key = key;
		gw->has_cost = true;
		json_decref(made);
	}
	return gateway_is_over_budget(gw, gw->cost_bytes);
}

static void
gateway_tools_list(struct gateway *gw, struct request *req, const char *method,
    json_t *params)
{
	json_t *all = gateway_view_catalog(req);
	bool is_search = gateway_is_searching(gw, req, all);
	/* Over budget: the pinned and found tools, then mcpd's own two. */
	json_t *entries = is_search ?
	    gateway_search_view(gw->search, all, gateway_view_pins(gw)) :
	    json_incref(all);
	json_t *own = is_search ? gateway_search_tools() : json_array();
	json_t *tools = json_array(), *e, *result;
	size_t n = json_array_size(entries) + json_array_size(own), i;
	long from = gateway_cursor(params);
	char cursor[32];

	(void)method;
	if (from < 0 || (size_t)from > n) {
		json_decref(all);
		json_decref(entries);
		json_decref(own);
		json_decref(tools);
		gateway_fail(req, JSONRPC_INVALID_PARAMS, "%s",
		    "invalid cursor: list again without one");
		return;
	}
	for (i = (size_t)from; i < n && json_array_size(tools) < GATEWAY_PAGE;
	     i++) {
		if (i >= json_array_size(entries)) {
			json_array_append(tools,
			    json_array_get(own, i - json_array_size(entries)));
			continue;
		}
		e = json_array_get(entries, i);
		json_array_append_new(tools, gateway_tool_view(e));
		gateway_listed(gw, e);
	}
	result = json_pack("{s:o}", "tools", tools);
	if (i < n) {
		snprintf(cursor, sizeof cursor, "mcpd:%zu", i);
		json_object_set_new(result, "nextCursor", json_string(cursor));
	}
	json_decref(all);
	json_decref(entries);
	json_decref(own);
	gateway_answer(req, "tools/list", result);
}

/*
 * Catalogs by exposed name made lately, for the next session of the same
 * view: a 2026-07-28 request is a session of its own, and naming every
 * tool of every server again for each was a third of what it cost. Each
 * is read only; an entry is used while its key and the profiles'
 * generation hold, as a session's own table is.
 */
#define GATEWAY_BY_NAME_KEPT 8

static struct gateway_by_name_kept {
	char *agent;
	char *profile; /* the client's, NULL: none */
	json_t *scope;
	uint64_t key, gen;
	json_t *by_name; /* NULL: a free slot */
} gateway_by_name_kept[GATEWAY_BY_NAME_KEPT];
static size_t gateway_by_name_next; /* the slot the next one takes */

/* A kept table of req's view at key, or NULL. */
static json_t *
gateway_by_name_find(const struct request *req, uint64_t key)
{
	const char *profile = control_profile(req);

	for (size_t i = 0; i < GATEWAY_BY_NAME_KEPT; i++) {
		const struct gateway_by_name_kept *k = &gateway_by_name_kept[i];

		if (k->by_name != NULL && k->key == key &&
		    k->gen == profile_generation() &&
		    strcmp(k->agent, control_agent(req)) == 0 &&
		    (k->profile == NULL ? profile == NULL :
					  profile != NULL &&
				strcmp(k->profile, profile) == 0) &&
		    (k->scope == NULL ?
			    control_scope(req) == NULL :
			    json_equal(k->scope, control_scope(req))))
			return k->by_name;
	}
	return NULL;
}

/* Keeps by_name, req's view's table at key, in place of the oldest. */
static void
gateway_by_name_keep(const struct request *req, uint64_t key, json_t *by_name)
{
	struct gateway_by_name_kept *k =
	    &gateway_by_name_kept[gateway_by_name_next];
	const char *profile = control_profile(req);

	gateway_by_name_next = (gateway_by_name_next + 1) %
	    GATEWAY_BY_NAME_KEPT;
	free(k->agent);
	free(k->profile);
	json_decref(k->scope);
	json_decref(k->by_name);
	k->agent = xstrdup(control_agent(req));
	k->profile = profile != NULL ? xstrdup(profile) : NULL;
	k->scope = json_deep_copy(control_scope(req)); /* NULL: none */
	k->key = key;
	k->gen = profile_generation();
	k->by_name = json_incref(by_name);
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
	json_t *all, *e, *kept;
	size_t i;

	if (gw->by_name != NULL && key == gw->by_name_key &&
	    gw->by_name_gen == profile_generation())
		return gw->by_name;
	json_decref(gw->by_name);
	gw->by_name_key = key;
	gw->by_name_gen = profile_generation();
	if ((kept = gateway_by_name_find(req, key)) != NULL)
		return gw->by_name = json_incref(kept);
	all = gateway_catalog_all(control_agent(req), control_scope(req));
	gw->by_name = xjson(json_object());
	/* Outside the view is marked, so that a call's check is a lookup. */
	json_array_foreach(all, i, e) {
		if (!gateway_in_view(req, e))
			json_object_set_new(e, "is_outside", json_true());
		json_object_set(gw->by_name,
		    json_string_value(json_object_get(e, "name")), e);
	}
	json_decref(all);
	gateway_by_name_keep(req, key, gw->by_name);
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
		gateway_refused(req, "tools/call", NULL, name,
		    JSONRPC_INVALID_PARAMS, ERRORS_KIND_COUNT);
		gateway_fail(req, JSONRPC_INVALID_PARAMS,
		    "unknown tool %s: list the tools again (tools/list)", name);
		return NULL;
	}
	if (json_object_get(e, "is_outside") != NULL) {
		gateway_fail_outside(req, name, e);
		return NULL;
	}
	if (!server_pins_call_ok(s,
		json_string_value(json_object_get(json_object_get(e, "tool"),
		    "name")),
		gateway_server_reply(req, NULL)))
		return NULL;
	/* A contract it did not see is not called (DESIGN 11). */
	seen = json_object_get(gw->listed, name);
	if (seen != NULL &&
	    (!json_equal(json_object_get(seen, "id"),
		 json_object_get(e, "id")) ||
		!json_equal(json_object_get(seen, "def"),
		    json_object_get(e, "tool")))) {
		gateway_refused(req, "tools/call", server_name(s), name, 0,
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

void
gateway_tools_call(struct gateway *gw, struct request *req, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	const char *tool;
	struct server *s;

	gw->calls++;
	if (name == NULL || (args != NULL && !json_is_object(args))) {
		gateway_fail(req, JSONRPC_INVALID_PARAMS, "%s",
		    "tools/call needs a name and an arguments object");
		return;
	}
	if (gateway_search_is_own(name)) {
		gateway_search_call(gw, req, name, params);
		return;
	}
	if ((s = gateway_call_target(gw, req, name, &tool)) == NULL)
		return;
	args = args != NULL ? json_incref(args) : json_object();
	server_call_mcp(s, 0, tool, args, mcpd_opts.call_timeout_ms,
	    gateway_server_reply(req, params), params);
	json_decref(args);
}

bool
gateway_takes_text(const struct gateway *gw)
{
	return gw != NULL && !gateway_is_modern(gw) && !mcpd_is_stopping();
}

/*
 * A session whose view could not be made (its bridge found a broken or
 * untrusted project file) gets why, for every list and call: never a
 * silently different view. True when req was refused so.
 */
static bool
gateway_view_refused(struct gateway *gw, struct request *req)
{
	const char *why = control_client_view_error(gw->client);

	if (why == NULL)
		return false;
	gateway_fail(req, JSONRPC_INVALID_PARAMS, "%s", why);
	return true;
}

void
gateway_tools_call_text(struct gateway *gw, struct request *req,
    const char *name, const char *args, size_t len)
{
	static json_t *plain; /* the params of a call with no _meta */
	json_t *params;
	const char *tool;
	struct server *s;

	if (plain == NULL)
		plain = xjson(json_object());
	if (gateway_rootview_pending(gw->rootview) ||
	    gateway_search_is_own(name)) {
		/* Rare and small: parsed, then the ordinary path. */
		params = json_pack("{s:s, s:o?}", "name", name, "arguments",
		    json_loadb(args, len, 0, NULL));
		gateway_dispatch(req, "tools/call", params);
		json_decref(params);
		return;
	}
	if (gateway_view_refused(gw, req))
		return;
	gw->calls++;
	if ((s = gateway_call_target(gw, req, name, &tool)) != NULL)
		server_call_text(s, tool, args, len, mcpd_opts.call_timeout_ms,
		    gateway_server_reply(req, plain), plain);
}

static void
gateway_set_level(struct gateway *gw, struct request *req, const char *method,
    json_t *params)
{
	const char *level = json_string_value(json_object_get(params, "level"));
	int n = gateway_level(level);

	(void)method;
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

/* ---- the methods: one table, each entry a handler of one shape ---- */

static void
gateway_m_ping(struct gateway *gw, struct request *req, const char *method,
    json_t *params)
{
	(void)gw, (void)method, (void)params;
	control_reply(req, json_object());
}

static void
gateway_m_tools_call(struct gateway *gw, struct request *req,
    const char *method, json_t *params)
{
	(void)method;
	gateway_tools_call(gw, req, params);
}

static void
gateway_m_fan_out(struct gateway *gw, struct request *req, const char *method,
    json_t *params)
{
	(void)gw, (void)params;
	gateway_fan_out(req, method);
}

static void
gateway_m_prompts_get(struct gateway *gw, struct request *req,
    const char *method, json_t *params)
{
	(void)method;
	gateway_prompts_get(gw, req, params, true);
}

static void
gateway_m_resources_read(struct gateway *gw, struct request *req,
    const char *method, json_t *params)
{
	(void)method;
	gateway_resources_read(gw, req, params, true);
}

static void
gateway_m_complete(struct gateway *gw, struct request *req, const char *method,
    json_t *params)
{
	(void)method;
	gateway_complete(gw, req, params, true);
}

static void
gateway_m_subscribe(struct gateway *gw, struct request *req, const char *method,
    json_t *params)
{
	(void)method;
	gateway_subscribe(gw, req, params, true);
}

static void
gateway_m_unsubscribe(struct gateway *gw, struct request *req,
    const char *method, json_t *params)
{
	(void)method;
	gateway_subs_unsubscribe(gw->client, req, params);
}

static void
gateway_m_listen(struct gateway *gw, struct request *req, const char *method,
    json_t *params)
{
	(void)method;
	gateway_listen_start(&gw->listen, req, params);
}

static const struct gateway_method gateway_methods[] = {
	{ "initialize", gateway_initialize,
	    GATEWAY_M_LEGACY | GATEWAY_M_ALWAYS },
	{ "server/discover", gateway_discover,
	    GATEWAY_M_CACHEABLE | GATEWAY_M_ALWAYS },
	{ "ping", gateway_m_ping, GATEWAY_M_LEGACY | GATEWAY_M_ALWAYS },
	{ "tools/list", gateway_tools_list, GATEWAY_M_CACHEABLE },
	{ "tools/call", gateway_m_tools_call, 0 },
	{ "logging/setLevel", gateway_set_level,
	    GATEWAY_M_LEGACY | GATEWAY_M_OWN },
	{ "prompts/list", gateway_m_fan_out, GATEWAY_M_CACHEABLE },
	{ "resources/list", gateway_m_fan_out, GATEWAY_M_CACHEABLE },
	{ "resources/templates/list", gateway_m_fan_out, GATEWAY_M_CACHEABLE },
	{ "prompts/get", gateway_m_prompts_get, 0 },
	{ "resources/read", gateway_m_resources_read, GATEWAY_M_CACHEABLE },
	{ "completion/complete", gateway_m_complete, 0 },
	{ "resources/subscribe", gateway_m_subscribe, GATEWAY_M_LEGACY },
	{ "resources/unsubscribe", gateway_m_unsubscribe, GATEWAY_M_LEGACY },
	{ "subscriptions/listen", gateway_m_listen, 0 },
};

static const struct gateway_method *
gateway_method(const char *name)
{
	for (size_t i = 0; name != NULL &&
	     i < sizeof gateway_methods / sizeof *gateway_methods;
	     i++)
		if (strcmp(gateway_methods[i].name, name) == 0)
			return &gateway_methods[i];
	return NULL;
}

void
gateway_dispatch(struct request *req, const char *method, json_t *params)
{
	struct gateway *gw = control_gateway(req);
	const struct gateway_method *m = gateway_method(method);
	json_t *empty = NULL;

	if (gw == NULL) {
		control_reply(req, json_object()); /* its client has gone */
		return;
	}
	if (params == NULL)
		params = empty = json_object();
	if (gateway_is_modern_request(params))
		gateway_modern_request(gw, params);
	if (m == NULL)
		gateway_fail(req, JSONRPC_METHOD_NOT_FOUND,
		    "mcpd does not offer %s (its capabilities say what it does)",
		    method);
	else if (gateway_is_modern_request(params) &&
	    (m->flags & GATEWAY_M_LEGACY) != 0)
		gateway_fail(req, JSONRPC_METHOD_NOT_FOUND,
		    "%s is not part of MCP 2026-07-28", method);
	else if ((m->flags & GATEWAY_M_ALWAYS) == 0 && mcpd_is_stopping())
		control_fail(req, ERRORS_UNAVAILABLE, NULL,
		    "mcpd is shutting down");
	else if ((m->flags & (GATEWAY_M_ALWAYS | GATEWAY_M_OWN)) != 0)
		m->fn(gw, req, method, params);
	else if (!gateway_rootview_holds(gw->rootview, req, method, params) &&
	    !gateway_view_refused(gw, req))
		m->fn(gw, req, method, params);
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
	    gateway_takes_roots(gw)) {
		gateway_rootview_roots(gw->rootview);
		server_roots_changed(control_client_agent(gw->client),
		    control_client_scope(gw->client));
	}
}

void
gateway_view_changed(struct gateway *gw, bool is_announced)
{
	json_decref(gw->by_name);
	gw->by_name = NULL;
	gw->has_cost = false;
	if (is_announced && (gw->is_listening || gw->listen != NULL)) {
		gw->is_due = true;
		gateway_notify_soon();
	}
}

/* ---- list_changed: one per session and loop turn ---- */

static void
gateway_notify_due(evutil_socket_t fd, short events, void *arg)
{
	struct gateway *gw;

	(void)fd, (void)events, (void)arg;
	TAILQ_FOREACH(gw, &gateway_list, entry) {
		if (!gw->is_due && !gw->is_tools_due)
			continue;
		if (gw->listen != NULL)
			gateway_listen_changed(gw->listen);
		else
			control_client_notify(gw->client,
			    "notifications/tools/list_changed", NULL);
		if (gw->listen == NULL && gw->is_due) {
			control_client_notify(gw->client,
			    "notifications/prompts/list_changed", NULL);
			control_client_notify(gw->client,
			    "notifications/resources/list_changed", NULL);
		}
		gw->is_due = gw->is_tools_due = false;
	}
}

void
gateway_tools_due(struct gateway *gw)
{
	if (gw->is_listening || gw->listen != NULL) {
		gw->is_tools_due = true;
		gateway_notify_soon();
	}
}

struct gateway_search *
gateway_search_of(const struct gateway *gw)
{
	return gw->search;
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
	if (any)
		gateway_notify_soon();
}

void
gateway_profile_changed(const char *agent, const char *name, bool is_default)
{
	struct gateway *gw;
	const char *given, *used;
	bool any = false;

	TAILQ_FOREACH(gw, &gateway_list, entry) {
		if ((!gw->is_listening && gw->listen == NULL) ||
		    strcmp(control_client_agent(gw->client), agent) != 0)
			continue;
		given = control_client_profile(gw->client);
		used = profile_effective(agent, given);
		if ((is_default && given == NULL) ||
		    (name != NULL && used != NULL && strcmp(used, name) == 0))
			any = gw->is_due = true;
	}
	if (any)
		gateway_notify_soon();
}

/* The sessions marked due are told on the next loop turn. */
static void
gateway_notify_soon(void)
{
	if (gateway_notify_event == NULL &&
	    (gateway_notify_event = event_new(mcpd_base, -1, 0,
		 gateway_notify_due, NULL)) == NULL)
		fatalx("cannot make an event");
	event_active(gateway_notify_event, EV_TIMEOUT, 0);
}

json_t *
gateway_save(const struct gateway *gw)
{
	return json_pack(
	    "{s:s?, s:b, s:i, s:O?, s:s?, s:I, s:O, s:O, s:O, s:O, s:o, s:o, s:o}",
	    "version", gw->version, "is_listening", gw->is_listening,
	    "log_level", gw->log_level, "client_caps", gw->client_caps,
	    "client_name", gw->client_name, "calls", (json_int_t)gw->calls,
	    "listed", gw->listed, "prompts", gw->prompts, "resources",
	    gw->resources, "templates", gw->templates, "found",
	    gateway_search_save(gw->search), "subs",
	    gateway_subs_save(gw->client), "listen",
	    gateway_listen_save(gw->listen));
}

static void
gateway_restore_object(json_t **slot, const json_t *saved)
{
	if (!json_is_object(saved))
		return;
	json_decref(*slot);
	*slot = json_deep_copy(saved);
}

/*
 * The session as it was before an upgrade: what it agreed, was shown and
 * subscribed to. Its view from its roots stays as it was made (its scope
 * and profile are the client's); a later change of its roots is not
 * followed (doc/lifecycle.md).
 */
void
gateway_restore(struct gateway *gw, const json_t *saved)
{
	const char *version = json_string_value(json_object_get(saved,
	    "version"));
	const char *name = json_string_value(json_object_get(saved,
	    "client_name"));

	gw->version = version != NULL ? xstrdup(version) : NULL;
	gw->is_listening = json_is_true(json_object_get(saved, "is_listening"));
	gw->log_level = (int)json_integer_value(json_object_get(saved,
	    "log_level"));
	gw->client_caps = json_deep_copy(json_object_get(saved, "client_caps"));
	gw->client_name = name != NULL ? xstrdup(name) : NULL;
	gw->calls = (uint64_t)json_integer_value(json_object_get(saved,
	    "calls"));
	gateway_restore_object(&gw->listed, json_object_get(saved, "listed"));
	gateway_restore_object(&gw->prompts, json_object_get(saved, "prompts"));
	gateway_restore_object(&gw->resources,
	    json_object_get(saved, "resources"));
	gateway_restore_object(&gw->templates,
	    json_object_get(saved, "templates"));
	gateway_search_restore(gw->search, json_object_get(saved, "found"));
	gateway_subs_restore(gw->client, json_object_get(saved, "subs"));
	gateway_listen_restore(&gw->listen, gw->client,
	    json_object_get(saved, "listen"));
}
