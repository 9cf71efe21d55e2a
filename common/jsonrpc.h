/* SPDX-License-Identifier: ISC */
/* JSON-RPC 2.0 message shapes and their NDJSON framing. */
#ifndef MCPD_JSONRPC_H
#define MCPD_JSONRPC_H

#include <sys/uio.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "errors.h"

struct evbuffer;

enum jsonrpc_type {
	JSONRPC_REQUEST,
	JSONRPC_NOTIFICATION,
	JSONRPC_RESULT,
	JSONRPC_ERROR,
};

/* The parts of one message; every pointer is borrowed from the message. */
struct jsonrpc_msg {
	enum jsonrpc_type type;
	json_t *id;	    /* request, result, error; NULL on notification */
	const char *method; /* request, notification */
	json_t *params;	    /* request, notification; may be NULL */
	json_t *result;	    /* result */
	json_t *error;	    /* error object */
	int error_code;	    /* error */
	const char *error_message;
};

/*
 * Checks the shape of one message and fills *ret. Returns 0, or -EINVAL
 * with *cause saying what is wrong (the caller frees it).
 */
int jsonrpc_classify(json_t *msg, struct jsonrpc_msg *ret, char **cause);

/* Parses one line; NULL with err filled when it is not JSON. */
json_t *jsonrpc_parse(const char *line, size_t len, json_error_t *err);
/* Appends msg as one compact line ending in "\n"; 0 or -ENOMEM. */
int jsonrpc_write(struct evbuffer *out, const json_t *msg);

/*
 * Appends the answer to id whose result is raw JSON text, already checked
 * (jsonscan_object): the bytes a server sent are passed on unchanged.
 */
/*
 * The pieces of a text as one block of exactly their size, added to out
 * by reference (freed when drained): for big texts, which a buffer chain
 * would hold in the next power of two.
 */
int jsonrpc_add_big(struct evbuffer *out, const struct iovec *, int n);
/* A message given as the pieces of its text (newline included). */
int jsonrpc_write_text(struct evbuffer *out, const struct iovec *, int n);
/* v in decimal into buf (JSONRPC_INT_MAX bytes); its length. */
#define JSONRPC_INT_MAX 24
size_t jsonrpc_format_int(char *buf, int64_t v);
/* An integer written plainly ("42", "-5") in text[0..len); false else. */
bool jsonrpc_parse_int(const char *text, size_t len, int64_t *ret);
/*
 * A JSON value's text as json_loadb makes it (NULL when it is not JSON):
 * a string without escapes and an integer are made without the parser,
 * which costs some 1,800 instructions to start for any value.
 */
json_t *jsonrpc_load_value(const char *text, size_t len);
int jsonrpc_write_raw_result(struct evbuffer *out, const json_t *id,
    const char *raw, size_t len);

/* Constructors; each steals params/result/data and returns a new message. */
json_t *jsonrpc_request(json_t *id, const char *method, json_t *params);
json_t *jsonrpc_notification(const char *method, json_t *params);
json_t *jsonrpc_result(json_t *id, json_t *result);
json_t *jsonrpc_error(json_t *id, int code, const char *message, json_t *data);
/* An application error: the kind's code, and data.kind set (data stolen). */
json_t *jsonrpc_error_kind(json_t *id, enum errors_kind, const char *message,
    json_t *data);
/* The data.kind of an error object, or -1. */
int jsonrpc_error_get_kind(const json_t *error);
/*
 * When msg is a notifications/cancelled, removes the request it cancels
 * from unsent, an array of [request, ...] arrays: 1 when it was there, 0
 * when not; -1 when msg is no cancellation.
 */
int jsonrpc_unqueue_cancelled(json_t *unsent, const json_t *msg);

#endif
