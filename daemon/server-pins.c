/* SPDX-License-Identifier: ISC */
/* Pinned tool definitions (DESIGN 14): pins.json, what is held, accepting. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "isotime.h"
#include "log.h"
#include "server-int.h"
#include "tooldiff.h"

#define PINS_FILE "pins.json"

static struct store *pins_store;
/*
 * What each server holds, made once per tools list (so that a call's
 * check is a lookup): id -> {serial, held: {tool: status}, why}.
 */
static json_t *pins_cache;
/* Ids whose next tools list is pinned as it is: their settings changed. */
static json_t *pins_retake;
static uint64_t pins_gen = 1;

int
server_pins_open(const char *state_dir)
{
	pins_cache = xjson(json_object());
	pins_retake = xjson(json_object());
	store_open_file(state_dir, PINS_FILE, &pins_store);
	if (store_error(pins_store) != NULL)
		log_warnx(
		    "pins: %s; every tool of a server is held until its pins can be saved",
		    store_error(pins_store));
	return 0;
}

void
server_pins_close(void)
{
	store_free(pins_store);
	pins_store = NULL;
	json_decref(pins_cache);
	pins_cache = NULL;
	json_decref(pins_retake);
	pins_retake = NULL;
}

uint64_t
server_pins_generation(void)
{
	return pins_gen;
}

/* A tool's pin: its digest, when, and the definition when small enough. */
static json_t *
server_pins_entry(const json_t *tool)
{
	char hex[SERVER_DEFINITION_SIZE], now[ISOTIME_LEN];
	json_t *pin;

	server_tool_digest(tool, hex);
	isotime_format(now, isotime_now_ms());
	pin = xjson(json_pack("{s:s, s:s}", "digest", hex, "pinned", now));
	/* The bound keeps pins.json small; past it only the digest is kept. */
	if (json_dumpb(tool, NULL, 0, JSON_COMPACT) <=
	    mcpd_opts.pin_definition_max)
		json_object_set(pin, "definition", (json_t *)(uintptr_t)tool);
	return pin;
}

/* The saved row of s (a copy to change), or a new one. */
static json_t *
server_pins_row(const struct server *s)
{
	const json_t *row = store_row_peek(pins_store, s->agent, s->id);
	json_t *copy;

	if (row != NULL) {
		copy = xjson(json_deep_copy(row));
		if (!json_is_object(json_object_get(copy, "tools")))
			json_object_set_new(copy, "tools", json_object());
		return copy;
	}
	return xjson(json_pack("{s:s, s:s, s:{}}", "id", s->id, "name", s->name,
	    "tools"));
}

/* Writes row as s's; the store reads it back before it says so. */
static int
server_pins_save(const struct server *s, json_t *row, char **cause)
{
	json_object_set_new(row, "name", json_string(s->name));
	return store_put(pins_store, s->agent, row, cause);
}

/* Whether s was loaded with --trust-updates (kept in its saved row). */
static bool
server_pins_trusts(const struct server *s)
{
	const json_t *row = store_row_peek(mcpd_store, s->agent, s->id);

	return json_is_true(json_object_get(json_object_get(row, "params"),
	    "trust_updates"));
}

/* The held tools of s against its saved pins: tool -> changed | new. */
static json_t *
server_pins_compare(const struct server *s, const json_t *tools)
{
	const json_t *pins = json_object_get(store_row_peek(pins_store,
						 s->agent, s->id),
			 "tools"),
		     *tool;
	char hex[SERVER_DEFINITION_SIZE];
	json_t *held = xjson(json_object());
	const char *name, *pinned;
	size_t i;

	json_array_foreach(tools, i, tool) {
		if ((name = json_string_value(json_object_get(tool, "name"))) ==
		    NULL)
			continue;
		server_tool_digest(tool, hex);
		pinned = json_string_value(json_object_get(json_object_get(pins,
							       name),
		    "digest"));
		/* A pin without a digest (an edited file) holds as changed. */
		if (json_object_get(pins, name) == NULL)
			json_object_set_new(held, name, json_string("new"));
		else if (pinned == NULL || strcmp(pinned, hex) != 0)
			json_object_set_new(held, name, json_string("changed"));
	}
	return held;
}

/*
 * Takes the definitions of s's tools named in names (NULL: all) as its
 * pins; 0, or a negative errno with *cause and nothing changed.
 */
static int
server_pins_take(const struct server *s, const json_t *names, char **cause)
{
	const json_t *tools = server_tools_peek(s), *tool;
	json_t *row = server_pins_row(s), *pins = json_object_get(row, "tools");
	const char *name;
	size_t i;
	int r;

	json_array_foreach(tools, i, tool) {
		name = json_string_value(json_object_get(tool, "name"));
		if (name != NULL &&
		    (names == NULL || json_object_get(names, name) != NULL))
			json_object_set_new(pins, name,
			    server_pins_entry(tool));
	}
	r = server_pins_save(s, row, cause);
	json_decref(row);
	return r;
}

/* What s holds, for its tools list of serial (new cache entry). */
static json_t *
server_pins_compute(const struct server *s, uint64_t serial)
{
	const json_t *tools = server_tools_peek(s), *tool;
	bool is_first = store_row_peek(pins_store, s->agent, s->id) == NULL;
	bool is_retake = json_object_get(pins_retake, s->id) != NULL;
	json_t *held = NULL, *st;
	char *cause = NULL;
	size_t i;

	json_object_del(pins_retake, s->id);
	if (!is_first) {
		held = server_pins_compare(s, tools);
		if (json_object_size(held) == 0 ||
		    (!is_retake && !server_pins_trusts(s)))
			goto done;
	}
	/*
	 * A first sight pins everything, and so does a load that changed
	 * the server's settings; a trusted server takes its updates.
	 */
	if (server_pins_take(s, is_retake ? NULL : held, &cause) == 0) {
		if (is_first || is_retake)
			log_server(LOG_INFO, s->name,
			    "pinned the definitions of its %zu tools%s",
			    json_array_size(tools),
			    is_retake ? " (a load changed its settings)" : "");
		else
			log_server(LOG_INFO, s->name,
			    "took %zu changed or new tool definitions (--trust-updates)",
			    json_object_size(held));
		json_decref(held);
		held = NULL;
		goto done;
	}
	log_server(LOG_WARNING, s->name,
	    "cannot save the pins of its tools: %s; the tools are held until mcpctl accept %s saves them",
	    cause != NULL ? cause : "unknown error", s->name);
	if (is_first) {
		held = xjson(json_object());
		json_array_foreach(tools, i, tool)
			if (json_is_string(json_object_get(tool, "name")))
				json_object_set_new(held,
				    json_string_value(json_object_get(tool,
					"name")),
				    json_string("unsaved"));
	}
done:
	if (held != NULL && json_object_size(held) > 0 && cause == NULL)
		log_server(LOG_WARNING, s->name,
		    "holds %zu tools whose definitions changed or are new since they were pinned; mcpctl changes %s shows them",
		    json_object_size(held), s->name);
	st = xjson(json_pack("{s:I, s:o, s:s?}", "serial", (json_int_t)serial,
	    "held", held != NULL ? held : json_object(), "why", cause));
	free(cause);
	return st;
}

/*
 * Which tools list of s the held set was made for: its connection's, or,
 * while it is idle, the one kept (a namespace of its own: the top bit).
 */
static uint64_t
server_pins_serial(const struct server *s)
{
	return s->session != NULL ? session_tools_serial(s->session) :
				    s->kept_serial | (UINT64_C(1) << 63);
}

/*
 * What s holds now (borrowed), or NULL when it lists no tools: of its
 * connection's tools, or of those kept while it is idle (on demand).
 */
static const json_t *
server_pins_state(const struct server *s)
{
	json_t *st;
	uint64_t serial;

	if (server_tools_peek(s) == NULL || pins_cache == NULL)
		return NULL;
	serial = server_pins_serial(s);
	st = json_object_get(pins_cache, s->id);
	if (st != NULL &&
	    (uint64_t)json_integer_value(json_object_get(st, "serial")) ==
		serial)
		return st;
	st = server_pins_compute(s, serial);
	json_object_set_new(pins_cache, s->id, st);
	return st;
}

void
server_pins_retake(struct server *s)
{
	json_object_set_new(pins_retake, s->id, json_true());
}

void
server_pins_observe(struct server *s)
{
	(void)server_pins_state(s);
}

bool
server_pins_is_held(const struct server *s, const char *tool)
{
	return json_object_get(json_object_get(server_pins_state(s), "held"),
		   tool) != NULL;
}

bool
server_pins_call_ok(const struct server *s, const char *tool,
    struct server_reply *rep)
{
	const json_t *st = server_pins_state(s);
	const char *status =
	    json_string_value(json_object_get(json_object_get(st, "held"),
		tool));
	const char *why = json_string_value(json_object_get(st, "why"));
	json_t *data;

	if (status == NULL)
		return true;
	server_call_refused(s, tool, rep, ERRORS_TOOL_HELD);
	data = json_pack("{s:s, s:s, s:s}", "server", s->name, "tool", tool,
	    "status", status);
	if (strcmp(status, "unsaved") == 0)
		server_reply_fail(rep, ERRORS_TOOL_HELD, data,
		    "tool %s of server %s is held: its definition could not be pinned (%s); nothing was sent; mcpctl accept %s pins it once the state directory takes it",
		    tool, s->name, why != NULL ? why : "unknown error",
		    s->name);
	else
		server_reply_fail(rep, ERRORS_TOOL_HELD, data,
		    "tool %s of server %s is held: %s; nothing was sent; see what changed with mcpctl changes %s, then take it with mcpctl accept %s %s",
		    tool, s->name,
		    strcmp(status, "new") == 0 ?
			"it is new since the server's tools were pinned" :
			"it changed since its definition was pinned",
		    s->name, s->name, tool);
	return false;
}

void
server_pins_drop_held(json_t *catalog)
{
	size_t i = 0;

	while (i < json_array_size(catalog))
		if (json_object_get(json_array_get(catalog, i), "is_held") !=
		    NULL)
			json_array_remove(catalog, i);
		else
			i++;
}

/* One held tool as mcpd/changes gives it, with what changed (new). */
static json_t *
server_pins_change(const struct server *s, const json_t *tool,
    const char *status)
{
	const char *name = json_string_value(json_object_get(tool, "name"));
	const json_t
	    *pin = json_object_get(json_object_get(store_row_peek(pins_store,
						       s->agent, s->id),
				       "tools"),
		name),
	    *old = json_object_get(pin, "definition");
	char hex[SERVER_DEFINITION_SIZE];
	json_t *out, *lines;

	server_tool_digest(tool, hex);
	out = xjson(json_pack("{s:s, s:s, s:s, s:s, s:O*, s:O}", "server",
	    s->name, "tool", name, "status", status, "digest", hex,
	    "pinned_digest", json_object_get(pin, "digest"), "definition",
	    tool));
	if (strcmp(status, "changed") != 0)
		return out;
	json_object_set(out, "pinned",
	    old != NULL ? (json_t *)(uintptr_t)old : json_null());
	if (old == NULL)
		return out; /* over --pin-definition-max: no diff */
	lines = tooldiff_description(json_string_value(json_object_get(old,
					 "description")),
	    json_string_value(json_object_get(tool, "description")));
	if (lines != NULL)
		json_object_set_new(out, "description", lines);
	json_object_set_new(out, "changes", tooldiff_changes(old, tool));
	return out;
}

/* Appends the held tools of s to out, in the order it lists them. */
static void
server_pins_changes_of(const struct server *s, json_t *out)
{
	const json_t *held = json_object_get(server_pins_state(s), "held");
	const json_t *tool;
	const char *status;
	size_t i;

	json_array_foreach(server_tools_peek(s), i, tool) {
		status = json_string_value(json_object_get(held,
		    json_string_value(json_object_get(tool, "name"))));
		if (status != NULL)
			json_array_append_new(out,
			    server_pins_change(s, tool, status));
	}
}

json_t *
server_pins_changes(const char *agent, const struct server *s)
{
	json_t *out = xjson(json_array());
	const struct server *one;

	if (s != NULL)
		server_pins_changes_of(s, out);
	else
		TAILQ_FOREACH(one, &server_list, entry)
			if (strcmp(one->agent, agent) == 0 && !one->is_dead)
				server_pins_changes_of(one, out);
	return out;
}

int
server_pins_accept(struct server *s, const char *tool, json_t **ret_accepted,
    char **cause)
{
	const json_t *held = json_object_get(server_pins_state(s), "held");
	json_t *names, *accepted;
	const char *name;
	const json_t *v;
	int r;

	if (tool != NULL && json_object_get(held, tool) == NULL)
		return -ENOENT;
	names = xjson(json_object());
	accepted = xjson(json_array());
	json_object_foreach((json_t *)(uintptr_t)held, name, v)
		if (tool == NULL || strcmp(name, tool) == 0) {
			json_object_set_new(names, name, json_true());
			json_array_append_new(accepted, json_string(name));
		}
	r = json_object_size(names) == 0 ? 0 :
					   server_pins_take(s, names, cause);
	json_decref(names);
	if (r < 0) {
		json_decref(accepted);
		return r;
	}
	if (json_array_size(accepted) > 0) {
		/* Made again from the saved pins; the sessions list again. */
		json_object_del(pins_cache, s->id);
		pins_gen++;
		log_server(LOG_INFO, s->name,
		    "accepted %zu changed or new tool definitions",
		    json_array_size(accepted));
		server_watch_tools_changed(s->agent);
	}
	*ret_accepted = accepted;
	return 0;
}

void
server_pins_forget(struct server *s)
{
	char *cause = NULL;

	json_object_del(pins_cache, s->id);
	pins_gen++;
	if (store_remove(pins_store, s->agent, s->id, NULL, &cause) < 0)
		log_server(LOG_WARNING, s->name,
		    "its pins could not be removed: %s; a later load of the name compares its tools with them",
		    cause != NULL ? cause : "unknown error");
	free(cause);
}

size_t
server_pins_held_count(void)
{
	const struct server *s;
	size_t n = 0;

	TAILQ_FOREACH(s, &server_list, entry)
		if (!s->is_dead)
			n += json_object_size(
			    json_object_get(server_pins_state(s), "held"));
	return n;
}
