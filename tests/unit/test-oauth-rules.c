/* SPDX-License-Identifier: ISC */
/* Unit tests of daemon/oauth-rules.c: URLs, resources, scopes, iss, auth. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oauth-int.h"
#include "tap.h"

/* The list as one string, "a b c". */
static char *
joined(json_t *list)
{
	char *out = NULL, *next;
	size_t i;
	json_t *v;

	json_array_foreach(list, i, v) {
		if (asprintf(&next, "%s%s%s", out != NULL ? out : "",
			out != NULL ? " " : "", json_string_value(v)) < 0)
			abort();
		free(out);
		out = next;
	}
	json_decref(list);
	return out != NULL ? out : strdup("");
}

#define CHECK_LIST(expr, want)               \
	do {                                 \
		char *got_ = joined(expr);   \
		TAP_CHECK_STR(got_, (want)); \
		free(got_);                  \
	} while (0)

static void
test_prm_urls(void)
{
	/* RFC 9728 3.1, then the root (MCP 2025-11-25). */
	CHECK_LIST(oauth_rules_prm_urls("https://mcp.example.com/mcp"),
	    "https://mcp.example.com/.well-known/oauth-protected-resource/mcp https://mcp.example.com/.well-known/oauth-protected-resource");
	CHECK_LIST(oauth_rules_prm_urls("http://localhost:8080/a/b/?x=1"),
	    "http://localhost:8080/.well-known/oauth-protected-resource/a/b http://localhost:8080/.well-known/oauth-protected-resource");
	CHECK_LIST(oauth_rules_prm_urls("https://MCP.example.com:443/"),
	    "https://mcp.example.com/.well-known/oauth-protected-resource");
	CHECK_LIST(oauth_rules_prm_urls("not a url"), "");
}

static void
test_as_urls(void)
{
	/* The spec's order, with and without a path. */
	CHECK_LIST(oauth_rules_as_urls("https://auth.example.com/tenant1"),
	    "https://auth.example.com/.well-known/oauth-authorization-server/tenant1 https://auth.example.com/.well-known/openid-configuration/tenant1 https://auth.example.com/tenant1/.well-known/openid-configuration");
	CHECK_LIST(oauth_rules_as_urls("https://auth.example.com"),
	    "https://auth.example.com/.well-known/oauth-authorization-server https://auth.example.com/.well-known/openid-configuration");
}

static void
test_resource(void)
{
	const char *server = "https://mcp.example.com/api/mcp";

	TAP_CHECK(oauth_rules_resource_matches(
		      "https://mcp.example.com/api/mcp", server),
	    "the same URL");
	TAP_CHECK(oauth_rules_resource_matches("https://mcp.example.com",
		      server),
	    "the origin");
	TAP_CHECK(oauth_rules_resource_matches("https://mcp.example.com/api/",
		      server),
	    "a parent path");
	TAP_CHECK(oauth_rules_resource_matches("HTTPS://MCP.example.com/api",
		      server),
	    "case of scheme and host");
	TAP_CHECK(!oauth_rules_resource_matches("https://mcp.example.com/ap",
		      server),
	    "not on a / boundary");
	TAP_CHECK(!oauth_rules_resource_matches("https://evil.example.com/mcp",
		      "https://mcp.example.com/mcp"),
	    "another host");
	TAP_CHECK(!oauth_rules_resource_matches(
		      "http://mcp.example.com/api/mcp", server),
	    "another scheme");
	TAP_CHECK(!oauth_rules_resource_matches(
		      "https://mcp.example.com:444/api/mcp", server),
	    "another port");
	TAP_CHECK(!oauth_rules_resource_matches(
		      "https://mcp.example.com/api/mcp#x", server),
	    "a fragment");
	TAP_CHECK(!oauth_rules_resource_matches(NULL, server), "none");
}

static void
test_default_resource(void)
{
	char *r = oauth_rules_default_resource("https://mcp.example.com/");

	TAP_CHECK_STR(r, "https://mcp.example.com");
	free(r);
	r = oauth_rules_default_resource("https://MCP.example.com/mcp");
	TAP_CHECK_STR(r, "https://mcp.example.com/mcp");
	free(r);
	r = oauth_rules_origin("http://localhost:99/x/y");
	TAP_CHECK_STR(r, "http://localhost:99");
	free(r);
}

static void
test_scopes(void)
{
	char *u = oauth_rules_scope_union("mcp:basic", "mcp:write mcp:basic");

	TAP_CHECK_STR(u, "mcp:basic mcp:write");
	free(u);
	u = oauth_rules_scope_union(NULL, NULL);
	TAP_CHECK(u == NULL, "nothing: no scope parameter");
	TAP_CHECK(oauth_rules_scope_has("a  b c", "b"), "b in a b c");
	TAP_CHECK(!oauth_rules_scope_has("ab c", "b"), "b not in ab c");
	TAP_CHECK(oauth_rules_scope_covers("a b c", "c a"), "covered");
	TAP_CHECK(!oauth_rules_scope_covers("a b", "a d"), "d missing");
	TAP_CHECK(!oauth_rules_scope_covers(NULL, "a"), "nothing granted");
}

static void
test_iss(void)
{
	const char *rec = "https://auth.example.com", *why = NULL;

	/* The 2026-07-28 table, and no normalization. */
	TAP_CHECK_INT(oauth_rules_check_iss(rec, true, rec, &why), 0);
	TAP_CHECK_INT(oauth_rules_check_iss(rec, true, NULL, &why), -EACCES);
	TAP_CHECK_INT(oauth_rules_check_iss(rec, false, "https://evil", &why),
	    -EACCES);
	TAP_CHECK_INT(oauth_rules_check_iss(rec, false, NULL, &why), 0);
	TAP_CHECK_INT(oauth_rules_check_iss(rec, true,
			  "https://auth.example.com/", &why),
	    -EACCES);
	TAP_CHECK_INT(oauth_rules_check_iss(rec, true,
			  "https://AUTH.example.com", &why),
	    -EACCES);
}

static void
test_auth_method(void)
{
	json_t *basic = json_pack("[s]", "client_secret_basic");
	json_t *post = json_pack("[s]", "client_secret_post");
	json_t *none = json_pack("[s]", "none");
	json_t *all = json_pack("[s,s,s]", "none", "client_secret_post",
	    "client_secret_basic");

	TAP_CHECK_STR(oauth_rules_auth_method(basic, true),
	    "client_secret_basic");
	TAP_CHECK_STR(oauth_rules_auth_method(post, true),
	    "client_secret_post");
	TAP_CHECK_STR(oauth_rules_auth_method(none, false), "none");
	TAP_CHECK_STR(oauth_rules_auth_method(all, false), "none");
	TAP_CHECK_STR(oauth_rules_auth_method(all, true),
	    "client_secret_basic");
	TAP_CHECK(oauth_rules_auth_method(basic, false) == NULL,
	    "no secret for basic");
	/* RFC 8414 2: absent means client_secret_basic. */
	TAP_CHECK_STR(oauth_rules_auth_method(NULL, true),
	    "client_secret_basic");
	json_decref(basic);
	json_decref(post);
	json_decref(none);
	json_decref(all);
}

static const struct tap_test tests[] = {
	{ "protected resource metadata URLs", test_prm_urls },
	{ "authorization server metadata URLs", test_as_urls },
	{ "the resource names the server", test_resource },
	{ "the resource without metadata", test_default_resource },
	{ "scope sets", test_scopes },
	{ "RFC 9207 iss", test_iss },
	{ "token endpoint authentication", test_auth_method },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
