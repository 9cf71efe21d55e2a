/* SPDX-License-Identifier: ISC */
/* Address classes for the remote URL policy, from the IANA registries. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "netaddr.h"

#define NETADDR_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* One row: addresses under prefix/length are of class cls. */
struct netaddr_rule {
	int family;
	const char *prefix;
	unsigned int length;
	enum netaddr_class cls;
	const char *what; /* the rule, for refusal messages */
};

/*
 * The longest matching prefix decides. IPv4 rows are the rows of the IANA
 * IPv4 Special-Purpose Address Registry that are not globally reachable,
 * and 224.0.0.0/4 from the IPv4 Multicast Address Space registry; the rest
 * (including AS112 192.31.196.0/24 and 192.175.48.0/24, AMT 192.52.193.0/24,
 * "globally reachable: true") is public. IPv6 rows are the IANA IPv6
 * Special-Purpose Address Registry, over the IPv6 Address Space registry
 * where only 2000::/3 is global unicast and fc00::/7, fe80::/10, ff00::/8
 * have their own class. Where this is stricter than the registries:
 * - 192.0.0.9, 192.0.0.10, 2001:1::1, 2001:1::2 and 2001:1::3 (PCP, TURN
 *   and DNS-SD SRP anycast) are "globally reachable" but answered by the
 *   nearest instance, which is often the local network's gateway: reserved;
 * - 192.88.99.0/24, the deprecated 6to4 relay anycast (RFC 7526): reserved;
 * - ::/96, deprecated IPv4-compatible addresses (RFC 4291): reserved,
 *   whatever they embed (no stack routes them as IPv4 any more);
 * - 2001::/32, Teredo (RFC 4380, "N/A"): reserved, its client address is
 *   obfuscated and its server address is not the peer.
 * The forms that embed IPv4 addresses are in netaddr_embeddings below.
 */
static const struct netaddr_rule netaddr_rules[] = {
	{ AF_INET, "0.0.0.0", 0, NETADDR_PUBLIC, "globally reachable" },
	{ AF_INET, "0.0.0.0", 8, NETADDR_UNSPECIFIED,
	    "0.0.0.0/8, \"this network\"" },
	{ AF_INET, "10.0.0.0", 8, NETADDR_PRIVATE, "RFC 1918" },
	{ AF_INET, "100.64.0.0", 10, NETADDR_CGNAT, "100.64.0.0/10, RFC 6598" },
	{ AF_INET, "127.0.0.0", 8, NETADDR_LOOPBACK, "127.0.0.0/8" },
	{ AF_INET, "169.254.0.0", 16, NETADDR_LINK_LOCAL,
	    "169.254.0.0/16, RFC 3927" },
	{ AF_INET, "169.254.169.254", 32, NETADDR_LINK_LOCAL,
	    "169.254.169.254, a cloud metadata service" },
	{ AF_INET, "172.16.0.0", 12, NETADDR_PRIVATE, "RFC 1918" },
	{ AF_INET, "192.0.0.0", 24, NETADDR_RESERVED,
	    "192.0.0.0/24, IETF protocol assignments, RFC 6890" },
	{ AF_INET, "192.0.2.0", 24, NETADDR_RESERVED,
	    "192.0.2.0/24, documentation, RFC 5737" },
	{ AF_INET, "192.88.99.0", 24, NETADDR_RESERVED,
	    "192.88.99.0/24, deprecated 6to4 relay anycast, RFC 7526" },
	{ AF_INET, "192.168.0.0", 16, NETADDR_PRIVATE, "RFC 1918" },
	{ AF_INET, "198.18.0.0", 15, NETADDR_RESERVED,
	    "198.18.0.0/15, benchmarking, RFC 2544" },
	{ AF_INET, "198.51.100.0", 24, NETADDR_RESERVED,
	    "198.51.100.0/24, documentation, RFC 5737" },
	{ AF_INET, "203.0.113.0", 24, NETADDR_RESERVED,
	    "203.0.113.0/24, documentation, RFC 5737" },
	{ AF_INET, "224.0.0.0", 4, NETADDR_MULTICAST, "224.0.0.0/4" },
	{ AF_INET, "240.0.0.0", 4, NETADDR_RESERVED, "240.0.0.0/4, RFC 1112" },
	{ AF_INET, "255.255.255.255", 32, NETADDR_RESERVED,
	    "255.255.255.255, limited broadcast" },

	{ AF_INET6, "::", 0, NETADDR_RESERVED,
	    "outside the global unicast 2000::/3" },
	{ AF_INET6, "::", 128, NETADDR_UNSPECIFIED, "::" },
	{ AF_INET6, "::1", 128, NETADDR_LOOPBACK, "::1" },
	{ AF_INET6, "::", 96, NETADDR_RESERVED,
	    "::/96, deprecated IPv4-compatible" },
	{ AF_INET6, "64:ff9b:1::", 48, NETADDR_PRIVATE,
	    "64:ff9b:1::/48, local-use NAT64, RFC 8215" },
	{ AF_INET6, "100::", 64, NETADDR_RESERVED,
	    "100::/64, discard-only, RFC 6666" },
	{ AF_INET6, "2000::", 3, NETADDR_PUBLIC, "global unicast" },
	{ AF_INET6, "2001::", 23, NETADDR_RESERVED,
	    "2001::/23, IETF protocol assignments, RFC 2928" },
	{ AF_INET6, "2001::", 32, NETADDR_RESERVED,
	    "2001::/32, Teredo, RFC 4380" },
	{ AF_INET6, "2001:3::", 32, NETADDR_PUBLIC,
	    "2001:3::/32, AMT, RFC 7450" },
	{ AF_INET6, "2001:4:112::", 48, NETADDR_PUBLIC,
	    "2001:4:112::/48, AS112-v6, RFC 7535" },
	{ AF_INET6, "2001:20::", 28, NETADDR_PUBLIC,
	    "2001:20::/28, ORCHIDv2, RFC 7343" },
	{ AF_INET6, "2001:30::", 28, NETADDR_PUBLIC,
	    "2001:30::/28, DETs, RFC 9374" },
	{ AF_INET6, "2001:db8::", 32, NETADDR_RESERVED,
	    "2001:db8::/32, documentation, RFC 3849" },
	{ AF_INET6, "3fff::", 20, NETADDR_RESERVED,
	    "3fff::/20, documentation, RFC 9637" },
	{ AF_INET6, "5f00::", 16, NETADDR_RESERVED,
	    "5f00::/16, SRv6 SIDs, RFC 9602" },
	{ AF_INET6, "fc00::", 7, NETADDR_PRIVATE,
	    "fc00::/7, unique-local, RFC 4193" },
	{ AF_INET6, "fe80::", 10, NETADDR_LINK_LOCAL, "fe80::/10" },
	{ AF_INET6, "fec0::", 10, NETADDR_RESERVED,
	    "fec0::/10, deprecated site-local, RFC 3879" },
	{ AF_INET6, "ff00::", 8, NETADDR_MULTICAST, "ff00::/8" },
};

/* An IPv6 form that carries an IPv4 address, and is classified by it. */
struct netaddr_embedding {
	const char *prefix;
	unsigned int length;
	unsigned int v4_at; /* byte offset of the IPv4 address */
	bool is_relayed;    /* by a translator or a tunnel, off this host */
	const char *what;
};

/*
 * The forms themselves are public, so the embedded address's class is the
 * stricter one and wins. ::ffff:0:0/96: the registry's "false" is for the
 * wire; on a socket it is the IPv4 address, spoken to from this host.
 * 64:ff9b::/96 (RFC 6052, "true") and 2002::/16 (RFC 3056, "N/A") reach
 * the IPv4 address through a translator or a tunnel.
 */
static const struct netaddr_embedding netaddr_embeddings[] = {
	{ "::ffff:0:0", 96, 12, false, "::ffff:0:0/96, IPv4-mapped" },
	{ "64:ff9b::", 96, 12, true, "64:ff9b::/96, NAT64, RFC 6052" },
	{ "2002::", 16, 2, true, "2002::/16, 6to4, RFC 3056" },
};

/* Loopback relayed off this host is not this host's loopback. */
static const struct netaddr_rule netaddr_relayed_loopback = { AF_INET,
	"127.0.0.0", 8, NETADDR_RESERVED, "loopback relayed off this host" };

/* Neither AF_INET nor AF_INET6: refused. */
static const struct netaddr_rule netaddr_not_ip = { AF_UNSPEC, "", 0,
	NETADDR_RESERVED, "not an IPv4 or IPv6 address" };

static const char *const netaddr_class_names[NETADDR_CLASS_COUNT] = {
	[NETADDR_PUBLIC] = "public",
	[NETADDR_LOOPBACK] = "loopback",
	[NETADDR_PRIVATE] = "private",
	[NETADDR_LINK_LOCAL] = "link-local",
	[NETADDR_CGNAT] = "carrier-grade NAT",
	[NETADDR_MULTICAST] = "multicast",
	[NETADDR_UNSPECIFIED] = "unspecified",
	[NETADDR_RESERVED] = "reserved",
};

/* What decided an address's class. */
struct netaddr_verdict {
	enum netaddr_class cls;
	const struct netaddr_rule *rule;
	const struct netaddr_embedding *embedding; /* the form, or NULL */
	uint8_t v4[4];				   /* the address it embeds */
};

const char *
netaddr_class_name(enum netaddr_class cls)
{
	if ((unsigned int)cls >= NETADDR_CLASS_COUNT)
		return NULL;
	return netaddr_class_names[cls];
}

/* Whether addr is under prefix/length; a bad row is a broken invariant. */
static bool
netaddr_in_prefix(int family, const uint8_t *addr, const char *prefix,
    unsigned int length)
{
	unsigned int whole = length / 8, rest = length % 8;
	uint8_t bytes[16], mask;

	if (inet_pton(family, prefix, bytes) != 1)
		fatalx("netaddr: bad prefix %s/%u", prefix, length);
	if (memcmp(addr, bytes, whole) != 0)
		return false;
	if (rest == 0)
		return true;
	mask = (uint8_t)(0xff << (8 - rest));
	return ((addr[whole] ^ bytes[whole]) & mask) == 0;
}

/* The longest row of family that holds addr; a /0 row holds all. */
static const struct netaddr_rule *
netaddr_rule_find(int family, const uint8_t *addr)
{
	const struct netaddr_rule *best = NULL;

	for (size_t i = 0; i < NETADDR_COUNT(netaddr_rules); i++) {
		const struct netaddr_rule *r = &netaddr_rules[i];

		if (r->family == family &&
		    netaddr_in_prefix(family, addr, r->prefix, r->length) &&
		    (best == NULL || r->length > best->length))
			best = r;
	}
	return best != NULL ? best : &netaddr_not_ip;
}

static const struct netaddr_embedding *
netaddr_embedding_find(const uint8_t *addr)
{
	for (size_t i = 0; i < NETADDR_COUNT(netaddr_embeddings); i++) {
		const struct netaddr_embedding *e = &netaddr_embeddings[i];

		if (netaddr_in_prefix(AF_INET6, addr, e->prefix, e->length))
			return e;
	}
	return NULL;
}

/* The bytes of an IPv4 or IPv6 address, with its family; NULL otherwise. */
static const uint8_t *
netaddr_bytes(const struct sockaddr *sa, int *ret_family)
{
	if (sa == NULL)
		return NULL;
	*ret_family = sa->sa_family;
	if (sa->sa_family == AF_INET)
		return (const uint8_t *)&((const struct sockaddr_in *)sa)
		    ->sin_addr;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	return NULL;
}

static void
netaddr_decide(const struct sockaddr *sa, struct netaddr_verdict *v)
{
	const struct netaddr_embedding *e = NULL;
	const uint8_t *bytes;
	int family = AF_UNSPEC;

	memset(v, 0, sizeof *v);
	bytes = netaddr_bytes(sa, &family);
	if (bytes != NULL && family == AF_INET6)
		e = netaddr_embedding_find(bytes);
	if (e != NULL) {
		v->embedding = e;
		memcpy(v->v4, bytes + e->v4_at, sizeof v->v4);
		v->rule = netaddr_rule_find(AF_INET, v->v4);
		if (v->rule->cls == NETADDR_LOOPBACK && e->is_relayed)
			v->rule = &netaddr_relayed_loopback;
	} else
		v->rule = bytes != NULL ? netaddr_rule_find(family, bytes) :
					  &netaddr_not_ip;
	v->cls = v->rule->cls;
}

enum netaddr_class
netaddr_classify(const struct sockaddr *sa)
{
	struct netaddr_verdict v;

	netaddr_decide(sa, &v);
	return v.cls;
}

bool
netaddr_is_public(const struct sockaddr *sa)
{
	return netaddr_classify(sa) == NETADDR_PUBLIC;
}

static void
netaddr_format(const struct sockaddr *sa, char *buf, size_t size)
{
	const uint8_t *bytes;
	int family = AF_UNSPEC;

	bytes = netaddr_bytes(sa, &family);
	if (bytes != NULL && inet_ntop(family, bytes, buf, size) != NULL)
		return;
	if (sa == NULL)
		snprintf(buf, size, "a missing address");
	else
		snprintf(buf, size, "an address of family %d", family);
}

/* "10.0.0.1 is private (RFC 1918)", naming the embedding form if it decided. */
static void
netaddr_describe(const struct sockaddr *sa, char *buf, size_t size)
{
	char addr[INET6_ADDRSTRLEN + 32], v4[INET_ADDRSTRLEN];
	struct netaddr_verdict v;
	const char *name;

	netaddr_decide(sa, &v);
	netaddr_format(sa, addr, sizeof addr);
	name = netaddr_class_name(v.cls);
	if (v.cls == NETADDR_PUBLIC)
		snprintf(buf, size, "%s is %s", addr, name);
	else if (v.embedding == NULL)
		snprintf(buf, size, "%s is %s (%s)", addr, name, v.rule->what);
	else
		snprintf(buf, size, "%s is %s (%s): it embeds %s (%s)", addr,
		    name, v.rule->what, inet_ntop(AF_INET, v.v4, v4, sizeof v4),
		    v.embedding->what);
}

static int netaddr_refuse(char **, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* Returns -EACCES, and the reason in a new *cause if cause is not NULL. */
static int
netaddr_refuse(char **cause, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (cause == NULL)
		return -EACCES;
	va_start(ap, fmt);
	n = vasprintf(cause, fmt, ap);
	va_end(ap);
	if (n < 0) {
		*cause = NULL;
		return -ENOMEM;
	}
	return -EACCES;
}

int
netaddr_judge(const struct sockaddr *const *addrs, size_t n,
    bool allow_loopback, char **cause)
{
	size_t public = n, other = n, refused = n; /* n: none yet */
	char what[512], also[512];

	if (n == 0)
		return netaddr_refuse(cause, "the answer holds no address");
	for (size_t i = 0; i < n; i++) {
		enum netaddr_class cls = netaddr_classify(addrs[i]);

		if (cls == NETADDR_PUBLIC) {
			public = public < n ? public : i;
			continue;
		}
		other = other < n ? other : i;
		if (refused == n &&
		    !(allow_loopback && cls == NETADDR_LOOPBACK))
			refused = i;
	}
	if (public < n && other < n) {
		netaddr_describe(addrs[other], what, sizeof what);
		netaddr_describe(addrs[public], also, sizeof also);
		return netaddr_refuse(cause,
		    "the answer mixes public and non-public addresses: %s, %s",
		    what, also);
	}
	if (refused == n)
		return 0;
	netaddr_describe(addrs[refused], what, sizeof what);
	return netaddr_refuse(cause, "%s", what);
}

static int
netaddr_literal_v6(const char *text, size_t len,
    struct sockaddr_storage *ret_addr)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	char buf[INET6_ADDRSTRLEN];

	if (len >= sizeof buf)
		return -EINVAL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, &sin6.sin6_addr) != 1)
		return -EINVAL;
	memset(ret_addr, 0, sizeof *ret_addr);
	memcpy(ret_addr, &sin6, sizeof sin6);
	return 1;
}

/* len bytes of text, all numbers-and-dots forms that inet_aton reads. */
static int
netaddr_literal_v4(const char *text, size_t len,
    struct sockaddr_storage *ret_addr)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char buf[256];

	if (len >= sizeof buf)
		return -EINVAL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (inet_aton(buf, &sin.sin_addr) == 0)
		return -EINVAL;
	memset(ret_addr, 0, sizeof *ret_addr);
	memcpy(ret_addr, &sin, sizeof sin);
	return 1;
}

static bool
netaddr_has_space(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return true;
	return false;
}

/*
 * IPv4: inet_aton, as it reads the forms that getaddrinfo(AI_NUMERICHOST)
 * reads (glibc uses a variant that also refuses a trailing blank, as this
 * does). No top-level domain starts with a digit, so a host whose last
 * label does is meant as a number: what inet_aton refuses there
 * ("1.2.3.4.5", "256.1.1.1", "0x1g") is invalid, not a name to resolve.
 * One trailing dot is dropped, as resolvers and URL parsers drop it.
 * IPv6: inet_pton, bare or in brackets; a zone ("fe80::1%eth0") is
 * refused, as what it may follow (link-local) is refused anyway.
 */
int
netaddr_parse_literal(const char *host, struct sockaddr_storage *ret_addr)
{
	size_t len, end;
	const char *label;

	if (host == NULL || host[0] == '\0' || netaddr_has_space(host))
		return -EINVAL;
	len = strlen(host);
	if (host[0] == '[')
		return host[len - 1] == ']' ?
		    netaddr_literal_v6(host + 1, len - 2, ret_addr) :
		    -EINVAL;
	if (strchr(host, ':') != NULL || strchr(host, ']') != NULL)
		return netaddr_literal_v6(host, len, ret_addr);
	end = host[len - 1] == '.' ? len - 1 : len;
	label = memrchr(host, '.', end);
	label = label != NULL ? label + 1 : host;
	if (label == host + end)
		return -EINVAL;
	if (*label < '0' || *label > '9')
		return 0;
	return netaddr_literal_v4(host, end, ret_addr);
}
