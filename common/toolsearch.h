/* SPDX-License-Identifier: ISC */
/* Tool search: an in-memory BM25F index over MCP Tool objects. */
#ifndef MCPD_TOOLSEARCH_H
#define MCPD_TOOLSEARCH_H

#include <stddef.h>

#include <jansson.h>

/* Terms of one query that count; the rest are ignored. */
#define TOOLSEARCH_QUERY_TERMS 32

struct toolsearch;

/* A new, empty index. */
struct toolsearch *toolsearch_new(void);
/* Frees the index; NULL is a no-op. */
void toolsearch_free(struct toolsearch *);
/*
 * Indexes one Tool object of server (either may be NULL) under the name a
 * caller sees (NULL: the tool's own); its number is the count of tools
 * added before it.
 */
void toolsearch_add(struct toolsearch *, const char *server, const char *name,
    const json_t *tool);
/* How many tools the index holds. */
size_t toolsearch_size(const struct toolsearch *);
/*
 * The numbers of at most limit tools that match query, best first (ties in
 * the order they were added), written to ret_idx; returns how many.
 */
size_t toolsearch_find(struct toolsearch *, const char *query, size_t *ret_idx,
    size_t limit);

#endif
