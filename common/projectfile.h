/* SPDX-License-Identifier: ISC */
/* Project files (.mcpd.json): found from a directory, read and checked. */
#ifndef MCPD_PROJECTFILE_H
#define MCPD_PROJECTFILE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define PROJECTFILE_NAME ".mcpd.json"
#define PROJECTFILE_MAX	 (1024 * 1024) /* bytes of a project file */

/* A project file as found; doc/views.md, "Project files", says its form. */
struct projectfile {
	char *path; /* the file found, or NULL */
	char *text;
	size_t len;
	json_t *doc;
	const char *profile;  /* its "profile" (in doc), or NULL */
	json_t *servers;      /* its "servers", then its defined ones' names */
	const json_t *define; /* its "define" (in doc), or NULL */
	bool is_trusted;      /* what it defines may start */
	bool was_trusted;     /* another content of it was */
	char *error;	      /* "PATH: why" its view cannot be made, or NULL */
};

/*
 * Looks for .mcpd.json in dir, then its parents up to $HOME (or /): 0 with
 * *p filled (p->path NULL when there is none; p->error when it cannot be
 * read or is not a project file), -ENOMEM. projectfile_clear frees it.
 */
int projectfile_find(const char *dir, struct projectfile *p);
/* Sets p->error to "PATH: what", unless it has one: the first reason stays. */
void projectfile_fail(struct projectfile *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Sets p->error to why a file that defines servers may not start them. */
void projectfile_fail_untrusted(struct projectfile *p);
void projectfile_clear(struct projectfile *p);

#endif
