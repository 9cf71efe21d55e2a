/* SPDX-License-Identifier: ISC */
/* Trusted project files: the digest of each .mcpd.json the user trusted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "log.h"
#include "mcpd.h"

#define PROJECT_FILE  "projects.json"
/* Trust is the user's, for every agent: one pseudo-agent holds the rows. */
#define PROJECT_OWNER "@user"

static struct store *project_store;

int
project_open(const char *state_dir)
{
	return store_open_file(state_dir, PROJECT_FILE, &project_store);
}

void
project_close(void)
{
	store_free(project_store);
	project_store = NULL;
}

char *
project_digest(const char *text, size_t len)
{
	unsigned char h[32];
	char hex[2 * sizeof h + 1];

	crypto_generichash(h, sizeof h, (const unsigned char *)text, len, NULL,
	    0);
	sodium_bin2hex(hex, sizeof hex, h, sizeof h);
	return xstrdup(hex);
}

const char *
project_trusted_digest(const char *path)
{
	return json_string_value(json_object_get(store_row_peek(project_store,
						     PROJECT_OWNER, path),
	    "digest"));
}

int
project_trust(const char *path, const char *digest, char **cause)
{
	json_t *row = xjson(json_pack("{s:s, s:s}", "id", path, "digest",
	    digest));
	int r = store_put(project_store, PROJECT_OWNER, row, cause);

	json_decref(row);
	return r;
}

int
project_untrust(const char *path, bool *ret_removed, char **cause)
{
	return store_remove(project_store, PROJECT_OWNER, path, ret_removed,
	    cause);
}

json_t *
project_list(void)
{
	const json_t *rows = json_object_get(store_agents_peek(project_store),
	    PROJECT_OWNER);

	return rows != NULL ? json_deep_copy(rows) : json_array();
}
