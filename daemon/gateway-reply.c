/* SPDX-License-Identifier: ISC */
/* The gateway's side of the server layer's completion interface: MCP callers. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "jsonscan.h"
#include "server-reply.h"

/* A 2026-07-28 caller's result goes through the gateway's answer. */
static void
gateway_reply_answer(struct server_reply *rep, json_t *result)
{
	gateway_answer(control_reply_request(rep), "tools/call", result);
}

/*
 * The same for a result that comes as the server's checked text: what
 * gateway_answer adds to a tools/call result (its resultType, when it has
 * none) is added to the text, instead of parsing it and encoding it again
 * (two fifths of such a call's cost). A result it cannot vouch for
 * without a parse (a key with an escape) is parsed.
 */
static void
gateway_reply_answer_raw(struct server_reply *rep, const char *result,
    size_t len)
{
	static const char add[] = "\"resultType\":\"complete\"}";
	struct jsonscan_member t[] = { { "resultType", false, 0, 0 } };
	struct request *req = control_reply_request(rep);
	json_t *parsed;
	size_t i = 1, n = len - 1;
	char *text;

	if (!gateway_is_modern(control_gateway_of(req)) || len < 2 ||
	    result[0] != '{') {
		control_reply_raw(req, result, len);
		return;
	}
	if (jsonscan_object(result, len, t, 1) < 0) {
		if ((parsed = json_loadb(result, len, 0, NULL)) != NULL)
			gateway_reply_answer(rep, parsed);
		else
			control_reply_raw(req, result, len);
		return;
	}
	if (t[0].is_found) {
		control_reply_raw(req, result, len);
		return;
	}
	/* Appended last, where json_object_set_new put it. */
	while (i < n && strchr(" \t\r\n", result[i]) != NULL)
		i++;
	text = xmalloc(len + sizeof add);
	memcpy(text, result, n);
	if (i < n)
		text[n++] = ',';
	memcpy(text + n, add, sizeof add - 1);
	control_reply_raw(req, text, n + sizeof add - 1);
	free(text);
}

static const json_t *
gateway_reply_caps(const struct server_reply *rep)
{
	return gateway_client_caps_peek(
	    control_gateway_of(control_reply_request(rep)));
}

static bool
gateway_reply_wants_log(const struct server_reply *rep, const char *level)
{
	return gateway_wants_log(control_gateway_of(control_reply_request(rep)),
	    level);
}

struct server_reply *
gateway_server_reply(struct request *req, const json_t *params)
{
	/* The control layer's answers, but MCP's capabilities and logging. */
	static struct server_reply_ops plain, modern;

	if (plain.reply == NULL) {
		plain = control_reply_ops;
		plain.caps = gateway_reply_caps;
		plain.wants_log = gateway_reply_wants_log;
		modern = plain;
		modern.reply = gateway_reply_answer;
		modern.reply_raw = gateway_reply_answer_raw;
	}
	return control_server_reply(req,
	    era_is_modern_request(params) ? &modern : &plain);
}
