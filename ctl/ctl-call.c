/* SPDX-License-Identifier: ISC */
/* mcpctl call: call one tool with arguments and print what it returned. */
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"
#include "names.h"

static const struct option ctl_call_options[] = {
	{ "args-json", required_argument, NULL, 'j' },
	{ "timeout", required_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A value that parses as JSON is that JSON; anything else is a string. */
static json_t *
ctl_call_value(const char *s)
{
	json_t *v = json_loads(s, JSON_DECODE_ANY, NULL);

	return v != NULL ? v : json_string(s);
}

/* Merges KEY=VALUE words into args; 0 or 2. */
static int
ctl_call_pairs(json_t *args, char **words, int nwords)
{
	const char *eq;
	char *key;

	for (int i = 0; i < nwords; i++) {
		if ((eq = strchr(words[i], '=')) == NULL || eq == words[i])
			return mcpctl_usage(&ctl_call_cmd,
			    "expected KEY=VALUE, not '%s'", words[i]);
		key = strndup(words[i], eq - words[i]);
		json_object_set_new(args, key, ctl_call_value(eq + 1));
		free(key);
	}
	return 0;
}

/* Fills params with the handle, or server and tool; 0 or 2. */
static int
ctl_call_target(json_t *params, char **words, int nwords, int *ret_used)
{
	char *server, *tool;
	uint64_t gen;

	if (nwords < 1)
		return mcpctl_usage(&ctl_call_cmd,
		    "missing SERVER TOOL or HANDLE (see 'mcpctl tools')");
	if (strchr(words[0], '/') != NULL) {
		if (names_handle_parse(words[0], &server, &gen, &tool) < 0)
			return mcpctl_usage(&ctl_call_cmd,
			    "'%s' is not a handle like SERVER.GEN/TOOL",
			    words[0]);
		free(server);
		free(tool);
		json_object_set_new(params, "handle", json_string(words[0]));
		*ret_used = 1;
		return 0;
	}
	if (nwords < 2 || strchr(words[1], '=') != NULL)
		return mcpctl_usage(&ctl_call_cmd,
		    "missing TOOL after '%s' (see 'mcpctl tools %s')", words[0],
		    words[0]);
	json_object_set_new(params, "server", json_string(words[0]));
	json_object_set_new(params, "tool", json_string(words[1]));
	*ret_used = 2;
	return 0;
}

static int
ctl_call_option(json_t *params, int c, char **argv)
{
	json_error_t err;
	json_int_t ms;
	json_t *args;
	int r;

	switch (c) {
	case 'j':
		if ((args = json_loads(optarg, JSON_DECODE_ANY, &err)) == NULL)
			return mcpctl_usage(&ctl_call_cmd, "--args-json: %s",
			    err.text);
		if (!json_is_object(args)) {
			json_decref(args);
			return mcpctl_usage(&ctl_call_cmd,
			    "--args-json must be a JSON object: '{\"key\": 1}'");
		}
		json_object_set_new(params, "arguments", args);
		return 0;
	case 't':
		r = mcpctl_parse_positive(&ctl_call_cmd, "--timeout", optarg,
		    "milliseconds", &ms);
		if (r != 0)
			return r;
		json_object_set_new(params, "timeout_ms", json_integer(ms));
		return 0;
	case 'h':
		return -1;
	default:
		return mcpctl_bad_option(&ctl_call_cmd, c, argv);
	}
}

/* Builds the params of mcpd/call from the command line; 0, 2, or -1 (help). */
static int
ctl_call_params(json_t *params, int argc, char **argv)
{
	int c, r = 0, used = 0;

	json_object_set_new(params, "arguments", json_object());
	while (r == 0 &&
	    (c = mcpctl_getopt(argc, argv, ":h", ctl_call_options)) != -1)
		r = ctl_call_option(params, c, argv);
	if (r != 0)
		return r;
	argc -= optind;
	argv += optind;
	if ((r = ctl_call_target(params, argv, argc, &used)) != 0)
		return r;
	return ctl_call_pairs(json_object_get(params, "arguments"), argv + used,
	    argc - used);
}

/* Decoded size of base64 text. */
static size_t
ctl_call_b64_size(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (strchr("= \t\r\n", *s) == NULL)
			n++;
	return n * 3 / 4;
}

/* A string field of a content item, or def. */
static const char *
ctl_call_str(const json_t *item, const char *key, const char *def)
{
	const char *v = json_string_value(json_object_get(item, key));

	return v != NULL ? v : def;
}

static void
ctl_call_print_item(FILE *f, const json_t *item)
{
	const char *type = ctl_call_str(item, "type", "?");
	const json_t *res = json_object_get(item, "resource");

	if (strcmp(type, "text") == 0)
		print_line(f, ctl_call_str(item, "text", ""));
	else if (strcmp(type, "image") == 0 || strcmp(type, "audio") == 0)
		fprintf(f, "[%s %s, %zu bytes]\n", type,
		    ctl_call_str(item, "mimeType", "?"),
		    ctl_call_b64_size(ctl_call_str(item, "data", "")));
	else if (strcmp(type, "resource_link") == 0 || res != NULL)
		fprintf(f, "[resource %s]\n",
		    ctl_call_str(res != NULL ? res : item, "uri", "?"));
	else
		fprintf(f, "[%s]\n", type);
}

/* Whether the one text item is structuredContent again, as JSON text. */
static bool
ctl_call_is_duplicate(const json_t *content, const json_t *structured)
{
	const json_t *item, *text = NULL;
	json_t *parsed;
	size_t i, ntext = 0;
	bool same;

	json_array_foreach(content, i, item) {
		if (json_is_string(json_object_get(item, "text"))) {
			text = json_object_get(item, "text");
			ntext++;
		}
	}
	if (ntext != 1 || structured == NULL)
		return false;
	parsed = json_loads(json_string_value(text), JSON_DECODE_ANY, NULL);
	same = parsed != NULL && json_equal(parsed, structured);
	json_decref(parsed);
	return same;
}

static void
ctl_call_print(FILE *f, const json_t *result)
{
	const json_t *content = json_object_get(result, "content"), *item;
	const json_t *structured = json_object_get(result, "structuredContent");
	size_t i;

	json_array_foreach(content, i, item)
		ctl_call_print_item(f, item);
	if (structured == NULL || ctl_call_is_duplicate(content, structured))
		return;
	fprintf(f, "structured:\n");
	print_pretty(f, structured);
}

static int
ctl_call_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params = json_object(), *result;
	int r;

	if ((r = ctl_call_params(params, argc, argv)) != 0) {
		json_decref(params);
		return r < 0 ? mcpctl_help(cmd) : r;
	}
	if ((r = mcpctl_request(m, "mcpd/call", params, &result)) != 0)
		return r;
	r = MCPCTL_EXIT_OK;
	if (json_is_true(json_object_get(result, "isError")))
		r = MCPCTL_EXIT_TOOL_ERROR;
	if (m->is_json)
		print_json(result);
	else
		ctl_call_print(r == MCPCTL_EXIT_OK ? stdout : stderr, result);
	json_decref(result);
	return r;
}

const struct mcpctl_cmd ctl_call_cmd = {
	.name = "call",
	.synopsis = "SERVER TOOL | HANDLE [KEY=VALUE ...] [--args-json JSON] "
		    "[--timeout MS]",
	.summary = "call a tool and print its result",
	.help =
	    "  KEY=VALUE          one argument: VALUE as JSON if it parses, "
	    "else a string\n"
	    "  --args-json JSON   the whole arguments object; KEY=VALUE pairs "
	    "go on top\n"
	    "  --timeout MS       deadline of the call (default 60000)\n"
	    "  -h, --help         this text\n",
	.exec = ctl_call_exec,
};
