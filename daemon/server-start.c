/* SPDX-License-Identifier: ISC */
/* Connections of a server: start, handshake outcome, restart policy. */
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

static const struct session_cbs server_session_cbs;
static void server_progress(void *arg, const char *stage, const char *message);
static void server_start_failed(struct server *s, const char *why);

/*
 * The connection an upgrade carried over: a process's pipes, a
 * container's (adopted by its name), a remote's session on a new
 * connection. NULL (and *cause) when it cannot be taken.
 */
static struct transport *
server_transport_carried(struct server *s, struct server_spec *run,
    const struct probe_target *target, char **cause)
{
	json_t *carried = s->carried;
	struct transport *t = NULL;

	s->carried = NULL;
	if (json_object_get(carried, "stdio") != NULL)
		t = transport_stdio_adopt(json_object_get(carried, "stdio"));
	else if (json_object_get(carried, "container") != NULL)
		t = probe_adopt(target, s->container,
		    json_object_get(carried, "container"), cause);
	else if (json_object_get(carried, "http") != NULL) {
		run->remote.auth = s->auth;
		t = transport_http_adopt(&run->remote,
		    json_object_get(carried, "http"), NULL, NULL, cause);
		run->remote.auth = NULL;
	}
	if (t != NULL) {
		s->next_session = json_incref(json_object_get(carried,
		    "session"));
		s->is_adopted = true;
	} else if (*cause == NULL)
		*cause = xstrdup("nothing to adopt");
	json_decref(carried);
	return t;
}

/* The transport of a start, by the server's mode (child: its process's). */
static struct transport *
server_transport_new(struct server *s, struct server_spec *run,
    const struct probe_target *target, struct child_spec *child)
{
	struct transport *t;

	child->argv = run->argv;
	child->cwd = run->cwd;
	if (s->mode == SERVER_CONTAINER)
		return probe_new(target, s->container, NULL, NULL);
	if (s->mode == SERVER_REMOTE) {
		run->remote.auth = s->auth;
		t = transport_http_new(&run->remote, NULL, NULL);
		run->remote.auth = NULL;
		return t;
	}
	if (s->mode == SERVER_GATEWAY)
		return transport_dgw_new(run, NULL, NULL);
	child->env = child_env_build(run->env);
	return transport_stdio_new(child, NULL, NULL);
}

/*
 * The state of s as its new connection starts (is_handshake: its handshake
 * is sent): a start whose calls wait keeps its own, a replacement of
 * a connection that died resumes, any other starts, then connects.
 */
static enum server_state
server_start_state(const struct server *s, bool is_handshake)
{
	if (s->state == SERVER_WAKING)
		return SERVER_WAKING;
	if (s->state == SERVER_RECOVERING || s->state == SERVER_RESUMING)
		return SERVER_RESUMING;
	return is_handshake ? SERVER_CONNECTING : SERVER_STARTING;
}

/* Starts a connection in s->next; the callbacks say how it went. */
static int
server_connect(struct server *s, int timeout_ms, char **cause)
{
	struct server_spec run;
	struct probe_target target = { &run, s->agent, s->name };
	struct child_spec child = { 0 };
	struct transport *t;
	int r;

	/* Variables are resolved at each start; the values live only now. */
	if ((r = spec_resolve(&s->spec, &run, cause)) < 0)
		return r;
	spec_digest(&run, s->next_digest);
	if (s->mode == SERVER_REMOTE) {
		struct server_job *job = TAILQ_FIRST(&s->jobs);

		/* Only a client that waits can show the user a login URL. */
		oauth_configure(s->auth, run.remote.url, run.remote.allow_local,
		    run.remote.oauth);
		oauth_set_prompt(s->auth, job != NULL && job->reply != NULL);
	}
	t = s->carried != NULL ?
	    server_transport_carried(s, &run, &target, cause) :
	    server_transport_new(s, &run, &target, &child);
	if (t == NULL) {
		spec_clear(&run);
		return -EIO;
	}
	s->next = session_new(t, &server_session_cbs, s, timeout_ms);
	if (s->session == NULL)
		server_set_state(s, server_start_state(s, false));
	if (s->next_session != NULL) {
		/* Adopted: the handshake of before stands. */
		session_adopt(s->next, s->next_session);
		json_decref(s->next_session);
		s->next_session = NULL;
		r = 0;
	} else
		r = session_start(s->next, cause);
	child_strv_wipe_free((char **)(uintptr_t)child.env);
	spec_clear(&run);
	if (r < 0) {
		session_free(s->next);
		s->next = NULL;
		return r;
	}
	if (s->session == NULL)
		server_set_state(s, server_start_state(s, true));
	server_progress(s, "connecting", "handshake started");
	return 0;
}

/* A stage of the running job, for a client that asked to follow it. */
static void
server_progress(void *arg, const char *stage, const char *message)
{
	struct server *s = arg;
	struct server_job *job = s->running;

	if (job != NULL && job->reply != NULL)
		job->reply->ops->progress(job->reply, s->name, stage, message);
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

void
server_healthy(evutil_socket_t fd, short events, void *arg)
{
	struct server *s = arg;

	(void)fd, (void)events;
	s->backoff_ms = 0;
	s->failures = 0;
}

void
server_restart_due(evutil_socket_t fd, short events, void *arg)
{
	struct server *s = arg;
	struct server_job *job;

	(void)fd, (void)events;
	if (mcpd_is_stopping())
		return;
	job = xcalloc(1, sizeof *job);
	job->kind = SERVER_JOB_RESTART;
	job->timeout_ms = mcpd_opts.load_timeout_ms;
	TAILQ_INSERT_TAIL(&s->jobs, job, entry);
	server_job_schedule(s);
}

static void
server_schedule_restart(struct server *s)
{
	struct timeval tv;

	if (mcpd_is_stopping())
		return;
	if (s->failures >= SERVER_MAX_FAILURES) {
		server_set_state(s, SERVER_FAILED);
		server_logs_note(s,
		    "gave up after %u failed restarts; mcpctl reload %s tries again",
		    s->failures, s->name);
		log_server(LOG_WARNING, s->name,
		    "gave up after %u failed restarts; reload it to try again",
		    s->failures);
		return;
	}
	s->backoff_ms = s->backoff_ms == 0 ? SERVER_BACKOFF_FIRST_MS :
					     s->backoff_ms * 2;
	if (s->backoff_ms > SERVER_BACKOFF_MAX_MS)
		s->backoff_ms = SERVER_BACKOFF_MAX_MS;
	/* Its kept lists go on standing for it while it waits. */
	server_set_state(s,
	    s->state == SERVER_RECOVERING || s->state == SERVER_RESUMING ?
		SERVER_RECOVERING :
		SERVER_RESTARTING);
	server_logs_note(s, "restarting in %d ms", s->backoff_ms);
	tv.tv_sec = s->backoff_ms / 1000;
	tv.tv_usec = (s->backoff_ms % 1000) * 1000;
	evtimer_add(s->restart_timer, &tv);
}

/* The new connection is ready: it replaces the old one. */
static void
server_promote(struct server *s)
{
	size_t total, ready;
	struct timeval healthy = { SERVER_HEALTHY_MS / 1000, 0 };
	struct session *old = s->session;
	bool was_waking = s->state == SERVER_WAKING;

	s->session = s->next;
	s->next = NULL;
	memcpy(s->digest, s->next_digest, sizeof s->digest);
	if (!s->is_adopted)
		s->generation = generation_after(s->generation);
	s->is_adopted = false;
	server_set_state(s, SERVER_READY);
	if (s->auth != NULL)
		oauth_set_prompt(s->auth,
		    true); /* a caller waits for each call */
	evtimer_add(s->healthy_timer, &healthy);
	server_retire_session(old);
	server_pins_observe(s); /* a first sight pins, before any list */
	if (!server_idle_promoted(s, was_waking))
		server_watch_tools_changed(s->agent);
	/* A new connection knows no subscription: each is made again. */
	server_watch_subs_renew(s->agent, s->name);
	total = server_count(&ready);
	notify_status("%zu of %zu servers ready", ready, total);
}

/* A restored server's row must still be saved before its tools are callable. */
static bool
server_recheck(struct server *s)
{
	char *cause = NULL, *why;
	int r = enable_recheck(s->agent, s->id, &cause);

	if (r == 1)
		return true;
	if (r == 0)
		why = xstrdup(
		    "its saved row is gone (removed or changed since mcpd started); it is not restored");
	else
		xasprintf(&why, "the store cannot be read back: %s",
		    cause != NULL ? cause : "unknown error");
	s->is_persistent = r < 0;
	server_set_error(s, why);
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
	if (job->needs_recheck && !server_recheck(s)) {
		/* A copy: the failure replaces last_error. */
		char *why = xstrdup(s->last_error);

		session_free(s->next);
		s->next = NULL;
		server_start_failed(s, why);
		free(why);
		return;
	}
	if (job->kind == SERVER_JOB_LOAD && job->is_reconfigure)
		server_pins_retake(s);
	server_promote(s);
	server_logs_note(s,
	    "connected: generation %" PRIu64 ", protocol %s, %zu tools",
	    s->generation, session_protocol_version(sess),
	    json_array_size(session_tools_peek(sess)));
	log_server(LOG_INFO, s->name,
	    "connected: generation %" PRIu64 ", protocol %s, %zu tools",
	    s->generation, session_protocol_version(sess),
	    json_array_size(session_tools_peek(sess)));
	server_job_reply(job,
	    job->is_reconfigure ?
		server_result_mark(server_load_result(s), "reconfigured") :
		server_load_result(s));
	server_job_end(s);
}

/* Fails the running job's request with why and the stderr tail. */
static void
server_job_fail(struct server *s, struct server_job *job, const char *fmt,
    const char *why)
{
	char *text;

	if (job->reply == NULL && job->done == NULL)
		return;
	xasprintf(&text, fmt, s->name, why);
	server_job_error(job,
	    job->is_denied ? ERRORS_DENIED :
			     docker_container_kind(s->container),
	    server_error_data(s), "%s", text);
	free(text);
}

/*
 * A first load that never became ready saves nothing: the row it made is
 * taken back. A row that was there before (a restore, a load of a saved
 * server) stays, and the answer says so; so does one that waits for the
 * user's login (nothing is broken: mcpctl auth login starts it).
 */
static void
server_job_fail_first(struct server *s, struct server_job *job, const char *why)
{
	bool is_taken_back = job->has_new_row && !oauth_needs_user(s->auth);
	char *cause = NULL, *both = NULL;

	if (is_taken_back &&
	    enable_remove(s->agent, s->id, NULL, &cause) == 0) {
		s->is_persistent = false;
		server_job_fail(s, job, "cannot load %s: %s; nothing was saved",
		    why);
		return;
	}
	if (is_taken_back) {
		xasprintf(&both,
		    "%s; its saved row could not be removed (%s): mcpctl unload %s removes it",
		    why, cause != NULL ? cause : "unknown error", s->name);
		log_server(LOG_WARNING, s->name,
		    "the saved row of a failed first load could not be removed: %s",
		    cause != NULL ? cause : "unknown error");
	}
	if (both != NULL)
		server_job_fail(s, job, "cannot load %s: %s", both);
	else
		server_job_fail(s, job,
		    s->is_persistent ?
			"cannot load %s: %s; its row stays saved and mcpd restores it at its next start (mcpctl reload to try now, mcpctl unload to remove it)" :
			"cannot load %s: %s",
		    why);
	free(both);
	free(cause);
}

/* Starting a connection failed (its container is gone or kept). */
static void
server_start_failed_now(struct server *s, const char *why)
{
	struct server_job *job = TAILQ_FIRST(&s->jobs);
	bool has_container = s->container != NULL &&
	    docker_container_name(s->container) != NULL;
	bool needs_login = oauth_needs_user(s->auth);
	char *hint = needs_login ? oauth_hint(s->auth) : NULL, *both = NULL;

	/* Only the user can help: say how, and never retry in a loop. */
	if (hint != NULL && strstr(why, hint) == NULL) {
		xasprintf(&both, "%s (%s)", why, hint);
		why = both;
	}

	server_progress(s, "failed", why);
	server_set_error(s, why);
	log_server(LOG_WARNING, s->name, "start failed: %s", why);
	if (s->session != NULL) {
		server_job_fail(s, job,
		    job->is_reconfigure ?
			"cannot start %s with its new settings: %s; the previous connection keeps serving" :
			"reload of %s failed: %s; the previous connection keeps serving",
		    why);
	} else if (job->kind == SERVER_JOB_LOAD && s->generation == 0) {
		/* A first load that failed leaves nothing behind... */
		server_job_fail_first(s, job, why);
		/* ... but a saved row, or a container that would not go, stays listed. */
		server_set_state(s,
		    s->is_persistent  ? SERVER_FAILED :
			has_container ? SERVER_REMOVING :
					SERVER_STOPPED);
	} else {
		server_job_fail(s, job, "cannot start %s: %s", why);
		if (job->kind == SERVER_JOB_RESTART && !needs_login) {
			s->failures++;
			server_schedule_restart(s);
		} else if (job->kind == SERVER_JOB_WAKE)
			server_set_state(s,
			    SERVER_IDLE); /* the next call tries */
		else
			server_set_state(s, SERVER_FAILED);
	}
	/* After the answer: its stderr tail is the server's own lines. */
	server_logs_note(s, "start failed: %s", why);
	free(hint);
	free(both);
	server_job_end(s);
}

void
server_oauth_authorized(void *arg)
{
	struct server *s = arg;

	/* A login came for a server that had failed for want of one. */
	if (s->is_dead || s->state != SERVER_FAILED || s->running != NULL ||
	    !TAILQ_EMPTY(&s->jobs) || mcpd_is_stopping())
		return;
	server_logs_note(s, "authorized: connecting again");
	server_reload(s, NULL, mcpd_opts.load_timeout_ms);
}

static void
server_failed_cleared(void *arg, int err, const char *why)
{
	struct server *s = arg;
	struct server_job *job = TAILQ_FIRST(&s->jobs);
	char *text = job->failed_why, *both = NULL;

	job->failed_why = NULL;
	if (err < 0)
		xasprintf(&both,
		    "%s; its container %s could not be removed (%s): mcpd retries every 10 s, and unload tries again at once",
		    text, docker_container_name(s->container), why);
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
	TAILQ_FIRST(&s->jobs)->failed_why = xstrdup(why);
	docker_container_remove(s->container, server_failed_cleared, s);
}

static void
server_on_failed(void *arg, struct session *sess, const char *why)
{
	struct server *s = arg;

	if (sess == s->next) {
		/* A policy refusal (a redirect, say) stays a refusal. */
		TAILQ_FIRST(&s->jobs)->is_denied = session_is_denied(sess);
		session_free(s->next);
		s->next = NULL;
		server_start_failed(s, why);
		return;
	}
	if (sess != s->session)
		return;
	/* The serving connection died: its calls already failed. */
	session_free(s->session);
	s->session = NULL;
	/* Restarting, its kept lists stand for it: its agents hear nothing. */
	if (s->kept != NULL && s->running == NULL && !mcpd_is_stopping())
		server_set_state(s, SERVER_RECOVERING);
	else
		server_watch_tools_changed(s->agent);
	evtimer_del(s->healthy_timer);
	if (s->running != NULL && s->container != NULL &&
	    s->running->kind != SERVER_JOB_RENAME)
		return; /* the job removed its container on purpose */
	server_set_error(s, why);
	server_logs_note(s, "connection lost: %s", why);
	log_server(LOG_WARNING, s->name, "connection lost: %s", why);
	/* A running job (a reload, an unload removing its container) takes over. */
	if (s->running != NULL)
		return;
	server_schedule_restart(s);
}

void
server_restart_if_lost(struct server *s)
{
	if (!s->is_dead && s->state == SERVER_READY && s->session == NULL &&
	    s->running == NULL)
		server_schedule_restart(s);
}

static void
server_on_tools_changed(void *arg, struct session *sess)
{
	struct server *s = arg;

	log_server(LOG_INFO, s->name, "tools changed: %zu tools",
	    json_array_size(session_tools_peek(sess)));
	if (sess == s->session) {
		server_pins_observe(s);
		server_watch_tools_changed(s->agent);
		server_kept_take(s);
	}
}

static void
server_on_stderr(void *arg, const char *line, size_t len)
{
	struct server *s = arg;

	server_logs_push(s, line, len);
	log_server(LOG_DEBUG, s->name, "stderr: %.*s", (int)len, line);
}

static void
server_on_notification(void *arg, const char *method, const json_t *params)
{
	struct server *s = arg;

	if (strcmp(method, "notifications/resources/updated") == 0)
		server_watch_subs_updated(s->agent, s->name, params);
	else if (strcmp(method, "notifications/prompts/list_changed") == 0 ||
	    strcmp(method, "notifications/resources/list_changed") == 0) {
		server_watch_tools_changed(
		    s->agent); /* the sessions list again */
		server_kept_take(s);
	} else
		server_call_notify(s, method, params);
}

static void
server_on_request(void *arg, struct session *sess, const char *method,
    const json_t *id, const json_t *params)
{
	server_ask(arg, sess, method, id, params);
}

static const struct session_cbs server_session_cbs = {
	.ready = server_on_ready,
	.request = server_on_request,
	.notification = server_on_notification,
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
		xasprintf(&text,
		    "the previous container %s could not be removed: %s",
		    docker_container_name(s->container), why);
		server_start_failed_now(s, text);
		free(text);
		return;
	}
	server_retire_session(s->session);
	s->session = NULL;
	/* The new container's lists are compared with the kept ones. */
	if (s->kept == NULL)
		server_watch_tools_changed(s->agent);
	else if (s->state != SERVER_WAKING)
		server_set_state(s, SERVER_RESUMING);
	server_job_connect(s, TAILQ_FIRST(&s->jobs));
}

/*
 * One container per server (its name is fixed): a reload or restart
 * removes the old container before the new one starts.
 */
void
server_job_start(struct server *s, struct server_job *job)
{
	char *cause = NULL;

	if (job->kind == SERVER_JOB_RESTART)
		s->restarts++;
	evtimer_del(s->restart_timer); /* this start is the one it waited for */
	/* Started again, it is no longer only a container to remove. */
	if (s->state == SERVER_REMOVING)
		server_set_state(s, SERVER_FAILED);
	/*
	 * Restored idle, it has had no connection (an idle stop needs one,
	 * which gives it a generation): its first start reads the row back.
	 */
	if (s->state == SERVER_IDLE || s->state == SERVER_WAKING)
		job->needs_recheck |= s->generation == 0;
	server_progress(s, "starting", s->endpoint);
	/* An adopted container is the one that runs: it is not removed. */
	if (s->mode != SERVER_CONTAINER || s->carried != NULL) {
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
