/* SPDX-License-Identifier: ISC */
/* The HTTP front: MCP over Streamable HTTP on loopback, into the gateway. */
#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <sodium.h>

#include "errors.h"
#include "httpd-int.h"
#include "jsonscan.h"
#include "linebuf.h"
#include "log.h"
#include "mcpd.h"
#include "names.h"
#include "server-watch.h"

#define HTTPD_ID_SHOWN 8 /* hex digits of a session id mcpd/clients shows */

struct httpd_session_list httpd_sessions =
    TAILQ_HEAD_INITIALIZER(httpd_sessions);
static size_t httpd_nsessions;
static uint64_t httpd_activity; /* counts touches: which came last */

size_t
httpd_session_count(void)
{
	return httpd_nsessions;
}

void
httpd_reply(struct httpd_req *req, int code, const char *body)
{
	if (body != NULL)
		httpd_req_add_header(req, "Content-Type", "application/json");
	httpd_req_reply(req, code, body, body != NULL ? strlen(body) : 0);
}

static void
httpd_reply_msg(struct httpd_req *req, int code, const json_t *msg)
{
	char *text = xnonnull(json_dumps(msg, JSON_COMPACT));

	if (code == 401)
		httpd_req_add_header(req, "WWW-Authenticate",
		    "Bearer realm=\"mcpd\"");
	httpd_reply(req, code, text);
	free(text);
}

/* An HTTP refusal with a JSON-RPC error body (id null), as MCP servers do. */
void
httpd_refuse(struct httpd_req *req, int code, const char *why)
{
	json_t *msg = jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST, why, NULL);

	httpd_reply_msg(req, code, msg);
	json_decref(msg);
}

void
httpd_session_free(struct httpd_session *hs)
{
	struct httpd_pending *p;

	while ((p = TAILQ_FIRST(&hs->pending)) != NULL)
		httpd_stream_free(p, false);
	if (hs->stream != NULL) {
		/* Its close must not reach this session any more. */
		httpd_req_on_close(hs->stream, NULL, NULL);
		httpd_req_end(hs->stream);
	}
	TAILQ_REMOVE(&httpd_sessions, hs, entry);
	httpd_nsessions--;
	event_free(hs->idle_timer);
	if (hs->client != NULL)
		control_peer_end(hs->client);
	httpd_unheard_free(hs);
	free(hs->agent);
	free(hs->path);
	free(hs);
}

/* Lines of the control side, delivered in-process (sendq_deliver_to). */
static void
httpd_session_deliver(void *arg, struct evbuffer *in)
{
	struct httpd_session *hs = arg;
	char *line;
	size_t len;
	int r;

	while ((r = linebuf_peek(&hs->delivered, in, &line, &len)) > 0) {
		if (httpd_stream_line(hs, line, len))
			return; /* the session is gone: the rest is not its */
		linebuf_consume(&hs->delivered, in);
	}
	if (r < 0)
		httpd_session_free(hs); /* an answer over the limit */
}

/* What the session holds of its control client's output. */
static size_t
httpd_session_held(void *arg)
{
	return httpd_stream_held(arg);
}

static void httpd_session_arm(struct httpd_session *, uint64_t);

/* The control side ended (mcpd stops, say): the session ends from the loop. */
static void
httpd_session_client_gone(void *arg)
{
	struct httpd_session *hs = arg;

	hs->client = NULL;
	httpd_session_arm(hs, 0);
}

/* mcpd/clients: the start of its id (enough to tell it) and its client. */
static void
httpd_session_describe(void *arg, json_t *into)
{
	struct httpd_session *hs = arg;

	json_object_set_new(into, "session",
	    json_stringn(hs->id, HTTPD_ID_SHOWN));
	json_object_set_new(into, "remote", json_string(hs->remote));
}

static const struct control_peer httpd_session_peer = {
	httpd_session_deliver,
	httpd_session_held,
	httpd_session_client_gone,
	httpd_session_describe,
};

/* Whether an HTTP session of agent that sees server has its GET stream open. */
static bool
httpd_streams_see(const char *agent, const char *server)
{
	const struct httpd_session *hs;

	TAILQ_FOREACH(hs, &httpd_sessions, entry)
		if (hs->stream != NULL && hs->client != NULL &&
		    strcmp(hs->agent, agent) == 0 &&
		    server_scope_has(control_client_scope(hs->client), server))
			return true;
	return false;
}

const struct server_watch httpd_server_watch = {
	.is_used = httpd_streams_see,
};

void
httpd_session_touch(struct httpd_session *hs)
{
	hs->active_ms = mcpd_now_ms();
	hs->active_seq = ++httpd_activity;
}

static void
httpd_session_arm(struct httpd_session *hs, uint64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000),
		(suseconds_t)(ms % 1000) * 1000 };

	evtimer_add(hs->idle_timer, &tv);
}

/*
 * A session with no request in flight and no stream open for
 * --http-session-idle ends as a DELETE would end it; while it is busy,
 * it is looked at again later.
 */
static void
httpd_session_idle(evutil_socket_t fd, short events, void *arg)
{
	struct httpd_session *hs = arg;
	uint64_t idle = (uint64_t)mcpd_opts.http_session_idle_ms;
	uint64_t now = mcpd_now_ms();

	(void)fd, (void)events;
	if (hs->client == NULL)
		httpd_session_free(hs);
	else if (httpd_stream_is_busy(hs))
		httpd_session_arm(hs, idle);
	else if (now - hs->active_ms < idle)
		httpd_session_arm(hs, idle - (now - hs->active_ms));
	else {
		log_info(
		    "HTTP front: session %s of agent %s was idle for --http-session-idle (%llu ms): it ends",
		    hs->id, hs->agent, (unsigned long long)idle);
		httpd_session_free(hs);
	}
}

/*
 * How many sessions agent has, and its session idle the longest (NULL
 * when every one has a request in flight or a stream open: ending one
 * would cut work short).
 */
static size_t
httpd_session_of(const char *agent, struct httpd_session **ret_idle)
{
	struct httpd_session *hs, *idle = NULL;
	size_t n = 0;

	TAILQ_FOREACH(hs, &httpd_sessions, entry) {
		if (strcmp(hs->agent, agent) != 0)
			continue;
		n++;
		if (!httpd_stream_is_busy(hs) &&
		    (idle == NULL || hs->active_seq < idle->active_seq))
			idle = hs;
	}
	*ret_idle = idle;
	return n;
}

/*
 * Room for a new session of agent: when it has its share
 * (--max-http-sessions-per-token), its session idle the longest ends, so
 * that a client that reconnects without ending its sessions loses its
 * own, never another agent's; then the limit of all.
 */
static int
httpd_session_room(const char *agent, char **cause)
{
	struct httpd_session *victim;
	size_t n = httpd_session_of(agent, &victim);

	if (n >= mcpd_opts.max_http_sessions_per_token && victim == NULL)
		return errors_cause(cause, -EBUSY,
		    "agent %s has %zu HTTP sessions, its limit, each with a request in flight or a stream open; end one with DELETE or raise --max-http-sessions-per-token",
		    agent, n);
	if (n >= mcpd_opts.max_http_sessions_per_token) {
		log_warnx(
		    "HTTP front: agent %s has %zu sessions, its limit (--max-http-sessions-per-token): its session %s, idle for %llu ms, ends",
		    agent, n, victim->id,
		    (unsigned long long)(mcpd_now_ms() - victim->active_ms));
		httpd_session_free(victim);
	}
	if (httpd_nsessions >= mcpd_opts.max_http_sessions)
		return errors_cause(cause, -EBUSY,
		    "mcpd has %zu HTTP sessions, its limit; end sessions with DELETE or raise --max-http-sessions",
		    httpd_nsessions);
	return 0;
}

/*
 * A new session's id, 32 hex digits: random for a session a client names
 * in its requests; a one-request (2026-07-28) session is never named, so
 * a count (first: mcpd/clients shows the start) and a random part made
 * once do, with no getrandom call for each request.
 */
static void
httpd_session_id(char id[33], bool is_stateless)
{
	static unsigned char salt[12];
	static uint32_t count;
	unsigned char raw[16];

	if (!is_stateless) {
		randombytes_buf(raw, sizeof raw);
		sodium_bin2hex(id, 33, raw, sizeof raw);
		return;
	}
	if (count == 0)
		randombytes_buf(salt, sizeof salt);
	count++;
	raw[0] = (unsigned char)(count >> 24);
	raw[1] = (unsigned char)(count >> 16);
	raw[2] = (unsigned char)(count >> 8);
	raw[3] = (unsigned char)count;
	memcpy(raw + 4, salt, sizeof salt);
	sodium_bin2hex(id, 33, raw, sizeof raw);
}

static struct httpd_session *
httpd_session_new(struct httpd_req *req, const char *agent, const char *profile,
    const char *path, const json_t *scope, bool is_stateless, char **cause)
{
	struct httpd_session *hs;

	if (httpd_session_room(agent, cause) < 0)
		return NULL;
	hs = httpd_session_make(agent, profile, path, scope);
	httpd_session_id(hs->id, is_stateless);
	snprintf(hs->remote, sizeof hs->remote, "%s", httpd_req_peer(req));
	hs->is_stateless = is_stateless;
	return hs;
}

/* Its control client is in-process (control_adopt): no descriptor. */
struct httpd_session *
httpd_session_make(const char *agent, const char *profile, const char *path,
    const json_t *scope)
{
	struct httpd_session *hs = xcalloc(1, sizeof *hs);

	hs->agent = xstrdup(agent);
	hs->path = xstrdup(path);
	hs->client = control_adopt(agent, scope, &httpd_session_peer, hs);
	control_client_set_profile(hs->client, profile);
	/* An HTTP client is known by its token's id, never the token. */
	control_client_set_who(hs->client,
	    json_pack("{s:s}", "token", tokens_id(agent, profile)));
	linebuf_init(&hs->delivered, mcpd_opts.max_message + 64 * 1024);
	TAILQ_INIT(&hs->pending);
	TAILQ_INSERT_TAIL(&httpd_sessions, hs, entry);
	httpd_nsessions++;
	if ((hs->idle_timer = evtimer_new(mcpd_base, httpd_session_idle, hs)) ==
	    NULL)
		fatalx("cannot make a timer");
	httpd_session_touch(hs);
	httpd_session_arm(hs, (uint64_t)mcpd_opts.http_session_idle_ms);
	return hs;
}

/* Whether two profiles (either may be NULL: none) are the same. */
static bool
httpd_same_profile(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* A session of the token's agent and profile only: its view is theirs. */
static struct httpd_session *
httpd_session_find(const char *id, const char *agent, const char *profile,
    const char *path)
{
	struct httpd_session *hs;

	TAILQ_FOREACH(hs, &httpd_sessions, entry)
		if (!hs->is_stateless && strcmp(hs->id, id) == 0 &&
		    strcmp(hs->agent, agent) == 0 &&
		    httpd_same_profile(control_client_profile(hs->client),
			profile) &&
		    strcmp(hs->path, path) == 0)
			return hs;
	return NULL;
}

/*
 * The agent of the request's token (and in *ret_profile the profile it is
 * bound to, or NULL), or NULL after refusing it.
 */
static const char *
httpd_agent(struct httpd_req *req, const char **ret_profile)
{
	const char *agent, *why;
	int status;

	agent = httpd_access_agent(httpd_req_head(req), ret_profile, &status,
	    &why);
	if (agent == NULL)
		httpd_refuse(req, status, why);
	return agent;
}

/* Whether path is MCP's: "/mcp", or "/mcp/<server>" for one server. */
static bool
httpd_path_is_mcp(const char *path)
{
	return strcmp(path, "/mcp") == 0 ||
	    (strncmp(path, "/mcp/", 5) == 0 && names_valid(path + 5));
}

/*
 * The scope of a new session on an MCP path (new): NULL for "/mcp", the
 * agent's servers; ["<server>"] for "/mcp/<server>". Only a request that
 * makes a session needs it: one in a session pays nothing for it.
 */
static json_t *
httpd_scope_new(const char *path)
{
	return strcmp(path, "/mcp") == 0 ? NULL : json_pack("[s]", path + 5);
}

/* ---- the verbs ---- */

/*
 * The body goes to the control client (whole, the message the front
 * parsed: no second parse; NULL, the body's line): handled now, or kept
 * in the client's input until it takes it.
 */
static void
httpd_session_send(struct httpd_session *hs, json_t *whole, const char *body,
    size_t len)
{
	if (hs->client == NULL)
		return; /* it went: the session ends from the loop */
	if (whole != NULL)
		control_peer_message(hs->client, whole);
	else
		control_peer_line(hs->client, body, len);
}

/*
 * A message for the session (is_whole: msg is all of it, else only what
 * the front needs of the body): a request waits for its answer.
 */
static void
httpd_forward(struct httpd_session *hs, struct httpd_req *req, json_t *msg,
    bool is_whole, const char *body, size_t len)
{
	bool is_request = json_object_get(msg, "id") != NULL &&
	    json_object_get(msg, "method") != NULL;

	httpd_session_touch(hs);
	/* Its answer is delivered on a later loop turn: it finds it waiting. */
	if (is_request)
		httpd_stream_new(hs, req, msg);
	httpd_session_send(hs, is_whole ? msg : NULL, body, len);
	if (is_request)
		return;
	httpd_reply(req, 202, NULL);
	/*
	 * A one-message session with no answer to wait for ends once the
	 * message has gone to the gateway (a new client always takes it).
	 */
	if (hs->is_stateless && TAILQ_EMPTY(&hs->pending))
		httpd_session_free(hs);
}

/* The value of member m of text as jansson makes it, set as key in o. */
static void
httpd_member_set(json_t *o, const char *key, const char *text,
    const struct jsonscan_member *m)
{
	if (m->is_found)
		json_object_set_new(o, key,
		    xnonnull(jsonrpc_load_value(text + m->off, m->len)));
}

/*
 * What the front needs of a POST in a session (id, method, the params'
 * _meta) without parsing all of it: a call's arguments, however large, go
 * to the gateway as text. NULL when the scanner does not vouch for the
 * body (it is then parsed).
 */
static json_t *
httpd_parse_light(const char *body, size_t len)
{
	struct jsonscan_member top[] = { { "id", false, 0, 0 },
		{ "method", false, 0, 0 }, { "params", false, 0, 0 } };
	struct jsonscan_member meta[] = { { "_meta", false, 0, 0 } };
	json_t *msg, *params;

	/* One pass: the params' _meta with the body's own members. */
	if (jsonscan_object_in(body, len, top, 3, false, 2, meta, 1) < 0 ||
	    (top[2].is_found && body[top[2].off] != '{'))
		return NULL;
	msg = xjson(json_object());
	httpd_member_set(msg, "id", body, &top[0]);
	httpd_member_set(msg, "method", body, &top[1]);
	if (top[2].is_found) {
		json_object_set_new(msg, "params",
		    params = xjson(json_object()));
		httpd_member_set(params, "_meta", body, &meta[0]);
	}
	return msg;
}

/*
 * A new session of "/mcp/<server>" for a server the agent does not have:
 * its view would be silently empty. The not-found error answering msg
 * (with the nearest names), or NULL when the server is there.
 */
static json_t *
httpd_scope_missing(const char *agent, const json_t *scope, const json_t *msg)
{
	const char *name = json_string_value(json_array_get(scope, 0));
	json_t *error;
	char *near, *text;

	if (name == NULL || server_find_name(agent, name) != NULL)
		return NULL;
	near = server_did_you_mean(agent, name);
	xasprintf(&text,
	    "no server %s for agent %s%s (mcpctl list shows them; load it first)",
	    name, agent, near);
	/* The id is borrowed: the error message takes its own reference. */
	error = jsonrpc_error_kind(json_object_get(msg, "id"), ERRORS_NOT_FOUND,
	    text, json_pack("{s:s, s:s}", "what", "server", "server", name));
	free(text);
	free(near);
	return error;
}

static void
httpd_post(struct httpd_req *req, const char *agent, const char *profile,
    const char *path)
{
	size_t len;
	const char *body = httpd_req_body(req, &len);
	const char *sid = httpd_req_header(req, "Mcp-Session-Id");
	json_t *msg = NULL, *refusal = NULL, *scope = NULL;
	struct httpd_session *hs = NULL;
	const char *method;
	char *cause = NULL;
	bool is_modern, is_whole = false;

	/* In a session, a one-line body needs no parse (it goes as it is). */
	if (sid != NULL && len > 0 && memchr(body, '\n', len) == NULL)
		msg = httpd_parse_light(body, len);
	if (msg == NULL && len > 0)
		is_whole = (msg = jsonrpc_parse(body, len, NULL)) != NULL;
	method = json_string_value(json_object_get(msg, "method"));
	is_modern = json_is_object(msg) && sid == NULL &&
	    httpd_modern_is(httpd_req_header(req, "MCP-Protocol-Version"), msg);
	/* Without a session id, the request may make a session. */
	if (sid == NULL)
		scope = httpd_scope_new(path);

	if (!json_is_object(msg))
		httpd_refuse(req, 400,
		    "the body must be one JSON-RPC message (no batches)");
	else if (sid != NULL &&
	    (hs = httpd_session_find(sid, agent, profile, path)) == NULL)
		httpd_refuse(req, 404, "no such session: initialize again");
	else if (is_modern &&
	    (refusal = httpd_modern_refusal(httpd_req_head(req), msg)) != NULL)
		httpd_reply_msg(req, httpd_modern_status(refusal), refusal);
	else if (hs == NULL && !is_modern &&
	    (method == NULL || strcmp(method, "initialize") != 0))
		httpd_refuse(req, 400, "no Mcp-Session-Id: initialize first");
	else if (hs == NULL &&
	    (refusal = httpd_scope_missing(agent, scope, msg)) != NULL)
		httpd_reply_msg(req, 404, refusal);
	else if (hs == NULL &&
	    (hs = httpd_session_new(req, agent, profile, path, scope, is_modern,
		 &cause)) == NULL)
		httpd_refuse(req, 503, cause != NULL ? cause : "no session");
	else
		httpd_forward(hs, req, msg, is_whole, body, len);
	free(cause);
	json_decref(refusal);
	json_decref(scope);
	json_decref(msg);
}

/* The server's stream: notifications of the session come on it. */
static void
httpd_get_closed(struct httpd_req *req, void *arg)
{
	struct httpd_session *hs = arg;

	hs->stream = NULL;
	httpd_session_touch(hs);
	httpd_req_end(req); /* its client went: ending it frees it */
}

static void
httpd_get(struct httpd_req *req, struct httpd_session *hs)
{
	httpd_session_touch(hs);
	if (httpd_stream_resume(req, hs))
		return;
	if (hs->stream != NULL) {
		httpd_refuse(req, 409, "this session has a stream already");
		return;
	}
	httpd_stream_headers(req);
	httpd_req_start(req, 200);
	hs->stream = req;
	httpd_req_on_close(req, httpd_get_closed, hs);
	httpd_unheard_send(hs);
}

void
httpd_handle(struct httpd_req *req)
{
	const char *path = httpd_req_path(req);
	const char *sid = httpd_req_header(req, "Mcp-Session-Id");
	enum httphead_method method = httpd_req_method(req);
	struct httpd_session *hs;
	const char *agent, *profile;

	/* An upgrade drains: the client's next request goes to the new one. */
	if (upgrade_is_draining())
		httpd_req_close_after(req);
	if ((agent = httpd_agent(req, &profile)) == NULL)
		return;
	if (!httpd_path_is_mcp(path)) {
		httpd_refuse(req, 404,
		    "MCP is at /mcp, or /mcp/<server> for one server");
		return;
	}
	if (method == HTTPHEAD_POST)
		httpd_post(req, agent, profile, path);
	else if (sid == NULL &&
	    httpd_modern_is(httpd_req_header(req, "MCP-Protocol-Version"),
		NULL)) {
		/* 2026-07-28 has no sessions: nothing to GET or DELETE. */
		httpd_req_add_header(req, "Allow", "POST");
		httpd_refuse(req, 405, "2026-07-28 is POST only");
	} else if (sid == NULL ||
	    (hs = httpd_session_find(sid, agent, profile, path)) == NULL)
		httpd_refuse(req, sid == NULL ? 400 : 404,
		    "GET and DELETE need the Mcp-Session-Id of a session");
	else if (method == HTTPHEAD_GET)
		httpd_get(req, hs);
	else {
		httpd_session_free(hs);
		httpd_reply(req, 200, NULL);
	}
}

/* ---- the listener ---- */

int
httpd_listen(const char *addr, char **cause)
{
	char host[64];
	int port = 0, fd;

	if ((fd = httpd_access_addr(addr, host, sizeof host, &port, cause)) <
		0 ||
	    (fd = httpd_conns_bind(host, port, cause)) < 0)
		return fd;
	httpd_listening(fd, addr);
	return 0;
}

/* The front listens on fd (made, or kept across an upgrade). */
void
httpd_listening(int fd, const char *addr)
{
	httpd_conns_listen(fd);
	log_info("MCP over HTTP on http://%s/mcp", addr);
}

void
httpd_close(void)
{
	struct httpd_session *hs;

	/* mcpd stops: a stream's connection goes, with its request. */
	TAILQ_FOREACH(hs, &httpd_sessions, entry)
		if (hs->stream != NULL) {
			httpd_req_drop(hs->stream);
			hs->stream = NULL;
		}
	while ((hs = TAILQ_FIRST(&httpd_sessions)) != NULL)
		httpd_session_free(hs);
	httpd_req_close_all();
	httpd_conns_close();
}
