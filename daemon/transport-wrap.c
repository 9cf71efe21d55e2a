/* SPDX-License-Identifier: ISC */
/*
 * A wrapper transport (the probe, the Docker gateway transport): the
 * session holds it, it holds an inner transport, and passes the inner
 * one's callbacks on to the session while it holds the handshake until
 * the first answer. What differs between wrappers comes through hooks.
 */
#include <stdio.h>

#include "log.h"
#include "mcpd.h"

static struct transport_wrap *
transport_wrap_of(void *arg)
{
	return arg;
}

/* Whether the inner transport's callbacks are heard now. */
static bool
transport_wrap_is_heard(const struct transport_wrap *w)
{
	return w->hooks->is_heard == NULL || w->hooks->is_heard(w);
}

/* Whether the inner transport may not listen yet (it starts behind HTTP). */
static bool
transport_wrap_waits_listen(const struct transport_wrap *w)
{
	return w->hooks->waits_listen == NULL || w->hooks->waits_listen(w);
}

/* The first answer: nothing is held any more, and the owner hears it. */
static void
transport_wrap_confirm(struct transport_wrap *w)
{
	if (w->hold.is_confirmed)
		return;
	transport_hold_confirm(&w->hold);
	if (w->hooks->confirmed != NULL)
		w->hooks->confirmed(w);
}

static bool
transport_wrap_on_raw(void *arg, const char *line, size_t len)
{
	struct transport_wrap *w = transport_wrap_of(arg);

	if (w->t.cbs->raw == NULL || !w->t.cbs->raw(w->t.cb_arg, line, len))
		return false;
	transport_wrap_confirm(w);
	return true;
}

static void
transport_wrap_on_message(void *arg, json_t *msg)
{
	struct transport_wrap *w = transport_wrap_of(arg);

	if (!transport_wrap_is_heard(w))
		return;
	transport_wrap_confirm(w);
	if (w->hooks->message != NULL)
		w->hooks->message(w);
	w->t.cbs->message(w->t.cb_arg, msg);
}

/* Until the first answer, a failure may mean "not listening yet". */
static void
transport_wrap_on_failed(void *arg, const json_t *id, enum errors_kind kind,
    const char *why)
{
	struct transport_wrap *w = transport_wrap_of(arg);
	char what[160];

	if (!transport_wrap_is_heard(w))
		return;
	if (!w->hold.is_confirmed && transport_wrap_waits_listen(w)) {
		w->hooks->describe(w, what, sizeof what);
		log_debug("%s not answering yet: %s", what, why);
		transport_hold_retry(&w->hold, w->resend_ms);
		return;
	}
	w->t.cbs->failed(w->t.cb_arg, id, kind, why);
}

static void
transport_wrap_on_stderr(void *arg, const char *line, size_t len)
{
	struct transport_wrap *w = transport_wrap_of(arg);

	if (!transport_wrap_is_heard(w) || w->is_closing)
		return;
	w->t.cbs->stderr_line(w->t.cb_arg, line, len);
	/* The session may have ended it meanwhile. */
	if (!w->is_closing && w->hooks->stderr_line != NULL)
		w->hooks->stderr_line(w, line, len);
}

static void
transport_wrap_on_closed(void *arg, const char *why)
{
	struct transport_wrap *w = transport_wrap_of(arg);

	if (!transport_wrap_is_heard(w) || w->is_closing)
		return;
	w->hooks->closed(w, why);
}

static void
transport_wrap_on_renewed(void *arg)
{
	struct transport_wrap *w = transport_wrap_of(arg);

	if (!w->is_closing && w->t.cbs->renewed != NULL)
		w->t.cbs->renewed(w->t.cb_arg);
}

const struct transport_cbs transport_wrap_cbs = {
	.raw = transport_wrap_on_raw,
	.message = transport_wrap_on_message,
	.failed = transport_wrap_on_failed,
	.stderr_line = transport_wrap_on_stderr,
	.closed = transport_wrap_on_closed,
	.renewed = transport_wrap_on_renewed,
};

/* The held requests are due again over the inner transport. */
static void
transport_wrap_resend_due(evutil_socket_t fd, short events, void *arg)
{
	struct transport_wrap *w = arg;

	(void)fd, (void)events;
	if (!w->hold.is_confirmed && !w->is_closing && w->inner != NULL &&
	    transport_wrap_waits_listen(w))
		transport_hold_send(&w->hold, w->inner);
}

void
transport_wrap_init(struct transport_wrap *w, const struct transport_ops *ops,
    const char *name, const struct transport_wrap_hooks *hooks, int resend_ms,
    const struct transport_cbs *cbs, void *arg)
{
	w->t.ops = ops;
	w->t.name = name;
	w->t.cbs = cbs;
	w->t.cb_arg = arg;
	w->hooks = hooks;
	w->resend_ms = resend_ms;
	transport_hold_init(&w->hold, transport_wrap_resend_due, w);
}

void
transport_wrap_free(struct transport_wrap *w)
{
	if (w->inner != NULL)
		w->inner->ops->free(w->inner);
	w->inner = NULL;
	transport_hold_free(&w->hold);
	w->done = NULL;
}

void
transport_wrap_fail(struct transport_wrap *w, const char *text)
{
	if (w->is_closing)
		return;
	w->is_closing = true;
	w->t.cbs->closed(w->t.cb_arg, text);
}

void
transport_wrap_progress(struct transport_wrap *w, const char *stage,
    const char *text)
{
	if (w->t.cbs != NULL && w->t.cbs->progress != NULL && !w->is_closing)
		w->t.cbs->progress(w->t.cb_arg, stage, text);
}

void
transport_wrap_closed_now(struct transport_wrap *w)
{
	void (*done)(void *) = w->done;

	w->done = NULL;
	if (done != NULL)
		done(w->done_arg);
}
