/* SPDX-License-Identifier: ISC */
/* A small HTTP/1.1 client: pinned addresses, TLS, streamed bodies, reuse. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "log.h"
#include "mcpd.h"
#include "net-tls.h"

/*
 * An idle kept-alive connection is dropped before the server's own idle
 * timeout (Node's default is 5 s) can close it under a new request.
 */
#define HTTP_IDLE_MS 4000

struct http_conn {
	struct http_client *client;
	struct bufferevent *bev;
	struct http_exchange *ex; /* NULL when idle */
	struct event *idle;	  /* drops it when unused for HTTP_IDLE_MS */
	bool is_connected;
	LIST_ENTRY(http_conn) entry;
};

struct http_exchange {
	struct http_conn *conn;
	const struct http_cbs *cbs;
	void *arg;
	struct http_parse parse;
};

struct http_client {
	struct http_peer peer;
	LIST_HEAD(, http_conn) conns;
};

static const struct tls_api *http_ssl; /* OpenSSL, once loaded */
static SSL_CTX *http_tls;
static const char *http_ca_file; /* mcpd_opts owns it */
static const struct timeval http_idle_tv = { HTTP_IDLE_MS / 1000,
	(HTTP_IDLE_MS % 1000) * 1000 };

/*
 * Loading the system's CA store costs tens of milliseconds: it waits for
 * the first https connection. A CA file given on the command line is only
 * checked for readability here, so that a typo fails at start.
 */
int
http_tls_init(const char *ca_file, char **cause)
{
	if (ca_file != NULL && access(ca_file, R_OK) < 0) {
		int err = errno;

		xasprintf(cause, "cannot read CA file %s: %s", ca_file,
		    strerror(err));
		return -err;
	}
	http_ca_file = ca_file;
	return 0;
}

/* The TLS context, made on first use; NULL (logged) when it cannot be. */
static SSL_CTX *
http_tls_get(void)
{
	char text[256], *cause = NULL;

	if (http_tls != NULL)
		return http_tls;
	if (http_ssl == NULL && (http_ssl = tls_get(&cause)) == NULL) {
		log_warnx("cannot set up TLS: %s", cause);
		free(cause);
		return NULL;
	}
	if ((http_tls = http_ssl->SSL_CTX_new(http_ssl->TLS_client_method())) ==
	    NULL)
		goto fail;
	http_ssl->SSL_CTX_ctrl(http_tls, SSL_CTRL_SET_MIN_PROTO_VERSION,
	    TLS1_2_VERSION, NULL);
	http_ssl->SSL_CTX_set_verify(http_tls, SSL_VERIFY_PEER, NULL);
	if (http_ca_file != NULL ?
		http_ssl->SSL_CTX_load_verify_locations(http_tls, http_ca_file,
		    NULL) != 1 :
		http_ssl->SSL_CTX_set_default_verify_paths(http_tls) != 1)
		goto fail;
	return http_tls;
fail:
	http_ssl->ERR_error_string_n(http_ssl->ERR_get_error(), text,
	    sizeof text);
	log_warnx("cannot set up TLS%s%s: %s",
	    http_ca_file != NULL ? " with CA file " : "",
	    http_ca_file != NULL ? http_ca_file : "", text);
	http_ssl->SSL_CTX_free(http_tls);
	http_tls = NULL;
	return NULL;
}

void
http_tls_close(void)
{
	if (http_tls != NULL)
		http_ssl->SSL_CTX_free(http_tls);
	http_tls = NULL;
}

static void http_conn_free(struct http_conn *);

/* Ends an exchange: once, and never after a cancel. */
static void
http_exchange_end(struct http_exchange *ex, int err, const char *why)
{
	struct http_conn *conn = ex->conn;
	const struct http_cbs *cbs = ex->cbs;
	void *arg = ex->arg;
	bool is_reusable = err == 0 && ex->parse.is_keep_alive;

	if (conn != NULL)
		conn->ex = NULL;
	http_parse_clear(&ex->parse);
	free(ex);
	if (conn != NULL && !is_reusable)
		http_conn_free(conn);
	else if (conn != NULL)
		evtimer_add(conn->idle, &http_idle_tv);
	if (cbs != NULL)
		cbs->done(arg, err, why);
}

void
http_exchange_cancel(struct http_exchange *ex)
{
	if (ex == NULL)
		return;
	ex->cbs = NULL;
	/* The connection cannot be reused mid-response: close it. */
	if (ex->parse.state != HTTP_PARSE_DONE && ex->conn != NULL) {
		struct http_conn *conn = ex->conn;

		ex->conn = NULL;
		conn->ex = NULL;
		http_conn_free(conn);
	}
	http_parse_clear(&ex->parse);
	free(ex);
}

static const char *
http_error_text(int r)
{
	switch (r) {
	case -EMSGSIZE:
		return "the server sent headers longer than 64 KiB";
	case -ECANCELED:
		return "the response was refused";
	default:
		return "the server sent a malformed HTTP response";
	}
}

static void
http_conn_read(struct bufferevent *bev, void *arg)
{
	struct http_conn *conn = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct http_exchange *ex;
	int r;

	while ((ex = conn->ex) != NULL && ex->parse.state != HTTP_PARSE_DONE) {
		if ((r = http_parse_step(&ex->parse, in, ex->cbs, ex->arg)) ==
		    0)
			return;
		if (r < 0) {
			http_exchange_end(ex, r, http_error_text(r));
			return;
		}
	}
	if (ex != NULL)
		http_exchange_end(ex, 0, NULL);
	else if (evbuffer_get_length(in) > 0)
		http_conn_free(conn); /* bytes nobody asked for */
}

static char *
http_tls_failure(struct bufferevent *bev)
{
	SSL *ssl = http_ssl->bufferevent_openssl_get_ssl(bev);
	unsigned long e = http_ssl->bufferevent_get_openssl_error(bev);
	char *why = NULL;
	long v;

	if (ssl != NULL &&
	    (v = http_ssl->SSL_get_verify_result(ssl)) != X509_V_OK) {
		xasprintf(&why, "TLS certificate rejected: %s",
		    http_ssl->X509_verify_cert_error_string(v));
	} else if (e != 0) {
		char text[256];

		http_ssl->ERR_error_string_n(e, text, sizeof text);
		xasprintf(&why, "TLS failed: %s", text);
	}
	return why;
}

/* Why the TCP connection itself failed, if it did (refused, ...). */
static char *
http_connect_failure(struct bufferevent *bev, int sockerr)
{
	int err = 0;
	socklen_t len = sizeof err;

	if (getsockopt(bufferevent_getfd(bev), SOL_SOCKET, SO_ERROR, &err,
		&len) < 0 ||
	    err == 0)
		err = sockerr;
	switch (err) {
	case ECONNREFUSED:
	case ECONNRESET:
	case ETIMEDOUT:
	case EHOSTUNREACH:
	case ENETUNREACH:
		return xstrdup(strerror(err));
	default:
		return NULL;
	}
}

static void
http_conn_event(struct bufferevent *bev, short what, void *arg)
{
	struct http_conn *conn = arg;
	struct http_exchange *ex = conn->ex;
	char why[512], *tls = NULL;
	int sockerr = EVUTIL_SOCKET_ERROR();

	if (what & BEV_EVENT_CONNECTED) {
		conn->is_connected = true;
		return;
	}
	if (ex == NULL) {
		http_conn_free(conn);
		return;
	}
	if ((what & BEV_EVENT_EOF) &&
	    ex->parse.state == HTTP_PARSE_BODY_CLOSE) {
		http_exchange_end(ex, 0, NULL);
		return;
	}
	if (!conn->is_connected)
		tls = http_connect_failure(bev, sockerr);
	if (tls == NULL && conn->client->peer.is_tls)
		tls = http_tls_failure(bev);
	snprintf(why, sizeof why, "%s",
	    tls != NULL ?
		tls :
		(what & BEV_EVENT_EOF) ?
		"the server closed the connection before the response was complete" :
		(what & BEV_EVENT_TIMEOUT) ? "the connection timed out" :
					     strerror(EVUTIL_SOCKET_ERROR()));
	free(tls);
	/* Not connected: the request cannot have reached the server. */
	http_exchange_end(ex, conn->is_connected ? -ECONNRESET : -ECONNREFUSED,
	    why);
}

static void
http_conn_free(struct http_conn *conn)
{
	if (conn == NULL)
		return;
	LIST_REMOVE(conn, entry);
	if (conn->ex != NULL)
		conn->ex->conn = NULL;
	event_free(conn->idle);
	bufferevent_free(conn->bev);
	free(conn);
}

static void
http_conn_idle(evutil_socket_t fd, short events, void *arg)
{
	(void)fd, (void)events;
	http_conn_free(arg);
}

/*
 * The address the peer was pinned to, as OpenSSL reads one: the URL may
 * have written it in a form inet_aton takes and OpenSSL does not ("127.1",
 * "0x7f.0.0.1"), and a name it cannot set is no check at all.
 */
static const char *
http_ip_text(const struct http_peer *peer, char *buf, size_t size)
{
	const struct sockaddr_in *sin = (const void *)&peer->addr;
	const struct sockaddr_in6 *sin6 = (const void *)&peer->addr;

	if (peer->addr.ss_family == AF_INET6)
		return inet_ntop(AF_INET6, &sin6->sin6_addr, buf, size);
	return inet_ntop(AF_INET, &sin->sin_addr, buf, size);
}

static struct bufferevent *
http_bev_new(const struct http_peer *peer)
{
	char ip[INET6_ADDRSTRLEN];
	const char *name = peer->host;
	struct bufferevent *bev;
	SSL *ssl;
	int is_named = 0;

	if (!peer->is_tls)
		return bufferevent_socket_new(mcpd_base, -1,
		    BEV_OPT_CLOSE_ON_FREE);
	if (http_tls_get() == NULL ||
	    (ssl = http_ssl->SSL_new(http_tls)) == NULL)
		return NULL;
	/* RFC 6066: SNI carries host names, never addresses. */
	if (!peer->is_ip_literal)
		http_ssl->SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME,
		    TLSEXT_NAMETYPE_host_name, (void *)(uintptr_t)peer->host);
	if (!peer->is_ip_literal)
		is_named = http_ssl->SSL_set1_host(ssl, name);
	else if ((name = http_ip_text(peer, ip, sizeof ip)) != NULL)
		is_named = http_ssl->X509_VERIFY_PARAM_set1_ip_asc(
		    http_ssl->SSL_get0_param(ssl), name);
	/* The bufferevent owns ssl (and frees it) from here on. */
	bev = http_ssl->bufferevent_openssl_socket_new(mcpd_base, -1, ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE);
	/* Without the name to check, any valid certificate would pass. */
	if (is_named != 1 && bev != NULL) {
		log_warnx(
		    "TLS: cannot set the name %s to check the certificate against; not connecting",
		    name != NULL ? name : peer->host);
		bufferevent_free(bev);
		return NULL;
	}
	return bev;
}

static struct http_conn *
http_conn_get(struct http_client *c)
{
	struct http_conn *conn;

	LIST_FOREACH(conn, &c->conns, entry)
		if (conn->ex == NULL) {
			evtimer_del(conn->idle);
			return conn;
		}
	conn = xcalloc(1, sizeof *conn);
	conn->client = c;
	if ((conn->bev = http_bev_new(&c->peer)) == NULL) {
		free(conn);
		return NULL;
	}
	conn->idle = evtimer_new(mcpd_base, http_conn_idle, conn);
	bufferevent_setcb(conn->bev, http_conn_read, NULL, http_conn_event,
	    conn);
	bufferevent_enable(conn->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(conn->bev,
		(struct sockaddr *)&c->peer.addr, c->peer.addrlen) < 0) {
		event_free(conn->idle);
		bufferevent_free(conn->bev);
		free(conn);
		return NULL;
	}
	/* libevent made the socket without it: no child, no exec keeps it. */
	evutil_make_socket_closeonexec(bufferevent_getfd(conn->bev));
	LIST_INSERT_HEAD(&c->conns, conn, entry);
	return conn;
}

struct http_exchange *
http_send(struct http_client *c, const struct http_message *m,
    const struct http_cbs *cbs, void *arg)
{
	struct http_exchange *ex = xcalloc(1, sizeof *ex);
	struct evbuffer *out;

	if ((ex->conn = http_conn_get(c)) == NULL) {
		free(ex);
		return NULL;
	}
	ex->cbs = cbs;
	ex->arg = arg;
	http_parse_init(&ex->parse, strcmp(m->method, "HEAD") == 0);
	ex->conn->ex = ex;
	out = bufferevent_get_output(ex->conn->bev);
	evbuffer_add_printf(out, "%s %s HTTP/1.1\r\nHost: %s\r\n", m->method,
	    m->path, c->peer.hostport);
	for (size_t i = 0; i < m->nheaders; i++)
		evbuffer_add_printf(out, "%s: %s\r\n", m->fields[i].name,
		    m->fields[i].value);
	if (m->body != NULL)
		evbuffer_add_printf(out, "Content-Length: %zu\r\n",
		    m->body_len);
	evbuffer_add(out, "\r\n", 2);
	if (m->body != NULL)
		evbuffer_add(out, m->body, m->body_len);
	return ex;
}

struct http_client *
http_client_new(const struct http_peer *peer)
{
	struct http_client *c = xcalloc(1, sizeof *c);

	c->peer = *peer;
	c->peer.host = xstrdup(peer->host);
	c->peer.hostport = xstrdup(peer->hostport);
	LIST_INIT(&c->conns);
	return c;
}

void
http_client_free(struct http_client *c)
{
	struct http_conn *conn;

	if (c == NULL)
		return;
	/* Its owner has cancelled every exchange before this. */
	while ((conn = LIST_FIRST(&c->conns)) != NULL)
		http_conn_free(conn);
	free(c->peer.host);
	free(c->peer.hostport);
	free(c);
}
