/* SPDX-License-Identifier: ISC */
/* A remote server's authorization: its saved tokens, holders and status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "jsonwipe.h"
#include "log.h"
#include "oauth-int.h"

/*
 * A server's authorization: none asked yet, authorized (a token is held),
 * authorizing (a flow runs: discovery, registration, tokens), pending
 * (the URL waits for the user), needs-login, failed. A flow may start
 * from any state (a refresh, a step-up, a login, a reconnect); a logout
 * ends in none from any (doc/states.md).
 */
static const char *const oauth_state_names[] = { "none", "authorized",
	"authorizing", "pending", "needs-login", "failed" };
static const unsigned oauth_state_next[] = {
#define S(x) (1u << OAUTH_##x)
	[OAUTH_NONE] = S(DISCOVERING),
	[OAUTH_AUTHORIZED] = S(DISCOVERING) | S(NONE),
	[OAUTH_DISCOVERING] = S(PENDING) | S(AUTHORIZED) | S(NEEDS_LOGIN) |
	    S(FAILED) | S(NONE),
	[OAUTH_PENDING] = S(DISCOVERING) | S(AUTHORIZED) | S(NEEDS_LOGIN) |
	    S(FAILED) | S(NONE),
	[OAUTH_NEEDS_LOGIN] = S(DISCOVERING) | S(NONE),
	[OAUTH_FAILED] = S(DISCOVERING) | S(NONE),
#undef S
};
const struct fsm oauth_fsm = { "oauth", oauth_state_names, oauth_state_next,
	sizeof oauth_state_names / sizeof *oauth_state_names };

void
oauth_set_state(struct oauth *o, enum oauth_state state)
{
	o->state = fsm_move(&oauth_fsm, o->state, state, o->name);
}

static const char *
oauth_state_name(enum oauth_state state)
{
	return fsm_state_name(&oauth_fsm, state);
}

struct oauth *
oauth_new(const char *agent, const char *name, const char *id)
{
	struct oauth *o = xcalloc(1, sizeof *o);

	o->references = 1;
	o->agent = xstrdup(agent);
	o->name = xstrdup(name);
	o->id = xstrdup(id);
	xasprintf(&o->secret_name, "mcpd.%s.oauth", id);
	o->may_prompt = true;
	TAILQ_INIT(&o->waits);
	return o;
}

void
oauth_rename(struct oauth *o, const char *name)
{
	free(o->name);
	o->name = xstrdup(name);
}

static void
oauth_authorized_due(evutil_socket_t fd, short events, void *arg)
{
	struct oauth *o = arg;

	(void)fd, (void)events;
	if (o->on_authorized != NULL && !o->is_closed)
		o->on_authorized(o->on_authorized_arg);
}

void
oauth_on_authorized(struct oauth *o, void (*fn)(void *), void *arg)
{
	o->on_authorized = fn;
	o->on_authorized_arg = arg;
	if (o->authorized == NULL &&
	    (o->authorized = event_new(mcpd_base, -1, 0, oauth_authorized_due,
		 o)) == NULL)
		fatalx("out of memory");
}

void
oauth_ref(struct oauth *o)
{
	o->references++;
}

void
oauth_unref(struct oauth *o)
{
	if (o == NULL || --o->references > 0)
		return;
	/* Holders cancel their waits before they drop their reference. */
	oauth_flow_cancel(o->flow);
	if (o->authorized != NULL)
		event_free(o->authorized);
	free(o->agent);
	free(o->name);
	free(o->id);
	free(o->secret_name);
	free(o->url);
	jsonwipe_decref(o->client);
	jsonwipe_decref(o->saved);
	free(o->last_error);
	free(o->auth_url);
	free(o);
}

void
oauth_configure(struct oauth *o, const char *url, bool allow_local,
    const json_t *client)
{
	free(o->url);
	o->url = xstrdup(url);
	o->allow_local = allow_local;
	jsonwipe_decref(o->client);
	o->client = client != NULL ? json_deep_copy(client) : NULL;
	o->is_spent = false; /* a new connection may ask again */
}

void
oauth_set_prompt(struct oauth *o, bool may_prompt)
{
	o->may_prompt = may_prompt;
}

json_t *
oauth_saved(struct oauth *o)
{
	struct secrets *vault;
	const char *text;

	if (!o->is_loaded) {
		o->is_loaded = true;
		if ((vault = mcpd_secrets_if_any()) != NULL &&
		    (text = secrets_get(vault, o->secret_name)) != NULL &&
		    (o->saved = json_loads(text, 0, NULL)) != NULL &&
		    !json_is_object(o->saved)) {
			jsonwipe_decref(o->saved);
			o->saved = NULL;
		}
		if (o->saved != NULL)
			o->token_gen++;
	}
	/* Tokens of another URL (a server renamed onto this one) are not ours. */
	if (o->saved != NULL && o->url != NULL &&
	    (!json_is_string(json_object_get(o->saved, "url")) ||
		strcmp(json_string_value(json_object_get(o->saved, "url")),
		    o->url) != 0))
		return NULL;
	return o->saved;
}

const char *
oauth_saved_string(struct oauth *o, const char *key)
{
	return json_string_value(json_object_get(oauth_saved(o), key));
}

void
oauth_save(struct oauth *o, json_t *doc)
{
	struct secrets *vault;
	char *text, *cause = NULL;

	o->is_loaded = true;
	jsonwipe_decref(o->saved);
	o->saved = doc;
	o->token_gen++;
	if (doc == NULL)
		return;
	json_object_set_new(doc, "url", json_string(o->url));
	text = xnonnull(json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS));
	if ((vault = mcpd_secrets(&cause)) == NULL ||
	    secrets_set(vault, o->secret_name, text, strlen(text), &cause) < 0)
		log_server(LOG_WARNING, o->name,
		    "its authorization is kept in memory only: the secret store cannot be written (%s)",
		    cause != NULL ? cause : "unknown error");
	explicit_bzero(text, strlen(text));
	free(text);
	free(cause);
}

/* ---- holders: parked requests and logins ---- */

static void
oauth_wait_free(struct oauth_wait *w)
{
	TAILQ_REMOVE(&w->o->waits, w, entry);
	event_free(w->ev);
	free(w->why);
	free(w);
}

static void
oauth_wait_due(evutil_socket_t fd, short events, void *arg)
{
	struct oauth_wait *w = arg;
	enum oauth_event event = w->event;
	char *why = w->why;
	bool is_final = w->is_final;

	(void)fd, (void)events;
	w->is_queued = false;
	w->why = NULL;
	if (is_final) {
		oauth_event_fn *fn = w->fn;
		void *fn_arg = w->arg;

		oauth_wait_free(w);
		fn(fn_arg, event, why);
	} else
		w->fn(w->arg, event, why);
	free(why);
}

/* Tells w of event from the loop; a final one ends the wait. */
static void
oauth_wait_post(struct oauth_wait *w, enum oauth_event event, const char *why,
    bool is_final)
{
	if (w->is_final)
		return;
	free(w->why);
	w->why = why != NULL ? xstrdup(why) : NULL;
	w->event = event;
	w->is_final = is_final;
	if (!w->is_queued) {
		w->is_queued = true;
		event_active(w->ev, EV_TIMEOUT, 0);
	}
}

static struct oauth_wait *
oauth_wait_new(struct oauth *o, oauth_event_fn *fn, void *arg)
{
	struct oauth_wait *w = xcalloc(1, sizeof *w);

	w->o = o;
	w->fn = fn;
	w->arg = arg;
	if ((w->ev = event_new(mcpd_base, -1, 0, oauth_wait_due, w)) == NULL)
		fatalx("out of memory");
	TAILQ_INSERT_TAIL(&o->waits, w, entry);
	return w;
}

void
oauth_wait_cancel(struct oauth_wait *w)
{
	if (w != NULL)
		oauth_wait_free(w);
}

char *
oauth_hint(const struct oauth *o)
{
	char *hint = NULL;

	switch (o->state) {
	case OAUTH_PENDING:
		xasprintf(&hint,
		    "%s needs authorization: open %s in a browser, or run `mcpctl auth login %s`",
		    o->name, o->auth_url, o->name);
		break;
	case OAUTH_NEEDS_LOGIN:
		if (o->last_error != NULL)
			xasprintf(&hint,
			    "%s needs authorization (%s): run `mcpctl auth login %s`",
			    o->name, o->last_error, o->name);
		else
			xasprintf(&hint,
			    "%s needs authorization: run `mcpctl auth login %s`",
			    o->name, o->name);
		break;
	case OAUTH_FAILED:
		xasprintf(&hint, "authorization of %s failed: %s", o->name,
		    o->last_error != NULL ? o->last_error : "unknown");
		break;
	default:
		break;
	}
	return hint;
}

bool
oauth_needs_user(const struct oauth *o)
{
	return o != NULL &&
	    (o->state == OAUTH_PENDING || o->state == OAUTH_NEEDS_LOGIN ||
		o->state == OAUTH_FAILED);
}

void
oauth_announce_url(struct oauth *o, const char *url)
{
	struct oauth_wait *w;
	char *text;

	oauth_set_state(o, OAUTH_PENDING);
	free(o->auth_url);
	o->auth_url = xstrdup(url);
	log_server(LOG_NOTICE, o->name,
	    "needs authorization: open the URL that mcpctl auth status %s shows, or run mcpctl auth login %s",
	    o->name, o->name);
	xasprintf(&text, "%s", url);
	TAILQ_FOREACH(w, &o->waits, entry)
		oauth_wait_post(w, OAUTH_EVENT_URL, text, false);
	free(text);
}

void
oauth_finish(struct oauth *o, enum oauth_state state, const char *why)
{
	struct oauth_wait *w;
	char *hint = NULL;

	o->flow = NULL;
	oauth_set_state(o, state);
	free(o->auth_url);
	o->auth_url = NULL;
	free(o->last_error);
	o->last_error = why != NULL ? xstrdup(why) : NULL;
	o->is_spent = state != OAUTH_AUTHORIZED;
	if (state == OAUTH_AUTHORIZED) {
		bool has_login = false;

		log_server(LOG_INFO, o->name, "authorized");
		TAILQ_FOREACH(w, &o->waits, entry)
			has_login = has_login || w->is_login;
		/* A login reconnects the server itself; else the server may. */
		if (o->authorized != NULL && !has_login)
			event_active(o->authorized, EV_TIMEOUT, 0);
	} else {
		hint = oauth_hint(o);
		log_server(LOG_WARNING, o->name, "%s",
		    hint != NULL ? hint : why);
	}
	TAILQ_FOREACH(w, &o->waits, entry)
		oauth_wait_post(w,
		    state == OAUTH_AUTHORIZED ? OAUTH_EVENT_READY :
						OAUTH_EVENT_FAILED,
		    hint != NULL ? hint : why, true);
	free(hint);
}

/* ---- what transports ask ---- */

const char *
oauth_bearer(struct oauth *o, uint64_t *ret_gen)
{
	const char *token = oauth_saved_string(o, "access_token");

	*ret_gen = o->token_gen;
	return token;
}

void
oauth_note_success(struct oauth *o)
{
	o->step_ups = 0;
}

bool
oauth_needs_refresh(struct oauth *o)
{
	json_t *saved = oauth_saved(o);
	json_t *at = json_object_get(saved, "expires_at");
	json_int_t life = json_integer_value(json_object_get(saved,
	    "expires_in"));
	json_int_t margin = OAUTH_REFRESH_MARGIN_S;

	if (o->flow != NULL || o->state == OAUTH_NEEDS_LOGIN ||
	    json_object_get(saved, "refresh_token") == NULL ||
	    !json_is_integer(at))
		return false;
	/* A short-lived token is refreshed in the second half of its life. */
	if (life > 0 && life / 2 < margin)
		margin = life / 2;
	return json_integer_value(at) - margin <= time(NULL);
}

struct oauth_wait *
oauth_challenge(struct oauth *o, int status, const char *www_authenticate,
    uint64_t gen_used, oauth_event_fn *fn, void *arg)
{
	struct oauth_wait *w = oauth_wait_new(o, fn, arg);
	struct oauth_trigger trigger = { status, www_authenticate, false,
		status == 0 };
	uint64_t gen;
	char *hint;

	if (o->is_closed) {
		oauth_wait_post(w, OAUTH_EVENT_FAILED,
		    "the server was unloaded", true);
		return w;
	}
	/* A newer token came since this request went: it goes again. */
	if (status != 0 && oauth_bearer(o, &gen) != NULL && gen != gen_used) {
		oauth_wait_post(w, OAUTH_EVENT_READY, NULL, true);
		return w;
	}
	if (o->flow != NULL) {
		if (o->state == OAUTH_PENDING)
			oauth_wait_post(w, OAUTH_EVENT_URL, o->auth_url, false);
		return w;
	}
	if (o->is_spent || (!o->may_prompt && oauth_needs_user(o))) {
		hint = oauth_hint(o);
		oauth_wait_post(w, OAUTH_EVENT_FAILED, hint, true);
		free(hint);
		return w;
	}
	oauth_flow_start(o, &trigger);
	return w;
}

struct oauth_wait *
oauth_login(struct oauth *o, oauth_event_fn *fn, void *arg)
{
	struct oauth_wait *w = oauth_wait_new(o, fn, arg);
	struct oauth_trigger trigger = { 0, NULL, true, false };

	w->is_login = true;
	o->is_spent = false;
	if (o->is_closed) {
		oauth_wait_post(w, OAUTH_EVENT_FAILED,
		    "the server was unloaded", true);
		return w;
	}
	if (o->flow != NULL) {
		if (o->state == OAUTH_PENDING)
			oauth_wait_post(w, OAUTH_EVENT_URL, o->auth_url, false);
		return w;
	}
	o->step_ups = 0;
	oauth_flow_start(o, &trigger);
	return w;
}

/* ---- status, logout, the end ---- */

static json_t *
oauth_time(json_int_t t)
{
	char text[32];
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(text);
}

const char *
oauth_state_label(struct oauth *o)
{
	json_t *saved = oauth_saved(o);

	if (o->state == OAUTH_NONE && json_object_get(saved, "access_token"))
		return "authorized";
	if (o->state == OAUTH_NONE && saved != NULL)
		return "needs-login";
	return oauth_state_name(o->state);
}

json_t *
oauth_status(struct oauth *o)
{
	json_t *saved = oauth_saved(o), *st;
	json_t *at = json_object_get(saved, "expires_at");
	const char *state = oauth_state_label(o);

	st = json_pack("{s:s, s:s}", "server", o->name, "state", state);
	if (json_is_string(json_object_get(saved, "issuer")))
		json_object_set(st, "issuer", json_object_get(saved, "issuer"));
	if (json_is_string(json_object_get(saved, "scope")))
		json_object_set(st, "scope", json_object_get(saved, "scope"));
	if (json_is_integer(at))
		json_object_set_new(st, "expires_at",
		    oauth_time(json_integer_value(at)));
	if (saved != NULL)
		json_object_set_new(st, "has_refresh_token",
		    json_boolean(json_object_get(saved, "refresh_token") !=
			NULL));
	if (json_is_object(json_object_get(saved, "client"))) {
		json_t *c = json_object_get(saved, "client");

		json_object_set(st, "client_id", json_object_get(c, "id"));
		json_object_set(st, "registration", json_object_get(c, "kind"));
	}
	if (o->auth_url != NULL)
		json_object_set_new(st, "authorization_url",
		    json_string(o->auth_url));
	if (o->last_error != NULL && o->state != OAUTH_AUTHORIZED)
		json_object_set_new(st, "error", json_string(o->last_error));
	return st;
}

/* Ends the flow and every wait with why. */
static void
oauth_stop(struct oauth *o, const char *why)
{
	struct oauth_wait *w;

	oauth_flow_cancel(o->flow);
	o->flow = NULL;
	free(o->auth_url);
	o->auth_url = NULL;
	TAILQ_FOREACH(w, &o->waits, entry)
		oauth_wait_post(w, OAUTH_EVENT_FAILED, why, true);
}

int
oauth_forget_id(const char *id, bool *ret_removed, char **cause)
{
	struct secrets *vault = mcpd_secrets_if_any();
	char *name;
	int r = 0;

	*ret_removed = false;
	if (vault == NULL)
		return 0;
	xasprintf(&name, "mcpd.%s.oauth", id);
	r = secrets_remove(vault, name, ret_removed, cause);
	free(name);
	return r;
}

int
oauth_logout(struct oauth *o, bool *ret_removed, char **cause)
{
	int r;

	oauth_stop(o, "logged out");
	jsonwipe_decref(o->saved);
	o->saved = NULL;
	o->is_loaded = true;
	o->token_gen++;
	oauth_set_state(o, OAUTH_NONE);
	o->step_ups = 0;
	free(o->last_error);
	o->last_error = NULL;
	r = oauth_forget_id(o->id, ret_removed, cause);
	if (r == 0)
		log_server(LOG_INFO, o->name, "logged out");
	return r;
}

void
oauth_close(struct oauth *o)
{
	if (o == NULL || o->is_closed)
		return;
	o->is_closed = true;
	o->on_authorized = NULL;
	if (o->authorized != NULL)
		event_del(o->authorized);
	oauth_stop(o, "the server was unloaded");
}

bool
oauth_is_used(struct oauth *o)
{
	return o != NULL && (o->state != OAUTH_NONE || oauth_saved(o) != NULL);
}
