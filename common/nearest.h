/* SPDX-License-Identifier: ISC */
/* Did-you-mean: the names nearest to a mistyped one. */
#ifndef MCPD_NEAREST_H
#define MCPD_NEAREST_H

#include <stddef.h>

/* At most this many names are suggested for one mistyped name. */
#define NEAREST_MAX 3

/*
 * The edit distance (Damerau-Levenshtein, optimal string alignment,
 * case-insensitive) of a and b; SIZE_MAX when out of memory.
 */
size_t nearest_distance(const char *a, const char *b);
/*
 * The names (NULL entries skipped) within a third of given's length
 * (at least 2) of it, nearest first, at most NEAREST_MAX, each behind
 * prefix and joined by ", "; a new string, or NULL when none is near.
 */
char *nearest_names(const char *given, const char *const *names, size_t n,
    const char *prefix);

#endif
