/* SPDX-License-Identifier: ISC */
/* A view over its budget: mcpd__find_tools and mcpd__call_tool (DESIGN 13). */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "mcpd.h"
#include "toolsearch.h"

#define GATEWAY_FIND_DEFAULT 5	  /* matches when the call gives no limit */
#define GATEWAY_FIND_MAX     50	  /* matches one call may ask for */
#define GATEWAY_QUERY_MAX    1024 /* bytes of a query */
#define GATEWAY_INDEXES	     8	  /* views whose index is kept */

/* One session's search: what it found. */
struct gateway_search {
	json_t *found; /* exposed name -> true: listed from now on */
};

/*
 * The indexes of the views searched last, shared by their sessions: a
 * view is (agent, scope) at one server_gateway_key, and a 2026-07-28
 * request over HTTP is a session of its own, so an index per session
 * would be made again for every search.
 */
static struct gateway_index {
	uint64_t key; /* server_gateway_key, and whether names are prefixed */
	json_t *all;  /* the named catalog it indexes, in order; NULL: free */
	struct toolsearch *index;
	uint64_t used; /* when it was last searched (a counter) */
} gateway_indexes[GATEWAY_INDEXES];
static uint64_t gateway_indexes_used;

struct gateway_search *
gateway_search_new(void)
{
	struct gateway_search *gs = xcalloc(1, sizeof *gs);

	gs->found = xjson(json_object());
	return gs;
}

void
gateway_search_free(struct gateway_search *gs)
{
	if (gs == NULL)
		return;
	json_decref(gs->found);
	free(gs);
}

json_t *
gateway_search_tools(void)
{
	return xjson(json_pack(
	    "[{s:s, s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:i, s:i, s:s}}, s:[s]}, s:{s:b, s:b}},"
	    " {s:s, s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}}, s:[s]}}]",
	    "name", GATEWAY_FIND_TOOLS, "title", "Find tools", "description",
	    "This session has more tools than it lists (they would not fit its context budget). Describe what you want to do in a few words; the best matching tools' full definitions come back, are listed from now on, and can be called directly or through mcpd__call_tool.",
	    "inputSchema", "type", "object", "properties", "query", "type",
	    "string", "description",
	    "Words of what the tool should do, e.g. 'create a github issue'",
	    "limit", "type", "integer", "minimum", 1, "maximum",
	    GATEWAY_FIND_MAX, "description",
	    "How many tools at most (5 by default)", "required", "query",
	    "annotations", "readOnlyHint", 1, "openWorldHint", 0, "name",
	    GATEWAY_CALL_TOOL, "title", "Call a tool", "description",
	    "Calls any tool of this session by its name (as mcpd__find_tools gave it) with its arguments, exactly as a direct call would.",
	    "inputSchema", "type", "object", "properties", "name", "type",
	    "string", "description",
	    "The tool's name, as mcpd__find_tools gave it", "arguments", "type",
	    "object", "description",
	    "The tool's arguments, as its inputSchema says", "required",
	    "name"));
}

bool
gateway_search_is_own(const char *name)
{
	return strcmp(name, GATEWAY_FIND_TOOLS) == 0 ||
	    strcmp(name, GATEWAY_CALL_TOOL) == 0;
}

/* Is e (a named catalog entry) one the view lists in search mode? */
static bool
gateway_search_lists(const struct gateway_search *gs, const json_t *e,
    const json_t *pins)
{
	const char *name = json_string_value(json_object_get(e, "name"));
	const json_t *pin;
	size_t i;

	if (gs != NULL && json_object_get(gs->found, name) != NULL)
		return true;
	json_array_foreach(pins, i, pin)
		if (fnmatch(json_string_value(pin), name, 0) == 0)
			return true;
	return false;
}

json_t *
gateway_search_view(const struct gateway_search *gs, const json_t *all,
    const json_t *pins)
{
	json_t *out = xjson(json_array()), *e;
	size_t i;

	json_array_foreach(all, i, e)
		if (gateway_search_lists(gs, e, pins))
			json_array_append(out, e);
	return out;
}

/* The index of the view at key, made from its catalog when it is not kept. */
static struct gateway_index *
gateway_search_index(struct request *req)
{
	const json_t *scope = control_scope(req), *e;
	uint64_t key = gateway_view_key(req) * 2 +
	    (json_array_size(scope) != 1);
	struct gateway_index *ix = &gateway_indexes[0];
	size_t i;

	for (i = 0; i < GATEWAY_INDEXES; i++) {
		if (gateway_indexes[i].all != NULL &&
		    gateway_indexes[i].key == key) {
			ix = &gateway_indexes[i];
			ix->used = ++gateway_indexes_used;
			return ix;
		}
		if (gateway_indexes[i].used < ix->used)
			ix =
			    &gateway_indexes[i]; /* the least recent, or free */
	}
	toolsearch_free(ix->index);
	json_decref(ix->all);
	ix->key = key;
	ix->all = gateway_view_catalog(req);
	ix->index = toolsearch_new();
	ix->used = ++gateway_indexes_used;
	json_array_foreach(ix->all, i, e)
		toolsearch_add(ix->index,
		    json_string_value(json_object_get(e, "server")),
		    json_string_value(json_object_get(e, "name")),
		    json_object_get(e, "tool"));
	return ix;
}

/*
 * mcpd__find_tools's arguments answered from the view's index: its best
 * entries, best first, in *ret_found; -EINVAL with *cause for bad ones.
 */
static int
gateway_search_find(struct request *req, const json_t *args, json_t **ret_found,
    char **cause)
{
	struct gateway_index *ix;
	const json_t *q = json_object_get(args, "query");
	const json_t *lim = json_object_get(args, "limit");
	size_t idx[GATEWAY_FIND_MAX], n, i;
	json_int_t limit = GATEWAY_FIND_DEFAULT;
	json_t *found;

	if (!json_is_string(q) || json_string_length(q) == 0 ||
	    json_string_length(q) > GATEWAY_QUERY_MAX) {
		xasprintf(cause,
		    "mcpd__find_tools needs a query: a string of 1 to %d bytes",
		    GATEWAY_QUERY_MAX);
		return -EINVAL;
	}
	if (lim != NULL && !json_is_null(lim) &&
	    (!json_is_integer(lim) || (limit = json_integer_value(lim)) < 1 ||
		limit > GATEWAY_FIND_MAX)) {
		xasprintf(cause,
		    "mcpd__find_tools's limit is an integer from 1 to %d",
		    GATEWAY_FIND_MAX);
		return -EINVAL;
	}
	ix = gateway_search_index(req);
	n = toolsearch_find(ix->index, json_string_value(q), idx,
	    (size_t)limit);
	found = xjson(json_array());
	for (i = 0; i < n; i++)
		json_array_append(found, json_array_get(ix->all, idx[i]));
	*ret_found = found;
	return 0;
}

static bool
gateway_search_add_found(struct gateway_search *gs, const char *name)
{
	if (json_object_get(gs->found, name) != NULL)
		return false;
	json_object_set_new(gs->found, name, json_true());
	return true;
}

/*
 * mcpd__find_tools: the best matches' definitions as tools/list gives
 * them, listed to this session from now on (list_changed when any is new).
 */
static void
gateway_find_tools(struct gateway *gw, struct request *req, const json_t *args)
{
	struct gateway_search *gs = gateway_search_of(gw);
	json_t *found, *tools = json_array(), *e, *result;
	char *cause = NULL, *text;
	bool is_new = false;
	size_t i;

	if (gateway_search_find(req, args, &found, &cause) < 0) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS, NULL, "%s",
		    cause);
		free(cause);
		json_decref(tools);
		return;
	}
	json_array_foreach(found, i, e) {
		json_array_append_new(tools, gateway_tool_view(e));
		gateway_listed(gw, e);
		if (gateway_search_add_found(gs,
			json_string_value(json_object_get(e, "name"))))
			is_new = true;
	}
	result = json_pack("{s:O}", "tools", tools);
	text = json_dumps(result, JSON_COMPACT);
	result = json_pack("{s:[{s:s, s:s}], s:o}", "content", "type", "text",
	    "text", text, "structuredContent", result);
	free(text);
	if (is_new)
		gateway_tools_due(gw);
	json_decref(found);
	json_decref(tools);
	gateway_answer(req, "tools/call", result);
}

void
gateway_search_call(struct gateway *gw, struct request *req, const char *name,
    json_t *params)
{
	json_t *args = json_object_get(params, "arguments"), *inner;
	const char *target = json_string_value(json_object_get(args, "name"));
	const json_t *targs = json_object_get(args, "arguments");

	if (!gateway_is_searching(gw, req, NULL)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS, NULL,
		    "unknown tool %s: this session lists all its tools (its view is within its budget)",
		    name);
		return;
	}
	if (strcmp(name, GATEWAY_FIND_TOOLS) == 0) {
		gateway_find_tools(gw, req, args);
		return;
	}
	if (target == NULL || gateway_search_is_own(target) ||
	    (targs != NULL && !json_is_object(targs))) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS, NULL, "%s",
		    "mcpd__call_tool needs the name of one of the session's tools (not mcpd's own) and an arguments object");
		return;
	}
	/* The same path as a direct call: same checks, same errors. */
	inner = json_pack("{s:s}", "name", target);
	if (targs != NULL)
		json_object_set(inner, "arguments", (json_t *)(uintptr_t)targs);
	if (json_object_get(params, "_meta") != NULL)
		json_object_set(inner, "_meta",
		    json_object_get(params, "_meta"));
	gateway_tools_call(gw, req, inner);
	json_decref(inner);
}

json_t *
gateway_search_save(const struct gateway_search *gs)
{
	return json_incref(gs->found);
}

void
gateway_search_restore(struct gateway_search *gs, const json_t *found)
{
	if (json_is_object(found))
		json_object_update(gs->found, (json_t *)(uintptr_t)found);
}
