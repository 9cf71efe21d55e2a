/* SPDX-License-Identifier: ISC */
/* The gateway's resource subscriptions: one upstream per URI, many sessions. */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "log.h"
#include "mcpd.h"
#include "server-watch.h"

/* A session subscribed to a URI of a server. */
struct gateway_sub {
	struct client *client;
	char *agent;
	char *server;
	char *uri;
	TAILQ_ENTRY(gateway_sub) entry;
};

static TAILQ_HEAD(,
    gateway_sub) gateway_subs = TAILQ_HEAD_INITIALIZER(gateway_subs);

static struct gateway_sub *
gateway_subs_find(const struct client *c, const char *agent, const char *server,
    const char *uri)
{
	struct gateway_sub *sub;

	TAILQ_FOREACH(sub, &gateway_subs, entry)
		if ((c == NULL || sub->client == c) &&
		    (agent == NULL || strcmp(sub->agent, agent) == 0) &&
		    (server == NULL || strcmp(sub->server, server) == 0) &&
		    strcmp(sub->uri, uri) == 0)
			return sub;
	return NULL;
}

static void
gateway_subs_ignore(void *arg, const struct session_reply *r)
{
	(void)arg, (void)r;
}

/*
 * Unlinks sub; when no session of its agent is subscribed to its URI any
 * more, the server is told (with req's answer, else on its own).
 */
static void
gateway_subs_remove(struct gateway_sub *sub, struct request *req)
{
	TAILQ_REMOVE(&gateway_subs, sub, entry);
	if (gateway_subs_find(NULL, sub->agent, sub->server, sub->uri) !=
	    NULL) {
		if (req != NULL)
			control_reply(req, json_object());
	} else if (req != NULL)
		gateway_forward(req, sub->server, "resources/unsubscribe",
		    json_pack("{s:s}", "uri", sub->uri));
	else
		server_forward(sub->agent, sub->server, "resources/unsubscribe",
		    json_pack("{s:s}", "uri", sub->uri), gateway_subs_ignore,
		    NULL);
	free(sub->agent);
	free(sub->server);
	free(sub->uri);
	free(sub);
}

void
gateway_subs_subscribe(struct client *c, struct request *req,
    const char *server, const json_t *params)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	const char *agent = control_client_agent(c);
	struct gateway_sub *sub;

	if (gateway_subs_find(c, agent, server, uri) == NULL) {
		sub = xcalloc(1, sizeof *sub);
		sub->client = c;
		sub->agent = xstrdup(agent);
		sub->server = xstrdup(server);
		sub->uri = xstrdup(uri);
		TAILQ_INSERT_TAIL(&gateway_subs, sub, entry);
	}
	/* Again when others have: servers take a repeated one as one. */
	gateway_forward(req, server, "resources/subscribe",
	    json_deep_copy(params));
}

void
gateway_subs_unsubscribe(struct client *c, struct request *req,
    const json_t *params)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	struct gateway_sub *sub = uri != NULL ?
	    gateway_subs_find(c, NULL, NULL, uri) :
	    NULL;

	if (sub == NULL)
		control_reply(req, json_object()); /* nothing to undo */
	else
		gateway_subs_remove(sub, req);
}

void
gateway_subs_drop(struct client *c)
{
	struct gateway_sub *sub, *next;

	for (sub = TAILQ_FIRST(&gateway_subs); sub != NULL; sub = next) {
		next = TAILQ_NEXT(sub, entry);
		if (sub->client == c)
			gateway_subs_remove(sub, NULL);
	}
}

void
gateway_subs_updated(const char *agent, const char *server,
    const json_t *params)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	struct gateway_sub *sub;

	TAILQ_FOREACH(sub, &gateway_subs, entry)
		if (uri != NULL && strcmp(sub->agent, agent) == 0 &&
		    strcmp(sub->server, server) == 0 &&
		    strcmp(sub->uri, uri) == 0)
			control_client_notify(sub->client,
			    "notifications/resources/updated",
			    json_deep_copy(params));
}

bool
gateway_subs_has(const char *agent, const char *server)
{
	struct gateway_sub *sub;

	TAILQ_FOREACH(sub, &gateway_subs, entry)
		if (strcmp(sub->agent, agent) == 0 &&
		    strcmp(sub->server, server) == 0)
			return true;
	return false;
}

void
gateway_subs_renew(const char *agent, const char *server)
{
	struct gateway_sub *sub, *first;

	/* Each URI once: the first subscription of it stands for the rest. */
	TAILQ_FOREACH(sub, &gateway_subs, entry) {
		if (strcmp(sub->agent, agent) != 0 ||
		    strcmp(sub->server, server) != 0)
			continue;
		first = gateway_subs_find(NULL, agent, server, sub->uri);
		if (first != sub)
			continue;
		server_forward(agent, server, "resources/subscribe",
		    json_pack("{s:s}", "uri", sub->uri), gateway_subs_ignore,
		    NULL);
	}
}

json_t *
gateway_subs_save(const struct client *c)
{
	json_t *all = json_array();
	struct gateway_sub *sub;

	TAILQ_FOREACH(sub, &gateway_subs, entry)
		if (sub->client == c)
			json_array_append_new(all,
			    json_pack("{s:s, s:s}", "server", sub->server,
				"uri", sub->uri));
	return all;
}

/* The server kept its subscriptions across the upgrade: none is sent. */
void
gateway_subs_restore(struct client *c, const json_t *saved)
{
	const char *server, *uri;
	struct gateway_sub *sub;
	const json_t *e;
	size_t i;

	json_array_foreach(saved, i, e) {
		server = json_string_value(json_object_get(e, "server"));
		uri = json_string_value(json_object_get(e, "uri"));
		if (server == NULL || uri == NULL)
			continue;
		sub = xcalloc(1, sizeof *sub);
		sub->client = c;
		sub->agent = xstrdup(control_client_agent(c));
		sub->server = xstrdup(server);
		sub->uri = xstrdup(uri);
		TAILQ_INSERT_TAIL(&gateway_subs, sub, entry);
	}
}

/* A subscription or a listen of agent's sessions uses the server. */
static bool
gateway_subs_uses(const char *agent, const char *server)
{
	return gateway_subs_has(agent, server) ||
	    gateway_listens_see(agent, server);
}

const struct server_watch gateway_server_watch = {
	.tools_changed = gateway_tools_changed,
	.subs_renew = gateway_subs_renew,
	.subs_updated = gateway_subs_updated,
	.is_used = gateway_subs_uses,
	.roots_answer = gateway_roots_answer,
};
