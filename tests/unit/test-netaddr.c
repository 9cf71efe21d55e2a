/* SPDX-License-Identifier: ISC */
/* Unit tests of common/netaddr.c: address classes, literals, answers. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/un.h>

#include "netaddr.h"
#include "tap.h"

/* An address from its strict text form; a typo here stops the run. */
static struct sockaddr_storage
addr_of(const char *text)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof ss);
	if (inet_pton(AF_INET, text, &sin->sin_addr) == 1)
		ss.ss_family = AF_INET;
	else if (inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1)
		ss.ss_family = AF_INET6;
	else {
		printf("Bail out! bad address in a test table: %s\n", text);
		exit(99);
	}
	return ss;
}

struct class_case {
	const char *addr;
	enum netaddr_class cls;
};

#define PUB  NETADDR_PUBLIC
#define LOOP NETADDR_LOOPBACK
#define PRIV NETADDR_PRIVATE
#define LINK NETADDR_LINK_LOCAL
#define CGN  NETADDR_CGNAT
#define MCST NETADDR_MULTICAST
#define UNSP NETADDR_UNSPECIFIED
#define RSVD NETADDR_RESERVED

static const struct class_case ipv4_cases[] = {
	{ "8.8.8.8", PUB },
	{ "93.184.216.34", PUB },
	{ "0.0.0.0", UNSP },
	{ "0.1.2.3", UNSP },
	{ "1.0.0.0", PUB },
	{ "9.255.255.255", PUB },
	{ "10.0.0.1", PRIV },
	{ "10.255.255.255", PRIV },
	{ "11.0.0.0", PUB },
	{ "100.63.255.255", PUB },
	{ "100.64.0.0", CGN },
	{ "100.127.255.255", CGN },
	{ "100.128.0.0", PUB },
	{ "126.255.255.255", PUB },
	{ "127.0.0.1", LOOP },
	{ "127.255.255.254", LOOP },
	{ "128.0.0.0", PUB },
	{ "169.253.255.255", PUB },
	{ "169.254.0.1", LINK },
	{ "169.254.169.254", LINK },
	{ "169.255.0.0", PUB },
	{ "172.15.255.255", PUB },
	{ "172.16.0.1", PRIV },
	{ "172.31.255.255", PRIV },
	{ "172.32.0.0", PUB },
	{ "192.0.0.1", RSVD },
	{ "192.0.0.9", RSVD },	 /* PCP anycast: a decision, see netaddr.c */
	{ "192.0.0.10", RSVD },	 /* TURN anycast: idem */
	{ "192.0.0.170", RSVD }, /* NAT64 discovery */
	{ "192.0.1.1", PUB },
	{ "192.0.2.1", RSVD },
	{ "192.31.196.1", PUB }, /* AS112-v4: globally reachable */
	{ "192.52.193.1", PUB }, /* AMT: globally reachable */
	{ "192.88.99.1", RSVD },
	{ "192.167.255.255", PUB },
	{ "192.168.1.1", PRIV },
	{ "192.169.0.0", PUB },
	{ "192.175.48.1", PUB }, /* AS112 direct delegation */
	{ "198.17.255.255", PUB },
	{ "198.18.0.1", RSVD },
	{ "198.19.255.255", RSVD },
	{ "198.20.0.0", PUB },
	{ "198.51.100.7", RSVD },
	{ "203.0.113.9", RSVD },
	{ "223.255.255.255", PUB },
	{ "224.0.0.1", MCST },
	{ "239.255.255.250", MCST },
	{ "240.0.0.1", RSVD },
	{ "255.255.255.254", RSVD },
	{ "255.255.255.255", RSVD },
};

static const struct class_case ipv6_cases[] = {
	{ "2606:4700:4700::1111", PUB },
	{ "2a00:1450:4001:80b::200e", PUB },
	{ "2620:4f:8000::1", PUB }, /* AS112 direct delegation */
	{ "::", UNSP },
	{ "::1", LOOP },
	{ "fc00::1", PRIV },
	{ "fd12:3456:789a::1", PRIV },
	{ "64:ff9b:1::1", PRIV },
	{ "fe80::1", LINK },
	{ "febf:ffff::1", LINK },
	{ "ff02::1", MCST },
	{ "ff0e::fb", MCST },
	{ "fbff::1", RSVD },
	{ "fec0::1", RSVD },
	{ "100::1", RSVD },
	{ "2001:db8::1", RSVD },
	{ "3fff::1", RSVD },
	{ "3fff:fff::1", RSVD },
	{ "3fff:1000::1", PUB },
	{ "5f00::1", RSVD },
	{ "4000::1", RSVD },
	{ "e000::1", RSVD },
	{ "1fff:ffff::1", RSVD },
	{ "2001:1::1", RSVD }, /* PCP anycast: a decision */
	{ "2001:1::3", RSVD }, /* DNS-SD SRP anycast: idem */
	{ "2001:2::1", RSVD },
	{ "2001:3::1", PUB },
	{ "2001:4:112::1", PUB },
	{ "2001:4:113::1", RSVD },
	{ "2001:10::1", RSVD },
	{ "2001:20::1", PUB },
	{ "2001:30::1", PUB },
	{ "2001:1ff::1", RSVD },
	{ "2001:200::1", PUB },
	{ "1::", RSVD },
};

/* Each form with a public and with non-public IPv4 addresses inside. */
static const struct class_case embedded_cases[] = {
	{ "::ffff:8.8.8.8", PUB },
	{ "::ffff:10.0.0.1", PRIV },
	{ "::ffff:127.0.0.1", LOOP },
	{ "::ffff:169.254.169.254", LINK },
	{ "::ffff:100.64.0.1", CGN },
	{ "::ffff:224.0.0.1", MCST },
	{ "::ffff:0.0.0.0", UNSP },
	{ "::ffff:192.0.2.1", RSVD },
	{ "64:ff9b::8.8.8.8", PUB },
	{ "64:ff9b::10.0.0.1", PRIV },
	{ "64:ff9b::127.0.0.1", RSVD }, /* relayed: not this host */
	{ "64:ff9b::169.254.169.254", LINK },
	{ "64:ff9b::100.64.0.1", CGN },
	{ "64:ff9b::0:1:808:808", RSVD }, /* past the /96 */
	{ "64:ff9b:1::808:808", PRIV },
	{ "64:ff9b:1:808:8:800::", PRIV },
	{ "64:ff9b:1::a00:1", PRIV },
	{ "2002:808:808::1", PUB },
	{ "2002:a00:1::1", PRIV },
	{ "2002:c0a8:101::1", PRIV },
	{ "2002:a9fe:a9fe::1", LINK },
	{ "2002:7f00:1::1", RSVD },
	{ "2002:e000:1::1", MCST },
	{ "2001:0:4136:e378:8000:63bf:3fff:fdd2", RSVD }, /* Teredo */
	{ "2001:0:a00:1::1", RSVD },
	{ "::8.8.8.8", RSVD }, /* IPv4-compatible, deprecated */
	{ "::10.0.0.1", RSVD },
	{ "::127.0.0.1", RSVD },
};

static void
check_classes(const struct class_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct sockaddr_storage ss = addr_of(cases[i].addr);
		enum netaddr_class got;

		got = netaddr_classify((struct sockaddr *)&ss);
		TAP_CHECK(got == cases[i].cls, "%s: expected %s, got %s",
		    cases[i].addr, netaddr_class_name(cases[i].cls),
		    netaddr_class_name(got));
		TAP_CHECK(netaddr_is_public((struct sockaddr *)&ss) ==
			(cases[i].cls == NETADDR_PUBLIC),
		    "%s: netaddr_is_public disagrees", cases[i].addr);
	}
}

/* Whether a table holds an address of family in class. */
static bool
cases_cover(const struct class_case *cases, size_t n, int family,
    enum netaddr_class cls)
{
	for (size_t i = 0; i < n; i++) {
		struct sockaddr_storage ss = addr_of(cases[i].addr);

		if (ss.ss_family == family && cases[i].cls == cls)
			return true;
	}
	return false;
}

static void
test_tables_cover_every_class(void)
{
	for (int c = 0; c < NETADDR_CLASS_COUNT; c++) {
		TAP_CHECK(cases_cover(ipv4_cases, TAP_COUNT(ipv4_cases),
			      AF_INET, c),
		    "no IPv4 case is %s", netaddr_class_name(c));
		TAP_CHECK(cases_cover(ipv6_cases, TAP_COUNT(ipv6_cases),
			      AF_INET6, c) ||
			cases_cover(embedded_cases, TAP_COUNT(embedded_cases),
			    AF_INET6, c),
		    "no IPv6 case is %s", netaddr_class_name(c));
	}
}

static void
test_classify_ipv4(void)
{
	check_classes(ipv4_cases, TAP_COUNT(ipv4_cases));
}

static void
test_classify_ipv6(void)
{
	check_classes(ipv6_cases, TAP_COUNT(ipv6_cases));
}

static void
test_classify_embedded(void)
{
	check_classes(embedded_cases, TAP_COUNT(embedded_cases));
}

static void
test_classify_not_ip(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct sockaddr_storage none = { .ss_family = AF_UNSPEC };

	TAP_CHECK_INT(netaddr_classify((struct sockaddr *)&sun),
	    NETADDR_RESERVED);
	TAP_CHECK_INT(netaddr_classify((struct sockaddr *)&none),
	    NETADDR_RESERVED);
	TAP_CHECK_INT(netaddr_classify(NULL), NETADDR_RESERVED);
	TAP_CHECK(!netaddr_is_public(NULL), "NULL is public");
}

static void
test_class_names(void)
{
	int minus_one = -1;

	TAP_CHECK_STR(netaddr_class_name(NETADDR_PUBLIC), "public");
	TAP_CHECK_STR(netaddr_class_name(NETADDR_CGNAT), "carrier-grade NAT");
	TAP_CHECK_STR(netaddr_class_name(NETADDR_LINK_LOCAL), "link-local");
	for (int c = 0; c < NETADDR_CLASS_COUNT; c++) {
		const char *name = netaddr_class_name(c);

		TAP_REQUIRE(name != NULL && name[0] != '\0',
		    "class %d has no name", c);
		for (int d = 0; d < c; d++)
			TAP_CHECK(strcmp(netaddr_class_name(d), name) != 0,
			    "classes %d and %d share \"%s\"", d, c, name);
	}
	TAP_CHECK(netaddr_class_name(NETADDR_CLASS_COUNT) == NULL,
	    "a name for an unknown class");
	TAP_CHECK(netaddr_class_name(minus_one) == NULL, "a name for class -1");
}

/* A host, what netaddr_parse_literal returns, and the address it means. */
struct literal_case {
	const char *host;
	int rc;
	const char *want;
};

static const struct literal_case literal_cases[] = {
	{ "127.0.0.1", 1, "127.0.0.1" },
	{ "8.8.8.8", 1, "8.8.8.8" },
	{ "2130706433", 1, "127.0.0.1" },
	{ "0177.0.0.1", 1, "127.0.0.1" },
	{ "017700000001", 1, "127.0.0.1" },
	{ "0x7f.1", 1, "127.0.0.1" },
	{ "0X7F.0.0.1", 1, "127.0.0.1" },
	{ "0x7f000001", 1, "127.0.0.1" },
	{ "0xa9fea9fe", 1, "169.254.169.254" },
	{ "127.1", 1, "127.0.0.1" },
	{ "10.1.2", 1, "10.1.0.2" },
	{ "10.0x10.0300", 1, "10.16.0.192" },
	{ "0", 1, "0.0.0.0" },
	{ "127.0.0.1.", 1, "127.0.0.1" },
	{ "::1", 1, "::1" },
	{ "[::1]", 1, "::1" },
	{ "[2606:4700:4700::1111]", 1, "2606:4700:4700::1111" },
	{ "2606:4700:4700::1111", 1, "2606:4700:4700::1111" },
	{ "[::ffff:127.0.0.1]", 1, "::ffff:127.0.0.1" },
	{ "::ffff:7f00:1", 1, "::ffff:127.0.0.1" },
	{ "[64:ff9b::10.0.0.1]", 1, "64:ff9b::a00:1" },
	{ "example.com", 0, NULL },
	{ "example.com.", 0, NULL },
	{ "localhost", 0, NULL },
	{ "1e100.net", 0, NULL },
	{ "127.0.0.1.example", 0, NULL },
	{ "0x7f.example", 0, NULL },
	{ "xn--nxasmq6b.com", 0, NULL },
	{ "1.2.3.4.5", -EINVAL, NULL },
	{ "256.1.1.1", -EINVAL, NULL },
	{ "1.2.3.256", -EINVAL, NULL },
	{ "1.16777216", -EINVAL, NULL },
	{ "4294967296", -EINVAL, NULL },
	{ "0x1g", -EINVAL, NULL },
	{ "08.0.0.1", -EINVAL, NULL },
	{ "1..2", -EINVAL, NULL },
	{ "example.123", -EINVAL, NULL },
	{ "127.0.0.1..", -EINVAL, NULL },
	{ "", -EINVAL, NULL },
	{ ".", -EINVAL, NULL },
	{ "127.0.0.1 ", -EINVAL, NULL },
	{ "127.0.0.1 evil.com", -EINVAL, NULL },
	{ "127.0.0.1\n", -EINVAL, NULL },
	{ " 127.0.0.1", -EINVAL, NULL },
	{ "1.2.3.4:80", -EINVAL, NULL },
	{ "[127.0.0.1]", -EINVAL, NULL },
	{ "[::1", -EINVAL, NULL },
	{ "::1]", -EINVAL, NULL },
	{ "[::1]:443", -EINVAL, NULL },
	{ "[]", -EINVAL, NULL },
	{ "[", -EINVAL, NULL },
	{ "::g", -EINVAL, NULL },
	{ "1:2:3:4:5:6:7:8:9", -EINVAL, NULL },
	{ "fe80::1%eth0", -EINVAL, NULL },
	{ "[fe80::1%25eth0]", -EINVAL, NULL },
	{ "[::ffff:0177.0.0.1]", -EINVAL, NULL },
};

static void
format_addr(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	const void *bytes = ss->ss_family == AF_INET ?
	    (const void *)&((const struct sockaddr_in *)ss)->sin_addr :
	    (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr;

	if (inet_ntop(ss->ss_family, bytes, buf, size) == NULL)
		snprintf(buf, size, "(family %d)", ss->ss_family);
}

static void
check_literal(const struct literal_case *c)
{
	struct sockaddr_storage ss, untouched;
	char got[INET6_ADDRSTRLEN + 16];
	int rc;

	memset(&ss, 0xa5, sizeof ss);
	memset(&untouched, 0xa5, sizeof untouched);
	rc = netaddr_parse_literal(c->host, &ss);
	TAP_CHECK(rc == c->rc, "\"%s\": expected %d, got %d", c->host, c->rc,
	    rc);
	if (rc != 1 || c->rc != 1) {
		TAP_CHECK(memcmp(&ss, &untouched, sizeof ss) == 0,
		    "\"%s\": the address was written on %d", c->host, rc);
		return;
	}
	format_addr(&ss, got, sizeof got);
	TAP_CHECK(tap_str_eq(got, c->want), "\"%s\": expected %s, got %s",
	    c->host, c->want, got);
	TAP_CHECK(ss.ss_family == AF_INET ?
		((struct sockaddr_in *)&ss)->sin_port == 0 :
		((struct sockaddr_in6 *)&ss)->sin6_port == 0,
	    "\"%s\": a port was set", c->host);
}

static void
test_parse_literal(void)
{
	for (size_t i = 0; i < TAP_COUNT(literal_cases); i++)
		check_literal(&literal_cases[i]);
	TAP_CHECK_INT(netaddr_parse_literal(NULL, NULL), -EINVAL);
}

/* host without its brackets, as getaddrinfo() wants an IPv6 literal. */
static void
unbracket(const char *host, char *buf, size_t size)
{
	size_t len = strlen(host);

	if (len >= 2 && host[0] == '[' && host[len - 1] == ']')
		snprintf(buf, size, "%.*s", (int)(len - 2), host + 1);
	else
		snprintf(buf, size, "%s", host);
}

/*
 * Whatever the resolver reads as a number is never taken for a name here,
 * and is read as the same address or refused (brackets around IPv4, IPv6
 * zones): no literal slips past the policy as a name or as another address.
 */
static void
test_parse_literal_agrees_with_resolver(void)
{
	const struct addrinfo hints = { .ai_flags = AI_NUMERICHOST };

	for (size_t i = 0; i < TAP_COUNT(literal_cases); i++) {
		const char *host = literal_cases[i].host;
		struct sockaddr_storage ss;
		struct addrinfo *res;
		char bare[256], want[64], got[64];
		int rc;

		unbracket(host, bare, sizeof bare);
		if (getaddrinfo(bare, NULL, &hints, &res) != 0)
			continue;
		TAP_CHECK(res->ai_addrlen <= sizeof ss, "\"%s\": too long",
		    host);
		memset(&ss, 0, sizeof ss);
		memcpy(&ss, res->ai_addr, res->ai_addrlen);
		freeaddrinfo(res);
		format_addr(&ss, want, sizeof want);
		rc = netaddr_parse_literal(host, &ss);
		TAP_CHECK(rc != 0, "\"%s\": the resolver reads %s, a name here",
		    host, want);
		if (rc != 1)
			continue;
		format_addr(&ss, got, sizeof got);
		TAP_CHECK(tap_str_eq(got, want),
		    "\"%s\": the resolver reads %s, got %s", host, want, got);
	}
}

/* Judges addresses given as text; NULL ends the list. */
static int
judge(const char *const *texts, bool allow_loopback, char **cause)
{
	struct sockaddr_storage ss[8];
	const struct sockaddr *sas[8];
	size_t n = 0;

	for (; texts[n] != NULL && n < 8; n++) {
		ss[n] = addr_of(texts[n]);
		sas[n] = (const struct sockaddr *)&ss[n];
	}
	return netaddr_judge(sas, n, allow_loopback, cause);
}

struct judge_case {
	const char *addrs[4];
	bool allow_loopback;
	int rc;
	const char *cause;
};

#define MIXED "the answer mixes public and non-public addresses: "

static const struct judge_case judge_cases[] = {
	{ { "8.8.8.8" }, false, 0, NULL },
	{ { "8.8.8.8", "2606:4700:4700::1111", "::ffff:1.1.1.1" }, false, 0,
	    NULL },
	{ { "8.8.8.8" }, true, 0, NULL },
	{ { "10.0.0.1" }, false, -EACCES, "10.0.0.1 is private (RFC 1918)" },
	{ { "10.0.0.1" }, true, -EACCES, "10.0.0.1 is private (RFC 1918)" },
	{ { "100.64.0.1" }, false, -EACCES,
	    "100.64.0.1 is carrier-grade NAT (100.64.0.0/10, RFC 6598)" },
	{ { "169.254.169.254" }, false, -EACCES,
	    "169.254.169.254 is link-local (169.254.169.254, a cloud "
	    "metadata service)" },
	{ { "169.254.1.1" }, false, -EACCES,
	    "169.254.1.1 is link-local (169.254.0.0/16, RFC 3927)" },
	{ { "169.254.169.255" }, false, -EACCES,
	    "169.254.169.255 is link-local (169.254.0.0/16, RFC 3927)" },
	{ { "fec0::1" }, false, -EACCES,
	    "fec0::1 is reserved (fec0::/10, deprecated site-local, "
	    "RFC 3879)" },
	{ { "5f00::1" }, false, -EACCES,
	    "5f00::1 is reserved (5f00::/16, SRv6 SIDs, RFC 9602)" },
	{ { "100::1" }, false, -EACCES,
	    "100::1 is reserved (100::/64, discard-only, RFC 6666)" },
	{ { "4000::1" }, false, -EACCES,
	    "4000::1 is reserved (outside the global unicast 2000::/3)" },
	{ { "fd00::1" }, false, -EACCES,
	    "fd00::1 is private (fc00::/7, unique-local, RFC 4193)" },
	{ { "2001::1" }, false, -EACCES,
	    "2001::1 is reserved (2001::/32, Teredo, RFC 4380)" },
	{ { "::ffff:10.0.0.1" }, false, -EACCES,
	    "::ffff:10.0.0.1 is private (RFC 1918): it embeds 10.0.0.1 "
	    "(::ffff:0:0/96, IPv4-mapped)" },
	{ { "2002:a00:1::1" }, false, -EACCES,
	    "2002:a00:1::1 is private (RFC 1918): it embeds 10.0.0.1 "
	    "(2002::/16, 6to4, RFC 3056)" },
	{ { "8.8.8.8", "10.0.0.1" }, false, -EACCES,
	    MIXED "10.0.0.1 is private (RFC 1918), 8.8.8.8 is public" },
	{ { "192.168.0.1", "2606:4700:4700::1111" }, false, -EACCES,
	    MIXED "192.168.0.1 is private (RFC 1918), "
		  "2606:4700:4700::1111 is public" },
	{ { "127.0.0.1", "::1" }, false, -EACCES,
	    "127.0.0.1 is loopback (127.0.0.0/8)" },
	{ { "127.0.0.1", "::1" }, true, 0, NULL },
	{ { "::ffff:127.0.0.1" }, true, 0, NULL },
	{ { "127.0.0.1", "8.8.8.8" }, true, -EACCES,
	    MIXED "127.0.0.1 is loopback (127.0.0.0/8), 8.8.8.8 is public" },
	{ { "127.0.0.1", "10.0.0.1" }, true, -EACCES,
	    "10.0.0.1 is private (RFC 1918)" },
	{ { "127.0.0.1", "10.0.0.1" }, false, -EACCES,
	    "127.0.0.1 is loopback (127.0.0.0/8)" },
	{ { "64:ff9b::7f00:1" }, true, -EACCES,
	    "64:ff9b::7f00:1 is reserved (loopback relayed off this host): "
	    "it embeds 127.0.0.1 (64:ff9b::/96, NAT64, RFC 6052)" },
	{ { "::127.0.0.1" }, true, -EACCES,
	    "::127.0.0.1 is reserved (::/96, deprecated IPv4-compatible)" },
	{ { NULL }, false, -EACCES, "the answer holds no address" },
	{ { NULL }, true, -EACCES, "the answer holds no address" },
};

static void
check_judge(const struct judge_case *c)
{
	char sentinel[] = "untouched";
	char *cause = sentinel;
	int rc;

	rc = judge(c->addrs, c->allow_loopback, &cause);
	TAP_CHECK(rc == c->rc, "%s...: expected %d, got %d",
	    tap_str_show(c->addrs[0]), c->rc, rc);
	if (c->cause == NULL) {
		TAP_CHECK(cause == sentinel,
		    "%s...: cause written on success: %s",
		    tap_str_show(c->addrs[0]), cause);
		return;
	}
	TAP_CHECK(cause != sentinel && tap_str_eq(cause, c->cause),
	    "%s...: expected \"%s\", got \"%s\"", tap_str_show(c->addrs[0]),
	    c->cause, cause != sentinel ? tap_str_show(cause) : "untouched");
	if (cause != sentinel)
		free(cause);
	TAP_CHECK_INT(judge(c->addrs, c->allow_loopback, NULL), c->rc);
}

static void
test_judge(void)
{
	for (size_t i = 0; i < TAP_COUNT(judge_cases); i++)
		check_judge(&judge_cases[i]);
}

static void
test_judge_not_ip(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const struct sockaddr *unix_only[] = { (struct sockaddr *)&sun };
	const struct sockaddr *missing[] = { NULL };
	char *cause = NULL;

	TAP_CHECK_INT(netaddr_judge(unix_only, 1, true, &cause), -EACCES);
	TAP_CHECK_STR(cause,
	    "an address of family 1 is reserved (not an "
	    "IPv4 or IPv6 address)");
	free(cause);
	cause = NULL;
	TAP_CHECK_INT(netaddr_judge(missing, 1, true, &cause), -EACCES);
	TAP_CHECK_STR(cause,
	    "a missing address is reserved (not an IPv4 or IPv6 address)");
	free(cause);
	cause = NULL;
	TAP_CHECK_INT(netaddr_judge(NULL, 0, true, &cause), -EACCES);
	TAP_CHECK_STR(cause, "the answer holds no address");
	free(cause);
}

static const struct tap_test tests[] = {
	{ "class names", test_class_names },
	{ "the tables cover every class in both families",
	    test_tables_cover_every_class },
	{ "classify IPv4", test_classify_ipv4 },
	{ "classify IPv6", test_classify_ipv6 },
	{ "classify IPv6 forms embedding IPv4", test_classify_embedded },
	{ "classify what is not IP", test_classify_not_ip },
	{ "parse literal hosts", test_parse_literal },
	{ "literals agree with the resolver",
	    test_parse_literal_agrees_with_resolver },
	{ "judge answers", test_judge },
	{ "judge answers with non-IP addresses", test_judge_not_ip },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
