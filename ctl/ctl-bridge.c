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

/* The longest line of the client's, as mcpd's own default limit. */
#define BRIDGE_MAX_MESSAGE     ((json_int_t)16 << 20)
/* How long mcpd may stay away before the bridge gives up, by default. */
#define BRIDGE_RECONNECT_S     60
/* The longest --reconnect-timeout: a year. */
#define BRIDGE_RECONNECT_MAX_S (86400.0 * 365)

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
	{ "reconnect-timeout", required_argument, NULL, 'T' },
	{ "max-message", required_argument, NULL, 'M' },
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

/* The view the bridge asked for, said again to each new mcpd. */
struct ctl_bridge_session {
	struct ctl_bridge_view view;
	bool is_project; /* the view is the project file's, looked up again */
};

/* The session's hello, on a new connection (relay_opts.hello). */
static int
ctl_bridge_rehello(struct mcpctl *m, void *arg)
{
	const struct ctl_bridge_session *s = arg;

	if (s->is_project)
		return ctl_bridge_hello_project(m, &s->view);
	return ctl_bridge_hello_as(m, &s->view, ctl_bridge_parent());
}

/* Relays standard input and output to and from mcpd: the exit status. */
static int
ctl_bridge_relay_stdio(struct mcpctl *m, const struct relay_opts *opts)
{
	struct bridge_stdio in = { .fd = STDIN_FILENO },
			    out = { .fd = STDOUT_FILENO };
	bool is_out_nonblock;
	int r;

	(void)ctl_bridge_nonblock(&in);
	is_out_nonblock = ctl_bridge_nonblock(&out);
	fflush(stdout);
	r = relay_run(m, opts, is_out_nonblock);
	ctl_bridge_restore(&in);
	ctl_bridge_restore(&out);
	return r;
}

/* --reconnect-timeout SECONDS into *ret_ms; 0 or 2. */
static int
ctl_bridge_parse_reconnect(const struct mcpctl_cmd *cmd, const char *text,
    int *ret_ms)
{
	char *end;
	double secs;

	errno = 0;
	secs = strtod(text, &end);
	if (errno != 0 || end == text || *end != '\0' || !(secs >= 0) ||
	    secs > BRIDGE_RECONNECT_MAX_S)
		return mcpctl_usage(cmd,
		    "--reconnect-timeout needs a number of seconds (0: end with mcpd), not '%s'",
		    text);
	*ret_ms = (int)(secs * 1000);
	if (*ret_ms == 0 && secs > 0)
		*ret_ms = 1;
	return 0;
}

static int
ctl_bridge_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	struct ctl_bridge_session session = { 0 };
	struct relay_opts opts = { .reconnect_ms = BRIDGE_RECONNECT_S * 1000,
		.hello = ctl_bridge_rehello,
		.hello_arg = &session };
	json_t *servers = json_array();
	json_int_t max = BRIDGE_MAX_MESSAGE;
	const char *profile = NULL;
	bool is_relay = false, is_no_project = false;
	int c, r = 0;

	if (servers == NULL)
		return MCPCTL_EXIT_ERROR;
	while (r == 0 &&
	    (c = mcpctl_getopt(argc, argv, ":h", ctl_bridge_options)) != -1) {
		switch (c) {
		case 'S':
			if ((r = mcpctl_check_name(cmd, "server", optarg)) == 0)
				json_array_append_new(servers,
				    json_string(optarg));
			break;
		case 'P':
			if ((r = mcpctl_check_name(cmd, "profile", optarg)) ==
			    0)
				profile = optarg;
			break;
		case 'r':
			is_relay = true;
			break;
		case 'N':
			is_no_project = true;
			break;
		case 'T':
			r = ctl_bridge_parse_reconnect(cmd, optarg,
			    &opts.reconnect_ms);
			break;
		case 'M':
			r = mcpctl_parse_positive(cmd, "--max-message", optarg,
			    "bytes", &max);
			break;
		case 'h':
			json_decref(servers);
			return mcpctl_help(cmd);
		default:
			r = mcpctl_bad_option(cmd, c, argv);
		}
	}
	if (r != 0 || (r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0) {
		json_decref(servers);
		return r;
	}
	opts.max_line = (size_t)max;
	opts.servers = servers;
	/* stdout carries MCP only: errors go to stderr, even with --json. */
	m->is_json = false;
	/*
	 * The view, most specific first: --profile or --server, then a
	 * project file found from here, sent the same way; with neither,
	 * mcpd applies the agent's default profile itself.
	 */
	session.view.servers = servers;
	session.view.profile = profile;
	session.is_project = profile == NULL && json_array_size(servers) == 0 &&
	    !is_no_project;
	r = ctl_bridge_rehello(m, &session);
	/*
	 * Handed pipes are mcpd's to read: what it had read of them goes
	 * with it, so only a relay keeps the session across its restarts.
	 * A terminal (someone typing) or a file is relayed, never handed.
	 */
	if (r == 0 && opts.reconnect_ms == 0 && !is_relay &&
	    ctl_bridge_is_stream(STDIN_FILENO) &&
	    ctl_bridge_is_stream(STDOUT_FILENO) &&
	    evbuffer_get_length(conn_input(m->conn)) == 0 &&
	    (r = ctl_bridge_attach(m)) >= 0) {
		json_decref(servers);
		return r;
	}
	if (r == 0)
		r = ctl_bridge_relay_stdio(m, &opts);
	json_decref(servers);
	return r;
}

const struct mcpctl_cmd ctl_bridge_cmd = {
	.name = "bridge",
	.synopsis =
	    "[--agent AGENT] [--server SERVER]... [--profile PROFILE] [--no-project] [--reconnect-timeout SECONDS] [--max-message BYTES] [--relay]",
	.summary =
	    "relay MCP between standard input and output and mcpd, keeping the client's session across mcpd's restarts, for MCP clients that start a stdio server (see client-config)",
	.help =
	    "  --agent AGENT      the agent whose servers the client sees (global option)\n"
	    "  --server SERVER    only this server (repeatable); default: all of the agent's\n"
	    "  --profile PROFILE  the view of this profile of the agent (mcpctl profile);\n"
	    "                     default: the project file's (.mcpd.json, found from\n"
	    "                     here up to $HOME), else the agent's default profile,\n"
	    "                     else everything\n"
	    "  --no-project       look for no project file\n"
	    "  --reconnect-timeout SECONDS\n"
	    "                     when mcpd goes away, keep the client's session and\n"
	    "                     reconnect to a new mcpd (started as on first use when\n"
	    "                     it crashed) for at most this long (default 60); the\n"
	    "                     session's view, handshake, subscriptions and log level\n"
	    "                     are made again, calls mcpd had get outcome-unknown;\n"
	    "                     0: end with mcpd, and hand mcpd the pipes (see --relay)\n"
	    "  --max-message BYTES\n"
	    "                     the longest message of the client's (default 16 MiB,\n"
	    "                     mcpd's own limit); a longer one ends the session\n"
	    "  --relay            copy every message through this process; by default\n"
	    "                     it does whenever --reconnect-timeout is not 0; with 0,\n"
	    "                     when standard input and output are pipes or sockets,\n"
	    "                     mcpd is handed them and serves the client directly\n"
	    "                     (mcpctl waits, and exits when the session ends)\n"
	    "  -h, --help         this text\n",
	.exec = ctl_bridge_exec,
	.options = ctl_bridge_options,
};
