/* SPDX-License-Identifier: ISC */
/*
 * mcpd's own requests to a client: a server's sampling, elicitation or
 * roots request, relayed to the client whose call raised it (DESIGN 11),
 * and the roots/list mcpd asks a gateway session itself (gateway-roots.c).
 * Each waits for the client's answer, at most a deadline; it ends exactly
 * once, through its callback: answered, timed out, or its client gone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "control-int.h"
#include "log.h"

struct ask {
	char id[32]; /* "mcpd-ask-N": a string, never one of the client's */
	int timeout_ms;
	struct client *client;
	control_answer_fn *cb;
	void *arg;
	struct event *timer;
	TAILQ_ENTRY(ask) entry;
};

/* Takes it off its client's list; what remains is to call back and free. */
static void
control_ask_unlink(struct ask *a)
{
	TAILQ_REMOVE(&a->client->asks, a, entry);
	a->client->nasks--;
	event_free(a->timer);
}

static void
control_ask_end(struct ask *a, const json_t *result, const json_t *error,
    const char *why)
{
	control_ask_unlink(a);
	a->cb(a->arg, result, error, why);
	free(a);
}

static void
control_ask_expired(evutil_socket_t fd, short events, void *arg)
{
	struct ask *a = arg;
	char why[128];

	(void)fd, (void)events;
	snprintf(why, sizeof why,
	    "the client did not answer within %d ms; mcpd cancelled its request",
	    a->timeout_ms);
	control_send(a->client,
	    jsonrpc_notification("notifications/cancelled",
		json_pack("{s:s, s:s}", "requestId", a->id, "reason",
		    "mcpd's deadline passed")));
	control_ask_end(a, NULL, NULL, why);
}

int
control_ask(const struct request *r, int timeout_ms, const char *method,
    json_t *params, control_answer_fn *cb, void *arg)
{
	return control_ask_client(r->client, timeout_ms, method, params, cb,
	    arg);
}

const char *
control_ask_refusal(int r)
{
	return r == -EBUSY ?
	    "the client has too many of mcpd's requests waiting for its answer" :
	    "the client has gone";
}

int
control_ask_client(struct client *c, int timeout_ms, const char *method,
    json_t *params, control_answer_fn *cb, void *arg)
{
	static uint64_t next_id;
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	struct ask *a;
	json_t *id;

	if (c == NULL || c->is_closing) {
		json_decref(params);
		return -ENOTCONN;
	}
	if (c->nasks >= mcpd_opts.max_client_requests) {
		json_decref(params);
		return -EBUSY;
	}
	a = xcalloc(1, sizeof *a);
	snprintf(a->id, sizeof a->id, "mcpd-ask-%" PRIu64, ++next_id);
	a->timeout_ms = timeout_ms;
	a->client = c;
	a->cb = cb;
	a->arg = arg;
	a->timer = xnonnull(evtimer_new(mcpd_base, control_ask_expired, a));
	evtimer_add(a->timer, &tv);
	TAILQ_INSERT_TAIL(&c->asks, a, entry);
	c->nasks++;
	id = json_string(a->id);
	control_send(c, jsonrpc_request(id, method, params));
	json_decref(id);
	return 0;
}

void
control_answered(struct client *c, const struct jsonrpc_msg *m)
{
	const char *id = json_string_value(m->id);
	struct ask *a;

	TAILQ_FOREACH(a, &c->asks, entry)
		if (id != NULL && strcmp(id, a->id) == 0)
			break;
	if (a == NULL) {
		log_debug("dropped a client's answer to no request of mcpd's");
		return;
	}
	control_ask_end(a, m->type == JSONRPC_RESULT ? m->result : NULL,
	    m->type == JSONRPC_ERROR ? m->error : NULL, NULL);
}

void
control_asks_fail(struct client *c)
{
	struct ask *a;

	while ((a = TAILQ_FIRST(&c->asks)) != NULL)
		control_ask_end(a, NULL, NULL,
		    "the client went before it answered");
}
