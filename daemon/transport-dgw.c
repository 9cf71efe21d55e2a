/* SPDX-License-Identifier: ISC */
/* The Docker MCP Gateway: its process, and Streamable HTTP to it on loopback. */
#include <sys/random.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonwipe.h"
#include "log.h"
#include "mcpd.h"

#define DGW_RESEND_MS 100 /* between tries of the handshake while it starts */
#define DGW_TOKEN_LEN 32  /* random bytes of a start's bearer token */

struct dgw {
	/* What the session holds; its inner transport is Streamable HTTP to
	 * 127.0.0.1:port/mcp. */
	struct transport_wrap w;
	char **argv; /* docker mcp gateway run ..., less --port */
	char *cwd;
	struct transport *proc; /* stdio transport: holds the process */
	struct remote_spec remote;
	int port;
};

static struct dgw *
dgw_of(struct transport *t)
{
	return (struct dgw *)t;
}

/* A free port of 127.0.0.1, as the kernel picks one; 0 and *ret or -errno. */
static int
dgw_pick_port(int *ret, char **cause)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof sin;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r = 0;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof sin) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0)
		r = errors_cause(cause, -errno,
		    "cannot pick a loopback port for the gateway: %s",
		    strerror(errno));
	else
		*ret = ntohs(sin.sin_port);
	if (fd >= 0)
		close(fd);
	return r;
}

static void
dgw_fail(struct dgw *d, const char *fmt, const char *why)
{
	char *text;

	if (d->w.is_closing)
		return;
	xasprintf(&text, fmt, why != NULL ? why : "");
	transport_wrap_fail(&d->w, text);
	free(text);
}

/* ---- the process: its stderr is the server's log; its end, the end ---- */

static void
dgw_proc_message(void *arg, json_t *msg)
{
	struct dgw *d = arg;
	const char note[] =
	    "[mcpd: the gateway wrote JSON on stdout; with --transport streaming it speaks HTTP]";

	(void)msg;
	if (!d->w.is_closing)
		d->w.t.cbs->stderr_line(d->w.t.cb_arg, note, sizeof note - 1);
}

static void
dgw_proc_failed(void *arg, const json_t *id, enum errors_kind kind,
    const char *why)
{
	(void)arg, (void)id, (void)kind, (void)why;
}

static void
dgw_proc_stderr(void *arg, const char *line, size_t len)
{
	struct dgw *d = arg;

	if (!d->w.is_closing)
		d->w.t.cbs->stderr_line(d->w.t.cb_arg, line, len);
}

static void
dgw_proc_closed(void *arg, const char *why)
{
	dgw_fail(arg, "docker mcp gateway run ended: %s", why);
}

static const struct transport_cbs dgw_proc_cbs = {
	.message = dgw_proc_message,
	.failed = dgw_proc_failed,
	.stderr_line = dgw_proc_stderr,
	.closed = dgw_proc_closed,
};

/* ---- Streamable HTTP to it: the wrapped transport ---- */

static void
dgw_describe(const struct transport_wrap *w, char *buf, size_t size)
{
	snprintf(buf, size, "gateway on port %d",
	    ((const struct dgw *)w)->port);
}

static void
dgw_http_closed(struct transport_wrap *w, const char *why)
{
	dgw_fail((struct dgw *)w,
	    "the HTTP connection to the gateway ended: %s", why);
}

/* Until the gateway first answers, a failure means "not listening yet". */
static const struct transport_wrap_hooks dgw_hooks = {
	.describe = dgw_describe,
	.closed = dgw_http_closed,
};

/* ---- the transport the session sees ---- */

static int
dgw_open(struct transport *t, char **cause)
{
	struct dgw *d = dgw_of(t);
	unsigned char raw[DGW_TOKEN_LEN];
	char token[2 * DGW_TOKEN_LEN + 1], *auth, *extra[2] = { NULL, NULL };
	char **argv, **env, text[160];
	struct child_spec child = { 0 };
	size_t n = 0;
	int r;

	if ((r = dgw_pick_port(&d->port, cause)) < 0)
		return r;
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		return errors_cause(cause, -EIO,
		    "cannot make the gateway's token: %s", strerror(errno));
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(token + 2 * i, 3, "%02x", raw[i]);
	explicit_bzero(raw, sizeof raw);
	while (d->argv[n] != NULL)
		n++;
	argv = xcalloc(n + 3, sizeof *argv);
	memcpy(argv, d->argv, n * sizeof *argv);
	xasprintf(&argv[n], "--port");
	xasprintf(&argv[n + 1], "%d", d->port);
	/* The token goes in its environment, never its command line. */
	xasprintf(&extra[0], "MCP_GATEWAY_AUTH_TOKEN=%s", token);
	env = docker_env(extra);
	child.argv = argv;
	child.env = env;
	child.cwd = d->cwd;
	d->proc = transport_stdio_new(&child, &dgw_proc_cbs, d);
	free(argv[n]);
	free(argv[n + 1]);
	free(argv);
	child_strv_wipe_free(env);
	explicit_bzero(extra[0], strlen(extra[0]));
	free(extra[0]);
	snprintf(text, sizeof text,
	    "docker mcp gateway run on port %d, reached at 127.0.0.1", d->port);
	transport_wrap_progress(&d->w, "starting", text);
	if ((r = d->proc->ops->open(d->proc, cause)) < 0) {
		explicit_bzero(token, sizeof token);
		return r;
	}
	xasprintf(&d->remote.url, "http://127.0.0.1:%d/mcp", d->port);
	d->remote.allow_local = true;
	xasprintf(&auth, "Bearer %s", token);
	explicit_bzero(token, sizeof token);
	d->remote.headers = xjson(json_pack("{s:s}", "Authorization", auth));
	explicit_bzero(auth, strlen(auth));
	free(auth);
	d->w.inner = transport_http_new(&d->remote, &transport_wrap_cbs, &d->w);
	transport_wrap_progress(&d->w, "connecting", d->remote.url);
	return d->w.inner->ops->open(d->w.inner, cause);
}

static int
dgw_send(struct transport *t, const json_t *msg, const json_t *tool)
{
	struct dgw *d = dgw_of(t);

	if (d->w.inner == NULL || d->w.is_closing)
		return -EPIPE;
	if (transport_hold_note(&d->w.hold, msg, tool))
		return 0;
	return d->w.inner->ops->send(d->w.inner, msg, tool);
}

static void
dgw_drain(struct transport *t)
{
	struct dgw *d = dgw_of(t);

	if (d->proc != NULL && d->proc->ops->drain != NULL)
		d->proc->ops->drain(d->proc);
}

/* The close ended; a dgw freed meanwhile tells no one. */
static void
dgw_proc_ended(void *arg)
{
	transport_wrap_closed_now(arg);
}

/* HTTP first, then the process: stdin closed, SIGTERM, SIGKILL. */
static void
dgw_http_ended(void *arg)
{
	struct dgw *d = arg;

	d->proc->ops->close(d->proc, dgw_proc_ended, d);
}

static void
dgw_close(struct transport *t, void (*done)(void *), void *arg)
{
	struct dgw *d = dgw_of(t);

	d->w.is_closing = true;
	d->w.done = done;
	d->w.done_arg = arg;
	transport_hold_stop(&d->w.hold);
	if (d->w.inner != NULL)
		d->w.inner->ops->close(d->w.inner, dgw_http_ended, d);
	else if (d->proc != NULL)
		d->proc->ops->close(d->proc, dgw_proc_ended, d);
	else {
		/* Nothing ran: the answer still comes from the loop. */
		defer_call(dgw_proc_ended, d);
	}
}

static void
dgw_release(void *arg)
{
	struct dgw *d = arg;

	child_strv_free(d->argv);
	free(d->cwd);
	free(d->remote.url);
	jsonwipe_decref(d->remote.headers);
	free(d);
}

/* Its memory goes from the loop, as every transport's (DESIGN 10). */
static void
dgw_free(struct transport *t)
{
	struct dgw *d = dgw_of(t);

	transport_wrap_free(&d->w);
	if (d->proc != NULL)
		d->proc->ops->free(d->proc);
	d->proc = NULL;
	defer_call(dgw_release, d);
}

static const struct transport_ops dgw_ops = {
	.name = "streamable-http",
	.open = dgw_open,
	.send = dgw_send,
	.drain = dgw_drain,
	.close = dgw_close,
	.free = dgw_free,
};

pid_t
transport_dgw_pid(const struct transport *t)
{
	if (t == NULL || t->ops != &dgw_ops)
		return -1;
	return transport_stdio_pid(((const struct dgw *)t)->proc);
}

struct transport *
transport_dgw_new(const struct server_spec *spec,
    const struct transport_cbs *cbs, void *arg)
{
	struct dgw *d = xcalloc(1, sizeof *d);

	transport_wrap_init(&d->w, &dgw_ops, "streamable-http", &dgw_hooks,
	    DGW_RESEND_MS, cbs, arg);
	d->argv = child_strv_copy(spec->argv);
	if (spec->cwd != NULL)
		d->cwd = xstrdup(spec->cwd);
	return &d->w.t;
}
