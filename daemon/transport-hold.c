/* SPDX-License-Identifier: ISC */
/*
 * The handshake a wrapper transport holds (the probe, the Docker gateway
 * transport): every request the session sends before the inner transport
 * first answers is kept, and sent again over a new inner transport or
 * while the inner one is not listening yet, until an answer confirms it.
 */
#include "jsonrpc.h"
#include "log.h"
#include "mcpd.h"

void
transport_hold_init(struct transport_hold *h,
    void (*resend)(evutil_socket_t, short, void *), void *arg)
{
	h->held = xjson(json_array());
	h->is_confirmed = false;
	if ((h->resend = evtimer_new(mcpd_base, resend, arg)) == NULL)
		fatalx("cannot make a timer");
}

void
transport_hold_free(struct transport_hold *h)
{
	json_decref(h->held);
	h->held = NULL;
	if (h->resend != NULL)
		event_free(h->resend);
	h->resend = NULL;
}

bool
transport_hold_note(struct transport_hold *h, const json_t *msg,
    const json_t *tool)
{
	if (h->is_confirmed)
		return false;
	/*
	 * A request the session gave up on (it sends notifications/cancelled)
	 * is not held any longer: sent again it would only race the one that
	 * replaced it (a stale server/discover next to initialize).
	 */
	if (jsonrpc_unqueue_cancelled(h->held, msg) >= 0)
		return true;
	if (json_object_get(msg, "id") != NULL)
		json_array_append_new(h->held,
		    json_pack("[OO]", msg, tool != NULL ? tool : json_null()));
	return false;
}

void
transport_hold_send(const struct transport_hold *h, struct transport *inner)
{
	json_t *pair;
	size_t i;

	json_array_foreach(h->held, i, pair)
		inner->ops->send(inner, json_array_get(pair, 0),
		    json_array_get(pair, 1));
}

void
transport_hold_confirm(struct transport_hold *h)
{
	if (h->is_confirmed)
		return;
	h->is_confirmed = true;
	json_array_clear(h->held);
	evtimer_del(h->resend);
}

void
transport_hold_retry(struct transport_hold *h, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	if (!evtimer_pending(h->resend, NULL))
		evtimer_add(h->resend, &tv);
}

void
transport_hold_stop(struct transport_hold *h)
{
	if (h->resend != NULL)
		evtimer_del(h->resend);
}
