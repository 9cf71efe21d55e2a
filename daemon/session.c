/* SPDX-License-Identifier: ISC */
/* One MCP client session: pending requests, messages, its end. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event_struct.h>

#include "jsonscan.h"
#include "log.h"
#include "mcpd.h"
#include "session-int.h"

static struct pending_list *
session_bucket(struct session *s, int64_t id)
{
	return &s->buckets[(uint64_t)id % SESSION_BUCKETS];
}

static struct pending *
session_pending_find(struct session *s, int64_t id)
{
	struct pending *p;

	LIST_FOREACH(p, session_bucket(s, id), entry)
		if (p->id == id)
			return p;
	return NULL;
}

static void
session_pending_remove(struct session *s, struct pending *p)
{
	void (*idle)(void *) = s->idle_fn;

	LIST_REMOVE(p, entry);
	event_del(&p->timer);
	if (--s->npending == 0 && idle != NULL) {
		s->idle_fn = NULL;
		defer_call(idle, s->idle_arg);
	}
}

static struct pending *
session_pending_take(struct session *s, int64_t id)
{
	struct pending *p = session_pending_find(s, id);

	if (p != NULL)
		session_pending_remove(s, p);
	return p;
}

/* Pending requests, kept for reuse: the hot path allocates nothing. */
static struct xrecycle session_pendings = XRECYCLE_INIT(struct pending, 256);

/* Calls a pending request's callback once and frees it. */
static void
session_pending_finish(struct pending *p, const struct session_reply *r)
{
	p->cb(p->arg, r);
	xrecycle_put(&session_pendings, p);
}

static void
session_pending_fail(struct pending *p, enum errors_kind kind,
    const char *message)
{
	struct session_reply r = { NULL, NULL, kind, message };

	session_pending_finish(p, &r);
}

static void session_pending_later(struct pending *, enum errors_kind,
    const char *why, const char *detail);

static void
session_fail_all_pending(struct session *s, const char *why)
{
	char msg[512];

	snprintf(msg, sizeof msg,
	    "the connection to the server was lost (%s) after the request was sent; it may have run",
	    why);
	for (size_t i = 0; i < SESSION_BUCKETS; i++) {
		struct pending *p;

		while ((p = LIST_FIRST(&s->buckets[i])) != NULL) {
			session_pending_remove(s, p);
			session_pending_later(p, ERRORS_OUTCOME_UNKNOWN, "%s",
			    msg);
		}
	}
}

/* 1 when the request had not been sent yet (it never will be). */
static int
session_send_cancel(struct session *s, int64_t id, const char *reason)
{
	json_t *params = json_pack("{s:I, s:s}", "requestId", (json_int_t)id,
	    "reason", reason);
	json_t *msg = jsonrpc_notification("notifications/cancelled", params);
	int r = s->transport->ops->send(s->transport, msg, NULL);

	json_decref(msg);
	return r;
}

static void
session_pending_expired(evutil_socket_t fd, short events, void *arg)
{
	struct pending *p = arg;
	struct session *s = p->session;
	const char *held;
	char msg[1024];
	int r;

	(void)fd, (void)events;
	session_pending_take(s, p->id);
	r = session_send_cancel(s, p->id, "deadline passed");
	if (r == 2) {
		/* The server refused it until mcpd is authorized: it did not run. */
		held = s->transport->ops->held_why != NULL ?
		    s->transport->ops->held_why(s->transport) :
		    NULL;
		snprintf(msg, sizeof msg,
		    "no answer within %d ms: %s; the request did not run",
		    p->timeout_ms,
		    held != NULL ? held :
				   "the server wants authorization first");
		session_pending_fail(p, ERRORS_UNAVAILABLE, msg);
		return;
	}
	if (r == 1) {
		/* It waited for a free slot to the server the whole time. */
		snprintf(msg, sizeof msg,
		    "no answer within %d ms: the deadline passed before the request could be sent (the server had its limit of requests in flight); it did not run",
		    p->timeout_ms);
		session_pending_fail(p, ERRORS_TIMEOUT, msg);
		return;
	}
	if (s->phase != SESSION_READY)
		snprintf(msg, sizeof msg,
		    "no answer before the start's deadline of %d ms (mcpd sent notifications/cancelled)",
		    s->timeout_ms);
	else
		snprintf(msg, sizeof msg,
		    "no answer within %d ms; the request was sent and may have run (mcpd sent notifications/cancelled)",
		    p->timeout_ms);
	session_pending_fail(p, ERRORS_OUTCOME_UNKNOWN, msg);
}

static void
session_pending_failed_later(void *arg)
{
	struct pending *p = arg;
	char *why = p->later_why;

	session_pending_fail(p, p->later_kind, why);
	free(why);
}

/*
 * The request, out of its session's maps, fails (why: a format of one %s)
 * from the loop, never in its caller.
 */
static void
session_pending_later(struct pending *p, enum errors_kind kind, const char *why,
    const char *detail)
{
	p->later_kind = kind;
	xasprintf(&p->later_why, why, detail != NULL ? detail : "");
	defer_call(session_pending_failed_later, p);
}

void
session_when_idle(struct session *s, void (*fn)(void *), void *arg)
{
	if (s->npending == 0) {
		defer_call(fn, arg);
		return;
	}
	s->idle_fn = fn;
	s->idle_arg = arg;
}

bool
session_is_busy(const struct session *s)
{
	return s != NULL && s->npending > 0;
}

void
session_cancel_all(struct session *s, const char *reason)
{
	struct pending *p, *next;

	for (size_t i = 0; i < SESSION_BUCKETS; i++)
		for (p = LIST_FIRST(&s->buckets[i]); p != NULL; p = next) {
			next = LIST_NEXT(p, entry);
			session_cancel(s, p->id, reason);
		}
}

int
session_cancel(struct session *s, int64_t id, const char *reason)
{
	struct pending *p;

	if ((p = session_pending_take(s, id)) == NULL)
		return -ENOENT;
	/* 1 or 2: it had not gone (a free slot, a login, a new session). */
	if (session_send_cancel(s, id, reason) >= 1)
		session_pending_later(p, ERRORS_TIMEOUT,
		    "the request was cancelled (%s) before it could be sent; it did not run",
		    reason);
	else
		session_pending_later(p, ERRORS_OUTCOME_UNKNOWN,
		    "the request was cancelled (%s; mcpd sent notifications/cancelled); it was sent and may have run",
		    reason);
	return 0;
}

/* The cached Tool a tools/call names, for the transport's headers. */
static const json_t *
session_tool_for(const struct session *s, const char *method,
    const json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *tool;
	size_t i;

	if (strcmp(method, "tools/call") != 0 || name == NULL)
		return NULL;
	json_array_foreach(s->tools, i, tool)
		if (json_is_string(json_object_get(tool, "name")) &&
		    strcmp(json_string_value(json_object_get(tool, "name")),
			name) == 0)
			return tool;
	return NULL;
}

int64_t
session_request(struct session *s, const char *method, json_t *params,
    int timeout_ms, session_reply_fn *cb, void *arg)
{
	return session_request_raw(s, method, params, timeout_ms, cb, NULL,
	    arg);
}

void
session_pass_input_required(struct session *s, int64_t id)
{
	struct pending *p = session_pending_find(s, id);

	if (p != NULL)
		p->takes_input_required = true;
}

static struct pending *
session_pending_new(struct session *s, int timeout_ms, session_reply_fn *cb,
    session_raw_fn *raw_cb, void *arg)
{
	struct pending *p = xrecycle_get(&session_pendings);

	p->id = ++s->next_id;
	p->cb = cb;
	p->raw_cb = raw_cb;
	p->arg = arg;
	p->session = s;
	p->timeout_ms = timeout_ms;
	return p;
}

/* p's request went (r >= 0: it waits for its answer) or did not. */
static int64_t
session_pending_sent(struct session *s, struct pending *p, int r)
{
	struct timeval tv = { p->timeout_ms / 1000,
		(p->timeout_ms % 1000) * 1000 };

	if (r < 0) {
		session_pending_later(p, ERRORS_UNAVAILABLE,
		    r == -ENOBUFS ?
			"the server is not reading what it was sent; nothing more is sent until it does%s" :
			"the connection to the server is closed; nothing was sent%s",
		    NULL);
		return 0;
	}
	evtimer_assign(&p->timer, mcpd_base, session_pending_expired, p);
	evtimer_add(&p->timer, &tv);
	LIST_INSERT_HEAD(session_bucket(s, p->id), p, entry);
	s->npending++;
	return p->id;
}

/* Keeps the URIs subscribed to upstream, to subscribe them again. */
static void
session_note_subscription(struct session *s, const char *method,
    const json_t *params)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));

	if (uri == NULL)
		return;
	if (strcmp(method, "resources/subscribe") == 0)
		json_object_set_new(s->subscribed, uri, json_true());
	else if (strcmp(method, "resources/unsubscribe") == 0)
		json_object_del(s->subscribed, uri);
}

int64_t
session_request_raw(struct session *s, const char *method, json_t *params,
    int timeout_ms, session_reply_fn *cb, session_raw_fn *raw_cb, void *arg)
{
	struct pending *p = session_pending_new(s, timeout_ms, cb, raw_cb, arg);
	json_t *msg, *id;
	int r;

	if (s->phase == SESSION_DEAD) {
		json_decref(params);
		session_pending_later(p, ERRORS_UNAVAILABLE,
		    "the connection to the server is closed; nothing was sent%s",
		    NULL);
		return 0;
	}
	if (s->is_modern || strcmp(method, "server/discover") == 0)
		params = era_with_meta(params, ERA_MODERN);
	session_note_subscription(s, method, params);
	id = json_integer(p->id);
	msg = jsonrpc_request(id, method, params);
	json_decref(id);
	r = s->transport->ops->send(s->transport, msg,
	    session_tool_for(s, method, params));
	json_decref(msg);
	return session_pending_sent(s, p, r);
}

bool
session_takes_text(const struct session *s)
{
	return s != NULL && s->phase == SESSION_READY && !s->is_modern &&
	    s->transport->ops->send_text != NULL;
}

#define SESSION_TEXT_PIECES 6

int64_t
session_request_text(struct session *s, const char *method,
    const struct iovec *params, int n, int timeout_ms, session_reply_fn *cb,
    session_raw_fn *raw_cb, void *arg)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	static const char mid[] = ",\"method\":\"";
	static const char tail[] = "\",\"params\":";
	struct pending *p = session_pending_new(s, timeout_ms, cb, raw_cb, arg);
	struct iovec v[SESSION_TEXT_PIECES + 6];
	char id[JSONRPC_INT_MAX];

	if (n > SESSION_TEXT_PIECES)
		fatalx("session_request_text: %d pieces", n);
	v[0] = (struct iovec){ (void *)(uintptr_t)head, sizeof head - 1 };
	v[1] = (struct iovec){ id, jsonrpc_format_int(id, p->id) };
	v[2] = (struct iovec){ (void *)(uintptr_t)mid, sizeof mid - 1 };
	v[3] = (struct iovec){ (void *)(uintptr_t)method, strlen(method) };
	v[4] = (struct iovec){ (void *)(uintptr_t)tail, sizeof tail - 1 };
	memcpy(v + 5, params, n * sizeof *params);
	v[n + 5] = (struct iovec){ (void *)(uintptr_t) "}\n", 2 };
	return session_pending_sent(s, p,
	    s->transport->ops->send_text(s->transport, v, n + 6));
}

/* What mcpd declares upstream and relays to a caller that offers it. */
bool
session_is_client_method(const char *method)
{
	return strcmp(method, "sampling/createMessage") == 0 ||
	    strcmp(method, "elicitation/create") == 0 ||
	    strcmp(method, "roots/list") == 0;
}

void
session_answer(struct session *s, json_t *msg)
{
	if (s->transport != NULL)
		s->transport->ops->send(s->transport, msg, NULL);
	json_decref(msg);
}

/*
 * Requests from the server: ping is answered; sampling, elicitation and
 * roots go to the owner, which answers through session_answer; the rest
 * are refused.
 */
static void
session_on_request(struct session *s, const struct jsonrpc_msg *m)
{
	char text[256];

	if (strcmp(m->method, "ping") == 0) {
		session_answer(s, jsonrpc_result(m->id, json_object()));
		return;
	}
	/* Only a client sends these: the program echoes what it reads. */
	if (strcmp(m->method, "initialize") == 0 ||
	    strcmp(m->method, "server/discover") == 0) {
		session_fail(s,
		    "the program does not speak MCP: it sent mcpd's own %s request back instead of answering it (it echoes its input, as cat does)",
		    m->method);
		return;
	}
	if (s->cbs != NULL && s->cbs->request != NULL &&
	    session_is_client_method(m->method)) {
		s->cbs->request(s->arg, s, m->method, m->id, m->params);
		return;
	}
	snprintf(text, sizeof text,
	    "mcpd does not offer %.128s (the client declared no such capability)",
	    m->method);
	session_answer(s,
	    jsonrpc_error(m->id, JSONRPC_METHOD_NOT_FOUND, text, NULL));
}

static void
session_on_notification(struct session *s, const struct jsonrpc_msg *m)
{
	if (strcmp(m->method, "notifications/tools/list_changed") != 0) {
		if (s->cbs != NULL && s->cbs->notification != NULL)
			s->cbs->notification(s->arg, m->method, m->params);
		return;
	}
	if (s->is_listing)
		s->wants_relist = true;
	else if (s->phase == SESSION_READY)
		session_list_next(s, NULL);
}

static void
session_on_response(struct session *s, const struct jsonrpc_msg *m)
{
	struct session_reply r = { NULL, NULL, ERRORS_UPSTREAM, NULL };
	struct pending *p;

	if (!json_is_integer(m->id) ||
	    (p = session_pending_take(s, json_integer_value(m->id))) == NULL) {
		log_debug("dropped a response to an unknown request id");
		return;
	}
	if (m->type == JSONRPC_RESULT && s->is_modern &&
	    !p->takes_input_required &&
	    json_is_string(json_object_get(m->result, "resultType")) &&
	    strcmp(json_string_value(json_object_get(m->result, "resultType")),
		"input_required") == 0) {
		/* mcpd's own requests answer none: say so, resend nothing. */
		r.kind = ERRORS_OUTCOME_UNKNOWN;
		r.message =
		    "the server asked for more input (resultType input_required), which the caller did not say it answers; nothing was sent again";
	} else if (m->type == JSONRPC_RESULT)
		r.result = m->result;
	else {
		r.error = m->error;
		r.message = m->error_message;
		if (s->is_modern &&
		    json_integer_value(json_object_get(m->error, "code")) ==
			SESSION_HEADER_MISMATCH) {
			/* The tools it listed no longer say what it checks. */
			s->is_catalog_retired = true;
			r.kind = ERRORS_STALE_HANDLE;
		}
	}
	session_pending_finish(p, &r);
}

/*
 * The hot path: a plain result to a request that takes raw results is
 * checked by the scanner and passed on as the server's own text, without
 * a parse and a re-encoding. Anything else goes to session_on_message.
 */
static bool
session_on_raw(void *arg, const char *line, size_t len)
{
	struct session *s = arg;
	struct jsonscan_member m[] = { { "jsonrpc", false, 0, 0 },
		{ "id", false, 0, 0 }, { "result", false, 0, 0 },
		{ "method", false, 0, 0 }, { "error", false, 0, 0 } };
	struct jsonscan_member r[] = { { "isError", false, 0, 0 } };
	struct pending *p;
	int64_t id;

	/* One pass: the result's isError too, for the audit record. */
	if (s->phase != SESSION_READY || s->is_modern ||
	    jsonscan_object_in(line, len, m, 5, false, 2, r, 1) < 0 ||
	    !m[2].is_found || m[3].is_found || m[4].is_found ||
	    !m[0].is_found || m[0].len != 5 ||
	    memcmp(line + m[0].off, "\"2.0\"", 5) != 0 || !m[1].is_found ||
	    !jsonrpc_parse_int(line + m[1].off, m[1].len, &id))
		return false;
	if ((p = session_pending_find(s, id)) == NULL || p->raw_cb == NULL)
		return false;
	session_pending_remove(s, p);
	p->raw_cb(p->arg, line + m[2].off, m[2].len,
	    r[0].is_found && r[0].len == 4 &&
		memcmp(line + r[0].off, "true", 4) == 0);
	xrecycle_put(&session_pendings, p);
	return true;
}

static void
session_on_message(void *arg, json_t *msg)
{
	struct session *s = arg;
	struct jsonrpc_msg m;
	char *cause = NULL;

	if (s->phase == SESSION_DEAD)
		return;
	if (jsonrpc_classify(msg, &m, &cause) < 0) {
		log_debug("ignored an invalid message from a server: %s",
		    cause);
		free(cause);
		return;
	}
	switch (m.type) {
	case JSONRPC_REQUEST:
		session_on_request(s, &m);
		break;
	case JSONRPC_NOTIFICATION:
		session_on_notification(s, &m);
		break;
	default:
		session_on_response(s, &m);
		break;
	}
}

static void
session_on_request_failed(void *arg, const json_t *id, enum errors_kind kind,
    const char *why)
{
	struct session *s = arg;
	struct pending *p;

	if (s->phase == SESSION_DEAD || !json_is_integer(id) ||
	    (p = session_pending_take(s, json_integer_value(id))) == NULL)
		return;
	session_pending_fail(p, kind, why);
}

static void
session_on_stderr(void *arg, const char *line, size_t len)
{
	struct session *s = arg;

	if (s->cbs != NULL && s->cbs->stderr_line != NULL)
		s->cbs->stderr_line(s->arg, line, len);
}

/*
 * The server asks for authorization during the start: what waits (the
 * era probe's short wait too) may wait for the user until the start's
 * own deadline.
 */
static void
session_extend_pending(struct session *s)
{
	uint64_t now = mcpd_now_ms();
	uint64_t left = s->deadline_ms > now ? s->deadline_ms - now : 1;
	struct timeval tv = { (time_t)(left / 1000),
		(suseconds_t)((left % 1000) * 1000) };
	struct pending *p;

	for (size_t i = 0; i < SESSION_BUCKETS; i++)
		LIST_FOREACH(p, &s->buckets[i], entry)
			if (event_get_callback(&p->timer) ==
				session_pending_expired &&
			    evtimer_pending(&p->timer, NULL))
				evtimer_add(&p->timer, &tv);
}

static void
session_on_progress(void *arg, const char *stage, const char *message)
{
	struct session *s = arg;

	if (strcmp(stage, "authorizing") == 0 && s->phase != SESSION_READY &&
	    s->phase != SESSION_DEAD)
		session_extend_pending(s);
	if (s->cbs != NULL && s->cbs->progress != NULL)
		s->cbs->progress(s->arg, stage, message);
}

static void
session_on_closed(void *arg, const char *why)
{
	session_fail(arg, "%s", why);
}

static void
session_ignore(void *arg, const struct session_reply *r)
{
	(void)arg, (void)r;
}

/*
 * The server initialized our session again (a remote forgot it): it
 * knows none of our subscriptions, and may list other tools. Only a
 * change of them is told (tools_changed); the owner sees nothing else.
 */
static void
session_on_renewed(void *arg)
{
	struct session *s = arg;
	json_t *subscribed, *v;
	const char *uri;

	if (s->phase != SESSION_READY)
		return;
	subscribed = json_copy(s->subscribed); /* each request notes it */
	json_object_foreach(subscribed, uri, v)
		session_request(s, "resources/subscribe",
		    json_pack("{s:s}", "uri", uri), mcpd_opts.call_timeout_ms,
		    session_ignore, NULL);
	json_decref(subscribed);
	s->is_relist_quiet = true;
	if (s->is_listing)
		s->wants_relist = true;
	else
		session_list_next(s, NULL);
}

static const struct transport_cbs session_transport_cbs = {
	.raw = session_on_raw,
	.message = session_on_message,
	.failed = session_on_request_failed,
	.stderr_line = session_on_stderr,
	.closed = session_on_closed,
	.progress = session_on_progress,
	.renewed = session_on_renewed,
};

/* A connection's phases: which may follow which (doc/states.md). */
static const char *const session_phase_names[] = { "new", "initializing",
	"listing", "ready", "dead" };
static const unsigned session_phase_next[] = {
#define S(x) (1u << SESSION_##x)
	[SESSION_NEW] = S(INITIALIZING) | S(DEAD),
	[SESSION_INITIALIZING] = S(LISTING) | S(DEAD),
	[SESSION_LISTING] = S(READY) | S(DEAD),
	[SESSION_READY] = S(DEAD),
	[SESSION_DEAD] = 0,
#undef S
};
const struct fsm session_fsm = { "session", session_phase_names,
	session_phase_next,
	sizeof session_phase_names / sizeof *session_phase_names };

void
session_set_phase(struct session *s, enum session_phase phase)
{
	s->phase = fsm_move(&session_fsm, s->phase, phase, "connection");
}

/* Marks the session dead, fails what waits, and tells the owner once. */
void
session_fail(struct session *s, const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	if (s->phase == SESSION_DEAD)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	session_set_phase(s, SESSION_DEAD);
	if (s->transport->ops->drain != NULL)
		s->transport->ops->drain(s->transport);
	session_fail_all_pending(s, why);
	if (s->cbs != NULL)
		s->cbs->failed(s->arg, s, why);
}

struct session *
session_new(struct transport *t, const struct session_cbs *cbs, void *arg,
    int timeout_ms)
{
	struct session *s = xcalloc(1, sizeof *s);

	s->references = 1; /* the owner's */
	s->transport = t;
	s->cbs = cbs;
	s->arg = arg;
	s->timeout_ms = timeout_ms;
	s->tools = xjson(json_array());
	s->subscribed = xjson(json_object());
	for (size_t i = 0; i < SESSION_BUCKETS; i++)
		LIST_INIT(&s->buckets[i]);
	t->cbs = &session_transport_cbs;
	t->cb_arg = s;
	return s;
}

static void
session_release(void *arg)
{
	struct session *s = arg;

	free(s->protocol_version);
	json_decref(s->server_info);
	free(s->instructions);
	json_decref(s->capabilities);
	json_decref(s->tools);
	json_decref(s->listing);
	json_decref(s->seen_cursors);
	json_decref(s->subscribed);
	free(s);
}

void
session_ref(struct session *s)
{
	s->references++;
}

/* The memory goes on a later loop turn: the caller may be a callback. */
void
session_unref(struct session *s)
{
	if (--s->references == 0)
		defer_call(session_release, s);
}

void
session_free(struct session *s)
{
	if (s == NULL)
		return;
	s->cbs = NULL;
	if (s->phase != SESSION_DEAD) {
		session_set_phase(s, SESSION_DEAD);
		session_fail_all_pending(s, "the connection was closed");
	}
	s->transport->ops->free(s->transport);
	s->transport = NULL;
	session_unref(s);
}

/* May run inside session_close: done is called from the loop. */
static void
session_on_transport_closed(void *arg)
{
	struct session *s = arg;

	s->transport->ops->free(s->transport);
	s->transport = NULL;
	if (s->close_done != NULL)
		defer_call(s->close_done, s->close_arg);
	session_unref(s);
}

void
session_close(struct session *s, void (*done)(void *), void *arg)
{
	s->cbs = NULL;
	if (s->phase != SESSION_DEAD) {
		session_set_phase(s, SESSION_DEAD);
		session_fail_all_pending(s, "the connection was closed");
	}
	s->close_done = done;
	s->close_arg = arg;
	s->transport->ops->close(s->transport, session_on_transport_closed, s);
}

bool
session_is_denied(const struct session *s)
{
	return s->is_denied;
}

bool
session_is_ready(const struct session *s)
{
	return s != NULL && s->phase == SESSION_READY;
}

const char *
session_instructions_peek(const struct session *s)
{
	return s != NULL ? s->instructions : NULL;
}

const char *
session_protocol_version(const struct session *s)
{
	return s != NULL ? s->protocol_version : NULL;
}

uint64_t
session_tools_serial(const struct session *s)
{
	return s->tools_serial;
}

json_t *
session_tools_peek(const struct session *s)
{
	return s != NULL ? s->tools : NULL;
}

bool
session_is_catalog_retired(const struct session *s)
{
	return s != NULL && s->is_catalog_retired;
}

const json_t *
session_capabilities_peek(const struct session *s)
{
	return s != NULL ? s->capabilities : NULL;
}

json_t *
session_server_info_peek(const struct session *s)
{
	return s != NULL ? s->server_info : NULL;
}

struct transport *
session_transport(const struct session *s)
{
	return s->transport;
}
