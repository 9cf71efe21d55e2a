/* SPDX-License-Identifier: ISC */
/* Asks: a call an ask rule holds until mcpctl approve or deny answers it, or its deadline passes. */
#include <sys/queue.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "gateway.h"
#include "log.h"
#include "mcpd.h"
#include "server-reply.h"

#define POLICY_ASK_TEXT_MAX 1024 /* bytes of the arguments shown */

/* One session's approval of a tool, as its definition was then. */
struct policy_ask_session {
	const struct gateway *gw; /* forgotten when the session ends */
	char *server;
	char *tool;
	char *digest;
	TAILQ_ENTRY(policy_ask_session) entry;
};

/* One held call: what server_call_start needs to go on, kept as copies. */
struct policy_ask {
	json_int_t id;
	struct request *req;	    /* its own: held until the ask ends */
	struct server_reply *reply; /* ... as the server layer answers it */
	struct server *s;	    /* a reference */
	uint64_t generation;
	char *tool;
	char *name; /* SERVER__TOOL */
	json_t *arguments;
	int timeout_ms;
	json_t *mcp_params; /* or NULL */
	bool has_opts;
	struct server_call_opts opts; /* its json and string copied */
	json_t *decision;	      /* the policy's: the ask rule */
	char *digest;		      /* the definition asked about */
	time_t created;
	struct event *ev; /* the deadline, and the answer's turn */
	bool is_answered;
	bool is_gone;	 /* its caller went or cancelled it */
	bool is_stopped; /* mcpd is shutting down */
	enum policy_ask_scope answer;
	TAILQ_ENTRY(policy_ask) entry;
};

static TAILQ_HEAD(,
    policy_ask) policy_asks = TAILQ_HEAD_INITIALIZER(policy_asks);
static json_int_t policy_ask_next = 1;
static TAILQ_HEAD(, policy_ask_session)
    policy_ask_sessions = TAILQ_HEAD_INITIALIZER(policy_ask_sessions);
static const char *const policy_ask_by[] = { "approval-denied", "approval-once",
	"approval-session", "approval-always" };
static const char *const policy_ask_scopes[] = { "deny", "once", "session",
	"always" };

static void
policy_ask_free(struct policy_ask *a)
{
	TAILQ_REMOVE(&policy_asks, a, entry);
	event_free(a->ev);
	server_unref(a->s);
	free(a->tool);
	free(a->name);
	json_decref(a->arguments);
	json_decref(a->mcp_params);
	json_decref((json_t *)(uintptr_t)a->opts.caps);
	json_decref((json_t *)(uintptr_t)a->opts.input_responses);
	json_decref((json_t *)(uintptr_t)a->opts.request_state);
	free((char *)(uintptr_t)a->opts.definition);
	json_decref(a->decision);
	free(a->digest);
	free(a);
}

/*
 * The caller went or cancelled: its call ends unsent, answered (into
 * nothing, or to a cancel) from the loop, as every request is.
 */
static void
policy_ask_gone(void *arg)
{
	struct policy_ask *a = arg;

	a->is_gone = true;
	event_del(a->ev);
	event_active(a->ev, EV_TIMEOUT, 0);
}

/* The decision an answer makes of the ask rule's (new). */
static json_t *
policy_ask_decision(const struct policy_ask *a, const char *by)
{
	json_t *d = xjson(json_deep_copy(a->decision));

	json_object_set_new(d, "by", json_string(by));
	json_object_set_new(d, "approval", json_integer(a->id));
	return d;
}

/* What asked: "rule N: TEXT" or "the agent's default" (new). */
static char *
policy_ask_why(const struct policy_ask *a)
{
	const json_t *rule = json_object_get(a->decision, "rule");
	char *why;

	if (!json_is_integer(rule))
		return xstrdup("the agent's default");
	xasprintf(&why, "rule %lld: %s", (long long)json_integer_value(rule),
	    json_string_value(json_object_get(a->decision, "text")));
	return why;
}

/* Fails the held call as denied: by the user, or by its deadline. */
static void
policy_ask_refuse(struct policy_ask *a, bool is_timeout)
{
	json_t *d = policy_ask_decision(a,
	    is_timeout ? "approval-timeout" : "approval-denied");
	const char *agent = control_agent(a->req);
	char *why = policy_ask_why(a);
	json_t *data = json_pack("{s:s, s:s, s:O, s:I}", "tool", a->name,
	    "agent", agent, "rule", json_object_get(d, "rule"), "approval",
	    a->id);
	struct call_who who;

	control_call_who(a->req, &who);
	policy_audit_denied(&who, a->s, a->tool, d);
	if (is_timeout)
		control_fail(a->req, ERRORS_DENIED, data,
		    "nobody answered approval %lld (tool %s of agent %s, asked by %s) within %d s (mcpd --approval-timeout), so it timed out and was denied; nothing was sent",
		    (long long)a->id, a->name, agent, why,
		    mcpd_opts.approval_timeout_s);
	else
		control_fail(a->req, ERRORS_DENIED, data,
		    "the user denied approval %lld (tool %s of agent %s, asked by %s); nothing was sent",
		    (long long)a->id, a->name, agent, why);
	free(why);
	json_decref(d);
}

/* The deadline, or an answer's turn of the loop: the held call ends. */
static void
policy_ask_due(evutil_socket_t fd, short events, void *arg)
{
	struct policy_ask *a = arg;
	struct call_who who;

	(void)fd, (void)events;
	control_on_gone(a->req, NULL, NULL);
	control_call_who(a->req, &who);
	if (a->is_stopped) {
		audit_refused(&who, "tools/call", server_name(a->s), a->tool, 0,
		    ERRORS_UNAVAILABLE);
		control_fail(a->req, ERRORS_UNAVAILABLE, NULL,
		    "mcpd is shutting down: the call of %s waited for approval %lld and was not sent",
		    a->name, (long long)a->id);
	} else if (a->is_gone) {
		audit_refused(&who, "tools/call", server_name(a->s), a->tool, 0,
		    ERRORS_TIMEOUT);
		control_fail(a->req, ERRORS_TIMEOUT, NULL,
		    "the call of %s was cancelled (its client went or cancelled it) while it waited for approval %lld; it did not run",
		    a->name, (long long)a->id);
	} else if (a->is_answered && a->answer != POLICY_ASK_DENY)
		server_call_held(a->s, a->generation, a->tool, a->arguments,
		    a->timeout_ms, a->reply, a->mcp_params,
		    a->has_opts ? &a->opts : NULL,
		    policy_ask_decision(a, policy_ask_by[a->answer]));
	else
		policy_ask_refuse(a, !a->is_answered);
	policy_ask_free(a);
}

/* The arguments as shown: JSON, ASCII, control characters escaped (new). */
static char *
policy_ask_text(const json_t *arguments)
{
	char *text = json_dumps(arguments,
	    JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	char *cut;

	if (text == NULL)
		return xstrdup("{}");
	if (strlen(text) > POLICY_ASK_TEXT_MAX) {
		xasprintf(&cut, "%.*s...", POLICY_ASK_TEXT_MAX, text);
		free(text);
		return cut;
	}
	return text;
}

/* The scope a choice of the elicitation form names, or -1 for none. */
static int
policy_ask_choice(const json_t *result)
{
	const char *action = json_string_value(json_object_get(result,
	    "action"));
	const char *choice =
	    json_string_value(json_object_get(json_object_get(result,
						  "content"),
		"choice"));

	if (action != NULL && strcmp(action, "decline") == 0)
		return POLICY_ASK_DENY;
	if (action == NULL || strcmp(action, "accept") != 0 || choice == NULL)
		return -1; /* cancel: the terminal may still answer */
	for (size_t i = 0;
	     i < sizeof policy_ask_scopes / sizeof policy_ask_scopes[0]; i++)
		if (strcmp(choice, policy_ask_scopes[i]) == 0)
			return (int)i;
	return -1;
}

/*
 * The calling client answered the form: the ask (by id: it may have ended
 * meanwhile, answered from a terminal or timed out) is answered so.
 */
static void
policy_ask_elicited(void *arg, const json_t *result, const json_t *error,
    const char *why)
{
	json_int_t *id = arg;
	int scope = result != NULL ? policy_ask_choice(result) : -1;
	json_t *done = NULL;
	char *cause = NULL;

	(void)error, (void)why;
	if (scope >= 0 &&
	    policy_ask_answer(*id, (enum policy_ask_scope)scope, &done,
		&cause) < 0 &&
	    cause != NULL && strncmp(cause, "no call waits", 13) != 0)
		log_warnx(
		    "approval %lld: the client's answer (%s) is not taken: %s",
		    (long long)*id, policy_ask_scopes[scope], cause);
	json_decref(done);
	free(cause);
	free(id);
}

/*
 * Asks the calling client too, by elicitation/create, when it is a
 * gateway session that declared it: a form with the call and the choices.
 * mcpd/call's caller (mcpctl call, which declines a form without a
 * terminal) is not asked: the terminal's mcpctl approve answers it.
 */
static void
policy_ask_elicit(struct policy_ask *a)
{
	const struct gateway *gw = control_gateway_of(a->req);
	const json_t *caps = gw != NULL ? gateway_client_caps_peek(gw) : NULL;
	char *text = policy_ask_text(a->arguments), *why = policy_ask_why(a),
	     *message;
	json_t *params;
	json_int_t *id;

	if (!session_caps_take(caps, "elicitation/create", NULL)) {
		free(text);
		free(why);
		return;
	}
	xasprintf(&message,
	    "mcpd asks (approval %lld): may agent %s call tool %s of server %s with the arguments %s? (asked by %s; mcpctl approve %lld also answers)",
	    (long long)a->id, control_agent(a->req), a->tool, server_name(a->s),
	    text, why, (long long)a->id);
	params = xjson(json_pack(
	    "{s:s, s:{s:s, s:{s:{s:s, s:s, s:s, s:o}}, s:[s]}}", "message",
	    message, "requestedSchema", "type", "object", "properties",
	    "choice", "type", "string", "title", "Allow this call?",
	    "description",
	    "once: this call; session: and this session's later calls of the tool; always: and every later call while its definition stays the same; decline: refuse it",
	    "enum",
	    json_pack("[s, s, s, s]", "once", "session", "always", "decline"),
	    "required", "choice"));
	id = xmalloc(sizeof *id);
	*id = a->id;
	if (control_ask(a->req, mcpd_opts.approval_timeout_s * 1000,
		"elicitation/create", params, policy_ask_elicited, id) < 0)
		free(id); /* the terminal still answers */
	free(message);
	free(text);
	free(why);
}

static void
policy_ask_notified(void *arg, int status)
{
	(void)arg,
	    (void)status; /* a notification that failed changes nothing */
}

/*
 * A desktop notification of the new ask, through notify-send when it is
 * on mcpd's PATH; it runs apart and nothing waits for it.
 */
static void
policy_ask_notify(struct policy_ask *a)
{
	static const char *const desktop[] = { "DISPLAY", "WAYLAND_DISPLAY",
		"DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", NULL };
	char *extra[5] = { NULL }, **env, *title, *body, *why, *cause = NULL;
	struct child_spec spec;
	struct child_io io;
	size_t i, n = 0;

	for (i = 0; desktop[i] != NULL; i++)
		if (getenv(desktop[i]) != NULL)
			xasprintf(&extra[n++], "%s=%s", desktop[i],
			    getenv(desktop[i]));
	env = child_env_build(extra);
	why = policy_ask_why(a);
	xasprintf(&title, "mcpd: approval %lld", (long long)a->id);
	xasprintf(&body,
	    "agent %s calls %s (asked by %s): mcpctl approve %lld or mcpctl deny %lld",
	    control_agent(a->req), a->name, why, (long long)a->id,
	    (long long)a->id);
	spec.argv = (char *const[]){ "notify-send", "--app-name=mcpd", title,
		body, NULL };
	spec.env = env;
	spec.cwd = NULL;
	if (child_find_program(&spec, &cause) == 0 &&
	    child_spawn(&spec, &io, &cause) == 0) {
		close(io.in);
		close(io.out);
		close(io.err);
		child_watch(io.pid, policy_ask_notified, NULL);
	} else
		log_debug("approval %lld: no desktop notification: %s",
		    (long long)a->id, cause != NULL ? cause : "unknown error");
	free(cause);
	free(title);
	free(body);
	free(why);
	child_strv_free(env);
	for (i = 0; i < n; i++)
		free(extra[i]);
}

void
policy_ask_hold(struct server_reply *rep, struct server *s, uint64_t generation,
    const char *tool, json_t *arguments, int timeout_ms,
    const json_t *mcp_params, const struct server_call_opts *opts,
    json_t *decision)
{
	struct policy_ask *a = xcalloc(1, sizeof *a);
	struct timeval tv = { mcpd_opts.approval_timeout_s, 0 };

	a->id = policy_ask_next++;
	a->req = control_reply_request(rep);
	a->reply = rep;
	a->s = s;
	server_ref(s);
	a->generation = generation;
	a->tool = xstrdup(tool);
	a->name = gateway_name_plain(server_name(s), tool, true);
	a->arguments = json_incref(arguments);
	a->timeout_ms = timeout_ms;
	a->mcp_params = json_incref((json_t *)(uintptr_t)mcp_params);
	if (opts != NULL) {
		a->has_opts = true;
		a->opts.caps = json_incref((json_t *)(uintptr_t)opts->caps);
		a->opts.takes_input = opts->takes_input;
		a->opts.input_responses =
		    json_incref((json_t *)(uintptr_t)opts->input_responses);
		a->opts.request_state =
		    json_incref((json_t *)(uintptr_t)opts->request_state);
		a->opts.definition = opts->definition != NULL ?
		    xstrdup(opts->definition) :
		    NULL;
	}
	a->decision = decision;
	a->digest = xstrdup(server_tool_definition(s, tool) != NULL ?
		server_tool_definition(s, tool) :
		"");
	a->created = time(NULL);
	if ((a->ev = evtimer_new(mcpd_base, policy_ask_due, a)) == NULL)
		fatalx("cannot make an event");
	evtimer_add(a->ev, &tv);
	control_on_gone(a->req, policy_ask_gone, a);
	TAILQ_INSERT_TAIL(&policy_asks, a, entry);
	policy_ask_elicit(a);
	policy_ask_notify(a);
}

json_t *
policy_ask_list(const char *agent)
{
	json_t *out = xjson(json_array());
	struct policy_ask *a;
	time_t now = time(NULL);
	char *text, *why;

	TAILQ_FOREACH(a, &policy_asks, entry) {
		if (a->is_answered || a->is_gone || a->is_stopped ||
		    (agent != NULL &&
			strcmp(control_agent(a->req), agent) != 0))
			continue;
		text = policy_ask_text(a->arguments);
		why = policy_ask_why(a);
		json_array_append_new(out,
		    json_pack(
			"{s:I, s:s, s:s, s:s, s:s, s:s, s:O, s:s, s:I, s:I}",
			"id", a->id, "agent", control_agent(a->req), "server",
			server_name(a->s), "tool", a->tool, "name", a->name,
			"arguments", text, "rule",
			json_object_get(a->decision, "rule"), "asked_by", why,
			"age_s", (json_int_t)(now - a->created), "timeout_s",
			(json_int_t)mcpd_opts.approval_timeout_s));
		free(why);
		free(text);
	}
	return out;
}

int
policy_ask_answer(json_int_t id, enum policy_ask_scope scope, json_t **ret,
    char **cause)
{
	const struct gateway *gw;
	struct policy_ask_session *ps;
	struct policy_ask *a;
	int r;

	TAILQ_FOREACH(a, &policy_asks, entry)
		if (a->id == id && !a->is_answered && !a->is_gone &&
		    !a->is_stopped)
			break;
	if (a == NULL)
		return errors_cause(cause, -ENOENT,
		    "no call waits for approval %lld: it was answered, timed out or its caller went (mcpctl approvals lists those that wait)",
		    (long long)id);
	gw = control_gateway_of(a->req);
	if (scope == POLICY_ASK_SESSION && gw == NULL)
		return errors_cause(cause, -EINVAL,
		    "approval %lld's call was made in no gateway session (mcpd/call, mcpctl call): approve it once or --always",
		    (long long)id);
	if (scope == POLICY_ASK_ALWAYS &&
	    (r = policy_always_add(control_agent(a->req), server_name(a->s),
		 a->tool, a->digest, cause)) < 0)
		return r;
	if (scope == POLICY_ASK_SESSION) {
		ps = xcalloc(1, sizeof *ps);
		ps->gw = gw;
		ps->server = xstrdup(server_name(a->s));
		ps->tool = xstrdup(a->tool);
		ps->digest = xstrdup(a->digest);
		TAILQ_INSERT_TAIL(&policy_ask_sessions, ps, entry);
	}
	a->is_answered = true;
	a->answer = scope;
	/* The call goes on (or fails) from the loop. */
	event_del(a->ev);
	event_active(a->ev, EV_TIMEOUT, 0);
	*ret = xjson(json_pack("{s:I, s:s, s:s, s:s, s:b, s:s}", "id", a->id,
	    "agent", control_agent(a->req), "server", server_name(a->s), "tool",
	    a->name, "approved", scope != POLICY_ASK_DENY, "scope",
	    policy_ask_scopes[scope]));
	return 0;
}

bool
policy_ask_session_has(const struct gateway *gw, const struct server *s,
    const char *tool, const char *digest)
{
	struct policy_ask_session *ps;

	if (gw == NULL || digest == NULL)
		return false;
	TAILQ_FOREACH(ps, &policy_ask_sessions, entry)
		if (ps->gw == gw && strcmp(ps->server, server_name(s)) == 0 &&
		    strcmp(ps->tool, tool) == 0 &&
		    strcmp(ps->digest, digest) == 0)
			return true;
	return false;
}

void
policy_ask_session_end(const struct gateway *gw)
{
	struct policy_ask_session *ps, *next;

	for (ps = TAILQ_FIRST(&policy_ask_sessions); ps != NULL; ps = next) {
		next = TAILQ_NEXT(ps, entry);
		if (ps->gw != gw)
			continue;
		TAILQ_REMOVE(&policy_ask_sessions, ps, entry);
		free(ps->server);
		free(ps->tool);
		free(ps->digest);
		free(ps);
	}
}

void
policy_ask_stop(void)
{
	struct policy_ask *a;

	TAILQ_FOREACH(a, &policy_asks, entry)
		if (!a->is_answered && !a->is_gone && !a->is_stopped) {
			a->is_stopped = true;
			event_del(a->ev);
			event_active(a->ev, EV_TIMEOUT, 0);
		}
}
