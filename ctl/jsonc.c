/* SPDX-License-Identifier: ISC */
/* JSON with comments and trailing commas, as VS Code writes its files. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "mcpctl.h"

#define JSONC_MAX_FILE ((size_t)16 << 20) /* bytes */
#define JSONC_NO_COMMA SIZE_MAX

static int jsonc_fail(char **, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets *cause and returns r. */
static int
jsonc_fail(char **cause, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(cause, fmt, ap) < 0)
		*cause = NULL;
	va_end(ap);
	return r;
}

int
jsonc_read_file(const char *path, char **ret, size_t *ret_len)
{
	return fileio_read_all(path, JSONC_MAX_FILE, 0, ret, ret_len);
}

/*
 * Blanks a block comment that starts at s[*i], keeping its newlines;
 * leaves *i on its last byte. -EINVAL when it does not end.
 */
static int
jsonc_blank_block(char *s, size_t len, size_t *i, size_t *line)
{
	size_t at = *i + 2;

	s[*i] = s[*i + 1] = ' ';
	for (; at < len && !(s[at] == '*' && at + 1 < len && s[at + 1] == '/');
	     at++) {
		*line += s[at] == '\n';
		if (s[at] != '\n')
			s[at] = ' ';
	}
	if (at >= len)
		return -EINVAL;
	s[at] = s[at + 1] = ' ';
	*i = at + 1;
	return 0;
}

/*
 * Blanks, in place, what JSON with comments adds to JSON: // and block
 * comments, a comma before } or ], a byte order mark. Strings are left
 * alone, and blanks keep the line and column of the rest, for jansson's
 * error positions. -EINVAL with the line of a comment that does not end.
 */
static int
jsonc_strip(char *s, size_t len, size_t *ret_line)
{
	size_t comma = JSONC_NO_COMMA, i, line = 1;
	bool is_string = false;

	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		memset(s, ' ', 3);
	for (i = 0; i < len; i++) {
		line += s[i] == '\n';
		if (is_string) {
			if (s[i] == '\\' && i + 1 < len && s[i + 1] != '\n')
				i++;
			else if (s[i] == '"' || s[i] == '\n')
				is_string = false;
			continue;
		}
		if (s[i] == '/' && i + 1 < len && s[i + 1] == '/') {
			while (i + 1 < len && s[i + 1] != '\n')
				s[i++] = ' ';
			s[i] = ' ';
			continue;
		}
		if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
			*ret_line = line;
			if (jsonc_blank_block(s, len, &i, &line) < 0)
				return -EINVAL;
			continue;
		}
		if (s[i] == ',') {
			comma = i;
			continue;
		}
		if ((s[i] == '}' || s[i] == ']') && comma != JSONC_NO_COMMA)
			s[comma] = ' ';
		if (!isspace((unsigned char)s[i]))
			comma = JSONC_NO_COMMA;
		is_string = s[i] == '"';
	}
	return 0;
}

int
jsonc_load(const char *path, json_t **ret, char **cause)
{
	bool is_stdin = strcmp(path, "-") == 0;
	const char *shown = is_stdin ? "standard input" : path;
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	json_error_t err;
	size_t len = 0, line = 0;
	char *buf = NULL;
	int r;

	if (fd < 0)
		return jsonc_fail(cause, -errno, "cannot open %s: %s", shown,
		    strerror(errno));
	r = fileio_read_fd(fd, JSONC_MAX_FILE, &buf, &len);
	if (!is_stdin)
		close(fd);
	if (r == -EFBIG)
		return jsonc_fail(cause, r, "%s is larger than %zu MiB", shown,
		    JSONC_MAX_FILE >> 20);
	if (r < 0)
		return jsonc_fail(cause, r, "cannot read %s: %s", shown,
		    strerror(-r));
	if (jsonc_strip(buf, len, &line) < 0) {
		free(buf);
		return jsonc_fail(cause, -EINVAL,
		    "%s:%zu: a /* comment that does not end", shown, line);
	}
	*ret = json_loadb(buf, len, 0, &err);
	free(buf);
	if (*ret == NULL)
		return jsonc_fail(cause, -EINVAL, "%s:%d:%d: %s", shown,
		    err.line, err.column, err.text);
	return 0;
}
