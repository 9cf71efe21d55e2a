/* SPDX-License-Identifier: ISC */
/* The HTTP front's insides: httpd.c (sessions, verbs) and httpd-stream.c. */
#ifndef MCPD_HTTPD_INT_H
#define MCPD_HTTPD_INT_H

#include <sys/queue.h>

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "httpd.h"
#include "httphead.h"
#include "linebuf.h"

#define HTTPD_HEADERS_MAX (64 * 1024) /* a request's head, in bytes */

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
	json_t *token;	       /* its _meta.progressToken, or NULL */
	struct httpd_req *req; /* NULL: its client went, may resume */
	unsigned stream;       /* 0: none yet; event ids "<stream>-<n>" */
	unsigned events;
	struct evbuffer *missed; /* events while its client was away */
	struct event *later;	 /* 2025: starts its stream if no answer came */
	bool is_initialize;
	bool is_call;	/* tools/call: what it causes goes on its stream */
	bool is_listen; /* subscriptions/listen: its notifications too */
	bool wants_sse; /* its client accepts text/event-stream */
	bool is_done;	/* answered while its client was away */
	TAILQ_ENTRY(httpd_pending) entry;
};

/*
 * One MCP session over HTTP: a control client of its own, in-process
 * (control_adopt), so that the gateway serves it as any other client.
 */
struct httpd_session {
	char id[33];
	char remote[64]; /* "address:port" of the client that initialized it */
	char *agent;
	char *path; /* "/mcp" or "/mcp/<server>": a session stays on its path */
	bool is_stateless;     /* 2026-07-28: one request, then it goes */
	unsigned streams;      /* streams begun: the next one's number */
	struct client *client; /* the control side's, NULL once it went */
	uint64_t active_ms;    /* its last request, answer or stream end */
	uint64_t active_seq;   /* ... in the order of all sessions' */
	struct event *idle_timer;
	struct linebuf delivered; /* what the control side delivers */
	TAILQ_HEAD(, httpd_pending) pending;
	struct httpd_req *stream; /* the GET stream, or NULL */
	/* Told while it had none, since it had one (httpd-unheard.c). */
	bool has_listened;
	bool is_unheard_over; /* ... some were dropped: over the limit */
	json_t *unheard;      /* ... the notifications' lines, or NULL */
	size_t unheard_bytes;
	TAILQ_ENTRY(httpd_session) entry;
};

TAILQ_HEAD(httpd_session_list, httpd_session);

/* httpd-unheard.c */
/* line, a notification for hs, kept while hs has no GET stream. */
void httpd_unheard_keep(struct httpd_session *hs, const char *line, size_t len);
/* hs has a GET stream now: what was kept for it goes on it first. */
void httpd_unheard_send(struct httpd_session *hs);
/* Frees what hs kept. */
void httpd_unheard_free(struct httpd_session *hs);
/* What hs kept, for an upgrade, and takes it back. */
json_t *httpd_unheard_save(const struct httpd_session *hs);
void httpd_unheard_adopt(struct httpd_session *hs, const json_t *saved);

/*
 * httpd-req.c: a connection and the one request it serves at a time. A
 * request is the front's from httpd_handle until it ends it (a reply, a
 * stream's end, a drop); a connection that goes meanwhile keeps it until
 * then, and writes nothing more.
 */
struct httpd_req;
TAILQ_HEAD(httpd_req_list, httpd_req);
extern struct httpd_req_list httpd_reqs;
typedef void httpd_req_closed_fn(struct httpd_req *, void *);
/* A connection accepted on fd (non-blocking) from peer "address:port". */
void httpd_req_new(int fd, const char *peer);
const struct httphead *httpd_req_head(const struct httpd_req *);
const char *httpd_req_header(const struct httpd_req *, const char *name);
const char *httpd_req_path(const struct httpd_req *);
enum httphead_method httpd_req_method(const struct httpd_req *);
/* The body, contiguous (not NUL-terminated). */
const char *httpd_req_body(const struct httpd_req *, size_t *ret_len);
const char *httpd_req_peer(const struct httpd_req *);
/* fn (NULL: nobody) hears the connection go while the front has req. */
void httpd_req_on_close(struct httpd_req *, httpd_req_closed_fn *fn, void *arg);
/* A header of the answer (mcpd's own: at most some 1 KiB in all). */
void httpd_req_add_header(struct httpd_req *, const char *name,
    const char *value);
/* The answer says Connection: close, and the connection ends after it. */
void httpd_req_close_after(struct httpd_req *);
/* The whole answer (body NULL or len 0: none); the request ends. */
void httpd_req_reply(struct httpd_req *, int status, const char *body,
    size_t len);
/* The same with body's bytes (moved out of it). */
void httpd_req_reply_buf(struct httpd_req *, int status, struct evbuffer *);
/*
 * An answer that comes in parts (chunked; with HTTP/1.0, ended by the
 * close): its head, then data's bytes (moved out of it) as they come, then
 * its end, which ends the request. No timeout bounds it meanwhile.
 */
void httpd_req_start(struct httpd_req *, int status);
void httpd_req_chunk(struct httpd_req *, struct evbuffer *data);
void httpd_req_end(struct httpd_req *);
/* The connection goes now, its request with it (nobody hears it). */
void httpd_req_drop(struct httpd_req *);
/* Bytes of the answer the kernel has not taken. */
size_t httpd_req_unsent(const struct httpd_req *);
/*
 * Closes the connections with no request being served (kept alive, or a
 * request still coming) that have been quiet for quiet_ms; says how many
 * such are left, quiet for less.
 */
size_t httpd_req_close_quiet(uint64_t quiet_ms);
/* mcpd stops: every connection goes (the front ended its requests). */
void httpd_req_close_all(void);

/* httpd-conns.c: the listening socket. */
/* Binds host:port (a loopback address); the socket, or -errno. */
int httpd_conns_bind(const char *host, int port, char **cause);
/* Accepts on fd, a listening socket, from now on. */
void httpd_conns_listen(int fd);
/* The listening socket, or -1. */
int httpd_conns_fd(void);
/* Accepting stops (hold), or goes on. */
void httpd_conns_hold(bool hold);
void httpd_conns_close(void);

/* httpd.c */
extern struct httpd_session_list httpd_sessions;
/* A session of agent on path; its id and remote are the caller's to set. */
struct httpd_session *httpd_session_make(const char *agent, const char *profile,
    const char *path, const json_t *scope);
/* The front listens on fd (made, or kept across an upgrade). */
void httpd_listening(int fd, const char *addr);
/* A request is whole: the front serves it. */
void httpd_handle(struct httpd_req *);
/* A JSON answer (body NULL: none). */
void httpd_reply(struct httpd_req *, int code, const char *body);
/* An HTTP refusal with a JSON-RPC error body (id null). */
void httpd_refuse(struct httpd_req *, int code, const char *why);
void httpd_session_free(struct httpd_session *);
/* Something began or ended in the session: its idle time starts anew. */
void httpd_session_touch(struct httpd_session *);

/* httpd-stream.c */
/* The pending answer of req (msg, a request) to the session hs. */
void httpd_stream_new(struct httpd_session *, struct httpd_req *,
    const json_t *msg);
/* Frees p; its exchange, if any is left, was answered or ends here. */
void httpd_stream_free(struct httpd_pending *, bool is_answered);
/* One line of the gateway; true when that freed a one-request session. */
bool httpd_stream_line(struct httpd_session *, const char *line, size_t len);
/* A GET with Last-Event-ID of a call whose client went; false: none. */
bool httpd_stream_resume(struct httpd_req *, struct httpd_session *);
/* A notification for hs: on its GET stream, else kept for the next. */
void httpd_stream_notify(struct httpd_session *hs, const char *line,
    size_t len);
void httpd_stream_headers(struct httpd_req *);
/* Bytes waiting to go to the session's HTTP clients, or kept for them. */
size_t httpd_stream_held(const struct httpd_session *);
/* Whether a request of the session waits for its answer, or a stream is open. */
bool httpd_stream_is_busy(const struct httpd_session *);

#endif
