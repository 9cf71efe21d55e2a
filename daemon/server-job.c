/* SPDX-License-Identifier: ISC */
/* The per-server gate: load, reload, unload and shutdown jobs in order. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"
#include "names.h"
#include "server-int.h"

static void
server_job_free(struct server_job *job)
{
	free(job->failed_why);
	json_decref(job->row);
	json_decref(job->secrets);
	if (job->spec != NULL)
		spec_clear(job->spec);
	free(job->spec);
	free(job);
}

void
server_job_end(struct server *s)
{
	struct server_job *job = TAILQ_FIRST(&s->jobs);

	TAILQ_REMOVE(&s->jobs, job, entry);
	server_job_free(job);
	s->is_job_running = false;
	server_job_schedule(s);
}

void
server_job_schedule(struct server *s)
{
	if (!s->is_dead)
		event_active(s->kick, EV_TIMEOUT, 0);
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
	TAILQ_FOREACH(s, &server_list, entry)
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
	    docker_container_name(s->container) :
	    NULL;

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
			s->name, "stopped_live", job->was_live, "removed_saved",
			job->was_saved, "container_removed",
			job->had_container));
	job->req = NULL;
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

	if (job->kind == SERVER_JOB_UNLOAD && s->is_persistent) {
		/* The row goes first: a crash from here on does not restore it. */
		if (store_remove(mcpd_store, s->agent, s->id, &job->was_saved,
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
		server_forget_saved_secrets(s->id);
	}
	evtimer_del(s->restart_timer);
	evtimer_del(s->healthy_timer);
	server_set_state(s, SERVER_STOPPING);
	job->was_live = s->session != NULL;
	job->had_container = s->container != NULL &&
	    docker_container_name(s->container) != NULL;
	if (job->had_container)
		docker_container_remove(s->container, server_unload_close, s);
	else
		server_unload_close(s, 0, NULL);
}

/* A retried removal succeeded: an unloaded server can go now. */
void
server_container_gone(void *arg)
{
	struct server *s = arg;

	log_server(LOG_INFO, s->name, "its container was removed at last");
	if (!s->is_unloading)
		return;
	server_set_state(s, SERVER_STOPPED);
	server_job_schedule(s);
}

/* True when the saved row and its secrets are already what job would save. */
static bool
server_job_is_saved(const struct server *s, const struct server_job *job)
{
	const json_t *row = store_row_peek(mcpd_store, s->agent, s->id), *v;
	struct secrets *vault;
	const char *k, *have;

	if (row == NULL ||
	    !json_equal(json_object_get(row, "params"),
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

void
server_forget_saved_secrets(const char *id)
{
	struct secrets *vault = mcpd_secrets_if_any();
	json_t *names, *v;
	char *prefix;
	size_t i;

	if (vault == NULL || asprintf(&prefix, "mcpd.%s.", id) < 0)
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
	control_fail(job->req, ERRORS_STORAGE,
	    json_pack("{s:s}", "server", s->name),
	    "cannot save %s: %s; nothing was saved%s", s->name,
	    cause != NULL ? cause : "unknown error",
	    s->session != NULL ? ", and it keeps running unsaved" :
				 " and nothing was started");
	job->req = NULL;
	free(cause);
	if (s->session == NULL && s->generation == 0 && !s->is_persistent)
		server_set_state(s, SERVER_STOPPED);
	return false;
}

/*
 * A load of a listed server brings what it asks for now: that becomes the
 * server's spec, and whether it differs from what runs (resolved values
 * compared, so a changed --env or secret counts) says if it starts again.
 */
static void
server_job_take_spec(struct server *s, struct server_job *job)
{
	struct server_spec resolved;
	unsigned char digest[SPEC_DIGEST_LEN];
	char *cause = NULL;

	if (job->spec == NULL)
		return;
	if (spec_resolve(job->spec, &resolved, &cause) == 0) {
		spec_digest(&resolved, digest);
		spec_clear(&resolved);
		job->is_reconfigure = s->generation > 0 &&
		    memcmp(digest, s->digest, sizeof digest) != 0;
	} else {
		/* Checked at the request; a value gone since fails the start. */
		job->is_reconfigure = s->generation > 0;
		free(cause);
	}
	spec_clear(&s->spec);
	s->spec = *job->spec;
	memset(job->spec, 0, sizeof *job->spec);
}

/* Runs the next job, or kills a removed server whose queue is empty. */
void
server_job_run(evutil_socket_t fd, short events, void *arg)
{
	struct server *s = arg;
	struct server_job *job;

	(void)fd, (void)events;
	if (s->is_job_running || s->is_dead)
		return;
	while (s->state == SERVER_STOPPED &&
	    (job = TAILQ_FIRST(&s->jobs)) != NULL) {
		TAILQ_REMOVE(&s->jobs, job, entry);
		if (job->req != NULL)
			control_fail(job->req, ERRORS_NOT_FOUND, NULL,
			    "server %s was unloaded meanwhile", s->name);
		server_job_free(job);
	}
	if (s->state == SERVER_STOPPED) {
		server_kill(s);
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
		server_job_take_spec(s, job);
		if (session_is_ready(s->session) && !job->is_reconfigure) {
			/* The same target again: it is already running. */
			control_reply(job->req,
			    server_result_mark(server_load_result(s),
				"was_loaded"));
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

static void
server_enqueue(struct server *s, enum server_job_kind kind, struct request *req,
    int timeout_ms, json_t *row, json_t *secrets, struct server_spec *spec)
{
	struct server_job *job = calloc(1, sizeof *job);

	if (job == NULL)
		fatal("calloc");
	job->kind = kind;
	job->req = req;
	job->row = row;
	job->secrets = secrets;
	job->spec = spec;
	job->timeout_ms = timeout_ms > 0 ? timeout_ms :
					   mcpd_opts.load_timeout_ms;
	TAILQ_INSERT_TAIL(&s->jobs, job, entry);
	server_job_schedule(s);
}

void
server_load(struct server *s, struct request *req, int timeout_ms, json_t *row,
    json_t *secrets, struct server_spec *spec)
{
	/* A restore: saved already, read back before it serves. */
	if (control_is_internal(req) && s->generation == 0) {
		s->is_persistent = true;
		s->needs_recheck = true;
	}
	server_enqueue(s, SERVER_JOB_LOAD, req, timeout_ms, row, secrets, spec);
}

void
server_reload(struct server *s, struct request *req, int timeout_ms)
{
	s->failures = 0;
	s->backoff_ms = 0;
	server_set_error(s, NULL);
	server_enqueue(s, SERVER_JOB_RELOAD, req, timeout_ms, NULL, NULL, NULL);
}

void
server_unload(struct server *s, struct request *req)
{
	server_enqueue(s, SERVER_JOB_UNLOAD, req, 0, NULL, NULL, NULL);
}

static void
server_check_stopped_later(void *arg)
{
	(void)arg;
	server_check_all_stopped();
}

void
server_stop_all(void (*done)(void *), void *arg)
{
	struct server *s, *tmp;

	server_all_stopped = done;
	server_all_stopped_arg = arg;
	for (s = TAILQ_FIRST(&server_list); s != NULL; s = tmp) {
		tmp = TAILQ_NEXT(s, entry);
		evtimer_del(s->restart_timer);
		/* Admitted jobs finish first: the gate keeps the order. */
		server_enqueue(s, SERVER_JOB_SHUTDOWN, NULL, 0, NULL, NULL,
		    NULL);
	}
	/* With no server at all, done still comes from the loop. */
	defer_call(server_check_stopped_later, NULL);
}
