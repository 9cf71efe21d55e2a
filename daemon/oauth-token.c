/* SPDX-License-Identifier: ISC */
/* Requests to the token endpoint (codes, refreshes) and registration. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "form.h"
#include "jsonutil.h"
#include "jsonwipe.h"
#include "log.h"
#include "oauth-int.h"

struct oauth_token_req {
	struct oauth_fetch *fetch;
	char *endpoint;
	json_t *methods; /* registration: the server's auth methods */
	oauth_tokens_fn *tokens_cb;
	oauth_registered_fn *registered_cb;
	void *arg;
};

void
oauth_client_clear(struct oauth_client *c)
{
	if (c->secret != NULL)
		explicit_bzero(c->secret, strlen(c->secret));
	free(c->id);
	free(c->secret);
	free(c->method);
	free(c->kind);
	memset(c, 0, sizeof *c);
}

void
oauth_client_from_json(const json_t *obj, struct oauth_client *c)
{
	memset(c, 0, sizeof *c);
	c->id = jsonutil_string_dup(obj, "id");
	c->secret = jsonutil_string_dup(obj, "secret");
	c->method = jsonutil_string_dup(obj, "method");
	c->kind = jsonutil_string_dup(obj, "kind");
}

json_t *
oauth_client_to_json(const struct oauth_client *c)
{
	json_t *obj = json_pack("{s:s, s:s, s:s}", "id", c->id, "method",
	    c->method != NULL ? c->method : "none", "kind",
	    c->kind != NULL ? c->kind : "dynamic");

	if (c->secret != NULL)
		json_object_set_new(obj, "secret", json_string(c->secret));
	return xjson(obj);
}

/*
 * What an error answer says, fit to show: its OAuth error code and
 * description, without control characters (a server's text).
 */
static void
oauth_token_describe(const struct oauth_response *r, char *out, size_t size)
{
	const char *error = json_string_value(json_object_get(r->json,
	    "error"));
	const char *desc = json_string_value(json_object_get(r->json,
	    "error_description"));
	size_t n;

	if (error != NULL)
		snprintf(out, size, "HTTP %d, %.64s%s%.200s%s", r->status,
		    error, desc != NULL ? " (" : "", desc != NULL ? desc : "",
		    desc != NULL ? ")" : "");
	else
		snprintf(out, size, "HTTP %d", r->status);
	for (n = 0; out[n] != '\0'; n++)
		if ((unsigned char)out[n] < 0x20 || out[n] == 0x7f)
			out[n] = ' ';
}

static void
oauth_token_req_free(struct oauth_token_req *t)
{
	oauth_fetch_cancel(t->fetch);
	json_decref(t->methods);
	free(t->endpoint);
	free(t);
}

/* A token answer (RFC 6749 5.1) into {access_token, ...}, or NULL. */
static json_t *
oauth_token_parse(const json_t *body, const char **why)
{
	const char *access = json_string_value(json_object_get(body,
	    "access_token"));
	const char *type = json_string_value(json_object_get(body,
	    "token_type"));
	const json_t *expires = json_object_get(body, "expires_in");
	const json_t *refresh = json_object_get(body, "refresh_token");
	const json_t *scope = json_object_get(body, "scope");
	json_t *tokens;

	if (access == NULL || access[0] == '\0') {
		*why = "its answer has no access_token";
		return NULL;
	}
	if (type == NULL || strcasecmp(type, "bearer") != 0) {
		*why = "its answer's token_type is not Bearer";
		return NULL;
	}
	for (const char *c = access; *c != '\0'; c++)
		if ((unsigned char)*c <= 0x20 || *c == 0x7f) {
			*why = "its access_token cannot go in a header";
			return NULL;
		}
	tokens = xjson(json_pack("{s:s, s:s}", "access_token", access,
	    "token_type", "Bearer"));
	if (json_is_integer(expires) && json_integer_value(expires) > 0) {
		json_object_set_new(tokens, "expires_at",
		    json_integer((json_int_t)time(NULL) +
			json_integer_value(expires)));
		json_object_set(tokens, "expires_in",
		    (json_t *)(uintptr_t)expires);
	}
	if (json_is_string(refresh) && json_string_length(refresh) > 0)
		json_object_set(tokens, "refresh_token",
		    (json_t *)(uintptr_t)refresh);
	if (json_is_string(scope))
		json_object_set(tokens, "scope", (json_t *)(uintptr_t)scope);
	return tokens;
}

static void
oauth_token_answered(void *arg, int err, const char *why,
    const struct oauth_response *r)
{
	struct oauth_token_req *t = arg;
	const char *bad = NULL;
	char text[512];
	json_t *tokens;

	t->fetch = NULL;
	if (err != 0) {
		t->tokens_cb(t->arg, err, why, NULL);
	} else if (r->status != 200) {
		char desc[320];

		oauth_token_describe(r, desc, sizeof desc);
		snprintf(text, sizeof text, "the token endpoint %s refused: %s",
		    t->endpoint, desc);
		t->tokens_cb(t->arg, -EACCES, text, NULL);
	} else if (r->json == NULL ||
	    (tokens = oauth_token_parse(r->json, &bad)) == NULL) {
		snprintf(text, sizeof text,
		    "the token endpoint %s answered something unusable: %s",
		    t->endpoint, bad != NULL ? bad : "not a JSON object");
		t->tokens_cb(t->arg, -EPROTO, text, NULL);
	} else
		t->tokens_cb(t->arg, 0, NULL, tokens);
	oauth_token_req_free(t);
}

/* RFC 6749 2.3.1: the id and secret form-encoded, then Base64. */
static char *
oauth_token_basic(const struct oauth_client *c)
{
	char *id = xnonnull(form_encode(c->id));
	char *secret = xnonnull(form_encode(c->secret));
	char *pair, *b64, *header;
	size_t len, size;

	xasprintf(&pair, "%s:%s", id, secret);
	len = strlen(pair);
	size = sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL);
	b64 = xmalloc(size);
	sodium_bin2base64(b64, size, (const unsigned char *)pair, len,
	    sodium_base64_VARIANT_ORIGINAL);
	xasprintf(&header, "Basic %s", b64);
	explicit_bzero(pair, len);
	explicit_bzero(b64, strlen(b64));
	explicit_bzero(secret, strlen(secret));
	free(pair);
	free(b64);
	free(id);
	free(secret);
	return header;
}

struct oauth_token_req *
oauth_token_request(const char *endpoint, bool allow_local,
    const struct oauth_client *c, char *form, oauth_tokens_fn *cb, void *arg)
{
	struct oauth_token_req *t = xcalloc(1, sizeof *t);
	struct http_field field = { "Authorization", NULL };
	char *basic = NULL;
	const char *method = c->method != NULL ? c->method : "none";

	t->endpoint = xstrdup(endpoint);
	t->tokens_cb = cb;
	t->arg = arg;
	if (strcmp(method, "client_secret_basic") == 0 && c->secret != NULL)
		field.value = basic = oauth_token_basic(c);
	else {
		xenomem(form_add(&form, "client_id", c->id));
		if (strcmp(method, "client_secret_post") == 0)
			xenomem(form_add(&form, "client_secret", c->secret));
	}
	t->fetch = oauth_fetch_start(endpoint, allow_local, &field,
	    basic != NULL ? 1 : 0, form, NULL, oauth_token_answered, t);
	if (basic != NULL)
		explicit_bzero(basic, strlen(basic));
	free(basic);
	explicit_bzero(form, strlen(form));
	free(form);
	return t;
}

void
oauth_token_cancel(struct oauth_token_req *t)
{
	if (t != NULL)
		oauth_token_req_free(t);
}

/* ---- dynamic client registration (RFC 7591) ---- */

static bool
oauth_is_known_method(const char *m)
{
	return m != NULL &&
	    (strcmp(m, "none") == 0 || strcmp(m, "client_secret_basic") == 0 ||
		strcmp(m, "client_secret_post") == 0);
}

static void
oauth_registered(void *arg, int err, const char *why,
    const struct oauth_response *r)
{
	struct oauth_token_req *t = arg;
	struct oauth_client c = { 0 };
	const char *method;
	char text[512];

	t->fetch = NULL;
	if (err != 0) {
		t->registered_cb(t->arg, err, why, NULL);
		goto out;
	}
	if (r->status != 200 && r->status != 201) {
		char desc[320];

		oauth_token_describe(r, desc, sizeof desc);
		snprintf(text, sizeof text,
		    "dynamic client registration at %s was refused: %s",
		    t->endpoint, desc);
		t->registered_cb(t->arg, -EACCES, text, NULL);
		goto out;
	}
	c.id = jsonutil_string_dup(r->json, "client_id");
	c.secret = jsonutil_string_dup(r->json, "client_secret");
	method = json_string_value(json_object_get(r->json,
	    "token_endpoint_auth_method"));
	if (!oauth_is_known_method(method))
		method = oauth_rules_auth_method(t->methods, c.secret != NULL);
	if (method == NULL && c.secret == NULL)
		method = "none";
	if (c.id == NULL || c.id[0] == '\0' || method == NULL) {
		snprintf(text, sizeof text,
		    "dynamic client registration at %s answered %s",
		    t->endpoint,
		    c.id == NULL ? "no client_id" :
				   "no client authentication mcpd can use");
		t->registered_cb(t->arg, -EPROTO, text, NULL);
		goto out;
	}
	c.method = xstrdup(method);
	c.kind = xstrdup("dynamic");
	t->registered_cb(t->arg, 0, NULL, &c);
out:
	oauth_client_clear(&c);
	oauth_token_req_free(t);
}

struct oauth_token_req *
oauth_register(const char *endpoint, bool allow_local, const char *redirect_uri,
    const json_t *auth_methods, const char *scope, oauth_registered_fn *cb,
    void *arg)
{
	struct oauth_token_req *t = xcalloc(1, sizeof *t);
	/* A public client when the server takes one: nothing to keep secret. */
	const char *method = oauth_rules_auth_method(auth_methods, false);
	json_t *meta;
	char *body;

	if (method == NULL)
		method = oauth_rules_auth_method(auth_methods, true);
	t->endpoint = xstrdup(endpoint);
	t->methods = auth_methods != NULL ?
	    json_incref((json_t *)(uintptr_t)auth_methods) :
	    NULL;
	t->registered_cb = cb;
	t->arg = arg;
	meta =
	    xjson(json_pack("{s:s, s:[s], s:[s, s], s:[s], s:s, s:s, s:s, s:s}",
		"client_name", OAUTH_CLIENT_NAME, "redirect_uris", redirect_uri,
		"grant_types", "authorization_code", "refresh_token",
		"response_types", "code", "token_endpoint_auth_method",
		method != NULL ? method : "client_secret_basic",
		"application_type", "native", "software_id", "mcpd",
		"software_version", MCPD_VERSION));
	if (scope != NULL)
		json_object_set_new(meta, "scope", json_string(scope));
	body = xnonnull(json_dumps(meta, JSON_COMPACT));
	json_decref(meta);
	t->fetch = oauth_fetch_start(endpoint, allow_local, NULL, 0, body,
	    "application/json", oauth_registered, t);
	free(body);
	return t;
}
