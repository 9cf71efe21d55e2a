/* SPDX-License-Identifier: ISC */
/* mcpd/docker-catalog: the definitions of Docker's MCP catalog, or one. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"
#include "names.h"

struct cmd_docker_catalog {
	struct request *req;
	char *query; /* or NULL: every definition */
	char *name;  /* or NULL: a listing */
};

/* True when text (may be NULL) holds q, whatever the case. */
static bool
cmd_docker_catalog_has(const json_t *text, const char *q)
{
	return json_is_string(text) &&
	    strcasestr(json_string_value(text), q) != NULL;
}

/* A definition matches a query by name, title, description, category, tag. */
static bool
cmd_docker_catalog_matches(const json_t *e, const char *q)
{
	const json_t *meta = json_object_get(e, "metadata"), *tag;
	size_t i;

	if (cmd_docker_catalog_has(json_object_get(e, "name"), q) ||
	    cmd_docker_catalog_has(json_object_get(e, "title"), q) ||
	    cmd_docker_catalog_has(json_object_get(e, "description"), q) ||
	    cmd_docker_catalog_has(json_object_get(meta, "category"), q))
		return true;
	json_array_foreach(json_object_get(meta, "tags"), i, tag)
		if (cmd_docker_catalog_has(tag, q))
			return true;
	return false;
}

static void
cmd_docker_catalog_read(void *arg, const json_t *catalog, enum errors_kind kind,
    const char *why)
{
	struct cmd_docker_catalog *c = arg;
	const json_t *all = json_object_get(catalog, "servers"), *e;
	json_t *result, *found;
	size_t i;

	if (catalog == NULL) {
		control_fail(c->req, kind,
		    json_pack("{s:s}", "what", "docker-catalog"), "%s", why);
		goto out;
	}
	result = xjson(json_pack("{s:O, s:O, s:O?, s:I, s:O}", "catalog",
	    json_object_get(catalog, "catalog"), "image",
	    json_object_get(catalog, "image"), "title",
	    json_object_get(catalog, "title"), "count",
	    (json_int_t)json_array_size(all), "skipped",
	    json_object_get(catalog, "skipped")));
	found = json_array();
	json_array_foreach(all, i, e)
		if (c->name != NULL ?
			strcmp(json_string_value(json_object_get(e, "name")),
			    c->name) == 0 :
			c->query == NULL ||
			    cmd_docker_catalog_matches(e, c->query))
			json_array_append(found, (json_t *)(uintptr_t)e);
	if (c->name != NULL && json_array_size(found) == 0) {
		control_fail(c->req, ERRORS_NOT_FOUND,
		    json_pack("{s:s, s:s, s:O}", "what", "catalog-entry",
			"name", c->name, "catalog",
			json_object_get(catalog, "catalog")),
		    "the Docker MCP catalog %s has no server definition called %s (it has %zu; mcpctl docker-catalog lists them)",
		    json_string_value(json_object_get(catalog, "catalog")),
		    c->name, json_array_size(all));
		json_decref(found);
		json_decref(result);
		goto out;
	}
	json_object_set_new(result, "servers", found);
	control_reply(c->req, result);
out:
	free(c->query);
	free(c->name);
	free(c);
}

static void
cmd_docker_catalog_exec(struct request *req, json_t *params)
{
	const char *ref = cmd_string(params, "catalog");
	const char *query = cmd_string(params, "query");
	const char *name = cmd_string(params, "name");
	struct cmd_docker_catalog *c;
	char *cause = NULL, *image = NULL;

	if (ref == NULL)
		ref = dcatalog_default();
	if (query != NULL && name != NULL) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "name"),
		    "mcpd/docker-catalog: give query or name, not both");
		return;
	}
	/* A reference docker reads as an image; never an option. */
	if (xenomem(names_image_normalize(ref, &image, &cause)) < 0) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "catalog"),
		    "mcpd/docker-catalog: the catalog %s is no image reference: %s",
		    ref, cause != NULL ? cause : "bad reference");
		free(cause);
		return;
	}
	free(image);
	if (docker_available(&cause) < 0) {
		control_fail(req, ERRORS_UNAVAILABLE, NULL, "%s", cause);
		free(cause);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->req = req;
	c->query = query != NULL && *query != '\0' ? xstrdup(query) : NULL;
	c->name = name != NULL ? xstrdup(name) : NULL;
	dcatalog_read(ref, cmd_docker_catalog_read, c);
}

static const struct cmd_param cmd_docker_catalog_params[] = {
	{ "catalog", JSON_STRING, false },
	{ "query", JSON_STRING, false },
	{ "name", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_docker_catalog_entry = {
	"mcpd/docker-catalog",
	cmd_docker_catalog_exec,
	cmd_docker_catalog_params,
	0,
};
