/* SPDX-License-Identifier: ISC */
/* URI references (RFC 3986) and JSON pointer tokens (RFC 6901). */
#ifndef MCPD_URIREF_H
#define MCPD_URIREF_H

/*
 * Resolves the reference ref against the base URI base as RFC 3986
 * section 5.2 says (strict: a scheme in ref is never dropped), into
 * *ret_uri (malloc'd); 0, or -ENOMEM. Nothing is checked: any string is
 * split into scheme, authority, path, query and fragment, and a base
 * without a scheme (as "" or "a/b.json") resolves as one with.
 */
int uriref_resolve(const char *base, const char *ref, char **ret_uri);

/* Decodes the %XX escapes of s in place (RFC 3986 section 2.1). */
void uriref_percent_decode(char *s);

/*
 * The local path of a file:// URI (no host, or localhost), decoded, new;
 * NULL for another URI or out of memory.
 */
char *uriref_file_path(const char *uri);

/* Decodes a JSON pointer reference token in place: "~1" is "/", "~0" "~". */
void uriref_pointer_unescape(char *s);

#endif
