/* SPDX-License-Identifier: ISC */
/* Small jansson helpers that mcpd and mcpctl share. */
#include "jsonutil.h"
#include "xalloc.h"

char *
jsonutil_string_dup(const json_t *obj, const char *key)
{
	const char *v = json_string_value(json_object_get(obj, key));

	return v != NULL ? xstrdup(v) : NULL;
}
