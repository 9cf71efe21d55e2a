/* SPDX-License-Identifier: ISC */
/* mcpd's settings: one table for the environment, mcpd.conf and argv. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "log.h"
#include "mcpd.h"
#include "nearest.h"
#include "paths.h"

#define OPTIONS_CONF_MAX (1024 * 1024) /* bytes of mcpd.conf */

enum options_kind {
	OPTIONS_NUMBER,
	OPTIONS_STRING,
	OPTIONS_FLAG,	/* --name alone; true or false in the file */
	OPTIONS_SWITCH, /* --name on|off, its field the negation (is_x_off) */
};

/*
 * A setting: its long option (and mcpd.conf key), where it lives in
 * mcpd_opts, its bounds, and the variable that may set it. Numbers are
 * int or size_t fields (size says which).
 */
struct options_def {
	const char *name;
	enum options_kind kind;
	size_t off, size;
	long long min, max;
	const char *env;
	/* More than the kind checks; NULL or why value is refused. */
	const char *(*check)(const char *value);
};

#define OPT_NUM(n, f, lo, hi)                                                 \
	{                                                                     \
		n, OPTIONS_NUMBER, offsetof(struct mcpd_options, f),          \
		    sizeof(((struct mcpd_options *)0)->f), lo, hi, NULL, NULL \
	}
#define OPT_NUM_ENV(n, f, lo, hi, e)                                       \
	{                                                                  \
		n, OPTIONS_NUMBER, offsetof(struct mcpd_options, f),       \
		    sizeof(((struct mcpd_options *)0)->f), lo, hi, e, NULL \
	}
#define OPT_STR(n, f, e, c)                                                   \
	{                                                                     \
		n, OPTIONS_STRING, offsetof(struct mcpd_options, f), 0, 0, 0, \
		    e, c                                                      \
	}
#define OPT_FLAG(n, f, e)                                                      \
	{                                                                      \
		n, OPTIONS_FLAG, offsetof(struct mcpd_options, f), 0, 0, 0, e, \
		    NULL                                                       \
	}
#define OPT_SWITCH_OFF(n, f)                                                  \
	{                                                                     \
		n, OPTIONS_SWITCH, offsetof(struct mcpd_options, f), 0, 0, 0, \
		    NULL, NULL                                                \
	}

/* draft-ietf-oauth-client-id-metadata-document: https, with a path. */
static const char *
options_check_metadata_url(const char *v)
{
	if (strncmp(v, "https://", 8) != 0 || strchr(v + 8, '/') == NULL ||
	    strpbrk(v, "#\r\n ") != NULL)
		return "wants an https URL with a path";
	return NULL;
}

static const struct options_def options_defs[] = {
	OPT_STR("socket", socket_path, "MCPD_SOCKET", NULL),
	OPT_STR("state-dir", state_dir, "MCPD_STATE_DIR", NULL),
	OPT_NUM("max-message", max_message, 1024, 1LL << 30),
	OPT_NUM("call-timeout", call_timeout_ms, 1, 86400000),
	OPT_NUM("approval-timeout", approval_timeout_s, 1, 86400),
	OPT_NUM("load-timeout", load_timeout_ms, 1, 86400000),
	OPT_NUM("log-lines", log_lines, 1, 1000000),
	OPT_NUM("max-clients", max_clients, 1, 65536),
	OPT_NUM("max-client-requests", max_client_requests, 1, 65536),
	OPT_NUM("max-client-output", max_client_output, 65536, 1LL << 32),
	OPT_NUM("max-http-requests", max_http_requests, 1, 1024),
	OPT_NUM("max-http-sessions", max_http_sessions, 1, 65536),
	OPT_NUM("max-http-sessions-per-token", max_http_sessions_per_token, 1,
	    65536),
	OPT_NUM("http-session-idle", http_session_idle_ms, 1, 86400000),
	OPT_NUM("http-stream-after", http_stream_after_ms, 0, 3600000),
	OPT_NUM("http-header-timeout", http_header_timeout_ms, 1, 3600000),
	OPT_NUM("max-servers", max_servers, 1, 65536),
	OPT_STR("ca-file", ca_file, NULL, NULL),
	OPT_STR("dns-server", dns_server, NULL, NULL),
	OPT_STR("docker", docker, "MCPD_DOCKER", NULL),
	OPT_NUM("docker-timeout", docker_timeout_ms, 100, 3600000),
	OPT_NUM("stop-grace", stop_grace_ms, 1, 3600000),
	OPT_NUM("stop-force", stop_force_ms, 1, 3600000),
	OPT_NUM("upgrade-drain", upgrade_drain_ms, 1, 3600000),
	OPT_NUM("upgrade-http-wait", upgrade_http_wait_ms, 0, 3600000),
	OPT_STR("secrets-key", secrets_key, NULL, NULL),
	OPT_STR("listen-http", listen_http, NULL, NULL),
	OPT_STR("registry", registry, "MCPD_REGISTRY", NULL),
	OPT_FLAG("registry-allow-local", is_registry_local,
	    "MCPD_REGISTRY_ALLOW_LOCAL"),
	OPT_NUM_ENV("registry-timeout", registry_timeout_ms, 1, 86400000,
	    "MCPD_REGISTRY_TIMEOUT"),
	OPT_NUM_ENV("registry-max-bytes", registry_max_bytes, 1024, 1LL << 30,
	    "MCPD_REGISTRY_MAX_BYTES"),
	OPT_STR("registry-contract", registry_contract,
	    "MCPD_REGISTRY_CONTRACT", NULL),
	OPT_STR("catalog", catalog, "MCPD_CATALOG", NULL),
	OPT_NUM_ENV("registry-problems", registry_problems, 1, 1000,
	    "MCPD_REGISTRY_PROBLEMS"),
	OPT_NUM_ENV("registry-problem-chars", registry_problem_chars, 16, 65536,
	    "MCPD_REGISTRY_PROBLEM_CHARS"),
	OPT_NUM_ENV("registry-text-chars", registry_text_chars, 256, 1 << 24,
	    "MCPD_REGISTRY_TEXT_CHARS"),
	OPT_STR("docker-catalog", docker_catalog, "MCPD_DOCKER_CATALOG", NULL),
	OPT_STR("oauth-client-metadata-url", oauth_client_metadata_url, NULL,
	    options_check_metadata_url),
	OPT_NUM("max-instructions", max_instructions, 256, 1 << 20),
	OPT_NUM("roots-timeout", roots_timeout_ms, 100, 600000),
	OPT_NUM("tool-budget", tool_budget, 0, 100000000),
	OPT_SWITCH_OFF("audit", is_audit_off),
	OPT_FLAG("no-audit", is_audit_off, NULL),
	OPT_FLAG("audit-arguments", is_audit_arguments, NULL),
	OPT_FLAG("audit-required", is_audit_required, NULL),
	OPT_NUM("audit-max-bytes", audit_max_bytes, AUDIT_LINE_MAX, 1LL << 40),
	OPT_NUM("audit-files", audit_files, 0, 1000),
	OPT_NUM("pin-definition-max", pin_definition_max, 0, 1 << 24),
	OPT_NUM("max-kept-bytes", max_kept_bytes, 4096, 1 << 28),
};
#define OPTIONS_N (sizeof options_defs / sizeof options_defs[0])

/* Where each setting's value came from (static text or malloc'd). */
static char *options_source[OPTIONS_N];
static char *options_conf_path; /* the mcpd.conf read, or NULL */

/* Getopt's codes: the table's index + 256; the letters for the rest. */
#define OPTIONS_CODE(i) (256 + (int)(i))
#define OPTIONS_CONFIG	(256 + (int)OPTIONS_N)

static const struct options_def *
options_find(const char *name)
{
	for (size_t i = 0; i < OPTIONS_N; i++)
		if (strcmp(options_defs[i].name, name) == 0)
			return &options_defs[i];
	return NULL;
}

#define OPTIONS_ARGV "command line"

/*
 * Refuses a value with exit status 2: "mcpd: --NAME why, not "value"" for
 * the command line, "mcpd: WHERE: NAME why, ..." for the rest.
 */
static void
options_refuse(const char *where, const char *name, const char *why,
    const char *value)
{
	if (strcmp(where, OPTIONS_ARGV) == 0)
		fprintf(stderr, "mcpd: --%s %s, not \"%s\"\n", name, why,
		    value);
	else
		fprintf(stderr, "mcpd: %s: %s %s, not \"%s\"\n", where, name,
		    why, value);
	exit(2);
}

/* Sets d from value (what WHERE gave); exits 2 when it is refused. */
static void
options_set(const struct options_def *d, const char *value, const char *where)
{
	char *field = (char *)&mcpd_opts + d->off, *end, why[96];
	const char *bad;
	long long v;

	switch (d->kind) {
	case OPTIONS_NUMBER:
		errno = 0;
		v = strtoll(value, &end, 10);
		if (errno != 0 || *end != '\0' || end == value || v < d->min ||
		    v > d->max) {
			snprintf(why, sizeof why,
			    "wants a number from %lld to %lld", d->min, d->max);
			options_refuse(where, d->name, why, value);
		}
		if (d->size == sizeof(int))
			*(int *)(void *)field = (int)v;
		else
			*(size_t *)(void *)field = (size_t)v;
		break;
	case OPTIONS_STRING:
		if (d->check != NULL && (bad = d->check(value)) != NULL)
			options_refuse(where, d->name, bad, value);
		free(*(char **)(void *)field);
		*(char **)(void *)field = xstrdup(value);
		break;
	case OPTIONS_FLAG:
	case OPTIONS_SWITCH:
		if (strcmp(value, "true") == 0 || strcmp(value, "yes") == 0 ||
		    strcmp(value, "1") == 0 || strcmp(value, "on") == 0)
			*(bool *)(void *)field = d->kind == OPTIONS_FLAG;
		else if (strcmp(value, "false") == 0 ||
		    strcmp(value, "no") == 0 || strcmp(value, "0") == 0 ||
		    strcmp(value, "off") == 0)
			*(bool *)(void *)field = d->kind != OPTIONS_FLAG;
		else
			options_refuse(where, d->name,
			    d->kind == OPTIONS_FLAG ?
				"wants true or false (yes/no, 1/0)" :
				"wants on or off",
			    value);
		break;
	}
	free(options_source[d - options_defs]);
	options_source[d - options_defs] = xstrdup(where);
}

/* The variables that set a setting, under the command line's and the file's. */
static void
options_from_env(void)
{
	for (size_t i = 0; i < OPTIONS_N; i++) {
		const char *v = options_defs[i].env != NULL ?
		    getenv(options_defs[i].env) :
		    NULL;
		char *where;

		if (v == NULL || *v == '\0')
			continue;
		/* A flag's variable is set unless it says 0 (as before). */
		if (options_defs[i].kind == OPTIONS_FLAG)
			v = strcmp(v, "0") != 0 ? "true" : "false";
		xasprintf(&where, "environment %s", options_defs[i].env);
		options_set(&options_defs[i], v, where);
		free(where);
	}
}

/* A line's key and value, in place: "key = value"; false when it is not. */
static bool
options_split(char *line, char **key, char **value)
{
	char *eq = strchr(line, '='), *end;

	if (eq == NULL)
		return false;
	*eq = '\0';
	*key = line + strspn(line, " \t");
	for (end = eq; end > *key && isspace((unsigned char)end[-1]); end--)
		;
	*end = '\0';
	*value = eq + 1 + strspn(eq + 1, " \t");
	for (end = *value + strlen(*value);
	     end > *value && isspace((unsigned char)end[-1]); end--)
		;
	*end = '\0';
	/* "a value with spaces" may be quoted; nothing is escaped. */
	if (end - *value >= 2 && **value == '"' && end[-1] == '"') {
		end[-1] = '\0';
		(*value)++;
	}
	return **key != '\0';
}

/* "unknown setting X" and the nearest known one. */
static void
options_unknown(const char *where, const char *key)
{
	const char *names[OPTIONS_N];
	char *near;

	for (size_t i = 0; i < OPTIONS_N; i++)
		names[i] = options_defs[i].name;
	near = nearest_names(key, names, OPTIONS_N, "");
	fprintf(stderr,
	    "mcpd: %s: unknown setting \"%s\"%s%s%s (the settings are mcpd's long options without --: see mcpd(8))\n",
	    where, key, near != NULL ? "; did you mean " : "",
	    near != NULL ? near : "", near != NULL ? "?" : "");
	free(near);
	exit(2);
}

/* Reads mcpd.conf at path; a missing file is nothing unless is_given. */
static void
options_from_file(const char *path, bool is_given)
{
	char *text, *line, *next, *key, *value, *where;
	size_t len, n = 0;
	int r;

	r = fileio_read_all(path, OPTIONS_CONF_MAX, FILEIO_REGULAR, &text,
	    &len);
	if (r == -ENOENT && !is_given)
		return;
	if (r < 0) {
		fprintf(stderr, "mcpd: cannot read the settings file %s: %s\n",
		    path, r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
		exit(2);
	}
	options_conf_path = xstrdup(path);
	if (memchr(text, '\0', len) != NULL) {
		fprintf(stderr, "mcpd: %s: a NUL byte: not a settings file\n",
		    path);
		exit(2);
	}
	for (line = text; line != NULL; line = next) {
		n++;
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (line[strspn(line, " \t\r")] == '\0' ||
		    line[strspn(line, " \t")] == '#')
			continue;
		xasprintf(&where, "%s:%zu", path, n);
		if (!options_split(line, &key, &value)) {
			fprintf(stderr,
			    "mcpd: %s: not a setting: a line is \"name = value\" (or a # comment)\n",
			    where);
			exit(2);
		}
		if (options_find(key) == NULL)
			options_unknown(where, key);
		options_set(options_find(key), value, where);
		free(where);
	}
	free(text);
}

/* --config FILE (or --config=FILE) from argv, before getopt reads it. */
static const char *
options_config_arg(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			return argv[i + 1];
		if (strncmp(argv[i], "--config=", 9) == 0)
			return argv[i] + 9;
	}
	return NULL;
}

/* $XDG_CONFIG_HOME/mcpd/mcpd.conf, or ~/.config/mcpd/mcpd.conf. */
static char *
options_default_conf(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char *path = NULL;

	if (xdg != NULL && xdg[0] == '/')
		xasprintf(&path, "%s/mcpd/mcpd.conf", xdg);
	else if (home != NULL && home[0] == '/')
		xasprintf(&path, "%s/.config/mcpd/mcpd.conf", home);
	return path;
}

static void
options_getopt_table(struct option *longopts)
{
	static const struct option fixed[] = {
		{ "foreground", no_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "config", required_argument, NULL, OPTIONS_CONFIG },
	};
	size_t n = 0;

	for (size_t i = 0; i < OPTIONS_N; i++) {
		const struct options_def *d = &options_defs[i];

		longopts[n++] = (struct option){ d->name,
			d->kind == OPTIONS_FLAG ? no_argument :
						  required_argument,
			NULL, OPTIONS_CODE(i) };
	}
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		longopts[n++] = fixed[i];
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };
}

int
options_parse(int argc, char **argv, int *foreground, int *verbose)
{
	struct option longopts[OPTIONS_N + 8];
	const char *given = options_config_arg(argc, argv);
	char *conf = given != NULL ? NULL : options_default_conf();
	int ch;

	/* The file is under the environment, and both under argv. */
	if (given != NULL && *given != '\0')
		options_from_file(given, true);
	else if (conf != NULL)
		options_from_file(conf, false);
	free(conf);
	options_from_env();
	options_getopt_table(longopts);
	while ((ch = getopt_long(argc, argv, "dvs:S:Vh", longopts, NULL)) !=
	    -1) {
		if (ch >= OPTIONS_CODE(0) && ch < OPTIONS_CODE(OPTIONS_N)) {
			const struct options_def *d =
			    &options_defs[ch - OPTIONS_CODE(0)];

			options_set(d,
			    d->kind == OPTIONS_FLAG ? "true" : optarg,
			    OPTIONS_ARGV);
		} else if (ch == 's' || ch == 'S') {
			options_set(options_find(ch == 's' ? "socket" :
							     "state-dir"),
			    optarg, OPTIONS_ARGV);
		} else if (ch == 'd') {
			*foreground = 1;
		} else if (ch == 'v') {
			*verbose = 1;
		} else if (ch != OPTIONS_CONFIG) {
			return ch;
		}
	}
	return optind != argc ? '?' : -1;
}

json_t *
options_status(void)
{
	json_t *all = json_array();

	for (size_t i = 0; i < OPTIONS_N; i++) {
		const struct options_def *d = &options_defs[i];
		const char *field = (const char *)&mcpd_opts + d->off;
		json_t *v;

		if (d->kind == OPTIONS_STRING)
			v = json_string(*(char *const *)(const void *)field);
		else if (d->kind == OPTIONS_FLAG)
			v = json_boolean(*(const bool *)(const void *)field);
		else if (d->kind == OPTIONS_SWITCH)
			v = json_string(*(const bool *)(const void *)field ?
				"off" :
				"on");
		else if (d->size == sizeof(int))
			v = json_integer(*(const int *)(const void *)field);
		else
			v = json_integer((json_int_t) *
			    (const size_t *)(const void *)field);
		json_array_append_new(all,
		    xjson(json_pack("{s:s, s:o, s:s}", "name", d->name, "value",
			v != NULL ? v : json_null(), "source",
			options_source[i] != NULL ? options_source[i] :
						    "default")));
	}
	return all;
}

const char *
options_conf(void)
{
	return options_conf_path;
}
