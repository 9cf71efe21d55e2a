/* SPDX-License-Identifier: ISC */
/* The names the gateway gives tools: <server>__<tool>, stable and valid. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"

#define GATEWAY_NAME_MAX  64 /* ^[a-zA-Z0-9_-]{1,64}$, as clients check */
#define GATEWAY_SEPARATOR "__"

/* FNV-1a of server NUL tool: the same on every run. */
static uint32_t
gateway_hash(const char *server, const char *tool)
{
	uint32_t h = 2166136261u;

	for (const char *p = server; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	h = (h ^ 0) * 16777619u;
	for (const char *p = tool; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h;
}

/* The name as given (prefixed or not), other characters as '_'. */
static char *
gateway_plain_name(const char *server, const char *tool, bool is_prefixed)
{
	char *name;

	xasprintf(&name, "%s%s%s", is_prefixed ? server : "",
	    is_prefixed ? GATEWAY_SEPARATOR : "", tool);
	for (char *p = name; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
			*p = '_';
	return name;
}

/* Too long, empty or taken: cut, and _ + 6 hex digits of the hash. */
static char *
gateway_short_name(const char *plain, const char *server, const char *tool)
{
	char *name;

	xasprintf(&name, "%.*s_%06x", GATEWAY_NAME_MAX - 7, plain,
	    gateway_hash(server, tool) & 0xffffff);
	return name;
}

void
gateway_names(json_t *all, bool is_prefixed)
{
	json_t *e, *counts;
	const char *server, *tool;
	char *plain;
	size_t i;

	counts = json_object();
	json_array_foreach(all, i, e) {
		server = json_string_value(json_object_get(e, "server"));
		tool = json_string_value(json_object_get(json_object_get(e,
							     "tool"),
		    "name"));
		plain = gateway_plain_name(server, tool, is_prefixed);
		json_object_set_new(e, "plain", json_string(plain));
		json_object_set_new(counts, plain,
		    json_integer(json_integer_value(json_object_get(counts,
				     plain)) +
			1));
		free(plain);
	}
	json_array_foreach(all, i, e) {
		const char *p = json_string_value(json_object_get(e, "plain"));
		char *name;

		server = json_string_value(json_object_get(e, "server"));
		tool = json_string_value(json_object_get(json_object_get(e,
							     "tool"),
		    "name"));
		if (strlen(p) == 0 || strlen(p) > GATEWAY_NAME_MAX ||
		    json_integer_value(json_object_get(counts, p)) > 1)
			name = gateway_short_name(p, server, tool);
		else
			name = xstrdup(p);
		json_object_set_new(e, "name", json_string(name));
		json_object_del(e, "plain");
		free(name);
	}
	json_decref(counts);
}
