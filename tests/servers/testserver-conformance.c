/* SPDX-License-Identifier: ISC */
/*
 * mcp-testserver --conformance: the tools, prompts and resources the
 * official conformance harness's server scenarios ask of a server (tsc_).
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testserver.h"

/* A 1x1 red PNG and 8 samples of 8 kHz silence as WAV, in base64. */
#define TSC_PNG                                                           \
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8A" \
	"AAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
#define TSC_WAV                                                           \
	"UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgIC" \
	"AgICAgA=="
#define TSC_STEP_US 50000 /* between log or progress messages */

/* A request this server sent its client during a call, not answered yet. */
struct tsc_asked {
	struct tsc_asked *next;
	char id[32];
	json_t *call_id;
	struct ts_conn *conn;
	json_t *(*done)(json_t *answer); /* the call's result from the answer */
};

static struct tsc_asked *tsc_asked_list;
static long tsc_nasked;

struct tsc_tool {
	const char *name;
	const char *description;
	const char *input; /* its inputSchema, JSON */
	json_t *(*fn)(struct ts_call *);
};

static json_t *
tsc_json(const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, 0, &err);

	if (v == NULL) {
		ts_log("testserver-conformance: bad fixture: %s", err.text);
		abort();
	}
	return v;
}

static json_t *
tsc_image(void)
{
	return json_pack("{s:s, s:s, s:s}", "type", "image", "data", TSC_PNG,
	    "mimeType", "image/png");
}

static json_t *
tsc_resource(const char *uri, const char *mime, const char *text)
{
	return json_pack("{s:s, s:{s:s, s:s, s:s}}", "type", "resource",
	    "resource", "uri", uri, "mimeType", mime, "text", text);
}

/* 2026-07-28 lists and reads say how long they may be cached. */
static json_t *
tsc_cacheable(json_t *result)
{
	if (ts_is_modern()) {
		json_object_set_new(result, "ttlMs", json_integer(0));
		json_object_set_new(result, "cacheScope",
		    json_string("public"));
	}
	return result;
}

/* ---- server-to-client requests during a call ---- */

/* Sends method to the client; its answer makes the call's result. */
static json_t *
tsc_ask(struct ts_call *call, const char *method, json_t *params,
    json_t *(*done)(json_t *))
{
	struct tsc_asked *a = calloc(1, sizeof(*a));

	if (a == NULL)
		abort();
	snprintf(a->id, sizeof(a->id), "tsc-%ld", ++tsc_nasked);
	a->call_id = json_incref(call->id);
	a->conn = call->conn;
	a->done = done;
	a->next = tsc_asked_list;
	tsc_asked_list = a;
	ts_log("testserver-conformance: asking the client %s (%s)", method,
	    a->id);
	ts_notify(json_pack("{s:s, s:s, s:s, s:o}", "jsonrpc", "2.0", "id",
	    a->id, "method", method, "params", params));
	return NULL; /* answered when the client answers */
}

bool
tsc_client_answer(json_t *msg)
{
	const char *id = json_string_value(json_object_get(msg, "id"));
	json_t *error = json_object_get(msg, "error"), *result;
	struct tsc_asked *a, **ap;

	for (ap = &tsc_asked_list; (a = *ap) != NULL; ap = &a->next)
		if (id != NULL && strcmp(a->id, id) == 0)
			break;
	if (a == NULL)
		return false;
	*ap = a->next;
	if (error != NULL)
		result = ts_result(true, "the client refused (%s): %s", a->id,
		    json_string_value(json_object_get(error, "message")));
	else
		result = a->done(json_object_get(msg, "result"));
	ts_call_answer(a->conn, a->call_id, result);
	json_decref(a->call_id);
	free(a);
	return true;
}

static json_t *
tsc_sampled(json_t *answer)
{
	const char *text =
	    json_string_value(json_object_get(json_object_get(answer,
						  "content"),
		"text"));

	return ts_result(false, "LLM response: %s", text ? text : "(no text)");
}

/* "<prefix>: action=<action>, content=<content as JSON>" */
static json_t *
tsc_elicit_result(json_t *answer, const char *prefix)
{
	char *content = json_dumps(json_object_get(answer, "content"),
	    JSON_COMPACT | JSON_ENCODE_ANY);
	const char *action = json_string_value(json_object_get(answer,
	    "action"));
	json_t *r = ts_result(false, "%s: action=%s, content=%s", prefix,
	    action ? action : "(none)", content ? content : "null");

	free(content);
	return r;
}

static json_t *
tsc_elicited(json_t *answer)
{
	return tsc_elicit_result(answer, "User response");
}

static json_t *
tsc_elicitation_completed(json_t *answer)
{
	return tsc_elicit_result(answer, "Elicitation completed");
}

/* ---- the tools ---- */

static json_t *
tsc_simple_text(struct ts_call *call)
{
	(void)call;
	return ts_result(false, "This is a simple text response for testing.");
}

static json_t *
tsc_image_content(struct ts_call *call)
{
	(void)call;
	return json_pack("{s:[o]}", "content", tsc_image());
}

static json_t *
tsc_audio_content(struct ts_call *call)
{
	(void)call;
	return json_pack("{s:[{s:s, s:s, s:s}]}", "content", "type", "audio",
	    "data", TSC_WAV, "mimeType", "audio/wav");
}

static json_t *
tsc_embedded_resource(struct ts_call *call)
{
	(void)call;
	return json_pack("{s:[o]}", "content",
	    tsc_resource("test://embedded-resource", "text/plain",
		"This is an embedded resource content."));
}

static json_t *
tsc_multiple_content_types(struct ts_call *call)
{
	(void)call;
	return json_pack("{s:[{s:s, s:s}, o, o]}", "content", "type", "text",
	    "text", "Multiple content types test:", tsc_image(),
	    tsc_resource("test://mixed-content-resource", "application/json",
		"{\"test\":\"data\",\"value\":123}"));
}

/* Three log messages, 50 ms apart (blocking: they come apart in time). */
static json_t *
tsc_tool_with_logging(struct ts_call *call)
{
	static const char *const steps[] = { "Tool execution started",
		"Tool processing data", "Tool execution completed" };

	(void)call;
	for (size_t i = 0; i < 3; i++) {
		if (i > 0)
			usleep(TSC_STEP_US);
		ts_notify(json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "jsonrpc",
		    "2.0", "method", "notifications/message", "params", "level",
		    "info", "logger", "conformance", "data", steps[i]));
	}
	return ts_result(false, "Tool with logging executed successfully");
}

static json_t *
tsc_error_handling(struct ts_call *call)
{
	(void)call;
	return ts_result(true,
	    "This tool intentionally returns an error for testing");
}

/* Progress 0, 50 and 100 of 100, 50 ms apart, to the call's token. */
static json_t *
tsc_tool_with_progress(struct ts_call *call)
{
	json_t *token = json_object_get(call->meta, "progressToken");

	for (int i = 0; i <= 2; i++) {
		if (i > 0)
			usleep(TSC_STEP_US);
		if (token != NULL)
			ts_notify(json_pack("{s:s, s:s, s:{s:O, s:i, s:i}}",
			    "jsonrpc", "2.0", "method",
			    "notifications/progress", "params", "progressToken",
			    token, "progress", i * 50, "total", 100));
	}
	return ts_result(false, "Tool with progress executed successfully%s",
	    token != NULL ? "" : " (no progressToken)");
}

static json_t *
tsc_sampling(struct ts_call *call)
{
	const char *prompt = json_string_value(json_object_get(call->args,
	    "prompt"));

	return tsc_ask(call, "sampling/createMessage",
	    json_pack("{s:[{s:s, s:{s:s, s:s}}], s:i}", "messages", "role",
		"user", "content", "type", "text", "text", prompt ? prompt : "",
		"maxTokens", 100),
	    tsc_sampled);
}

static json_t *
tsc_elicitation(struct ts_call *call)
{
	const char *message = json_string_value(json_object_get(call->args,
	    "message"));

	return tsc_ask(call, "elicitation/create",
	    json_pack("{s:s, s:o}", "message", message ? message : "",
		"requestedSchema",
		tsc_json("{\"type\": \"object\", \"properties\": {"
			 "\"username\": {\"type\": \"string\", "
			 "\"description\": \"User's response\"}, "
			 "\"email\": {\"type\": \"string\", "
			 "\"description\": \"User's email address\"}}, "
			 "\"required\": [\"username\", \"email\"]}")),
	    tsc_elicited);
}

/* SEP-1034: a default for every primitive type. */
static json_t *
tsc_elicitation_defaults(struct ts_call *call)
{
	return tsc_ask(call, "elicitation/create",
	    json_pack("{s:s, s:o}", "message",
		"Please review your profile (defaults given)",
		"requestedSchema",
		tsc_json("{\"type\": \"object\", \"properties\": {"
			 "\"name\": {\"type\": \"string\", "
			 "\"default\": \"John Doe\"}, "
			 "\"age\": {\"type\": \"integer\", \"default\": 30}, "
			 "\"score\": {\"type\": \"number\", "
			 "\"default\": 95.5}, "
			 "\"status\": {\"type\": \"string\", \"enum\": "
			 "[\"active\", \"inactive\", \"pending\"], "
			 "\"default\": \"active\"}, "
			 "\"verified\": {\"type\": \"boolean\", "
			 "\"default\": true}}}")),
	    tsc_elicitation_completed);
}

/* SEP-1330: the five ways to write an enum. */
static json_t *
tsc_elicitation_enums(struct ts_call *call)
{
	return tsc_ask(call, "elicitation/create",
	    json_pack("{s:s, s:o}", "message", "Pick some options",
		"requestedSchema",
		tsc_json(
		    "{\"type\": \"object\", \"properties\": {"
		    "\"untitledSingle\": {\"type\": \"string\", "
		    "\"enum\": [\"option1\", \"option2\", \"option3\"]}, "
		    "\"titledSingle\": {\"type\": \"string\", \"oneOf\": ["
		    "{\"const\": \"value1\", \"title\": \"First Option\"}, "
		    "{\"const\": \"value2\", \"title\": \"Second Option\"}, "
		    "{\"const\": \"value3\", \"title\": \"Third Option\"}]}, "
		    "\"legacyEnum\": {\"type\": \"string\", "
		    "\"enum\": [\"opt1\", \"opt2\", \"opt3\"], "
		    "\"enumNames\": [\"Option One\", \"Option Two\", "
		    "\"Option Three\"]}, "
		    "\"untitledMulti\": {\"type\": \"array\", \"items\": "
		    "{\"type\": \"string\", \"enum\": "
		    "[\"option1\", \"option2\", \"option3\"]}}, "
		    "\"titledMulti\": {\"type\": \"array\", \"items\": "
		    "{\"anyOf\": ["
		    "{\"const\": \"value1\", \"title\": \"First Choice\"}, "
		    "{\"const\": \"value2\", \"title\": \"Second Choice\"}, "
		    "{\"const\": \"value3\", \"title\": \"Third Choice\"}"
		    "]}}}}")),
	    tsc_elicitation_completed);
}

static json_t *
tsc_json_schema_tool(struct ts_call *call)
{
	char *args = json_dumps(call->args, JSON_COMPACT);
	json_t *r = ts_result(false, "json_schema_2020_12_tool got %s",
	    args ? args : "{}");

	free(args);
	return r;
}

static json_t *
tsc_reconnection(struct ts_call *call)
{
	(void)call;
	return ts_result(false, "Reconnection test completed");
}

/* 2026-07-28: a call that needs sampling the request did not declare. */
static json_t *
tsc_missing_capability(struct ts_call *call)
{
	json_t *caps = json_object_get(call->meta,
	    "io.modelcontextprotocol/clientCapabilities");

	if (!ts_is_modern() || json_object_get(caps, "sampling") != NULL)
		return ts_result(false, "the client can sample");
	ts_send(call->conn,
	    json_pack("{s:s, s:O, s:{s:i, s:s, s:{s:{s:{}}}}}", "jsonrpc",
		"2.0", "id", call->id, "error", "code", -32021, "message",
		"Missing required client capability: sampling", "data",
		"requiredCapabilities", "sampling"));
	return NULL;
}

static json_t *
tsc_streaming_elicitation(struct ts_call *call)
{
	(void)call;
	return ts_result(false, "nothing to ask: complete at once");
}

/* A log message whatever level was asked: the gateway has to filter. */
static json_t *
tsc_logging_tool(struct ts_call *call)
{
	(void)call;
	ts_notify(json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "jsonrpc", "2.0",
	    "method", "notifications/message", "params", "level", "info",
	    "logger", "conformance", "data", "test_logging_tool ran"));
	return ts_result(false, "logged one message");
}

/* Sends notifications/<what>/list_changed (its lists are what they were). */
static json_t *
tsc_list_changed(const char *what)
{
	char method[64];

	snprintf(method, sizeof method, "notifications/%s/list_changed", what);
	ts_notify(json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method));
	return ts_result(false, "sent %s", method);
}

static json_t *
tsc_trigger_tool_change(struct ts_call *call)
{
	(void)call;
	return tsc_list_changed("tools");
}

static json_t *
tsc_trigger_prompt_change(struct ts_call *call)
{
	(void)call;
	return tsc_list_changed("prompts");
}

/* Not the harness's: lets a test see updates reach the subscribed. */
static json_t *
tsc_update_resource(struct ts_call *call)
{
	(void)call;
	ts_notify(json_pack("{s:s, s:s, s:{s:s}}", "jsonrpc", "2.0", "method",
	    "notifications/resources/updated", "params", "uri",
	    "test://watched-resource"));
	return ts_result(false, "test://watched-resource updated");
}

#define TSC_NO_ARGS "{\"type\": \"object\", \"properties\": {}}"

static const struct tsc_tool tsc_tools[] = {
	{ "test_simple_text", "Returns one text.", TSC_NO_ARGS,
	    tsc_simple_text },
	{ "test_image_content", "Returns a PNG image.", TSC_NO_ARGS,
	    tsc_image_content },
	{ "test_audio_content", "Returns a WAV sound.", TSC_NO_ARGS,
	    tsc_audio_content },
	{ "test_embedded_resource", "Returns an embedded text resource.",
	    TSC_NO_ARGS, tsc_embedded_resource },
	{ "test_multiple_content_types", "Returns text, image and resource.",
	    TSC_NO_ARGS, tsc_multiple_content_types },
	{ "test_tool_with_logging", "Sends three log messages, then answers.",
	    TSC_NO_ARGS, tsc_tool_with_logging },
	{ "test_error_handling", "Always returns a tool error (isError).",
	    TSC_NO_ARGS, tsc_error_handling },
	{ "test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.",
	    TSC_NO_ARGS, tsc_tool_with_progress },
	{ "test_sampling",
	    "Asks the client to sample (sampling/createMessage).",
	    "{\"type\": \"object\", \"properties\": {\"prompt\": {\"type\": "
	    "\"string\", \"description\": \"The prompt to send to the LLM\"}}, "
	    "\"required\": [\"prompt\"]}",
	    tsc_sampling },
	{ "test_elicitation", "Asks the client for input (elicitation/create).",
	    "{\"type\": \"object\", \"properties\": {\"message\": {\"type\": "
	    "\"string\", \"description\": \"The message to show the user\"}}, "
	    "\"required\": [\"message\"]}",
	    tsc_elicitation },
	{ "test_elicitation_sep1034_defaults",
	    "Asks for input with defaults for every primitive type.",
	    TSC_NO_ARGS, tsc_elicitation_defaults },
	{ "test_elicitation_sep1330_enums",
	    "Asks for input with the five kinds of enum.", TSC_NO_ARGS,
	    tsc_elicitation_enums },
	{ "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
	    "{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\", "
	    "\"type\": \"object\", \"$defs\": {\"address\": {\"$anchor\": "
	    "\"addressDef\", \"type\": \"object\", \"properties\": {\"street\": "
	    "{\"type\": \"string\"}, \"city\": {\"type\": \"string\"}}}}, "
	    "\"properties\": {\"name\": {\"type\": \"string\"}, \"address\": "
	    "{\"$ref\": \"#/$defs/address\"}, \"contactMethod\": {\"type\": "
	    "\"string\", \"enum\": [\"phone\", \"email\"]}, \"phone\": "
	    "{\"type\": \"string\"}, \"email\": {\"type\": \"string\"}}, "
	    "\"allOf\": [{\"anyOf\": [{\"required\": [\"phone\"]}, "
	    "{\"required\": [\"email\"]}]}], \"if\": {\"properties\": "
	    "{\"contactMethod\": {\"const\": \"phone\"}}, \"required\": "
	    "[\"contactMethod\"]}, \"then\": {\"required\": [\"phone\"]}, "
	    "\"else\": {\"required\": [\"email\"]}, "
	    "\"additionalProperties\": false}",
	    tsc_json_schema_tool },
	{ "test_reconnection", "Answers at once (SSE polling is the front's).",
	    TSC_NO_ARGS, tsc_reconnection },
	{ "test_missing_capability",
	    "2026-07-28: needs sampling; without it, error -32021.",
	    TSC_NO_ARGS, tsc_missing_capability },
	{ "test_streaming_elicitation", "Answers at once, asking nothing.",
	    TSC_NO_ARGS, tsc_streaming_elicitation },
	{ "test_logging_tool", "Sends one log message, whatever the level.",
	    TSC_NO_ARGS, tsc_logging_tool },
	{ "test_trigger_tool_change", "Sends notifications/tools/list_changed.",
	    TSC_NO_ARGS, tsc_trigger_tool_change },
	{ "test_trigger_prompt_change",
	    "Sends notifications/prompts/list_changed.", TSC_NO_ARGS,
	    tsc_trigger_prompt_change },
	{ "test_update_resource",
	    "Sends notifications/resources/updated for test://watched-resource.",
	    TSC_NO_ARGS, tsc_update_resource },
};
#define TSC_NTOOLS (sizeof(tsc_tools) / sizeof(tsc_tools[0]))

json_t *
tsc_tools_list(void)
{
	json_t *tools = json_array();

	for (size_t i = 0; i < TSC_NTOOLS; i++)
		json_array_append_new(tools,
		    json_pack("{s:s, s:s, s:o}", "name", tsc_tools[i].name,
			"description", tsc_tools[i].description, "inputSchema",
			tsc_json(tsc_tools[i].input)));
	return tsc_cacheable(json_pack("{s:o}", "tools", tools));
}

void
tsc_tools_call(json_t *params, json_t *id, struct ts_conn *c)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *empty = json_object(), *result;
	struct ts_call call = { json_object_get(params, "arguments"), id, c,
		json_object_get(params, "_meta"), params };
	size_t i;

	for (i = 0; name != NULL && i < TSC_NTOOLS; i++)
		if (strcmp(tsc_tools[i].name, name) == 0)
			break;
	if (name == NULL || i == TSC_NTOOLS) {
		ts_send(c,
		    ts_error(id, -32602, "Unknown tool: %s", name ? name : ""));
		json_decref(empty);
		return;
	}
	if (call.args == NULL)
		call.args = empty;
	if ((result = tsc_tools[i].fn(&call)) != NULL)
		ts_call_answer(c, id, result);
	json_decref(empty);
}

/* ---- prompts ---- */

static json_t *
tsc_user(json_t *content)
{
	return json_pack("{s:s, s:o}", "role", "user", "content", content);
}

static json_t *
tsc_text(const char *text)
{
	return json_pack("{s:s, s:s}", "type", "text", "text", text);
}

/* The messages of prompt name with args, or NULL for no such prompt. */
static json_t *
tsc_prompt_messages(const char *name, json_t *args)
{
	const char *a1 = json_string_value(json_object_get(args, "arg1"));
	const char *a2 = json_string_value(json_object_get(args, "arg2"));
	const char *uri = json_string_value(json_object_get(args,
	    "resourceUri"));
	json_t *msgs;
	char *text;

	if (strcmp(name, "test_simple_prompt") == 0)
		return json_pack("[o]",
		    tsc_user(tsc_text("This is a simple prompt for testing.")));
	if (strcmp(name, "test_prompt_with_arguments") == 0) {
		if (asprintf(&text,
			"Prompt with arguments: arg1='%s', arg2='%s'",
			a1 ? a1 : "", a2 ? a2 : "") < 0)
			abort();
		msgs = json_pack("[o]", tsc_user(tsc_text(text)));
		free(text);
		return msgs;
	}
	if (strcmp(name, "test_prompt_with_embedded_resource") == 0)
		return json_pack("[o, o]",
		    tsc_user(tsc_resource(uri ? uri : "test://example-resource",
			"text/plain",
			"Embedded resource content for testing.")),
		    tsc_user(tsc_text(
			"Please process the embedded resource above.")));
	if (strcmp(name, "test_prompt_with_image") == 0)
		return json_pack("[o, o]", tsc_user(tsc_image()),
		    tsc_user(tsc_text("Please analyze the image above.")));
	return NULL;
}

static json_t *
tsc_prompts_list(void)
{
	return tsc_cacheable(tsc_json(
	    "{\"prompts\": ["
	    "{\"name\": \"test_simple_prompt\", "
	    "\"description\": \"A prompt without arguments\"}, "
	    "{\"name\": \"test_prompt_with_arguments\", "
	    "\"description\": \"A prompt with two arguments\", "
	    "\"arguments\": [{\"name\": \"arg1\", \"description\": "
	    "\"First test argument\", \"required\": true}, "
	    "{\"name\": \"arg2\", \"description\": \"Second test argument\", "
	    "\"required\": true}]}, "
	    "{\"name\": \"test_prompt_with_embedded_resource\", "
	    "\"description\": \"A prompt that embeds a resource\", "
	    "\"arguments\": [{\"name\": \"resourceUri\", \"description\": "
	    "\"URI of the resource to embed\", \"required\": true}]}, "
	    "{\"name\": \"test_prompt_with_image\", "
	    "\"description\": \"A prompt with an image\"}]}"));
}

/* ---- resources ---- */

static json_t *
tsc_resources_list(void)
{
	return tsc_cacheable(tsc_json(
	    "{\"resources\": ["
	    "{\"uri\": \"test://static-text\", \"name\": \"static-text\", "
	    "\"description\": \"A static text resource\", "
	    "\"mimeType\": \"text/plain\"}, "
	    "{\"uri\": \"test://static-binary\", \"name\": \"static-binary\", "
	    "\"description\": \"A static PNG image\", "
	    "\"mimeType\": \"image/png\"}, "
	    "{\"uri\": \"test://watched-resource\", "
	    "\"name\": \"watched-resource\", "
	    "\"description\": \"A resource to subscribe to\", "
	    "\"mimeType\": \"text/plain\"}]}"));
}

static json_t *
tsc_templates_list(void)
{
	return tsc_cacheable(tsc_json(
	    "{\"resourceTemplates\": [{\"uriTemplate\": "
	    "\"test://template/{id}/data\", \"name\": \"template-data\", "
	    "\"description\": \"Data for an id\", "
	    "\"mimeType\": \"application/json\"}]}"));
}

/* The contents of uri, or NULL when there is no such resource. */
static json_t *
tsc_resource_contents(const char *uri)
{
	static const char prefix[] = "test://template/", suffix[] = "/data";
	size_t len = strlen(uri), plen = sizeof(prefix) - 1,
	       slen = sizeof(suffix) - 1;
	json_t *data;
	char *text;

	if (strcmp(uri, "test://static-text") == 0)
		return json_pack("{s:s, s:s, s:s}", "uri", uri, "mimeType",
		    "text/plain", "text",
		    "This is the content of the static text resource.");
	if (strcmp(uri, "test://static-binary") == 0)
		return json_pack("{s:s, s:s, s:s}", "uri", uri, "mimeType",
		    "image/png", "blob", TSC_PNG);
	if (strcmp(uri, "test://watched-resource") == 0)
		return json_pack("{s:s, s:s, s:s}", "uri", uri, "mimeType",
		    "text/plain", "text", "Watched resource content.");
	if (len <= plen + slen || strncmp(uri, prefix, plen) != 0 ||
	    strcmp(uri + len - slen, suffix) != 0 ||
	    memchr(uri + plen, '/', len - plen - slen) != NULL)
		return NULL;
	data = json_pack("{s:s%, s:b}", "id", uri + plen, len - plen - slen,
	    "templateTest", 1);
	if (asprintf(&text, "Data for ID: %.*s", (int)(len - plen - slen),
		uri + plen) < 0)
		abort();
	json_object_set_new(data, "data", json_string(text));
	free(text);
	text = json_dumps(data, JSON_COMPACT);
	json_decref(data);
	data = json_pack("{s:s, s:s, s:s}", "uri", uri, "mimeType",
	    "application/json", "text", text);
	free(text);
	return data;
}

static void
tsc_resources_read(json_t *params, json_t *id, struct ts_conn *c)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	json_t *contents = uri != NULL ? tsc_resource_contents(uri) : NULL;

	if (contents == NULL) {
		/* SEP-2164: -32602, saying which URI. */
		ts_send(c,
		    json_pack("{s:s, s:O, s:{s:i, s:s, s:{s:s?}}}", "jsonrpc",
			"2.0", "id", id, "error", "code", -32602, "message",
			"Resource not found", "data", "uri", uri));
		return;
	}
	ts_send(c,
	    ts_response(id,
		tsc_cacheable(json_pack("{s:[o]}", "contents", contents))));
}

/* ---- completion ---- */

static json_t *
tsc_complete(json_t *params)
{
	static const char *const cities[] = { "paris", "park", "party" };
	const char *value =
	    json_string_value(json_object_get(json_object_get(params,
						  "argument"),
		"value"));
	json_t *values = json_array();

	for (size_t i = 0; i < 3; i++)
		if (value == NULL ||
		    strncmp(cities[i], value, strlen(value)) == 0)
			json_array_append_new(values, json_string(cities[i]));
	return json_pack("{s:{s:o, s:I, s:b}}", "completion", "values", values,
	    "total", (json_int_t)json_array_size(values), "hasMore", 0);
}

json_t *
tsc_capabilities(void)
{
	return json_pack("{s:{s:b}, s:{s:b}, s:{s:b, s:b}, s:{}, s:{}}",
	    "tools", "listChanged", 1, "prompts", "listChanged", 1, "resources",
	    "subscribe", 1, "listChanged", 1, "completions", "logging");
}

bool
tsc_dispatch(const char *method, json_t *params, json_t *id, struct ts_conn *c)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *msgs;

	if (strcmp(method, "prompts/list") == 0)
		ts_send(c, ts_response(id, tsc_prompts_list()));
	else if (strcmp(method, "prompts/get") == 0) {
		msgs = name != NULL ?
		    tsc_prompt_messages(name,
			json_object_get(params, "arguments")) :
		    NULL;
		ts_send(c,
		    msgs != NULL ?
			ts_response(id, json_pack("{s:o}", "messages", msgs)) :
			ts_error(id, -32602, "Unknown prompt: %s",
			    name ? name : ""));
	} else if (strcmp(method, "resources/list") == 0)
		ts_send(c, ts_response(id, tsc_resources_list()));
	else if (strcmp(method, "resources/templates/list") == 0)
		ts_send(c, ts_response(id, tsc_templates_list()));
	else if (strcmp(method, "resources/read") == 0)
		tsc_resources_read(params, id, c);
	else if (strcmp(method, "completion/complete") == 0)
		ts_send(c, ts_response(id, tsc_complete(params)));
	else if (strcmp(method, "resources/subscribe") == 0 ||
	    strcmp(method, "resources/unsubscribe") == 0 ||
	    strcmp(method, "logging/setLevel") == 0) {
		ts_log("testserver-conformance: %s %s", method,
		    json_string_value(json_object_get(params, "uri")) ?: "");
		ts_send(c, ts_response(id, json_object()));
	} else
		return false;
	return true;
}
