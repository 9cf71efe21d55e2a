/* SPDX-License-Identifier: ISC */
/* A server's stderr: its last lines, and clients that follow new ones. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "server-int.h"

/* A mcpd/logs request with follow: answered when following ends. */
struct server_follower {
	struct request *req;
	TAILQ_ENTRY(server_follower) entry;
};

json_t *
server_logs(const struct server *s, size_t lines)
{
	return logring_tail(s->logs, lines);
}

/* Answers the follower's request (with why following ended) and drops it. */
static void
server_follower_end(struct server *s, struct server_follower *f,
    const char *why)
{
	TAILQ_REMOVE(&s->followers, f, entry);
	control_reply(f->req,
	    json_pack("{s:[], s:s, s:s}", "lines", "server", s->name, "ended",
		why));
	free(f);
}

/* Sends one line to each follower; a gone or too slow one is dropped. */
static void
server_logs_send(struct server *s, json_t *line)
{
	struct server_follower *f, *next;
	int r;

	for (f = TAILQ_FIRST(&s->followers); f != NULL; f = next) {
		next = TAILQ_NEXT(f, entry);
		r = control_notify(f->req, "mcpd/log",
		    json_pack("{s:s, s:O}", "server", s->name, "line", line));
		if (r == -ENOBUFS)
			server_follower_end(s, f,
			    "the client read too slowly; lines were lost, follow again to go on");
		else if (r < 0)
			server_follower_end(s, f, "the client has gone");
	}
}

void
server_logs_push(struct server *s, const char *line, size_t len)
{
	json_t *text;

	logring_push(s->logs, line, len);
	if (TAILQ_EMPTY(&s->followers))
		return;
	/* The ring's copy: the same text, made valid UTF-8 once. */
	text = logring_tail(s->logs, 1);
	server_logs_send(s, json_array_get(text, 0));
	json_decref(text);
}

void
server_logs_follow(struct server *s, struct request *req, size_t lines)
{
	struct server_follower *f, *next;
	json_t *tail = logring_tail(s->logs, lines), *line;
	size_t i;

	/* Followers whose clients went without a line since: drop them now. */
	for (f = TAILQ_FIRST(&s->followers); f != NULL; f = next) {
		next = TAILQ_NEXT(f, entry);
		if (!control_is_live(f->req))
			server_follower_end(s, f, "the client has gone");
	}
	f = xcalloc(1, sizeof *f);
	f->req = req;
	TAILQ_INSERT_TAIL(&s->followers, f, entry);
	/* The last lines first, as notifications too: one stream, in order. */
	json_array_foreach(tail, i, line)
		if (control_notify(req, "mcpd/log",
			json_pack("{s:s, s:O}", "server", s->name, "line",
			    line)) < 0)
			break;
	json_decref(tail);
}

void
server_logs_end(struct server *s)
{
	struct server_follower *f;

	while ((f = TAILQ_FIRST(&s->followers)) != NULL)
		server_follower_end(s, f,
		    mcpd_is_stopping() ? "mcpd is shutting down" :
					 "the server was unloaded");
}

void
server_logs_note(struct server *s, const char *fmt, ...)
{
	char line[1024], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	va_list ap;
	int n;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = snprintf(line, sizeof line, "[mcpd %s] ", stamp);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	server_logs_push(s, line, strlen(line));
}
