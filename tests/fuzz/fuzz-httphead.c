/* SPDX-License-Identifier: ISC */
/* Fuzzes the HTTP/1.1 request head parser (common/httphead.c). */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "httphead.h"

/* The limits a body or a chunk is held to: byte 1 of the input picks one. */
static const size_t fuzz_httphead_maxes[] = { 0, 1, 15, 16, 1024, 1 << 20,
	SIZE_MAX / 16, SIZE_MAX / 10, SIZE_MAX / 2, SIZE_MAX - 1, SIZE_MAX };

#define FUZZ_HTTPHEAD_NMAXES \
	(sizeof fuzz_httphead_maxes / sizeof fuzz_httphead_maxes[0])

/* Inputs up to this long have httphead_end resumed from every point. */
#define FUZZ_HTTPHEAD_EVERY_FROM 512

/* Chunk size lines tried per input. */
#define FUZZ_HTTPHEAD_LINES 64

static bool
fuzz_httphead_is_tchar(unsigned char c)
{
	if (c >= 0x80 || c == '\0')
		return false;
	return isalnum(c) || strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool
fuzz_httphead_is_ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/*
 * The end, split anyhow: a call given the length of the last as from
 * answers as one scan of the same bytes would.
 */
static size_t
fuzz_httphead_end(const char *text, size_t len, uint8_t seed)
{
	struct fuzz_split split;
	size_t end = httphead_end(text, len, 0), off = 0, from = 0, r;

	FUZZ_CHECK(end <= len);
	if (end != 0) {
		/* It ends at the first empty line, after its LF. */
		FUZZ_CHECK(end >= 2 && text[end - 1] == '\n');
		FUZZ_CHECK(text[end - 2] == '\n' ||
		    (end >= 3 && text[end - 2] == '\r' &&
			text[end - 3] == '\n'));
		FUZZ_CHECK(httphead_end(text, end - 1, 0) == 0);
	}
	fuzz_split_init(&split, seed);
	while (off < len) {
		off += fuzz_split_next(&split, len - off);
		r = httphead_end(text, off, from);
		FUZZ_CHECK(r == (end != 0 && end <= off ? end : 0));
		if (r != 0)
			break;
		from = off;
	}
	/* Every from before the end (where no scan would have found it). */
	if (len <= FUZZ_HTTPHEAD_EVERY_FROM)
		for (size_t k = 0; k <= len && (end == 0 || k < end); k++)
			FUZZ_CHECK(httphead_end(text, len, k) == end);
	return end;
}

/* Whether p points into the len bytes at buf. */
static bool
fuzz_httphead_within(const char *p, const char *buf, size_t len)
{
	return p >= buf && p < buf + len;
}

/* What a successful parse gave holds together. */
static void
fuzz_httphead_check(const struct httphead *h, const char *buf, size_t len)
{
	FUZZ_CHECK(h->method == HTTPHEAD_GET || h->method == HTTPHEAD_POST ||
	    h->method == HTTPHEAD_DELETE || h->method == HTTPHEAD_OTHER);
	FUZZ_CHECK(h->minor == 0 || h->minor == 1);
	FUZZ_CHECK(h->path != NULL && h->path[0] == '/');
	FUZZ_CHECK(strcmp(h->path, "/") == 0 ||
	    fuzz_httphead_within(h->path, buf, len));
	for (const char *p = h->path; *p != '\0'; p++)
		FUZZ_CHECK(*p != '?' && *p != '#' && *p != ' ' && *p != '\t' &&
		    !fuzz_httphead_is_ctl((unsigned char)*p));
	FUZZ_CHECK(h->nfields <= HTTPHEAD_HEADERS_MAX);
	for (size_t i = 0; i < h->nfields; i++) {
		const char *name = h->fields[i].name;
		const char *value = h->fields[i].value;
		size_t vlen, j;

		FUZZ_CHECK(fuzz_httphead_within(name, buf, len));
		FUZZ_CHECK(fuzz_httphead_within(value, buf, len));
		FUZZ_CHECK(name[0] != '\0');
		FUZZ_CHECK(h->fields[i].name_len == strlen(name));
		for (const char *p = name; *p != '\0'; p++)
			FUZZ_CHECK(fuzz_httphead_is_tchar((unsigned char)*p));
		FUZZ_CHECK(strpbrk(name, ": \t") == NULL);
		vlen = strlen(value);
		FUZZ_CHECK(fuzz_httphead_within(value + vlen, buf, len));
		FUZZ_CHECK(vlen == 0 ||
		    (value[0] != ' ' && value[0] != '\t' &&
			value[vlen - 1] != ' ' && value[vlen - 1] != '\t'));
		for (const char *p = value; *p != '\0'; p++)
			FUZZ_CHECK(*p == '\t' ||
			    !fuzz_httphead_is_ctl((unsigned char)*p));
		/* The first field of a name (any case) is the one found. */
		for (j = 0; strcasecmp(h->fields[j].name, name) != 0; j++)
			;
		FUZZ_CHECK(httphead_field(h, name) == h->fields[j].value);
	}
}

/* Decimal digits without their leading zeros ("0" for all zeros). */
static const char *
fuzz_httphead_digits(const char *s)
{
	size_t n = strspn(s, "0");

	return s[n] == '\0' ? "0" : s + n;
}

/* The framing a parsed head asks for, under a limit. */
static void
fuzz_httphead_body(const struct httphead *h, size_t max)
{
	const char *cl = NULL, *te = NULL;
	size_t len = 0, ncl = 0, nte = 0;
	bool is_chunked = false;
	char want[32];
	int r;

	for (size_t i = 0; i < h->nfields; i++) {
		const struct httphead_field *f = &h->fields[i];

		if (strcasecmp(f->name, "Content-Length") == 0) {
			cl = cl != NULL ? cl : f->value;
			ncl++;
		} else if (strcasecmp(f->name, "Transfer-Encoding") == 0) {
			te = te != NULL ? te : f->value;
			nte++;
		}
	}
	r = httphead_body(h, max, &len, &is_chunked);
	FUZZ_CHECK(r == 0 || r == 400 || r == 413 || r == 501);
	if (r != 0)
		return;
	FUZZ_CHECK(len <= max);
	if (is_chunked) {
		/* One "chunked", no length, in HTTP/1.1. */
		FUZZ_CHECK(len == 0 && nte == 1 && ncl == 0 && h->minor == 1);
		FUZZ_CHECK(strcasecmp(te, "chunked") == 0);
	} else if (cl != NULL) {
		/* Digits only, and the length is what they say. */
		FUZZ_CHECK(ncl == 1 && nte == 0);
		FUZZ_CHECK(cl[0] != '\0' &&
		    strspn(cl, "0123456789") == strlen(cl));
		snprintf(want, sizeof want, "%zu", len);
		FUZZ_CHECK(strcmp(fuzz_httphead_digits(cl), want) == 0);
	} else {
		FUZZ_CHECK(len == 0 && nte == 0);
	}
}

/* A request head made again from what was parsed parses the same. */
static void
fuzz_httphead_again(const struct httphead *h)
{
	static const char *const methods[] = { "GET", "POST", "DELETE", "X" };
	struct httphead again;
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	FUZZ_CHECK(f != NULL);
	fprintf(f, "%s %s HTTP/1.%d\r\n", methods[h->method], h->path,
	    h->minor);
	for (size_t i = 0; i < h->nfields; i++)
		fprintf(f, "%s: %s\r\n", h->fields[i].name, h->fields[i].value);
	fputs("\r\n", f);
	fclose(f);
	FUZZ_CHECK(httphead_end(text, len, 0) == len);
	FUZZ_CHECK(httphead_parse(text, len, &again) == 0);
	FUZZ_CHECK(again.method == h->method);
	FUZZ_CHECK(strcmp(again.path, h->path) == 0);
	FUZZ_CHECK(again.minor == h->minor);
	FUZZ_CHECK(again.nfields == h->nfields);
	for (size_t i = 0; i < h->nfields; i++) {
		const struct httphead_field *a = &again.fields[i];

		FUZZ_CHECK(strcmp(a->name, h->fields[i].name) == 0);
		FUZZ_CHECK(strcmp(a->value, h->fields[i].value) == 0);
	}
	FUZZ_CHECK(httphead_keeps_alive(&again) == httphead_keeps_alive(h));
	free(text);
}

/* Parses a copy of exactly the head's bytes (it writes into them). */
static void
fuzz_httphead_parse(const char *text, size_t len, size_t max)
{
	struct httphead h;
	char *buf = malloc(len);
	int r;

	FUZZ_CHECK(buf != NULL);
	memcpy(buf, text, len);
	r = httphead_parse(buf, len, &h);
	FUZZ_CHECK(r == 0 || r == 400 || r == 431 || r == 505);
	if (r == 0) {
		fuzz_httphead_check(&h, buf, len);
		fuzz_httphead_body(&h, max);
		FUZZ_CHECK(!httphead_expects_continue(&h) || h.minor == 1);
		fuzz_httphead_again(&h);
	}
	free(buf);
}

/* A line as the value of a Content-Length, in a head of its own. */
static void
fuzz_httphead_length(const char *line, size_t len, size_t max)
{
	char text[128];
	int n;

	if (len > 64)
		return;
	n = snprintf(text, sizeof text,
	    "POST / HTTP/1.1\r\nContent-Length: %.*s\r\n\r\n", (int)len, line);
	FUZZ_CHECK(n > 0 && (size_t)n < sizeof text);
	/* The line has no LF, so its head ends where the text does. */
	FUZZ_CHECK(httphead_end(text, (size_t)n, 0) == (size_t)n);
	fuzz_httphead_parse(text, (size_t)n, max);
}

/* A chunk size line (without its line end). */
static void
fuzz_httphead_chunk(const char *line, size_t len, size_t max)
{
	size_t size = 0x5a5a, ndigits = 0, nzeros;
	char *copy, want[32];
	int r;

	/* Exactly len bytes, so that a read past them shows. */
	copy = malloc(len > 0 ? len : 1);
	FUZZ_CHECK(copy != NULL);
	memcpy(copy, line, len);
	r = httphead_chunk_size(copy, len, max, &size);
	free(copy);
	FUZZ_CHECK(r == 0 || r == -1);
	if (r != 0) {
		FUZZ_CHECK(size == 0x5a5a);
		return;
	}
	FUZZ_CHECK(size <= max);
	/* The hexadecimal digits that start the line are the size. */
	while (ndigits < len && isxdigit((unsigned char)line[ndigits]))
		ndigits++;
	FUZZ_CHECK(ndigits > 0);
	FUZZ_CHECK(ndigits == len || line[ndigits] == ';' ||
	    line[ndigits] == ' ' || line[ndigits] == '\t');
	for (nzeros = 0; nzeros < ndigits - 1 && line[nzeros] == '0'; nzeros++)
		;
	snprintf(want, sizeof want, "%zx", size);
	FUZZ_CHECK(strlen(want) == ndigits - nzeros &&
	    strncasecmp(want, line + nzeros, ndigits - nzeros) == 0);
}

/*
 * Byte 0 seeds the splits, byte 1 picks the limit; the rest is a head
 * and what follows it, whose lines are tried as chunk size lines and as
 * Content-Length values.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data + 2, *line, *nl;
	size_t len, end, max;
	uint8_t seed;

	if (size < 2)
		return 0;
	seed = data[0];
	max = fuzz_httphead_maxes[data[1] % FUZZ_HTTPHEAD_NMAXES];
	len = size - 2;
	end = fuzz_httphead_end(text, len, seed);
	if (end != 0)
		fuzz_httphead_parse(text, end, max);
	line = text + end;
	for (int i = 0; i < FUZZ_HTTPHEAD_LINES && line < text + len; i++) {
		size_t left = (size_t)(text + len - line), n;

		nl = memchr(line, '\n', left);
		n = nl != NULL ? (size_t)(nl - line) : left;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		fuzz_httphead_chunk(line, n, max);
		fuzz_httphead_length(line, n, max);
		line = nl != NULL ? nl + 1 : text + len;
	}
	return 0;
}
