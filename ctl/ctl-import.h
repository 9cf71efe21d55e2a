/* SPDX-License-Identifier: ISC */
/* What ctl-import.c and ctl-import-run.c share; nothing else includes it. */
#ifndef MCPCTL_IMPORT_H
#define MCPCTL_IMPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "mcpctl.h"

/* What an entry (or a server that the file no longer has) became. */
enum ctl_import_status {
	CTL_IMPORT_LOADED,
	CTL_IMPORT_RECONFIGURED,
	CTL_IMPORT_REPLACED,
	CTL_IMPORT_UNCHANGED,
	CTL_IMPORT_UNLOADED,
	CTL_IMPORT_SKIPPED,
	CTL_IMPORT_FAILED,
	CTL_IMPORT_NSTATUS,
};

struct ctl_import {
	const char *path; /* FILE, or "-" */
	bool is_dry_run;
	bool is_no_persist;
	bool is_allow_local;
	bool is_prune;
	json_int_t timeout_ms; /* 0 for the daemon's default */
	char *dir;	       /* where a process runs without a "cwd" */
	char *workspace;       /* the folder that holds .vscode/, or NULL */
	char *origin;	       /* FILE's absolute path; NULL for stdin */
	json_t *plan;	       /* one object per entry, in file order */
	json_t *servers;       /* mcpd/list rows, NULL when not asked */
	char *docker;	       /* mcpd's docker CLI, NULL when not asked */
	bool is_podman;	       /* mcpd runs containers with podman */
	size_t counts[CTL_IMPORT_NSTATUS];
};

/* ctl-import.c */
/*
 * Where FILE is and what that makes: FILE's absolute path (the origin of
 * what it loads); the workspace folder when FILE is in a .vscode folder;
 * where a process runs when its entry gives no "cwd": the workspace
 * folder, else FILE's directory, resolved, so that the same file gives
 * the same params from anywhere; the current directory for standard
 * input. 0, or the exit status after the failure has been printed.
 */
int ctl_import_dir(struct ctl_import *);
/*
 * The plan: one object per entry with its name, kind and status ("load",
 * "skipped" or "failed", with a reason or error) and the secrets it
 * needs. Entries to load get their params once they are named.
 */
void ctl_import_plan(struct ctl_import *, const json_t *entries);
/* Frees what the members of im point to (not im). */
void ctl_import_clear(struct ctl_import *im);
/* Whether the entry e of the plan has the status. */
bool ctl_import_is(const json_t *e, const char *status);
/* Sets e's status to "failed" with error. */
void ctl_import_fail(json_t *e, const char *error);
/* Writes s to f with its control characters as spaces. */
void ctl_import_put(FILE *f, const char *s);
/* Prints the line of one entry of a run, and the notes under it. */
void ctl_import_put_entry(const json_t *e, bool is_dry_run);

/* ctl-import-run.c: what mcpd has, and changing it. */
/*
 * Asks mcpd for its servers (and, for a podman entry, its docker CLI).
 * Returns 0, 1 when there is no daemon and is_quiet (a dry run), or the
 * exit status after the failure has been printed.
 */
int ctl_import_ask(struct mcpctl *, struct ctl_import *, bool is_quiet);
/* The row of mcpd/list named name, or NULL. */
const json_t *ctl_import_server(const struct ctl_import *, const char *name);
/*
 * Whether the server row mcpd has under e's name runs what the entry e
 * of the plan says: the same kind and the same endpoint (command, URL or
 * image), as an import of e would have loaded it.
 */
bool ctl_import_is_same(const json_t *e, const json_t *row);
/*
 * Marks what each entry to load would do given what mcpd has ("action":
 * load, load-again, replace), fails the entries that cannot work, and
 * adds the servers --prune would unload.
 */
void ctl_import_compare(struct ctl_import *);
/* Loads the plan in order and reports each entry; returns the status. */
int ctl_import_run(struct mcpctl *, struct ctl_import *);

#endif
