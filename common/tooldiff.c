/* SPDX-License-Identifier: ISC */
/* Tool definition diffs: a description by lines, the rest by JSON path. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tooldiff.h"
#include "xalloc.h"

/* The lines of text (a final newline ends the last, it makes none). */
static json_t *
tooldiff_lines(const char *text)
{
	json_t *lines = xjson(json_array());
	const char *end;

	while (text != NULL && *text != '\0') {
		end = strchr(text, '\n');
		if (end == NULL)
			end = text + strlen(text);
		json_array_append_new(lines, json_stringn(text, end - text));
		text = *end == '\n' ? end + 1 : end;
	}
	return lines;
}

static void
tooldiff_line(json_t *out, char mark, const json_t *line)
{
	char *text;

	xasprintf(&text, "%c %s", mark, json_string_value(line));
	json_array_append_new(out, json_string(text));
	free(text);
}

json_t *
tooldiff_description(const char *old, const char *new)
{
	json_t *a, *b, *out;
	size_t na, nb, i, j, *len;

	if ((old == NULL) == (new == NULL) &&
	    (old == NULL || strcmp(old, new) == 0))
		return NULL;
	a = tooldiff_lines(old);
	b = tooldiff_lines(new);
	na = json_array_size(a);
	nb = json_array_size(b);
	out = xjson(json_array());
	/* Longer texts are not worth a quadratic table: all out, all in. */
	if (na > TOOLDIFF_LINES_MAX || nb > TOOLDIFF_LINES_MAX) {
		for (i = 0; i < na; i++)
			tooldiff_line(out, '-', json_array_get(a, i));
		for (j = 0; j < nb; j++)
			tooldiff_line(out, '+', json_array_get(b, j));
		goto done;
	}
	/* len(i, j): the longest common subsequence of a[i..] and b[j..]. */
	len = xcalloc((na + 1) * (nb + 1), sizeof *len);
#define LEN(i, j) len[(i) * (nb + 1) + (j)]
	for (i = na; i-- > 0;)
		for (j = nb; j-- > 0;)
			LEN(i, j) = json_equal(json_array_get(a, i),
					json_array_get(b, j)) ?
			    LEN(i + 1, j + 1) + 1 :
			    (LEN(i + 1, j) >= LEN(i, j + 1) ? LEN(i + 1, j) :
							      LEN(i, j + 1));
	for (i = j = 0; i < na || j < nb;) {
		if (i < na && j < nb &&
		    json_equal(json_array_get(a, i), json_array_get(b, j))) {
			tooldiff_line(out, ' ', json_array_get(a, i));
			i++, j++;
		} else if (i < na &&
		    (j == nb || LEN(i + 1, j) >= LEN(i, j + 1)))
			tooldiff_line(out, '-', json_array_get(a, i++));
		else
			tooldiff_line(out, '+', json_array_get(b, j++));
	}
#undef LEN
	free(len);
done:
	json_decref(a);
	json_decref(b);
	return out;
}

/* Whether a key reads as it is in a path (else it is quoted). */
static bool
tooldiff_is_plain_key(const char *key)
{
	if (*key == '\0')
		return false;
	for (; *key != '\0'; key++)
		if (!((*key >= 'a' && *key <= 'z') ||
			(*key >= 'A' && *key <= 'Z') ||
			(*key >= '0' && *key <= '9') || *key == '_' ||
			*key == '-' || *key == '$'))
			return false;
	return true;
}

/* path + key, new string: a.b, a["x.y"], a[3] (key NULL: index). */
static char *
tooldiff_path(const char *path, const char *key, size_t index)
{
	json_t *quoted;
	char *out, *text;

	if (key == NULL) {
		xasprintf(&out, "%s[%zu]", path, index);
		return out;
	}
	if (tooldiff_is_plain_key(key)) {
		xasprintf(&out, "%s%s%s", path, *path != '\0' ? "." : "", key);
		return out;
	}
	quoted = xjson(json_string(key));
	text = xnonnull(json_dumps(quoted, JSON_ENCODE_ANY));
	xasprintf(&out, "%s[%s]", path, text);
	free(text);
	json_decref(quoted);
	return out;
}

static void
tooldiff_add(json_t *out, const char *path, const json_t *old,
    const json_t *new)
{
	json_t *c = xjson(json_pack("{s:s}", "path", path));

	if (old != NULL)
		json_object_set(c, "old", (json_t *)(uintptr_t)old);
	if (new != NULL)
		json_object_set(c, "new", (json_t *)(uintptr_t) new);
	json_array_append_new(out, c);
}

static int
tooldiff_key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void tooldiff_walk(json_t *, const char *, const json_t *,
    const json_t *);

/* The keys of both objects, sorted, each once; a top level skips skip. */
static void
tooldiff_objects(json_t *out, const char *path, const json_t *old,
    const json_t *new, const char *skip)
{
	size_t n = json_object_size(old) + json_object_size(new), k = 0, i;
	const char **keys = xcalloc(n + 1, sizeof *keys), *key;
	const json_t *v;
	char *sub;

	json_object_foreach((json_t *)(uintptr_t)old, key, v)
		keys[k++] = key;
	json_object_foreach((json_t *)(uintptr_t) new, key, v)
		if (json_object_get(old, key) == NULL)
			keys[k++] = key;
	qsort(keys, k, sizeof *keys, tooldiff_key_cmp);
	for (i = 0; i < k; i++) {
		if (skip != NULL && strcmp(keys[i], skip) == 0)
			continue;
		sub = tooldiff_path(path, keys[i], 0);
		tooldiff_walk(out, sub, json_object_get(old, keys[i]),
		    json_object_get(new, keys[i]));
		free(sub);
	}
	free(keys);
}

/* Objects by key, arrays of one length by index, the rest whole. */
static void
tooldiff_walk(json_t *out, const char *path, const json_t *old,
    const json_t *new)
{
	char *sub;

	if (old != NULL && new != NULL && json_equal(old, new))
		return;
	if (json_is_object(old) && json_is_object(new)) {
		tooldiff_objects(out, path, old, new, NULL);
		return;
	}
	if (json_is_array(old) && json_is_array(new) &&
	    json_array_size(old) == json_array_size(new)) {
		for (size_t i = 0; i < json_array_size(old); i++) {
			sub = tooldiff_path(path, NULL, i);
			tooldiff_walk(out, sub, json_array_get(old, i),
			    json_array_get(new, i));
			free(sub);
		}
		return;
	}
	tooldiff_add(out, path, old, new);
}

json_t *
tooldiff_changes(const json_t *old, const json_t *new)
{
	json_t *out = xjson(json_array());

	tooldiff_objects(out, "", old, new, "description");
	return out;
}
