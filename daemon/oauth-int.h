/* SPDX-License-Identifier: ISC */
/* What the oauth*.c files share; nothing else includes it. */
#ifndef MCPD_OAUTH_INT_H
#define MCPD_OAUTH_INT_H

#include <sys/queue.h>

#include "mcpd.h"

#define OAUTH_FETCH_TIMEOUT_MS 10000		/* one request of the flow */
#define OAUTH_FETCH_MAX	       (256 * 1024)	/* bytes of its answer */
#define OAUTH_ATTEMPT_TTL_MS   (10 * 60 * 1000) /* a browser's login */
#define OAUTH_REFRESH_MARGIN_S 60 /* refresh when it expires this soon */
#define OAUTH_STEP_UPS_MAX     2  /* scope step-ups without a success */
#define OAUTH_CLIENT_NAME      "mcpd"

enum oauth_state {
	OAUTH_NONE,	   /* nothing asked for authorization yet */
	OAUTH_AUTHORIZED,  /* an access token is held */
	OAUTH_DISCOVERING, /* a flow runs: metadata, registration, tokens */
	OAUTH_PENDING,	   /* the authorization URL waits for the user */
	OAUTH_NEEDS_LOGIN, /* only mcpctl auth login can go on */
	OAUTH_FAILED,	   /* the last flow failed (last_error says why) */
};

struct oauth_flow;

/* A holder waiting for the flow's outcome (a parked request, a login). */
struct oauth_wait {
	struct oauth *o;
	oauth_event_fn *fn;
	void *arg;
	struct event *ev; /* delivers from the loop */
	enum oauth_event event;
	char *why;
	bool is_final;
	bool is_queued;
	bool is_login; /* mcpctl auth login: it reconnects the server itself */
	TAILQ_ENTRY(oauth_wait) entry;
};
TAILQ_HEAD(oauth_wait_list, oauth_wait);

struct oauth {
	int references;
	char *agent;
	char *name;
	char *id;
	char *secret_name; /* mcpd.<id>.oauth in the secret store */
	char *url;	   /* the server's canonical URL (resolved) */
	bool allow_local;
	json_t *client; /* pre-registered {client_id, client_secret, issuer} */
	bool may_prompt;
	bool is_closed;
	bool is_loaded;	    /* saved was read from the store */
	json_t *saved;	    /* registration and tokens (jsonwipe), or NULL */
	uint64_t token_gen; /* bumped whenever the access token changes */
	enum oauth_state state;
	char *last_error;
	char *auth_url; /* while PENDING */
	unsigned step_ups;
	bool is_spent; /* a flow failed: no new one until login or reconnect */
	struct oauth_flow *flow;
	struct oauth_wait_list waits;
	void (*on_authorized)(void *); /* the server: a login came */
	void *on_authorized_arg;
	struct event *authorized; /* calls it from the loop */
};

/* oauth.c */
/* Moves o to state, a move its table allows (mcpd-fsm.c). */
void oauth_set_state(struct oauth *, enum oauth_state);
extern const struct fsm oauth_fsm;
/* Sets the state and tells every holder (the URL, or the flow's end). */
void oauth_announce_url(struct oauth *, const char *url);
void oauth_finish(struct oauth *, enum oauth_state, const char *why);
/* The saved document (read from the store at its first use), or NULL. */
json_t *oauth_saved(struct oauth *);
/* Replaces the saved document (taken) and writes it to the store. */
void oauth_save(struct oauth *, json_t *doc);
/* A string member of the saved document, or NULL. */
const char *oauth_saved_string(struct oauth *, const char *key);

/* oauth-fetch.c: one HTTP exchange of the flow, under the URL policy. */
struct oauth_fetch;
struct oauth_response {
	int status;
	const struct http_response *head;
	const char *body; /* NUL-terminated */
	size_t len;
	json_t *json; /* the body when it is a JSON object, else NULL */
};
/* err 0 with the response (any status but a redirect), else why. */
typedef void oauth_fetch_fn(void *arg, int err, const char *why,
    const struct oauth_response *);
/*
 * GET (body NULL) or POST of body (content_type NULL: a form) to url,
 * checked by the policy,
 * pinned, TLS-verified, within OAUTH_FETCH_TIMEOUT_MS and OAUTH_FETCH_MAX
 * bytes; a redirect is an error (-EPERM), never followed. fields are extra
 * headers. cb runs once, from the loop; never NULL.
 */
struct oauth_fetch *oauth_fetch_start(const char *url, bool allow_local,
    const struct http_field *fields, size_t nfields, const char *body,
    const char *content_type, oauth_fetch_fn *cb, void *arg);
/* No callback after this. NULL is fine. */
void oauth_fetch_cancel(struct oauth_fetch *);

/* oauth-callback.c: the loopback listener the browser is sent back to. */
struct oauth_callback;
/*
 * A request to the callback path whose state matched (query: its
 * parameters, borrowed): returns the HTTP status to answer and sets *page
 * to a short text for the browser (static).
 */
typedef int oauth_callback_fn(void *arg, const json_t *query,
    const char **page);
/*
 * Listens on 127.0.0.1 at a fresh port for GET /callback?...&state=state;
 * 0 and *ret, or a negative errno with *cause.
 */
int oauth_callback_open(const char *state, oauth_callback_fn *, void *arg,
    struct oauth_callback **ret, char **cause);
/* http://127.0.0.1:PORT/callback (borrowed). */
const char *oauth_callback_uri(const struct oauth_callback *);
/* Stops accepting at once (the port closes); memory goes a bit later. */
void oauth_callback_close(struct oauth_callback *);

/* oauth-rules.c: the pure rules of discovery and choice. */
/* The protected resource metadata URLs to try, in the spec's order. */
json_t *oauth_rules_prm_urls(const char *server_url);
/* The authorization server metadata URLs to try for issuer, in order. */
json_t *oauth_rules_as_urls(const char *issuer);
/*
 * True when the resource of protected resource metadata names the server
 * at server_url: the same origin, and a path that is the server's or one
 * of its parents (on a "/" boundary).
 */
bool oauth_rules_resource_matches(const char *resource, const char *server_url);
/* The resource indicator of a server without metadata (new string). */
char *oauth_rules_default_resource(const char *server_url);
/* The origin of url ("http://h:p"), the 2025-03-26 authorization base. */
char *oauth_rules_origin(const char *url);
/* The union of two space-separated scope sets, in order (new, or NULL). */
char *oauth_rules_scope_union(const char *a, const char *b);
/* value is one of the strings of the JSON array list. */
bool oauth_rules_lists(const json_t *list, const char *value);
/* scope is one of the space-separated set. */
bool oauth_rules_scope_has(const char *set, const char *scope);
/* Every scope of wanted is in set. */
bool oauth_rules_scope_covers(const char *set, const char *wanted);
/*
 * RFC 9207 as the 2026-07-28 table says: 0 to go on, or -EACCES with
 * *why (static) when the authorization response must be refused.
 */
int oauth_rules_check_iss(const char *recorded, bool is_supported,
    const char *iss, const char **why);
/*
 * The token endpoint's client authentication for a client with (or
 * without) a secret, among what the server lists (NULL: RFC 8414's
 * default, client_secret_basic): "none", "client_secret_basic" or
 * "client_secret_post"; NULL when none of those fits.
 */
const char *oauth_rules_auth_method(const json_t *supported, bool has_secret);

/* oauth-token.c: requests to the token and registration endpoints. */
struct oauth_client {
	char *id;
	char *secret;
	char *method; /* none, client_secret_basic, client_secret_post */
	char *kind;   /* pre-registered, metadata-document, dynamic */
};
void oauth_client_clear(struct oauth_client *);
/* The client of a saved document (for a refresh). */
void oauth_client_from_json(const json_t *, struct oauth_client *);
json_t *oauth_client_to_json(const struct oauth_client *);
/*
 * A token request: the form (taken) gets the client's authentication;
 * cb gets err 0 and the parsed tokens (a new object: access_token,
 * token_type, expires_at, refresh_token?, scope?) or why it failed.
 */
typedef void oauth_tokens_fn(void *arg, int err, const char *why,
    json_t *tokens);
struct oauth_token_req;
struct oauth_token_req *oauth_token_request(const char *endpoint,
    bool allow_local, const struct oauth_client *, char *form,
    oauth_tokens_fn *cb, void *arg);
void oauth_token_cancel(struct oauth_token_req *);
/*
 * Dynamic client registration (RFC 7591) at endpoint for redirect_uri:
 * cb gets the client, or why it failed.
 */
typedef void oauth_registered_fn(void *arg, int err, const char *why,
    struct oauth_client *client);
struct oauth_token_req *oauth_register(const char *endpoint, bool allow_local,
    const char *redirect_uri, const json_t *auth_methods, const char *scope,
    oauth_registered_fn *cb, void *arg);

/* A string member of obj (borrowed), or NULL. */
static inline const char *
oauth_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* oauth-flow.c: discovery, registration, the browser's round trip, tokens. */
enum oauth_step {
	OAUTH_STEP_REFRESH_ONLY, /* a token about to expire: refresh it */
	OAUTH_STEP_PRM,		 /* protected resource metadata */
	OAUTH_STEP_AS,		 /* authorization server metadata */
	OAUTH_STEP_REFRESH,	 /* a refresh token of this server */
	OAUTH_STEP_REGISTER,	 /* dynamic client registration */
	OAUTH_STEP_USER,	 /* the browser has the URL */
	OAUTH_STEP_CODE,	 /* the code goes to the token endpoint */
};

struct oauth_flow {
	struct oauth *o;
	enum oauth_step step;
	bool is_login;
	bool is_refresh;
	bool is_insufficient;
	bool is_legacy;	    /* no resource metadata: 2025-03-26 rules */
	bool is_new_issuer; /* what is saved belongs to another server */
	bool iss_supported; /* RFC 9207 advertised */
	char *challenge_scope;
	char *resource_metadata;
	json_t *urls; /* candidates of the step */
	size_t next;
	char *resource;	  /* the resource indicator to send */
	char *prm_scopes; /* scopes_supported of the resource, joined */
	char *issuer;	  /* recorded from validated metadata, or NULL */
	json_t *as;	  /* the metadata, or an object of default endpoints */
	char *refused;	  /* why a metadata document was not used */
	struct oauth_client client;
	struct oauth_fetch *fetch;
	struct oauth_token_req *req;
	struct oauth_callback *listener;
	char *state;
	char *verifier;
	char *scope;
	struct event *ev; /* the first step, then the attempt's deadline */
};

struct oauth_trigger {
	int status; /* 401, 403 (insufficient_scope), or 0 */
	const char *www_authenticate;
	bool is_login;	 /* mcpctl auth login: ask the user in any case */
	bool is_refresh; /* the token expires: refresh it if one can */
};
/* Starts o->flow (none may run). */
void oauth_flow_start(struct oauth *, const struct oauth_trigger *);
/* Ends the flow without a word to anyone (closed, logged out). */
void oauth_flow_cancel(struct oauth_flow *);
/* Ends the flow in state, with a formatted reason, telling the holders. */
void oauth_flow_fail(struct oauth_flow *, enum oauth_state, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));
/* The issuer and endpoints are known: on to a refresh or the user. */
void oauth_flow_have_as(struct oauth_flow *);

/* oauth-discover.c: protected resource, then authorization server metadata. */
/* Starts discovery from the challenge's resource_metadata or well-known. */
void oauth_discover(struct oauth_flow *);

#endif
