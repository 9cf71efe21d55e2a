/* SPDX-License-Identifier: ISC */
/* Allocation that cannot fail: out of memory ends the program at once. */
#ifndef MCPD_XALLOC_H
#define MCPD_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

#include <jansson.h>

/*
 * The daemon's rule (doc/design-notes.md, "Out of memory"): an allocation
 * that fails is fatal at once. Each of these is its libc namesake that
 * calls fatalx("out of memory") instead of returning NULL or -1.
 */
void *xmalloc(size_t);
void *xcalloc(size_t, size_t);
void *xreallocarray(void *, size_t, size_t);
char *xstrdup(const char *);
char *xstrndup(const char *, size_t);
int xasprintf(char **, const char *, ...) __attribute__((format(printf, 2, 3)));
int xvasprintf(char **, const char *, va_list)
    __attribute__((format(printf, 2, 0)));
/* Appends the formatted text to *s, a string of malloc's (replaced). */
void xappendf(char **s, const char *, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * Returns j, a jansson constructor's result (json_object(), json_pack(),
 * json_deep_copy() of a valid value...), or ends the program if it is NULL.
 * Only for calls whose NULL can mean nothing but out of memory.
 */
json_t *xjson(json_t *j);
/*
 * Makes jansson allocate with xmalloc, so that out of memory inside it is
 * fatal too, not a NULL taken for bad input; each main calls it first.
 */
void xalloc_json(void);
/*
 * For calls into common/ from the daemon: r, unless it is -ENOMEM (then
 * the program ends); p, unless it is NULL, which the callee returns only
 * when out of memory (then the program ends).
 */
int xenomem(int r);
void *xnonnull(void *p);

/*
 * Objects of one size that the steady path makes and ends (a call's
 * request, its pending entry): up to max freed ones are kept and handed
 * out again, zeroed, instead of going back to malloc. Built with
 * AddressSanitizer, these are plain calloc and free, so that a use after
 * free is still caught.
 */
struct xrecycle {
	void *head;
	size_t size, n, max;
};
#define XRECYCLE_INIT(type, max)             \
	{                                    \
		NULL, sizeof(type), 0, (max) \
	}
void *xrecycle_get(struct xrecycle *);
void xrecycle_put(struct xrecycle *, void *);

#endif
