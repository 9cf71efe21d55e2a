/* SPDX-License-Identifier: ISC */
/* Small jansson helpers that mcpd and mcpctl share. */
#ifndef MCPD_JSONUTIL_H
#define MCPD_JSONUTIL_H

#include <jansson.h>

/*
 * A copy of obj's member key when it is a string (new), else NULL: no
 * member, another type, or obj not an object (or NULL).
 */
char *jsonutil_string_dup(const json_t *obj, const char *key);

#endif
