/* SPDX-License-Identifier: ISC */
/*
 * The bridge's relay: MCP between the client's standard input and output
 * and mcpd's socket, line by line, and the reconnect to a new mcpd when
 * this one goes away (relay-session.c keeps the session; doc/gateway.md,
 * "The bridge across mcpd restarts").
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "relay.h"

/* Bytes of whole lines held in each direction before reading stops. */
#define RELAY_BUFFER   ((size_t)64 << 10)
/* Bytes written at once to a descriptor that stays blocking (a terminal). */
#define RELAY_CHUNK    ((size_t)4096)
/* Between two tries to reach mcpd, and two looks at its servers. */
#define RELAY_RETRY_MS 100
/* iovecs written at once. */
#define RELAY_IOV      16

static int64_t
relay_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Notes the start of mcpd's last line (why it closes, if it does). */
static void
relay_note_last(struct relay *r, const char *line, size_t len)
{
	r->last_len = len < sizeof r->last ? len : sizeof r->last - 1;
	memcpy(r->last, line, r->last_len);
}

/*
 * Whether mcpd's last line was the error it closes a connection with (a
 * message over its limit): then the client's fault, said, and the end.
 */
static bool
relay_is_refused(const struct relay *r)
{
	json_t *msg = json_loadb(r->last, r->last_len, 0, NULL), *error;
	const char *text = NULL;
	bool is = false;

	if (msg != NULL && json_is_null(json_object_get(msg, "id")) &&
	    (error = json_object_get(msg, "error")) != NULL)
		text = json_string_value(json_object_get(error, "message"));
	if (text != NULL && strstr(text, "closing the connection") != NULL) {
		print_err("mcpd closed the connection: %s", text);
		is = true;
	}
	json_decref(msg);
	return is;
}

/*
 * Finds the next whole line of buf, scanning from *scanned on: its length
 * with the newline, or 0 (none yet), or -EMSGSIZE when more than max bytes
 * came without one.
 */
static ssize_t
relay_next_line(struct evbuffer *buf, size_t *scanned, size_t max)
{
	struct evbuffer_ptr at;
	size_t len = evbuffer_get_length(buf);

	if (*scanned >= len)
		return 0;
	if (evbuffer_ptr_set(buf, &at, *scanned, EVBUFFER_PTR_SET) < 0)
		return 0;
	at = evbuffer_search(buf, "\n", 1, &at);
	if (at.pos < 0) {
		*scanned = len;
		return len > max ? -EMSGSIZE : 0;
	}
	*scanned = 0;
	if ((size_t)at.pos > max)
		return -EMSGSIZE;
	return (ssize_t)at.pos + 1;
}

/* One whole line of the client's (len with its newline) into up_out. */
static void
relay_up_line(struct relay *r, size_t len)
{
	const char *text = (const char *)evbuffer_pullup(r->up_in,
	    (ssize_t)len);
	struct relay_msg msg;
	struct relay_line *l;

	relay_session_scan(text, len - 1, &msg);
	/* A late answer to a request of an mcpd that went: nobody waits. */
	if (msg.key != NULL && msg.method == NULL && msg.is_answer &&
	    json_object_get(r->stale, msg.key) != NULL &&
	    json_object_get(r->asked, msg.key) == NULL) {
		json_object_del(r->stale, msg.key);
		evbuffer_drain(r->up_in, len);
		relay_session_msg_clear(&msg);
		return;
	}
	if (r->first > 0 && r->end == r->cap) {
		memmove(r->lines, r->lines + r->first,
		    (r->end - r->first) * sizeof *r->lines);
		r->end -= r->first;
		r->first = 0;
	}
	if (r->end == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->lines = reallocarray(r->lines, r->cap, sizeof *r->lines);
		if (r->lines == NULL) {
			print_err("bridge: out of memory");
			exit(MCPCTL_EXIT_ERROR);
		}
	}
	l = &r->lines[r->end++];
	l->len = len;
	l->key = msg.key;
	l->method = msg.method;
	l->params = msg.params;
	evbuffer_remove_buffer(r->up_in, r->up_out, len);
}

/* Writes the client's lines to mcpd: 0 or -errno. */
static int
relay_write_lines(struct relay *r)
{
	struct evbuffer_iovec ev[RELAY_IOV];
	struct iovec iov[RELAY_IOV];
	struct evbuffer_ptr at;
	size_t len = evbuffer_get_length(r->up_out);
	ssize_t w;
	int n;

	if (len <= r->head_done ||
	    evbuffer_ptr_set(r->up_out, &at, r->head_done, EVBUFFER_PTR_SET) <
		0)
		return 0;
	n = evbuffer_peek(r->up_out, (ev_ssize_t)(len - r->head_done), &at, ev,
	    RELAY_IOV);
	if (n > RELAY_IOV)
		n = RELAY_IOV;
	for (int i = 0; i < n; i++)
		iov[i] = (struct iovec){ ev[i].iov_base, ev[i].iov_len };
	if ((w = writev(r->sock, iov, n)) < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	r->head_done += (size_t)w;
	while (r->first < r->end && r->head_done >= r->lines[r->first].len) {
		struct relay_line *l = &r->lines[r->first++];

		r->head_done -= l->len;
		evbuffer_drain(r->up_out, l->len);
		relay_session_sent(r, l);
	}
	if (r->first == r->end)
		r->first = r->end = 0;
	return 0;
}

/* One whole line of mcpd's (len with its newline); 0 or the exit status. */
static int
relay_down_line(struct relay *r, size_t len)
{
	const char *text = (const char *)evbuffer_pullup(r->down_in,
	    (ssize_t)len);
	struct relay_msg msg;
	int status = 0;

	relay_note_last(r, text, len - 1);
	relay_session_scan(text, len - 1, &msg);
	if (msg.key != NULL && msg.method != NULL)
		json_object_set_new(r->asked, msg.key, json_true());
	else if (msg.key != NULL && msg.is_answer &&
	    json_object_get(r->own, msg.key) != NULL) {
		status = relay_session_own_answer(r, msg.key, text, len - 1,
		    &msg);
		evbuffer_drain(r->down_in, len);
		relay_session_msg_clear(&msg);
		return status;
	} else if (msg.key != NULL && msg.is_answer)
		relay_session_answered(r, msg.key, &msg);
	evbuffer_remove_buffer(r->down_in, r->down_out, len);
	relay_session_msg_clear(&msg);
	return 0;
}

/* Reads what fd has into buf, at most want bytes: 1, 0 at EOF, -errno. */
static int
relay_read(int fd, struct evbuffer *buf, size_t want)
{
	int n = evbuffer_read(buf, fd, (int)want);

	if (n > 0)
		return 1;
	if (n == 0)
		return 0;
	if (errno == EINTR || errno == EAGAIN)
		return 1;
	return -errno;
}

/* Writes what down_out holds to the client: 0 or -errno. */
static int
relay_write_down(struct relay *r)
{
	size_t len = evbuffer_get_length(r->down_out);
	int n;

	if (!r->is_out_nonblock && len > RELAY_CHUNK)
		len = RELAY_CHUNK;
	n = evbuffer_write_atmost(r->down_out, STDOUT_FILENO, (ssize_t)len);
	if (n >= 0 || errno == EINTR || errno == EAGAIN)
		return 0;
	return -errno;
}

/* mcpd went: the session's part, then the connection's. */
static void
relay_lost(struct relay *r)
{
	relay_session_lost(r);
	evbuffer_drain(r->own_out, evbuffer_get_length(r->own_out));
	evbuffer_drain(r->down_in, evbuffer_get_length(r->down_in));
	r->down_scanned = 0;
	/* A line mcpd had only part of never ran: it goes again, whole. */
	r->head_done = 0;
	r->is_shut = false;
	r->is_broken = false;
	r->last_len = 0;
	conn_free(r->m->conn);
	r->m->conn = NULL;
	r->sock = -1;
}

/* The socket is a session again: its replay starts, or it is live. */
static void
relay_attach(struct relay *r)
{
	r->sock = conn_fd(r->m->conn);
	evbuffer_add_buffer(r->down_in, conn_input(r->m->conn));
	r->down_scanned = 0;
	relay_session_replay(r);
}

/*
 * Writes what down_out holds for at most ms (poll), while mcpd is away;
 * a client that went (its end of standard output closed) ends the wait:
 * nobody is there to reconnect for.
 */
static int
relay_wait(struct relay *r, int ms)
{
	bool has_out = evbuffer_get_length(r->down_out) > 0;
	struct pollfd p = { .fd = STDOUT_FILENO,
		.events = has_out ? POLLOUT : 0 };
	int e = 0;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	if (has_out && (p.revents & POLLOUT))
		e = relay_write_down(r);
	else if (p.revents & (POLLERR | POLLHUP))
		e = -EPIPE;
	if (e < 0) {
		print_err("bridge: cannot write to standard output: %s",
		    strerror(-e));
		return MCPCTL_EXIT_ERROR;
	}
	return 0;
}

/* Whether a server in the list's rows is on its way to ready. */
static bool
relay_is_starting(const json_t *rows, const json_t *servers)
{
	static const char *const starting[] = { "starting", "probing",
		"connecting" };
	const json_t *row, *name;
	const char *state;
	size_t i, j;
	bool is_in;

	json_array_foreach(rows, i, row) {
		state = json_string_value(json_object_get(row, "state"));
		is_in = json_array_size(servers) == 0;
		json_array_foreach(servers, j, name)
			is_in = is_in ||
			    json_equal(name, json_object_get(row, "name"));
		for (j = 0; state != NULL && is_in && j < 3; j++)
			if (strcmp(state, starting[j]) == 0)
				return true;
	}
	return false;
}

/*
 * A new mcpd starts its saved servers after it listens: the session is
 * made again once the view's servers have started (or failed), so that
 * its lists and calls find them, or when the deadline comes.
 */
static int
relay_settle(struct relay *r, int64_t deadline)
{
	json_t *result;
	int status;

	for (;;) {
		if ((status = mcpctl_request(r->m, "mcpd/list", json_object(),
			 &result)) != 0)
			return status;
		if (!relay_is_starting(json_object_get(result, "servers"),
			r->opts->servers) ||
		    relay_now() >= deadline) {
			json_decref(result);
			return 0;
		}
		json_decref(result);
		if ((status = relay_wait(r, RELAY_RETRY_MS)) != 0)
			return status;
	}
}

/*
 * Reaches mcpd again within --reconnect-timeout: connects (starting mcpd
 * as autostart does when it crashed and that is allowed), says the
 * session's hello, waits for its servers; 0, or the exit status after
 * saying what it tried.
 */
static int
relay_reconnect(struct relay *r)
{
	int64_t deadline = relay_now() + r->opts->reconnect_ms;
	struct mcpctl *m = r->m;
	const char *why_not = "";
	bool has_started = false;
	unsigned tries = 0;
	int e = 0, status;

	print_err("bridge: mcpd went away; reconnecting (for at most %g s)",
	    r->opts->reconnect_ms / 1000.0);
	while (relay_now() < deadline) {
		tries++;
		e = conn_open(m->socket_path, &m->conn);
		/* Its socket is there, nobody listens: it crashed. */
		if (e == -ECONNREFUSED && !has_started && m->is_autostart &&
		    !autostart_is_disabled()) {
			has_started = true;
			if (autostart_mcpd(m->socket_path) == 0)
				e = conn_open(m->socket_path, &m->conn);
		}
		if (e == 0) {
			/*
			 * A dying mcpd may still take a connection, then
			 * reset it: that is no news, a refusal is.
			 */
			print_hold();
			status = r->opts->hello(m, r->opts->hello_arg);
			if (status == 0)
				status = relay_settle(r, deadline);
			if (status == MCPCTL_EXIT_UNREACHABLE)
				(void)print_unhold();
			else
				print_release();
			if (status == 0) {
				relay_attach(r);
				return 0;
			}
			conn_free(m->conn);
			m->conn = NULL;
			if (status != MCPCTL_EXIT_UNREACHABLE) {
				print_err(
				    "bridge: mcpd came back but refused the session; the client's session ends");
				return status;
			}
			e = -EPIPE;
		}
		if ((status = relay_wait(r, RELAY_RETRY_MS)) != 0)
			return status;
	}
	if (has_started)
		why_not = "; mcpctl started mcpd once, see above";
	else if (e == -ENOENT)
		why_not =
		    "; mcpctl does not start an mcpd that was stopped on purpose (its socket is gone)";
	else if (autostart_is_disabled() || !m->is_autostart)
		why_not =
		    "; mcpctl did not start mcpd: MCPD_NO_AUTOSTART is set";
	print_err(
	    "bridge: gave up on mcpd at %s after %g s (--reconnect-timeout): %u tries to connect, the last: %s%s; the client's session ends",
	    m->socket_path, r->opts->reconnect_ms / 1000.0, tries, strerror(-e),
	    why_not);
	return MCPCTL_EXIT_UNREACHABLE;
}

/*
 * mcpd's end of the connection closed: the end (what the client asked
 * is answered, or mcpd refused the client), or a reconnect. 0 to go on,
 * else the exit status.
 */
static int
relay_closed(struct relay *r)
{
	bool is_shut = r->is_shut, is_refused = relay_is_refused(r);
	int status;

	/*
	 * Closed for a line of the client's, which mcpd refused (with id
	 * null: which one is not known): none of them is answered here.
	 */
	if (is_refused)
		json_object_clear(r->inflight);
	relay_lost(r);
	if (is_refused)
		status = MCPCTL_EXIT_ERROR;
	else if (is_shut && r->first == r->end) {
		/* The client closed its input: what it asked is answered. */
		status = MCPCTL_EXIT_OK;
	} else if (r->opts->reconnect_ms <= 0) {
		print_err(
		    "mcpd closed the connection (did it stop? mcpctl status)");
		status = MCPCTL_EXIT_ERROR;
	} else
		return relay_reconnect(r);
	/* What is left for the client goes out before the end. */
	while (evbuffer_get_length(r->down_out) > 0)
		if (relay_wait(r, -1) != 0)
			break;
	return status == MCPCTL_EXIT_OK ? -1 : status;
}

/* Moves the whole lines of the client's input to up_out; 0 or status. */
static int
relay_take_up(struct relay *r)
{
	ssize_t len;

	while ((len = relay_next_line(r->up_in, &r->up_scanned,
		    r->opts->max_line)) != 0) {
		if (len < 0) {
			print_err(
			    "bridge: a message of the client is longer than %zu bytes (--max-message); the session ends",
			    r->opts->max_line);
			return MCPCTL_EXIT_ERROR;
		}
		relay_up_line(r, (size_t)len);
	}
	return 0;
}

/* Handles the whole lines mcpd sent; 0 or the exit status. */
static int
relay_take_down(struct relay *r)
{
	ssize_t len;
	int status;

	while ((len = relay_next_line(r->down_in, &r->down_scanned,
		    MCPCTL_MAX_RESPONSE)) != 0) {
		if (len < 0) {
			print_err(
			    "bridge: a message of mcpd is longer than %zu bytes; the session ends",
			    MCPCTL_MAX_RESPONSE);
			return MCPCTL_EXIT_ERROR;
		}
		if ((status = relay_down_line(r, (size_t)len)) != 0)
			return status;
	}
	return 0;
}

/* One turn of the loop: poll, then each side; 0, -1 (done), or status. */
static int
relay_turn(struct relay *r)
{
	size_t own = evbuffer_get_length(r->own_out);
	bool is_live = r->state == RELAY_LIVE;
	struct pollfd pfd[4];
	int e, n;

	/* The client closed its input and all of it went: half-close. */
	if (r->is_in_eof && evbuffer_get_length(r->up_in) == 0 &&
	    r->first == r->end && is_live && !r->is_shut) {
		(void)shutdown(r->sock, SHUT_WR);
		r->is_shut = true;
	}
	memset(pfd, 0, sizeof pfd);
	pfd[0].fd = !r->is_in_eof &&
		evbuffer_get_length(r->up_out) < RELAY_BUFFER ?
	    STDIN_FILENO :
	    -1;
	pfd[0].events = POLLIN;
	pfd[1].fd = r->sock;
	pfd[1].events = evbuffer_get_length(r->down_out) < RELAY_BUFFER ?
	    POLLIN :
	    0;
	if (r->is_broken)
		pfd[1].events = POLLIN;
	else if (own > 0 || (is_live && r->first < r->end && !r->is_shut))
		pfd[1].events |= POLLOUT;
	pfd[2].fd = evbuffer_get_length(r->down_out) > 0 ? STDOUT_FILENO : -1;
	pfd[2].events = POLLOUT;
	if ((n = poll(pfd, 3, -1)) < 0) {
		if (errno == EINTR)
			return 0;
		print_err("bridge: poll: %s", strerror(errno));
		return MCPCTL_EXIT_ERROR;
	}
	if (pfd[0].revents != 0) {
		if ((e = relay_read(STDIN_FILENO, r->up_in, RELAY_BUFFER)) <
		    0) {
			print_err("bridge: cannot read standard input: %s",
			    strerror(-e));
			return MCPCTL_EXIT_ERROR;
		}
		/* The client's last line, cut short by its end, ends there. */
		if (e == 0 && evbuffer_get_length(r->up_in) > 0)
			evbuffer_add(r->up_in, "\n", 1);
		if (e == 0)
			r->is_in_eof = true;
		if ((e = relay_take_up(r)) != 0)
			return e;
	}
	/*
	 * mcpd closed: what it said before (why, when it closed on
	 * purpose) is read before its end is handled.
	 */
	if (pfd[1].revents & POLLOUT) {
		if (own > 0 && evbuffer_write(r->own_out, r->sock) < 0 &&
		    errno != EAGAIN && errno != EINTR)
			r->is_broken = true;
		if (own == 0 && relay_write_lines(r) < 0)
			r->is_broken = true;
	}
	if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
		if ((e = relay_read(r->sock, r->down_in, RELAY_BUFFER)) <= 0) {
			if (e < 0 && e != -ECONNRESET) {
				print_err("bridge: cannot read from mcpd: %s",
				    strerror(-e));
				return MCPCTL_EXIT_ERROR;
			}
			if ((e = relay_take_down(r)) != 0)
				return e;
			return relay_closed(r);
		}
		if ((e = relay_take_down(r)) != 0)
			return e;
	}
	if (pfd[2].revents != 0 && (e = relay_write_down(r)) < 0) {
		print_err("bridge: cannot write to standard output: %s",
		    strerror(-e));
		return MCPCTL_EXIT_ERROR;
	}
	return 0;
}

static void
relay_free(struct relay *r)
{
	for (size_t i = r->first; i < r->end; i++) {
		free(r->lines[i].key);
		free(r->lines[i].method);
		json_decref(r->lines[i].params);
	}
	free(r->lines);
	evbuffer_free(r->up_in);
	evbuffer_free(r->up_out);
	evbuffer_free(r->own_out);
	evbuffer_free(r->down_in);
	evbuffer_free(r->down_out);
	json_decref(r->inflight);
	json_decref(r->asked);
	json_decref(r->stale);
	json_decref(r->own);
	json_decref(r->init);
	json_decref(r->subs);
	json_decref(r->level);
}

int
relay_run(struct mcpctl *m, const struct relay_opts *opts, bool is_out_nonblock)
{
	struct relay r = { .m = m,
		.opts = opts,
		.sock = conn_fd(m->conn),
		.is_out_nonblock = is_out_nonblock };
	int status;

	r.up_in = evbuffer_new();
	r.up_out = evbuffer_new();
	r.own_out = evbuffer_new();
	r.down_in = evbuffer_new();
	r.down_out = evbuffer_new();
	r.inflight = json_object();
	r.asked = json_object();
	r.stale = json_object();
	r.own = json_object();
	r.subs = json_object();
	if (r.up_in == NULL || r.up_out == NULL || r.own_out == NULL ||
	    r.down_in == NULL || r.down_out == NULL || r.inflight == NULL ||
	    r.asked == NULL || r.stale == NULL || r.own == NULL ||
	    r.subs == NULL) {
		relay_free(&r);
		print_err("bridge: out of memory");
		return MCPCTL_EXIT_ERROR;
	}
	/* What came after the hello's answer goes out first. */
	evbuffer_add_buffer(r.down_in, conn_input(m->conn));
	if ((status = relay_take_down(&r)) == 0)
		while ((status = relay_turn(&r)) == 0)
			;
	relay_free(&r);
	return status < 0 ? MCPCTL_EXIT_OK : status;
}
