/* SPDX-License-Identifier: ISC */
/* Project files (.mcpd.json): found from a directory, read and checked. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "names.h"
#include "projectfile.h"

void
projectfile_fail(struct projectfile *p, const char *fmt, ...)
{
	char *what = NULL;
	va_list ap;

	if (p->error != NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&what, fmt, ap) < 0)
		what = NULL;
	va_end(ap);
	if (asprintf(&p->error, "%s: %s", p->path,
		what != NULL ? what : "out of memory") < 0)
		p->error = NULL;
	free(what);
}

/* The directory where the search stops: $HOME when dir is under it. */
static bool
project_is_last(const char *dir)
{
	const char *home = getenv("HOME");
	size_t n = home != NULL ? strlen(home) : 0;

	if (strcmp(dir, "/") == 0)
		return true;
	return n > 1 && strncmp(dir, home, n) == 0 && dir[n] == '\0';
}

/* dir's .mcpd.json, or its parents' up to $HOME (or /): a new path. */
static char *
project_locate(const char *start)
{
	char *dir = realpath(start, NULL), *path = NULL, *slash;

	while (dir != NULL) {
		if (asprintf(&path, "%s%s" PROJECTFILE_NAME, dir,
			strcmp(dir, "/") == 0 ? "" : "/") < 0)
			break;
		if (access(path, F_OK) == 0)
			break;
		free(path);
		path = NULL;
		if (project_is_last(dir))
			break;
		slash = strrchr(dir, '/');
		slash[slash == dir ? 1 : 0] = '\0';
	}
	free(dir);
	return path;
}

/* The servers of "servers": names, each valid; into p->servers. */
static void
project_servers(struct projectfile *p, const json_t *v)
{
	const json_t *e;
	size_t i;

	if (!json_is_array(v)) {
		projectfile_fail(p,
		    "\"servers\" must be an array of server names");
		return;
	}
	json_array_foreach(v, i, e)
		if (!json_is_string(e) || !names_valid(json_string_value(e)))
			projectfile_fail(p,
			    "\"servers\" item %zu is not a server name ([A-Za-z0-9][A-Za-z0-9_-]{0,62})",
			    i + 1);
		else
			json_array_append(p->servers, (json_t *)(uintptr_t)e);
}

/* Checks the document's shape: profile, servers, define. */
static void
project_check(struct projectfile *p)
{
	const char *key, *name;
	const json_t *v, *def;

	if (!json_is_object(p->doc)) {
		projectfile_fail(p, "not a JSON object");
		return;
	}
	json_object_foreach((json_t *)(uintptr_t)p->doc, key, v) {
		if (strcmp(key, "profile") == 0) {
			if (!json_is_string(v) ||
			    !names_valid(json_string_value(v)))
				projectfile_fail(p,
				    "\"profile\" must be a profile name");
			else
				p->profile = json_string_value(v);
		} else if (strcmp(key, "servers") == 0) {
			project_servers(p, v);
		} else if (strcmp(key, "define") == 0) {
			if (!json_is_object(v))
				projectfile_fail(p,
				    "\"define\" must be an object: server name -> what mcpctl load takes");
			json_object_foreach((json_t *)(uintptr_t)v, name, def)
				if (!names_valid(name) || !json_is_object(def))
					projectfile_fail(p,
					    "\"define\": \"%s\" must be a server name with an object",
					    name);
			p->define = v;
		} else {
			projectfile_fail(p,
			    "unknown key \"%s\" (a project file has profile, servers and define)",
			    key);
		}
	}
}

int
projectfile_find(const char *dir, struct projectfile *p)
{
	json_error_t jerr;
	int r;

	*p = (struct projectfile){ 0 };
	if ((p->servers = json_array()) == NULL)
		return -ENOMEM;
	if ((p->path = project_locate(dir)) == NULL)
		return 0;
	r = fileio_read_all(p->path, PROJECTFILE_MAX, FILEIO_REGULAR, &p->text,
	    &p->len);
	if (r < 0) {
		projectfile_fail(p, "cannot read it: %s",
		    r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
		return 0;
	}
	if ((p->doc = json_loadb(p->text, p->len, JSON_REJECT_DUPLICATES,
		 &jerr)) == NULL) {
		projectfile_fail(p, "not JSON: %s at line %d, column %d",
		    jerr.text, jerr.line, jerr.column);
		return 0;
	}
	project_check(p);
	return 0;
}

void
projectfile_fail_untrusted(struct projectfile *p)
{
	projectfile_fail(p,
	    "it defines servers (it runs programs) and %s; read it, then: mcpctl project trust %.*s",
	    p->was_trusted ? "it changed since it was trusted" :
			     "it is not trusted",
	    (int)(strrchr(p->path, '/') - p->path), p->path);
}

void
projectfile_clear(struct projectfile *p)
{
	free(p->path);
	free(p->text);
	free(p->error);
	json_decref(p->doc);
	json_decref(p->servers);
	*p = (struct projectfile){ 0 };
}
