/* SPDX-License-Identifier: ISC */
/* Parsing of remote MCP endpoint URLs and their canonical form. */
#ifndef MCPD_URL_H
#define MCPD_URL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * What url_parse accepts: an absolute http or https URL (RFC 3986),
 * scheme "://" [userinfo "@"] host [":" port] [path] ["?" query]
 * ["#" fragment], where
 *
 * - the scheme is http or https in any case;
 * - the host is a name of letters, digits, "." and "-" in labels of 1 to
 *   63 bytes, 253 bytes at most without its one optional trailing dot, or
 *   an IPv6 literal in brackets (hex digits, ":" and "." that inet_pton
 *   accepts; no zone identifier, no IPvFuture). Percent-encoding, "_" and
 *   any other byte in a host are refused. Numeric IPv4 forms ("127.1",
 *   "0x7f.0.0.1", "2130706433") are names here: the address policy reads
 *   them as the addresses they mean;
 * - the port is 1 to 65535 in decimal digits (leading zeros allowed); an
 *   empty port ("h:/") means the default, as RFC 3986 3.2.3 says;
 * - the path, query and fragment hold only the characters RFC 3986 allows
 *   there, with well-formed %XX escapes;
 * - no space, control character or non-ASCII byte appears anywhere.
 *
 * Userinfo and a fragment are parsed (and noted) here; refusing them is the
 * policy's work.
 *
 * The canonical form (url_canonical) is
 *     scheme "://" host [":" port] path ["?" query]
 * with the scheme and host lower-cased, the host's trailing dot removed,
 * an IPv6 host in its RFC 5952 form and in brackets, the port only when it
 * is not the scheme's default (80 for http, 443 for https), no userinfo, no
 * fragment, an empty path as "/", and no "?" when the query is empty. The
 * path and query are otherwise kept byte for byte: "/mcp" and "/mcp/"
 * are different endpoints, and neither percent-encoding nor dot segments
 * are normalized.
 */

/* A parsed URL; it owns its strings (url_free). */
struct url {
	char *scheme; /* "http" or "https" */
	char *host;   /* lower-case, no trailing dot; IPv6 without brackets */
	bool is_ipv6_literal;
	bool has_userinfo;
	uint16_t port; /* the explicit port, or the scheme's default */
	bool has_explicit_port;
	char *path;  /* starts with "/" */
	char *query; /* after "?", NULL when absent or empty */
	bool has_fragment;
};

/*
 * Parses text. Returns 0 and fills *ret, or -EINVAL with *cause saying
 * what is wrong (the caller frees it), or -ENOMEM.
 */
int url_parse(const char *text, struct url *ret, char **cause);
/* The canonical form, a new string; NULL only when out of memory. */
char *url_canonical(const struct url *);
/* scheme "://" host [":" port] as in the canonical form; a new string. */
char *url_origin(const struct url *);
/* Frees the strings of a parsed URL. NULL is a no-op. */
void url_free(struct url *);

#endif
