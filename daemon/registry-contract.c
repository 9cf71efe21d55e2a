/* SPDX-License-Identifier: ISC */
/* The registry's published contract, and records judged against it. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonschema.h"
#include "log.h"
#include "mcpd.h"
#include "paths.h"
#include "textesc.h"

#ifndef MCPD_DATADIR
#define MCPD_DATADIR "/usr/local/share/mcpd"
#endif

#define REGISTRY_CONTRACT_NAME "registry/openapi.json"
#define REGISTRY_RECORD_SCHEMA "ServerResponse"

/* The contract's ServerResponse, compiled once; NULL until it is. */
static struct jsonschema *registry_schema;
static char *registry_schema_path;

char *
registry_data_path(const char *given, const char *name)
{
	/* Beside the program: installed elsewhere, or in its source tree. */
	static const char *const near[] = { "../share/mcpd", "../data" };
	char found[PATH_MAX], *exe, *path, *alt, *dir;

	if (given != NULL)
		return xstrdup(given);
	xasprintf(&path, "%s/%s", MCPD_DATADIR, name);
	if (access(path, F_OK) == 0 || (exe = paths_self_exe()) == NULL)
		return path;
	dir = dirname(exe);
	for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
		xasprintf(&alt, "%s/%s/%s", dir, near[i], name);
		if (realpath(alt, found) != NULL) {
			free(alt);
			free(path);
			free(exe);
			return xstrdup(found);
		}
		free(alt);
	}
	free(exe);
	return path;
}

/*
 * A schema that is the contract's ServerResponse: its $refs
 * ("#/components/schemas/X") resolve in the document they were written
 * for, and the same schemas are also $defs, so that the validator indexes
 * them and compiles their patterns once.
 */
static json_t *
registry_schema_wrap(const json_t *doc)
{
	json_t *schemas = json_object_get(json_object_get(doc, "components"),
	    "schemas");
	json_t *wrap;

	if (!json_is_object(json_object_get(schemas, REGISTRY_RECORD_SCHEMA)))
		return NULL;
	wrap = xjson(json_pack("{s:s, s:{s:O}, s:O}", "$ref",
	    "#/components/schemas/" REGISTRY_RECORD_SCHEMA, "components",
	    "schemas", schemas, "$defs", schemas));
	if (json_is_string(json_object_get(doc, "$id")))
		json_object_set(wrap, "$id", json_object_get(doc, "$id"));
	return wrap;
}

/* The compiled ServerResponse, read at first use; NULL with *cause. */
static struct jsonschema *
registry_schema_get(char **cause)
{
	char *path = registry_data_path(mcpd_opts.registry_contract,
	    REGISTRY_CONTRACT_NAME);
	json_error_t jerr;
	json_t *doc, *wrap;
	char *why = NULL;

	if (registry_schema != NULL) {
		free(path);
		return registry_schema;
	}
	if ((doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL) {
		xasprintf(cause,
		    "cannot read the registry contract %s: %s (install mcpd, or name it with mcpd --registry-contract)",
		    path, jerr.text);
		free(path);
		return NULL;
	}
	if ((wrap = registry_schema_wrap(doc)) == NULL) {
		xasprintf(cause,
		    "the registry contract %s has no components/schemas/%s",
		    path, REGISTRY_RECORD_SCHEMA);
	} else if ((registry_schema = jsonschema_new(wrap, &why)) == NULL) {
		xenomem(-errno);
		xasprintf(cause, "the registry contract %s: %s", path,
		    why != NULL ? why : "cannot be compiled");
	}
	free(why);
	json_decref(wrap);
	json_decref(doc);
	if (registry_schema == NULL) {
		free(path);
		return NULL;
	}
	registry_schema_path = path;
	log_debug("registry contract %s", path);
	return registry_schema;
}

void
registry_problems_init(struct registry_problems *p)
{
	p->list = xjson(json_array());
	p->total = 0;
}

void
registry_problems_clear(struct registry_problems *p)
{
	json_decref(p->list);
	p->list = NULL;
	p->total = 0;
}

/* text, escaped for display and cut to --registry-problem-chars (new). */
static char *
registry_bounded(const char *text)
{
	char *esc = xnonnull(textesc(text, strlen(text), false));
	char *cut = xnonnull(textesc_cut(esc,
	    mcpd_opts.registry_problem_chars));

	free(esc);
	return cut;
}

void
registry_problems_add(struct registry_problems *p, const char *path,
    const char *detail)
{
	char *where, *what;

	if (p->total++ >= mcpd_opts.registry_problems)
		return;
	where = registry_bounded(path);
	what = registry_bounded(detail);
	json_array_append_new(p->list,
	    xjson(json_pack("{s:s, s:s}", "path", where, "detail", what)));
	free(where);
	free(what);
}

static void
registry_problem_found(void *arg, const char *path, const char *detail)
{
	registry_problems_add(arg, path, detail);
}

int
registry_contract_check(const json_t *record, struct registry_problems *p,
    char **cause)
{
	struct jsonschema *js = registry_schema_get(cause);
	char *why = NULL;
	int r;

	if (js == NULL)
		return -ENOENT;
	r = jsonschema_check_each(js, record, registry_problem_found, p, &why);
	if (r == 0 || r == -EINVAL)
		return 0;
	xenomem(r);
	xasprintf(cause,
	    "the registry contract %s cannot be checked by mcpd's validator: %s",
	    registry_schema_path, why != NULL ? why : strerror(-r));
	free(why);
	return r;
}

json_t *
registry_rejected_new(const json_t *record, size_t index,
    const struct registry_problems *p)
{
	const char *name =
	    json_string_value(json_object_get(json_object_get(record, "server"),
		"name"));
	json_t *out = xjson(json_pack("{s:I}", "index", (json_int_t)index));
	char *shown;

	if (name != NULL) {
		shown = registry_bounded(name);
		json_object_set_new(out, "name", json_string(shown));
		free(shown);
	}
	json_object_set(out, "problems", p->list);
	if (p->total > json_array_size(p->list))
		json_object_set_new(out, "omitted",
		    json_integer((json_int_t)(p->total -
			json_array_size(p->list))));
	return out;
}

json_t *
registry_limits(void)
{
	return xjson(json_pack("{s:I, s:I, s:I}", "problems",
	    (json_int_t)mcpd_opts.registry_problems, "problem_chars",
	    (json_int_t)mcpd_opts.registry_problem_chars, "text_chars",
	    (json_int_t)mcpd_opts.registry_text_chars));
}

void
registry_contract_close(void)
{
	jsonschema_free(registry_schema);
	registry_schema = NULL;
	free(registry_schema_path);
	registry_schema_path = NULL;
}
