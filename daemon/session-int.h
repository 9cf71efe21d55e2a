/* SPDX-License-Identifier: ISC */
/* What session.c and session-start.c share; nothing else includes it. */
#ifndef MCPD_SESSION_INT_H
#define MCPD_SESSION_INT_H

#include <event2/event_struct.h>

#include "mcpd.h"

#define SESSION_BUCKETS		64 /* pending map buckets; ids are sequential */
#define SESSION_HEADER_MISMATCH (-32020) /* 2026-07-28: HeaderMismatch */

enum session_phase {
	SESSION_NEW,
	SESSION_INITIALIZING,
	SESSION_LISTING,
	SESSION_READY,
	SESSION_DEAD,
};

struct pending {
	int64_t id;
	enum errors_kind later_kind; /* how it fails from the loop */
	char *later_why;
	session_reply_fn *cb;
	session_raw_fn *raw_cb; /* NULL: results come parsed to cb */
	void *arg;
	struct session *session;
	int timeout_ms;
	bool takes_input_required; /* its caller answers input requests */
	struct event timer;
	LIST_ENTRY(pending) entry;
};
LIST_HEAD(pending_list, pending);

struct session {
	int references; /* the owner's, and each holder's (DESIGN 10) */
	struct transport *transport;
	const struct session_cbs *cbs;
	void *arg;
	int timeout_ms;	      /* of the handshake */
	uint64_t deadline_ms; /* when the start must be done */
	enum session_phase phase;
	int64_t next_id;
	struct pending_list buckets[SESSION_BUCKETS];
	size_t npending;
	void (*idle_fn)(void *); /* once nothing is pending */
	void *idle_arg;
	char *protocol_version;
	json_t *server_info;
	char *instructions; /* the server's, or NULL */
	json_t *capabilities;
	json_t *tools;	       /* the cache: a JSON array */
	uint64_t tools_serial; /* unique to each listing that made tools */
	json_t *listing;       /* tools gathered by the listing under way */
	json_t *seen_cursors;  /* object used as a set */
	/*
	 * URIs subscribed to (resources/subscribe sent, not unsubscribed): a
	 * session the server initialized again knows none, they go again.
	 */
	json_t *subscribed;
	int pages;
	bool is_modern;		 /* 2026-07-28: _meta on every request */
	bool is_denied;		 /* the handshake was refused by policy */
	bool is_catalog_retired; /* a HeaderMismatch: its tools are stale */
	bool has_retried_discover;
	bool is_listing;
	bool wants_relist;
	bool
	    is_relist_quiet; /* after a renewal: tools_changed only if changed */
	void (*close_done)(void *);
	void *close_arg;
};

/* session.c */
/* Marks the session dead, fails what waits, and tells the owner once. */
/* Moves the session to phase, a move its table allows (mcpd-fsm.c). */
void session_set_phase(struct session *, enum session_phase);
extern const struct fsm session_fsm;
void session_fail(struct session *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* session-start.c */
/* Asks for the first page of tools (cursor NULL) or the page after it. */
void session_list_next(struct session *, const char *cursor);

#endif
