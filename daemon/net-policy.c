/* SPDX-License-Identifier: ISC */
/* The remote URL policy: scheme, credentials, addresses, DNS pinning. */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/dns.h>
#include <event2/util.h>

#include "log.h"
#include "mcpd.h"
#include "netaddr.h"
#include "url.h"

#define NETPOLICY_MAX_ADDRS 32

struct netpolicy_query {
	struct url url;
	bool allow_local;
	netpolicy_fn *cb;
	void *arg;
	struct evdns_getaddrinfo_request *dns;
	struct event *deferred; /* answers given inside netpolicy_check */
	bool is_checking;	/* netpolicy_check has not returned yet */
	struct sockaddr_storage addrs[NETPOLICY_MAX_ADDRS];
	size_t naddrs;
	int err;
	char *why;
};

static struct evdns_base *netpolicy_dns;

int
netpolicy_init(const char *dns_server, char **cause)
{
	int flags = dns_server != NULL ? 0 : EVDNS_BASE_INITIALIZE_NAMESERVERS;

	netpolicy_dns = evdns_base_new(mcpd_base, flags);
	if (netpolicy_dns == NULL && flags != 0)
		netpolicy_dns = evdns_base_new(mcpd_base,
		    0); /* no resolv.conf */
	if (netpolicy_dns == NULL) {
		*cause = xstrdup("cannot start the DNS resolver");
		return -ENOMEM;
	}
	evdns_base_load_hosts(netpolicy_dns, NULL);
	if (dns_server != NULL &&
	    evdns_base_nameserver_ip_add(netpolicy_dns, dns_server) != 0) {
		xasprintf(cause, "bad DNS server address %s", dns_server);
		return -EINVAL;
	}
	return 0;
}

void
netpolicy_close(void)
{
	if (netpolicy_dns != NULL)
		evdns_base_free(netpolicy_dns, 0);
	netpolicy_dns = NULL;
}

static void
netpolicy_query_free(struct netpolicy_query *q)
{
	if (q->deferred != NULL)
		event_free(q->deferred);
	url_free(&q->url);
	free(q->why);
	free(q);
}

static void
netpolicy_set(struct netpolicy_query *q, int err, const char *fmt,
    const char *detail)
{
	q->err = err;
	free(q->why);
	xasprintf(&q->why, fmt, detail);
}

/* The rules that need no address: scheme, credentials, fragment. */
static int
netpolicy_check_url(struct netpolicy_query *q)
{
	const struct url *u = &q->url;

	if (u->has_userinfo)
		netpolicy_set(q, -EACCES,
		    "%scredentials in the URL (user:pass@) are refused; send them as a header",
		    "");
	else if (u->has_fragment)
		netpolicy_set(q, -EACCES, "%sURL fragments (#...) are refused",
		    "");
	else if (strcmp(u->scheme, "https") != 0 && !q->allow_local)
		netpolicy_set(q, -EACCES,
		    "%sonly https is allowed for remote endpoints (plain http needs --allow-local and a loopback address)",
		    "");
	return q->err;
}

static void
netpolicy_peer(struct netpolicy_query *q, struct http_peer *peer)
{
	const struct url *u = &q->url;
	bool is_default = u->port ==
	    (strcmp(u->scheme, "https") == 0 ? 443 : 80);
	char port[8] = "";

	memset(peer, 0, sizeof *peer);
	peer->addr = q->addrs[0];
	peer->addrlen = q->addrs[0].ss_family == AF_INET6 ?
	    sizeof(struct sockaddr_in6) :
	    sizeof(struct sockaddr_in);
	if (q->addrs[0].ss_family == AF_INET6)
		((struct sockaddr_in6 *)&peer->addr)->sin6_port =
		    htons(u->port);
	else
		((struct sockaddr_in *)&peer->addr)->sin_port = htons(u->port);
	peer->host = u->host;
	peer->is_tls = strcmp(u->scheme, "https") == 0;
	peer->is_ip_literal = u->is_ipv6_literal ||
	    netaddr_parse_literal(u->host, &(struct sockaddr_storage){ 0 }) ==
		1;
	if (!is_default)
		snprintf(port, sizeof port, ":%u", u->port);
	xasprintf(&peer->hostport, "%s%s%s%s", u->is_ipv6_literal ? "[" : "",
	    u->host, u->is_ipv6_literal ? "]" : "", port);
}

/* Judges every address; plain http must reach loopback only. */
static void
netpolicy_judge(struct netpolicy_query *q)
{
	const struct sockaddr *list[NETPOLICY_MAX_ADDRS];
	char *cause = NULL;

	for (size_t i = 0; i < q->naddrs; i++)
		list[i] = (const struct sockaddr *)&q->addrs[i];
	if (netaddr_judge(list, q->naddrs, q->allow_local, &cause) < 0) {
		netpolicy_set(q, -EACCES, "refused: %s",
		    cause != NULL ? cause : "address not allowed");
		free(cause);
		return;
	}
	if (strcmp(q->url.scheme, "http") == 0 &&
	    netaddr_classify(list[0]) != NETADDR_LOOPBACK)
		netpolicy_set(q, -EACCES,
		    "%splain http is allowed only to loopback addresses; use https",
		    "");
}

static void
netpolicy_finish(struct netpolicy_query *q)
{
	struct http_peer peer;

	if (q->err == 0)
		netpolicy_judge(q);
	if (q->err == 0) {
		netpolicy_peer(q, &peer);
		q->cb(q->arg, 0, NULL, &peer);
		free(peer.hostport);
	} else
		q->cb(q->arg, q->err, q->why, NULL);
	netpolicy_query_free(q);
}

static void
netpolicy_deferred(evutil_socket_t fd, short events, void *arg)
{
	(void)fd, (void)events;
	netpolicy_finish(arg);
}

/* The answer comes on a later loop turn, never inside netpolicy_check. */
static void
netpolicy_defer(struct netpolicy_query *q)
{
	if ((q->deferred = evtimer_new(mcpd_base, netpolicy_deferred, q)) ==
	    NULL)
		fatalx("cannot make an event");
	event_active(q->deferred, EV_TIMEOUT, 0);
}

static void
netpolicy_resolved(int result, struct evutil_addrinfo *res, void *arg)
{
	struct netpolicy_query *q = arg;

	q->dns = NULL;
	if (result == EVUTIL_EAI_CANCEL) {
		netpolicy_query_free(q);
		return;
	}
	if (result != 0)
		netpolicy_set(q, -EHOSTUNREACH, "cannot resolve the host: %s",
		    evutil_gai_strerror(result));
	for (struct evutil_addrinfo *ai = res;
	     ai != NULL && q->naddrs < NETPOLICY_MAX_ADDRS; ai = ai->ai_next)
		if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6)
			memcpy(&q->addrs[q->naddrs++], ai->ai_addr,
			    ai->ai_addrlen);
	if (res != NULL)
		evutil_freeaddrinfo(res);
	if (q->is_checking)
		netpolicy_defer(q); /* from the hosts file, say: not now */
	else
		netpolicy_finish(q);
}

struct netpolicy_query *
netpolicy_check(const char *text, bool allow_local, netpolicy_fn *cb, void *arg)
{
	struct netpolicy_query *q = xcalloc(1, sizeof *q);
	struct evutil_addrinfo hints = { .ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM };
	struct evdns_getaddrinfo_request *dns;
	char *cause = NULL;
	int r;

	q->allow_local = allow_local;
	q->cb = cb;
	q->arg = arg;
	if (xenomem(url_parse(text, &q->url, &cause)) < 0) {
		netpolicy_set(q, -EINVAL, "%s",
		    cause != NULL ? cause : "bad URL");
		free(cause);
	} else if (netpolicy_check_url(q) == 0 &&
	    (r = netaddr_parse_literal(q->url.host, &q->addrs[0])) != 0) {
		if (r < 0)
			netpolicy_set(q, -EINVAL, "%s is not a valid address",
			    q->url.host);
		else
			q->naddrs = 1;
	} else if (q->err == 0) {
		/* NULL: it answered at once, and netpolicy_defer ran. */
		q->is_checking = true;
		dns = evdns_getaddrinfo(netpolicy_dns, q->url.host, NULL,
		    &hints, netpolicy_resolved, q);
		q->is_checking = false;
		q->dns = dns;
		if (dns == NULL && q->deferred == NULL) {
			netpolicy_set(q, -EHOSTUNREACH,
			    "cannot resolve the host: %s",
			    "the resolver refused the query");
			netpolicy_defer(q);
		}
		return q;
	}
	/* Answer on a later loop turn, as a DNS answer would come. */
	netpolicy_defer(q);
	return q;
}

void
netpolicy_cancel(struct netpolicy_query *q)
{
	if (q == NULL)
		return;
	if (q->dns != NULL) {
		evdns_getaddrinfo_cancel(q->dns); /* frees q in the callback */
		return;
	}
	netpolicy_query_free(q);
}
