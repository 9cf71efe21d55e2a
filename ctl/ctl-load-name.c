/* SPDX-License-Identifier: ISC */
/* mcpctl load NAME: a catalog or registry name, resolved, shown, loaded. */
#define _GNU_SOURCE 1 /* asprintf */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "mcpctl.h"
#include "resolve.h"

/* Whether a program is on mcpctl's PATH (the daemon's is mostly the same). */
static bool
ctl_load_has_program(const char *name)
{
	const char *path = getenv("PATH");
	char *dirs, *dir, *save = NULL, *full;
	bool found = false;

	dirs = strdup(path != NULL ? path : "/usr/bin:/bin");
	for (dir = dirs != NULL ? strtok_r(dirs, ":", &save) : NULL;
	     dir != NULL && !found; dir = strtok_r(NULL, ":", &save)) {
		struct stat st;

		if (asprintf(&full, "%s/%s", dir, name) < 0)
			break;
		found = stat(full, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(full, X_OK) == 0;
		free(full);
	}
	free(dirs);
	return found;
}

/* ---- the record ---- */

struct ctl_load_record {
	json_t *record; /* a registry record, or a catalog definition */
	bool is_docker;
	char *origin; /* kept in the saved row: where the target came from */
	char *from;   /* said before the plan */
};

static void
ctl_load_record_clear(struct ctl_load_record *r)
{
	json_decref(r->record);
	free(r->origin);
	free(r->from);
}

static int
ctl_load_docker_record(struct mcpctl *m, const char *name, const char *catalog,
    struct ctl_load_record *rec)
{
	json_t *params = json_pack("{s:s}", "name", name), *result;
	const char *ref, *image;
	int r;

	if ((catalog = ctl_docker_catalog_ref(catalog)) != NULL)
		json_object_set_new(params, "catalog", json_string(catalog));
	if ((r = mcpctl_request(m, "mcpd/docker-catalog", params, &result)) !=
	    0)
		return r;
	ref = json_string_value(json_object_get(result, "catalog"));
	image = json_string_value(json_object_get(result, "image"));
	rec->record =
	    json_incref(json_array_get(json_object_get(result, "servers"), 0));
	rec->is_docker = true;
	if (asprintf(&rec->origin, "docker-catalog:%s@%s#%s", ref, image,
		name) < 0 ||
	    asprintf(&rec->from,
		"%s: definition of the Docker MCP catalog %s (image %.19s)",
		name, ref, image != NULL ? image : "?") < 0)
		rec->origin = rec->from = NULL;
	json_decref(result);
	return rec->record != NULL ? 0 : MCPCTL_EXIT_ERROR;
}

static int
ctl_load_registry_record(struct mcpctl *m, const char *word, const char *source,
    struct ctl_load_record *rec)
{
	const char *at = strrchr(word, '@'), *version = NULL;
	json_t *params, *result = NULL, *error = NULL, *record;
	char *name = at != NULL ? strndup(word, (size_t)(at - word)) :
				  strdup(word);
	int r;

	if (at != NULL)
		version = at + 1;
	params = json_pack("{s:s, s:s, s:s}", "name", name, "version",
	    version != NULL ? version : "latest", "source", source);
	r = mcpctl_request_error(m, "mcpd/registry-info", params, &result,
	    &error);
	if (r != 0 && error != NULL &&
	    json_integer_value(json_object_get(error, "code")) ==
		JSONRPC_METHOD_NOT_FOUND) {
		print_err(
		    "load: %s is a registry name, but this mcpd has no registry client (it does not know mcpd/registry-info); use --source docker for a Docker catalog name, or load the command, image or URL itself",
		    name);
		r = MCPCTL_EXIT_ERROR;
	} else if (r != 0 && error != NULL)
		print_error(error, m->is_json);
	json_decref(error);
	if (r != 0) {
		free(name);
		return r;
	}
	/* The record itself, or {record: ...}. */
	record = json_object_get(result, "server") != NULL ?
	    result :
	    json_object_get(result, "record");
	rec->record = json_incref(record);
	version = json_string_value(json_object_get(json_object_get(record,
							"server"),
	    "version"));
	if (asprintf(&rec->origin, "registry:%s:%s@%s", source, name,
		version != NULL ? version : "?") < 0 ||
	    asprintf(&rec->from, "%s@%s: record of the %s", name,
		version != NULL ? version : "?",
		strcmp(source, "local") == 0 ? "catalog bundled with mcpd" :
					       "official MCP Registry") < 0)
		rec->origin = rec->from = NULL;
	json_decref(result);
	free(name);
	if (rec->record == NULL) {
		print_err("load: mcpd/registry-info answered without a record");
		return MCPCTL_EXIT_ERROR;
	}
	return 0;
}

static int
ctl_load_file_record(const char *path, struct ctl_load_record *rec)
{
	char *cause = NULL;
	char *real;

	if (jsonc_load(path, &rec->record, &cause) < 0) {
		print_err("load: --server-json %s", cause != NULL ? cause : "");
		free(cause);
		return MCPCTL_EXIT_USAGE;
	}
	real = strcmp(path, "-") != 0 ? realpath(path, NULL) : NULL;
	if (asprintf(&rec->origin, "server-json:%s",
		real != NULL ? real : path) < 0 ||
	    asprintf(&rec->from, "%s: record of the file %s",
		json_string_value(json_object_get(json_is_object(json_object_get(rec->record, "server")) ? json_object_get(rec->record, "server") : rec->record, "name")) ?:
		    "?",
		path) < 0)
		rec->origin = rec->from = NULL;
	free(real);
	return 0;
}

/* ---- the plan ---- */

/* A value as it may be shown: the user's literal values are not. */
static const char *
ctl_load_shown(const struct resolve_plan *p, const char *name,
    const char *value)
{
	json_t *g;
	size_t i;

	json_array_foreach(p->given, i, g)
		if (strcmp(json_string_value(g), name) == 0)
			return strstr(value, "$(") != NULL ?
			    value :
			    "(given, not shown)";
	return value;
}

/* A word list as a shell would read it back (display only). */
static void
ctl_load_print_words(FILE *f, const json_t *words)
{
	const json_t *w;
	size_t i;

	json_array_foreach(words, i, w) {
		const char *s = json_string_value(w);

		if (i > 0)
			fputc(' ', f);
		if (*s != '\0' &&
		    strpbrk(s, " \t\n'\"\\$`*?;&|<>(){}[]#~") == NULL) {
			fputs(s, f);
			continue;
		}
		fputc('\'', f);
		for (; *s != '\0'; s++)
			if (*s == '\'')
				fputs("'\\''", f);
			else
				fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
		fputc('\'', f);
	}
}

static void
ctl_load_print_pairs(FILE *f, const struct resolve_plan *p, const char *key,
    const char *label)
{
	const char *k;
	json_t *v;

	json_object_foreach(json_object_get(p->params, key), k, v)
		fprintf(f, "  %-10s %s=%s\n", label, k,
		    ctl_load_shown(p, k, json_string_value(v)));
}

static void
ctl_load_print_plan(FILE *f, const struct ctl_load_record *rec,
    const struct resolve_plan *p)
{
	const json_t *params = p->params, *v;
	const char *target = json_string_value(json_object_get(params,
	    "target"));
	size_t i;

	fprintf(f, "%s\n", rec->from != NULL ? rec->from : "?");
	fprintf(f, "will run, as server %s:\n",
	    json_string_value(json_object_get(params, "name")) ?:
		"(named from the command)");
	if (json_object_get(params, "command") != NULL) {
		fprintf(f, "  %-10s ", "command");
		ctl_load_print_words(f, json_object_get(params, "command"));
		fprintf(f, "\n  %-10s %s\n", "in",
		    json_string_value(json_object_get(params, "cwd")));
	} else if (strcmp(p->kind, "remote") == 0) {
		fprintf(f, "  %-10s %s\n  %-10s %s\n", "url", target,
		    "transport",
		    json_string_value(json_object_get(params, "transport")));
	} else {
		fprintf(f, "  %-10s %s\n", "image", target);
		if (json_array_size(json_object_get(params, "args")) > 0) {
			fprintf(f, "  %-10s ", "arguments");
			ctl_load_print_words(f,
			    json_object_get(params, "args"));
			fputc('\n', f);
		}
	}
	ctl_load_print_pairs(f, p, "env", "env");
	ctl_load_print_pairs(f, p, "headers", "header");
	json_array_foreach(json_object_get(params, "volumes"), i, v)
		fprintf(f, "  %-10s %s\n", "volume", json_string_value(v));
	if (json_object_get(params, "network") != NULL)
		fprintf(f, "  %-10s %s\n", "network",
		    json_string_value(json_object_get(params, "network")));
	json_array_foreach(p->notes, i, v)
		fprintf(f, "note: %s\n", json_string_value(v));
}

/* The required inputs the user did not give: said, exit 2. */
static int
ctl_load_missing(const struct ctl_load_record *rec,
    const struct resolve_plan *p)
{
	const json_t *m;
	bool has_arg = false;
	size_t i;

	fflush(stdout);
	fprintf(stderr,
	    "mcpctl: load: %s needs values mcpctl does not guess:\n",
	    json_string_value(json_object_get(p->params, "name")) ?:
		(rec->from != NULL ? rec->from : "it"));
	json_array_foreach(p->missing, i, m) {
		const char *kind = json_string_value(json_object_get(m,
		    "kind"));
		const char *desc = json_string_value(json_object_get(m,
		    "description"));

		has_arg |= strcmp(kind, "argument") == 0;
		fprintf(stderr, "  %s %s%s%s%s\n", kind,
		    json_string_value(json_object_get(m, "name")),
		    json_is_true(json_object_get(m, "is_secret")) ?
			" (secret)" :
			"",
		    desc != NULL ? ": " : "", desc != NULL ? desc : "");
	}
	fputs(
	    "give an env with --env NAME=VALUE, or --secret-env NAME=SECRET for a secret 'mcpctl secret set' stored; a header with --header NAME=VALUE\n",
	    stderr);
	if (has_arg)
		fputs(
		    "mcpctl load cannot set a package's arguments: load the command itself (mcpctl load -- CMD ARGS...)\n",
		    stderr);
	return MCPCTL_EXIT_USAGE;
}

/* The user's options that fit the plan's kind go in; the others are refused. */
static int
ctl_load_merge(json_t *final, const json_t *user, const char *kind)
{
	static const char *const plain[] = { "name", "timeout_ms", "persist",
		NULL };
	bool is_remote = strcmp(kind, "remote") == 0;
	bool is_image = strcmp(kind, "image") == 0 || strcmp(kind, "oci") == 0;
	const json_t *v;
	json_t *volumes;
	size_t i;

	if (!is_remote &&
	    (json_object_get(user, "headers") != NULL ||
		json_object_get(user, "transport") != NULL ||
		json_object_get(user, "allow_local") != NULL))
		return mcpctl_usage(&ctl_load_cmd,
		    "--header, --transport and --allow-local go with a remote; this resolves to %s",
		    is_image ? "an image" : "a command");
	if (is_remote && json_object_get(user, "env") != NULL)
		return mcpctl_usage(&ctl_load_cmd,
		    "--env goes with commands and images; this resolves to a remote (give --header)");
	if (!is_image &&
	    (json_object_get(user, "volumes") != NULL ||
		json_object_get(user, "network") != NULL))
		return mcpctl_usage(&ctl_load_cmd,
		    "--volume and --network go with an image; this resolves to %s",
		    is_remote ? "a remote" : "a command");
	for (i = 0; plain[i] != NULL; i++)
		if ((v = json_object_get(user, plain[i])) != NULL)
			json_object_set(final, plain[i],
			    (json_t *)(uintptr_t)v);
	if ((v = json_object_get(user, "transport")) != NULL)
		json_object_set(final, "transport", (json_t *)(uintptr_t)v);
	if ((v = json_object_get(user, "allow_local")) != NULL)
		json_object_set(final, "allow_local", (json_t *)(uintptr_t)v);
	if ((v = json_object_get(user, "network")) != NULL)
		json_object_set(final, "network", (json_t *)(uintptr_t)v);
	if (json_object_get(user, "volumes") != NULL) {
		if ((volumes = json_object_get(final, "volumes")) == NULL) {
			volumes = json_array();
			json_object_set_new(final, "volumes", volumes);
		}
		json_array_extend(volumes, json_object_get(user, "volumes"));
	}
	return 0;
}

/* The plan as --json --dry-run prints it: the user's values masked. */
static json_t *
ctl_load_plan_json(const struct ctl_load_record *rec,
    const struct resolve_plan *p)
{
	json_t *params = json_deep_copy(p->params), *g;
	const char *keys[] = { "env", "headers" };
	size_t i;

	for (size_t k = 0; k < 2; k++) {
		json_t *obj = json_object_get(params, keys[k]), *v;

		json_array_foreach(p->given, i, g)
			if ((v = json_object_get(obj, json_string_value(g))) !=
			    NULL)
				json_object_set_new(obj, json_string_value(g),
				    json_string(ctl_load_shown(p,
					json_string_value(g),
					json_string_value(v))));
	}
	return json_pack("{s:s?, s:s, s:o, s:O}", "origin", rec->origin, "kind",
	    p->kind, "params", params, "notes", p->notes);
}

int
ctl_load_name(struct mcpctl *m, json_t *user, const char *name,
    const struct ctl_load_name *opt)
{
	struct resolve_input in = { json_object_get(user, "env"),
		json_object_get(user, "headers"), opt->prefer_remote,
		ctl_load_has_program };
	struct ctl_load_record rec = { 0 };
	struct resolve_plan plan = { 0 };
	const char *source = opt->source;
	char *cause = NULL, *cwd;
	json_t *final;
	int r;

	if (opt->file != NULL)
		r = ctl_load_file_record(opt->file, &rec);
	else if (source != NULL && strcmp(source, "docker") == 0)
		r = ctl_load_docker_record(m, name, opt->catalog, &rec);
	else
		r = ctl_load_registry_record(m, name,
		    source != NULL ? source : "official", &rec);
	if (r != 0)
		goto out;
	r = rec.is_docker ? resolve_docker(rec.record, &in, &plan, &cause) :
			    resolve_registry(rec.record, &in, &plan, &cause);
	if (r < 0) {
		print_err("load: %s", cause != NULL ? cause : "cannot resolve");
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	final = plan.params; /* what goes to mcpd, and what is shown */
	if ((r = ctl_load_merge(final, user, plan.kind)) != 0)
		goto out;
	if (json_object_get(final, "command") != NULL) {
		if ((cwd = getcwd(NULL, 0)) == NULL) {
			print_err("cannot name the current directory: %s",
			    strerror(errno));
			r = MCPCTL_EXIT_ERROR;
			goto out;
		}
		json_object_set_new(final, "cwd", json_string(cwd));
		free(cwd);
	}
	if (json_array_size(plan.missing) > 0) {
		r = ctl_load_missing(&rec, &plan);
		goto out;
	}
	if (m->is_json && opt->is_dry_run) {
		json_t *j = ctl_load_plan_json(&rec, &plan);

		print_json(j);
		json_decref(j);
		goto out;
	}
	/* What it will run, before it runs it (stderr when --json). */
	ctl_load_print_plan(m->is_json ? stderr : stdout, &rec, &plan);
	if (opt->is_dry_run) {
		printf("dry run: nothing was loaded\n");
		goto out;
	}
	fflush(stdout);
	if (rec.origin != NULL)
		json_object_set_new(final, "origin", json_string(rec.origin));
	ctl_load_progress(m, final, NULL);
	r = mcpctl_run(m, "mcpd/load", json_incref(final), ctl_load_answer);
out:
	free(cause);
	resolve_plan_clear(&plan);
	ctl_load_record_clear(&rec);
	json_decref(user);
	return r;
}
