/* SPDX-License-Identifier: ISC */
/* One MCP client session: handshake, pending requests, tools cache. */
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

#define SESSION_BUCKETS	    1024 /* pending map buckets; ids are sequential */
#define SESSION_MAX_PAGES   1000 /* tools/list pages before giving up */
#define SESSION_OFFERED	    "2025-11-25"
#define SESSION_DISCOVER_MS 3000 /* a legacy server may never answer it */

static const char *const session_versions[] = {
	"2025-11-25",
	"2025-06-18",
	"2025-03-26",
	"2024-11-05",
	NULL,
};

enum session_phase {
	SESSION_NEW,
	SESSION_INITIALIZING,
	SESSION_LISTING,
	SESSION_READY,
	SESSION_DEAD,
};

struct pending {
	int64_t id;
	session_reply_fn *cb;
	session_raw_fn *raw_cb; /* NULL: results come parsed to cb */
	void *arg;
	struct session *session;
	int timeout_ms;
	struct event timer;
	LIST_ENTRY(pending) entry;
};
LIST_HEAD(pending_list, pending);

struct session {
	struct transport *transport;
	const struct session_cbs *cbs;
	void *arg;
	int timeout_ms;	      /* of the handshake */
	uint64_t deadline_ms; /* when the start must be done */
	enum session_phase phase;
	int64_t next_id;
	struct pending_list buckets[SESSION_BUCKETS];
	size_t npending;
	char *protocol_version;
	json_t *server_info;
	json_t *capabilities;
	json_t *tools;	      /* the cache: a JSON array */
	json_t *listing;      /* tools gathered by the listing under way */
	json_t *seen_cursors; /* object used as a set */
	int pages;
	bool is_modern; /* 2026-07-28: _meta on every request */
	bool is_denied; /* the handshake was refused by policy */
	bool has_retried_discover;
	bool is_listing;
	bool wants_relist;
	void (*close_done)(void *);
	void *close_arg;
};

static void session_fail(struct session *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void session_list_next(struct session *, const char *cursor);

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
	LIST_REMOVE(p, entry);
	event_del(&p->timer);
	s->npending--;
}

static struct pending *
session_pending_take(struct session *s, int64_t id)
{
	struct pending *p = session_pending_find(s, id);

	if (p != NULL)
		session_pending_remove(s, p);
	return p;
}

/* Calls a pending request's callback once and frees it. */
static void
session_pending_finish(struct pending *p, const struct session_reply *r)
{
	p->cb(p->arg, r);
	free(p);
}

static void
session_pending_fail(struct pending *p, enum errors_kind kind,
    const char *message)
{
	struct session_reply r = { NULL, NULL, kind, message };

	session_pending_finish(p, &r);
}

static void
session_fail_all_pending(struct session *s, const char *why)
{
	char msg[512];

	snprintf(msg, sizeof msg,
	    "the connection to the server was lost "
	    "(%s) after the request was sent; it may have run",
	    why);
	for (size_t i = 0; i < SESSION_BUCKETS; i++) {
		struct pending *p;

		while ((p = LIST_FIRST(&s->buckets[i])) != NULL) {
			LIST_REMOVE(p, entry);
			event_del(&p->timer);
			s->npending--;
			session_pending_fail(p, ERRORS_OUTCOME_UNKNOWN, msg);
		}
	}
}

static void
session_send_cancel(struct session *s, int64_t id, const char *reason)
{
	json_t *params = json_pack("{s:I, s:s}", "requestId", (json_int_t)id,
	    "reason", reason);
	json_t *msg = jsonrpc_notification("notifications/cancelled", params);

	s->transport->ops->send(s->transport, msg, NULL);
	json_decref(msg);
}

static void
session_pending_expired(evutil_socket_t fd, short events, void *arg)
{
	struct pending *p = arg;
	struct session *s = p->session;
	char msg[256];

	(void)fd, (void)events;
	session_pending_take(s, p->id);
	session_send_cancel(s, p->id, "deadline passed");
	if (s->phase != SESSION_READY)
		snprintf(msg, sizeof msg,
		    "no answer before the start's deadline of %d ms "
		    "(mcpd sent notifications/cancelled)",
		    s->timeout_ms);
	else
		snprintf(msg, sizeof msg,
		    "no answer within %d ms; the request was sent and may "
		    "have run (mcpd sent notifications/cancelled)",
		    p->timeout_ms);
	session_pending_fail(p, ERRORS_OUTCOME_UNKNOWN, msg);
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

void
session_request(struct session *s, const char *method, json_t *params,
    int timeout_ms, session_reply_fn *cb, void *arg)
{
	session_request_raw(s, method, params, timeout_ms, cb, NULL, arg);
}

void
session_request_raw(struct session *s, const char *method, json_t *params,
    int timeout_ms, session_reply_fn *cb, session_raw_fn *raw_cb, void *arg)
{
	struct pending *p;
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	json_t *msg, *id;
	int r;

	if (s->phase == SESSION_DEAD) {
		json_decref(params);
		struct session_reply rep = { NULL, NULL, ERRORS_UNAVAILABLE,
			"the connection to the server is closed" };
		cb(arg, &rep);
		return;
	}
	if ((p = calloc(1, sizeof *p)) == NULL)
		fatal("calloc");
	p->id = ++s->next_id;
	p->cb = cb;
	p->raw_cb = raw_cb;
	p->arg = arg;
	p->session = s;
	p->timeout_ms = timeout_ms;
	if (s->is_modern || strcmp(method, "server/discover") == 0)
		params = era_with_meta(params, ERA_MODERN);
	id = json_integer(p->id);
	msg = jsonrpc_request(id, method, params);
	json_decref(id);
	r = s->transport->ops->send(s->transport, msg,
	    session_tool_for(s, method, params));
	json_decref(msg);
	if (r < 0) {
		session_pending_fail(p, ERRORS_UNAVAILABLE,
		    r == -ENOBUFS ?
			"the server is not reading what it was sent; nothing "
			"more is sent until it does" :
			"the connection to the server is closed; nothing was "
			"sent");
		return;
	}
	evtimer_assign(&p->timer, mcpd_base, session_pending_expired, p);
	evtimer_add(&p->timer, &tv);
	LIST_INSERT_HEAD(session_bucket(s, p->id), p, entry);
	s->npending++;
}

static void
session_answer(struct session *s, json_t *msg)
{
	s->transport->ops->send(s->transport, msg, NULL);
	json_decref(msg);
}

/* Requests from the server: ping is answered, the rest refused. */
static void
session_on_request(struct session *s, const struct jsonrpc_msg *m)
{
	char text[256];

	if (strcmp(m->method, "ping") == 0) {
		session_answer(s, jsonrpc_result(m->id, json_object()));
		return;
	}
	snprintf(text, sizeof text,
	    "mcpd does not offer %.128s (the client "
	    "declared no such capability)",
	    m->method);
	session_answer(s,
	    jsonrpc_error(m->id, JSONRPC_METHOD_NOT_FOUND, text, NULL));
}

static void
session_on_notification(struct session *s, const struct jsonrpc_msg *m)
{
	if (strcmp(m->method, "notifications/tools/list_changed") != 0)
		return;
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
	    json_is_string(json_object_get(m->result, "resultType")) &&
	    strcmp(json_string_value(json_object_get(m->result, "resultType")),
		"input_required") == 0) {
		/* Answering input requests is for later: say so, resend nothing. */
		r.kind = ERRORS_OUTCOME_UNKNOWN;
		r.message = "the server asked for more input (resultType "
			    "input_required), which mcpd does not answer yet; "
			    "nothing was sent again";
	} else if (m->type == JSONRPC_RESULT)
		r.result = m->result;
	else {
		r.error = m->error;
		r.message = m->error_message;
	}
	session_pending_finish(p, &r);
}

/* An integer id written plainly ("42"); false for anything else. */
static bool
session_raw_id(const char *text, size_t len, int64_t *ret)
{
	char buf[24];
	char *end;

	if (len == 0 || len >= sizeof buf)
		return false;
	memcpy(buf, text, len);
	buf[len] = '\0';
	errno = 0;
	*ret = strtoll(buf, &end, 10);
	return errno == 0 && *end == '\0' &&
	    (buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9'));
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
	struct pending *p;
	int64_t id;

	if (s->phase != SESSION_READY || s->is_modern ||
	    jsonscan_object(line, len, m, 5) < 0 || !m[2].is_found ||
	    m[3].is_found || m[4].is_found || !m[0].is_found || m[0].len != 5 ||
	    memcmp(line + m[0].off, "\"2.0\"", 5) != 0 || !m[1].is_found ||
	    !session_raw_id(line + m[1].off, m[1].len, &id))
		return false;
	if ((p = session_pending_find(s, id)) == NULL || p->raw_cb == NULL)
		return false;
	session_pending_remove(s, p);
	p->raw_cb(p->arg, line + m[2].off, m[2].len);
	free(p);
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

static void
session_on_progress(void *arg, const char *stage, const char *message)
{
	struct session *s = arg;

	if (s->cbs != NULL && s->cbs->progress != NULL)
		s->cbs->progress(s->arg, stage, message);
}

static void
session_on_closed(void *arg, const char *why)
{
	session_fail(arg, "%s", why);
}

static const struct transport_cbs session_transport_cbs = {
	.raw = session_on_raw,
	.message = session_on_message,
	.failed = session_on_request_failed,
	.stderr_line = session_on_stderr,
	.closed = session_on_closed,
	.progress = session_on_progress,
};

/* Marks the session dead, fails what waits, and tells the owner once. */
static void
session_fail(struct session *s, const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	if (s->phase == SESSION_DEAD)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	s->phase = SESSION_DEAD;
	if (s->transport->ops->drain != NULL)
		s->transport->ops->drain(s->transport);
	session_fail_all_pending(s, why);
	if (s->cbs != NULL)
		s->cbs->failed(s->arg, s, why);
}

/*
 * What is left of the start's deadline (timeout_ms covers discovery, the
 * handshake and the first listing together), or a call's when ready.
 */
static int
session_timeout(const struct session *s)
{
	uint64_t now = mcpd_now_ms();

	if (s->phase == SESSION_READY)
		return mcpd_opts.call_timeout_ms;
	return now < s->deadline_ms ? (int)(s->deadline_ms - now) : 1;
}

/* 2026-07-28: tools with invalid x-mcp-header annotations are refused. */
static void
session_drop_invalid_tools(struct session *s)
{
	json_t *tool;
	char *why = NULL;
	size_t i = 0;

	while (i < json_array_size(s->listing)) {
		tool = json_array_get(s->listing, i);
		if (era_tool_headers_valid(tool, &why)) {
			i++;
			continue;
		}
		log_warnx("refusing tool %s: %s",
		    json_string_value(json_object_get(tool, "name")),
		    why != NULL ? why : "");
		free(why);
		why = NULL;
		json_array_remove(s->listing, i);
	}
}

static void
session_list_done(struct session *s)
{
	if (s->is_modern)
		session_drop_invalid_tools(s);
	json_decref(s->tools);
	s->tools = s->listing;
	s->listing = NULL;
	json_decref(s->seen_cursors);
	s->seen_cursors = NULL;
	s->is_listing = false;
	if (s->wants_relist) {
		s->wants_relist = false;
		session_list_next(s, NULL);
		return;
	}
	if (s->phase == SESSION_LISTING) {
		s->phase = SESSION_READY;
		s->cbs->ready(s->arg, s);
	} else if (s->cbs->tools_changed != NULL)
		s->cbs->tools_changed(s->arg, s);
}

static void
session_list_abort(struct session *s, const char *why)
{
	json_decref(s->listing);
	json_decref(s->seen_cursors);
	s->listing = s->seen_cursors = NULL;
	s->is_listing = false;
	if (s->phase != SESSION_READY) {
		session_fail(s, "listing tools failed: %s", why);
		return;
	}
	log_warnx("re-listing tools failed, keeping the previous list: %s",
	    why);
}

static void
session_on_tools_page(void *arg, const struct session_reply *r)
{
	struct session *s = arg;
	json_t *tools, *next;
	const char *cursor;
	char why[512];

	if (s->phase == SESSION_DEAD)
		return;
	if (r->result == NULL) {
		snprintf(why, sizeof why, "%s", r->message);
		session_list_abort(s, why);
		return;
	}
	tools = json_object_get(r->result, "tools");
	if (!json_is_array(tools)) {
		session_list_abort(s, "tools/list result has no tools array");
		return;
	}
	json_array_extend(s->listing, tools);
	next = json_object_get(r->result, "nextCursor");
	cursor = json_string_value(next);
	if (cursor == NULL || cursor[0] == '\0') {
		session_list_done(s);
		return;
	}
	if (json_object_get(s->seen_cursors, cursor) != NULL) {
		snprintf(why, sizeof why,
		    "the server repeated the tools/list "
		    "cursor \"%.64s\"; stopped to avoid an endless listing",
		    cursor);
		session_list_abort(s, why);
		return;
	}
	if (++s->pages >= SESSION_MAX_PAGES) {
		session_list_abort(s, "more than 1000 tools/list pages");
		return;
	}
	session_list_next(s, cursor);
}

/* Asks for the first page (cursor NULL) or the page after cursor. */
static void
session_list_next(struct session *s, const char *cursor)
{
	json_t *params = json_object();

	if (cursor == NULL) {
		json_decref(s->listing);
		json_decref(s->seen_cursors);
		s->listing = json_array();
		s->seen_cursors = json_object();
		s->pages = 0;
		s->is_listing = true;
	} else {
		json_object_set_new(s->seen_cursors, cursor, json_true());
		json_object_set_new(params, "cursor", json_string(cursor));
	}
	session_request(s, "tools/list", params, session_timeout(s),
	    session_on_tools_page, s);
}

static bool
session_version_supported(const char *v)
{
	for (size_t i = 0; v != NULL && session_versions[i] != NULL; i++)
		if (strcmp(v, session_versions[i]) == 0)
			return true;
	return false;
}

/* Both eras end here: the version, who the server is, then its tools. */
static void
session_agreed(struct session *s, const char *version, json_t *info,
    json_t *capabilities)
{
	s->protocol_version = strdup(version);
	s->server_info = json_incref(info);
	s->capabilities = json_incref(capabilities);
	s->phase = SESSION_LISTING;
	if (json_object_get(s->capabilities, "tools") == NULL) {
		s->listing = json_array();
		session_list_done(s);
		return;
	}
	session_list_next(s, NULL);
}

static void session_discover(struct session *);

static void
session_on_initialize(void *arg, const struct session_reply *r)
{
	struct session *s = arg;
	const char *version;
	json_t *note;

	if (s->phase == SESSION_DEAD)
		return;
	if (r->result == NULL) {
		s->is_denied = r->error == NULL && r->kind == ERRORS_DENIED;
		session_fail(s, "initialize failed: %s", r->message);
		return;
	}
	version = json_string_value(json_object_get(r->result,
	    "protocolVersion"));
	if (!session_version_supported(version)) {
		session_fail(s,
		    "the server chose protocol version %s; mcpd "
		    "supports 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25",
		    version != NULL ? version : "(none)");
		return;
	}
	note = jsonrpc_notification("notifications/initialized", NULL);
	session_answer(s, note);
	session_agreed(s, version, json_object_get(r->result, "serverInfo"),
	    json_object_get(r->result, "capabilities"));
}

static json_t *
session_initialize_params(void)
{
	return json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
	    SESSION_OFFERED, "capabilities", "clientInfo", "name", "mcpd",
	    "version", MCPD_VERSION);
}

static void
session_initialize(struct session *s)
{
	session_request(s, "initialize", session_initialize_params(),
	    session_timeout(s), session_on_initialize, s);
}

/*
 * The answer to server/discover decides the era: a result listing
 * 2026-07-28 is modern; -32022 listing it is retried once; anything else
 * (an error, a result without supportedVersions, a timeout) means a
 * legacy server: initialize.
 */
static void
session_on_discover(void *arg, const struct session_reply *r)
{
	struct session *s = arg;
	json_t *data = json_object_get(r->error, "data");

	if (s->phase == SESSION_DEAD)
		return;
	if (r->result != NULL &&
	    era_lists_version(json_object_get(r->result, "supportedVersions"),
		ERA_MODERN)) {
		s->is_modern = true;
		session_agreed(s, ERA_MODERN, era_server_info(r->result),
		    json_object_get(r->result, "capabilities"));
		return;
	}
	if (r->error != NULL && !s->has_retried_discover &&
	    json_integer_value(json_object_get(r->error, "code")) == -32022 &&
	    era_lists_version(json_object_get(data, "supported"), ERA_MODERN)) {
		s->has_retried_discover = true;
		session_discover(s);
		return;
	}
	session_initialize(s);
}

static void
session_discover(struct session *s)
{
	int left = session_timeout(s);
	int timeout = left < SESSION_DISCOVER_MS ? left : SESSION_DISCOVER_MS;

	session_request(s, "server/discover", json_object(), timeout,
	    session_on_discover, s);
}

struct session *
session_new(struct transport *t, const struct session_cbs *cbs, void *arg,
    int timeout_ms)
{
	struct session *s = calloc(1, sizeof *s);

	if (s == NULL)
		return NULL;
	s->transport = t;
	s->cbs = cbs;
	s->arg = arg;
	s->timeout_ms = timeout_ms;
	s->tools = json_array();
	for (size_t i = 0; i < SESSION_BUCKETS; i++)
		LIST_INIT(&s->buckets[i]);
	t->cbs = &session_transport_cbs;
	t->cb_arg = s;
	return s;
}

int
session_start(struct session *s, char **cause)
{
	int r;

	if ((r = s->transport->ops->open(s->transport, cause)) < 0) {
		s->phase = SESSION_DEAD;
		return r;
	}
	s->phase = SESSION_INITIALIZING;
	s->deadline_ms = mcpd_now_ms() + (uint64_t)s->timeout_ms;
	session_discover(s);
	return 0;
}

static void
session_release(evutil_socket_t fd, short events, void *arg)
{
	struct session *s = arg;

	(void)fd, (void)events;
	free(s->protocol_version);
	json_decref(s->server_info);
	json_decref(s->capabilities);
	json_decref(s->tools);
	json_decref(s->listing);
	json_decref(s->seen_cursors);
	free(s);
}

/* Frees on the next loop turn: the caller may be one of our callbacks. */
static void
session_release_later(struct session *s)
{
	if (event_base_once(mcpd_base, -1, EV_TIMEOUT, session_release, s,
		NULL) < 0)
		fatalx("cannot schedule a session release");
}

void
session_free(struct session *s)
{
	if (s == NULL)
		return;
	s->cbs = NULL;
	if (s->phase != SESSION_DEAD) {
		s->phase = SESSION_DEAD;
		session_fail_all_pending(s, "the connection was closed");
	}
	s->transport->ops->free(s->transport);
	session_release_later(s);
}

static void
session_on_transport_closed(void *arg)
{
	struct session *s = arg;
	void (*done)(void *) = s->close_done;
	void *done_arg = s->close_arg;

	s->transport->ops->free(s->transport);
	session_release_later(s);
	if (done != NULL)
		done(done_arg);
}

void
session_close(struct session *s, void (*done)(void *), void *arg)
{
	s->cbs = NULL;
	if (s->phase != SESSION_DEAD) {
		s->phase = SESSION_DEAD;
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
session_protocol_version(const struct session *s)
{
	return s != NULL ? s->protocol_version : NULL;
}

json_t *
session_tools_peek(const struct session *s)
{
	return s != NULL ? s->tools : NULL;
}

json_t *
session_server_info_peek(const struct session *s)
{
	return s != NULL ? s->server_info : NULL;
}

size_t
session_pending_count(const struct session *s)
{
	return s != NULL ? s->npending : 0;
}

struct transport *
session_transport(const struct session *s)
{
	return s->transport;
}
