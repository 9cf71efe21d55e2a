/* SPDX-License-Identifier: ISC */
/* mcpctl import: what mcpd has, and loading, replacing and pruning. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl-import.h"
#include "errors.h"
#include "import.h"
#include "jsonrpc.h"
#include "names.h"

/* Hints of mcpd's messages for `mcpctl load`, and what import says. */
static const struct {
	const char *load;
	const char *import;
} ctl_import_hints[] = {
	{ "choose another name with --name", "rename the entry in the file" },
	{ "load this server under another --name",
	    "rename the entry in the file" },
	{ "--name", "another name (rename the entry in the file)" },
};

#define CTL_IMPORT_NHINTS (sizeof ctl_import_hints / sizeof ctl_import_hints[0])

/* An error of mcpd with the options of load it suggests made import's. */
static char *
ctl_import_hinted(const char *message)
{
	char *out = NULL;
	size_t len, n, k;
	FILE *f = open_memstream(&out, &len);

	if (f == NULL)
		return NULL;
	while (*message != '\0') {
		for (k = 0; k < CTL_IMPORT_NHINTS; k++) {
			n = strlen(ctl_import_hints[k].load);
			if (strncmp(message, ctl_import_hints[k].load, n) == 0)
				break;
		}
		if (k == CTL_IMPORT_NHINTS) {
			fputc(*message++, f);
			continue;
		}
		fputs(ctl_import_hints[k].import, f);
		message += n;
	}
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

const json_t *
ctl_import_server(const struct ctl_import *im, const char *name)
{
	const char *have;
	json_t *row;
	size_t i;

	json_array_foreach(im->servers, i, row) {
		have = json_string_value(json_object_get(row, "name"));
		if (have != NULL && strcmp(have, name) == 0)
			return row;
	}
	return NULL;
}

/* Whether a listed server was loaded by an import of this very file. */
static bool
ctl_import_is_ours(const struct ctl_import *im, const json_t *row)
{
	const char *origin = json_string_value(json_object_get(row, "origin"));

	return im->origin != NULL && origin != NULL &&
	    strcmp(origin, im->origin) == 0;
}

/* Fails e: its name is taken by a server this file did not load. */
static void
ctl_import_fail_taken(const struct ctl_import *im, json_t *e, const json_t *row)
{
	const char *name = json_string_value(json_object_get(e, "name"));
	char *error;

	if (asprintf(&error,
		"the name %s is taken by a server that %s did not import (%s); rename the entry in the file, or unload %s first (mcpctl unload %s)",
		name, im->origin != NULL ? "this file" : "standard input",
		json_string_value(json_object_get(row, "endpoint")), name,
		name) < 0)
		error = NULL;
	ctl_import_fail(e, error != NULL ? error : "the name is taken");
	free(error);
}

/* Whether the program (a path or a name) is podman. */
static bool
ctl_import_is_podman_cli(const char *program)
{
	char *copy = program != NULL ? strdup(program) : NULL;
	bool is_podman = copy != NULL && strcmp(basename(copy), "podman") == 0;

	free(copy);
	return is_podman;
}

/* Notes mcpd's docker CLI, and whether it is podman (maybe a link to it). */
static void
ctl_import_note_docker(struct ctl_import *im, const json_t *status)
{
	const json_t *docker = json_object_get(status, "docker");
	const char *program = json_string_value(json_object_get(docker,
	    "program"));
	const char *cli = json_string_value(json_object_get(docker, "cli"));
	char *real = cli != NULL ? realpath(cli, NULL) : NULL;

	im->docker = strdup(cli != NULL ? cli :
		program != NULL		? program :
					  "docker");
	im->is_podman = ctl_import_is_podman_cli(program) ||
	    ctl_import_is_podman_cli(cli) || ctl_import_is_podman_cli(real);
	free(real);
}

/* Whether an entry of the plan is to run with podman. */
static bool
ctl_import_is_podman_entry(const json_t *e)
{
	const char *runtime = json_string_value(json_object_get(e, "runtime"));

	return runtime != NULL && strcmp(runtime, "podman") == 0;
}

int
ctl_import_ask(struct mcpctl *m, struct ctl_import *im, bool is_quiet)
{
	json_t *result, *e;
	bool has_podman = false;
	size_t i;
	int r;

	/* A dry run needs no daemon; mcpctl_request opens and says hello. */
	if (m->conn == NULL && is_quiet) {
		if (conn_open(m->socket_path, &m->conn) < 0)
			return 1;
		conn_free(m->conn);
		m->conn = NULL;
	}
	if ((r = mcpctl_request(m, "mcpd/list", json_object(), &result)) != 0)
		return r;
	im->servers = json_incref(json_object_get(result, "servers"));
	json_decref(result);
	json_array_foreach(im->plan, i, e)
		has_podman |= ctl_import_is_podman_entry(e);
	if (!has_podman)
		return 0;
	if ((r = mcpctl_request(m, "mcpd/status", json_object(), &result)) != 0)
		return r;
	ctl_import_note_docker(im, result);
	json_decref(result);
	return 0;
}

/* Fails a podman entry when mcpd would run it with another CLI. */
static void
ctl_import_check_podman(const struct ctl_import *im, json_t *e)
{
	char *error;

	if (!ctl_import_is_podman_entry(e) || im->docker == NULL ||
	    im->is_podman)
		return;
	if (asprintf(&error,
		"the entry uses podman; mcpd runs containers with %s; start mcpd with --docker podman",
		im->docker) < 0)
		error = NULL;
	ctl_import_fail(e, error != NULL ? error : "the entry uses podman");
	free(error);
}

/* The names the file gives, made server names as the plan makes them. */
static bool
ctl_import_is_kept(const struct ctl_import *im, const char *name)
{
	const char *have, *from;
	size_t i;
	json_t *e;

	json_array_foreach(im->plan, i, e) {
		if (ctl_import_is(e, "skipped") || ctl_import_is(e, "unload"))
			continue;
		have = json_string_value(json_object_get(e, "name"));
		from = json_string_value(json_object_get(e, "renamed_from"));
		if (strcmp(have, name) == 0 ||
		    (from != NULL && strcmp(from, name) == 0))
			return true;
	}
	return false;
}

/*
 * Adds to the plan, as "unload", each server an import of this file
 * loaded whose entry the file no longer has (or has disabled).
 */
static void
ctl_import_plan_prune(struct ctl_import *im)
{
	const char *name;
	json_t *row;
	size_t i;

	json_array_foreach(im->servers, i, row) {
		name = json_string_value(json_object_get(row, "name"));
		if (name == NULL || !ctl_import_is_ours(im, row) ||
		    ctl_import_is_kept(im, name))
			continue;
		json_array_append_new(im->plan,
		    json_pack("{s:s, s:O, s:s, s:O, s:O}", "name", name, "kind",
			json_object_get(row, "mode"), "status", "unload", "id",
			json_object_get(row, "id"), "endpoint",
			json_object_get(row, "endpoint")));
	}
}

bool
ctl_import_is_same(const json_t *e, const json_t *row)
{
	const char *kind = json_string_value(json_object_get(e, "kind"));
	const char *mode = json_string_value(json_object_get(row, "mode"));
	const char *have = json_string_value(json_object_get(row, "endpoint"));
	char *endpoint = import_endpoint(json_object_get(e, "params"));
	bool is_same = kind != NULL && mode != NULL &&
	    strcmp(mode, kind) == 0 && have != NULL && endpoint != NULL &&
	    strcmp(have, endpoint) == 0;

	free(endpoint);
	return is_same;
}

/* What loading e would do, given the server of its name mcpd has. */
static void
ctl_import_compare_one(const struct ctl_import *im, json_t *e)
{
	const char *name = json_string_value(json_object_get(e, "name"));
	const json_t *row = ctl_import_server(im, name);
	const char *have = json_string_value(json_object_get(row, "endpoint"));

	if (row == NULL) {
		json_object_set_new(e, "action", json_string("load"));
		return;
	}
	if (ctl_import_is_same(e, row))
		json_object_set_new(e, "action", json_string("load-again"));
	else if (ctl_import_is_ours(im, row)) {
		json_object_set_new(e, "action", json_string("replace"));
		json_object_set_new(e, "was", json_string(have));
	} else
		ctl_import_fail_taken(im, e, row);
}

void
ctl_import_compare(struct ctl_import *im)
{
	char *why = NULL;
	size_t i;
	json_t *e;

	json_array_foreach(im->plan, i, e) {
		if (!ctl_import_is(e, "load"))
			continue;
		ctl_import_check_podman(im, e);
		if (ctl_import_is(e, "load") &&
		    import_check_load(json_object_get(e, "params"), &why) < 0)
			ctl_import_fail(e, why);
		free(why);
		why = NULL;
		if (ctl_import_is(e, "load") && im->servers != NULL)
			ctl_import_compare_one(im, e);
	}
	if (im->is_prune && im->servers != NULL)
		ctl_import_plan_prune(im);
}

/*
 * Sends one request of an entry (params stolen); 0 with the answer in
 * *ret_msg, or the exit status when the connection broke.
 */
static int
ctl_import_send(struct mcpctl *m, const char *method, json_t *params,
    json_t **ret_msg)
{
	char *cause = NULL;
	int r;

	if ((r = conn_call(m->conn, method, params, ret_msg, &cause)) == 0)
		return 0;
	print_err("%s", cause != NULL ? cause : strerror(-r));
	free(cause);
	if (r == -EMSGSIZE || r == -EBADMSG)
		return MCPCTL_EXIT_ERROR;
	fprintf(stderr, "mcpd at %s may have stopped or crashed\n",
	    m->socket_path);
	return MCPCTL_EXIT_UNREACHABLE;
}

/* The message of an error answer, its hints made import's (new). */
static char *
ctl_import_error_of(const struct jsonrpc_msg *jm)
{
	const char *message = jm->error_message;

	if (message == NULL || message[0] == '\0')
		message = "mcpd answered with an error";
	return ctl_import_hinted(message);
}

/* The outcome of one load, as the fields of its entry. */
static void
ctl_import_outcome(json_t *e, json_t *msg, bool is_replace)
{
	struct jsonrpc_msg jm;
	const char *status;
	json_t *lines;
	char *error;

	/* conn_call returns only a classified result or error. */
	jsonrpc_classify(msg, &jm, NULL);
	json_object_del(e, "params");
	if (jm.type == JSONRPC_ERROR) {
		error = ctl_import_error_of(&jm);
		ctl_import_fail(e, error != NULL ? error : "out of memory");
		free(error);
		lines = json_object_get(json_object_get(jm.error, "data"),
		    "stderr");
		if (json_array_size(lines) > 0)
			json_object_set(e, "stderr", lines);
		return;
	}
	if (json_is_true(json_object_get(jm.result, "was_loaded")))
		status = "unchanged";
	else if (json_is_true(json_object_get(jm.result, "reconfigured")))
		status = "reconfigured";
	else
		status = is_replace ? "replaced" : "loaded";
	json_object_set_new(e, "status", json_string(status));
	json_object_set(e, "id", json_object_get(jm.result, "id"));
	if (json_is_integer(json_object_get(jm.result, "tools")))
		json_object_set(e, "tools",
		    json_object_get(jm.result, "tools"));
}

/* Unloads a server by id; 0 and *ret_error NULL or why it failed. */
static int
ctl_import_unload(struct mcpctl *m, const char *id, char **ret_error)
{
	struct jsonrpc_msg jm;
	json_t *msg;
	int r;

	*ret_error = NULL;
	if ((r = ctl_import_send(m, "mcpd/unload",
		 json_pack("{s:s}", "target", id), &msg)) != 0)
		return r;
	jsonrpc_classify(msg, &jm, NULL);
	if (jm.type == JSONRPC_ERROR)
		*ret_error = ctl_import_error_of(&jm);
	json_decref(msg);
	return 0;
}

/*
 * Replaces the server of e's name, which an import of this file loaded
 * from another target: unloads it, then loads e.
 */
static int
ctl_import_replace(struct mcpctl *m, json_t *e, const json_t *row)
{
	json_t *params = json_object_get(e, "params"), *msg;
	const char *endpoint = json_string_value(json_object_get(row,
	    "endpoint"));
	char *error = NULL, *text;
	int r;

	if ((r = ctl_import_unload(m,
		 json_string_value(json_object_get(row, "id")), &error)) != 0)
		return r;
	if (error != NULL) {
		if (asprintf(&text,
			"cannot unload the server it replaces (%s): %s",
			endpoint, error) < 0)
			text = NULL;
		json_object_del(e, "params");
		ctl_import_fail(e, text != NULL ? text : error);
		free(text);
		free(error);
		return 0;
	}
	if ((r = ctl_import_send(m, "mcpd/load", json_incref(params), &msg)) !=
	    0)
		return r;
	ctl_import_outcome(e, msg, true);
	json_decref(msg);
	if (ctl_import_is(e, "failed") &&
	    asprintf(&text, "%s (the server it replaces, %s, was unloaded)",
		json_string_value(json_object_get(e, "error")),
		endpoint) >= 0) {
		json_object_set_new(e, "error", json_string(text));
		free(text);
	}
	return 0;
}

/* Loads one entry; 0, or the exit status when the connection broke. */
static int
ctl_import_one(struct mcpctl *m, const struct ctl_import *im, json_t *e)
{
	json_t *params = json_object_get(e, "params"), *msg;
	const json_t *row = ctl_import_server(im,
	    json_string_value(json_object_get(e, "name")));
	struct jsonrpc_msg jm;
	int r;

	ctl_load_progress(m, params, ctl_import_hinted);
	if ((r = ctl_import_send(m, "mcpd/load", json_incref(params), &msg)) !=
	    0)
		return r;
	jsonrpc_classify(msg, &jm, NULL);
	/* Its name runs another target: a new command, image or URL. */
	if (jm.type == JSONRPC_ERROR && row != NULL &&
	    jsonrpc_error_get_kind(jm.error) == ERRORS_CONFLICT) {
		json_decref(msg);
		if (ctl_import_is_ours(im, row))
			return ctl_import_replace(m, e, row);
		json_object_del(e, "params");
		ctl_import_fail_taken(im, e, row);
		return 0;
	}
	ctl_import_outcome(e, msg, false);
	json_decref(msg);
	return 0;
}

/* Unloads a server that the file no longer has. */
static int
ctl_import_prune_one(struct mcpctl *m, json_t *e)
{
	char *error = NULL;
	int r;

	if ((r = ctl_import_unload(m,
		 json_string_value(json_object_get(e, "id")), &error)) != 0)
		return r;
	if (error != NULL)
		ctl_import_fail(e, error);
	else
		json_object_set_new(e, "status", json_string("unloaded"));
	free(error);
	return 0;
}

/* The stderr lines of a failed load, under its line. */
static void
ctl_import_put_stderr(const json_t *e)
{
	const json_t *line;
	size_t i;

	json_array_foreach(json_object_get(e, "stderr"), i, line) {
		fputs("  stderr: ", stdout);
		ctl_import_put(stdout, json_string_value(line));
		putchar('\n');
	}
}

static const char *const ctl_import_status_names[CTL_IMPORT_NSTATUS] = {
	"loaded", "reconfigured", "replaced", "unchanged", "unloaded",
	"skipped", "failed"
};

/* Counts e under its status. */
static void
ctl_import_count(struct ctl_import *im, const json_t *e)
{
	for (size_t k = 0; k < CTL_IMPORT_NSTATUS; k++)
		if (ctl_import_is(e, ctl_import_status_names[k]))
			im->counts[k]++;
}

int
ctl_import_run(struct mcpctl *m, struct ctl_import *im)
{
	int r;
	size_t i;
	json_t *e;

	if ((r = ctl_import_ask(m, im, false)) != 0)
		return r;
	/* Decided on what mcpd had before: the loads only add the file's. */
	if (im->is_prune)
		ctl_import_plan_prune(im);
	json_array_foreach(im->plan, i, e) {
		if (ctl_import_is(e, "load"))
			ctl_import_check_podman(im, e);
		if (ctl_import_is(e, "load"))
			r = ctl_import_one(m, im, e);
		else if (ctl_import_is(e, "unload"))
			r = ctl_import_prune_one(m, e);
		if (r != 0)
			break;
		json_object_del(e, "params");
		json_object_del(e, "endpoint");
		ctl_import_count(im, e);
		if (!m->is_json) {
			ctl_import_put_entry(e, false);
			ctl_import_put_stderr(e);
			fflush(stdout);
		}
	}
	if (r != 0)
		return r; /* reported so far; the rest not */
	if (m->is_json) {
		e = json_pack("{s:O}", "entries", im->plan);
		print_json(e);
		json_decref(e);
	} else
		printf(
		    "%zu loaded, %zu reconfigured, %zu replaced, %zu unchanged, %zu unloaded, %zu skipped, %zu failed\n",
		    im->counts[CTL_IMPORT_LOADED],
		    im->counts[CTL_IMPORT_RECONFIGURED],
		    im->counts[CTL_IMPORT_REPLACED],
		    im->counts[CTL_IMPORT_UNCHANGED],
		    im->counts[CTL_IMPORT_UNLOADED],
		    im->counts[CTL_IMPORT_SKIPPED],
		    im->counts[CTL_IMPORT_FAILED]);
	return im->counts[CTL_IMPORT_FAILED] > 0 ? MCPCTL_EXIT_ERROR :
						   MCPCTL_EXIT_OK;
}
