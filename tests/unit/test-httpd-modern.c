/* SPDX-License-Identifier: ISC */
/*
 * Tests of httpd-modern.c: what the HTTP front refuses of a 2026-07-28
 * request (its _meta, MCP-Protocol-Version, Mcp-Method and Mcp-Name), the
 * error each refusal is, and the HTTP status of an answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "httphead.h"
#include "httpd.h"
#include "mcpd-stubs.h"
#include "tap.h"

#define META                                                        \
	"\"_meta\": {\"io.modelcontextprotocol/protocolVersion\": " \
	"\"2026-07-28\", \"io.modelcontextprotocol/clientCapabilities\": {}}"

/* A request's head with "Name: value" strings (NULL-ended), parsed into h. */
static void
headers(struct httphead *h, char *text, size_t size, const char *const *lines)
{
	size_t n = (size_t)snprintf(text, size, "POST /mcp HTTP/1.1\r\n");

	for (size_t i = 0; lines[i] != NULL; i++)
		n += (size_t)snprintf(text + n, size - n, "%s\r\n", lines[i]);
	n += (size_t)snprintf(text + n, size - n, "\r\n");
	if (n >= size || httphead_parse(text, n, h) != 0)
		abort();
}

/* The refusal's error code for body and header lines, 0 when accepted. */
static int
refused(const char *body, const char *const *lines, json_t **ret)
{
	static struct httphead h;
	char text[4096];
	json_t *msg = json_loads(body, 0, NULL), *r;
	int code;

	headers(&h, text, sizeof text, lines);
	r = httpd_modern_refusal(&h, msg);
	code = r != NULL ?
	    (int)json_integer_value(json_object_get(json_object_get(r, "error"),
		"code")) :
	    0;
	if (ret != NULL)
		*ret = r;
	else
		json_decref(r);
	json_decref(msg);
	return code;
}

static void
test_what_is_modern(void)
{
	json_t *meta = json_loads("{\"params\": {" META "}}", 0, NULL);
	json_t *none = json_object();

	TAP_CHECK(httpd_modern_is("2026-07-28", none), "the header says so");
	TAP_CHECK(httpd_modern_is("v999.0.0", none),
	    "an unknown version is refused as the modern era refuses");
	TAP_CHECK(!httpd_modern_is("2025-11-25", none), "a 2025 header");
	TAP_CHECK(!httpd_modern_is(NULL, none), "no header, no _meta");
	TAP_CHECK(httpd_modern_is(NULL, meta), "the _meta says so");
	json_decref(meta);
	json_decref(none);
}

static void
test_a_good_request_passes(void)
{
	const char *const h[] = { "MCP-Protocol-Version: 2026-07-28",
		"Mcp-Method: tools/call", "Mcp-Name:   echo \t", NULL };

	TAP_CHECK_INT(
	    refused("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": "
		    "\"tools/call\", \"params\": {\"name\": \"echo\", " META
		    "}}",
		h, NULL),
	    0);
}

static void
test_meta_must_be_whole(void)
{
	const char *const h[] = { "MCP-Protocol-Version: 2026-07-28",
		"Mcp-Method: server/discover", NULL };
	json_t *r;

	TAP_CHECK_INT(refused("{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": "
			      "\"server/discover\", \"params\": {}}",
			  h, &r),
	    JSONRPC_INVALID_PARAMS);
	TAP_CHECK_INT(json_integer_value(json_object_get(r, "id")), 7);
	TAP_CHECK_INT(httpd_modern_status(r), 400);
	json_decref(r);
	TAP_CHECK_INT(refused("{\"jsonrpc\": \"2.0\", \"id\": 8, \"method\": "
			      "\"server/discover\", \"params\": {\"_meta\": "
			      "{\"io.modelcontextprotocol/protocolVersion\": "
			      "\"2026-07-28\"}}}",
			  h, NULL),
	    JSONRPC_INVALID_PARAMS);
}

static void
test_versions(void)
{
	const char *const mismatch[] = { "MCP-Protocol-Version: 2025-11-25",
		"Mcp-Method: tools/list", NULL };
	const char *const missing[] = { "Mcp-Method: tools/list", NULL };
	const char *const unknown[] = { "MCP-Protocol-Version: v9",
		"Mcp-Method: tools/list", NULL };
	json_t *r;

	TAP_CHECK_INT(refused("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": "
			      "\"tools/list\", \"params\": {" META "}}",
			  mismatch, NULL),
	    -32020);
	TAP_CHECK_INT(refused("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": "
			      "\"tools/list\", \"params\": {" META "}}",
			  missing, NULL),
	    -32020);
	TAP_CHECK_INT(refused("{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": "
			      "\"tools/list\", \"params\": {\"_meta\": {"
			      "\"io.modelcontextprotocol/protocolVersion\": "
			      "\"v9\", \"io.modelcontextprotocol/"
			      "clientCapabilities\": {}}}}",
			  unknown, &r),
	    -32022);
	TAP_CHECK_STR(json_string_value(json_array_get(
			  json_object_get(json_object_get(json_object_get(r,
							      "error"),
					      "data"),
			      "supported"),
			  0)),
	    "2026-07-28");
	TAP_CHECK_STR(json_string_value(json_object_get(
			  json_object_get(json_object_get(r, "error"), "data"),
			  "requested")),
	    "v9");
	TAP_CHECK_INT(httpd_modern_status(r), 400);
	json_decref(r);
}

static void
test_method_and_name_headers(void)
{
	const char *const wrong[] = { "MCP-Protocol-Version: 2026-07-28",
		"Mcp-Method: TOOLS/LIST", NULL };
	const char *const none[] = { "MCP-Protocol-Version: 2026-07-28", NULL };
	const char *const lower[] = { "mcp-protocol-version: 2026-07-28",
		"mcp-method: tools/list", NULL };
	const char *const no_name[] = { "MCP-Protocol-Version: 2026-07-28",
		"Mcp-Method: resources/read", NULL };
	const char *const other[] = { "MCP-Protocol-Version: 2026-07-28",
		"Mcp-Method: prompts/get", "Mcp-Name: other", NULL };
	const char *list = "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": "
			   "\"tools/list\", \"params\": {" META "}}";

	TAP_CHECK_INT(refused(list, wrong, NULL), -32020);
	TAP_CHECK_INT(refused(list, none, NULL), -32020);
	TAP_CHECK_INT(refused(list, lower, NULL), 0);
	TAP_CHECK_INT(refused("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": "
			      "\"resources/read\", \"params\": {\"uri\": "
			      "\"x://y\", " META "}}",
			  no_name, NULL),
	    -32020);
	TAP_CHECK_INT(
	    refused("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": "
		    "\"prompts/get\", \"params\": {\"name\": \"p\", " META "}}",
		other, NULL),
	    -32020);
}

static void
test_statuses(void)
{
	const char *cases[][2] = { { "{\"result\": {}}", "200" },
		{ "{\"error\": {\"code\": -32601}}", "404" },
		{ "{\"error\": {\"code\": -32602}}", "400" },
		{ "{\"error\": {\"code\": -32021}}", "400" },
		{ "{\"error\": {\"code\": -32004}}", "200" } };

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *m = json_loads(cases[i][0], 0, NULL);

		TAP_CHECK_INT(httpd_modern_status(m), atoi(cases[i][1]));
		json_decref(m);
	}
}

static const struct tap_test tests[] = {
	{ "what is of the 2026-07-28 era", test_what_is_modern },
	{ "a request with every header passes", test_a_good_request_passes },
	{ "_meta needs protocolVersion and clientCapabilities (-32602, 400)",
	    test_meta_must_be_whole },
	{ "header and _meta versions: -32020; an unknown one: -32022",
	    test_versions },
	{ "Mcp-Method and Mcp-Name must match the body (-32020)",
	    test_method_and_name_headers },
	{ "statuses of answers", test_statuses },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
