/* SPDX-License-Identifier: ISC */
/* mcpctl profile: the named views of an agent's tools (create, set, show, list, rm, default). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"
#include "toolglob.h"

enum {
	CTL_PROFILE_SERVER = 256,
	CTL_PROFILE_TOOL,
	CTL_PROFILE_EXCLUDE,
	CTL_PROFILE_PIN,
	CTL_PROFILE_BUDGET,
	CTL_PROFILE_CLEAR_SERVERS,
	CTL_PROFILE_CLEAR_TOOLS,
	CTL_PROFILE_CLEAR_EXCLUDE,
	CTL_PROFILE_CLEAR_PINS,
	CTL_PROFILE_NO_BUDGET,
	CTL_PROFILE_NONE,
};

static const struct option ctl_profile_options[] = {
	{ "server", required_argument, NULL, CTL_PROFILE_SERVER },
	{ "tool", required_argument, NULL, CTL_PROFILE_TOOL },
	{ "exclude-tool", required_argument, NULL, CTL_PROFILE_EXCLUDE },
	{ "pin", required_argument, NULL, CTL_PROFILE_PIN },
	{ "budget", required_argument, NULL, CTL_PROFILE_BUDGET },
	{ "clear-servers", no_argument, NULL, CTL_PROFILE_CLEAR_SERVERS },
	{ "clear-tools", no_argument, NULL, CTL_PROFILE_CLEAR_TOOLS },
	{ "clear-exclude-tools", no_argument, NULL, CTL_PROFILE_CLEAR_EXCLUDE },
	{ "clear-pins", no_argument, NULL, CTL_PROFILE_CLEAR_PINS },
	{ "no-budget", no_argument, NULL, CTL_PROFILE_NO_BUDGET },
	{ "none", no_argument, NULL, CTL_PROFILE_NONE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The row key each list option and clear option names. */
static const char *
ctl_profile_key(int c)
{
	switch (c) {
	case CTL_PROFILE_SERVER:
	case CTL_PROFILE_CLEAR_SERVERS:
		return "servers";
	case CTL_PROFILE_TOOL:
	case CTL_PROFILE_CLEAR_TOOLS:
		return "tools";
	case CTL_PROFILE_EXCLUDE:
	case CTL_PROFILE_CLEAR_EXCLUDE:
		return "exclude_tools";
	case CTL_PROFILE_PIN:
	case CTL_PROFILE_CLEAR_PINS:
		return "pins";
	default:
		return "budget";
	}
}

/* A glob that would match nothing as meant is a usage error saying where. */
static int
ctl_profile_check_glob(const struct mcpctl_cmd *cmd, int c, const char *glob)
{
	const char *why;
	size_t col;

	if (toolglob_check(glob, &col, &why) == 0)
		return 0;
	return mcpctl_usage(cmd, "%s: bad glob '%s' at column %zu: %s",
	    c == CTL_PROFILE_TOOL    ? "--tool" :
		c == CTL_PROFILE_PIN ? "--pin" :
				       "--exclude-tool",
	    glob, col, why);
}

/* Adds one option's value (c) to params; 0 or a usage status. */
static int
ctl_profile_option(const struct mcpctl_cmd *cmd, json_t *params, int c,
    const char *arg)
{
	const char *key = ctl_profile_key(c);
	json_t *list;
	json_int_t n;
	int r;

	switch (c) {
	case CTL_PROFILE_SERVER:
		if ((r = mcpctl_check_name(cmd, "server", arg)) != 0)
			return r;
		break;
	case CTL_PROFILE_TOOL:
	case CTL_PROFILE_EXCLUDE:
	case CTL_PROFILE_PIN:
		if ((r = ctl_profile_check_glob(cmd, c, arg)) != 0)
			return r;
		break;
	case CTL_PROFILE_BUDGET:
		if (strcmp(arg, "0") == 0)
			n = 0;
		else if ((r = mcpctl_parse_positive(cmd, "--budget", arg,
			      "tokens", &n)) != 0)
			return r;
		json_object_set_new(params, "budget", json_integer(n));
		return 0;
	default: /* a --clear-* or --no-budget */
		if ((list = json_object_get(params, "clear")) == NULL)
			json_object_set_new(params, "clear",
			    list = json_array());
		json_array_append_new(list, json_string(key));
		return 0;
	}
	if ((list = json_object_get(params, key)) == NULL)
		json_object_set_new(params, key, list = json_array());
	json_array_append_new(list, json_string(arg));
	return 0;
}

/* Prints "  label: a, b" or the text for an empty list. */
static void
ctl_profile_print_list(const char *label, const json_t *list, const char *none)
{
	const json_t *v;
	size_t i;

	printf("  %-15s", label);
	if (json_array_size(list) == 0)
		printf("%s", none);
	json_array_foreach(list, i, v)
		printf("%s%s", i > 0 ? " " : "", json_string_value(v));
	printf("\n");
}

/* "costs: N bytes, about T tokens of its budget B" (doc/views.md). */
static void
ctl_profile_print_cost(const json_t *cost)
{
	long long bytes = json_integer_value(json_object_get(cost, "bytes"));
	long long tokens = json_integer_value(json_object_get(cost, "tokens"));
	long long budget = json_integer_value(json_object_get(cost, "budget"));

	printf("  %-15s%lld bytes, about %lld tokens", "costs:", bytes, tokens);
	if (budget <= 0)
		printf(" (no budget)\n");
	else if (json_is_true(json_object_get(cost, "over_budget")))
		printf(
		    ", over its budget of %lld: it lists its pins and mcpd's two tools\n",
		    budget);
	else
		printf(", within its budget of %lld\n", budget);
}

static void
ctl_profile_print(const json_t *p)
{
	const json_t *selects = json_object_get(p, "selects"), *v;
	const json_t *budget = json_object_get(p, "budget");
	const json_t *cost = json_object_get(p, "cost");
	size_t i;

	printf("profile %s (agent %s)%s\n",
	    json_string_value(json_object_get(p, "name")),
	    json_string_value(json_object_get(p, "agent")),
	    json_is_true(json_object_get(p, "is_default")) ?
		", the agent's default" :
		"");
	ctl_profile_print_list("servers:", json_object_get(p, "servers"),
	    "(all of the agent's)");
	ctl_profile_print_list("tools:", json_object_get(p, "tools"),
	    "(all of those servers')");
	ctl_profile_print_list("exclude-tools:",
	    json_object_get(p, "exclude_tools"), "(none)");
	ctl_profile_print_list("pins:", json_object_get(p, "pins"), "(none)");
	if (budget != NULL)
		printf("  %-15s%lld tokens\n",
		    "budget:", (long long)json_integer_value(budget));
	else
		printf("  %-15s(mcpd's default)\n", "budget:");
	if (json_is_object(cost))
		ctl_profile_print_cost(cost);
	printf("  selects %zu tool%s now%s\n", json_array_size(selects),
	    json_array_size(selects) == 1 ? "" : "s",
	    json_array_size(selects) > 0 ? ":" : "");
	json_array_foreach(selects, i, v)
		printf("    %s\n", json_string_value(v));
}

static void
ctl_profile_print_all(const json_t *result)
{
	const json_t *list = json_object_get(result, "profiles"), *p;
	size_t i;

	if (json_array_size(list) == 0)
		printf(
		    "agent %s has no profiles: mcpctl profile create NAME --tool GLOB makes one\n",
		    json_string_value(json_object_get(result, "agent")));
	json_array_foreach(list, i, p) {
		if (i > 0)
			printf("\n");
		ctl_profile_print(p);
	}
}

static void
ctl_profile_print_rm(const json_t *result)
{
	printf("removed profile %s of agent %s\n",
	    json_string_value(json_object_get(result, "name")),
	    json_string_value(json_object_get(result, "agent")));
}

static void
ctl_profile_print_default(const json_t *result)
{
	const char *name = json_string_value(json_object_get(result,
	    "default"));

	if (name != NULL)
		printf("agent %s: default profile %s\n",
		    json_string_value(json_object_get(result, "agent")), name);
	else
		printf(
		    "agent %s: no default profile (its sessions see all its tools)\n",
		    json_string_value(json_object_get(result, "agent")));
}

/* default AGENT (NAME | --none). */
static int
ctl_profile_default(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv, bool is_none, json_t *params)
{
	int r;

	if ((r = mcpctl_positional(cmd, argc, argv, is_none ? 1 : 2,
		 is_none ? 1 : 2,
		 is_none ? "AGENT" : "AGENT and PROFILE (or --none)")) != 0 ||
	    (r = mcpctl_check_name(cmd, "agent", argv[optind])) != 0) {
		json_decref(params);
		return r;
	}
	json_object_set_new(params, "agent", json_string(argv[optind]));
	if (!is_none)
		json_object_set_new(params, "name",
		    json_string(argv[optind + 1]));
	return mcpctl_run(m, "mcpd/profile", params, ctl_profile_print_default);
}

static int
ctl_profile_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params = json_object();
	bool is_none = false, is_edit;
	const char *sub;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":h", ctl_profile_options)) !=
	    -1) {
		if (c == 'h') {
			json_decref(params);
			return mcpctl_help(cmd);
		}
		if (c == CTL_PROFILE_NONE)
			is_none = true;
		else if (c < CTL_PROFILE_SERVER || c > CTL_PROFILE_NONE) {
			json_decref(params);
			return mcpctl_bad_option(cmd, c, argv);
		} else if ((r = ctl_profile_option(cmd, params, c, optarg)) !=
		    0) {
			json_decref(params);
			return r;
		}
	}
	if (optind >= argc) {
		json_decref(params);
		return mcpctl_usage(cmd,
		    "missing create, set, show, list, rm or default");
	}
	sub = argv[optind++];
	is_edit = strcmp(sub, "create") == 0 || strcmp(sub, "set") == 0;
	if (!is_edit && json_object_size(params) > 0) {
		json_decref(params);
		return mcpctl_usage(cmd,
		    "--server, --tool, --exclude-tool, --pin, --budget and --clear-* go with create and set");
	}
	if (is_none && strcmp(sub, "default") != 0) {
		json_decref(params);
		return mcpctl_usage(cmd, "--none goes with default");
	}
	if (strcmp(sub, "create") == 0 &&
	    json_object_get(params, "clear") != NULL) {
		json_decref(params);
		return mcpctl_usage(cmd,
		    "--clear-* and --no-budget go with set: a new profile has nothing to clear");
	}
	if (!is_edit && strcmp(sub, "show") != 0 && strcmp(sub, "list") != 0 &&
	    strcmp(sub, "rm") != 0 && strcmp(sub, "default") != 0) {
		json_decref(params);
		return mcpctl_usage(cmd,
		    "unknown profile command '%s': create, set, show, list, rm or default",
		    sub);
	}
	json_object_set_new(params, "op", json_string(sub));
	if (strcmp(sub, "default") == 0)
		return ctl_profile_default(m, cmd, argc, argv, is_none, params);
	if (strcmp(sub, "list") == 0) {
		if ((r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0) {
			json_decref(params);
			return r;
		}
		return mcpctl_run(m, "mcpd/profile", params,
		    ctl_profile_print_all);
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 1, 1, "PROFILE")) != 0 ||
	    (r = mcpctl_check_name(cmd, "profile", argv[optind])) != 0) {
		json_decref(params);
		return r;
	}
	json_object_set_new(params, "name", json_string(argv[optind]));
	return mcpctl_run(m, "mcpd/profile", params,
	    strcmp(sub, "rm") == 0 ? ctl_profile_print_rm : ctl_profile_print);
}

const struct mcpctl_cmd ctl_profile_cmd = {
	.name = "profile",
	.synopsis =
	    "create|set PROFILE [--server S]... [--tool GLOB]... [--exclude-tool GLOB]... [--pin GLOB]... [--budget TOKENS] | show PROFILE | list | rm PROFILE | default AGENT (PROFILE | --none)",
	.summary =
	    "name views of the agent's tools: which servers and tools a session sees",
	.help =
	    "  --server S           only this server's tools, prompts and resources (repeatable)\n"
	    "  --tool GLOB          only tools matching one of these globs (repeatable)\n"
	    "  --exclude-tool GLOB  never tools matching these (repeatable)\n"
	    "  --pin GLOB           tools always listed when the view is searched (repeatable)\n"
	    "  --budget TOKENS      the view's tools/list budget in tokens (0: never search)\n"
	    "  --clear-servers, --clear-tools, --clear-exclude-tools, --clear-pins,\n"
	    "  --no-budget          set: empty that list (or drop the budget)\n"
	    "  --none               default: the agent has no default profile\n"
	    "  -h, --help           this text\n"
	    "\n"
	    "A profile belongs to the agent (--agent, default 'default'). A\n"
	    "glob (*, ?, [...]) matches SERVER__TOOL, or TOOL alone in a\n"
	    "one-server view. A tool is in the view when its server is listed\n"
	    "(no --server: every server), a --tool glob matches it (none: every\n"
	    "tool) and no --exclude-tool glob does. set replaces each list it is\n"
	    "given and keeps the others. A session uses, most specific first:\n"
	    "mcpctl bridge --profile P, the profile of its HTTP token (mcpctl\n"
	    "token --profile P), the agent's default, else all the agent's\n"
	    "tools. rm refuses a profile that is the default or that a token is\n"
	    "bound to. mcpd keeps profiles in profiles.json in its state\n"
	    "directory.\n",
	.exec = ctl_profile_exec,
	.options = ctl_profile_options,
};
