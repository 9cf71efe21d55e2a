/* SPDX-License-Identifier: ISC */
/* Unit tests of common/jsonutil.c. */
#include <stdlib.h>

#include "jsonutil.h"
#include "tap.h"

static void
test_string_dup(void)
{
	json_t *obj = json_pack("{s:s, s:i, s:n, s:s}", "name", "x", "n", 1,
	    "none", "empty", "");
	char *v;

	v = jsonutil_string_dup(obj, "name");
	TAP_CHECK_STR(v, "x");
	free(v);
	v = jsonutil_string_dup(obj, "empty");
	TAP_CHECK_STR(v, "");
	free(v);
	TAP_CHECK(jsonutil_string_dup(obj, "n") == NULL,
	    "an integer is no string");
	TAP_CHECK(jsonutil_string_dup(obj, "none") == NULL,
	    "null is no string");
	TAP_CHECK(jsonutil_string_dup(obj, "absent") == NULL,
	    "an absent member is NULL");
	TAP_CHECK(jsonutil_string_dup(NULL, "name") == NULL, "no object: NULL");
	json_decref(obj);
}

static const struct tap_test tests[] = {
	{ "a string member is copied, anything else is NULL", test_string_dup },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
