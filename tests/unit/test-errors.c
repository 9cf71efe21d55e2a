/* SPDX-License-Identifier: ISC */
/* Unit tests of common/errors.c: the closed table of wire error kinds. */
#include "errors.h"
#include "tap.h"

/* The table of doc/control-protocol.md, which clients rely on. */
static const struct {
	enum errors_kind kind;
	int code;
	const char *name;
} documented[] = {
	{ ERRORS_NOT_FOUND, -32001, "not-found" },
	{ ERRORS_CONFLICT, -32002, "conflict" },
	{ ERRORS_DENIED, -32003, "denied" },
	{ ERRORS_UNAVAILABLE, -32004, "unavailable" },
	{ ERRORS_UPSTREAM, -32005, "upstream" },
	{ ERRORS_OUTCOME_UNKNOWN, -32006, "outcome-unknown" },
	{ ERRORS_STORAGE, -32007, "storage" },
	{ ERRORS_STALE_HANDLE, -32008, "stale-handle" },
	{ ERRORS_TIMEOUT, -32009, "timeout" },
	{ ERRORS_TOOL_CHANGED, -32010, "tool-changed" },
	{ ERRORS_TOOL_HELD, -32011, "tool-held" },
};

static void
test_documented_table(void)
{
	TAP_CHECK_INT(TAP_COUNT(documented), ERRORS_KIND_COUNT);
	for (size_t i = 0; i < TAP_COUNT(documented); i++) {
		TAP_CHECK_INT(errors_kind_code(documented[i].kind),
		    documented[i].code);
		TAP_CHECK_STR(errors_kind_name(documented[i].kind),
		    documented[i].name);
	}
}

static void
test_codes_unique_in_range(void)
{
	for (int k = 0; k < ERRORS_KIND_COUNT; k++) {
		int code = errors_kind_code(k);

		TAP_CHECK(code <= -32001 && code >= -32011,
		    "kind %d: expected a code in -32001..-32011, got %d", k,
		    code);
		for (int j = 0; j < k; j++)
			TAP_CHECK(errors_kind_code(j) != code,
			    "kinds %d and %d share code %d", j, k, code);
	}
}

static void
test_names_unique(void)
{
	for (int k = 0; k < ERRORS_KIND_COUNT; k++) {
		const char *name = errors_kind_name(k);

		TAP_REQUIRE(name != NULL && name[0] != '\0',
		    "kind %d: expected a name, got none", k);
		for (int j = 0; j < k; j++)
			TAP_CHECK(strcmp(errors_kind_name(j), name) != 0,
			    "kinds %d and %d share name \"%s\"", j, k, name);
	}
}

static void
test_round_trip(void)
{
	for (int k = 0; k < ERRORS_KIND_COUNT; k++) {
		TAP_CHECK_INT(errors_kind_from_name(errors_kind_name(k)), k);
		TAP_CHECK_INT(errors_kind_from_code(errors_kind_code(k)), k);
	}
}

static void
test_unknowns(void)
{
	static const char *const names[] = { "", "Not-Found", "not_found",
		"not-found ", "internal", "nope" };
	static const int codes[] = { 0, 1, -32000, -32012, -32600, -32601,
		-32700, 32001 };

	TAP_CHECK_INT(errors_kind_from_name(NULL), -1);
	for (size_t i = 0; i < TAP_COUNT(names); i++)
		TAP_CHECK(errors_kind_from_name(names[i]) == -1,
		    "name \"%s\": expected -1, got %d", names[i],
		    errors_kind_from_name(names[i]));
	for (size_t i = 0; i < TAP_COUNT(codes); i++)
		TAP_CHECK(errors_kind_from_code(codes[i]) == -1,
		    "code %d: expected -1, got %d", codes[i],
		    errors_kind_from_code(codes[i]));
}

static void
test_out_of_range_kind(void)
{
	/* A bad kind must not index past the table nor look like a kind. */
	TAP_CHECK_INT(
	    errors_kind_from_code(errors_kind_code(ERRORS_KIND_COUNT)), -1);
	TAP_CHECK_INT(
	    errors_kind_from_name(errors_kind_name(ERRORS_KIND_COUNT)), -1);
}

static const struct tap_test tests[] = {
	{ "codes and names match the protocol document",
	    test_documented_table },
	{ "every kind has a unique code in -32001..-32011",
	    test_codes_unique_in_range },
	{ "every kind has a unique name", test_names_unique },
	{ "from_name and from_code invert name and code", test_round_trip },
	{ "unknown names and codes give -1", test_unknowns },
	{ "an out-of-range kind maps to no kind", test_out_of_range_kind },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
