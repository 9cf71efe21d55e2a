/* SPDX-License-Identifier: ISC */
/* Reading the MCP server entries of other clients' configuration files. */
#ifndef MCPD_IMPORT_H
#define MCPD_IMPORT_H

#include <jansson.h>

/*
 * Accepted files (a table in import.c; a new shape is one row there):
 *
 * - {"mcpServers": {NAME: ENTRY}}: Claude Desktop, Cursor, and the many
 *   clients that copied them;
 * - {"servers": {NAME: ENTRY}}: VS Code's .vscode/mcp.json ("inputs" and
 *   other top-level members are ignored);
 * - {"mcp": {"servers": {NAME: ENTRY}}}: VS Code's settings.json.
 *
 * An ENTRY has "command" (a string), "args" (an array of strings), "env"
 * (an object of strings), "cwd", a URL as "url", "serverUrl" or
 * "endpoint", "headers" (an object of strings), a transport as "type" or
 * "transport" (stdio, http, streamable-http, streamableHttp or sse) and
 * "disabled" (a boolean). Other members are ignored. Without a transport,
 * a command means stdio, a URL whose path contains "/mcp" Streamable HTTP,
 * any other URL SSE; a transport that is given wins.
 *
 * import_parse returns one JSON object per entry, in file order:
 *
 *   every entry   "name": its key in the file
 *                 "kind": "process", "remote", "container", "skipped" or
 *                         "invalid"
 *   process       "transport": "stdio"
 *                 "command": [command, args...]
 *                 "env": {NAME: value}, in file order, {} when none
 *                 "cwd": only when the file gives one
 *   remote        "transport": "http" (Streamable HTTP) or "sse"
 *                 "url": as written (url_parse accepts it; no policy yet)
 *                 "headers": {NAME: value}, {} when none
 *   container     "transport": "stdio"
 *                 "image": with ":latest" made explicit when it has no
 *                          tag and no digest
 *                 "args": [what follows the image]
 *                 "env": {NAME: value} of each -e/--env, in order
 *                 "volumes": [each -v/--volume as written]
 *                 "network": only when --network is given
 *                 "cwd": only when the file gives one
 *                 "runtime": "podman", only for a "podman run": the
 *                            entry needs mcpd to run podman
 *   process, remote, container
 *                 "secrets": [NAME...], only when there are any: each
 *                            secret a $(secret.NAME) of "command",
 *                            "args", "env", "url", "headers" or
 *                            "volumes" needs (mcpctl secret set NAME),
 *                            once, in order
 *   skipped       "reason": "disabled in the file"
 *   invalid       "reason": which field is wrong and how
 *
 * Values (env, headers) are kept as written, "$(secret.X)" references
 * included; no value is ever put in an argv ("command", "args") or in a
 * reason. A container entry is a "docker run" (or "podman run") command: its -e
 * values come from the flag ("-e NAME=VALUE") or from the entry's "env"
 * ("-e NAME"); the rest of "env" configured the docker CLI, not the
 * container, and is dropped.
 *
 * VS Code's variables in "command", "args", "env" values, "cwd", the URL
 * and "headers" values are translated before anything else reads them
 * (any other "$" text, "$(...)" included, stays as written, and so does a
 * "${" without a "}"):
 *
 *   ${env:NAME}   the value of NAME in the environment of the process
 *                 that imports (VS Code reads its own); an unset NAME
 *                 makes the entry invalid
 *   ${input:ID}   $(secret.ID), each character of ID other than those
 *                 (letters, digits, "_", ".") made "_": VS Code prompts
 *                 for inputs, mcpd keeps them as secrets; ${input:} makes
 *                 the entry invalid
 *   ${userHome}   the HOME of the process that imports
 *   ${workspaceFolder}, ${workspaceFolderBasename}
 *                 the workspace folder given to import_parse_in (the
 *                 folder that holds .vscode/), or its last component;
 *                 without one, the entry is invalid
 *   ${pathSeparator}, ${/}
 *                 "/"
 *   ${...}        any other (${input}, ${config:...}...) makes the entry
 *                 invalid: only the editor knows it. A reason names the
 *                 variable only when it looks like one (letters, digits,
 *                 "_.:/-"), never a value
 */

/*
 * Reads the entries of root. Returns 0 and a new array in *ret_entries
 * (an entry's error makes that entry invalid, never the file); -EINVAL
 * with *cause saying which shapes are accepted when root is none of them,
 * or which member is not an object of servers; or -ENOMEM.
 */
int import_parse(const json_t *root, json_t **ret_entries, char **cause);
/* import_parse of a file in workspace (for ${workspaceFolder}), or NULL. */
int import_parse_in(const json_t *root, const char *workspace,
    json_t **ret_entries, char **cause);

/*
 * import-check.c, on the mcpd/load params that mcpctl import makes of an
 * entry: the endpoint mcpd/list would show for them (a new string, NULL
 * when out of memory), and whether mcpd will certainly refuse or fail
 * them (-EINVAL and *why: a plain http URL without allow_local, a literal
 * address the policy refuses, a command that is not on PATH or not an
 * executable file), else 0.
 */
char *import_endpoint(const json_t *params);
int import_check_load(const json_t *params, char **why);

#endif
