/* SPDX-License-Identifier: ISC */
/* Configured connections: state machine, per-server gate, restart policy. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"
#include "mcpd.h"
#include "names.h"

#define SERVER_BACKOFF_FIRST_MS 500
#define SERVER_BACKOFF_MAX_MS	30000
#define SERVER_HEALTHY_MS	60000 /* ready this long resets the backoff */
#define SERVER_MAX_FAILURES	8     /* failed restarts in a row: failed */
#define SERVER_STDERR_IN_ERROR	20    /* stderr lines in a load error */

enum server_job_kind {
	SERVER_JOB_LOAD,
	SERVER_JOB_RELOAD,
	SERVER_JOB_RESTART,
	SERVER_JOB_UNLOAD,
	SERVER_JOB_SHUTDOWN, /* an unload that keeps the saved row */
};

struct server_job {
	enum server_job_kind kind;
	struct request *req; /* NULL for restarts and shutdown */
	int timeout_ms;
	json_t *row; /* a load: the row to save first, or NULL */
	json_t *secrets; /* ... and the values it refers to: name -> value */
	TAILQ_ENTRY(server_job) entry;
};

struct server {
	char *id;
	char *name;
	char *agent;
	char *endpoint;
	enum server_mode mode;
	struct server_spec spec;
	enum server_state state;
	uint64_t generation;
	struct session *session; /* serves calls */
	struct session *next;	 /* being started by the running job */
	TAILQ_HEAD(, server_job) jobs;
	bool is_job_running;
	bool is_removed;
	bool is_denied; /* the failing start was refused by policy */
	struct logring *logs;
	struct docker_container *container; /* a container server's record */
	char *failed_why; /* a failed start, while its container goes */
	bool is_unloading; /* unloaded; only its container is left */
	bool is_persistent; /* its row is saved: it comes back at start */
	bool needs_recheck; /* restored: the row is read again before ready */
	bool was_live;	   /* the unload stopped a live session */
	bool was_saved;	   /* ... and removed a saved row */
	bool had_container; /* ... and removed a container */
	unsigned restarts;
	unsigned failures; /* failed restarts in a row */
	int backoff_ms;
	struct event *restart_timer;
	struct event *healthy_timer;
	char *last_error;
	time_t since;
	TAILQ_ENTRY(server) entry;
};

static TAILQ_HEAD(, server) servers = TAILQ_HEAD_INITIALIZER(servers);
static size_t server_closing; /* sessions still stopping in background */
static void (*server_all_stopped)(void *);
static void *server_all_stopped_arg;

static const struct session_cbs server_session_cbs;
static void server_restart_due(evutil_socket_t, short, void *);
static void server_healthy(evutil_socket_t, short, void *);
static bool server_in_scope(const struct server *, const char *agent);
static void server_job_kick(struct server *);
static void server_container_gone(void *);
static void server_start_failed(struct server *, const char *why);
static void server_forget_secrets(const struct server *);
static void server_progress(void *, const char *stage, const char *message);

static const char *const server_state_names[] = {
	[SERVER_STARTING] = "starting",
	[SERVER_CONNECTING] = "connecting",
	[SERVER_READY] = "ready",
	[SERVER_RESTARTING] = "restarting",
	[SERVER_STOPPING] = "stopping",
	[SERVER_STOPPED] = "stopped",
	[SERVER_FAILED] = "failed",
};

const char *
server_state_name(enum server_state state)
{
	return server_state_names[state];
}

const char *
server_mode_name(enum server_mode mode)
{
	switch (mode) {
	case SERVER_PROCESS:
		return "process";
	case SERVER_CONTAINER:
		return "container";
	default:
		return "remote";
	}
}

const char *
server_name(const struct server *s)
{
	return s->name;
}

const char *
server_agent(const struct server *s)
{
	return s->agent;
}

static void
server_set_state(struct server *s, enum server_state state)
{
	if (s->state == state)
		return;
	s->state = state;
	s->since = time(NULL);
	log_server(LOG_INFO, s->name, "%s", server_state_name(state));
}

static void
server_set_error(struct server *s, const char *why)
{
	free(s->last_error);
	s->last_error = why != NULL ? strdup(why) : NULL;
}

struct server *
server_find(const char *agent, const char *target)
{
	struct server *s;

	TAILQ_FOREACH(s, &servers, entry) {
		if (s->is_removed || !server_in_scope(s, agent))
			continue;
		if (strcmp(s->id, target) == 0 ||
		    strcmp(s->name, target) == 0 ||
		    strcmp(s->endpoint, target) == 0)
			return s;
	}
	return NULL;
}

size_t
server_count(size_t *ret_ready)
{
	struct server *s;
	size_t n = 0, ready = 0;

	TAILQ_FOREACH(s, &servers, entry) {
		n++;
		ready += s->state == SERVER_READY;
	}
	if (ret_ready != NULL)
		*ret_ready = ready;
	return n;
}

int
server_new(const char *agent, const char *name, enum server_mode mode,
    struct server_spec *spec, struct server **ret, char **cause)
{
	struct server *s;

	if ((s = calloc(1, sizeof *s)) == NULL)
		return -ENOMEM;
	s->agent = strdup(agent);
	s->name = strdup(name);
	s->mode = mode;
	s->spec = *spec;
	memset(spec, 0, sizeof *spec);
	s->id = spec_id(agent, mode, &s->spec);
	s->endpoint = spec_endpoint(&s->spec);
	s->logs = logring_new(mcpd_opts.log_lines);
	s->restart_timer = evtimer_new(mcpd_base, server_restart_due, s);
	s->healthy_timer = evtimer_new(mcpd_base, server_healthy, s);
	if (s->agent == NULL || s->name == NULL || s->id == NULL ||
	    s->endpoint == NULL || s->logs == NULL ||
	    s->restart_timer == NULL || s->healthy_timer == NULL)
		fatalx("out of memory making server %s", name);
	if (mode == SERVER_CONTAINER)
		s->container = docker_container_new(agent, name,
		    server_container_gone, s);
	s->state = SERVER_STARTING;
	s->since = time(NULL);
	TAILQ_INIT(&s->jobs);
	TAILQ_INSERT_TAIL(&servers, s, entry);
	(void)cause;
	*ret = s;
	return 0;
}

static void
server_free(struct server *s)
{
	TAILQ_REMOVE(&servers, s, entry);
	event_free(s->restart_timer);
	event_free(s->healthy_timer);
	logring_free(s->logs);
	docker_container_free(s->container);
	free(s->failed_why);
	spec_clear(&s->spec);
	free(s->id);
	free(s->name);
	free(s->agent);
	free(s->endpoint);
	free(s->last_error);
	free(s);
}

static void
server_check_all_stopped(void)
{
	void (*done)(void *) = server_all_stopped;

	if (done == NULL || !TAILQ_EMPTY(&servers) || server_closing > 0)
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
static void
server_retire_session(struct session *sess)
{
	if (sess == NULL)
		return;
	server_closing++;
	session_close(sess, server_closed_in_background, NULL);
}

/* The last stderr lines as a JSON array, for errors. */
static json_t *
server_error_data(const struct server *s)
{
	json_t *data = json_object();

	json_object_set_new(data, "server", json_string(s->name));
	json_object_set_new(data, "stderr",
	    logring_tail(s->logs, SERVER_STDERR_IN_ERROR));
	return data;
}

/* An environment that may hold resolved secrets: wiped, then freed. */
static void
server_env_free(char **env)
{
	for (size_t i = 0; env != NULL && env[i] != NULL; i++)
		explicit_bzero(env[i], strlen(env[i]));
	child_strv_free(env);
}

/* Starts a connection in s->next; the callbacks say how it went. */
static int
server_connect(struct server *s, int timeout_ms, char **cause)
{
	struct transport *t;
	int r;

	struct server_spec run;
	struct probe_target target = { &run, s->agent, s->name };
	struct child_spec child = { 0 };

	/* Variables are resolved at each start; the values live only now. */
	if ((r = spec_resolve(&s->spec, &run, cause)) < 0)
		return r;
	child.argv = run.argv;
	child.cwd = run.cwd;
	if (s->mode == SERVER_CONTAINER)
		t = probe_new(&target, s->container, NULL, NULL);
	else if (s->mode == SERVER_REMOTE)
		t = transport_http_new(&run.remote, NULL, NULL);
	else if ((child.env = child_env_build(run.env)) != NULL)
		t = transport_stdio_new(&child, NULL, NULL);
	else
		t = NULL;
	if (t == NULL ||
	    (s->next = session_new(t, &server_session_cbs, s, timeout_ms)) ==
		NULL)
		fatalx("out of memory connecting %s", s->name);
	if (s->session == NULL)
		server_set_state(s, SERVER_STARTING);
	r = session_start(s->next, cause);
	server_env_free((char **)(uintptr_t)child.env);
	spec_clear(&run);
	if (r < 0) {
		session_free(s->next);
		s->next = NULL;
		return r;
	}
	if (s->session == NULL)
		server_set_state(s, SERVER_CONNECTING);
	server_progress(s, "connecting", "handshake started");
	return 0;
}

/* A stage of the running job, for a client that asked to follow it. */
static void
server_progress(void *arg, const char *stage, const char *message)
{
	struct server *s = arg;
	struct server_job *job = TAILQ_FIRST(&s->jobs);

	if (job != NULL && s->is_job_running)
		control_progress(job->req, s->name, stage, message);
}

static void
server_progress_connected(struct server *s, struct session *sess)
{
	char text[256];

	snprintf(text, sizeof text, "connected: protocol %s, %zu tools",
	    session_protocol_version(sess),
	    json_array_size(session_tools_peek(sess)));
	server_progress(s, "connected", text);
}

static void
server_healthy(evutil_socket_t fd, short events, void *arg)
{
	struct server *s = arg;

	(void)fd, (void)events;
	s->backoff_ms = 0;
	s->failures = 0;
}

static void
server_restart_due(evutil_socket_t fd, short events, void *arg)
{
	struct server *s = arg;
	struct server_job *job;

	(void)fd, (void)events;
	if (mcpd_is_stopping() || (job = calloc(1, sizeof *job)) == NULL)
		return;
	job->kind = SERVER_JOB_RESTART;
	job->timeout_ms = mcpd_opts.load_timeout_ms;
	TAILQ_INSERT_TAIL(&s->jobs, job, entry);
	server_job_kick(s);
}

static void
server_schedule_restart(struct server *s)
{
	struct timeval tv;

	if (mcpd_is_stopping())
		return;
	if (s->failures >= SERVER_MAX_FAILURES) {
		server_set_state(s, SERVER_FAILED);
		log_server(LOG_WARNING, s->name,
		    "gave up after %u failed "
		    "restarts; reload it to try again",
		    s->failures);
		return;
	}
	s->backoff_ms = s->backoff_ms == 0 ? SERVER_BACKOFF_FIRST_MS :
					     s->backoff_ms * 2;
	if (s->backoff_ms > SERVER_BACKOFF_MAX_MS)
		s->backoff_ms = SERVER_BACKOFF_MAX_MS;
	server_set_state(s, SERVER_RESTARTING);
	tv.tv_sec = s->backoff_ms / 1000;
	tv.tv_usec = (s->backoff_ms % 1000) * 1000;
	evtimer_add(s->restart_timer, &tv);
}

static void
server_job_free(struct server_job *job)
{
	json_decref(job->row);
	json_decref(job->secrets);
	free(job);
}

static void
server_job_end(struct server *s)
{
	struct server_job *job = TAILQ_FIRST(&s->jobs);

	TAILQ_REMOVE(&s->jobs, job, entry);
	server_job_free(job);
	s->is_job_running = false;
	server_job_kick(s);
}

/* The new connection is ready: it replaces the old one. */
static void
server_promote(struct server *s)
{
	size_t total, ready;
	struct timeval healthy = { SERVER_HEALTHY_MS / 1000, 0 };
	struct session *old = s->session;

	s->session = s->next;
	s->next = NULL;
	s->generation++;
	server_set_state(s, SERVER_READY);
	evtimer_add(s->healthy_timer, &healthy);
	server_retire_session(old);
	total = server_count(&ready);
	notify_status("%zu of %zu servers ready", ready, total);
}

/* A restored server's row must still be saved before its tools are callable. */
static bool
server_recheck(struct server *s)
{
	char *cause = NULL, *why;
	int r = store_recheck(mcpd_store, s->agent, s->id, &cause);

	s->needs_recheck = false;
	if (r == 1)
		return true;
	if (r == 0)
		why = strdup("its saved row is gone (removed or changed since "
			     "mcpd started); it is not restored");
	else if (asprintf(&why, "the store cannot be read back: %s",
		     cause != NULL ? cause : "unknown error") < 0)
		why = NULL;
	s->is_persistent = r < 0;
	server_set_error(s, why != NULL ? why : "recheck failed");
	free(why);
	free(cause);
	return false;
}

static void
server_on_ready(void *arg, struct session *sess)
{
	struct server *s = arg;
	struct server_job *job = TAILQ_FIRST(&s->jobs);

	if (sess != s->next || job == NULL)
		return;
	server_progress_connected(s, sess);
	if (s->needs_recheck && !server_recheck(s)) {
		session_free(s->next);
		s->next = NULL;
		server_start_failed(s, s->last_error);
		return;
	}
	server_promote(s);
	log_server(LOG_INFO, s->name,
	    "connected: generation %" PRIu64 ", protocol %s, %zu tools",
	    s->generation, session_protocol_version(sess),
	    json_array_size(session_tools_peek(sess)));
	if (job->req != NULL)
		control_reply(job->req, server_load_result(s));
	server_job_end(s);
}

/* Fails the running job's request with why and the stderr tail. */
static void
server_job_fail(struct server *s, struct server_job *job, const char *fmt,
    const char *why)
{
	if (job->req == NULL)
		return;
	control_fail(job->req,
	    s->is_denied ? ERRORS_DENIED : ERRORS_UNAVAILABLE,
	    server_error_data(s), fmt, s->name, why);
	job->req = NULL;
}

/* Starting a connection failed (its container is gone or kept). */
static void
server_start_failed_now(struct server *s, const char *why)
{
	struct server_job *job = TAILQ_FIRST(&s->jobs);
	bool has_container = s->container != NULL &&
	    docker_container_name(s->container) != NULL;

	server_progress(s, "failed", why);
	server_set_error(s, why);
	log_server(LOG_WARNING, s->name, "start failed: %s", why);
	if (s->session != NULL) {
		server_job_fail(s, job,
		    "reload of %s failed: %s; the previous "
		    "connection keeps serving",
		    why);
	} else if (job->kind == SERVER_JOB_LOAD && s->generation == 0) {
		/* A first load that failed leaves nothing behind... */
		server_job_fail(s, job,
		    s->is_persistent ?
			"cannot load %s: %s; its row stays saved and mcpd "
			"restores it at its next start (mcpctl reload to try "
			"now, mcpctl unload to remove it)" :
			"cannot load %s: %s",
		    why);
		/* ... but a saved row, or a container that would not go, stays listed. */
		s->is_removed = !has_container && !s->is_persistent;
		s->is_unloading = has_container && !s->is_persistent;
		if (!s->is_removed)
			server_set_state(s, SERVER_FAILED);
	} else {
		server_job_fail(s, job, "cannot start %s: %s", why);
		if (job->kind == SERVER_JOB_RESTART) {
			s->failures++;
			server_schedule_restart(s);
		} else
			server_set_state(s, SERVER_FAILED);
	}
	s->is_denied = false;
	server_job_end(s);
}

static void
server_failed_cleared(void *arg, int err, const char *why)
{
	struct server *s = arg;
	char *text = s->failed_why, *both = NULL;

	s->failed_why = NULL;
	if (err < 0 &&
	    asprintf(&both,
		"%s; its container %s could not be removed (%s): mcpd "
		"retries every 10 s, and unload tries again at once",
		text, docker_container_name(s->container), why) < 0)
		both = NULL;
	server_start_failed_now(s, both != NULL ? both : text);
	free(both);
	free(text);
}

/* The running job failed: a container is removed before anyone hears. */
static void
server_start_failed(struct server *s, const char *why)
{
	if (s->container == NULL ||
	    docker_container_name(s->container) == NULL) {
		server_start_failed_now(s, why);
		return;
	}
	if ((s->failed_why = strdup(why)) == NULL)
		fatal("strdup");
	docker_container_remove(s->container, server_failed_cleared, s);
}

static void
server_on_failed(void *arg, struct session *sess, const char *why)
{
	struct server *s = arg;

	if (sess == s->next) {
		/* A policy refusal (a redirect, say) stays a refusal. */
		s->is_denied = session_is_denied(sess);
		session_free(s->next);
		s->next = NULL;
		server_start_failed(s, why); /* may free s */
		return;
	}
	if (sess != s->session)
		return;
	/* The serving connection died: its calls already failed. */
	session_free(s->session);
	s->session = NULL;
	evtimer_del(s->healthy_timer);
	if (s->is_job_running && s->container != NULL)
		return; /* the job removed its container on purpose */
	server_set_error(s, why);
	log_server(LOG_WARNING, s->name, "connection lost: %s", why);
	/* A running job (a reload, an unload removing its container) takes over. */
	if (s->is_job_running)
		return;
	server_schedule_restart(s);
}

static void
server_on_tools_changed(void *arg, struct session *sess)
{
	struct server *s = arg;

	log_server(LOG_INFO, s->name, "tools changed: %zu tools",
	    json_array_size(session_tools_peek(sess)));
}

static void
server_on_stderr(void *arg, const char *line, size_t len)
{
	struct server *s = arg;

	logring_push(s->logs, line, len);
	log_server(LOG_DEBUG, s->name, "stderr: %.*s", (int)len, line);
}

static const struct session_cbs server_session_cbs = {
	.ready = server_on_ready,
	.failed = server_on_failed,
	.tools_changed = server_on_tools_changed,
	.stderr_line = server_on_stderr,
	.progress = server_progress,
};

static void
server_job_connect(struct server *s, struct server_job *job)
{
	char *cause = NULL;

	if (server_connect(s, job->timeout_ms, &cause) < 0) {
		server_start_failed(s, cause != NULL ? cause : "cannot start");
		free(cause);
	}
}

/* The container of before is gone: its session goes, the new one starts. */
static void
server_container_cleared(void *arg, int err, const char *why)
{
	struct server *s = arg;
	char *text;

	if (err < 0) {
		if (asprintf(&text,
			"the previous container %s could not be removed: %s",
			docker_container_name(s->container), why) < 0)
			fatal("asprintf");
		server_start_failed_now(s, text);
		free(text);
		return;
	}
	server_retire_session(s->session);
	s->session = NULL;
	server_job_connect(s, TAILQ_FIRST(&s->jobs));
}

/*
 * One container per server (its name is fixed): a reload or restart
 * removes the old container before the new one starts.
 */
static void
server_job_start(struct server *s, struct server_job *job)
{
	char *cause = NULL;

	if (job->kind == SERVER_JOB_RESTART)
		s->restarts++;
	s->is_unloading = false;
	server_progress(s, "starting", s->endpoint);
	if (s->mode != SERVER_CONTAINER) {
		server_job_connect(s, job);
		return;
	}
	if (docker_available(&cause) < 0) {
		server_start_failed_now(s, cause);
		free(cause);
		return;
	}
	docker_container_remove(s->container, server_container_cleared, s);
}

/* Containers that shutdown could not remove, for its answer. */
static json_t *server_not_removed;

const char **
server_container_names(const char *docker)
{
	struct server *s;
	size_t n = 3;
	const char **args = calloc(server_count(NULL) + 4, sizeof *args);

	if (args == NULL)
		fatal("calloc");
	args[0] = docker;
	args[1] = "rm";
	args[2] = "-f";
	TAILQ_FOREACH(s, &servers, entry)
		if (s->container != NULL &&
		    docker_container_name(s->container) != NULL)
			args[n++] = docker_container_name(s->container);
	return args;
}

json_t *
server_not_removed_take(void)
{
	json_t *list = server_not_removed;

	server_not_removed = NULL;
	return list;
}

/* The container would not go: the server stays listed, to unload again. */
static void
server_unload_kept(struct server *s, struct server_job *job)
{
	const char *name = docker_container_name(s->container);
	const char *why = docker_container_error(s->container);
	char *text;

	if (asprintf(&text,
		"container %s could not be removed: %s; mcpd retries every "
		"10 s and at shutdown; unload again to retry now",
		name, why != NULL ? why : "unknown error") < 0)
		fatal("asprintf");
	server_set_error(s, text);
	server_set_state(s, SERVER_FAILED);
	s->is_unloading = true;
	if (job->req != NULL)
		control_fail(job->req, ERRORS_UNAVAILABLE,
		    json_pack("{s:s, s:s, s:s}", "server", s->name, "container",
			name, "error", why != NULL ? why : ""),
		    "%s", text);
	job->req = NULL;
	free(text);
	server_job_end(s);
}

static void
server_unload_done(void *arg)
{
	struct server *s = arg;
	struct server_job *job = TAILQ_FIRST(&s->jobs);
	const char *kept = s->container != NULL ?
	    docker_container_name(s->container) : NULL;

	if (kept != NULL && !mcpd_is_stopping()) {
		server_unload_kept(s, job);
		return;
	}
	if (kept != NULL) {
		if (server_not_removed == NULL)
			server_not_removed = json_array();
		json_array_append_new(server_not_removed,
		    json_pack("{s:s, s:s}", "container", kept, "error",
			docker_container_error(s->container)));
		log_warnx("shutdown leaves container %s: %s", kept,
		    docker_container_error(s->container));
	}
	server_set_state(s, SERVER_STOPPED);
	if (job->req != NULL)
		control_reply(job->req,
		    json_pack("{s:s, s:s, s:b, s:b, s:b}", "id", s->id, "name",
			s->name, "stopped_live", s->was_live, "removed_saved",
			s->was_saved, "container_removed", s->had_container));
	job->req = NULL;
	s->is_removed = true;
	server_job_end(s);
}

/* docker rm -f first; then the transport closes. */
static void
server_unload_close(void *arg, int err, const char *why)
{
	struct server *s = arg;
	struct session *sess = s->session;

	(void)err, (void)why;
	s->session = NULL;
	if (sess != NULL)
		session_close(sess, server_unload_done, s);
	else
		server_unload_done(s);
}

static void
server_job_unload(struct server *s, struct server_job *job)
{
	char *cause = NULL;

	s->was_saved = false;
	if (job->kind == SERVER_JOB_UNLOAD && s->is_persistent) {
		/* The row goes first: a crash from here on does not restore it. */
		if (store_remove(mcpd_store, s->agent, s->id, &s->was_saved,
			&cause) < 0) {
			control_fail(job->req, ERRORS_STORAGE,
			    json_pack("{s:s}", "server", s->name),
			    "cannot remove the saved row of %s: %s; nothing "
			    "was changed",
			    s->name, cause != NULL ? cause : "unknown error");
			job->req = NULL;
			free(cause);
			server_job_end(s);
			return;
		}
		s->is_persistent = false;
		server_forget_secrets(s);
	}
	evtimer_del(s->restart_timer);
	evtimer_del(s->healthy_timer);
	server_set_state(s, SERVER_STOPPING);
	s->was_live = s->session != NULL;
	s->had_container = s->container != NULL &&
	    docker_container_name(s->container) != NULL;
	if (s->had_container)
		docker_container_remove(s->container, server_unload_close, s);
	else
		server_unload_close(s, 0, NULL);
}

/* A retried removal succeeded: an unloaded server can go now. */
static void
server_container_gone(void *arg)
{
	struct server *s = arg;

	log_server(LOG_INFO, s->name, "its container was removed at last");
	if (!s->is_unloading)
		return;
	s->is_removed = true;
	server_job_kick(s);
}

/* True when the saved row and its secrets are already what job would save. */
static bool
server_job_is_saved(const struct server *s, const struct server_job *job)
{
	const json_t *row = store_row_peek(mcpd_store, s->agent, s->id), *v;
	struct secrets *vault;
	const char *k, *have;

	if (row == NULL || !json_equal(json_object_get(row, "params"),
			       json_object_get(job->row, "params")))
		return false;
	if (json_object_size(job->secrets) == 0)
		return true;
	if ((vault = mcpd_secrets(NULL)) == NULL)
		return false;
	json_object_foreach(job->secrets, k, v)
		if ((have = secrets_get(vault, k)) == NULL ||
		    strcmp(have, json_string_value(v)) != 0)
			return false;
	return true;
}

/* The values a row refers to go to the secret store first. */
static int
server_job_save_secrets(const struct server_job *job, char **cause)
{
	struct secrets *vault;
	const char *k;
	json_t *v;
	int r;

	if (json_object_size(job->secrets) == 0)
		return 0;
	if ((vault = mcpd_secrets(cause)) == NULL)
		return -EIO;
	json_object_foreach(job->secrets, k, v)
		if ((r = secrets_set(vault, k, json_string_value(v),
			 json_string_length(v), cause)) < 0)
			return r;
	return 0;
}

static json_t *
server_result_was_loaded(json_t *result)
{
	json_object_set_new(result, "was_loaded", json_true());
	return result;
}

/* The secrets a saved row of s made for its literal values go with it. */
static void
server_forget_secrets(const struct server *s)
{
	struct secrets *vault = mcpd_secrets(NULL);
	json_t *names, *v;
	char *prefix;
	size_t i;

	if (vault == NULL || asprintf(&prefix, "mcpd.%s.", s->id) < 0)
		return;
	names = secrets_names(vault);
	json_array_foreach(names, i, v)
		if (strncmp(json_string_value(v), prefix, strlen(prefix)) == 0)
			secrets_remove(vault, json_string_value(v), NULL, NULL);
	json_decref(names);
	free(prefix);
}

/* A load's row is saved (and read back) before anything starts. */
static bool
server_job_save(struct server *s, struct server_job *job)
{
	char *cause = NULL;

	if (job->row == NULL)
		return true;
	if (server_job_is_saved(s, job) ||
	    (server_job_save_secrets(job, &cause) == 0 &&
		store_put(mcpd_store, s->agent, job->row, &cause) == 0)) {
		s->is_persistent = true;
		return true;
	}
	control_fail(job->req, ERRORS_STORAGE, json_pack("{s:s}", "server",
	    s->name),
	    "cannot save %s: %s; nothing was saved%s", s->name,
	    cause != NULL ? cause : "unknown error",
	    s->session != NULL ? ", and it keeps running unsaved" :
				 " and nothing was started");
	job->req = NULL;
	free(cause);
	if (s->session == NULL && s->generation == 0 && !s->is_persistent)
		s->is_removed = true;
	return false;
}

/* Runs the next job, or frees a removed server whose queue is empty. */
static void
server_job_kick(struct server *s)
{
	struct server_job *job;

	if (s->is_job_running)
		return;
	while (s->is_removed && (job = TAILQ_FIRST(&s->jobs)) != NULL) {
		TAILQ_REMOVE(&s->jobs, job, entry);
		if (job->req != NULL)
			control_fail(job->req, ERRORS_NOT_FOUND, NULL,
			    "server %s was unloaded meanwhile", s->name);
		server_job_free(job);
	}
	if (s->is_removed) {
		server_free(s);
		server_check_all_stopped();
		return;
	}
	if ((job = TAILQ_FIRST(&s->jobs)) == NULL)
		return;
	s->is_job_running = true;
	switch (job->kind) {
	case SERVER_JOB_LOAD:
		if (!server_job_save(s, job)) {
			server_job_end(s);
			return;
		}
		if (session_is_ready(s->session)) {
			/* The same target again: it is already running. */
			control_reply(job->req,
			    server_result_was_loaded(server_load_result(s)));
			server_job_end(s);
			return;
		}
		/* FALLTHROUGH */
	case SERVER_JOB_RELOAD:
	case SERVER_JOB_RESTART:
		evtimer_del(s->restart_timer);
		server_job_start(s, job);
		break;
	case SERVER_JOB_UNLOAD:
	case SERVER_JOB_SHUTDOWN:
		server_job_unload(s, job);
		break;
	}
}

static struct server_job *
server_enqueue(struct server *s, enum server_job_kind kind, struct request *req,
    int timeout_ms, json_t *row, json_t *secrets)
{
	struct server_job *job = calloc(1, sizeof *job);

	if (job == NULL)
		fatal("calloc");
	job->kind = kind;
	job->req = req;
	job->row = row;
	job->secrets = secrets;
	job->timeout_ms = timeout_ms > 0 ? timeout_ms :
					   mcpd_opts.load_timeout_ms;
	TAILQ_INSERT_TAIL(&s->jobs, job, entry);
	server_job_kick(s);
	return job;
}

void
server_load(struct server *s, struct request *req, int timeout_ms,
    json_t *row, json_t *secrets)
{
	struct server_job *job = server_enqueue(s, SERVER_JOB_LOAD, req,
	    timeout_ms, row, secrets);

	if (job != NULL && control_is_internal(req)) {
		/* A restore: saved already, read back before it serves. */
		s->is_persistent = true;
		s->needs_recheck = true;
	}
}

void
server_reload(struct server *s, struct request *req, int timeout_ms)
{
	s->failures = 0;
	s->backoff_ms = 0;
	server_set_error(s, NULL);
	server_enqueue(s, SERVER_JOB_RELOAD, req, timeout_ms, NULL, NULL);
}

void
server_unload(struct server *s, struct request *req)
{
	server_enqueue(s, SERVER_JOB_UNLOAD, req, 0, NULL, NULL);
}

void
server_stop_all(void (*done)(void *), void *arg)
{
	struct server *s, *tmp;

	server_all_stopped = done;
	server_all_stopped_arg = arg;
	for (s = TAILQ_FIRST(&servers); s != NULL; s = tmp) {
		tmp = TAILQ_NEXT(s, entry);
		evtimer_del(s->restart_timer);
		/* Admitted jobs finish first: the gate keeps the order. */
		server_enqueue(s, SERVER_JOB_SHUTDOWN, NULL, 0, NULL, NULL);
	}
	server_check_all_stopped();
}

static json_t *
server_string_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

static json_t *
server_since(const struct server *s)
{
	char buf[32];
	struct tm tm;

	gmtime_r(&s->since, &tm);
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

static json_t *server_container_row(const struct server *);

json_t *
server_load_result(const struct server *s)
{
	json_t *info = session_server_info_peek(s->session), *r;

	r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:I, s:I, s:b, s:O}",
	    "id", s->id, "name", s->name, "mode", server_mode_name(s->mode),
	    "transport", server_transport_name(s), "endpoint", s->endpoint,
	    "protocol_version",
	    server_string_or_null(session_protocol_version(s->session)),
	    "tools",
	    (json_int_t)json_array_size(session_tools_peek(s->session)),
	    "generation", (json_int_t)s->generation, "persistent",
	    s->is_persistent,
	    "server_info", info != NULL ? info : json_null());
	if (s->container != NULL) {
		json_object_set_new(r, "image", json_string(s->spec.image));
		json_object_set_new(r, "container", server_container_row(s));
	}
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

	if (s->session != NULL)
		pid = transport_stdio_pid(session_transport(s->session));
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:o,"
			 " s:I, s:I, s:b, s:I, s:o, s:o, s:o}",
	    "id", s->id, "name", s->name, "agent", s->agent, "mode",
	    server_mode_name(s->mode), "transport", server_transport_name(s),
	    "endpoint", s->endpoint, "image", server_string_or_null(s->spec.image),
	    "container", server_container_row(s), "state",
	    server_state_name(s->state), "protocol_version",
	    server_string_or_null(session_protocol_version(s->session)),
	    "tools",
	    (json_int_t)json_array_size(session_tools_peek(s->session)),
	    "generation", (json_int_t)s->generation, "persistent",
	    s->is_persistent,
	    "restarts", (json_int_t)s->restarts, "last_error",
	    server_string_or_null(s->last_error), "since", server_since(s),
	    "pid", pid > 0 ? json_integer(pid) : json_null());
}

void
server_tools_append(const struct server *s, json_t *into)
{
	json_t *tools = session_tools_peek(s->session), *tool, *copy;
	size_t i;
	char *handle;

	json_array_foreach(tools, i, tool) {
		const char *name = json_string_value(json_object_get(tool,
		    "name"));

		if (name == NULL || !json_is_object(tool))
			continue;
		copy = json_copy(tool);
		handle = names_handle_format(s->name, s->generation, name);
		json_object_set_new(copy, "server", json_string(s->name));
		json_object_set_new(copy, "handle", json_string(handle));
		free(handle);
		json_array_append_new(into, copy);
	}
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

	TAILQ_FOREACH(s, &servers, entry)
		if (server_in_scope(s, agent))
			json_array_append_new(rows, server_describe(s));
	return rows;
}

json_t *
server_list_tools(const char *agent)
{
	json_t *tools = json_array();
	struct server *s;

	TAILQ_FOREACH(s, &servers, entry)
		if (server_in_scope(s, agent))
			server_tools_append(s, tools);
	return tools;
}

static bool
server_has_tool(const struct server *s, const char *tool)
{
	json_t *tools = session_tools_peek(s->session), *t;
	size_t i;

	json_array_foreach(tools, i, t) {
		const char *name = json_string_value(json_object_get(t,
		    "name"));

		if (name != NULL && strcmp(name, tool) == 0)
			return true;
	}
	return false;
}

/* The server's result text, checked, goes to the client unchanged. */
static void
server_on_call_raw(void *arg, const char *result, size_t len)
{
	control_reply_raw(arg, result, len);
}

static void
server_on_call_reply(void *arg, const struct session_reply *r)
{
	struct request *req = arg;
	json_t *data;

	if (r->result != NULL) {
		control_reply(req, json_incref(r->result));
		return;
	}
	if (r->error != NULL) {
		data = json_pack("{s:O}", "upstream", r->error);
		control_fail(req, ERRORS_UPSTREAM, data,
		    "the server answered "
		    "with an error: %s",
		    r->message);
		return;
	}
	data = r->kind == ERRORS_OUTCOME_UNKNOWN ?
	    json_pack("{s:s}", "execution_outcome", "unknown") :
	    NULL;
	control_fail(req, r->kind, data, "%s", r->message);
}

void
server_call(struct server *s, uint64_t generation, const char *tool,
    json_t *arguments, int timeout_ms, struct request *req)
{
	json_t *params;

	if (generation != 0 && generation != s->generation) {
		control_fail(req, ERRORS_STALE_HANDLE,
		    json_pack("{s:I}", "current_generation",
			(json_int_t)s->generation),
		    "the handle belongs to generation %" PRIu64 " of %s, which "
		    "is now at generation %" PRIu64 "; list tools again",
		    generation, s->name, s->generation);
		return;
	}
	if (!session_is_ready(s->session)) {
		control_fail(req, ERRORS_UNAVAILABLE, NULL,
		    "server %s is %s; "
		    "try again when it is ready%s%s%s",
		    s->name, server_state_name(s->state),
		    s->last_error != NULL ? " (last error: " : "",
		    s->last_error != NULL ? s->last_error : "",
		    s->last_error != NULL ? ")" : "");
		return;
	}
	if (!server_has_tool(s, tool)) {
		control_fail(req, ERRORS_NOT_FOUND,
		    json_pack("{s:s}", "what", "tool"),
		    "server %s has no tool named %s", s->name, tool);
		return;
	}
	params = json_pack("{s:s, s:O}", "name", tool, "arguments", arguments);
	session_request_raw(s->session, "tools/call", params, timeout_ms,
	    server_on_call_reply, server_on_call_raw, req);
}

json_t *
server_logs(const struct server *s, size_t lines)
{
	return logring_tail(s->logs, lines);
}
