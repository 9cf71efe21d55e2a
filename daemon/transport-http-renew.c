/* SPDX-License-Identifier: ISC */
/* A remote that forgot our session: initialized again once, requests resent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "transport-http-int.h"

/*
 * A request the server refused with 404 for its session (it did not run)
 * waits for the new session; once that is ready, it goes first, marked
 * resent (a second 404 fails it).
 */
static void
shttp_hold(struct shttp_transport *ht, struct shttp_post *p)
{
	json_t *tool = p->tool != NULL ? p->tool : json_null();

	if (ht->renewing != NULL) {
		json_array_append_new(ht->held,
		    json_pack("[OO]", p->msg, tool));
		return;
	}
	/* Renewed already (it went on the old session before that). */
	json_array_append_new(ht->waiting, json_pack("[OOb]", p->msg, tool, 1));
	event_active(ht->flush, EV_TIMEOUT, 0);
}

/* Sends the session's initialize again, with an id of mcpd's own. */
static void
shttp_renew(struct shttp_transport *ht)
{
	json_t *msg = json_deep_copy(ht->init_msg);
	struct shttp_post *p;

	ht->epoch++;
	free(ht->session_id);
	ht->session_id = NULL;
	/* The server-push stream of the old session ends with it. */
	if (ht->listen != NULL)
		shttp_post_free(ht->listen);
	json_object_set_new(msg, "id",
	    json_sprintf("mcpd-renew-%u", ht->epoch));
	p = shttp_post_new(ht, msg);
	ht->renewing = p;
	log_debug("a remote server forgot our session: initializing it again");
	shttp_post_start(ht, p, "POST", msg, NULL);
	json_decref(msg);
}

/*
 * p got 404 (or 400 naming the session) for our session: the server
 * forgot it. A request that went on the session it forgot did not run:
 * it waits while the session is initialized again, once; one that was
 * sent again on the new session and refused again fails, and the
 * connection is given up (restarted, as after a crash). A resumed answer
 * stream means the server took the request: it may have run.
 */
void
shttp_session_lost(struct shttp_post *p)
{
	struct shttp_transport *ht = p->ht;
	bool is_request = p->id != NULL && !p->is_answered && p->msg != NULL;
	bool is_current = p->epoch == ht->epoch;
	int status = p->status;
	char text[512];

	if (is_request && p->is_resent) {
		snprintf(text, sizeof text,
		    "the server answered HTTP %d for its new session too (mcpd had initialized it again after HTTP 404 for the one it forgot); the request did not run",
		    status);
		shttp_fail_request(p, ERRORS_UNAVAILABLE, text);
		shttp_post_free(p);
		snprintf(text, sizeof text,
		    "the server forgot its new session too (HTTP %d right after mcpd initialized it again)",
		    status);
		shttp_report(ht, text);
		return;
	}
	if (is_request && p->is_resumed)
		shttp_fail_request(p, ERRORS_OUTCOME_UNKNOWN,
		    "the server forgot mcpd's session while the request ran (HTTP 404 when its answer was resumed); it may have run");
	else if (is_request)
		shttp_hold(ht, p);
	shttp_post_free(p);
	if (!is_current)
		return; /* an older session's: initialized again already */
	if (ht->init_msg == NULL) {
		snprintf(text, sizeof text,
		    "the server no longer knows our session (HTTP %d)", status);
		shttp_report(ht, text);
		return;
	}
	shttp_renew(ht);
}

/* The server answered our initialize again: the held requests go. */
void
shttp_renewed(struct shttp_transport *ht, json_t *msg)
{
	const char *v = shttp_version_of(msg);
	json_t *error = json_object_get(msg, "error"), *note, *pair;
	const char *message = json_string_value(json_object_get(error,
	    "message"));
	char text[512];
	size_t i;

	ht->renewing = NULL;
	if (error != NULL) {
		snprintf(text, sizeof text, "it refused it: %.200s",
		    message != NULL ? message : "(no message)");
		shttp_renew_failed(ht, text);
		return;
	}
	if (v == NULL || ht->version == NULL || strcmp(v, ht->version) != 0) {
		snprintf(text, sizeof text,
		    "it answered with protocol version %.64s, not %.64s",
		    v != NULL ? v : "(none)",
		    ht->version != NULL ? ht->version : "(none)");
		shttp_renew_failed(ht, text);
		return;
	}
	/* In order, before anything sent since: they were sent first. */
	json_array_foreach(ht->held, i, pair) {
		json_array_append_new(pair, json_true());
		json_array_insert(ht->waiting, i, pair);
	}
	json_array_clear(ht->held);
	/* As at the start: the rest waits until it is taken (ht->initialized). */
	note = jsonrpc_notification("notifications/initialized", NULL);
	shttp_send_now(ht, note, NULL, false);
	json_decref(note);
	if (ht->t.cbs->renewed != NULL && !ht->is_closing)
		ht->t.cbs->renewed(ht->t.cb_arg);
}

/* Initializing again failed: what waited fails, the connection ends. */
void
shttp_renew_failed(struct shttp_transport *ht, const char *why)
{
	json_t *held = ht->held, *pair;
	char text[768];
	size_t i;

	ht->held = xjson(json_array());
	snprintf(text, sizeof text,
	    "the server no longer knows mcpd's session (HTTP 404), and initializing a new one failed (%s); the request did not run",
	    why);
	json_array_foreach(held, i, pair)
		if (!ht->is_closing)
			ht->t.cbs->failed(ht->t.cb_arg,
			    json_object_get(json_array_get(pair, 0), "id"),
			    ERRORS_UNAVAILABLE, text);
	json_decref(held);
	snprintf(text, sizeof text,
	    "the server no longer knows our session (HTTP 404), and initializing a new one failed: %s",
	    why);
	shttp_report(ht, text);
}

/*
 * A cancellation of a request that waits for the new session: it goes
 * unsent (its 404 says it did not run), and so does the cancellation: 2.
 */
int
shttp_renew_unpark(struct shttp_transport *ht, const json_t *msg)
{
	if (jsonrpc_unqueue_cancelled(ht->held, msg) != 1)
		return 0;
	free(ht->held_why);
	ht->held_why = xstrdup(
	    "the server no longer knew mcpd's session (HTTP 404) and a new one was being initialized");
	return 2;
}
