/* SPDX-License-Identifier: ISC */
/* Times common/policyrules.c: deciding one call against N rules (issue 24: 1,000 rules, p50 <= 5 us). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchtime.h"
#include "policyrules.h"

#define BENCH_CALLS 20000 /* decisions timed */

/*
 * n rules of four kinds, one server each (s0, s1, ...): by server; by a
 * glob; by server and annotation; by a glob and annotation.
 */
static json_t *
bench_rules(size_t n)
{
	json_t *rules = json_array();
	char server[32], glob[64];

	for (size_t i = 0; i < n; i++) {
		snprintf(server, sizeof server, "s%zu", i);
		switch (i % 4) {
		case 0:
			json_array_append_new(rules,
			    json_pack("{s:s, s:s}", "effect", "deny", "server",
				server));
			break;
		case 1:
			snprintf(glob, sizeof glob, "%s__write*", server);
			json_array_append_new(rules,
			    json_pack("{s:s, s:s}", "effect", "deny", "tool",
				glob));
			break;
		case 2:
			json_array_append_new(rules,
			    json_pack("{s:s, s:s, s:{s:b}}", "effect", "allow",
				"server", server, "annotations", "readOnlyHint",
				1));
			break;
		default:
			snprintf(glob, sizeof glob, "%s__*", server);
			json_array_append_new(rules,
			    json_pack("{s:s, s:s, s:{s:b}}", "effect", "deny",
				"tool", glob, "annotations", "destructiveHint",
				1));
		}
	}
	return rules;
}

int
main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000, k, hits = 0;
	json_t *rules = bench_rules(n), *ann;
	struct policyrules *pr;
	char server[32], name[96], *cause = NULL;
	double *us, t0;
	unsigned bits;

	if (policyrules_new(rules, POLICYRULES_ALLOW, &pr, &cause) < 0) {
		fprintf(stderr, "policy-bench: %s\n", cause);
		return 1;
	}
	ann = json_pack("{s:b}", "readOnlyHint", 0);
	us = calloc(BENCH_CALLS, sizeof *us);
	/*
	 * Calls spread over servers s0 ... s(2n-1): half match a rule
	 * somewhere in the list, half match none (every rule is tried).
	 */
	for (k = 0; k < BENCH_CALLS; k++) {
		snprintf(server, sizeof server, "s%zu", (k * 7919) % (2 * n));
		snprintf(name, sizeof name, "%s__%s", server,
		    k % 3 == 0 ? "write_file" : "read_file");
		t0 = bench_now_us();
		bits = policyrules_bits(ann);
		hits += policyrules_match(pr, NULL, server, name, bits) > 0;
		us[k] = bench_now_us() - t0;
	}
	qsort(us, BENCH_CALLS, sizeof *us, bench_cmp);
	printf("rules=%zu decide_p50_us=%.2f decide_p99_us=%.2f matched=%zu\n",
	    n, us[BENCH_CALLS / 2], us[BENCH_CALLS * 99 / 100], hits);
	free(us);
	json_decref(ann);
	policyrules_free(pr);
	json_decref(rules);
	return 0;
}
