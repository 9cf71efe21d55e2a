/* SPDX-License-Identifier: ISC */
/* OAuth on the wire of an HTTP transport: the bearer, 401s, parked requests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "transport-http-int.h"

/* The user gave an Authorization header: mcpd's OAuth stays out. */
static bool
shttp_has_own_authorization(const struct shttp_transport *ht)
{
	const char *k;
	json_t *v;

	json_object_foreach(ht->spec->headers, k, v)
		if (strcasecmp(k, "authorization") == 0)
			return true;
	return false;
}

static bool
shttp_uses_oauth(const struct shttp_transport *ht)
{
	return ht->spec->auth != NULL && !shttp_has_own_authorization(ht);
}

static void
shttp_auth_event(void *arg, enum oauth_event event, const char *why)
{
	struct shttp_post *p = arg;
	struct shttp_transport *ht = p->ht;
	char *text;

	if (event == OAUTH_EVENT_URL) {
		if (ht->t.cbs->progress != NULL && !ht->is_closing) {
			xasprintf(&text,
			    "open %s in a browser to authorize mcpd (or run mcpctl auth login)",
			    why);
			ht->t.cbs->progress(ht->t.cb_arg, "authorize", text);
			free(text);
		}
		return;
	}
	p->auth_wait = NULL; /* a final event ends the wait */
	if (ht->is_closing) {
		shttp_post_free(p);
		return;
	}
	if (event == OAUTH_EVENT_READY) {
		p->auth_tries++;
		shttp_post_start(ht, p, p->verb, p->msg, p->tool);
		return;
	}
	if (p == ht->listen || p->id == NULL) {
		shttp_post_free(p);
		return;
	}
	shttp_fail_request(p, ERRORS_UNAVAILABLE,
	    why != NULL ? why : "authorization failed");
	shttp_post_free(p);
}

/* Parks p until the authorization (status: 401, 403 or 0) is there. */
static void
shttp_auth_park(struct shttp_post *p, int status)
{
	struct shttp_transport *ht = p->ht;

	p->auth_wait = oauth_challenge(ht->spec->auth, status,
	    p->www_authenticate, p->token_gen, shttp_auth_event, p);
	if (ht->t.cbs->progress != NULL)
		ht->t.cbs->progress(ht->t.cb_arg, "authorizing",
		    status == 0 ? "refreshing the access token" :
				  "the server asks for authorization (OAuth)");
}

/*
 * 401, or 403 with insufficient_scope: nothing ran, so the request goes
 * again once mcpd is authorized (a few times at most).
 */
bool
shttp_auth_challenge(struct shttp_post *p)
{
	struct shttp_transport *ht = p->ht;
	bool is_scope = p->status == 403 && p->www_authenticate != NULL &&
	    strstr(p->www_authenticate, "insufficient_scope") != NULL;

	if ((p->status != 401 && !is_scope) || !shttp_uses_oauth(ht) ||
	    p->verb == NULL || strcmp(p->verb, "DELETE") == 0 ||
	    p->auth_tries >= 3)
		return false;
	shttp_auth_park(p, p->status);
	return true;
}

/*
 * A cancellation of a request parked for authorization: it goes unsent
 * (its 401 says it did not run), and so does the cancellation: 2.
 */
int
shttp_auth_unpark(struct shttp_transport *ht, const json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	const json_t *id = json_object_get(json_object_get(msg, "params"),
	    "requestId");
	struct shttp_post *p;

	if (method == NULL || strcmp(method, "notifications/cancelled") != 0)
		return 0;
	LIST_FOREACH(p, &ht->posts, entry)
		if (p->auth_wait != NULL && p->id != NULL &&
		    json_equal(p->id, id)) {
			free(ht->held_why);
			ht->held_why = oauth_hint(ht->spec->auth);
			p->is_answered = true;
			shttp_post_free(p);
			return 2;
		}
	return 0;
}

const char *
shttp_auth_held_why(struct transport *t)
{
	return ((struct shttp_transport *)t)->held_why;
}

int
shttp_auth_prepare(struct shttp_post *p, const char *verb, const json_t *msg,
    const json_t *tool, char **ret)
{
	struct shttp_transport *ht = p->ht;
	const char *token;

	*ret = NULL;
	if (!shttp_uses_oauth(ht))
		return 0;
	/* Kept to send again after a 401; refreshed first if due. */
	if (p->verb != verb) {
		free(p->verb);
		p->verb = xstrdup(verb);
	}
	if (p->msg != msg) {
		json_decref(p->msg);
		p->msg = json_incref((json_t *)(uintptr_t)msg);
	}
	if (p->tool != tool) {
		json_decref(p->tool);
		p->tool = json_incref((json_t *)(uintptr_t)tool);
	}
	if (p->auth_tries == 0 && oauth_needs_refresh(ht->spec->auth)) {
		p->auth_tries++;
		shttp_auth_park(p, 0);
		return 1;
	}
	if ((token = oauth_bearer(ht->spec->auth, &p->token_gen)) != NULL)
		xasprintf(ret, "Bearer %s", token);
	return 0;
}
