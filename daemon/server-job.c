/* SPDX-License-Identifier: ISC */
/* The per-server gate: load, reload, unload and shutdown jobs in order. */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "jsonwipe.h"
#include "log.h"
#include "names.h"
#include "server-int.h"

static void
server_job_free(struct server_job *job)
{
	free(job->failed_why);
	free(job->new_name);
	free(job->old_name);
	json_decref(job->row);
	jsonwipe_decref(job->secrets); /* literal env and header values */
	if (job->spec != NULL)
		spec_clear(job->spec);
	free(job->spec);
	free(job);
}

void
server_job_reply(struct server_job *job, json_t *result)
{
	if (job->reply != NULL)
		job->reply->ops->reply(job->reply, result);
	else
		json_decref(result);
	if (job->done != NULL)
		job->done(job->done_arg, NULL);
	job->reply = NULL;
	job->done = NULL;
}

void
server_job_error(struct server_job *job, enum errors_kind kind, json_t *data,
    const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = server_reply_vfail(job->reply, kind, 0, data, fmt, ap);
	va_end(ap);
	if (job->done != NULL)
		job->done(job->done_arg, text);
	job->reply = NULL;
	job->done = NULL;
	free(text);
}

void
server_job_end(struct server *s)
{
	struct server_job *job = TAILQ_FIRST(&s->jobs);

	TAILQ_REMOVE(&s->jobs, job, entry);
	server_job_free(job);
	s->running = NULL;
	server_restart_if_lost(s);
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
	const char **args = xcalloc(2 * server_count(NULL) + 4, sizeof *args);

	args[0] = docker;
	args[1] = "rm";
	args[2] = "-f";
	TAILQ_FOREACH(s, &server_list, entry) {
		if (s->container == NULL ||
		    docker_container_name(s->container) == NULL)
			continue;
		args[n++] = docker_container_name(s->container);
		/* A probe still being removed while its successor starts. */
		if (docker_container_old_name(s->container) != NULL)
			args[n++] = docker_container_old_name(s->container);
	}
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

	xasprintf(&text,
	    "container %s could not be removed: %s; mcpd retries every 10 s and at shutdown; unload again to retry now",
	    name, why != NULL ? why : "unknown error");
	server_set_error(s, text);
	server_set_state(s, SERVER_REMOVING);
	server_job_error(job, ERRORS_UNAVAILABLE,
	    json_pack("{s:s, s:s, s:s}", "server", s->name, "container", name,
		"error", why != NULL ? why : ""),
	    "%s", text);
	free(text);
	server_job_end(s);
}

static void
server_unload_done(void *arg)
{
	struct server *s = arg;
	struct server_job *job = TAILQ_FIRST(&s->jobs);
	json_t *result;
	const char *kept = s->container != NULL ?
	    docker_container_name(s->container) :
	    NULL;

	if (kept != NULL && !mcpd_is_stopping()) {
		server_unload_kept(s, job);
		return;
	}
	/* Its last lines are written: the server is restored at next start. */
	if (job->kind == SERVER_JOB_SHUTDOWN && s->is_persistent)
		server_logs_save(s);
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
	result = json_pack("{s:s, s:s, s:b, s:b, s:b}", "id", s->id, "name",
	    s->name, "stopped_live", job->was_live, "removed_saved",
	    job->was_saved, "container_removed", job->had_container);
	if (job->kind == SERVER_JOB_DISABLE)
		json_object_set_new(result, "disabled", json_true());
	server_job_reply(job, result);
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
		server_watch_tools_changed(s->agent);
	if (sess != NULL)
		session_close(sess, server_unload_done, s);
	else
		server_unload_done(s);
}

static void server_job_unload(struct server *s, struct server_job *job);

/* A shutdown's wait for the calls in flight is over. */
static void
server_job_drained(void *arg)
{
	struct server *s = arg;
	struct server_job *job = TAILQ_FIRST(&s->jobs);

	if (!s->is_dead && job != NULL && job->kind == SERVER_JOB_SHUTDOWN)
		server_job_unload(s, job);
	server_unref(s); /* held while the session had calls in flight */
}

/*
 * A change to s's saved row failed ("cannot VERB the saved row of NAME
 * HOW"; cause is taken): the job ends with nothing changed, and says so.
 * how is "" or a disable's " disabled" (and then the server keeps running).
 */
static void
server_job_row_failed(struct server *s, struct server_job *job,
    const char *verb, const char *how, char *cause)
{
	server_job_error(job, ERRORS_STORAGE,
	    json_pack("{s:s}", "server", s->name),
	    "cannot %s the saved row of %s%s: %s; nothing was changed%s", verb,
	    s->name, how, cause != NULL ? cause : "unknown error",
	    *how != '\0' ? " and it keeps running" : "");
	free(cause);
	server_job_end(s);
}

/* A disable marks the saved row first: nothing stops unless it is saved. */
static bool
server_job_mark_disabled(struct server *s, struct server_job *job)
{
	char *cause = NULL;

	if (!s->is_persistent) {
		server_job_error(job, ERRORS_CONFLICT,
		    json_pack("{s:s}", "server", s->name),
		    "%s has no saved row to keep (it was loaded with --no-persist): nothing was changed; mcpctl unload %s stops it",
		    s->name, s->name);
		server_job_end(s);
		return false;
	}
	if (enable_set_disabled(s->agent, s->id, true, &cause) < 0) {
		server_job_row_failed(s, job, "mark", " disabled", cause);
		return false;
	}
	return true;
}

static void
server_job_unload(struct server *s, struct server_job *job)
{
	char *cause = NULL;

	/* Shutdown lets calls in flight end first, within the grace. */
	if (job->kind == SERVER_JOB_SHUTDOWN && !job->has_drained &&
	    s->session != NULL) {
		job->has_drained = true;
		server_ref(s); /* the wait keeps a pointer across the loop */
		session_when_idle(s->session, server_job_drained, s);
		return;
	}

	if (job->kind == SERVER_JOB_UNLOAD && s->is_persistent) {
		/* The row goes first: a crash from here on does not restore it. */
		if (enable_remove(s->agent, s->id, &job->was_saved, &cause) <
		    0) {
			server_job_row_failed(s, job, "remove", "", cause);
			return;
		}
		s->is_persistent = false;
		server_logs_forget(s);
		server_kept_forget(s);
	}
	if (job->kind == SERVER_JOB_DISABLE &&
	    !server_job_mark_disabled(s, job))
		return;
	if (job->kind == SERVER_JOB_UNLOAD && s->auth != NULL) {
		bool removed;

		/* Its tokens and registration go with it (not at shutdown). */
		oauth_close(s->auth);
		if (oauth_forget_id(s->id, &removed, &cause) < 0) {
			log_server(LOG_WARNING, s->name,
			    "its authorization could not be removed from the secret store: %s",
			    cause != NULL ? cause : "unknown error");
			free(cause);
			cause = NULL;
		}
	}
	if (job->kind == SERVER_JOB_UNLOAD)
		server_pins_forget(s); /* a later load is a first sight */
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
	if (s->state != SERVER_REMOVING)
		return;
	server_set_state(s, SERVER_STOPPED);
	server_job_schedule(s);
}

/*
 * A gateway's servers are read back from the file on disk and compared
 * with what was asked; what is saved is said either way.
 */
static bool
server_job_gateway_saved(struct server *s, struct server_job *job,
    const char *failed)
{
	const json_t *want = json_object_get(json_object_get(job->row,
						 "params"),
	    "gateway");
	char *saved = NULL, *cause = NULL;
	int r = enable_gateway_saved(s->agent, s->id, want, &saved, &cause);

	if (r == 1 && failed == NULL) {
		free(saved);
		return true;
	}
	server_job_error(job, ERRORS_STORAGE,
	    json_pack("{s:s, s:s?, s:O}", "server", s->name, "saved", saved,
		"asked", want),
	    "the Docker MCP Gateway %s %s; saved now: %s%s", s->name,
	    failed != NULL ?
		failed :
		"was written but its servers do not read back as asked",
	    saved != NULL ? saved : cause,
	    s->session != NULL ? "; it keeps running with its old servers" :
				 "; nothing was started");
	free(saved);
	free(cause);
	return false;
}

/* A load's row is saved (and read back) before anything starts. */
static bool
server_job_save(struct server *s, struct server_job *job)
{
	char *cause = NULL, *failed;

	if (job->row == NULL)
		return true;
	if (enable_save(s->agent, job->row, job->secrets, &cause) == 0) {
		/* A first start that fails takes back only a row it made. */
		job->has_new_row = !s->is_persistent;
		s->is_persistent = true;
		if (s->mode == SERVER_GATEWAY &&
		    !server_job_gateway_saved(s, job, NULL))
			goto failed;
		return true;
	}
	if (s->mode == SERVER_GATEWAY) {
		/* Fails the job, saying what the file holds instead. */
		xasprintf(&failed, "cannot be saved: %s",
		    cause != NULL ? cause : "unknown error");
		(void)server_job_gateway_saved(s, job, failed);
		free(failed);
		free(cause);
		goto failed;
	}
	server_job_error(job, ERRORS_STORAGE,
	    json_pack("{s:s}", "server", s->name),
	    "cannot save %s: %s; nothing was saved%s", s->name,
	    cause != NULL ? cause : "unknown error",
	    s->session != NULL ? ", and it keeps running unsaved" :
				 " and nothing was started");
	free(cause);
failed:
	if (s->session == NULL && s->generation == 0 && !s->is_persistent)
		server_set_state(s, SERVER_STOPPED);
	else if (s->session == NULL && s->generation == 0)
		/* A gateway's row is there, but not as asked: to unload. */
		server_set_state(s, SERVER_FAILED);
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
	/* A gateway's servers may have changed: its command line did. */
	free(s->endpoint);
	s->endpoint = spec_endpoint(&s->spec);
}

/* A rename's answer, once its container (if any) has its new name too. */
static void
server_job_renamed(void *arg, int err, const char *why)
{
	struct server *s = arg;
	struct server_job *job = TAILQ_FIRST(&s->jobs);
	json_t *result;

	if (err < 0)
		log_server(LOG_WARNING, s->name,
		    "its container keeps the name %s until it starts again: docker rename failed: %s",
		    docker_container_name(s->container),
		    why != NULL ? why : "");
	result = json_pack("{s:s, s:s, s:s, s:b, s:s*}", "id", s->id, "name",
	    s->name, "old_name", job->old_name, "persistent", s->is_persistent,
	    "container",
	    s->container != NULL ? docker_container_name(s->container) : NULL);
	server_job_reply(job, result);
	server_job_end(s);
}

/*
 * The name changes in place: its row first (read back), then what agents
 * see (their tool names) and, for a container, docker rename; nothing
 * restarts.
 */
static void
server_job_rename(struct server *s, struct server_job *job)
{
	const json_t *row = enable_row_find(s->agent, job->new_name);
	struct server *other = server_find_name(s->agent, job->new_name);
	char *cause = NULL;
	int r;

	if ((other != NULL && other != s) ||
	    (row != NULL &&
		strcmp(json_string_value(json_object_get(row, "id")), s->id) !=
		    0)) {
		server_job_error(job, ERRORS_CONFLICT,
		    json_pack("{s:s, s:s}", "server", s->name, "name",
			job->new_name),
		    "the name %s is taken by another server; nothing was changed",
		    job->new_name);
		server_job_end(s);
		return;
	}
	if (s->is_persistent &&
	    enable_rename(s->agent, s->id, job->new_name, &cause) < 0) {
		server_job_row_failed(s, job, "rename", "", cause);
		return;
	}
	job->old_name = s->name;
	s->name = xstrdup(job->new_name);
	if (s->auth != NULL)
		oauth_rename(s->auth, s->name);
	log_server(LOG_INFO, s->name, "renamed from %s", job->old_name);
	server_logs_note(s, "renamed from %s", job->old_name);
	server_watch_tools_changed(s->agent);
	if (s->container == NULL)
		server_job_renamed(s, 0, NULL);
	else if ((r = docker_container_rebase(s->container, s->name,
		      server_job_renamed, s)) == -EBUSY)
		server_job_renamed(s, r,
		    "the container is being started, promoted or removed");
	else if (r < 0)
		server_job_renamed(s, 0, NULL); /* no container runs */
}

/* Runs the next job, or kills a removed server whose queue is empty. */
void
server_job_run(evutil_socket_t fd, short events, void *arg)
{
	struct server *s = arg;
	struct server_job *job;

	(void)fd, (void)events;
	if (s->running != NULL || s->is_dead)
		return;
	while (s->state == SERVER_STOPPED &&
	    (job = TAILQ_FIRST(&s->jobs)) != NULL) {
		TAILQ_REMOVE(&s->jobs, job, entry);
		/*
		 * An unload asked while only its container was left (a retried
		 * removal that has just ended): what it asked is done.
		 */
		if (job->kind == SERVER_JOB_UNLOAD)
			server_job_reply(job,
			    json_pack("{s:s, s:s, s:b, s:b, s:b}", "id", s->id,
				"name", s->name, "stopped_live", 0,
				"removed_saved", 0, "container_removed", 0));
		else
			server_job_error(job, ERRORS_NOT_FOUND, NULL,
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
	s->running = job;
	switch (job->kind) {
	case SERVER_JOB_LOAD:
		if (!server_job_save(s, job)) {
			server_job_end(s);
			return;
		}
		server_job_take_spec(s, job);
		if (session_is_ready(s->session) && !job->is_reconfigure) {
			/* The same target again: it is already running. */
			server_job_reply(job,
			    server_result_mark(server_load_result(s),
				"was_loaded"));
			server_job_end(s);
			return;
		}
		/* FALLTHROUGH */
	case SERVER_JOB_RELOAD:
	case SERVER_JOB_RESTART:
		server_job_start(s, job);
		break;
	case SERVER_JOB_UNLOAD:
	case SERVER_JOB_SHUTDOWN:
	case SERVER_JOB_DISABLE:
		server_job_unload(s, job);
		break;
	case SERVER_JOB_RENAME:
		server_job_rename(s, job);
		break;
	case SERVER_JOB_IDLE:
		server_job_idle(s, job);
		break;
	case SERVER_JOB_WAKE:
		/* Started meanwhile (a reload, set always): nothing to do. */
		if (session_is_ready(s->session)) {
			server_job_reply(job, json_null());
			server_job_end(s);
			return;
		}
		server_job_start(s, job);
		break;
	}
}

static struct server_job *
server_enqueue(struct server *s, enum server_job_kind kind,
    struct server_reply *rep, int timeout_ms)
{
	struct server_job *job = xcalloc(1, sizeof *job);

	job->kind = kind;
	job->reply = rep;
	job->timeout_ms = timeout_ms > 0 ? timeout_ms :
					   mcpd_opts.load_timeout_ms;
	TAILQ_INSERT_TAIL(&s->jobs, job, entry);
	server_job_schedule(s);
	return job;
}

void
server_load(struct server *s, struct server_reply *rep, int timeout_ms,
    json_t *row, json_t *secrets, struct server_spec *spec)
{
	struct server_job *job = server_enqueue(s, SERVER_JOB_LOAD, rep,
	    timeout_ms);

	job->row = row;
	job->secrets = secrets;
	job->spec = spec;
}

struct server_job *
server_job_restore(struct server *s, struct server_reply *rep, int timeout_ms,
    void (*done)(void *arg, const char *error), void *arg)
{
	struct server_job *job = server_enqueue(s, SERVER_JOB_LOAD, rep,
	    timeout_ms);

	s->is_persistent = true;
	job->done = done;
	job->done_arg = arg;
	return job;
}

void
server_restore(struct server *s, struct server_reply *rep, int timeout_ms,
    void (*done)(void *arg, const char *error), void *arg)
{
	/* Saved already: it is read back again before it serves. */
	server_job_restore(s, rep, timeout_ms, done, arg)->needs_recheck = true;
}

void
server_reload(struct server *s, struct server_reply *rep, int timeout_ms)
{
	s->failures = 0;
	s->backoff_ms = 0;
	server_set_error(s, NULL);
	server_enqueue(s, SERVER_JOB_RELOAD, rep, timeout_ms);
}

void
server_unload(struct server *s, struct server_reply *rep)
{
	server_enqueue(s, SERVER_JOB_UNLOAD, rep, 0);
}

void
server_disable(struct server *s, struct server_reply *rep)
{
	server_enqueue(s, SERVER_JOB_DISABLE, rep, 0);
}

void
server_rename(struct server *s, struct server_reply *rep, const char *name)
{
	server_enqueue(s, SERVER_JOB_RENAME, rep, 0)->new_name = xstrdup(name);
}

void
server_cancel_calls(const char *reason)
{
	struct server *s;

	TAILQ_FOREACH(s, &server_list, entry)
		if (s->session != NULL)
			session_cancel_all(s->session, reason);
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
		server_enqueue(s, SERVER_JOB_SHUTDOWN, NULL, 0);
	}
	/* With no server at all, done still comes from the loop. */
	defer_call(server_check_stopped_later, NULL);
}
