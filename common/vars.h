/* SPDX-License-Identifier: ISC */
/* Variable references "$(namespace.NAME)" in strings: scanning, expansion. */
#ifndef MCPD_VARS_H
#define MCPD_VARS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * A reference is exactly \$\(([a-z]+)\.([a-zA-Z0-9_.]+)\): a lower-case
 * namespace, a dot, a name of letters, digits, "_" and ".", in "$(" ")".
 * Anything else is literal text: "$(FOO)", "$(env.)", "$(Env.X)" and
 * "$(env.a-b)" are kept as they are. There is no escape; the leftmost
 * match wins, so "$($(env.X))" holds one reference, "$(env.X)".
 */

/*
 * Looks up one reference; returns the value (borrowed, NUL-terminated) or
 * NULL when missing; sets *ret_unknown_ns = true when the namespace is not
 * one it serves.
 */
typedef const char *(*vars_lookup_fn)(void *ctx, const char *ns,
    const char *name, bool *ret_unknown_ns);

/*
 * Calls fn(ctx, ns, name) for each reference in s, in order. Returns the
 * number of references, fn's value when it returns < 0 (the scan stops),
 * or -ENOMEM.
 */
int vars_scan(const char *s,
    int (*fn)(void *ctx, const char *ns, const char *name), void *ctx);

/*
 * Expands s into out (outlen bytes including the NUL) like snprintf: writes
 * what fits, always NUL-terminated when outlen > 0 (out may be NULL when
 * outlen is 0), and returns the length the full expansion needs, so that a
 * caller can size a buffer and call again. Values are written into out
 * only, never into another buffer. On failure out is wiped and left empty,
 * and it returns -EINVAL (a namespace fn does not serve), -ENOENT (no
 * value), -EOVERFLOW or -ENOMEM, with *cause naming the reference, never
 * its value.
 */
ssize_t vars_expand(const char *s, vars_lookup_fn fn, void *ctx, char *out,
    size_t outlen, char **cause);

/* Whether s holds at least one reference. */
bool vars_has_refs(const char *s);

#endif
