/* SPDX-License-Identifier: ISC */
/* The HTTP front's insides: httpd.c (sessions, verbs) and httpd-stream.c. */
#ifndef MCPD_HTTPD_INT_H
#define MCPD_HTTPD_INT_H

#include <sys/queue.h>

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "httpd.h"
#include "linebuf.h"

struct evhttp_request;
struct evhttp;
struct evhttp_bound_socket;

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
	struct event *peek;  /* 2026-07-28, no stream yet: its client's close */
	struct event *later; /* 2025: starts its stream if no answer came */
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
	struct evhttp_request *stream; /* the GET stream, or NULL */
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

/* httpd-conns.c */
typedef void httpd_closed_fn(struct evhttp_connection *, void *);
struct evhttp_connection;
/* A request came on its connection: the connection is known from now. */
void httpd_conn_seen(struct evhttp_request *);
/* fn (NULL: nobody) hears the connection's close; it replaces the one before. */
void httpd_conn_on_close(struct evhttp_connection *, httpd_closed_fn *fn,
    void *arg);
/*
 * Closes the connections with no stream on them (kept alive) that have
 * been quiet for quiet_ms; says how many such are left, quiet for less.
 */
size_t httpd_conns_close_quiet(uint64_t quiet_ms);
/* The front goes: no close reaches the list any more. */
void httpd_conns_forget(void);

/* httpd.c */
extern struct evhttp *httpd;
extern struct evhttp_bound_socket *httpd_bound;
extern struct httpd_session_list httpd_sessions;
/* A session of agent on path; its id and remote are the caller's to set. */
struct httpd_session *httpd_session_make(const char *agent, const char *profile,
    const char *path, const json_t *scope);
/* The front, not yet listening; then listening on bound. */
int httpd_setup(char **cause);
void httpd_listening(struct evhttp_bound_socket *bound, const char *addr);
void httpd_reply(struct evhttp_request *, int code, const char *reason,
    const char *body);
/* An HTTP refusal with a JSON-RPC error body (id null). */
void httpd_refuse(struct evhttp_request *, int code, const char *reason,
    const char *why);
void httpd_session_free(struct httpd_session *);
/* Something began or ended in the session: its idle time starts anew. */
void httpd_session_touch(struct httpd_session *);

/* httpd-stream.c */
/* The pending answer of req (msg, a request) to the session hs. */
void httpd_stream_new(struct httpd_session *, struct evhttp_request *,
    const json_t *msg);
/* Frees p; its exchange, if any is left, was answered or ends here. */
void httpd_stream_free(struct httpd_pending *, bool is_answered);
/* One line of the gateway; true when that freed a one-request session. */
bool httpd_stream_line(struct httpd_session *, const char *line, size_t len);
/* A GET with Last-Event-ID of a call whose client went; false: none. */
bool httpd_stream_resume(struct evhttp_request *, struct httpd_session *);
/* A notification for hs: on its GET stream, else kept for the next. */
void httpd_stream_notify(struct httpd_session *hs, const char *line,
    size_t len);
void httpd_stream_headers(struct evhttp_request *);
/* The connection's timeout off while its stream lasts, back after it. */
void httpd_stream_timeouts(struct evhttp_request *, bool is_streaming);
/* Bytes waiting to go to the session's HTTP clients, or kept for them. */
size_t httpd_stream_held(const struct httpd_session *);
/* Whether a request of the session waits for its answer, or a stream is open. */
bool httpd_stream_is_busy(const struct httpd_session *);

#endif
