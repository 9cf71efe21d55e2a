/* SPDX-License-Identifier: ISC */
/* mcpctl call: call one tool with arguments and print what it returned. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "jsonrpc.h"
#include "jsonschema.h"
#include "mcpctl.h"
#include "names.h"

/* input_required rounds of one call, at most (the first call is one). */
#define CTL_CALL_INPUT_ROUNDS 8
/*
 * What a call by a kept definition returns when it did not serve: nothing
 * was sent, and the call is made again by the definition mcpd gives.
 */
#define CTL_CALL_AGAIN	      (-2)

/* What the command line says, before the tool's schema is known. */
struct ctl_call {
	json_t *params;	 /* of mcpd/call: server and tool or handle, timeout */
	json_t *given;	 /* --args-json, or {} */
	json_t *args;	 /* given, then the words, typed by a definition */
	json_t *changed; /* what mcpd said the tool is now, or NULL */
	char *target[2]; /* SERVER TOOL, or HANDLE (borrowed from argv) */
	int ntarget;
	char *server; /* the server and tool the target names */
	char *tool;
	char *see;    /* the target again, for "see mcpctl call ... --help" */
	char **words; /* after the target: flags, values, KEY=VALUE */
	int nwords;
	int pairs_from; /* words from here on came after "--" */
	bool is_help;
	bool is_quiet;	    /* --quiet: no progress or log lines on stderr */
	bool use_defaults;  /* --elicit-defaults: forms take their defaults */
	bool has_flags;	    /* a word like --name among words */
	bool has_args_json; /* --args-json was given */
	bool is_forced;	    /* --force-args: KEY=VALUE sent as given */
};

/* Whether the first len bytes of w are the option name. */
static bool
ctl_call_is_named(const char *w, size_t len, const char *name)
{
	return strlen(name) == len && strncmp(w, name, len) == 0;
}

/* call's own options that take a value, for mcpctl's global options. */
static const struct option ctl_call_options[] = {
	{ "timeout", required_argument, NULL, 't' },
	{ "args-json", required_argument, NULL, 'a' },
	{ NULL, 0, NULL, 0 },
};

/* The value of --args-json, an object that replaces c->given; 0 or 2. */
static int
ctl_call_args_json(struct ctl_call *c, const char *value)
{
	json_error_t err;
	json_t *args;

	if ((args = json_loads(value, JSON_DECODE_ANY, &err)) == NULL)
		return mcpctl_usage(&ctl_call_cmd, "--args-json: %s", err.text);
	if (!json_is_object(args)) {
		json_decref(args);
		return mcpctl_usage(&ctl_call_cmd,
		    "--args-json must be a JSON object: '{\"key\": 1}'");
	}
	json_decref(c->given);
	c->given = args;
	c->has_args_json = true;
	return 0;
}

/* Takes argv[*at] if it is an option of call: 0 or 2, or -1 if it is not. */
static int
ctl_call_option(struct ctl_call *c, int argc, char **argv, int *at)
{
	const char *w = argv[*at], *value;
	size_t len = strcspn(w, "=");
	json_int_t ms;
	int r;

	if (strcmp(w, "-h") == 0 || strcmp(w, "--help") == 0) {
		c->is_help = true;
		return 0;
	}
	if (strcmp(w, "-q") == 0 || strcmp(w, "--quiet") == 0) {
		c->is_quiet = true;
		return 0;
	}
	if (strcmp(w, "--elicit-defaults") == 0) {
		c->use_defaults = true;
		return 0;
	}
	if (strcmp(w, "--force-args") == 0) {
		c->is_forced = true;
		return 0;
	}
	if (!ctl_call_is_named(w, len, "--timeout") &&
	    !ctl_call_is_named(w, len, "--args-json"))
		return -1;
	if (w[len] == '=')
		value = w + len + 1;
	else if (*at + 1 < argc)
		value = argv[++*at];
	else
		return mcpctl_usage(&ctl_call_cmd, "option '%s' needs a value",
		    w);
	if (w[2] == 'a')
		return ctl_call_args_json(c, value);
	r = mcpctl_parse_positive(&ctl_call_cmd, "--timeout", value,
	    "milliseconds", &ms);
	if (r == 0)
		json_object_set_new(c->params, "timeout_ms", json_integer(ms));
	return r;
}

/* Whether the words so far name the tool: HANDLE, or SERVER TOOL. */
static bool
ctl_call_is_targeted(const struct ctl_call *c)
{
	return c->ntarget == 2 ||
	    (c->ntarget == 1 && strchr(c->target[0], '/') != NULL);
}

/*
 * Sorts argv into options of call, the target and the words after it,
 * which only the tool's schema can tell apart. 0, 2, or -1 for help.
 */
static int
ctl_call_scan(struct ctl_call *c, int argc, char **argv)
{
	bool is_end = false, is_dash;
	char *w;
	int r;

	for (int i = 1; i < argc; i++) {
		w = argv[i];
		is_dash = !is_end && w[0] == '-' && w[1] != '\0';
		if (!is_end && strcmp(w, "--") == 0) {
			is_end = true;
			c->pairs_from = c->nwords;
			continue;
		}
		if (is_dash && (r = ctl_call_option(c, argc, argv, &i)) >= 0) {
			if (r != 0)
				return r;
			continue;
		}
		if (ctl_call_is_targeted(c)) {
			c->has_flags |= is_dash && w[1] == '-';
			c->words[c->nwords++] = w;
		} else if (is_dash) {
			return mcpctl_usage(&ctl_call_cmd,
			    "unknown option '%s' (a tool's flags go after SERVER TOOL)",
			    w);
		} else {
			c->target[c->ntarget++] = w;
		}
	}
	if (!is_end)
		c->pairs_from = c->nwords;
	return c->is_help && !ctl_call_is_targeted(c) ? -1 : 0;
}

/* Fills params with the handle, or server and tool; 0 or 2. */
static int
ctl_call_target(struct ctl_call *c)
{
	char **words = c->target;
	uint64_t gen;

	if (c->ntarget < 1)
		return mcpctl_usage(&ctl_call_cmd,
		    "missing SERVER TOOL or HANDLE (see 'mcpctl tools')");
	if (strchr(words[0], '/') != NULL) {
		if (names_handle_parse(words[0], &c->server, &gen, &c->tool) <
		    0)
			return mcpctl_usage(&ctl_call_cmd,
			    "'%s' is not a handle like SERVER.GEN/TOOL",
			    words[0]);
		json_object_set_new(c->params, "handle", json_string(words[0]));
		c->see = strdup(words[0]);
		return 0;
	}
	if (c->ntarget < 2 || strchr(words[1], '=') != NULL)
		return mcpctl_usage(&ctl_call_cmd,
		    "missing TOOL after '%s' (see 'mcpctl tools %s')", words[0],
		    words[0]);
	json_object_set_new(c->params, "server", json_string(words[0]));
	json_object_set_new(c->params, "tool", json_string(words[1]));
	c->server = strdup(words[0]);
	c->tool = strdup(words[1]);
	if (asprintf(&c->see, "%s %s", words[0], words[1]) < 0)
		c->see = NULL;
	return 0;
}

/*
 * Without flags, the words are KEY=VALUE pairs: set in args, typed by the
 * tool's inputSchema (cf, or NULL without one). Checked once before
 * connecting, with a scratch args.
 */
static int
ctl_call_pairs(struct ctl_call *c, const struct callflags *cf, json_t *args)
{
	int r = 0;

	for (int i = 0; r == 0 && i < c->nwords; i++) {
		if (i < c->pairs_from && c->words[i][0] == '-' &&
		    c->words[i][1] != '\0')
			r = mcpctl_usage(&ctl_call_cmd, "unknown option '%s'",
			    c->words[i]);
		else
			r = callflags_pair(cf, args, c->words[i], c->is_forced);
	}
	return r;
}

/* The command line, up to what needs the schema; 0, 2, or -1 for help. */
static int
ctl_call_parse(struct ctl_call *c, int argc, char **argv)
{
	int r;

	c->params = json_object();
	c->given = json_object();
	c->words = calloc(argc + 1, sizeof *c->words);
	if (c->params == NULL || c->given == NULL || c->words == NULL)
		return MCPCTL_EXIT_ERROR;
	if ((r = ctl_call_scan(c, argc, argv)) != 0 ||
	    (r = ctl_call_target(c)) != 0)
		return r;
	if (c->server == NULL || c->tool == NULL || c->see == NULL)
		return MCPCTL_EXIT_ERROR;
	if (!c->has_flags && !c->is_help) {
		json_t *scratch = json_object();

		r = ctl_call_pairs(c, NULL, scratch);
		json_decref(scratch);
	}
	return r;
}

static void
ctl_call_clear(struct ctl_call *c)
{
	json_decref(c->params);
	json_decref(c->given);
	json_decref(c->args);
	json_decref(c->changed);
	free(c->server);
	free(c->tool);
	free(c->see);
	free(c->words);
}

/* Tools of the server from mcpd/tools (tool NULL: all); 0 or the status. */
static int
ctl_call_fetch_tools(struct mcpctl *m, const char *server, const char *tool,
    json_t **ret)
{
	json_t *result;
	int r;

	r = mcpctl_request(m, "mcpd/tools",
	    json_pack("{s:s, s:s*}", "server", server, "tool", tool), &result);
	if (r != 0)
		return r;
	*ret = json_incref(json_object_get(result, "tools"));
	json_decref(result);
	return 0;
}

/*
 * The tool's own entry (its schema checks the arguments); only when the
 * server has no such tool, all of its tools, to say which are near.
 */
static int
ctl_call_fetch(struct mcpctl *m, const struct ctl_call *c, json_t **ret)
{
	int r = ctl_call_fetch_tools(m, c->server, c->tool, ret);

	if (r != 0 || json_array_size(*ret) > 0)
		return r;
	json_decref(*ret);
	*ret = NULL;
	return ctl_call_fetch_tools(m, c->server, NULL, ret);
}

/*
 * The tool the target names: by its handle, else by its name (a handle of
 * an older generation: mcpd refuses the call, and --help with it).
 */
static const json_t *
ctl_call_find(const struct ctl_call *c, const json_t *tools)
{
	const json_t *handle = json_object_get(c->params, "handle"), *tool;
	const char *name;
	size_t i;

	json_array_foreach(tools, i, tool) {
		if (handle != NULL &&
		    json_equal(json_object_get(tool, "handle"), handle))
			return tool;
	}
	json_array_foreach(tools, i, tool) {
		name = json_string_value(json_object_get(tool, "name"));
		if (name != NULL && strcmp(name, c->tool) == 0)
			return tool;
	}
	return NULL;
}

/* The flags or the help need the tool: say it is not there, and what is. */
static int
ctl_call_no_tool(const struct ctl_call *c, const json_t *tools)
{
	const char **names = calloc(json_array_size(tools) + 1, sizeof *names);
	const json_t *tool;
	char *near = NULL;
	size_t i;

	json_array_foreach(tools, i, tool) {
		if (names != NULL)
			names[i] = json_string_value(json_object_get(tool,
			    "name"));
	}
	if (names != NULL)
		near = nearest_names(c->tool, names, json_array_size(tools),
		    "");
	print_err("server '%s' has no tool '%s'%s%s%s", c->server, c->tool,
	    near != NULL ? "; did you mean " : "", near != NULL ? near : "",
	    near != NULL ? "?" : "");
	fprintf(stderr, "see its tools with 'mcpctl tools %s'\n", c->server);
	free(near);
	free(names);
	return MCPCTL_EXIT_ERROR;
}

/* What the validator said, when it is about the schema, not the value. */
static bool
ctl_call_is_unchecked(int r, const char *cause)
{
	return r != -EINVAL ||
	    (cause != NULL && strstr(cause, "invalid schema") != NULL);
}

/*
 * Checks the arguments against the inputSchema: 0, or 2 after saying why.
 * --force-args, or arguments given only as --args-json, are the way to
 * send what the schema does not allow: those are sent, with a warning.
 */
static int
ctl_call_check_input(const struct ctl_call *c, const struct callflags *cf)
{
	const json_t *schema = json_object_get(cf->tool, "inputSchema");
	bool is_raw = c->is_forced ||
	    (!c->has_flags && c->has_args_json && c->nwords == 0);
	char *cause = NULL;
	int r;

	if (schema == NULL)
		return 0;
	if (!is_raw && (r = callflags_check_required(cf, c->args)) != 0)
		return r;
	if ((r = jsonschema_validate(schema, c->args, &cause)) == 0)
		return 0;
	if (ctl_call_is_unchecked(r, cause))
		print_err(
		    "warning: the arguments were not checked against the inputSchema: %s",
		    cause != NULL ? cause : strerror(-r));
	else if (is_raw)
		print_err(
		    "warning: the arguments do not match the inputSchema, sent as given: %s",
		    cause);
	else
		r = callflags_usage(cf,
		    "the arguments do not match the inputSchema: %s", cause);
	free(cause);
	return r == MCPCTL_EXIT_USAGE ? r : 0;
}

/*
 * After the result was printed: 0, or 1 after a warning when its
 * structuredContent does not match the tool's outputSchema.
 */
static int
ctl_call_check_output(const json_t *tool, const json_t *result)
{
	const json_t *schema = json_object_get(tool, "outputSchema");
	const json_t *sc = json_object_get(result, "structuredContent");
	char *cause = NULL;
	int r;

	if (schema == NULL)
		return MCPCTL_EXIT_OK;
	if (sc == NULL) {
		print_err(
		    "warning: the tool has an outputSchema but sent no structuredContent");
		return MCPCTL_EXIT_ERROR;
	}
	if ((r = jsonschema_validate(schema, sc, &cause)) == 0)
		return MCPCTL_EXIT_OK;
	if (ctl_call_is_unchecked(r, cause)) {
		print_err(
		    "warning: structuredContent was not checked against the outputSchema: %s",
		    cause != NULL ? cause : strerror(-r));
		r = MCPCTL_EXIT_OK;
	} else {
		print_err(
		    "warning: structuredContent does not match the outputSchema: %s",
		    cause);
		r = MCPCTL_EXIT_ERROR;
	}
	free(cause);
	return r;
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

/* Prints s on stderr with control characters as spaces. */
static void
ctl_call_put_clean(const char *s)
{
	for (; *s != '\0'; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s,
		    stderr);
}

/*
 * A notification about the call, on stderr as it comes: mcpd/progress
 * (the server's notifications/progress: progress, total, message) as
 * "  progress 3/10: message", and a server's log message (level, logger,
 * data: notifications/message) as "  [level] logger: data".
 */
static void
ctl_call_notify(void *arg, json_int_t id, const char *method,
    const json_t *params)
{
	const json_t *req = json_object_get(params, "request");
	const json_t *progress = json_object_get(params, "progress");
	const json_t *total = json_object_get(params, "total");
	const json_t *data = json_object_get(params, "data");
	const char *level = json_string_value(json_object_get(params, "level"));
	const char *logger = json_string_value(json_object_get(params,
	    "logger"));
	const char *message = json_string_value(json_object_get(params,
	    "message"));
	const char *stage = json_string_value(json_object_get(params, "stage"));
	const char *asked = json_string_value(json_object_get(params,
	    "requestId"));
	const char *reason = json_string_value(json_object_get(params,
	    "reason"));
	char *text;

	(void)arg;
	if (strcmp(method, "notifications/cancelled") == 0 && asked != NULL) {
		/* mcpd gave up waiting for an answer to the server. */
		fprintf(stderr, "  mcpd withdrew its request %s", asked);
		if (reason != NULL) {
			fputs(": ", stderr);
			ctl_call_put_clean(reason);
		}
		fputc('\n', stderr);
		return;
	}
	if (!json_is_integer(req) || json_integer_value(req) != id)
		return;
	fflush(stdout);
	if (level != NULL) {
		fprintf(stderr, "  [%s] ", level);
		if (logger != NULL) {
			ctl_call_put_clean(logger);
			fputs(": ", stderr);
		}
		text = print_value(data != NULL ?
			data :
			json_object_get(params, "message"));
		ctl_call_put_clean(text != NULL ? text : "");
		free(text);
	} else if (strcmp(method, "mcpd/progress") == 0 &&
	    json_is_number(progress)) {
		fprintf(stderr, "  progress %g", json_number_value(progress));
		if (json_is_number(total))
			fprintf(stderr, "/%g", json_number_value(total));
		if (message != NULL) {
			fputs(": ", stderr);
			ctl_call_put_clean(message);
		}
	} else if (strcmp(method, "mcpd/progress") == 0 && stage != NULL) {
		fprintf(stderr, "  %s: ", stage);
		ctl_call_put_clean(message != NULL ? message : "");
	} else {
		return;
	}
	fputc('\n', stderr);
}

/*
 * After an input_required result: its inputRequests answered, the params
 * of the retry get its inputResponses and its requestState as it came
 * (none when it came without). 0, or the exit status after saying why
 * there is no retry.
 */
static int
ctl_call_input(struct callask *ask, json_t *params, const json_t *result,
    int round)
{
	const json_t *state = json_object_get(result, "requestState");
	const json_t *requests = json_object_get(result, "inputRequests");
	json_t *responses = NULL;
	char *why = NULL;

	if (round >= CTL_CALL_INPUT_ROUNDS) {
		print_err(
		    "%s still asks for input after %d rounds; mcpctl stops there (nothing more was sent)",
		    ask->server, round);
		return MCPCTL_EXIT_ERROR;
	}
	if (state != NULL && !json_is_string(state)) {
		print_err(
		    "%s asked for input with a requestState that is not a string; nothing was sent again",
		    ask->server);
		return MCPCTL_EXIT_ERROR;
	}
	if (requests != NULL &&
	    (responses = callask_input(ask, requests, &why)) == NULL) {
		print_err(
		    "%s asked for input mcpctl does not give: %s; nothing was sent again",
		    ask->server, why != NULL ? why : strerror(ENOMEM));
		free(why);
		return MCPCTL_EXIT_ERROR;
	}
	json_object_del(params, "input_responses");
	json_object_del(params, "request_state");
	if (responses != NULL)
		json_object_set_new(params, "input_responses", responses);
	if (state != NULL)
		json_object_set(params, "request_state",
		    (json_t *)(uintptr_t)state);
	return 0;
}

/*
 * The call's error (taken): printed, with the exit status; or, for a call
 * by a kept definition (is_kept) that mcpd refused before sending anything
 * because the tool is defined otherwise now (its entry in c->changed) or
 * no longer there, CTL_CALL_AGAIN.
 */
static int
ctl_call_refused(struct mcpctl *m, struct ctl_call *c, json_t *error,
    bool is_kept)
{
	const json_t *data = json_object_get(error, "data");
	const char *what = json_string_value(json_object_get(data, "what"));
	int kind = jsonrpc_error_get_kind(error), r = CTL_CALL_AGAIN;

	if (is_kept && kind == ERRORS_TOOL_CHANGED)
		c->changed = json_incref(json_object_get(data, "tool"));
	else if (!is_kept || kind != ERRORS_NOT_FOUND || what == NULL ||
	    strcmp(what, "tool") != 0)
		r = mcpctl_error(m, error);
	json_decref(error);
	return r;
}

/*
 * Sends the call, made by the tool's definition (NULL: none), answering
 * what the server asks meanwhile (mcpd relays its requests) and after
 * (input_required: the call again, with the answers); prints the result,
 * checks it; the exit status, or CTL_CALL_AGAIN (see ctl_call_refused).
 */
static int
ctl_call_send(struct mcpctl *m, struct ctl_call *c, const json_t *tool,
    bool is_kept)
{
	json_t *params = json_copy(c->params), *result = NULL, *error = NULL;
	struct callask ask = { { c->server, isatty(STDIN_FILENO) ? stdin : NULL,
				   c->use_defaults, c->is_quiet },
		c->server };
	int r, round = 0;

	json_object_set(params, "arguments",
	    c->args != NULL ? c->args : c->given);
	json_object_set(params, "definition",
	    json_object_get(tool, "definition"));
	json_object_set_new(params, "answers",
	    json_pack("[s, s, s, s]", "elicitation", "elicitation-url", "roots",
		"input_required"));
	if (!c->is_quiet && !m->is_json) {
		/* The server's progress and log messages, on stderr. */
		json_object_set_new(params, "progress", json_true());
		conn_set_notify(ctl_call_notify, NULL);
	}
	conn_set_ask(callask_request, &ask);
	while ((r = mcpctl_request_error(m, "mcpd/call", json_incref(params),
		    &result, &error)) == 0 &&
	    callask_is_input_required(result) &&
	    (r = ctl_call_input(&ask, params, result, ++round)) == 0) {
		json_decref(result);
		result = NULL;
	}
	conn_set_ask(NULL, NULL);
	conn_set_notify(NULL, NULL);
	json_decref(params);
	if (error != NULL)
		r = ctl_call_refused(m, c, error, is_kept && round == 0);
	if (r != 0) {
		json_decref(result);
		return r;
	}
	r = MCPCTL_EXIT_OK;
	if (json_is_true(json_object_get(result, "isError")))
		r = MCPCTL_EXIT_TOOL_ERROR;
	if (m->is_json)
		print_json(result);
	else
		ctl_call_print(r == MCPCTL_EXIT_OK ? stdout : stderr, result);
	if (r == MCPCTL_EXIT_OK && tool != NULL)
		r = ctl_call_check_output(tool, result);
	json_decref(result);
	return r;
}

/* False for a handle that names an older generation of the tool. */
static bool
ctl_call_is_current(const struct ctl_call *c, const json_t *tool)
{
	const json_t *handle = json_object_get(c->params, "handle");

	return handle == NULL || tool == NULL ||
	    json_equal(json_object_get(tool, "handle"), handle);
}

/*
 * c->args from the given ones and the words, typed by the tool's
 * definition (cf, or NULL without one), and checked: 0, or 2 after
 * saying why.
 */
static int
ctl_call_type(struct ctl_call *c, const struct callflags *cf)
{
	int r;

	json_decref(c->args);
	if ((c->args = json_deep_copy(c->given)) == NULL)
		return MCPCTL_EXIT_ERROR;
	if (c->has_flags)
		r = callflags_parse(cf, c->words, c->nwords, c->pairs_from,
		    c->is_forced, c->args);
	else
		r = ctl_call_pairs(c, cf, c->args);
	if (r == 0 && cf != NULL)
		r = ctl_call_check_input(c, cf);
	return r;
}

/* The tool's definition as flags; false after saying why not. */
static bool
ctl_call_flags(const struct ctl_call *c, const json_t *tool,
    struct callflags **ret)
{
	*ret = NULL;
	if (tool == NULL || callflags_new(tool, c->see, ret) == 0)
		return true;
	print_err("%s", strerror(ENOMEM));
	return false;
}

/* With the tool's schema: help, or flags and checks, then the call. */
static int
ctl_call_run(struct mcpctl *m, struct ctl_call *c, const json_t *tools)
{
	const json_t *tool = ctl_call_find(c, tools);
	struct callflags *cf;
	int r;

	/*
	 * No such tool: say so here, with the nearest names, unless the
	 * server lists none (not ready: mcpd says why when called).
	 */
	if (tool == NULL &&
	    (c->has_flags || c->is_help || json_array_size(tools) > 0))
		return ctl_call_no_tool(c, tools);
	if (!ctl_call_flags(c, tool, &cf))
		return MCPCTL_EXIT_ERROR;
	if (c->is_help && !ctl_call_is_current(c, tool)) {
		/* A stale handle: --help fails as the call would (mcpd says). */
		r = ctl_call_send(m, c, tool, false);
	} else if (c->is_help) {
		callhelp_print(cf);
		r = MCPCTL_EXIT_OK;
	} else if ((r = ctl_call_type(c, cf)) == 0) {
		r = ctl_call_send(m, c, tool, false);
	}
	callflags_free(cf);
	return r;
}

/*
 * The call by the definition kept from an earlier one: one round trip.
 * What typing by it says (an error or a warning) is dropped, as it may be
 * out of date: CTL_CALL_AGAIN, and the call made as if nothing were kept
 * says it again when it still holds. When mcpd says the tool changed, the
 * call again by what it says the tool is now, which is kept.
 */
static int
ctl_call_kept(struct mcpctl *m, struct ctl_call *c)
{
	json_t *tool, *tools;
	struct callflags *cf;
	int r;

	if (c->is_help || json_object_get(c->params, "handle") != NULL ||
	    (tool = toolcache_get(m, c->server, c->tool)) == NULL)
		return CTL_CALL_AGAIN;
	r = MCPCTL_EXIT_ERROR;
	if (ctl_call_flags(c, tool, &cf)) {
		print_hold();
		r = ctl_call_type(c, cf);
		if (print_unhold() || r != 0)
			r = CTL_CALL_AGAIN;
		else
			r = ctl_call_send(m, c, tool, true);
	}
	callflags_free(cf);
	json_decref(tool);
	if (r != CTL_CALL_AGAIN || c->changed == NULL)
		return r;
	toolcache_put(m, c->server, c->tool, c->changed);
	tools = json_pack("[O]", c->changed);
	r = ctl_call_run(m, c, tools);
	json_decref(tools);
	return r;
}

/* The call as if nothing were kept: the tool's definition asked first. */
static int
ctl_call_fresh(struct mcpctl *m, struct ctl_call *c)
{
	json_t *tools = NULL;
	const json_t *tool;
	int r;

	if ((r = ctl_call_fetch(m, c, &tools)) != 0)
		return r;
	tool = ctl_call_find(c, tools);
	if (tool != NULL && json_object_get(c->params, "handle") == NULL)
		toolcache_put(m, c->server, c->tool, tool);
	r = ctl_call_run(m, c, tools);
	json_decref(tools);
	return r;
}

static int
ctl_call_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	struct ctl_call c = { 0 };
	int r;

	if ((r = ctl_call_parse(&c, argc, argv)) == 0 &&
	    (r = ctl_call_kept(m, &c)) == CTL_CALL_AGAIN)
		r = ctl_call_fresh(m, &c);
	ctl_call_clear(&c);
	return r == -1 ? mcpctl_help(cmd) : r;
}

const struct mcpctl_cmd ctl_call_cmd = {
	.name = "call",
	.synopsis =
	    "SERVER TOOL | HANDLE [--FLAG VALUE ...] [KEY=VALUE ...] [--args-json JSON] [--force-args] [--timeout MS] [--elicit-defaults] [--quiet]",
	.summary = "call a tool and print its result",
	.help =
	    "  --FLAG VALUE       one argument, a property of the tool's inputSchema;\n"
	    "                     'mcpctl call SERVER TOOL --help' lists them\n"
	    "  KEY=VALUE          one argument: VALUE of the property's type in the\n"
	    "                     inputSchema (message=42 is the string \"42\" when\n"
	    "                     message is a string); without one, JSON if it\n"
	    "                     parses, else a string. A VALUE that is not of\n"
	    "                     that type is refused, as its --FLAG's would be\n"
	    "  --args-json JSON   the whole arguments object; flags and KEY=VALUE go on top\n"
	    "  --force-args       send the arguments as given, even when they do not fit\n"
	    "                     the inputSchema (a warning says how)\n"
	    "  --timeout MS       deadline of the call (default: mcpd's, 60000); it also\n"
	    "                     bounds the time to answer what the server asks\n"
	    "  --elicit-defaults  when the server asks for a form (elicitation), accept\n"
	    "                     it with the form's defaults, without asking; without\n"
	    "                     it, mcpctl asks field by field on the terminal, and\n"
	    "                     declines when standard input is not one. A URL the\n"
	    "                     server asks you to open is accepted only when you\n"
	    "                     say so; sampling is refused; roots/list is answered\n"
	    "                     with the working directory\n"
	    "  -q, --quiet        do not print the server's progress and log\n"
	    "                     messages (on stderr, as they come)\n"
	    "  -h, --help         this text; after SERVER TOOL, the tool's flags\n"
	    "the tool's definition is kept in $XDG_CACHE_HOME/mcpctl/tools after its\n"
	    "first call; a later call by it is one request (mcpd refuses it, sending\n"
	    "nothing, when the tool has changed, and mcpctl calls again by the new one)\n",
	.exec = ctl_call_exec,
	.options = ctl_call_options,
};
