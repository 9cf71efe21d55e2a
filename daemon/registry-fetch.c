/* SPDX-License-Identifier: ISC */
/* One GET to the MCP Registry under the remote URL policy, with limits. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "mcpd.h"
#include "url.h"

struct registry_fetch {
	char *url;
	char *path; /* path and query, as sent */
	size_t max_bytes;
	int timeout_ms;
	registry_fetch_fn *cb;
	void *arg;
	struct netpolicy_query *policy;
	struct http_client *client;
	struct http_exchange *ex;
	/* The deadline; or, once is_ended, the end told from the loop. */
	struct event *timer;
	int status;
	struct evbuffer *body;
	bool is_too_big;
	bool is_ended;
	bool is_failed;
	enum errors_kind fail_kind;
	char *fail_why;
};

static void
registry_fetch_free(struct registry_fetch *f)
{
	netpolicy_cancel(f->policy);
	http_exchange_cancel(f->ex);
	http_client_free(f->client);
	event_free(f->timer);
	evbuffer_free(f->body);
	free(f->url);
	free(f->path);
	free(f->fail_why);
	free(f);
}

/*
 * The exchange is over: what it came to is told on a later loop turn,
 * outside the HTTP client's and the policy's callbacks.
 */
static void
registry_fetch_ended(struct registry_fetch *f)
{
	f->is_ended = true;
	evtimer_del(f->timer);
	event_active(f->timer, EV_TIMEOUT, 0);
}

static void
registry_fetch_failed(struct registry_fetch *f, enum errors_kind kind,
    const char *why)
{
	f->is_failed = true;
	f->fail_kind = kind;
	free(f->fail_why);
	f->fail_why = xstrdup(why);
	registry_fetch_ended(f);
}

static void
registry_fetch_due(evutil_socket_t fd, short events, void *arg)
{
	struct registry_fetch *f = arg;
	struct registry_reply r = { 0 };
	char why[256];

	(void)fd, (void)events;
	if (!f->is_ended) {
		snprintf(why, sizeof why,
		    "the registry at %s did not answer within %d ms (mcpd --registry-timeout)",
		    f->url, f->timeout_ms);
		r.kind = ERRORS_UNAVAILABLE;
		r.why = why;
	} else if (f->is_failed) {
		r.kind = f->fail_kind;
		r.why = f->fail_why;
	} else {
		r.status = f->status;
		r.body_len = evbuffer_get_length(f->body);
		evbuffer_add(f->body, "", 1); /* a C string too */
		r.body = (const char *)evbuffer_pullup(f->body, -1);
	}
	f->cb(f->arg, &r);
	registry_fetch_free(f);
}

static int
registry_fetch_head(void *arg, const struct http_response *resp)
{
	struct registry_fetch *f = arg;
	const char *length = http_response_header(resp, "content-length");

	f->status = resp->status;
	if (length != NULL && strtoull(length, NULL, 10) > f->max_bytes) {
		f->is_too_big = true;
		return -EMSGSIZE;
	}
	return 0;
}

static int
registry_fetch_body(void *arg, const char *data, size_t len)
{
	struct registry_fetch *f = arg;

	if (evbuffer_get_length(f->body) + len > f->max_bytes) {
		f->is_too_big = true;
		return -EMSGSIZE;
	}
	return evbuffer_add(f->body, data, len);
}

static void
registry_fetch_done(void *arg, int err, const char *why)
{
	struct registry_fetch *f = arg;
	char text[512];

	f->ex = NULL;
	if (f->is_too_big) {
		snprintf(text, sizeof text,
		    "the registry's answer is larger than %zu bytes (mcpd --registry-max-bytes)",
		    f->max_bytes);
		registry_fetch_failed(f, ERRORS_UPSTREAM, text);
		return;
	}
	if (err != 0) {
		snprintf(text, sizeof text, "%s %s%s: %s",
		    err == -ECONNREFUSED ? "cannot reach the registry at" :
					   "the exchange with the registry at",
		    f->url, err == -ECONNREFUSED ? "" : " failed",
		    why != NULL ? why : strerror(-err));
		registry_fetch_failed(f, ERRORS_UNAVAILABLE, text);
		return;
	}
	registry_fetch_ended(f);
}

static const struct http_cbs registry_fetch_cbs = {
	.head = registry_fetch_head,
	.body = registry_fetch_body,
	.done = registry_fetch_done,
};

static void
registry_fetch_checked(void *arg, int err, const char *why,
    const struct http_peer *peer)
{
	struct registry_fetch *f = arg;
	static const char agent[] = "mcpd/" MCPD_VERSION;
	const struct http_field fields[] = {
		{ "Accept", "application/json" },
		{ "User-Agent", agent },
	};
	struct http_message m = { "GET", f->path, fields,
		sizeof fields / sizeof fields[0], NULL, 0 };

	f->policy = NULL;
	if (err != 0) {
		char text[1024];

		snprintf(text, sizeof text, "registry %s: %s", f->url, why);
		registry_fetch_failed(f,
		    err == -EACCES || err == -EINVAL ? ERRORS_DENIED :
						       ERRORS_UNAVAILABLE,
		    text);
		return;
	}
	f->client = http_client_new(peer);
	if ((f->ex = http_send(f->client, &m, &registry_fetch_cbs, f)) == NULL)
		registry_fetch_failed(f, ERRORS_UNAVAILABLE,
		    "cannot open a connection to the registry");
}

struct registry_fetch *
registry_fetch_start(const char *url, bool allow_local, int timeout_ms,
    size_t max_bytes, registry_fetch_fn *cb, void *arg)
{
	struct registry_fetch *f = xcalloc(1, sizeof *f);
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	struct url u;
	char *cause = NULL;

	f->url = xstrdup(url);
	f->max_bytes = max_bytes;
	f->timeout_ms = timeout_ms;
	f->cb = cb;
	f->arg = arg;
	if ((f->body = evbuffer_new()) == NULL ||
	    (f->timer = evtimer_new(mcpd_base, registry_fetch_due, f)) == NULL)
		fatalx("out of memory");
	if (xenomem(url_parse(url, &u, &cause)) < 0) {
		/* Told from the loop, never inside this call. */
		f->is_ended = f->is_failed = true;
		f->fail_kind = ERRORS_DENIED;
		xasprintf(&f->fail_why, "registry URL %s: %s", url,
		    cause != NULL ? cause : "invalid");
		free(cause);
		event_active(f->timer, EV_TIMEOUT, 0);
		return f;
	}
	xasprintf(&f->path, "%s%s%s", u.path, u.query != NULL ? "?" : "",
	    u.query != NULL ? u.query : "");
	url_free(&u);
	evtimer_add(f->timer, &tv);
	f->policy = netpolicy_check(url, allow_local, registry_fetch_checked,
	    f);
	return f;
}

void
registry_fetch_cancel(struct registry_fetch *f)
{
	if (f != NULL)
		registry_fetch_free(f);
}
