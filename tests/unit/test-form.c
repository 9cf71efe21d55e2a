/* SPDX-License-Identifier: ISC */
/* Unit tests of common/form.c: form bodies and queries, both ways. */
#include <stdlib.h>
#include <string.h>

#include "form.h"
#include "tap.h"

static void
test_encode(void)
{
	char *buf = NULL;

	TAP_CHECK_INT(form_add(&buf, "grant_type", "authorization_code"), 0);
	TAP_CHECK_INT(form_add(&buf, "redirect_uri",
			  "http://127.0.0.1:5/callback"),
	    0);
	TAP_CHECK_INT(form_add(&buf, "scope", "a b+c~"), 0);
	TAP_CHECK_INT(form_add(&buf, "skipped", NULL), 0);
	TAP_CHECK_STR(buf,
	    "grant_type=authorization_code&redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcallback&scope=a%20b%2Bc~");
	free(buf);
}

static void
test_parse(void)
{
	json_t *q = form_parse("code=abc&state=x%2By+z&iss=http%3A%2F%2Fh&e=");

	TAP_REQUIRE(q != NULL, "parsed");
	TAP_CHECK_STR(json_string_value(json_object_get(q, "code")), "abc");
	TAP_CHECK_STR(json_string_value(json_object_get(q, "state")), "x+y z");
	TAP_CHECK_STR(json_string_value(json_object_get(q, "iss")), "http://h");
	TAP_CHECK_STR(json_string_value(json_object_get(q, "e")), "");
	json_decref(q);
}

static void
test_refused(void)
{
	/* OAuth forbids repeats; bad escapes, NUL and bad UTF-8 are refused. */
	TAP_CHECK(form_parse("state=a&state=b") == NULL, "repeat");
	TAP_CHECK(form_parse("a=%4") == NULL, "short escape");
	TAP_CHECK(form_parse("a=%zz") == NULL, "bad escape");
	TAP_CHECK(form_parse("a=%00") == NULL, "NUL");
	TAP_CHECK(form_parse("a=%ff%fe") == NULL, "not UTF-8");
}

static void
test_round_trip(void)
{
	static const char *const values[] = { "", "plain", "é ü", "&=?#%+",
		"line\nbreak" };
	char *buf;
	json_t *q;

	for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
		buf = NULL;
		TAP_CHECK_INT(form_add(&buf, "k", values[i]), 0);
		q = form_parse(buf);
		TAP_CHECK_STR(json_string_value(json_object_get(q, "k")),
		    values[i]);
		json_decref(q);
		free(buf);
	}
}

static const struct tap_test tests[] = {
	{ "encoding", test_encode },
	{ "parsing", test_parse },
	{ "refusals", test_refused },
	{ "round trips", test_round_trip },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
