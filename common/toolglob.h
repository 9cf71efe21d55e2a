/* SPDX-License-Identifier: ISC */
/* Tool globs: fnmatch-style patterns over tool names, checked before use. */
#ifndef MCPD_TOOLGLOB_H
#define MCPD_TOOLGLOB_H

#include <stdbool.h>
#include <stddef.h>

/* The longest glob taken, in bytes. */
#define TOOLGLOB_MAX 256

/*
 * Checks glob (*, ?, [...] with ! or ^, \ escapes): 0, or -EINVAL with
 * *ret_column (1-based) where it goes wrong and *ret_why (static text).
 */
int toolglob_check(const char *glob, size_t *ret_column, const char **ret_why);
/* Whether a checked glob matches name whole (fnmatch, no flags); NULLs never. */
bool toolglob_match(const char *glob, const char *name);

#endif
