/* SPDX-License-Identifier: ISC */
/*
 * A server's stderr: its last lines, clients that follow new ones, and
 * the copy of them kept in the state directory from a stop to the next
 * start (<state>/logs/<id>.log).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "paths.h"
#include "server-int.h"

#define SERVER_LOGS_DIR "logs"

/* A mcpd/logs request with follow: answered when following ends. */
struct server_follower {
	struct server_reply *reply;
	TAILQ_ENTRY(server_follower) entry;
};

json_t *
server_logs(const struct server *s, size_t lines)
{
	return json_pack("{s:o, s:o}", "lines", logring_tail(s->logs, lines),
	    "times", logring_times(s->logs, lines));
}

/* Answers the follower's request (with why following ended) and drops it. */
static void
server_follower_end(struct server *s, struct server_follower *f,
    const char *why)
{
	TAILQ_REMOVE(&s->followers, f, entry);
	f->reply->ops->reply(f->reply,
	    json_pack("{s:[], s:s, s:s}", "lines", "server", s->name, "ended",
		why));
	free(f);
}

/* An mcpd/log notification's params: the server, a line and its time. */
static json_t *
server_logs_line(const struct server *s, json_t *line, json_t *time)
{
	return json_pack("{s:s, s:O, s:O}", "server", s->name, "line", line,
	    "time", time);
}

/* Sends one line to each follower; a gone or too slow one is dropped. */
static void
server_logs_send(struct server *s, json_t *line, json_t *time)
{
	struct server_follower *f, *next;
	int r;

	for (f = TAILQ_FIRST(&s->followers); f != NULL; f = next) {
		next = TAILQ_NEXT(f, entry);
		r = f->reply->ops->notify(f->reply, "mcpd/log",
		    server_logs_line(s, line, time));
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
	json_t *text, *time;

	logring_push(s->logs, line, len);
	if (TAILQ_EMPTY(&s->followers))
		return;
	/* The ring's copy: the same text, made valid UTF-8 once. */
	text = logring_tail(s->logs, 1);
	time = logring_times(s->logs, 1);
	server_logs_send(s, json_array_get(text, 0), json_array_get(time, 0));
	json_decref(text);
	json_decref(time);
}

void
server_logs_follow(struct server *s, struct server_reply *rep, size_t lines)
{
	struct server_follower *f, *next;
	json_t *tail = logring_tail(s->logs, lines), *line;
	json_t *times = logring_times(s->logs, lines);
	size_t i;

	/* Followers whose clients went without a line since: drop them now. */
	for (f = TAILQ_FIRST(&s->followers); f != NULL; f = next) {
		next = TAILQ_NEXT(f, entry);
		if (!f->reply->ops->is_live(f->reply))
			server_follower_end(s, f, "the client has gone");
	}
	f = xcalloc(1, sizeof *f);
	f->reply = rep;
	TAILQ_INSERT_TAIL(&s->followers, f, entry);
	/* The last lines first, as notifications too: one stream, in order. */
	json_array_foreach(tail, i, line)
		if (rep->ops->notify(rep, "mcpd/log",
			server_logs_line(s, line, json_array_get(times, i))) <
		    0)
			break;
	json_decref(tail);
	json_decref(times);
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

/* <state>/logs/<id>.log, or NULL for an id that is no plain file name. */
static char *
server_logs_path(const struct server *s)
{
	char *path;

	if (s->id[0] == '\0')
		return NULL;
	for (const char *c = s->id; *c != '\0'; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
			return NULL;
	xasprintf(&path, "%s/" SERVER_LOGS_DIR "/%s.log", mcpd_opts.state_dir,
	    s->id);
	return path;
}

void
server_logs_save(struct server *s)
{
	char *path = server_logs_path(s), *dir, *buf, *cause = NULL;
	size_t len;
	int r;

	if (path == NULL)
		return;
	xasprintf(&dir, "%s/" SERVER_LOGS_DIR, mcpd_opts.state_dir);
	if ((r = paths_mkdir_p(dir, 0700)) < 0)
		xasprintf(&cause, "cannot create %s: %s", dir, strerror(-r));
	else {
		logring_save(s->logs, &buf, &len);
		r = fileio_write_atomic(path, buf, len, 0600, &cause);
		free(buf);
	}
	if (r < 0)
		log_server(LOG_WARNING, s->name,
		    "its log lines are not kept for the next start: %s",
		    cause != NULL ? cause : strerror(-r));
	free(cause);
	free(dir);
	free(path);
}

void
server_logs_restore(struct server *s)
{
	size_t max = logring_save_max(mcpd_opts.log_lines), len;
	char *path = server_logs_path(s), *buf = NULL, *cause = NULL;
	int r;

	if (path == NULL)
		return;
	if ((r = fileio_read_all(path, max, FILEIO_REGULAR | FILEIO_NOFOLLOW,
		 &buf, &len)) == -EFBIG)
		xasprintf(&cause,
		    "it is larger than %zu bytes, the most --log-lines %zu can make",
		    max, mcpd_opts.log_lines);
	else if (r < 0 && r != -ENOENT)
		xasprintf(&cause, "%s", strerror(-r));
	else if (r == 0)
		r = logring_load(s->logs, buf, len, &cause);
	free(buf);
	if (r < 0 && r != -ENOENT) {
		log_server(LOG_WARNING, s->name,
		    "the log saved at mcpd's last stop is ignored and left as it is (%s): %s",
		    path, cause != NULL ? cause : strerror(-r));
		server_logs_note(s,
		    "the log saved at mcpd's last stop is ignored: %s",
		    cause != NULL ? cause : strerror(-r));
	} else if (r > 0)
		logring_mark_restart(s->logs);
	/* Read, it is in the ring: a crash from here on shows no stale copy. */
	if (r >= 0 && unlink(path) < 0)
		log_server(LOG_WARNING, s->name, "cannot remove %s: %s", path,
		    strerror(errno));
	free(cause);
	free(path);
}

void
server_logs_forget(struct server *s)
{
	char *path = server_logs_path(s);

	if (path != NULL && unlink(path) < 0 && errno != ENOENT)
		log_server(LOG_WARNING, s->name, "cannot remove %s: %s", path,
		    strerror(errno));
	free(path);
}

void
server_logs_unfollow_all(const char *why)
{
	struct server_follower *f;
	struct server *s;

	TAILQ_FOREACH(s, &server_list, entry)
		while ((f = TAILQ_FIRST(&s->followers)) != NULL)
			server_follower_end(s, f, why);
}
