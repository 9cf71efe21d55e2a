/* SPDX-License-Identifier: ISC */
/* The HTTP front: MCP over Streamable HTTP on loopback, into the gateway. */
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/bufferevent.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <sodium.h>

#include "errors.h"
#include "linebuf.h"
#include "log.h"
#include "mcpd.h"
#include "names.h"

#define HTTPD_HEADERS_MAX  (64 * 1024)
#define HTTPD_RETRY_MS	   1000 /* how long a client waits to resume a stream */
#define HTTPD_KEPT_ANSWERS 16	/* answers kept for clients that may resume */

/*
 * A request waiting for its answer from the gateway. A tools/call whose
 * client accepts text/event-stream is answered with a stream of its own:
 * its progress, log messages and the server's requests come on it before
 * the answer. In the 2025 era it starts at once with a priming event (an
 * id and retry), so that a client whose connection breaks can resume it
 * with GET and Last-Event-ID; in 2026-07-28 it starts with the first
 * message before the answer (else the answer is JSON with its status).
 */
struct httpd_pending {
	struct httpd_session *hs;
	json_t *id;
	json_t *token;		    /* its _meta.progressToken, or NULL */
	struct evhttp_request *req; /* NULL: its client went, may resume */
	unsigned stream;	    /* 0: none yet; event ids "<stream>-<n>" */
	unsigned events;
	struct evbuffer *missed; /* events while its client was away */
	struct event *peek; /* 2026-07-28, no stream yet: its client's close */
	bool is_initialize;
	bool is_call;	/* tools/call: what it causes goes on its stream */
	bool wants_sse; /* its client accepts text/event-stream */
	bool is_done;	/* answered while its client was away */
	TAILQ_ENTRY(httpd_pending) entry;
};

/*
 * One MCP session over HTTP: a control connection of its own (one end of
 * a socketpair), so that the gateway serves it as any other client.
 */
struct httpd_session {
	char id[33];
	char *agent;
	char *path; /* "/mcp" or "/mcp/<server>": a session stays on its path */
	bool is_stateless; /* 2026-07-28: one request, then it goes */
	unsigned streams;  /* streams begun: the next one's number */
	struct bufferevent *bev;
	struct linebuf lines;
	TAILQ_HEAD(, httpd_pending) pending;
	struct evhttp_request *stream; /* the GET stream, or NULL */
	TAILQ_ENTRY(httpd_session) entry;
};

static struct evhttp *httpd;
static TAILQ_HEAD(,
    httpd_session) httpd_sessions = TAILQ_HEAD_INITIALIZER(httpd_sessions);

static void
httpd_reply(struct evhttp_request *req, int code, const char *reason,
    const char *body)
{
	struct evbuffer *buf = evbuffer_new();

	if (buf == NULL)
		fatal("evbuffer_new");
	if (body != NULL) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Content-Type", "application/json");
		evbuffer_add(buf, body, strlen(body));
	}
	evhttp_send_reply(req, code, reason, buf);
	evbuffer_free(buf);
}

static void
httpd_reply_msg(struct evhttp_request *req, int code, const json_t *msg)
{
	char *text = xnonnull(json_dumps(msg, JSON_COMPACT));

	if (code == 401)
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "WWW-Authenticate", "Bearer realm=\"mcpd\"");
	httpd_reply(req, code, NULL, text);
	free(text);
}

/* An HTTP refusal with a JSON-RPC error body (id null), as MCP servers do. */
static void
httpd_refuse(struct evhttp_request *req, int code, const char *reason,
    const char *why)
{
	json_t *msg = jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST, why, NULL);
	char *text = xnonnull(json_dumps(msg, JSON_COMPACT));

	if (code == 401)
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "WWW-Authenticate", "Bearer realm=\"mcpd\"");
	httpd_reply(req, code, reason, text);
	free(text);
	json_decref(msg);
}

static void httpd_pending_closed(struct evhttp_connection *, void *);

/* Its exchange's close no longer concerns the request. */
static void
httpd_pending_unwatch(struct httpd_pending *p)
{
	struct evhttp_connection *conn;

	if (p->req != NULL &&
	    (conn = evhttp_request_get_connection(p->req)) != NULL)
		evhttp_connection_set_closecb(conn, NULL, NULL);
}

static void
httpd_pending_watch(struct httpd_pending *p)
{
	struct evhttp_connection *conn = evhttp_request_get_connection(p->req);

	if (conn != NULL)
		evhttp_connection_set_closecb(conn, httpd_pending_closed, p);
}

static void httpd_session_free(struct httpd_session *);

static void
httpd_pending_unpeek(struct httpd_pending *p)
{
	if (p->peek != NULL)
		event_free(p->peek);
	p->peek = NULL;
}

/*
 * libevent reads nothing from a connection while its request waits for
 * an answer, so it cannot see the client go: mcpd peeks. A 2026-07-28
 * client that closes its connection cancels its request.
 */
static void
httpd_pending_peeked(evutil_socket_t fd, short events, void *arg)
{
	struct httpd_pending *p = arg;
	ssize_t n;
	char c;

	(void)events;
	n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		event_add(p->peek, NULL);
		return;
	}
	httpd_pending_unpeek(p);
	if (n > 0)
		return; /* the client sent more: it is there */
	log_debug(
	    "HTTP front: a 2026-07-28 client closed its connection before its answer: the request is cancelled");
	httpd_session_free(p->hs);
}

static void
httpd_pending_peek(struct httpd_pending *p)
{
	struct evhttp_connection *conn = evhttp_request_get_connection(p->req);
	struct bufferevent *bev;

	if (conn == NULL ||
	    (bev = evhttp_connection_get_bufferevent(conn)) == NULL)
		return;
	p->peek = event_new(mcpd_base, bufferevent_getfd(bev), EV_READ,
	    httpd_pending_peeked, p);
	if (p->peek == NULL)
		fatalx("cannot make an event");
	event_add(p->peek, NULL);
}

/* Frees p; its exchange, if any is left, was answered or ends here. */
static void
httpd_pending_free(struct httpd_pending *p, bool is_answered)
{
	TAILQ_REMOVE(&p->hs->pending, p, entry);
	httpd_pending_unpeek(p);
	httpd_pending_unwatch(p);
	if (p->req != NULL && p->stream != 0)
		evhttp_send_reply_end(p->req);
	else if (p->req != NULL && !is_answered)
		httpd_refuse(p->req, 503, "Service Unavailable",
		    "the session ended before its answer");
	if (p->missed != NULL)
		evbuffer_free(p->missed);
	json_decref(p->id);
	json_decref(p->token);
	free(p);
}

static void
httpd_session_free(struct httpd_session *hs)
{
	struct httpd_pending *p;

	while ((p = TAILQ_FIRST(&hs->pending)) != NULL)
		httpd_pending_free(p, false);
	if (hs->stream != NULL) {
		/* Its close must not reach this session any more. */
		evhttp_connection_set_closecb(
		    evhttp_request_get_connection(hs->stream), NULL, NULL);
		evhttp_send_reply_end(hs->stream);
	}
	TAILQ_REMOVE(&httpd_sessions, hs, entry);
	bufferevent_free(hs->bev); /* the control side sees its client go */
	free(hs->agent);
	free(hs->path);
	free(hs);
}

/* A notification of the gateway: on the GET stream when there is one. */
static void
httpd_notify(struct httpd_session *hs, const char *line, size_t len)
{
	struct evbuffer *buf;

	if (hs->stream == NULL || (buf = evbuffer_new()) == NULL)
		return;
	evbuffer_add_printf(buf, "event: message\ndata: %.*s\n\n", (int)len,
	    line);
	evhttp_send_reply_chunk(hs->stream, buf);
	evbuffer_free(buf);
}

static void
httpd_sse_headers(struct evhttp_request *req)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);

	evhttp_add_header(out, "Content-Type", "text/event-stream");
	evhttp_add_header(out, "Cache-Control", "no-cache");
	evhttp_add_header(out, "X-Accel-Buffering", "no");
}

/* Answers p's POST with an event stream (2025 era: resumable). */
static void
httpd_sse_start(struct httpd_pending *p)
{
	struct evbuffer *buf;

	p->stream = ++p->hs->streams;
	httpd_pending_unpeek(p); /* libevent sees a stream's client go */
	httpd_sse_headers(p->req);
	evhttp_send_reply_start(p->req, 200, "OK");
	httpd_pending_watch(p);
	if (p->hs->is_stateless)
		return; /* 2026-07-28 streams are not resumed */
	if ((buf = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
	evbuffer_add_printf(buf, "id: %u-0\nretry: %d\ndata: \n\n", p->stream,
	    HTTPD_RETRY_MS);
	evhttp_send_reply_chunk(p->req, buf);
	evbuffer_free(buf);
}

/*
 * One message on p's stream, or kept for when its client resumes; false
 * when that would keep more than the limit (the stream is given up).
 */
static bool
httpd_sse_send(struct httpd_pending *p, const char *line, size_t len)
{
	struct evbuffer *buf = p->req != NULL ? evbuffer_new() : p->missed;

	if (buf == NULL)
		fatal("evbuffer_new");
	if (!p->hs->is_stateless)
		evbuffer_add_printf(buf, "id: %u-%u\n", p->stream, ++p->events);
	evbuffer_add_printf(buf, "event: message\ndata: %.*s\n\n", (int)len,
	    line);
	if (p->req != NULL) {
		evhttp_send_reply_chunk(p->req, buf);
		evbuffer_free(buf);
	}
	return p->missed == NULL ||
	    evbuffer_get_length(p->missed) <= 2 * mcpd_opts.max_message;
}

/* The POST's client went: 2026-07-28 cancels; 2025 keeps what follows. */
static void
httpd_pending_closed(struct evhttp_connection *conn, void *arg)
{
	struct httpd_pending *p = arg;
	struct evhttp_request *req = p->req;

	(void)conn;
	p->req = NULL;
	/* libevent let go of the request; ending it is what frees it. */
	if (req != NULL && p->stream != 0)
		evhttp_send_reply_end(req);
	else if (req != NULL)
		evhttp_send_reply(req, 503, "Service Unavailable", NULL);
	if (p->hs->is_stateless) {
		httpd_session_free(p->hs); /* its calls are cancelled */
		return;
	}
	if ((p->missed = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
}

/* Keeps at most HTTPD_KEPT_ANSWERS answers of streams nobody resumed. */
static void
httpd_kept_trim(struct httpd_session *hs)
{
	struct httpd_pending *p, *oldest = NULL;
	unsigned n = 0;

	TAILQ_FOREACH(p, &hs->pending, entry)
		if (p->is_done && n++ == 0)
			oldest = p;
	if (n > HTTPD_KEPT_ANSWERS)
		httpd_pending_free(oldest, true);
}

/*
 * The answer of p (msg, line). True when that ended (and freed) a
 * one-request session.
 */
static bool
httpd_answer(struct httpd_session *hs, struct httpd_pending *p, json_t *msg,
    const char *line, size_t len)
{
	json_t *result = json_object_get(msg, "result");
	char *body, *text = NULL;

	/*
	 * 2026-07-28: a result relayed as its server gave it (a tools/call's,
	 * from a server of an older era) says its resultType too.
	 */
	if (hs->is_stateless && json_is_object(result) &&
	    json_object_get(result, "resultType") == NULL) {
		json_object_set_new(result, "resultType",
		    json_string("complete"));
		text = xnonnull(json_dumps(msg, JSON_COMPACT));
		line = text;
		len = strlen(text);
	}

	if (p->stream != 0 && p->req == NULL) {
		if (!httpd_sse_send(p, line, len)) {
			log_warnx(
			    "HTTP front: an answer nobody resumed is over %zu bytes; dropped",
			    2 * mcpd_opts.max_message);
			httpd_pending_free(p, true);
		} else {
			p->is_done = true;
			httpd_kept_trim(hs);
		}
		free(text);
		return false;
	}
	if (p->stream != 0)
		httpd_sse_send(p, line, len);
	else if (p->req != NULL) {
		httpd_pending_unwatch(p);
		if (p->is_initialize && !hs->is_stateless)
			evhttp_add_header(
			    evhttp_request_get_output_headers(p->req),
			    "Mcp-Session-Id", hs->id);
		body = xstrndup(line, len);
		httpd_reply(p->req,
		    hs->is_stateless ? httpd_modern_status(msg) : 200, NULL,
		    body);
		free(body);
		p->req = NULL;
	}
	free(text);
	httpd_pending_free(p, true);
	if (!hs->is_stateless || !TAILQ_EMPTY(&hs->pending))
		return false;
	httpd_session_free(hs);
	return true;
}

/* The pending call what the gateway says (a progress token's, else the
 * oldest call's with a stream) belongs on, or NULL. */
static struct httpd_pending *
httpd_call_of(struct httpd_session *hs, const json_t *token)
{
	struct httpd_pending *p;

	TAILQ_FOREACH(p, &hs->pending, entry)
		if (!p->is_done && p->wants_sse &&
		    (token != NULL ? json_equal(p->token, token) : p->is_call))
			return p;
	return NULL;
}

/*
 * A message of the gateway that is no answer: progress to its call's
 * stream, a log message or a server's request to a call's stream, else to
 * the GET stream. A request nobody can get is refused to the gateway.
 */
static void
httpd_route(struct httpd_session *hs, const json_t *msg, const char *line,
    size_t len)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	const json_t *id = json_object_get(msg, "id");
	struct httpd_pending *p = NULL;
	json_t *refusal;
	char *text;

	if (strcmp(method, "notifications/progress") == 0)
		p = httpd_call_of(hs,
		    json_object_get(json_object_get(msg, "params"),
			"progressToken"));
	else if (id != NULL || strcmp(method, "notifications/message") == 0)
		p = httpd_call_of(hs, NULL);
	if (p != NULL && id != NULL && hs->is_stateless)
		p = NULL; /* 2026-07-28: no requests on a stream */
	if (p != NULL && p->stream == 0 && p->req != NULL)
		httpd_sse_start(p);
	if (p != NULL && p->stream != 0) {
		if (!httpd_sse_send(p, line, len))
			httpd_pending_free(p, true);
		return;
	}
	if (hs->stream != NULL) {
		httpd_notify(hs, line, len);
		return;
	}
	if (id == NULL)
		return; /* nobody listens: a notification is dropped */
	refusal = jsonrpc_error((json_t *)(uintptr_t)id, JSONRPC_INTERNAL_ERROR,
	    "the HTTP client has no stream open for requests: call with Accept: text/event-stream, or open the GET stream",
	    NULL);
	text = xnonnull(json_dumps(refusal, JSON_COMPACT));
	bufferevent_write(hs->bev, text, strlen(text));
	bufferevent_write(hs->bev, "\n", 1);
	free(text);
	json_decref(refusal);
}

/*
 * One line from the gateway: the answer of a pending request, or another
 * message. True when that ended (and freed) a one-request session.
 */
static bool
httpd_line(struct httpd_session *hs, const char *line, size_t len)
{
	json_t *msg = jsonrpc_parse(line, len, NULL), *id;
	struct httpd_pending *p;
	bool is_gone = false;

	if (msg == NULL)
		return false;
	id = json_object_get(msg, "id");
	if (json_is_string(json_object_get(msg, "method")))
		httpd_route(hs, msg, line, len);
	else if (id != NULL) {
		TAILQ_FOREACH(p, &hs->pending, entry)
			if (!p->is_done && json_equal(p->id, id))
				break;
		if (p != NULL)
			is_gone = httpd_answer(hs, p, msg, line, len);
	}
	json_decref(msg);
	return is_gone;
}

static void
httpd_session_read(struct bufferevent *bev, void *arg)
{
	struct httpd_session *hs = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	char *line;
	size_t len;

	int r;

	while ((r = linebuf_peek(&hs->lines, in, &line, &len)) > 0) {
		if (httpd_line(hs, line, len))
			return; /* the session, and its buffer, are gone */
		linebuf_consume(&hs->lines, in);
	}
	if (r < 0)
		httpd_session_free(hs); /* an answer over the limit */
}

static void
httpd_session_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		httpd_session_free(arg); /* mcpd is stopping, say */
}

static struct httpd_session *
httpd_session_new(const char *agent, const char *path, const json_t *scope,
    bool is_stateless, char **cause)
{
	struct httpd_session *hs = xcalloc(1, sizeof *hs);
	unsigned char raw[16];
	int sv[2];

	hs->agent = xstrdup(agent);
	hs->path = xstrdup(path);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
		sv) < 0) {
		errors_cause(cause, -errno, "socketpair: %s", strerror(errno));
		free(hs->agent);
		free(hs->path);
		free(hs);
		return NULL;
	}
	if (control_adopt(sv[1], agent, scope, cause) < 0) {
		close(sv[0]);
		free(hs->agent);
		free(hs->path);
		free(hs);
		return NULL;
	}
	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(hs->id, sizeof hs->id, raw, sizeof raw);
	hs->is_stateless = is_stateless;
	hs->bev = bufferevent_socket_new(mcpd_base, sv[0],
	    BEV_OPT_CLOSE_ON_FREE);
	if (hs->bev == NULL)
		fatalx("cannot make a bufferevent");
	linebuf_init(&hs->lines, mcpd_opts.max_message + 64 * 1024);
	TAILQ_INIT(&hs->pending);
	bufferevent_setcb(hs->bev, httpd_session_read, NULL,
	    httpd_session_event, hs);
	bufferevent_enable(hs->bev, EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&httpd_sessions, hs, entry);
	return hs;
}

static struct httpd_session *
httpd_session_find(const char *id, const char *agent, const char *path)
{
	struct httpd_session *hs;

	TAILQ_FOREACH(hs, &httpd_sessions, entry)
		if (!hs->is_stateless && strcmp(hs->id, id) == 0 &&
		    strcmp(hs->agent, agent) == 0 &&
		    strcmp(hs->path, path) == 0)
			return hs;
	return NULL;
}

/* The agent of the request's token, or NULL after refusing it. */
static const char *
httpd_agent(struct evhttp_request *req)
{
	const char *agent, *why;
	int status;

	agent = httpd_access_agent(evhttp_request_get_input_headers(req),
	    &status, &why);
	if (agent == NULL)
		httpd_refuse(req, status, NULL, why);
	return agent;
}

/* "/mcp": the agent's servers; "/mcp/<server>": that one (new scope). */
static bool
httpd_scope(const char *path, json_t **ret)
{
	*ret = NULL;
	if (strcmp(path, "/mcp") == 0)
		return true;
	if (strncmp(path, "/mcp/", 5) != 0 || !names_valid(path + 5))
		return false;
	*ret = json_pack("[s]", path + 5);
	return true;
}

/* ---- the verbs ---- */

static bool
httpd_accepts_sse(struct evhttp_request *req)
{
	const char *accept =
	    evhttp_find_header(evhttp_request_get_input_headers(req), "Accept");

	return accept != NULL && strstr(accept, "text/event-stream") != NULL;
}

/* A message for the session: a request waits for its answer. */
static void
httpd_forward(struct httpd_session *hs, struct evhttp_request *req, json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *id = json_object_get(msg, "id");
	/* One line: a body may be pretty-printed, the socket is NDJSON. */
	char *line = xnonnull(json_dumps(msg, JSON_COMPACT));
	struct httpd_pending *p;

	bufferevent_write(hs->bev, line, strlen(line));
	bufferevent_write(hs->bev, "\n", 1);
	free(line);
	if (id == NULL || method == NULL) {
		httpd_reply(req, 202, "Accepted", NULL);
		return;
	}
	p = xcalloc(1, sizeof *p);
	p->hs = hs;
	p->id = json_incref(id);
	p->token =
	    json_incref(json_object_get(json_object_get(json_object_get(msg,
							    "params"),
					    "_meta"),
		"progressToken"));
	p->req = req;
	p->is_initialize = strcmp(method, "initialize") == 0;
	p->is_call = strcmp(method, "tools/call") == 0;
	p->wants_sse = p->is_call && httpd_accepts_sse(req);
	TAILQ_INSERT_TAIL(&hs->pending, p, entry);
	if (p->wants_sse && !hs->is_stateless)
		httpd_sse_start(p);
	else if (hs->is_stateless)
		httpd_pending_peek(p); /* its client going cancels it */
}

static void
httpd_post(struct evhttp_request *req, const char *agent, const char *path,
    const json_t *scope)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	struct evkeyvalq *h = evhttp_request_get_input_headers(req);
	size_t len = evbuffer_get_length(in);
	const char *body = (const char *)evbuffer_pullup(in, -1);
	const char *sid = evhttp_find_header(h, "Mcp-Session-Id");
	json_t *msg = len > 0 ? jsonrpc_parse(body, len, NULL) : NULL;
	const char *method = json_string_value(json_object_get(msg, "method"));
	bool is_modern = json_is_object(msg) && sid == NULL &&
	    httpd_modern_is(evhttp_find_header(h, "MCP-Protocol-Version"), msg);
	struct httpd_session *hs = NULL;
	json_t *refusal = NULL;
	char *cause = NULL;

	if (!json_is_object(msg))
		httpd_refuse(req, 400, "Bad Request",
		    "the body must be one JSON-RPC message (no batches)");
	else if (sid != NULL &&
	    (hs = httpd_session_find(sid, agent, path)) == NULL)
		httpd_refuse(req, 404, "Not Found",
		    "no such session: initialize again");
	else if (is_modern && (refusal = httpd_modern_refusal(h, msg)) != NULL)
		httpd_reply_msg(req, httpd_modern_status(refusal), refusal);
	else if (hs == NULL && !is_modern &&
	    (method == NULL || strcmp(method, "initialize") != 0))
		httpd_refuse(req, 400, "Bad Request",
		    "no Mcp-Session-Id: initialize first");
	else if (hs == NULL &&
	    (hs = httpd_session_new(agent, path, scope, is_modern, &cause)) ==
		NULL)
		httpd_refuse(req, 503, "Service Unavailable",
		    cause != NULL ? cause : "no session");
	else
		httpd_forward(hs, req, msg);
	free(cause);
	json_decref(refusal);
	json_decref(msg);
}

/* The server's stream: notifications of the session come on it. */
static void
httpd_stream_closed(struct evhttp_connection *conn, void *arg)
{
	struct httpd_session *hs = arg;
	struct evhttp_request *req = hs->stream;

	(void)conn;
	hs->stream = NULL;
	/*
	 * libevent detached the request (its client went while we still held
	 * it); ending it is what frees it.
	 */
	if (req != NULL)
		evhttp_send_reply_end(req);
}

/*
 * A GET with Last-Event-ID "<stream>-<n>" of a call whose client went:
 * what it missed, then the rest of it. False when there is no such call
 * waiting (the GET is then the session's stream).
 */
static bool
httpd_resume(struct evhttp_request *req, struct httpd_session *hs)
{
	const char *last =
	    evhttp_find_header(evhttp_request_get_input_headers(req),
		"Last-Event-ID");
	struct httpd_pending *p;
	unsigned stream;

	if (last == NULL || sscanf(last, "%u-", &stream) != 1)
		return false;
	TAILQ_FOREACH(p, &hs->pending, entry)
		if (p->stream == stream && p->req == NULL)
			break;
	if (p == NULL)
		return false;
	p->req = req;
	httpd_sse_headers(req);
	evhttp_send_reply_start(req, 200, "OK");
	httpd_pending_watch(p);
	evhttp_send_reply_chunk(req, p->missed);
	evbuffer_free(p->missed);
	p->missed = NULL;
	if (p->is_done)
		httpd_pending_free(p, true);
	return true;
}

static void
httpd_get(struct evhttp_request *req, struct httpd_session *hs)
{
	if (httpd_resume(req, hs))
		return;
	if (hs->stream != NULL) {
		httpd_refuse(req, 409, "Conflict",
		    "this session has a stream already");
		return;
	}
	httpd_sse_headers(req);
	evhttp_send_reply_start(req, 200, "OK");
	hs->stream = req;
	evhttp_connection_set_closecb(evhttp_request_get_connection(req),
	    httpd_stream_closed, hs);
}

static void
httpd_handle(struct evhttp_request *req, void *arg)
{
	const char *path =
	    evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
	struct evkeyvalq *h = evhttp_request_get_input_headers(req);
	const char *sid = evhttp_find_header(h, "Mcp-Session-Id");
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	struct httpd_session *hs;
	const char *agent;
	json_t *scope;

	(void)arg;
	if ((agent = httpd_agent(req)) == NULL)
		return;
	if (path == NULL || !httpd_scope(path, &scope)) {
		httpd_refuse(req, 404, "Not Found",
		    "MCP is at /mcp, or /mcp/<server> for one server");
		return;
	}
	if (cmd == EVHTTP_REQ_POST)
		httpd_post(req, agent, path, scope);
	else if (sid == NULL &&
	    httpd_modern_is(evhttp_find_header(h, "MCP-Protocol-Version"),
		NULL)) {
		/* 2026-07-28 has no sessions: nothing to GET or DELETE. */
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "POST");
		httpd_refuse(req, 405, "Method Not Allowed",
		    "2026-07-28 is POST only");
	} else if (sid == NULL ||
	    (hs = httpd_session_find(sid, agent, path)) == NULL)
		httpd_refuse(req, sid == NULL ? 400 : 404,
		    sid == NULL ? "Bad Request" : "Not Found",
		    "GET and DELETE need the Mcp-Session-Id of a session");
	else if (cmd == EVHTTP_REQ_GET)
		httpd_get(req, hs);
	else {
		httpd_session_free(hs);
		httpd_reply(req, 200, "OK", NULL);
	}
	json_decref(scope);
}

/* ---- the listener ---- */

int
httpd_listen(const char *addr, char **cause)
{
	char host[64];
	int port = 0, r;

	if ((r = httpd_access_addr(addr, host, sizeof host, &port, cause)) < 0)
		return r;
	if ((httpd = evhttp_new(mcpd_base)) == NULL)
		return errors_cause(cause, -ENOMEM, "out of memory");
	evhttp_set_max_body_size(httpd, (ev_ssize_t)mcpd_opts.max_message);
	evhttp_set_max_headers_size(httpd, HTTPD_HEADERS_MAX);
	evhttp_set_allowed_methods(httpd,
	    EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_DELETE);
	evhttp_set_gencb(httpd, httpd_handle, NULL);
	if (evhttp_bind_socket(httpd, host, (ev_uint16_t)port) < 0) {
		r = errors_cause(cause, -EADDRINUSE, "cannot listen on %s: %s",
		    addr, strerror(errno));
		evhttp_free(httpd);
		httpd = NULL;
		return r;
	}
	log_info("MCP over HTTP on http://%s/mcp", addr);
	return 0;
}

void
httpd_close(void)
{
	struct httpd_session *hs;

	/* mcpd stops: a stream's connection goes, with its request. */
	TAILQ_FOREACH(hs, &httpd_sessions, entry)
		if (hs->stream != NULL) {
			struct evhttp_connection *conn =
			    evhttp_request_get_connection(hs->stream);

			evhttp_connection_set_closecb(conn, NULL, NULL);
			hs->stream = NULL;
			evhttp_connection_free(conn);
		}
	while ((hs = TAILQ_FIRST(&httpd_sessions)) != NULL)
		httpd_session_free(hs);
	if (httpd != NULL)
		evhttp_free(httpd);
	httpd = NULL;
}
