/* SPDX-License-Identifier: ISC */
/* Unit tests of daemon/net-policy.c: URL shapes and literal addresses. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <event2/event.h>

#include "mcpd-stubs.h"
#include "tap.h"

/* The answer of one check. */
struct answer {
	bool has_answered;
	int err;
	char why[256];
	char addr[INET6_ADDRSTRLEN];
	unsigned port;
	char hostport[128];
	bool is_tls;
};

static void
answer_cb(void *arg, int err, const char *why, const struct http_peer *peer)
{
	struct answer *a = arg;

	a->has_answered = true;
	a->err = err;
	snprintf(a->why, sizeof a->why, "%s", why != NULL ? why : "");
	if (peer == NULL)
		return;
	if (peer->addr.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)&peer->addr;

		inet_ntop(AF_INET6, &s6->sin6_addr, a->addr, sizeof a->addr);
		a->port = ntohs(s6->sin6_port);
	} else {
		const struct sockaddr_in *s4 = (const void *)&peer->addr;

		inet_ntop(AF_INET, &s4->sin_addr, a->addr, sizeof a->addr);
		a->port = ntohs(s4->sin_port);
	}
	snprintf(a->hostport, sizeof a->hostport, "%s", peer->hostport);
	a->is_tls = peer->is_tls;
}

/* Checks url and runs the loop until the answer came. */
static struct answer
check(const char *url, bool allow_local)
{
	struct answer a = { 0 };
	struct netpolicy_query *q = netpolicy_check(url, allow_local, answer_cb,
	    &a);

	/* A literal or a refusal answers on the next loop turn, not before. */
	if (q != NULL)
		TAP_CHECK(!a.has_answered, "%s: answered before returning",
		    url);
	while (!a.has_answered &&
	    event_base_loop(mcpd_base, EVLOOP_ONCE | EVLOOP_NONBLOCK) >= 0 &&
	    !a.has_answered)
		;
	return a;
}

/* The URL is refused with -EACCES and why contains what. */
static void
check_denied(const char *url, bool allow_local, const char *what)
{
	struct answer a = check(url, allow_local);

	TAP_CHECK(a.err == -EACCES && strstr(a.why, what) != NULL,
	    "%s: expected -EACCES with \"%s\", got %d \"%s\"", url, what, a.err,
	    a.why);
}

static void
test_url_shapes(void)
{
	struct answer a;

	check_denied("http://93.184.216.34/mcp", false, "only https");
	check_denied("https://user:pw@93.184.216.34/mcp", false,
	    "credentials in the URL");
	check_denied("https://user@93.184.216.34/", true,
	    "credentials in the URL");
	check_denied("https://93.184.216.34/mcp#frag", false, "fragments");
	a = check("ftp://93.184.216.34/", false);
	TAP_CHECK_INT(a.err, -EINVAL);
	a = check("https://exa mple.com/", false);
	TAP_CHECK_INT(a.err, -EINVAL);
	a = check("not a url", true);
	TAP_CHECK_INT(a.err, -EINVAL);
}

static void
test_public_literals(void)
{
	struct answer a = check("https://93.184.216.34/mcp", false);

	TAP_CHECK_INT(a.err, 0);
	TAP_CHECK_STR(a.addr, "93.184.216.34");
	TAP_CHECK_INT(a.port, 443);
	TAP_CHECK_STR(a.hostport, "93.184.216.34");
	TAP_CHECK(a.is_tls, "https is TLS");
	a = check("https://[2606:4700::1111]:8443/x", false);
	TAP_CHECK_INT(a.err, 0);
	TAP_CHECK_STR(a.addr, "2606:4700::1111");
	TAP_CHECK_INT(a.port, 8443);
	TAP_CHECK_STR(a.hostport, "[2606:4700::1111]:8443");
	/* Numeric IPv4 forms are the addresses they mean. */
	a = check("https://1572395042/", false);
	TAP_CHECK_INT(a.err, 0);
	TAP_CHECK_STR(a.addr, "93.184.216.34");
}

static void
test_non_public_literals(void)
{
	static const char *const urls[] = {
		"https://127.0.0.1/",
		"https://127.1/",
		"https://2130706433/",
		"https://0x7f.0.0.1/",
		"https://0177.0.0.1/",
		"https://[::1]/",
		"https://10.1.2.3/",
		"https://172.16.0.1/",
		"https://192.168.1.1/",
		"https://169.254.169.254/latest/meta-data/",
		"https://100.64.0.1/",
		"https://0.0.0.0/",
		"https://224.0.0.1/",
		"https://[fe80::1]/",
		"https://[fc00::1]/",
		"https://[fd12:3456::1]/",
		"https://[::ffff:127.0.0.1]/",
		"https://[::ffff:10.0.0.1]/",
		"https://[::ffff:169.254.169.254]/",
		"https://[64:ff9b::a00:1]/",
		"https://[2002:a00:1::]/",
		"https://[::]/",
		"https://[ff02::1]/",
	};

	for (size_t i = 0; i < TAP_COUNT(urls); i++)
		check_denied(urls[i], false, "refused");
}

static void
test_allow_local(void)
{
	struct answer a = check("http://127.0.0.1:8080/mcp", true);

	TAP_CHECK_INT(a.err, 0);
	TAP_CHECK_STR(a.addr, "127.0.0.1");
	TAP_CHECK_INT(a.port, 8080);
	TAP_CHECK(!a.is_tls, "plain http");
	a = check("http://[::1]/", true);
	TAP_CHECK_INT(a.err, 0);
	TAP_CHECK_STR(a.hostport, "[::1]");
	/* allow_local means loopback, not any non-public address. */
	check_denied("https://10.0.0.1/", true, "refused");
	check_denied("https://169.254.169.254/", true, "refused");
	check_denied("https://[::ffff:10.0.0.1]/", true, "refused");
	/* Plain http stays loopback-only, even with allow_local. */
	check_denied("http://93.184.216.34/", true, "plain http");
}

static void
test_cancel(void)
{
	struct answer a = { 0 };
	struct netpolicy_query *q = netpolicy_check("https://93.184.216.34/",
	    false, answer_cb, &a);

	TAP_REQUIRE(q != NULL, "a query");
	netpolicy_cancel(q);
	event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
	TAP_CHECK(!a.has_answered, "a cancelled query never answers");
	netpolicy_cancel(NULL);
}

static const struct tap_test tests[] = {
	{ "https only, no credentials, no fragments", test_url_shapes },
	{ "public literal addresses pass, pinned", test_public_literals },
	{ "loopback, private, link-local, CGNAT, mapped... are refused",
	    test_non_public_literals },
	{ "allow_local allows loopback only", test_allow_local },
	{ "a cancelled query never answers", test_cancel },
};

int
main(void)
{
	char *cause = NULL;
	int r;

	mcpd_base = event_base_new();
	/* A resolver that is never asked: every host here is a literal. */
	if (mcpd_base == NULL || netpolicy_init("127.0.0.1:9", &cause) < 0) {
		printf("Bail out! cannot set up: %s\n",
		    cause != NULL ? cause : "event_base_new");
		return 1;
	}
	r = tap_run(tests, TAP_COUNT(tests));
	netpolicy_close();
	event_base_free(mcpd_base);
	return r;
}
