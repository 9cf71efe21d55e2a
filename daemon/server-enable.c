/* SPDX-License-Identifier: ISC */
/* Persistence of enabled servers: rows, their secrets, readback, restore. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fnv.h"
#include "log.h"
#include "mcpd.h"
#include "vars.h"

/*
 * mcpd.<id>.<kind>.<key> with the key's other characters as '_'; a key
 * that is too long, or reads like one already taken ("X-Key", "X_Key"),
 * gets its hash too.
 */
static char *
enable_secret_name(const char *id, const char *kind, const char *k,
    const json_t *taken)
{
	char *name;

	xasprintf(&name, "mcpd.%s.%s.%.64s", id, kind, k);
	for (char *c = name + strlen(id) + 6; *c != '\0'; c++)
		if (!isalnum((unsigned char)*c) && *c != '.')
			*c = '_';
	if (strlen(k) > 64 || json_object_get(taken, name) != NULL) {
		free(name);
		xasprintf(&name, "mcpd.%s.%s.%08x", id, kind, fnv32(k));
	}
	return name;
}

/*
 * Literal values of env and headers move to the secret store: the row
 * keeps $(secret.mcpd.<id>.<kind>.<key>) and secrets gets name -> value.
 */
static void
enable_row_hide(json_t *obj, const char *id, const char *kind, json_t *secrets)
{
	const char *k;
	json_t *v;
	char *name, *ref;

	json_object_foreach(obj, k, v) {
		if (!json_is_string(v) || vars_has_refs(json_string_value(v)))
			continue;
		name = enable_secret_name(id, kind, k, secrets);
		xasprintf(&ref, "$(secret.%s)", name);
		json_object_set(secrets, name, v);
		json_object_set_new(obj, k, json_string(ref));
		free(name);
		free(ref);
	}
}

/* A pre-registered OAuth client's literal secret moves the same way. */
static void
enable_row_hide_oauth(json_t *oauth, const char *id, json_t *secrets)
{
	json_t *secret = json_object_get(oauth, "client_secret");
	json_t *only;

	if (!json_is_string(secret))
		return;
	only = json_pack("{s:O}", "client_secret", secret);
	enable_row_hide(only, id, "oauth", secrets);
	json_object_set(oauth, "client_secret",
	    json_object_get(only, "client_secret"));
	json_decref(only);
}

json_t *
enable_row_new(const char *id, const char *name, enum server_mode mode,
    const json_t *params, json_t *secrets)
{
	json_t *copy = json_deep_copy(params);
	char saved[32];
	time_t now = time(NULL);
	struct tm tm;

	json_object_del(copy, "persist");
	json_object_del(copy, "timeout_ms");
	json_object_del(copy, "progress");
	enable_row_hide(json_object_get(copy, "env"), id, "env", secrets);
	enable_row_hide(json_object_get(copy, "headers"), id, "header",
	    secrets);
	enable_row_hide_oauth(json_object_get(copy, "oauth"), id, secrets);
	json_object_set_new(copy, "name", json_string(name));
	gmtime_r(&now, &tm);
	strftime(saved, sizeof saved, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_pack("{s:s, s:s, s:s, s:o, s:s}", "id", id, "name", name,
	    "mode", server_mode_name(mode), "params", copy, "saved", saved);
}

const json_t *
enable_row_find(const char *agent, const char *target)
{
	const json_t *rows = json_object_get(store_agents_peek(mcpd_store),
			 agent),
		     *row;
	size_t i;

	json_array_foreach(rows, i, row) {
		const char *id = json_string_value(json_object_get(row, "id"));
		const char *name = json_string_value(json_object_get(row,
		    "name"));

		if ((id != NULL && strcmp(id, target) == 0) ||
		    (name != NULL && strcmp(name, target) == 0))
			return row;
	}
	return NULL;
}

/* True when the saved row and its secrets are already row and secrets. */
static bool
enable_is_saved(const char *agent, const json_t *row, const json_t *secrets)
{
	const char *id = json_string_value(json_object_get(row, "id"));
	const json_t *have_row = store_row_peek(mcpd_store, agent, id), *v;
	struct secrets *vault;
	const char *k, *have;

	if (have_row == NULL ||
	    !json_equal(json_object_get(have_row, "params"),
		json_object_get(row, "params")))
		return false;
	if (json_object_size(secrets) == 0)
		return true;
	if ((vault = mcpd_secrets(NULL)) == NULL)
		return false;
	json_object_foreach((json_t *)(uintptr_t)secrets, k, v)
		if ((have = secrets_get(vault, k)) == NULL ||
		    strcmp(have, json_string_value(v)) != 0)
			return false;
	return true;
}

/* The values a row refers to go to the secret store first. */
static int
enable_save_secrets(const json_t *secrets, char **cause)
{
	struct secrets *vault;
	const char *k;
	json_t *v;
	int r;

	if (json_object_size(secrets) == 0)
		return 0;
	if ((vault = mcpd_secrets(cause)) == NULL)
		return -EIO;
	json_object_foreach((json_t *)(uintptr_t)secrets, k, v)
		if ((r = secrets_set(vault, k, json_string_value(v),
			 json_string_length(v), cause)) < 0)
			return r;
	return 0;
}

int
enable_save(const char *agent, const json_t *row, const json_t *secrets,
    char **cause)
{
	int r;

	if (enable_is_saved(agent, row, secrets))
		return 0;
	if ((r = enable_save_secrets(secrets, cause)) < 0)
		return r;
	return store_put(mcpd_store, agent, row, cause);
}

/* The secrets a saved row made for its literal values (mcpd.<id>.*) go. */
static void
enable_forget_secrets(const char *id)
{
	struct secrets *vault = mcpd_secrets_if_any();
	json_t *names, *v;
	char *prefix;
	size_t i;

	if (vault == NULL)
		return;
	xasprintf(&prefix, "mcpd.%s.", id);
	names = secrets_names(vault);
	json_array_foreach(names, i, v)
		if (strncmp(json_string_value(v), prefix, strlen(prefix)) == 0)
			secrets_remove(vault, json_string_value(v), NULL, NULL);
	json_decref(names);
	free(prefix);
}

int
enable_remove(const char *agent, const char *id, bool *ret_removed,
    char **cause)
{
	bool removed = false;
	int r = store_remove(mcpd_store, agent, id, &removed, cause);

	if (r < 0)
		return r;
	if (removed)
		enable_forget_secrets(id);
	if (ret_removed != NULL)
		*ret_removed = removed;
	return 0;
}

json_t *
enable_rows_using(const char *secret)
{
	const json_t *agents = store_agents_peek(mcpd_store), *rows, *row;
	json_t *users = json_array();
	const char *agent;
	char *ref, *text;
	size_t i;

	xasprintf(&ref, "$(secret.%s)", secret);
	json_object_foreach((json_t *)(uintptr_t)agents, agent, rows)
		json_array_foreach(rows, i, row) {
			text = json_dumps(json_object_get(row, "params"),
			    JSON_COMPACT);
			if (text != NULL && strstr(text, ref) != NULL)
				json_array_append_new(users,
				    json_pack("{s:s, s:O}", "agent", agent,
					"name", json_object_get(row, "name")));
			free(text);
		}
	free(ref);
	return users;
}

int
enable_gateway_saved(const char *agent, const char *id, const json_t *want,
    char **ret_saved, char **cause)
{
	const json_t *servers, *v;
	json_t *row;
	char *text = NULL;
	size_t len = 0, i;
	FILE *f;
	int r;

	*ret_saved = NULL;
	if ((r = store_read_row(mcpd_store, agent, id, &row, cause)) < 0)
		return r;
	servers = json_object_get(json_object_get(row, "params"), "gateway");
	f = xnonnull(open_memstream(&text, &len));
	if (row == NULL)
		fputs("nothing (no row of it is saved)", f);
	else if (json_array_size(servers) == 0)
		fputs("a row without servers", f);
	json_array_foreach(servers, i, v)
		fprintf(f, "%s%s", i > 0 ? ", " : "",
		    json_is_string(v) ? json_string_value(v) : "?");
	if (fclose(f) != 0)
		fatalx("out of memory");
	*ret_saved = text;
	r = row != NULL && json_equal(servers, want);
	json_decref(row);
	return r;
}

/* The saved row of (agent, id) again, with name and the disabled mark. */
static int
enable_row_change(const char *agent, const char *id, const char *name,
    bool is_disabled, char **cause)
{
	const json_t *have = store_row_peek(mcpd_store, agent, id);
	json_t *row;
	int r;

	if (have == NULL)
		return errors_cause(cause, -ENOENT, "no saved row %s", id);
	row = xjson(json_deep_copy(have));
	json_object_set_new(row, "name", json_string(name));
	json_object_set_new(json_object_get(row, "params"), "name",
	    json_string(name));
	if (is_disabled)
		json_object_set_new(row, "disabled", json_true());
	else
		json_object_del(row, "disabled");
	r = store_put(mcpd_store, agent, row, cause);
	json_decref(row);
	return r;
}

bool
enable_row_is_disabled(const json_t *row)
{
	return json_is_true(json_object_get(row, "disabled"));
}

int
enable_set_disabled(const char *agent, const char *id, bool is_disabled,
    char **cause)
{
	const json_t *have = store_row_peek(mcpd_store, agent, id);

	return enable_row_change(agent, id,
	    json_string_value(json_object_get(have, "name")), is_disabled,
	    cause);
}

int
enable_set_params(const char *agent, const char *id, const json_t *changes,
    char **cause)
{
	const json_t *have = store_row_peek(mcpd_store, agent, id);
	json_t *row, *params, *v;
	const char *key;
	int r;

	if (have == NULL)
		return errors_cause(cause, -ENOENT, "no saved row %s", id);
	row = xjson(json_deep_copy(have));
	params = json_object_get(row, "params");
	json_object_foreach((json_t *)(uintptr_t)changes, key, v) {
		if (json_is_null(v))
			json_object_del(params, key);
		else
			json_object_set(params, key, v);
	}
	r = store_put(mcpd_store, agent, row, cause);
	json_decref(row);
	return r;
}

int
enable_rename(const char *agent, const char *id, const char *name, char **cause)
{
	const json_t *have = store_row_peek(mcpd_store, agent, id);

	return enable_row_change(agent, id, name, enable_row_is_disabled(have),
	    cause);
}

/* The list row of a disabled server: what its saved row says. */
static json_t *
enable_disabled_describe(const char *agent, const json_t *row)
{
	const json_t *params = json_object_get(row, "params");
	struct loadspec_error err = { 0 };
	struct loadspec ls;
	bool is_parsed = json_is_object(params) &&
	    loadspec_parse(params, &ls, &err);
	char *endpoint = is_parsed ? spec_endpoint(&ls.spec) : NULL;
	json_t *r, *more;

	r = json_pack("{s:O, s:O, s:s, s:O?, s:s?, s:s?, s:s?, s:n, s:s}", "id",
	    json_object_get(row, "id"), "name", json_object_get(row, "name"),
	    "agent", agent, "mode", json_object_get(row, "mode"), "transport",
	    is_parsed ? spec_transport_name(&ls.spec) : NULL, "endpoint",
	    endpoint, "image", is_parsed ? ls.spec.image : NULL, "container",
	    "state", "disabled");
	more = json_pack("{s:i, s:i, s:b, s:i, s:n, s:n, s:n, s:O?}", "tools",
	    0, "generation", 0, "persistent", 1, "restarts", 0, "last_error",
	    "since", "pid", "origin", json_object_get(params, "origin"));
	json_object_update(r, more);
	json_decref(more);
	free(endpoint);
	if (is_parsed)
		loadspec_clear(&ls);
	loadspec_error_clear(&err);
	return r;
}

/* Each disabled row of agent (NULL: any) as what(agent, row), in a list. */
static json_t *
enable_disabled_map(const char *agent,
    json_t *(*what)(const char *agent, const json_t *row))
{
	const json_t *agents = store_agents_peek(mcpd_store), *rows, *row;
	json_t *list = json_array();
	const char *a;
	size_t i;

	json_object_foreach((json_t *)(uintptr_t)agents, a, rows) {
		if (agent != NULL && strcmp(a, agent) != 0)
			continue;
		json_array_foreach(rows, i, row)
			if (enable_row_is_disabled(row))
				json_array_append_new(list, what(a, row));
	}
	return list;
}

json_t *
enable_disabled_rows(const char *agent)
{
	return enable_disabled_map(agent, enable_disabled_describe);
}

static json_t *
enable_disabled_name(const char *agent, const json_t *row)
{
	(void)agent;
	return json_incref(json_object_get(row, "name"));
}

json_t *
enable_disabled_names(const char *agent)
{
	return enable_disabled_map(agent, enable_disabled_name);
}

int
enable_recheck(const char *agent, const char *id, char **cause)
{
	return store_recheck(mcpd_store, agent, id, cause);
}

/* ---- restore at start: each saved row through its server's gate ---- */

static size_t enable_total, enable_answered, enable_failed;

static void
enable_restore_status(void)
{
	if (enable_answered < enable_total)
		notify_status(
		    "restoring saved servers: %zu of %zu done, %zu failed",
		    enable_answered, enable_total, enable_failed);
	else
		notify_status(
		    "restored %zu saved servers, %zu failed; listening on %s",
		    enable_total, enable_failed, mcpd_opts.socket_path);
}

static void
enable_restored(void *arg, const char *error)
{
	char *label = arg;

	enable_answered++;
	if (error != NULL) {
		enable_failed++;
		log_warnx("restore of %s failed: %s", label, error);
	} else
		log_info("restored %s", label);
	enable_restore_status();
	free(label);
}

/* Why a row cannot be restored at all, or NULL with *ls filled. */
static char *
enable_row_spec(const char *agent, const json_t *row, struct loadspec *ls)
{
	const json_t *params = json_object_get(row, "params");
	const char *id = json_string_value(json_object_get(row, "id"));
	struct loadspec_error err = { 0 };
	char *why = NULL;

	if (!json_is_object(params) || id == NULL)
		return xstrdup("the row has no params or no id");
	if (!loadspec_parse(params, ls, &err)) {
		xasprintf(&why, "its params do not parse (%s: %s)", err.field,
		    err.why);
		loadspec_error_clear(&err);
		loadspec_clear(ls);
		return why;
	}
	if (server_find(agent, id) != NULL ||
	    server_find_name(agent, ls->name) != NULL) {
		loadspec_clear(ls);
		return xstrdup("another saved row has the same id or name");
	}
	return NULL;
}

int
enable_start(const char *agent, const json_t *row, struct server_reply *rep,
    int timeout_ms, void (*done)(void *arg, const char *error), void *arg,
    char **cause)
{
	struct loadspec ls;
	struct server *s;
	char *why;

	if ((why = enable_row_spec(agent, row, &ls)) != NULL) {
		*cause = why;
		return -EINVAL;
	}
	/* Its saved id, whichever rule made it (rows of before 0.2 too). */
	server_new(agent, json_string_value(json_object_get(row, "id")),
	    ls.name, ls.mode, &ls.spec, &s);
	server_idle_configure(s, ls.is_on_demand, ls.idle_stop_ms);
	loadspec_clear(&ls);
	/* At start (no request): its lines of before the restart. */
	if (rep == NULL)
		server_logs_restore(s);
	/* An idle on-demand server stays idle, listed from its kept lists. */
	if (rep != NULL || !server_idle_restore(s, done, arg))
		server_restore(s, rep, timeout_ms, done, arg);
	return 0;
}

static void
enable_restore_row(const char *agent, const json_t *row)
{
	const char *name = json_string_value(json_object_get(row, "name"));
	char *label, *why = NULL;

	xasprintf(&label, "%s (agent %s)", name != NULL ? name : "?", agent);
	if (enable_start(agent, row, NULL, mcpd_opts.load_timeout_ms,
		enable_restored, label, &why) < 0) {
		enable_restored(label, why); /* its row stays in the file */
		free(why);
	}
}

void
enable_restore(void)
{
	const json_t *agents = store_agents_peek(mcpd_store), *rows, *row;
	const char *agent;
	size_t i;

	if (store_error(mcpd_store) != NULL) {
		log_warnx(
		    "enablement store: %s; nothing is restored, and loads that save fail until it is fixed",
		    store_error(mcpd_store));
		notify_status("enablement store refused: %s",
		    store_error(mcpd_store));
		return;
	}
	/* A disabled row stays saved and stopped until mcpctl enable. */
	json_object_foreach((json_t *)(uintptr_t)agents, agent, rows)
		json_array_foreach(rows, i, row)
			enable_total += !enable_row_is_disabled(row);
	enable_restore_status();
	json_object_foreach((json_t *)(uintptr_t)agents, agent, rows)
		json_array_foreach(rows, i, row)
			if (!enable_row_is_disabled(row))
				enable_restore_row(agent, row);
}
