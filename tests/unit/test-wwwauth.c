/* SPDX-License-Identifier: ISC */
/* Unit tests of common/wwwauth.c: the Bearer challenge's parameters. */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "wwwauth.h"

/* The value of name in the Bearer params of header, or "(none)". */
static char *
param(const char *header, const char *name)
{
	json_t *p = wwwauth_params(header, "Bearer");
	const char *v;
	char *out;

	if (p == NULL)
		return strdup("(no challenge)");
	v = json_string_value(json_object_get(p, name));
	out = strdup(v != NULL ? v : "(none)");
	json_decref(p);
	return out;
}

#define CHECK_PARAM(header, name, want)               \
	do {                                          \
		char *got_ = param((header), (name)); \
		TAP_CHECK_STR(got_, (want));          \
		free(got_);                           \
	} while (0)

static void
test_sdk_header(void)
{
	/* What the TypeScript SDK's requireBearerAuth sends. */
	const char *h =
	    "Bearer error=\"invalid_token\", error_description=\"Missing Authorization header\", scope=\"mcp:basic mcp:write\", resource_metadata=\"http://localhost:1234/.well-known/oauth-protected-resource/mcp\"";

	CHECK_PARAM(h, "error", "invalid_token");
	CHECK_PARAM(h, "error_description", "Missing Authorization header");
	CHECK_PARAM(h, "scope", "mcp:basic mcp:write");
	CHECK_PARAM(h, "resource_metadata",
	    "http://localhost:1234/.well-known/oauth-protected-resource/mcp");
}

static void
test_grammar(void)
{
	/* Case of the scheme and names, tokens, BWS, escapes. */
	CHECK_PARAM("bearer Scope=files:read", "scope", "files:read");
	CHECK_PARAM("BEARER realm = \"x\" , error=insufficient_scope", "error",
	    "insufficient_scope");
	CHECK_PARAM("Bearer error_description=\"a \\\"quoted\\\" \\\\ text\"",
	    "error_description", "a \"quoted\" \\ text");
	CHECK_PARAM("Bearer", "scope", "(none)");
	CHECK_PARAM("Bearer a=1, a=2", "a", "1");
}

static void
test_several_challenges(void)
{
	/* The Bearer one among others, token68 included. */
	CHECK_PARAM("Basic realm=\"r\", Bearer scope=\"x y\", DPoP algs=ES256",
	    "scope", "x y");
	CHECK_PARAM("Basic dXNlcjpwYXNz==, Bearer realm=\"api\"", "realm",
	    "api");
	CHECK_PARAM("Negotiate abc, Bearer error=invalid_token", "error",
	    "invalid_token");
	/* The params of another scheme are not Bearer's. */
	CHECK_PARAM("DPoP scope=\"a\", Bearer", "scope", "(none)");
	CHECK_PARAM("Basic realm=\"r\"", "realm", "(no challenge)");
	CHECK_PARAM("", "realm", "(no challenge)");
}

static void
test_malformed(void)
{
	/* An unterminated quote: what came before it stays. */
	CHECK_PARAM("Bearer scope=\"a\", error=\"oops", "scope", "a");
	CHECK_PARAM("Bearer scope=\"a\", error=\"oops", "error", "(none)");
	TAP_CHECK(wwwauth_params(NULL, "Bearer") == NULL, "NULL header");
}

static const struct tap_test tests[] = {
	{ "the SDK's header", test_sdk_header },
	{ "RFC 9110 auth-param grammar", test_grammar },
	{ "several challenges, token68", test_several_challenges },
	{ "malformed headers", test_malformed },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
