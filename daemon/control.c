/* SPDX-License-Identifier: ISC */
/* The control socket: accept, peer credentials, framing, dispatch. */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "gateway.h"
#include "control-int.h"
#include "isotime.h"
#include "log.h"
#include "paths.h"

#define CONTROL_RETRY_ACCEPT_MS 1000
#define CONTROL_READ_MAX	(1024 * 1024)

struct client_list control_clients = TAILQ_HEAD_INITIALIZER(control_clients);
static size_t control_nclients;
struct evconnlistener *control_listener; /* control-upgrade.c too */
static struct event *control_retry_timer;
char *control_path;		  /* set when we bound it and must unlink it */
static int control_spare_fd = -1; /* given up at EMFILE to refuse a client */

static void control_read(void *);

size_t
control_client_count(void)
{
	return control_nclients;
}

const struct client *
control_client_next(const struct client *c)
{
	return c == NULL ? TAILQ_FIRST(&control_clients) : TAILQ_NEXT(c, entry);
}

void
control_client_ref(struct client *c)
{
	c->references++;
}

static void
control_client_release(void *arg)
{
	struct client *c = arg;

	json_decref(c->scope);
	free(c->profile);
	free(c->view_error);
	json_decref(c->who);
	sendq_free(c->out);
	fdread_release(&c->rd);
	bufferevent_free(c->bev);
	if (c->in_fd >= 0)
		close(c->in_fd);
	free(c->end_why);
	free(c->bridge_exe);
	free(c->agent);
	free(c);
}

void
control_client_unref(struct client *c)
{
	if (--c->references == 0)
		defer_call(control_client_release, c);
}

/*
 * Ends the client and frees its slot at once; its memory goes when the
 * last reference does (DESIGN 10). Its pending requests stay with their
 * owners, who answer into nothing; each gone hook runs once, so that a
 * call is cancelled upstream instead of running on for no one. A hook
 * may end another client (an attached one goes with the connection that
 * attached it): that one is only marked dead and unlinked here too.
 */
void
control_client_free(struct client *c)
{
	struct request *r;
	void (*fn)(void *);

	if (c->is_dead)
		return;
	c->is_dead = true;
	c->is_closing = true;
	/* Nothing of the connection calls back from now on. */
	fdread_disable(&c->rd);
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	bufferevent_setcb(c->bev, NULL, NULL, NULL, NULL);
	sendq_on_drained(c->out, NULL, NULL);
	if (c->hangup != NULL)
		event_free(c->hangup);
	c->hangup = NULL;
	if (c->nrequests > 0)
		log_debug("a control client went with %zu requests pending",
		    c->nrequests);
	while ((r = TAILQ_FIRST(&c->requests)) != NULL) {
		TAILQ_REMOVE(&c->requests, r, entry);
		r->client = NULL; /* its owner still answers, into nothing */
		if ((fn = r->gone_fn) != NULL) {
			r->gone_fn = NULL;
			fn(r->gone_arg);
		}
	}
	control_asks_fail(c);
	control_attach_end(c);
	TAILQ_REMOVE(&control_clients, c, entry);
	if (c->is_counted)
		control_nclients--;
	if (c->peer != NULL)
		c->peer->gone(c->peer_arg);
	control_forget_peer(c);
	gateway_free(c->gateway);
	c->gateway = NULL;
	control_client_unref(c);
}

/*
 * True when the peer closed both ways (close, or shutdown of both sides):
 * nothing sent to it can arrive. A peer that shut only its writing side
 * still reads its answers.
 */
static bool
control_peer_is_gone(struct client *c)
{
	struct pollfd p = { bufferevent_getfd(c->bev), POLLOUT, 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

void
control_send(struct client *c, json_t *msg)
{
	if (c->is_dead) { /* nothing reaches a client that went */
		json_decref(msg);
		return;
	}
	sendq_push(c->out, msg);
	json_decref(msg);
}

size_t
control_output_length(const struct client *c)
{
	return sendq_length(c->out) +
	    (c->peer != NULL ? c->peer->held(c->peer_arg) : 0);
}

/*
 * Reading stops while a client has max_client_requests in flight, or
 * while its unsent output plus what its requests in flight may add (each
 * counted as large as its largest recent answer) reaches
 * max_client_output: what a client that does not read makes mcpd hold
 * stays near that bound instead of growing with every request it sends.
 */
static bool
control_must_pause(const struct client *c)
{
	size_t out = sendq_length(c->out);

	return c->nrequests >= mcpd_opts.max_client_requests ||
	    out >= mcpd_opts.max_client_output ||
	    c->nrequests * c->answer_size >= mcpd_opts.max_client_output - out;
}

/* A close is seen while paused too: the slot does not wait for an answer. */
static void
control_pause(struct client *c)
{
	c->is_paused = true;
	fdread_disable(&c->rd);
	if (c->hangup != NULL && !c->is_write_shut)
		event_add(c->hangup, NULL);
}

static void
control_maybe_resume(struct client *c)
{
	if (!c->is_paused || c->is_closing || c->is_eof ||
	    control_must_pause(c) || (c->peer == NULL && upgrade_is_draining()))
		return;
	c->is_paused = false;
	if (c->hangup != NULL)
		event_del(c->hangup);
	fdread_enable(&c->rd);
	fdread_kick(&c->rd); /* what it sent meanwhile, on a later turn */
}

/* The peer of a paused client closed, or shut its writing side. */
static void
control_hangup(evutil_socket_t fd, short events, void *arg)
{
	struct client *c = arg;

	(void)fd, (void)events;
	if (control_peer_is_gone(c)) {
		control_client_free(c);
		return;
	}
	/* What it sent before is read (and answered) once it drains. */
	c->is_write_shut = true;
	event_del(c->hangup);
}

/* The kernel took everything: a client paused for its output reads on. */
static void
control_drained(void *arg)
{
	control_maybe_resume(arg);
}

static void
control_write(struct bufferevent *bev, void *arg)
{
	struct client *c = arg;

	(void)bev;
	if (c->is_closing &&
	    evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
		control_client_free(c);
		return;
	}
	control_maybe_resume(c);
}

static void control_close_after_flush(struct client *);
static void control_handle_line(struct client *, const char *, size_t);

/*
 * A client that shut its write side still gets every answer it asked; one
 * that closed, or that cannot be written to, has gone.
 */
static void
control_read_end(void *arg, int error)
{
	struct client *c = arg;

	if (error != 0 || control_peer_is_gone(c)) {
		control_client_free(c);
		return;
	}
	c->is_eof = true;
	fdread_disable(&c->rd);
	if (c->nrequests == 0)
		control_close_after_flush(c);
}

/* Writing failed: the client cannot be answered. */
static void
control_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev, (void)what;
	control_client_free(arg);
}

/* Sends what is queued, then closes: for clients that broke the framing. */
static void
control_close_after_flush(struct client *c)
{
	c->is_closing = true;
	fdread_disable(&c->rd);
	sendq_flush(c->out);
	bufferevent_trigger(c->bev, EV_WRITE,
	    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
}

/* Requests, kept for reuse: the hot path allocates nothing. */
static struct xrecycle control_requests = XRECYCLE_INIT(struct request, 256);

struct request *
control_request_new(struct client *c, json_t *id)
{
	struct request *r = xrecycle_get(&control_requests);

	r->client = c;
	r->id = json_incref(id);
	r->own_fn = NULL;
	r->own_arg = NULL;
	TAILQ_INSERT_TAIL(&c->requests, r, entry);
	c->nrequests++;
	return r;
}

/* An own request's answer, on its way to its function from the loop. */
struct control_own_answer {
	control_own_fn *fn;
	void *arg;
	json_t *msg;
};

static void
control_own_deliver(void *arg)
{
	struct control_own_answer *a = arg;

	a->fn(a->arg, a->msg);
	free(a);
}

struct request *
control_request_own(struct client *c, control_own_fn *fn, void *arg)
{
	static json_int_t serial;
	json_t *id = json_sprintf("mcpd-own-%" JSON_INTEGER_FORMAT, ++serial);
	struct request *r = control_request_new(c, xjson(id));

	json_decref(id);
	r->own_fn = fn;
	r->own_arg = arg;
	return r;
}

/* The answer of an own request goes to its function, not to the client. */
static void
control_own_answer(struct request *r, json_t *msg, const char *raw, size_t len)
{
	struct control_own_answer *a = xmalloc(sizeof *a);

	a->fn = r->own_fn;
	a->arg = r->own_arg;
	a->msg = msg != NULL ?
	    msg :
	    jsonrpc_result(r->id, json_loadb(raw, len, 0, NULL));
	defer_call(control_own_deliver, a);
}

/* The estimate of an answer's size: the largest, forgotten slowly. */
static void
control_note_answer(struct client *c, size_t len)
{
	c->answer_size -= c->answer_size / 16;
	if (len > c->answer_size)
		c->answer_size = len;
}

void
control_finish(struct request *r, json_t *msg, const char *raw, size_t len)
{
	struct client *c = r->client;
	size_t before;

	if (r->own_fn != NULL) {
		control_own_answer(r, msg, raw, len);
		msg = NULL;
	}
	if (c != NULL) {
		TAILQ_REMOVE(&c->requests, r, entry);
		c->nrequests--;
		before = sendq_length(c->out);
		if (r->own_fn != NULL)
			; /* its answer went to mcpd's own function */
		else if (r->is_cancelled)
			json_decref(
			    msg); /* MCP: a cancelled request gets none */
		else if (msg != NULL)
			control_send(c, msg);
		else
			sendq_push_raw_result(c->out, r->id, raw, len);
		control_note_answer(c, sendq_length(c->out) - before);
		if (c->is_eof && c->nrequests == 0)
			control_close_after_flush(c);
		else
			control_maybe_resume(c);
	} else
		json_decref(msg);
	server_reply_clear(&r->reply);
	json_decref(r->id);
	xrecycle_put(&control_requests, r);
}

/* Errors about the framing itself, outside any request. */
static void
control_protocol_error(struct client *c, json_t *id, int code,
    const char *message, json_t *data)
{
	control_send(c, jsonrpc_error(id, code, message, data));
}

static json_t *
control_usable_id(json_t *msg)
{
	json_t *id = json_object_get(msg, "id");

	return json_is_string(id) || json_is_integer(id) ? id : NULL;
}

static void
control_handle_message(struct client *c, json_t *msg)
{
	struct jsonrpc_msg m;
	char *cause = NULL;

	if (json_is_array(msg)) {
		control_protocol_error(c, NULL, JSONRPC_INVALID_REQUEST,
		    "batches are not supported: send one object per line",
		    NULL);
		return;
	}
	if (jsonrpc_classify(msg, &m, &cause) < 0) {
		control_protocol_error(c, control_usable_id(msg),
		    JSONRPC_INVALID_REQUEST,
		    cause != NULL ? cause : "invalid request", NULL);
		free(cause);
		return;
	}
	if (m.type == JSONRPC_NOTIFICATION &&
	    strcmp(m.method, "notifications/cancelled") == 0)
		control_cancel(c, m.params);
	else if (m.type == JSONRPC_NOTIFICATION && c->gateway != NULL)
		gateway_notification(c->gateway, m.method, m.params);
	else if (m.type == JSONRPC_RESULT || m.type == JSONRPC_ERROR)
		control_answered(c, &m); /* to a request of mcpd's */
	if (m.type != JSONRPC_REQUEST)
		return; /* nothing to say to a notification or an answer */
	if (m.params != NULL && !json_is_object(m.params)) {
		control_protocol_error(c, m.id, JSONRPC_INVALID_PARAMS,
		    "params must be an object", NULL);
		return;
	}
	/* mcpd's own methods, else MCP: the gateway (DESIGN 11). */
	if (strncmp(m.method, "mcpd/", 5) == 0)
		cmd_dispatch(control_request_new(c, m.id), m.method, m.params);
	else
		gateway_dispatch(control_request_new(c, m.id), m.method,
		    m.params);
}

static void
control_handle_line(struct client *c, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg;
	char text[256];

	if (len == 0 || control_fast_line(c, line, len))
		return;
	if ((msg = jsonrpc_parse(line, len, &jerr)) == NULL) {
		snprintf(text, sizeof text, "not JSON: %s at line %d column %d",
		    jerr.text, jerr.line, jerr.column);
		control_protocol_error(c, NULL, JSONRPC_PARSE_ERROR, text,
		    NULL);
		return;
	}
	control_handle_message(c, msg);
	json_decref(msg);
}

static void
control_too_long(struct client *c)
{
	char text[128];

	snprintf(text, sizeof text,
	    "message longer than the limit of %zu bytes; closing the connection",
	    mcpd_opts.max_message);
	free(c->end_why);
	c->end_why = xstrdup(text);
	control_protocol_error(c, NULL, JSONRPC_INVALID_REQUEST, text,
	    json_pack("{s:I}", "limit", (json_int_t)mcpd_opts.max_message));
	evbuffer_drain(c->rd.in, evbuffer_get_length(c->rd.in));
	control_close_after_flush(c);
}

static void
control_read(void *arg)
{
	struct client *c = arg;
	struct evbuffer *in = c->rd.in;
	char *line;
	size_t len;
	int r;

	/* A line's handling may end c: it stays whole until the loop ends. */
	control_client_ref(c);
	/*
	 * An upgrade's drain holds socket clients; an HTTP session's requests
	 * are answered (Connection: close), else the drain never ends.
	 */
	while (!c->is_closing && !c->is_paused &&
	    (c->peer != NULL || !upgrade_is_draining())) {
		if (control_must_pause(c)) {
			control_pause(c);
			break;
		}
		if ((r = linebuf_peek(&c->lines, in, &line, &len)) == 0)
			break;
		if (r < 0) {
			control_too_long(c);
			break;
		}
		control_handle_line(c, line, len);
		linebuf_consume(&c->lines, in);
	}
	control_client_unref(c);
}

static bool
control_peer_allowed(int fd, uid_t *ret_uid, pid_t *ret_pid)
{
	struct ucred cred;
	socklen_t len = sizeof cred;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	*ret_uid = cred.uid;
	*ret_pid = cred.pid;
	return cred.uid == geteuid() || cred.uid == 0;
}

/* One error line to a connection mcpd does not take, then it is closed. */
static void
control_refuse(int fd, enum errors_kind kind, const char *why, json_t *data)
{
	json_t *msg = jsonrpc_error_kind(NULL, kind, why, data);
	char *text = json_dumps(msg, JSON_COMPACT);

	if (text != NULL) {
		(void)!write(fd, text, strlen(text));
		(void)!write(fd, "\n", 1);
	}
	free(text);
	json_decref(msg);
	close(fd);
}

/* Refuses a peer of another uid; true when it did, else *ret_pid is its. */
static bool
control_refuse_stranger(int fd, pid_t *ret_pid)
{
	uid_t uid = (uid_t)-1;
	char why[128];

	if (control_peer_allowed(fd, &uid, ret_pid))
		return false;
	snprintf(why, sizeof why,
	    "peer uid %d may not use this daemon (it runs as uid %u)", (int)uid,
	    (unsigned)geteuid());
	log_warnx("refused a control connection: %s", why);
	control_refuse(fd, ERRORS_DENIED, why, NULL);
	return true;
}

struct client *
control_adopt(const char *agent, const json_t *scope,
    const struct control_peer *peer, void *arg)
{
	/* No descriptor: its lines come from the peer, its answers go to it. */
	struct client *c = control_client_new(-1, -1, agent, scope);

	/* The HTTP front counts its sessions itself (--max-http-sessions). */
	c->is_counted = false;
	control_nclients--;
	c->peer = peer;
	c->peer_arg = arg;
	sendq_deliver_to(c->out, peer->deliver, arg);
	return c;
}

/*
 * Whether a peer's message may go to the gateway now: nothing of the
 * peer's waits before it and the client may take a request now; else it
 * waits in the client's input, where the client reads it in turn.
 */
static bool
control_peer_may_take(struct client *c)
{
	return !c->is_closing && !c->is_paused && !c->is_eof &&
	    evbuffer_get_length(c->rd.in) == 0 && !control_must_pause(c);
}

void
control_peer_queue(struct client *c, const char *line, size_t len)
{
	evbuffer_add(c->rd.in, line, len);
	evbuffer_add(c->rd.in, "\n", 1);
	/* A paused client reads it when it resumes. */
	if (!c->is_paused && !c->is_closing && !c->is_eof)
		fdread_kick(&c->rd);
}

void
control_peer_line(struct client *c, const char *line, size_t len)
{
	if (len <= mcpd_opts.max_message && control_peer_may_take(c))
		control_handle_line(c, line, len);
	else
		control_peer_queue(c, line, len);
}

void
control_peer_message(struct client *c, json_t *msg)
{
	char *text;

	if (control_peer_may_take(c)) {
		control_handle_message(c, msg);
		return;
	}
	text = xnonnull(json_dumps(msg, JSON_COMPACT));
	control_peer_queue(c, text, strlen(text));
	free(text);
}

void
control_forget_peer(struct client *c)
{
	c->peer = NULL;
	c->peer_arg = NULL;
	sendq_deliver_to(c->out, NULL, NULL);
}

static void
control_peer_ended(void *arg)
{
	struct client *c = arg;

	control_client_free(c);
	control_client_unref(c);
}

/*
 * The peer went (as a socket client's close is read): the client ends
 * from the loop, its requests in flight cancelled upstream.
 */
void
control_peer_end(struct client *c)
{
	control_forget_peer(c);
	control_client_ref(c);
	defer_call(control_peer_ended, c);
}

static void
control_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct client *c;
	char why[128];
	pid_t pid = 0;

	(void)l, (void)sa, (void)salen, (void)arg;
	if (control_refuse_stranger(fd, &pid))
		return;
	if (control_nclients >= mcpd_opts.max_clients) {
		snprintf(why, sizeof why,
		    "mcpd has %zu clients, its limit; close one or raise --max-clients",
		    control_nclients);
		log_warnx("refused a control connection: %s", why);
		control_refuse(fd, ERRORS_UNAVAILABLE, why,
		    json_pack("{s:I}", "limit",
			(json_int_t)mcpd_opts.max_clients));
		return;
	}
	c = control_client_new(fd, fd, "default", NULL);
	c->pid = pid;
	if (audit_is_on())
		c->who = audit_who_peer(pid);
	/* Its peer may hand stdio over to mcpd/attach. */
	fdread_take_fds(&c->rd);
}

/* Whether fd is a socket (a pipe's close is not seen as EV_CLOSED). */
static bool
control_is_socket(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

/*
 * A client on in and out: one accepted socket, the descriptors an
 * mcpd/attach handed over, or none (-1: an in-process peer's).
 */
struct client *
control_client_new(int in, int out, const char *agent, const json_t *scope)
{
	struct client *c = xcalloc(1, sizeof *c);

	c->references = 1; /* its connection's */
	c->since_ms = isotime_now_ms();
	c->agent = xstrdup(agent);
	c->scope = json_incref((json_t *)(uintptr_t)scope);
	c->in_fd = in != out ? in : -1;
	c->bev = bufferevent_socket_new(mcpd_base, out, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL)
		fatalx("cannot make a bufferevent for a control connection");
	/* EV_CLOSED needs a backend that reports it (epoll does). */
	if (control_is_socket(in))
		c->hangup = event_new(mcpd_base, in, EV_CLOSED | EV_PERSIST,
		    control_hangup, c);
	c->out = sendq_new(c->bev);
	sendq_on_drained(c->out, control_drained, c);
	/* Big reads keep a large message in few chains, cheap to scan. */
	fdread_init(&c->rd, in, CONTROL_READ_MAX, control_read,
	    control_read_end, c);
	linebuf_init(&c->lines, mcpd_opts.max_message);
	TAILQ_INIT(&c->requests);
	TAILQ_INIT(&c->asks);
	TAILQ_INSERT_TAIL(&control_clients, c, entry);
	c->is_counted = true;
	control_nclients++;
	bufferevent_setcb(c->bev, NULL, control_write, control_event, c);
	bufferevent_enable(c->bev, EV_WRITE);
	fdread_enable(&c->rd);
	return c;
}

static void
control_retry_accept(evutil_socket_t fd, short events, void *arg)
{
	(void)fd, (void)events, (void)arg;
	evconnlistener_enable(control_listener);
}

/*
 * Out of descriptors: the spare one is given up to accept the client,
 * tell it why and close it, so that it is not left waiting in silence.
 * True when it did.
 */
static bool
control_refuse_no_fd(struct evconnlistener *l)
{
	struct rlimit rl = { 0, 0 };
	char why[192];
	pid_t pid;
	int fd, err;

	if (control_spare_fd < 0)
		return false;
	close(control_spare_fd);
	fd = accept4(evconnlistener_get_fd(l), NULL, NULL,
	    SOCK_CLOEXEC | SOCK_NONBLOCK);
	err = fd < 0 ? errno : 0;
	if (fd >= 0 && !control_refuse_stranger(fd, &pid)) {
		getrlimit(RLIMIT_NOFILE, &rl);
		snprintf(why, sizeof why,
		    "mcpd has %zu clients and no file descriptor left (RLIMIT_NOFILE %llu); close a client or raise the limit",
		    control_nclients, (unsigned long long)rl.rlim_cur);
		log_warnx("refused a control connection: %s", why);
		control_refuse(fd, ERRORS_UNAVAILABLE, why,
		    json_pack("{s:I}", "clients",
			(json_int_t)control_nclients));
	}
	control_spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	/* Still out of descriptors even so: pause instead of spinning. */
	return control_spare_fd >= 0 && err != EMFILE && err != ENFILE;
}

/* EMFILE and friends: pause accepting for a while instead of spinning. */
static void
control_accept_error(struct evconnlistener *l, void *arg)
{
	struct timeval tv = { CONTROL_RETRY_ACCEPT_MS / 1000, 0 };
	int err = EVUTIL_SOCKET_ERROR();

	(void)arg;
	if ((err == EMFILE || err == ENFILE) && control_refuse_no_fd(l))
		return;
	errno = err;
	log_warn("accept on the control socket");
	evconnlistener_disable(l);
	evtimer_add(control_retry_timer, &tv);
}

static int
control_fail_listen(char **cause, const char *what, const char *path)
{
	int err = errno;

	xasprintf(cause, "%s %s: %s", what, path, strerror(err));
	return -err;
}

/* Refuses to take over the socket of a daemon that still answers. */
static int
control_check_stale(const char *path, const struct sockaddr_un *sun,
    char **cause)
{
	struct stat st;
	int fd, r;

	/* Only a socket is replaced: any other file is the user's. */
	if (lstat(path, &st) < 0)
		return errno == ENOENT ?
		    0 :
		    control_fail_listen(cause, "cannot stat", path);
	if (!S_ISSOCK(st.st_mode)) {
		xasprintf(cause,
		    "%s exists and is not a socket; mcpd leaves it as it is: remove it or give another path with -s",
		    path);
		return -EEXIST;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return control_fail_listen(cause, "socket for", path);
	r = connect(fd, (const struct sockaddr *)sun, sizeof *sun);
	close(fd);
	if (r == 0) {
		xasprintf(cause,
		    "another mcpd already listens on %s; stop it first (mcpctl -s %s shutdown)",
		    path, path);
		return -EADDRINUSE;
	}
	unlink(path);
	return 0;
}

static int
control_bind(const char *path, char **cause)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char *dir, *slash;
	mode_t old;
	int fd, r;

	if (strlen(path) >= sizeof sun.sun_path) {
		errno = ENAMETOOLONG;
		return control_fail_listen(cause, "socket path", path);
	}
	strcpy(sun.sun_path, path);
	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if ((r = paths_mkdir_p(dir, 0700)) < 0) {
			errno = -r;
			free(dir);
			return control_fail_listen(cause,
			    "cannot create the directory of", path);
		}
	}
	free(dir);
	if ((r = control_check_stale(path, &sun, cause)) < 0)
		return r;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return control_fail_listen(cause, "socket for", path);
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sun, sizeof sun);
	umask(old);
	if (r < 0 || chmod(path, 0600) < 0 || listen(fd, 128) < 0) {
		r = control_fail_listen(cause, "cannot listen on", path);
		close(fd);
		return r;
	}
	return fd;
}

/* The path a socket is bound to, so that status tells the truth. */
static void
control_learn_path(int fd)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof sun;

	memset(&sun, 0, sizeof sun);
	if (getsockname(fd, (struct sockaddr *)&sun, &len) < 0 ||
	    sun.sun_path[0] == '\0')
		return;
	sun.sun_path[sizeof sun.sun_path - 1] = '\0';
	free(mcpd_opts.socket_path);
	mcpd_opts.socket_path = xstrdup(sun.sun_path);
}

int
control_listen(const char *path, int activated_fd, char **cause)
{
	int fd = activated_fd;

	if (fd < 0) {
		if ((fd = control_bind(path, cause)) < 0)
			return fd;
		control_path = xstrdup(path);
	}
	evutil_make_socket_nonblocking(fd);
	control_listener = evconnlistener_new(mcpd_base, control_accept, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (control_listener == NULL)
		return control_fail_listen(cause, "cannot watch", path);
	evconnlistener_set_error_cb(control_listener, control_accept_error);
	control_retry_timer = evtimer_new(mcpd_base, control_retry_accept,
	    NULL);
	if ((control_spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		log_warn(
		    "no spare descriptor (/dev/null): a client beyond the descriptors waits unanswered");
	control_learn_path(fd); /* may replace path: do it last */
	return 0;
}

/*
 * Hands what is queued to the kernel, as far as it takes it now. The
 * bufferevent keeps its output drained by itself only, so copy it out.
 */
static void
control_flush_now(struct client *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	size_t len;
	unsigned char *data;

	sendq_flush(c->out);
	len = evbuffer_get_length(out);
	data = evbuffer_pullup(out, -1);
	if (data != NULL && len > 0)
		(void)!write(bufferevent_getfd(c->bev), data, len);
}

void
control_close(void)
{
	struct client *c;

	if (control_listener != NULL)
		evconnlistener_free(control_listener);
	control_listener = NULL;
	if (control_retry_timer != NULL)
		event_free(control_retry_timer);
	control_retry_timer = NULL;
	TAILQ_FOREACH(c, &control_clients, entry)
		if (c->end_why == NULL)
			c->end_why = xstrdup("mcpd stopped");
	while ((c = TAILQ_FIRST(&control_clients)) != NULL) {
		control_flush_now(c);
		control_client_free(c);
	}
	if (control_spare_fd >= 0)
		close(control_spare_fd);
	control_spare_fd = -1;
	if (control_path != NULL)
		unlink(control_path);
	free(control_path);
	control_path = NULL;
}
