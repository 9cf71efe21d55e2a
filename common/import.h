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
 *   skipped       "reason": "disabled in the file"
 *   invalid       "reason": which field is wrong and how
 *
 * Values (env, headers) are kept as written, "$(secret.X)" references
 * included; no value is ever put in an argv ("command", "args") or in a
 * reason. A container entry is a "docker run" (or podman) command: its -e
 * values come from the flag ("-e NAME=VALUE") or from the entry's "env"
 * ("-e NAME"); the rest of "env" configured the docker CLI, not the
 * container, and is dropped.
 */

/*
 * Reads the entries of root. Returns 0 and a new array in *ret_entries
 * (an entry's error makes that entry invalid, never the file); -EINVAL
 * with *cause saying which shapes are accepted when root is none of them,
 * or which member is not an object of servers; or -ENOMEM.
 */
int import_parse(const json_t *root, json_t **ret_entries, char **cause);

#endif
