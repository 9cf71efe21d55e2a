/* SPDX-License-Identifier: ISC */
/* The bridge's relay (relay.c, relay-session.c): its one internal header. */
#ifndef MCPCTL_RELAY_H
#define MCPCTL_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "mcpctl.h"

struct evbuffer;

/* Bytes kept of the last line from mcpd: its error, when it closes. */
#define RELAY_LAST ((size_t)1024)

/* A list the client walked, as a digest of the items of its pages. */
struct relay_list {
	uint64_t walk;	 /* the pages so far of the walk going on */
	uint64_t seen;	 /* the last whole walk the client made */
	uint64_t again;	 /* the relay's own walk on a new mcpd */
	bool has_seen;	 /* the client walked it to its end once */
	bool is_unknown; /* a page could not be read: count it changed */
	bool is_changed; /* the new mcpd's differs */
};

/* The lists a client is told the changes of (relay-session.c). */
#define RELAY_KINDS 4

/* A line of the client's for mcpd, written whole or sent again. */
struct relay_line {
	size_t len;	/* with its newline */
	char *key;	/* its id as compact JSON, or NULL */
	char *method;	/* a request's or a notification's, or NULL */
	json_t *params; /* of the methods the relay keeps track of */
};

/* What one line says, as far as the relay cares. */
struct relay_msg {
	char *key;	/* the id as compact JSON, or NULL */
	char *method;	/* or NULL */
	json_t *params; /* only when asked for, or NULL */
	bool is_answer; /* a result or an error */
	bool is_error;
	const char *result; /* the result's text in the line, or NULL */
	size_t result_len;
};

enum relay_state {
	RELAY_LIVE,   /* the client's lines go to mcpd */
	RELAY_REPLAY, /* the relay's own: the session made again */
};

/* One bridge's relay: both directions and what it keeps of the session. */
struct relay {
	struct mcpctl *m;
	const struct relay_opts *opts;
	int sock; /* -1 while mcpd is away */
	bool is_out_nonblock;
	struct evbuffer *up_in;	  /* from the client, no newline yet */
	struct evbuffer *up_out;  /* its whole lines, for mcpd */
	struct relay_line *lines; /* up_out's lines, from first to end */
	size_t first, end, cap;
	size_t head_done;	   /* bytes of lines[first] written */
	size_t up_scanned;	   /* bytes of up_in holding no newline */
	struct evbuffer *own_out;  /* the relay's own lines, for mcpd */
	struct evbuffer *down_in;  /* from mcpd, no newline yet */
	struct evbuffer *down_out; /* for the client */
	size_t down_scanned;
	bool is_in_eof, is_shut;
	bool is_broken; /* a write to mcpd failed: read what it said last */
	enum relay_state state;
	json_t *inflight; /* id -> {"method", "params"?}: sent, no answer */
	json_t *asked;	  /* ids of mcpd's requests the client owes */
	json_t *stale;	  /* the same, of an mcpd that went */
	json_t *own;	  /* the relay's own requests: id -> what for */
	unsigned own_next;
	json_t *init; /* the client's initialize params, or NULL */
	bool has_initialized;
	json_t *subs;  /* uri -> true */
	json_t *level; /* the client's logging level, or NULL */
	struct relay_list lists[RELAY_KINDS];
	char last[RELAY_LAST]; /* the start of mcpd's last line */
	size_t last_len;
};

/* relay-session.c: what the relay keeps of the session, and its replay. */
/* What the line text[0..len) (no newline) says; relay_session_msg_clear. */
void relay_session_scan(const char *text, size_t len, struct relay_msg *);
void relay_session_msg_clear(struct relay_msg *);
/* A line of the client's reached mcpd whole: what it starts or ends. */
void relay_session_sent(struct relay *, struct relay_line *);
/* mcpd answered the client's request key: what it changes of the session. */
void relay_session_answered(struct relay *, const char *key,
    const struct relay_msg *);
/*
 * mcpd answered one of the relay's own requests (line, without its
 * newline): 0, or the exit status when the session cannot be made again.
 */
int relay_session_own_answer(struct relay *, const char *key, const char *line,
    size_t len, const struct relay_msg *);
/*
 * mcpd went: what it had and did not answer gets outcome-unknown, its
 * requests to the client are answered by nobody, the replay is dropped.
 */
void relay_session_lost(struct relay *);
/* A new mcpd said hello: the session's replay starts, or it is live. */
void relay_session_replay(struct relay *);

#endif
