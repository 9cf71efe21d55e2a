/* SPDX-License-Identifier: ISC */
/*
 * What a server asks of mcpctl call during the call: its requests that
 * mcpd relays (elicitation, roots) and, in 2026-07-28, the inputRequests
 * of an input_required result, answered for the retry. Sampling is
 * refused: mcpctl has no model to sample.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpctl.h"

/* The working directory as a file:// URI (new), or NULL. */
static char *
callask_cwd_uri(char **ret_name)
{
	char cwd[PATH_MAX], *uri, *p, *slash;
	const unsigned char *s;

	if (getcwd(cwd, sizeof cwd) == NULL ||
	    (uri = malloc(strlen("file://") + 3 * strlen(cwd) + 1)) == NULL)
		return NULL;
	p = uri + sprintf(uri, "file://");
	for (s = (const unsigned char *)cwd; *s != '\0'; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("-._~/", *s) != NULL)
			*p++ = (char)*s;
		else
			p += sprintf(p, "%%%02X", *s);
	}
	*p = '\0';
	slash = strrchr(cwd, '/');
	*ret_name = strdup(slash != NULL && slash[1] != '\0' ? slash + 1 : cwd);
	return uri;
}

/* roots/list: the working directory of the call, as its one root. */
static json_t *
callask_roots(const struct callask *a)
{
	char *name = NULL, *uri = callask_cwd_uri(&name);
	json_t *roots = json_array();

	if (uri != NULL && name != NULL)
		json_array_append_new(roots,
		    json_pack("{s:s, s:s}", "uri", uri, "name", name));
	if (!a->elicit.is_quiet) {
		elicit_put(a->server, false);
		fputs(" asked for roots: ", stderr);
		elicit_put(uri != NULL ? uri : "none (no working directory)",
		    false);
		fputc('\n', stderr);
	}
	free(uri);
	free(name);
	return json_pack("{s:o}", "roots", roots);
}

/* Why mcpctl does not answer method (new), or NULL when it does. */
static char *
callask_refusal(const char *method)
{
	char *why;

	if (strcmp(method, "elicitation/create") == 0 ||
	    strcmp(method, "roots/list") == 0)
		return NULL;
	if (strcmp(method, "sampling/createMessage") == 0)
		return strdup(
		    "mcpctl call does not answer sampling/createMessage: it has no language model to sample with (an MCP client that samples can call the tool through mcpctl bridge)");
	if (asprintf(&why, "mcpctl call does not answer %s", method) < 0)
		return NULL;
	return why;
}

/* The answer to one request, which callask_refusal allowed (new). */
static json_t *
callask_answer(struct callask *a, const char *method, const json_t *params)
{
	if (strcmp(method, "roots/list") == 0)
		return callask_roots(a);
	return elicit_answer(&a->elicit, params);
}

json_t *
callask_request(void *arg, json_int_t id, const char *method,
    const json_t *params, json_t **ret_error)
{
	struct callask *a = arg;
	char *why = callask_refusal(method);

	(void)id;
	if (why == NULL)
		return callask_answer(a, method, params);
	*ret_error = json_pack("{s:i, s:s}", "code", -32601, "message",
	    why != NULL ? why : "mcpctl call does not answer it");
	free(why);
	return NULL;
}

bool
callask_is_input_required(const json_t *result)
{
	const char *type = json_string_value(json_object_get(result,
	    "resultType"));

	return type != NULL && strcmp(type, "input_required") == 0;
}

json_t *
callask_input(struct callask *a, const json_t *requests, char **ret_why)
{
	const json_t *req;
	const char *key, *method;
	json_t *responses;
	char *why;

	if (!json_is_object(requests)) {
		*ret_why = strdup("its inputRequests is not an object");
		return NULL;
	}
	/* Every request is checked before the person is asked anything. */
	json_object_foreach((json_t *)(uintptr_t)requests, key, req) {
		method = json_string_value(json_object_get(req, "method"));
		if (method == NULL) {
			if (asprintf(ret_why,
				"its input request %s names no method",
				key) < 0)
				*ret_why = NULL;
			return NULL;
		}
		if ((why = callask_refusal(method)) != NULL) {
			if (asprintf(ret_why, "input request %s: %s", key,
				why) < 0)
				*ret_why = NULL;
			free(why);
			return NULL;
		}
	}
	responses = json_object();
	json_object_foreach((json_t *)(uintptr_t)requests, key, req)
		json_object_set_new(responses, key,
		    callask_answer(a,
			json_string_value(json_object_get(req, "method")),
			json_object_get(req, "params")));
	return responses;
}
