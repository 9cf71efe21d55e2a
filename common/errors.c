/* SPDX-License-Identifier: ISC */
/* The table of application error kinds: code and name of each. */
#include <string.h>

#include <stdarg.h>
#include <stdio.h>

#include "errors.h"
#include "xalloc.h"

static const struct {
	int code;
	const char *name;
} errors_table[ERRORS_KIND_COUNT] = {
	[ERRORS_NOT_FOUND] = { -32001, "not-found" },
	[ERRORS_CONFLICT] = { -32002, "conflict" },
	[ERRORS_DENIED] = { -32003, "denied" },
	[ERRORS_UNAVAILABLE] = { -32004, "unavailable" },
	[ERRORS_UPSTREAM] = { -32005, "upstream" },
	[ERRORS_OUTCOME_UNKNOWN] = { -32006, "outcome-unknown" },
	[ERRORS_STORAGE] = { -32007, "storage" },
	[ERRORS_STALE_HANDLE] = { -32008, "stale-handle" },
	[ERRORS_TIMEOUT] = { -32009, "timeout" },
	[ERRORS_TOOL_CHANGED] = { -32010, "tool-changed" },
	[ERRORS_TOOL_HELD] = { -32011, "tool-held" },
};

int
errors_kind_code(enum errors_kind kind)
{
	if ((unsigned)kind >= ERRORS_KIND_COUNT)
		return JSONRPC_INTERNAL_ERROR;
	return errors_table[kind].code;
}

const char *
errors_kind_name(enum errors_kind kind)
{
	if ((unsigned)kind >= ERRORS_KIND_COUNT)
		return "internal";
	return errors_table[kind].name;
}

int
errors_kind_from_name(const char *name)
{
	for (int i = 0; i < ERRORS_KIND_COUNT; i++)
		if (name != NULL && strcmp(errors_table[i].name, name) == 0)
			return i;
	return -1;
}

int
errors_kind_from_code(int code)
{
	for (int i = 0; i < ERRORS_KIND_COUNT; i++)
		if (errors_table[i].code == code)
			return i;
	return -1;
}

int
errors_cause(char **cause, int err, const char *fmt, ...)
{
	va_list ap;

	if (cause == NULL)
		return err;
	va_start(ap, fmt);
	xvasprintf(cause, fmt, ap);
	va_end(ap);
	return err;
}
