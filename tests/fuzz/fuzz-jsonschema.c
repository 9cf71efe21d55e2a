/* SPDX-License-Identifier: ISC */
/* Fuzzes the JSON Schema validator (common/jsonschema.c): schema, NUL, instance. */
#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "jsonschema.h"

/* Checks instance against schema; the answer, and the same answer again. */
static int
fuzz_jsonschema_check(const json_t *schema, const json_t *instance)
{
	struct jsonschema *js;
	char *cause = NULL, *cause2 = NULL;
	int r, r2;

	if ((js = jsonschema_new(schema, &cause)) == NULL) {
		FUZZ_CHECK(errno == EINVAL && cause != NULL);
		free(cause);
		return -EINVAL;
	}
	r = jsonschema_check(js, instance, &cause);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOTSUP);
	FUZZ_CHECK((r == 0) == (cause == NULL));
	/* Checking changes nothing: the same answer, the same cause. */
	r2 = jsonschema_check(js, instance, &cause2);
	FUZZ_CHECK(r2 == r);
	FUZZ_CHECK(r == 0 || strcmp(cause, cause2) == 0);
	FUZZ_CHECK(jsonschema_validate(schema, instance, NULL) == r);
	if (r == -EINVAL && cause != NULL && strncmp(cause, "$", 1) != 0 &&
	    strstr(cause, "invalid schema") == NULL)
		FUZZ_CHECK(!"a cause starts with a JSON path");
	if (r == -EINVAL && strstr(cause, "invalid schema") != NULL)
		r = -EBADMSG; /* the schema's fault, not the instance's */
	free(cause);
	free(cause2);
	jsonschema_free(js);
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t schema_len = nul != NULL ? (size_t)(nul - data) : size;
	json_t *schema, *instance, *wrap;
	int r, r2;

	schema = json_loadb((const char *)data, schema_len, JSON_DECODE_ANY,
	    NULL);
	if (schema == NULL)
		return 0;
	/* No instance after the NUL: the schema checks itself. */
	instance = nul != NULL ?
	    json_loadb((const char *)nul + 1, size - schema_len - 1,
		JSON_DECODE_ANY, NULL) :
	    json_incref(schema);
	if (instance == NULL) {
		json_decref(schema);
		return 0;
	}
	r = fuzz_jsonschema_check(schema, instance);
	if (json_is_true(schema))
		FUZZ_CHECK(r == 0);
	if (json_is_false(schema))
		FUZZ_CHECK(r == -EINVAL);
	/*
	 * Without references (which the wrapper's root would change), "not"
	 * inverts and a one-branch allOf or anyOf agrees.
	 */
	if (memchr(data, '$', schema_len) == NULL && (r == 0 || r == -EINVAL)) {
		wrap = json_pack("{s:O}", "not", schema);
		r2 = fuzz_jsonschema_check(wrap, instance);
		FUZZ_CHECK(r2 == (r == 0 ? -EINVAL : 0));
		json_decref(wrap);
		wrap = json_pack("{s:[O]}", "allOf", schema);
		FUZZ_CHECK(fuzz_jsonschema_check(wrap, instance) == r);
		json_decref(wrap);
		wrap = json_pack("{s:[O]}", "anyOf", schema);
		FUZZ_CHECK(fuzz_jsonschema_check(wrap, instance) == r);
		json_decref(wrap);
	}
	json_decref(instance);
	json_decref(schema);
	return 0;
}
