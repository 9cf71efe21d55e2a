/* SPDX-License-Identifier: ISC */
/* A validating JSON scanner that finds top-level members without parsing. */
#ifndef MCPD_JSONSCAN_H
#define MCPD_JSONSCAN_H

#include <stdbool.h>
#include <stddef.h>

#define JSONSCAN_DEPTH 64 /* deeper documents are left to the parser */

/* A top-level member to find: its raw value's offset and length. */
struct jsonscan_member {
	const char *key; /* compared with keys that hold no escapes */
	bool is_found;
	size_t off;
	size_t len;
};

/*
 * Checks that text[0..len) is exactly one JSON object (RFC 8259, strict
 * UTF-8, at most JSONSCAN_DEPTH deep) and records where the values of the
 * given top-level members are. Returns 0, or -EINVAL when the text is not
 * such an object (or is one this scanner does not vouch for: the caller
 * then falls back to a full parser). It vouches only for text jansson
 * accepts as it is: \u0000, lone surrogates, integers of more than 18
 * digits and exponents of more than 2 digits are left to the parser, so
 * that text passed on unparsed means what a parse would have made of it.
 */
int jsonscan_object(const char *text, size_t len,
    struct jsonscan_member *members, size_t nmembers);

/* The same, but -EINVAL also when a top-level key is not among members. */
int jsonscan_object_of(const char *text, size_t len,
    struct jsonscan_member *members, size_t nmembers);

/*
 * Either of those in one pass (is_closed: jsonscan_object_of's), and when
 * member in's value is an object, its members noted in sub too (offsets
 * from text; a key not among sub fails too when is_closed). in >= nmembers
 * or no sub: none.
 */
int jsonscan_object_in(const char *text, size_t len,
    struct jsonscan_member *members, size_t nmembers, bool is_closed, size_t in,
    struct jsonscan_member *sub, size_t nsub);

#endif
