/* SPDX-License-Identifier: ISC */
/* mcpctl client-config --migrate: the mcpd entry in place of what import brought. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl-client-config.h"
#include "ctl-import.h"
#include "import.h"

#define CC_NAME CTL_CLIENT_CONFIG_NAME

/* Notes an entry that stays, and why. */
static void cc_migrate_keep(json_t *kept, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
cc_migrate_keep(json_t *kept, const char *key, const char *fmt, ...)
{
	char *reason = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&reason, fmt, ap) < 0)
		reason = NULL;
	va_end(ap);
	json_array_append_new(kept,
	    json_pack("{s:s, s:s}", "name", key, "reason",
		reason != NULL ? reason : "out of memory"));
	free(reason);
}

/* Whether the bridge's view (its --server list; empty: all) has name. */
static bool
cc_migrate_is_seen(const json_t *servers, const char *name)
{
	const json_t *s;
	size_t i;

	if (json_array_size(servers) == 0)
		return true;
	json_array_foreach(servers, i, s)
		if (strcmp(json_string_value(s), name) == 0)
			return true;
	return false;
}

/* Sorts one entry of the plan into removed or kept. */
static void
cc_migrate_sort(const struct ctl_import *im, const json_t *e,
    const json_t *servers, json_t *removed, json_t *kept)
{
	const char *name = json_string_value(json_object_get(e, "name"));
	const char *from = json_string_value(json_object_get(e,
	    "renamed_from"));
	const char *key = from != NULL ? from : name, *state;
	const json_t *row;

	if (ctl_import_is(e, "skipped")) {
		cc_migrate_keep(kept, key, "%s: import does not load it",
		    json_string_value(json_object_get(e, "reason")));
		return;
	}
	if (ctl_import_is(e, "failed")) {
		cc_migrate_keep(kept, key, "import cannot load it: %s",
		    json_string_value(json_object_get(e, "error")));
		return;
	}
	if ((row = ctl_import_server(im, name)) == NULL) {
		cc_migrate_keep(kept, key,
		    "mcpd has no server %s (mcpctl import %s loads it)", name,
		    im->path);
		return;
	}
	state = json_string_value(json_object_get(row, "state"));
	if (!ctl_import_is_same(e, row))
		cc_migrate_keep(kept, key,
		    "mcpd's server %s runs %s, not what this entry runs", name,
		    json_string_value(json_object_get(row, "endpoint")));
	else if (state != NULL &&
	    (strcmp(state, "failed") == 0 || strcmp(state, "disabled") == 0))
		cc_migrate_keep(kept, key, "mcpd's server %s is %s", name,
		    state);
	else if (!cc_migrate_is_seen(servers, name))
		cc_migrate_keep(kept, key,
		    "mcpd has it, but the mcpd entry shows only the servers given with --server");
	else
		json_array_append_new(removed,
		    json_pack("{s:s, s:s, s:O}", "name", key, "server", name,
			"id", json_object_get(row, "id")));
}

/*
 * Sorts the entries of box (the client's, without the mcpd entry) as
 * import reads them; 0, or the exit status after the failure was printed.
 */
static int
cc_migrate_plan(struct mcpctl *m, struct ctl_import *im, const char *container,
    const json_t *box, const json_t *servers, bool is_dry_run, json_t *removed,
    json_t *kept)
{
	json_t *doc = json_pack("{s:o}", container, json_deep_copy(box)),
	       *entries = NULL, *e;
	char *cause = NULL;
	size_t i;
	int r;

	json_object_del(json_object_get(doc, container), CC_NAME);
	if ((r = ctl_import_dir(im)) != 0)
		goto out;
	if (import_parse_in(doc, im->workspace, &entries, &cause) < 0) {
		print_err("client-config: %s: %s", im->path,
		    cause != NULL ? cause : "out of memory");
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	ctl_import_plan(im, entries);
	/* A dry run starts no daemon: without one, mcpd has none of them. */
	if ((r = ctl_import_ask(m, im, is_dry_run)) == 1)
		r = 0;
	else if (r != 0)
		goto out;
	json_array_foreach(im->plan, i, e)
		cc_migrate_sort(im, e, servers, removed, kept);
out:
	free(cause);
	json_decref(entries);
	json_decref(doc);
	return r;
}

/* The report: each entry removed or kept, then what happened to FILE. */
static void
cc_migrate_report(const struct ctl_client_config_client *client,
    const char *path, const json_t *removed, const json_t *kept,
    const char *action, const char *bak, const char *note, bool is_dry_run)
{
	const json_t *v;
	size_t i;

	json_array_foreach(removed, i, v) {
		printf("%s ", is_dry_run ? "would remove" : "removed");
		ctl_import_put(stdout,
		    json_string_value(json_object_get(v, "name")));
		printf(": mcpd has it as %s (id %s)\n",
		    json_string_value(json_object_get(v, "server")),
		    json_string_value(json_object_get(v, "id")));
	}
	json_array_foreach(kept, i, v) {
		printf("%s ", is_dry_run ? "would keep" : "kept");
		ctl_import_put(stdout,
		    json_string_value(json_object_get(v, "name")));
		fputs(": ", stdout);
		ctl_import_put(stdout,
		    json_string_value(json_object_get(v, "reason")));
		putchar('\n');
	}
	if (strcmp(action, "unchanged") == 0) {
		printf(
		    "%s already has the %s entry for %s and no entry that mcpd has: nothing changed\n",
		    path, CC_NAME, client->name);
		return;
	}
	printf(
	    "%s %s: the %s entry for %s %s under \"%s\", %zu entr%s %s, %zu %s\n",
	    is_dry_run ? "would update" : "updated", path, CC_NAME,
	    client->name, action, client->container, json_array_size(removed),
	    json_array_size(removed) == 1 ? "y" : "ies",
	    is_dry_run ? "to remove" : "removed", json_array_size(kept),
	    is_dry_run ? "to keep" : "kept");
	if (is_dry_run) {
		printf("dry run, nothing changed\n");
		return;
	}
	printf("the old content is in %s\n", bak);
	if (note != NULL)
		printf("note: %s\n", note);
	printf("read back: as written; restart %s to use it\n", client->name);
}

int
ctl_client_config_migrate(struct mcpctl *m,
    const struct ctl_client_config_client *client, const json_t *entry,
    const json_t *servers, const char *file, bool is_dry_run)
{
	struct ctl_client_config_file f;
	struct ctl_import im = { 0 };
	json_t *doc = NULL, *box, *removed = json_array(), *kept = json_array(),
	       *keys = json_array(), *want = NULL, *v, *report;
	char *cause = NULL, *out = NULL, *bak = NULL;
	const char *action, *note = NULL;
	size_t i;
	int r;

	if ((r = ctl_client_config_open(file, &f)) != 0)
		goto out;
	if (f.is_new) {
		print_err(
		    "client-config: %s does not exist: --migrate changes a client's file, --write creates one",
		    f.path);
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	if (f.is_blank)
		doc = json_object();
	else if (jsonc_load(f.path, &doc, &cause) < 0) {
		print_err("client-config: %s", cause);
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	box = json_object_get(doc, client->container);
	if (!json_is_object(doc) || (box != NULL && !json_is_object(box))) {
		print_err(
		    "client-config: %s is not a %s file: it has no object \"%s\" at its top",
		    f.path, client->name, client->container);
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	im.path = f.path;
	if (box != NULL &&
	    (r = cc_migrate_plan(m, &im, client->container, box, servers,
		 is_dry_run, removed, kept)) != 0)
		goto out;
	action = json_array_size(removed) == 0 &&
		json_equal(json_object_get(box, CC_NAME), entry) ?
	    "unchanged" :
	    json_object_get(box, CC_NAME) != NULL ? "replaced" :
						    "added";
	want = json_deep_copy(doc);
	if (json_object_get(want, client->container) == NULL)
		json_object_set_new(want, client->container, json_object());
	json_array_foreach(removed, i, v) {
		json_array_append(keys, json_object_get(v, "name"));
		json_object_del(json_object_get(want, client->container),
		    json_string_value(json_object_get(v, "name")));
	}
	json_object_set(json_object_get(want, client->container), CC_NAME,
	    (json_t *)(uintptr_t)entry);
	if (!is_dry_run && strcmp(action, "unchanged") != 0) {
		if ((out = ctl_client_config_json_text(&f, client->container,
			 entry, keys, want, &note)) == NULL) {
			print_err("client-config: out of memory");
			r = MCPCTL_EXIT_ERROR;
			goto out;
		}
		if ((r = ctl_client_config_commit(&f, out, &bak)) != 0)
			goto out;
	}
	if (m->is_json) {
		report = json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:b, s:O, s:O}",
		    "file", f.path, "client", client->name, "action", action,
		    "backup", bak, "note", note, "dry_run", is_dry_run,
		    "removed", removed, "kept", kept);
		print_json(report);
		json_decref(report);
	} else
		cc_migrate_report(client, f.path, removed, kept, action, bak,
		    note, is_dry_run);
	if (!m->is_json && client->note != NULL)
		printf("note: %s\n", client->note);
	r = MCPCTL_EXIT_OK;
out:
	ctl_client_config_close(&f);
	free(cause);
	free(out);
	free(bak);
	ctl_import_clear(&im);
	json_decref(doc);
	json_decref(want);
	json_decref(removed);
	json_decref(kept);
	json_decref(keys);
	return r;
}
