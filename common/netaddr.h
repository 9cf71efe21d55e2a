/* SPDX-License-Identifier: ISC */
/* Which IP addresses are public, and which literal hosts mean which address. */
#ifndef MCPD_NETADDR_H
#define MCPD_NETADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/*
 * What an address is, per the IANA IPv4 and IPv6 Special-Purpose Address
 * Registries; only NETADDR_PUBLIC may be connected to without an opt-in.
 */
enum netaddr_class {
	NETADDR_PUBLIC,
	NETADDR_LOOPBACK,
	NETADDR_PRIVATE,     /* RFC 1918, fc00::/7, 64:ff9b:1::/48 */
	NETADDR_LINK_LOCAL,  /* 169.254.0.0/16, fe80::/10 */
	NETADDR_CGNAT,	     /* 100.64.0.0/10 */
	NETADDR_MULTICAST,   /* 224.0.0.0/4, ff00::/8 */
	NETADDR_UNSPECIFIED, /* 0.0.0.0/8, :: */
	NETADDR_RESERVED,    /* any other address not globally reachable */
	NETADDR_CLASS_COUNT
};

/*
 * The class of an AF_INET or AF_INET6 address. An IPv6 form that embeds an
 * IPv4 address (mapped, NAT64, 6to4) takes the stricter of the two classes;
 * loopback through NAT64 or 6to4 is reserved, as it leaves this host. NULL
 * and other families are NETADDR_RESERVED, so that they are refused.
 */
enum netaddr_class netaddr_classify(const struct sockaddr *sa);
/* The short name of a class ("private", "carrier-grade NAT"); NULL if none. */
const char *netaddr_class_name(enum netaddr_class cls);
/* Whether an address is globally reachable: netaddr_classify() says public. */
bool netaddr_is_public(const struct sockaddr *sa);
/*
 * Reads host as a literal IP address in every form the resolver accepts
 * (inet_aton: "127.1", "0177.0.0.1", "0x7f.1", "2130706433"; inet_pton:
 * IPv6, bare or in brackets). Returns 1 and the address (port 0) in
 * *ret_addr, 0 when host is a name to resolve, or -EINVAL when it is neither.
 */
int netaddr_parse_literal(const char *host, struct sockaddr_storage *ret_addr);
/*
 * Judges every address of one answer: 0 when all are public, or all are
 * loopback and allow_loopback is set. Otherwise -EACCES (an empty or mixed
 * answer included) and a new *cause naming the first address refused and
 * its rule ("10.0.0.1 is private (RFC 1918)"); cause may be NULL.
 */
int netaddr_judge(const struct sockaddr *const *addrs, size_t n,
    bool allow_loopback, char **cause);

#endif
