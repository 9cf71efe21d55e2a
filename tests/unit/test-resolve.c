/* SPDX-License-Identifier: ISC */
/* Unit tests of common/resolve.c with the records of fixtures/resolve/. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "resolve.h"
#include "tap.h"

#define FIXTURES "tests/unit/fixtures/resolve/"

static json_t *
fixture(const char *file)
{
	json_error_t err;
	json_t *j = json_load_file(file, 0, &err);

	TAP_CHECK(j != NULL, "%s: %s (line %d)", file, err.text, err.line);
	return j;
}

/* A definition of the fixture catalog by name (borrowed). */
static json_t *
catalog_entry(json_t *catalog, const char *name)
{
	json_t *v, *snap;
	size_t i;

	json_array_foreach(json_object_get(catalog, "servers"), i, v) {
		snap = json_object_get(json_object_get(v, "snapshot"),
		    "server");
		if (json_is_string(json_object_get(snap, "name")) &&
		    strcmp(json_string_value(json_object_get(snap, "name")),
			name) == 0)
			return snap;
	}
	return NULL;
}

static char *
compact(const json_t *j)
{
	return j != NULL ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) :
			   strdup("null");
}

/* The names of plan->missing, joined with ",". */
static char *
missing_names(const struct resolve_plan *p)
{
	char *out = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&out, &len);
	json_t *m;

	json_array_foreach(p->missing, i, m)
		fprintf(f, "%s%s:%s%s", i > 0 ? "," : "",
		    json_string_value(json_object_get(m, "kind")),
		    json_string_value(json_object_get(m, "name")),
		    json_is_true(json_object_get(m, "is_secret")) ? "(secret)" :
								    "");
	fclose(f);
	return out;
}

static bool
has_note(const struct resolve_plan *p, const char *part)
{
	json_t *n;
	size_t i;

	json_array_foreach(p->notes, i, n)
		if (strstr(json_string_value(n), part) != NULL)
			return true;
	return false;
}

static bool
yes(const char *name)
{
	(void)name;
	return true;
}

static bool
no(const char *name)
{
	(void)name;
	return false;
}

/* Resolves a registry fixture; checks params and missing. */
static void
check_registry(const char *file, const struct resolve_input *in,
    const char *want_params, const char *want_missing, const char *kind)
{
	json_t *rec = fixture(file);
	struct resolve_plan p;
	char *cause = NULL, *got, *miss;
	int r;

	if (rec == NULL)
		return;
	r = resolve_registry(rec, in, &p, &cause);
	TAP_CHECK_INT(r, 0);
	if (r == 0) {
		got = compact(p.params);
		miss = missing_names(&p);
		TAP_CHECK_STR(got, want_params);
		TAP_CHECK_STR(miss, want_missing);
		TAP_CHECK_STR(p.kind, kind);
		free(got);
		free(miss);
		resolve_plan_clear(&p);
	} else
		TAP_CHECK(false, "cause: %s", tap_str_show(cause));
	free(cause);
	json_decref(rec);
}

static void
test_npm(void)
{
	struct resolve_input in = { 0 };
	json_t *env = json_pack("{s:s}", "API_KEY", "$(secret.key)");
	json_t *rec = fixture(FIXTURES "npm.json");
	struct resolve_plan p;
	char *cause = NULL;

	/* Nothing given: the secret is asked for by name, never guessed. */
	check_registry(FIXTURES "npm.json", &in,
	    "{\"command\":[\"npx\",\"-y\",\"@modelcontextprotocol/server-everything@2026.8.31\",\"stdio\"],"
	    "\"env\":{\"ENDPOINT\":\"https://api.example.com/v1\",\"LOG_LEVEL\":\"info\",\"MODE\":\"fixed\"},"
	    "\"name\":\"server-everything\"}",
	    "env:API_KEY(secret)", "npm");
	/* Given: it goes in as given (a reference stays a reference). */
	in.env = env;
	check_registry(FIXTURES "npm.json", &in,
	    "{\"command\":[\"npx\",\"-y\",\"@modelcontextprotocol/server-everything@2026.8.31\",\"stdio\"],"
	    "\"env\":{\"API_KEY\":\"$(secret.key)\",\"ENDPOINT\":\"https://api.example.com/v1\",\"LOG_LEVEL\":\"info\",\"MODE\":\"fixed\"},"
	    "\"name\":\"server-everything\"}",
	    "", "npm");
	TAP_REQUIRE(rec != NULL, "fixture");
	TAP_REQUIRE(resolve_registry(rec, &in, &p, &cause) == 0, "%s",
	    tap_str_show(cause));
	TAP_CHECK(has_note(&p, "LOG_LEVEL=info is the record's default"),
	    "the default is said");
	TAP_CHECK(has_note(&p, "optional env REGION is not set: where"),
	    "the optional one is said");
	TAP_CHECK_INT(json_array_size(p.given), 1);
	TAP_CHECK_STR(json_string_value(json_array_get(p.given, 0)), "API_KEY");
	resolve_plan_clear(&p);
	json_decref(rec);
	json_decref(env);
}

static void
test_pypi(void)
{
	struct resolve_input in = { .has_program = yes };
	json_t *rec = fixture(FIXTURES "pypi.json");
	struct resolve_plan p;
	char *cause = NULL;

	check_registry(FIXTURES "pypi.json", &in,
	    "{\"command\":[\"uvx\",\"mcp-weather==1.4.0\",\"--units=metric\",\"--verbose\"],"
	    "\"name\":\"weather\"}",
	    "env:WEATHER_TOKEN(secret)", "pypi");
	/* Without uvx: a clear error, no plan. */
	in.has_program = no;
	TAP_REQUIRE(rec != NULL, "fixture");
	TAP_CHECK_INT(resolve_registry(rec, &in, &p, &cause), -ENOTSUP);
	TAP_CHECK(cause != NULL &&
		strstr(cause, "runs with uvx, which is not on PATH") != NULL,
	    "cause: %s", tap_str_show(cause));
	free(cause);
	json_decref(rec);
}

static void
test_oci(void)
{
	struct resolve_input in = { 0 };
	json_t *headers = json_pack("{s:s}", "Authorization", "Bearer t");

	check_registry(FIXTURES "oci.json", &in,
	    "{\"args\":[\"stdio\",\"--read-only\"],"
	    "\"env\":{\"GITHUB_TOOLSETS\":\"repos,issues\"},"
	    "\"name\":\"github-mcp-server\","
	    "\"target\":\"ghcr.io/github/github-mcp-server:0.9.0\","
	    "\"volumes\":[\"/tmp/gh:/data\"]}",
	    "env:GITHUB_PERSONAL_ACCESS_TOKEN(secret)", "oci");
	/* The remote, when asked for, with its header from the user. */
	in.prefer_remote = true;
	in.headers = headers;
	check_registry(FIXTURES "oci.json", &in,
	    "{\"headers\":{\"Authorization\":\"Bearer t\"},"
	    "\"name\":\"github-mcp-server\","
	    "\"target\":\"https://api.githubcopilot.com/mcp/\","
	    "\"transport\":\"streamable-http\"}",
	    "", "remote");
	/* Without it, the header is asked for by name. */
	in.headers = NULL;
	check_registry(FIXTURES "oci.json", &in,
	    "{\"name\":\"github-mcp-server\","
	    "\"target\":\"https://api.githubcopilot.com/mcp/\","
	    "\"transport\":\"streamable-http\"}",
	    "header:Authorization(secret)", "remote");
	json_decref(headers);
}

static void
test_remote_only(void)
{
	struct resolve_input in = { 0 };

	check_registry(FIXTURES "remote-only.json", &in,
	    "{\"headers\":{\"X-Client\":\"mcpd\"},\"name\":\"remote\","
	    "\"target\":\"https://mcp.example.com/sse\",\"transport\":\"sse\"}",
	    "header:X-Api-Key(secret)", "remote");
}

/* An error: code and a part of the cause. */
static void
check_refused(const char *file, bool is_docker, const char *entry, int code,
    const char *part)
{
	json_t *rec = fixture(file), *e;
	struct resolve_input in = { 0 };
	struct resolve_plan p;
	char *cause = NULL;
	int r;

	if (rec == NULL)
		return;
	e = is_docker ? catalog_entry(rec, entry) : rec;
	TAP_REQUIRE(e != NULL, "entry %s", entry);
	r = is_docker ? resolve_docker(e, &in, &p, &cause) :
			resolve_registry(e, &in, &p, &cause);
	TAP_CHECK_INT(r, code);
	TAP_CHECK(cause != NULL && strstr(cause, part) != NULL,
	    "cause \"%s\" lacks \"%s\"", tap_str_show(cause), part);
	if (r == 0)
		resolve_plan_clear(&p);
	free(cause);
	json_decref(rec);
}

static void
test_refusals(void)
{
	check_refused(FIXTURES "http-remote.json", false, NULL, -ENOTSUP,
	    "is not https: mcpd loads catalog and registry remotes over HTTPS only");
	check_refused(FIXTURES "nothing.json", false, NULL, -ENOTSUP,
	    "com.example/dotnet offers nothing mcpd runs");
	check_refused(FIXTURES "nothing.json", false, NULL, -ENOTSUP,
	    "packages: nuget (stdio), npm (streamable-http); remotes: none");
	check_refused(FIXTURES "docker-catalog.json", true, "notes", -ENOTSUP,
	    "notes is a poci definition of the catalog");
}

static void
test_docker_image(void)
{
	json_t *cat = fixture(FIXTURES "docker-catalog.json"), *e;
	json_t *env = json_pack("{s:s}", "GITHUB_PERSONAL_ACCESS_TOKEN",
	    "$(secret.gh)");
	struct resolve_input in = { 0 };
	struct resolve_plan p;
	char *cause = NULL, *got, *miss;

	TAP_REQUIRE(cat != NULL, "fixture");
	e = catalog_entry(cat, "github");
	TAP_REQUIRE(resolve_docker(e, &in, &p, &cause) == 0, "%s",
	    tap_str_show(cause));
	got = compact(p.params);
	miss = missing_names(&p);
	TAP_CHECK_STR(got,
	    "{\"args\":[\"stdio\",\"--read-only\"],"
	    "\"env\":{\"GITHUB_TOOLSETS\":\"repos\"},\"name\":\"github\","
	    "\"target\":\"mcp/github@sha256:1111111111111111111111111111111111111111111111111111111111111111\","
	    "\"volumes\":[\"/tmp/fixed:/fixed\"]}");
	/* The required configuration and the secret, by name. */
	TAP_CHECK_STR(miss,
	    "env:GITHUB_ORG,env:GITHUB_PERSONAL_ACCESS_TOKEN(secret)");
	TAP_CHECK(has_note(&p, "optional env GITHUB_HOST is not set"),
	    "the optional configuration is said");
	TAP_CHECK(has_note(&p, "volume {{github.paths|volume}} is left out"),
	    "the templated volume is said");
	TAP_CHECK_STR(p.kind, "image");
	free(got);
	free(miss);
	resolve_plan_clear(&p);

	/* Given, the secret and the configuration are as the user said. */
	json_object_set_new(env, "GITHUB_ORG", json_string("acme"));
	in.env = env;
	TAP_REQUIRE(resolve_docker(e, &in, &p, &cause) == 0, "%s",
	    tap_str_show(cause));
	got = compact(json_object_get(p.params, "env"));
	TAP_CHECK_STR(got,
	    "{\"GITHUB_ORG\":\"acme\",\"GITHUB_PERSONAL_ACCESS_TOKEN\":\"$(secret.gh)\",\"GITHUB_TOOLSETS\":\"repos\"}");
	TAP_CHECK_INT(json_array_size(p.missing), 0);
	free(got);
	resolve_plan_clear(&p);

	e = catalog_entry(cat, "isolated");
	TAP_REQUIRE(resolve_docker(e, &in, &p, &cause) == 0, "%s",
	    tap_str_show(cause));
	TAP_CHECK_STR(json_string_value(json_object_get(p.params, "network")),
	    "none");
	resolve_plan_clear(&p);
	json_decref(env);
	json_decref(cat);
}

static void
test_docker_remote(void)
{
	json_t *cat = fixture(FIXTURES "docker-catalog.json"), *e;
	struct resolve_input in = { 0 };
	struct resolve_plan p;
	char *cause = NULL, *got, *miss;

	TAP_REQUIRE(cat != NULL, "fixture");
	e = catalog_entry(cat, "example-remote");
	TAP_REQUIRE(resolve_docker(e, &in, &p, &cause) == 0, "%s",
	    tap_str_show(cause));
	got = compact(p.params);
	miss = missing_names(&p);
	TAP_CHECK_STR(got,
	    "{\"headers\":{\"X-Client\":\"mcpd\"},\"name\":\"example-remote\","
	    "\"target\":\"https://mcp.example.com/mcp\","
	    "\"transport\":\"streamable-http\"}");
	TAP_CHECK_STR(miss, "header:Authorization(secret)");
	TAP_CHECK(has_note(&p, "signs in with OAuth, which mcpd does not do"),
	    "OAuth is said");
	TAP_CHECK_STR(p.kind, "remote");
	free(got);
	free(miss);
	resolve_plan_clear(&p);
	json_decref(cat);
}

static void
test_server_name(void)
{
	char *n;

	n = resolve_server_name("io.github.owner/my.server");
	TAP_CHECK_STR(n, "my-server");
	free(n);
	n = resolve_server_name("github");
	TAP_CHECK_STR(n, "github");
	free(n);
	n = resolve_server_name("com.example/...");
	TAP_CHECK_STR(n, NULL);
	free(n);
}

static void
test_registry_names(void)
{
	static const struct {
		const char *word;
		bool is_registry;
	} cases[] = {
		{ "io.github.owner/server", true },
		{ "io.github.owner/server@1.2.0", true },
		{ "com.example/weather", true },
		{ "ai.example.tools/x_y.z", true },
		{ "io.github.owner/server@latest", true },
		/* Image references keep their meaning. */
		{ "ghcr.io/github/github-mcp-server", false },
		{ "docker.io/alpine", false },
		{ "quay.io/org", false },
		{ "registry.example.com/img", false },
		{ "mcpd-test/stdio", false },
		{ "mcp/github@sha256:abcd", false },
		{ "localhost:5000/img", false },
		{ "io.github.owner/server:1", false },
		/* Not names at all. */
		{ "github", false },
		{ "io.github.owner/a/b", false },
		{ "io.github.owner/", false },
		{ "/io.github", false },
		{ "io.github.owner/server@", false },
		{ "io.github.owner/ser ver", false },
		{ "https://io.github/x", false },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		TAP_CHECK(resolve_is_registry_name(cases[i].word) ==
			cases[i].is_registry,
		    "%s: expected %s", cases[i].word,
		    cases[i].is_registry ? "a registry name" : "none");
}

static const struct tap_test tests[] = {
	{ "registry names are told from images and commands",
	    test_registry_names },
	{ "npm: npx -y pkg@version, env from the record and the user",
	    test_npm },
	{ "pypi: uvx pkg==version, a clear error without uvx", test_pypi },
	{ "oci: the image, its docker flags; the remote when asked", test_oci },
	{ "a record with only an sse remote", test_remote_only },
	{ "http remotes, nothing runnable and poci are refused",
	    test_refusals },
	{ "a Docker catalog image: command, env, secrets, volumes",
	    test_docker_image },
	{ "a Docker catalog remote: headers by name, OAuth said",
	    test_docker_remote },
	{ "server names from registry and catalog names", test_server_name },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
