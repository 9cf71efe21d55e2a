/* SPDX-License-Identifier: ISC */
/* mcpctl gateway start|stop: the Docker MCP Gateway as one of mcpd's servers. */
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"

static const struct option ctl_gateway_options[] = {
	{ "name", required_argument, NULL, 'n' },
	{ "timeout", required_argument, NULL, 't' },
	{ "no-persist", no_argument, NULL, 'P' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void
ctl_gateway_started(const json_t *result)
{
	ctl_load_answer(result);
	if (json_is_true(json_object_get(result, "persistent")))
		printf(
		    "saved: mcpd starts it again with these servers after a restart\n");
}

static void
ctl_gateway_stopped(const json_t *result)
{
	printf("stopped the Docker MCP Gateway %s (id %s): %s%s\n",
	    json_string_value(json_object_get(result, "name")),
	    json_string_value(json_object_get(result, "id")),
	    json_is_true(json_object_get(result, "stopped_live")) ?
		"its process, port and token are gone" :
		"it was not running",
	    json_is_true(json_object_get(result, "removed_saved")) ?
		"; its saved row was removed" :
		"");
}

static int
ctl_gateway_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params = json_object(), *servers;
	const char *verb;
	json_int_t ms;
	int c, r = 0;
	bool is_start;

	while (r == 0 &&
	    (c = mcpctl_getopt(argc, argv, "+:hn:t:", ctl_gateway_options)) !=
		-1) {
		switch (c) {
		case 'h':
			json_decref(params);
			return mcpctl_help(cmd);
		case 'n':
			r = mcpctl_check_name(cmd, "name", optarg);
			json_object_set_new(params, "name",
			    json_string(optarg));
			break;
		case 't':
			if ((r = mcpctl_parse_positive(cmd, "--timeout", optarg,
				 "milliseconds", &ms)) == 0)
				json_object_set_new(params, "timeout_ms",
				    json_integer(ms));
			break;
		case 'P':
			json_object_set_new(params, "persist", json_false());
			break;
		default:
			r = mcpctl_bad_option(cmd, c, argv);
		}
	}
	if (r == 0 && optind >= argc)
		r = mcpctl_usage(cmd, "missing start or stop");
	if (r != 0) {
		json_decref(params);
		return r;
	}
	verb = argv[optind++];
	is_start = strcmp(verb, "start") == 0;
	if (!is_start && strcmp(verb, "stop") != 0) {
		json_decref(params);
		return mcpctl_usage(cmd,
		    "unknown subcommand '%s' (start or stop)", verb);
	}
	/* Options may come after the subcommand too. */
	while ((c = mcpctl_getopt(argc, argv,
		    "+:hn:t:", ctl_gateway_options)) != -1) {
		if (c == 'h') {
			json_decref(params);
			return mcpctl_help(cmd);
		}
		if (c == 'n' &&
		    (r = mcpctl_check_name(cmd, "name", optarg)) == 0)
			json_object_set_new(params, "name",
			    json_string(optarg));
		else if (c == 't' &&
		    (r = mcpctl_parse_positive(cmd, "--timeout", optarg,
			 "milliseconds", &ms)) == 0)
			json_object_set_new(params, "timeout_ms",
			    json_integer(ms));
		else if (c == 'P')
			json_object_set_new(params, "persist", json_false());
		else if (c != 'n' && c != 't')
			r = mcpctl_bad_option(cmd, c, argv);
		if (r != 0) {
			json_decref(params);
			return r;
		}
	}
	if (!is_start) {
		if (json_object_size(params) !=
		    (json_object_get(params, "name") != NULL ? 1u : 0u)) {
			json_decref(params);
			return mcpctl_usage(cmd,
			    "gateway stop takes only --name");
		}
		if (optind < argc) {
			json_decref(params);
			return mcpctl_usage(cmd, "unexpected argument '%s'",
			    argv[optind]);
		}
		return mcpctl_run(m, "mcpd/gateway-stop", params,
		    ctl_gateway_stopped);
	}
	if (optind >= argc) {
		json_decref(params);
		return mcpctl_usage(cmd,
		    "missing SERVER: the Docker catalog names of the servers the gateway runs");
	}
	servers = json_array();
	for (; optind < argc; optind++)
		json_array_append_new(servers, json_string(argv[optind]));
	json_object_set_new(params, "servers", servers);
	ctl_load_progress(m, params, NULL);
	return mcpctl_run(m, "mcpd/gateway-start", params, ctl_gateway_started);
}

const struct mcpctl_cmd ctl_gateway_cmd = {
	.name = "gateway",
	.synopsis =
	    "start [--name NAME] [--timeout MS] [--no-persist] SERVER...\n"
	    "       mcpctl gateway stop [--name NAME]",
	.summary =
	    "run Docker's MCP Gateway (docker mcp gateway run) with SERVERs of its catalog, as one of mcpd's servers",
	.help =
	    "  --name NAME        the server's name (default docker-gateway)\n"
	    "  --timeout MS       deadline of its start and handshake\n"
	    "  --no-persist       do not bring it back after mcpd restarts\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "start runs `docker mcp gateway run --servers SERVER,... --transport\n"
	    "streaming --port PORT` (the docker CLI plugin docker-mcp) as a\n"
	    "process mcpd supervises: mcpd picks the port on 127.0.0.1 and a\n"
	    "new bearer token at each start (MCP_GATEWAY_AUTH_TOKEN in the\n"
	    "gateway's environment, never its command line), and reaches it\n"
	    "over Streamable HTTP at http://127.0.0.1:PORT/mcp with that token,\n"
	    "through no proxy. Its servers are saved, read back from disk and\n"
	    "compared before start says so; a mismatch is a storage error that\n"
	    "says what is saved. Starting it again with other servers restarts\n"
	    "it with them. stop ends the process and forgets the gateway.\n"
	    "Without the plugin, start fails and says so.\n",
	.exec = ctl_gateway_exec,
	.options = ctl_gateway_options,
};
