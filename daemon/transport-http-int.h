/* SPDX-License-Identifier: ISC */
/* What transport-http.c and transport-http-auth.c share; nothing else. */
#ifndef MCPD_TRANSPORT_HTTP_INT_H
#define MCPD_TRANSPORT_HTTP_INT_H

#include "mcpd.h"
#include "sse.h"

#define SHTTP_RETRY_MS	  1000 /* when the server sent no retry field */
#define SHTTP_MAX_HEADERS 32

struct shttp_post;

struct shttp_transport {
	struct transport t;
	const struct remote_spec *spec; /* &own */
	struct remote_spec own;
	char *path; /* path and query of the endpoint */
	struct netpolicy_query *policy;
	struct http_client *client;
	json_t *queued; /* messages sent before the client is ready */
	/*
	 * Requests over --max-http-requests in flight wait here, in order, as
	 * [msg, tool] pairs: a burst of calls must not open a connection each.
	 */
	json_t *waiting;
	size_t nrequests; /* POSTs of requests whose exchange is not over */
	char *session_id;
	char *version; /* negotiated: sent as MCP-Protocol-Version */
	LIST_HEAD(, shttp_post) posts;
	/*
	 * notifications/initialized in flight: the server must have taken it
	 * before anything else goes (each POST is its own exchange, and a
	 * server may change its tools when it sees initialized).
	 */
	struct shttp_post *initialized;
	struct shttp_post *listen; /* the GET stream, when one is open */
	bool is_closing;
	bool is_adopted;    /* an upgrade: the session of before goes on */
	bool is_legacy_sse; /* HTTP+SSE (2024-11-05): answers on the GET */
	bool may_fall_back; /* to HTTP+SSE, when initialize is refused */
	char *post_path;    /* HTTP+SSE: where the endpoint event says */
	void (*done)(void *);
	void *done_arg;
	/*
	 * The server forgot our session (HTTP 404): the session's initialize
	 * (init_msg) goes again (renewing), and the requests it refused wait
	 * in held, as [msg, tool] pairs, to go again once it is answered.
	 */
	json_t *init_msg;
	struct shttp_post *renewing;
	json_t *held;
	unsigned epoch;	     /* sessions initialized again so far */
	char *held_why;	     /* why the last request cancelled unsent waited */
	struct event *timer; /* deferred release, or DELETE deadline */
	struct event *flush; /* sends what waited for initialized */
};

/* One exchange: a POST, the GET stream, a resumption, or the DELETE. */
struct shttp_post {
	struct shttp_transport *ht;
	struct http_exchange *ex;
	json_t *id;	    /* the request's id, or NULL */
	json_t *initialize; /* kept to send again after a fallback */
	char *method;	    /* the JSON-RPC method sent */
	int status;
	bool is_sse;
	bool is_answered; /* the response to id came */
	bool is_counted;  /* a request: it holds one of ht->nrequests */
	bool is_resent;	  /* sent again on a new session: no third time */
	bool is_resumed;  /* its answer's stream resumed: the server took it */
	unsigned epoch;	  /* of the session it was sent on (ht->epoch) */
	/* A request's, to send again (once authorized, on a new session). */
	char *verb;
	json_t *msg;
	json_t *tool;
	uint64_t token_gen; /* of the token it went with */
	char *www_authenticate;
	struct oauth_wait *auth_wait; /* parked until authorized */
	int auth_tries;
	struct evbuffer *body;
	struct sse_parser sse;
	struct event *retry;
	LIST_ENTRY(shttp_post) entry;
};

/* transport-http.c */
/* A new exchange of ht, for msg (borrowed; NULL for a GET or DELETE). */
struct shttp_post *shttp_post_new(struct shttp_transport *, const json_t *msg);
/* Sends msg now, or queues it for a free slot; is_resent: a second time. */
int shttp_send_now(struct shttp_transport *, const json_t *msg,
    const json_t *tool, bool is_resent);
/* The connection is over (why): the session hears it once. */
void shttp_report(struct shttp_transport *, const char *why);
/* The protocolVersion of an initialize result (borrowed), or NULL. */
const char *shttp_version_of(const json_t *msg);
/* Sends (again) what p carries: verb, and msg with tool's headers. */
void shttp_post_start(struct shttp_transport *, struct shttp_post *,
    const char *verb, const json_t *msg, const json_t *tool);
void shttp_post_free(struct shttp_post *);
/* Tells the session that the request of p will get no answer. */
void shttp_fail_request(struct shttp_post *, enum errors_kind, const char *why);

/* transport-http-renew.c: a session the server forgot, initialized again. */
/* p was answered 404 for our session: hold or fail it, initialize again. */
void shttp_session_lost(struct shttp_post *);
/* The answer to mcpd's initialize again: the held requests go, or fail. */
void shttp_renewed(struct shttp_transport *, json_t *msg);
/* Initializing again failed (why): what was held fails, the connection ends. */
void shttp_renew_failed(struct shttp_transport *, const char *why);
/* 2 when msg cancels a request held for the new session, else 0. */
int shttp_renew_unpark(struct shttp_transport *, const json_t *msg);

/* transport-http-auth.c: OAuth on the wire. */
/*
 * Before p goes: keeps what to send again, and the Authorization value
 * to send (*ret, new, or NULL); 1 when p was parked instead (its token
 * is refreshed first), else 0.
 */
int shttp_auth_prepare(struct shttp_post *, const char *verb, const json_t *msg,
    const json_t *tool, char **ret);
/* A 401, or 403 insufficient_scope, parked p until authorized: true. */
bool shttp_auth_challenge(struct shttp_post *);
/* 2 when msg cancels a parked request (it goes unsent), else 0. */
int shttp_auth_unpark(struct shttp_transport *, const json_t *msg);
/* Why the last request cancelled while parked waited (borrowed). */
const char *shttp_auth_held_why(struct transport *);

#endif
