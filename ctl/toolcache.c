/* SPDX-License-Identifier: ISC */
/*
 * The definitions of the tools mcpctl call used, kept between runs: a warm
 * call types its arguments by the one kept and names its digest, and mcpd
 * refuses the call (tool-changed, nothing sent) when the tool is no longer
 * defined so. One file per socket, agent, server and tool under
 * $XDG_CACHE_HOME/mcpctl/tools (else ~/.cache/mcpctl/tools); any of them
 * may be deleted at any time. Failing to read or write one only costs the
 * round trip it would have saved, so no failure here is reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "mcpctl.h"
#include "paths.h"

/* Where the files are, or NULL (new). */
static char *
toolcache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir = NULL;

	if (xdg != NULL && xdg[0] == '/')
		return asprintf(&dir, "%s/mcpctl/tools", xdg) < 0 ? NULL : dir;
	if (home != NULL && home[0] == '/')
		return asprintf(&dir, "%s/.cache/mcpctl/tools", home) < 0 ?
		    NULL :
		    dir;
	return NULL;
}

/* What names the entry: socket, agent, server and tool, in that order. */
static json_t *
toolcache_key(const struct mcpctl *m, const char *server, const char *tool)
{
	return json_pack("[s, s, s, s]", m->socket_path,
	    m->agent != NULL ? m->agent : "default", server, tool);
}

/* The entry's file in dir (new), named by the key's FNV-1a hash, or NULL. */
static char *
toolcache_path(const char *dir, const json_t *key)
{
	uint64_t h = 14695981039346656037ULL;
	const json_t *part;
	char *path = NULL;
	const char *s;
	size_t i;

	if (dir == NULL || key == NULL)
		return NULL;
	json_array_foreach(key, i, part) {
		/* Each part with its NUL, so that parts cannot run together. */
		s = json_string_value(part);
		do {
			h ^= (unsigned char)*s;
			h *= 1099511628211ULL;
		} while (*s++ != '\0');
	}
	if (asprintf(&path, "%s/%016llx.json", dir, (unsigned long long)h) < 0)
		path = NULL;
	return path;
}

/* The file's JSON, when it is no larger than the bound; else NULL. */
static json_t *
toolcache_read(const char *path)
{
	json_t *doc = NULL;
	char *buf = NULL;
	size_t len;

	if (fileio_read_all(path, TOOLCACHE_MAX_BYTES, 0, &buf, &len) == 0)
		doc = json_loadb(buf, len, 0, NULL);
	free(buf);
	return doc;
}

json_t *
toolcache_get(const struct mcpctl *m, const char *server, const char *tool)
{
	json_t *key = toolcache_key(m, server, tool), *doc = NULL, *entry;
	char *dir = toolcache_dir(), *path = toolcache_path(dir, key);
	const char *name;

	if (path != NULL)
		doc = toolcache_read(path);
	entry = json_object_get(doc, "tool");
	name = json_string_value(json_object_get(entry, "name"));
	if (!json_equal(json_object_get(doc, "key"), key) || name == NULL ||
	    strcmp(name, tool) != 0 ||
	    !json_is_string(json_object_get(entry, "definition")))
		entry = NULL;
	json_incref(entry);
	json_decref(doc);
	json_decref(key);
	free(path);
	free(dir);
	return entry;
}

/* Writes text to a file of its own beside path, then renames it to path. */
static void
toolcache_write(const char *path, const char *text)
{
	size_t len = strlen(text), done = 0;
	char *aside = NULL;
	ssize_t n = 0;
	int fd;

	if (asprintf(&aside, "%s.%ld.tmp", path, (long)getpid()) < 0)
		return;
	fd = open(aside, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	while (fd >= 0 && done < len &&
	    (n = write(fd, text + done, len - done)) > 0)
		done += (size_t)n;
	if (fd >= 0 && close(fd) == 0 && done == len &&
	    rename(aside, path) == 0) {
		free(aside);
		return;
	}
	if (fd >= 0)
		unlink(aside);
	free(aside);
}

void
toolcache_put(const struct mcpctl *m, const char *server, const char *tool,
    const json_t *entry)
{
	json_t *key = toolcache_key(m, server, tool), *doc;
	char *dir = toolcache_dir(), *path = toolcache_path(dir, key);
	char *text = NULL;

	if (path != NULL &&
	    json_is_string(json_object_get(entry, "definition")) &&
	    (doc = json_pack("{s:O, s:O}", "key", key, "tool", entry)) !=
		NULL) {
		text = json_dumps(doc, JSON_COMPACT);
		json_decref(doc);
	}
	if (text != NULL && strlen(text) <= TOOLCACHE_MAX_BYTES &&
	    paths_mkdir_p(dir, 0700) == 0)
		toolcache_write(path, text);
	free(text);
	free(dir);
	free(path);
	json_decref(key);
}
