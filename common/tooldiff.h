/* SPDX-License-Identifier: ISC */
/* What changed between two definitions of one MCP tool, readably. */
#ifndef MCPD_TOOLDIFF_H
#define MCPD_TOOLDIFF_H

#include <jansson.h>

/* Lines of a description past which its diff is all "-" then all "+". */
#define TOOLDIFF_LINES_MAX 400

/*
 * The description as a line diff ("- old", "+ new", "  same" strings) or
 * NULL when it is the same (new array).
 */
json_t *tooldiff_description(const char *old, const char *new);

/*
 * Every other difference as {path, old, new} (a side missing where the
 * value is absent), paths like inputSchema.properties.path.description,
 * in sorted key order (new array; empty when nothing else differs).
 */
json_t *tooldiff_changes(const json_t *old, const json_t *new);

#endif
