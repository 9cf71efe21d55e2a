/* SPDX-License-Identifier: ISC */
/* What the HTTP front checks of a 2026-07-28 request, and its statuses. */
#include <stdio.h>
#include <string.h>

#include "errors.h"
#include "httphead.h"
#include "httpd.h"
#include "jsonrpc.h"
#include "mcpd.h"

#define HTTPD_MODERN		  "2026-07-28"
#define HTTPD_HEADER_MISMATCH	  (-32020)
#define HTTPD_MISSING_CAPABILITY  (-32021)
#define HTTPD_UNSUPPORTED_VERSION (-32022)

static const char *const httpd_legacy_versions[] = { "2024-11-05", "2025-03-26",
	"2025-06-18", "2025-11-25", NULL };

static const char *
httpd_meta_version(const json_t *msg)
{
	return json_string_value(json_object_get(
	    json_object_get(json_object_get(msg, "params"), "_meta"),
	    "io.modelcontextprotocol/protocolVersion"));
}

bool
httpd_modern_is(const char *header, const json_t *msg)
{
	bool is_legacy = false;

	for (size_t i = 0; header != NULL && httpd_legacy_versions[i]; i++)
		if (strcmp(header, httpd_legacy_versions[i]) == 0)
			is_legacy = true;
	/* A version the legacy era does not know is the modern era's to refuse. */
	return (header != NULL && !is_legacy) ||
	    httpd_meta_version(msg) != NULL;
}

/* A header's value without the optional white space around it (RFC 9110). */
static bool
httpd_header_is(const char *value, const char *want)
{
	size_t len;

	if (value == NULL || want == NULL)
		return false;
	value += strspn(value, " \t");
	len = strlen(value);
	while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t'))
		len--;
	return len == strlen(want) && strncmp(value, want, len) == 0;
}

static json_t *
httpd_modern_error(const json_t *msg, int code, const char *text, json_t *data)
{
	json_t *id = json_object_get(msg, "id");

	return jsonrpc_error(json_object_get(msg, "method") != NULL ? id : NULL,
	    code, text, data);
}

json_t *
httpd_modern_refusal(const struct httphead *h, const json_t *msg)
{
	const json_t *params = json_object_get(msg, "params");
	const json_t *meta = json_object_get(params, "_meta");
	const char *method = json_string_value(json_object_get(msg, "method"));
	const char *header = httphead_field(h, "MCP-Protocol-Version");
	const char *version = httpd_meta_version(msg), *name = NULL;
	char text[256];

	if (version == NULL ||
	    json_object_get(meta,
		"io.modelcontextprotocol/clientCapabilities") == NULL)
		return httpd_modern_error(msg, JSONRPC_INVALID_PARAMS,
		    "Invalid params: _meta needs io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities",
		    NULL);
	if (header == NULL || strcmp(header, version) != 0) {
		snprintf(text, sizeof text,
		    "HeaderMismatch: MCP-Protocol-Version %.64s is not the _meta's %.64s",
		    header != NULL ? header : "(missing)", version);
		return httpd_modern_error(msg, HTTPD_HEADER_MISMATCH, text,
		    NULL);
	}
	if (strcmp(version, HTTPD_MODERN) != 0)
		return httpd_modern_error(msg, HTTPD_UNSUPPORTED_VERSION,
		    "Unsupported protocol version: mcpd speaks 2026-07-28, or 2025-11-25 and earlier through initialize",
		    json_pack("{s:[s], s:s}", "supported", HTTPD_MODERN,
			"requested", version));
	if (!httpd_header_is(httphead_field(h, "Mcp-Method"), method))
		return httpd_modern_error(msg, HTTPD_HEADER_MISMATCH,
		    "HeaderMismatch: the Mcp-Method header is missing or is not the body's method",
		    NULL);
	if (strcmp(method, "tools/call") == 0 ||
	    strcmp(method, "prompts/get") == 0)
		name = json_string_value(json_object_get(params, "name"));
	else if (strcmp(method, "resources/read") == 0)
		name = json_string_value(json_object_get(params, "uri"));
	if (name != NULL &&
	    !httpd_header_is(httphead_field(h, "Mcp-Name"), name))
		return httpd_modern_error(msg, HTTPD_HEADER_MISMATCH,
		    "HeaderMismatch: the Mcp-Name header is missing or is not the body's params.name or params.uri",
		    NULL);
	return NULL;
}

int
httpd_modern_status(const json_t *answer)
{
	const json_t *error = json_object_get(answer, "error");

	if (error == NULL)
		return 200;
	switch (json_integer_value(json_object_get(error, "code"))) {
	case JSONRPC_METHOD_NOT_FOUND:
		return 404;
	case JSONRPC_PARSE_ERROR:
	case JSONRPC_INVALID_REQUEST:
	case JSONRPC_INVALID_PARAMS:
	case HTTPD_HEADER_MISMATCH:
	case HTTPD_MISSING_CAPABILITY:
	case HTTPD_UNSUPPORTED_VERSION:
		return 400;
	default:
		return 200;
	}
}
