/* SPDX-License-Identifier: ISC */
/* The one blocking connection to mcpd: send a request, read its answer. */
#define _GNU_SOURCE 1 /* vasprintf */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "fdpass.h"
#include "jsonrpc.h"
#include "linebuf.h"
#include "mcpctl.h"

/*
 * Bytes asked of the first read(2), doubled after each read that fills
 * them, up to CONN_READ: a small answer costs no large allocation (which
 * the allocator maps and unmaps, a TLB shootdown each), a large one few
 * reads.
 */
#define CONN_READ_FIRST (16 << 10)
#define CONN_READ	(1 << 20)
#define CONN_PASS_MAX	2 /* descriptors passed with one request */

struct conn {
	int fd;
	char *path; /* the socket, for the messages */
	pid_t peer; /* the daemon's pid (SO_PEERCRED), or 0 */
	struct evbuffer *in;
	struct linebuf lb;
	json_int_t next_id;
	json_int_t ping_id; /* an outstanding mcpd/list asked "are you there" */
	int64_t deadline;   /* monotonic ms by which mcpd must say something */
	size_t read_size;   /* what the next read asks for */
	int npass;	    /* descriptors to send with the next request */
	int pass[CONN_PASS_MAX];
};

/* What conn_set_notify installed: one client, one handler. */
static conn_notify_fn conn_notify;
static void *conn_notify_arg;
/* What conn_set_ask installed: who answers mcpd's requests. */
static conn_ask_fn conn_ask;
static void *conn_ask_arg;
/* What conn_set_timeout set: ms mcpd may stay silent; 0 for no limit. */
static int conn_timeout_ms = CONN_TIMEOUT_DEFAULT_MS;

void
conn_set_timeout(int ms)
{
	conn_timeout_ms = ms;
}

int
conn_get_timeout(void)
{
	return conn_timeout_ms;
}

static int64_t
conn_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The ms left until the deadline (at least 0), or -1 without a limit. */
static int
conn_left(const struct conn *c)
{
	int64_t left;

	if (conn_timeout_ms <= 0)
		return -1;
	left = c->deadline - conn_now();
	return left > 0 ? (int)left : 0;
}

static void
conn_arm(struct conn *c)
{
	c->deadline = conn_now() + conn_timeout_ms;
}

void
conn_set_notify(conn_notify_fn fn, void *arg)
{
	conn_notify = fn;
	conn_notify_arg = arg;
}

void
conn_set_ask(conn_ask_fn fn, void *arg)
{
	conn_ask = fn;
	conn_ask_arg = arg;
}

static int
conn_connect(const char *path)
{
	struct sockaddr_un sun;
	int64_t deadline;
	int fd, saved;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path)
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A full backlog (a daemon that does not accept) is EAGAIN: retry. */
	deadline = conn_now() + (conn_timeout_ms > 0 ? conn_timeout_ms : 0);
	while (connect(fd, (struct sockaddr *)&sun, sizeof sun) < 0) {
		saved = errno;
		if (saved == EINTR ||
		    (saved == EAGAIN &&
			(conn_timeout_ms <= 0 || conn_now() < deadline))) {
			usleep(20000);
			continue;
		}
		close(fd);
		return saved == EAGAIN ? -ETIMEDOUT : -saved;
	}
	return fd;
}

int
conn_open(const char *path, struct conn **ret)
{
	struct ucred cred;
	socklen_t len = sizeof cred;
	struct conn *c;
	int fd;

	if ((fd = conn_connect(path)) < 0)
		return fd;
	if ((c = calloc(1, sizeof *c)) == NULL ||
	    (c->in = evbuffer_new()) == NULL ||
	    (c->path = strdup(path)) == NULL) {
		if (c != NULL)
			evbuffer_free(c->in);
		free(c);
		close(fd);
		return -ENOMEM;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
		c->peer = cred.pid;
	c->fd = fd;
	c->next_id = 1;
	linebuf_init(&c->lb, MCPCTL_MAX_RESPONSE);
	*ret = c;
	return 0;
}

void
conn_free(struct conn *c)
{
	if (c == NULL)
		return;
	evbuffer_free(c->in);
	close(c->fd);
	free(c->path);
	free(c);
}

int
conn_fd(const struct conn *c)
{
	return c->fd;
}

struct evbuffer *
conn_input(struct conn *c)
{
	return c->in;
}

static int conn_fail(char **, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));

/* The deadline passed: what to tell the user. */
static int
conn_silent(const struct conn *c, char **cause)
{
	char pid[32] = "PID";

	if (c->peer > 0)
		snprintf(pid, sizeof pid, "%ld", (long)c->peer);
	return conn_fail(cause, -ETIMEDOUT,
	    "mcpd at %s did not answer within %g s; is it stopped? (kill -CONT %s)",
	    c->path, conn_timeout_ms / 1000.0, pid);
}

/* Waits until fd is ready for events; 0, or -ETIMEDOUT at the deadline. */
static int
conn_wait(const struct conn *c, short events)
{
	struct pollfd pfd = { .fd = c->fd, .events = events };
	int r;

	while ((r = poll(&pfd, 1, conn_left(c))) < 0)
		if (errno != EINTR)
			return -errno;
	return r == 0 ? -ETIMEDOUT : 0;
}

/* Fills *cause and returns error. */
static int
conn_fail(char **cause, int error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(cause, fmt, ap) < 0)
		*cause = NULL;
	va_end(ap);
	return error;
}

void
conn_pass_fds(struct conn *c, const int *fds, int n)
{
	c->npass = n < CONN_PASS_MAX ? n : CONN_PASS_MAX;
	memcpy(c->pass, fds, (size_t)c->npass * sizeof *fds);
}

/*
 * Writes the first bytes of a request: with the descriptors conn_pass_fds
 * named, when there are any (they go with the first byte).
 */
static ssize_t
conn_write(struct conn *c, const char *buf, size_t len)
{
	ssize_t n;

	if (c->npass == 0)
		return write(c->fd, buf, len);
	if ((n = fdpass_send(c->fd, buf, len, c->pass, c->npass)) > 0)
		c->npass = 0;
	return n;
}

/*
 * Writes msg as one line from a flat buffer that is wiped afterwards: a
 * request may carry a secret's value (mcpd/secret-set).
 */
static int
conn_send(struct conn *c, json_t *msg, char **cause)
{
	size_t len = json_dumpb(msg, NULL, 0, JSON_COMPACT), off = 0;
	ssize_t n;
	char *buf;
	int r = 0;

	if (len == 0 || (buf = malloc(len + 1)) == NULL)
		return conn_fail(cause, -ENOMEM, "out of memory");
	if (json_dumpb(msg, buf, len, JSON_COMPACT) != len) {
		free(buf);
		return conn_fail(cause, -ENOMEM, "out of memory");
	}
	buf[len++] = '\n';
	while (off < len) {
		if ((n = conn_write(c, buf + off, len - off)) >= 0) {
			off += n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			if ((r = conn_wait(c, POLLOUT)) == -ETIMEDOUT) {
				conn_silent(c, cause);
				break;
			}
			if (r == 0)
				continue;
			errno = -r;
		}
		r = -errno;
		conn_fail(cause, r, "cannot send the request: %s",
		    strerror(-r));
		break;
	}
	explicit_bzero(buf, len);
	free(buf);
	return r;
}

/*
 * Reads what the socket has, up to c->read_size bytes, straight into the
 * buffer. Not evbuffer_read: its 4 KiB chains make each later linebuf scan
 * walk thousands of chains when an answer is large.
 */
static ssize_t
conn_read(struct conn *c)
{
	struct evbuffer_iovec v;
	ssize_t n;

	if (c->read_size == 0)
		c->read_size = CONN_READ_FIRST;
	if (evbuffer_reserve_space(c->in, (ev_ssize_t)c->read_size, &v, 1) <
	    1) {
		errno = ENOMEM;
		return -1;
	}
	n = read(c->fd, v.iov_base, c->read_size);
	if (n == (ssize_t)c->read_size && c->read_size < CONN_READ)
		c->read_size *= 2;
	v.iov_len = n > 0 ? (size_t)n : 0;
	evbuffer_commit_space(c->in, &v, 1);
	return n;
}

/* Reads one whole message; a line that is not JSON is -EBADMSG. */
static int
conn_receive(struct conn *c, json_t **ret_msg, char **cause)
{
	json_error_t err;
	size_t len;
	char *line;
	int r;

	for (;;) {
		r = linebuf_peek(&c->lb, c->in, &line, &len);
		if (r == -EMSGSIZE)
			return conn_fail(cause, r,
			    "mcpd's answer is larger than %zu MiB",
			    MCPCTL_MAX_RESPONSE >> 20);
		if (r < 0)
			return conn_fail(cause, r, "%s", strerror(-r));
		if (r == 1)
			break;
		if ((r = conn_wait(c, POLLIN)) == -ETIMEDOUT)
			return r; /* conn_call decides: ask, or give up */
		if (r < 0)
			return conn_fail(cause, r,
			    "cannot read mcpd's answer: %s", strerror(-r));
		r = conn_read(c);
		if (r == 0)
			return conn_fail(cause, -EPIPE,
			    "mcpd closed the connection before it answered");
		if (r < 0 && errno != EINTR && errno != EAGAIN) {
			r = -errno;
			return conn_fail(cause, r,
			    "cannot read mcpd's answer: %s", strerror(-r));
		}
	}
	*ret_msg = jsonrpc_parse(line, len, &err);
	linebuf_consume(&c->lb, c->in);
	if (*ret_msg == NULL)
		return conn_fail(cause, -EBADMSG,
		    "mcpd sent a line that is not JSON: %s", err.text);
	return 0;
}

/*
 * 1 when msg answers request id, 0 for a message to skip (a notification,
 * after the handler of conn_set_notify saw it; another id), -EBADMSG when it
 * is no JSON-RPC message at all. An error with a null id answers too: we
 * have one request outstanding, and framing errors and refusals carry null.
 */
static int
conn_match(json_t *msg, json_int_t id, char **cause)
{
	struct jsonrpc_msg m;
	char *why = NULL;
	int r;

	if (jsonrpc_classify(msg, &m, &why) < 0) {
		r = conn_fail(cause, -EBADMSG,
		    "mcpd sent a message that is not JSON-RPC: %s",
		    why != NULL ? why : "?");
		free(why);
		return r;
	}
	if (m.type == JSONRPC_ERROR && json_is_null(m.id))
		return 1;
	if (m.type == JSONRPC_NOTIFICATION && conn_notify != NULL)
		conn_notify(conn_notify_arg, id, m.method, m.params);
	if (m.type != JSONRPC_RESULT && m.type != JSONRPC_ERROR)
		return 0;
	return json_is_integer(m.id) && json_integer_value(m.id) == id;
}

/* Sends one request; its id is c->next_id - 1. */
static int
conn_request(struct conn *c, const char *method, json_t *params, char **cause)
{
	json_t *id = json_integer(c->next_id++);
	json_t *req = jsonrpc_request(id, method, params);
	int r;

	json_decref(id);
	r = conn_send(c, req, cause);
	json_decref(req);
	return r;
}

/*
 * A request of mcpd's (a server's request, relayed while request id
 * waits) is answered, by the handler of conn_set_ask or with "not
 * offered": 1, or 0 when msg is no request, or the error of the send.
 */
static int
conn_answer(struct conn *c, json_int_t id, const json_t *msg, char **cause)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	const json_t *rid = json_object_get(msg, "id");
	json_t *result = NULL, *error = NULL, *answer;
	int r;

	if (method == NULL || rid == NULL)
		return 0;
	if (conn_ask != NULL)
		result = conn_ask(conn_ask_arg, id, method,
		    json_object_get(msg, "params"), &error);
	else
		error = json_pack("{s:i, s:s}", "code", -32601, "message",
		    "mcpctl answers no requests here");
	if (result != NULL)
		answer = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
		    rid, "result", result);
	else
		answer = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
		    rid, "error", error);
	if (answer == NULL)
		return conn_fail(cause, -ENOMEM, "out of memory");
	r = conn_send(c, answer, cause);
	json_decref(answer);
	return r < 0 ? r : 1;
}

/* Whether msg answers the "are you there" of conn_call. */
static bool
conn_is_pong(struct conn *c, const json_t *msg)
{
	const json_t *id = json_object_get(msg, "id");

	if (c->ping_id == 0 || json_object_get(msg, "method") != NULL ||
	    !json_is_integer(id) || json_integer_value(id) != c->ping_id)
		return false;
	c->ping_id = 0;
	return true;
}

int
conn_call(struct conn *c, const char *method, json_t *params, json_t **ret_msg,
    char **cause)
{
	json_int_t id;
	json_t *msg;
	int r;

	conn_arm(c);
	if ((r = conn_request(c, method, params, cause)) < 0)
		return r;
	id = c->next_id - 1;
	do {
		r = conn_receive(c, &msg, cause);
		/*
		 * Silent for the whole timeout: a call or a load may take
		 * longer, so ask whether mcpd is there (mcpd/list answers at
		 * once, also while it stops); give up when that goes
		 * unanswered too.
		 */
		if (r == -ETIMEDOUT && c->ping_id == 0) {
			conn_arm(c);
			if ((r = conn_request(c, "mcpd/list", NULL, cause)) < 0)
				return r;
			c->ping_id = c->next_id - 1;
			continue;
		}
		if (r == -ETIMEDOUT)
			return conn_silent(c, cause);
		if (r < 0)
			return r;
		conn_arm(c);
		if (conn_is_pong(c, msg)) {
			json_decref(msg);
			continue;
		}
		if ((r = conn_answer(c, id, msg, cause)) != 0) {
			json_decref(msg);
			if (r < 0)
				return r;
			/* The answer may have taken a person's time. */
			conn_arm(c);
			r = 0;
			continue;
		}
		if ((r = conn_match(msg, id, cause)) != 1)
			json_decref(msg);
	} while (r == 0);
	if (r < 0)
		return r;
	*ret_msg = msg;
	return 0;
}
