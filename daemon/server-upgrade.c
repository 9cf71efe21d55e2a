/* SPDX-License-Identifier: ISC */
/* Servers across an upgrade: what each is, and a process server's process. */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "jsonutil.h"
#include "log.h"
#include "server-int.h"

const char *
server_upgrade_busy(void)
{
	struct server *s;

	if (server_closing > 0)
		return "a server's connection is still closing";
	if (docker_cmds_running() > 0)
		return "docker commands are running";
	TAILQ_FOREACH(s, &server_list, entry) {
		if (s->running != NULL || !TAILQ_EMPTY(&s->jobs) ||
		    s->next != NULL)
			return "a server is starting, stopping or reloading";
		if (!TAILQ_EMPTY(&s->calls) || !TAILQ_EMPTY(&s->waiters))
			return "calls are in flight";
		if (session_is_busy(s->session))
			return "requests to servers are in flight";
		/* Not carried: the new process would not know to remove it. */
		if (s->state == SERVER_REMOVING)
			return "an unloaded server's container is still to be removed: docker rm failed; mcpd retries it every 10 s, mcpctl unload retries it now";
	}
	return NULL;
}

static json_t *
server_strv_save(char *const *v)
{
	json_t *a = json_array();

	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static char **
server_strv_load(const json_t *a)
{
	char **v;
	const json_t *e;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) == 0)
		return NULL;
	v = xcalloc(json_array_size(a) + 1, sizeof *v);
	json_array_foreach(a, i, e)
		v[i] = xstrdup(json_string_value(e) != NULL ?
			json_string_value(e) :
			"");
	return v;
}

/* The spec as given (variables unresolved: no secret value is in it). */
static json_t *
server_spec_save(const struct server_spec *spec)
{
	return json_pack(
	    "{s:o, s:o, s:s?, s:s?, s:b, s:b, s:b, s:O?, s:O?, s:s?, s:s?, s:o, s:o, s:s?}",
	    "argv", server_strv_save(spec->argv), "env",
	    server_strv_save(spec->env), "cwd", spec->cwd, "url",
	    spec->remote.url, "allow_local", spec->remote.allow_local, "is_sse",
	    spec->remote.is_sse, "may_fall_back", spec->remote.may_fall_back,
	    "headers", spec->remote.headers, "oauth", spec->remote.oauth,
	    "transport", spec->transport, "image", spec->image, "args",
	    server_strv_save(spec->args), "volumes",
	    server_strv_save(spec->volumes), "network", spec->network);
}

static void
server_spec_load(const json_t *saved, struct server_spec *spec)
{
	const json_t *headers = json_object_get(saved, "headers");
	const json_t *oauth = json_object_get(saved, "oauth");

	memset(spec, 0, sizeof *spec);
	spec->argv = server_strv_load(json_object_get(saved, "argv"));
	spec->env = server_strv_load(json_object_get(saved, "env"));
	spec->cwd = jsonutil_string_dup(saved, "cwd");
	spec->remote.url = jsonutil_string_dup(saved, "url");
	spec->remote.allow_local = json_is_true(json_object_get(saved,
	    "allow_local"));
	spec->remote.is_sse = json_is_true(json_object_get(saved, "is_sse"));
	spec->remote.may_fall_back = json_is_true(json_object_get(saved,
	    "may_fall_back"));
	spec->remote.headers = json_is_object(headers) ?
	    json_deep_copy(headers) :
	    NULL;
	spec->remote.oauth = json_is_object(oauth) ? json_deep_copy(oauth) :
						     NULL;
	spec->transport = jsonutil_string_dup(saved, "transport");
	spec->image = jsonutil_string_dup(saved, "image");
	spec->args = server_strv_load(json_object_get(saved, "args"));
	spec->volumes = server_strv_load(json_object_get(saved, "volumes"));
	spec->network = jsonutil_string_dup(saved, "network");
}

/*
 * A ready server's connection goes on: a process's pipes, a container
 * (by its name) with its docker run -i or its HTTP session, a remote's
 * HTTP session. Any other (a gateway's, HTTP+SSE) is made anew.
 */
static json_t *
server_connection_save(struct server *s)
{
	struct transport *t = session_transport(s->session);
	const char *key = NULL;
	json_t *saved = NULL;

	if (s->state != SERVER_READY || s->session == NULL)
		return json_null();
	switch (s->mode) {
	case SERVER_PROCESS:
		key = "stdio";
		saved = transport_stdio_save(t);
		break;
	case SERVER_CONTAINER:
		key = "container";
		saved = probe_save(t);
		break;
	case SERVER_REMOTE:
		key = "http";
		saved = transport_http_save(t);
		break;
	default:
		break;
	}
	if (saved == NULL)
		return json_null();
	return json_pack("{s:o, s:o}", key, saved, "session",
	    session_save(s->session));
}

/* Its stderr lines so far: mcpctl logs goes on as if nothing happened. */
static json_t *
server_logs_carry(const struct server *s)
{
	char *text;
	size_t len;
	json_t *out;

	logring_save(s->logs, &text, &len);
	out = json_stringn(text, len);
	free(text);
	return out != NULL ? out : json_null(); /* not UTF-8: not carried */
}

static json_t *
server_save(struct server *s)
{
	char digest[2 * SPEC_DIGEST_LEN + 1];

	sodium_bin2hex(digest, sizeof digest, s->digest, sizeof s->digest);
	json_t *saved = json_pack(
	    "{s:s, s:s, s:s, s:i, s:o, s:s, s:b, s:b, s:i, s:I, s:O?, s:o, s:s}",
	    "agent", s->agent, "id", s->id, "name", s->name, "mode",
	    (int)s->mode, "spec", server_spec_save(&s->spec), "state",
	    server_state_name(s->state), "is_persistent", s->is_persistent,
	    "is_on_demand", s->is_on_demand, "idle_stop_ms", s->idle_stop_ms,
	    "generation", (json_int_t)s->generation, "kept", s->kept,
	    "connection", server_connection_save(s), "digest", digest);
	json_object_set_new(saved, "logs", server_logs_carry(s));
	return saved;
}

json_t *
server_upgrade_save(void)
{
	json_t *all = json_array();
	struct server *s;

	TAILQ_FOREACH(s, &server_list, entry)
		if (!s->is_dead && s->state != SERVER_STOPPED &&
		    s->state != SERVER_STOPPING)
			json_array_append_new(all, server_save(s));
	return all;
}

/* The servers an upgrade adopts, until each is ready again (or not). */
struct server_adoption {
	size_t left;
	json_t *not_ready; /* names */
	server_adopted_fn *done;
	void *arg;
};

struct server_adoptee {
	struct server_adoption *all;
	char *name;
};

static void
server_adoption_end(struct server_adoption *all)
{
	all->done(all->arg, all->not_ready);
	json_decref(all->not_ready);
	free(all);
}

static void
server_adopted(void *arg, const char *error)
{
	struct server_adoptee *one = arg;
	struct server_adoption *all = one->all;

	if (error != NULL) {
		log_warnx("upgrade: %s did not come back: %s", one->name,
		    error);
		json_array_append_new(all->not_ready, json_string(one->name));
	}
	free(one->name);
	free(one);
	if (--all->left == 0)
		server_adoption_end(all);
}

static void
server_adopt(const json_t *e, struct server_adoption *all)
{
	struct server_adoptee *one;
	const char *agent = json_string_value(json_object_get(e, "agent"));
	const char *id = json_string_value(json_object_get(e, "id"));
	const char *name = json_string_value(json_object_get(e, "name"));
	const char *state = json_string_value(json_object_get(e, "state"));
	const json_t *kept = json_object_get(e, "kept");
	const char *text, *logs;
	char *cause = NULL;
	struct server_spec spec;
	struct server *s;

	if (agent == NULL || id == NULL || name == NULL || state == NULL)
		return;
	server_spec_load(json_object_get(e, "spec"), &spec);
	server_new(agent, id, name,
	    (enum server_mode)json_integer_value(json_object_get(e, "mode")),
	    &spec, &s);
	server_idle_configure(s,
	    json_is_true(json_object_get(e, "is_on_demand")),
	    (int)json_integer_value(json_object_get(e, "idle_stop_ms")));
	s->generation = (uint64_t)json_integer_value(json_object_get(e,
	    "generation"));
	if (json_is_object(kept)) {
		s->kept = json_deep_copy(kept);
		s->kept_serial++;
	}
	text = json_string_value(json_object_get(e, "digest"));
	if (text != NULL)
		sodium_hex2bin(s->digest, sizeof s->digest, text, strlen(text),
		    NULL, NULL, NULL);
	logs = json_string_value(json_object_get(e, "logs"));
	if (logs == NULL ||
	    logring_load(s->logs, logs,
		json_string_length(json_object_get(e, "logs")), &cause) < 0)
		free(cause); /* a ring it cannot read starts empty */
	if (strcmp(state, "idle") == 0 && s->kept != NULL) {
		server_set_state(s, SERVER_IDLE);
		server_logs_note(s, "upgrade: idle with its kept lists");
		return;
	}
	/* Listed from its kept lists meanwhile; calls wait for it. */
	if (s->kept != NULL)
		server_set_state(s, SERVER_RESUMING);
	if (json_is_object(json_object_get(e, "connection")))
		s->carried = json_incref(json_object_get(e, "connection"));
	server_logs_note(s, "upgrade: %s",
	    s->carried != NULL ? "its process is kept" : "it starts again");
	one = xcalloc(1, sizeof *one);
	one->all = all;
	one->name = xstrdup(name);
	all->left++;
	/* Read back before the upgrade: not read again. */
	server_job_restore(s, NULL, 0, server_adopted, one);
	s->is_persistent = json_is_true(json_object_get(e, "is_persistent"));
}

static void
server_adoption_none(void *arg)
{
	server_adoption_end(arg);
}

void
server_upgrade_adopt(const json_t *servers, server_adopted_fn *done, void *arg)
{
	struct server_adoption *all = xcalloc(1, sizeof *all);
	const json_t *e;
	size_t i;

	all->not_ready = json_array();
	all->done = done;
	all->arg = arg;
	/* Counted from 1 until every job is queued: none ends before. */
	all->left = 1;
	json_array_foreach(servers, i, e)
		server_adopt(e, all);
	if (--all->left == 0)
		defer_call(server_adoption_none, all);
}
