/* SPDX-License-Identifier: ISC */
/* The Streamable HTTP transport: POST per message, JSON or SSE answers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "jsonwipe.h"
#include "log.h"
#include "sse.h"
#include "transport-http-int.h"
#include "url.h"

static struct shttp_transport *
shttp_of(struct transport *t)
{
	return (struct shttp_transport *)t;
}

static void shttp_flush_queue(struct shttp_transport *);

void
shttp_post_free(struct shttp_post *p)
{
	LIST_REMOVE(p, entry);
	if (p->ht->initialized == p) {
		p->ht->initialized = NULL;
		if (!p->ht->is_closing &&
		    (json_array_size(p->ht->queued) > 0 ||
			json_array_size(p->ht->waiting) > 0))
			event_active(p->ht->flush, EV_TIMEOUT, 0);
	}
	if (p->ht->listen == p)
		p->ht->listen = NULL;
	if (p->ht->renewing == p)
		p->ht->renewing = NULL;
	if (p->is_counted && --p->ht->nrequests < mcpd_opts.max_http_requests &&
	    !p->ht->is_closing && json_array_size(p->ht->waiting) > 0)
		event_active(p->ht->flush, EV_TIMEOUT, 0);
	http_exchange_cancel(p->ex);
	oauth_wait_cancel(p->auth_wait);
	if (p->retry != NULL)
		event_free(p->retry);
	free(p->verb);
	json_decref(p->msg);
	json_decref(p->tool);
	free(p->www_authenticate);
	json_decref(p->id);
	json_decref(p->initialize);
	free(p->method);
	evbuffer_free(p->body);
	sse_parser_free(&p->sse);
	free(p);
}

struct shttp_post *
shttp_post_new(struct shttp_transport *ht, const json_t *msg)
{
	struct shttp_post *p = xcalloc(1, sizeof *p);

	if ((p->body = evbuffer_new()) == NULL)
		fatalx("out of memory");
	p->ht = ht;
	if (msg != NULL) {
		p->id = json_incref(json_object_get(msg, "method") != NULL ?
			json_object_get(msg, "id") :
			NULL);
		if (json_is_string(json_object_get(msg, "method")))
			p->method =
			    xstrdup(json_string_value(json_object_get(msg,
				"method")));
		if (p->method != NULL && strcmp(p->method, "initialize") == 0)
			p->initialize = json_incref((json_t *)(uintptr_t)msg);
	}
	sse_parser_init(&p->sse, mcpd_opts.max_message);
	LIST_INSERT_HEAD(&ht->posts, p, entry);
	return p;
}

void
shttp_report(struct shttp_transport *ht, const char *why)
{
	if (ht->is_closing)
		return;
	ht->is_closing = true;
	ht->t.cbs->closed(ht->t.cb_arg, why);
}

const char *
shttp_version_of(const json_t *msg)
{
	return json_string_value(json_object_get(json_object_get(msg, "result"),
	    "protocolVersion"));
}

/*
 * Notes what initialize agreed, which later requests must carry, and the
 * initialize itself, to send again if the server forgets the session.
 */
static void
shttp_note_initialize(struct shttp_post *p, json_t *msg)
{
	const char *v = shttp_version_of(msg);

	if (p->method == NULL || strcmp(p->method, "initialize") != 0 ||
	    v == NULL)
		return;
	free(p->ht->version);
	p->ht->version = xstrdup(v);
	/* It speaks Streamable HTTP: a later 404 is not a fallback. */
	p->ht->may_fall_back = false;
	if (p->ht->init_msg == NULL)
		p->ht->init_msg = json_incref(p->initialize);
}

static void shttp_deliver_msg(struct shttp_post *, json_t *);

static void
shttp_deliver(struct shttp_post *p, const char *data, size_t len)
{
	json_error_t jerr;
	json_t *msg;

	if (p->ht->is_closing || len == 0)
		return;
	if ((msg = jsonrpc_parse(data, len, &jerr)) == NULL) {
		log_debug("ignored a non-JSON message from %s",
		    p->ht->spec->url);
		return;
	}
	shttp_deliver_msg(p, msg);
	json_decref(msg);
}

/* Hands one parsed message to the session, noting p's answer. */
static void
shttp_deliver_msg(struct shttp_post *p, json_t *msg)
{
	struct shttp_transport *ht = p->ht;
	json_t *id = json_object_get(msg, "id");

	if (p->id != NULL && id != NULL && json_equal(id, p->id) &&
	    json_object_get(msg, "method") == NULL) {
		p->is_answered = true;
		if (p == ht->renewing) {
			/* mcpd's own initialize: the session never sees it. */
			shttp_renewed(ht, msg);
			return;
		}
		shttp_note_initialize(p, msg);
	}
	ht->t.cbs->message(ht->t.cb_arg, msg);
}

/*
 * HTTP+SSE: the endpoint event names where to POST. Only a path on the
 * same origin is taken: the policy checked this origin and no other.
 */
static void
shttp_on_endpoint(struct shttp_transport *ht, const char *data)
{
	struct url base, u;
	char *cause = NULL, *origin = NULL, *uorigin = NULL;

	if (data[0] == '/') {
		free(ht->post_path);
		ht->post_path = xstrdup(data);
	} else if (xenomem(url_parse(data, &u, &cause)) == 0) {
		if (xenomem(url_parse(ht->spec->url, &base, NULL)) == 0) {
			origin = url_origin(&base);
			uorigin = url_origin(&u);
			url_free(&base);
		}
		if (origin != NULL && uorigin != NULL &&
		    strcmp(origin, uorigin) == 0)
			xasprintf(&ht->post_path, "%s%s%s", u.path,
			    u.query != NULL ? "?" : "",
			    u.query != NULL ? u.query : "");
		url_free(&u);
	}
	free(cause);
	free(origin);
	free(uorigin);
	if (ht->post_path == NULL) {
		shttp_report(ht,
		    "the SSE endpoint event names another origin or no usable path; refused");
		return;
	}
	shttp_flush_queue(ht);
}

static int
shttp_on_event(void *arg, const struct sse_event *ev)
{
	struct shttp_post *p = arg;

	if (strcmp(ev->type, "message") == 0)
		shttp_deliver(p, ev->data, ev->data_len);
	else if (strcmp(ev->type, "endpoint") == 0 && p == p->ht->listen &&
	    p->ht->is_legacy_sse && p->ht->post_path == NULL)
		shttp_on_endpoint(p->ht, ev->data);
	return p->ht->is_closing ? -ECANCELED : 0;
}

static bool
shttp_is_session_lost(const struct shttp_post *p)
{
	return p->ht->session_id != NULL &&
	    (p->status == 404 ||
		(p->status == 400 &&
		    evbuffer_search(p->body, "ession", 6, NULL).pos >= 0));
}

static int
shttp_on_head(void *arg, const struct http_response *r)
{
	struct shttp_post *p = arg;
	const char *ct = http_response_header(r, "content-type");
	const char *sid = http_response_header(r, "mcp-session-id");

	p->status = r->status;
	p->is_sse = ct != NULL && strncasecmp(ct, "text/event-stream", 17) == 0;
	free(p->www_authenticate);
	p->www_authenticate = NULL;
	/* Taken after a login or step-up: the next challenge starts afresh. */
	if (r->status < 300 && p->auth_tries > 0 && p->ht->spec->auth != NULL)
		oauth_note_success(p->ht->spec->auth);
	if ((r->status == 401 || r->status == 403) &&
	    http_response_header(r, "www-authenticate") != NULL)
		p->www_authenticate = xstrdup(http_response_header(r,
		    "www-authenticate"));
	if (sid != NULL && p->method != NULL &&
	    strcmp(p->method, "initialize") == 0) {
		free(p->ht->session_id);
		p->ht->session_id = xstrdup(sid);
	}
	return 0;
}

static int
shttp_on_body(void *arg, const char *data, size_t len)
{
	struct shttp_post *p = arg;

	if (p->ht->is_closing)
		return -ECANCELED;
	if (p->is_sse && p->status == 200)
		return sse_parser_feed(&p->sse, data, len, shttp_on_event, p) <
			0 ?
		    -ECANCELED :
		    0;
	if (evbuffer_get_length(p->body) + len > mcpd_opts.max_message)
		return -EMSGSIZE;
	return evbuffer_add(p->body, data, len);
}

/* Tells the session that the request of p will get no answer. */
void
shttp_fail_request(struct shttp_post *p, enum errors_kind kind, const char *why)
{
	if (p->id == NULL || p->is_answered || p->ht->is_closing)
		return;
	p->is_answered = true;
	if (p == p->ht->renewing) {
		p->ht->renewing = NULL;
		shttp_renew_failed(p->ht, why);
		return;
	}
	p->ht->t.cbs->failed(p->ht->t.cb_arg, p->id, kind, why);
}

static void
shttp_resume_due(evutil_socket_t fd, short events, void *arg)
{
	struct shttp_post *p = arg;

	(void)fd, (void)events;
	p->is_resumed = true;
	shttp_post_start(p->ht, p, "GET", NULL, NULL);
}

/* An SSE stream ended before its answer: resume it with Last-Event-ID. */
static bool
shttp_try_resume(struct shttp_post *p)
{
	int64_t retry = sse_parser_retry_ms(&p->sse);
	struct timeval tv;

	if (sse_parser_last_id_peek(&p->sse) == NULL)
		return false;
	if (retry < 0 || retry > 60000)
		retry = retry < 0 ? SHTTP_RETRY_MS : 60000;
	tv.tv_sec = retry / 1000;
	tv.tv_usec = (retry % 1000) * 1000;
	sse_parser_reset(&p->sse);
	if (p->retry == NULL)
		p->retry = evtimer_new(mcpd_base, shttp_resume_due, p);
	evtimer_add(p->retry, &tv);
	return true;
}

/* The body as a C string, for messages (it may hold anything). */
static const char *
shttp_body_text(struct shttp_post *p)
{
	evbuffer_add(p->body, "", 1);
	return (const char *)evbuffer_pullup(p->body, -1);
}

/* What an HTTP status says about the request; false when it is fine. */
static bool
shttp_status_failure(struct shttp_post *p, enum errors_kind *kind, char *why,
    size_t size)
{
	const char *body;

	if (p->status < 300)
		return false;
	body = shttp_body_text(p);
	if (p->status < 400) {
		*kind = ERRORS_DENIED;
		snprintf(why, size,
		    "the server answered HTTP %d; redirects are refused",
		    p->status);
	} else {
		*kind = p->status >= 500 ? ERRORS_OUTCOME_UNKNOWN :
					   ERRORS_UPSTREAM;
		snprintf(why, size, "the server answered HTTP %d: %.200s",
		    p->status, body != NULL ? body : "");
	}
	return true;
}

static void shttp_open_listen(struct shttp_transport *);

/*
 * A refusal may carry a JSON-RPC error (-32022 with the versions the
 * server supports, say): that is the request's answer, not an HTTP fault.
 */
static bool
shttp_deliver_error(struct shttp_post *p)
{
	size_t len = evbuffer_get_length(p->body);
	json_t *msg, *error;

	if (p->id == NULL || p->is_answered || len == 0 ||
	    (msg = jsonrpc_parse((const char *)evbuffer_pullup(p->body, -1),
		 len, NULL)) == NULL)
		return false;
	error = json_object_get(msg, "error");
	if (!json_is_object(error) ||
	    !json_is_integer(json_object_get(error, "code"))) {
		json_decref(msg);
		return false;
	}
	/* Servers often answer such errors with "id": null. */
	json_object_set(msg, "id", p->id);
	json_object_set_new(msg, "jsonrpc", json_string("2.0"));
	json_object_del(msg, "result");
	if (!p->ht->is_closing)
		shttp_deliver_msg(p, msg);
	json_decref(msg);
	shttp_post_free(p);
	return true;
}

/*
 * A server that refuses a POST of initialize with 400, 404 or 405 may
 * speak HTTP+SSE (2024-11-05): GET the URL and wait for its endpoint.
 */
static bool
shttp_falls_back(struct shttp_post *p)
{
	struct shttp_transport *ht = p->ht;

	if (!ht->may_fall_back || p->initialize == NULL ||
	    (p->status != 400 && p->status != 404 && p->status != 405))
		return false;
	ht->may_fall_back = false;
	ht->is_legacy_sse = true;
	ht->t.name = "sse";
	json_array_append(ht->queued, p->initialize);
	shttp_post_free(p);
	shttp_open_listen(ht);
	return true;
}

static void
shttp_post_ended(struct shttp_post *p, int err, const char *why)
{
	size_t len = evbuffer_get_length(p->body);
	enum errors_kind kind = ERRORS_OUTCOME_UNKNOWN;
	char text[512];

	if (err == 0 && shttp_auth_challenge(p))
		return;
	if (err == 0 && shttp_falls_back(p))
		return;
	if (err == 0 && shttp_is_session_lost(p)) {
		shttp_session_lost(p);
		return;
	}
	if (err == 0 && p->status >= 400 && shttp_deliver_error(p))
		return;
	if ((err != 0 || p->is_sse) && !p->is_answered && p->id != NULL &&
	    shttp_try_resume(p))
		return;
	if (err == -ECONNREFUSED) {
		kind = ERRORS_UNAVAILABLE;
		snprintf(text, sizeof text,
		    "cannot reach the server (%s); nothing was sent", why);
	} else if (err != 0)
		snprintf(text, sizeof text,
		    "the HTTP exchange failed after the request was sent: %s",
		    why);
	else if (!shttp_status_failure(p, &kind, text, sizeof text)) {
		if (p->ht->is_legacy_sse) {
			/* The answer comes on the GET stream. */
			shttp_post_free(p);
			return;
		}
		if (!p->is_sse && len > 0)
			shttp_deliver(p,
			    (const char *)evbuffer_pullup(p->body, -1), len);
		snprintf(text, sizeof text,
		    "the server ended the response without an answer");
	}
	shttp_fail_request(p, kind, text);
	shttp_post_free(p);
}

static void shttp_closed_now(void *);

static void
shttp_on_done(void *arg, int err, const char *why)
{
	struct shttp_post *p = arg;
	struct shttp_transport *ht = p->ht;

	p->ex = NULL;
	if (ht->is_closing) {
		/* The DELETE (or a straggler) ended: nothing more to wait. */
		shttp_post_free(p);
		if (ht->done != NULL && LIST_EMPTY(&ht->posts)) {
			evtimer_del(ht->timer);
			defer_call(shttp_closed_now, ht);
		}
		return;
	}
	if (p == ht->listen && err == 0 && shttp_auth_challenge(p))
		return;
	if (p == ht->listen && ht->is_legacy_sse) {
		shttp_post_free(p);
		shttp_report(ht,
		    err != 0		 ? why :
			p->status != 200 ? "the SSE stream was refused" :
					   "the SSE stream ended");
		return;
	}
	if (p == ht->listen) {
		/* The server-push stream: resumed while the server keeps it. */
		if (p->status == 200 && shttp_try_resume(p))
			return;
		shttp_post_free(p);
		return;
	}
	shttp_post_ended(p, err, why);
}

static const struct http_cbs shttp_transport_cbs = {
	.head = shttp_on_head,
	.body = shttp_on_body,
	.done = shttp_on_done,
};

/* The headers every request carries, plus the user's own. */
static size_t
shttp_fields(struct shttp_transport *ht, struct shttp_post *p, const char *verb,
    const json_t *modern, const char *authorization, struct http_field *f)
{
	size_t n = 0;
	const char *k;
	json_t *v;

	f[n++] = (struct http_field){ "Accept",
		strcmp(verb, "POST") == 0 ?
		    "application/json, text/event-stream" :
		    "text/event-stream" };
	if (strcmp(verb, "POST") == 0)
		f[n++] = (struct http_field){ "Content-Type",
			"application/json" };
	/* 2026-07-28 has no sessions: its headers come with each message. */
	json_object_foreach((json_t *)(uintptr_t)modern, k, v)
		f[n++] = (struct http_field){ k, json_string_value(v) };
	if (ht->session_id != NULL && modern == NULL)
		f[n++] = (struct http_field){ "Mcp-Session-Id",
			ht->session_id };
	/* Not on an initialize sent again: it starts a session afresh. */
	if (ht->version != NULL && modern == NULL &&
	    (p == NULL || p->initialize == NULL))
		f[n++] = (struct http_field){ "MCP-Protocol-Version",
			ht->version };
	if (p != NULL && strcmp(verb, "GET") == 0 &&
	    sse_parser_last_id_peek(&p->sse) != NULL)
		f[n++] = (struct http_field){ "Last-Event-ID",
			sse_parser_last_id_peek(&p->sse) };
	if (authorization != NULL)
		f[n++] = (struct http_field){ "Authorization", authorization };
	json_object_foreach(ht->spec->headers, k, v)
		if (n < SHTTP_MAX_HEADERS)
			f[n++] = (struct http_field){ k, json_string_value(v) };
	return n;
}

void
shttp_post_start(struct shttp_transport *ht, struct shttp_post *p,
    const char *verb, const json_t *msg, const json_t *tool)
{
	json_t *modern = msg != NULL ? era_http_headers(msg, tool) : NULL;
	struct http_field fields[2 * SHTTP_MAX_HEADERS + 7];
	struct http_message m = { verb,
		ht->is_legacy_sse && strcmp(verb, "POST") == 0 ? ht->post_path :
								 ht->path,
		fields, 0, NULL, 0 };
	char *body = NULL, *authorization = NULL;

	p->status = 0;
	p->is_sse = false;
	p->epoch = ht->epoch;
	evbuffer_drain(p->body, evbuffer_get_length(p->body));
	if (shttp_auth_prepare(p, verb, msg, tool, &authorization) == 1) {
		json_decref(modern); /* parked: it goes once refreshed */
		return;
	}
	if (json_object_size(modern) > SHTTP_MAX_HEADERS)
		json_object_clear(modern); /* never more than fields holds */
	m.nheaders = shttp_fields(ht, p, verb, modern, authorization, fields);
	if (msg != NULL) {
		body = xnonnull(json_dumps(msg,
		    JSON_COMPACT | JSON_ENCODE_ANY));
		m.body = body;
		m.body_len = strlen(body);
	}
	p->ex = http_send(ht->client, &m, &shttp_transport_cbs, p);
	json_decref(modern);
	free(body);
	if (authorization != NULL)
		explicit_bzero(authorization, strlen(authorization));
	free(authorization);
	if (p->ex == NULL)
		shttp_on_done(p, -ENOMEM, "cannot open a connection");
}

/* After initialized: the optional GET stream for server messages. */
static void
shttp_open_listen(struct shttp_transport *ht)
{
	if (ht->listen != NULL || ht->is_closing)
		return;
	ht->listen = shttp_post_new(ht, NULL);
	shttp_post_start(ht, ht->listen, "GET", NULL, NULL);
}

int
shttp_send_now(struct shttp_transport *ht, const json_t *msg,
    const json_t *tool, bool is_resent)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	bool is_request = method != NULL && json_object_get(msg, "id") != NULL;
	struct shttp_post *p;

	/* A request cancelled while it waited goes unsent, and so does this. */
	if (jsonrpc_unqueue_cancelled(ht->waiting, msg) == 1)
		return 1;
	if (is_request && ht->nrequests >= mcpd_opts.max_http_requests)
		return json_array_append_new(ht->waiting,
		    json_pack("[OOb]", msg, tool != NULL ? tool : json_null(),
			is_resent));
	p = shttp_post_new(ht, msg);
	if (is_request) {
		p->is_counted = true;
		p->is_resent = is_resent;
		ht->nrequests++;
		/* Kept: a 404 for the session (it did not run) sends it again. */
		p->msg = json_incref((json_t *)(uintptr_t)msg);
		p->tool = json_incref((json_t *)(uintptr_t)tool);
	}
	if (method != NULL && strcmp(method, "notifications/initialized") == 0)
		ht->initialized = p;
	shttp_post_start(ht, p, "POST", msg, tool);
	if (method != NULL && !ht->is_legacy_sse &&
	    strcmp(method, "notifications/initialized") == 0)
		shttp_open_listen(ht);
	return 0;
}

static void
shttp_policy_done(void *arg, int err, const char *why,
    const struct http_peer *peer)
{
	struct shttp_transport *ht = arg;

	ht->policy = NULL;
	if (err != 0) {
		shttp_report(ht, why);
		return;
	}
	ht->client = http_client_new(peer);
	if (ht->is_legacy_sse)
		shttp_open_listen(ht);
	else
		shttp_flush_queue(ht);
	/* Adopted: initialized went long ago, the stream is opened again. */
	if (ht->is_adopted && !ht->is_legacy_sse)
		shttp_open_listen(ht);
}

static bool
shttp_is_ready(const struct shttp_transport *ht)
{
	return ht->client != NULL && ht->initialized == NULL &&
	    ht->renewing == NULL &&
	    (!ht->is_legacy_sse || ht->post_path != NULL);
}

/* Starts the requests that waited, as far as slots are free. */
static void
shttp_start_waiting(struct shttp_transport *ht)
{
	json_t *pair;

	while (ht->nrequests < mcpd_opts.max_http_requests &&
	    (pair = json_array_get(ht->waiting, 0)) != NULL) {
		json_incref(pair);
		json_array_remove(ht->waiting, 0);
		shttp_send_now(ht, json_array_get(pair, 0),
		    json_is_null(json_array_get(pair, 1)) ?
			NULL :
			json_array_get(pair, 1),
		    json_is_true(json_array_get(pair, 2)));
		json_decref(pair);
	}
}

static void
shttp_flush_due(evutil_socket_t fd, short events, void *arg)
{
	struct shttp_transport *ht = arg;

	(void)fd, (void)events;
	if (ht->is_closing || !shttp_is_ready(ht))
		return;
	shttp_start_waiting(ht);
	shttp_flush_queue(ht);
}

static void
shttp_flush_queue(struct shttp_transport *ht)
{
	json_t *queued = ht->queued, *msg;
	size_t i;

	ht->queued = json_array();
	json_array_foreach(queued, i, msg)
		shttp_send_now(ht, msg, NULL, false);
	json_decref(queued);
}

static int
shttp_open(struct transport *t, char **cause)
{
	struct shttp_transport *ht = shttp_of(t);
	struct url u;

	if (xenomem(url_parse(ht->spec->url, &u, cause)) < 0)
		return -EINVAL;
	xasprintf(&ht->path, "%s%s%s", u.path, u.query != NULL ? "?" : "",
	    u.query != NULL ? u.query : "");
	url_free(&u);
	ht->policy = netpolicy_check(ht->spec->url, ht->spec->allow_local,
	    shttp_policy_done, ht);
	return 0;
}

static int
shttp_send(struct transport *t, const json_t *msg, const json_t *tool)
{
	struct shttp_transport *ht = shttp_of(t);
	int r;

	if (ht->is_closing)
		return -EPIPE;
	if ((r = shttp_auth_unpark(ht, msg)) != 0 ||
	    (r = shttp_renew_unpark(ht, msg)) != 0)
		return r;
	if (!shttp_is_ready(ht))
		return json_array_append(ht->queued, (json_t *)(uintptr_t)msg);
	return shttp_send_now(ht, msg, tool, false);
}

static void
shttp_release(void *arg)
{
	struct shttp_transport *ht = arg;
	struct shttp_post *p;

	netpolicy_cancel(ht->policy);
	while ((p = LIST_FIRST(&ht->posts)) != NULL)
		shttp_post_free(p);
	http_client_free(ht->client);
	event_free(ht->timer);
	event_free(ht->flush);
	json_decref(ht->queued);
	json_decref(ht->waiting);
	json_decref(ht->held);
	json_decref(ht->init_msg);
	free(ht->path);
	free(ht->post_path);
	free(ht->session_id);
	free(ht->version);
	free(ht->held_why);
	oauth_unref(ht->own.auth);
	if (ht->own.url != NULL)
		explicit_bzero(ht->own.url, strlen(ht->own.url));
	free(ht->own.url);
	jsonwipe_decref(ht->own.headers);
	free(ht);
}

static void
shttp_free(struct transport *t)
{
	struct shttp_transport *ht = shttp_of(t);

	ht->is_closing = true;
	ht->done = NULL;
	event_del(ht->timer);
	defer_call(shttp_release, ht);
}

/* The close ended (its DELETE answered, or there was none): told once. */
static void
shttp_closed_now(void *arg)
{
	struct shttp_transport *ht = arg;
	void (*done)(void *) = ht->done;

	ht->done = NULL;
	if (done != NULL)
		done(ht->done_arg);
}

/* The DELETE took longer than one stop step: the close ends anyway. */
static void
shttp_closed(evutil_socket_t fd, short events, void *arg)
{
	(void)fd, (void)events;
	shttp_closed_now(arg);
}

/* Ends the session on the server (DELETE), within one stop step. */
static void
shttp_close(struct transport *t, void (*done)(void *), void *arg)
{
	struct shttp_transport *ht = shttp_of(t);
	struct timeval tv = { mcpd_opts.stop_step_ms / 1000,
		(mcpd_opts.stop_step_ms % 1000) * 1000 };
	struct shttp_post *p, *next;

	ht->is_closing = true;
	ht->done = done;
	ht->done_arg = arg;
	for (p = LIST_FIRST(&ht->posts); p != NULL; p = next) {
		next = LIST_NEXT(p, entry);
		shttp_post_free(p);
	}
	event_assign(ht->timer, mcpd_base, -1, 0, shttp_closed, ht);
	if (ht->client == NULL || ht->session_id == NULL) {
		defer_call(shttp_closed_now, ht);
		return;
	}
	shttp_post_start(ht, shttp_post_new(ht, NULL), "DELETE", NULL, NULL);
	evtimer_add(ht->timer, &tv);
}

static const struct transport_ops shttp_ops = {
	.name = "streamable-http",
	.open = shttp_open,
	.send = shttp_send,
	.held_why = shttp_auth_held_why,
	.close = shttp_close,
	.free = shttp_free,
};

struct transport *
transport_http_new(const struct remote_spec *spec,
    const struct transport_cbs *cbs, void *arg)
{
	struct shttp_transport *ht = xcalloc(1, sizeof *ht);

	ht->t.ops = &shttp_ops;
	ht->t.cbs = cbs;
	ht->t.cb_arg = arg;
	/* Its own copy: the URL and headers may hold resolved secrets. */
	ht->own.url = xstrdup(spec->url);
	ht->own.headers = json_deep_copy(spec->headers);
	ht->own.allow_local = spec->allow_local;
	ht->own.is_sse = spec->is_sse;
	ht->own.may_fall_back = spec->may_fall_back;
	if ((ht->own.auth = spec->auth) != NULL)
		oauth_ref(ht->own.auth);
	ht->spec = &ht->own;
	ht->is_legacy_sse = spec->is_sse;
	ht->may_fall_back = spec->may_fall_back;
	ht->t.name = spec->is_sse ? "sse" : "streamable-http";
	ht->queued = xjson(json_array());
	ht->waiting = xjson(json_array());
	ht->held = xjson(json_array());
	ht->timer = evtimer_new(mcpd_base, shttp_closed, ht);
	ht->flush = evtimer_new(mcpd_base, shttp_flush_due, ht);
	LIST_INIT(&ht->posts);
	return &ht->t;
}

json_t *
transport_http_save(struct transport *t)
{
	struct shttp_transport *ht;

	if (t == NULL || t->ops != &shttp_ops)
		return NULL;
	ht = shttp_of(t);
	/* HTTP+SSE's session is its GET stream: it cannot go on. */
	if (ht->is_legacy_sse || ht->is_closing || ht->session_id == NULL)
		return NULL;
	return json_pack("{s:s, s:s?}", "session_id", ht->session_id, "version",
	    ht->version);
}

struct transport *
transport_http_adopt(const struct remote_spec *spec, const json_t *saved,
    const struct transport_cbs *cbs, void *arg, char **cause)
{
	struct transport *t = transport_http_new(spec, cbs, arg);
	struct shttp_transport *ht = shttp_of(t);
	const char *version = json_string_value(json_object_get(saved,
	    "version"));

	ht->session_id = xstrdup(json_string_value(json_object_get(saved,
	    "session_id")));
	ht->version = version != NULL ? xstrdup(version) : NULL;
	ht->is_adopted = true;
	ht->may_fall_back = false;
	if (t->ops->open(t, cause) < 0) {
		t->ops->free(t);
		return NULL;
	}
	return t;
}
