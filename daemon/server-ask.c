/* SPDX-License-Identifier: ISC */
/*
 * A server's requests to its client (sampling/createMessage,
 * elicitation/create, roots/list) raised during a call: mcpd declares them
 * upstream and relays each to the client that made the call, when that
 * client declared the capability (DESIGN 11): a gateway client at
 * initialize, an mcpd/call caller in its answers. A stdio message does
 * not say which call raised it, so the caller is the one client with
 * calls in flight on that connection; with several, the request is
 * refused, as it is for a client that did not declare the capability.
 * With none, roots/list is answered from the agent's gateway sessions
 * (gateway-roots.c), which mcpd tells the servers about when they change;
 * the others are refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"
#include "server-int.h"

struct server_ask {
	struct session *session; /* a reference: the answer goes there */
	json_t *id;		 /* the server's id of its request */
	char *server;		 /* its name, for the log */
	char *method;
};

static void
server_ask_refuse(struct session *sess, const json_t *id, int code,
    const char *why)
{
	session_answer(sess,
	    jsonrpc_error((json_t *)(uintptr_t)id, code, why, NULL));
}

/* An elicitation in url mode, which a caller answers apart from forms. */
static bool
server_ask_is_url(const char *method, const json_t *params)
{
	const char *mode = json_string_value(json_object_get(params, "mode"));

	return strcmp(method, "elicitation/create") == 0 && mode != NULL &&
	    strcmp(mode, "url") == 0;
}

/*
 * The call whose client gets the request, or NULL with why set: no call
 * in flight, calls of several clients, or a caller that cannot take it.
 */
static struct server_pending_call *
server_ask_caller(struct server *s, struct session *sess, const char *method,
    const json_t *params, char *why, size_t size)
{
	struct server_pending_call *pc, *caller = NULL;

	TAILQ_FOREACH(pc, &s->calls, entry) {
		if (pc->session != sess || !pc->reply->ops->is_live(pc->reply))
			continue;
		if (caller != NULL &&
		    pc->reply->client != caller->reply->client) {
			snprintf(why, size,
			    "mcpd relays %s to the client whose tool call raised it, but calls of several clients are in flight on %s and the request does not say which one it belongs to",
			    method, s->name);
			return NULL;
		}
		caller = pc;
	}
	if (caller == NULL)
		snprintf(why, size,
		    "mcpd relays %s only to the client whose tool call raised it, and no call is in flight on %s",
		    method, s->name);
	else if (caller->is_modern)
		snprintf(why, size,
		    "the client whose call is in flight on %s speaks 2026-07-28, where a server asks for input with an input_required result; mcpd does not turn %s into one",
		    s->name, method);
	else if (session_caps_take(caller->caps, method, params))
		return caller;
	else if (caller->is_mcp)
		snprintf(why, size,
		    "the client whose call is in flight on %s did not declare the capability %s needs",
		    s->name, method);
	else
		snprintf(why, size,
		    "the client whose call is in flight on %s (an mcpd/call) does not answer %s%s: its answers do not name it",
		    s->name, method,
		    server_ask_is_url(method, params) ? " in url mode" : "");
	return NULL;
}

/* The client's answer, or why there is none, goes to the server. */
static void
server_ask_answered(void *arg, const json_t *result, const json_t *error,
    const char *why)
{
	struct server_ask *a = arg;
	json_t *msg;

	if (result != NULL)
		msg = jsonrpc_result(a->id,
		    json_incref((json_t *)(uintptr_t)result));
	else if (error != NULL)
		msg = json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0", "id",
		    a->id, "error", error);
	else
		msg = jsonrpc_error(a->id, JSONRPC_INTERNAL_ERROR, why, NULL);
	log_server(LOG_INFO, a->server, "%s: %s", a->method,
	    result != NULL    ? "the client answered" :
		error != NULL ? "the client answered with an error" :
				why);
	session_answer(a->session, msg);
	session_unref(a->session);
	json_decref(a->id);
	free(a->server);
	free(a->method);
	free(a);
}

/* Whether a live call is in flight on connection sess of s. */
static bool
server_ask_has_call(const struct server *s, const struct session *sess)
{
	struct server_pending_call *pc;

	TAILQ_FOREACH(pc, &s->calls, entry)
		if (pc->session == sess && pc->reply->ops->is_live(pc->reply))
			return true;
	return false;
}

void
server_ask(struct server *s, struct session *sess, const char *method,
    const json_t *id, const json_t *params)
{
	struct server_pending_call *caller;
	struct server_ask *a;
	const char *refused;
	char why[320];

	/* A server asks at start and after list_changed: no call raised it. */
	if (strcmp(method, "roots/list") == 0 &&
	    !server_ask_has_call(s, sess)) {
		server_watch_roots_answer(s->agent, s->name, sess, id);
		return;
	}
	if ((caller = server_ask_caller(s, sess, method, params, why,
		 sizeof why)) == NULL) {
		log_server(LOG_INFO, s->name, "refused %s: %s", method, why);
		server_ask_refuse(sess, id, JSONRPC_METHOD_NOT_FOUND, why);
		return;
	}
	a = xcalloc(1, sizeof *a);
	a->session = sess;
	session_ref(sess);
	a->id = json_incref((json_t *)(uintptr_t)id);
	a->server = xstrdup(s->name);
	a->method = xstrdup(method);
	refused = caller->reply->ops->ask(caller->reply, caller->timeout_ms,
	    method, params != NULL ? json_deep_copy(params) : json_object(),
	    server_ask_answered, a);
	if (refused != NULL)
		server_ask_answered(a, NULL, NULL, refused);
}

void
server_roots_changed(const char *agent, const json_t *scope)
{
	struct server *s;

	const char *version;

	TAILQ_FOREACH(s, &server_list, entry) {
		/* 2026-07-28 has no roots/list: a server asks with its result. */
		if (!server_in_gateway_scope(s, agent, scope) ||
		    ((version = session_protocol_version(s->session)) != NULL &&
			strcmp(version, ERA_MODERN) == 0))
			continue;
		log_server(LOG_DEBUG, s->name,
		    "sent notifications/roots/list_changed: the roots of a gateway session may have changed");
		session_answer(s->session,
		    jsonrpc_notification("notifications/roots/list_changed",
			NULL));
	}
}
