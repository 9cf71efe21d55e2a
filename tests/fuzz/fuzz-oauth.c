/* SPDX-License-Identifier: ISC */
/*
 * Fuzzes what OAuth reads from servers: WWW-Authenticate challenges
 * (common/wwwauth.c) and form-encoded answers (common/form.c).
 */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "form.h"
#include "fuzz.h"
#include "wwwauth.h"

/* Every value is a string with no NUL; challenge names are lower-case. */
static void
fuzz_oauth_check_params(const json_t *p, bool is_lower)
{
	const char *k;
	json_t *v;

	FUZZ_CHECK(json_is_object(p));
	json_object_foreach((json_t *)(uintptr_t)p, k, v) {
		FUZZ_CHECK(json_is_string(v));
		FUZZ_CHECK(strlen(json_string_value(v)) ==
		    json_string_length(v));
		for (const char *c = k; is_lower && *c != '\0'; c++)
			FUZZ_CHECK(*c < 'A' || *c > 'Z');
	}
}

/* The pairs of a form parse encode and parse back to the same object. */
static void
fuzz_oauth_form_round_trip(const json_t *q)
{
	char *buf = NULL;
	json_t *again, *v;
	const char *k;

	json_object_foreach((json_t *)(uintptr_t)q, k, v)
		FUZZ_CHECK(form_add(&buf, k, json_string_value(v)) == 0);
	again = form_parse(buf != NULL ? buf : "");
	FUZZ_CHECK(again != NULL && json_equal(again, q));
	json_decref(again);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = strndup((const char *)data, size), *upper;
	json_t *a, *b, *q;

	if (text == NULL)
		return 0;
	a = wwwauth_params(text, "Bearer");
	b = wwwauth_params(text, "bEARER");
	/* Deterministic, and the scheme is compared without case. */
	FUZZ_CHECK((a == NULL) == (b == NULL));
	FUZZ_CHECK(a == NULL || json_equal(a, b));
	if (a != NULL)
		fuzz_oauth_check_params(a, true);
	json_decref(a);
	json_decref(b);
	/* A Bearer challenge before any text is found, whatever follows. */
	if ((upper = malloc(size + 32)) != NULL) {
		memcpy(upper, "Bearer realm=\"r\", ", 18);
		memcpy(upper + 18, text, strlen(text) + 1);
		a = wwwauth_params(upper, "Bearer");
		FUZZ_CHECK(a != NULL);
		/* ... and a repeat never replaces its first value. */
		FUZZ_CHECK(json_is_string(json_object_get(a, "realm")) &&
		    strcmp(json_string_value(json_object_get(a, "realm")),
			"r") == 0);
		fuzz_oauth_check_params(a, true);
		json_decref(a);
		free(upper);
	}
	if ((q = form_parse(text)) != NULL) {
		fuzz_oauth_check_params(q, false);
		fuzz_oauth_form_round_trip(q);
		json_decref(q);
	}
	free(text);
	return 0;
}
