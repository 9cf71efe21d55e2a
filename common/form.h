/* SPDX-License-Identifier: ISC */
/* application/x-www-form-urlencoded bodies and URL queries (OAuth 2.1). */
#ifndef MCPD_FORM_H
#define MCPD_FORM_H

#include <jansson.h>

/*
 * Appends name=value to *buf (a malloc'd string, or NULL to start one),
 * joined with '&', each percent-encoded: every byte but ALPHA, DIGIT and
 * "-._~" as %XX (a space too, so that the text is a valid URL query as
 * well as a form body). A NULL value appends nothing. 0, or -ENOMEM
 * (*buf is then unchanged).
 */
int form_add(char **buf, const char *name, const char *value);
/* value percent-encoded as form_add does it (new string), or NULL. */
char *form_encode(const char *value);
/*
 * The pairs of a query or form body ("a=1&b=x%20y"; '+' is a space) as a
 * new object name -> value. NULL when a name repeats (OAuth forbids it),
 * an escape is malformed, or a name or value decodes to a NUL byte or to
 * bytes that are not UTF-8.
 */
json_t *form_parse(const char *text);

#endif
