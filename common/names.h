/* SPDX-License-Identifier: ISC */
/* Validation and formation of server names, agent names and tool handles. */
#ifndef MCPD_NAMES_H
#define MCPD_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NAMES_MAX	 63  /* longest server or agent name */
#define NAMES_SECRET_MAX 128 /* longest secret name */

/* A server or agent name: [A-Za-z0-9][A-Za-z0-9_-]{0,62}. */
bool names_valid(const char *name);
/*
 * The server name that is mcpd's own (its gateway tools are
 * mcpd__find_tools and mcpd__call_tool): no server may take it.
 */
#define NAMES_RESERVED "mcpd"
/* Whether name is NAMES_RESERVED (any case: the tools' prefix is shown so). */
bool names_reserved(const char *name);
/* A secret name, as $(secret.NAME) refers to it: [a-zA-Z0-9_.]{1,128}. */
bool names_secret_valid(const char *name);
/* The length of the run of secret-name characters that s starts with. */
size_t names_secret_span(const char *s);
/*
 * Derives a server name from a command's argv: the package or program it
 * runs (`npx -y @scope/server-x@1.2` -> "server-x"). Returns a new string,
 * or NULL when nothing usable is there.
 */
char *names_from_argv(const char *const *argv);

/*
 * Checks an image reference the way Docker would and makes an implicit
 * ":latest" explicit ("alpine" -> "alpine:latest"; a digest stays as it
 * is). Returns 0 and a new string, or -EINVAL with *cause saying why.
 */
int names_image_normalize(const char *ref, char **ret, char **cause);
/* The server name an image gives ("ghcr.io/x/server-foo:1" -> "server-foo"). */
char *names_from_image(const char *ref);

/* A handle names one tool of one connection generation: "<server>.<gen>/<tool>". */
char *names_handle_format(const char *server, uint64_t generation,
    const char *tool);
/*
 * Splits a handle. Returns 0 and new strings in *ret_server and *ret_tool,
 * or -EINVAL when it is not a handle.
 */
int names_handle_parse(const char *handle, char **ret_server,
    uint64_t *ret_generation, char **ret_tool);

#endif
