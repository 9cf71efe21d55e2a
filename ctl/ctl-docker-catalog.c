/* SPDX-License-Identifier: ISC */
/* mcpctl docker-catalog: the server definitions of Docker's MCP catalog. */
#define _GNU_SOURCE 1 /* asprintf */
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"

#define CTL_DCAT_NCOLS 4

static const struct option ctl_dcat_options[] = {
	{ "catalog", required_argument, NULL, 'c' },
	{ "wide", no_argument, NULL, 'w' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *const ctl_dcat_headers[CTL_DCAT_NCOLS] = { "NAME", "TYPE",
	"RUNS", "TITLE" };

static bool ctl_dcat_is_wide;
static const char *ctl_dcat_query;

/* What a definition runs: its image, or its remote URL. */
static const char *
ctl_dcat_runs(const json_t *e)
{
	const char *url = json_string_value(json_object_get(json_object_get(e,
								"remote"),
	    "url"));
	const char *image = json_string_value(json_object_get(e, "image"));

	return url != NULL ? url : image;
}

/* "image", "remote", or the catalog's own word (poci, ...). */
static const char *
ctl_dcat_type(const json_t *e)
{
	const char *type = json_string_value(json_object_get(e, "type"));

	if (type == NULL || strcmp(type, "server") == 0)
		return "image";
	return type;
}

void
ctl_docker_catalog_print_header(const json_t *result)
{
	const char *title = json_string_value(json_object_get(result, "title"));
	const char *image = json_string_value(json_object_get(result, "image"));
	char *t = print_value(json_object_get(result, "title"));

	printf("Docker MCP catalog %s (image %.19s)%s%s%s\n",
	    json_string_value(json_object_get(result, "catalog")),
	    image != NULL ? image : "?", title != NULL ? ": \"" : "",
	    title != NULL ? t : "", title != NULL ? "\"" : "");
	free(t);
}

static void
ctl_dcat_print(const json_t *result)
{
	const json_t *servers = json_object_get(result, "servers"), *e;
	json_int_t count = json_integer_value(json_object_get(result, "count"));
	json_int_t skipped = json_integer_value(json_object_get(result,
	    "skipped"));
	struct print_table *t;
	size_t i;

	ctl_docker_catalog_print_header(result);
	/* Definitions the catalog offers, not servers that run. */
	if (ctl_dcat_query != NULL)
		printf("%zu of %lld server definitions match \"%s\"",
		    json_array_size(servers), (long long)count, ctl_dcat_query);
	else
		printf("%lld server definition%s", (long long)count,
		    count == 1 ? "" : "s");
	if (skipped > 0)
		printf(" (%lld more that mcpd cannot use)", (long long)skipped);
	printf("; none of them runs until it is loaded\n");
	if (json_array_size(servers) == 0)
		return;
	t = print_table_new(CTL_DCAT_NCOLS, ctl_dcat_headers);
	if (t == NULL)
		return;
	if (!ctl_dcat_is_wide)
		print_table_set_width(t, print_tty_width());
	json_array_foreach(servers, i, e) {
		const char *cells[CTL_DCAT_NCOLS] = {
			json_string_value(json_object_get(e, "name")),
			ctl_dcat_type(e),
			ctl_dcat_runs(e),
			json_string_value(json_object_get(e, "title")),
		};
		print_table_add(t, cells, NULL);
	}
	print_table_write(t, stdout);
	print_table_free(t);
	printf("load one with: mcpctl load --source docker NAME [--dry-run]\n");
}

/* The catalog a client names: --catalog, else MCPD_DOCKER_CATALOG. */
const char *
ctl_docker_catalog_ref(const char *given)
{
	const char *env = getenv("MCPD_DOCKER_CATALOG");

	if (given != NULL)
		return given;
	return env != NULL && *env != '\0' ? env : NULL;
}

static int
ctl_dcat_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	const char *catalog = NULL;
	json_t *params;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":hwc:", ctl_dcat_options)) !=
	    -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c == 'w')
			ctl_dcat_is_wide = true;
		else if (c == 'c')
			catalog = optarg;
		else
			return mcpctl_bad_option(cmd, c, argv);
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 0, 1, "")) != 0)
		return r;
	params = json_object();
	if ((catalog = ctl_docker_catalog_ref(catalog)) != NULL)
		json_object_set_new(params, "catalog", json_string(catalog));
	if (optind < argc && argv[optind][0] != '\0') {
		ctl_dcat_query = argv[optind];
		json_object_set_new(params, "query",
		    json_string(ctl_dcat_query));
	}
	return mcpctl_run(m, "mcpd/docker-catalog", params, ctl_dcat_print);
}

const struct mcpctl_cmd ctl_docker_catalog_cmd = {
	.name = "docker-catalog",
	.synopsis = "[--catalog REF] [-w] [QUERY]",
	.summary =
	    "list the server definitions of Docker's MCP catalog, or those matching QUERY",
	.help =
	    "  --catalog REF      the catalog image (default: MCPD_DOCKER_CATALOG,\n"
	    "                     else mcpd's --docker-catalog, else\n"
	    "                     mcp/docker-mcp-catalog)\n"
	    "  -w, --wide         cut nothing to fit the terminal\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "mcpd reads the catalog through the docker CLI it runs: docker pull\n"
	    "when docker's image cache lacks it, then docker image save. QUERY\n"
	    "matches, whatever the case, a definition's name, title,\n"
	    "description, category or tags. The count is of definitions the\n"
	    "catalog offers, not of servers that run: load one with\n"
	    "'mcpctl load --source docker NAME'. A catalog that cannot be\n"
	    "pulled or read is an error (exit 1). See doc/docker-catalog.md.\n",
	.exec = ctl_dcat_exec,
	.options = ctl_dcat_options,
};
