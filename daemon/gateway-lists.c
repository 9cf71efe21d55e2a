/* SPDX-License-Identifier: ISC */
/* The gateway's prompts, resources and completions: asked of every server. */
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "gateway.h"
#include "log.h"
#include "mcpd.h"

#define GATEWAY_LIST_PAGES 100 /* pages of one server's list, at most */

/* What to do once a list is learned instead of answering it. */
struct gateway_then {
	void (*fn)(struct request *, json_t *params, void *arg);
	void *arg;
	json_t *params;
	bool wants_templates; /* resources: their templates next */
};

/* One list asked of every server in scope at once, merged when all answer. */
struct gateway_fanout {
	struct request *req;
	const char *method; /* "prompts/list", ... */
	const char *key;    /* "prompts", "resources", "resourceTemplates" */
	bool is_named;	    /* prompts: <server>__<name>, as tools */
	bool is_prefixed;
	json_t *by_server; /* server name -> array of items, in scope order */
	size_t pending;
	struct gateway_then *then; /* NULL: answer with the list */
};

static void gateway_fan_out_then(struct request *, const char *method,
    struct gateway_then *);

/* One server's part: its pages, followed. */
struct gateway_part {
	struct gateway_fanout *fo;
	char *server;
	int pages;
};

static void gateway_part_next(struct gateway_part *, const char *cursor);

/* Every part answered: the merged list, named like tools where it has to. */
static void
gateway_fanout_end(struct gateway_fanout *fo)
{
	json_t *all = json_array(), *items, *item, *e, *out = json_array();
	const char *server;
	size_t i;

	json_object_foreach(fo->by_server, server, items)
		json_array_foreach(items, i, item)
			json_array_append_new(all,
			    json_pack("{s:s, s:O}", "server", server, "tool",
				item));
	if (fo->is_named)
		gateway_names(all, fo->is_prefixed);
	json_array_foreach(all, i, e) {
		gateway_remember(control_gateway_of(fo->req), fo->key, e);
		item = json_deep_copy(json_object_get(e, "tool"));
		if (!json_is_object(json_object_get(item, "_meta")))
			json_object_set_new(item, "_meta", json_object());
		json_object_set(json_object_get(item, "_meta"),
		    "io.mcpd/server", json_object_get(e, "server"));
		if (fo->is_named) {
			json_object_set(json_object_get(item, "_meta"),
			    "io.mcpd/name", json_object_get(item, "name"));
			json_object_set(item, "name",
			    json_object_get(e, "name"));
		}
		json_array_append_new(out, item);
	}
	json_decref(all);
	json_decref(fo->by_server);
	if (fo->then == NULL)
		gateway_answer(fo->req, fo->method,
		    json_pack("{s:o}", fo->key, out));
	else if (fo->then->wants_templates) {
		json_decref(out);
		fo->then->wants_templates = false;
		gateway_fan_out_then(fo->req, "resources/templates/list",
		    fo->then);
	} else {
		json_decref(out);
		fo->then->fn(fo->req, fo->then->params, fo->then->arg);
		free(fo->then);
	}
	free(fo);
}

static void
gateway_part_done(struct gateway_part *part)
{
	struct gateway_fanout *fo = part->fo;

	free(part->server);
	free(part);
	if (--fo->pending == 0)
		gateway_fanout_end(fo);
}

static void
gateway_part_page(void *arg, const struct session_reply *r)
{
	struct gateway_part *part = arg;
	json_t *items = json_object_get(r->result, part->fo->key);
	const char *cursor = json_string_value(json_object_get(r->result,
	    "nextCursor"));

	/* A server that fails its part leaves it out; the others still count. */
	if (json_is_array(items))
		json_array_extend(json_object_get(part->fo->by_server,
				      part->server),
		    items);
	else
		log_server(LOG_INFO, part->server,
		    "%s for the gateway failed: %s", part->fo->method,
		    r->message != NULL ? r->message : "no list");
	if (json_is_array(items) && cursor != NULL && cursor[0] != '\0' &&
	    ++part->pages < GATEWAY_LIST_PAGES)
		gateway_part_next(part, cursor);
	else
		gateway_part_done(part);
}

static void
gateway_part_next(struct gateway_part *part, const char *cursor)
{
	json_t *params = cursor != NULL ? json_pack("{s:s}", "cursor", cursor) :
					  json_object();

	if (server_forward(control_agent(part->fo->req), part->server,
		part->fo->method, params, gateway_part_page, part) < 0)
		gateway_part_done(part); /* gone meanwhile */
}

void
gateway_fan_out(struct request *req, const char *method)
{
	gateway_fan_out_then(req, method, NULL);
}

void
gateway_learn(struct request *req, const char *what,
    void (*fn)(struct request *, json_t *params, void *arg), void *arg,
    json_t *params)
{
	struct gateway_then *then = xcalloc(1, sizeof *then);
	bool is_prompts = strcmp(what, "prompts") == 0;

	then->fn = fn;
	then->arg = arg;
	then->params = params;
	then->wants_templates = !is_prompts;
	gateway_fan_out_then(req,
	    is_prompts ? "prompts/list" : "resources/list", then);
}

static void
gateway_fan_out_then(struct request *req, const char *method,
    struct gateway_then *then)
{
	const char *capability = strncmp(method, "prompts/", 8) == 0 ?
	    "prompts" :
	    "resources";
	json_t *view = gateway_view_scope(req);
	json_t *names = server_gateway_offering(control_agent(req), view,
		   capability),
	       *name;
	struct gateway_fanout *fo = xcalloc(1, sizeof *fo);
	struct gateway_part *part;
	size_t i;

	fo->req = req;
	fo->then = then;
	/* Its own copy of the name: the caller's goes with its message. */
	fo->method = strcmp(method, "prompts/list") == 0 ? "prompts/list" :
	    strcmp(method, "resources/list") == 0	 ? "resources/list" :
						    "resources/templates/list";
	fo->key = strcmp(method, "prompts/list") == 0 ? "prompts" :
	    strcmp(method, "resources/list") == 0     ? "resources" :
							"resourceTemplates";
	fo->is_named = strcmp(method, "prompts/list") == 0;
	json_decref(view);
	fo->is_prefixed = json_array_size(control_scope(req)) != 1;
	fo->by_server = json_object();
	fo->pending = json_array_size(names) + 1; /* until all are asked */
	json_array_foreach(names, i, name) {
		json_object_set_new(fo->by_server, json_string_value(name),
		    json_array());
		part = xcalloc(1, sizeof *part);
		part->server = xstrdup(json_string_value(name));
		part->fo = fo;
		gateway_part_next(part, NULL);
	}
	json_decref(names);
	if (--fo->pending == 0)
		gateway_fanout_end(fo);
}

/* ---- one item, routed to the server that has it ---- */

struct gateway_fwd {
	struct request *req;
	const char *method;
	struct audit_call *audit; /* prompts/get's and resources/read's */
};

/* The server's answer goes to the client as it is (in the client's era). */
static void
gateway_forwarded(void *arg, const struct session_reply *r)
{
	struct gateway_fwd *fwd = arg;
	struct request *req = fwd->req;
	const char *method = fwd->method;

	audit_call_end_reply(fwd->audit, r);
	free(fwd);
	if (r->result != NULL)
		gateway_answer(req, method, json_incref(r->result));
	else if (r->error != NULL)
		control_reply_error(req, r->error); /* the server's, as it is */
	else
		control_fail(req, r->kind, NULL, "%s", r->message);
}

void
gateway_forward(struct request *req, const char *server, const char *method,
    json_t *params)
{
	struct gateway_fwd *fwd = xcalloc(1, sizeof *fwd);
	struct call_who who;
	char *why;

	fwd->req = req;
	fwd->method = method;
	if (strcmp(method, "prompts/get") == 0 ||
	    strcmp(method, "resources/read") == 0) {
		control_call_who(req, &who);
		fwd->audit = audit_call_new(&who, method, server,
		    json_string_value(json_object_get(params,
			strcmp(method, "prompts/get") == 0 ? "name" : "uri")),
		    NULL, json_object_get(params, "arguments"));
		if ((why = audit_admit(fwd->audit, server)) != NULL) {
			control_fail(req, ERRORS_STORAGE, NULL, "%s", why);
			free(why);
			free(fwd);
			json_decref(params);
			return;
		}
	}
	if (server_forward(control_agent(req), server, method, params,
		gateway_forwarded, fwd) < 0) {
		audit_call_free(fwd->audit);
		free(fwd);
		control_fail(req, ERRORS_UNAVAILABLE, NULL,
		    "server %s is not ready; list again", server);
	}
}
