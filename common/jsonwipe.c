/* SPDX-License-Identifier: ISC */
/* Wiping jansson strings in place before their memory goes back. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "jsonwipe.h"

/*
 * Wipes the strings of v; with is_unshared_only, only those that nothing
 * but their parent holds (refcount 1), and nothing under a value held
 * elsewhere. jansson's string bytes are its own malloc'd buffer, never a
 * literal, so writing through the const that json_string_value() returns
 * is safe; doing so is the only way to reach them before json_decref()
 * frees them unwiped.
 */
static void
jsonwipe_walk(json_t *v, bool is_unshared_only)
{
	const char *key;
	json_t *item;
	size_t i;

	if (json_is_string(v)) {
		explicit_bzero((char *)(uintptr_t)json_string_value(v),
		    json_string_length(v));
		return;
	}
	json_object_foreach(v, key, item)
		if (!is_unshared_only || item->refcount == 1)
			jsonwipe_walk(item, is_unshared_only);
	json_array_foreach(v, i, item)
		if (!is_unshared_only || item->refcount == 1)
			jsonwipe_walk(item, is_unshared_only);
}

void
jsonwipe_strings(json_t *v)
{
	jsonwipe_walk(v, false);
}

void
jsonwipe_decref(json_t *v)
{
	if (v == NULL)
		return;
	if (v->refcount == 1)
		jsonwipe_walk(v, true);
	json_decref(v);
}
