/* SPDX-License-Identifier: ISC */
/* The completion interface's shared part: its values, and formatted failures. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server-reply.h"

void
server_reply_init(struct server_reply *rep, const struct server_reply_ops *ops,
    struct request *req, const void *client, const char *agent,
    const json_t *scope)
{
	json_t *held = rep->scope;
	/* Agent names are checked to fit (names_valid): never cut here. */
	size_t n = strnlen(agent, sizeof rep->agent - 1);

	rep->ops = ops;
	rep->req = req;
	rep->client = client;
	memcpy(rep->agent, agent, n); /* snprintf cost 500 instructions */
	rep->agent[n] = '\0';
	rep->scope = json_incref((json_t *)(uintptr_t)scope);
	json_decref(held);
}

void
server_reply_clear(struct server_reply *rep)
{
	json_decref(rep->scope);
	rep->scope = NULL;
}

void
server_reply_fail(struct server_reply *rep, enum errors_kind kind, json_t *data,
    const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	xvasprintf(&text, fmt, ap);
	va_end(ap);
	rep->ops->fail(rep, kind, data, text);
	free(text);
}

void
server_reply_fail_code(struct server_reply *rep, int code, json_t *data,
    const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	xvasprintf(&text, fmt, ap);
	va_end(ap);
	rep->ops->fail_code(rep, code, data, text);
	free(text);
}
