/* SPDX-License-Identifier: ISC */
/* The HTTP front's listening socket: its binding, accepting, holding. */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "errors.h"
#include "httpd-int.h"
#include "log.h"
#include "mcpd.h"

#define HTTPD_CONNS_RETRY_MS 1000 /* out of descriptors: accept again after */

static struct evconnlistener *httpd_listener;
static struct event *httpd_retry;
static bool httpd_is_held;

int
httpd_conns_bind(const char *host, int port, char **cause)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int fd, one = 1, r;

	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		len = sizeof *sin;
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		len = sizeof *sin6;
	} else
		return errors_cause(cause, -EINVAL, "bad address %s", host);
	if ((fd = socket(ss.ss_family,
		 SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		return errors_cause(cause, -errno, "socket: %s",
		    strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    listen(fd, SOMAXCONN) < 0) {
		r = -errno;
		close(fd);
		return errors_cause(cause, r == -EADDRINUSE ? r : -EADDRINUSE,
		    "cannot listen on %s port %d: %s", host, port,
		    strerror(-r));
	}
	/*
	 * An answer may be written in pieces (a stream's events): with
	 * Nagle's algorithm each piece after the first waited for the
	 * client's delayed ACK, some 40 ms. Accepted sockets inherit it.
	 */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
		log_warn("HTTP front: TCP_NODELAY");
	return fd;
}

/* "address:port", "[address]:port" for IPv6. */
static void
httpd_conns_peer(const struct sockaddr *sa, char *buf, size_t size)
{
	char addr[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof addr);
		port = ntohs(sin->sin_port);
		snprintf(buf, size, "%s:%u", addr, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		inet_ntop(AF_INET6, &sin6->sin6_addr, addr, sizeof addr);
		port = ntohs(sin6->sin6_port);
		snprintf(buf, size, "[%s]:%u", addr, port);
	} else
		snprintf(buf, size, "?:0");
}

static void
httpd_conns_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	char peer[64];

	(void)l, (void)salen, (void)arg;
	httpd_conns_peer(sa, peer, sizeof peer);
	httpd_req_new(fd, peer);
}

static void
httpd_conns_retry(evutil_socket_t fd, short events, void *arg)
{
	(void)fd, (void)events, (void)arg;
	if (httpd_listener != NULL && !httpd_is_held)
		evconnlistener_enable(httpd_listener);
}

/* Out of descriptors (or memory): no busy loop; a second later, again. */
static void
httpd_conns_error(struct evconnlistener *l, void *arg)
{
	struct timeval tv = { HTTPD_CONNS_RETRY_MS / 1000,
		(HTTPD_CONNS_RETRY_MS % 1000) * 1000 };
	int err = EVUTIL_SOCKET_ERROR();

	(void)arg;
	log_warnx("HTTP front: cannot accept a connection: %s", strerror(err));
	if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM)
		return;
	evconnlistener_disable(l);
	evtimer_add(httpd_retry, &tv);
}

void
httpd_conns_listen(int fd)
{
	httpd_listener = evconnlistener_new(mcpd_base, httpd_conns_accept, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (httpd_listener == NULL ||
	    (httpd_retry = evtimer_new(mcpd_base, httpd_conns_retry, NULL)) ==
		NULL)
		fatalx("HTTP front: cannot watch its listening socket");
	evconnlistener_set_error_cb(httpd_listener, httpd_conns_error);
	httpd_is_held = false;
}

int
httpd_conns_fd(void)
{
	return httpd_listener != NULL ? evconnlistener_get_fd(httpd_listener) :
					-1;
}

void
httpd_conns_hold(bool hold)
{
	if (httpd_listener == NULL)
		return;
	httpd_is_held = hold;
	if (hold)
		evconnlistener_disable(httpd_listener);
	else
		evconnlistener_enable(httpd_listener);
}

void
httpd_conns_close(void)
{
	if (httpd_listener != NULL)
		evconnlistener_free(httpd_listener);
	if (httpd_retry != NULL)
		event_free(httpd_retry);
	httpd_listener = NULL;
	httpd_retry = NULL;
}
