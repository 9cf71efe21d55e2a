/* SPDX-License-Identifier: ISC */
/* The closed set of wire error kinds of the control protocol. */
#ifndef MCPD_ERRORS_H
#define MCPD_ERRORS_H

/* JSON-RPC 2.0 standard codes. */
#define JSONRPC_PARSE_ERROR	 -32700
#define JSONRPC_INVALID_REQUEST	 -32600
#define JSONRPC_METHOD_NOT_FOUND -32601
#define JSONRPC_INVALID_PARAMS	 -32602
#define JSONRPC_INTERNAL_ERROR	 -32603

/* Application kinds; each has one code and one name (data.kind). */
enum errors_kind {
	ERRORS_NOT_FOUND,
	ERRORS_CONFLICT,
	ERRORS_DENIED,
	ERRORS_UNAVAILABLE,
	ERRORS_UPSTREAM,
	ERRORS_OUTCOME_UNKNOWN,
	ERRORS_STORAGE,
	ERRORS_STALE_HANDLE,
	ERRORS_TIMEOUT,
	ERRORS_TOOL_CHANGED,
	ERRORS_TOOL_HELD,
	ERRORS_KIND_COUNT
};

/*
 * Sets *cause (when cause is not NULL) to a new message (out of memory ends
 * the program, see xalloc.h) and returns err: `return errors_cause(cause,
 * -EINVAL, "bad %s", what);`.
 */
int errors_cause(char **cause, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The JSON-RPC error code of a kind (-32001 ...). */
int errors_kind_code(enum errors_kind);
/* The data.kind string of a kind ("not-found", ...). */
const char *errors_kind_name(enum errors_kind);
/* The kind of a data.kind string; -1 when unknown. */
int errors_kind_from_name(const char *);
/* The kind of an application code; -1 when it is not one. */
int errors_kind_from_code(int);

#endif
