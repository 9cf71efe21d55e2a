/* SPDX-License-Identifier: ISC */
/* What the ctl-client-config*.c files share; nothing else includes it. */
#ifndef MCPCTL_CLIENT_CONFIG_H
#define MCPCTL_CLIENT_CONFIG_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "mcpctl.h"

#define CTL_CLIENT_CONFIG_NAME "mcpd" /* the entry's name in the file */

/* How a client's file keeps its servers. */
enum ctl_client_config_format {
	CTL_CLIENT_CONFIG_JSON, /* an object of entries under a key */
	CTL_CLIENT_CONFIG_TOML, /* codex: [mcp_servers.NAME] tables */
};

/* A client, the key its file keeps servers under, its entry's shape. */
struct ctl_client_config_client {
	const char *name;
	const char *container; /* "mcpServers", "servers", "mcp_servers" */
	bool has_type;	       /* "type": "stdio" in the entry */
	enum ctl_client_config_format format;
	const char *note; /* said after the file is written, or NULL */
};

/* A client's file as read: its text, and how to write it back. */
struct ctl_client_config_file {
	const char *path; /* what is written: FILE, or its link's target */
	char *real;	  /* the target when FILE is a symbolic link */
	char *text;	  /* NULL when the file does not exist */
	size_t len;
	bool is_new;
	bool is_blank; /* it exists and holds only blanks and comments */
	mode_t mode;
};

/* ctl-client-config.c */
/*
 * Reads file (a symbolic link's target) into *f; 0, or the exit status
 * after the failure has been printed.
 */
int ctl_client_config_open(const char *file, struct ctl_client_config_file *f);
/* Frees what ctl_client_config_open allocated. */
void ctl_client_config_close(struct ctl_client_config_file *f);
/*
 * Writes out to f's path, the old content first to FILE.bak (*ret_bak,
 * new) unless the file is new, then reads it back; 0, or the exit status
 * after the failure has been printed.
 */
int ctl_client_config_commit(const struct ctl_client_config_file *f,
    const char *out, char **ret_bak);

/* ctl-client-config-json.c: editing JSON text, comments kept. */
/* Skips blanks, comments and a byte order mark from i on. */
size_t ctl_client_config_skip(const char *s, size_t len, size_t i);
/* v as JSON: objects one member a line at depth, arrays on one line. */
char *ctl_client_config_render(const json_t *v, const char *unit, int depth);
/*
 * The new text of f: its entries named in removed taken out of the
 * container, the entry put in under CTL_CLIENT_CONFIG_NAME, all else as
 * it was; written anew from want (with *ret_note saying so) when the text
 * is not as the scanner expects; NULL when out of memory.
 */
char *ctl_client_config_json_text(const struct ctl_client_config_file *f,
    const char *container, const json_t *entry, const json_t *removed,
    const json_t *want, const char **ret_note);

/* ctl-client-config-toml.c: codex's config.toml. */
/* Prints the entry as the TOML table codex reads. */
void ctl_client_config_toml_print(const json_t *entry);
/* --write FILE for codex: the entry's table put in, all else as it was. */
int ctl_client_config_toml_write(const struct mcpctl *,
    const struct ctl_client_config_client *, const json_t *entry,
    const char *file, bool is_dry_run);

/* ctl-client-config-migrate.c */
/*
 * --migrate FILE: the entries of FILE that mcpd has as an import of them
 * loaded replaced with the entry; returns the exit status.
 */
int ctl_client_config_migrate(struct mcpctl *,
    const struct ctl_client_config_client *, const json_t *entry,
    const json_t *servers, const char *file, bool is_dry_run);

#endif
