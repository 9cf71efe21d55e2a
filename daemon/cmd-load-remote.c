/* SPDX-License-Identifier: ISC */
/* mcpd/load of a URL: the policy is checked before anything is created. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"
#include "names.h"
#include "url.h"

#define CMD_LOAD_MAX_HEADERS 16 /* the transport sends up to 32 fields */

struct cmd_load_remote {
	struct request *req;
	struct server_spec spec;
	json_t *params;
	char *name;
	int timeout;
};

/* A header name is an HTTP token; a value has no CR, LF or NUL. */
static bool
cmd_load_header_ok(const char *name, const json_t *value)
{
	if (name[0] == '\0' || !cmd_load_is_cstring(value) ||
	    strpbrk(json_string_value(value), "\r\n") != NULL)
		return false;
	for (const char *c = name; *c != '\0'; c++)
		if (!isalnum((unsigned char)*c) &&
		    strchr("!#$%&'*+-.^_`|~", *c) == NULL)
			return false;
	return true;
}

/* The host, with dots as dashes: "mcp.example.com" -> "mcp-example-com". */
static char *
cmd_load_remote_name(const struct url *u)
{
	char name[NAMES_MAX + 1];
	size_t n = 0;

	for (const char *c = u->host; *c != '\0' && n < NAMES_MAX; c++)
		if (isalnum((unsigned char)*c) || *c == '-')
			name[n++] = *c;
		else if (n > 0 && name[n - 1] != '-')
			name[n++] = '-';
	name[n] = '\0';
	return names_valid(name) ? strdup(name) : NULL;
}

static bool
cmd_load_remote_spec(struct request *req, json_t *params, const struct url *u,
    struct server_spec *spec)
{
	const char *transport = cmd_string(params, "transport");
	json_t *headers = json_object_get(params, "headers"), *v;
	const char *k;

	static const char *const local_only[] = { "command", "env", "cwd",
		"args", "volumes", "network", NULL };

	for (size_t i = 0; local_only[i] != NULL; i++)
		if (json_object_get(params, local_only[i]) != NULL)
			return cmd_load_bad(req, local_only[i],
			    "a URL takes no command, env, cwd, args, volumes "
			    "or network");
	if (transport != NULL && strcmp(transport, "streamable-http") != 0 &&
	    strcmp(transport, "sse") != 0)
		return cmd_load_bad(req, "transport",
		    "transport must be "
		    "streamable-http or sse");
	if (json_object_size(headers) > CMD_LOAD_MAX_HEADERS)
		return cmd_load_bad(req, "headers", "at most 16 headers");
	json_object_foreach(headers, k, v)
		if (!cmd_load_header_ok(k, v))
			return cmd_load_bad(req, "headers",
			    "headers must map "
			    "HTTP token names to single-line strings");
	spec->remote.url = url_canonical(u);
	spec->remote.allow_local = json_is_true(json_object_get(params,
	    "allow_local"));
	spec->remote.headers = headers != NULL ? json_deep_copy(headers) :
						 json_object();
	/* Inferred: a path with /mcp is streamable HTTP; else try it first. */
	spec->remote.is_sse = transport != NULL &&
	    strcmp(transport, "sse") == 0;
	spec->remote.may_fall_back = transport == NULL &&
	    strstr(u->path, "/mcp") == NULL;
	spec->transport = strdup(transport != NULL ? transport :
						     "streamable-http");
	return true;
}

static void
cmd_load_remote_free(struct cmd_load_remote *lr)
{
	spec_clear(&lr->spec);
	json_decref(lr->params);
	free(lr->name);
	free(lr);
}

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
		cmd_load_start(lr->req, lr->params, lr->name, SERVER_REMOTE,
		    &lr->spec, lr->timeout);
	cmd_load_remote_free(lr);
}

void
cmd_load_remote(struct request *req, json_t *params, int timeout)
{
	struct cmd_load_remote *lr = calloc(1, sizeof *lr);
	char *cause = NULL;
	struct url u;

	if (lr == NULL)
		fatal("calloc");
	lr->req = req;
	lr->timeout = timeout;
	lr->params = json_deep_copy(params);
	if (url_parse(cmd_string(params, "target"), &u, &cause) < 0) {
		cmd_load_bad(req, "target", cause != NULL ? cause : "bad URL");
		free(cause);
		cmd_load_remote_free(lr);
		return;
	}
	lr->name = cmd_load_name(req, params, cmd_load_remote_name(&u),
	    "the URL's host");
	if (lr->name != NULL &&
	    cmd_load_remote_spec(req, params, &u, &lr->spec)) {
		url_free(&u);
		/* The text as given: credentials and fragments are refused. */
		netpolicy_check(cmd_string(params, "target"),
		    lr->spec.remote.allow_local, cmd_load_remote_checked, lr);
		return;
	}
	url_free(&u);
	cmd_load_remote_free(lr);
}
