/* SPDX-License-Identifier: ISC */
/* mcpd/load of a URL: the policy is checked before anything is created. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"

struct cmd_load_remote {
	struct request *req;
	char *agent; /* its client's, which may go meanwhile */
	struct loadspec ls;
	json_t *params;
	int timeout;
};

static void
cmd_load_remote_checked(void *arg, int err, const char *why,
    const struct http_peer *peer)
{
	struct cmd_load_remote *lr = arg;

	(void)peer;
	if (err == -EACCES)
		control_fail(lr->req, ERRORS_DENIED, NULL, "%s", why);
	else if (err == -EINVAL)
		cmd_load_bad(lr->req, "target", why);
	else if (err != 0)
		control_fail(lr->req, ERRORS_UNAVAILABLE, NULL, "%s", why);
	else
		cmd_load_start(lr->req, lr->agent, lr->params, &lr->ls,
		    lr->timeout);
	loadspec_clear(&lr->ls);
	free(lr->agent);
	cmd_load_wipe(lr->params);
	json_decref(lr->params);
	free(lr);
}

void
cmd_load_remote(struct request *req, const json_t *params, struct loadspec *ls,
    int timeout)
{
	struct cmd_load_remote *lr = xcalloc(1, sizeof *lr);

	lr->req = req;
	lr->agent = xstrdup(control_agent(req));
	lr->timeout = timeout;
	lr->params = json_deep_copy(params);
	lr->ls = *ls;
	memset(ls, 0, sizeof *ls);
	/* The text as given: credentials and fragments are refused. */
	netpolicy_check(json_string_value(json_object_get(params, "target")),
	    lr->ls.spec.remote.allow_local, cmd_load_remote_checked, lr);
}
