/* SPDX-License-Identifier: ISC */
/* mcpctl load: start an MCP server command (or name a URL or image). */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpctl.h"
#include "names.h"
#include "resolve.h"

#define CTL_LOAD_ENV_FILE_MAX (1 << 20) /* bytes of an --env-file */

enum {
	CTL_LOAD_SECRET_ENV = 256,
	CTL_LOAD_ENV_FILE,
	CTL_LOAD_NETWORK,
	CTL_LOAD_SOURCE,
	CTL_LOAD_DRY_RUN,
	CTL_LOAD_REMOTE,
	CTL_LOAD_CATALOG,
	CTL_LOAD_SERVER_JSON,
	CTL_LOAD_OAUTH_CLIENT_ID,
	CTL_LOAD_OAUTH_CLIENT_SECRET,
	CTL_LOAD_OAUTH_ISSUER,
	CTL_LOAD_TRUST_UPDATES,
	CTL_LOAD_ON_DEMAND,
	CTL_LOAD_IDLE_STOP,
};

/* What the name options ask for (load by name). */
static struct ctl_load_name ctl_load_by_name;

static const struct option ctl_load_options[] = {
	{ "name", required_argument, NULL, 'n' },
	{ "env", required_argument, NULL, 'e' },
	{ "secret-env", required_argument, NULL, CTL_LOAD_SECRET_ENV },
	{ "env-file", required_argument, NULL, CTL_LOAD_ENV_FILE },
	{ "volume", required_argument, NULL, 'v' },
	{ "network", required_argument, NULL, CTL_LOAD_NETWORK },
	{ "timeout", required_argument, NULL, 't' },
	{ "no-persist", no_argument, NULL, 'P' },
	{ "trust-updates", no_argument, NULL, CTL_LOAD_TRUST_UPDATES },
	{ "on-demand", no_argument, NULL, CTL_LOAD_ON_DEMAND },
	{ "idle-stop", required_argument, NULL, CTL_LOAD_IDLE_STOP },
	{ "transport", required_argument, NULL, 'T' },
	{ "allow-local", no_argument, NULL, 'L' },
	{ "header", required_argument, NULL, 'H' },
	{ "source", required_argument, NULL, CTL_LOAD_SOURCE },
	{ "dry-run", no_argument, NULL, CTL_LOAD_DRY_RUN },
	{ "remote", no_argument, NULL, CTL_LOAD_REMOTE },
	{ "catalog", required_argument, NULL, CTL_LOAD_CATALOG },
	{ "server-json", required_argument, NULL, CTL_LOAD_SERVER_JSON },
	{ "oauth-client-id", required_argument, NULL,
	    CTL_LOAD_OAUTH_CLIENT_ID },
	{ "oauth-client-secret", required_argument, NULL,
	    CTL_LOAD_OAUTH_CLIENT_SECRET },
	{ "oauth-issuer", required_argument, NULL, CTL_LOAD_OAUTH_ISSUER },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static bool
ctl_load_is_env_name(const char *k, size_t len)
{
	if (len == 0 || !(isalpha((unsigned char)k[0]) || k[0] == '_'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!isascii((unsigned char)k[i]) ||
		    !(isalnum((unsigned char)k[i]) || k[i] == '_'))
			return false;
	return true;
}

/* An HTTP header field name: an RFC 9110 token. */
static bool
ctl_load_is_header_name(const char *k, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isascii((unsigned char)k[i]) ||
		    !(isalnum((unsigned char)k[i]) ||
			strchr("!#$%&'*+-.^_`|~", k[i]) != NULL))
			return false;
	return true;
}

/* Adds KEY=VALUE from option opt to the object params[key]; 0 or 2. */
static int
ctl_load_add_pair(json_t *params, const char *key, const char *opt,
    const char *arg, bool (*is_valid)(const char *, size_t))
{
	const char *eq = strchr(arg, '=');
	json_t *obj = json_object_get(params, key);
	char *k;

	if (eq == NULL)
		return mcpctl_usage(&ctl_load_cmd,
		    "%s needs KEY=VALUE, not '%s'", opt, arg);
	if (!is_valid(arg, eq - arg))
		return mcpctl_usage(&ctl_load_cmd,
		    "%s: '%.*s' is not a valid name", opt, (int)(eq - arg),
		    arg);
	if (obj == NULL) {
		obj = json_object();
		json_object_set_new(params, key, obj);
	}
	k = strndup(arg, eq - arg);
	json_object_set_new(obj, k, json_string(eq + 1));
	free(k);
	return 0;
}

/* Sets params.env[name] = value (copied). */
static void
ctl_load_set_env(json_t *params, const char *name, size_t len,
    const char *value)
{
	json_t *env = json_object_get(params, "env");
	char *k = strndup(name, len);

	if (env == NULL) {
		env = json_object();
		json_object_set_new(params, "env", env);
	}
	if (k != NULL)
		json_object_set_new(env, k, json_string(value));
	free(k);
}

/*
 * --env K=V, or --env K: the value of K in mcpctl's environment, as docker
 * does. --env K= is refused: it is what a shell leaves of an unquoted
 * $(secret.X), and a server started with an empty key fails later and
 * less clearly (an empty value on purpose goes in an --env-file). 0 or 2.
 */
static int
ctl_load_env(json_t *params, const char *arg)
{
	const char *eq = strchr(arg, '='), *value;
	size_t len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);

	if (!ctl_load_is_env_name(arg, len))
		return mcpctl_usage(&ctl_load_cmd,
		    "--env: '%.*s' is not a valid name", (int)len, arg);
	if (eq == NULL) {
		if ((value = getenv(arg)) == NULL)
			return mcpctl_usage(&ctl_load_cmd,
			    "--env %s: %s is not set in mcpctl's environment (give --env %s=VALUE, or export it)",
			    arg, arg, arg);
		ctl_load_set_env(params, arg, len, value);
		return 0;
	}
	if (eq[1] == '\0')
		return mcpctl_usage(&ctl_load_cmd,
		    "--env %.*s= sets %.*s to the empty string; if it was '$(secret.NAME)', the shell took $(...) for a command: single-quote it ('%.*s=$(secret.NAME)') or use --secret-env %.*s=NAME (an empty value on purpose goes in an --env-file line '%.*s=')",
		    (int)len, arg, (int)len, arg, (int)len, arg, (int)len, arg,
		    (int)len, arg);
	ctl_load_set_env(params, arg, len, eq + 1);
	return 0;
}

/* --secret-env NAME=SECRET: env NAME is the reference $(secret.SECRET). */
static int
ctl_load_secret_env(json_t *params, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char *ref;

	if (eq == NULL || !ctl_load_is_env_name(arg, eq - arg) ||
	    !names_secret_valid(eq + 1))
		return mcpctl_usage(&ctl_load_cmd,
		    "--secret-env needs NAME=SECRET (a variable name, then a secret's name as 'mcpctl secret list' shows it), not '%s'",
		    arg);
	if (asprintf(&ref, "$(secret.%s)", eq + 1) < 0)
		return MCPCTL_EXIT_ERROR;
	ctl_load_set_env(params, arg, eq - arg, ref);
	free(ref);
	return 0;
}

/*
 * A VALUE in matching quotes ("x" or 'x') loses them, as a .env file is
 * read by compose and podman (docker's own --env-file keeps them, which
 * is never what a quoted token means to the server); in place.
 */
static void
ctl_load_unquote(char *value)
{
	size_t len = strlen(value);

	if (len >= 2 && (value[0] == '"' || value[0] == '\'') &&
	    value[len - 1] == value[0]) {
		memmove(value, value + 1, len - 2);
		value[len - 2] = '\0';
	}
}

/*
 * --env-file FILE: KEY=VALUE lines as docker reads them: '#' lines and
 * blank ones skipped, a VALUE in matching quotes without them, a bare KEY
 * taken from mcpctl's environment. 0 or 2.
 */
static int
ctl_load_env_file(json_t *params, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *p;
	size_t cap = 0, total = 0;
	ssize_t n;
	int r = 0, lineno = 0;

	if (f == NULL)
		return mcpctl_usage(&ctl_load_cmd, "--env-file %s: %s", path,
		    strerror(errno));
	while (r == 0 && (n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if ((total += n) > CTL_LOAD_ENV_FILE_MAX) {
			r = mcpctl_usage(&ctl_load_cmd,
			    "--env-file %s: larger than %d bytes", path,
			    CTL_LOAD_ENV_FILE_MAX);
			break;
		}
		line[strcspn(line, "\r\n")] = '\0';
		p = line + strspn(line, " \t");
		if (*p == '\0' || *p == '#')
			continue;
		if (strchr(p, '=') == NULL && getenv(p) == NULL)
			continue; /* docker skips an unset bare name */
		if (!ctl_load_is_env_name(p, strcspn(p, "=")))
			r = mcpctl_usage(&ctl_load_cmd,
			    "--env-file %s:%d: '%.*s' is not a valid name",
			    path, lineno, (int)strcspn(p, "="), p);
		else if (strchr(p, '=') == NULL)
			ctl_load_set_env(params, p, strlen(p), getenv(p));
		else {
			ctl_load_unquote(strchr(p, '=') + 1);
			ctl_load_set_env(params, p, strcspn(p, "="),
			    strchr(p, '=') + 1);
		}
	}
	if (line != NULL)
		explicit_bzero(line, cap);
	free(line);
	fclose(f);
	return r;
}

/*
 * --oauth-client-id ID, --oauth-client-secret SECRET (a secret's name:
 * the value goes as $(secret.SECRET), never on a command line) and
 * --oauth-issuer URL: a pre-registered OAuth client. 0 or 2.
 */
static int
ctl_load_oauth(json_t *params, int c, const char *arg)
{
	json_t *oauth = json_object_get(params, "oauth");
	char *ref = NULL;

	if (oauth == NULL) {
		oauth = json_object();
		json_object_set_new(params, "oauth", oauth);
	}
	if (c == CTL_LOAD_OAUTH_CLIENT_ID)
		json_object_set_new(oauth, "client_id", json_string(arg));
	else if (c == CTL_LOAD_OAUTH_ISSUER)
		json_object_set_new(oauth, "issuer", json_string(arg));
	else {
		if (!names_secret_valid(arg))
			return mcpctl_usage(&ctl_load_cmd,
			    "--oauth-client-secret names a secret ('mcpctl secret set NAME' first), not '%s'",
			    arg);
		if (asprintf(&ref, "$(secret.%s)", arg) < 0)
			return MCPCTL_EXIT_ERROR;
		json_object_set_new(oauth, "client_secret", json_string(ref));
		free(ref);
	}
	return 0;
}

static int
ctl_load_option(json_t *params, int c, char **argv)
{
	json_t *volumes;
	json_int_t ms;
	int r;

	switch (c) {
	case 'n':
		if ((r = mcpctl_check_name(&ctl_load_cmd, "name", optarg)))
			return r;
		json_object_set_new(params, "name", json_string(optarg));
		return 0;
	case 'e':
		return ctl_load_env(params, optarg);
	case CTL_LOAD_SECRET_ENV:
		return ctl_load_secret_env(params, optarg);
	case CTL_LOAD_ENV_FILE:
		return ctl_load_env_file(params, optarg);
	case 'v':
		if ((volumes = json_object_get(params, "volumes")) == NULL) {
			volumes = json_array();
			json_object_set_new(params, "volumes", volumes);
		}
		json_array_append_new(volumes, json_string(optarg));
		return 0;
	case CTL_LOAD_NETWORK:
		json_object_set_new(params, "network", json_string(optarg));
		return 0;
	case 'H':
		return ctl_load_add_pair(params, "headers", "--header", optarg,
		    ctl_load_is_header_name);
	case 't':
		r = mcpctl_parse_positive(&ctl_load_cmd, "--timeout", optarg,
		    "milliseconds", &ms);
		if (r != 0)
			return r;
		json_object_set_new(params, "timeout_ms", json_integer(ms));
		return 0;
	case 'P':
		json_object_set_new(params, "persist", json_false());
		return 0;
	case CTL_LOAD_TRUST_UPDATES:
		json_object_set_new(params, "trust_updates", json_true());
		return 0;
	case CTL_LOAD_ON_DEMAND:
		json_object_set_new(params, "on_demand", json_true());
		return 0;
	case CTL_LOAD_IDLE_STOP:
		if ((r = mcpctl_parse_duration(&ctl_load_cmd, "--idle-stop",
			 optarg, &ms)) != 0)
			return r;
		json_object_set_new(params, "idle_stop_ms", json_integer(ms));
		return 0;
	case 'T':
		json_object_set_new(params, "transport", json_string(optarg));
		return 0;
	case 'L':
		json_object_set_new(params, "allow_local", json_true());
		return 0;
	case CTL_LOAD_SOURCE:
		if (strcmp(optarg, "docker") != 0 &&
		    strcmp(optarg, "official") != 0 &&
		    strcmp(optarg, "local") != 0)
			return mcpctl_usage(&ctl_load_cmd,
			    "--source is docker (Docker's MCP catalog), official (the MCP Registry) or local (the catalog bundled with mcpd), not '%s'",
			    optarg);
		ctl_load_by_name.source = optarg;
		return 0;
	case CTL_LOAD_DRY_RUN:
		ctl_load_by_name.is_dry_run = true;
		return 0;
	case CTL_LOAD_REMOTE:
		ctl_load_by_name.prefer_remote = true;
		return 0;
	case CTL_LOAD_CATALOG:
		ctl_load_by_name.catalog = optarg;
		return 0;
	case CTL_LOAD_SERVER_JSON:
		ctl_load_by_name.file = optarg;
		return 0;
	case CTL_LOAD_OAUTH_CLIENT_ID:
	case CTL_LOAD_OAUTH_CLIENT_SECRET:
	case CTL_LOAD_OAUTH_ISSUER:
		return ctl_load_oauth(params, c, optarg);
	case 'h':
		return -1;
	default:
		return mcpctl_bad_option(&ctl_load_cmd, c, argv);
	}
}

/*
 * Without "--" first, a URL, or a word that names no file but looks like
 * an image reference (a ':' or '/', not a path), is a target; an image
 * may be followed by "-- ARGS".
 */
static bool
ctl_load_is_target(char **words, int nwords)
{
	const char *w = words[0];
	struct stat st;

	if (strstr(w, "://") != NULL)
		return true;
	return (nwords == 1 || strcmp(words[1], "--") == 0) &&
	    strpbrk(w, ":/") != NULL && w[0] != '/' && w[0] != '.' &&
	    stat(w, &st) < 0;
}

/* Whether word starts a command, whose words are not mcpctl's. */
static bool
ctl_load_is_tail(const char *word)
{
	char *words[2] = { (char *)(uintptr_t)word, NULL };

	return !ctl_load_is_target(words, 1);
}

/* IMAGE -- ARGS: the arguments of the container's command. */
static int
ctl_load_image_args(json_t *params, char **words, int nwords)
{
	json_t *args;

	if (nwords == 0)
		return 0;
	if (strcmp(words[0], "--") != 0 ||
	    strstr(json_string_value(json_object_get(params, "target")),
		"://") != NULL)
		return mcpctl_usage(&ctl_load_cmd,
		    "a URL takes no arguments, and an image's arguments come after --: mcpctl load IMAGE -- ARGS...");
	args = json_array();
	for (int i = 1; i < nwords; i++)
		json_array_append_new(args, json_string(words[i]));
	json_object_set_new(params, "args", args);
	return 0;
}

static int
ctl_load_words(json_t *params, char **words, int nwords, bool is_dashed)
{
	json_t *argv;
	char *cwd;
	int r;

	if (nwords == 0)
		return mcpctl_usage(&ctl_load_cmd,
		    "missing the command: mcpctl load -- CMD [ARGS...]");
	if (!is_dashed && ctl_load_is_target(words, nwords)) {
		json_object_set_new(params, "target", json_string(words[0]));
		return ctl_load_image_args(params, words + 1, nwords - 1);
	}
	argv = json_array();
	for (int i = 0; i < nwords; i++)
		json_array_append_new(argv, json_string(words[i]));
	json_object_set_new(params, "command", argv);
	if ((cwd = getcwd(NULL, 0)) == NULL) {
		print_err("cannot name the current directory: %s",
		    strerror(errno));
		return MCPCTL_EXIT_ERROR;
	}
	r = json_object_set_new(params, "cwd", json_string(cwd));
	if (r < 0)
		print_err("the current directory is not valid UTF-8: %s", cwd);
	free(cwd);
	return r < 0 ? MCPCTL_EXIT_ERROR : 0;
}

/* An on-demand server's next steps: it stops, and a call starts it. */
static void
ctl_load_print_on_demand(const json_t *result)
{
	json_int_t ms = json_integer_value(json_object_get(result,
	    "idle_stop_ms"));
	char *idle;

	if (!json_is_true(json_object_get(result, "on_demand")))
		return;
	printf(
	    "on demand: it stops once its lists are kept (state idle) and the first call starts it");
	if (ms > 0) {
		idle = print_duration(ms);
		printf("; it stops again after %s without a call\n", idle);
		free(idle);
	} else
		printf("; then it runs until unloaded\n");
}

void
ctl_load_print_result(const char *verb, const json_t *result)
{
	static const char *const keys[] = { "name", "id", "tools",
		"protocol_version", "generation" };
	char *v[5];

	for (size_t i = 0; i < 5; i++)
		v[i] = print_value(json_object_get(result, keys[i]));
	printf("%s %s (id %s): %s tool%s, protocol %s, generation %s\n", verb,
	    v[0], v[1], v[2], strcmp(v[2], "1") == 0 ? "" : "s", v[3], v[4]);
	for (size_t i = 0; i < 5; i++)
		free(v[i]);
	if (json_is_string(json_object_get(result, "endpoint")))
		printf("endpoint: %s\n",
		    json_string_value(json_object_get(result, "endpoint")));
	if (json_is_false(json_object_get(result, "persistent")))
		printf(
		    "not saved: mcpd will not bring it back after a restart\n");
	ctl_load_print_on_demand(result);
}

/* What the caller changes in the text of each line (import: its hints). */
static char *(*ctl_load_rewrite)(const char *);

/*
 * An mcpd/progress of request id as one line on stderr, "  STAGE: MESSAGE",
 * or the message alone when it starts with the stage ("connecting to URL").
 */
static void
ctl_load_progress_print(void *arg, json_int_t id, const char *method,
    const json_t *params)
{
	const json_t *req = json_object_get(params, "request");
	const char *stage = json_string_value(json_object_get(params, "stage"));
	const char *text = json_string_value(json_object_get(params,
	    "message"));
	char *rewritten = NULL, *url;

	(void)arg;
	if (strcmp(method, "mcpd/progress") != 0 || !json_is_integer(req) ||
	    json_integer_value(req) != id || stage == NULL)
		return;
	if (text == NULL || text[0] == '\0')
		text = stage;
	if (strncmp(text, stage, strlen(stage)) == 0)
		fputs("  ", stderr);
	else
		fprintf(stderr, "  %s: ", stage);
	if (ctl_load_rewrite != NULL &&
	    (rewritten = ctl_load_rewrite(text)) != NULL)
		text = rewritten;
	/* The daemon's text may quote a server: no control characters. */
	for (const char *p = text; *p != '\0'; p++)
		fputc((unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p,
		    stderr);
	fputc('\n', stderr);
	free(rewritten);
	if (strcmp(stage, "authorize") == 0 &&
	    (url = ctl_auth_url_of(text)) != NULL) {
		ctl_auth_open_browser(url);
		free(url);
	}
}

void
ctl_load_progress(const struct mcpctl *m, json_t *params,
    char *(*rewrite)(const char *))
{
	if (m->is_json)
		return;
	ctl_load_rewrite = rewrite;
	json_object_set_new(params, "progress", json_true());
	conn_set_notify(ctl_load_progress_print, NULL);
}

void
ctl_load_answer(const json_t *result)
{
	if (json_is_true(json_object_get(result, "was_loaded")))
		ctl_load_print_result("already loaded", result);
	else if (json_is_true(json_object_get(result, "reconfigured")))
		ctl_load_print_result("restarted with new settings", result);
	else
		ctl_load_print_result("loaded", result);
}

/*
 * Whether the words name a catalog or registry entry: --source or
 * --server-json say so, else a registry name does (the other forms keep
 * their meaning). 1 for a name, 0 for the other forms, or 2 (usage).
 */
static int
ctl_load_names_entry(char **words, int nwords, bool is_dashed)
{
	const struct ctl_load_name *o = &ctl_load_by_name;
	bool has_name_opt = o->is_dry_run || o->prefer_remote ||
	    o->catalog != NULL;

	if (o->file != NULL) {
		if (nwords > 0 || o->source != NULL)
			return mcpctl_usage(&ctl_load_cmd,
			    "--server-json FILE takes no NAME and no --source");
		return 1;
	}
	if (!is_dashed && nwords >= 1 &&
	    (o->source != NULL || resolve_is_registry_name(words[0]))) {
		if (nwords > 1)
			return mcpctl_usage(&ctl_load_cmd,
			    "a catalog or registry name takes no arguments: '%s'",
			    words[1]);
		if (o->catalog != NULL &&
		    (o->source == NULL || strcmp(o->source, "docker") != 0))
			return mcpctl_usage(&ctl_load_cmd,
			    "--catalog goes with --source docker");
		return 1;
	}
	if (o->source != NULL)
		return mcpctl_usage(&ctl_load_cmd,
		    "--source needs a NAME, not a command: mcpctl load --source %s NAME",
		    o->source);
	if (has_name_opt)
		return mcpctl_usage(&ctl_load_cmd,
		    "--dry-run, --remote and --catalog go with a catalog or registry NAME");
	return 0;
}

/* A name may have options after it too (it is no command). */
static int
ctl_load_options_after(json_t *params, int argc, char **argv, char **ret_name)
{
	int c, r = 0;

	*ret_name = argv[optind++];
	while (r == 0 &&
	    (c = mcpctl_getopt(argc, argv, "+:he:v:", ctl_load_options)) != -1)
		r = ctl_load_option(params, c, argv);
	return r;
}

static int
ctl_load_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_t *params = json_object();
	char *name = NULL;
	bool is_dashed;
	int c, r = 0;

	while (r == 0 &&
	    (c = mcpctl_getopt(argc, argv, "+:he:v:", ctl_load_options)) != -1)
		r = ctl_load_option(params, c, argv);
	is_dashed = r == 0 && strcmp(argv[optind - 1], "--") == 0;
	if (r == 0 && !is_dashed && optind < argc &&
	    ctl_load_by_name.file == NULL &&
	    (ctl_load_by_name.source != NULL ||
		resolve_is_registry_name(argv[optind]))) {
		r = ctl_load_options_after(params, argc, argv, &name);
		if (r == 0 && optind < argc)
			r = mcpctl_usage(cmd,
			    "a catalog or registry name takes no arguments: '%s'",
			    argv[optind]);
		if (r == 0 && (r = ctl_load_names_entry(&name, 1, false)) == 1)
			return ctl_load_name(m, params, name,
			    &ctl_load_by_name);
	} else if (r == 0 &&
	    (r = ctl_load_names_entry(argv + optind, argc - optind,
		 is_dashed)) == 1)
		return ctl_load_name(m, params,
		    optind < argc ? argv[optind] : NULL, &ctl_load_by_name);
	if (r == 0)
		r = ctl_load_words(params, argv + optind, argc - optind,
		    is_dashed);
	if (r != 0) {
		json_decref(params);
		return r < 0 ? mcpctl_help(cmd) : r;
	}
	ctl_load_progress(m, params, NULL);
	return mcpctl_run(m, "mcpd/load", params, ctl_load_answer);
}

const struct mcpctl_cmd ctl_load_cmd = {
	.name = "load",
	.synopsis =
	    "[--name NAME] [-e K=V|K]... [--secret-env K=SECRET]... [--env-file FILE] [--timeout MS] [--no-persist] [--trust-updates] [--on-demand] [--idle-stop DURATION] -- CMD [ARGS...]\n"
	    "       mcpctl load [--name NAME] [-e K=V|K]... [--secret-env K=SECRET]... [--env-file FILE] [-v VOLUME]... [--network NET] [--timeout MS] [--no-persist] [--trust-updates] [--on-demand] [--idle-stop DURATION] IMAGE [-- ARGS...]\n"
	    "       mcpctl load [--name NAME] [--transport streamable-http|sse] [--allow-local] [--header K=V]... [--oauth-client-id ID [--oauth-client-secret SECRET] [--oauth-issuer URL]] [--timeout MS] [--no-persist] [--trust-updates] [--on-demand] [--idle-stop DURATION] URL\n"
	    "       mcpctl load [--source docker|official|local] [--catalog REF] [--remote] [--dry-run] [--name NAME] [-e K=V]... [--header K=V]... [--timeout MS] [--no-persist] [--trust-updates] [--on-demand] [--idle-stop DURATION] NAME[@VERSION]\n"
	    "       mcpctl load --server-json FILE [--remote] [--dry-run] [options]",
	.summary =
	    "start an MCP server and keep it running (a command, image, URL, or catalog or registry name)",
	.help =
	    "  every form:\n"
	    "  --name NAME        the server's name (default: from CMD, the\n"
	    "                     image's last path component, or the URL's host)\n"
	    "  --timeout MS       deadline of start and handshake (default: mcpd's\n"
	    "                     --load-timeout, 60000)\n"
	    "  --no-persist       do not bring it back after mcpd restarts\n"
	    "  --trust-updates    take its changed and new tool definitions as\n"
	    "                     they come instead of holding them until\n"
	    "                     mcpctl accept (kept in its saved row: not with\n"
	    "                     --no-persist)\n"
	    "  --on-demand        started by the first call that needs it, stopped\n"
	    "                     when idle: the load starts it once to keep its\n"
	    "                     tools, prompts and resources, then stops it\n"
	    "  --idle-stop DURATION\n"
	    "                     stop it after DURATION without a call (500ms,\n"
	    "                     30s, 10m, 2h; 0 or never: never); default 10m\n"
	    "                     with --on-demand\n"
	    "  -h, --help         this text\n"
	    "  CMD and IMAGE:\n"
	    "  -e, --env K=V      put K=V in its environment (repeatable); K=\n"
	    "                     alone is refused (what a shell leaves of an\n"
	    "                     unquoted $(secret.X)): an empty value goes in\n"
	    "                     an --env-file\n"
	    "  -e, --env K        ... with the value K has in mcpctl's environment\n"
	    "  --secret-env K=SECRET\n"
	    "                     K is the secret SECRET ('mcpctl secret set'),\n"
	    "                     sent as the reference $(secret.SECRET)\n"
	    "  --env-file FILE    KEY=VALUE lines, as docker reads them ('#'\n"
	    "                     comments; a bare KEY from mcpctl's environment;\n"
	    "                     matching quotes around a VALUE come off)\n"
	    "  IMAGE only:\n"
	    "  -v, --volume V     a docker -v value, HOST:CONTAINER[:OPTS]\n"
	    "                     (repeatable)\n"
	    "  --network NET      the docker network of the container\n"
	    "  URL only:\n"
	    "  --transport T      streamable-http or sse (default: a path with\n"
	    "                     /mcp is streamable HTTP, else streamable HTTP\n"
	    "                     with a fallback to sse)\n"
	    "  --allow-local      allow plain http to a loopback URL\n"
	    "  --header K=V       an HTTP header to send (repeatable)\n"
	    "  --oauth-client-id ID\n"
	    "                     a client registered with the server's OAuth\n"
	    "                     authorization server beforehand\n"
	    "  --oauth-client-secret SECRET\n"
	    "                     ... its secret: the name of a secret of\n"
	    "                     'mcpctl secret set', sent as $(secret.SECRET)\n"
	    "  --oauth-issuer URL ... the authorization server it belongs to\n"
	    "  NAME:\n"
	    "  --source S         where NAME is defined: docker (Docker's MCP\n"
	    "                     catalog), official (the MCP Registry) or local\n"
	    "                     (the catalog bundled with mcpd); without it, a\n"
	    "                     registry name (io.github.owner/server[@1.2.0])\n"
	    "                     is official\n"
	    "  --catalog REF      the Docker catalog image (default:\n"
	    "                     MCPD_DOCKER_CATALOG, else mcpd's)\n"
	    "  --server-json FILE a registry record (server.json, or an\n"
	    "                     mcpd/registry-info answer) instead of a NAME\n"
	    "  --remote           the record's https remote, not its package\n"
	    "  --dry-run          print what it would run, and stop\n"
	    "\n"
	    "A NAME resolves to an image (a Docker catalog image definition, a\n"
	    "registry oci package), a command (npm: npx -y PKG@VERSION; pypi:\n"
	    "uvx PKG==VERSION, when uvx is on PATH) or an https remote; the\n"
	    "record's required environment variables and headers must be given\n"
	    "by name (--env, --secret-env, --header): none is guessed. mcpctl\n"
	    "prints what it will run before it loads it, and the saved row\n"
	    "keeps that command, image or URL (and where it came from), so a\n"
	    "catalog that changes later changes nothing that is restored.\n"
	    "\n"
	    "A URL that answers 401 asks for OAuth: mcpd finds its\n"
	    "authorization server, registers itself (or uses --oauth-client-id)\n"
	    "and prints a URL to open in a browser (xdg-open runs when there\n"
	    "is a display); the load waits for the login within --timeout,\n"
	    "else fails saying to run 'mcpctl auth login NAME'. See\n"
	    "mcpctl auth --help.\n"
	    "\n"
	    "CMD runs in the current directory. Without --, a lone URL names\n"
	    "a remote server (https only, public addresses only, unless\n"
	    "--allow-local); an image reference (a word with ':' or '/'\n"
	    "that is no file; an implicit :latest is made explicit) names a\n"
	    "container image. mcpd runs it as rax-probe-NAME-PID with\n"
	    "`docker run -i` and speaks stdio; when it says it listens on\n"
	    "HTTP instead, mcpd removes it and runs rax-mcp-NAME-PID with the\n"
	    "port published on 127.0.0.1 only. --env values reach docker\n"
	    "through its environment, never its command line.\n"
	    "\n"
	    "In a shell, write a reference in single quotes:\n"
	    "--env 'TOKEN=$(secret.gh)'; or --secret-env TOKEN=gh.\n"
	    "\n"
	    "Loading what is already loaded changes nothing (\"already\n"
	    "loaded\"), unless --env or --header values (or a secret they\n"
	    "name) differ from what it runs with: then it restarts with the\n"
	    "new ones, as reload does (\"restarted with new settings\").\n"
	    "\n"
	    "Without --json, each stage of the start (starting, pulling,\n"
	    "probing, http-detected, connecting, connected or failed) is\n"
	    "printed on stderr as it comes.\n",
	.exec = ctl_load_exec,
	.options = ctl_load_options,
	.is_tail = ctl_load_is_tail,
};
