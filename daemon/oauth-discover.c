/* SPDX-License-Identifier: ISC */
/* Discovery: protected resource and authorization server metadata. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"
#include "oauth-int.h"

static void oauth_discover_next_prm(struct oauth_flow *);
static void oauth_discover_next_as(struct oauth_flow *);

/* ---- protected resource metadata (RFC 9728) ---- */

static void
oauth_discover_prm_answer(void *arg, int err, const char *why,
    const struct oauth_response *r)
{
	struct oauth_flow *f = arg;
	const char *url = json_string_value(json_array_get(f->urls,
	    f->next - 1));
	const char *resource = oauth_str(r != NULL ? r->json : NULL,
	    "resource");
	json_t *servers, *scopes, *v;
	const char *pick = NULL, *want;
	size_t i;

	f->fetch = NULL;
	if (err != 0 || r->status != 200 || resource == NULL) {
		if (err != 0)
			log_server(LOG_INFO, f->o->name,
			    "no protected resource metadata at %s: %s", url,
			    why);
		oauth_discover_next_prm(f);
		return;
	}
	if (!oauth_rules_resource_matches(resource, f->o->url)) {
		oauth_flow_fail(f, OAUTH_FAILED,
		    "the protected resource metadata at %s is for %.300s, not for this server (%s); refused (RFC 9728 3.3)",
		    url, resource, f->o->url);
		return;
	}
	servers = json_object_get(r->json, "authorization_servers");
	want = oauth_str(f->o->client, "issuer");
	json_array_foreach(servers, i, v)
		if (json_is_string(v) &&
		    (pick == NULL ||
			(want != NULL &&
			    strcmp(json_string_value(v), want) == 0)))
			pick = json_string_value(v);
	if (pick == NULL) {
		oauth_flow_fail(f, OAUTH_FAILED,
		    "the protected resource metadata at %s names no authorization server",
		    url);
		return;
	}
	f->resource = xstrdup(resource);
	f->issuer = xstrdup(pick);
	scopes = json_object_get(r->json, "scopes_supported");
	json_array_foreach(scopes, i, v) {
		char *joined;

		if (!json_is_string(v) || json_string_length(v) == 0)
			continue;
		joined = oauth_rules_scope_union(f->prm_scopes,
		    json_string_value(v));
		free(f->prm_scopes);
		f->prm_scopes = joined;
	}
	json_decref(f->urls);
	f->urls = oauth_rules_as_urls(f->issuer);
	f->next = 0;
	f->step = OAUTH_STEP_AS;
	oauth_discover_next_as(f);
}

/*
 * Without resource metadata, the 2025-03-26 rules: the server's origin
 * is the authorization server, its metadata at the root or else the
 * default endpoints /authorize, /token and /register.
 */
static void
oauth_discover_legacy(struct oauth_flow *f)
{
	char *origin = oauth_rules_origin(f->o->url);

	f->is_legacy = true;
	f->resource = oauth_rules_default_resource(f->o->url);
	f->issuer = origin;
	json_decref(f->urls);
	f->urls = oauth_rules_as_urls(origin);
	f->next = 0;
	f->step = OAUTH_STEP_AS;
	oauth_discover_next_as(f);
}

static void
oauth_discover_next_prm(struct oauth_flow *f)
{
	const char *url = json_string_value(json_array_get(f->urls, f->next));

	if (url == NULL) {
		oauth_discover_legacy(f);
		return;
	}
	f->next++;
	f->fetch = oauth_fetch_start(url, f->o->allow_local, NULL, 0, NULL,
	    NULL, oauth_discover_prm_answer, f);
}

void
oauth_discover(struct oauth_flow *f)
{
	json_t *urls = oauth_rules_prm_urls(f->o->url), *v;
	size_t i;

	f->step = OAUTH_STEP_PRM;
	oauth_set_state(f->o, OAUTH_DISCOVERING);
	f->urls = xjson(json_array());
	if (f->resource_metadata != NULL)
		json_array_append_new(f->urls,
		    json_string(f->resource_metadata));
	json_array_foreach(urls, i, v)
		if (f->resource_metadata == NULL ||
		    strcmp(json_string_value(v), f->resource_metadata) != 0)
			json_array_append(f->urls, v);
	json_decref(urls);
	f->next = 0;
	oauth_discover_next_prm(f);
}

/* ---- authorization server metadata (RFC 8414, OpenID discovery) ---- */

/* Checks a metadata document; NULL when usable, else why (new). */
static char *
oauth_discover_check_as(struct oauth_flow *f, const char *url, const json_t *md)
{
	const char *issuer = oauth_str(md, "issuer");
	const json_t *types = json_object_get(md, "response_types_supported");
	char *why = NULL;

	if (issuer == NULL || strcmp(issuer, f->issuer) != 0)
		xasprintf(&why,
		    "the authorization server metadata at %s names the issuer %.300s, not %s; it is not used (RFC 8414 3.3)",
		    url, issuer != NULL ? issuer : "(none)", f->issuer);
	else if (oauth_str(md, "authorization_endpoint") == NULL ||
	    oauth_str(md, "token_endpoint") == NULL)
		xasprintf(&why,
		    "the authorization server metadata at %s lacks authorization_endpoint or token_endpoint",
		    url);
	else if (json_is_array(types) && !oauth_rules_lists(types, "code"))
		xasprintf(&why,
		    "the authorization server at %s does not offer the authorization code flow",
		    f->issuer);
	else if (!oauth_rules_lists(json_object_get(md,
					"code_challenge_methods_supported"),
		     "S256"))
		xasprintf(&why,
		    "the authorization server at %s does not list PKCE with S256 (code_challenge_methods_supported); mcpd refuses to go on without it",
		    f->issuer);
	return why;
}

static void
oauth_discover_as_answer(void *arg, int err, const char *why,
    const struct oauth_response *r)
{
	struct oauth_flow *f = arg;
	const char *url = json_string_value(json_array_get(f->urls,
	    f->next - 1));
	char *bad;

	f->fetch = NULL;
	if (err == -EACCES || err == -EPERM) {
		/* A policy refusal or a redirect ends it: never around it. */
		oauth_flow_fail(f, OAUTH_FAILED, "%s", why);
		return;
	}
	if (err != 0 || r->status != 200 || r->json == NULL) {
		oauth_discover_next_as(f);
		return;
	}
	if ((bad = oauth_discover_check_as(f, url, r->json)) != NULL) {
		log_server(LOG_WARNING, f->o->name, "%s", bad);
		free(f->refused);
		f->refused = bad;
		oauth_discover_next_as(f);
		return;
	}
	f->as = json_deep_copy(r->json);
	f->iss_supported = json_is_true(json_object_get(r->json,
	    "authorization_response_iss_parameter_supported"));
	oauth_flow_have_as(f);
}

static void
oauth_discover_set_endpoint(json_t *as, const char *key, const char *origin,
    const char *path)
{
	char *url;

	xasprintf(&url, "%s%s", origin, path);
	json_object_set_new(as, key, json_string(url));
	free(url);
}

static void
oauth_discover_next_as(struct oauth_flow *f)
{
	const char *url = json_string_value(json_array_get(f->urls, f->next));
	char *origin;

	if (url != NULL) {
		f->next++;
		f->fetch = oauth_fetch_start(url, f->o->allow_local, NULL, 0,
		    NULL, NULL, oauth_discover_as_answer, f);
		return;
	}
	if (!f->is_legacy) {
		oauth_flow_fail(f, OAUTH_FAILED, "%s",
		    f->refused != NULL ?
			f->refused :
			"no authorization server metadata was found at the authorization server the protected resource names");
		return;
	}
	if (f->refused != NULL) {
		oauth_flow_fail(f, OAUTH_FAILED, "%s", f->refused);
		return;
	}
	/* 2025-03-26: the default endpoints at the server's origin. */
	origin = f->issuer;
	f->issuer = NULL;
	f->as = json_object();
	oauth_discover_set_endpoint(f->as, "authorization_endpoint", origin,
	    "/authorize");
	oauth_discover_set_endpoint(f->as, "token_endpoint", origin, "/token");
	oauth_discover_set_endpoint(f->as, "registration_endpoint", origin,
	    "/register");
	log_server(LOG_INFO, f->o->name,
	    "no authorization metadata: using the default endpoints of %s",
	    origin);
	free(origin);
	oauth_flow_have_as(f);
}
