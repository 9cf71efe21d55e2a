/* SPDX-License-Identifier: ISC */
/* Who may use the HTTP front: loopback Host and Origin, a bearer token. */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errors.h"
#include "httphead.h"
#include "httpd.h"
#include "mcpd.h"

/* A loopback name or address, with or without a port. */
static bool
httpd_access_is_loopback(const char *host)
{
	static const char *const names[] = { "localhost", "127.0.0.1", "[::1]",
		NULL };
	size_t len;

	if (host == NULL)
		return false;
	for (size_t i = 0; names[i] != NULL; i++) {
		len = strlen(names[i]);
		if (strncmp(host, names[i], len) == 0 &&
		    (host[len] == '\0' || host[len] == ':'))
			return true;
	}
	return false;
}

/* Absent, or http(s) to a loopback host: DNS rebinding stops here. */
static bool
httpd_access_is_origin_ok(const char *origin)
{
	if (origin == NULL)
		return true;
	if (strncmp(origin, "http://", 7) == 0)
		return httpd_access_is_loopback(origin + 7);
	if (strncmp(origin, "https://", 8) == 0)
		return httpd_access_is_loopback(origin + 8);
	return false;
}

const char *
httpd_access_agent(const struct httphead *h, const char **ret_profile,
    int *ret_status, const char **ret_why)
{
	const char *auth = httphead_field(h, "Authorization"), *agent;

	*ret_status = 403;
	if (!httpd_access_is_loopback(httphead_field(h, "Host"))) {
		*ret_why = "the Host header must name a loopback address";
		return NULL;
	}
	if (!httpd_access_is_origin_ok(httphead_field(h, "Origin"))) {
		*ret_why =
		    "requests from a web page of another origin are refused";
		return NULL;
	}
	if (auth == NULL || strncasecmp(auth, "Bearer ", 7) != 0 ||
	    (agent = tokens_agent_of(auth + 7, ret_profile)) == NULL) {
		*ret_status = 401;
		*ret_why = "a bearer token of mcpd is needed: mcpctl token";
		return NULL;
	}
	return agent;
}

/* addr "127.0.0.1:PORT" or "[::1]:PORT": a loopback address, split. */
int
httpd_access_addr(const char *addr, char *host, size_t size, int *ret_port,
    char **cause)
{
	const char *colon = strrchr(addr, ':');
	struct in6_addr a6;
	struct in_addr a4;
	char *end;
	long port;

	if (colon == NULL || colon == addr || (size_t)(colon - addr) >= size)
		return errors_cause(cause, -EINVAL,
		    "give ADDRESS:PORT, as 127.0.0.1:8750");
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || port < 0 || port > 65535)
		return errors_cause(cause, -EINVAL, "bad port %s", colon + 1);
	if (addr[0] == '[' && colon[-1] == ']')
		snprintf(host, size, "%.*s", (int)(colon - addr - 2), addr + 1);
	else
		snprintf(host, size, "%.*s", (int)(colon - addr), addr);
	if (inet_pton(AF_INET, host, &a4) == 1 &&
	    (ntohl(a4.s_addr) >> 24) == 127) {
		*ret_port = (int)port;
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6)) {
		*ret_port = (int)port;
		return 0;
	}
	return errors_cause(cause, -EACCES,
	    "%s is not a loopback address: the HTTP front listens on 127.0.0.0/8 or ::1 only, so that nothing off this machine reaches it",
	    host);
}
