/* SPDX-License-Identifier: ISC */
/* What the server layer tells, or asks of, the layers above it: the hooks they register. */
#ifndef MCPD_SERVER_WATCH_H
#define MCPD_SERVER_WATCH_H

#include <stdbool.h>

#include <jansson.h>

struct session;

/*
 * One watcher's hooks (each may be NULL). The gateway and the HTTP front
 * register theirs at start (mcpd.c); the server layer calls them by these
 * pointers only, so it links and runs without either (tests/unit).
 */
struct server_watch {
	/* The tools of agent's scope changed: list_changed to its sessions. */
	void (*tools_changed)(const char *agent);
	/* server's connection is new: what was subscribed there is again. */
	void (*subs_renew)(const char *agent, const char *server);
	/* server's notifications/resources/updated (params borrowed). */
	void (*subs_updated)(const char *agent, const char *server,
	    const json_t *params);
	/*
	 * Whether something of agent that sees server waits for what it may
	 * say (a subscription, a listen, an open GET stream): a use of it.
	 */
	bool (*is_used)(const char *agent, const char *server);
	/*
	 * Answers server's roots/list that no call raised (request id, over
	 * sess), from the loop. The first watcher with this hook answers.
	 */
	void (*roots_answer)(const char *agent, const char *server,
	    struct session *sess, const json_t *id);
};

#define SERVER_WATCH_MAX 4 /* the gateway and the HTTP front, and room */

/* Registers w (static: kept, never copied); fatal past SERVER_WATCH_MAX. */
void server_watch_add(const struct server_watch *w);
/* Forgets every watcher (the unit tests' start). */
void server_watch_clear(void);
/* Each watcher's tools_changed, in the order they registered. */
void server_watch_tools_changed(const char *agent);
/* Each watcher's subs_renew. */
void server_watch_subs_renew(const char *agent, const char *server);
/* Each watcher's subs_updated. */
void server_watch_subs_updated(const char *agent, const char *server,
    const json_t *params);
/* Whether any watcher uses server (is_used). */
bool server_watch_is_used(const char *agent, const char *server);
/*
 * roots/list with no call in flight: the first watcher's roots_answer, or,
 * with none, an empty list (nobody above could say which roots).
 */
void server_watch_roots_answer(const char *agent, const char *server,
    struct session *sess, const json_t *id);

#endif
