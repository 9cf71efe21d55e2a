/* SPDX-License-Identifier: ISC */
/* mcpd/auth-login, -status and -logout: a remote server's OAuth login. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"
#include "names.h"

#define CMD_AUTH_LOGIN_MS (10 * 60 * 1000) /* a user at a browser */

/* The caller's remote server called target, or NULL after failing req. */
static struct server *
cmd_auth_server(struct request *req, const char *target)
{
	struct server *s = cmd_server(req, target);

	if (s != NULL && server_auth(s) == NULL) {
		control_fail(req, ERRORS_CONFLICT,
		    json_pack("{s:s}", "server", server_name(s)),
		    "%s is not a remote server: only URLs log in with OAuth",
		    server_name(s));
		return NULL;
	}
	return s;
}

/* ---- mcpd/auth-status ---- */

static void
cmd_auth_status_exec(struct request *req, json_t *params)
{
	const char *target = cmd_string(params, "server");
	json_t *rows, *row, *list;
	struct server *s;
	size_t i;

	if (target != NULL) {
		if ((s = cmd_auth_server(req, target)) != NULL)
			control_reply(req, oauth_status(server_auth(s)));
		return;
	}
	list = json_array();
	rows = server_list_rows(control_agent(req));
	json_array_foreach(rows, i, row) {
		s = server_find(control_agent(req),
		    json_string_value(json_object_get(row, "id")));
		if (s != NULL && server_auth(s) != NULL)
			json_array_append_new(list,
			    oauth_status(server_auth(s)));
	}
	json_decref(rows);
	control_reply(req, json_pack("{s:o}", "servers", list));
}

static const struct cmd_param cmd_auth_status_params[] = {
	{ "server", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_auth_status_entry = {
	"mcpd/auth-status",
	cmd_auth_status_exec,
	cmd_auth_status_params,
	0,
};

/* ---- mcpd/auth-login ---- */

struct cmd_auth_login {
	struct request *req;
	struct server *server; /* held */
	struct oauth_wait *wait;
	struct event *timer;
	int load_timeout;
	bool has_url;
};

/* Its request is answered (or handed on) already: it is not touched. */
static void
cmd_auth_login_free(struct cmd_auth_login *l)
{
	oauth_wait_cancel(l->wait);
	event_free(l->timer);
	server_unref(l->server);
	free(l);
}

static void
cmd_auth_login_event(void *arg, enum oauth_event event, const char *why)
{
	struct cmd_auth_login *l = arg;
	struct request *req = l->req;
	struct server *s = l->server;
	char *text;

	if (event == OAUTH_EVENT_URL) {
		l->has_url = true;
		xasprintf(&text, "open %s in a browser to authorize mcpd", why);
		control_notify(req, "mcpd/progress",
		    json_pack("{s:s, s:s, s:s, s:s}", "server", server_name(s),
			"stage", "authorize", "message", text, "url", why));
		free(text);
		return;
	}
	l->wait = NULL; /* a final event ends the wait */
	control_on_gone(req, NULL, NULL);
	if (event == OAUTH_EVENT_FAILED) {
		control_fail(req, ERRORS_UNAVAILABLE,
		    oauth_status(server_auth(s)), "%s",
		    why != NULL ? why : "the login failed");
	} else if (server_is_failed(s)) {
		/* It failed for want of this login: it starts again now. */
		server_reload(s, control_server_reply(req, NULL),
		    l->load_timeout);
	} else
		control_reply(req, oauth_status(server_auth(s)));
	cmd_auth_login_free(l);
}

static void
cmd_auth_login_expired(evutil_socket_t fd, short events, void *arg)
{
	struct cmd_auth_login *l = arg;

	(void)fd, (void)events;
	control_on_gone(l->req, NULL, NULL);
	control_fail(l->req, ERRORS_TIMEOUT,
	    oauth_status(server_auth(l->server)),
	    "the login of %s was not completed in time; run mcpctl auth login %s again",
	    server_name(l->server), server_name(l->server));
	cmd_auth_login_free(l);
}

/* The client went: the wait goes, the answer goes nowhere (later). */
static void
cmd_auth_login_gone(void *arg)
{
	struct cmd_auth_login *l = arg;

	oauth_wait_cancel(l->wait);
	l->wait = NULL;
	evtimer_del(l->timer);
	event_active(l->timer, EV_TIMEOUT, 0);
}

static void
cmd_auth_login_exec(struct request *req, json_t *params)
{
	struct cmd_auth_login *l;
	struct server *s;
	struct timeval tv;
	int timeout;

	if (!cmd_timeout(req, params, CMD_AUTH_LOGIN_MS, &timeout) ||
	    (s = cmd_auth_server(req, cmd_string(params, "server"))) == NULL)
		return;
	l = xcalloc(1, sizeof *l);
	l->req = req;
	l->server = s;
	l->load_timeout = mcpd_opts.load_timeout_ms;
	server_ref(s);
	if ((l->timer = evtimer_new(mcpd_base, cmd_auth_login_expired, l)) ==
	    NULL)
		fatalx("out of memory");
	tv.tv_sec = timeout / 1000;
	tv.tv_usec = (timeout % 1000) * 1000;
	evtimer_add(l->timer, &tv);
	l->wait = oauth_login(server_auth(s), cmd_auth_login_event, l);
	control_on_gone(req, cmd_auth_login_gone, l);
}

static const struct cmd_param cmd_auth_login_params[] = {
	{ "server", JSON_STRING, true },
	{ "timeout_ms", JSON_INTEGER, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_auth_login_entry = {
	"mcpd/auth-login",
	cmd_auth_login_exec,
	cmd_auth_login_params,
	0,
};

/* ---- mcpd/auth-logout ---- */

static void
cmd_auth_logout_exec(struct request *req, json_t *params)
{
	const char *target = cmd_string(params, "server");
	bool removed = false, failed = false;
	struct server *s = cmd_server_or_none(req, target, &failed);
	char *cause = NULL, *id = NULL;
	int r;

	if (failed)
		return;
	if (s != NULL && server_auth(s) == NULL) {
		control_fail(req, ERRORS_CONFLICT,
		    json_pack("{s:s}", "server", server_name(s)),
		    "%s is not a remote server: only URLs log in with OAuth",
		    server_name(s));
		return;
	}
	if (s != NULL)
		r = oauth_logout(server_auth(s), &removed, &cause);
	else if (!names_valid(target)) {
		control_fail(req, ERRORS_NOT_FOUND,
		    json_pack("{s:s}", "what", "server"),
		    "no server %s; see mcpctl list", target);
		return;
	} else {
		/* Not listed: what a server of that name saved, by its id. */
		id = server_id_for(control_agent(req), target);
		r = oauth_forget_id(id, &removed, &cause);
	}
	if (r < 0)
		control_fail(req, ERRORS_STORAGE, NULL,
		    "cannot remove the authorization of %s: %s", target,
		    cause != NULL ? cause : "unknown error");
	else
		control_reply(req,
		    json_pack("{s:s, s:b}", "server",
			s != NULL ? server_name(s) : target, "removed",
			removed));
	free(cause);
	free(id);
}

static const struct cmd_param cmd_auth_logout_params[] = {
	{ "server", JSON_STRING, true },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_auth_logout_entry = {
	"mcpd/auth-logout",
	cmd_auth_logout_exec,
	cmd_auth_logout_params,
	0,
};
