/* SPDX-License-Identifier: ISC */
/* The gateway's declarations: mcpd speaking MCP to agents (daemon/gateway*.c). */
#ifndef MCPD_GATEWAY_H
#define MCPD_GATEWAY_H

#include "mcpd.h"

/* gateway-names.c */
/*
 * Names each {server, tool} entry of all ("name" added): <server>__<tool>
 * (just <tool> unless is_prefixed), other characters than [A-Za-z0-9_-] as
 * '_'; a name too long for 64 characters, empty, or given to two entries is
 * cut and ends in '_' and 6 hex digits of a hash of server and tool, so
 * that it is the same on every run.
 */
void gateway_names(json_t *all, bool is_prefixed);
/*
 * The name a tool gets when it fits: <server>__<tool> (just <tool> unless
 * is_prefixed), other characters than [A-Za-z0-9_-] as '_' (new).
 */
char *gateway_name_plain(const char *server, const char *tool,
    bool is_prefixed);

/* gateway-instructions.c */
/*
 * What a gateway session of agent's scope (NULL: all) is told at
 * initialize: mcpd's line and each server's instructions under a heading
 * naming it, within --max-instructions bytes (a text cut says so); for a
 * one-server scope, that server's own text alone. New, or NULL for none.
 */
char *gateway_instructions(const char *agent, const json_t *scope);

/* gateway-roots.c: a server's roots/list that no call raised. */
/*
 * Answers request id of agent's server (over sess) with the roots of the
 * agent's gateway sessions that see it and declared roots, asked each
 * within --roots-timeout: theirs when they all agree, else an empty list
 * (the log says why, at debug level). The answer goes from the loop.
 */
void gateway_roots_answer(const char *agent, const char *server,
    struct session *sess, const json_t *id);

/* gateway.c: mcpd answering MCP on the control socket (DESIGN 11). */
struct gateway *gateway_new(struct client *);
void gateway_free(struct gateway *);
/* An MCP request on a control connection. */
void gateway_dispatch(struct request *, const char *method, json_t *params);
/*
 * gateway-reply.c: req's completion for the server layer, for an MCP
 * caller whose tools/call params are params: the control layer's, with its
 * session's capabilities and log level, and a 2026-07-28 caller's result
 * shaped by gateway_answer (as text when it comes as the server's).
 */
struct server_reply *gateway_server_reply(struct request *,
    const json_t *params);
/* Whether a plain tools/call of this session may take the hot path. */
bool gateway_takes_text(const struct gateway *);
/*
 * The hot path of tools/call (daemon/control-fast.c): a call of name with
 * its arguments as JSON text, answered as gateway_dispatch would.
 */
void gateway_tools_call_text(struct gateway *, struct request *,
    const char *name, const char *args, size_t len);
/* An MCP notification of the client (initialized, roots changed ...). */
void gateway_notification(struct gateway *, const char *method,
    const json_t *params);
/* The tools of agent's scope changed: list_changed to its sessions. */
void gateway_tools_changed(const char *agent);
/*
 * Agent's profile name changed (or, is_default, which one is its
 * default): list_changed to the sessions whose view it makes.
 */
void gateway_profile_changed(const char *agent, const char *name,
    bool is_default);
/* True when the session (may be NULL) takes log messages of level. */
/* gateway-listen.c: 2026-07-28 subscriptions/listen of one session. */
struct gateway_listen;
/* Opens a listen on req (the session's previous one ends first). */
void gateway_listen_start(struct gateway_listen **slot, struct request *,
    const json_t *params);
/* The scope's lists changed: the notifications the listen asked for. */
void gateway_listen_changed(const struct gateway_listen *);
/* Ends the session's listen, if any (its answer goes from the loop). */
void gateway_listen_end(struct gateway_listen **slot);
json_t *gateway_listen_save(const struct gateway_listen *);
void gateway_listen_restore(struct gateway_listen **slot, struct client *,
    const json_t *saved);
bool gateway_wants_log(const struct gateway *, const char *level);
/* What the session declared at initialize (borrowed), or NULL. */
const json_t *gateway_client_caps_peek(const struct gateway *);
/* The session after gw (NULL: the first), or NULL after the last. */
struct gateway *gateway_next(const struct gateway *gw);
struct client *gateway_client(const struct gateway *);
/*
 * The session's view is made anew (its client's scope or profile changed);
 * list_changed goes to it when is_announced.
 */
void gateway_view_changed(struct gateway *, bool is_announced);

/* gateway-rootview.c: the view from the project file of the client's roots */
struct gateway_rootview;
/* For a session of a roots_project connection that declared roots. */
struct gateway_rootview *gateway_rootview_new(struct gateway *);
/* The session said initialized, or its roots changed: they are asked. */
void gateway_rootview_roots(struct gateway_rootview *);
/* Whether the view is being made (rv may be NULL: no). */
bool gateway_rootview_pending(const struct gateway_rootview *);
/*
 * True when req waits for the view (it runs through gateway_dispatch once
 * the view is made); false when it may run now.
 */
bool gateway_rootview_holds(struct gateway_rootview *, struct request *,
    const char *method, const json_t *params);
/* The session goes: what waits is dropped, what is in flight ends alone. */
void gateway_rootview_free(struct gateway_rootview *);
/* It is initialized, of a 2025 era, and declared roots: mcpd may ask it. */
bool gateway_takes_roots(const struct gateway *);
/* The tools/call requests the session sent (0 for NULL). */
uint64_t gateway_calls(const struct gateway *);
/* Its initialize's clientInfo as "name version" (borrowed), or NULL. */
const char *gateway_client_name(const struct gateway *);
/* A listed {server, tool: item, name} (may be NULL): routes come from it. */
void gateway_remember(struct gateway *, const char *key, const json_t *e);
/* Answers req with result (stolen), with what its era asks of a result. */
void gateway_answer(struct request *, const char *method, json_t *result);
/* Whether the session speaks 2026-07-28 (gateway_answer shapes results). */
bool gateway_is_modern(const struct gateway *);

/* gateway-view.c: what a session sees, by its profile (DESIGN 13). */
/*
 * What req's view is made of (agent, scope, profile and the generation of
 * profiles): equal keys, equal views, for caches of a view.
 */
uint64_t gateway_view_key(const struct request *req);
/* req's catalog cut to its view (new array). */
json_t *gateway_view_catalog(struct request *req);
/* Whether catalog entry e ({server, tool}) is in req's view. */
bool gateway_in_view(const struct request *req, const json_t *e);
/*
 * The servers of req's view: its scope (NULL: all) cut to its profile's
 * servers (new reference, or NULL).
 */
json_t *gateway_view_scope(const struct request *req);
/* Fails req, a call of name (entry e) outside its view, saying how to add it. */
void gateway_fail_outside(struct request *req, const char *name,
    const json_t *e);

/*
 * Whether mcpd/call of tool of s may go: always, unless the connection
 * chose a profile (mcpd/hello) whose view lacks it; then req is failed.
 */
bool gateway_view_call_ok(struct request *req, const struct server *s,
    const char *tool);

/*
 * The scope's tools, each with the name a session sees, held ones left
 * out (new array).
 */
json_t *gateway_catalog(const char *agent, const json_t *scope);
/* The Tool a client sees of a named catalog entry (new). */
json_t *gateway_tool_view(const json_t *e);
/* A session's tools/call (params: name, arguments, _meta), checked. */
void gateway_tools_call(struct gateway *, struct request *, json_t *params);
/* The session saw e's definition: a call checks it against this one. */
void gateway_listed(struct gateway *, const json_t *e);
/*
 * Is the session's view over its budget (it lists search)? all: its named
 * catalog, or NULL; the answer is kept until the catalog changes.
 */
bool gateway_is_searching(struct gateway *, struct request *,
    const json_t *all);
/* Tells the session its tools changed (next loop turn), if it listens. */
void gateway_tools_due(struct gateway *);
/* What the session found (gateway-search.c). */
struct gateway_search *gateway_search_of(const struct gateway *);

/* gateway-cost.c: what a view's tools/list costs (doc/views.md). */
/* The estimated tokens of so many bytes of JSON. */
size_t gateway_cost_tokens(size_t bytes);
/* The bytes of a tools/list result listing these Tool objects. */
size_t gateway_cost_views(const json_t *tools);
/* The same for named catalog entries, shown as a session sees them. */
size_t gateway_cost_entries(const json_t *all);
/*
 * The view's budget in estimated tokens (0: never over it) and the globs of
 * its pinned tools (borrowed): the one place a profile's replace the
 * defaults (--tool-budget, nothing pinned); gw NULL: the agent's default.
 */
long long gateway_view_budget(const struct gateway *gw);
const json_t *gateway_view_pins(const struct gateway *gw);
/* Does a tools/list of so many bytes exceed gw's budget? */
bool gateway_is_over_budget(const struct gateway *gw, size_t bytes);
/*
 * The cost of the default view of agent's scope: {tools, bytes, tokens,
 * budget, servers: [{server, tools, bytes, tokens}], search: {tools, bytes,
 * tokens} when over the budget}.
 */
json_t *gateway_cost(const char *agent, const json_t *scope);

/* gateway-search.c: a view over its budget (doc/views.md, "Search"). */
#define GATEWAY_FIND_TOOLS "mcpd__find_tools"
#define GATEWAY_CALL_TOOL  "mcpd__call_tool"
struct gateway_search;
struct gateway_search *gateway_search_new(void);
void gateway_search_free(struct gateway_search *);
/* The Tool objects of mcpd__find_tools and mcpd__call_tool (new array). */
json_t *gateway_search_tools(void);
/* Is name mcpd__find_tools or mcpd__call_tool? */
bool gateway_search_is_own(const char *name);
/* The entries of all a view over budget lists: pinned, or found (gs may be NULL). */
json_t *gateway_search_view(const struct gateway_search *gs, const json_t *all,
    const json_t *pins);
/*
 * A tools/call of mcpd__find_tools or mcpd__call_tool (name), answered
 * when the session's view is over its budget, else refused as unknown.
 */
void gateway_search_call(struct gateway *, struct request *, const char *name,
    json_t *params);

/* gateway-lists.c: prompts, resources and completions of every server. */
/* prompts/list, resources/list or resources/templates/list, merged. */
void gateway_fan_out(struct request *, const char *method);
/* method (params stolen) to server; its answer to req as it is. */
void gateway_forward(struct request *, const char *server, const char *method,
    json_t *params);
/*
 * Lists what ("prompts", or "resources" and their templates) for req's
 * session, then calls fn(req, params, arg) (params is stolen): a name or
 * URI the session was not shown may be known then.
 */
void gateway_learn(struct request *, const char *what,
    void (*fn)(struct request *, json_t *params, void *arg), void *arg,
    json_t *params);

/* gateway-subs.c: resources/subscribe, one upstream subscription a URI. */
/* Subscribes c to params.uri of server (routed): forwarded there. */
void gateway_subs_subscribe(struct client *, struct request *,
    const char *server, const json_t *params);
/* Unsubscribes; upstream too when c was the agent's last subscriber. */
void gateway_subs_unsubscribe(struct client *, struct request *,
    const json_t *params);
/* c goes: its subscriptions too. */
void gateway_subs_drop(struct client *);
/* An upstream's notifications/resources/updated, to the subscribed. */
void gateway_subs_updated(const char *agent, const char *server,
    const json_t *params);
/* A session of agent is subscribed to a resource of server. */
bool gateway_subs_has(const char *agent, const char *server);
/*
 * The server's connection is new (a restart): each URI its agent's
 * sessions subscribed to is subscribed to again upstream.
 */
void gateway_subs_renew(const char *agent, const char *server);
/*
 * Whether a 2026-07-28 session of agent that sees server listens
 * (subscriptions/listen): a use of the server, as a subscription is.
 */
bool gateway_listens_see(const char *agent, const char *server);
/* What the gateway hears from the server layer (server-watch.h). */
extern const struct server_watch gateway_server_watch;

/* gateway.c, for an upgrade */
json_t *gateway_save(const struct gateway *);
void gateway_restore(struct gateway *, const json_t *);
json_t *gateway_subs_save(const struct client *);
void gateway_subs_restore(struct client *, const json_t *);
json_t *gateway_search_save(const struct gateway_search *);
void gateway_search_restore(struct gateway_search *, const json_t *);

#endif
