/* SPDX-License-Identifier: ISC */
/* Editing a client's JSON file as text, so that its comments and layout stay. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ctl-client-config.h"

#define CC_NONE SIZE_MAX
#define CC_NAME CTL_CLIENT_CONFIG_NAME

/* A member of an object in the text: where its value starts and ends. */
struct cc_member {
	size_t value_start, value_end; /* CC_NONE when there is none */
	size_t close;		       /* the object's '}' */
	bool has_members;
	size_t key_start; /* the key's '"' */
	size_t prev_end;  /* the end of the value before, or CC_NONE */
	size_t comma;	  /* the ',' after the value, or CC_NONE */
};

size_t
ctl_client_config_skip(const char *s, size_t len, size_t i)
{
	if (i == 0 && len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len) {
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
			i++;
		else if (s[i] == '/' && i + 1 < len && s[i + 1] == '/')
			while (i < len && s[i] != '\n')
				i++;
		else if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
			for (i += 2;
			     i + 1 < len && !(s[i] == '*' && s[i + 1] == '/');
			     i++)
				;
			i = i + 1 < len ? i + 2 : len;
		} else
			break;
	}
	return i;
}

/* The index after the string that starts at s[i], or CC_NONE. */
static size_t
cc_string_end(const char *s, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return CC_NONE;
}

/* The index after the value that starts at s[i], or CC_NONE. */
static size_t
cc_value_end(const char *s, size_t len, size_t i)
{
	size_t depth = 0;

	if (i >= len)
		return CC_NONE;
	if (s[i] == '"')
		return cc_string_end(s, len, i);
	if (s[i] != '{' && s[i] != '[') {
		while (i < len && strchr(",}] \t\r\n/", s[i]) == NULL)
			i++;
		return i;
	}
	while (i < len) {
		if (s[i] == '"') {
			if ((i = cc_string_end(s, len, i)) == CC_NONE)
				return CC_NONE;
			continue;
		}
		if (s[i] == '/') {
			size_t next = ctl_client_config_skip(s, len, i);

			i = next > i ? next : i + 1;
			continue;
		}
		if (s[i] == '{' || s[i] == '[')
			depth++;
		else if ((s[i] == '}' || s[i] == ']') && --depth == 0)
			return i + 1;
		i++;
	}
	return CC_NONE;
}

/*
 * Finds the (last) member key of the object whose '{' is s[open]; 0 with
 * *ret, or -EINVAL when the text is not as expected.
 */
static int
cc_find(const char *s, size_t len, size_t open, const char *key,
    struct cc_member *ret)
{
	size_t i = open + 1, k, klen = strlen(key), vend, kstart,
	       prev = CC_NONE;
	bool is_match;

	*ret = (struct cc_member){ CC_NONE, CC_NONE, CC_NONE, false, CC_NONE,
		CC_NONE, CC_NONE };
	for (;;) {
		i = ctl_client_config_skip(s, len, i);
		if (i >= len)
			return -EINVAL;
		if (s[i] == '}') {
			ret->close = i;
			return 0;
		}
		if (s[i] != '"' || (k = cc_string_end(s, len, i)) == CC_NONE)
			return -EINVAL;
		ret->has_members = true;
		kstart = i + 1;
		i = ctl_client_config_skip(s, len, k);
		if (i >= len || s[i] != ':')
			return -EINVAL;
		i = ctl_client_config_skip(s, len, i + 1);
		if ((vend = cc_value_end(s, len, i)) == CC_NONE)
			return -EINVAL;
		is_match = k - 1 - kstart == klen &&
		    memcmp(s + kstart, key, klen) == 0;
		if (is_match) {
			ret->value_start = i;
			ret->value_end = vend;
			ret->key_start = kstart - 1;
			ret->prev_end = prev;
			ret->comma = CC_NONE;
		}
		prev = vend;
		i = ctl_client_config_skip(s, len, vend);
		if (i < len && s[i] == ',') {
			if (is_match)
				ret->comma = i;
			i++;
		}
	}
}

/* The indentation unit of the text: its first indented key's, or 2 spaces. */
static char *
cc_indent_unit(const char *s, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		size_t j = i + 1;

		if (s[i] != '\n')
			continue;
		while (j < len && (s[j] == ' ' || s[j] == '\t'))
			j++;
		if (j > i + 1 && j < len && s[j] == '"')
			return strndup(s + i + 1, j - i - 1);
	}
	return strdup("  ");
}

static void
cc_indent(FILE *f, const char *unit, int depth)
{
	while (depth-- > 0)
		fputs(unit, f);
}

/* v as JSON: objects one member a line at depth, arrays on one line. */
static void
cc_render_to(FILE *f, const json_t *v, const char *unit, int depth)
{
	const char *key;
	json_t *item;
	size_t i, n = 0;
	char *text;

	if (json_is_object(v) && json_object_size(v) > 0) {
		fputs("{\n", f);
		json_object_foreach((json_t *)(uintptr_t)v, key, item) {
			json_t *k = json_string(key);

			cc_indent(f, unit, depth + 1);
			text = json_dumps(k, JSON_ENCODE_ANY);
			fprintf(f, "%s: ", text != NULL ? text : "\"\"");
			free(text);
			json_decref(k);
			cc_render_to(f, item, unit, depth + 1);
			fputs(++n < json_object_size(v) ? ",\n" : "\n", f);
		}
		cc_indent(f, unit, depth);
		fputc('}', f);
		return;
	}
	if (json_is_array(v)) {
		fputc('[', f);
		json_array_foreach(v, i, item) {
			text = json_dumps(item, JSON_ENCODE_ANY | JSON_COMPACT);
			fprintf(f, "%s%s", i > 0 ? ", " : "",
			    text != NULL ? text : "null");
			free(text);
		}
		fputc(']', f);
		return;
	}
	text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	fputs(text != NULL ? text : "null", f);
	free(text);
}

char *
ctl_client_config_render(const json_t *v, const char *unit, int depth)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (f == NULL)
		return NULL;
	cc_render_to(f, v, unit, depth);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Parses text as JSON with comments (through jsonc_load); NULL if it fails. */
static json_t *
cc_parse(const char *text, size_t len)
{
	char path[64], *cause = NULL;
	json_t *doc = NULL;
	int fd = memfd_create("mcpctl-client-config", MFD_CLOEXEC);
	size_t off = 0;
	ssize_t n;

	if (fd < 0)
		return NULL;
	while (off < len && (n = write(fd, text + off, len - off)) > 0)
		off += n;
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	if (off == len && jsonc_load(path, &doc, &cause) < 0)
		doc = NULL;
	free(cause);
	close(fd);
	return doc;
}

/* Inserts ins at text[at], replacing the del bytes there; a new string. */
static char *
cc_splice(const char *text, size_t len, size_t at, size_t del, const char *ins)
{
	char *out;

	if (asprintf(&out, "%.*s%s%.*s", (int)at, text, ins,
		(int)(len - at - del), text + at + del) < 0)
		return NULL;
	return out;
}

/*
 * The text with the entry put in place, all else as it was (comments
 * too); NULL when the text is not as the scanner expects.
 */
static char *
cc_merge_text(const char *text, size_t len, const char *container,
    const json_t *entry, const char **ret_action)
{
	struct cc_member top, box;
	char *unit = cc_indent_unit(text, len), *value = NULL, *ins = NULL,
	     *out = NULL;
	size_t open = ctl_client_config_skip(text, len, 0);

	if (unit == NULL || open >= len || text[open] != '{' ||
	    cc_find(text, len, open, container, &top) < 0 ||
	    (value = ctl_client_config_render(entry, unit, 2)) == NULL)
		goto out;
	if (top.value_start == CC_NONE) {
		*ret_action = "added";
		if (asprintf(&ins, "\n%s\"%s\": {\n%s%s\"%s\": %s\n%s}%s", unit,
			container, unit, unit, CC_NAME, value, unit,
			top.has_members ? "," : "\n") < 0)
			ins = NULL;
		else
			out = cc_splice(text, len, open + 1, 0, ins);
		goto out;
	}
	if (text[top.value_start] != '{' ||
	    cc_find(text, len, top.value_start, CC_NAME, &box) < 0)
		goto out;
	if (box.value_start != CC_NONE) {
		*ret_action = "replaced";
		out = cc_splice(text, len, box.value_start,
		    box.value_end - box.value_start, value);
		goto out;
	}
	*ret_action = "added";
	if (asprintf(&ins, "\n%s%s\"%s\": %s%s%s", unit, unit, CC_NAME, value,
		box.has_members ? "," : "\n", box.has_members ? "" : unit) < 0)
		ins = NULL;
	else
		out = cc_splice(text, len, top.value_start + 1, 0, ins);
out:
	free(unit);
	free(value);
	free(ins);
	return out;
}

/*
 * The end of the comment at text[i] and the blanks after it, when it ends
 * on its line; else CC_NONE.
 */
static size_t
cc_skip_comment(const char *text, size_t len, size_t i)
{
	const char *end;

	if (text[i + 1] == '/') {
		while (i < len && text[i] != '\n' && text[i] != '\r')
			i++;
		return i;
	}
	end = memmem(text + i + 2, len - i - 2, "*/", 2);
	if (end == NULL || memchr(text + i, '\n', end - text - i) != NULL)
		return CC_NONE;
	for (i = end - text + 2; i < len && (text[i] == ' ' || text[i] == '\t');
	     i++)
		;
	return i;
}

/*
 * The text with the member key of the container taken out, the rest as it
 * was; NULL when the text is not as the scanner expects.
 */
static char *
cc_remove_text(const char *text, size_t len, const char *container,
    const char *key)
{
	struct cc_member top, box;
	size_t open = ctl_client_config_skip(text, len, 0), from, to, next;
	bool is_line;

	if (open >= len || text[open] != '{' ||
	    cc_find(text, len, open, container, &top) < 0 ||
	    top.value_start == CC_NONE || text[top.value_start] != '{' ||
	    cc_find(text, len, top.value_start, key, &box) < 0 ||
	    box.value_start == CC_NONE)
		return NULL;
	from = box.key_start;
	while (from > 0 && (text[from - 1] == ' ' || text[from - 1] == '\t'))
		from--;
	is_line = from > 0 && text[from - 1] == '\n';
	if (!is_line)
		from = box.key_start;
	if (box.comma != CC_NONE) {
		/* The member and its ',', and its line when it had one. */
		to = box.comma + 1;
		while (to < len && (text[to] == ' ' || text[to] == '\t'))
			to++;
		/* A comment after it on its line is about it: it goes too. */
		if (is_line && to + 1 < len && text[to] == '/' &&
		    (text[to + 1] == '/' || text[to + 1] == '*')) {
			next = cc_skip_comment(text, len, to);
			if (next != CC_NONE)
				to = next;
		}
		if (is_line && to < len && text[to] == '\r')
			to++;
		if (is_line && to < len && text[to] == '\n')
			to++;
	} else if (box.prev_end != CC_NONE) {
		/* The last member: the ',' before it goes with it. */
		from = box.prev_end;
		to = box.value_end;
	} else {
		from = top.value_start + 1;
		to = box.value_end;
	}
	return cc_splice(text, len, from, to - from, "");
}

char *
ctl_client_config_json_text(const struct ctl_client_config_file *f,
    const char *container, const json_t *entry, const json_t *removed,
    const json_t *want, const char **ret_note)
{
	const char *action, *key;
	char *cur = NULL, *next, *out = NULL;
	json_t *check = NULL, *v;
	size_t i;

	*ret_note = NULL;
	if (!f->is_new && !f->is_blank &&
	    (cur = strndup(f->text, f->len)) != NULL) {
		json_array_foreach(removed, i, v) {
			key = json_string_value(v);
			next = cc_remove_text(cur, strlen(cur), container, key);
			free(cur);
			if ((cur = next) == NULL)
				break;
		}
	}
	if (cur != NULL &&
	    (out = cc_merge_text(cur, strlen(cur), container, entry,
		 &action)) != NULL &&
	    ((check = cc_parse(out, strlen(out))) == NULL ||
		!json_equal(check, want))) {
		free(out);
		out = NULL;
	}
	free(cur);
	json_decref(check);
	if (out != NULL)
		return out;
	if (!f->is_new && !f->is_blank)
		*ret_note =
		    "the file was written anew: its comments and layout were not kept";
	if ((cur = ctl_client_config_render(want, "  ", 0)) == NULL ||
	    asprintf(&out, "%s\n", cur) < 0)
		out = NULL;
	free(cur);
	return out;
}
