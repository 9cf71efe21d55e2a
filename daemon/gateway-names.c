/* SPDX-License-Identifier: ISC */
/* The names the gateway gives tools: <server>__<tool>, stable and valid. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "log.h"
#include "fnv.h"
#include "mcpd.h"

#define GATEWAY_NAME_MAX  64 /* ^[a-zA-Z0-9_-]{1,64}$, as clients check */
#define GATEWAY_SEPARATOR "__"

/*
 * FNV-1a of server NUL tool (then NUL and the attempt in decimal, after
 * the first): the same on every run.
 */
static uint32_t
gateway_hash(const char *server, const char *tool, unsigned attempt)
{
	uint32_t h = fnv32_add(FNV32_INIT, server, strlen(server) + 1);
	char digits[16];

	h = fnv32_add(h, tool, strlen(tool));
	if (attempt == 0)
		return h;
	snprintf(digits, sizeof digits, "%u", attempt);
	h = fnv32_add(h, "", 1);
	return fnv32_add(h, digits, strlen(digits));
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

char *
gateway_name_plain(const char *server, const char *tool, bool is_prefixed)
{
	return gateway_plain_name(server, tool, is_prefixed);
}

/* Too long, empty or taken: cut, and _ + 6 hex digits of the hash. */
static char *
gateway_short_name(const char *plain, const char *server, const char *tool,
    unsigned attempt)
{
	char *name;

	xasprintf(&name, "%.*s_%06x", GATEWAY_NAME_MAX - 7, plain,
	    gateway_hash(server, tool, attempt) & 0xffffff);
	return name;
}

static const char *
gateway_names_tool(const json_t *e)
{
	return json_string_value(json_object_get(json_object_get(e, "tool"),
	    "name"));
}

void
gateway_names(json_t *all, bool is_prefixed)
{
	json_t *e, *counts, *taken;
	const char *server, *p;
	char *plain, *name;
	unsigned attempt;
	size_t i;

	counts = json_object();
	taken = json_object();
	json_array_foreach(all, i, e) {
		server = json_string_value(json_object_get(e, "server"));
		plain = gateway_plain_name(server, gateway_names_tool(e),
		    is_prefixed);
		json_object_set_new(e, "plain", json_string(plain));
		json_object_set_new(counts, plain,
		    json_integer(json_integer_value(json_object_get(counts,
				     plain)) +
			1));
		free(plain);
	}
	/* The names that fit as they are: one tool each. */
	json_array_foreach(all, i, e) {
		p = json_string_value(json_object_get(e, "plain"));
		if (strlen(p) == 0 || strlen(p) > GATEWAY_NAME_MAX ||
		    json_integer_value(json_object_get(counts, p)) > 1) {
			json_object_set_new(e, "is_cut", json_true());
			continue;
		}
		json_object_set(e, "name", json_object_get(e, "plain"));
		json_object_set_new(taken, p, json_true());
	}
	/*
	 * The others are cut and hashed; a cut name that is already given
	 * (another tool's as it is, or a cut one alike) is hashed again.
	 */
	json_array_foreach(all, i, e) {
		if (json_object_get(e, "is_cut") == NULL)
			continue;
		server = json_string_value(json_object_get(e, "server"));
		p = json_string_value(json_object_get(e, "plain"));
		for (attempt = 0;; attempt++) {
			name = gateway_short_name(p, server,
			    gateway_names_tool(e), attempt);
			if (json_object_get(taken, name) == NULL)
				break;
			free(name);
		}
		json_object_set_new(taken, name, json_true());
		json_object_set_new(e, "name", json_string(name));
		free(name);
	}
	json_array_foreach(all, i, e) {
		json_object_del(e, "plain");
		json_object_del(e, "is_cut");
	}
	json_decref(counts);
	json_decref(taken);
}
