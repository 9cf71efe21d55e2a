/* SPDX-License-Identifier: ISC */
/* Fuzzes JSON-RPC framing: linebuf.c's line reader, then jsonrpc.c's shapes. */
#include <errno.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "fuzz.h"
#include "jsonrpc.h"
#include "jsonscan.h"
#include "linebuf.h"

/* Writes msg as a line and checks that it reads back as the same message. */
static void
fuzz_jsonrpc_rewrite(json_t *msg, const struct jsonrpc_msg *m)
{
	struct evbuffer *out = evbuffer_new();
	struct jsonrpc_msg m2;
	json_t *again;
	char *text, *cause = NULL;
	size_t len;

	FUZZ_CHECK(jsonrpc_write(out, msg) == 0);
	len = evbuffer_get_length(out);
	text = (char *)evbuffer_pullup(out, -1);
	/* One line: a newline at the end and nowhere else. */
	FUZZ_CHECK(len > 1 && text[len - 1] == '\n');
	FUZZ_CHECK(memchr(text, '\n', len - 1) == NULL);
	again = jsonrpc_parse(text, len - 1, NULL);
	FUZZ_CHECK(again != NULL && json_equal(again, msg));
	FUZZ_CHECK(jsonrpc_classify(again, &m2, &cause) == 0);
	FUZZ_CHECK(m2.type == m->type);
	json_decref(again);
	evbuffer_free(out);
}

/* The raw-result path: the server's bytes, an id, read back as a result. */
static void
fuzz_jsonrpc_raw(const char *line, size_t len, const struct jsonrpc_msg *m)
{
	struct jsonscan_member mm[] = { { "result", false, 0, 0 } };
	struct evbuffer *out;
	json_t *back;
	char *text;

	if (m->type != JSONRPC_RESULT || jsonscan_object(line, len, mm, 1) < 0)
		return;
	FUZZ_CHECK(mm[0].is_found);
	out = evbuffer_new();
	FUZZ_CHECK(jsonrpc_write_raw_result(out, m->id, line + mm[0].off,
		       mm[0].len) == 0);
	text = (char *)evbuffer_pullup(out, -1);
	back = jsonrpc_parse(text, evbuffer_get_length(out), NULL);
	FUZZ_CHECK(back != NULL);
	FUZZ_CHECK(json_equal(json_object_get(back, "result"), m->result));
	FUZZ_CHECK(json_equal(json_object_get(back, "id"), m->id));
	json_decref(back);
	evbuffer_free(out);
}

/* Classifies one line and checks what the shape promises. */
static void
fuzz_jsonrpc_line(const char *line, size_t len, FILE *log)
{
	struct jsonrpc_msg m;
	json_error_t jerr;
	json_t *msg, *unsent;
	char *cause = NULL;
	int r;

	if ((msg = jsonrpc_parse(line, len, &jerr)) == NULL) {
		fprintf(log, "not json\n");
		return;
	}
	r = jsonrpc_classify(msg, &m, &cause);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	FUZZ_CHECK((r == 0) == (cause == NULL));
	fprintf(log, "%d %d\n", r, r == 0 ? (int)m.type : -1);
	free(cause);
	if (r == 0) {
		switch (m.type) {
		case JSONRPC_REQUEST:
		case JSONRPC_NOTIFICATION:
			FUZZ_CHECK(m.method != NULL);
			FUZZ_CHECK((m.id != NULL) ==
			    (m.type == JSONRPC_REQUEST));
			FUZZ_CHECK(m.params == NULL ||
			    json_is_object(m.params) ||
			    json_is_array(m.params));
			break;
		case JSONRPC_RESULT:
			FUZZ_CHECK(m.id != NULL && m.result != NULL);
			break;
		case JSONRPC_ERROR:
			FUZZ_CHECK(m.id != NULL && json_is_object(m.error));
			FUZZ_CHECK(m.error_message != NULL);
			break;
		}
		FUZZ_CHECK(m.id == NULL || json_is_string(m.id) ||
		    json_is_integer(m.id) || json_is_null(m.id));
		fuzz_jsonrpc_rewrite(msg, &m);
		fuzz_jsonrpc_raw(line, len, &m);
	}
	/* Nothing is unsent: a cancellation finds nothing to take back. */
	unsent = json_array();
	r = jsonrpc_unqueue_cancelled(unsent, msg);
	FUZZ_CHECK(r == 0 || r == -1);
	json_decref(unsent);
	json_decref(msg);
}

/* Reads buf as NDJSON in pieces (or whole); the log says what it saw. */
static char *
fuzz_jsonrpc_read(const uint8_t *buf, size_t len, size_t max, uint8_t seed,
    bool is_whole, size_t *ret_len)
{
	struct evbuffer *in = evbuffer_new();
	struct linebuf lb;
	struct fuzz_split split;
	size_t off = 0, consumed = 0;
	char *log;
	FILE *f = open_memstream(&log, ret_len);
	int r = 0;

	FUZZ_CHECK(f != NULL);
	linebuf_init(&lb, max);
	fuzz_split_init(&split, seed);
	while (off < len && r >= 0) {
		size_t n = is_whole ? len : fuzz_split_next(&split, len - off);
		char *line, *again;
		size_t line_len, again_len;

		evbuffer_add(in, buf + off, n);
		off += n;
		while ((r = linebuf_peek(&lb, in, &line, &line_len)) > 0) {
			/* The line is the input's next bytes, then its end. */
			FUZZ_CHECK(line_len <= max && line[line_len] == '\0');
			FUZZ_CHECK(memcmp(buf + consumed, line, line_len) == 0);
			FUZZ_CHECK(memchr(line, '\n', line_len) == NULL);
			consumed += line_len;
			if (buf[consumed] == '\r')
				consumed++;
			FUZZ_CHECK(buf[consumed] == '\n');
			consumed++;
			fprintf(f, "line %zu\n", line_len);
			fuzz_jsonrpc_line(line, line_len, f);
			/* A second peek gives the same line. */
			FUZZ_CHECK(linebuf_peek(&lb, in, &again, &again_len) ==
			    1);
			FUZZ_CHECK(again_len == line_len);
			linebuf_consume(&lb, in);
		}
		FUZZ_CHECK(r == 0 || r == -EMSGSIZE);
	}
	/* Without an overlong line, nothing but an unended last line is left. */
	if (r == 0)
		FUZZ_CHECK(evbuffer_get_length(in) == len - consumed);
	fprintf(f, "end %d\n", r);
	fclose(f);
	evbuffer_free(in);
	return log;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t max, whole_len, split_len;
	char *whole, *split;
	uint8_t seed;

	if (size < 2)
		return 0;
	max = 1 + (size_t)data[0] * 16;
	seed = data[1];
	data += 2;
	size -= 2;
	whole = fuzz_jsonrpc_read(data, size, max, seed, true, &whole_len);
	split = fuzz_jsonrpc_read(data, size, max, seed, false, &split_len);
	/* Any split gives the same lines, messages and end. */
	FUZZ_CHECK(whole_len == split_len);
	FUZZ_CHECK(memcmp(whole, split, whole_len) == 0);
	free(whole);
	free(split);
	return 0;
}
