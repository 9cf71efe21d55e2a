/* SPDX-License-Identifier: ISC */
/* Unit tests of common/names.c: names, names from commands, handles. */
#include <errno.h>
#include <stdint.h>

#include "names.h"
#include "tap.h"

#define N63 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"

static const char *const good_names[] = {
	"a",
	"Z",
	"9",
	"everything",
	"server-everything",
	"my_server",
	"MyServer",
	"0-_",
	"a-",
	"x_",
	N63,
};

static const char *const bad_names[] = {
	"",
	N63 "x",
	"-a",
	"_a",
	"a.b",
	".a",
	"a/b",
	"/",
	"a b",
	" a",
	"a ",
	"a\tb",
	"a\n",
	"caf\xc3\xa9",
	"\xc3\xa9t\xc3\xa9",
	"a:b",
	"a@b",
	"a+b",
	"a=b",
};

static void
test_valid(void)
{
	TAP_CHECK_INT(strlen(N63), NAMES_MAX);
	for (size_t i = 0; i < TAP_COUNT(good_names); i++)
		TAP_CHECK(names_valid(good_names[i]),
		    "expected \"%s\" to be accepted", good_names[i]);
	for (size_t i = 0; i < TAP_COUNT(bad_names); i++)
		TAP_CHECK(!names_valid(bad_names[i]),
		    "expected \"%s\" to be refused", bad_names[i]);
	TAP_CHECK(!names_valid(NULL), "expected NULL to be refused");
	TAP_CHECK(names_reserved("mcpd") && names_reserved("MCPD") &&
		!names_reserved("mcpd2") && !names_reserved(NULL),
	    "mcpd, in any case and only it, is reserved");
}

static void
test_secret_valid(void)
{
	static const char *const good[] = { "a", "Z", "9", "_", ".", "a.b_c",
		"GITHUB_TOKEN", "x.y.z", "..", "0" };
	static const char *const bad[] = { "", "a b", "a-b", "a/b", "a\n",
		"caf\xc3\xa9", "\xc3\xa9", "a=b", " a", "a ", "a:b", "$A", "a}",
		"$(secret.a)", "a\tb" };
	char name[NAMES_SECRET_MAX + 2];

	TAP_CHECK_INT(NAMES_SECRET_MAX, 128);
	for (size_t i = 0; i < TAP_COUNT(good); i++)
		TAP_CHECK(names_secret_valid(good[i]),
		    "expected \"%s\" to be accepted", good[i]);
	for (size_t i = 0; i < TAP_COUNT(bad); i++)
		TAP_CHECK(!names_secret_valid(bad[i]),
		    "expected \"%s\" to be refused", bad[i]);
	TAP_CHECK(!names_secret_valid(NULL), "expected NULL to be refused");
	memset(name, 'n', 128);
	name[128] = '\0';
	TAP_CHECK(names_secret_valid(name), "128 characters are accepted");
	name[127] = '-';
	TAP_CHECK(!names_secret_valid(name),
	    "a bad 128th character is refused");
	name[127] = '.';
	name[128] = '_';
	name[129] = '\0';
	TAP_CHECK(!names_secret_valid(name), "129 characters are refused");
}

static void
test_secret_span(void)
{
	static const struct {
		const char *s;
		size_t want;
	} cases[] = {
		{ "", 0 },
		{ "-a", 0 },
		{ "a-b", 1 },
		{ "GITHUB_TOKEN)", 12 },
		{ "a.b_C9}", 6 },
		{ "caf\xc3\xa9", 3 },
		{ "a b", 1 },
	};

	for (size_t i = 0; i < TAP_COUNT(cases); i++)
		TAP_CHECK(names_secret_span(cases[i].s) == cases[i].want,
		    "\"%s\": expected %zu, got %zu", cases[i].s, cases[i].want,
		    names_secret_span(cases[i].s));
}

/* A command and the name it should give; NULL: any valid name. */
struct argv_case {
	const char *argv[6];
	const char *want;
};

static const struct argv_case argv_cases[] = {
	{ { "npx", "-y", "@modelcontextprotocol/server-everything" },
	    "server-everything" },
	{ { "npx", "-y", "@scope/pkg@1.2.3" }, "pkg" },
	{ { "npx", "@scope/server-x@latest", "stdio" }, "server-x" },
	{ { "/usr/bin/npx", "--yes", "some-server" }, "some-server" },
	{ { "node", "/path/dist/index.js" }, NULL },
	{ { "/usr/bin/my-server", "--flag" }, "my-server" },
	{ { "my-server" }, "my-server" },
	{ { "python3", "-m", "mod" }, "mod" },
	{ { "uvx", "mcp-server-fetch" }, "mcp-server-fetch" },
	{ { "./my-tool.py" }, "my-tool" },
	{ { "node", "/x/server-foo/dist/index.js" }, "server-foo" },
	{ { "python3", "/opt/srv/weather.v2.py" }, "weather-v2" },
	{ { "npx" }, NULL },
	{ { "env", "A=1", "srv" }, "srv" },
};

static void
check_argv(const struct argv_case *c)
{
	char *name = names_from_argv(c->argv);
	const char *cmd = c->argv[0];

	TAP_CHECK(name != NULL && names_valid(name),
	    "%s ...: expected a valid name, got %s", cmd, tap_str_show(name));
	if (c->want != NULL)
		TAP_CHECK(tap_str_eq(name, c->want),
		    "%s ...: expected \"%s\", got \"%s\"", cmd, c->want,
		    tap_str_show(name));
	free(name);
}

static void
test_from_argv(void)
{
	for (size_t i = 0; i < TAP_COUNT(argv_cases); i++)
		check_argv(&argv_cases[i]);
}

static void
test_from_argv_nothing(void)
{
	const char *empty[] = { NULL };
	const char *unusable[] = { "...", NULL };
	const char *scope_only[] = { "npx", "-y", "@", NULL };
	char *name;

	TAP_CHECK(names_from_argv(NULL) == NULL, "expected NULL for NULL");
	TAP_CHECK(names_from_argv(empty) == NULL, "expected NULL for {}");
	name = names_from_argv(unusable);
	TAP_CHECK(name == NULL, "\"...\": expected NULL, got \"%s\"",
	    tap_str_show(name));
	free(name);
	name = names_from_argv(scope_only);
	TAP_CHECK(name == NULL || names_valid(name),
	    "\"npx -y @\": expected NULL or a valid name, got \"%s\"",
	    tap_str_show(name));
	free(name);
}

static void
test_from_argv_long(void)
{
	const char *argv[] = { N63 N63, NULL };
	char *name = names_from_argv(argv);

	/* An over-long program name is cut to a valid name, not refused. */
	TAP_CHECK(name != NULL && names_valid(name),
	    "expected a valid name, got %s", tap_str_show(name));
	free(name);
}

static void
test_handle_format(void)
{
	char *h;

	h = names_handle_format("everything", 3, "echo");
	TAP_CHECK_STR(h, "everything.3/echo");
	free(h);
	h = names_handle_format("s", UINT64_MAX, "a.b/c");
	TAP_CHECK_STR(h, "s.18446744073709551615/a.b/c");
	free(h);
}

/* Formats a handle, parses it back, and checks every part. */
static void
check_round_trip(const char *server, uint64_t gen, const char *tool)
{
	char *h = names_handle_format(server, gen, tool);
	char *got_server = NULL, *got_tool = NULL;
	uint64_t got_gen = 0;
	int r;

	TAP_REQUIRE(h != NULL, "expected a handle for %s", server);
	r = names_handle_parse(h, &got_server, &got_gen, &got_tool);
	TAP_CHECK(r == 0, "%s: expected 0, got %d", h, r);
	TAP_CHECK_STR(got_server, server);
	TAP_CHECK(got_gen == gen, "%s: expected generation %llu, got %llu", h,
	    (unsigned long long)gen, (unsigned long long)got_gen);
	TAP_CHECK_STR(got_tool, tool);
	free(got_server);
	free(got_tool);
	free(h);
}

static void
test_handle_round_trip(void)
{
	check_round_trip("everything", 3, "echo");
	check_round_trip("a", 0, "t");
	check_round_trip("srv-1_x", 42, "get-structured-content");
	check_round_trip("s", UINT64_MAX, "a.b/c.1/d");
	check_round_trip(N63, 7, "tool with spaces");
}

static const char *const bad_handles[] = {
	"",
	"x",
	"a/b",
	"a.b/",
	"a.1/",
	".1/x",
	"a./t",
	"a.1x/t",
	"a.x1/t",
	"a.-1/t",
	"a.+1/t",
	"a. 1/t",
	"a.99999999999999999999999/t",
	"a.18446744073709551616/t",
	"bad name.1/t",
	"a.b.1/t",
	"-a.1/t",
	"/a.1/t",
	"a.1",
	"a1/t",
};

static void
test_handle_parse_failures(void)
{
	for (size_t i = 0; i < TAP_COUNT(bad_handles); i++) {
		char *server = (char *)"untouched", *tool = server;
		uint64_t gen = 77;
		int r = names_handle_parse(bad_handles[i], &server, &gen,
		    &tool);

		TAP_CHECK(r == -EINVAL, "\"%s\": expected -EINVAL, got %d",
		    bad_handles[i], r);
		/* ret_ parameters are written only on success. */
		TAP_CHECK(strcmp(server, "untouched") == 0 && gen == 77 &&
			strcmp(tool, "untouched") == 0,
		    "\"%s\": expected the outputs untouched", bad_handles[i]);
	}
	TAP_CHECK_INT(names_handle_parse(NULL, NULL, NULL, NULL), -EINVAL);
}

struct image_case {
	const char *in;
	const char *out; /* NULL: refused */
};

static const struct image_case image_cases[] = {
	{ "alpine", "alpine:latest" },
	{ "alpine:3.20", "alpine:3.20" },
	{ "mcpd-test/http", "mcpd-test/http:latest" },
	{ "ghcr.io/github/github-mcp-server",
	    "ghcr.io/github/github-mcp-server:latest" },
	{ "localhost:5000/img", "localhost:5000/img:latest" },
	{ "localhost:5000/img:1", "localhost:5000/img:1" },
	{ "registry.example.com:443/a/b_c__d-e.f:v1.2-rc_3",
	    "registry.example.com:443/a/b_c__d-e.f:v1.2-rc_3" },
	{ "img@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    "img@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" },
	{ "img:1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    "img:1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" },
	{ "", NULL },
	{ " alpine", NULL },
	{ "alpine ", NULL },
	{ "alp ine", NULL },
	{ "Alpine", NULL },
	{ "alpine:", NULL },
	{ "alpine: 3", NULL },
	{ "alpine:-x", NULL },
	{ "alpine:a/b", NULL },
	{ "a//b", NULL },
	{ "/a", NULL },
	{ "a/", NULL },
	{ "a..b", NULL },
	{ "a-", NULL },
	{ "img@sha256:xyz", NULL },
	{ "img@", NULL },
	{ "-rm", NULL },
	{ "--privileged", NULL },
};

static void
test_image_normalize(void)
{
	for (size_t i = 0; i < TAP_COUNT(image_cases); i++) {
		const struct image_case *c = &image_cases[i];
		char *out = (char *)"untouched", *cause = NULL;
		int r = names_image_normalize(c->in, &out, &cause);

		if (c->out == NULL) {
			TAP_CHECK(r == -EINVAL && cause != NULL &&
				strstr(cause, "not an image reference") != NULL,
			    "\"%s\": expected a refusal, got %d (%s)", c->in, r,
			    cause != NULL ? cause : "no cause");
			TAP_CHECK(strcmp(out, "untouched") == 0,
			    "\"%s\": output written on failure", c->in);
		} else {
			TAP_CHECK(r == 0 && strcmp(out, c->out) == 0,
			    "\"%s\": expected \"%s\", got %d \"%s\"", c->in,
			    c->out, r, r == 0 ? out : "");
			if (r == 0)
				free(out);
		}
		free(cause);
	}
}

/*
 * The 255-character bound is on the name, as Docker's: a normalized
 * reference normalizes again (mcpctl import sends the normalized form to
 * mcpd/load). Found by tests/fuzz/fuzz-names.
 */
static void
test_image_name_length(void)
{
	char name[256 + 1 + 128 + 1], *out = NULL, *again = NULL;

	/* Each call below writes out only on success. */

	memset(name, 'a', 255);
	name[255] = '\0';
	TAP_REQUIRE(names_image_normalize(name, &out, NULL) == 0,
	    "a 255-character name is accepted");
	TAP_CHECK_INT(strlen(out), 255 + strlen(":latest"));
	TAP_CHECK(names_image_normalize(out, &again, NULL) == 0 &&
		strcmp(again, out) == 0,
	    "its normal form normalizes to itself");
	free(out);
	free(again);
	out = NULL;
	name[255] = ':';
	memset(name + 256, 't', 128);
	name[384] = '\0';
	TAP_CHECK(names_image_normalize(name, &out, NULL) == 0,
	    "a 255-character name and a 128-character tag are accepted");
	free(out);
	memset(name, 'a', 256);
	name[256] = '\0';
	TAP_CHECK(names_image_normalize(name, &out, NULL) == -EINVAL,
	    "a 256-character name is refused");
}

static void
test_from_image(void)
{
	const char *cases[][2] = {
		{ "mcpd-test/http:latest", "http" },
		{ "ghcr.io/github/github-mcp-server:1", "github-mcp-server" },
		{ "localhost:5000/x/server-foo@sha256:00", "server-foo" },
		{ "alpine:latest", "alpine" },
	};

	for (size_t i = 0; i < TAP_COUNT(cases); i++) {
		char *name = names_from_image(cases[i][0]);

		TAP_CHECK(name != NULL && strcmp(name, cases[i][1]) == 0,
		    "\"%s\": expected \"%s\", got \"%s\"", cases[i][0],
		    cases[i][1], name != NULL ? name : "(null)");
		free(name);
	}
}

static const struct tap_test tests[] = {
	{ "image references: checked, :latest made explicit",
	    test_image_normalize },
	{ "the length bound is on the name", test_image_name_length },
	{ "names_from_image", test_from_image },
	{ "names_valid accepts and refuses", test_valid },
	{ "names_secret_valid: [a-zA-Z0-9_.]{1,128}", test_secret_valid },
	{ "names_secret_span: the run of secret-name characters",
	    test_secret_span },
	{ "names_from_argv finds the package or program", test_from_argv },
	{ "names_from_argv gives NULL when nothing is usable",
	    test_from_argv_nothing },
	{ "names_from_argv cuts an over-long name", test_from_argv_long },
	{ "handle format", test_handle_format },
	{ "handle format and parse round trip", test_handle_round_trip },
	{ "handle parse refuses what is not a handle",
	    test_handle_parse_failures },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
