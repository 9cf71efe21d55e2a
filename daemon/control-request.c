/* SPDX-License-Identifier: ISC */
/* A control request's life: what it may know, and how it is answered. */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "control-int.h"
#include "log.h"
#include "server-reply.h"

const char *
control_agent(const struct request *r)
{
	return r->client != NULL ? r->client->agent : "default";
}

void
control_set_scope(struct request *r, json_t *servers)
{
	if (r->client != NULL)
		control_client_set_scope(r->client, servers);
}

void
control_set_bridge(struct request *r, pid_t pid, const char *exe)
{
	struct client *c = r->client;

	if (c == NULL)
		return;
	c->is_bridge = true;
	c->bridge_pid = pid;
	free(c->bridge_exe);
	c->bridge_exe = exe != NULL ? xstrdup(exe) : NULL;
}

void
control_client_set_profile(struct client *c, const char *profile)
{
	free(c->profile);
	c->profile = profile != NULL ? xstrdup(profile) : NULL;
}

const char *
control_client_profile(const struct client *c)
{
	return c->profile;
}

void
control_client_set_who(struct client *c, json_t *who)
{
	json_decref(c->who);
	c->who = who;
}

void
control_set_view_error(struct request *r, const char *why)
{
	if (r->client != NULL)
		control_client_set_view_error(r->client, why);
}

void
control_client_set_view_error(struct client *c, const char *why)
{
	free(c->view_error);
	c->view_error = why != NULL ? xstrdup(why) : NULL;
}

void
control_client_set_scope(struct client *c, json_t *servers)
{
	json_decref(c->scope);
	c->scope = json_incref(servers);
}

void
control_set_roots_project(struct request *r)
{
	if (r->client != NULL)
		r->client->is_roots_project = true;
}

bool
control_client_roots_project(const struct client *c)
{
	return c->is_roots_project;
}

const char *
control_client_view_error(const struct client *c)
{
	return c->view_error;
}

void
control_set_profile(struct request *r, const char *profile)
{
	if (r->client != NULL)
		control_client_set_profile(r->client, profile);
}

const char *
control_profile(const struct request *r)
{
	return r->client != NULL ? r->client->profile : NULL;
}

const json_t *
control_scope(const struct request *r)
{
	return r->client != NULL ? r->client->scope : NULL;
}

struct gateway *
control_gateway(struct request *r)
{
	struct client *c = r->client;

	if (c == NULL)
		return NULL;
	if (c->gateway == NULL)
		c->gateway = gateway_new(c);
	return c->gateway;
}

const char *
control_client_agent(const struct client *c)
{
	return c->agent;
}

const json_t *
control_client_scope(const struct client *c)
{
	return c->scope;
}

int
control_client_notify(struct client *c, const char *method, json_t *params)
{
	if (c == NULL || c->is_closing) {
		json_decref(params);
		return -EPIPE;
	}
	if (control_output_length(c) > mcpd_opts.max_client_output) {
		json_decref(params);
		return -ENOBUFS;
	}
	control_send(c, jsonrpc_notification(method, params));
	return 0;
}

int
control_notify_mcp(const struct request *r, const char *method, json_t *params)
{
	if (r == NULL || r->client == NULL) {
		json_decref(params);
		return -EPIPE;
	}
	return control_client_notify(r->client, method, params);
}

struct gateway *
control_gateway_of(const struct request *r)
{
	return r != NULL && r->client != NULL ? r->client->gateway : NULL;
}

void
control_cancel(struct client *c, const json_t *params)
{
	const json_t *id = json_object_get(params, "requestId");
	struct request *r;
	void (*fn)(void *);

	TAILQ_FOREACH(r, &c->requests, entry)
		if (json_equal(r->id, id))
			break;
	if (r == NULL || r->is_cancelled)
		return; /* answered already, or never asked: nothing to do */
	r->is_cancelled = true;
	if ((fn = r->gone_fn) != NULL) {
		r->gone_fn = NULL;
		fn(r->gone_arg);
	}
}

void
control_set_agent(struct request *r, const char *agent)
{
	char *copy;

	if (r->client == NULL)
		return;
	copy = xstrdup(agent);
	free(r->client->agent);
	r->client->agent = copy;
}

void
control_on_gone(struct request *r, void (*fn)(void *), void *arg)
{
	r->gone_fn = fn;
	r->gone_arg = arg;
}

void
control_request_set_lasting(struct request *r)
{
	r->is_lasting = true;
}

const json_t *
control_request_id(const struct request *r)
{
	return r->id;
}

const json_t *
control_who(const struct request *r)
{
	return r->client != NULL ? r->client->who : NULL;
}

void
control_call_who(const struct request *r, struct call_who *ret)
{
	ret->agent = control_agent(r);
	ret->profile = control_profile(r);
	ret->client = control_who(r);
	ret->session = control_gateway_of(r);
}

const struct client *
control_request_client(const struct request *r)
{
	return r->client;
}

bool
control_wants_progress(const struct request *r)
{
	return r->wants_progress;
}

void
control_want_progress(struct request *r)
{
	r->wants_progress = true;
}

int
control_notify(const struct request *r, const char *method, json_t *params)
{
	if (r == NULL || r->client == NULL || r->client->is_closing) {
		json_decref(params);
		return -EPIPE;
	}
	if (control_output_length(r->client) > mcpd_opts.max_client_output) {
		json_decref(params);
		return -ENOBUFS;
	}
	json_object_set(params, "request", r->id);
	control_send(r->client, jsonrpc_notification(method, params));
	return 0;
}

void
control_progress(const struct request *r, const char *server, const char *stage,
    const char *message)
{
	if (r == NULL || !r->wants_progress)
		return;
	control_notify(r, "mcpd/progress",
	    json_pack("{s:s, s:s, s:s}", "server", server, "stage", stage,
		"message", message));
}

bool
control_is_live(const struct request *r)
{
	return r->client != NULL;
}

void
control_reply(struct request *r, json_t *result)
{
	control_finish(r, jsonrpc_result(r->id, result), NULL, 0);
}

void
control_reply_error(struct request *r, const json_t *error)
{
	control_finish(r,
	    json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0", "id", r->id, "error",
		error),
	    NULL, 0);
}

void
control_reply_raw(struct request *r, const char *result, size_t len)
{
	control_finish(r, NULL, result, len);
}

json_t *
control_error_msg(json_t *id, int code, enum errors_kind kind, bool has_kind,
    json_t *data, const char *fmt, va_list ap)
{
	char text[2048];
	json_t *msg;

	vsnprintf(text, sizeof text, fmt, ap);
	if (has_kind)
		msg = jsonrpc_error_kind(id, kind, text, data);
	else
		msg = jsonrpc_error(id, code, text, data);
	return msg;
}

void
control_fail(struct request *r, enum errors_kind kind, json_t *data,
    const char *fmt, ...)
{
	va_list ap;
	json_t *msg;

	va_start(ap, fmt);
	msg = control_error_msg(r->id, errors_kind_code(kind), kind, true, data,
	    fmt, ap);
	va_end(ap);
	control_finish(r, msg, NULL, 0);
}

void
control_fail_code(struct request *r, int code, json_t *data, const char *fmt,
    ...)
{
	va_list ap;
	json_t *msg;

	va_start(ap, fmt);
	msg = control_error_msg(r->id, code, 0, false, data, fmt, ap);
	va_end(ap);
	control_finish(r, msg, NULL, 0);
}

/* ---- the completion interface of the server layer (server-reply.h) ---- */

struct request *
control_reply_request(const struct server_reply *rep)
{
	/* The reply lives inside its request (control_server_reply). */
	return (struct request *)((char *)(uintptr_t)rep -
	    offsetof(struct request, reply));
}

static void
control_rep_reply(struct server_reply *rep, json_t *result)
{
	control_reply(control_reply_request(rep), result);
}

static void
control_rep_reply_raw(struct server_reply *rep, const char *result, size_t len)
{
	control_reply_raw(control_reply_request(rep), result, len);
}

static void
control_rep_reply_error(struct server_reply *rep, const json_t *error)
{
	control_reply_error(control_reply_request(rep), error);
}

static void
control_rep_fail(struct server_reply *rep, enum errors_kind kind, json_t *data,
    const char *message)
{
	control_fail(control_reply_request(rep), kind, data, "%s", message);
}

static void
control_rep_fail_code(struct server_reply *rep, int code, json_t *data,
    const char *message)
{
	control_fail_code(control_reply_request(rep), code, data, "%s",
	    message);
}

static void
control_rep_progress(struct server_reply *rep, const char *server,
    const char *stage, const char *message)
{
	control_progress(control_reply_request(rep), server, stage, message);
}

static int
control_rep_notify(struct server_reply *rep, const char *method, json_t *params)
{
	return control_notify(control_reply_request(rep), method, params);
}

static int
control_rep_notify_mcp(struct server_reply *rep, const char *method,
    json_t *params)
{
	return control_notify_mcp(control_reply_request(rep), method, params);
}

static bool
control_rep_wants_progress(const struct server_reply *rep)
{
	return control_wants_progress(control_reply_request(rep));
}

static bool
control_rep_is_live(const struct server_reply *rep)
{
	return control_is_live(control_reply_request(rep));
}

static void
control_rep_on_gone(struct server_reply *rep, void (*fn)(void *), void *arg)
{
	control_on_gone(control_reply_request(rep), fn, arg);
}

static const char *
control_rep_ask(struct server_reply *rep, int timeout_ms, const char *method,
    json_t *params, server_answer_fn *cb, void *arg)
{
	int r = control_ask(control_reply_request(rep), timeout_ms, method,
	    params, cb, arg);

	return r < 0 ? control_ask_refusal(r) : NULL;
}

/* An mcpd/ caller declares no capabilities and takes no MCP log messages. */
static const json_t *
control_rep_caps(const struct server_reply *rep)
{
	(void)rep;
	return NULL;
}

static bool
control_rep_wants_log(const struct server_reply *rep, const char *level)
{
	(void)rep, (void)level;
	return false;
}

static void
control_rep_who(const struct server_reply *rep, struct call_who *ret)
{
	control_call_who(control_reply_request(rep), ret);
}

const struct server_reply_ops control_reply_ops = {
	.reply = control_rep_reply,
	.reply_raw = control_rep_reply_raw,
	.reply_error = control_rep_reply_error,
	.fail = control_rep_fail,
	.fail_code = control_rep_fail_code,
	.progress = control_rep_progress,
	.notify = control_rep_notify,
	.notify_mcp = control_rep_notify_mcp,
	.wants_progress = control_rep_wants_progress,
	.is_live = control_rep_is_live,
	.on_gone = control_rep_on_gone,
	.ask = control_rep_ask,
	.caps = control_rep_caps,
	.wants_log = control_rep_wants_log,
	.who = control_rep_who,
};

struct server_reply *
control_server_reply(struct request *r, const struct server_reply_ops *ops)
{
	server_reply_init(&r->reply, ops != NULL ? ops : &control_reply_ops,
	    r->client, control_agent(r), control_scope(r));
	return &r->reply;
}
