/* SPDX-License-Identifier: ISC */
/* Tests of docker-catalog.c and tarball.c: docker's image exports, catalogs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpd-stubs.h"
#include "tap.h"
#include "tarball.h"

#define FIXTURES "tests/unit/fixtures/resolve/"

/* A tar archive being written in memory. */
struct tw {
	char *buf;
	size_t len;
	FILE *f;
};

static void
tw_open(struct tw *t)
{
	t->buf = NULL;
	t->len = 0;
	t->f = open_memstream(&t->buf, &t->len);
}

/* One header block: name in the name field, as given (may be long). */
static void
tw_header(struct tw *t, const char *name, char type, size_t size,
    bool is_bad_sum)
{
	unsigned char h[512] = { 0 };
	unsigned sum = 0;

	memcpy(h, name, strlen(name) < 100 ? strlen(name) : 100);
	memcpy(h + 100, "0000644", 7);
	memcpy(h + 108, "0000000", 7);
	memcpy(h + 116, "0000000", 7);
	snprintf((char *)h + 124, 12, "%011zo", size);
	memcpy(h + 136, "00000000000", 11);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (size_t i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum + (is_bad_sum ? 1 : 0));
	fwrite(h, 1, 512, t->f);
}

static void
tw_data(struct tw *t, const void *data, size_t size)
{
	static const char zero[512];

	fwrite(data, 1, size, t->f);
	if (size % 512)
		fwrite(zero, 1, 512 - size % 512, t->f);
}

static void
tw_file(struct tw *t, const char *name, const void *data, size_t size)
{
	tw_header(t, name, '0', size, false);
	tw_data(t, data, size);
}

/* Ends the archive; the caller frees t->buf. */
static void
tw_close(struct tw *t)
{
	static const char zero[1024];

	fwrite(zero, 1, sizeof zero, t->f);
	fclose(t->f);
}

static char *
slurp(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0;

	if (f == NULL)
		return NULL;
	buf = malloc(1 << 20);
	len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	buf[len] = '\0';
	*ret_len = len;
	return buf;
}

/* A layer tar holding files (name, content pairs, NULL-terminated). */
static void
layer_of(struct tw *t, const char *const *files)
{
	tw_open(t);
	tw_header(t, "./", '5', 0, false);
	for (size_t i = 0; files[i] != NULL; i += 2)
		tw_file(t, files[i], files[i + 1], strlen(files[i + 1]));
	tw_close(t);
}

/* docker image save (docker's own format) of layers, lowest first. */
static void
save_of(struct tw *out, struct tw *layers, size_t n)
{
	char manifest[1024], path[64];
	size_t at;

	tw_open(out);
	at = (size_t)snprintf(manifest, sizeof manifest,
	    "[{\"Config\":\"c.json\",\"RepoTags\":[\"x:1\"],\"Layers\":[");
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof path, "l%zu/layer.tar", i);
		tw_file(out, path, layers[i].buf, layers[i].len);
		at += (size_t)snprintf(manifest + at, sizeof manifest - at,
		    "%s\"%s\"", i > 0 ? "," : "", path);
	}
	snprintf(manifest + at, sizeof manifest - at, "]}]");
	tw_file(out, "manifest.json", manifest, strlen(manifest));
	tw_close(out);
}

static int
extract(const struct tw *save, char **ret, size_t *ret_len, char **cause)
{
	return dcatalog_extract(save->buf, save->len, ret, ret_len, cause);
}

static void
test_docker_save(void)
{
	size_t flen, len;
	char *catalog = slurp(FIXTURES "docker-catalog.json", &flen);
	char *got = NULL, *cause = NULL;
	const char *files[] = { "./etc/hostname", "x\n", "./catalog.json",
		catalog, NULL };
	struct tw layer, save;

	TAP_REQUIRE(catalog != NULL, "fixture");
	layer_of(&layer, files);
	save_of(&save, &layer, 1);
	TAP_CHECK_INT(extract(&save, &got, &len, &cause), 0);
	TAP_CHECK_INT(len, flen);
	TAP_CHECK(got != NULL && memcmp(got, catalog, flen) == 0,
	    "the catalog's bytes as they are");
	free(got);
	free(save.buf);
	free(layer.buf);
	free(catalog);
	free(cause);
}

static void
test_layers_and_whiteouts(void)
{
	const char *low_files[] = { "catalog.json", "{\"servers\":[]}", NULL };
	const char *high_files[] = { "catalog.json",
		"{\"registry\":{\"a\":{}}}", NULL };
	const char *wh_files[] = { ".wh.catalog.json", "", NULL };
	const char *none_files[] = { "other.json", "{}", NULL };
	struct tw layers[2], save;
	char *got = NULL, *cause = NULL;
	size_t len;

	/* The upper layer's file wins. */
	layer_of(&layers[0], low_files);
	layer_of(&layers[1], high_files);
	save_of(&save, layers, 2);
	TAP_CHECK_INT(extract(&save, &got, &len, &cause), 0);
	TAP_CHECK_STR(got, "{\"registry\":{\"a\":{}}}");
	free(got);
	free(save.buf);
	free(layers[1].buf);
	/* A whiteout above hides it. */
	layer_of(&layers[1], wh_files);
	save_of(&save, layers, 2);
	got = NULL;
	TAP_CHECK_INT(extract(&save, &got, &len, &cause), -ENOENT);
	TAP_CHECK(cause != NULL && strstr(cause, "holds no /catalog.json"),
	    "cause: %s", tap_str_show(cause));
	free(cause);
	cause = NULL;
	free(save.buf);
	free(layers[1].buf);
	free(layers[0].buf);
	/* No layer has it. */
	layer_of(&layers[0], none_files);
	save_of(&save, layers, 1);
	TAP_CHECK_INT(extract(&save, &got, &len, &cause), -ENOENT);
	free(cause);
	free(save.buf);
	free(layers[0].buf);
}

/* A blob of an OCI layout: its digest is only a name here. */
static void
blob(struct tw *t, const char *hex, const char *content)
{
	char path[128];

	snprintf(path, sizeof path, "blobs/sha256/%s", hex);
	tw_file(t, path, content, strlen(content));
}

static void
test_oci_artifact(void)
{
	const char *doc = "{\"title\":\"t\",\"servers\":[]}";
	struct tw save;
	char *got = NULL, *cause = NULL;
	size_t len;

	/* As docker/mcp-gateway pushes it: an artifact with a JSON layer. */
	tw_open(&save);
	tw_file(&save, "oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}", 31);
	blob(&save, "aaaa", doc);
	blob(&save, "cccc", "{}");
	blob(&save, "mmmm",
	    "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
	    "\"artifactType\":\"application/vnd.docker.mcp.catalog.v1+json\","
	    "\"config\":{\"mediaType\":\"application/vnd.oci.empty.v1+json\",\"digest\":\"sha256:cccc\",\"size\":2},"
	    "\"layers\":[{\"mediaType\":\"application/json\",\"digest\":\"sha256:aaaa\",\"size\":26}]}");
	tw_file(&save, "index.json",
	    "{\"manifests\":[{\"digest\":\"sha256:mmmm\"}]}", 40);
	tw_close(&save);
	TAP_CHECK_INT(extract(&save, &got, &len, &cause), 0);
	TAP_CHECK_STR(got, doc);
	free(got);
	free(cause);
	free(save.buf);
}

static void
test_oci_image(void)
{
	const char *files[] = { "catalog.json", "{\"servers\":[]}", NULL };
	const char *gz = "\x1f\x8b\x08\x00rest";
	struct tw layer, save;
	char *got = NULL, *cause = NULL, *path = NULL;
	size_t len;

	/* docker 25's OCI export: index -> index -> manifest -> tar layer. */
	layer_of(&layer, files);
	tw_open(&save);
	xasprintf(&path, "blobs/sha256/llll");
	tw_file(&save, path, layer.buf, layer.len);
	blob(&save, "mmmm",
	    "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"digest\":\"sha256:cccc\"},"
	    "\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\",\"digest\":\"sha256:llll\"}]}");
	blob(&save, "iiii", "{\"manifests\":[{\"digest\":\"sha256:mmmm\"}]}");
	tw_file(&save, "index.json",
	    "{\"manifests\":[{\"digest\":\"sha256:iiii\"}]}",
	    strlen("{\"manifests\":[{\"digest\":\"sha256:iiii\"}]}"));
	tw_close(&save);
	TAP_CHECK_INT(extract(&save, &got, &len, &cause), 0);
	TAP_CHECK_STR(got, "{\"servers\":[]}");
	free(got);
	free(save.buf);
	/* A compressed layer is said to be one. */
	tw_open(&save);
	tw_file(&save, path, gz, 8);
	blob(&save, "mmmm",
	    "{\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"sha256:llll\"}]}");
	tw_file(&save, "index.json",
	    "{\"manifests\":[{\"digest\":\"sha256:mmmm\"}]}", 40);
	tw_close(&save);
	got = NULL;
	TAP_CHECK_INT(extract(&save, &got, &len, &cause), -ENOTSUP);
	TAP_CHECK(cause != NULL && strstr(cause, "gzip-compressed"),
	    "cause: %s", tap_str_show(cause));
	free(cause);
	free(save.buf);
	free(layer.buf);
	free(path);
}

static char *
names_of(const json_t *catalog)
{
	char *out = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&out, &len);
	json_t *e;

	json_array_foreach(json_object_get(catalog, "servers"), i, e)
		fprintf(f, "%s%s", i > 0 ? "," : "",
		    json_string_value(json_object_get(e, "name")));
	fclose(f);
	return out;
}

static void
test_parse(void)
{
	size_t len;
	char *text = slurp(FIXTURES "docker-catalog.json", &len), *names;
	char *cause = NULL;
	json_t *cat, *github;

	TAP_REQUIRE(text != NULL, "fixture");
	cat = dcatalog_parse(text, len, &cause);
	TAP_REQUIRE(cat != NULL, "%s", tap_str_show(cause));
	names = names_of(cat);
	/* Sorted; the repeated github and the bare registry entry skipped. */
	TAP_CHECK_STR(names, "example-remote,github,isolated,notes");
	TAP_CHECK_INT(json_integer_value(json_object_get(cat, "skipped")), 2);
	TAP_CHECK_STR(json_string_value(json_object_get(cat, "title")),
	    "mcpd fixture catalog");
	github = json_array_get(json_object_get(cat, "servers"), 1);
	TAP_CHECK_STR(json_string_value(json_object_get(github, "image")),
	    "mcp/github@sha256:1111111111111111111111111111111111111111111111111111111111111111");
	free(names);
	json_decref(cat);
	free(text);

	text = slurp(FIXTURES "docker-legacy.json", &len);
	TAP_REQUIRE(text != NULL, "fixture");
	cat = dcatalog_parse(text, len, &cause);
	TAP_REQUIRE(cat != NULL, "%s", tap_str_show(cause));
	names = names_of(cat);
	TAP_CHECK_STR(names, "fetch,time");
	TAP_CHECK_INT(json_integer_value(json_object_get(cat, "skipped")), 1);
	TAP_CHECK_STR(json_string_value(json_object_get(cat, "title")),
	    "Docker MCP Catalog");
	free(names);
	json_decref(cat);
	free(text);
}

static void
check_parse_fails(const char *text, const char *part)
{
	char *cause = NULL;
	json_t *cat = dcatalog_parse(text, strlen(text), &cause);

	TAP_CHECK(cat == NULL, "parsed: %s", text);
	TAP_CHECK(cause != NULL && strstr(cause, part) != NULL,
	    "cause \"%s\" lacks \"%s\"", tap_str_show(cause), part);
	json_decref(cat);
	free(cause);
}

static void
test_parse_refusals(void)
{
	check_parse_fails("registry:\n  time:\n    image: mcp/time\n",
	    "is not JSON (YAML catalogs are not read");
	check_parse_fails("{\"servers\": [1,", "is not valid JSON: line 1");
	check_parse_fails("{\"title\": \"x\"}",
	    "has neither \"servers\" (an array) nor \"registry\"");
}

static void
test_tarball(void)
{
	char long_name[300], pax[400];
	struct tarball_member m;
	struct tw t;
	int n;

	memset(long_name, 'd', sizeof long_name);
	memcpy(long_name + 290, "/cat.json", 10);
	tw_open(&t);
	/* GNU: an 'L' member names the next one. */
	tw_header(&t, "././@LongLink", 'L', strlen(long_name) + 1, false);
	tw_data(&t, long_name, strlen(long_name) + 1);
	tw_file(&t, "short-cut", "gnu", 3);
	/* pax: a path record. */
	/* A record's length counts its own digits: 2 here. */
	n = snprintf(pax, sizeof pax, "%d path=%s\n", 19, "p/a/x.json");
	tw_header(&t, "PaxHeader", 'x', (size_t)n, false);
	tw_data(&t, pax, (size_t)n);
	tw_file(&t, "cut", "pax", 3);
	tw_close(&t);
	TAP_CHECK_INT(tarball_find(t.buf, t.len, long_name, &m), 1);
	TAP_CHECK_INT(m.size, 3);
	TAP_CHECK(memcmp(m.data, "gnu", 3) == 0, "GNU long name's data");
	TAP_CHECK_INT(tarball_find(t.buf, t.len, "/p/a/x.json", &m), 1);
	TAP_CHECK(memcmp(m.data, "pax", 3) == 0, "pax path's data");
	TAP_CHECK_INT(tarball_find(t.buf, t.len, "short-cut", &m), 0);
	/* Cut short in the middle of a member's data. */
	TAP_CHECK_INT(tarball_find(t.buf, 512 + 100, "x", &m), -EINVAL);
	free(t.buf);
	/* A bad checksum is no header. */
	tw_open(&t);
	tw_header(&t, "a", '0', 0, true);
	tw_close(&t);
	TAP_CHECK_INT(tarball_find(t.buf, t.len, "a", &m), -EINVAL);
	free(t.buf);
}

static const struct tap_test tests[] = {
	{ "docker image save: /catalog.json of the image's layer",
	    test_docker_save },
	{ "the upper layer wins; a whiteout hides; none has it",
	    test_layers_and_whiteouts },
	{ "an OCI layout of the catalog artifact: its JSON layer",
	    test_oci_artifact },
	{ "an OCI layout of an image: tar layers; gzip is refused",
	    test_oci_image },
	{ "catalog documents: {title, servers} and {registry}", test_parse },
	{ "YAML, broken JSON, no servers: errors that say so",
	    test_parse_refusals },
	{ "tar: GNU long names, pax paths, truncation, checksums",
	    test_tarball },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
