/* SPDX-License-Identifier: ISC */
/* mcpctl token: the agent's bearer token for mcpd's HTTP front. */
#include <stdio.h>
#include <string.h>

#include "mcpctl.h"

static const struct option ctl_token_options[] = {
	{ "revoke", no_argument, NULL, 'r' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void
ctl_token_print(const json_t *result)
{
	const char *agent = json_string_value(json_object_get(result, "agent"));
	const char *token = json_string_value(json_object_get(result, "token"));
	const char *listen = json_string_value(json_object_get(result,
	    "listen"));

	if (json_is_boolean(json_object_get(result, "revoked"))) {
		printf(json_is_true(json_object_get(result, "revoked")) ?
			"revoked the token of agent %s\n" :
			"agent %s had no token; nothing revoked\n",
		    agent != NULL ? agent : "-");
		return;
	}
	printf("%s\n", token != NULL ? token : "-");
	if (listen != NULL)
		fprintf(stderr,
		    "send it as 'Authorization: Bearer TOKEN' to http://%s/mcp (agent %s)\n",
		    listen, agent != NULL ? agent : "-");
	else
		fprintf(stderr,
		    "mcpd has no HTTP front now: start it with --listen-http 127.0.0.1:PORT\n");
}

static int
ctl_token_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	bool revoke = false;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":rh", ctl_token_options)) !=
	    -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c != 'r')
			return mcpctl_bad_option(cmd, c, argv);
		revoke = true;
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0)
		return r;
	return mcpctl_run(m, "mcpd/token",
	    revoke ? json_pack("{s:b}", "revoke", 1) : json_object(),
	    ctl_token_print);
}

const struct mcpctl_cmd ctl_token_cmd = {
	.name = "token",
	.synopsis = "[--revoke]",
	.summary =
	    "print (making it the first time) the agent's bearer token for mcpd's HTTP front",
	.help =
	    "  -r, --revoke       revoke it: requests with it are refused from then on\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "The token is the agent's (--agent, default 'default'): an HTTP\n"
	    "client that sends it as 'Authorization: Bearer TOKEN' to\n"
	    "mcpd --listen-http sees that agent's servers. mcpd keeps it\n"
	    "in http-tokens.json (mode 0600) in its state directory.\n",
	.exec = ctl_token_exec,
};
