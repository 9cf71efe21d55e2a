/* SPDX-License-Identifier: ISC */
/*
 * The HTTP front's connections: HTTP/1.1 read and written by mcpd itself
 * (doc/gateway.md, "The front's HTTP"). A connection serves one request
 * at a time; its head is parsed in place (common/httphead.c), its answer
 * written with the control side's send queue (one writev at the end of
 * the loop turn), and its descriptor stays watched for reading the whole
 * time, so a call costs no epoll_ctl.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "httpd-int.h"
#include "jsonrpc.h"
#include "log.h"
#include "mcpd.h"

#define HTTPD_REQ_READ_MAX (256 * 1024) /* read per readiness at most */
#define HTTPD_REQ_HEADERS  1024 /* the headers mcpd adds to one answer */

enum httpd_req_state {
	HTTPD_REQ_READING,   /* its next request is coming (or not yet) */
	HTTPD_REQ_BODY,	     /* ... its head came, its body is coming */
	HTTPD_REQ_HELD,	     /* the front has it: no answer begun */
	HTTPD_REQ_STREAMING, /* its answer began, chunked */
	HTTPD_REQ_CLOSING,   /* its last answer is going, then it closes */
	HTTPD_REQ_LINGERING  /* refused: what still comes is read, dropped */
};

struct httpd_req {
	int fd;
	struct fdread rd;	 /* what comes: rd.in */
	struct bufferevent *bev; /* what the kernel did not take at once */
	struct sendq *out;
	struct event *timer;  /* --http-header-timeout: looks at deadline_ms */
	uint64_t deadline_ms; /* reading: closed if the request is not whole */
	enum httpd_req_state state;
	bool is_dead;	   /* its connection went (or was dropped) */
	bool is_eof;	   /* its client sent all it will */
	bool is_keep;	   /* it may carry another request */
	bool is_chunked;   /* the body comes chunked */
	bool is_started;   /* reading: bytes of the request came */
	bool is_paused;	   /* served: not read, a request's worth came */
	bool is_streamed;  /* the answer is chunked (HTTP/1.1) */
	bool is_refused;   /* the front refused it before it came whole */
	size_t scanned;	   /* bytes of rd.in known to hold no head's end */
	size_t dropped;	   /* lingering: bytes read and dropped */
	size_t body_left;  /* Content-Length: bytes still to come */
	size_t chunk_left; /* chunked: bytes of this chunk still to come */
	bool in_trailer;   /* chunked: the last chunk came, its trailer not */
	bool wants_crlf;   /* chunked: the CRLF after a chunk's data */
	struct evbuffer *head_buf; /* the request's head, parsed in place */
	struct evbuffer *body;	   /* its body */
	struct httphead head;
	char added[HTTPD_REQ_HEADERS]; /* "Name: value\r\n" of the answer */
	size_t nadded;
	httpd_req_closed_fn *closed; /* hears the connection go, or NULL */
	void *closed_arg;
	uint64_t active_ms;
	char peer[64]; /* "address:port" */
	TAILQ_ENTRY(httpd_req) entry;
};

struct httpd_req_list httpd_reqs = TAILQ_HEAD_INITIALIZER(httpd_reqs);

static void httpd_req_take(struct httpd_req *);

/* ---- what a request says ---- */

const struct httphead *
httpd_req_head(const struct httpd_req *r)
{
	return &r->head;
}

const char *
httpd_req_header(const struct httpd_req *r, const char *name)
{
	return httphead_field(&r->head, name);
}

const char *
httpd_req_path(const struct httpd_req *r)
{
	return r->head.path;
}

enum httphead_method
httpd_req_method(const struct httpd_req *r)
{
	return r->head.method;
}

const char *
httpd_req_body(const struct httpd_req *r, size_t *ret_len)
{
	*ret_len = evbuffer_get_length(r->body);
	return *ret_len > 0 ? (const char *)evbuffer_pullup(r->body, -1) : "";
}

const char *
httpd_req_peer(const struct httpd_req *r)
{
	return r->peer;
}

/* ---- its end ---- */

static void
httpd_req_free(void *arg)
{
	struct httpd_req *r = arg;

	fdread_release(&r->rd);
	sendq_free(r->out);
	bufferevent_free(r->bev);
	event_free(r->timer);
	evbuffer_free(r->head_buf);
	evbuffer_free(r->body);
	free(r);
}

/*
 * The connection goes: nothing of it calls back any more and its
 * descriptor is closed. The request, if the front holds it, is freed when
 * the front ends it; else on a later loop turn.
 */
static void
httpd_req_kill(struct httpd_req *r)
{
	if (r->is_dead)
		return;
	r->is_dead = true;
	TAILQ_REMOVE(&httpd_reqs, r, entry);
	fdread_disable(&r->rd);
	evtimer_del(r->timer);
	bufferevent_disable(r->bev, EV_READ | EV_WRITE);
	bufferevent_setcb(r->bev, NULL, NULL, NULL, NULL);
	bufferevent_setfd(r->bev, -1); /* the send queue drops what is left */
	close(r->fd);
	r->fd = -1;
	if (r->state != HTTPD_REQ_HELD && r->state != HTTPD_REQ_STREAMING)
		defer_call(httpd_req_free, r);
}

/* Its client went: the front hears it if it asked, and ends the request. */
static void
httpd_req_lost(struct httpd_req *r)
{
	httpd_req_closed_fn *fn = r->closed;

	r->closed = NULL;
	httpd_req_kill(r);
	if (fn != NULL)
		fn(r, r->closed_arg);
}

void
httpd_req_on_close(struct httpd_req *r, httpd_req_closed_fn *fn, void *arg)
{
	r->closed = fn;
	r->closed_arg = arg;
	r->active_ms = mcpd_now_ms();
}

/*
 * Writes that wait for the kernel are bounded by --http-header-timeout,
 * except a stream's (its client is bounded by --max-client-output).
 */
static void
httpd_req_writes_timed(struct httpd_req *r)
{
	struct timeval tv = { mcpd_opts.http_header_timeout_ms / 1000,
		(mcpd_opts.http_header_timeout_ms % 1000) * 1000 };

	bufferevent_set_timeouts(r->bev, NULL, &tv);
}

static void
httpd_req_arm_in(struct httpd_req *r, uint64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000),
		(suseconds_t)(ms % 1000) * 1000 };

	evtimer_add(r->timer, &tv);
}

/*
 * From now, the connection has --http-header-timeout to send a whole
 * request. The timer is not moved for each request (a heap operation):
 * when it fires it looks at the deadline, and it is armed again only if
 * it is not pending.
 */
static void
httpd_req_arm(struct httpd_req *r)
{
	uint64_t ms = (uint64_t)mcpd_opts.http_header_timeout_ms;

	r->deadline_ms = mcpd_now_ms() + ms;
	if (!evtimer_pending(r->timer, NULL))
		httpd_req_arm_in(r, ms);
}

/* A request did not come whole in time. */
static void
httpd_req_timeout(evutil_socket_t fd, short events, void *arg)
{
	struct httpd_req *r = arg;
	uint64_t now = mcpd_now_ms();

	(void)fd, (void)events;
	if (r->state != HTTPD_REQ_READING && r->state != HTTPD_REQ_BODY &&
	    r->state != HTTPD_REQ_LINGERING)
		return; /* served: armed again when it is answered */
	if (now < r->deadline_ms) {
		httpd_req_arm_in(r, r->deadline_ms - now);
		return;
	}
	if (r->state == HTTPD_REQ_LINGERING) {
		log_debug(
		    "HTTP front: %s did not close within --http-header-timeout after its refusal: its connection is closed",
		    r->peer);
		httpd_req_kill(r);
		return;
	}
	log_debug(
	    "HTTP front: %s sent no whole request for --http-header-timeout: its connection is closed",
	    r->peer);
	httpd_req_lost(r);
}

/* A request's worth of bytes: a head and a body at their largest. */
static size_t
httpd_req_worth(void)
{
	return HTTPD_HEADERS_MAX + mcpd_opts.max_message;
}

/*
 * Its last answer went. A client whose request was refused before it all
 * came may still be sending it; were the descriptor closed with its bytes
 * unread, the kernel would answer them with a reset, and a client can
 * lose the refusal to it. So the front says it sends no more and reads
 * and drops what comes until the client's own close, for at most
 * --http-header-timeout and a request's worth.
 */
static void
httpd_req_closed_down(struct httpd_req *r)
{
	if (!r->is_refused || r->is_eof || shutdown(r->fd, SHUT_WR) == -1) {
		httpd_req_kill(r);
		return;
	}
	r->state = HTTPD_REQ_LINGERING;
	r->dropped = 0;
	evbuffer_drain(r->rd.in, evbuffer_get_length(r->rd.in));
	httpd_req_arm(r);
	fdread_enable(&r->rd);
}

/* The request was answered: the connection waits for the next, or goes. */
static void
httpd_req_done(struct httpd_req *r)
{
	r->active_ms = mcpd_now_ms();
	r->closed = NULL;
	r->nadded = 0;
	r->is_started = false;
	evbuffer_drain(r->head_buf, evbuffer_get_length(r->head_buf));
	evbuffer_drain(r->body, evbuffer_get_length(r->body));
	if (r->is_dead) {
		defer_call(httpd_req_free, r);
		return;
	}
	if (!r->is_keep || r->is_eof) {
		r->state = HTTPD_REQ_CLOSING;
		fdread_disable(&r->rd);
		sendq_flush(r->out);
		if (sendq_length(r->out) == 0)
			httpd_req_closed_down(r);
		return; /* else when the bufferevent has written the rest */
	}
	r->state = HTTPD_REQ_READING;
	httpd_req_arm(r);
	if (r->is_paused) /* it stopped for pipelined bytes */
		fdread_enable(&r->rd);
	r->is_paused = false;
	if (evbuffer_get_length(r->rd.in) > 0)
		fdread_kick(&r->rd); /* the next request came already */
}

/* ---- answers ---- */

static const char *
httpd_req_reason(int status)
{
	switch (status) {
	case 100:
		return "Continue";
	case 200:
		return "OK";
	case 202:
		return "Accepted";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 409:
		return "Conflict";
	case 413:
		return "Content Too Large";
	case 431:
		return "Request Header Fields Too Large";
	case 501:
		return "Not Implemented";
	case 503:
		return "Service Unavailable";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return status < 400 ? "OK" : "Error";
	}
}

/* Appends s to the head being made at *p (with room: see the callers). */
static char *
httpd_req_put(char *p, const char *s, size_t len)
{
	memcpy(p, s, len);
	return p + len;
}

#define HTTPD_REQ_PUT(p, lit) httpd_req_put(p, lit, sizeof lit - 1)

void
httpd_req_add_header(struct httpd_req *r, const char *name, const char *value)
{
	size_t nlen = strlen(name), vlen = strlen(value);
	char *p = r->added + r->nadded;

	/* Every header is mcpd's own, of known size. */
	if (nlen + vlen + 4 > sizeof r->added - r->nadded)
		fatalx("HTTP front: the headers of an answer are too long");
	p = httpd_req_put(p, name, nlen);
	p = HTTPD_REQ_PUT(p, ": ");
	p = httpd_req_put(p, value, vlen);
	p = HTTPD_REQ_PUT(p, "\r\n");
	r->nadded = (size_t)(p - r->added);
}

void
httpd_req_close_after(struct httpd_req *r)
{
	r->is_keep = false;
}

/* The Date header of every answer (RFC 9110 6.6.1), made once a second. */
static const char *
httpd_req_date(void)
{
	/* RFC 9110's names, whatever the locale. */
	static const char days[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu",
		"Fri", "Sat" };
	static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May",
		"Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	static char date[64];
	static time_t made = (time_t)-1;
	time_t now = time(NULL);
	struct tm tm;

	if (now != made) {
		gmtime_r(&now, &tm);
		snprintf(date, sizeof date, "%s, %02d %s %d %02d:%02d:%02d GMT",
		    days[tm.tm_wday % 7], tm.tm_mday, months[tm.tm_mon % 12],
		    tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
		made = now;
	}
	return date;
}

/*
 * The answer's head into the send queue: its status line, the headers
 * added, its framing (a length, chunked, or its close), Connection.
 */
static void
httpd_req_put_head(struct httpd_req *r, int status, const size_t *len)
{
	char head[HTTPD_REQ_HEADERS + 256], *p = head, num[JSONRPC_INT_MAX];
	const char *reason = httpd_req_reason(status), *date = httpd_req_date();

	p = HTTPD_REQ_PUT(p, "HTTP/1.1 ");
	p = httpd_req_put(p, num, jsonrpc_format_int(num, status));
	*p++ = ' ';
	p = httpd_req_put(p, reason, strlen(reason));
	p = HTTPD_REQ_PUT(p, "\r\nDate: ");
	p = httpd_req_put(p, date, strlen(date));
	p = HTTPD_REQ_PUT(p, "\r\n");
	p = httpd_req_put(p, r->added, r->nadded);
	if (len != NULL) {
		p = HTTPD_REQ_PUT(p, "Content-Length: ");
		p = httpd_req_put(p, num,
		    jsonrpc_format_int(num, (int64_t)*len));
		p = HTTPD_REQ_PUT(p, "\r\n");
	} else if (r->head.minor >= 1) {
		r->is_streamed = true;
		p = HTTPD_REQ_PUT(p, "Transfer-Encoding: chunked\r\n");
	} else
		r->is_keep = false; /* HTTP/1.0: the close ends the stream */
	if (!r->is_keep)
		p = HTTPD_REQ_PUT(p, "Connection: close\r\n");
	else if (r->head.minor == 0)
		p = HTTPD_REQ_PUT(p, "Connection: keep-alive\r\n");
	p = HTTPD_REQ_PUT(p, "\r\n");
	evbuffer_add(sendq_buffer(r->out), head, (size_t)(p - head));
}

void
httpd_req_reply_buf(struct httpd_req *r, int status, struct evbuffer *body)
{
	size_t len = body != NULL ? evbuffer_get_length(body) : 0;

	if (!r->is_dead) {
		httpd_req_put_head(r, status, &len);
		if (len > 0)
			evbuffer_add_buffer(sendq_buffer(r->out), body);
	}
	httpd_req_done(r);
}

void
httpd_req_reply(struct httpd_req *r, int status, const char *body, size_t len)
{
	if (!r->is_dead) {
		httpd_req_put_head(r, status, &len);
		if (len > 0)
			evbuffer_add(sendq_buffer(r->out), body, len);
	}
	httpd_req_done(r);
}

void
httpd_req_start(struct httpd_req *r, int status)
{
	r->state = HTTPD_REQ_STREAMING;
	r->is_streamed = false;
	if (!r->is_dead)
		httpd_req_put_head(r, status, NULL);
	/* A stream may be quiet as long as it likes; its reader is bounded by
	 * --max-client-output. */
	bufferevent_set_timeouts(r->bev, NULL, NULL);
}

void
httpd_req_chunk(struct httpd_req *r, struct evbuffer *data)
{
	struct evbuffer *q;
	size_t len = evbuffer_get_length(data);
	char size[32];

	if (r->is_dead || len == 0) {
		evbuffer_drain(data, len);
		return;
	}
	q = sendq_buffer(r->out);
	if (r->is_streamed) {
		evbuffer_add(q, size,
		    (size_t)snprintf(size, sizeof size, "%zx\r\n", len));
		evbuffer_add_buffer(q, data);
		evbuffer_add(q, "\r\n", 2);
	} else
		evbuffer_add_buffer(q, data);
}

void
httpd_req_end(struct httpd_req *r)
{
	if (r->state == HTTPD_REQ_STREAMING && !r->is_dead && r->is_streamed)
		evbuffer_add(sendq_buffer(r->out), "0\r\n\r\n", 5);
	if (!r->is_dead)
		httpd_req_writes_timed(r);
	httpd_req_done(r);
}

void
httpd_req_drop(struct httpd_req *r)
{
	r->closed = NULL;
	httpd_req_kill(r);
	httpd_req_done(r);
}

size_t
httpd_req_unsent(const struct httpd_req *r)
{
	return r->is_dead ? 0 : sendq_length(r->out);
}

/* An answer of the front's own to a request it cannot serve; it closes. */
static void
httpd_req_refuse(struct httpd_req *r, int status, const char *why)
{
	r->state = HTTPD_REQ_HELD;
	r->is_keep = false;
	r->is_refused = true;
	if (status == 405)
		httpd_req_add_header(r, "Allow", "GET, POST, DELETE");
	httpd_refuse(r, status, why);
}

/* ---- reading ---- */

/* The whole request came: the front has it until it ends it. */
static void
httpd_req_serve(struct httpd_req *r)
{
	r->state = HTTPD_REQ_HELD;
	r->active_ms = mcpd_now_ms();
	if (r->head.method == HTTPHEAD_OTHER)
		httpd_req_refuse(r, 405, "MCP takes POST, GET and DELETE");
	else
		httpd_handle(r);
}

/* Moves what came of a chunked body into r->body; -1: malformed. */
static int
httpd_req_dechunk(struct httpd_req *r)
{
	struct evbuffer *in = r->rd.in;
	size_t n, eol, size;
	struct evbuffer_ptr at;
	char *line;

	for (;;) {
		if (r->chunk_left > 0) {
			n = evbuffer_get_length(in) < r->chunk_left ?
			    evbuffer_get_length(in) :
			    r->chunk_left;
			if (n == 0)
				return 0;
			evbuffer_remove_buffer(in, r->body, n);
			r->chunk_left -= n;
			continue;
		}
		at = evbuffer_search_eol(in, NULL, &eol, EVBUFFER_EOL_CRLF);
		if (at.pos < 0)
			return evbuffer_get_length(in) > 1024 ? -1 : 0;
		line = (char *)evbuffer_pullup(in, at.pos + (ev_ssize_t)eol);
		if (r->in_trailer) {
			evbuffer_drain(in, (size_t)at.pos + eol);
			if (at.pos == 0)
				return 1; /* the empty line after the trailer */
			continue;
		}
		if (r->wants_crlf) {
			if (at.pos != 0)
				return -1;
			evbuffer_drain(in, eol);
			r->wants_crlf = false;
			continue;
		}
		if (httphead_chunk_size(line, (size_t)at.pos, SIZE_MAX / 2,
			&size) < 0)
			return -1;
		if (size > mcpd_opts.max_message - evbuffer_get_length(r->body))
			return -413;
		evbuffer_drain(in, (size_t)at.pos + eol);
		r->in_trailer = size == 0;
		r->chunk_left = size;
		r->wants_crlf = size > 0;
	}
}

/* The body of the request, as far as it came; then it is served. */
static void
httpd_req_take_body(struct httpd_req *r)
{
	size_t n;
	int d;

	if (r->is_chunked) {
		if ((d = httpd_req_dechunk(r)) < 0) {
			httpd_req_refuse(r, d == -413 ? 413 : 400,
			    d == -413 ? "the body is over --max-message" :
					"the chunked body is malformed");
			return;
		}
		if (d == 0)
			return;
	} else if (r->body_left > 0) {
		n = evbuffer_get_length(r->rd.in) < r->body_left ?
		    evbuffer_get_length(r->rd.in) :
		    r->body_left;
		evbuffer_remove_buffer(r->rd.in, r->body, n);
		if ((r->body_left -= n) > 0)
			return;
	}
	httpd_req_serve(r);
}

static const char *
httpd_req_why(int status)
{
	switch (status) {
	case 413:
		return "the body is over --max-message";
	case 431:
		return "the request's header fields are too many or too long";
	case 501:
		return "a body can come chunked or with Content-Length only";
	case 505:
		return "this is HTTP/1.1";
	default:
		return "the request is not HTTP/1.1";
	}
}

/* The head of the request, when it came whole. */
static void
httpd_req_take_head(struct httpd_req *r)
{
	size_t len = evbuffer_get_length(r->rd.in), end;
	size_t look = len < HTTPD_HEADERS_MAX ? len : HTTPD_HEADERS_MAX;
	const char *text = (const char *)evbuffer_pullup(r->rd.in,
	    (ev_ssize_t)look);
	int status;

	if ((end = httphead_end(text, look, r->scanned)) == 0) {
		r->scanned = look;
		if (look == HTTPD_HEADERS_MAX)
			httpd_req_refuse(r, 431, httpd_req_why(431));
		return;
	}
	r->scanned = 0;
	evbuffer_remove_buffer(r->rd.in, r->head_buf, end);
	if ((status = httphead_parse((char *)evbuffer_pullup(r->head_buf, -1),
		 end, &r->head)) != 0 ||
	    (status = httphead_body(&r->head, mcpd_opts.max_message,
		 &r->body_left, &r->is_chunked)) != 0) {
		httpd_req_refuse(r, status, httpd_req_why(status));
		return;
	}
	r->is_keep = httphead_keeps_alive(&r->head);
	r->chunk_left = 0;
	r->in_trailer = r->wants_crlf = false;
	r->state = HTTPD_REQ_BODY;
	if ((r->is_chunked || r->body_left > evbuffer_get_length(r->rd.in)) &&
	    httphead_expects_continue(&r->head))
		evbuffer_add(sendq_buffer(r->out),
		    "HTTP/1.1 100 Continue\r\n\r\n", 25);
	httpd_req_take_body(r);
}

/* What came: the next request, or part of it. */
static void
httpd_req_take(struct httpd_req *r)
{
	if (r->state == HTTPD_REQ_READING) {
		/* Empty lines between requests are allowed (RFC 9112 2.2). */
		httpd_req_take_head(r);
	} else if (r->state == HTTPD_REQ_BODY)
		httpd_req_take_body(r);
}

static void
httpd_req_read(void *arg)
{
	struct httpd_req *r = arg;

	if (r->state == HTTPD_REQ_READING && !r->is_started) {
		r->is_started =
		    true; /* idle until now: the request's own time */
		r->deadline_ms = mcpd_now_ms() +
		    (uint64_t)mcpd_opts.http_header_timeout_ms;
	}
	if (r->state == HTTPD_REQ_READING || r->state == HTTPD_REQ_BODY) {
		httpd_req_take(r);
		return;
	}
	if (r->state == HTTPD_REQ_LINGERING) {
		r->dropped += evbuffer_get_length(r->rd.in);
		evbuffer_drain(r->rd.in, evbuffer_get_length(r->rd.in));
		if (r->dropped > httpd_req_worth()) {
			log_debug(
			    "HTTP front: %s sent over a request's worth after its refusal: its connection is closed",
			    r->peer);
			httpd_req_kill(r);
		}
		return;
	}
	/* Held: what comes waits, up to a request's worth. */
	if (evbuffer_get_length(r->rd.in) > httpd_req_worth()) {
		r->is_paused = true;
		fdread_disable(&r->rd);
	}
}

static void
httpd_req_read_end(void *arg, int error)
{
	struct httpd_req *r = arg;

	/*
	 * A client that sent its request and then all it will (a half
	 * close) is answered, unless the front asked to hear its going.
	 */
	if (error == 0 && r->state == HTTPD_REQ_HELD && r->closed == NULL) {
		r->is_eof = true;
		fdread_disable(&r->rd);
		return;
	}
	httpd_req_lost(r);
}

/* The bufferevent wrote what the kernel had not taken at once. */
static void
httpd_req_written(struct bufferevent *bev, void *arg)
{
	struct httpd_req *r = arg;

	(void)bev;
	if (r->state == HTTPD_REQ_CLOSING)
		httpd_req_closed_down(r);
}

static void
httpd_req_event(struct bufferevent *bev, short what, void *arg)
{
	struct httpd_req *r = arg;

	(void)bev, (void)what;
	httpd_req_lost(r);
}

/* A connection accepted on fd from peer. */
void
httpd_req_new(int fd, const char *peer)
{
	struct httpd_req *r = xcalloc(1, sizeof *r);

	r->fd = fd;
	snprintf(r->peer, sizeof r->peer, "%s", peer);
	if ((r->bev = bufferevent_socket_new(mcpd_base, fd, 0)) == NULL ||
	    (r->head_buf = evbuffer_new()) == NULL ||
	    (r->body = evbuffer_new()) == NULL ||
	    (r->timer = evtimer_new(mcpd_base, httpd_req_timeout, r)) == NULL)
		fatalx("out of memory");
	r->out = sendq_new(r->bev);
	bufferevent_setcb(r->bev, NULL, httpd_req_written, httpd_req_event, r);
	bufferevent_enable(r->bev, EV_WRITE);
	httpd_req_writes_timed(r);
	fdread_init(&r->rd, fd, HTTPD_REQ_READ_MAX, httpd_req_read,
	    httpd_req_read_end, r);
	r->active_ms = mcpd_now_ms();
	TAILQ_INSERT_HEAD(&httpd_reqs, r, entry);
	httpd_req_arm(r);
	fdread_enable(&r->rd);
}

size_t
httpd_req_close_quiet(uint64_t quiet_ms)
{
	struct httpd_req *r, *next;
	uint64_t now = mcpd_now_ms();
	size_t left = 0;

	for (r = TAILQ_FIRST(&httpd_reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, entry);
		if (r->state != HTTPD_REQ_READING && r->state != HTTPD_REQ_BODY)
			continue; /* answering, or a stream: it ends */
		if (now - r->active_ms >= quiet_ms)
			httpd_req_kill(r);
		else
			left++;
	}
	return left;
}

void
httpd_req_close_all(void)
{
	struct httpd_req *r;

	while ((r = TAILQ_FIRST(&httpd_reqs)) != NULL)
		httpd_req_kill(r);
}
