/* SPDX-License-Identifier: ISC */
/* Unit tests of common/url.c: parsing, refusals, canonical form, origin. */
#include <errno.h>

#include "url.h"
#include "tap.h"

/* An input and either its canonical form or the cause of its refusal. */
struct url_case {
	const char *in;
	const char *canonical;
	const char *cause;
};

#define OK(in, canonical)               \
	{                               \
		(in), (canonical), NULL \
	}
#define NO(in, cause)               \
	{                           \
		(in), NULL, (cause) \
	}

/* Parses c->in and checks the canonical form or the refusal. */
static void
check_case(const struct url_case *c)
{
	struct url u;
	char *cause = NULL, *canonical = NULL;
	int r = url_parse(c->in, &u, &cause);

	if (r == 0) {
		canonical = url_canonical(&u);
		url_free(&u);
	}
	TAP_CHECK(r == (c->cause != NULL ? -EINVAL : 0),
	    "\"%s\": expected %s, got %d", c->in,
	    c->cause != NULL ? "-EINVAL" : "0", r);
	TAP_CHECK(tap_str_eq(canonical, c->canonical),
	    "\"%s\": expected canonical \"%s\", got \"%s\"", c->in,
	    tap_str_show(c->canonical), tap_str_show(canonical));
	TAP_CHECK(tap_str_eq(cause, c->cause),
	    "\"%s\": expected cause \"%s\", got \"%s\"", c->in,
	    tap_str_show(c->cause), tap_str_show(cause));
	free(canonical);
	free(cause);
}

static void
check_cases(const struct url_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check_case(&cases[i]);
}

#define CHECK_CASES(cases) check_cases((cases), TAP_COUNT(cases))

static void
test_case_and_default_ports(void)
{
	static const struct url_case cases[] = {
		OK("https://example.com/mcp", "https://example.com/mcp"),
		OK("HTTPS://Example.COM/MCP", "https://example.com/MCP"),
		OK("HtTp://EXAMPLE.com", "http://example.com/"),
		OK("https://example.com", "https://example.com/"),
		OK("https://example.com:443/mcp", "https://example.com/mcp"),
		OK("http://example.com:80/mcp", "http://example.com/mcp"),
		OK("https://example.com:00443/", "https://example.com/"),
		OK("https://example.com:/mcp", "https://example.com/mcp"),
		/* The other scheme's default port is not the default. */
		OK("https://example.com:80/mcp", "https://example.com:80/mcp"),
		OK("http://example.com:443/mcp", "http://example.com:443/mcp"),
		OK("https://example.com:8443/mcp",
		    "https://example.com:8443/mcp"),
		OK("http://localhost:3001/mcp", "http://localhost:3001/mcp"),
		OK("https://h:1/", "https://h:1/"),
		OK("https://h:65535/", "https://h:65535/"),
		OK("https://127.0.0.1:8443/mcp", "https://127.0.0.1:8443/mcp"),
		OK("https://0x7F.1/", "https://0x7f.1/"),
		OK("https://xn--bcher-kva.example/",
		    "https://xn--bcher-kva.example/"),
	};

	CHECK_CASES(cases);
}

static void
test_trailing_noise(void)
{
	static const struct url_case cases[] = {
		OK("https://example.com/mcp?", "https://example.com/mcp"),
		OK("https://example.com/mcp?#", "https://example.com/mcp"),
		OK("https://example.com?", "https://example.com/"),
		OK("https://example.com/mcp#section",
		    "https://example.com/mcp"),
		OK("https://example.com#frag", "https://example.com/"),
		OK("https://example.com/mcp?a=1&b=2#x",
		    "https://example.com/mcp?a=1&b=2"),
		OK("https://example.com?x=1", "https://example.com/?x=1"),
		/* The path is kept as it is: a slash is a different endpoint. */
		OK("https://example.com/mcp/", "https://example.com/mcp/"),
		OK("https://example.com//mcp", "https://example.com//mcp"),
		OK("https://example.com/a/../mcp",
		    "https://example.com/a/../mcp"),
		OK("https://example.com/m%2fcp?q=%20",
		    "https://example.com/m%2fcp?q=%20"),
		OK("https://example.com/MCP", "https://example.com/MCP"),
		OK("https://example.com/mcp?url=https://x/?y",
		    "https://example.com/mcp?url=https://x/?y"),
		OK("https://example.com/a:b@c;d=e,f!$&'()*+-._~",
		    "https://example.com/a:b@c;d=e,f!$&'()*+-._~"),
	};

	CHECK_CASES(cases);
}

static void
test_trailing_dot(void)
{
	static const struct url_case cases[] = {
		OK("https://example.com./mcp", "https://example.com/mcp"),
		OK("https://EXAMPLE.COM.:8443/", "https://example.com:8443/"),
		OK("http://localhost.:3001", "http://localhost:3001/"),
		NO("https://example.com../", "URL host has an empty label"),
		NO("https://./", "URL has an empty host"),
		NO("https://.example.com/", "URL host has an empty label"),
		NO("https://a..b/", "URL host has an empty label"),
	};

	CHECK_CASES(cases);
}

static void
test_ipv6(void)
{
	static const struct url_case cases[] = {
		OK("https://[::1]/mcp", "https://[::1]/mcp"),
		OK("http://[::1]:3001/mcp", "http://[::1]:3001/mcp"),
		OK("https://[2001:DB8::1]:443/", "https://[2001:db8::1]/"),
		OK("https://[2001:0db8:0000:0000:0000:0000:0000:0001]",
		    "https://[2001:db8::1]/"),
		OK("https://[::FFFF:127.0.0.1]/",
		    "https://[::ffff:127.0.0.1]/"),
		OK("https://[64:ff9b::a00:1]:8443/x?y",
		    "https://[64:ff9b::a00:1]:8443/x?y"),
		NO("https://[fe80::1%25eth0]/",
		    "URL IPv6 literal has a zone identifier, which is not allowed"),
		NO("https://[fe80::1%eth0]/",
		    "URL IPv6 literal has a zone identifier, which is not allowed"),
		NO("https://[::1/mcp", "URL IPv6 literal has no closing \"]\""),
		NO("https://[::g]/", "URL IPv6 literal \"[::g]\" is not valid"),
		NO("https://[1:2:3]/",
		    "URL IPv6 literal \"[1:2:3]\" is not valid"),
		NO("https://[]/", "URL IPv6 literal \"[]\" is not valid"),
		NO("https://[v1.fe]/",
		    "URL IPv6 literal \"[v1.fe]\" is not valid"),
		NO("https://[127.0.0.1]/",
		    "URL IPv6 literal \"[127.0.0.1]\" is not valid"),
		NO("https://[0000:0000:0000:0000:0000:0000:0000:0000:0001]/",
		    "URL IPv6 literal "
		    "\"[0000:0000:0000:0000:0000:0000:0000:0000:0001]\" is not "
		    "valid"),
		/* Too long, though its first 45 bytes are an address. */
		NO("https://[0000:0000:0000:0000:0000:ffff:255.255.255.2555]/",
		    "URL IPv6 literal "
		    "\"[0000:0000:0000:0000:0000:ffff:255.255.255.2555]\" is not "
		    "valid"),
		OK("https://[0000:0000:0000:0000:0000:ffff:255.255.255.255]/",
		    "https://[::ffff:255.255.255.255]/"),
		NO("https://[::1]x/",
		    "URL has characters after the IPv6 literal"),
		NO("https://[::1]]/",
		    "URL has characters after the IPv6 literal"),
		NO("https://[::1]:0/",
		    "URL port \"0\" is out of range (1 to 65535)"),
		NO("https://::1/", "URL IPv6 literal must be in brackets"),
		NO("https://::1:8443/", "URL IPv6 literal must be in brackets"),
		NO("https://h[::1]/", "URL host must not contain \"[\""),
	};

	CHECK_CASES(cases);
}

static void
test_userinfo_and_fragment(void)
{
	static const struct url_case cases[] = {
		/* Parsed and noted; the policy refuses them. */
		OK("https://user:pass@example.com/mcp",
		    "https://example.com/mcp"),
		OK("https://@example.com/", "https://example.com/"),
		OK("https://us%40er@example.com:8443/",
		    "https://example.com:8443/"),
		OK("https://example.com/mcp#a/b?c", "https://example.com/mcp"),
		NO("https://a@b@example.com/",
		    "URL userinfo contains \"@\", which must be percent-encoded"),
		NO("https://example.com\\@evil.com/",
		    "URL userinfo contains \"\\\", which must be percent-encoded"),
		NO("https://user@/mcp", "URL has an empty host"),
		NO("https://example.com/#a#b",
		    "URL fragment contains \"#\", which must be percent-encoded"),
	};

	CHECK_CASES(cases);
}

static void
test_bad_ports(void)
{
	static const struct url_case cases[] = {
		NO("https://h:0/",
		    "URL port \"0\" is out of range (1 to 65535)"),
		NO("https://h:65536/",
		    "URL port \"65536\" is out of range (1 to 65535)"),
		NO("https://h:99999999999999999999999/",
		    "URL port \"99999999999999999999999\" is out of range (1 to "
		    "65535)"),
		/* 2^64 + 443: a port that wraps around would be 443. */
		NO("https://h:18446744073709552059/",
		    "URL port \"18446744073709552059\" is out of range (1 to "
		    "65535)"),
		NO("https://h:-1/", "URL port \"-1\" is not a number"),
		NO("https://h:+443/", "URL port \"+443\" is not a number"),
		NO("https://h:http/", "URL port \"http\" is not a number"),
		NO("https://h:80a/", "URL port \"80a\" is not a number"),
		NO("https://h:0x50/", "URL port \"0x50\" is not a number"),
	};

	CHECK_CASES(cases);
}

static void
test_spaces_and_bytes(void)
{
	static const struct url_case cases[] = {
		NO("https://exa mple.com/", "URL contains a space"),
		NO("https://example.com/m cp", "URL contains a space"),
		NO(" https://example.com/", "URL contains a space"),
		NO("https://example.com/ ", "URL contains a space"),
		NO("https://h:8 0/", "URL contains a space"),
		NO("https://example.com/\t",
		    "URL contains a control character"),
		NO("https://example.com/\n",
		    "URL contains a control character"),
		NO("https://example.com\r\n/",
		    "URL contains a control character"),
		NO("https://example.com/\x7f",
		    "URL contains a control character"),
		NO("https://ex\xc3\xa4mple.com/",
		    "URL contains a non-ASCII byte (percent-encode it)"),
		NO("https://example.com/\xc3\xbc",
		    "URL contains a non-ASCII byte (percent-encode it)"),
		NO("https://example.com/<script>",
		    "URL path contains \"<\", which must be percent-encoded"),
		NO("https://example.com/a|b",
		    "URL path contains \"|\", which must be percent-encoded"),
		NO("https://example.com/a\\b",
		    "URL path contains \"\\\", which must be percent-encoded"),
		NO("https://example.com/[x]",
		    "URL path contains \"[\", which must be percent-encoded"),
		NO("https://example.com/?q={}",
		    "URL query contains \"{\", which must be percent-encoded"),
		NO("https://example.com/%zz",
		    "URL path has a malformed percent-escape"),
		NO("https://example.com/%4",
		    "URL path has a malformed percent-escape"),
		NO("https://example.com/?q=%",
		    "URL query has a malformed percent-escape"),
		NO("https://example.com/#%g0",
		    "URL fragment has a malformed percent-escape"),
	};

	CHECK_CASES(cases);
}

static void
test_missing_parts(void)
{
	static const struct url_case cases[] = {
		NO("https:///mcp", "URL has an empty host"),
		NO("https://", "URL has an empty host"),
		NO("https://?x", "URL has an empty host"),
		NO("https://#f", "URL has an empty host"),
		NO("https://:443/", "URL has an empty host"),
		NO("https:/example.com",
		    "URL has no host (\"//\" must follow \"https:\")"),
		NO("HTTP:example.com",
		    "URL has no host (\"//\" must follow \"http:\")"),
		NO("example.com/mcp",
		    "URL has no scheme (it should start with https://)"),
		NO("//example.com/mcp",
		    "URL has no scheme (it should start with https://)"),
		NO("://example.com",
		    "URL has no scheme (it should start with https://)"),
		NO("", "URL has no scheme (it should start with https://)"),
		NO("/mcp", "URL has no scheme (it should start with https://)"),
		NO("1http://example.com/",
		    "URL has no scheme (it should start with https://)"),
	};

	CHECK_CASES(cases);
}

static void
test_host_characters(void)
{
	static const struct url_case cases[] = {
		NO("https://ex%61mple.com/",
		    "URL host must not be percent-encoded"),
		NO("https://%5B::1%5D/",
		    "URL host must not be percent-encoded"),
		NO("https://ex_ample.com/", "URL host must not contain \"_\""),
		NO("https://ex*ample.com/", "URL host must not contain \"*\""),
		NO("https://example.com;x/", "URL host must not contain \";\""),
		NO("https://example.com\\evil/",
		    "URL host must not contain \"\\\""),
	};

	CHECK_CASES(cases);
}

static void
test_schemes(void)
{
	static const struct url_case cases[] = {
		NO("ftp://example.com/",
		    "URL scheme \"ftp\" is not http or https"),
		NO("ws://example.com/mcp",
		    "URL scheme \"ws\" is not http or https"),
		NO("WSS://example.com/mcp",
		    "URL scheme \"WSS\" is not http or https"),
		NO("file:///etc/passwd",
		    "URL scheme \"file\" is not http or https"),
		NO("htt://example.com/",
		    "URL scheme \"htt\" is not http or https"),
		NO("h://example.com/", "URL scheme \"h\" is not http or https"),
		NO("httpx://example.com/",
		    "URL scheme \"httpx\" is not http or https"),
		NO("http+unix://x/",
		    "URL scheme \"http+unix\" is not http or https"),
		NO("mailto:a@example.com",
		    "URL scheme \"mailto\" is not http or https"),
		NO("localhost:3001/mcp",
		    "URL scheme \"localhost\" is not http or https"),
	};

	CHECK_CASES(cases);
}

/* A string of n copies of c followed by tail; the caller frees it. */
static char *
repeat(char c, size_t n, const char *tail)
{
	char *s = malloc(n + strlen(tail) + 1);

	memset(s, c, n);
	strcpy(s + n, tail);
	return s;
}

/* Checks "https://" host "/" parses, or fails with cause. */
static void
check_host(const char *host, const char *cause)
{
	char *in, *want = NULL;
	struct url_case c;

	if (asprintf(&in, "https://%s/", host) < 0)
		abort();
	if (cause == NULL)
		want = strdup(in);
	c.in = in;
	c.canonical = want;
	c.cause = cause;
	check_case(&c);
	free(in);
	free(want);
}

static void
test_host_lengths(void)
{
	char *label63 = repeat('a', 63, ""), *label64 = repeat('a', 64, "");
	/* 4 labels of 63 and a dot between: 255; drop 2 for 253 */
	char *host253 = repeat('b', 61, ""), *host254 = repeat('b', 62, "");
	char *name;

	check_host(label63, NULL);
	check_host(label64, "URL host has a label longer than 63 bytes");
	if (asprintf(&name, "%s.%s.%s.%s", label63, label63, label63, host253) <
	    0)
		abort();
	TAP_CHECK_INT(strlen(name), 253);
	check_host(name, NULL);
	free(name);
	if (asprintf(&name, "%s.%s.%s.%s", label63, label63, label63, host254) <
	    0)
		abort();
	check_host(name, "URL host is longer than 253 bytes");
	free(name);
	free(label63);
	free(label64);
	free(host253);
	free(host254);
}

/* The fields of one parse. */
struct url_fields {
	const char *in;
	const char *scheme, *host;
	bool is_ipv6_literal, has_userinfo;
	int port;
	bool has_explicit_port;
	const char *path, *query;
	bool has_fragment;
	const char *origin;
};

static void
check_fields(const struct url_fields *f)
{
	struct url u;
	char *cause = NULL, *origin;

	TAP_CHECK(url_parse(f->in, &u, &cause) == 0, "\"%s\": refused: %s",
	    f->in, tap_str_show(cause));
	if (cause != NULL) {
		free(cause);
		return;
	}
	TAP_CHECK_STR(u.scheme, f->scheme);
	TAP_CHECK_STR(u.host, f->host);
	TAP_CHECK_INT(u.is_ipv6_literal, f->is_ipv6_literal);
	TAP_CHECK_INT(u.has_userinfo, f->has_userinfo);
	TAP_CHECK_INT(u.port, f->port);
	TAP_CHECK_INT(u.has_explicit_port, f->has_explicit_port);
	TAP_CHECK_STR(u.path, f->path);
	TAP_CHECK_STR(u.query, f->query);
	TAP_CHECK_INT(u.has_fragment, f->has_fragment);
	origin = url_origin(&u);
	TAP_CHECK_STR(origin, f->origin);
	free(origin);
	url_free(&u);
}

static void
test_fields(void)
{
	static const struct url_fields cases[] = {
		{ "HTTPS://User:Pw@Example.COM.:443/MCP?Q=1#F", "https",
		    "example.com", false, true, 443, true, "/MCP", "Q=1", true,
		    "https://example.com" },
		{ "http://example.com", "http", "example.com", false, false, 80,
		    false, "/", NULL, false, "http://example.com" },
		{ "https://example.com:/?", "https", "example.com", false,
		    false, 443, false, "/", NULL, false,
		    "https://example.com" },
		{ "http://[::1]:3001/mcp#", "http", "::1", true, false, 3001,
		    true, "/mcp", NULL, true, "http://[::1]:3001" },
		{ "https://[2001:db8::1]", "https", "2001:db8::1", true, false,
		    443, false, "/", NULL, false, "https://[2001:db8::1]" },
		{ "https://h:80/a/b/?x=?#", "https", "h", false, false, 80,
		    true, "/a/b/", "x=?", true, "https://h:80" },
	};

	for (size_t i = 0; i < TAP_COUNT(cases); i++)
		check_fields(&cases[i]);
}

static void
test_failure_leaves_ret(void)
{
	struct url u, before;
	char *cause = NULL;

	/* ret is written on success only; cause may be NULL. */
	memset(&u, 0xa5, sizeof u);
	before = u;
	TAP_CHECK_INT(url_parse("https://h:0/", &u, &cause), -EINVAL);
	TAP_CHECK(memcmp(&u, &before, sizeof u) == 0, "expected ret untouched");
	free(cause);
	TAP_CHECK_INT(url_parse("ftp://h/", &u, NULL), -EINVAL);
	TAP_CHECK_INT(url_parse("https://h/", &u, NULL), 0);
	url_free(&u);
	TAP_CHECK(u.scheme == NULL && u.host == NULL,
	    "expected url_free to clear the fields");
	url_free(&u);
	url_free(NULL);
}

static const struct tap_test tests[] = {
	{ "case and default ports", test_case_and_default_ports },
	{ "an empty query and the fragment go; the path stays",
	    test_trailing_noise },
	{ "a trailing dot on the host goes", test_trailing_dot },
	{ "IPv6 literals: RFC 5952 form, no zone", test_ipv6 },
	{ "userinfo and fragments are parsed and dropped",
	    test_userinfo_and_fragment },
	{ "bad ports are refused", test_bad_ports },
	{ "spaces, control, non-ASCII and unescaped bytes are refused",
	    test_spaces_and_bytes },
	{ "a missing scheme or host is refused", test_missing_parts },
	{ "host characters: no percent, [A-Za-z0-9.-] only",
	    test_host_characters },
	{ "only http and https", test_schemes },
	{ "host label and name lengths", test_host_lengths },
	{ "the parsed fields and the origin", test_fields },
	{ "a refusal leaves ret alone; url_free clears",
	    test_failure_leaves_ret },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
