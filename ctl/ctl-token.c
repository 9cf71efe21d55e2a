/* SPDX-License-Identifier: ISC */
/* mcpctl token: the agent's bearer token for mcpd's HTTP front. */
#include <stdio.h>
#include <string.h>

#include "mcpctl.h"

static const struct option ctl_token_options[] = {
	{ "revoke", no_argument, NULL, 'r' },
	{ "profile", required_argument, NULL, 'P' },
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
	const char *profile = json_string_value(json_object_get(result,
	    "profile"));

	if (json_is_boolean(json_object_get(result, "revoked"))) {
		printf(json_is_true(json_object_get(result, "revoked")) ?
			"revoked the token of agent %s%s%s\n" :
			"agent %s had no token%s%s; nothing revoked\n",
		    agent != NULL ? agent : "-",
		    profile != NULL ? " for profile " : "",
		    profile != NULL ? profile : "");
		return;
	}
	printf("%s\n", token != NULL ? token : "-");
	if (listen != NULL && profile != NULL)
		fprintf(stderr,
		    "send it as 'Authorization: Bearer TOKEN' to http://%s/mcp (agent %s, profile %s)\n",
		    listen, agent != NULL ? agent : "-", profile);
	else if (listen != NULL)
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
	const char *profile = NULL;
	bool revoke = false;
	json_t *params;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":rh", ctl_token_options)) !=
	    -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c == 'P') {
			if ((r = mcpctl_check_name(cmd, "profile", optarg)) !=
			    0)
				return r;
			profile = optarg;
		} else if (c != 'r')
			return mcpctl_bad_option(cmd, c, argv);
		else
			revoke = true;
	}
	/* "token create" reads as what it does; plain "token" does the same. */
	if (optind < argc && strcmp(argv[optind], "create") == 0 && !revoke)
		optind++;
	if ((r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0)
		return r;
	params = json_object();
	if (revoke)
		json_object_set_new(params, "revoke", json_true());
	if (profile != NULL)
		json_object_set_new(params, "profile", json_string(profile));
	return mcpctl_run(m, "mcpd/token", params, ctl_token_print);
}

const struct mcpctl_cmd ctl_token_cmd = {
	.name = "token",
	.synopsis = "[create] [--profile PROFILE] [--revoke]",
	.summary =
	    "print (making it the first time) the agent's bearer token for mcpd's HTTP front",
	.help =
	    "  -r, --revoke       revoke it: requests with it are refused from then on\n"
	    "  --profile PROFILE  the token bound to this profile of the agent: its\n"
	    "                     sessions see that profile's view (mcpctl profile)\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "The token is the agent's (--agent, default 'default'): an HTTP\n"
	    "client that sends it as 'Authorization: Bearer TOKEN' to\n"
	    "mcpd --listen-http sees that agent's servers. mcpd keeps it\n"
	    "in http-tokens.json (mode 0600) in its state directory, and the\n"
	    "tokens bound to profiles in http-profile-tokens.json. An agent has\n"
	    "one token of its own and one for each profile asked for.\n",
	.exec = ctl_token_exec,
};
