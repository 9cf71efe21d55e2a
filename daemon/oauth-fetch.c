/* SPDX-License-Identifier: ISC */
/* One HTTP exchange of an OAuth flow: policy, pinning, deadline, limit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "jsonwipe.h"
#include "log.h"
#include "oauth-int.h"
#include "url.h"

#define OAUTH_FETCH_FIELDS 8

struct oauth_fetch {
	char *url;
	char *path; /* path and query */
	struct http_field fields[OAUTH_FETCH_FIELDS];
	size_t nfields;
	char *body; /* a form or JSON, or NULL for a GET */
	char *content_type;
	bool allow_local;
	oauth_fetch_fn *cb;
	void *arg;
	struct netpolicy_query *policy;
	struct http_client *client;
	struct http_exchange *ex;
	struct http_response head; /* copied at the head */
	struct evbuffer *in;
	struct event *timer; /* the deadline, or an answer from the loop */
	int err;
	char *why;
};

static void
oauth_fetch_free_client(void *arg)
{
	http_client_free(arg);
}

static void
oauth_fetch_free(struct oauth_fetch *f)
{
	netpolicy_cancel(f->policy);
	http_exchange_cancel(f->ex);
	/* Not inside its own callback: the connection may be the caller. */
	if (f->client != NULL)
		defer_call(oauth_fetch_free_client, f->client);
	for (size_t i = 0; i < f->nfields; i++) {
		free((char *)(uintptr_t)f->fields[i].name);
		if (f->fields[i].value != NULL)
			explicit_bzero((char *)(uintptr_t)f->fields[i].value,
			    strlen(f->fields[i].value));
		free((char *)(uintptr_t)f->fields[i].value);
	}
	for (size_t i = 0; i < f->head.nheaders; i++) {
		free(f->head.headers[i].name);
		free(f->head.headers[i].value);
	}
	free(f->head.headers);
	if (f->body != NULL)
		explicit_bzero(f->body, strlen(f->body));
	free(f->body);
	if (f->in != NULL) {
		/* Token answers: wipe them too. */
		size_t len = evbuffer_get_length(f->in);

		if (len > 0)
			explicit_bzero(evbuffer_pullup(f->in, -1), len);
		evbuffer_free(f->in);
	}
	if (f->timer != NULL)
		event_free(f->timer);
	free(f->content_type);
	free(f->url);
	free(f->path);
	free(f->why);
	free(f);
}

/* Calls back once and frees f. */
static void
oauth_fetch_end(struct oauth_fetch *f, int err, const char *why)
{
	struct oauth_response r = { 0 };
	oauth_fetch_fn *cb = f->cb;
	size_t len;

	if (err != 0) {
		cb(f->arg, err, why, NULL);
		oauth_fetch_free(f);
		return;
	}
	evbuffer_add(f->in, "", 1);
	len = evbuffer_get_length(f->in) - 1;
	r.status = f->head.status;
	r.head = &f->head;
	r.body = (const char *)evbuffer_pullup(f->in, -1);
	r.len = len;
	r.json = json_loadb(r.body, len, 0, NULL);
	if (r.json != NULL && !json_is_object(r.json)) {
		json_decref(r.json);
		r.json = NULL;
	}
	cb(f->arg, 0, NULL, &r);
	jsonwipe_decref(r.json);
	oauth_fetch_free(f);
}

static void
oauth_fetch_due(evutil_socket_t fd, short events, void *arg)
{
	struct oauth_fetch *f = arg;
	char why[512];

	(void)fd, (void)events;
	if (f->err != 0) {
		snprintf(why, sizeof why, "%s", f->why);
		oauth_fetch_end(f, f->err, why);
		return;
	}
	snprintf(why, sizeof why, "%s did not answer within %d s", f->url,
	    OAUTH_FETCH_TIMEOUT_MS / 1000);
	oauth_fetch_end(f, -ETIMEDOUT, why);
}

/* Fails f from the loop (never inside oauth_fetch_start). */
static void
oauth_fetch_fail_later(struct oauth_fetch *f, int err, const char *why)
{
	f->err = err;
	free(f->why);
	f->why = xstrdup(why);
	evtimer_del(f->timer);
	event_active(f->timer, EV_TIMEOUT, 0);
}

static int
oauth_fetch_head(void *arg, const struct http_response *resp)
{
	struct oauth_fetch *f = arg;

	f->head.status = resp->status;
	f->head.nheaders = resp->nheaders;
	f->head.headers = xcalloc(resp->nheaders + 1, sizeof *f->head.headers);
	for (size_t i = 0; i < resp->nheaders; i++) {
		f->head.headers[i].name = xstrdup(resp->headers[i].name);
		f->head.headers[i].value = xstrdup(resp->headers[i].value);
	}
	return 0;
}

static int
oauth_fetch_body(void *arg, const char *data, size_t len)
{
	struct oauth_fetch *f = arg;

	if (evbuffer_get_length(f->in) + len > OAUTH_FETCH_MAX)
		return -EMSGSIZE;
	return evbuffer_add(f->in, data, len);
}

static void
oauth_fetch_done(void *arg, int err, const char *why)
{
	struct oauth_fetch *f = arg;
	const char *location;
	char text[768];

	f->ex = NULL;
	if (err == -ECANCELED || err == -EMSGSIZE) {
		snprintf(text, sizeof text, "%s sent more than %d KiB; refused",
		    f->url, OAUTH_FETCH_MAX / 1024);
		oauth_fetch_end(f, -EMSGSIZE, text);
		return;
	}
	if (err != 0) {
		snprintf(text, sizeof text, "%s: %s", f->url,
		    why != NULL ? why : "the exchange failed");
		oauth_fetch_end(f, err, text);
		return;
	}
	if (f->head.status >= 300 && f->head.status < 400) {
		location = http_response_header(&f->head, "location");
		snprintf(text, sizeof text,
		    "%s answered HTTP %d, a redirect%s%.200s; mcpd never follows redirects",
		    f->url, f->head.status, location != NULL ? " to " : "",
		    location != NULL ? location : "");
		oauth_fetch_end(f, -EPERM, text);
		return;
	}
	oauth_fetch_end(f, 0, NULL);
}

static const struct http_cbs oauth_fetch_cbs = {
	.head = oauth_fetch_head,
	.body = oauth_fetch_body,
	.done = oauth_fetch_done,
};

static void
oauth_fetch_checked(void *arg, int err, const char *why,
    const struct http_peer *peer)
{
	struct oauth_fetch *f = arg;
	struct http_field fields[OAUTH_FETCH_FIELDS + 3];
	struct http_message m = { f->body != NULL ? "POST" : "GET", f->path,
		fields, 0, f->body, f->body != NULL ? strlen(f->body) : 0 };
	char text[768];

	f->policy = NULL;
	if (err != 0) {
		snprintf(text, sizeof text, "%s: %s", f->url, why);
		oauth_fetch_end(f, err, text);
		return;
	}
	fields[m.nheaders++] = (struct http_field){ "Accept",
		"application/json" };
	if (f->body != NULL)
		fields[m.nheaders++] = (struct http_field){ "Content-Type",
			f->content_type };
	for (size_t i = 0; i < f->nfields; i++)
		fields[m.nheaders++] = f->fields[i];
	fields[m.nheaders++] = (struct http_field){ "Connection", "close" };
	f->client = http_client_new(peer);
	if ((f->ex = http_send(f->client, &m, &oauth_fetch_cbs, f)) == NULL) {
		snprintf(text, sizeof text, "%s: cannot open a connection",
		    f->url);
		oauth_fetch_end(f, -ECONNREFUSED, text);
	}
}

struct oauth_fetch *
oauth_fetch_start(const char *url, bool allow_local,
    const struct http_field *fields, size_t nfields, const char *body,
    const char *content_type, oauth_fetch_fn *cb, void *arg)
{
	struct oauth_fetch *f = xcalloc(1, sizeof *f);
	struct timeval tv = { OAUTH_FETCH_TIMEOUT_MS / 1000,
		(OAUTH_FETCH_TIMEOUT_MS % 1000) * 1000 };
	char *cause = NULL;
	struct url u;

	f->url = xstrdup(url);
	f->allow_local = allow_local;
	f->cb = cb;
	f->arg = arg;
	f->body = body != NULL ? xstrdup(body) : NULL;
	f->content_type = xstrdup(content_type != NULL ?
		content_type :
		"application/x-www-form-urlencoded");
	if ((f->in = evbuffer_new()) == NULL ||
	    (f->timer = evtimer_new(mcpd_base, oauth_fetch_due, f)) == NULL)
		fatalx("out of memory");
	for (size_t i = 0; i < nfields && i < OAUTH_FETCH_FIELDS; i++) {
		f->fields[i].name = xstrdup(fields[i].name);
		f->fields[i].value = xstrdup(fields[i].value);
		f->nfields++;
	}
	evtimer_add(f->timer, &tv);
	if (xenomem(url_parse(url, &u, &cause)) < 0) {
		char *text;

		xasprintf(&text, "%.300s is not a usable URL: %s", url,
		    cause != NULL ? cause : "bad URL");
		oauth_fetch_fail_later(f, -EINVAL, text);
		free(text);
		free(cause);
		return f;
	}
	xasprintf(&f->path, "%s%s%s", u.path, u.query != NULL ? "?" : "",
	    u.query != NULL ? u.query : "");
	url_free(&u);
	f->policy = netpolicy_check(url, allow_local, oauth_fetch_checked, f);
	return f;
}

void
oauth_fetch_cancel(struct oauth_fetch *f)
{
	if (f != NULL)
		oauth_fetch_free(f);
}
