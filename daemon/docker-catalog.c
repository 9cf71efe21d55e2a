/* SPDX-License-Identifier: ISC */
/* Docker's MCP catalog: read from an image through the docker CLI. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"
#include "tarball.h"

#define DCATALOG_SAVE_MAX ((size_t)64 << 20) /* bytes of `docker image save` */
#define DCATALOG_JSON_MAX ((size_t)16 << 20) /* bytes of the catalog document */
#define DCATALOG_FILE	  "catalog.json"     /* in a filesystem image */
#define DCATALOG_ARTIFACT "application/vnd.docker.mcp.catalog.v1+json"

/* What the last read found, kept while its image id stays the same. */
static struct {
	char *ref;
	char *id;
	json_t *catalog;
} dcatalog_cache;

struct dcatalog_read {
	char *ref;
	char *id;
	bool has_pulled;
	dcatalog_fn *fn;
	void *arg;
};

const char *
dcatalog_default(void)
{
	const char *ref = mcpd_opts.docker_catalog;

	return ref != NULL && *ref != '\0' ? ref : DCATALOG_DEFAULT;
}

/* ---- the image as `docker image save` writes it ---- */

/* The member called name of save, parsed as JSON (new), or NULL. */
static json_t *
dcatalog_member_json(const void *save, size_t len, const char *name)
{
	struct tarball_member m;

	if (tarball_find(save, len, name, &m) != 1)
		return NULL;
	return json_loadb((const char *)m.data, m.size, JSON_REJECT_DUPLICATES,
	    NULL);
}

/* "blobs/sha256/<hex>" of a descriptor's digest (new), or NULL. */
static char *
dcatalog_blob_path(const json_t *desc)
{
	const char *digest = json_string_value(json_object_get(desc, "digest"));
	const char *colon;
	char *path;

	if (digest == NULL || (colon = strchr(digest, ':')) == NULL ||
	    strchr(digest, '/') != NULL || strstr(digest, "..") != NULL)
		return NULL;
	xasprintf(&path, "blobs/%.*s/%s", (int)(colon - digest), digest,
	    colon + 1);
	return path;
}

/* Copies a member's bytes: 0 and *ret (NUL-terminated), or -EFBIG. */
static int
dcatalog_take(const struct tarball_member *m, char **ret, size_t *ret_len)
{
	if (m->size > DCATALOG_JSON_MAX)
		return -EFBIG;
	*ret = xmalloc(m->size + 1);
	memcpy(*ret, m->data, m->size);
	(*ret)[m->size] = '\0';
	*ret_len = m->size;
	return 0;
}

/*
 * Looks for catalog.json in layer tars (paths into save), the last layer
 * first: 1 with the file, 0 when no layer has it (or a later one deletes
 * it with a whiteout), or a negative errno with *cause.
 */
static int
dcatalog_in_layers(const void *save, size_t len, const json_t *paths,
    char **ret, size_t *ret_len, char **cause)
{
	struct tarball_member layer, m;

	for (size_t i = json_array_size(paths); i-- > 0;) {
		const char *path = json_string_value(json_array_get(paths, i));
		int r;

		if (path == NULL || tarball_find(save, len, path, &layer) != 1)
			return errors_cause(cause, -EINVAL,
			    "the image's layer %s is missing from docker's export",
			    path != NULL ? path : "(unnamed)");
		if (layer.size >= 2 && layer.data[0] == 0x1f &&
		    layer.data[1] == 0x8b)
			return errors_cause(cause, -ENOTSUP,
			    "its layer %s is gzip-compressed, which mcpd cannot read",
			    path);
		r = tarball_find(layer.data, layer.size, DCATALOG_FILE, &m);
		if (r < 0)
			return errors_cause(cause, -EINVAL,
			    "its layer %s is not a tar archive", path);
		if (r == 1) {
			if (dcatalog_take(&m, ret, ret_len) < 0)
				return errors_cause(cause, -EFBIG,
				    "its %s is larger than %zu bytes",
				    DCATALOG_FILE, DCATALOG_JSON_MAX);
			return 1;
		}
		if (tarball_find(layer.data, layer.size, ".wh." DCATALOG_FILE,
			&m) == 1)
			return 0;
	}
	return 0;
}

static bool
dcatalog_is(const json_t *v, const char *s)
{
	return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

/* An OCI image layout (index.json, blobs/): an artifact or an image. */
static int
dcatalog_oci(const void *save, size_t len, const json_t *index, char **ret,
    size_t *ret_len, char **cause)
{
	const json_t *desc = json_array_get(json_object_get(index, "manifests"),
	    0);
	json_t *manifest = NULL, *next, *layers, *paths;
	struct tarball_member m;
	char *path = NULL;
	int r = -EINVAL, depth;

	/* An index may point at an index (docker's OCI export does). */
	for (depth = 0; depth < 4 && desc != NULL; depth++) {
		path = dcatalog_blob_path(desc);
		next = path != NULL ? dcatalog_member_json(save, len, path) :
				      NULL;
		free(path);
		path = NULL;
		/* desc points into manifest: it goes only now. */
		json_decref(manifest);
		if ((manifest = next) == NULL)
			break;
		desc = json_array_get(json_object_get(manifest, "manifests"),
		    0);
	}
	layers = json_object_get(manifest, "layers");
	if (!json_is_array(layers) || json_array_size(layers) == 0) {
		r = errors_cause(cause, -EINVAL,
		    "its OCI manifest has no layers");
		goto out;
	}
	if (dcatalog_is(json_object_get(manifest, "artifactType"),
		DCATALOG_ARTIFACT) ||
	    dcatalog_is(json_object_get(json_array_get(layers, 0), "mediaType"),
		"application/json")) {
		/* The catalog artifact: its first layer is the document. */
		if ((path = dcatalog_blob_path(json_array_get(layers, 0))) ==
			NULL ||
		    tarball_find(save, len, path, &m) != 1)
			r = errors_cause(cause, -EINVAL,
			    "the catalog artifact's layer is missing from docker's export");
		else if (dcatalog_take(&m, ret, ret_len) < 0)
			r = errors_cause(cause, -EFBIG,
			    "the catalog artifact's layer is larger than %zu bytes",
			    DCATALOG_JSON_MAX);
		else
			r = 1;
		goto out;
	}
	paths = json_array();
	for (size_t i = 0; i < json_array_size(layers); i++) {
		char *p = dcatalog_blob_path(json_array_get(layers, i));

		json_array_append_new(paths, json_string(p != NULL ? p : ""));
		free(p);
	}
	r = dcatalog_in_layers(save, len, paths, ret, ret_len, cause);
	json_decref(paths);
out:
	free(path);
	json_decref(manifest);
	return r;
}

int
dcatalog_extract(const void *save, size_t len, char **ret, size_t *ret_len,
    char **cause)
{
	json_t *doc;
	int r;

	*ret = NULL;
	if ((doc = dcatalog_member_json(save, len, "index.json")) != NULL) {
		r = dcatalog_oci(save, len, doc, ret, ret_len, cause);
	} else if ((doc = dcatalog_member_json(save, len, "manifest.json")) !=
	    NULL) {
		r = dcatalog_in_layers(save, len,
		    json_object_get(json_array_get(doc, 0), "Layers"), ret,
		    ret_len, cause);
	} else {
		return errors_cause(cause, -EINVAL,
		    "docker's export of it has neither index.json nor manifest.json");
	}
	json_decref(doc);
	if (r == 0)
		r = errors_cause(cause, -ENOENT,
		    "it holds no /%s (and is no catalog artifact of type %s)",
		    DCATALOG_FILE, DCATALOG_ARTIFACT);
	return r < 0 ? r : 0;
}

/* ---- the catalog document ---- */

/* A definition of the catalog, named; NULL when it cannot be used. */
static json_t *
dcatalog_entry(const char *name, const json_t *server, const json_t *outer)
{
	const char *type = json_string_value(json_object_get(server, "type"));
	const char *otype = json_string_value(json_object_get(outer, "type"));
	json_t *e;

	if (!json_is_object(server) || name == NULL || *name == '\0')
		return NULL;
	e = xjson(json_deep_copy(server));
	json_object_set_new(e, "name", json_string(name));
	if (type == NULL && otype != NULL)
		json_object_set_new(e, "type",
		    json_string(strcmp(otype, "image") == 0 ? "server" :
							      otype));
	if (json_object_get(e, "image") == NULL &&
	    json_is_string(json_object_get(outer, "image")))
		json_object_set(e, "image", json_object_get(outer, "image"));
	if (dcatalog_is(json_object_get(outer, "type"), "remote") &&
	    json_is_string(json_object_get(outer, "endpoint")) &&
	    json_object_get(json_object_get(e, "remote"), "url") == NULL) {
		if (!json_is_object(json_object_get(e, "remote")))
			json_object_set_new(e, "remote", json_object());
		json_object_set(json_object_get(e, "remote"), "url",
		    json_object_get(outer, "endpoint"));
	}
	return e;
}

static int
dcatalog_by_name(const void *a, const void *b)
{
	const json_t *const *x = a, *const *y = b;

	return strcmp(json_string_value(json_object_get(*x, "name")),
	    json_string_value(json_object_get(*y, "name")));
}

json_t *
dcatalog_parse(const char *text, size_t len, char **cause)
{
	json_t *doc, *servers = json_array(), *e, *v, *out, **sorted;
	json_error_t jerr;
	const char *title = NULL, *k;
	size_t skipped = 0, i, n;

	while (len > 0 &&
	    (*text == ' ' || *text == '\n' || *text == '\r' || *text == '\t'))
		text++, len--;
	doc = json_loadb(text, len, 0, &jerr);
	if (doc == NULL) {
		json_decref(servers);
		if (len > 0 && *text != '{' && *text != '[')
			errors_cause(cause, -EINVAL,
			    "its %s is not JSON (YAML catalogs are not read: mcpd has no YAML parser; `docker mcp catalog show NAME --format json` writes the JSON form)",
			    DCATALOG_FILE);
		else
			errors_cause(cause, -EINVAL,
			    "its catalog is not valid JSON: line %d: %s",
			    jerr.line, jerr.text);
		return NULL;
	}
	if (json_is_array(json_object_get(doc, "servers"))) {
		/* docker/mcp-gateway's catalog artifact: {title, servers} */
		title = json_string_value(json_object_get(doc, "title"));
		json_array_foreach(json_object_get(doc, "servers"), i, v) {
			const json_t *snap = json_object_get(json_object_get(v,
								 "snapshot"),
			    "server");

			e = dcatalog_entry(
			    json_string_value(json_object_get(snap, "name")),
			    snap, v);
			if (e == NULL)
				skipped++;
			else
				json_array_append_new(servers, e);
		}
	} else if (json_is_object(json_object_get(doc, "registry"))) {
		/* The older form, {name, displayName, registry: {NAME: ...}} */
		title = json_string_value(json_object_get(doc, "displayName"));
		if (title == NULL)
			title = json_string_value(json_object_get(doc, "name"));
		json_object_foreach(json_object_get(doc, "registry"), k, v) {
			if ((e = dcatalog_entry(k, v, NULL)) == NULL)
				skipped++;
			else
				json_array_append_new(servers, e);
		}
	} else {
		json_decref(doc);
		json_decref(servers);
		errors_cause(cause, -EINVAL,
		    "its catalog has neither \"servers\" (an array) nor \"registry\" (an object)");
		return NULL;
	}
	/* Sorted by name; the first of a repeated name wins. */
	n = json_array_size(servers);
	sorted = xcalloc(n + 1, sizeof *sorted);
	for (i = 0; i < n; i++)
		sorted[i] = json_array_get(servers, i);
	qsort(sorted, n, sizeof *sorted, dcatalog_by_name);
	out = xjson(json_pack("{s:s?, s:[], s:i}", "title", title, "servers",
	    "skipped", (json_int_t)0));
	for (i = 0; i < n; i++) {
		if (i > 0 &&
		    dcatalog_by_name(&sorted[i - 1], &sorted[i]) == 0) {
			skipped++;
			continue;
		}
		json_array_append(json_object_get(out, "servers"), sorted[i]);
	}
	json_object_set_new(out, "skipped", json_integer((json_int_t)skipped));
	free(sorted);
	json_decref(servers);
	json_decref(doc);
	return out;
}

/* ---- reading it through the docker CLI ---- */

static void dcatalog_inspect(struct dcatalog_read *);

static void
dcatalog_end(struct dcatalog_read *rd, const json_t *catalog,
    enum errors_kind kind, const char *why)
{
	rd->fn(rd->arg, catalog, kind, why);
	free(rd->ref);
	free(rd->id);
	free(rd);
}

static void
dcatalog_saved(void *arg, int status, const char *out, size_t out_len,
    const char *err)
{
	struct dcatalog_read *rd = arg;
	char *json = NULL, *cause = NULL, *why;
	size_t len = 0;
	json_t *catalog = NULL;

	if (status != 0) {
		why = docker_describe_failure(status, err);
		xasprintf(&cause, "cannot export the Docker MCP catalog %s: %s",
		    rd->ref, why);
		free(why);
		dcatalog_end(rd, NULL, ERRORS_UNAVAILABLE, cause);
		free(cause);
		return;
	}
	if (dcatalog_extract(out, out_len, &json, &len, &cause) == 0)
		catalog = dcatalog_parse(json, len, &cause);
	free(json);
	if (catalog == NULL) {
		xasprintf(&why, "the Docker MCP catalog %s cannot be read: %s",
		    rd->ref, cause);
		dcatalog_end(rd, NULL, ERRORS_UNAVAILABLE, why);
		free(why);
		free(cause);
		return;
	}
	json_object_set_new(catalog, "catalog", json_string(rd->ref));
	json_object_set_new(catalog, "image", json_string(rd->id));
	free(dcatalog_cache.ref);
	free(dcatalog_cache.id);
	json_decref(dcatalog_cache.catalog);
	dcatalog_cache.ref = xstrdup(rd->ref);
	dcatalog_cache.id = xstrdup(rd->id);
	dcatalog_cache.catalog = catalog;
	dcatalog_end(rd, catalog, 0, NULL);
}

/* What docker says when it cannot find an image to pull. */
static bool
dcatalog_is_missing(const char *err)
{
	return strcasestr(err, "not found") != NULL ||
	    strcasestr(err, "does not exist") != NULL ||
	    strcasestr(err, "pull access denied") != NULL ||
	    strcasestr(err, "manifest unknown") != NULL;
}

static void
dcatalog_pulled(void *arg, int status, const char *out, const char *err)
{
	struct dcatalog_read *rd = arg;
	char *why = docker_describe_failure(status, err), *text;

	(void)out;
	if (status != 0) {
		xasprintf(&text,
		    "the Docker MCP catalog %s is not in docker's image cache and cannot be pulled: %s",
		    rd->ref, why);
		dcatalog_end(rd, NULL,
		    status > 0 && dcatalog_is_missing(err) ? ERRORS_NOT_FOUND :
							     ERRORS_UNAVAILABLE,
		    text);
		free(text);
	} else {
		rd->has_pulled = true;
		dcatalog_inspect(rd);
	}
	free(why);
}

static void
dcatalog_inspected(void *arg, int status, const char *out, const char *err)
{
	struct dcatalog_read *rd = arg;
	const char *args[] = { docker_program(), "image", "save", rd->ref,
		NULL };
	const char *pull[] = { docker_program(), "pull", "--quiet", rd->ref,
		NULL };
	size_t len = strcspn(out, "\r\n");
	char *why, *text;

	if (status != 0 && !rd->has_pulled && status > 0 &&
	    strcasestr(err, "no such") != NULL) {
		log_info("docker catalog %s is not cached: pulling it",
		    rd->ref);
		docker_cmd_start(pull, NULL, mcpd_opts.load_timeout_ms, NULL,
		    dcatalog_pulled, rd);
		return;
	}
	if (status != 0 || len == 0) {
		why = docker_describe_failure(status, err);
		xasprintf(&text, "cannot look at the Docker MCP catalog %s: %s",
		    rd->ref, status != 0 ? why : "docker printed no image id");
		dcatalog_end(rd, NULL, ERRORS_UNAVAILABLE, text);
		free(text);
		free(why);
		return;
	}
	rd->id = xstrndup(out, len);
	if (dcatalog_cache.catalog != NULL &&
	    strcmp(dcatalog_cache.ref, rd->ref) == 0 &&
	    strcmp(dcatalog_cache.id, rd->id) == 0) {
		dcatalog_end(rd, dcatalog_cache.catalog, 0, NULL);
		return;
	}
	docker_cmd_start_data(args, mcpd_opts.load_timeout_ms,
	    DCATALOG_SAVE_MAX, dcatalog_saved, rd);
}

static void
dcatalog_inspect(struct dcatalog_read *rd)
{
	const char *args[] = { docker_program(), "image", "inspect", "--format",
		"{{.Id}}", rd->ref, NULL };

	docker_cmd_start(args, NULL, mcpd_opts.docker_timeout_ms, NULL,
	    dcatalog_inspected, rd);
}

void
dcatalog_read(const char *ref, dcatalog_fn *fn, void *arg)
{
	struct dcatalog_read *rd = xcalloc(1, sizeof *rd);

	rd->ref = xstrdup(ref);
	rd->fn = fn;
	rd->arg = arg;
	/* docker_cmd_start reports from the loop, never from in here. */
	dcatalog_inspect(rd);
}

void
dcatalog_close(void)
{
	free(dcatalog_cache.ref);
	free(dcatalog_cache.id);
	json_decref(dcatalog_cache.catalog);
	memset(&dcatalog_cache, 0, sizeof dcatalog_cache);
}
