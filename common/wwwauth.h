/* SPDX-License-Identifier: ISC */
/* WWW-Authenticate challenges (RFC 9110 11.6.1, RFC 6750 3). */
#ifndef MCPD_WWWAUTH_H
#define MCPD_WWWAUTH_H

#include <jansson.h>

/*
 * The parameters of the first challenge of header (a WWW-Authenticate
 * value, possibly several challenges separated by commas) whose scheme is
 * scheme (compared without regard to case): a new object of lower-cased
 * names -> values, quoted strings unquoted. An empty object when that
 * challenge has no parameters (or a token68 only); NULL when header has
 * no such challenge or cannot be read up to it. A repeated parameter
 * keeps its first value (RFC 9110 forbids the repeat).
 */
json_t *wwwauth_params(const char *header, const char *scheme);

#endif
