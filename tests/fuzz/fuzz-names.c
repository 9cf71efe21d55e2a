/* SPDX-License-Identifier: ISC */
/* Fuzzes common/names.c: image references, names from argv, tool handles. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "names.h"

#define FUZZ_NAMES_ARGV 8

/* An image reference normalizes once: the result is its own normal form. */
static void
fuzz_names_image(const char *ref)
{
	char *norm, *again, *cause = NULL, *name;
	int r;

	r = names_image_normalize(ref, &norm, &cause);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	FUZZ_CHECK((r == 0) == (cause == NULL));
	free(cause);
	if (r < 0)
		return;
	FUZZ_CHECK(strlen(norm) >= strlen(ref));
	FUZZ_CHECK(names_image_normalize(norm, &again, NULL) == 0);
	FUZZ_CHECK(strcmp(again, norm) == 0);
	/* Tagged or pinned by digest: ":latest" is added only when neither. */
	FUZZ_CHECK(strchr(norm, '@') != NULL ||
	    strrchr(norm, ':') > strrchr(norm, '/'));
	name = names_from_image(ref);
	FUZZ_CHECK(name == NULL || names_valid(name));
	free(name);
	free(again);
	free(norm);
}

/* A handle made of a valid server and a tool parses back to them. */
static void
fuzz_names_handle(const char *server, uint64_t gen, const char *tool)
{
	char *h, *s, *t;
	uint64_t g;

	if (!names_valid(server) || tool[0] == '\0')
		return;
	FUZZ_CHECK(strlen(server) <= NAMES_MAX);
	h = names_handle_format(server, gen, tool);
	FUZZ_CHECK(h != NULL);
	FUZZ_CHECK(names_handle_parse(h, &s, &g, &t) == 0);
	FUZZ_CHECK(strcmp(s, server) == 0 && g == gen && strcmp(t, tool) == 0);
	free(s);
	free(t);
	free(h);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *argv[FUZZ_NAMES_ARGV + 1];
	char *buf, *name, *s, *t;
	size_t n = 0, off = 0;
	uint64_t gen = 0, g;

	if (size < 8)
		return 0;
	memcpy(&gen, data, 8);
	/* The rest is strings separated by NUL bytes. */
	if ((buf = malloc(size - 8 + 1)) == NULL)
		return 0;
	memcpy(buf, data + 8, size - 8);
	buf[size - 8] = '\0';
	while (n < FUZZ_NAMES_ARGV && off <= size - 8) {
		argv[n++] = buf + off;
		off += strlen(buf + off) + 1;
	}
	argv[n] = NULL;
	fuzz_names_image(argv[0]);
	name = names_from_argv(argv);
	FUZZ_CHECK(name == NULL || names_valid(name));
	free(name);
	name = names_from_image(argv[0]);
	FUZZ_CHECK(name == NULL || names_valid(name));
	free(name);
	if (names_valid(argv[0]))
		FUZZ_CHECK(strlen(argv[0]) <= NAMES_MAX);
	fuzz_names_handle(argv[0], gen, n > 1 ? argv[1] : "tool");
	/* A handle that parses is made again by format. */
	if (names_handle_parse(argv[0], &s, &g, &t) == 0) {
		FUZZ_CHECK(names_valid(s) && t[0] != '\0');
		fuzz_names_handle(s, g, t);
		free(s);
		free(t);
	}
	free(buf);
	return 0;
}
