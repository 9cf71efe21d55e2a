/* SPDX-License-Identifier: ISC */
/*
 * The hot path of mcpd/call: a plain call line is checked by the scanner
 * and its arguments go upstream as the client wrote them, with no parse
 * and no re-encoding. A line with anything more (a handle, a timeout,
 * answers, another method, an escape in a name) is left to the parser.
 */
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "jsonscan.h"
#include "mcpd.h"
#include "control-int.h"

#define CONTROL_FAST_TEXT_MAX 256 /* longer names and ids are parsed */

/* Whether the member's raw value is exactly text. */
static bool
control_fast_is(const char *base, const struct jsonscan_member *m,
    const char *text)
{
	return m->len == strlen(text) &&
	    memcmp(base + m->off, text, m->len) == 0;
}

/* A JSON string with no escape, unquoted into buf; false for others. */
static bool
control_fast_string(const char *text, size_t len, char *buf, size_t size)
{
	if (len < 2 || len - 2 >= size || text[0] != '"' ||
	    memchr(text, '\\', len) != NULL)
		return false;
	memcpy(buf, text + 1, len - 2);
	buf[len - 2] = '\0';
	return true;
}

/* The id as the parser makes it: a plain string or an integer, else NULL. */
static json_t *
control_fast_id(const char *text, size_t len)
{
	char buf[CONTROL_FAST_TEXT_MAX];
	int64_t n;

	if (text[0] == '"')
		return control_fast_string(text, len, buf, sizeof buf) ?
		    json_string(buf) :
		    NULL;
	return jsonrpc_parse_int(text, len, &n) ? json_integer(n) : NULL;
}

/* The members of params the fast paths take, noted in the line's scan. */
enum control_fast_param {
	CONTROL_FAST_SERVER,
	CONTROL_FAST_TOOL,
	CONTROL_FAST_NAME,
	CONTROL_FAST_ARGUMENTS,
	CONTROL_FAST_PARAMS
};

/*
 * params (noted in p) as exactly the members want (of p, each index once):
 * each a plain string (unquoted into strings[i], of size
 * CONTROL_FAST_TEXT_MAX) but the last, an object (its span in *ret_obj);
 * false for anything else, another of p's members among them.
 */
static bool
control_fast_params(const char *line, const struct jsonscan_member *p,
    const enum control_fast_param *want, size_t n,
    char strings[][CONTROL_FAST_TEXT_MAX], struct jsonscan_member *ret_obj)
{
	size_t found = 0;

	for (size_t i = 0; i < CONTROL_FAST_PARAMS; i++)
		found += p[i].is_found;
	if (found != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!p[want[i]].is_found)
			return false;
	for (size_t i = 0; i + 1 < n; i++)
		if (!control_fast_string(line + p[want[i]].off, p[want[i]].len,
			strings[i], CONTROL_FAST_TEXT_MAX))
			return false;
	if (line[p[want[n - 1]].off] != '{')
		return false;
	*ret_obj = p[want[n - 1]];
	return true;
}

/* mcpd/call {server, tool, arguments}. */
static bool
control_fast_call(struct client *c, const char *line,
    const struct jsonscan_member *params, json_t *id)
{
	static const enum control_fast_param want[] = { CONTROL_FAST_SERVER,
		CONTROL_FAST_TOOL, CONTROL_FAST_ARGUMENTS };
	char names[2][CONTROL_FAST_TEXT_MAX];
	struct jsonscan_member args;
	struct request *req;
	struct server *s;

	if (mcpd_is_stopping() ||
	    !control_fast_params(line, params, want, 3, names, &args))
		return false;
	req = control_request_new(c, id);
	if ((s = cmd_server(req, names[0])) != NULL &&
	    gateway_view_call_ok(req, s, names[1]))
		server_call_text(s, names[1], line + args.off, args.len,
		    mcpd_opts.call_timeout_ms, control_server_reply(req, NULL),
		    NULL);
	return true;
}

/* MCP's tools/call {name, arguments}, of a 2025 gateway session. */
static bool
control_fast_tools_call(struct client *c, const char *line,
    const struct jsonscan_member *params, json_t *id)
{
	static const enum control_fast_param want[] = { CONTROL_FAST_NAME,
		CONTROL_FAST_ARGUMENTS };
	char name[1][CONTROL_FAST_TEXT_MAX];
	struct jsonscan_member args;

	if (!gateway_takes_text(c->gateway) ||
	    !control_fast_params(line, params, want, 2, name, &args))
		return false;
	gateway_tools_call_text(c->gateway, control_request_new(c, id), name[0],
	    line + args.off, args.len);
	return true;
}

bool
control_fast_line(struct client *c, const char *line, size_t len)
{
	struct jsonscan_member top[] = { { "jsonrpc", false, 0, 0 },
		{ "id", false, 0, 0 }, { "method", false, 0, 0 },
		{ "params", false, 0, 0 } };
	/* Both methods' params, in one pass with the line's own. */
	struct jsonscan_member params[] = { [CONTROL_FAST_SERVER] = { "server",
						false, 0, 0 },
		[CONTROL_FAST_TOOL] = { "tool", false, 0, 0 },
		[CONTROL_FAST_NAME] = { "name", false, 0, 0 },
		[CONTROL_FAST_ARGUMENTS] = { "arguments", false, 0, 0 } };
	bool is_done = false;
	json_t *id;

	if (jsonscan_object_in(line, len, top, 4, true, 3, params,
		CONTROL_FAST_PARAMS) < 0 ||
	    !top[1].is_found || !top[3].is_found ||
	    !control_fast_is(line, &top[0], "\"2.0\"") ||
	    (id = control_fast_id(line + top[1].off, top[1].len)) == NULL)
		return false;
	if (control_fast_is(line, &top[2], "\"mcpd/call\""))
		is_done = control_fast_call(c, line, params, id);
	else if (control_fast_is(line, &top[2], "\"tools/call\""))
		is_done = control_fast_tools_call(c, line, params, id);
	json_decref(id);
	return is_done;
}
