/* SPDX-License-Identifier: ISC */
/* What a container's output says about the HTTP port it listens on. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "mcpd.h"

int
probe_detect_port(const char *s, const char *end)
{
	long port = 0;
	const char *d = s;

	while (d < end && isdigit((unsigned char)*d) && d - s < 6)
		port = port * 10 + (*d++ - '0');
	if (d == s || (d < end && isalnum((unsigned char)*d)))
		return 0;
	return port > 0 && port <= 65535 ? (int)port : 0;
}

/* "http://host:port/path": the port and the path (up to white space). */
static int
probe_detect_url(const char *line, const char *end, int *ret_port,
    char **ret_path)
{
	const char *u = memmem(line, end - line, "http://", 7), *h, *path;
	size_t plen;

	if (u == NULL && (u = memmem(line, end - line, "https://", 8)) == NULL)
		return 0;
	h = strchr(u, '/') + 2;
	if (*h == '[')
		h = memchr(h, ']', end - h);
	if (h == NULL || (h = memchr(h, ':', end - h)) == NULL ||
	    memchr(u, ' ', h - u) != NULL ||
	    (*ret_port = probe_detect_port(h + 1, end)) == 0)
		return 0;
	path = h + 1;
	while (path < end && isdigit((unsigned char)*path))
		path++;
	plen = 0;
	while (path + plen < end && !isspace((unsigned char)path[plen]) &&
	    strchr("\"'<>", path[plen]) == NULL)
		plen++;
	if (plen <= 1 || path[0] != '/')
		*ret_path = xstrdup("/mcp");
	else
		*ret_path = xstrndup(path, plen);
	return 1;
}

/* "listening ... port N" or "listening on host:N". */
static int
probe_detect_listening(const char *line, const char *end, int *ret_port)
{
	const char *l = strcasestr(line, "listening"), *p;

	if (l == NULL)
		return 0;
	if ((p = strcasestr(l, "port")) != NULL && p < end) {
		p += 4;
		while (p < end && (*p == ' ' || *p == ':' || *p == '='))
			p++;
		if ((*ret_port = probe_detect_port(p, end)) > 0)
			return 1;
	}
	for (p = l; p < end && (p = memchr(p, ':', end - p)) != NULL; p++)
		if ((*ret_port = probe_detect_port(p + 1, end)) > 0)
			return 1;
	return 0;
}

int
probe_detect_http(const char *line, size_t len, int *ret_port, char **ret_path)
{
	char *copy = xstrndup(line, len);
	int r;

	r = probe_detect_url(copy, copy + len, ret_port, ret_path);
	if (r == 0 &&
	    (r = probe_detect_listening(copy, copy + len, ret_port)) > 0)
		*ret_path = xstrdup("/mcp");
	free(copy);
	return r;
}

size_t
probe_detect_exposed(const char *json, int *ports, size_t max)
{
	json_t *exposed = json_loads(json, JSON_DECODE_ANY, NULL), *v;
	const char *key, *proto;
	size_t n = 0;
	int port;

	json_object_foreach(exposed, key, v) {
		proto = key + strcspn(key, "/");
		port = probe_detect_port(key, proto);
		if (n == max)
			break;
		if (port > 0 && (*proto == '\0' || strcmp(proto, "/tcp") == 0))
			ports[n++] = port;
	}
	json_decref(exposed);
	return n;
}
