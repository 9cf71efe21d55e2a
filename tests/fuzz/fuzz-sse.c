/* SPDX-License-Identifier: ISC */
/* Fuzzes the Server-Sent Events parser (common/sse.c) fed in splits. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "sse.h"

/* Every event of one parse, flattened, with the parser's last answer. */
struct fuzz_sse_seen {
	size_t max;
	FILE *f;
	char *log;
	size_t log_len;
	size_t nevents;
	int err;
};

static int
fuzz_sse_event(void *arg, const struct sse_event *ev)
{
	struct fuzz_sse_seen *seen = arg;

	/* A type may hold NUL bytes (and then look empty). */
	FUZZ_CHECK(ev->type != NULL);
	FUZZ_CHECK(ev->data != NULL && ev->data[ev->data_len] == '\0');
	FUZZ_CHECK(ev->data_len <= seen->max);
	FUZZ_CHECK(ev->retry_ms >= -1);
	/* An empty id is no id; an id never holds a NUL or a line end. */
	FUZZ_CHECK(ev->id == NULL ||
	    (ev->id[0] != '\0' && strpbrk(ev->id, "\r\n") == NULL));
	FUZZ_CHECK(strpbrk(ev->type, "\r\n") == NULL);
	FUZZ_CHECK(memchr(ev->data, '\r', ev->data_len) == NULL);
	seen->nevents++;
	fprintf(seen->f, "%s|%zu|", ev->type, ev->data_len);
	fwrite(ev->data, 1, ev->data_len, seen->f);
	fprintf(seen->f, "|%s|%d|%lld\n", ev->id != NULL ? ev->id : "(null)",
	    ev->has_id, (long long)ev->retry_ms);
	return 0;
}

/* Parses buf in pieces (or whole), then records the parser's state. */
static void
fuzz_sse_parse(const uint8_t *buf, size_t len, size_t max, uint8_t seed,
    bool is_whole, struct fuzz_sse_seen *seen)
{
	struct sse_parser p;
	struct fuzz_split split;
	const char *last;
	size_t off = 0;

	memset(seen, 0, sizeof *seen);
	seen->max = max;
	seen->f = open_memstream(&seen->log, &seen->log_len);
	FUZZ_CHECK(seen->f != NULL);
	fuzz_split_init(&split, seed);
	sse_parser_init(&p, max);
	while (off < len && seen->err == 0) {
		size_t n = is_whole ? len : fuzz_split_next(&split, len - off);

		seen->err = sse_parser_feed(&p, (const char *)buf + off, n,
		    fuzz_sse_event, seen);
		FUZZ_CHECK(seen->err == 0 || seen->err == -EMSGSIZE);
		off += n;
	}
	/* The error is sticky. */
	if (seen->err != 0)
		FUZZ_CHECK(sse_parser_feed(&p, "\n\n", 2, fuzz_sse_event,
			       seen) == seen->err);
	last = sse_parser_last_id_peek(&p);
	FUZZ_CHECK(last == NULL || last[0] != '\0');
	fprintf(seen->f, "end %d %s %lld\n", seen->err,
	    last != NULL ? last : "(null)", (long long)sse_parser_retry_ms(&p));
	/* A reset clears the error; the parser works on afterwards. */
	sse_parser_reset(&p);
	FUZZ_CHECK(sse_parser_feed(&p, "data: x\n\n", 9, fuzz_sse_event,
		       seen) == 0);
	FUZZ_CHECK(sse_parser_last_id_peek(&p) == last ||
	    strcmp(sse_parser_last_id_peek(&p), last) == 0);
	fclose(seen->f);
	sse_parser_free(&p);
	sse_parser_free(&p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_sse_seen whole, split;
	size_t max;
	uint8_t seed;

	if (size < 2)
		return 0;
	/* Small limits, so that the inputs reach them. */
	max = 9 + (size_t)data[0] * 4;
	seed = data[1];
	data += 2;
	size -= 2;
	fuzz_sse_parse(data, size, max, seed, true, &whole);
	fuzz_sse_parse(data, size, max, seed, false, &split);
	/* Any split of the same bytes gives the same events and end. */
	FUZZ_CHECK(whole.nevents == split.nevents);
	FUZZ_CHECK(whole.log_len == split.log_len);
	FUZZ_CHECK(memcmp(whole.log, split.log, whole.log_len) == 0);
	free(whole.log);
	free(split.log);
	return 0;
}
