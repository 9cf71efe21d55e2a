/* SPDX-License-Identifier: ISC */
/* Names: what a server or agent may be called and how handles are spelt. */
#define _GNU_SOURCE 1 /* asprintf, memrchr */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "names.h"

static bool
names_char_ok(char c)
{
	return isascii((unsigned char)c) &&
	    (isalnum((unsigned char)c) || c == '_' || c == '-');
}

bool
names_reserved(const char *name)
{
	return name != NULL && strcasecmp(name, NAMES_RESERVED) == 0;
}

bool
names_valid(const char *name)
{
	size_t i;

	if (name == NULL || !isascii((unsigned char)name[0]) ||
	    !isalnum((unsigned char)name[0]))
		return false;
	for (i = 0; name[i] != '\0'; i++)
		if (i >= NAMES_MAX || !names_char_ok(name[i]))
			return false;
	return true;
}

size_t
names_secret_span(const char *s)
{
	return strspn(s,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
}

bool
names_secret_valid(const char *name)
{
	size_t len;

	if (name == NULL)
		return false;
	len = names_secret_span(name);
	return len >= 1 && len <= NAMES_SECRET_MAX && name[len] == '\0';
}

/* Programs that run another program named by a later argument. */
static const char *const names_runners[] = {
	"npx",
	"node",
	"nodejs",
	"bun",
	"bunx",
	"deno",
	"uvx",
	"uv",
	"python",
	"python3",
	"pipx",
	"sh",
	"bash",
	"env",
	"docker",
	"podman",
	"pnpm",
	"yarn",
	"npm",
	"exec",
	NULL,
};

static bool
names_is_runner(const char *base)
{
	for (size_t i = 0; names_runners[i] != NULL; i++)
		if (strcmp(base, names_runners[i]) == 0)
			return true;
	return false;
}

static const char *
names_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL && slash[1] != '\0' ? slash + 1 : path;
}

/* Path parts that say nothing about which server it is. */
static const char *const names_generic[] = {
	"index",
	"main",
	"cli",
	"server",
	"dist",
	"build",
	"lib",
	"bin",
	"src",
	"out",
	"app",
	NULL,
};

static bool
names_is_generic(const char *part, size_t len)
{
	for (size_t i = 0; names_generic[i] != NULL; i++)
		if (strlen(names_generic[i]) == len &&
		    strncmp(part, names_generic[i], len) == 0)
			return true;
	return false;
}

/*
 * The last telling part of a path or package ("@scope/pkg@1.2" -> "pkg",
 * "/x/server-foo/dist/index.js" -> "server-foo"), as a valid name.
 */
static char *
names_clean(const char *word)
{
	const char *end = word + strlen(word), *start, *stop;
	char *out;
	size_t n;

	for (;;) {
		while (end > word && end[-1] == '/')
			end--;
		start = end;
		while (start > word && start[-1] != '/')
			start--;
		if (start == end)
			return NULL;
		/* Drop a version ("@1.2") and a script suffix (".js"). */
		stop = start + 1;
		while (stop < end && *stop != '@')
			stop++;
		for (const char *d = stop - 1; d > start; d--)
			if (*d == '.') {
				stop = d;
				break;
			}
		if (!names_is_generic(start, stop - start))
			break;
		if (start == word)
			return NULL;
		end = start;
	}
	if ((out = calloc(1, NAMES_MAX + 1)) == NULL)
		return NULL;
	for (n = 0; start < stop && n < NAMES_MAX; start++)
		if (names_char_ok(*start))
			out[n++] = *start;
		else if (*start == '.')
			out[n++] = '-';
	if (!names_valid(out)) {
		free(out);
		return NULL;
	}
	return out;
}

char *
names_from_argv(const char *const *argv)
{
	size_t i;

	if (argv == NULL || argv[0] == NULL)
		return NULL;
	if (!names_is_runner(names_basename(argv[0])))
		return names_clean(argv[0]);
	for (i = 1; argv[i] != NULL; i++) {
		/* A shell script given inline is no name. */
		if (strcmp(argv[i], "-c") == 0)
			return NULL;
		if (argv[i][0] == '-')
			continue;
		if (strcmp(argv[i], "run") == 0 ||
		    strcmp(argv[i], "exec") == 0 || strcmp(argv[i], "x") == 0 ||
		    strchr(argv[i], '=') != NULL)
			continue;
		return names_clean(argv[i]);
	}
	return names_clean(argv[0]);
}

char *
names_handle_format(const char *server, uint64_t generation, const char *tool)
{
	char *h;

	if (asprintf(&h, "%s.%llu/%s", server, (unsigned long long)generation,
		tool) < 0)
		return NULL;
	return h;
}

int
names_handle_parse(const char *handle, char **ret_server,
    uint64_t *ret_generation, char **ret_tool)
{
	const char *slash, *dot;
	char *end, *server;
	unsigned long long gen;

	if (handle == NULL || (slash = strchr(handle, '/')) == NULL ||
	    slash[1] == '\0')
		return -EINVAL;
	dot = memrchr(handle, '.', slash - handle);
	if (dot == NULL || dot == handle || !isdigit((unsigned char)dot[1]))
		return -EINVAL;
	errno = 0;
	gen = strtoull(dot + 1, &end, 10);
	if (errno != 0 || end != slash)
		return -EINVAL;
	server = strndup(handle, dot - handle);
	if (server == NULL)
		return -ENOMEM;
	if (!names_valid(server)) {
		free(server);
		return -EINVAL;
	}
	*ret_tool = strdup(slash + 1);
	if (*ret_tool == NULL) {
		free(server);
		return -ENOMEM;
	}
	*ret_server = server;
	*ret_generation = gen;
	return 0;
}

/* One path component of an image: [a-z0-9]+ joined by '.', '_', "__" or '-'s. */
static bool
names_image_component_ok(const char *p, size_t len)
{
	size_t i = 0, run;

	while (i < len) {
		for (run = 0; i < len &&
		     (islower((unsigned char)p[i]) ||
			 isdigit((unsigned char)p[i]));
		     i++)
			run++;
		if (run == 0 || !isascii((unsigned char)p[i - 1]))
			return false;
		if (i == len)
			return true;
		if (p[i] == '.' || (p[i] == '_' && p[i + 1] != '_'))
			i++;
		else if (p[i] == '_' && p[i + 1] == '_')
			i += 2;
		else if (p[i] == '-')
			while (i < len && p[i] == '-')
				i++;
		else
			return false;
	}
	return false;
}

/* A registry host (letters, digits, '.', '-', [v6]), then an optional :port. */
static bool
names_image_registry_ok(const char *p, size_t len)
{
	const char *colon = memrchr(p, ':', len), *end = p + len;

	if (colon != NULL && memchr(colon, ']', end - colon) == NULL) {
		if (colon + 1 == end)
			return false;
		for (const char *d = colon + 1; d < end; d++)
			if (!isdigit((unsigned char)*d))
				return false;
		len = colon - p;
	}
	for (size_t i = 0; i < len; i++)
		if (!isascii((unsigned char)p[i]) ||
		    !(isalnum((unsigned char)p[i]) ||
			strchr(".-:[]", p[i]) != NULL))
			return false;
	return len > 0;
}

static bool
names_image_tag_ok(const char *t)
{
	size_t i;

	if (!isalnum((unsigned char)t[0]) && t[0] != '_')
		return false;
	for (i = 1; t[i] != '\0'; i++)
		if (i >= 128 || !isascii((unsigned char)t[i]) ||
		    !(isalnum((unsigned char)t[i]) || strchr("_.-", t[i])))
			return false;
	return true;
}

static bool
names_image_digest_ok(const char *d)
{
	const char *colon = strchr(d, ':');

	if (colon == NULL || colon == d || strlen(colon + 1) < 32)
		return false;
	for (const char *p = d; p < colon; p++)
		if (!islower((unsigned char)*p) &&
		    !isdigit((unsigned char)*p) && !strchr("+._-", *p))
			return false;
	for (const char *p = colon + 1; *p != '\0'; p++)
		if (!isxdigit((unsigned char)*p))
			return false;
	return true;
}

/* The path (components split by '/'), after an optional registry. */
static bool
names_image_path_ok(const char *p, size_t len)
{
	const char *slash = memchr(p, '/', len), *c = p;
	size_t n;

	if (slash != NULL &&
	    (memchr(p, '.', slash - p) != NULL ||
		memchr(p, ':', slash - p) != NULL ||
		(slash - p == 9 && !memcmp(p, "localhost", 9)))) {
		if (!names_image_registry_ok(p, slash - p))
			return false;
		c = slash + 1;
	}
	while (c < p + len) {
		slash = memchr(c, '/', p + len - c);
		n = slash != NULL ? (size_t)(slash - c) : (size_t)(p + len - c);
		if (!names_image_component_ok(c, n))
			return false;
		c += n + 1;
	}
	return c == p + len + 1;
}

int
names_image_normalize(const char *ref, char **ret, char **cause)
{
	const char *at = strchr(ref, '@'), *last_slash, *colon;
	size_t path_len;
	const char *why = NULL;

	path_len = at != NULL ? (size_t)(at - ref) : strlen(ref);
	last_slash = memrchr(ref, '/', path_len);
	colon = memchr(last_slash != NULL ? last_slash : ref, ':',
	    path_len - (last_slash != NULL ? last_slash - ref : 0));
	/* Docker bounds the name without its tag or digest, as here. */
	if (ref[0] == '\0' ||
	    (colon != NULL ? (size_t)(colon - ref) : path_len) > 255)
		why = "it is empty or its name is longer than 255 characters";
	else if (strpbrk(ref, " \t\r\n\v\f") != NULL)
		why = "it contains white space";
	else if (colon != NULL &&
	    (colon[1] == '\0' || colon + 1 == at ||
		(at == NULL && !names_image_tag_ok(colon + 1))))
		why = "its tag is not [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}";
	else if (at != NULL && !names_image_digest_ok(at + 1))
		why = "its digest is not ALGORITHM:HEX";
	else if (!names_image_path_ok(ref,
		     colon != NULL ? (size_t)(colon - ref) : path_len))
		why =
		    "its repository is not lower-case [a-z0-9] words joined by '/', '.', '_' or '-'";
	if (why != NULL) {
		if (cause != NULL &&
		    asprintf(cause,
			"'%s' is not an image reference Docker accepts: %s",
			ref, why) < 0)
			*cause = NULL;
		return -EINVAL;
	}
	if (asprintf(ret, "%s%s", ref,
		colon == NULL && at == NULL ? ":latest" : "") < 0)
		return -ENOMEM;
	return 0;
}

char *
names_from_image(const char *ref)
{
	char *copy = strdup(ref), *end, *name;

	if (copy == NULL)
		return NULL;
	if ((end = strchr(copy, '@')) != NULL)
		*end = '\0';
	if ((end = strrchr(copy, ':')) != NULL && strchr(end, '/') == NULL)
		*end = '\0';
	name = names_clean(copy);
	free(copy);
	return name;
}
