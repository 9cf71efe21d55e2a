/* SPDX-License-Identifier: ISC */
/* From a registry record or a Docker catalog definition to load params. */
#ifndef MCPD_RESOLVE_H
#define MCPD_RESOLVE_H

#include <stdbool.h>

#include <jansson.h>

/* What the user gave, and what the machine has. */
struct resolve_input {
	const json_t *env;     /* --env values: name -> value, or NULL */
	const json_t *headers; /* --header values: name -> value, or NULL */
	bool prefer_remote;    /* a record's remote before its packages */
	/* Whether a program is on PATH (uvx); NULL: assume it is. */
	bool (*has_program)(const char *name);
};

/*
 * What a record resolves to. params are mcpd/load params: "command" (npx,
 * uvx) or "target" (an image, or an https URL with "transport" and
 * "headers"), "args", "env", "volumes", "network", and "name" when one can
 * be derived. missing lists the required inputs the user did not give,
 * each {"kind": "env"|"header"|"argument", "name", "description",
 * "is_secret"}: a load must not go on while it is not empty. notes says
 * what was left out or taken from the record's defaults. given lists the
 * names (env and headers) whose values came from the user, so that they
 * are never printed.
 */
struct resolve_plan {
	json_t *params;
	json_t *missing;
	json_t *notes;
	json_t *given;
	const char *kind; /* "npm", "pypi", "oci", "image", "remote" */
};

/*
 * A registry record (a ServerResponse {server, _meta}, or a bare
 * ServerDetail as a server.json holds it): its first npm, pypi or oci
 * package over stdio, else its first https remote (streamable-http or
 * sse); the remote first with prefer_remote. 0 and *ret (clear it), or
 * -ENOTSUP (nothing mcpd can run, a pypi package without uvx, an http
 * remote) or -EINVAL (not a record), with *cause.
 */
int resolve_registry(const json_t *record, const struct resolve_input *,
    struct resolve_plan *ret, char **cause);
/*
 * A Docker MCP catalog definition (docker/mcp-gateway's catalog.Server,
 * with "name"): an image (type "server") with its command, env, secrets
 * and volumes, or an https remote (type "remote") with its headers. As
 * resolve_registry.
 */
int resolve_docker(const json_t *entry, const struct resolve_input *,
    struct resolve_plan *ret, char **cause);
void resolve_plan_clear(struct resolve_plan *);

/*
 * The server name a catalog or registry name gives: its last path
 * component, other characters than [A-Za-z0-9_-] as '-', at most 63; a
 * new string, or NULL when nothing usable is left.
 */
char *resolve_server_name(const char *name);

/*
 * A registry name: NAMESPACE/NAME[@VERSION], one '/', a namespace with a
 * '.' whose first label is a top-level domain (a reversed domain, as the
 * registry's names are), or any such word with @VERSION (no image is
 * written so). Image references keep their meaning: ghcr.io/x/y has two
 * '/', docker.io/alpine starts with a host, not a top-level domain.
 */
bool resolve_is_registry_name(const char *word);

#endif
