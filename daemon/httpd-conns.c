/* SPDX-License-Identifier: ISC */
/* The HTTP front's open connections, and who hears each one's close. */
#include <sys/queue.h>

#include <stdlib.h>

#include <event2/http.h>

#include "httpd-int.h"
#include "mcpd.h"

/*
 * libevent keeps one close callback per connection and no list of them:
 * every connection is known here, so that an upgrade can wait until
 * each has ended on an answer that said Connection: close (a request
 * written on a kept-alive one as the exec closes it would be lost).
 */
struct httpd_conn {
	struct evhttp_connection *conn;
	httpd_closed_fn *fn; /* a stream's: it hears the close, or NULL */
	void *arg;
	uint64_t active_ms; /* its last request's start or end */
	TAILQ_ENTRY(httpd_conn) entry;
};

static TAILQ_HEAD(,
    httpd_conn) httpd_conns = TAILQ_HEAD_INITIALIZER(httpd_conns);
static size_t httpd_nconns;

static void
httpd_conn_closed(struct evhttp_connection *conn, void *arg)
{
	struct httpd_conn *hc = arg;
	httpd_closed_fn *fn = hc->fn;
	void *fn_arg = hc->arg;

	TAILQ_REMOVE(&httpd_conns, hc, entry);
	httpd_nconns--;
	free(hc);
	if (fn != NULL)
		fn(conn, fn_arg);
}

/* Its entry; the first time, it is made and watched. */
static struct httpd_conn *
httpd_conn_of(struct evhttp_connection *conn)
{
	struct httpd_conn *hc;

	TAILQ_FOREACH(hc, &httpd_conns, entry)
		if (hc->conn == conn) {
			/* The busy ones come first: a request finds its soon. */
			if (hc != TAILQ_FIRST(&httpd_conns)) {
				TAILQ_REMOVE(&httpd_conns, hc, entry);
				TAILQ_INSERT_HEAD(&httpd_conns, hc, entry);
			}
			return hc;
		}
	hc = xcalloc(1, sizeof *hc);
	hc->conn = conn;
	hc->active_ms = mcpd_now_ms();
	TAILQ_INSERT_HEAD(&httpd_conns, hc, entry);
	httpd_nconns++;
	evhttp_connection_set_closecb(conn, httpd_conn_closed, hc);
	return hc;
}

void
httpd_conn_seen(struct evhttp_request *req)
{
	struct evhttp_connection *conn = evhttp_request_get_connection(req);

	if (conn != NULL)
		httpd_conn_of(conn)->active_ms = mcpd_now_ms();
}

void
httpd_conn_on_close(struct evhttp_connection *conn, httpd_closed_fn *fn,
    void *arg)
{
	struct httpd_conn *hc;

	if (conn == NULL)
		return;
	hc = httpd_conn_of(conn);
	hc->fn = fn;
	hc->arg = arg;
	hc->active_ms = mcpd_now_ms();
}

size_t
httpd_conns_close_quiet(uint64_t quiet_ms)
{
	struct httpd_conn *hc, *next;
	uint64_t now = mcpd_now_ms();
	size_t left = 0;

	for (hc = TAILQ_FIRST(&httpd_conns); hc != NULL; hc = next) {
		next = TAILQ_NEXT(hc, entry);
		if (hc->fn != NULL)
			continue; /* a stream: it ends with the exec */
		if (now - hc->active_ms >= quiet_ms)
			evhttp_connection_free(hc->conn); /* its close runs */
		else
			left++;
	}
	return left;
}

void
httpd_conns_forget(void)
{
	struct httpd_conn *hc;

	while ((hc = TAILQ_FIRST(&httpd_conns)) != NULL) {
		evhttp_connection_set_closecb(hc->conn, NULL, NULL);
		TAILQ_REMOVE(&httpd_conns, hc, entry);
		free(hc);
	}
	httpd_nconns = 0;
}
