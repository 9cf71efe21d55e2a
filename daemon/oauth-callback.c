/* SPDX-License-Identifier: ISC */
/* The loopback redirect listener of one authorization attempt. */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <sodium.h>

#include "errors.h"
#include "form.h"
#include "jsonwipe.h"
#include "log.h"
#include "oauth-int.h"

#define OAUTH_CALLBACK_LINGER_MS 2000 /* the last answer's time to go out */
#define OAUTH_CALLBACK_PATH	 "/callback"

struct oauth_callback {
	struct evhttp *http;
	struct evhttp_bound_socket *bound; /* NULL once closed */
	char *state;
	char uri[64];
	oauth_callback_fn *fn;
	void *arg;
	bool is_used;
	struct event *linger;
	LIST_ENTRY(oauth_callback) entry;
};

/* Listeners that are closed but still finishing their last answer. */
static LIST_HEAD(, oauth_callback)
    oauth_callback_closing = LIST_HEAD_INITIALIZER(oauth_callback_closing);

static void
oauth_callback_reply(struct evhttp_request *req, int code, const char *page)
{
	struct evbuffer *buf = evbuffer_new();
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);

	if (buf == NULL)
		fatalx("out of memory");
	evhttp_add_header(h, "Content-Type", "text/plain; charset=utf-8");
	evhttp_add_header(h, "Cache-Control", "no-store");
	evhttp_add_header(h, "Referrer-Policy", "no-referrer");
	evhttp_add_header(h, "Connection", "close");
	evbuffer_add_printf(buf, "mcpd: %s\n", page);
	evhttp_send_reply(req, code, code == 200 ? "OK" : "Refused", buf);
	evbuffer_free(buf);
}

/* The browser's request came from this machine (its loopback). */
static bool
oauth_callback_is_loopback(struct evhttp_request *req)
{
	struct evhttp_connection *conn = evhttp_request_get_connection(req);
	const struct sockaddr *sa = evhttp_connection_get_addr(conn);

	if (sa == NULL)
		return false;
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)(const void *)sa)
				  ->sin_addr.s_addr) >>
			   24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6
						      *)(const void *)sa)
						 ->sin6_addr);
	return false;
}

static void
oauth_callback_handle(struct evhttp_request *req, void *arg)
{
	struct oauth_callback *cb = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = evhttp_uri_get_path(uri);
	const char *query = evhttp_uri_get_query(uri);
	const char *page = "authorization received; you may close this window";
	const char *state;
	json_t *params;
	int code;

	if (!oauth_callback_is_loopback(req)) {
		log_warnx(
		    "refused an authorization callback from a non-loopback peer");
		oauth_callback_reply(req, 403,
		    "refused: the authorization response must come from this machine");
		return;
	}
	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET || path == NULL ||
	    strcmp(path, OAUTH_CALLBACK_PATH) != 0) {
		oauth_callback_reply(req, 404, "not found");
		return;
	}
	if (cb->is_used || cb->fn == NULL) {
		oauth_callback_reply(req, 400,
		    "refused: this authorization response was already used");
		return;
	}
	if (query == NULL || (params = form_parse(query)) == NULL) {
		oauth_callback_reply(req, 400,
		    "refused: the authorization response is malformed");
		return;
	}
	state = json_string_value(json_object_get(params, "state"));
	if (state == NULL || strlen(state) != strlen(cb->state) ||
	    sodium_memcmp(state, cb->state, strlen(cb->state)) != 0) {
		log_warnx(
		    "refused an authorization callback whose state does not match the attempt's");
		jsonwipe_decref(params);
		oauth_callback_reply(req, 400,
		    "refused: the state does not match this login attempt; start again with mcpctl auth login");
		return;
	}
	/* One use: the port closes now, whatever the answer says. */
	cb->is_used = true;
	if (cb->bound != NULL) {
		evhttp_del_accept_socket(cb->http, cb->bound);
		cb->bound = NULL;
	}
	code = cb->fn(cb->arg, params, &page);
	jsonwipe_decref(params);
	oauth_callback_reply(req, code, page);
}

int
oauth_callback_open(const char *state, oauth_callback_fn *fn, void *arg,
    struct oauth_callback **ret, char **cause)
{
	struct oauth_callback *cb = xcalloc(1, sizeof *cb);
	struct sockaddr_in sin;
	socklen_t len = sizeof sin;
	int err;

	if ((cb->http = evhttp_new(mcpd_base)) == NULL)
		fatalx("out of memory");
	evhttp_set_allowed_methods(cb->http, EVHTTP_REQ_GET);
	evhttp_set_max_headers_size(cb->http, 16384);
	evhttp_set_max_body_size(cb->http, 0);
	evhttp_set_timeout(cb->http, 30);
	evhttp_set_gencb(cb->http, oauth_callback_handle, cb);
	if ((cb->bound = evhttp_bind_socket_with_handle(cb->http, "127.0.0.1",
		 0)) == NULL ||
	    getsockname(evhttp_bound_socket_get_fd(cb->bound),
		(struct sockaddr *)&sin, &len) < 0) {
		err = errno;
		evhttp_free(cb->http);
		free(cb);
		return errors_cause(cause, -err,
		    "cannot listen on 127.0.0.1 for the authorization response: %s",
		    strerror(err));
	}
	snprintf(cb->uri, sizeof cb->uri, "http://127.0.0.1:%u%s",
	    ntohs(sin.sin_port), OAUTH_CALLBACK_PATH);
	cb->state = xstrdup(state);
	cb->fn = fn;
	cb->arg = arg;
	*ret = cb;
	return 0;
}

const char *
oauth_callback_uri(const struct oauth_callback *cb)
{
	return cb->uri;
}

static void
oauth_callback_free(struct oauth_callback *cb)
{
	LIST_REMOVE(cb, entry);
	evhttp_free(cb->http);
	event_free(cb->linger);
	explicit_bzero(cb->state, strlen(cb->state));
	free(cb->state);
	free(cb);
}

static void
oauth_callback_lingered(evutil_socket_t fd, short events, void *arg)
{
	(void)fd, (void)events;
	oauth_callback_free(arg);
}

void
oauth_callback_close(struct oauth_callback *cb)
{
	struct timeval tv = { OAUTH_CALLBACK_LINGER_MS / 1000,
		(OAUTH_CALLBACK_LINGER_MS % 1000) * 1000 };

	if (cb == NULL)
		return;
	if (cb->bound != NULL)
		evhttp_del_accept_socket(cb->http, cb->bound);
	cb->bound = NULL;
	cb->fn = NULL;
	/* Maybe inside its own request's handler: the memory goes later. */
	if ((cb->linger = evtimer_new(mcpd_base, oauth_callback_lingered,
		 cb)) == NULL)
		fatalx("out of memory");
	LIST_INSERT_HEAD(&oauth_callback_closing, cb, entry);
	evtimer_add(cb->linger, &tv);
}

void
oauth_callback_close_all(void)
{
	struct oauth_callback *cb;

	while ((cb = LIST_FIRST(&oauth_callback_closing)) != NULL)
		oauth_callback_free(cb);
}
