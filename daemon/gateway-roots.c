/* SPDX-License-Identifier: ISC */
/*
 * A server's roots/list that no call raised, answered with the roots of
 * its agent's gateway sessions: mcpd asks each session that sees the
 * server and declared roots, and answers their roots when all agree, an
 * empty list otherwise (DESIGN 11).
 */
#include <sys/queue.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "gateway.h"
#include "log.h"
#include "mcpd.h"

struct gateway_roots {
	struct session *session; /* a reference: the answer goes there */
	json_t *id;		 /* the server's id of its request */
	char *server;		 /* its name, for the log */
	size_t waiting;		 /* answers still to come (+1 while asking) */
	size_t asked;		 /* sessions asked */
	json_t *roots;		 /* the first answer's roots, or NULL */
	json_t *uris;		 /* ... their URIs as a set: what is compared */
	char *why;		 /* why the answer is empty, once known */
};

/* The URIs of a roots/list result as a set (new), or NULL: not one. */
static json_t *
gateway_roots_uris(const json_t *roots)
{
	json_t *uris, *root;
	const char *uri;
	size_t i;

	if (!json_is_array(roots))
		return NULL;
	uris = json_object();
	json_array_foreach(roots, i, root) {
		if ((uri = json_string_value(json_object_get(root, "uri"))) ==
		    NULL) {
			json_decref(uris);
			return NULL;
		}
		json_object_set_new(uris, uri, json_true());
	}
	return uris;
}

/* The first reason the answer is empty is the one the log gives. */
static void
gateway_roots_fail(struct gateway_roots *g, const char *why)
{
	if (g->why == NULL)
		g->why = xstrdup(why);
}

/* Every session answered (or failed): the server gets the answer. */
static void
gateway_roots_end(struct gateway_roots *g)
{
	bool is_agreed = g->why == NULL && g->roots != NULL;

	if (g->asked == 0)
		log_server(LOG_DEBUG, g->server,
		    "roots/list with no call in flight: no gateway session that sees this server declared roots; answered an empty list");
	else if (is_agreed)
		log_server(LOG_DEBUG, g->server,
		    "roots/list with no call in flight: answered the %zu root(s) that the %zu gateway session(s) declaring roots agree on",
		    json_array_size(g->roots), g->asked);
	else
		log_server(LOG_DEBUG, g->server,
		    "roots/list with no call in flight: %s; answered an empty list",
		    g->why);
	session_answer(g->session,
	    jsonrpc_result(g->id,
		json_pack("{s:o}", "roots",
		    is_agreed ? json_incref(g->roots) : json_array())));
	session_unref(g->session);
	json_decref(g->id);
	json_decref(g->roots);
	json_decref(g->uris);
	free(g->server);
	free(g->why);
	free(g);
}

static void
gateway_roots_answered(void *arg, const json_t *result, const json_t *error,
    const char *why)
{
	struct gateway_roots *g = arg;
	const json_t *roots = json_object_get(result, "roots");
	json_t *uris = gateway_roots_uris(roots);
	char text[256];

	if (result == NULL) {
		snprintf(text, sizeof text, "a gateway session failed: %s",
		    error != NULL ? "it answered with an error" : why);
		gateway_roots_fail(g, text);
	} else if (uris == NULL)
		gateway_roots_fail(g,
		    "a gateway session answered something that is not a list of roots");
	else if (g->uris == NULL) {
		g->roots = json_deep_copy(roots);
		g->uris = json_incref(uris);
	} else if (!json_equal(g->uris, uris))
		gateway_roots_fail(g,
		    "the gateway sessions declaring roots disagree on them");
	json_decref(uris);
	if (--g->waiting == 0)
		gateway_roots_end(g);
}

void
gateway_roots_answer(const char *agent, const char *server,
    struct session *sess, const json_t *id)
{
	struct gateway_roots *g = xcalloc(1, sizeof *g);
	struct gateway *gw = NULL;
	int r;

	g->session = sess;
	session_ref(sess);
	g->id = json_incref((json_t *)(uintptr_t)id);
	g->server = xstrdup(server);
	g->waiting = 1;
	while ((gw = gateway_next(gw)) != NULL) {
		if (!gateway_takes_roots(gw) ||
		    strcmp(control_client_agent(gateway_client(gw)), agent) !=
			0 ||
		    !server_scope_has(control_client_scope(gateway_client(gw)),
			server))
			continue;
		g->asked++;
		g->waiting++;
		r = control_ask_client(gateway_client(gw),
		    mcpd_opts.roots_timeout_ms, "roots/list", json_object(),
		    gateway_roots_answered, g);
		if (r < 0)
			gateway_roots_answered(g, NULL, NULL,
			    control_ask_refusal(r));
	}
	if (--g->waiting == 0)
		gateway_roots_end(g);
}
