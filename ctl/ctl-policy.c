/* SPDX-License-Identifier: ISC */
/* mcpctl policy: what each agent may call (add, list, rm, default, test). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"
#include "policyrules.h"
#include "toolglob.h"
#include "xalloc.h"

enum {
	CTL_POLICY_SERVER = 256,
	CTL_POLICY_TOOL,
	CTL_POLICY_ANNOTATION,
	CTL_POLICY_PROFILE,
	CTL_POLICY_AT,
};

static const struct option ctl_policy_options[] = {
	{ "server", required_argument, NULL, CTL_POLICY_SERVER },
	{ "tool", required_argument, NULL, CTL_POLICY_TOOL },
	{ "annotation", required_argument, NULL, CTL_POLICY_ANNOTATION },
	{ "profile", required_argument, NULL, CTL_POLICY_PROFILE },
	{ "at", required_argument, NULL, CTL_POLICY_AT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* --annotation NAME=true|false into params.annotations; 0 or 2. */
static int
ctl_policy_annotation(const struct mcpctl_cmd *cmd, json_t *params,
    const char *arg)
{
	const char *eq = strchr(arg, '=');
	json_t *ann, *rule;
	char *name, *cause = NULL;
	int r = 0;

	if (eq == NULL ||
	    (strcmp(eq + 1, "true") != 0 && strcmp(eq + 1, "false") != 0))
		return mcpctl_usage(cmd,
		    "--annotation takes NAME=true or NAME=false, not '%s'",
		    arg);
	name = xstrndup(arg, (size_t)(eq - arg));
	if ((ann = json_object_get(params, "annotations")) == NULL)
		json_object_set_new(params, "annotations", ann = json_object());
	json_object_set_new(ann, name, json_boolean(eq[1] == 't'));
	/* The daemon's check, so that the words are the same. */
	rule = json_pack("{s:s, s:{s:O}}", "effect", "allow", "annotations",
	    name, json_object_get(ann, name));
	if (policyrules_check(rule, &cause) < 0) {
		r = mcpctl_usage(cmd, "--annotation: %s", cause);
		free(cause);
	}
	json_decref(rule);
	free(name);
	return r;
}

/* Adds one option's value (c) to params; 0 or a usage status. */
static int
ctl_policy_option(const struct mcpctl_cmd *cmd, json_t *params, int c,
    const char *arg)
{
	const char *why;
	json_int_t n;
	size_t col;
	int r;

	switch (c) {
	case CTL_POLICY_SERVER:
		if ((r = mcpctl_check_name(cmd, "server", arg)) != 0)
			return r;
		json_object_set_new(params, "server", json_string(arg));
		return 0;
	case CTL_POLICY_TOOL:
		if (toolglob_check(arg, &col, &why) < 0)
			return mcpctl_usage(cmd,
			    "--tool: bad glob '%s' at column %zu: %s", arg, col,
			    why);
		json_object_set_new(params, "tool", json_string(arg));
		return 0;
	case CTL_POLICY_ANNOTATION:
		return ctl_policy_annotation(cmd, params, arg);
	case CTL_POLICY_PROFILE:
		if ((r = mcpctl_check_name(cmd, "profile", arg)) != 0)
			return r;
		json_object_set_new(params, "profile", json_string(arg));
		return 0;
	default:
		if ((r = mcpctl_parse_positive(cmd, "--at", arg, "rules",
			 &n)) != 0)
			return r;
		json_object_set_new(params, "at", json_integer(n));
		return 0;
	}
}

/* Prints one agent's default and rules, numbered. */
static void
ctl_policy_print_agent(const json_t *p)
{
	const json_t *rules = json_object_get(p, "rules"), *rule;
	size_t i;

	printf("agent %s: default %s, %zu rule%s\n",
	    json_string_value(json_object_get(p, "agent")),
	    json_string_value(json_object_get(p, "default")),
	    json_array_size(rules), json_array_size(rules) == 1 ? "" : "s");
	json_array_foreach(rules, i, rule)
		printf("  %3lld  %s\n",
		    (long long)json_integer_value(json_object_get(rule, "n")),
		    json_string_value(json_object_get(rule, "text")));
	json_array_foreach(json_object_get(p, "always"), i, rule)
		printf("  approved always: %s (definition %s)\n",
		    json_string_value(json_object_get(rule, "name")),
		    json_string_value(json_object_get(rule, "definition")));
}

static void
ctl_policy_print_list(const json_t *result)
{
	const json_t *agents = json_object_get(result, "agents"), *p;
	size_t i;

	if (json_array_size(agents) == 0)
		printf(
		    "no agent has rules: every call is allowed (mcpctl policy add AGENT deny ... adds one)\n");
	json_array_foreach(agents, i, p)
		ctl_policy_print_agent(p);
}

static void
ctl_policy_print_change(const json_t *result)
{
	const json_t *added = json_object_get(result, "added");
	const json_t *removed = json_object_get(result, "removed");
	const json_t *rule = added != NULL ? added : removed;

	if (rule != NULL)
		printf("%s rule %lld of agent %s: %s\n",
		    added != NULL ? "added" : "removed",
		    (long long)json_integer_value(json_object_get(rule, "n")),
		    json_string_value(json_object_get(result, "agent")),
		    json_string_value(json_object_get(rule, "text")));
	ctl_policy_print_agent(rule != NULL ?
		json_object_get(result, "policy") :
		result);
}

static void
ctl_policy_print_test(const json_t *result)
{
	printf("%s\n", json_string_value(json_object_get(result, "explain")));
}

/* The positional words of sub, checked, into params; 0 or 2. */
static int
ctl_policy_words(const struct mcpctl_cmd *cmd, int argc, char **argv,
    const char *sub, json_t *params)
{
	json_int_t n;
	int r, e;

	if (strcmp(sub, "list") == 0) {
		if ((r = mcpctl_positional(cmd, argc, argv, 0, 1, "")) != 0)
			return r;
		if (optind < argc &&
		    (r = mcpctl_check_name(cmd, "agent", argv[optind])) != 0)
			return r;
		if (optind < argc)
			json_object_set_new(params, "agent",
			    json_string(argv[optind]));
		return 0;
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 2, 2,
		 strcmp(sub, "rm") == 0 ? "AGENT and N" :
		     strcmp(sub, "test") == 0 || strcmp(sub, "forget") == 0 ?
					  "AGENT and TOOL (SERVER__TOOL)" :
					  "AGENT and allow, deny or ask")) !=
		0 ||
	    (r = mcpctl_check_name(cmd, "agent", argv[optind])) != 0)
		return r;
	json_object_set_new(params, "agent", json_string(argv[optind]));
	if (strcmp(sub, "rm") == 0) {
		if ((r = mcpctl_parse_positive(cmd, "N", argv[optind + 1],
			 "rules", &n)) != 0)
			return r;
		json_object_set_new(params, "n", json_integer(n));
	} else if (strcmp(sub, "test") == 0 || strcmp(sub, "forget") == 0)
		json_object_set_new(params, "tool",
		    json_string(argv[optind + 1]));
	else {
		e = policyrules_effect_parse(argv[optind + 1]);
		if (e < 0)
			return mcpctl_usage(cmd,
			    "the effect is allow, deny or ask, not '%s'",
			    argv[optind + 1]);
		json_object_set_new(params, "effect",
		    json_string(argv[optind + 1]));
	}
	return 0;
}

static int
ctl_policy_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params = json_object();
	const char *sub;
	bool has_rule_opts = false;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":h", ctl_policy_options)) !=
	    -1) {
		if (c == 'h') {
			json_decref(params);
			return mcpctl_help(cmd);
		}
		if (c < CTL_POLICY_SERVER || c > CTL_POLICY_AT) {
			json_decref(params);
			return mcpctl_bad_option(cmd, c, argv);
		}
		if ((r = ctl_policy_option(cmd, params, c, optarg)) != 0) {
			json_decref(params);
			return r;
		}
		if (c != CTL_POLICY_PROFILE)
			has_rule_opts = true;
	}
	if (optind >= argc) {
		json_decref(params);
		return mcpctl_usage(cmd,
		    "missing add, list, rm, default, test or forget");
	}
	sub = argv[optind++];
	if (strcmp(sub, "add") != 0 && strcmp(sub, "list") != 0 &&
	    strcmp(sub, "rm") != 0 && strcmp(sub, "default") != 0 &&
	    strcmp(sub, "test") != 0 && strcmp(sub, "forget") != 0) {
		json_decref(params);
		return mcpctl_usage(cmd,
		    "unknown policy command '%s': add, list, rm, default, test or forget",
		    sub);
	}
	if (strcmp(sub, "add") != 0 &&
	    (has_rule_opts ||
		(json_object_get(params, "profile") != NULL &&
		    strcmp(sub, "test") != 0))) {
		json_decref(params);
		return mcpctl_usage(cmd,
		    "--server, --tool, --annotation and --at go with add; --profile with add and test");
	}
	if ((r = ctl_policy_words(cmd, argc, argv, sub, params)) != 0) {
		json_decref(params);
		return r;
	}
	json_object_set_new(params, "op", json_string(sub));
	return mcpctl_run(m, "mcpd/policy", params,
	    strcmp(sub, "list") == 0	 ? ctl_policy_print_list :
		strcmp(sub, "test") == 0 ? ctl_policy_print_test :
					   ctl_policy_print_change);
}

const struct mcpctl_cmd ctl_policy_cmd = {
	.name = "policy",
	.synopsis =
	    "add AGENT allow|deny|ask [--server S] [--tool GLOB] [--annotation NAME=true|false]... [--profile P] [--at N] | list [AGENT] | rm AGENT N | default AGENT allow|deny|ask | test AGENT TOOL [--profile P] | forget AGENT TOOL",
	.summary =
	    "decide what each agent may call: ordered allow and deny rules",
	.help =
	    "  --server S                 the rule is for this server's tools only\n"
	    "  --tool GLOB                ... for tools whose SERVER__TOOL matches GLOB\n"
	    "  --annotation NAME=BOOL     ... whose annotation NAME is BOOL (repeatable):\n"
	    "                             readOnlyHint, destructiveHint, idempotentHint,\n"
	    "                             openWorldHint; a missing one is the spec's default\n"
	    "                             (false, true, false, true)\n"
	    "  --profile P                ... in sessions whose view is profile P\n"
	    "  --at N                     add: the new rule becomes rule N (default: last)\n"
	    "  -h, --help                 this text\n"
	    "\n"
	    "A call of a tool is decided by the agent's first rule that matches\n"
	    "it (every condition it has), else by the agent's default (allow\n"
	    "unless mcpctl policy default AGENT deny). A denied tool is not\n"
	    "listed to the agent's sessions, and a call of it on any path\n"
	    "(gateway sessions, mcpd/call and so mcpctl call) fails with\n"
	    "denied (-32003), naming the rule and the command that would allow\n"
	    "it; nothing is sent. A call an ask rule decides waits until\n"
	    "mcpctl approve ID or mcpctl deny ID answers it (mcpctl approvals\n"
	    "lists them), or mcpd --approval-timeout denies it. test says which\n"
	    "rule decides a tool and why. forget drops the approvals for always\n"
	    "of a tool (mcpctl approve --always). mcpd keeps the rules and those\n"
	    "approvals in policy.json in its state directory.\n",
	.exec = ctl_policy_exec,
	.options = ctl_policy_options,
};
