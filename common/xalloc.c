/* SPDX-License-Identifier: ISC */
/* The allocation helpers that end the program when memory runs out. */
#define _GNU_SOURCE 1 /* asprintf, reallocarray */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xalloc.h"

void *
xmalloc(size_t size)
{
	void *p = malloc(size);

	if (p == NULL)
		fatalx("out of memory");
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb, size);

	if (p == NULL)
		fatalx("out of memory");
	return p;
}

void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void *p = reallocarray(ptr, nmemb, size);

	if (p == NULL)
		fatalx("out of memory");
	return p;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		fatalx("out of memory");
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (p == NULL)
		fatalx("out of memory");
	return p;
}

int
xvasprintf(char **ret, const char *fmt, va_list ap)
{
	int r = vasprintf(ret, fmt, ap);

	if (r < 0)
		fatalx("out of memory");
	return r;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = xvasprintf(ret, fmt, ap);
	va_end(ap);
	return r;
}

void
xappendf(char **s, const char *fmt, ...)
{
	va_list ap;
	char *more, *text;

	va_start(ap, fmt);
	xvasprintf(&more, fmt, ap);
	va_end(ap);
	xasprintf(&text, "%s%s", *s, more);
	free(more);
	free(*s);
	*s = text;
}

json_t *
xjson(json_t *j)
{
	if (j == NULL)
		fatalx("out of memory");
	return j;
}

void
xalloc_json(void)
{
	json_set_alloc_funcs(xmalloc, free);
}

int
xenomem(int r)
{
	if (r == -ENOMEM)
		fatalx("out of memory");
	return r;
}

void *
xnonnull(void *p)
{
	if (p == NULL)
		fatalx("out of memory");
	return p;
}

#if defined(__SANITIZE_ADDRESS__)
#define XRECYCLE_KEEPS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XRECYCLE_KEEPS 0
#endif
#endif
#ifndef XRECYCLE_KEEPS
#define XRECYCLE_KEEPS 1
#endif

void *
xrecycle_get(struct xrecycle *r)
{
	void *p = r->head;

	if (p == NULL)
		return xcalloc(1, r->size);
	r->head = *(void **)p;
	r->n--;
	memset(p, 0, r->size);
	return p;
}

void
xrecycle_put(struct xrecycle *r, void *p)
{
	if (p == NULL)
		return;
	if (!XRECYCLE_KEEPS || r->n >= r->max) {
		free(p);
		return;
	}
	*(void **)p = r->head;
	r->head = p;
	r->n++;
}
