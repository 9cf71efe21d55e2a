/* SPDX-License-Identifier: ISC */
/* The control side across an upgrade: its listener, clients and sessions. */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gateway.h"
#include "control-int.h"
#include "log.h"

void
control_upgrade_hold(bool hold)
{
	struct client *c;

	if (control_listener != NULL) {
		if (hold)
			evconnlistener_disable(control_listener);
		else
			evconnlistener_enable(control_listener);
	}
	TAILQ_FOREACH(c, &control_clients, entry) {
		if (c->peer != NULL || c->is_closing || c->is_eof ||
		    c->is_paused)
			continue;
		if (hold)
			fdread_disable(&c->rd);
		else {
			fdread_enable(&c->rd);
			fdread_kick(&c->rd); /* what came meanwhile */
		}
	}
}

bool
control_request_on_socket(const struct request *r)
{
	return r->client != NULL && r->client->peer == NULL;
}

const char *
control_upgrade_busy(const struct request *upgrade)
{
	const struct client *c;
	const struct request *r;

	TAILQ_FOREACH(c, &control_clients, entry) {
		if (c->nasks > 0)
			return "a client has not answered a request of mcpd's";
		TAILQ_FOREACH(r, &c->requests, entry)
			if (r != upgrade && !r->is_lasting)
				return "requests of clients are being answered";
	}
	return NULL;
}

json_t *
control_client_save(struct client *c)
{
	json_t *who = c->who != NULL ? json_incref(c->who) : json_null();

	/* No scope (every server) is no key: a null would be an empty one. */
	return json_pack(
	    "{s:s, s:o, s:O*, s:s?, s:s?, s:I, s:i, s:i, s:s?, s:b, s:b, s:b, s:o}",
	    "agent", c->agent, "who", who, "scope", c->scope, "profile",
	    c->profile, "view_error", c->view_error, "since_ms",
	    (json_int_t)c->since_ms, "pid", (int)c->pid, "bridge_pid",
	    (int)c->bridge_pid, "bridge_exe", c->bridge_exe, "is_bridge",
	    c->is_bridge, "is_roots_project", c->is_roots_project,
	    "has_attached", c->has_attached, "gateway",
	    c->gateway != NULL ? gateway_save(c->gateway) : json_null());
}

const json_t *
control_client_saved_scope(const json_t *saved)
{
	const json_t *scope = json_object_get(saved, "scope");

	return json_is_null(scope) ? NULL : scope; /* null: every server */
}

void
control_client_restore(struct client *c, const json_t *saved)
{
	const json_t *gw = json_object_get(saved, "gateway");
	const json_t *who = json_object_get(saved, "who");

	control_client_set_profile(c,
	    json_string_value(json_object_get(saved, "profile")));
	control_client_set_view_error(c,
	    json_string_value(json_object_get(saved, "view_error")));
	if (json_is_object(who)) {
		json_decref(c->who);
		c->who = json_incref((json_t *)(uintptr_t)who);
	}
	c->since_ms = json_integer_value(json_object_get(saved, "since_ms"));
	c->pid = (pid_t)json_integer_value(json_object_get(saved, "pid"));
	c->bridge_pid = (pid_t)json_integer_value(json_object_get(saved,
	    "bridge_pid"));
	if (json_string_value(json_object_get(saved, "bridge_exe")) != NULL)
		c->bridge_exe = xstrdup(json_string_value(json_object_get(saved,
		    "bridge_exe")));
	c->is_bridge = json_is_true(json_object_get(saved, "is_bridge"));
	c->is_roots_project = json_is_true(json_object_get(saved,
	    "is_roots_project"));
	c->has_attached = json_is_true(json_object_get(saved, "has_attached"));
	if (json_is_object(gw)) {
		c->gateway = gateway_new(c);
		gateway_restore(c->gateway, gw);
	}
}

/* The index of the client in the list, or -1. */
static int
control_client_index(const struct client *want)
{
	const struct client *c;
	int i = 0;

	TAILQ_FOREACH(c, &control_clients, entry) {
		if (c == want)
			return i;
		i++;
	}
	return -1;
}

/*
 * A client on its own descriptors (the HTTP front saves its sessions'
 * clients itself): what it sent and was not read, what waits to go to it,
 * the upgrade's request and an attach it answers for.
 */
static json_t *
control_client_save_fds(struct client *c, const struct request *upgrade)
{
	int in = event_get_fd(c->rd.ev), out = bufferevent_getfd(c->bev);
	json_t *e = json_pack("{s:i, s:i, s:o, s:o}", "in", upgrade_keep_fd(in),
	    "out", upgrade_keep_fd(out), "client", control_client_save(c),
	    "unread", upgrade_bytes_save(c->rd.in));
	const struct request *r;

	sendq_flush(c->out);
	json_object_set_new(e, "unsent",
	    upgrade_bytes_save(bufferevent_get_output(c->bev)));
	TAILQ_FOREACH(r, &c->requests, entry)
		if (r == upgrade)
			json_object_set(e, "upgrade", r->id);
	if (c->attach != NULL && c->attach->client != NULL)
		json_object_set_new(e, "attach",
		    json_pack("{s:i, s:O}", "client",
			control_client_index(c->attach->client), "id",
			c->attach->id));
	return e;
}

json_t *
control_upgrade_save(const struct request *upgrade)
{
	json_t *clients = json_array();
	struct client *c;

	/* One entry per client, so that an attach names its bridge's. */
	TAILQ_FOREACH(c, &control_clients, entry)
		json_array_append_new(clients,
		    c->peer == NULL && !c->is_closing ?
			control_client_save_fds(c, upgrade) :
			json_null());
	return json_pack("{s:i, s:s?, s:o}", "listen",
	    upgrade_keep_fd(evconnlistener_get_fd(control_listener)), "path",
	    control_path, "clients", clients);
}

static void
control_attach_gone_adopted(void *arg)
{
	control_client_free(arg);
}

/* The attach of before, answered by the new process when c goes. */
static void
control_attach_restore(struct client *c, const json_t *attach,
    struct client **all, size_t n)
{
	json_int_t i = json_integer_value(json_object_get(attach, "client"));
	struct client *from = i >= 0 && (size_t)i < n ? all[i] : NULL;
	struct request *r;

	if (from == NULL)
		return;
	r = control_request_new(from,
	    json_object_get(attach, "id")); /* it takes a reference */
	c->attach = r;
	control_on_gone(r, control_attach_gone_adopted, c);
	control_request_set_lasting(r);
}

struct request *
control_upgrade_adopt(const json_t *saved)
{
	const json_t *clients = json_object_get(saved, "clients"), *e;
	size_t n = json_array_size(clients), i;
	struct client **all = xcalloc(n + 1, sizeof *all);
	struct request *upgrade = NULL;
	const json_t *client;

	json_array_foreach(clients, i, e) {
		int in = (int)json_integer_value(json_object_get(e, "in"));
		int out = (int)json_integer_value(json_object_get(e, "out"));

		if (!json_is_object(e))
			continue;
		client = json_object_get(e, "client");
		all[i] = control_client_new(in, out,
		    json_string_value(json_object_get(client, "agent")),
		    control_client_saved_scope(client));
		if (in == out)
			fdread_take_fds(&all[i]->rd);
		control_client_restore(all[i], client);
		upgrade_bytes_restore(all[i]->rd.in,
		    json_object_get(e, "unread"));
		upgrade_bytes_restore(bufferevent_get_output(all[i]->bev),
		    json_object_get(e, "unsent"));
		if (json_object_get(e, "upgrade") != NULL)
			upgrade = control_request_new(all[i],
			    json_object_get(e, "upgrade"));
		if (json_object_get(e, "attach") != NULL)
			control_attach_restore(all[i],
			    json_object_get(e, "attach"), all, n);
	}
	/* What came while the old one drained is read now. */
	for (i = 0; i < n; i++)
		if (all[i] != NULL)
			fdread_kick(&all[i]->rd);
	free(all);
	return upgrade;
}

int
control_upgrade_listen_fd(void)
{
	const json_t *state = upgrade_state();
	const json_t *control = json_object_get(state, "control");

	if (state == NULL)
		return -1;
	/* Bound by mcpd before: unlinked when this one stops. */
	if (json_string_value(json_object_get(control, "path")) != NULL)
		control_path =
		    xstrdup(json_string_value(json_object_get(control,
			"path")));
	return (int)json_integer_value(json_object_get(control, "listen"));
}
