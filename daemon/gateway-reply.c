/* SPDX-License-Identifier: ISC */
/* The gateway's side of the server layer's completion interface: MCP callers. */
#include <stdbool.h>

#include "gateway.h"
#include "server-reply.h"

/* A 2026-07-28 caller's result goes through the gateway's answer. */
static void
gateway_reply_answer(struct server_reply *rep, json_t *result)
{
	gateway_answer(control_reply_request(rep), "tools/call", result);
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
	}
	return control_server_reply(req,
	    era_is_modern_request(params) ? &modern : &plain);
}
