/* SPDX-License-Identifier: ISC */
/* The completion interface's shared part: its values, and formatted failures. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server-reply.h"

void
server_reply_init(struct server_reply *rep, const struct server_reply_ops *ops,
    const void *client, const char *agent, const json_t *scope)
{
	json_t *held = rep->scope;
	/* Agent names are checked to fit (names_valid): never cut here. */
	size_t n = strnlen(agent, sizeof rep->agent - 1);

	rep->ops = ops;
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

char *
server_reply_vfail(struct server_reply *rep, enum errors_kind kind, int code,
    json_t *data, const char *fmt, va_list ap)
{
	char *text;

	xvasprintf(&text, fmt, ap);
	if (rep == NULL)
		json_decref(data);
	else if (kind == ERRORS_KIND_COUNT)
		rep->ops->fail_code(rep, code, data, text);
	else
		rep->ops->fail(rep, kind, data, text);
	return text;
}

void
server_reply_fail(struct server_reply *rep, enum errors_kind kind, json_t *data,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	free(server_reply_vfail(rep, kind, 0, data, fmt, ap));
	va_end(ap);
}

void
server_reply_fail_code(struct server_reply *rep, int code, json_t *data,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	free(server_reply_vfail(rep, ERRORS_KIND_COUNT, code, data, fmt, ap));
	va_end(ap);
}
