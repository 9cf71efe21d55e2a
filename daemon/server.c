/* SPDX-License-Identifier: ISC */
/* Configured connections: the list, what each shows, and tool calls. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <sodium.h>

#include "log.h"
#include "names.h"
#include "nearest.h"
#include "server-int.h"

struct server_head server_list = TAILQ_HEAD_INITIALIZER(server_list);
size_t server_closing;
void (*server_all_stopped)(void *);
void *server_all_stopped_arg;

static json_t *server_container_row(const struct server *s);
static bool server_in_scope(const struct server *s, const char *agent);

static const char *const server_state_names[] = {
	[SERVER_STARTING] = "starting",
	[SERVER_CONNECTING] = "connecting",
	[SERVER_READY] = "ready",
	[SERVER_RESTARTING] = "restarting",
	[SERVER_STOPPING] = "stopping",
	[SERVER_STOPPED] = "stopped",
	[SERVER_FAILED] = "failed",
	[SERVER_IDLE] = "idle",
	[SERVER_WAKING] = "waking",
	[SERVER_RECOVERING] = "recovering",
	[SERVER_RESUMING] = "resuming",
	[SERVER_REMOVING] = "removing",
};

const char *
server_state_name(enum server_state state)
{
	return server_state_names[state];
}

const char *
server_state_shown(const struct server *s)
{
	/*
	 * The states folded in from flags show what was shown before they
	 * were states, so that clients (mcpctl wait, unload --failed, the
	 * relay) read the column as they always did.
	 */
	switch (s->state) {
	case SERVER_WAKING:
		return s->next != NULL ? "connecting" : "idle";
	case SERVER_RECOVERING:
		return "restarting";
	case SERVER_RESUMING:
		return s->next != NULL ? "connecting" : "starting";
	case SERVER_REMOVING:
		return "failed";
	default:
		return server_state_name(s->state);
	}
}

bool
server_is_standing_in(const struct server *s)
{
	return s->state == SERVER_IDLE || s->state == SERVER_WAKING ||
	    s->state == SERVER_RECOVERING || s->state == SERVER_RESUMING;
}

bool
server_is_starting(const struct server *s)
{
	return s->state == SERVER_STARTING || s->state == SERVER_CONNECTING ||
	    s->state == SERVER_WAKING || s->state == SERVER_RESUMING;
}

const char *
server_mode_name(enum server_mode mode)
{
	switch (mode) {
	case SERVER_PROCESS:
		return "process";
	case SERVER_CONTAINER:
		return "container";
	case SERVER_GATEWAY:
		return "gateway";
	default:
		return "remote";
	}
}

const char *
server_name(const struct server *s)
{
	return s->name;
}

/* Which state may follow which: anything else is a bug (doc/states.md). */
static const unsigned server_state_next[] = {
#define S(x) (1u << SERVER_##x)
	[SERVER_STARTING] = S(CONNECTING) | S(RESTARTING) | S(FAILED) |
	    S(STOPPING) | S(STOPPED) | S(IDLE) | S(RESUMING) | S(REMOVING),
	[SERVER_CONNECTING] = S(READY) | S(RESTARTING) | S(FAILED) |
	    S(STOPPING) | S(STOPPED) | S(IDLE) | S(REMOVING),
	[SERVER_READY] = S(STARTING) | S(RESTARTING) | S(FAILED) | S(STOPPING) |
	    S(IDLE) | S(RECOVERING) | S(RESUMING),
	[SERVER_RESTARTING] = S(STARTING) | S(FAILED) | S(STOPPING) | S(IDLE) |
	    S(RESUMING),
	[SERVER_STOPPING] = S(STOPPED) | S(FAILED) | S(REMOVING),
	[SERVER_STOPPED] = 0,
	[SERVER_FAILED] = S(STARTING) | S(STOPPING) | S(STOPPED) | S(IDLE) |
	    S(RESUMING) | S(REMOVING),
	[SERVER_IDLE] = S(STARTING) | S(FAILED) | S(STOPPING) | S(STOPPED) |
	    S(WAKING) | S(RESUMING),
	[SERVER_WAKING] = S(READY) | S(IDLE) | S(FAILED) | S(STOPPING) |
	    S(STOPPED) | S(REMOVING),
	[SERVER_RECOVERING] = S(RESUMING) | S(FAILED) | S(STOPPING) | S(IDLE),
	[SERVER_RESUMING] = S(READY) | S(RECOVERING) | S(FAILED) | S(IDLE),
	[SERVER_REMOVING] = S(FAILED) | S(STOPPING) | S(STOPPED),
#undef S
};
const struct fsm server_fsm = { "server", server_state_names, server_state_next,
	sizeof server_state_names / sizeof *server_state_names };

void
server_set_state(struct server *s, enum server_state state)
{
	enum server_state from = s->state;

	if (from == state)
		return;
	s->state = fsm_move(&server_fsm, from, state, s->name);
	s->since = time(NULL);
	log_server(LOG_INFO, s->name, "%s", server_state_name(state));
	/* What s keeps beside its state agrees with it (doc/states.md). */
	fsm_check(&server_fsm,
	    !evtimer_pending(s->restart_timer, NULL) ||
		state == SERVER_RESTARTING || state == SERVER_RECOVERING,
	    s->name, "a restart is due", state);
	fsm_check(&server_fsm,
	    s->next == NULL || (s->running != NULL && server_is_starting(s)) ||
		(s->running != NULL && state == SERVER_READY),
	    s->name, "a connection is being started", state);
	server_idle_state_changed(s, from);
}

void
server_set_error(struct server *s, const char *why)
{
	/* why may be s->last_error itself. */
	char *copy = why != NULL ? xstrdup(why) : NULL;

	free(s->last_error);
	s->last_error = copy;
	s->last_error_at = time(NULL);
	s->last_error_generation = s->generation;
}

/* Its container is called that (rax-probe-... or rax-mcp-...). */
static bool
server_is_container_named(const struct server *s, const char *target)
{
	const char *name = s->container != NULL ?
	    docker_container_name(s->container) :
	    NULL;

	return name != NULL && strcmp(name, target) == 0;
}

struct server *
server_find(const char *agent, const char *key)
{
	struct server *s;

	TAILQ_FOREACH(s, &server_list, entry) {
		if (s->state == SERVER_STOPPED || !server_in_scope(s, agent))
			continue;
		if (strcmp(s->id, key) == 0 || strcmp(s->name, key) == 0 ||
		    server_is_container_named(s, key))
			return s;
	}
	return NULL;
}

/* Its canonical endpoint, or its image given without a tag. */
static bool
server_has_endpoint(const struct server *s, const char *target,
    const char *image)
{
	return strcmp(s->endpoint, target) == 0 ||
	    (image != NULL && s->mode == SERVER_CONTAINER &&
		strcmp(s->endpoint, image) == 0);
}

struct server *
server_find_target(const char *agent, const char *target, json_t **ret_names)
{
	struct server *s = server_find(agent, target), *found = NULL;
	char *image = NULL;
	json_t *names;

	*ret_names = NULL;
	if (s != NULL)
		return s;
	/* An image without its tag: the :latest a load made explicit. */
	if (xenomem(names_image_normalize(target, &image, NULL)) < 0)
		image = NULL;
	names = json_array();
	TAILQ_FOREACH(s, &server_list, entry)
		if (s->state != SERVER_STOPPED && server_in_scope(s, agent) &&
		    server_has_endpoint(s, target, image)) {
			found = s;
			json_array_append_new(names, json_string(s->name));
		}
	free(image);
	if (json_array_size(names) > 1) {
		*ret_names = names;
		return NULL;
	}
	json_decref(names);
	return found;
}

struct server *
server_find_name(const char *agent, const char *name)
{
	struct server *s;

	TAILQ_FOREACH(s, &server_list, entry)
		if (s->state != SERVER_STOPPED && server_in_scope(s, agent) &&
		    strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

struct server *
server_find_runs(const char *agent, enum server_mode mode,
    const struct server_spec *spec)
{
	struct server *s;

	TAILQ_FOREACH(s, &server_list, entry)
		if (s->state != SERVER_STOPPED && server_in_scope(s, agent) &&
		    server_runs(s, mode, spec))
			return s;
	return NULL;
}

char *
server_did_you_mean(const char *agent, const char *given)
{
	json_t *disabled = enable_disabled_names(agent), *v;
	const char **names = NULL;
	struct server *s;
	size_t n = 0, i;
	char *near, *text;

	TAILQ_FOREACH(s, &server_list, entry)
		if (s->state != SERVER_STOPPED && server_in_scope(s, agent)) {
			names = xreallocarray(names, n + 1, sizeof *names);
			names[n++] = s->name;
		}
	/* A disabled server is still agent's: named, or suggested. */
	json_array_foreach(disabled, i, v) {
		if (strcmp(json_string_value(v), given) == 0) {
			xasprintf(&text,
			    "; it is disabled: mcpctl enable %s starts it",
			    given);
			goto done;
		}
		names = xreallocarray(names, n + 1, sizeof *names);
		names[n++] = json_string_value(v);
	}
	near = nearest_names(given, names, n, "");
	if (near == NULL)
		text = xstrdup("");
	else
		xasprintf(&text, "; did you mean %s?", near);
	free(near);
done:
	free(names);
	json_decref(disabled);
	return text;
}

const char *
server_instructions_peek(const struct server *s)
{
	/* An idle server's, as it gave them: kept with its lists. */
	if (s->session == NULL && server_idle_is_listed(s))
		return json_string_value(json_object_get(s->kept,
		    "instructions"));
	return session_instructions_peek(s->session);
}

const char *
server_id(const struct server *s)
{
	return s->id;
}

char *
server_id_for(const char *agent, const char *name)
{
	return identity_connection_id(agent, "server", name, strlen(name));
}

/* id is another server's, or another name's saved row (a renamed one). */
static bool
server_id_is_taken(const char *agent, const char *id, const char *name)
{
	const json_t *row = store_row_peek(mcpd_store, agent, id);
	const char *saved = json_string_value(json_object_get(row, "name"));
	struct server *s;

	TAILQ_FOREACH(s, &server_list, entry)
		if (s->state != SERVER_STOPPED && server_in_scope(s, agent) &&
		    strcmp(s->id, id) == 0)
			return true;
	return row != NULL && (saved == NULL || strcmp(saved, name) != 0);
}

char *
server_id_new(const char *agent, const char *name)
{
	char *id = server_id_for(agent, name), *key;

	/* A rename keeps its id: the name it left may come again. */
	for (unsigned i = 2; server_id_is_taken(agent, id, name); i++) {
		free(id);
		xasprintf(&key, "%s#%u", name, i);
		id = identity_connection_id(agent, "server", key, strlen(key));
		free(key);
	}
	return id;
}

bool
server_runs(const struct server *s, enum server_mode mode,
    const struct server_spec *spec)
{
	char *endpoint = spec_endpoint(spec);
	/* A gateway is the same whatever servers it runs: they may change. */
	bool same = s->mode == mode &&
	    (mode == SERVER_GATEWAY ||
		(endpoint != NULL && strcmp(s->endpoint, endpoint) == 0));

	free(endpoint);
	return same;
}

enum server_mode
server_get_mode(const struct server *s)
{
	return s->mode;
}

const char *
server_endpoint(const struct server *s)
{
	return s->endpoint;
}

size_t
server_count(size_t *ret_ready)
{
	struct server *s;
	size_t n = 0, ready = 0;

	TAILQ_FOREACH(s, &server_list, entry) {
		n++;
		ready += s->state == SERVER_READY;
	}
	if (ret_ready != NULL)
		*ret_ready = ready;
	return n;
}

int
server_new(const char *agent, const char *id, const char *name,
    enum server_mode mode, struct server_spec *spec, struct server **ret)
{
	struct server *s;

	s = xcalloc(1, sizeof *s);
	s->agent = xstrdup(agent);
	s->id = xstrdup(id);
	s->name = xstrdup(name);
	s->mode = mode;
	s->spec = *spec;
	memset(spec, 0, sizeof *spec);
	s->endpoint = spec_endpoint(&s->spec);
	s->logs = logring_new(mcpd_opts.log_lines);
	s->restart_timer = evtimer_new(mcpd_base, server_restart_due, s);
	s->healthy_timer = evtimer_new(mcpd_base, server_healthy, s);
	s->kick = event_new(mcpd_base, -1, 0, server_job_run, s);
	if (s->restart_timer == NULL || s->healthy_timer == NULL ||
	    s->kick == NULL)
		fatalx("out of memory making server %s", name);
	if (mode == SERVER_CONTAINER)
		s->container = docker_container_new(agent, name,
		    server_container_gone, s);
	if (mode == SERVER_REMOTE) {
		s->auth = oauth_new(agent, name, id);
		oauth_on_authorized(s->auth, server_oauth_authorized, s);
	}
	s->state = SERVER_STARTING;
	s->since = time(NULL);
	s->references = 1; /* the list's */
	TAILQ_INIT(&s->jobs);
	TAILQ_INIT(&s->followers);
	TAILQ_INIT(&s->calls);
	server_idle_init(s);
	TAILQ_INSERT_TAIL(&server_list, s, entry);
	*ret = s;
	return 0;
}

struct oauth *
server_auth(const struct server *s)
{
	return s->auth;
}

bool
server_is_persistent(const struct server *s)
{
	return s->is_persistent;
}

bool
server_is_failed(const struct server *s)
{
	return s->state == SERVER_FAILED;
}

void
server_ref(struct server *s)
{
	s->references++;
}

static void
server_release(void *arg)
{
	struct server *s = arg;

	event_free(s->restart_timer);
	event_free(s->healthy_timer);
	event_free(s->kick);
	logring_free(s->logs);
	spec_clear(&s->spec);
	oauth_unref(s->auth);
	free(s->id);
	free(s->name);
	free(s->agent);
	free(s->endpoint);
	free(s->last_error);
	json_decref(s->definitions);
	json_decref(s->carried);
	server_idle_release(s);
	free(s);
}

void
server_unref(struct server *s)
{
	if (--s->references == 0)
		defer_call(server_release, s);
}

void
server_kill(struct server *s)
{
	if (s->is_dead)
		return;
	s->is_dead = true;
	server_logs_end(s);
	TAILQ_REMOVE(&server_list, s, entry);
	event_del(s->restart_timer);
	event_del(s->healthy_timer);
	event_del(s->kick);
	docker_container_free(s->container);
	s->container = NULL;
	oauth_close(s->auth);
	server_unref(s);
}

void
server_check_all_stopped(void)
{
	void (*done)(void *) = server_all_stopped;

	if (done == NULL || !TAILQ_EMPTY(&server_list) || server_closing > 0)
		return;
	server_all_stopped = NULL;
	done(server_all_stopped_arg);
}

static void
server_closed_in_background(void *arg)
{
	(void)arg;
	server_closing--;
	server_check_all_stopped();
}

/* Ends a session that no longer serves, without waiting for it. */
void
server_retire_session(struct session *sess)
{
	if (sess == NULL)
		return;
	server_closing++;
	session_close(sess, server_closed_in_background, NULL);
}

/* The last stderr lines as a JSON array, for errors: the server's own
 * lines only, without mcpd's notes (server_logs_note) among them, nor
 * the lines of before mcpd restarted. */
json_t *
server_error_data(const struct server *s)
{
	json_t *data = json_object(), *all = logring_tail(s->logs, 0);
	json_t *lines = json_array(), *line;
	size_t i, n = 0, skip, old = logring_restored(s->logs);

	json_array_foreach(all, i, line)
		if (i >= old &&
		    strncmp(json_string_value(line), "[mcpd ", 6) != 0)
			n++;
	skip = n > SERVER_STDERR_IN_ERROR ? n - SERVER_STDERR_IN_ERROR : 0;
	json_array_foreach(all, i, line) {
		if (i < old ||
		    strncmp(json_string_value(line), "[mcpd ", 6) == 0)
			continue;
		if (skip > 0)
			skip--;
		else
			json_array_append(lines, line);
	}
	json_decref(all);
	json_object_set_new(data, "server", json_string(s->name));
	json_object_set_new(data, "stderr", lines);
	return data;
}

json_t *
server_result_mark(json_t *result, const char *flag)
{
	json_object_set_new(result, flag, json_true());
	return result;
}

static json_t *
server_string_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

static json_t *
server_time(time_t when)
{
	char buf[32];
	struct tm tm;

	gmtime_r(&when, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

/* What the connection speaks now (it may have fallen back to HTTP+SSE). */
static const char *
server_transport_name(const struct server *s)
{
	if (s->session != NULL)
		return session_transport(s->session)->name;
	return spec_transport_name(&s->spec);
}

json_t *
server_load_result(const struct server *s)
{
	json_t *info = session_server_info_peek(s->session), *r;

	r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:I, s:I, s:b, s:O}",
	    "id", s->id, "name", s->name, "mode", server_mode_name(s->mode),
	    "transport", server_transport_name(s), "endpoint", s->endpoint,
	    "protocol_version",
	    server_string_or_null(session_protocol_version(s->session)),
	    "tools", (json_int_t)json_array_size(server_tools_peek(s)),
	    "generation", (json_int_t)s->generation, "persistent",
	    s->is_persistent, "server_info", info != NULL ? info : json_null());
	if (s->container != NULL) {
		json_object_set_new(r, "image", json_string(s->spec.image));
		json_object_set_new(r, "container", server_container_row(s));
	}
	server_idle_describe(s, r);
	return r;
}

/* The container of a list row: name, phase, and a removal error. */
static json_t *
server_container_row(const struct server *s)
{
	const char *name, *error;

	if (s->container == NULL ||
	    (name = docker_container_name(s->container)) == NULL)
		return json_null();
	error = docker_container_error(s->container);
	return json_pack("{s:s, s:s, s:o}", "name", name, "phase",
	    docker_container_phase(s->container), "remove_error",
	    server_string_or_null(error));
}

json_t *
server_describe(const struct server *s)
{
	pid_t pid = -1;
	/* Where an import read it (mcpd/load origin), kept in its saved row. */
	const json_t *saved = store_row_peek(mcpd_store, s->agent, s->id);
	const json_t *params = json_object_get(saved, "params");
	json_t *row;

	if (s->session != NULL && s->mode == SERVER_GATEWAY)
		pid = transport_dgw_pid(session_transport(s->session));
	else if (s->session != NULL)
		pid = transport_stdio_pid(session_transport(s->session));
	row = json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:o, s:I, s:I, s:b, s:I, s:o, s:o, s:o, s:o?}",
	    "id", s->id, "name", s->name, "agent", s->agent, "mode",
	    server_mode_name(s->mode), "transport", server_transport_name(s),
	    "endpoint", s->endpoint, "image",
	    server_string_or_null(s->spec.image), "container",
	    server_container_row(s), "state", server_state_shown(s),
	    "protocol_version",
	    server_string_or_null(session_protocol_version(s->session)),
	    "tools", (json_int_t)json_array_size(server_tools_peek(s)),
	    "generation", (json_int_t)s->generation, "persistent",
	    s->is_persistent, "restarts", (json_int_t)s->restarts, "last_error",
	    server_string_or_null(s->last_error), "since",
	    server_time(s->since), "pid",
	    pid > 0 ? json_integer(pid) : json_null(), "origin",
	    json_string(json_string_value(json_object_get(params, "origin"))));

	if (s->auth != NULL && oauth_is_used(s->auth))
		json_object_set_new(row, "auth",
		    json_string(oauth_state_label(s->auth)));
	/* When the last error came, and to which connection it belongs. */
	if (s->last_error != NULL) {
		json_object_set_new(row, "last_error_at",
		    server_time(s->last_error_at));
		json_object_set_new(row, "last_error_generation",
		    json_integer((json_int_t)s->last_error_generation));
	}
	server_idle_describe(s, row);
	return row;
}

/*
 * The tool's definition as a digest: BLAKE2b-128 of its listed JSON with
 * sorted keys, in hex, so that a caller can say which one it typed its
 * arguments by.
 */
void
server_tool_digest(const json_t *tool, char hex[SERVER_DEFINITION_SIZE])
{
	unsigned char digest[(SERVER_DEFINITION_SIZE - 1) / 2];
	char *text = xnonnull(json_dumps(tool,
	    JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY));

	crypto_generichash(digest, sizeof digest, (unsigned char *)text,
	    strlen(text), NULL, 0);
	sodium_bin2hex(hex, SERVER_DEFINITION_SIZE, digest, sizeof digest);
	free(text);
}

const char *
server_tool_definition(struct server *s, const char *tool)
{
	/* An idle server's kept lists count as one more list. */
	uint64_t serial = s->session != NULL ?
	    session_tools_serial(s->session) :
	    s->kept_serial;
	const json_t *t, *seen;
	char hex[SERVER_DEFINITION_SIZE];

	/* Digested once per tools list: a call does not dump its tool. */
	if (s->definitions == NULL || s->definitions_of != s->session ||
	    s->definitions_serial != serial) {
		json_decref(s->definitions);
		s->definitions = json_object();
		s->definitions_of = s->session;
		s->definitions_serial = serial;
	}
	if ((seen = json_object_get(s->definitions, tool)) != NULL)
		return json_string_value(seen);
	if ((t = server_tool_peek(s, tool)) == NULL)
		return NULL;
	server_tool_digest(t, hex);
	json_object_set_new(s->definitions, tool, json_string(hex));
	return json_string_value(json_object_get(s->definitions, tool));
}

/* What mcpd/tools gives of one listed tool (new; name checked). */
static json_t *
server_tool_entry(const struct server *s, const json_t *tool,
    bool has_definition)
{
	const char *name = json_string_value(json_object_get(tool, "name"));
	char *handle = xnonnull(names_handle_format(s->name, s->generation,
	    name));
	char hex[SERVER_DEFINITION_SIZE];
	json_t *copy = json_copy((json_t *)(uintptr_t)tool);

	json_object_set_new(copy, "server", json_string(s->name));
	json_object_set_new(copy, "handle", json_string(handle));
	free(handle);
	if (server_pins_is_held(s, name))
		json_object_set_new(copy, "held", json_true());
	if (has_definition) {
		server_tool_digest(tool, hex);
		json_object_set_new(copy, "definition", json_string(hex));
	}
	return copy;
}

void
server_tools_append(const struct server *s, json_t *into)
{
	json_t *tools = server_tools_peek(s), *tool;
	size_t i;

	if (session_is_catalog_retired(s->session))
		return; /* no handle of it would work */

	json_array_foreach(tools, i, tool) {
		if (json_is_object(tool) &&
		    json_is_string(json_object_get(tool, "name")))
			json_array_append_new(into,
			    server_tool_entry(s, tool, false));
	}
}

json_t *
server_tool_listed(const struct server *s, const char *tool)
{
	const json_t *t = server_tool_peek(s, tool);

	if (t == NULL || !json_is_object(t) ||
	    session_is_catalog_retired(s->session))
		return NULL;
	return server_tool_entry(s, t, true);
}

bool
server_tool_is_defined_as(const struct server *s, const char *tool,
    const char *definition)
{
	const json_t *t = server_tool_peek(s, tool);
	char hex[SERVER_DEFINITION_SIZE];

	if (t == NULL)
		return true; /* nothing to compare: the call says what is */
	server_tool_digest(t, hex);
	return strcmp(hex, definition) == 0;
}

static bool
server_in_scope(const struct server *s, const char *agent)
{
	return agent == NULL || strcmp(s->agent, agent) == 0;
}

json_t *
server_list_rows(const char *agent)
{
	json_t *rows = json_array();
	struct server *s;

	TAILQ_FOREACH(s, &server_list, entry)
		if (server_in_scope(s, agent))
			json_array_append_new(rows, server_describe(s));
	return rows;
}

json_t *
server_list_tools(const char *agent)
{
	json_t *tools = json_array();
	struct server *s;

	TAILQ_FOREACH(s, &server_list, entry)
		if (server_in_scope(s, agent))
			server_tools_append(s, tools);
	return tools;
}
