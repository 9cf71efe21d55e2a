/* SPDX-License-Identifier: ISC */
/* Outgoing messages, gathered per peer and written once per loop turn. */
#include <errno.h>
#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "log.h"
#include "mcpd.h"

/*
 * A bufferevent writes only after the loop reports its descriptor
 * writable: two epoll_ctl calls and a loop turn per answer. A sendq
 * collects what this loop turn sends to one peer and writes it with one
 * writev at the end of the turn; only what the kernel does not take goes
 * through the bufferevent.
 */
struct sendq {
	struct bufferevent *bev;
	struct evbuffer *pending;
	bool is_dirty;
	void (*drained)(void *); /* the kernel took all that was pending */
	void *drained_arg;
	void (*deliver)(void *, struct evbuffer *); /* in-process, or NULL */
	void *deliver_arg;
	LIST_ENTRY(sendq) entry;
};

static LIST_HEAD(, sendq) sendq_dirty = LIST_HEAD_INITIALIZER(sendq_dirty);
static struct event *sendq_flush_event;

struct sendq *
sendq_new(struct bufferevent *bev)
{
	struct sendq *q = xcalloc(1, sizeof *q);

	if ((q->pending = evbuffer_new()) == NULL)
		fatalx("out of memory");
	q->bev = bev;
	return q;
}

void
sendq_free(struct sendq *q)
{
	if (q == NULL)
		return;
	if (q->is_dirty)
		LIST_REMOVE(q, entry);
	evbuffer_free(q->pending);
	free(q);
}

void
sendq_on_drained(struct sendq *q, void (*fn)(void *), void *arg)
{
	q->drained = fn;
	q->drained_arg = arg;
}

void
sendq_deliver_to(struct sendq *q, void (*fn)(void *, struct evbuffer *),
    void *arg)
{
	q->deliver = fn;
	q->deliver_arg = arg;
}

/*
 * Writes what is pending (or hands it to the peer it is delivered to);
 * what is left waits in the bufferevent.
 */
void
sendq_flush(struct sendq *q)
{
	struct evbuffer *out = bufferevent_get_output(q->bev);
	bool had_pending = evbuffer_get_length(q->pending) > 0;

	if (q->is_dirty) {
		LIST_REMOVE(q, entry);
		q->is_dirty = false;
	}
	/*
	 * No second copy of what a peer in this process has not sent on: it
	 * takes the lines themselves. It may forget q on the way (its
	 * session ended): what is left then goes the usual way.
	 */
	if (q->deliver != NULL && had_pending && evbuffer_get_length(out) == 0)
		q->deliver(q->deliver_arg, q->pending);
	if (bufferevent_getfd(q->bev) < 0) /* no socket: nobody else takes it */
		evbuffer_drain(q->pending, evbuffer_get_length(q->pending));
	else if (evbuffer_get_length(out) == 0)
		while (evbuffer_get_length(q->pending) > 0 &&
		    evbuffer_write(q->pending, bufferevent_getfd(q->bev)) > 0)
			;
	/* On EAGAIN, or an error the bufferevent will itself report. */
	if (evbuffer_get_length(q->pending) > 0)
		evbuffer_add_buffer(out, q->pending);
	else if (had_pending && evbuffer_get_length(out) == 0 &&
	    q->drained != NULL)
		q->drained(q->drained_arg);
}

static void
sendq_flush_all(evutil_socket_t fd, short events, void *arg)
{
	struct sendq *q;

	(void)fd, (void)events, (void)arg;
	while ((q = LIST_FIRST(&sendq_dirty)) != NULL)
		sendq_flush(q);
}

/* Something was queued: write it at the end of this loop turn. */
static void
sendq_mark(struct sendq *q)
{
	if (q->is_dirty)
		return;
	if (sendq_flush_event == NULL &&
	    (sendq_flush_event = event_new(mcpd_base, -1, 0, sendq_flush_all,
		 NULL)) == NULL)
		fatalx("cannot make the send queue event");
	q->is_dirty = true;
	LIST_INSERT_HEAD(&sendq_dirty, q, entry);
	event_active(sendq_flush_event, EV_TIMEOUT, 0);
}

int
sendq_push(struct sendq *q, const json_t *msg)
{
	int r;

	if ((r = jsonrpc_write(q->pending, msg)) < 0)
		return r;
	sendq_mark(q);
	return 0;
}

int
sendq_push_text(struct sendq *q, const struct iovec *v, int n)
{
	int r;

	if ((r = jsonrpc_write_text(q->pending, v, n)) < 0)
		return r;
	sendq_mark(q);
	return 0;
}

int
sendq_push_raw_result(struct sendq *q, const json_t *id, const char *raw,
    size_t len)
{
	int r;

	if ((r = jsonrpc_write_raw_result(q->pending, id, raw, len)) < 0)
		return r;
	sendq_mark(q);
	return 0;
}

struct evbuffer *
sendq_buffer(struct sendq *q)
{
	sendq_mark(q);
	return q->pending;
}

size_t
sendq_length(const struct sendq *q)
{
	return evbuffer_get_length(q->pending) +
	    evbuffer_get_length(bufferevent_get_output(q->bev));
}

void
sendq_close(void)
{
	if (sendq_flush_event != NULL)
		event_free(sendq_flush_event);
	sendq_flush_event = NULL;
}
