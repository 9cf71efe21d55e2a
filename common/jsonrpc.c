/* SPDX-License-Identifier: ISC */
/* JSON-RPC 2.0: classify incoming messages, build and frame outgoing ones. */
#include <sys/uio.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "jsonrpc.h"

static int
jsonrpc_fail(char **cause, const char *what)
{
	if (cause != NULL)
		*cause = strdup(what);
	return -EINVAL;
}

static int
jsonrpc_id_valid(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id) || json_is_null(id);
}

static int
jsonrpc_classify_response(json_t *msg, struct jsonrpc_msg *m, char **cause)
{
	json_t *result = json_object_get(msg, "result");
	json_t *error = json_object_get(msg, "error");
	json_t *code, *message;

	if ((result == NULL) == (error == NULL))
		return jsonrpc_fail(cause,
		    "a response needs exactly one of result and error");
	if (result != NULL) {
		m->type = JSONRPC_RESULT;
		m->result = result;
		return 0;
	}
	code = json_object_get(error, "code");
	message = json_object_get(error, "message");
	if (!json_is_object(error) || !json_is_integer(code))
		return jsonrpc_fail(cause,
		    "error must be an object with an integer code");
	m->type = JSONRPC_ERROR;
	m->error = error;
	m->error_code = (int)json_integer_value(code);
	m->error_message = json_is_string(message) ?
	    json_string_value(message) :
	    "";
	return 0;
}

int
jsonrpc_classify(json_t *msg, struct jsonrpc_msg *ret, char **cause)
{
	struct jsonrpc_msg m;
	json_t *method, *params;

	memset(&m, 0, sizeof m);
	if (!json_is_object(msg))
		return jsonrpc_fail(cause, "a message must be a JSON object");
	if (!json_is_string(json_object_get(msg, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") !=
		0)
		return jsonrpc_fail(cause, "jsonrpc must be \"2.0\"");
	m.id = json_object_get(msg, "id");
	if (m.id != NULL && !jsonrpc_id_valid(m.id))
		return jsonrpc_fail(cause, "id must be a string or an integer");
	method = json_object_get(msg, "method");
	if (method == NULL) {
		if (m.id == NULL)
			return jsonrpc_fail(cause, "a response needs an id");
		if (jsonrpc_classify_response(msg, &m, cause) < 0)
			return -EINVAL;
		*ret = m;
		return 0;
	}
	if (!json_is_string(method))
		return jsonrpc_fail(cause, "method must be a string");
	params = json_object_get(msg, "params");
	if (params != NULL && !json_is_object(params) && !json_is_array(params))
		return jsonrpc_fail(cause, "params must be an object or array");
	m.type = m.id != NULL ? JSONRPC_REQUEST : JSONRPC_NOTIFICATION;
	m.method = json_string_value(method);
	m.params = params;
	*ret = m;
	return 0;
}

json_t *
jsonrpc_parse(const char *line, size_t len, json_error_t *err)
{
	return json_loadb(line, len, JSON_DECODE_ANY, err);
}

#define JSONRPC_FLAGS (JSON_COMPACT | JSON_ENCODE_ANY)
#define JSONRPC_SMALL (64 * 1024) /* larger texts get a block of their own */

static void
jsonrpc_free_text(const void *data, size_t len, void *arg)
{
	(void)len, (void)arg;
	free((void *)(uintptr_t)data);
}

/* Hands text (malloc'd, len bytes) to out, which frees it once drained. */
static int
jsonrpc_add_owned(struct evbuffer *out, char *text, size_t len)
{
	if (evbuffer_add_reference(out, text, len, jsonrpc_free_text, NULL) <
	    0) {
		free(text);
		return -ENOMEM;
	}
	return 0;
}

/* The pieces' bytes, one after another, into dst. */
static void
jsonrpc_copy_pieces(char *dst, const struct iovec *v, int n)
{
	for (int i = 0; i < n; i++) {
		memcpy(dst, v[i].iov_base, v[i].iov_len);
		dst += v[i].iov_len;
	}
}

static size_t
jsonrpc_pieces_len(const struct iovec *v, int n)
{
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += v[i].iov_len;
	return len;
}

int
jsonrpc_add_big(struct evbuffer *out, const struct iovec *v, int n)
{
	size_t len = jsonrpc_pieces_len(v, n);
	char *text = malloc(len);

	if (text == NULL)
		return -ENOMEM;
	jsonrpc_copy_pieces(text, v, n);
	return jsonrpc_add_owned(out, text, len);
}

/*
 * A big message in a block of its own size: a buffer's chain would take
 * the next power of two, up to twice what is held.
 */
static int
jsonrpc_write_big(struct evbuffer *out, const json_t *msg, size_t n)
{
	char *text = malloc(n + 1);

	if (text == NULL)
		return -ENOMEM;
	if (json_dumpb(msg, text, n, JSONRPC_FLAGS) != n) {
		free(text);
		return -EINVAL;
	}
	text[n] = '\n';
	return jsonrpc_add_owned(out, text, n + 1);
}

/* Dumps straight into the buffer's free space: one copy, one add. */
int
jsonrpc_write(struct evbuffer *out, const json_t *msg)
{
	struct evbuffer_iovec v;
	size_t want = 4096, n;

	for (;;) {
		if (evbuffer_reserve_space(out, want + 1, &v, 1) != 1)
			return -ENOMEM;
		n = json_dumpb(msg, v.iov_base, v.iov_len, JSONRPC_FLAGS);
		if (n == 0)
			return -EINVAL;
		if (n < v.iov_len)
			break;
		if (n > JSONRPC_SMALL)
			return jsonrpc_write_big(out, msg, n);
		want = n;
	}
	((char *)v.iov_base)[n] = '\n';
	v.iov_len = n + 1;
	return evbuffer_commit_space(out, &v, 1) < 0 ? -ENOMEM : 0;
}

size_t
jsonrpc_format_int(char *buf, int64_t v)
{
	char digits[JSONRPC_INT_MAX];
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	size_t n = 0, len = 0;

	do
		digits[n++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		buf[len++] = '-';
	while (n > 0)
		buf[len++] = digits[--n];
	buf[len] = '\0';
	return len;
}

json_t *
jsonrpc_load_value(const char *text, size_t len)
{
	json_t *v = NULL;
	int64_t n;

	if (len >= 2 && text[0] == '"' && text[len - 1] == '"' &&
	    memchr(text, '\\', len) == NULL)
		v = json_stringn(text + 1, len - 2); /* NULL: not UTF-8 */
	else if (len > 0 && text[0] != '"' && jsonrpc_parse_int(text, len, &n))
		v = json_integer(n);
	return v != NULL ? v : json_loadb(text, len, JSON_DECODE_ANY, NULL);
}

/* By hand: strtoll, with its copy and errno, was a call's largest libc cost. */
bool
jsonrpc_parse_int(const char *text, size_t len, int64_t *ret)
{
	bool is_negative = len > 0 && text[0] == '-';
	uint64_t limit = is_negative ? (uint64_t)INT64_MAX + 1 : INT64_MAX;
	uint64_t v = 0;
	size_t i = is_negative;

	if (i == len)
		return false;
	for (; i < len; i++) {
		unsigned d = (unsigned char)text[i] - '0';

		if (d > 9 || v > (limit - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*ret = is_negative ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

/* One reservation, one commit. */
int
jsonrpc_write_text(struct evbuffer *out, const struct iovec *v, int n)
{
	struct evbuffer_iovec space;
	size_t len = jsonrpc_pieces_len(v, n);

	if (len > JSONRPC_SMALL)
		return jsonrpc_add_big(out, v, n);
	if (evbuffer_reserve_space(out, len, &space, 1) != 1)
		return -ENOMEM;
	jsonrpc_copy_pieces(space.iov_base, v, n);
	space.iov_len = len;
	return evbuffer_commit_space(out, &space, 1) < 0 ? -ENOMEM : 0;
}

int
jsonrpc_write_raw_result(struct evbuffer *out, const json_t *id,
    const char *raw, size_t len)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	static const char mid[] = ",\"result\":";
	char idtext[128], *big = NULL;
	const char *text = idtext;
	size_t n;
	int r;

	/* The usual id, an integer, without a trip through printf. */
	if (json_is_integer(id))
		n = jsonrpc_format_int(idtext, json_integer_value(id));
	else if ((n = json_dumpb(id, idtext, sizeof idtext, JSONRPC_FLAGS)) ==
	    0)
		return -EINVAL;
	/* A long id (a client's string) does not fit the usual buffer. */
	if (n > sizeof idtext) {
		if ((big = malloc(n)) == NULL)
			return -ENOMEM;
		if (json_dumpb(id, big, n, JSONRPC_FLAGS) != n) {
			free(big);
			return -EINVAL;
		}
		text = big;
	}
	r = jsonrpc_write_text(out,
	    (struct iovec[]){ { (void *)(uintptr_t)head, sizeof head - 1 },
		{ (void *)(uintptr_t)text, n },
		{ (void *)(uintptr_t)mid, sizeof mid - 1 },
		{ (void *)(uintptr_t)raw, len },
		{ (void *)(uintptr_t) "}\n", 2 } },
	    5);
	free(big);
	return r;
}

static json_t *
jsonrpc_new(json_t *id)
{
	json_t *m = json_object();

	json_object_set_new(m, "jsonrpc", json_string("2.0"));
	if (id != NULL)
		json_object_set(m, "id", id);
	return m;
}

json_t *
jsonrpc_request(json_t *id, const char *method, json_t *params)
{
	json_t *m = jsonrpc_new(id);

	json_object_set_new(m, "method", json_string(method));
	if (params != NULL)
		json_object_set_new(m, "params", params);
	return m;
}

json_t *
jsonrpc_notification(const char *method, json_t *params)
{
	return jsonrpc_request(NULL, method, params);
}

json_t *
jsonrpc_result(json_t *id, json_t *result)
{
	json_t *m = jsonrpc_new(id != NULL ? id : json_null());

	json_object_set_new(m, "result",
	    result != NULL ? result : json_object());
	return m;
}

json_t *
jsonrpc_error(json_t *id, int code, const char *message, json_t *data)
{
	json_t *m = jsonrpc_new(id != NULL ? id : json_null());
	json_t *e = json_object();

	json_t *text = json_string(message);

	/* A message quoting a peer may not be UTF-8; say so, never drop it. */
	if (text == NULL)
		text = json_string("(message not valid UTF-8)");
	json_object_set_new(e, "code", json_integer(code));
	json_object_set_new(e, "message", text);
	if (data != NULL)
		json_object_set_new(e, "data", data);
	json_object_set_new(m, "error", e);
	return m;
}

json_t *
jsonrpc_error_kind(json_t *id, enum errors_kind kind, const char *message,
    json_t *data)
{
	if (data == NULL)
		data = json_object();
	json_object_set_new(data, "kind", json_string(errors_kind_name(kind)));
	return jsonrpc_error(id, errors_kind_code(kind), message, data);
}

int
jsonrpc_error_get_kind(const json_t *error)
{
	const json_t *data = json_object_get(error, "data");

	return errors_kind_from_name(json_string_value(json_object_get(data,
	    "kind")));
}

int
jsonrpc_unqueue_cancelled(json_t *unsent, const json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	const json_t *id = json_object_get(json_object_get(msg, "params"),
	    "requestId");
	json_t *entry;
	size_t i;

	if (method == NULL || strcmp(method, "notifications/cancelled") != 0)
		return -1;
	json_array_foreach(unsent, i, entry)
		if (json_equal(json_object_get(json_array_get(entry, 0), "id"),
			id))
			return json_array_remove(unsent, i) == 0 ? 1 : 0;
	return 0;
}
