/* SPDX-License-Identifier: ISC */
/* Tool calls: checks, the call in flight, its progress and its answer. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnv.h"
#include "log.h"
#include "server-int.h"

const json_t *
server_tool_peek(const struct server *s, const char *tool)
{
	json_t *tools = server_tools_peek(s), *t;
	size_t i;

	json_array_foreach(tools, i, t) {
		const char *name = json_string_value(json_object_get(t,
		    "name"));

		if (name != NULL && strcmp(name, tool) == 0)
			return t;
	}
	return NULL;
}

bool
server_in_gateway_scope(const struct server *s, const char *agent,
    const json_t *scope)
{
	return strcmp(s->agent, agent) == 0 &&
	    (session_is_ready(s->session) || server_idle_is_listed(s)) &&
	    server_scope_has(scope, s->name);
}

bool
server_scope_has(const json_t *scope, const char *name)
{
	const json_t *one;
	size_t i;

	if (scope == NULL)
		return true;
	json_array_foreach(scope, i, one)
		if (json_is_string(one) &&
		    strcmp(json_string_value(one), name) == 0)
			return true;
	return false;
}

json_t *
server_gateway_offering(const char *agent, const json_t *scope,
    const char *capability)
{
	json_t *names = json_array();
	struct server *s;

	TAILQ_FOREACH(s, &server_list, entry)
		if (server_in_gateway_scope(s, agent, scope) &&
		    json_object_get(server_capabilities_peek(s), capability) !=
			NULL)
			json_array_append_new(names, json_string(s->name));
	return names;
}

json_t *
server_gateway_instructions(const char *agent, const json_t *scope)
{
	json_t *all = json_array();
	const char *text;
	struct server *s;

	TAILQ_FOREACH(s, &server_list, entry)
		if (server_in_gateway_scope(s, agent, scope) &&
		    (text = server_instructions_peek(s)) != NULL)
			json_array_append_new(all,
			    json_pack("{s:s, s:s}", "server", s->name,
				"instructions", text));
	return all;
}

int
server_forward(const char *agent, const char *name, const char *method,
    json_t *params, session_reply_fn *cb, void *arg)
{
	struct server *s = server_find_name(agent, name);
	bool is_modern = era_is_modern_request(params);
	int64_t id;

	if (s != NULL && server_kept_answers(s, method, params, cb, arg))
		return 0;
	if (s != NULL && server_idle_hold_forward(s, method, params, cb, arg))
		return 0;
	if (s == NULL || !session_is_ready(s->session)) {
		json_decref(params);
		return -ENOENT;
	}
	server_idle_used(s);
	id = session_request(s->session, method, params,
	    mcpd_opts.call_timeout_ms, cb, arg);
	if (id > 0 && is_modern)
		session_pass_input_required(s->session, id);
	return 0;
}

json_t *
server_gateway_catalog(const char *agent, const json_t *scope)
{
	json_t *out = json_array(), *tools, *tool, *e;
	const char *name;
	struct server *s;
	size_t i;

	TAILQ_FOREACH(s, &server_list, entry) {
		if (!server_in_gateway_scope(s, agent, scope) ||
		    session_is_catalog_retired(s->session))
			continue;
		tools = server_tools_peek(s);
		json_array_foreach(tools, i, tool) {
			if ((name = json_string_value(json_object_get(tool,
				 "name"))) == NULL)
				continue;
			e = json_pack("{s:s, s:s, s:O}", "server", s->name,
			    "id", s->id, "tool", tool);
			if (server_pins_is_held(s, name))
				json_object_set_new(e, "is_held", json_true());
			json_array_append_new(out, e);
		}
	}
	return out;
}

uint64_t
server_gateway_key(const char *agent, const json_t *scope)
{
	uint64_t h = FNV64_INIT ^ server_pins_generation(), serial;
	struct server *s;
	bool is_retired;

	TAILQ_FOREACH(s, &server_list, entry) {
		if (!server_in_gateway_scope(s, agent, scope))
			continue;
		serial = s->session != NULL ? session_tools_serial(s->session) :
					      s->kept_serial;
		is_retired = session_is_catalog_retired(s->session);
		h = fnv64_add(h, s->id, strlen(s->id) + 1);
		h = fnv64_add(h, &s->generation, sizeof s->generation);
		h = fnv64_add(h, &serial, sizeof serial);
		h = fnv64_add(h, &is_retired, sizeof is_retired);
	}
	return h;
}

static void
server_on_call_reply(struct server_reply *rep, const struct session_reply *r)
{
	json_t *data;

	if (r->result != NULL) {
		rep->ops->reply(rep, json_incref(r->result));
		return;
	}
	if (r->error != NULL && r->kind == ERRORS_STALE_HANDLE) {
		data = json_pack("{s:O}", "upstream", r->error);
		server_reply_fail(rep, ERRORS_STALE_HANDLE, data,
		    "the server refused the call's headers (HeaderMismatch: %s), so the tools it listed no longer match what it checks; nothing was sent again; reload the server (mcpctl reload) and list its tools again",
		    r->message);
		return;
	}
	if (r->error != NULL) {
		data = json_pack("{s:O}", "upstream", r->error);
		server_reply_fail(rep, ERRORS_UPSTREAM, data,
		    "the server answered with an error: %s", r->message);
		return;
	}
	data = r->kind == ERRORS_OUTCOME_UNKNOWN ?
	    json_pack("{s:s}", "execution_outcome", "unknown") :
	    NULL;
	rep->ops->fail(rep, r->kind, data, r->message);
}

/*
 * The hook that cancels a call in flight if its client goes is registered
 * only while the session holds the request, and every end of the request
 * (answer, failure, deadline, a session that dies) comes through the
 * callbacks below, which unregister it first: it can never reach a session
 * that is gone.
 */

static void
server_call_gone(void *arg)
{
	struct server_pending_call *pc = arg;

	session_cancel(pc->session, pc->id, "the client that asked has gone");
}

/* Calls, kept for reuse: the hot path allocates nothing. */
static struct xrecycle server_calls = XRECYCLE_INIT(struct server_pending_call,
    256);

/* The call has its answer: what it held goes (rep is answered next). */
static struct server_reply *
server_pending_call_end(struct server_pending_call *pc)
{
	struct server_reply *rep = pc->reply;

	rep->ops->on_gone(rep, NULL, NULL);
	TAILQ_REMOVE(&pc->server->calls, pc, entry);
	server_idle_used(pc->server); /* its idle time counts from here */
	json_decref(pc->caller_token);
	json_decref(pc->caps);
	server_unref(pc->server);
	session_unref(pc->session);
	xrecycle_put(&server_calls, pc);
	return rep;
}

/* The record's end of a result as the server's text. */
static void
server_audit_raw(struct audit_call *ac, size_t len, bool is_error)
{
	struct audit_end end = { is_error ? "tool-error" : "ok", 0, NULL, len };

	audit_call_end(ac, &end);
}

/*
 * The result goes to the caller as the server's checked text: a
 * 2026-07-28 caller's reply adds its resultType to it (a server of an
 * older era sends none).
 */
static void
server_on_pending_call_raw(void *arg, const char *result, size_t len,
    bool is_error)
{
	struct server_pending_call *pc = arg;
	struct audit_call *ac = pc->audit;
	struct server_reply *rep = server_pending_call_end(pc);

	server_audit_raw(ac, len, is_error);
	rep->ops->reply_raw(rep, result, len);
}

/* An MCP caller gets the server's own error as it is (mcpd's for a stale
 * catalog); an mcpd/call caller gets it as mcpd's upstream error. */
static void
server_on_pending_call_reply(void *arg, const struct session_reply *r)
{
	struct server_pending_call *pc = arg;
	bool is_mcp = pc->is_mcp;
	struct audit_call *ac = pc->audit;
	struct server_reply *rep = server_pending_call_end(pc);

	audit_call_end_reply(ac, r);
	if (is_mcp && r->error != NULL && r->kind != ERRORS_STALE_HANDLE)
		rep->ops->reply_error(rep, r->error);
	else
		server_on_call_reply(rep, r);
}

/*
 * What an mcpd/call caller adds upstream: its retry's inputResponses and
 * requestState, and, to a 2026-07-28 server whose input requests it
 * answers, its client capabilities in place of mcpd's.
 */
static void
server_call_add_opts(struct server_pending_call *pc, json_t *params,
    const struct server_call_opts *opts)
{
	const char *version = session_protocol_version(pc->session);
	json_t *caps;

	if (opts->input_responses != NULL)
		json_object_set(params, "inputResponses",
		    (json_t *)(uintptr_t)opts->input_responses);
	if (opts->request_state != NULL)
		json_object_set(params, "requestState",
		    (json_t *)(uintptr_t)opts->request_state);
	if (!opts->takes_input || version == NULL ||
	    strcmp(version, ERA_MODERN) != 0)
		return;
	caps = pc->caps != NULL ? json_deep_copy(pc->caps) : json_object();
	json_object_set_new(params, "_meta",
	    json_pack("{s:o}", ERA_CLIENT_CAPABILITIES_KEY, caps));
}

/*
 * The upstream request: an MCP caller's params as they are (inputResponses,
 * requestState, _meta ...) but the tool's own name; a caller that asked
 * for progress gets the server's, its token mapped to one of mcpd's.
 */
static json_t *
server_call_params(struct server_pending_call *pc, const char *tool,
    json_t *arguments, const json_t *mcp_params,
    const struct server_call_opts *opts)
{
	static uint64_t next_token;
	json_t *params = mcp_params != NULL ? json_deep_copy(mcp_params) :
					      json_object();
	json_t *meta;

	if (mcp_params == NULL && opts != NULL)
		server_call_add_opts(pc, params, opts);
	meta = json_object_get(params, "_meta");
	json_object_set_new(params, "name", json_string(tool));
	json_object_set(params, "arguments", arguments);
	json_object_del(meta, "progressToken");
	if (json_is_object(meta) && json_object_size(meta) == 0)
		json_object_del(params, "_meta");
	if (!pc->reply->ops->wants_progress(pc->reply) &&
	    pc->caller_token == NULL)
		return params;
	snprintf(pc->token, sizeof pc->token, "mcpd-%" PRIu64, ++next_token);
	if (!json_is_object(meta = json_object_get(params, "_meta")))
		json_object_set_new(params, "_meta", meta = json_object());
	json_object_set_new(meta, "progressToken", json_string(pc->token));
	return params;
}

/* Progress to its caller: mcpd/progress, or MCP's with the caller's token. */
static void
server_call_progress(struct server *s, struct server_pending_call *pc,
    const json_t *params)
{
	if (pc->caller_token != NULL)
		pc->reply->ops->notify_mcp(pc->reply, "notifications/progress",
		    json_pack("{s:O, s:O*, s:O*, s:O*}", "progressToken",
			pc->caller_token, "progress",
			json_object_get(params, "progress"), "total",
			json_object_get(params, "total"), "message",
			json_object_get(params, "message")));
	else if (pc->token[0] != '\0')
		pc->reply->ops->notify(pc->reply, "mcpd/progress",
		    json_pack("{s:s, s:O*, s:O*, s:O*}", "server", s->name,
			"progress", json_object_get(params, "progress"),
			"total", json_object_get(params, "total"), "message",
			json_object_get(params, "message")));
}

/* A log message to a caller that wants them, at the level it asked. */
static void
server_call_log(struct server *s, struct server_pending_call *pc,
    const json_t *params)
{
	struct server_reply *rep = pc->reply;

	if (pc->is_mcp &&
	    rep->ops->wants_log(rep,
		json_string_value(json_object_get(params, "level"))))
		rep->ops->notify_mcp(rep, "notifications/message",
		    json_deep_copy(params));
	else if (!pc->is_mcp && pc->token[0] != '\0')
		rep->ops->notify(rep, "mcpd/message",
		    json_pack("{s:s, s:O*, s:O*, s:O*}", "server", s->name,
			"level", json_object_get(params, "level"), "logger",
			json_object_get(params, "logger"), "data",
			json_object_get(params, "data")));
}

void
server_call_notify(struct server *s, const char *method, const json_t *params)
{
	const char *token = json_string_value(json_object_get(params,
	    "progressToken"));
	struct server_pending_call *pc;

	TAILQ_FOREACH(pc, &s->calls, entry) {
		if (strcmp(method, "notifications/progress") == 0 &&
		    token != NULL && pc->token[0] != '\0' &&
		    strcmp(token, pc->token) == 0) {
			server_call_progress(s, pc, params);
			return;
		}
		/* A log message belongs to no call: each caller sees it. */
		if (strcmp(method, "notifications/message") == 0)
			server_call_log(s, pc, params);
	}
}

void
server_call_refused(const struct server *s, const char *tool,
    struct server_reply *rep, enum errors_kind kind)
{
	struct call_who who;

	rep->ops->who(rep, &who);
	audit_refused(&who, "tools/call", s->name, tool, 0, kind);
}

/*
 * The policy's verdict on rep's call of tool of s: GO with its decision
 * (*ret_decision, new), ASK (the call is held with it), or REFUSED (rep
 * failed).
 */
static enum policy_verdict
server_call_check(struct server *s, const char *tool, struct server_reply *rep,
    json_t **ret_decision)
{
	struct call_who who;

	rep->ops->who(rep, &who);
	return policy_call_check(&who, rep, s, tool, ret_decision);
}

/*
 * The record of rep's call of tool of s (arguments parsed, or as text
 * when args is not NULL), admitted; NULL with *ret_refused set when the
 * audit log must be written and cannot be (rep failed), else the record
 * (NULL too when the log is off).
 */
static struct audit_call *
server_call_record(struct server *s, const char *tool, struct server_reply *rep,
    const json_t *arguments, const char *args, size_t len, json_t *decision,
    bool *ret_refused)
{
	struct audit_call *ac;
	struct call_who who;
	char *why;

	rep->ops->who(rep, &who);
	ac = args != NULL ?
	    audit_call_new_text(&who, "tools/call", s->name, tool,
		server_tool_definition(s, tool), args, len) :
	    audit_call_new(&who, "tools/call", s->name, tool,
		server_tool_definition(s, tool), arguments);
	audit_call_set_decision(ac, decision);
	*ret_refused = false;
	if ((why = audit_admit(ac, s->name)) == NULL)
		return ac;
	*ret_refused = true;
	rep->ops->fail(rep, ERRORS_STORAGE, NULL, why);
	free(why);
	return NULL;
}

/* Whether s can take a call of tool now; else rep fails saying why. */
static bool
server_call_allowed(struct server *s, uint64_t generation, const char *tool,
    struct server_reply *rep)
{
	if (generation != 0 && generation != s->generation) {
		server_call_refused(s, tool, rep, ERRORS_STALE_HANDLE);
		server_reply_fail(rep, ERRORS_STALE_HANDLE,
		    json_pack("{s:I}", "current_generation",
			(json_int_t)s->generation),
		    "the handle belongs to generation %" PRIu64
		    " of %s, which is now at generation %" PRIu64
		    "; list tools again",
		    generation, s->name, s->generation);
		return false;
	}
	if (session_is_catalog_retired(s->session)) {
		server_call_refused(s, tool, rep, ERRORS_STALE_HANDLE);
		server_reply_fail(rep, ERRORS_STALE_HANDLE,
		    json_pack("{s:I}", "current_generation",
			(json_int_t)s->generation),
		    "the tools of generation %" PRIu64
		    " of %s are retired: the server refused a call's headers (HeaderMismatch); reload it (mcpctl reload %s) and list its tools again",
		    s->generation, s->name, s->name);
		return false;
	}
	if (s->state == SERVER_FAILED || s->state == SERVER_REMOVING) {
		/* Waiting does not help: it will not start by itself. */
		server_call_refused(s, tool, rep, ERRORS_UNAVAILABLE);
		server_reply_fail(rep, ERRORS_UNAVAILABLE, NULL,
		    "server %s failed: %s; it will not start by itself: see why with mcpctl logs %s and mcpctl inspect %s, then mcpctl reload %s",
		    s->name,
		    s->last_error != NULL ? s->last_error : "no error kept",
		    s->name, s->name, s->name);
		return false;
	}
	if (!session_is_ready(s->session)) {
		server_call_refused(s, tool, rep, ERRORS_UNAVAILABLE);
		server_reply_fail(rep, ERRORS_UNAVAILABLE, NULL,
		    "server %s is %s; try again when it is ready%s%s%s",
		    s->name, server_state_shown(s),
		    s->last_error != NULL ? " (last error: " : "",
		    s->last_error != NULL ? s->last_error : "",
		    s->last_error != NULL ? ")" : "");
		return false;
	}
	if (server_tool_peek(s, tool) == NULL) {
		server_call_refused(s, tool, rep, ERRORS_NOT_FOUND);
		server_reply_fail(rep, ERRORS_NOT_FOUND,
		    json_pack("{s:s}", "what", "tool"),
		    "server %s has no tool named %s", s->name, tool);
		return false;
	}
	return server_pins_call_ok(s, tool, rep);
}

/*
 * Whether the caller typed the arguments by the tool's definition as it
 * is now (or named none); else rep fails with the definition it is.
 */
static bool
server_call_is_defined(struct server *s, const char *tool,
    const struct server_call_opts *opts, struct server_reply *rep)
{
	if (opts->definition == NULL ||
	    server_tool_is_defined_as(s, tool, opts->definition))
		return true;
	server_call_refused(s, tool, rep, ERRORS_TOOL_CHANGED);
	server_reply_fail(rep, ERRORS_TOOL_CHANGED,
	    json_pack("{s:o*}", "tool", server_tool_listed(s, tool)),
	    "the definition of %s's tool %s is not the one the arguments were made for; nothing was sent; type them by data.tool and call again",
	    s->name, tool);
	return false;
}

/* The call, in s->calls until it ends (mcp_params, opts: as below). */
static struct server_pending_call *
server_pending_call_new(struct server *s, int timeout_ms,
    struct server_reply *rep, const json_t *mcp_params,
    const struct server_call_opts *opts)
{
	struct server_pending_call *pc = xrecycle_get(&server_calls);

	pc->reply = rep;
	pc->timeout_ms = timeout_ms;
	pc->is_mcp = mcp_params != NULL;
	pc->is_modern = era_is_modern_request(mcp_params);
	if (pc->is_mcp) {
		pc->caps = (json_t *)(uintptr_t)rep->ops->caps(rep);
		pc->takes_input = pc->is_modern;
	} else if (opts != NULL) {
		pc->caps = (json_t *)(uintptr_t)opts->caps;
		pc->takes_input = opts->takes_input;
	}
	json_incref(pc->caps);
	pc->caller_token =
	    json_incref(json_object_get(json_object_get(mcp_params, "_meta"),
		"progressToken"));
	pc->server = s;
	pc->session = s->session;
	server_ref(s);
	session_ref(pc->session); /* the hook may cancel through it */
	TAILQ_INSERT_TAIL(&s->calls, pc, entry);
	server_idle_used(s);
	return pc;
}

/* Its request went upstream as id, or (0) fails from the loop. */
static void
server_call_sent(struct server_pending_call *pc, int64_t id)
{
	if (id <= 0)
		return; /* nothing to cancel */
	pc->id = id;
	if (pc->takes_input)
		session_pass_input_required(pc->session, id);
	pc->reply->ops->on_gone(pc->reply, server_call_gone, pc);
}

/*
 * A call of either kind of caller: an MCP caller's tools/call params
 * (mcp_params), or an mcpd/call's opts (each may be NULL).
 */
static void
server_call_start(struct server *s, uint64_t generation, const char *tool,
    json_t *arguments, int timeout_ms, struct server_reply *rep,
    const json_t *mcp_params, const struct server_call_opts *opts,
    json_t *decided)
{
	struct server_pending_call *pc;
	struct audit_call *ac;
	bool is_refused;
	json_t *params, *decision = decided;

	if (server_idle_hold_call(s, generation, tool, arguments, timeout_ms,
		rep, mcp_params, opts))
		return;
	if (!server_call_allowed(s, generation, tool, rep) ||
	    (opts != NULL && !server_call_is_defined(s, tool, opts, rep))) {
		json_decref(decided);
		return;
	}
	/* The policy decides once: an approved call is not asked again. */
	if (decided == NULL)
		switch (server_call_check(s, tool, rep, &decision)) {
		case POLICY_REFUSED:
			return;
		case POLICY_ASK:
			policy_ask_hold(rep, s, generation, tool, arguments,
			    timeout_ms, mcp_params, opts, decision);
			return;
		case POLICY_GO:
			break;
		}
	ac = server_call_record(s, tool, rep, arguments, NULL, 0, decision,
	    &is_refused);
	if (is_refused)
		return;
	pc = server_pending_call_new(s, timeout_ms, rep, mcp_params, opts);
	pc->audit = ac;
	params = server_call_params(pc, tool, arguments, mcp_params, opts);
	server_call_sent(pc,
	    session_request_raw(s->session, "tools/call", params, timeout_ms,
		server_on_pending_call_reply, server_on_pending_call_raw, pc));
}

/* Text that goes between a JSON string's quotes as it is. */
static bool
server_is_plain_text(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20)
			return false;
	return true;
}

/*
 * The arguments the scanner vouched for, parsed (new); NULL after failing
 * rep: should jansson disagree, that is mcpd's fault, and it costs this
 * request only.
 */
static json_t *
server_call_parse(struct server *s, const char *tool, const char *args,
    size_t len, struct server_reply *rep)
{
	json_error_t error;
	json_t *arguments = json_loadb(args, len, 0, &error);

	if (arguments != NULL)
		return arguments;
	log_warnx(
	    "%s: call of %s: the scanner took arguments that jansson refuses (%s at byte %d); the call fails",
	    s->name, tool, error.text, error.position);
	server_reply_fail_code(rep, JSONRPC_INTERNAL_ERROR, NULL,
	    "mcpd could not parse the arguments it had checked: %s",
	    error.text);
	return NULL;
}

void
server_call_text(struct server *s, const char *tool, const char *args,
    size_t len, int timeout_ms, struct server_reply *rep,
    const json_t *mcp_params)
{
	struct server_pending_call *pc;
	struct audit_call *ac;
	bool is_refused;
	json_t *arguments, *decision;
	struct iovec params[] = { { (void *)(uintptr_t) "{\"name\":\"", 9 },
		{ (void *)(uintptr_t)tool, strlen(tool) },
		{ (void *)(uintptr_t) "\",\"arguments\":", 14 },
		{ (void *)(uintptr_t)args, len },
		{ (void *)(uintptr_t) "}", 1 } };

	if (server_idle_hold_text(s, tool, args, len, timeout_ms, rep,
		mcp_params))
		return;
	if (!session_takes_text(s->session) || !server_is_plain_text(tool)) {
		if ((arguments = server_call_parse(s, tool, args, len, rep)) ==
		    NULL)
			return;
		server_call_start(s, 0, tool, arguments, timeout_ms, rep,
		    mcp_params, NULL, NULL);
		json_decref(arguments);
		return;
	}
	if (!server_call_allowed(s, 0, tool, rep))
		return;
	switch (server_call_check(s, tool, rep, &decision)) {
	case POLICY_REFUSED:
		return;
	case POLICY_ASK:
		/* Held, it is parsed: what waits is a copy, not the line. */
		if ((arguments = server_call_parse(s, tool, args, len, rep)) !=
		    NULL)
			policy_ask_hold(rep, s, 0, tool, arguments, timeout_ms,
			    mcp_params, NULL, decision);
		else
			json_decref(decision);
		json_decref(arguments);
		return;
	case POLICY_GO:
		break;
	}
	ac = server_call_record(s, tool, rep, NULL, args, len, decision,
	    &is_refused);
	if (is_refused)
		return;
	pc = server_pending_call_new(s, timeout_ms, rep, mcp_params, NULL);
	pc->audit = ac;
	server_call_sent(pc,
	    session_request_text(s->session, "tools/call", params, 5,
		timeout_ms, server_on_pending_call_reply,
		server_on_pending_call_raw, pc));
}

void
server_call(struct server *s, uint64_t generation, const char *tool,
    json_t *arguments, int timeout_ms, struct server_reply *rep,
    const struct server_call_opts *opts)
{
	server_call_start(s, generation, tool, arguments, timeout_ms, rep, NULL,
	    opts, NULL);
}

void
server_call_held(struct server *s, uint64_t generation, const char *tool,
    json_t *arguments, int timeout_ms, struct server_reply *rep,
    const json_t *mcp_params, const struct server_call_opts *opts,
    json_t *decision)
{
	if (s->is_dead) {
		json_decref(decision);
		server_call_refused(s, tool, rep, ERRORS_UNAVAILABLE);
		server_reply_fail(rep, ERRORS_UNAVAILABLE, NULL,
		    "server %s was unloaded while the call of %s waited for approval; nothing was sent",
		    s->name, tool);
		return;
	}
	server_call_start(s, generation, tool, arguments, timeout_ms, rep,
	    mcp_params, opts, decision);
}

void
server_call_mcp(struct server *s, uint64_t generation, const char *tool,
    json_t *arguments, int timeout_ms, struct server_reply *rep,
    const json_t *mcp_params)
{
	server_call_start(s, generation, tool, arguments, timeout_ms, rep,
	    mcp_params, NULL, NULL);
}
