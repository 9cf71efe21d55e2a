/* SPDX-License-Identifier: ISC */
/* On demand: calls that wait for a server's start, and its idle stop. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "isotime.h"
#include "log.h"
#include "server-int.h"

#define SERVER_IDLE_DEFAULT_MS (10 * 60 * 1000)

enum server_waiter_kind {
	SERVER_WAIT_CALL,
	SERVER_WAIT_TEXT,
	SERVER_WAIT_FORWARD,
};

/* A call (or a forwarded request) that waits for its server's start. */
struct server_waiter {
	struct server *server;
	enum server_waiter_kind kind;
	struct server_reply *reply; /* a call's */
	char *tool;
	json_t *arguments;
	char *text; /* ... its arguments as the client's text */
	size_t len;
	uint64_t generation;
	json_t *mcp_params;
	bool has_opts;
	struct server_call_opts opts; /* its json and text owned here */
	char *method;		      /* a forwarded request's */
	json_t *params;
	session_reply_fn *cb;
	void *arg;
	int timeout_ms;
	uint64_t since_ms;
	struct event *deadline;
	TAILQ_ENTRY(server_waiter) entry;
};

static void server_idle_due(evutil_socket_t, short, void *);

void
server_idle_init(struct server *s)
{
	TAILQ_INIT(&s->waiters);
	if ((s->idle_timer = evtimer_new(mcpd_base, server_idle_due, s)) ==
	    NULL)
		fatalx("out of memory making server %s", s->name);
}

void
server_idle_release(struct server *s)
{
	event_free(s->idle_timer);
	json_decref(s->kept);
}

bool
server_is_on_demand(const struct server *s)
{
	return s->is_on_demand;
}

int
server_idle_stop_ms(const struct server *s)
{
	return s->idle_stop_ms;
}

size_t
server_count_idle(void)
{
	struct server *s;
	size_t n = 0;

	/* As listed: a server waking for a call is idle until it connects. */
	TAILQ_FOREACH(s, &server_list, entry)
		n += strcmp(server_state_shown(s), "idle") == 0;
	return n;
}

bool
server_idle_is_listed(const struct server *s)
{
	return s->kept != NULL && server_is_standing_in(s);
}

/* A call now goes to the start of s instead of its connection. */
static bool
server_idle_holds(const struct server *s)
{
	/* Stopping, mcpd starts nothing: the call fails as it would. */
	return server_is_standing_in(s) && !mcpd_is_stopping();
}

/* Something keeps s in use: it does not stop now. */
static bool
server_idle_is_busy(const struct server *s)
{
	/*
	 * An open stream (a GET stream, a 2026-07-28 listen) of a session
	 * that sees it waits for what the server may say: a use, as a
	 * subscription is.
	 */
	return !TAILQ_EMPTY(&s->calls) || !TAILQ_EMPTY(&s->waiters) ||
	    session_is_busy(s->session) ||
	    server_watch_is_used(s->agent, s->name);
}

/* A job of s's gate that no request waits for. */
static struct server_job *
server_idle_enqueue(struct server *s, enum server_job_kind kind,
    void (*done)(void *, const char *), void *arg)
{
	struct server_job *job = xcalloc(1, sizeof *job);

	job->kind = kind;
	job->timeout_ms = mcpd_opts.load_timeout_ms;
	job->done = done;
	job->done_arg = arg;
	TAILQ_INSERT_TAIL(&s->jobs, job, entry);
	server_job_schedule(s);
	return job;
}

static void
server_idle_arm(struct server *s)
{
	struct timeval tv;

	if (!s->is_on_demand || s->idle_stop_ms <= 0 ||
	    s->state != SERVER_READY || evtimer_pending(s->idle_timer, NULL))
		return;
	tv.tv_sec = s->idle_stop_ms / 1000;
	tv.tv_usec = (s->idle_stop_ms % 1000) * 1000;
	evtimer_add(s->idle_timer, &tv);
}

static void
server_idle_due(evutil_socket_t fd, short events, void *arg)
{
	struct server *s = arg;
	uint64_t now = mcpd_now_ms(), due;
	struct timeval tv;

	(void)fd, (void)events;
	if (s->is_dead || !s->is_on_demand || s->idle_stop_ms <= 0 ||
	    s->state != SERVER_READY || mcpd_is_stopping())
		return;
	due = s->last_used_ms + (uint64_t)s->idle_stop_ms;
	if (server_idle_is_busy(s)) {
		/* In use: its idle time starts again, and its log says why. */
		s->last_used_ms = now;
		server_logs_note(s,
		    "not stopped after %d ms: in use (a call or request in flight, a resource subscription, or an open stream of a session that sees it)",
		    s->idle_stop_ms);
	} else if (now >= due) {
		server_idle_enqueue(s, SERVER_JOB_IDLE, NULL, NULL);
		return;
	} else {
		tv.tv_sec = (due - now) / 1000;
		tv.tv_usec = ((due - now) % 1000) * 1000;
		evtimer_add(s->idle_timer, &tv);
		return;
	}
	server_idle_arm(s);
}

void
server_idle_used(struct server *s)
{
	s->last_used_ms = mcpd_now_ms();
	server_idle_arm(s);
}

/* A start for the calls that wait (one, however many wait). */
static void
server_idle_wake(struct server *s)
{
	if (s->state != SERVER_IDLE || mcpd_is_stopping())
		return;
	server_set_state(s, SERVER_WAKING);
	server_logs_note(s, "a call needs it: starting");
	server_idle_enqueue(s, SERVER_JOB_WAKE, NULL, NULL);
}

void
server_idle_configure(struct server *s, bool is_on_demand, int idle_stop_ms)
{
	s->is_on_demand = is_on_demand;
	if (idle_stop_ms < 0)
		idle_stop_ms = is_on_demand ? SERVER_IDLE_DEFAULT_MS : 0;
	s->idle_stop_ms = idle_stop_ms;
	evtimer_del(s->idle_timer);
	if (!is_on_demand) {
		/* Always on now: an idle server starts. */
		if (s->state == SERVER_IDLE) {
			server_set_state(s, SERVER_WAKING);
			server_idle_enqueue(s, SERVER_JOB_WAKE, NULL, NULL);
		}
		return;
	}
	if (s->state == SERVER_READY && s->kept == NULL)
		server_kept_take(s);
	server_idle_used(s);
}

bool
server_idle_restore(struct server *s, void (*done)(void *, const char *),
    void *arg)
{
	char *cause = NULL;

	if (!s->is_on_demand)
		return false;
	if (server_kept_restore(s, &cause) < 0) {
		log_server(LOG_INFO, s->name,
		    "no kept lists (%s): it starts to take them", cause);
		free(cause);
		return false;
	}
	/* Saved already: its first start reads the row again (job start). */
	s->is_persistent = true;
	server_set_state(s, SERVER_IDLE);
	server_logs_note(s, "restored idle with its kept lists");
	server_idle_enqueue(s, SERVER_JOB_IDLE, done, arg);
	return true;
}

bool
server_idle_promoted(struct server *s, bool was_waking)
{
	/*
	 * With lists kept (a wake, a restart, a reload), only a change of
	 * them is told: the lists it brings are compared with them first.
	 */
	bool tells = s->kept != NULL;

	s->stops_when_kept = s->is_on_demand && !was_waking;
	s->tells_when_kept = tells;
	s->last_used_ms = mcpd_now_ms();
	server_kept_take(s);
	server_idle_arm(s);
	return tells;
}

void
server_idle_lists_kept(struct server *s, bool changed)
{
	bool tells = s->tells_when_kept, stops = s->stops_when_kept;

	s->tells_when_kept = s->stops_when_kept = false;
	/* Only then: a start that found what was kept says nothing. */
	if (tells && changed) {
		server_logs_note(s, "its lists changed while it was idle");
		server_watch_tools_changed(s->agent);
	}
	if (stops && s->is_on_demand && !server_idle_is_busy(s))
		server_idle_enqueue(s, SERVER_JOB_IDLE, NULL, NULL)
		    ->is_at_once = true;
}

/* ---- calls that wait ---- */

static struct server_waiter *server_waiter_new(struct server *s,
    enum server_waiter_kind kind, struct server_reply *rep, int timeout_ms);

static void
server_waiter_free(struct server_waiter *w)
{
	TAILQ_REMOVE(&w->server->waiters, w, entry);
	event_free(w->deadline);
	free(w->tool);
	json_decref(w->arguments);
	free(w->text);
	json_decref(w->mcp_params);
	json_decref((json_t *)(uintptr_t)w->opts.caps);
	json_decref((json_t *)(uintptr_t)w->opts.input_responses);
	json_decref((json_t *)(uintptr_t)w->opts.request_state);
	free((char *)(uintptr_t)w->opts.definition);
	free(w->method);
	json_decref(w->params);
	server_unref(w->server);
	free(w);
}

/* The waiter ends without its call: why goes to whoever asked. */
static void
server_waiter_fail(struct server_waiter *w, enum errors_kind kind,
    const char *why)
{
	struct session_reply r = { NULL, NULL, kind, why };

	if (w->kind == SERVER_WAIT_FORWARD)
		w->cb(w->arg, &r);
	else {
		server_call_refused(w->server, w->tool, w->reply, kind);
		w->reply->ops->fail(w->reply, kind, NULL, why);
	}
	server_waiter_free(w);
}

static void
server_waiter_expired(evutil_socket_t fd, short events, void *arg)
{
	struct server_waiter *w = arg;
	char *why;

	(void)fd, (void)events;
	xasprintf(&why,
	    "server %s did not start within the call's deadline (%d ms); nothing was sent",
	    w->server->name, w->timeout_ms);
	server_waiter_fail(w, ERRORS_TIMEOUT, why);
	free(why);
}

/* The server is ready: the call goes as if it had come now. */
static void
server_waiter_send(struct server_waiter *w)
{
	struct server *s = w->server;
	uint64_t spent = mcpd_now_ms() - w->since_ms;
	int left = spent >= (uint64_t)w->timeout_ms ?
	    1 :
	    w->timeout_ms - (int)spent;
	struct session_reply r = { NULL, NULL, ERRORS_UNAVAILABLE, NULL };

	switch (w->kind) {
	case SERVER_WAIT_CALL:
		if (w->mcp_params != NULL)
			server_call_mcp(s, w->generation, w->tool, w->arguments,
			    left, w->reply, w->mcp_params);
		else
			server_call(s, w->generation, w->tool, w->arguments,
			    left, w->reply, w->has_opts ? &w->opts : NULL);
		break;
	case SERVER_WAIT_TEXT:
		server_call_text(s, w->tool, w->text, w->len, left, w->reply,
		    w->mcp_params);
		break;
	case SERVER_WAIT_FORWARD:
		if (server_forward(s->agent, s->name, w->method, w->params,
			w->cb, w->arg) < 0) {
			r.message = "the server went away as it started";
			w->cb(w->arg, &r);
		}
		w->params = NULL; /* taken */
		break;
	}
	server_waiter_free(w);
}

/* The start ended: each waiter goes, or fails with why. */
static void
server_idle_run_waiters(void *arg)
{
	struct server *s = arg;
	struct server_waiter *w;
	char *why = NULL;

	s->has_waiters_due = false;
	if (s->is_dead || server_is_starting(s)) {
		server_unref(s);
		return; /* gone, or starting again: the next change runs them */
	}
	if (!session_is_ready(s->session))
		xasprintf(&why,
		    "server %s could not be started for this call: %s; nothing was sent",
		    s->name,
		    s->last_error != NULL ? s->last_error : "no error kept");
	while ((w = TAILQ_FIRST(&s->waiters)) != NULL) {
		if (why != NULL)
			server_waiter_fail(w, ERRORS_UNAVAILABLE, why);
		else
			server_waiter_send(w);
	}
	free(why);
	server_unref(s);
}

void
server_idle_state_changed(struct server *s, enum server_state from)
{
	if (s->state != SERVER_READY)
		evtimer_del(s->idle_timer);
	/* It gave up, or goes: its kept lists no longer stand for it. */
	if ((from == SERVER_RECOVERING || from == SERVER_RESUMING) &&
	    s->state != SERVER_READY && s->state != SERVER_RECOVERING &&
	    s->state != SERVER_RESUMING)
		server_watch_tools_changed(s->agent);
	if (server_is_starting(s))
		return; /* a start runs: its calls wait */
	if (TAILQ_EMPTY(&s->waiters) || s->has_waiters_due)
		return;
	s->has_waiters_due = true;
	server_ref(s);
	defer_call(server_idle_run_waiters, s);
}

static struct server_waiter *
server_waiter_new(struct server *s, enum server_waiter_kind kind,
    struct server_reply *rep, int timeout_ms)
{
	struct server_waiter *w = xcalloc(1, sizeof *w);
	struct timeval tv;

	w->server = s;
	server_ref(s);
	w->kind = kind;
	w->reply = rep;
	w->timeout_ms = timeout_ms > 0 ? timeout_ms : mcpd_opts.call_timeout_ms;
	w->since_ms = mcpd_now_ms();
	if ((w->deadline = evtimer_new(mcpd_base, server_waiter_expired, w)) ==
	    NULL)
		fatalx("out of memory making a call wait");
	tv.tv_sec = w->timeout_ms / 1000;
	tv.tv_usec = (w->timeout_ms % 1000) * 1000;
	evtimer_add(w->deadline, &tv);
	TAILQ_INSERT_TAIL(&s->waiters, w, entry);
	server_idle_wake(s);
	return w;
}

/* A call of a tool the kept lists do not have fails now. */
static bool
server_idle_knows(struct server *s, const char *tool, struct server_reply *rep)
{
	if (server_tool_peek(s, tool) != NULL)
		return true;
	server_call_refused(s, tool, rep, ERRORS_NOT_FOUND);
	server_reply_fail(rep, ERRORS_NOT_FOUND,
	    json_pack("{s:s}", "what", "tool"),
	    "server %s has no tool named %s (it is idle: its kept tools)",
	    s->name, tool);
	return false;
}

bool
server_idle_hold_call(struct server *s, uint64_t generation, const char *tool,
    json_t *arguments, int timeout_ms, struct server_reply *rep,
    const json_t *mcp_params, const struct server_call_opts *opts)
{
	struct server_waiter *w;

	if (!server_idle_holds(s) || !server_idle_knows(s, tool, rep))
		return server_idle_holds(s);
	w = server_waiter_new(s, SERVER_WAIT_CALL, rep, timeout_ms);
	w->tool = xstrdup(tool);
	w->arguments = json_incref(arguments);
	/* A handle of the kept lists names what the start brings: current. */
	w->generation = generation == s->generation ? 0 : generation;
	w->mcp_params = mcp_params != NULL ? json_deep_copy(mcp_params) : NULL;
	if (opts != NULL) {
		w->has_opts = true;
		w->opts.takes_input = opts->takes_input;
		w->opts.caps = json_deep_copy(opts->caps);
		w->opts.input_responses = json_deep_copy(opts->input_responses);
		w->opts.request_state = json_deep_copy(opts->request_state);
		w->opts.definition = opts->definition != NULL ?
		    xstrdup(opts->definition) :
		    NULL;
	}
	return true;
}

bool
server_idle_hold_text(struct server *s, const char *tool, const char *args,
    size_t len, int timeout_ms, struct server_reply *rep,
    const json_t *mcp_params)
{
	struct server_waiter *w;

	if (!server_idle_holds(s) || !server_idle_knows(s, tool, rep))
		return server_idle_holds(s);
	w = server_waiter_new(s, SERVER_WAIT_TEXT, rep, timeout_ms);
	w->tool = xstrdup(tool);
	w->text = xmalloc(len + 1);
	memcpy(w->text, args, len);
	w->text[len] = '\0';
	w->len = len;
	w->mcp_params = mcp_params != NULL ? json_deep_copy(mcp_params) : NULL;
	return true;
}

bool
server_idle_hold_forward(struct server *s, const char *method, json_t *params,
    session_reply_fn *cb, void *arg)
{
	struct server_waiter *w;

	if (!server_idle_holds(s))
		return false;
	w = server_waiter_new(s, SERVER_WAIT_FORWARD, NULL,
	    mcpd_opts.call_timeout_ms);
	w->method = xstrdup(method);
	w->params = params;
	w->cb = cb;
	w->arg = arg;
	return true;
}

/* ---- the idle stop ---- */

static void
server_idle_removed(void *arg, int err, const char *why)
{
	struct server *s = arg;
	struct server_job *job = TAILQ_FIRST(&s->jobs);

	if (err < 0)
		log_server(LOG_WARNING, s->name,
		    "its container could not be removed as it went idle: %s; mcpd retries every 10 s",
		    why);
	server_job_reply(job, json_null());
	server_job_end(s);
}

void
server_job_idle(struct server *s, struct server_job *job)
{
	struct session *sess = s->session;

	if (s->state != SERVER_READY || !s->is_on_demand || s->kept == NULL ||
	    server_idle_is_busy(s) ||
	    (!job->is_at_once &&
		mcpd_now_ms() - s->last_used_ms < (uint64_t)s->idle_stop_ms)) {
		/* Restored idle, used again since, or no longer on demand. */
		server_job_reply(job, json_null());
		server_job_end(s);
		server_idle_arm(s);
		return;
	}
	/* Its lists stay listed: no list_changed, sessions stay open. */
	s->session = NULL;
	evtimer_del(s->healthy_timer);
	server_set_state(s, SERVER_IDLE);
	if (job->is_at_once)
		server_logs_note(s,
		    "idle: stopped once its lists were kept; the next call starts it");
	else
		server_logs_note(s,
		    "idle: stopped after %d ms without a call; its lists are kept and the next call starts it",
		    s->idle_stop_ms);
	server_retire_session(sess);
	if (s->container != NULL && docker_container_name(s->container) != NULL)
		docker_container_remove(s->container, server_idle_removed, s);
	else
		server_idle_removed(s, 0, NULL);
}

void
server_idle_describe(const struct server *s, json_t *row)
{
	uint64_t now = mcpd_now_ms(), due;
	int64_t left;
	char when[ISOTIME_LEN];

	json_object_set_new(row, "on_demand", json_boolean(s->is_on_demand));
	json_object_set_new(row, "idle_stop_ms", json_integer(s->idle_stop_ms));
	if (!s->is_on_demand || s->idle_stop_ms <= 0 ||
	    s->state != SERVER_READY) {
		json_object_set_new(row, "stops_at", json_null());
		json_object_set_new(row, "stops_in_ms", json_null());
		return;
	}
	due = s->last_used_ms + (uint64_t)s->idle_stop_ms;
	left = due > now ? (int64_t)(due - now) : 0;
	isotime_format(when, isotime_now_ms() + left);
	json_object_set_new(row, "stops_at", json_string(when));
	json_object_set_new(row, "stops_in_ms", json_integer(left));
}
