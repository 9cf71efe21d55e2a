/* SPDX-License-Identifier: ISC */
/* Unit tests of common/toolsearch.c, and its quality on fixtures/toolsearch. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "toolsearch.h"

#define FIXTURES "tests/fixtures/toolsearch/"

static json_t *
test_tool(const char *name, const char *description, const char *param)
{
	json_t *t = json_pack("{s:s, s:s, s:{s:s, s:{}}}", "name", name,
	    "description", description, "inputSchema", "type", "object",
	    "properties");

	if (param != NULL)
		json_object_set_new(json_object_get(json_object_get(t,
							"inputSchema"),
					"properties"),
		    param, json_pack("{s:s}", "type", "string"));
	return t;
}

static size_t
test_first(struct toolsearch *ts, const char *query)
{
	size_t idx[1];

	return toolsearch_find(ts, query, idx, 1) == 1 ? idx[0] : SIZE_MAX;
}

static void
test_words(void)
{
	struct toolsearch *ts = toolsearch_new();
	const char *tools[][3] = {
		{ "getTinyImage", "Returns a picture", NULL },
		{ "HTMLParser", "Parses markup", NULL },
		{ "list_entries", "Lists the entries of a folder", NULL },
		{ "remove-thing", "Takes it away", "repo_path" },
		{ "take_screenshot", "Captures the page", NULL },
	};
	json_t *t;
	size_t i, idx[8];

	for (i = 0; i < TAP_COUNT(tools); i++) {
		t = test_tool(tools[i][0], tools[i][1], tools[i][2]);
		toolsearch_add(ts, i == 3 ? "git" : "srv", NULL, t);
		json_decref(t);
	}
	TAP_CHECK_INT((int)toolsearch_size(ts), 5);
	/* camelCase humps, acronyms, _ and - split names. */
	TAP_CHECK_INT((int)test_first(ts, "tiny"), 0);
	TAP_CHECK_INT((int)test_first(ts, "parser"), 1);
	TAP_CHECK_INT((int)test_first(ts, "html"), 1);
	TAP_CHECK_INT((int)test_first(ts, "thing"), 3);
	/* Plurals and verb forms meet. */
	TAP_CHECK_INT((int)test_first(ts, "entry"), 2);
	TAP_CHECK_INT((int)test_first(ts, "listing"), 2);
	/* A prefix of three letters or more finds the longer word. */
	TAP_CHECK_INT((int)test_first(ts, "screen"), 4);
	TAP_CHECK_INT((int)toolsearch_find(ts, "sc", idx, 8), 0);
	/* Parameter names and the server's name count. */
	TAP_CHECK_INT((int)test_first(ts, "repo"), 3);
	TAP_CHECK_INT((int)test_first(ts, "git"), 3);
	/* Stop words and nothing at all match nothing. */
	TAP_CHECK_INT((int)toolsearch_find(ts, "the of and", idx, 8), 0);
	TAP_CHECK_INT((int)toolsearch_find(ts, "", idx, 8), 0);
	TAP_CHECK_INT((int)toolsearch_find(ts, "zebra", idx, 8), 0);
	TAP_CHECK_INT((int)toolsearch_find(ts, "tiny", idx, 0), 0);
	toolsearch_free(ts);
	toolsearch_free(NULL);
}

static void
test_order(void)
{
	struct toolsearch *ts = toolsearch_new();
	json_t *t;
	size_t idx[8], n;

	/* Equal scores keep the order the tools were added in. */
	for (int i = 0; i < 4; i++) {
		t = test_tool(i == 2 ? "fetch_page" : "same", "Fetches a page",
		    NULL);
		toolsearch_add(ts, "s", NULL, t);
		json_decref(t);
	}
	n = toolsearch_find(ts, "page", idx, 8);
	TAP_CHECK_INT((int)n, 4);
	TAP_CHECK_INT((int)idx[0], 2); /* in its name too: first */
	TAP_CHECK_INT((int)idx[1], 0);
	TAP_CHECK_INT((int)idx[2], 1);
	TAP_CHECK_INT((int)idx[3], 3);
	/* At most limit, the best of them. */
	TAP_CHECK_INT((int)toolsearch_find(ts, "page", idx, 2), 2);
	TAP_CHECK_INT((int)idx[0], 2);
	TAP_CHECK_INT((int)idx[1], 0);
	toolsearch_free(ts);
}

static bool
test_has(const json_t *relevant, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach(relevant, i, v)
		if (strcmp(json_string_value(v), name) == 0)
			return true;
	return false;
}

/*
 * The fixture's 30 queries (written before the ranking was tuned):
 * precision@5 (relevant tools in the first five, over min(5, relevant))
 * averages at least 0.8, and a relevant tool is in the first three for at
 * least 90% of the queries.
 */
static void
test_quality(void)
{
	json_error_t err;
	json_t *tools = json_load_file(FIXTURES "tools.json", 0, &err);
	json_t *queries = json_load_file(FIXTURES "queries.json", 0, &err);
	struct toolsearch *ts = toolsearch_new();
	char **names;
	size_t i, j, n, idx[5], top3 = 0, hits;
	double p5 = 0, want;
	json_t *e, *q, *rel;

	TAP_REQUIRE(tools != NULL && queries != NULL, "%s", err.text);
	TAP_CHECK(json_array_size(tools) >= 200, "%zu tools",
	    json_array_size(tools));
	TAP_CHECK_INT((int)json_array_size(queries), 30);
	names = calloc(json_array_size(tools), sizeof *names);
	json_array_foreach(tools, i, e) {
		const char *server = json_string_value(json_object_get(e,
		    "server"));
		json_t *tool = json_object_get(e, "tool");

		if (asprintf(&names[i], "%s__%s", server,
			json_string_value(json_object_get(tool, "name"))) < 0)
			abort();
		toolsearch_add(ts, server, names[i], tool);
	}
	json_array_foreach(queries, i, q) {
		rel = json_object_get(q, "relevant");
		n = toolsearch_find(ts,
		    json_string_value(json_object_get(q, "query")), idx, 5);
		for (hits = 0, j = 0; j < n; j++)
			hits += test_has(rel, names[idx[j]]);
		want = json_array_size(rel) < 5 ? json_array_size(rel) : 5;
		p5 += hits / want;
		for (j = 0; j < n && j < 3; j++)
			if (test_has(rel, names[idx[j]])) {
				top3++;
				break;
			}
		if (hits < want || j == 3 || j == n)
			printf(
			    "# %s: %zu of %.0f relevant in the first 5 (%s%s%s)\n",
			    json_string_value(json_object_get(q, "query")),
			    hits, want, n > 0 ? names[idx[0]] : "",
			    n > 1 ? ", " : "", n > 1 ? names[idx[1]] : "");
	}
	p5 /= json_array_size(queries);
	printf(
	    "# search quality over %zu tools, %zu queries: precision@5 %.3f, relevant in the first 3: %zu of %zu (%.0f%%)\n",
	    json_array_size(tools), json_array_size(queries), p5, top3,
	    json_array_size(queries), 100.0 * top3 / json_array_size(queries));
	TAP_CHECK(p5 >= 0.8, "precision@5 %.3f", p5);
	TAP_CHECK(top3 * 10 >= json_array_size(queries) * 9,
	    "relevant in the first 3: %zu", top3);
	json_array_foreach(tools, i, e)
		free(names[i]);
	free(names);
	toolsearch_free(ts);
	json_decref(tools);
	json_decref(queries);
}

static const struct tap_test tests[] = {
	{ "names split at _ - and camelCase, stems, prefixes, params",
	    test_words },
	{ "best first, ties in the order added, at most limit", test_order },
	{ "precision@5 >= 0.8 and top-3 >= 90% on the fixture", test_quality },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
