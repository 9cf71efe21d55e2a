/* SPDX-License-Identifier: ISC */
/*
 * mcpd/attach: a control client hands mcpd two descriptors (SCM_RIGHTS
 * with the request: what it reads, then what it writes) and mcpd serves
 * them as a client of their own, with the agent and scope of the
 * connection that sent them. This is how `mcpctl bridge` gets out of the
 * way: its MCP client's pipes reach mcpd itself, and each message costs
 * no relay through a second process. The request is answered when the
 * attached client ends: a result when its peer ended it (closed its
 * input, or went), an error saying why when mcpd did. When the
 * connection that sent it goes first, the attached client goes with it.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include "control-int.h"

/* Whether fd is a pipe or a socket open for access (O_RDONLY/O_WRONLY). */
static bool
control_attach_usable(int fd, int access)
{
	struct stat st;
	int flags;

	if (fstat(fd, &st) < 0 ||
	    !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) ||
	    (flags = fcntl(fd, F_GETFL)) < 0)
		return false;
	if ((flags & O_ACCMODE) != O_RDWR && (flags & O_ACCMODE) != access)
		return false;
	return fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

/* The connection that sent the descriptors went: the attached one goes. */
static void
control_attach_gone(void *arg)
{
	control_client_free(arg);
}

/* Fails req, closing the n descriptors it brought. */
static void
control_attach_refuse(struct request *req, int *fds, int n, int code,
    const char *why)
{
	while (n > 0)
		close(fds[--n]);
	control_fail_code(req, code, NULL, "%s", why);
}

static void
control_attach_exec(struct request *req, json_t *params)
{
	struct client *from = req->client, *c;
	int fds[FDREAD_PASSED_MAX], n;

	(void)params;
	n = fdread_passed(&from->rd, fds);
	if (n != 2)
		control_attach_refuse(req, fds, n, JSONRPC_INVALID_PARAMS,
		    "mcpd/attach takes two descriptors sent with the request (SCM_RIGHTS): the one mcpd reads, then the one it writes");
	else if (!control_attach_usable(fds[0], O_RDONLY) ||
	    !control_attach_usable(fds[1], O_WRONLY))
		control_attach_refuse(req, fds, n, JSONRPC_INVALID_PARAMS,
		    "mcpd/attach takes pipes or sockets, the first open for reading, the second for writing");
	else if (control_client_count() >= mcpd_opts.max_clients)
		control_attach_refuse(req, fds, n, JSONRPC_INVALID_REQUEST,
		    "mcpd has as many clients as its limit; close one or raise --max-clients");
	else {
		c = control_client_new(fds[0], fds[1], from->agent,
		    from->scope);
		control_client_set_profile(c, from->profile);
		control_client_set_view_error(c, from->view_error);
		c->is_roots_project = from->is_roots_project;
		c->attach = req;
		/* mcpd/clients lists the session as its bridge's, once. */
		c->pid = from->pid;
		c->is_bridge = from->is_bridge;
		c->bridge_pid = from->bridge_pid;
		c->bridge_exe = from->bridge_exe != NULL ?
		    xstrdup(from->bridge_exe) :
		    NULL;
		from->has_attached = true;
		/* The bridge that attached is the client it speaks for. */
		c->who = json_incref(from->who);
		control_on_gone(req, control_attach_gone, c);
		control_request_set_lasting(req);
	}
}

void
control_attach_end(struct client *c)
{
	struct request *req = c->attach;

	if (req == NULL)
		return;
	c->attach = NULL;
	req->gone_fn = NULL;
	if (c->end_why != NULL)
		control_fail_code(req, JSONRPC_INTERNAL_ERROR, NULL,
		    "mcpd closed the connection: %s", c->end_why);
	else
		control_reply(req, json_object());
}

static const struct cmd_param control_attach_params[] = {
	{ NULL, 0, false },
};

const struct cmd_entry cmd_attach_entry = {
	"mcpd/attach",
	control_attach_exec,
	control_attach_params,
	0,
};
