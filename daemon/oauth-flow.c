/* SPDX-License-Identifier: ISC */
/* One authorization flow: metadata, client, the browser's trip, tokens. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include <sodium.h>

#include "form.h"
#include "jsonwipe.h"
#include "log.h"
#include "oauth-int.h"
#include "wwwauth.h"

static void oauth_flow_user(struct oauth_flow *);

static void
oauth_wipe_free(char *s)
{
	if (s != NULL)
		explicit_bzero(s, strlen(s));
	free(s);
}

static void
oauth_flow_free(struct oauth_flow *f)
{
	oauth_fetch_cancel(f->fetch);
	oauth_token_cancel(f->req);
	oauth_callback_close(f->listener);
	if (f->ev != NULL)
		event_free(f->ev);
	json_decref(f->urls);
	json_decref(f->as);
	oauth_client_clear(&f->client);
	free(f->challenge_scope);
	free(f->resource_metadata);
	free(f->resource);
	free(f->prm_scopes);
	free(f->issuer);
	free(f->refused);
	oauth_wipe_free(f->state);
	oauth_wipe_free(f->verifier);
	free(f->scope);
	free(f);
}

void
oauth_flow_cancel(struct oauth_flow *f)
{
	if (f == NULL)
		return;
	if (f->o->flow == f)
		f->o->flow = NULL;
	oauth_flow_free(f);
}

/* The flow ends: the holders hear state (and why), f goes. */
static void
oauth_flow_end(struct oauth_flow *f, enum oauth_state state, const char *why)
{
	struct oauth *o = f->o;

	if (o->flow != f)
		return;
	oauth_flow_free(f);
	oauth_finish(o, state, why);
}

void
oauth_flow_fail(struct oauth_flow *f, enum oauth_state state, const char *fmt,
    ...)
{
	va_list ap;
	char *why;

	va_start(ap, fmt);
	xvasprintf(&why, fmt, ap);
	va_end(ap);
	oauth_flow_end(f, state, why);
	free(why);
}

/* What is saved, unless it belongs to another authorization server. */
static json_t *
oauth_flow_saved(struct oauth_flow *f)
{
	return f->is_new_issuer ? NULL : oauth_saved(f->o);
}

/* ---- saving tokens ---- */

static void
oauth_flow_store(struct oauth_flow *f, json_t *tokens, bool is_refresh)
{
	json_t *old = oauth_flow_saved(f), *doc;
	const char *scope = oauth_str(tokens, "scope");

	doc = is_refresh && old != NULL ? json_deep_copy(old) :
					  xjson(json_object());
	json_object_update(doc, tokens);
	if (!is_refresh) {
		json_object_set_new(doc, "client",
		    oauth_client_to_json(&f->client));
		if (f->issuer != NULL)
			json_object_set_new(doc, "issuer",
			    json_string(f->issuer));
		else
			json_object_del(doc, "issuer");
		json_object_set_new(doc, "token_endpoint",
		    json_string(oauth_str(f->as, "token_endpoint")));
		json_object_set_new(doc, "resource", json_string(f->resource));
		if (f->scope != NULL)
			json_object_set_new(doc, "requested_scope",
			    json_string(f->scope));
		else
			json_object_del(doc, "requested_scope");
		/* Without a scope in the answer, what was asked was granted. */
		if (scope == NULL && f->scope != NULL)
			json_object_set_new(doc, "scope",
			    json_string(f->scope));
		if (scope == NULL && f->scope == NULL)
			json_object_del(doc, "scope");
	}
	if (!json_object_get(tokens, "expires_at"))
		json_object_del(doc, "expires_at");
	jsonwipe_decref(tokens);
	oauth_save(f->o, doc);
}

/* ---- refresh ---- */

static void
oauth_flow_refreshed(void *arg, int err, const char *why, json_t *tokens)
{
	struct oauth_flow *f = arg;
	struct oauth *o = f->o;
	json_t *doc;

	f->req = NULL;
	if (err == 0) {
		oauth_flow_store(f, tokens, true);
		oauth_flow_end(f, OAUTH_AUTHORIZED, NULL);
		return;
	}
	log_server(LOG_WARNING, o->name, "token refresh failed: %s", why);
	/* The refresh token is spent: only a login helps now. */
	if ((doc = oauth_flow_saved(f)) != NULL) {
		doc = json_deep_copy(doc);
		json_object_del(doc, "refresh_token");
		json_object_del(doc, "access_token");
		json_object_del(doc, "expires_at");
		oauth_save(o, doc);
	}
	if (!o->may_prompt && !f->is_login) {
		oauth_flow_fail(f, OAUTH_NEEDS_LOGIN,
		    "its refresh token was refused: %s", why);
		return;
	}
	if (f->step == OAUTH_STEP_REFRESH_ONLY) {
		oauth_discover(f);
		return;
	}
	oauth_flow_user(f);
}

/* Refreshes with the saved refresh token at endpoint; false if none. */
static bool
oauth_flow_refresh(struct oauth_flow *f, const char *endpoint)
{
	json_t *saved = oauth_flow_saved(f);
	const char *refresh = oauth_str(saved, "refresh_token");
	const char *resource = oauth_str(saved, "resource");
	struct oauth_client c;
	char *form = NULL;

	if (refresh == NULL || endpoint == NULL ||
	    !json_is_object(json_object_get(saved, "client")))
		return false;
	oauth_client_from_json(json_object_get(saved, "client"), &c);
	if (c.id == NULL) {
		oauth_client_clear(&c);
		return false;
	}
	/* A pre-registered client's secret comes from its load, not the store. */
	if (c.secret == NULL && f->o->client != NULL &&
	    oauth_str(f->o->client, "client_secret") != NULL &&
	    strcmp(c.id, oauth_str(f->o->client, "client_id")) == 0)
		c.secret = xstrdup(oauth_str(f->o->client, "client_secret"));
	xenomem(form_add(&form, "grant_type", "refresh_token"));
	xenomem(form_add(&form, "refresh_token", refresh));
	xenomem(form_add(&form, "resource", resource));
	f->req = oauth_token_request(endpoint, f->o->allow_local, &c, form,
	    oauth_flow_refreshed, f);
	oauth_client_clear(&c);
	return true;
}

void
oauth_flow_have_as(struct oauth_flow *f)
{
	struct oauth *o = f->o;
	json_t *saved = oauth_saved(o);
	const char *was = oauth_str(saved, "issuer");
	const char *bound = oauth_str(o->client, "issuer");

	/* SEP-2352: nothing of another authorization server is reused. */
	if (saved != NULL &&
	    ((was == NULL) != (f->issuer == NULL) ||
		(was != NULL && strcmp(was, f->issuer) != 0))) {
		log_server(LOG_INFO, o->name,
		    "its authorization server changed (%s, was %s): registering again",
		    f->issuer != NULL ? f->issuer : "(none)",
		    was != NULL ? was : "(none)");
		f->is_new_issuer = true;
	}
	if (bound != NULL && (f->issuer == NULL || strcmp(bound, f->issuer))) {
		oauth_flow_fail(f, OAUTH_FAILED,
		    "the pre-registered client is for the authorization server %s, but the server now names %s; refused",
		    bound, f->issuer != NULL ? f->issuer : "none");
		return;
	}
	f->step = OAUTH_STEP_REFRESH;
	if (!f->is_login && !f->is_insufficient &&
	    oauth_flow_refresh(f, oauth_str(f->as, "token_endpoint")))
		return;
	if (!o->may_prompt && !f->is_login) {
		oauth_flow_end(f, OAUTH_NEEDS_LOGIN,
		    oauth_flow_saved(f) != NULL ?
			"its token was refused and there is no refresh token" :
			"it has no token yet");
		return;
	}
	oauth_flow_user(f);
}

/* ---- the code comes back: iss, errors, then the token endpoint ---- */

static void
oauth_flow_tokens(void *arg, int err, const char *why, json_t *tokens)
{
	struct oauth_flow *f = arg;

	f->req = NULL;
	if (err != 0) {
		oauth_flow_fail(f, OAUTH_FAILED, "%s", why);
		return;
	}
	oauth_flow_store(f, tokens, false);
	oauth_flow_end(f, OAUTH_AUTHORIZED, NULL);
}

static int
oauth_flow_callback(void *arg, const json_t *query, const char **page)
{
	struct oauth_flow *f = arg;
	const char *iss = oauth_str(query, "iss");
	const char *code = oauth_str(query, "code");
	const char *error = oauth_str(query, "error");
	const char *desc = oauth_str(query, "error_description");
	const char *why = NULL;
	char *form = NULL;

	if (f->step != OAUTH_STEP_USER)
		return 400;
	evtimer_del(f->ev);
	/* RFC 9207 before anything of the answer is acted on or shown. */
	if (oauth_rules_check_iss(f->issuer, f->iss_supported, iss, &why) < 0) {
		*page =
		    "refused: the authorization response did not come from the expected authorization server";
		oauth_flow_fail(f, OAUTH_FAILED, "%s", why);
		return 400;
	}
	if (error != NULL) {
		char text[320];

		snprintf(text, sizeof text, "%.64s%s%.200s%s", error,
		    desc != NULL ? " (" : "", desc != NULL ? desc : "",
		    desc != NULL ? ")" : "");
		for (char *c = text; *c != '\0'; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = ' ';
		*page =
		    "the authorization server refused; see mcpctl auth status";
		oauth_flow_fail(f, OAUTH_FAILED,
		    "the authorization server refused: %s", text);
		return 400;
	}
	if (code == NULL || code[0] == '\0') {
		*page = "refused: the authorization response has no code";
		oauth_flow_fail(f, OAUTH_FAILED,
		    "the authorization response has no code");
		return 400;
	}
	f->step = OAUTH_STEP_CODE;
	oauth_set_state(f->o, OAUTH_DISCOVERING);
	xenomem(form_add(&form, "grant_type", "authorization_code"));
	xenomem(form_add(&form, "code", code));
	xenomem(form_add(&form, "redirect_uri",
	    oauth_callback_uri(f->listener)));
	xenomem(form_add(&form, "code_verifier", f->verifier));
	xenomem(form_add(&form, "resource", f->resource));
	f->req = oauth_token_request(oauth_str(f->as, "token_endpoint"),
	    f->o->allow_local, &f->client, form, oauth_flow_tokens, f);
	*page =
	    "authorization received; mcpd finishes the login, you may close this window";
	return 200;
}

static void
oauth_flow_expired(evutil_socket_t fd, short events, void *arg)
{
	struct oauth_flow *f = arg;

	(void)fd, (void)events;
	oauth_flow_fail(f, OAUTH_NEEDS_LOGIN,
	    "the login was not completed within %d minutes",
	    OAUTH_ATTEMPT_TTL_MS / 60000);
}

/* ---- the browser's part ---- */

/* n random bytes as base64url without padding (new). */
static char *
oauth_flow_random(size_t n)
{
	unsigned char buf[64];
	size_t size = sodium_base64_ENCODED_LEN(n,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	char *out = xmalloc(size);

	randombytes_buf(buf, n);
	sodium_bin2base64(out, size, buf, n,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(buf, sizeof buf);
	return out;
}

/* The scopes to ask for, as the spec's selection strategy says (new). */
static char *
oauth_flow_pick_scope(struct oauth_flow *f)
{
	const char *before = oauth_str(oauth_flow_saved(f), "requested_scope");
	const char *base = f->challenge_scope != NULL ? f->challenge_scope :
							f->prm_scopes;
	char *scope = oauth_rules_scope_union(before, base), *with;

	/* SEP-2207: offline_access only where the server lists it. */
	if (scope != NULL &&
	    oauth_rules_lists(json_object_get(f->as, "scopes_supported"),
		"offline_access")) {
		with = oauth_rules_scope_union(scope, "offline_access");
		free(scope);
		scope = with;
	}
	return scope;
}

static void
oauth_flow_ask_user(struct oauth_flow *f)
{
	const char *endpoint = oauth_str(f->as, "authorization_endpoint");
	struct timeval tv = { OAUTH_ATTEMPT_TTL_MS / 1000, 0 };
	unsigned char digest[crypto_hash_sha256_BYTES];
	char challenge[64], *query = NULL, *url;

	crypto_hash_sha256(digest, (const unsigned char *)f->verifier,
	    strlen(f->verifier));
	sodium_bin2base64(challenge, sizeof challenge, digest, sizeof digest,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	xenomem(form_add(&query, "response_type", "code"));
	xenomem(form_add(&query, "client_id", f->client.id));
	xenomem(form_add(&query, "redirect_uri",
	    oauth_callback_uri(f->listener)));
	xenomem(form_add(&query, "state", f->state));
	xenomem(form_add(&query, "code_challenge", challenge));
	xenomem(form_add(&query, "code_challenge_method", "S256"));
	xenomem(form_add(&query, "resource", f->resource));
	xenomem(form_add(&query, "scope", f->scope));
	xasprintf(&url, "%s%s%s", endpoint,
	    strchr(endpoint, '?') != NULL ? "&" : "?", query);
	free(query);
	f->step = OAUTH_STEP_USER;
	evtimer_assign(f->ev, mcpd_base, oauth_flow_expired, f);
	evtimer_add(f->ev, &tv);
	oauth_announce_url(f->o, url);
	free(url);
}

static void
oauth_flow_registered(void *arg, int err, const char *why,
    struct oauth_client *c)
{
	struct oauth_flow *f = arg;

	f->req = NULL;
	if (err != 0) {
		oauth_flow_fail(f, OAUTH_FAILED, "%s", why);
		return;
	}
	oauth_client_clear(&f->client);
	f->client = *c;
	memset(c, 0, sizeof *c);
	oauth_flow_ask_user(f);
}

/* Pre-registered, a metadata document, or else dynamic registration. */
static void
oauth_flow_user(struct oauth_flow *f)
{
	struct oauth *o = f->o;
	const json_t *methods = json_object_get(f->as,
	    "token_endpoint_auth_methods_supported");
	const char *registration = oauth_str(f->as, "registration_endpoint");
	const char *id = oauth_str(o->client, "client_id");
	const char *secret = oauth_str(o->client, "client_secret");
	const char *method;
	char *cause = NULL;

	oauth_client_clear(&f->client);
	f->scope = oauth_flow_pick_scope(f);
	f->state = oauth_flow_random(32);
	f->verifier = oauth_flow_random(32);
	if (oauth_callback_open(f->state, oauth_flow_callback, f, &f->listener,
		&cause) < 0) {
		oauth_flow_fail(f, OAUTH_FAILED, "%s", cause);
		free(cause);
		return;
	}
	if (id != NULL) {
		method = oauth_rules_auth_method(methods, secret != NULL);
		f->client.id = xstrdup(id);
		f->client.secret = secret != NULL ? xstrdup(secret) : NULL;
		f->client.method = xstrdup(method != NULL ? method :
			secret != NULL ? "client_secret_basic" :
					 "none");
		f->client.kind = xstrdup("pre-registered");
		oauth_flow_ask_user(f);
		return;
	}
	if (mcpd_opts.oauth_client_metadata_url != NULL &&
	    json_is_true(json_object_get(f->as,
		"client_id_metadata_document_supported"))) {
		f->client.id = xstrdup(mcpd_opts.oauth_client_metadata_url);
		f->client.method = xstrdup("none");
		f->client.kind = xstrdup("metadata-document");
		oauth_flow_ask_user(f);
		return;
	}
	if (registration == NULL) {
		oauth_flow_fail(f, OAUTH_FAILED,
		    "the authorization server %s offers no dynamic client registration and mcpd has no client id for it: give one with mcpctl load --oauth-client-id",
		    f->issuer != NULL ? f->issuer : "");
		return;
	}
	f->step = OAUTH_STEP_REGISTER;
	f->req = oauth_register(registration, o->allow_local,
	    oauth_callback_uri(f->listener), methods, f->scope,
	    oauth_flow_registered, f);
}

/* ---- the start ---- */

static void
oauth_flow_begin(evutil_socket_t fd, short events, void *arg)
{
	struct oauth_flow *f = arg;
	struct oauth *o = f->o;
	const char *granted = oauth_str(oauth_saved(o), "scope");

	(void)fd, (void)events;
	if (f->is_insufficient) {
		/* Step-up: never for what is held already, and not for ever. */
		if (f->challenge_scope == NULL ||
		    oauth_rules_scope_covers(granted, f->challenge_scope)) {
			oauth_flow_fail(f, OAUTH_FAILED,
			    "the server refuses the request for want of scope %s, which mcpd was granted already; it does not ask again",
			    f->challenge_scope != NULL ? f->challenge_scope :
							 "(none named)");
			return;
		}
		if (o->step_ups >= OAUTH_STEP_UPS_MAX) {
			oauth_flow_fail(f, OAUTH_FAILED,
			    "the server asked for more scope %u times in a row; mcpd stops asking (scope %s)",
			    o->step_ups, f->challenge_scope);
			return;
		}
		o->step_ups++;
	}
	if (f->is_refresh) {
		f->step = OAUTH_STEP_REFRESH_ONLY;
		if (oauth_flow_refresh(f,
			oauth_str(oauth_saved(o), "token_endpoint")))
			return;
	}
	oauth_discover(f);
}

void
oauth_flow_start(struct oauth *o, const struct oauth_trigger *t)
{
	struct oauth_flow *f = xcalloc(1, sizeof *f);
	json_t *params = wwwauth_params(t->www_authenticate, "Bearer");
	const char *scope = oauth_str(params, "scope");
	const char *rm = oauth_str(params, "resource_metadata");

	f->o = o;
	f->is_login = t->is_login;
	f->is_refresh = t->is_refresh;
	f->is_insufficient = t->status == 403 &&
	    oauth_str(params, "error") != NULL &&
	    strcmp(oauth_str(params, "error"), "insufficient_scope") == 0;
	if (scope != NULL && scope[0] != '\0')
		f->challenge_scope = xstrdup(scope);
	if (rm != NULL && rm[0] != '\0')
		f->resource_metadata = xstrdup(rm);
	json_decref(params);
	o->flow = f;
	oauth_set_state(o, OAUTH_DISCOVERING);
	if ((f->ev = evtimer_new(mcpd_base, oauth_flow_begin, f)) == NULL)
		fatalx("out of memory");
	event_active(f->ev, EV_TIMEOUT, 0);
}
