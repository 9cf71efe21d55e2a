/* SPDX-License-Identifier: ISC */
/*
 * Tests of session.c and session-start.c over a loopback transport: the
 * test plays the server, and its answers come from the event loop as a
 * real transport's would. The pending map, deadlines (sent: outcome
 * unknown, never sent: timeout), cancellation, notifications, requests
 * from the server, HeaderMismatch, and what a session's end does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mcpd-stubs.h"
#include "tap.h"

/* The loopback: what the session sent, and what the "server" answers. */
struct loopback {
	struct transport t;
	json_t *sent;	/* every message the session sent */
	json_t *outbox; /* for the session, delivered from the loop */
	struct event *deliver;
	int send_result;   /* what send returns for requests */
	int cancel_result; /* ... and for notifications/cancelled */
	bool is_modern;	   /* answers server/discover */
	int ntools;	   /* tools its tools/list lists */
};

static struct loopback lb;
static int nready, nfailed, nchanged;

static void
lb_deliver(evutil_socket_t fd, short events, void *arg)
{
	json_t *msg;

	(void)fd, (void)events, (void)arg;
	while ((msg = json_incref(json_array_get(lb.outbox, 0))) != NULL) {
		json_array_remove(lb.outbox, 0);
		lb.t.cbs->message(lb.t.cb_arg, msg);
		json_decref(msg);
	}
}

/* The "server" says msg (stolen); the session hears it on the next turn. */
static void
lb_say(json_t *msg)
{
	json_array_append_new(lb.outbox, msg);
	event_active(lb.deliver, EV_TIMEOUT, 0);
}

static json_t *
lb_tools(int n)
{
	json_t *tools = json_array();
	char name[32];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "tool%d", i);
		json_array_append_new(tools,
		    json_pack("{s:s, s:{s:s}}", "name", name, "inputSchema",
			"type", "object"));
	}
	return json_pack("{s:o}", "tools", tools);
}

/* The handshake and listings are answered as a server would. */
static void
lb_answer(json_t *id, const char *method)
{
	if (strcmp(method, "server/discover") == 0 && lb.is_modern)
		lb_say(jsonrpc_result(id,
		    json_pack("{s:[s], s:{s:{}}, s:{s:s, s:s}}",
			"supportedVersions", ERA_MODERN, "capabilities",
			"tools", "serverInfo", "name", "lb", "version", "1")));
	else if (strcmp(method, "server/discover") == 0)
		lb_say(jsonrpc_error(id, -32601, "Method not found", NULL));
	else if (strcmp(method, "initialize") == 0)
		lb_say(jsonrpc_result(id,
		    json_pack("{s:s, s:{s:{}}, s:{s:s, s:s}}",
			"protocolVersion", "2025-11-25", "capabilities",
			"tools", "serverInfo", "name", "lb", "version", "1")));
	else if (strcmp(method, "tools/list") == 0)
		lb_say(jsonrpc_result(id, lb_tools(lb.ntools)));
}

static int
lb_open(struct transport *t, char **cause)
{
	(void)t, (void)cause;
	return 0;
}

static int
lb_send(struct transport *t, const json_t *msg, const json_t *tool)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *id = json_object_get(msg, "id");

	(void)t, (void)tool;
	if (method != NULL && strcmp(method, "notifications/cancelled") == 0) {
		json_array_append(lb.sent, (json_t *)(uintptr_t)msg);
		return lb.cancel_result;
	}
	if (method != NULL && id != NULL && lb.send_result != 0)
		return lb.send_result;
	json_array_append_new(lb.sent, json_deep_copy(msg));
	if (method != NULL && id != NULL)
		lb_answer(id, method);
	return 0;
}

static void
lb_close(struct transport *t, void (*done)(void *), void *arg)
{
	(void)t;
	done(arg); /* at once: the session must not pass that on at once */
}

static void
lb_free(struct transport *t)
{
	(void)t;
}

static const struct transport_ops lb_ops = {
	"loopback",
	lb_open,
	lb_send,
	NULL,
	lb_close,
	lb_free,
	NULL,
	NULL,
};

static void
on_ready(void *arg, struct session *s)
{
	(void)arg, (void)s;
	nready++;
}

static void
on_failed(void *arg, struct session *s, const char *why)
{
	(void)arg, (void)s, (void)why;
	nfailed++;
}

static void
on_tools_changed(void *arg, struct session *s)
{
	(void)arg, (void)s;
	nchanged++;
}

static const struct session_cbs cbs = {
	.ready = on_ready,
	.failed = on_failed,
	.tools_changed = on_tools_changed,
};

/* Runs the loop until *counter reaches want, or 200 turns passed. */
static void
run_until(const int *counter, int want)
{
	for (int i = 0; i < 200 && *counter < want; i++)
		event_base_loop(mcpd_base, EVLOOP_ONCE);
}

static void
run_turns(int n)
{
	for (int i = 0; i < n; i++)
		event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
}

/* A new loopback and a session over it, ready (or failed) after the loop. */
static struct session *
start(bool is_modern, int ntools)
{
	struct session *s;
	char *cause = NULL;

	json_decref(lb.sent);
	json_decref(lb.outbox);
	if (lb.deliver != NULL)
		event_free(lb.deliver);
	memset(&lb, 0, sizeof lb);
	lb.t.ops = &lb_ops;
	lb.t.name = "loopback";
	lb.sent = json_array();
	lb.outbox = json_array();
	lb.deliver = event_new(mcpd_base, -1, 0, lb_deliver, NULL);
	lb.is_modern = is_modern;
	lb.ntools = ntools;
	nready = nfailed = nchanged = 0;
	s = session_new(&lb.t, &cbs, NULL, 5000);
	if (session_start(s, &cause) < 0)
		return s;
	run_until(&nready, 1);
	return s;
}

/* The method of the n-th message sent (negative: from the end). */
static const char *
sent_method(int n)
{
	size_t i = n >= 0 ? (size_t)n : json_array_size(lb.sent) + n;

	return json_string_value(json_object_get(json_array_get(lb.sent, i),
	    "method"));
}

/* One reply as a callback saw it. */
struct seen {
	int calls;
	enum errors_kind kind;
	json_t *result;
	json_t *error;
};

static void
seen_reply(void *arg, const struct session_reply *r)
{
	struct seen *seen = arg;

	seen->calls++;
	seen->kind = r->kind;
	seen->result = json_incref(r->result);
	seen->error = json_incref(r->error);
}

static void
seen_clear(struct seen *seen)
{
	json_decref(seen->result);
	json_decref(seen->error);
	memset(seen, 0, sizeof *seen);
}

/* The id of the last request the session sent. */
static json_int_t
last_id(void)
{
	return json_integer_value(json_object_get(json_array_get(lb.sent,
						      json_array_size(lb.sent) -
							  1),
	    "id"));
}

static void
test_legacy_handshake(void)
{
	struct session *s = start(false, 3);

	TAP_CHECK_INT(nready, 1);
	TAP_CHECK_INT(nfailed, 0);
	TAP_CHECK(session_is_ready(s), "not ready");
	TAP_CHECK_STR(session_protocol_version(s), "2025-11-25");
	TAP_CHECK_INT(json_array_size(session_tools_peek(s)), 3);
	TAP_CHECK_STR(sent_method(0), "server/discover");
	TAP_CHECK_STR(sent_method(1), "initialize");
	TAP_CHECK_STR(sent_method(2), "notifications/initialized");
	TAP_CHECK_STR(sent_method(3), "tools/list");
	session_free(s);
}

static void
test_modern_handshake(void)
{
	struct session *s = start(true, 1);
	json_t *meta;

	TAP_CHECK_INT(nready, 1);
	TAP_CHECK_STR(session_protocol_version(s), ERA_MODERN);
	TAP_CHECK_STR(sent_method(1), "tools/list");
	meta = json_object_get(json_object_get(json_array_get(lb.sent, 1),
				   "params"),
	    "_meta");
	TAP_CHECK(json_object_size(meta) > 0, "no _meta on a modern request");
	session_free(s);
}

/* Answers go to the request with their id, each exactly once. */
static void
test_replies_routed_by_id(void)
{
	struct session *s = start(false, 1);
	struct seen a = { 0 }, b = { 0 };
	json_int_t ida, idb;
	json_t *id;

	session_request(s, "tools/call", json_object(), 5000, seen_reply, &a);
	ida = last_id();
	session_request(s, "tools/call", json_object(), 5000, seen_reply, &b);
	idb = last_id();
	TAP_CHECK(ida != idb, "two requests, one id");
	id = json_integer(idb);
	lb_say(jsonrpc_result(id, json_pack("{s:s}", "who", "b")));
	lb_say(jsonrpc_result(id, json_pack("{s:s}", "who", "b again")));
	json_decref(id);
	id = json_integer(ida);
	lb_say(jsonrpc_result(id, json_pack("{s:s}", "who", "a")));
	json_decref(id);
	/* An answer to a request nobody made is dropped. */
	id = json_integer(9999);
	lb_say(jsonrpc_result(id, json_object()));
	json_decref(id);
	run_turns(3);
	TAP_CHECK_INT(a.calls, 1);
	TAP_CHECK_INT(b.calls, 1);
	TAP_CHECK_STR(json_string_value(json_object_get(a.result, "who")), "a");
	TAP_CHECK_STR(json_string_value(json_object_get(b.result, "who")), "b");
	seen_clear(&a);
	seen_clear(&b);
	session_free(s);
}

/* A sent request whose deadline passes may have run: outcome-unknown. */
static void
test_deadline_after_sending(void)
{
	struct session *s = start(false, 1);
	struct seen a = { 0 };
	json_int_t id;
	const json_t *cancel;

	session_request(s, "tools/call", json_object(), 30, seen_reply, &a);
	id = last_id();
	run_until(&a.calls, 1);
	TAP_CHECK_INT(a.calls, 1);
	TAP_CHECK_INT(a.kind, ERRORS_OUTCOME_UNKNOWN);
	TAP_CHECK_STR(sent_method(-1), "notifications/cancelled");
	cancel = json_object_get(json_array_get(lb.sent,
				     json_array_size(lb.sent) - 1),
	    "params");
	TAP_CHECK_INT(json_integer_value(json_object_get(cancel, "requestId")),
	    id);
	/* A late answer changes nothing. */
	lb_say(jsonrpc_result(json_object_get(json_array_get(lb.sent,
						  json_array_size(lb.sent) - 2),
				  "id"),
	    json_object()));
	run_turns(2);
	TAP_CHECK_INT(a.calls, 1);
	seen_clear(&a);
	session_free(s);
}

/* One that never left the transport's queue did not run: timeout. */
static void
test_deadline_before_sending(void)
{
	struct session *s = start(false, 1);
	struct seen a = { 0 };

	lb.cancel_result = 1; /* the cancel took it out of a queue */
	session_request(s, "tools/call", json_object(), 30, seen_reply, &a);
	run_until(&a.calls, 1);
	TAP_CHECK_INT(a.calls, 1);
	TAP_CHECK_INT(a.kind, ERRORS_TIMEOUT);
	seen_clear(&a);
	session_free(s);
}

/* A refused send fails from the loop, never inside session_request. */
static void
test_refused_send_fails_later(void)
{
	struct session *s = start(false, 1);
	struct seen a = { 0 };

	lb.send_result = -EPIPE;
	session_request(s, "tools/call", json_object(), 5000, seen_reply, &a);
	TAP_CHECK_INT(a.calls, 0);
	run_turns(2);
	TAP_CHECK_INT(a.calls, 1);
	TAP_CHECK_INT(a.kind, ERRORS_UNAVAILABLE);
	seen_clear(&a);
	session_free(s);
}

/* A request to a dead session fails the same way. */
static void
test_request_to_dead_session(void)
{
	struct session *s = start(false, 1);
	struct seen a = { 0 }, b = { 0 };

	session_request(s, "tools/call", json_object(), 5000, seen_reply, &a);
	session_ref(s); /* a holder: the memory stays while it holds it */
	session_free(s);
	/* What was in flight fails from the loop, not inside the free. */
	TAP_CHECK_INT(a.calls, 0);
	TAP_CHECK(!session_is_ready(s), "ready after free");
	session_request(s, "tools/call", json_object(), 5000, seen_reply, &b);
	TAP_CHECK_INT(b.calls, 0);
	run_turns(2);
	TAP_CHECK_INT(a.calls, 1);
	TAP_CHECK_INT(a.kind, ERRORS_OUTCOME_UNKNOWN);
	TAP_CHECK_INT(b.calls, 1);
	TAP_CHECK_INT(b.kind, ERRORS_UNAVAILABLE);
	session_unref(s);
	run_turns(1);
	seen_clear(&a);
	seen_clear(&b);
}

/* list_changed: the session lists again and says the tools changed. */
static void
test_list_changed_relists(void)
{
	struct session *s = start(false, 1);

	lb.ntools = 4;
	lb_say(jsonrpc_notification("notifications/tools/list_changed", NULL));
	run_until(&nchanged, 1);
	TAP_CHECK_INT(nchanged, 1);
	TAP_CHECK_INT(json_array_size(session_tools_peek(s)), 4);
	session_free(s);
}

/* ping from the server is answered; anything else is refused. */
static void
test_server_requests(void)
{
	struct session *s = start(false, 1);
	json_t *id = json_string("srv-1"), *last;

	lb_say(jsonrpc_request(id, "ping", NULL));
	run_turns(2);
	last = json_array_get(lb.sent, json_array_size(lb.sent) - 1);
	TAP_CHECK(json_equal(json_object_get(last, "id"), id), "no answer");
	TAP_CHECK(json_is_object(json_object_get(last, "result")),
	    "ping not answered with a result");
	json_decref(id);
	id = json_string("srv-2");
	lb_say(jsonrpc_request(id, "sampling/createMessage", json_object()));
	run_turns(2);
	last = json_array_get(lb.sent, json_array_size(lb.sent) - 1);
	TAP_CHECK(json_equal(json_object_get(last, "id"), id), "no answer");
	TAP_CHECK_INT(json_integer_value(json_object_get(json_object_get(last,
							     "error"),
			  "code")),
	    JSONRPC_METHOD_NOT_FOUND);
	json_decref(id);
	session_free(s);
}

/* HeaderMismatch retires a modern session's catalog, not a legacy one's. */
static void
test_header_mismatch(void)
{
	struct seen a = { 0 };
	struct session *s;
	json_t *id;

	for (int modern = 0; modern < 2; modern++) {
		s = start(modern, 1);
		session_request(s, "tools/call", json_object(), 5000,
		    seen_reply, &a);
		id = json_integer(last_id());
		lb_say(jsonrpc_error(id, -32020, "HeaderMismatch", NULL));
		json_decref(id);
		run_until(&a.calls, 1);
		TAP_CHECK_INT(a.calls, 1);
		TAP_CHECK(a.error != NULL, "the server's error is kept");
		TAP_CHECK_INT(a.kind,
		    modern ? ERRORS_STALE_HANDLE : ERRORS_UPSTREAM);
		TAP_CHECK_INT(session_is_catalog_retired(s), modern);
		seen_clear(&a);
		session_free(s);
	}
}

static void
closed(void *arg)
{
	(*(int *)arg)++;
}

/* A close that ends at once still tells its caller from the loop. */
static void
test_close_done_from_the_loop(void)
{
	struct session *s = start(false, 1);
	struct seen a = { 0 };
	int ndone = 0;

	session_request(s, "tools/call", json_object(), 5000, seen_reply, &a);
	session_close(s, closed, &ndone);
	TAP_CHECK_INT(ndone, 0);
	TAP_CHECK_INT(a.calls, 0); /* the call in flight too: from the loop */
	run_turns(2);
	TAP_CHECK_INT(a.calls, 1);
	TAP_CHECK_INT(a.kind, ERRORS_OUTCOME_UNKNOWN);
	TAP_CHECK_INT(ndone, 1);
	TAP_CHECK_INT(nfailed, 0); /* a close is not a failure */
	seen_clear(&a);
}

static const struct tap_test tests[] = {
	{ "legacy handshake: discover, initialize, tools",
	    test_legacy_handshake },
	{ "modern handshake: discover, tools, _meta", test_modern_handshake },
	{ "replies routed by id, once each", test_replies_routed_by_id },
	{ "deadline after sending: outcome-unknown + cancelled",
	    test_deadline_after_sending },
	{ "deadline before sending: timeout", test_deadline_before_sending },
	{ "refused send fails from the loop", test_refused_send_fails_later },
	{ "request to a dead session; references",
	    test_request_to_dead_session },
	{ "list_changed lists again", test_list_changed_relists },
	{ "server requests: ping answered, others refused",
	    test_server_requests },
	{ "HeaderMismatch retires a modern catalog", test_header_mismatch },
	{ "close completes from the loop", test_close_done_from_the_loop },
};

int
main(void)
{
	int r;

	mcpd_opts.call_timeout_ms = 5000;
	mcpd_opts.max_message = 1 << 20;
	if ((mcpd_base = event_base_new()) == NULL)
		return 1;
	r = tap_run(tests, TAP_COUNT(tests));
	json_decref(lb.sent);
	json_decref(lb.outbox);
	if (lb.deliver != NULL)
		event_free(lb.deliver);
	defer_close();
	event_base_free(mcpd_base);
	return r;
}
