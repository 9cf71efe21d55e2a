/* SPDX-License-Identifier: ISC */
/* mcpctl bridge: MCP over stdio relayed to and from mcpd's control socket. */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "errors.h"
#include "jsonrpc.h"
#include "mcpctl.h"
#include "paths.h"

/* Bytes held in each direction before reading from that side stops. */
#define BRIDGE_BUFFER ((size_t)64 << 10)
/* Bytes written at once to a descriptor that stays blocking (a terminal). */
#define BRIDGE_CHUNK  ((size_t)4096)
/* Bytes kept of the last line from mcpd: its error, when it closes. */
#define BRIDGE_LAST   ((size_t)1024)

/* One direction: bytes read from in wait in buf until out takes them. */
struct bridge_pipe {
	int in, out;
	struct evbuffer *buf;
	bool is_in_eof;
	bool is_out_nonblock; /* else write at most BRIDGE_CHUNK per POLLOUT */
};

/* The start of the last line mcpd sent (the bytes past BRIDGE_LAST go). */
struct bridge_last {
	char text[BRIDGE_LAST];
	size_t len;
	bool is_whole; /* its newline came: the next byte starts another */
};

/* stdin, stdout and their file status flags before the bridge ran. */
struct bridge_stdio {
	int fd;
	int flags; /* -1: left alone */
};

static const struct option ctl_bridge_options[] = {
	{ "server", required_argument, NULL, 'S' },
	{ "profile", required_argument, NULL, 'P' },
	{ "relay", no_argument, NULL, 'r' },
	{ "no-project", no_argument, NULL, 'N' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * Makes a pipe or socket on fd non-blocking (such an end is the bridge's
 * own: its client holds the other one), remembering the flags to put back;
 * a terminal or a file stays as it is. Whether fd is non-blocking now.
 */
static bool
ctl_bridge_nonblock(struct bridge_stdio *saved)
{
	struct stat st;
	int flags;

	saved->flags = -1;
	if (fstat(saved->fd, &st) < 0 ||
	    !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) ||
	    (flags = fcntl(saved->fd, F_GETFL)) < 0)
		return false;
	if (flags & O_NONBLOCK)
		return true;
	if (fcntl(saved->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return false;
	saved->flags = flags;
	return true;
}

static void
ctl_bridge_restore(const struct bridge_stdio *saved)
{
	if (saved->flags >= 0)
		(void)fcntl(saved->fd, F_SETFL, saved->flags);
}

/* Reads what in has into p's buffer: 1, 0 at EOF, or -errno. */
static int
ctl_bridge_read(struct bridge_pipe *p)
{
	size_t room = BRIDGE_BUFFER - evbuffer_get_length(p->buf);
	int n;

	n = evbuffer_read(p->buf, p->in, (int)room);
	if (n > 0)
		return 1;
	if (n == 0)
		return 0;
	if (errno == EINTR || errno == EAGAIN)
		return 1;
	return -errno;
}

/* Notes the bytes of buf from offset from on: the last line's start. */
static void
ctl_bridge_note(struct bridge_last *last, struct evbuffer *buf, size_t from)
{
	static char chunk[BRIDGE_BUFFER];
	struct evbuffer_ptr at;
	ev_ssize_t n;

	if (evbuffer_ptr_set(buf, &at, from, EVBUFFER_PTR_SET) < 0)
		return;
	while ((n = evbuffer_copyout_from(buf, &at, chunk, sizeof chunk)) > 0) {
		for (ev_ssize_t i = 0; i < n; i++) {
			if (last->is_whole) {
				last->len = 0;
				last->is_whole = false;
			}
			if (chunk[i] == '\n')
				last->is_whole = true;
			else if (last->len < sizeof last->text - 1)
				last->text[last->len++] = chunk[i];
		}
		if (evbuffer_ptr_set(buf, &at, (size_t)n, EVBUFFER_PTR_ADD) < 0)
			return;
	}
}

/*
 * mcpd closed the connection: says why when its last line was the error
 * it closes a connection with (a message over the limit, say), else that
 * it may have stopped.
 */
static void
ctl_bridge_closed(const struct bridge_last *last)
{
	json_t *msg = NULL, *error;
	const char *text = NULL;

	if (last->is_whole &&
	    (msg = json_loadb(last->text, last->len, 0, NULL)) != NULL &&
	    json_is_null(json_object_get(msg, "id")) &&
	    (error = json_object_get(msg, "error")) != NULL)
		text = json_string_value(json_object_get(error, "message"));
	if (text != NULL && strstr(text, "closing the connection") != NULL)
		print_err("mcpd closed the connection: %s", text);
	else
		print_err(
		    "mcpd closed the connection (did it stop? mcpctl status)");
	json_decref(msg);
}

/* Writes what p's buffer holds, as much as out takes: 0 or -errno. */
static int
ctl_bridge_write(struct bridge_pipe *p)
{
	size_t len = evbuffer_get_length(p->buf);
	int n;

	if (!p->is_out_nonblock && len > BRIDGE_CHUNK)
		len = BRIDGE_CHUNK;
	n = evbuffer_write_atmost(p->buf, p->out, (ssize_t)len);
	if (n >= 0 || errno == EINTR || errno == EAGAIN)
		return 0;
	return -errno;
}

/*
 * The relay: up carries stdin to the socket, down the socket to stdout.
 * Returns the exit status, after saying why on stderr when it is not 0.
 */
static int
ctl_bridge_relay(struct bridge_pipe *up, struct bridge_pipe *down, int sock)
{
	bool is_shut = false, is_refused = false;
	struct bridge_last last = { .len = 0 };
	struct pollfd pfd[4];
	size_t before;
	int r, n;

	ctl_bridge_note(&last, down->buf, 0); /* what came with the hello */

	for (;;) {
		size_t up_len = evbuffer_get_length(up->buf);
		size_t down_len = evbuffer_get_length(down->buf);

		/* stdin ended and all of it went to mcpd: half-close. */
		if (up->is_in_eof && up_len == 0 && !is_shut && !is_refused) {
			(void)shutdown(sock, SHUT_WR);
			is_shut = true;
		}
		if (down->is_in_eof && down_len == 0) {
			if (is_shut)
				return MCPCTL_EXIT_OK;
			ctl_bridge_closed(&last);
			return MCPCTL_EXIT_ERROR;
		}
		memset(pfd, 0, sizeof pfd);
		pfd[0].fd = !up->is_in_eof && !is_refused &&
			up_len < BRIDGE_BUFFER ?
		    up->in :
		    -1;
		pfd[0].events = POLLIN;
		pfd[1].fd = up_len > 0 && !is_refused ? up->out : -1;
		pfd[1].events = POLLOUT;
		pfd[2].fd = !down->is_in_eof && down_len < BRIDGE_BUFFER ?
		    down->in :
		    -1;
		pfd[2].events = POLLIN;
		pfd[3].fd = down_len > 0 ? down->out : -1;
		pfd[3].events = POLLOUT;
		if ((n = poll(pfd, 4, -1)) < 0) {
			if (errno == EINTR)
				continue;
			print_err("bridge: poll: %s", strerror(errno));
			return MCPCTL_EXIT_ERROR;
		}
		/* POLLHUP and POLLERR come with revents, asked or not. */
		if (pfd[0].revents != 0 && (r = ctl_bridge_read(up)) <= 0) {
			if (r < 0) {
				print_err(
				    "bridge: cannot read standard input: %s",
				    strerror(-r));
				return MCPCTL_EXIT_ERROR;
			}
			up->is_in_eof = true;
		}
		if (pfd[1].revents != 0 && (r = ctl_bridge_write(up)) < 0) {
			if (r == -EPIPE || r == -ECONNRESET) {
				/* mcpd went away: say so once its rest is out. */
				is_refused = true;
				continue;
			}
			print_err("bridge: cannot write to mcpd: %s",
			    strerror(-r));
			return MCPCTL_EXIT_ERROR;
		}
		before = evbuffer_get_length(down->buf);
		if (pfd[2].revents != 0 && (r = ctl_bridge_read(down)) <= 0) {
			if (r < 0 && r != -ECONNRESET) {
				print_err("bridge: cannot read from mcpd: %s",
				    strerror(-r));
				return MCPCTL_EXIT_ERROR;
			}
			down->is_in_eof = true;
		}
		ctl_bridge_note(&last, down->buf, before);
		if (pfd[3].revents != 0 && (r = ctl_bridge_write(down)) < 0) {
			print_err("bridge: cannot write to standard output: %s",
			    strerror(-r));
			return MCPCTL_EXIT_ERROR;
		}
	}
}

/*
 * What the bridge tells mcpd of the client that started it (mcpctl
 * clients shows it): that parent's pid and, when the kernel says, its
 * program. A parent the kernel does not name (another pid namespace: 0)
 * or that has gone (init adopted the bridge: 1) is left out.
 */
static json_t *
ctl_bridge_parent(void)
{
	pid_t ppid = getppid();
	json_t *parent = json_object();
	char *exe;

	if (parent == NULL || ppid <= 1)
		return parent;
	json_object_set_new(parent, "pid", json_integer(ppid));
	/* A path that is not UTF-8 has no JSON string: left out. */
	if ((exe = paths_proc_exe((int)ppid)) != NULL)
		json_object_set_new(parent, "exe", json_string(exe));
	free(exe);
	return parent;
}

/* What the bridge asks its session's view to be made of. */
struct ctl_bridge_view {
	json_t *servers;      /* --server, or a project file's */
	const char *profile;  /* --profile, or a project file's, or NULL */
	const char *error;    /* why a project file gives no view, or NULL */
	json_t **ret_refusal; /* mcpd's refusal goes here, not to stderr */
	bool
	    is_roots_project; /* none from here: the client's roots may name one */
};

/*
 * mcpd/hello with the view v; parent (stolen): the client's "parent", or
 * NULL for none (a connection that is no bridge).
 */
static int
ctl_bridge_hello_as(struct mcpctl *m, const struct ctl_bridge_view *v,
    json_t *parent)
{
	const char *agent = m->agent;
	json_t *params, *result;
	int r;

	params = json_pack("{s:{s:s, s:s}}", "client", "name", "mcpctl bridge",
	    "version", MCPD_VERSION);
	if (params == NULL) {
		json_decref(parent);
		return MCPCTL_EXIT_ERROR;
	}
	if (agent != NULL)
		json_object_set_new(params, "agent", json_string(agent));
	if (json_array_size(v->servers) > 0)
		json_object_set(params, "servers", v->servers);
	if (parent != NULL)
		json_object_set_new(json_object_get(params, "client"), "parent",
		    parent);
	if (v->profile != NULL)
		json_object_set_new(params, "profile", json_string(v->profile));
	if (v->error != NULL)
		json_object_set_new(params, "view_error",
		    json_string(v->error));
	if (v->is_roots_project)
		json_object_set_new(params, "roots_project", json_true());
	/* Ours is the one hello: the connection must not send its own. */
	m->agent = NULL;
	r = v->ret_refusal != NULL ?
	    mcpctl_request_error(m, "mcpd/hello", params, &result,
		v->ret_refusal) :
	    mcpctl_request(m, "mcpd/hello", params, &result);
	m->agent = agent;
	if (r == 0)
		json_decref(result);
	return r;
}

int
ctl_bridge_hello(struct mcpctl *m, json_t *servers, const char *profile)
{
	struct ctl_bridge_view v = { servers, profile, NULL, NULL, false };

	return ctl_bridge_hello_as(m, &v, NULL);
}

/*
 * The hello of a bridge that was given no view: that of the project file
 * found from the working directory, if any. What keeps it from being one
 * (broken, not trusted, a server or profile mcpd does not have) is said
 * on stderr and made the session's view error: its lists and calls fail
 * with it, never a silently different view.
 */
static int
ctl_bridge_hello_project(struct mcpctl *m, const struct ctl_bridge_view *given)
{
	struct ctl_bridge_view v = *given;
	struct projectfile p;
	json_t *refusal = NULL;
	char *why = NULL;
	int r;

	if (projectfile_find(".", &p) < 0)
		return MCPCTL_EXIT_ERROR;
	if (p.path == NULL) {
		projectfile_clear(&p);
		v.is_roots_project = true;
		return ctl_bridge_hello_as(m, &v, ctl_bridge_parent());
	}
	ctl_project_apply(m, &p, true);
	v.servers = p.servers;
	v.profile = p.profile;
	v.error = p.error;
	v.ret_refusal = p.error == NULL ? &refusal : NULL;
	r = ctl_bridge_hello_as(m, &v, ctl_bridge_parent());
	if (r != 0 && refusal != NULL &&
	    asprintf(&why, "%s: %s", p.path,
		json_string_value(json_object_get(refusal, "message"))) >= 0) {
		/* What it names, mcpd does not have: an error of the file. */
		v = *given;
		v.error = why;
		r = ctl_bridge_hello_as(m, &v, ctl_bridge_parent());
	}
	if (v.error != NULL)
		print_err("bridge: %s", v.error);
	free(why);
	json_decref(refusal);
	projectfile_clear(&p);
	return r;
}

/* Whether fd is a pipe or a socket, which mcpd can be handed. */
static bool
ctl_bridge_is_stream(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 &&
	    (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

/*
 * Hands standard input and output to mcpd (mcpd/attach), which serves
 * them itself until the client closes its end, then answers; this
 * process only waits, so that the client sees its server running. The
 * exit status; -1 when this mcpd does not know mcpd/attach (relay then).
 */
static int
ctl_bridge_attach_call(struct mcpctl *m)
{
	const int fds[2] = { STDIN_FILENO, STDOUT_FILENO };
	struct jsonrpc_msg jm;
	json_t *msg;
	char *cause = NULL;
	int r;

	conn_pass_fds(m->conn, fds, 2);
	if ((r = conn_call(m->conn, "mcpd/attach", json_object(), &msg,
		 &cause)) < 0) {
		if (r == -EPIPE)
			print_err("mcpd closed the connection (did it stop? "
				  "mcpctl status)");
		else
			print_err("%s", cause != NULL ? cause : strerror(-r));
		free(cause);
		return MCPCTL_EXIT_ERROR;
	}
	jsonrpc_classify(msg, &jm, NULL);
	r = MCPCTL_EXIT_OK;
	if (jm.type == JSONRPC_ERROR &&
	    json_integer_value(json_object_get(jm.error, "code")) ==
		JSONRPC_METHOD_NOT_FOUND)
		r = -1;
	else if (jm.type == JSONRPC_ERROR) {
		print_err("%s",
		    json_string_value(json_object_get(jm.error, "message")));
		r = MCPCTL_EXIT_ERROR;
	}
	json_decref(msg);
	return r;
}

/*
 * mcpd makes what it is handed non-blocking; the open files are shared
 * with whoever else holds them (a shell that ran the bridge), so their
 * flags are put back once mcpd is done with them.
 */
static int
ctl_bridge_attach(struct mcpctl *m)
{
	int in = fcntl(STDIN_FILENO, F_GETFL);
	int out = fcntl(STDOUT_FILENO, F_GETFL);
	int r = ctl_bridge_attach_call(m);

	if (in >= 0)
		(void)fcntl(STDIN_FILENO, F_SETFL, in);
	if (out >= 0)
		(void)fcntl(STDOUT_FILENO, F_SETFL, out);
	return r;
}

/* Relays standard input and output to and from mcpd: the exit status. */
static int
ctl_bridge_relay_stdio(struct mcpctl *m)
{
	struct bridge_stdio in = { .fd = STDIN_FILENO },
			    out = { .fd = STDOUT_FILENO };
	struct bridge_pipe up = { 0 }, down = { 0 };
	int r, sock = conn_fd(m->conn);

	up = (struct bridge_pipe){ .in = STDIN_FILENO,
		.out = sock,
		.buf = evbuffer_new(),
		.is_out_nonblock = true };
	down = (struct bridge_pipe){ .in = sock,
		.out = STDOUT_FILENO,
		.buf = evbuffer_new() };
	if (up.buf == NULL || down.buf == NULL) {
		evbuffer_free(up.buf);
		evbuffer_free(down.buf);
		print_err("bridge: out of memory");
		return MCPCTL_EXIT_ERROR;
	}
	/* What came after the hello's answer goes out first. */
	evbuffer_add_buffer(down.buf, conn_input(m->conn));
	(void)ctl_bridge_nonblock(&in);
	down.is_out_nonblock = ctl_bridge_nonblock(&out);
	fflush(stdout);
	r = ctl_bridge_relay(&up, &down, sock);
	ctl_bridge_restore(&in);
	ctl_bridge_restore(&out);
	evbuffer_free(up.buf);
	evbuffer_free(down.buf);
	return r;
}

static int
ctl_bridge_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	struct ctl_bridge_view view = { 0 };
	json_t *servers = json_array();
	const char *profile = NULL;
	bool is_relay = false, is_no_project = false;
	int c, r;

	if (servers == NULL)
		return MCPCTL_EXIT_ERROR;
	while ((c = mcpctl_getopt(argc, argv, ":h", ctl_bridge_options)) !=
	    -1) {
		switch (c) {
		case 'S':
			if ((r = mcpctl_check_name(cmd, "server", optarg)) !=
			    0) {
				json_decref(servers);
				return r;
			}
			json_array_append_new(servers, json_string(optarg));
			break;
		case 'P':
			if ((r = mcpctl_check_name(cmd, "profile", optarg)) !=
			    0) {
				json_decref(servers);
				return r;
			}
			profile = optarg;
			break;
		case 'r':
			is_relay = true;
			break;
		case 'N':
			is_no_project = true;
			break;
		case 'h':
			json_decref(servers);
			return mcpctl_help(cmd);
		default:
			json_decref(servers);
			return mcpctl_bad_option(cmd, c, argv);
		}
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0) {
		json_decref(servers);
		return r;
	}
	/* stdout carries MCP only: errors go to stderr, even with --json. */
	m->is_json = false;
	/*
	 * The view, most specific first: --profile or --server, then a
	 * project file found from here, sent the same way; with neither,
	 * mcpd applies the agent's default profile itself.
	 */
	view.servers = servers;
	view.profile = profile;
	if (profile == NULL && json_array_size(servers) == 0 && !is_no_project)
		r = ctl_bridge_hello_project(m, &view);
	else
		r = ctl_bridge_hello_as(m, &view, ctl_bridge_parent());
	json_decref(servers);
	if (r != 0)
		return r;
	/* A terminal (someone typing) or a file is relayed, never handed. */
	if (!is_relay && ctl_bridge_is_stream(STDIN_FILENO) &&
	    ctl_bridge_is_stream(STDOUT_FILENO) &&
	    evbuffer_get_length(conn_input(m->conn)) == 0 &&
	    (r = ctl_bridge_attach(m)) >= 0)
		return r;
	return ctl_bridge_relay_stdio(m);
}

const struct mcpctl_cmd ctl_bridge_cmd = {
	.name = "bridge",
	.synopsis =
	    "[--agent AGENT] [--server SERVER]... [--profile PROFILE] [--no-project] [--relay]",
	.summary =
	    "relay MCP between standard input and output and mcpd, for MCP clients that start a stdio server (see client-config)",
	.help =
	    "  --agent AGENT      the agent whose servers the client sees (global option)\n"
	    "  --server SERVER    only this server (repeatable); default: all of the agent's\n"
	    "  --profile PROFILE  the view of this profile of the agent (mcpctl profile);\n"
	    "                     default: the project file's (.mcpd.json, found from\n"
	    "                     here up to $HOME), else the agent's default profile,\n"
	    "                     else everything\n"
	    "  --no-project       look for no project file\n"
	    "  --relay            copy every message through this process; by default,\n"
	    "                     when standard input and output are pipes or sockets,\n"
	    "                     mcpd is handed them and serves the client directly\n"
	    "                     (mcpctl waits, and exits when the session ends)\n"
	    "  -h, --help         this text\n",
	.exec = ctl_bridge_exec,
	.options = ctl_bridge_options,
};
