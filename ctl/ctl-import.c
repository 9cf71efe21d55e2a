/* SPDX-License-Identifier: ISC */
/* mcpctl import: load the MCP servers of another client's config file. */
#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl-import.h"
#include "import.h"
#include "mcpctl.h"
#include "names.h"
#include "vars.h"

static const struct option ctl_import_options[] = {
	{ "dry-run", no_argument, NULL, 'n' },
	{ "prune", no_argument, NULL, 'p' },
	{ "no-persist", no_argument, NULL, 'P' },
	{ "allow-local", no_argument, NULL, 'L' },
	{ "timeout", required_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void
ctl_import_put(FILE *f, const char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f);
}

/* Whether the directory dir is named ".vscode". */
static bool
ctl_import_is_vscode(const char *dir)
{
	const char *slash = strrchr(dir, '/');

	return slash != NULL && strcmp(slash + 1, ".vscode") == 0;
}

int
ctl_import_dir(struct ctl_import *im)
{
	char *copy = NULL, *dir = NULL, *slash;

	if (strcmp(im->path, "-") == 0) {
		im->dir = getcwd(NULL, 0);
	} else if ((copy = strdup(im->path)) != NULL &&
	    (dir = realpath(dirname(copy), NULL)) != NULL) {
		free(copy);
		copy = strdup(im->path);
		if (copy != NULL &&
		    asprintf(&im->origin, "%s/%s",
			strcmp(dir, "/") == 0 ? "" : dir, basename(copy)) < 0)
			im->origin = NULL;
		if (ctl_import_is_vscode(dir)) {
			slash = strrchr(dir, '/');
			im->workspace = slash == dir ?
			    strdup("/") :
			    strndup(dir, slash - dir);
			im->dir = im->workspace != NULL ?
			    strdup(im->workspace) :
			    NULL;
		} else
			im->dir = strdup(dir);
	}
	free(copy);
	free(dir);
	if (im->dir != NULL &&
	    (im->origin != NULL || strcmp(im->path, "-") == 0))
		return 0;
	print_err("import: cannot name the directory of %s: %s",
	    strcmp(im->path, "-") == 0 ? "the current directory" : im->path,
	    strerror(errno));
	return MCPCTL_EXIT_ERROR;
}

/* A server name made of key: other characters become one '-'. */
static char *
ctl_import_sanitize(const char *key)
{
	char out[NAMES_MAX + 1];
	size_t n = 0;

	for (const char *p = key; *p != '\0' && n < NAMES_MAX; p++) {
		unsigned char c = *p;

		if (isascii(c) && (isalnum(c) || c == '_' || c == '-'))
			out[n++] = (char)c;
		else if ((c & 0xc0) != 0x80 && n > 0 && out[n - 1] != '-')
			out[n++] = '-';
		/* One '-' for a whole UTF-8 sequence. */
	}
	while (n > 0 && out[n - 1] == '-')
		n--;
	out[n] = '\0';
	n = 0;
	while (out[n] != '\0' && !isalnum((unsigned char)out[n]))
		n++;
	return out[n] != '\0' ? strdup(out + n) : NULL;
}

/* Whether an entry of plan other than self is already called name. */
static bool
ctl_import_is_taken(const json_t *plan, const json_t *self, const char *name)
{
	const char *other;
	size_t i;
	json_t *e;

	json_array_foreach(plan, i, e) {
		other = json_string_value(json_object_get(e, "name"));
		if (e != self && other != NULL && strcmp(other, name) == 0)
			return true;
	}
	return false;
}

/*
 * Names an entry whose key is not a server name: the key sanitized, with
 * "-2", "-3"... when another entry has that name. Entries with valid keys
 * were named first, so that they keep theirs.
 */
static void
ctl_import_rename(json_t *plan, json_t *e)
{
	const char *key = json_string_value(json_object_get(e, "name"));
	char *base = ctl_import_sanitize(key), *name = NULL;

	json_object_set_new(e, "renamed_from", json_string(key));
	if (base == NULL) {
		json_object_set_new(e, "status", json_string("failed"));
		json_object_set_new(e, "error",
		    json_string(
			"no server name can be made of this name; rename the entry in the file"));
		return;
	}
	name = strdup(base);
	for (int k = 2; name != NULL && ctl_import_is_taken(plan, e, name);
	     k++) {
		free(name);
		if (asprintf(&name, "%.*s-%d", NAMES_MAX - 12, base, k) < 0)
			name = NULL;
	}
	json_object_set_new(e, "name", json_string(name != NULL ? name : base));
	free(name);
	free(base);
}

/* Sets key to a copy of v unless v is an empty array or object. */
static void
ctl_import_copy(json_t *params, const char *key, const json_t *v)
{
	if (v == NULL || (json_is_array(v) && json_array_size(v) == 0) ||
	    (json_is_object(v) && json_object_size(v) == 0))
		return;
	json_object_set_new(params, key, json_deep_copy(v));
}

/* An entry's cwd, made absolute against the directory it runs in. */
static json_t *
ctl_import_cwd(const struct ctl_import *im, const json_t *entry)
{
	const char *cwd = json_string_value(json_object_get(entry, "cwd"));

	if (cwd == NULL || cwd[0] == '\0')
		return json_string(im->dir);
	if (cwd[0] == '/')
		return json_string(cwd);
	return json_sprintf("%s/%s", im->dir, cwd);
}

/* The mcpd/load params of a process, remote or container entry. */
static json_t *
ctl_import_params(const struct ctl_import *im, const json_t *entry,
    const char *kind, const char *name)
{
	json_t *p = json_object();
	const char *transport;

	if (strcmp(kind, "process") == 0) {
		ctl_import_copy(p, "command",
		    json_object_get(entry, "command"));
		ctl_import_copy(p, "env", json_object_get(entry, "env"));
		json_object_set_new(p, "cwd", ctl_import_cwd(im, entry));
	} else if (strcmp(kind, "remote") == 0) {
		transport = json_string_value(json_object_get(entry,
		    "transport"));
		json_object_set(p, "target", json_object_get(entry, "url"));
		ctl_import_copy(p, "headers",
		    json_object_get(entry, "headers"));
		json_object_set_new(p, "transport",
		    json_string(transport != NULL &&
				strcmp(transport, "sse") == 0 ?
			    "sse" :
			    "streamable-http"));
		if (im->is_allow_local)
			json_object_set_new(p, "allow_local", json_true());
	} else {
		json_object_set(p, "target", json_object_get(entry, "image"));
		ctl_import_copy(p, "args", json_object_get(entry, "args"));
		ctl_import_copy(p, "env", json_object_get(entry, "env"));
		ctl_import_copy(p, "volumes",
		    json_object_get(entry, "volumes"));
		ctl_import_copy(p, "network",
		    json_object_get(entry, "network"));
	}
	json_object_set_new(p, "name", json_string(name));
	if (im->origin != NULL)
		json_object_set_new(p, "origin", json_string(im->origin));
	if (im->is_no_persist)
		json_object_set_new(p, "persist", json_false());
	if (im->timeout_ms > 0)
		json_object_set_new(p, "timeout_ms",
		    json_integer(im->timeout_ms));
	return p;
}

bool
ctl_import_is(const json_t *e, const char *status)
{
	return strcmp(json_string_value(json_object_get(e, "status")),
		   status) == 0;
}

void
ctl_import_fail(json_t *e, const char *error)
{
	json_object_set_new(e, "status", json_string("failed"));
	json_object_set_new(e, "error", json_string(error));
}

void
ctl_import_plan(struct ctl_import *im, const json_t *entries)
{
	const char *kind;
	json_t *entry, *e, *reason, *secrets;
	size_t i;

	im->plan = json_array();
	json_array_foreach(entries, i, entry) {
		kind = json_string_value(json_object_get(entry, "kind"));
		reason = json_object_get(entry, "reason");
		secrets = json_object_get(entry, "secrets");
		e = json_pack("{s:O, s:s}", "name",
		    json_object_get(entry, "name"), "kind", kind);
		if (strcmp(kind, "skipped") == 0)
			json_object_set_new(e, "status", json_string(kind));
		else if (strcmp(kind, "invalid") == 0)
			json_object_set_new(e, "status", json_string("failed"));
		else
			json_object_set_new(e, "status", json_string("load"));
		if (reason != NULL)
			json_object_set(e, kind[0] == 's' ? "reason" : "error",
			    reason);
		if (secrets != NULL)
			json_object_set(e, "secrets", secrets);
		if (json_object_get(entry, "runtime") != NULL)
			json_object_set(e, "runtime",
			    json_object_get(entry, "runtime"));
		json_array_append_new(im->plan, e);
	}
	/* Valid names first, so that a renamed entry cannot take one. */
	json_array_foreach(im->plan, i, e)
		if (ctl_import_is(e, "load") &&
		    !names_valid(json_string_value(json_object_get(e, "name"))))
			ctl_import_rename(im->plan, e);
	json_array_foreach(im->plan, i, e)
		if (ctl_import_is(e, "load"))
			json_object_set_new(e, "params",
			    ctl_import_params(im, json_array_get(entries, i),
				json_string_value(json_object_get(e, "kind")),
				json_string_value(json_object_get(e, "name"))));
}

/* Collects the references of a value, in order, for ctl_import_mask. */
static int
ctl_import_ref(void *ctx, const char *ns, const char *name)
{
	json_t *refs = ctx;

	json_array_append_new(refs, json_sprintf("$(%s.%s)", ns, name));
	return 0;
}

/* A value with each run of text that is not a $(...) reference as "***". */
static json_t *
ctl_import_mask(const char *value)
{
	json_t *refs = json_array(), *masked;
	char *out = NULL;
	const char *at = value, *ref, *found;
	size_t i, len;
	json_t *v;
	FILE *f = open_memstream(&out, &len);

	if (f == NULL || refs == NULL ||
	    vars_scan(value, ctl_import_ref, refs) < 0) {
		if (f != NULL)
			fclose(f);
		free(out);
		json_decref(refs);
		return json_string("***");
	}
	json_array_foreach(refs, i, v) {
		ref = json_string_value(v);
		if ((found = strstr(at, ref)) == NULL)
			break;
		fputs(found > at ? "***" : "", f);
		fputs(ref, f);
		at = found + strlen(ref);
	}
	fputs(*at != '\0' ? "***" : "", f);
	fclose(f);
	masked = json_string(out != NULL ? out : "***");
	free(out);
	json_decref(refs);
	return masked;
}

/* params for showing: env and header values masked. */
static json_t *
ctl_import_masked(const json_t *params)
{
	static const char *const keys[] = { "env", "headers" };
	json_t *copy = json_deep_copy(params), *map, *v;
	const char *k;

	for (size_t i = 0; i < 2; i++) {
		map = json_object_get(copy, keys[i]);
		json_object_foreach(map, k, v)
			json_object_set_new(map, k,
			    ctl_import_mask(json_string_value(v)));
	}
	return copy;
}

/* The note of a renamed entry, under its line. */
static void
ctl_import_put_renamed(const json_t *e)
{
	const char *from = json_string_value(json_object_get(e,
	    "renamed_from"));
	const char *name = json_string_value(json_object_get(e, "name"));

	if (from == NULL)
		return;
	fputs("  \"", stdout);
	ctl_import_put(stdout, from);
	printf("\" is not a server name (letters, digits, '_' and '-'): ");
	if (strcmp(from, name) != 0)
		printf("named %s\n", name);
	else
		printf("not imported\n");
}

/*
 * How to set the secrets of an entry that may still need them: one to be
 * loaded, or one that failed (mcpd names only the first that is missing).
 */
static void
ctl_import_put_secrets(const json_t *e)
{
	const json_t *v;
	size_t i;

	if (!ctl_import_is(e, "load") && !ctl_import_is(e, "failed"))
		return;
	json_array_foreach(json_object_get(e, "secrets"), i, v)
		printf("  needs secret %s: mcpctl secret set %s\n",
		    json_string_value(v), json_string_value(v));
}

/* The line of an entry that --dry-run would load. */
static void
ctl_import_put_planned(const json_t *e)
{
	const char *name = json_string_value(json_object_get(e, "name"));
	const char *kind = json_string_value(json_object_get(e, "kind"));
	const char *action = json_string_value(json_object_get(e, "action"));
	char *text = json_dumps(json_object_get(e, "params"), JSON_COMPACT);

	if (action != NULL && strcmp(action, "load-again") == 0)
		printf("would load again %s (%s; mcpd compares the values)",
		    name, kind);
	else if (action != NULL && strcmp(action, "replace") == 0) {
		printf("would replace %s (%s; it runs ", name, kind);
		ctl_import_put(stdout,
		    json_string_value(json_object_get(e, "was")));
		printf(" now)");
	} else
		printf("would load %s (%s)", name, kind);
	printf(": mcpd/load %s\n", text);
	free(text);
	if (json_object_get(e, "runtime") != NULL && action == NULL)
		printf(
		    "  runs with podman: mcpd must run containers with podman (mcpd --docker podman)\n");
}

/* The line of an entry that was loaded, or is as it was. */
static void
ctl_import_put_loaded(const json_t *e, const char *status)
{
	const char *name = json_string_value(json_object_get(e, "name"));
	const char *id = json_string_value(json_object_get(e, "id"));
	json_int_t tools = json_integer_value(json_object_get(e, "tools"));

	if (strcmp(status, "unchanged") == 0)
		printf("unchanged %s (id %s)\n", name, id);
	else
		printf("%s %s (id %s, %lld tool%s)\n", status, name, id,
		    (long long)tools, tools == 1 ? "" : "s");
}

void
ctl_import_put_entry(const json_t *e, bool is_dry_run)
{
	const char *name = json_string_value(json_object_get(e, "name"));
	const char *status = json_string_value(json_object_get(e, "status"));
	bool is_skipped = ctl_import_is(e, "skipped");

	if (strcmp(status, "load") == 0)
		ctl_import_put_planned(e);
	else if (strcmp(status, "unload") == 0)
		printf("would unload %s (--prune)\n", name);
	else if (strcmp(status, "unloaded") == 0)
		printf("unloaded %s (--prune)\n", name);
	else if (!is_skipped && strcmp(status, "failed") != 0)
		ctl_import_put_loaded(e, status);
	else {
		if (is_dry_run)
			printf("%s %s: ",
			    is_skipped ? "would skip" : "will fail", name);
		else
			printf("%s %s: ", is_skipped ? "skipped" : "failed",
			    name);
		ctl_import_put(stdout,
		    json_string_value(json_object_get(e,
			is_skipped ? "reason" : "error")));
		putchar('\n');
	}
	ctl_import_put_renamed(e);
	ctl_import_put_secrets(e);
}

/*
 * The plan of --dry-run: what would be sent, values masked, compared with
 * what mcpd has when one answers.
 */
static int
ctl_import_dry_run(struct mcpctl *m, struct ctl_import *im)
{
	size_t i, n[6] = { 0 };
	const char *action;
	json_t *e, *params;
	bool is_compared;
	int r;

	if ((r = ctl_import_ask(m, im, true)) > 1)
		return r;
	is_compared = r == 0;
	ctl_import_compare(im);
	json_array_foreach(im->plan, i, e) {
		if ((params = json_object_get(e, "params")) != NULL)
			json_object_set_new(e, "params",
			    ctl_import_masked(params));
		action = json_string_value(json_object_get(e, "action"));
		n[0] += ctl_import_is(e, "load") &&
		    (action == NULL || strcmp(action, "load") == 0);
		n[1] += ctl_import_is(e, "load") && action != NULL &&
		    strcmp(action, "load-again") == 0;
		n[2] += ctl_import_is(e, "load") && action != NULL &&
		    strcmp(action, "replace") == 0;
		n[3] += ctl_import_is(e, "unload");
		n[4] += ctl_import_is(e, "skipped");
		n[5] += ctl_import_is(e, "failed");
		if (!m->is_json)
			ctl_import_put_entry(e, true);
		if (ctl_import_is(e, "unload"))
			json_object_set_new(e, "action", json_string("unload"));
		if (ctl_import_is(e, "load") || ctl_import_is(e, "unload"))
			json_object_set_new(e, "status",
			    json_string("planned"));
		json_object_del(e, "endpoint");
	}
	if (m->is_json) {
		e = json_pack("{s:b, s:b, s:O}", "dry_run", 1, "compared",
		    is_compared, "entries", im->plan);
		print_json(e);
		json_decref(e);
	} else
		printf(
		    "dry run, nothing changed: %zu to load, %zu to load again, %zu to replace, %zu to unload, %zu skipped, %zu will fail\n",
		    n[0], n[1], n[2], n[3], n[4], n[5]);
	if (!is_compared && !m->is_json)
		fprintf(stderr,
		    "no mcpd answers at %s: every entry is planned as a new load%s\n",
		    m->socket_path,
		    im->is_prune ? ", and --prune has nothing to unload" : "");
	return n[5] > 0 ? MCPCTL_EXIT_ERROR : MCPCTL_EXIT_OK;
}

static int
ctl_import_options_parse(struct ctl_import *im, const struct mcpctl_cmd *cmd,
    int argc, char **argv)
{
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":h", ctl_import_options)) !=
	    -1) {
		switch (c) {
		case 'n':
			im->is_dry_run = true;
			break;
		case 'p':
			im->is_prune = true;
			break;
		case 'P':
			im->is_no_persist = true;
			break;
		case 'L':
			im->is_allow_local = true;
			break;
		case 't':
			if ((r = mcpctl_parse_positive(cmd, "--timeout", optarg,
				 "milliseconds", &im->timeout_ms)) != 0)
				return r;
			break;
		case 'h':
			return mcpctl_help(cmd);
		default:
			return mcpctl_bad_option(cmd, c, argv);
		}
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 1, 1,
		 "FILE (a client's config file, or - for standard input)")))
		return r;
	im->path = argv[optind];
	if (im->is_prune && strcmp(im->path, "-") == 0)
		return mcpctl_usage(cmd,
		    "--prune needs a FILE: it unloads the servers an import of that file loaded, and standard input is no file");
	return -1;
}

void
ctl_import_clear(struct ctl_import *im)
{
	free(im->dir);
	free(im->workspace);
	free(im->origin);
	free(im->docker);
	json_decref(im->servers);
	json_decref(im->plan);
}

static int
ctl_import_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	struct ctl_import im = { 0 };
	json_t *root = NULL, *entries = NULL;
	char *cause = NULL;
	int r;

	if ((r = ctl_import_options_parse(&im, cmd, argc, argv)) >= 0)
		return r;
	if (jsonc_load(im.path, &root, &cause) < 0) {
		print_err("import: %s",
		    cause != NULL ? cause : strerror(ENOMEM));
		r = MCPCTL_EXIT_USAGE;
	} else if ((r = ctl_import_dir(&im)) != 0) {
		/* Said why. */
	} else if (import_parse_in(root, im.workspace, &entries, &cause) < 0) {
		print_err("import: %s: %s",
		    strcmp(im.path, "-") == 0 ? "standard input" : im.path,
		    cause != NULL ? cause : strerror(ENOMEM));
		r = MCPCTL_EXIT_USAGE;
	} else {
		ctl_import_plan(&im, entries);
		r = im.is_dry_run ? ctl_import_dry_run(m, &im) :
				    ctl_import_run(m, &im);
	}
	free(cause);
	ctl_import_clear(&im);
	json_decref(entries);
	json_decref(root);
	return r;
}

const struct mcpctl_cmd ctl_import_cmd = {
	.name = "import",
	.synopsis =
	    "[--dry-run] [--prune] [--no-persist] [--allow-local] [--timeout MS] FILE|-",
	.summary =
	    "load, update or prune the MCP servers of a Claude Desktop, Cursor or VS Code config file",
	.help =
	    "  --dry-run          print what would change, with env and header\n"
	    "                     values as \"***\", and change nothing; flag\n"
	    "                     the entries that will fail\n"
	    "  --prune            unload the servers an import of FILE loaded\n"
	    "                     whose entries FILE no longer has (or has\n"
	    "                     disabled)\n"
	    "  --no-persist       do not bring them back after mcpd restarts\n"
	    "  --allow-local      allow plain http to loopback URLs\n"
	    "  --timeout MS       deadline of each start and handshake\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "FILE is a claude_desktop_config.json or any {\"mcpServers\": ...}\n"
	    "file (Cursor's .cursor/mcp.json), a VS Code .vscode/mcp.json\n"
	    "({\"servers\": ...}; comments and trailing commas are fine), or\n"
	    "a VS Code settings.json ({\"mcp\": {\"servers\": ...}}). Each\n"
	    "entry is loaded under its name, made a server name when it is\n"
	    "not one (\"my server\" -> my-server): a command in its \"cwd\",\n"
	    "else in FILE's directory (in the workspace folder, the one that\n"
	    "holds .vscode/, for a file in .vscode/); a URL; a `docker run`\n"
	    "command as a container server (`podman run` too, when mcpd runs\n"
	    "podman). Disabled entries are skipped.\n"
	    "\n"
	    "Importing FILE again updates what it loaded: an entry with new\n"
	    "values is reconfigured, one with a new command, image or URL\n"
	    "replaced (its old server unloaded first), one as it was is\n"
	    "unchanged. A name taken by a server FILE did not load is not\n"
	    "touched.\n"
	    "\n"
	    "VS Code's ${env:NAME} is NAME in mcpctl's environment,\n"
	    "${input:ID} the secret $(secret.ID) (set it with mcpctl secret\n"
	    "set ID; the report says which), ${userHome} $HOME,\n"
	    "${workspaceFolder} the workspace folder; an entry with any other\n"
	    "${...} fails.\n",
	.exec = ctl_import_exec,
};
