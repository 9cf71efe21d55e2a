/* SPDX-License-Identifier: ISC */
/*
 * 2026-07-28 subscriptions/listen: a request that stays open, whose
 * stream carries the list changes the client opted in to. It is
 * acknowledged first (notifications/subscriptions/acknowledged, saying
 * what mcpd honors), every notification on it carries _meta's
 * subscriptionId (the listen's id), and it ends with an empty result when
 * mcpd ends it (another listen of the same session), or with nothing when
 * the client cancels it or goes.
 */
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "mcpd.h"

#define LISTEN_ID_KEY "io.modelcontextprotocol/subscriptionId"

struct gateway_listen {
	struct request *req; /* open until the listen ends */
	json_t *id;	     /* the request's id: the subscription id */
	bool tools, prompts, resources;
	struct gateway_listen **slot; /* where its session holds it */
};

static json_t *
gateway_listen_meta(const struct gateway_listen *l)
{
	return json_pack("{s:O}", LISTEN_ID_KEY, l->id);
}

/* Answers the request (nothing goes if it was cancelled) and frees it. */
static void
gateway_listen_release(void *arg)
{
	struct gateway_listen *l = arg;

	control_reply(l->req,
	    json_pack("{s:s, s:o}", "resultType", "complete", "_meta",
		gateway_listen_meta(l)));
	json_decref(l->id);
	free(l);
}

/* Off its session now; its request is answered from the loop. */
static void
gateway_listen_detach(struct gateway_listen *l)
{
	control_on_gone(l->req, NULL, NULL);
	if (l->slot != NULL)
		*l->slot = NULL;
	l->slot = NULL;
	defer_call(gateway_listen_release, l);
}

/* The client cancelled it, or went. */
static void
gateway_listen_gone(void *arg)
{
	gateway_listen_detach(arg);
}

void
gateway_listen_end(struct gateway_listen **slot)
{
	if (*slot != NULL)
		gateway_listen_detach(*slot);
}

void
gateway_listen_start(struct gateway_listen **slot, struct request *req,
    const json_t *params)
{
	const json_t *want = json_object_get(params, "notifications");
	struct gateway_listen *l = xcalloc(1, sizeof *l);

	gateway_listen_end(slot); /* one listen a session: the newest */
	l->req = req;
	l->id = json_deep_copy(control_request_id(req));
	l->tools = json_is_true(json_object_get(want, "toolsListChanged"));
	l->prompts = json_is_true(json_object_get(want, "promptsListChanged"));
	l->resources = json_is_true(json_object_get(want,
	    "resourcesListChanged"));
	l->slot = slot;
	*slot = l;
	control_on_gone(req, gateway_listen_gone, l);
	control_request_set_lasting(req);
	/* Resource updates are not honored here: the filter says so. */
	control_notify_mcp(req, "notifications/subscriptions/acknowledged",
	    json_pack("{s:{s:b, s:b, s:b}, s:o}", "notifications",
		"toolsListChanged", l->tools, "promptsListChanged", l->prompts,
		"resourcesListChanged", l->resources, "_meta",
		gateway_listen_meta(l)));
}

static void
gateway_listen_send(const struct gateway_listen *l, bool wanted,
    const char *method)
{
	if (wanted)
		control_notify_mcp(l->req, method,
		    json_pack("{s:o}", "_meta", gateway_listen_meta(l)));
}

void
gateway_listen_changed(const struct gateway_listen *l)
{
	gateway_listen_send(l, l->tools, "notifications/tools/list_changed");
	gateway_listen_send(l, l->prompts,
	    "notifications/prompts/list_changed");
	gateway_listen_send(l, l->resources,
	    "notifications/resources/list_changed");
}

json_t *
gateway_listen_save(const struct gateway_listen *l)
{
	if (l == NULL)
		return json_null();
	return json_pack("{s:O, s:b, s:b, s:b}", "id", l->id, "tools", l->tools,
	    "prompts", l->prompts, "resources", l->resources);
}

/* The listen of before, open again on its client (acknowledged then). */
void
gateway_listen_restore(struct gateway_listen **slot, struct client *c,
    const json_t *saved)
{
	struct gateway_listen *l;

	if (!json_is_object(saved))
		return;
	l = xcalloc(1, sizeof *l);
	l->id = json_deep_copy(json_object_get(saved, "id"));
	l->req = control_request_new(c, l->id);
	l->tools = json_is_true(json_object_get(saved, "tools"));
	l->prompts = json_is_true(json_object_get(saved, "prompts"));
	l->resources = json_is_true(json_object_get(saved, "resources"));
	l->slot = slot;
	*slot = l;
	control_on_gone(l->req, gateway_listen_gone, l);
	control_request_set_lasting(l->req);
}
