/* SPDX-License-Identifier: ISC */
/*
 * What the bridge's relay keeps of its client's session from the lines it
 * passes (the initialize params, requests in flight, subscriptions, the
 * log level, digests of the lists), and the replay that makes the session
 * again on a new mcpd (doc/gateway.md, "The bridge across mcpd restarts").
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "errors.h"
#include "fnv.h"
#include "jsonrpc.h"
#include "jsonscan.h"
#include "relay.h"

/* The lists whose changes a client is told of, and their items. */
static const struct relay_kind {
	const char *method, *items, *changed;
} relay_kinds[] = {
	{ "tools/list", "tools", "notifications/tools/list_changed" },
	{ "prompts/list", "prompts", "notifications/prompts/list_changed" },
	{ "resources/list", "resources",
	    "notifications/resources/list_changed" },
	{ "resources/templates/list", "resourceTemplates",
	    "notifications/resources/list_changed" },
};

/* The JSON value text[0..len) as compact JSON (new), or NULL. */
static char *
relay_session_key(const char *text, size_t len)
{
	json_t *v = json_loadb(text, len, JSON_DECODE_ANY, NULL);
	char *key;

	if (v == NULL)
		return NULL;
	key = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(v);
	return key;
}

static bool
relay_session_is_tracked(const char *method)
{
	if (method == NULL)
		return false;
	for (size_t k = 0; k < RELAY_KINDS; k++)
		if (strcmp(method, relay_kinds[k].method) == 0)
			return true;
	return strcmp(method, "initialize") == 0 ||
	    strcmp(method, "resources/subscribe") == 0 ||
	    strcmp(method, "resources/unsubscribe") == 0 ||
	    strcmp(method, "logging/setLevel") == 0;
}

/* The same from a parsed message, for what the scanner leaves. */
static void
relay_session_parse(const char *text, size_t len, struct relay_msg *msg)
{
	json_t *v = json_loadb(text, len, 0, NULL), *id;

	if (!json_is_object(v)) {
		json_decref(v);
		return;
	}
	if ((id = json_object_get(v, "id")) != NULL)
		msg->key = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
	if (json_is_string(json_object_get(v, "method")))
		msg->method = strdup(json_string_value(json_object_get(v,
		    "method")));
	if (relay_session_is_tracked(msg->method))
		msg->params = json_incref(json_object_get(v, "params"));
	msg->is_error = json_object_get(v, "error") != NULL;
	msg->is_answer = msg->is_error || json_object_get(v, "result") != NULL;
	json_decref(v);
}

/*
 * What one line (without its newline) says: its id, method, the params
 * of the methods the relay keeps track of, and where its result is. The
 * scanner does it without a parse; what it does not vouch for is parsed.
 */
void
relay_session_scan(const char *text, size_t len, struct relay_msg *msg)
{
	struct jsonscan_member m[] = {
		{ "id", false, 0, 0 },
		{ "method", false, 0, 0 },
		{ "params", false, 0, 0 },
		{ "result", false, 0, 0 },
		{ "error", false, 0, 0 },
	};
	json_t *method;

	memset(msg, 0, sizeof *msg);
	if (len > 0 && text[len - 1] == '\r')
		len--;
	if (jsonscan_object(text, len, m, 5) < 0) {
		relay_session_parse(text, len, msg);
		return;
	}
	if (m[0].is_found)
		msg->key = relay_session_key(text + m[0].off, m[0].len);
	if (m[1].is_found &&
	    (method = json_loadb(text + m[1].off, m[1].len, JSON_DECODE_ANY,
		 NULL)) != NULL) {
		if (json_is_string(method))
			msg->method = strdup(json_string_value(method));
		json_decref(method);
	}
	if (m[2].is_found && relay_session_is_tracked(msg->method))
		msg->params = json_loadb(text + m[2].off, m[2].len, 0, NULL);
	msg->is_error = m[4].is_found;
	msg->is_answer = m[3].is_found || m[4].is_found;
	if (m[3].is_found) {
		msg->result = text + m[3].off;
		msg->result_len = m[3].len;
	}
}

void
relay_session_msg_clear(struct relay_msg *msg)
{
	free(msg->key);
	free(msg->method);
	json_decref(msg->params);
}

/* The kind of a list method, or -1. */
static int
relay_session_kind_of(const char *method)
{
	for (size_t k = 0; k < RELAY_KINDS; k++)
		if (method != NULL &&
		    strcmp(method, relay_kinds[k].method) == 0)
			return (int)k;
	return -1;
}

/*
 * Adds the items of a list page (the result's text) to *walk; whether it
 * has a next page (its cursor, new, in *ret_cursor when asked). False
 * when the page cannot be read.
 */
static bool
relay_session_page(int k, const char *result, size_t len, uint64_t *walk,
    bool *ret_more, char **ret_cursor)
{
	struct jsonscan_member m[] = {
		{ relay_kinds[k].items, false, 0, 0 },
		{ "nextCursor", false, 0, 0 },
	};
	json_t *cursor;

	if (result == NULL || jsonscan_object(result, len, m, 2) < 0 ||
	    !m[0].is_found)
		return false;
	/* mcpd writes a list the same way each time: its bytes are it. */
	*walk = fnv64_add(*walk, result + m[0].off, m[0].len);
	*ret_more = m[1].is_found && strncmp(result + m[1].off, "null", 4) != 0;
	if (ret_cursor != NULL && *ret_more) {
		cursor = json_loadb(result + m[1].off, m[1].len,
		    JSON_DECODE_ANY, NULL);
		*ret_cursor = json_is_string(cursor) ?
		    strdup(json_string_value(cursor)) :
		    NULL;
		json_decref(cursor);
		if (*ret_cursor == NULL)
			return false;
	}
	return true;
}

/* A page the client was given of list k, asked with params. */
static void
relay_session_track_list(struct relay *r, int k, const json_t *params,
    const struct relay_msg *msg)
{
	struct relay_list *l = &r->lists[k];
	const json_t *cursor = json_object_get(params, "cursor");
	bool is_more = false;

	if (msg->is_error)
		return;
	if (cursor == NULL || json_is_null(cursor)) {
		l->walk = FNV64_INIT;
		l->is_unknown = false;
	}
	if (!relay_session_page(k, msg->result, msg->result_len, &l->walk,
		&is_more, NULL))
		l->is_unknown = true;
	if (!is_more) {
		l->seen = l->walk;
		l->has_seen = true;
	}
}

/* mcpd answered the client's request key: what it changes of the session. */
void
relay_session_answered(struct relay *r, const char *key,
    const struct relay_msg *msg)
{
	json_t *e = json_object_get(r->inflight, key);
	const char *method;
	const json_t *params, *uri;
	int k;

	if (e == NULL)
		return;
	method = json_string_value(json_object_get(e, "method"));
	params = json_object_get(e, "params");
	uri = json_object_get(params, "uri");
	if ((k = relay_session_kind_of(method)) >= 0)
		relay_session_track_list(r, k, params, msg);
	else if (msg->is_error)
		;
	else if (strcmp(method, "resources/subscribe") == 0 &&
	    json_is_string(uri))
		json_object_set_new(r->subs, json_string_value(uri),
		    json_true());
	else if (strcmp(method, "resources/unsubscribe") == 0 &&
	    json_is_string(uri))
		json_object_del(r->subs, json_string_value(uri));
	else if (strcmp(method, "logging/setLevel") == 0 &&
	    json_object_get(params, "level") != NULL) {
		json_decref(r->level);
		r->level = json_incref(json_object_get(params, "level"));
	}
	json_object_del(r->inflight, key);
}

/* Sends one request of the relay's own, for what (stolen). */
static void
relay_session_own_request(struct relay *r, const char *method, json_t *params,
    json_t *what)
{
	char id[64], key[66];
	json_t *msg, *idv;

	/* Keys are ids as compact JSON, as relay_session_scan makes them. */
	snprintf(id, sizeof id, "mcpctl-bridge-%u", ++r->own_next);
	snprintf(key, sizeof key, "\"%s\"", id);
	idv = json_string(id);
	msg = jsonrpc_request(idv, method, params);
	(void)jsonrpc_write(r->own_out, msg);
	json_decref(msg);
	json_decref(idv);
	json_object_set_new(r->own, key, what);
}

static void
relay_session_own_notify(struct relay *r, const char *method)
{
	json_t *msg = jsonrpc_notification(method, NULL);

	(void)jsonrpc_write(r->own_out, msg);
	json_decref(msg);
}

/* A list the relay walks on the new mcpd: its first or next page. */
static void
relay_session_own_page(struct relay *r, int k, const char *cursor)
{
	relay_session_own_request(r, relay_kinds[k].method,
	    cursor != NULL ? json_pack("{s:s}", "cursor", cursor) :
			     json_object(),
	    json_pack("{s:s, s:i}", "for", "list", "kind", k));
}

/* The replay is over: list_changed where a list changed, then the client. */
static void
relay_session_replayed(struct relay *r)
{
	bool is_resources_told = false;
	json_t *msg;

	for (size_t k = 0; k < RELAY_KINDS; k++) {
		if (!r->lists[k].is_changed)
			continue;
		r->lists[k].is_changed = false;
		if (strcmp(relay_kinds[k].changed,
			"notifications/resources/list_changed") == 0) {
			if (is_resources_told)
				continue;
			is_resources_told = true;
		}
		msg = jsonrpc_notification(relay_kinds[k].changed, NULL);
		(void)jsonrpc_write(r->down_out, msg);
		json_decref(msg);
	}
	r->state = RELAY_LIVE;
	print_err("bridge: mcpd is back; the session goes on");
}

/* The text of an answer's error (new), for what the relay says. */
static char *
relay_session_error_text(const char *line, size_t len)
{
	json_t *v = json_loadb(line, len, 0, NULL);
	const char *text = json_string_value(json_object_get(json_object_get(v,
								 "error"),
	    "message"));
	char *s = strdup(text != NULL ? text : "an error");

	json_decref(v);
	return s;
}

/*
 * mcpd answered one of the relay's own requests; 0, or the exit status
 * when the session cannot be made again.
 */
int
relay_session_own_answer(struct relay *r, const char *key, const char *line,
    size_t len, const struct relay_msg *msg)
{
	json_t *e = json_object_get(r->own, key), *v;
	const char *what = json_string_value(json_object_get(e, "for"));
	const char *uri = json_string_value(json_object_get(e, "uri"));
	int k = (int)json_integer_value(json_object_get(e, "kind"));
	struct relay_list *l = &r->lists[k];
	char *text = NULL, *cursor = NULL, *id;
	bool is_more = false;
	const char *name;

	if (msg->is_error)
		text = relay_session_error_text(line, len);
	if (strcmp(what, "initialize") == 0 && text != NULL) {
		print_err(
		    "bridge: the new mcpd refused the session's initialize: %s; the client's session ends",
		    text);
		free(text);
		return MCPCTL_EXIT_ERROR;
	}
	if (strcmp(what, "initialize") == 0) {
		if (r->has_initialized)
			relay_session_own_notify(r,
			    "notifications/initialized");
		json_object_foreach(r->subs, name, v)
			relay_session_own_request(r, "resources/subscribe",
			    json_pack("{s:s}", "uri", name),
			    json_pack("{s:s, s:s}", "for", "subscribe", "uri",
				name));
		if (r->level != NULL)
			relay_session_own_request(r, "logging/setLevel",
			    json_pack("{s:O}", "level", r->level),
			    json_pack("{s:s}", "for", "setLevel"));
		for (size_t i = 0; i < RELAY_KINDS; i++)
			if (r->lists[i].has_seen) {
				r->lists[i].again = FNV64_INIT;
				relay_session_own_page(r, (int)i, NULL);
			}
	} else if (strcmp(what, "subscribe") == 0 && text != NULL) {
		print_err(
		    "bridge: resources/subscribe %s failed on the new mcpd: %s; its updates stop",
		    uri, text);
		json_object_del(r->subs, uri);
	} else if (strcmp(what, "setLevel") == 0 && text != NULL)
		print_err("bridge: logging/setLevel failed on the new mcpd: %s",
		    text);
	else if (strcmp(what, "list") == 0) {
		/* A list that cannot be read is told as changed. */
		if (text != NULL ||
		    !relay_session_page(k, msg->result, msg->result_len,
			&l->again, &is_more, &cursor))
			l->is_changed = true, is_more = false;
		else if (is_more)
			relay_session_own_page(r, k, cursor);
		else if (l->is_unknown || l->again != l->seen)
			l->is_changed = true;
		if (!is_more) {
			l->seen = l->again;
			l->is_unknown = false;
		}
		free(cursor);
	}
	free(text);
	id = strdup(key);
	json_object_del(r->own, id);
	free(id);
	if (r->state == RELAY_REPLAY && json_object_size(r->own) == 0)
		relay_session_replayed(r);
	return 0;
}

/* A line of the client's reached mcpd whole: what it starts or ends. */
void
relay_session_sent(struct relay *r, struct relay_line *l)
{
	if (l->method != NULL && l->key != NULL) {
		json_object_set_new(r->inflight, l->key,
		    json_pack("{s:s, s:O?}", "method", l->method, "params",
			l->params));
		if (strcmp(l->method, "initialize") == 0) {
			json_decref(r->init);
			r->init = json_incref(l->params);
		}
	} else if (l->method != NULL &&
	    strcmp(l->method, "notifications/initialized") == 0)
		r->has_initialized = true;
	else if (l->key != NULL)
		json_object_del(r->asked, l->key);
	free(l->key);
	free(l->method);
	json_decref(l->params);
}

void
relay_session_lost(struct relay *r)
{
	const char *key, *name;
	json_t *v, *id, *msg;
	void *tmp;

	json_object_foreach_safe(r->inflight, tmp, key, v) {
		id = json_loads(key, JSON_DECODE_ANY, NULL);
		msg = jsonrpc_error_kind(id, ERRORS_OUTCOME_UNKNOWN,
		    "mcpd went away before it answered; the request may have run, and it is not sent again",
		    json_pack("{s:s}", "execution_outcome", "unknown"));
		(void)jsonrpc_write(r->down_out, msg);
		json_decref(msg);
		json_decref(id);
	}
	json_object_clear(r->inflight);
	json_object_foreach(r->asked, name, v)
		json_object_set_new(r->stale, name, json_true());
	json_object_clear(r->asked);
	json_object_clear(r->own);
}

void
relay_session_replay(struct relay *r)
{
	if (r->init == NULL) {
		r->state = RELAY_LIVE;
		print_err("bridge: mcpd is back; the session goes on");
		return;
	}
	r->state = RELAY_REPLAY;
	relay_session_own_request(r, "initialize", json_incref(r->init),
	    json_pack("{s:s}", "for", "initialize"));
}
