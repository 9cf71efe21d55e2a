/* SPDX-License-Identifier: ISC */
/* Fuzzes the resolver (common/resolve.c): records to load params. */
#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "resolve.h"

static bool
fuzz_resolve_has(const char *name)
{
	return name[0] == 'u';
}

/* What a plan resolves to is exactly one of a command and a target. */
static void
fuzz_resolve_check(const struct resolve_plan *p)
{
	const json_t *command = json_object_get(p->params, "command");
	const json_t *target = json_object_get(p->params, "target");
	const json_t *v;
	size_t i;

	FUZZ_CHECK((command != NULL) != (target != NULL));
	FUZZ_CHECK(command == NULL || json_array_size(command) > 0);
	json_array_foreach(command, i, v)
		FUZZ_CHECK(json_is_string(v));
	FUZZ_CHECK(target == NULL || json_is_string(target));
	FUZZ_CHECK(json_is_array(p->missing) && json_is_array(p->notes));
	FUZZ_CHECK(p->kind != NULL);
	if (strcmp(p->kind, "remote") == 0)
		FUZZ_CHECK(strncasecmp(json_string_value(target), "https://",
			       8) == 0);
	if ((v = json_object_get(p->params, "name")) != NULL)
		FUZZ_CHECK(json_is_string(v));
}

/* The first byte picks the resolver and the options; the rest is JSON. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct resolve_input in = { 0 };
	struct resolve_plan p;
	json_t *record, *env, *headers;
	char *cause = NULL;
	int r;

	if (size < 1)
		return 0;
	record = json_loadb((const char *)data + 1, size - 1, 0, NULL);
	if (record == NULL)
		return 0;
	env = json_pack("{s:s}", "API_KEY", "k");
	headers = json_pack("{s:s}", "Authorization", "Bearer t");
	in.prefer_remote = data[0] & 1;
	in.env = data[0] & 2 ? env : NULL;
	in.headers = data[0] & 4 ? headers : NULL;
	in.has_program = data[0] & 8 ? fuzz_resolve_has : NULL;
	r = data[0] & 16 ? resolve_docker(record, &in, &p, &cause) :
			   resolve_registry(record, &in, &p, &cause);
	if (r == 0) {
		fuzz_resolve_check(&p);
		resolve_plan_clear(&p);
		FUZZ_CHECK(cause == NULL);
	} else {
		FUZZ_CHECK(r == -EINVAL || r == -ENOTSUP);
		FUZZ_CHECK(cause != NULL);
	}
	free(cause);
	json_decref(record);
	json_decref(env);
	json_decref(headers);
	return 0;
}
