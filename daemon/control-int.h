/* SPDX-License-Identifier: ISC */
/* What control.c and control-request.c share: clients and their requests. */
#ifndef MCPD_CONTROL_INT_H
#define MCPD_CONTROL_INT_H

#include <stdarg.h>

#include "linebuf.h"
#include "mcpd.h"
#include "server-reply.h"

struct request {
	struct client *client; /* NULL once the client has gone */
	json_t *id;
	bool wants_progress; /* mcpd/progress notifications until the answer */
	bool is_cancelled;   /* the client cancelled it: no answer goes */
	bool
	    is_lasting; /* open by design (attach, listen): an upgrade keeps it */
	/* Called once if the client goes while the request is pending. */
	void (*gone_fn)(void *);
	void *gone_arg;
	/* mcpd's own request on the client's behalf: the answer goes here. */
	control_own_fn *own_fn;
	void *own_arg;
	/* What the server layer answers it through (control_server_reply). */
	struct server_reply reply;
	TAILQ_ENTRY(request) entry;
};
TAILQ_HEAD(request_list, request);
TAILQ_HEAD(ask_list, ask);

struct client {
	/* Its connection's (until control_client_free), and a caller's that
	 * keeps it across a call that may end it (control_read). */
	int references;
	struct bufferevent *bev; /* for writing; reading is rd's */
	struct fdread rd;
	int in_fd; /* rd's, when not bev's (an attached pipe): closed too */
	struct sendq *out;
	struct linebuf lines;
	char *agent;
	json_t *who;	  /* the audit log's client field, or NULL */
	json_t *scope;	  /* mcpd/hello's servers, or NULL: all */
	char *profile;	  /* its view's profile (hello or token), or NULL */
	char *view_error; /* why its view cannot be made (a project file) */
	struct gateway *gateway; /* its MCP session, once it speaks MCP */
	struct request_list requests;
	size_t nrequests;
	struct ask_list asks; /* mcpd's requests waiting for its answer */
	size_t nasks;
	size_t answer_size;   /* the largest recent answer, decaying */
	struct event *hangup; /* watches for a close while reading is paused */
	struct request *attach; /* the mcpd/attach that handed it over */
	const struct control_peer *peer; /* in-process (HTTP), or NULL */
	void *peer_arg;
	char *end_why;	  /* why mcpd ends it, for attach's answer */
	int64_t since_ms; /* when it connected (wall clock), for mcpd/clients */
	pid_t pid;	  /* its peer's (SO_PEERCRED), or 0 */
	pid_t bridge_pid; /* a bridge's client (its parent), or 0 */
	char *bridge_exe; /* ... and that client's executable, or NULL */
	bool is_bridge;	  /* its hello had client.parent: a bridge */
	bool is_roots_project; /* its view may come from its client's roots */
	bool has_attached;     /* it handed stdio over (mcpd/attach) */
	bool is_closing;
	bool is_dead; /* control_client_free ran: unlinked, its hooks ran */
	bool is_paused;
	bool is_eof;	    /* the client shut its side: answer, then close */
	bool is_write_shut; /* ... seen while paused: read on when it drains */
	bool is_counted;    /* takes a slot of --max-clients */
	TAILQ_ENTRY(client) entry;
};

TAILQ_HEAD(client_list, client);

/* control.c */
extern struct client_list control_clients;
extern struct evconnlistener *control_listener;
extern char *control_path;
/*
 * A client reading in and writing out (the same socket, or the two ends
 * an mcpd/attach handed over), which it closes when it goes.
 */
struct client *control_client_new(int in, int out, const char *agent,
    const json_t *scope);
/* What waits to go to the client: queued, and held by its peer. */
size_t control_output_length(const struct client *);
/* The client after c (the first for NULL), or NULL: for mcpd/clients. */
const struct client *control_client_next(const struct client *c);
/*
 * Ends the client: it is unlinked and stops at once, and its hooks run
 * (which may end other clients); its memory goes with the last reference,
 * from the loop, so that no caller finds it freed under it. Once only.
 */
void control_client_free(struct client *);
void control_client_ref(struct client *);
void control_client_unref(struct client *);
/* Sends msg (stolen) to the client, as one line. */
void control_send(struct client *c, json_t *msg);
/*
 * Sends msg (or the raw result) to the request's client if it is still
 * there, then frees the request.
 */
void control_finish(struct request *r, json_t *msg, const char *raw,
    size_t len);

/* control-fast.c */
/*
 * The hot path: a plain mcpd/call line (server, tool and arguments, no
 * more) handled without a parse; false for anything else, which the
 * caller parses. Answers exactly as the parsed path would.
 */
bool control_fast_line(struct client *c, const char *line, size_t len);

/* control-attach.c */
/* The client goes: the mcpd/attach that handed it over is answered. */
void control_attach_end(struct client *);

/* control-ask.c */
/* An answer of the client to one of mcpd's requests (control_ask). */
void control_answered(struct client *, const struct jsonrpc_msg *);
/* Its client goes: every request of mcpd's waiting on it fails. */
void control_asks_fail(struct client *);

/* control-request.c */
/* notifications/cancelled {requestId}: that request is cancelled upstream. */
void control_cancel(struct client *c, const json_t *params);
/* A JSON-RPC error message (data stolen), data.kind set when has_kind. */
json_t *control_error_msg(json_t *id, int code, enum errors_kind kind,
    bool has_kind, json_t *data, const char *fmt, va_list ap);

#endif
