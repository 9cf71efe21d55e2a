/* SPDX-License-Identifier: ISC */
/* Fuzzes the tool search index (common/toolsearch.c) with tools and queries. */
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "toolsearch.h"

#define FUZZ_TS_TOOLS 16 /* tools made of one input, at most */
#define FUZZ_TS_LIMIT 8

/*
 * The input is NUL-separated strings: the query, then for each tool its
 * name, description and one parameter's name. Every answer is within the
 * limit, of distinct indexes of added tools, the same when asked twice,
 * and a prefix of a longer answer.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s[1 + 3 * FUZZ_TS_TOOLS];
	size_t n = 0, off = 0, a[FUZZ_TS_LIMIT], b[FUZZ_TS_LIMIT], na, nb;
	struct toolsearch *ts;
	char *buf;
	json_t *t;

	if ((buf = malloc(size + 1)) == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	while (n < 1 + 3 * FUZZ_TS_TOOLS && off <= size) {
		s[n++] = buf + off;
		off += strlen(buf + off) + 1;
	}
	ts = toolsearch_new();
	for (size_t i = 1; i + 2 < n; i += 3) {
		t = json_pack("{s:s?, s:s?, s:{s:{s:{s:s?}}}}", "name", s[i],
		    "description", s[i + 1], "inputSchema", "properties",
		    s[i + 2], "description", s[i + 1]);
		if (t == NULL) /* not UTF-8: a server's JSON never is */
			continue;
		toolsearch_add(ts, "srv", NULL, t);
		json_decref(t);
	}
	na = toolsearch_find(ts, s[0], a, FUZZ_TS_LIMIT);
	FUZZ_CHECK(na <= FUZZ_TS_LIMIT && na <= toolsearch_size(ts));
	for (size_t i = 0; i < na; i++) {
		FUZZ_CHECK(a[i] < toolsearch_size(ts));
		for (size_t j = 0; j < i; j++)
			FUZZ_CHECK(a[i] != a[j]);
	}
	nb = toolsearch_find(ts, s[0], b, FUZZ_TS_LIMIT);
	FUZZ_CHECK(nb == na && memcmp(a, b, na * sizeof a[0]) == 0);
	nb = toolsearch_find(ts, s[0], b, 2);
	FUZZ_CHECK(nb == (na < 2 ? na : 2) &&
	    memcmp(a, b, nb * sizeof a[0]) == 0);
	toolsearch_free(ts);
	free(buf);
	return 0;
}
