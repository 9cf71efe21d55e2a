/* SPDX-License-Identifier: ISC */
/* The pure rules of OAuth discovery and choice, apart from any I/O. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oauth-int.h"
#include "url.h"

/* url's origin and its path without a trailing "/" (both new), or -1. */
static int
oauth_rules_split(const char *text, char **ret_origin, char **ret_path)
{
	struct url u;
	size_t len;

	if (text == NULL || xenomem(url_parse(text, &u, NULL)) < 0)
		return -1;
	*ret_origin = xnonnull(url_origin(&u));
	*ret_path = xstrdup(u.path);
	len = strlen(*ret_path);
	while (len > 0 && (*ret_path)[len - 1] == '/')
		(*ret_path)[--len] = '\0';
	url_free(&u);
	return 0;
}

static void
oauth_rules_add(json_t *list, const char *a, const char *b, const char *c)
{
	char *url;

	xasprintf(&url, "%s%s%s", a, b, c);
	json_array_append_new(list, json_string(url));
	free(url);
}

json_t *
oauth_rules_prm_urls(const char *server_url)
{
	json_t *list = xjson(json_array());
	char *origin, *path;

	if (oauth_rules_split(server_url, &origin, &path) < 0)
		return list;
	/* RFC 9728 3.1: at the path of the endpoint first, then the root. */
	if (path[0] != '\0')
		oauth_rules_add(list, origin,
		    "/.well-known/oauth-protected-resource", path);
	oauth_rules_add(list, origin, "/.well-known/oauth-protected-resource",
	    "");
	free(origin);
	free(path);
	return list;
}

json_t *
oauth_rules_as_urls(const char *issuer)
{
	json_t *list = xjson(json_array());
	char *origin, *path, *base;

	if (oauth_rules_split(issuer, &origin, &path) < 0)
		return list;
	if (path[0] != '\0') {
		oauth_rules_add(list, origin,
		    "/.well-known/oauth-authorization-server", path);
		oauth_rules_add(list, origin,
		    "/.well-known/openid-configuration", path);
		xasprintf(&base, "%s%s", origin, path);
		oauth_rules_add(list, base, "/.well-known/openid-configuration",
		    "");
		free(base);
	} else {
		oauth_rules_add(list, origin,
		    "/.well-known/oauth-authorization-server", "");
		oauth_rules_add(list, origin,
		    "/.well-known/openid-configuration", "");
	}
	free(origin);
	free(path);
	return list;
}

bool
oauth_rules_resource_matches(const char *resource, const char *server_url)
{
	struct url r, s;
	char *ro = NULL, *so = NULL;
	size_t len;
	bool ok = false;

	if (resource == NULL || xenomem(url_parse(resource, &r, NULL)) < 0)
		return false;
	if (xenomem(url_parse(server_url, &s, NULL)) < 0) {
		url_free(&r);
		return false;
	}
	ro = xnonnull(url_origin(&r));
	so = xnonnull(url_origin(&s));
	len = strlen(r.path);
	while (len > 0 && r.path[len - 1] == '/')
		len--;
	if (!r.has_fragment && !r.has_userinfo && strcmp(ro, so) == 0) {
		if (r.query != NULL)
			ok = strcmp(r.path, s.path) == 0 && s.query != NULL &&
			    strcmp(r.query, s.query) == 0;
		else
			ok = strncmp(r.path, s.path, len) == 0 &&
			    (s.path[len] == '\0' || s.path[len] == '/');
	}
	free(ro);
	free(so);
	url_free(&r);
	url_free(&s);
	return ok;
}

char *
oauth_rules_default_resource(const char *server_url)
{
	struct url u;
	char *text;

	if (xenomem(url_parse(server_url, &u, NULL)) < 0)
		return xstrdup(server_url);
	/* The spec prefers the form without a trailing slash at the root. */
	text = strcmp(u.path, "/") == 0 && u.query == NULL ?
	    xnonnull(url_origin(&u)) :
	    xnonnull(url_canonical(&u));
	url_free(&u);
	return text;
}

char *
oauth_rules_origin(const char *url)
{
	struct url u;
	char *text;

	if (xenomem(url_parse(url, &u, NULL)) < 0)
		return NULL;
	text = xnonnull(url_origin(&u));
	url_free(&u);
	return text;
}

bool
oauth_rules_scope_has(const char *set, const char *scope)
{
	size_t n = strlen(scope);

	for (const char *p = set; p != NULL && *p != '\0';) {
		size_t len = strcspn(p, " ");

		if (len == n && n > 0 && strncmp(p, scope, n) == 0)
			return true;
		p += len;
		while (*p == ' ')
			p++;
	}
	return false;
}

bool
oauth_rules_scope_covers(const char *set, const char *wanted)
{
	char *copy, *save = NULL, *s;
	bool ok = true;

	if (wanted == NULL)
		return true;
	copy = xstrdup(wanted);
	for (s = strtok_r(copy, " ", &save); s != NULL && ok;
	     s = strtok_r(NULL, " ", &save))
		ok = oauth_rules_scope_has(set, s);
	free(copy);
	return ok;
}

char *
oauth_rules_scope_union(const char *a, const char *b)
{
	char *out = NULL, *copy, *save = NULL, *s, *joined;
	const char *parts[2] = { a, b };

	for (size_t i = 0; i < 2; i++) {
		if (parts[i] == NULL)
			continue;
		copy = xstrdup(parts[i]);
		for (s = strtok_r(copy, " ", &save); s != NULL;
		     s = strtok_r(NULL, " ", &save)) {
			if (oauth_rules_scope_has(out, s))
				continue;
			xasprintf(&joined, "%s%s%s", out != NULL ? out : "",
			    out != NULL ? " " : "", s);
			free(out);
			out = joined;
		}
		free(copy);
	}
	return out;
}

int
oauth_rules_check_iss(const char *recorded, bool is_supported, const char *iss,
    const char **why)
{
	if (iss != NULL && recorded != NULL && strcmp(iss, recorded) != 0) {
		*why =
		    "the authorization response names another issuer (iss) than the authorization server's; refused (RFC 9207: a mix-up attack, or a misconfigured server)";
		return -EACCES;
	}
	if (iss == NULL && is_supported) {
		*why =
		    "the authorization server says it sends iss (authorization_response_iss_parameter_supported) but its response has none; refused (RFC 9207)";
		return -EACCES;
	}
	return 0;
}

bool
oauth_rules_lists(const json_t *list, const char *value)
{
	size_t i;
	json_t *v;

	json_array_foreach((json_t *)(uintptr_t)list, i, v)
		if (json_is_string(v) &&
		    strcmp(json_string_value(v), value) == 0)
			return true;
	return false;
}

const char *
oauth_rules_auth_method(const json_t *supported, bool has_secret)
{
	static const char *const with_secret[] = { "client_secret_basic",
		"client_secret_post", "none", NULL };

	/* RFC 8414 2: without the list, client_secret_basic is the default. */
	if (!json_is_array(supported))
		return has_secret ? "client_secret_basic" : NULL;
	if (!has_secret)
		return oauth_rules_lists(supported, "none") ? "none" : NULL;
	for (size_t i = 0; with_secret[i] != NULL; i++)
		if (oauth_rules_lists(supported, with_secret[i]))
			return with_secret[i];
	return NULL;
}
