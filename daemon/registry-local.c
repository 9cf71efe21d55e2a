/* SPDX-License-Identifier: ISC */
/* The local catalog bundled with mcpd: a registry page kept in a file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "mcpd.h"

#define CATALOG_NAME "catalog.json"
#define CATALOG_META "io.mcpd/catalog"

int
catalog_load(json_t **ret_page, char **ret_path, char **cause)
{
	char *path = registry_data_path(mcpd_opts.catalog, CATALOG_NAME);
	json_error_t jerr;
	json_t *page;

	page = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (page == NULL) {
		xasprintf(cause,
		    "cannot read the local catalog %s: %s (install mcpd, or name it with mcpd --catalog)",
		    path, jerr.text);
		free(path);
		return -ENOENT;
	}
	if (!json_is_array(json_object_get(page, "servers"))) {
		xasprintf(cause,
		    "the local catalog %s is not a registry page: it has no servers array",
		    path);
		json_decref(page);
		free(path);
		return -EINVAL;
	}
	*ret_page = page;
	*ret_path = path;
	return 0;
}

/* Whether list (an array) holds word, in any case. */
static bool
catalog_lists(const json_t *list, const char *word)
{
	const json_t *v;
	size_t i;

	json_array_foreach((json_t *)(uintptr_t)list, i, v)
		if (json_is_string(v) &&
		    strcasecmp(json_string_value(v), word) == 0)
			return true;
	return false;
}

bool
catalog_matches(const json_t *record, const char *query)
{
	const json_t *server = json_object_get(record, "server");
	const json_t *meta = json_object_get(json_object_get(server, "_meta"),
	    CATALOG_META);
	const char *name = json_string_value(json_object_get(server, "name"));

	if (query == NULL)
		return true;
	/* As the registry's search: a substring of the name. */
	if (name != NULL && strcasestr(name, query) != NULL)
		return true;
	return catalog_lists(json_object_get(meta, "categories"), query) ||
	    catalog_lists(json_object_get(meta, "capabilities"), query);
}

/* The part of a registry name after its last '/'. */
static const char *
catalog_short(const char *name)
{
	const char *slash = strrchr(name, '/');

	return slash != NULL ? slash + 1 : name;
}

json_t *
catalog_named(const json_t *page, const char *name)
{
	json_t *names = xjson(json_array()), *record;
	const char *full, *last;
	size_t i;

	json_array_foreach(json_object_get(page, "servers"), i, record) {
		full = json_string_value(json_object_get(json_object_get(record,
							     "server"),
		    "name"));
		if (full != NULL && strcmp(full, name) == 0) {
			json_array_clear(names);
			json_array_append_new(names, json_string(full));
			return names;
		}
		if (full == NULL || strchr(name, '/') != NULL)
			continue;
		last = catalog_short(full);
		if ((strcmp(last, name) == 0 ||
			(strncmp(last, "server-", 7) == 0 &&
			    strcmp(last + 7, name) == 0)) &&
		    !catalog_lists(names, full))
			json_array_append_new(names, json_string(full));
	}
	return names;
}
