/* SPDX-License-Identifier: ISC */
/* mcpctl approvals: the calls an ask rule holds, waiting for mcpctl approve or deny. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcpctl.h"

#define CTL_APPROVALS_EVERY_MS 200 /* how often -f asks again */

static const struct option ctl_approvals_options[] = {
	{ "follow", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One waiting call, one line (the arguments come escaped from mcpd). */
static void
ctl_approvals_print_one(const json_t *a, bool is_json)
{
	long long age = json_integer_value(json_object_get(a, "age_s"));
	long long timeout = json_integer_value(json_object_get(a, "timeout_s"));

	if (is_json) {
		print_json(a);
		return;
	}
	printf(
	    "approval %lld: agent %s calls %s %s (asked by %s; %lld s ago, denied in %lld s unless answered: mcpctl approve %lld, mcpctl deny %lld)\n",
	    (long long)json_integer_value(json_object_get(a, "id")),
	    json_string_value(json_object_get(a, "agent")),
	    json_string_value(json_object_get(a, "name")),
	    json_string_value(json_object_get(a, "arguments")),
	    json_string_value(json_object_get(a, "asked_by")), age,
	    timeout > age ? timeout - age : 0,
	    (long long)json_integer_value(json_object_get(a, "id")),
	    (long long)json_integer_value(json_object_get(a, "id")));
}

static void
ctl_approvals_print(const json_t *result)
{
	const json_t *list = json_object_get(result, "approvals"), *a;
	size_t i;

	if (json_array_size(list) == 0)
		printf("no call waits for approval\n");
	json_array_foreach(list, i, a)
		ctl_approvals_print_one(a, false);
}

/* -f: each new waiting call as it comes, until interrupted. */
static int
ctl_approvals_follow(struct mcpctl *m, json_t *params)
{
	struct timespec pause = { 0, CTL_APPROVALS_EVERY_MS * 1000000L };
	json_int_t seen = 0, id;
	json_t *result, *a;
	size_t i;
	int r;

	for (;;) {
		if ((r = mcpctl_request(m, "mcpd/approvals",
			 json_deep_copy(params), &result)) != 0) {
			json_decref(params);
			return r;
		}
		json_array_foreach(json_object_get(result, "approvals"), i, a) {
			id = json_integer_value(json_object_get(a, "id"));
			if (id <= seen)
				continue;
			ctl_approvals_print_one(a, m->is_json);
			seen = id;
		}
		json_decref(result);
		fflush(stdout);
		nanosleep(&pause, NULL);
	}
}

static int
ctl_approvals_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	bool is_follow = false;
	json_t *params;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":fh", ctl_approvals_options)) !=
	    -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c != 'f')
			return mcpctl_bad_option(cmd, c, argv);
		is_follow = true;
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 0, 1, "")) != 0 ||
	    (optind < argc &&
		(r = mcpctl_check_name(cmd, "agent", argv[optind])) != 0))
		return r;
	params = optind < argc ? json_pack("{s:s}", "agent", argv[optind]) :
				 json_object();
	if (is_follow)
		return ctl_approvals_follow(m, params);
	return mcpctl_run(m, "mcpd/approvals", params, ctl_approvals_print);
}

const struct mcpctl_cmd ctl_approvals_cmd = {
	.name = "approvals",
	.synopsis = "[-f] [AGENT]",
	.summary = "list the calls an ask rule holds until approved or denied",
	.help =
	    "  -f, --follow       then print each new one as it comes (every 200 ms)\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "Each waiting call: its id, agent, tool, arguments (JSON, ASCII,\n"
	    "control characters escaped, cut at 1024 bytes), the ask rule, its\n"
	    "age and when --approval-timeout denies it. Answer with mcpctl\n"
	    "approve ID or mcpctl deny ID from any terminal. --json: {approvals:\n"
	    "[{id, agent, server, tool, name, arguments, rule, asked_by, age_s,\n"
	    "timeout_s}]}, with -f one object a line.\n",
	.exec = ctl_approvals_exec,
	.options = ctl_approvals_options,
};
