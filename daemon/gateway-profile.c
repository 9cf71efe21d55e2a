/* SPDX-License-Identifier: ISC */
/* Profiles: named views per agent (servers, tool globs), kept as rows. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "log.h"
#include "mcpd.h"
#include "names.h"
#include "nearest.h"
#include "toolglob.h"

#define PROFILE_FILE	"profiles.json"
#define PROFILE_DEFAULT "@default" /* no profile name starts with '@' */

static struct store *profile_store;
static uint64_t profile_gen = 1;

/* The lists of a profile row, as mcpctl's options name them. */
static const char *const profile_lists[] = { "servers", "tools",
	"exclude_tools", "pins", NULL };
static const char *const profile_options[] = { "--server", "--tool",
	"--exclude-tool", "--pin", NULL };

int
profile_open(const char *state_dir)
{
	return store_open_file(state_dir, PROFILE_FILE, &profile_store);
}

void
profile_close(void)
{
	store_free(profile_store);
	profile_store = NULL;
}

uint64_t
profile_generation(void)
{
	return profile_gen;
}

const json_t *
profile_find(const char *agent, const char *name)
{
	if (name == NULL || name[0] == '@')
		return NULL;
	return store_row_peek(profile_store, agent, name);
}

const char *
profile_default(const char *agent)
{
	return json_string_value(json_object_get(store_row_peek(profile_store,
						     agent, PROFILE_DEFAULT),
	    "profile"));
}

/*
 * given is the connection's choice: mcpctl bridge --profile, an HTTP
 * token's profile, or a project file's (the bridge sends it as hello's
 * profile when --profile is not given).
 */
const char *
profile_effective(const char *agent, const char *given)
{
	return given != NULL ? given : profile_default(agent);
}

json_t *
profile_names(const char *agent)
{
	const json_t *rows = json_object_get(store_agents_peek(profile_store),
			 agent),
		     *row;
	json_t *names = xjson(json_array());
	const char *id;
	size_t i;

	json_array_foreach(rows, i, row)
		if ((id = json_string_value(json_object_get(row, "id"))) !=
			NULL &&
		    id[0] != '@')
			json_array_append_new(names, json_string(id));
	return names;
}

char *
profile_did_you_mean(const char *agent, const char *given)
{
	json_t *names = profile_names(agent), *v;
	const char **list = xcalloc(json_array_size(names) + 1, sizeof *list);
	char *near, *text;
	size_t i;

	json_array_foreach(names, i, v)
		list[i] = json_string_value(v);
	near = nearest_names(given, list, json_array_size(names), "");
	if (near != NULL)
		xasprintf(&text, "; did you mean %s?", near);
	else
		text = xstrdup("");
	free(near);
	free(list);
	json_decref(names);
	return text;
}

/* After a change: views are made again, their sessions told. */
static void
profile_changed(const char *agent, const char *name, bool is_default)
{
	profile_gen++;
	gateway_profile_changed(agent, name, is_default);
}

int
profile_put(const char *agent, const json_t *row, char **cause)
{
	int r = store_put(profile_store, agent, row, cause);

	if (r == 0)
		profile_changed(agent,
		    json_string_value(json_object_get(row, "id")), false);
	return r;
}

int
profile_remove(const char *agent, const char *name, char **cause)
{
	bool removed;
	int r = store_remove(profile_store, agent, name, &removed, cause);

	if (r == 0 && removed)
		profile_changed(agent, name, false);
	return r;
}

int
profile_set_default(const char *agent, const char *name, char **cause)
{
	json_t *row;
	int r;

	if (name == NULL)
		r = store_remove(profile_store, agent, PROFILE_DEFAULT, NULL,
		    cause);
	else {
		row = xjson(json_pack("{s:s, s:s}", "id", PROFILE_DEFAULT,
		    "profile", name));
		r = store_put(profile_store, agent, row, cause);
		json_decref(row);
	}
	if (r == 0)
		profile_changed(agent, NULL, true);
	return r;
}

const char *
profile_store_error(void)
{
	return store_error(profile_store);
}

/* Whether one of the globs of list matches name. */
static bool
profile_list_matches(const json_t *list, const char *name)
{
	const json_t *v;
	size_t i;

	json_array_foreach(list, i, v)
		if (toolglob_match(json_string_value(v), name))
			return true;
	return false;
}

/*
 * Whether a glob of list matches the tool's name as the gateway gives it
 * (server__tool), or, in a one-server view, its unprefixed one.
 */
static bool
profile_globs_match(const json_t *list, const char *server, const char *tool,
    bool is_one_server)
{
	char *full = gateway_name_plain(server, tool, true);
	char *bare = gateway_name_plain(server, tool, false);
	bool yes;

	yes = profile_list_matches(list, full) ||
	    (is_one_server && profile_list_matches(list, bare));
	free(full);
	free(bare);
	return yes;
}

bool
profile_has_server(const json_t *row, const char *server)
{
	const json_t *servers = json_object_get(row, "servers");

	return json_array_size(servers) == 0 ||
	    server_scope_has(servers, server);
}

bool
profile_allows(const json_t *row, const char *server, const char *tool,
    bool is_one_server)
{
	const json_t *tools = json_object_get(row, "tools");

	if (row == NULL || !profile_has_server(row, server))
		return false;
	is_one_server = is_one_server ||
	    json_array_size(json_object_get(row, "servers")) == 1;
	if (json_array_size(tools) > 0 &&
	    !profile_globs_match(tools, server, tool, is_one_server))
		return false;
	return !profile_globs_match(json_object_get(row, "exclude_tools"),
	    server, tool, is_one_server);
}

/* Appends " OPTION 'VALUE'" for each value of list but skip. */
static void
profile_hint_list(char **text, const char *option, const json_t *list,
    const char *skip)
{
	const json_t *v;
	char *more;
	size_t i;

	json_array_foreach(list, i, v) {
		if (skip != NULL && strcmp(json_string_value(v), skip) == 0)
			continue;
		xasprintf(&more, "%s %s '%s'", *text, option,
		    json_string_value(v));
		free(*text);
		*text = more;
	}
}

/* Appends s to *text. */
static void
profile_hint_add(char **text, const char *s)
{
	char *more;

	xasprintf(&more, "%s%s", *text, s);
	free(*text);
	*text = more;
}

char *
profile_hint(const char *agent, const char *name, const json_t *row,
    const char *server, const char *tool)
{
	const json_t *servers = json_object_get(row, "servers");
	const json_t *tools = json_object_get(row, "tools");
	const json_t *excl = json_object_get(row, "exclude_tools");
	const json_t *v;
	char *full = gateway_name_plain(server, tool, true);
	char *bare = gateway_name_plain(server, tool, false);
	char *text, *add;
	size_t i, kept = 0;

	xasprintf(&text, "mcpctl%s%s profile set %s",
	    strcmp(agent, "default") != 0 ? " --agent " : "",
	    strcmp(agent, "default") != 0 ? agent : "", name);
	if (!profile_has_server(row, server)) {
		profile_hint_list(&text, "--server", servers, NULL);
		xasprintf(&add, " --server '%s'", server);
		profile_hint_add(&text, add);
		free(add);
	}
	if (json_array_size(tools) > 0) {
		profile_hint_list(&text, "--tool", tools, NULL);
		xasprintf(&add, " --tool '%s'", full);
		profile_hint_add(&text, add);
		free(add);
	}
	/* The exclusions that would still hide it go. */
	if (profile_globs_match(excl, server, tool, true)) {
		json_array_foreach(excl, i, v)
			if (!toolglob_match(json_string_value(v), full) &&
			    !toolglob_match(json_string_value(v), bare)) {
				xasprintf(&add, " --exclude-tool '%s'",
				    json_string_value(v));
				profile_hint_add(&text, add);
				free(add);
				kept++;
			}
		if (kept == 0)
			profile_hint_add(&text, " --clear-exclude-tools");
	}
	free(full);
	free(bare);
	return text;
}

/* Checks one list of params: strings, globs where globs are due. */
static int
profile_check_list(const json_t *list, const char *key, bool is_glob,
    char **cause)
{
	const char *why;
	const json_t *v;
	size_t i, col;

	if (list == NULL)
		return 0;
	if (!json_is_array(list))
		return errors_cause(cause, -EINVAL, "%s must be an array", key);
	if (json_array_size(list) > PROFILE_LIST_MAX)
		return errors_cause(cause, -EINVAL,
		    "%s has %zu entries; a profile's list holds at most %d",
		    key, json_array_size(list), PROFILE_LIST_MAX);
	json_array_foreach(list, i, v) {
		if (!json_is_string(v))
			return errors_cause(cause, -EINVAL,
			    "%s must be an array of strings", key);
		if (!is_glob && !names_valid(json_string_value(v)))
			return errors_cause(cause, -EINVAL,
			    "%s: '%s' is not a server name ([A-Za-z0-9][A-Za-z0-9_-]{0,62})",
			    key, json_string_value(v));
		if (is_glob &&
		    toolglob_check(json_string_value(v), &col, &why) < 0)
			return errors_cause(cause, -EINVAL,
			    "bad glob '%s' at column %zu: %s",
			    json_string_value(v), col, why);
	}
	return 0;
}

int
profile_row_edit(json_t *row, const json_t *params, char **cause)
{
	const json_t *clear = json_object_get(params, "clear"), *v;
	const char *key;
	size_t i;
	int r;

	for (i = 0; profile_lists[i] != NULL; i++)
		if ((r = profile_check_list(json_object_get(params,
						profile_lists[i]),
			 profile_lists[i], i > 0, cause)) < 0)
			return r;
	json_array_foreach(clear, i, v) {
		key = json_string_value(v);
		if (key == NULL || profile_option_of(key) == NULL)
			return errors_cause(cause, -EINVAL,
			    "clear takes servers, tools, exclude_tools, pins or budget");
	}
	json_array_foreach(clear, i, v)
		json_object_del(row, json_string_value(v));
	for (i = 0; profile_lists[i] != NULL; i++)
		if ((v = json_object_get(params, profile_lists[i])) != NULL)
			json_object_set_new(row, profile_lists[i],
			    json_deep_copy(v));
	if ((v = json_object_get(params, "budget")) != NULL)
		json_object_set(row, "budget", (json_t *)(uintptr_t)v);
	return 0;
}

const char *
profile_option_of(const char *key)
{
	for (size_t i = 0; profile_lists[i] != NULL; i++)
		if (strcmp(profile_lists[i], key) == 0)
			return profile_options[i];
	return strcmp(key, "budget") == 0 ? "--budget" : NULL;
}
