/* SPDX-License-Identifier: ISC */
/* The 2026-07-28 protocol era: discovery, request _meta, tool headers. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "log.h"
#include "mcpd.h"

json_t *
era_meta(const char *version)
{
	return json_pack("{s:s, s:{}, s:{s:s, s:s}}",
	    "io.modelcontextprotocol/protocolVersion", version,
	    ERA_CLIENT_CAPABILITIES_KEY, "io.modelcontextprotocol/clientInfo",
	    "name", "mcpd", "version", MCPD_VERSION);
}

/*
 * Adds the era's _meta to a request's params (made when absent). Client
 * capabilities already there stay: they are a caller's, whose request
 * mcpd passes on, and it is the caller that answers input requests.
 */
json_t *
era_with_meta(json_t *params, const char *version)
{
	json_t *meta, *add = era_meta(version);

	if (params == NULL)
		params = json_object();
	if ((meta = json_object_get(params, "_meta")) == NULL)
		json_object_set(params, "_meta", add);
	else {
		if (json_object_get(meta, ERA_CLIENT_CAPABILITIES_KEY) != NULL)
			json_object_del(add, ERA_CLIENT_CAPABILITIES_KEY);
		json_object_update(meta, add);
	}
	json_decref(add);
	return params;
}

bool
era_is_modern_request(const json_t *params)
{
	const char *v =
	    json_string_value(json_object_get(json_object_get(params, "_meta"),
		"io.modelcontextprotocol/protocolVersion"));

	return v != NULL && strcmp(v, ERA_MODERN) == 0;
}

bool
era_lists_version(const json_t *versions, const char *version)
{
	size_t i;
	json_t *v;

	json_array_foreach(versions, i, v)
		if (json_is_string(v) &&
		    strcmp(json_string_value(v), version) == 0)
			return true;
	return false;
}

json_t *
era_server_info(const json_t *result)
{
	json_t *info = json_object_get(result, "serverInfo");

	if (info == NULL)
		info = json_object_get(json_object_get(result, "_meta"),
		    "io.modelcontextprotocol/serverInfo");
	return info;
}

/* An HTTP token (RFC 9110): what a header name may be made of. */
static bool
era_is_token(const char *s)
{
	if (s == NULL || *s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (!isascii((unsigned char)*s) ||
		    (!isalnum((unsigned char)*s) &&
			strchr("!#$%&'*+-.^_`|~", *s) == NULL))
			return false;
	return true;
}

static bool
era_type_may_carry(const json_t *schema)
{
	const char *type = json_string_value(json_object_get(schema, "type"));

	return type != NULL &&
	    (strcmp(type, "string") == 0 || strcmp(type, "integer") == 0 ||
		strcmp(type, "boolean") == 0);
}

bool
era_tool_headers_valid(const json_t *tool, char **why)
{
	json_t *props = json_object_get(json_object_get(tool, "inputSchema"),
	    "properties");
	json_t *seen = json_object(), *prop, *h;
	const char *key, *name;
	bool ok = true;
	char lower[256];

	json_object_foreach(props, key, prop) {
		if ((h = json_object_get(prop, "x-mcp-header")) == NULL)
			continue;
		name = json_string_value(h);
		if (!era_is_token(name) || strlen(name) >= sizeof lower ||
		    !era_type_may_carry(prop)) {
			ok = false;
			break;
		}
		for (size_t i = 0; i <= strlen(name); i++)
			lower[i] = tolower((unsigned char)name[i]);
		if (json_object_get(seen, lower) != NULL) {
			ok = false;
			break;
		}
		json_object_set_new(seen, lower, json_true());
	}
	json_decref(seen);
	if (!ok && why != NULL)
		xasprintf(why, "property %s has an invalid x-mcp-header", key);
	return ok;
}

/* Whether a header value must travel as =?base64?...?= (SEP-2243). */
static bool
era_needs_base64(const char *v)
{
	size_t n = strlen(v);

	if (n > 0 &&
	    (isspace((unsigned char)v[0]) || isspace((unsigned char)v[n - 1])))
		return true;
	for (; *v != '\0'; v++)
		if ((unsigned char)*v < 0x20 || (unsigned char)*v > 0x7e)
			return true;
	return false;
}

/* The header text of one argument, or NULL when it carries none. */
static char *
era_param_value(const json_t *v)
{
	const char *s;
	char *out, *b64;
	size_t n, len;

	if (json_is_boolean(v))
		return xstrdup(json_is_true(v) ? "true" : "false");
	if (json_is_integer(v)) {
		xasprintf(&out, "%lld", (long long)json_integer_value(v));
		return out;
	}
	if (!json_is_string(v))
		return NULL;
	s = json_string_value(v);
	if (!era_needs_base64(s))
		return xstrdup(s);
	len = json_string_length(v);
	n = sodium_base64_encoded_len(len, sodium_base64_VARIANT_ORIGINAL);
	b64 = xmalloc(n);
	sodium_bin2base64(b64, n, (const unsigned char *)s, len,
	    sodium_base64_VARIANT_ORIGINAL);
	xasprintf(&out, "=?base64?%s?=", b64);
	free(b64);
	return out;
}

/* Mcp-Param-<x-mcp-header> for each annotated, non-null argument. */
static void
era_param_headers(json_t *headers, const json_t *tool, const json_t *args)
{
	json_t *props = json_object_get(json_object_get(tool, "inputSchema"),
	    "properties");
	const char *key, *name;
	json_t *prop;
	char header[300], *value;

	json_object_foreach(props, key, prop) {
		name = json_string_value(json_object_get(prop, "x-mcp-header"));
		if (name == NULL || strlen(name) > 256 ||
		    (value = era_param_value(json_object_get(args, key))) ==
			NULL)
			continue;
		snprintf(header, sizeof header, "Mcp-Param-%s", name);
		json_object_set_new(headers, header, json_string(value));
		free(value);
	}
}

json_t *
era_http_headers(const json_t *msg, const json_t *tool)
{
	const json_t *params = json_object_get(msg, "params");
	const char *version =
	    json_string_value(json_object_get(json_object_get(params, "_meta"),
		"io.modelcontextprotocol/protocolVersion"));
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *headers, *name;

	if (version == NULL || method == NULL)
		return NULL;
	headers = json_pack("{s:s, s:s}", "MCP-Protocol-Version", version,
	    "Mcp-Method", method);
	name = json_object_get(params,
	    strcmp(method, "resources/read") == 0 ? "uri" : "name");
	if (json_is_string(name) &&
	    (strcmp(method, "tools/call") == 0 ||
		strcmp(method, "resources/read") == 0 ||
		strcmp(method, "prompts/get") == 0) &&
	    !era_needs_base64(json_string_value(name)))
		json_object_set(headers, "Mcp-Name", name);
	if (tool != NULL && strcmp(method, "tools/call") == 0)
		era_param_headers(headers, tool,
		    json_object_get(params, "arguments"));
	return headers;
}
