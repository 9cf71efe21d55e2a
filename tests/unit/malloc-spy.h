/* SPDX-License-Identifier: ISC */
/*
 * A malloc of the test program's own, in front of glibc's: it fails on
 * demand, and it looks into each block freed for a needle (a secret that
 * must not be left behind unwiped). Included by one file of a test
 * program. Built with AddressSanitizer, which has a malloc of its own,
 * it is left out and MALLOC_SPY is 0: the tests that need it skip.
 */
#ifndef MCPD_MALLOC_SPY_H
#define MCPD_MALLOC_SPY_H

#include <malloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define MALLOC_SPY 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MALLOC_SPY 0
#endif
#endif
#ifndef MALLOC_SPY
#define MALLOC_SPY 1
#endif

/*
 * Whether malloc, calloc and realloc fail; the text looked for in each
 * block freed; how many held it. (Unused under AddressSanitizer.)
 */
static __attribute__((unused)) bool malloc_spy_is_failing;
static __attribute__((unused)) const char *malloc_spy_needle;
static __attribute__((unused)) size_t malloc_spy_found;

#if MALLOC_SPY
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);

static void
malloc_spy_look(void *p)
{
	if (p != NULL && malloc_spy_needle != NULL &&
	    memmem(p, malloc_usable_size(p), malloc_spy_needle,
		strlen(malloc_spy_needle)) != NULL)
		malloc_spy_found++;
}

void *
malloc(size_t n)
{
	return malloc_spy_is_failing ? NULL : __libc_malloc(n);
}

void *
calloc(size_t n, size_t size)
{
	return malloc_spy_is_failing ? NULL : __libc_calloc(n, size);
}

void
free(void *p)
{
	malloc_spy_look(p);
	__libc_free(p);
}

/* A block that moves is freed here, where the spy sees it. */
void *
realloc(void *p, size_t n)
{
	size_t old;
	void *q;

	if (malloc_spy_is_failing)
		return NULL;
	if (p == NULL || n == 0 || malloc_spy_needle == NULL)
		return __libc_realloc(p, n);
	if ((q = __libc_malloc(n)) == NULL)
		return NULL;
	old = malloc_usable_size(p);
	memcpy(q, p, old < n ? old : n);
	free(p);
	return q;
}
#endif

#endif
