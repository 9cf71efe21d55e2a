/* SPDX-License-Identifier: ISC */
/*
 * The HTTP front's answers: JSON, or an event stream of a call's own (its
 * progress, log messages and the server's requests before its answer),
 * resumed with Last-Event-ID in the 2025 era; and what else the gateway
 * says, routed to the stream it belongs on.
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "errors.h"
#include "httpd-int.h"
#include "jsonscan.h"
#include "log.h"
#include "mcpd.h"

static void httpd_stream_gone(struct httpd_req *, void *);

/* Its exchange's close no longer concerns the request. */
static void
httpd_stream_unwatch(struct httpd_pending *p)
{
	if (p->req != NULL)
		httpd_req_on_close(p->req, NULL, NULL);
}

/*
 * Its client's going is heard: a 2025 call's stream keeps what follows
 * for its client to resume; a 2026-07-28 request is cancelled.
 */
static void
httpd_stream_watch(struct httpd_pending *p)
{
	httpd_req_on_close(p->req, httpd_stream_gone, p);
}

/* Frees p; its exchange, if any is left, was answered or ends here. */
void
httpd_stream_free(struct httpd_pending *p, bool is_answered)
{
	TAILQ_REMOVE(&p->hs->pending, p, entry);
	httpd_session_touch(p->hs);
	httpd_stream_unwatch(p);
	if (p->req != NULL && p->stream != 0)
		httpd_req_end(p->req);
	else if (p->req != NULL && !is_answered)
		httpd_refuse(p->req, 503,
		    "the session ended before its answer");
	if (p->missed != NULL)
		evbuffer_free(p->missed);
	if (p->later != NULL)
		event_free(p->later);
	json_decref(p->id);
	json_decref(p->token);
	free(p);
}

size_t
httpd_stream_held(const struct httpd_session *hs)
{
	const struct httpd_pending *p;
	size_t n = 0;

	if (hs->stream != NULL)
		n += httpd_req_unsent(hs->stream);
	TAILQ_FOREACH(p, &hs->pending, entry) {
		if (p->req != NULL && p->stream != 0)
			n += httpd_req_unsent(p->req);
		if (p->missed != NULL)
			n += evbuffer_get_length(p->missed);
	}
	return n;
}

bool
httpd_stream_is_busy(const struct httpd_session *hs)
{
	const struct httpd_pending *p;

	if (hs->stream != NULL)
		return true;
	TAILQ_FOREACH(p, &hs->pending, entry)
		if (!p->is_done)
			return true;
	return false;
}

/*
 * Whether a stream's client keeps up: what waits to go to it, with len
 * more, stays within --max-client-output. A client that does not read
 * makes mcpd hold no more than that per stream.
 */
static bool
httpd_stream_keeps_up(struct httpd_req *req, size_t len)
{
	return httpd_req_unsent(req) + len <= mcpd_opts.max_client_output;
}

/* Drops the connection of a stream whose client does not read. */
static void
httpd_stream_drop(struct httpd_req *req, const char *what)
{
	log_warnx(
	    "HTTP front: the client of %s does not read it; past --max-client-output (%zu bytes) its connection is closed",
	    what, mcpd_opts.max_client_output);
	httpd_req_drop(req);
}

#define HTTPD_EVENT_SMALL (64 * 1024) /* larger: a block of its own size */

#define HTTPD_EVENT_ID_MAX (2 * JSONRPC_INT_MAX + 8)

/* "id: <stream>-<n>\n" into text (HTTPD_EVENT_ID_MAX), without printf. */
static size_t
httpd_stream_event_id(char *text, unsigned stream, unsigned n)
{
	size_t len = 4;

	memcpy(text, "id: ", 4);
	len += jsonrpc_format_int(text + len, stream);
	text[len++] = '-';
	len += jsonrpc_format_int(text + len, n);
	text[len++] = '\n';
	return len;
}

/*
 * One event of a message: "id: <stream>-<n>" when p (resumable), then
 * "event: message" and its data; no printf on the way of every answer.
 */
static void
httpd_stream_event(struct evbuffer *buf, struct httpd_pending *p,
    const char *line, size_t len)
{
	static const char event[] = "event: message\ndata: ";
	char head[HTTPD_EVENT_ID_MAX + sizeof event];
	size_t n = 0;
	struct evbuffer_iovec v;

	if (p != NULL)
		n = httpd_stream_event_id(head, p->stream, ++p->events);
	memcpy(head + n, event, sizeof event - 1);
	n += sizeof event - 1;
	if (len > HTTPD_EVENT_SMALL) {
		xenomem(jsonrpc_add_big(buf,
		    (struct iovec[]){ { head, n },
			{ (void *)(uintptr_t)line, len } },
		    2));
		/*
		 * The end in a small block of its own: a buffer appends to a
		 * block it cannot write in (a big one) with a new block as
		 * large, so that the "\r\n" libevent puts after a chunk would
		 * cost as much as the event.
		 */
		if (evbuffer_reserve_space(buf, 64, &v, 1) != 1)
			fatalx("out of memory");
		memcpy(v.iov_base, "\n\n", 2);
		v.iov_len = 2;
		if (evbuffer_commit_space(buf, &v, 1) < 0)
			fatalx("out of memory");
	} else {
		evbuffer_add(buf, head, n);
		evbuffer_add(buf, line, len);
		evbuffer_add(buf, "\n\n", 2);
	}
}

/*
 * A notification of the gateway: on the GET stream when there is one,
 * else kept for the next one; a GET stream that is not read goes (the
 * client may open another).
 */
void
httpd_stream_notify(struct httpd_session *hs, const char *line, size_t len)
{
	struct evbuffer *buf;

	if (hs->stream != NULL && !httpd_stream_keeps_up(hs->stream, len)) {
		httpd_stream_drop(hs->stream, "a session's GET stream");
		hs->stream = NULL;
	}
	if (hs->stream == NULL) {
		httpd_unheard_keep(hs, line, len);
		return;
	}
	if ((buf = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
	httpd_stream_event(buf, NULL, line, len);
	httpd_req_chunk(hs->stream, buf);
	evbuffer_free(buf);
}

void
httpd_stream_headers(struct httpd_req *req)
{
	httpd_req_add_header(req, "Content-Type", "text/event-stream");
	httpd_req_add_header(req, "Cache-Control", "no-cache");
	httpd_req_add_header(req, "X-Accel-Buffering", "no");
}

/* The first event of a resumable stream: its id, and when to come back. */
static void
httpd_stream_priming(struct evbuffer *buf, unsigned stream)
{
	static const char retry[] = "retry: ", data[] = "\ndata: \n\n";
	char text[HTTPD_EVENT_ID_MAX + sizeof retry + JSONRPC_INT_MAX +
	    sizeof data];
	size_t n = httpd_stream_event_id(text, stream, 0);

	memcpy(text + n, retry, sizeof retry - 1);
	n += sizeof retry - 1;
	n += jsonrpc_format_int(text + n, HTTPD_RETRY_MS);
	memcpy(text + n, data, sizeof data - 1);
	n += sizeof data - 1;
	evbuffer_add(buf, text, n);
}

/* Answers p's POST with an event stream (2025 era: resumable). */
static void
httpd_stream_start(struct httpd_pending *p)
{
	struct evbuffer *buf;

	p->stream = ++p->hs->streams;
	if (p->later != NULL)
		evtimer_del(p->later);
	httpd_stream_headers(p->req);
	httpd_req_start(p->req, 200);
	httpd_stream_watch(p);
	if (p->hs->is_stateless)
		return; /* 2026-07-28 streams are not resumed */
	if ((buf = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
	httpd_stream_priming(buf, p->stream);
	httpd_req_chunk(p->req, buf);
	evbuffer_free(buf);
}

/* What a session keeps for clients that may resume, in bytes. */
static size_t
httpd_stream_kept(const struct httpd_session *hs)
{
	const struct httpd_pending *p;
	size_t n = 0;

	TAILQ_FOREACH(p, &hs->pending, entry)
		if (p->missed != NULL)
			n += evbuffer_get_length(p->missed);
	return n;
}

/*
 * One message on p's stream, or kept for when its client resumes; false
 * when the session would keep more than --max-client-output, or the
 * stream's client does not read what it was sent (the stream is given up).
 */
static bool
httpd_stream_send(struct httpd_pending *p, const char *line, size_t len)
{
	struct evbuffer *buf;

	if (p->req != NULL && !httpd_stream_keeps_up(p->req, len)) {
		httpd_stream_drop(p->req, "a call's stream");
		p->req = NULL;
		return false;
	}
	buf = p->req != NULL ? evbuffer_new() : p->missed;

	if (buf == NULL)
		fatal("evbuffer_new");
	httpd_stream_event(buf, p->hs->is_stateless ? NULL : p, line, len);
	if (p->req != NULL) {
		httpd_req_chunk(p->req, buf);
		evbuffer_free(buf);
		return true;
	}
	return httpd_stream_kept(p->hs) <= mcpd_opts.max_client_output;
}

/* A stream whose client went kept too much: it cannot be resumed. */
static void
httpd_stream_give_up(struct httpd_pending *p)
{
	log_warnx(
	    "HTTP front: what clients that may resume missed is over --max-client-output (%zu bytes); a call's stream is given up",
	    mcpd_opts.max_client_output);
	httpd_stream_free(p, true);
}

/* The POST's client went: 2026-07-28 cancels; 2025 keeps what follows. */
static void
httpd_stream_gone(struct httpd_req *req, void *arg)
{
	struct httpd_pending *p = arg;

	p->req = NULL;
	/* Its connection went; ending the request is what frees it. */
	if (p->stream != 0)
		httpd_req_end(req);
	else
		httpd_req_reply(req, 503, NULL, 0);
	if (p->hs->is_stateless) {
		httpd_session_free(p->hs); /* its calls are cancelled */
		return;
	}
	if ((p->missed = evbuffer_new()) == NULL)
		fatal("evbuffer_new");
}

/* Keeps at most HTTPD_KEPT_ANSWERS answers of streams nobody resumed. */
static void
httpd_stream_trim(struct httpd_session *hs)
{
	struct httpd_pending *p, *oldest = NULL;
	unsigned n = 0;

	TAILQ_FOREACH(p, &hs->pending, entry)
		if (p->is_done && n++ == 0)
			oldest = p;
	if (n > HTTPD_KEPT_ANSWERS)
		httpd_stream_free(oldest, true);
}

/*
 * The answer came before the stream had to start: the whole stream (its
 * priming event, the answer's event) is one reply with a length, one
 * write instead of a chunk for each (doc/gateway.md).
 */
static void
httpd_stream_whole(struct httpd_pending *p, const char *line, size_t len)
{
	struct evbuffer *buf = evbuffer_new();

	if (buf == NULL)
		fatal("evbuffer_new");
	p->stream = ++p->hs->streams;
	httpd_stream_priming(buf, p->stream);
	httpd_stream_event(buf, p, line, len);
	/*
	 * Its type alone: a reply with a length is neither cached nor held
	 * back by a proxy, and each header more is a tenth of its head's cost.
	 */
	httpd_req_add_header(p->req, "Content-Type", "text/event-stream");
	httpd_req_reply_buf(p->req, 200, buf);
	evbuffer_free(buf);
	p->req = NULL;
	p->stream = 0; /* nothing of it is left to end */
}

static void
httpd_stream_later_due(evutil_socket_t fd, short events, void *arg)
{
	struct httpd_pending *p = arg;

	(void)fd, (void)events;
	if (p->stream == 0 && p->req != NULL)
		httpd_stream_start(p);
}

/*
 * A 2025 call that accepts an event stream: its stream starts when
 * something of it other than its answer comes (progress, a message, a
 * request of the server's) or after --http-stream-after, so that a long
 * call's client has an event id to resume from; an answer that comes
 * first goes as one whole stream. 0: at once.
 */
static void
httpd_stream_defer(struct httpd_pending *p)
{
	struct timeval tv = { mcpd_opts.http_stream_after_ms / 1000,
		(mcpd_opts.http_stream_after_ms % 1000) * 1000 };

	if (mcpd_opts.http_stream_after_ms == 0) {
		httpd_stream_start(p);
		return;
	}
	if ((p->later = evtimer_new(mcpd_base, httpd_stream_later_due, p)) ==
	    NULL)
		fatal("evtimer_new");
	evtimer_add(p->later, &tv);
}

/*
 * The answer of p (msg, line; msg may be NULL in a 2025 session, which
 * does not need it, and for a 2026-07-28 result with its resultType).
 * True when that ended (and freed) a one-request session.
 */
static bool
httpd_stream_answer(struct httpd_session *hs, struct httpd_pending *p,
    json_t *msg, const char *line, size_t len)
{
	json_t *result = json_object_get(msg, "result");
	char *text = NULL;

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
		if (!httpd_stream_send(p, line, len))
			httpd_stream_give_up(p);
		else {
			p->is_done = true;
			httpd_session_touch(hs);
			httpd_stream_trim(hs);
		}
		free(text);
		return false;
	}
	if (p->stream != 0)
		httpd_stream_send(p, line, len);
	else if (p->req != NULL && p->later != NULL)
		httpd_stream_whole(p, line, len);
	else if (p->req != NULL) {
		httpd_stream_unwatch(p);
		if (p->is_initialize && !hs->is_stateless)
			httpd_req_add_header(p->req, "Mcp-Session-Id", hs->id);
		httpd_req_add_header(p->req, "Content-Type",
		    "application/json");
		httpd_req_reply(p->req,
		    hs->is_stateless ? httpd_modern_status(msg) : 200, line,
		    len);
		p->req = NULL;
	}
	free(text);
	httpd_stream_free(p, true);
	if (!hs->is_stateless || !TAILQ_EMPTY(&hs->pending))
		return false;
	httpd_session_free(hs);
	return true;
}

/* The pending call what the gateway says (a progress token's, else the
 * oldest call's with a stream) belongs on, or NULL. */
static struct httpd_pending *
httpd_stream_call_of(struct httpd_session *hs, const json_t *token)
{
	struct httpd_pending *p;

	TAILQ_FOREACH(p, &hs->pending, entry)
		if (!p->is_done && p->wants_sse &&
		    (token != NULL ? json_equal(p->token, token) : p->is_call))
			return p;
	return NULL;
}

/* The open subscriptions/listen whose id a notification carries, or NULL. */
static struct httpd_pending *
httpd_stream_listen_of(struct httpd_session *hs, const json_t *sub)
{
	struct httpd_pending *p;

	TAILQ_FOREACH(p, &hs->pending, entry)
		if (!p->is_done && p->is_listen && p->wants_sse &&
		    json_equal(p->id, sub))
			return p;
	return NULL;
}

/*
 * A message of the gateway that is no answer: a listen's notification
 * (its subscriptionId) to that listen's stream, progress to its call's
 * stream, a log message or a server's request to a call's stream, else to
 * the GET stream. A request nobody can get is refused to the gateway.
 */
static void
httpd_stream_route(struct httpd_session *hs, const json_t *msg,
    const char *line, size_t len)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	const json_t *id = json_object_get(msg, "id");
	const json_t *sub = json_object_get(json_object_get(json_object_get(msg,
								"params"),
						"_meta"),
	    "io.modelcontextprotocol/subscriptionId");
	struct httpd_pending *p = NULL;
	json_t *refusal;
	char *text;

	if (sub != NULL)
		p = httpd_stream_listen_of(hs, sub);
	else if (strcmp(method, "notifications/progress") == 0)
		p = httpd_stream_call_of(hs,
		    json_object_get(json_object_get(msg, "params"),
			"progressToken"));
	else if (id != NULL || strcmp(method, "notifications/message") == 0)
		p = httpd_stream_call_of(hs, NULL);
	if (p != NULL && id != NULL && hs->is_stateless)
		p = NULL; /* 2026-07-28: no requests on a stream */
	if (p != NULL && p->stream == 0 && p->req != NULL)
		httpd_stream_start(p);
	if (p != NULL && p->stream != 0) {
		if (!httpd_stream_send(p, line, len))
			httpd_stream_give_up(p);
		return;
	}
	if (id == NULL || hs->stream != NULL) {
		httpd_stream_notify(hs, line, len); /* or kept for its next */
		return;
	}
	refusal = jsonrpc_error((json_t *)(uintptr_t)id, JSONRPC_INTERNAL_ERROR,
	    "the HTTP client has no stream open for requests: call with Accept: text/event-stream, or open the GET stream",
	    NULL);
	text = xnonnull(json_dumps(refusal, JSON_COMPACT));
	if (hs->client != NULL) /* read from the loop: this is its delivery */
		control_peer_queue(hs->client, text, strlen(text));
	free(text);
	json_decref(refusal);
}

/*
 * One line from the gateway: the answer of a pending request, or another
 * message. True when that ended (and freed) a one-request session.
 */
/*
 * The hot path: an answer (a result or an error, no method) in a 2025
 * session, or a result with its resultType in a 2026-07-28 one, goes to
 * its request as it is, found by its id without a parse. False for
 * anything else, which httpd_stream_line parses. *ret_gone: the answer
 * ended (and freed) a one-request session.
 */
static bool
httpd_stream_answer_text(struct httpd_session *hs, const char *line, size_t len,
    bool *ret_gone)
{
	struct jsonscan_member m[] = { { "id", false, 0, 0 },
		{ "method", false, 0, 0 }, { "result", false, 0, 0 } };
	struct jsonscan_member t[] = { { "resultType", false, 0, 0 } };
	static const char answer[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	struct httpd_pending *p;
	json_t *id;

	/*
	 * The gateway writes an answer's id first (jsonrpc_write_raw_result,
	 * jansson's order): a notification, of any size, is not scanned
	 * before it is parsed.
	 */
	if (len < sizeof answer - 1 ||
	    memcmp(line, answer, sizeof answer - 1) != 0 ||
	    jsonscan_object_in(line, len, m, 3, false, hs->is_stateless ? 2 : 3,
		t, 1) < 0 ||
	    !m[0].is_found || m[1].is_found ||
	    /* A 2026-07-28 result must say its resultType to go as it is. */
	    (hs->is_stateless && !t[0].is_found) ||
	    (id = jsonrpc_load_value(line + m[0].off, m[0].len)) == NULL)
		return false;
	TAILQ_FOREACH(p, &hs->pending, entry)
		if (!p->is_done && json_equal(p->id, id))
			break;
	json_decref(id);
	*ret_gone = p != NULL && httpd_stream_answer(hs, p, NULL, line, len);
	return true;
}

/* The value of text's member m, as jansson makes it, set as key in o. */
static void
httpd_stream_member_set(json_t *o, const char *key, const char *text,
    const struct jsonscan_member *m)
{
	json_t *v;

	if (m->is_found &&
	    (v = jsonrpc_load_value(text + m->off, m->len)) != NULL)
		json_object_set_new(o, key, v);
}

/*
 * What routing needs of a message with a method (its method, id,
 * params.progressToken and params._meta's subscriptionId), found without
 * parsing the rest: a log message of any size is not made a value only
 * to be written out again. NULL when it has no method or the scanner
 * does not vouch for it (it is then parsed).
 */
static json_t *
httpd_stream_scan(const char *line, size_t len)
{
	struct jsonscan_member top[] = { { "method", false, 0, 0 },
		{ "id", false, 0, 0 }, { "params", false, 0, 0 } };
	struct jsonscan_member params[] = { { "progressToken", false, 0, 0 },
		{ "_meta", false, 0, 0 } };
	struct jsonscan_member meta[] = {
		{ "io.modelcontextprotocol/subscriptionId", false, 0, 0 }
	};
	const char *ptext, *mtext = NULL;
	json_t *msg, *p, *m;

	if (jsonscan_object(line, len, top, 3) < 0 || !top[0].is_found ||
	    line[top[0].off] != '"')
		return NULL;
	ptext = line + top[2].off;
	if (top[2].is_found &&
	    (*ptext != '{' ||
		jsonscan_object(ptext, top[2].len, params, 2) < 0))
		return NULL;
	if (params[1].is_found) {
		mtext = ptext + params[1].off;
		if (*mtext != '{' ||
		    jsonscan_object(mtext, params[1].len, meta, 1) < 0)
			return NULL;
	}
	msg = xjson(json_object());
	httpd_stream_member_set(msg, "method", line, &top[0]);
	httpd_stream_member_set(msg, "id", line, &top[1]);
	json_object_set_new(msg, "params", p = xjson(json_object()));
	httpd_stream_member_set(p, "progressToken", ptext, &params[0]);
	if (mtext != NULL) {
		json_object_set_new(p, "_meta", m = xjson(json_object()));
		httpd_stream_member_set(m, meta[0].key, mtext, &meta[0]);
	}
	return msg;
}

bool
httpd_stream_line(struct httpd_session *hs, const char *line, size_t len)
{
	json_t *msg, *id;
	struct httpd_pending *p;
	bool is_gone = false;

	if (httpd_stream_answer_text(hs, line, len, &is_gone))
		return is_gone;
	if ((msg = httpd_stream_scan(line, len)) != NULL) {
		httpd_stream_route(hs, msg, line, len);
		json_decref(msg);
		return false;
	}
	if ((msg = jsonrpc_parse(line, len, NULL)) == NULL)
		return false;
	id = json_object_get(msg, "id");
	if (json_is_string(json_object_get(msg, "method")))
		httpd_stream_route(hs, msg, line, len);
	else if (id != NULL) {
		TAILQ_FOREACH(p, &hs->pending, entry)
			if (!p->is_done && json_equal(p->id, id))
				break;
		if (p != NULL)
			is_gone = httpd_stream_answer(hs, p, msg, line, len);
	}
	json_decref(msg);
	return is_gone;
}

static bool
httpd_stream_accepts(struct httpd_req *req)
{
	const char *accept = httpd_req_header(req, "Accept");

	return accept != NULL && strstr(accept, "text/event-stream") != NULL;
}

/* The pending answer of req (msg, a request) to the session hs. */
void
httpd_stream_new(struct httpd_session *hs, struct httpd_req *req,
    const json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	struct httpd_pending *p = xcalloc(1, sizeof *p);

	p->hs = hs;
	p->id = json_incref(json_object_get(msg, "id"));
	p->token =
	    json_incref(json_object_get(json_object_get(json_object_get(msg,
							    "params"),
					    "_meta"),
		"progressToken"));
	p->req = req;
	p->is_initialize = strcmp(method, "initialize") == 0;
	p->is_call = strcmp(method, "tools/call") == 0;
	p->is_listen = strcmp(method, "subscriptions/listen") == 0;
	p->wants_sse = (p->is_call || p->is_listen) &&
	    httpd_stream_accepts(req);
	TAILQ_INSERT_TAIL(&hs->pending, p, entry);
	if (p->wants_sse && !hs->is_stateless)
		httpd_stream_defer(p);
	else if (hs->is_stateless)
		httpd_stream_watch(p); /* its client going cancels it */
}

/*
 * A GET with Last-Event-ID "<stream>-<n>" of a call whose client went:
 * what it missed, then the rest of it. False when there is no such call
 * waiting (the GET is then the session's stream).
 */
bool
httpd_stream_resume(struct httpd_req *req, struct httpd_session *hs)
{
	const char *last = httpd_req_header(req, "Last-Event-ID");
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
	httpd_stream_headers(req);
	httpd_req_start(req, 200);
	httpd_stream_watch(p);
	httpd_req_chunk(req, p->missed);
	evbuffer_free(p->missed);
	p->missed = NULL;
	if (p->is_done)
		httpd_stream_free(p, true);
	return true;
}
