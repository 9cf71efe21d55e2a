/* SPDX-License-Identifier: ISC */
/* The one blocking connection to mcpd: send a request, read its answer. */
#define _GNU_SOURCE 1 /* vasprintf */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "jsonrpc.h"
#include "linebuf.h"
#include "mcpctl.h"

#define CONN_READ (1 << 20) /* bytes asked of each read(2) */

struct conn {
	int fd;
	struct evbuffer *in;
	struct linebuf lb;
	json_int_t next_id;
};

/* What conn_set_notify installed: one client, one handler. */
static conn_notify_fn conn_notify;
static void *conn_notify_arg;

void
conn_set_notify(conn_notify_fn fn, void *arg)
{
	conn_notify = fn;
	conn_notify_arg = arg;
}

static int
conn_connect(const char *path)
{
	struct sockaddr_un sun;
	int fd, saved;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path)
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) < 0) {
		saved = errno;
		close(fd);
		return -saved;
	}
	return fd;
}

int
conn_open(const char *path, struct conn **ret)
{
	struct conn *c;
	int fd;

	if ((fd = conn_connect(path)) < 0)
		return fd;
	if ((c = calloc(1, sizeof *c)) == NULL ||
	    (c->in = evbuffer_new()) == NULL) {
		free(c);
		close(fd);
		return -ENOMEM;
	}
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
	free(c);
}

static int conn_fail(char **, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));

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
		if ((n = write(c->fd, buf + off, len - off)) >= 0) {
			off += n;
			continue;
		}
		if (errno == EINTR)
			continue;
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
 * Reads what the socket has, up to CONN_READ bytes, straight into the
 * buffer. Not evbuffer_read: its 4 KiB chains make each later linebuf scan
 * walk thousands of chains when an answer is large.
 */
static ssize_t
conn_read(struct conn *c)
{
	struct evbuffer_iovec v;
	ssize_t n;

	if (evbuffer_reserve_space(c->in, CONN_READ, &v, 1) < 1) {
		errno = ENOMEM;
		return -1;
	}
	n = read(c->fd, v.iov_base, v.iov_len);
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
		r = conn_read(c);
		if (r == 0)
			return conn_fail(cause, -EPIPE,
			    "mcpd closed the connection before it answered");
		if (r < 0 && errno != EINTR) {
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

int
conn_call(struct conn *c, const char *method, json_t *params, json_t **ret_msg,
    char **cause)
{
	json_t *id = json_integer(c->next_id++);
	json_t *req = jsonrpc_request(id, method, params);
	json_t *msg;
	int r;

	json_decref(id);
	r = conn_send(c, req, cause);
	json_decref(req);
	if (r < 0)
		return r;
	do {
		if ((r = conn_receive(c, &msg, cause)) < 0)
			return r;
		if ((r = conn_match(msg, c->next_id - 1, cause)) != 1)
			json_decref(msg);
	} while (r == 0);
	if (r < 0)
		return r;
	*ret_msg = msg;
	return 0;
}
