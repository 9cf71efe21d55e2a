/* SPDX-License-Identifier: ISC */
/*
 * The hot path of mcpd/call: a plain call line is checked by the scanner
 * and its arguments go upstream as the client wrote them, with no parse
 * and no re-encoding. A line with anything more (a handle, a timeout,
 * answers, another method, an escape in a name) is left to the parser.
 */
#include <stdlib.h>
#include <string.h>

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
	char buf[CONTROL_FAST_TEXT_MAX], *end;
	long long n;

	if (text[0] == '"')
		return control_fast_string(text, len, buf, sizeof buf) ?
		    json_string(buf) :
		    NULL;
	/* The scanner vouched for a number of at most 18 digits. */
	if (len >= 24 || memchr(text, '.', len) != NULL ||
	    memchr(text, 'e', len) != NULL || memchr(text, 'E', len) != NULL)
		return NULL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	n = strtoll(buf, &end, 10);
	return *end == '\0' ? json_integer(n) : NULL;
}

bool
control_fast_line(struct client *c, const char *line, size_t len)
{
	struct jsonscan_member top[] = { { "jsonrpc", false, 0, 0 },
		{ "id", false, 0, 0 }, { "method", false, 0, 0 },
		{ "params", false, 0, 0 } };
	struct jsonscan_member call[] = { { "server", false, 0, 0 },
		{ "tool", false, 0, 0 }, { "arguments", false, 0, 0 } };
	char server[CONTROL_FAST_TEXT_MAX], tool[CONTROL_FAST_TEXT_MAX];
	const char *params = line;
	struct request *req;
	struct server *s;
	json_t *id;

	if (mcpd_is_stopping() || jsonscan_object_of(line, len, top, 4) < 0 ||
	    !top[1].is_found || !top[3].is_found ||
	    !control_fast_is(line, &top[0], "\"2.0\"") ||
	    !control_fast_is(line, &top[2], "\"mcpd/call\""))
		return false;
	params += top[3].off;
	if (jsonscan_object_of(params, top[3].len, call, 3) < 0 ||
	    !call[2].is_found || params[call[2].off] != '{' ||
	    !call[0].is_found ||
	    !control_fast_string(params + call[0].off, call[0].len, server,
		sizeof server) ||
	    !call[1].is_found ||
	    !control_fast_string(params + call[1].off, call[1].len, tool,
		sizeof tool) ||
	    (id = control_fast_id(line + top[1].off, top[1].len)) == NULL)
		return false;
	req = control_request_new(c, id);
	json_decref(id);
	if ((s = cmd_server(req, server)) != NULL)
		server_call_text(s, tool, params + call[2].off, call[2].len,
		    mcpd_opts.call_timeout_ms, req);
	return true;
}
