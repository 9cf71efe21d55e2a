/* SPDX-License-Identifier: ISC */
/* The one deferred queue: frees and completions for a later loop turn. */
#include <sys/queue.h>

#include <stdlib.h>

#include "log.h"
#include "mcpd.h"

struct defer_entry {
	void (*fn)(void *);
	void *arg;
	STAILQ_ENTRY(defer_entry) entry;
};

static STAILQ_HEAD(,
    defer_entry) defer_queue = STAILQ_HEAD_INITIALIZER(defer_queue);
static struct event *defer_event;

/* Releases what was queued before this turn; later entries wait a turn. */
static void
defer_run(evutil_socket_t fd, short events, void *arg)
{
	STAILQ_HEAD(, defer_entry) now = STAILQ_HEAD_INITIALIZER(now);
	struct defer_entry *e;

	(void)fd, (void)events, (void)arg;
	STAILQ_CONCAT(&now, &defer_queue);
	while ((e = STAILQ_FIRST(&now)) != NULL) {
		STAILQ_REMOVE_HEAD(&now, entry);
		e->fn(e->arg);
		free(e);
	}
}

void
defer_call(void (*fn)(void *), void *arg)
{
	struct defer_entry *e = xmalloc(sizeof *e);

	e->fn = fn;
	e->arg = arg;
	STAILQ_INSERT_TAIL(&defer_queue, e, entry);
	if (defer_event == NULL &&
	    (defer_event = event_new(mcpd_base, -1, 0, defer_run, NULL)) ==
		NULL)
		fatalx("cannot make the deferred event");
	event_active(defer_event, EV_TIMEOUT, 0);
}

void
defer_close(void)
{
	while (!STAILQ_EMPTY(&defer_queue))
		defer_run(-1, 0, NULL);
	if (defer_event != NULL)
		event_free(defer_event);
	defer_event = NULL;
}
