/* SPDX-License-Identifier: ISC */
/* The stdio transport: one child process, NDJSON on its stdin and stdout. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "linebuf.h"
#include "log.h"
#include "mcpd.h"

#define STDIO_STDERR_LINE_MAX 4096
#define STDIO_READ_MAX	      (1024 * 1024)

struct stdio_transport {
	struct transport t;
	/* Its own copy of what it runs, until it has run it. */
	char **argv, **env, *cwd;
	struct child_io io;
	struct bufferevent *in, *err;
	struct fdread out; /* the hot path: no FIONREAD per read */
	bool is_reading;   /* out was set up (and its fd is to be closed) */
	struct sendq *inq; /* what goes to its stdin */
	struct linebuf out_lines, err_lines;
	struct event *stop_timer;
	int stop_step; /* 0 running, 1 stdin closed, 2 TERM, 3 KILL */
	bool has_exited;
	bool is_closing; /* close() was called: report nothing more */
	void (*done)(void *);
	void *done_arg;
};

static void stdio_report_closed(struct stdio_transport *, const char *);

static struct stdio_transport *
stdio_of(struct transport *t)
{
	return (struct stdio_transport *)t;
}

static void
stdio_bev_free(struct bufferevent **bev)
{
	if (*bev != NULL) {
		bufferevent_free(*bev);
		*bev = NULL;
	}
}

/* Closing the child's stdin is how a stdio server is asked to stop. */
static void
stdio_close_stdin(struct stdio_transport *st)
{
	/* What was sent last (a cancellation, say) still goes first. */
	if (st->inq != NULL)
		sendq_flush(st->inq);
	sendq_free(st->inq);
	st->inq = NULL;
	stdio_bev_free(&st->in);
}

static void
stdio_deliver_line(struct stdio_transport *st, char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg;
	char note[256];

	if (len == 0 ||
	    (st->t.cbs->raw != NULL && st->t.cbs->raw(st->t.cb_arg, line, len)))
		return;
	msg = jsonrpc_parse(line, len, &jerr);
	if (msg == NULL) {
		/* Not protocol: keep it where an operator will look. */
		snprintf(note, sizeof note,
		    "[mcpd: stdout line is not JSON and was ignored: %.120s]",
		    line);
		st->t.cbs->stderr_line(st->t.cb_arg, note, strlen(note));
		return;
	}
	st->t.cbs->message(st->t.cb_arg, msg);
	json_decref(msg);
}

/* Reads every complete stdout line; false once the transport was closed. */
static bool
stdio_drain_stdout(struct stdio_transport *st)
{
	struct evbuffer *in = st->out.in;
	char *line, why[128];
	size_t len;
	int r = 0;

	while (!st->is_closing &&
	    (r = linebuf_peek(&st->out_lines, in, &line, &len)) > 0) {
		stdio_deliver_line(st, line, len);
		if (st->is_closing)
			return false;
		linebuf_consume(&st->out_lines, in);
	}
	if (!st->is_closing && r < 0) {
		snprintf(why, sizeof why,
		    "the server sent a message longer than the limit of %zu bytes",
		    st->out_lines.max);
		stdio_report_closed(st, why);
		return false;
	}
	return !st->is_closing;
}

static void
stdio_stdout_read(void *arg)
{
	stdio_drain_stdout(arg);
}

/* EOF or error on stdout: the exit status tells the story. */
static void
stdio_stdout_end(void *arg, int error)
{
	struct stdio_transport *st = arg;

	(void)error;
	fdread_disable(&st->out);
}

static void
stdio_stderr_read(struct bufferevent *bev, void *arg)
{
	struct stdio_transport *st = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	char *line;
	size_t len;
	int r;

	while ((r = linebuf_peek(&st->err_lines, in, &line, &len)) > 0) {
		if (!st->is_closing)
			st->t.cbs->stderr_line(st->t.cb_arg, line, len);
		linebuf_consume(&st->err_lines, in);
	}
	if (r < 0) {
		/* An endless line: keep its start, drop the rest. */
		line = (char *)evbuffer_pullup(in, STDIO_STDERR_LINE_MAX);
		if (!st->is_closing && line != NULL)
			st->t.cbs->stderr_line(st->t.cb_arg, line,
			    STDIO_STDERR_LINE_MAX);
		evbuffer_drain(in, evbuffer_get_length(in));
		linebuf_init(&st->err_lines, STDIO_STDERR_LINE_MAX);
	}
}

/*
 * Reads what the pipe holds now into the bufferevent's input, as the
 * bufferevent itself does: it keeps the input's end frozen otherwise.
 */
static void
stdio_read_now(struct bufferevent *bev, int fd)
{
	struct evbuffer *in = bufferevent_get_input(bev);

	evbuffer_unfreeze(in, 0);
	while (evbuffer_read(in, fd, 65536) > 0)
		;
	evbuffer_freeze(in, 0);
}

/*
 * Reads what is already in the stderr pipe: lines the server wrote before
 * an answer (or its death) may not have been read yet when it matters.
 */
static void
stdio_drain(struct transport *t)
{
	struct stdio_transport *st = stdio_of(t);

	if (st->err == NULL)
		return;
	stdio_read_now(st->err, st->io.err);
	stdio_stderr_read(st->err, st);
}

static void
stdio_pipe_event(struct bufferevent *bev, short what, void *arg)
{
	struct stdio_transport *st = arg;

	(void)what;
	/* EOF or error on a pipe: the exit status tells the story. */
	if (bev == st->in)
		stdio_close_stdin(st);
	else
		bufferevent_disable(bev, EV_READ);
}

static void
stdio_finish(struct stdio_transport *st)
{
	if (st->stop_timer != NULL) {
		event_free(st->stop_timer);
		st->stop_timer = NULL;
	}
	if (st->done != NULL) {
		void (*done)(void *) = st->done;

		st->done = NULL;
		done(st->done_arg);
	}
}

static void
stdio_exited(void *arg, int status)
{
	struct stdio_transport *st = arg;
	char *why, text[256];

	st->has_exited = true;
	/* Sweep whatever else runs in the server's process group. */
	killpg(st->io.pid, SIGKILL);
	if (st->is_closing) {
		stdio_finish(st);
		return;
	}
	/* Take what it wrote before it died, then say how it ended. */
	stdio_drain(&st->t);
	if (st->is_reading) {
		fdread_now(&st->out);
		if (!stdio_drain_stdout(st))
			return;
	}
	why = child_describe_status(status);
	snprintf(text, sizeof text, "the server %s", why);
	stdio_report_closed(st, text);
	free(why);
}

static void
stdio_report_closed(struct stdio_transport *st, const char *why)
{
	if (st->is_closing)
		return;
	st->is_closing = true;
	if (!st->has_exited)
		killpg(st->io.pid, SIGKILL);
	st->t.cbs->closed(st->t.cb_arg, why);
}

static struct bufferevent *
stdio_bev_new(struct stdio_transport *st, int fd, bufferevent_data_cb read_cb)
{
	struct bufferevent *bev;

	bev = bufferevent_socket_new(mcpd_base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL)
		return NULL;
	bufferevent_set_max_single_read(bev, STDIO_READ_MAX);
	bufferevent_setcb(bev, read_cb, NULL, stdio_pipe_event, st);
	bufferevent_enable(bev, read_cb != NULL ? EV_READ : EV_WRITE);
	return bev;
}

static void
stdio_forget_spec(struct stdio_transport *st)
{
	child_strv_free(st->argv);
	child_strv_wipe_free(st->env);
	free(st->cwd);
	st->argv = st->env = NULL;
	st->cwd = NULL;
}

static void stdio_attach(struct stdio_transport *);

static int
stdio_open(struct transport *t, char **cause)
{
	struct stdio_transport *st = stdio_of(t);
	struct child_spec spec = { st->argv, st->env, st->cwd };
	int r = child_spawn(&spec, &st->io, cause);

	/* The environment may hold resolved secrets: it is not kept. */
	stdio_forget_spec(st);
	if (r < 0)
		return r;
	stdio_attach(st);
	return 0;
}

/* The child runs: its pipes are watched, its exit too. */
static void
stdio_attach(struct stdio_transport *st)
{
	st->in = stdio_bev_new(st, st->io.in, NULL);
	st->err = stdio_bev_new(st, st->io.err, stdio_stderr_read);
	if (st->in == NULL || st->err == NULL)
		fatalx("cannot make bufferevents for a child's pipes");
	fdread_init(&st->out, st->io.out, STDIO_READ_MAX, stdio_stdout_read,
	    stdio_stdout_end, st);
	fdread_enable(&st->out);
	st->is_reading = true;
	st->inq = sendq_new(st->in);
	child_watch(st->io.pid, stdio_exited, st);
}

/* 0 when the child's stdin takes more, else why not. */
static int
stdio_can_send(const struct stdio_transport *st)
{
	if (st->in == NULL || st->is_closing)
		return -EPIPE;
	/* A server that stops reading must not make mcpd hoard its input. */
	if (sendq_length(st->inq) > 4 * mcpd_opts.max_message)
		return -ENOBUFS;
	return 0;
}

static int
stdio_send(struct transport *t, const json_t *msg, const json_t *tool)
{
	struct stdio_transport *st = stdio_of(t);
	int r;

	(void)tool;
	return (r = stdio_can_send(st)) < 0 ? r : sendq_push(st->inq, msg);
}

static int
stdio_send_text(struct transport *t, const struct iovec *v, int n)
{
	struct stdio_transport *st = stdio_of(t);
	int r;

	return (r = stdio_can_send(st)) < 0 ? r :
					      sendq_push_text(st->inq, v, n);
}

static void
stdio_stop_step(evutil_socket_t fd, short events, void *arg)
{
	struct stdio_transport *st = arg;
	struct timeval tv = { mcpd_opts.stop_step_ms / 1000,
		(mcpd_opts.stop_step_ms % 1000) * 1000 };

	(void)fd, (void)events;
	if (st->has_exited) {
		stdio_finish(st);
		return;
	}
	st->stop_step++;
	if (st->stop_step == 1)
		stdio_close_stdin(st);
	else
		killpg(st->io.pid, st->stop_step == 2 ? SIGTERM : SIGKILL);
	if (st->stop_step < 3)
		evtimer_add(st->stop_timer, &tv);
}

static void
stdio_close(struct transport *t, void (*done)(void *), void *arg)
{
	struct stdio_transport *st = stdio_of(t);

	st->is_closing = true;
	st->done = done;
	st->done_arg = arg;
	if (st->io.pid <= 0 || st->has_exited) {
		stdio_finish(st);
		return;
	}
	st->stop_timer = evtimer_new(mcpd_base, stdio_stop_step, st);
	stdio_stop_step(-1, 0, st);
}

static void
stdio_release(void *arg)
{
	struct stdio_transport *st = arg;

	if (st->stop_timer != NULL)
		event_free(st->stop_timer);
	stdio_close_stdin(st);
	if (st->is_reading) {
		fdread_release(&st->out);
		close(st->io.out);
	}
	stdio_bev_free(&st->err);
	stdio_forget_spec(st);
	free(st);
}

/*
 * Kills what is left; the memory goes on a later loop turn, since the
 * caller may be running inside one of this transport's callbacks.
 */
static void
stdio_free(struct transport *t)
{
	struct stdio_transport *st = stdio_of(t);

	if (st == NULL)
		return;
	st->is_closing = true;
	st->done = NULL;
	if (st->io.pid > 0 && !st->has_exited) {
		killpg(st->io.pid, SIGKILL);
		child_unwatch(st->io.pid);
	}
	if (st->stop_timer != NULL)
		evtimer_del(st->stop_timer);
	if (st->in != NULL)
		bufferevent_disable(st->in, EV_READ | EV_WRITE);
	if (st->is_reading)
		fdread_disable(&st->out);
	if (st->err != NULL)
		bufferevent_disable(st->err, EV_READ | EV_WRITE);
	defer_call(stdio_release, st);
}

static const struct transport_ops stdio_ops = {
	.name = "stdio",
	.open = stdio_open,
	.send = stdio_send,
	.send_text = stdio_send_text,
	.drain = stdio_drain,
	.close = stdio_close,
	.free = stdio_free,
};

struct transport *
transport_stdio_new(const struct child_spec *spec,
    const struct transport_cbs *cbs, void *arg)
{
	struct stdio_transport *st = xcalloc(1, sizeof *st);

	st->t.ops = &stdio_ops;
	st->t.name = "stdio";
	st->t.cbs = cbs;
	st->t.cb_arg = arg;
	st->io.pid = -1;
	st->argv = child_strv_copy(spec->argv);
	st->env = child_strv_copy(spec->env);
	if (spec->cwd != NULL)
		st->cwd = xstrdup(spec->cwd);
	linebuf_init(&st->out_lines, mcpd_opts.max_message);
	linebuf_init(&st->err_lines, STDIO_STDERR_LINE_MAX);
	return &st->t;
}

pid_t
transport_stdio_pid(const struct transport *t)
{
	if (t == NULL || t->ops != &stdio_ops)
		return -1;
	return ((const struct stdio_transport *)t)->io.server_pid;
}

json_t *
transport_stdio_save(struct transport *t)
{
	struct stdio_transport *st;

	if (t == NULL || t->ops != &stdio_ops)
		return NULL;
	st = stdio_of(t);
	if (st->in == NULL || st->is_closing || !st->is_reading)
		return NULL;
	sendq_flush(st->inq);
	return json_pack("{s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:o}", "pid",
	    (int)st->io.pid, "server_pid", (int)st->io.server_pid, "in",
	    upgrade_keep_fd(st->io.in), "out", upgrade_keep_fd(st->io.out),
	    "err", upgrade_keep_fd(st->io.err), "unread",
	    upgrade_bytes_save(st->out.in), "unread_err",
	    upgrade_bytes_save(bufferevent_get_input(st->err)), "unsent",
	    upgrade_bytes_save(bufferevent_get_output(st->in)));
}

struct transport *
transport_stdio_adopt(const json_t *saved)
{
	struct child_spec none = { NULL, NULL, NULL };
	struct transport *t = transport_stdio_new(&none, NULL, NULL);
	struct stdio_transport *st = stdio_of(t);

	st->io.pid = (pid_t)json_integer_value(json_object_get(saved, "pid"));
	st->io.server_pid = (pid_t)json_integer_value(json_object_get(saved,
	    "server_pid"));
	st->io.in = (int)json_integer_value(json_object_get(saved, "in"));
	st->io.out = (int)json_integer_value(json_object_get(saved, "out"));
	st->io.err = (int)json_integer_value(json_object_get(saved, "err"));
	stdio_attach(st);
	upgrade_bytes_restore(st->out.in, json_object_get(saved, "unread"));
	upgrade_bytes_restore(bufferevent_get_input(st->err),
	    json_object_get(saved, "unread_err"));
	upgrade_bytes_restore(bufferevent_get_output(st->in),
	    json_object_get(saved, "unsent"));
	fdread_kick(&st->out);
	return t;
}
