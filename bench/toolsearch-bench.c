/* SPDX-License-Identifier: ISC */
/* Times common/toolsearch.c: building an index of N tools, and finding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchtime.h"
#include "toolsearch.h"

#define BENCH_ROUNDS 200 /* each query this many times */

/* The fixture's tools, copied under servers s0, s1, ... until n. */
static struct toolsearch *
bench_index(const json_t *tools, size_t n)
{
	struct toolsearch *ts = toolsearch_new();
	char server[64], name[256];
	const json_t *e;

	for (size_t i = 0; i < n; i++) {
		e = json_array_get(tools, i % json_array_size(tools));
		snprintf(server, sizeof server, "%s%zu",
		    json_string_value(json_object_get(e, "server")),
		    i / json_array_size(tools));
		snprintf(name, sizeof name, "%s__%s", server,
		    json_string_value(json_object_get(json_object_get(e,
							  "tool"),
			"name")));
		toolsearch_add(ts, server, name, json_object_get(e, "tool"));
	}
	return ts;
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/fixtures/toolsearch";
	size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000;
	char path[4096];
	json_error_t err;
	json_t *tools, *queries, *q;
	struct toolsearch *ts;
	size_t i, r, k = 0, idx[5], nq;
	double *us, t0, build_us[11];

	snprintf(path, sizeof path, "%s/tools.json", dir);
	if ((tools = json_load_file(path, 0, &err)) == NULL) {
		fprintf(stderr, "toolsearch-bench: %s: %s\n", path, err.text);
		return 1;
	}
	snprintf(path, sizeof path, "%s/queries.json", dir);
	if ((queries = json_load_file(path, 0, &err)) == NULL) {
		fprintf(stderr, "toolsearch-bench: %s: %s\n", path, err.text);
		return 1;
	}
	/* Building: the median of 11 (what a change of the view costs). */
	for (r = 0; r < 11; r++) {
		t0 = bench_now_us();
		ts = bench_index(tools, n);
		toolsearch_find(ts, "warm", idx, 1); /* settles the index */
		build_us[r] = bench_now_us() - t0;
		toolsearch_free(ts);
	}
	qsort(build_us, 11, sizeof build_us[0], bench_cmp);
	ts = bench_index(tools, n);
	nq = json_array_size(queries);
	us = calloc(nq * BENCH_ROUNDS, sizeof *us);
	for (r = 0; r < BENCH_ROUNDS; r++)
		json_array_foreach(queries, i, q) {
			t0 = bench_now_us();
			toolsearch_find(ts,
			    json_string_value(json_object_get(q, "query")), idx,
			    5);
			us[k++] = bench_now_us() - t0;
		}
	qsort(us, k, sizeof *us, bench_cmp);
	printf("tools=%zu build_us=%.0f find_p50_us=%.1f find_p99_us=%.1f\n", n,
	    build_us[5], us[k / 2], us[k * 99 / 100]);
	free(us);
	toolsearch_free(ts);
	json_decref(tools);
	json_decref(queries);
	return 0;
}
